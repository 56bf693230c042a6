//! Simulating the workloads of figures and claims: each [`Case`] becomes a workload
//! ([`case_spec`]) on a simulated drive or array ([`case_target`]) and runs through the same
//! engine loop and result type as `ssdlab run --sim`.

use crate::data::{Case, Metric};
use ssdlab_engine::{build_sim, run_sim_prepared, SimOptions, SimTarget};
use ssdlab_ssdsim::{DriveConfig, Simulator};
use ssdlab_workload::{StopCondition, WorkloadSpec};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How cases are simulated.
#[derive(Debug, Clone, Copy)]
pub struct PredictOptions {
    /// Simulate at most this long (virtual time) even where a figure's test ran longer.
    pub max_time_ns: Option<u64>,
    /// Stop each case after this many I/Os even where its time is not up (a fast drive's long
    /// test costs no more than a slow one's).
    pub max_ios: Option<u64>,
    /// Cases simulated at once.
    pub threads: usize,
    pub seed: u64,
    /// Raised from outside (Ctrl-C): runs end at once and report [`INTERRUPTED`].
    pub stop: Option<&'static AtomicBool>,
}

/// The error of a case stopped from outside ([`PredictOptions::stop`]).
pub const INTERRUPTED: &str = "interrupted";

impl PredictOptions {
    pub fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

impl Default for PredictOptions {
    fn default() -> Self {
        PredictOptions {
            max_time_ns: None,
            max_ios: None,
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            seed: 1,
            stop: None,
        }
    }
}

/// What a simulated (or measured) case gave, in base units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub bw: f64,
    pub iops: f64,
    pub lat_ns: f64,
}

impl Outcome {
    pub fn get(&self, m: Metric) -> f64 {
        match m {
            Metric::Bw => self.bw,
            Metric::Iops => self.iops,
            Metric::Lat => self.lat_ns,
        }
    }

    pub fn of(r: &ssdlab_stats::RunResult) -> Outcome {
        Outcome {
            bw: r.total_bw_bytes(),
            iops: r.total_iops(),
            lat_ns: r.mean_lat_ns(),
        }
    }

    /// What the run gave for case `c`: over the whole test, or (`after`) its rates over the
    /// per-second series ([`ssdlab_stats::RunResult::series`]) from the first second that
    /// begins once `after` bytes have moved.
    pub fn of_case(r: &ssdlab_stats::RunResult, c: &Case) -> Result<Outcome, String> {
        let whole = Outcome::of(r);
        let Some(after) = c.after_bytes else {
            return Ok(whole);
        };
        let pts = r.series.iter().map(|p| {
            (
                p.t_ms,
                p.read_bw_bytes + p.write_bw_bytes + p.trim_bw_bytes,
                p.read_iops + p.write_iops + p.trim_iops,
            )
        });
        let (mut moved, mut prev_ms) = (0.0, 0u64);
        let (mut bytes, mut ios, mut ms) = (0.0, 0.0, 0u64);
        for (t_ms, bw, iops) in pts {
            let len_ms = t_ms.saturating_sub(prev_ms);
            let secs = len_ms as f64 / 1e3;
            if moved >= after as f64 {
                bytes += bw * secs;
                ios += iops * secs;
                ms += len_ms;
            }
            moved += bw * secs;
            prev_ms = t_ms;
        }
        if ms == 0 {
            let when = if moved >= after as f64 {
                "passing after = {} only in its last second"
            } else {
                "not more than after = {}"
            };
            return Err(format!(
                "the test moved {} in {} s, {} (a longer time is needed)",
                ssdlab_workload::format_size(moved as u64),
                prev_ms / 1000,
                when.replace("{}", &ssdlab_workload::format_size(after))
            ));
        }
        let secs = ms as f64 / 1e3;
        Ok(Outcome {
            bw: bytes / secs,
            iops: ios / secs,
            lat_ns: whole.lat_ns,
        })
    }
}

/// The workload of a case (seed given; test length capped at `max_time_ns`).
pub fn case_spec(
    c: &Case,
    seed: u64,
    max_time_ns: Option<u64>,
    max_ios: Option<u64>,
) -> WorkloadSpec {
    let time = max_time_ns.map_or(c.time_ns, |m| c.time_ns.min(m));
    WorkloadSpec {
        rw: c.rw,
        read_pct: c.read_pct,
        random_pct: c.rw.default_random_pct(),
        bs: c.bs,
        align: c.align,
        span: c.span,
        qd: c.qd,
        pattern: c.pattern,
        stop: StopCondition {
            time_ns: Some(time),
            ios: max_ios,
            ..Default::default()
        },
        seed,
        ..Default::default()
    }
}

/// The simulated target of a case with the drive model `drive`.
pub fn case_target(c: &Case, drive: &DriveConfig) -> SimTarget {
    SimTarget {
        name: c.drive.clone(),
        drive: drive.clone(),
        drives: c.drives as usize,
        stripe: c.stripe,
        // the adapter asked for, else the one such arrays are built with (chipset RAID for SATA)
        adapter: c.adapter.resolve(drive, c.drives as usize),
        state: c.state,
    }
}

/// Drives built and brought into their state, kept to be given another model's timing
/// ([`ssdlab_ssdsim::Simulator::retimed`]) instead of being preconditioned again: a fit that
/// varies only timing parameters preconditions each drive state once.
#[derive(Default)]
pub struct SimCache {
    entries: Mutex<Vec<Entry>>,
    /// Keep a state only while cases that need it are left ([`SimCache::single_pass`]).
    single_pass: bool,
}

struct Entry {
    key: String,
    built: DriveConfig,
    adapter: ssdlab_ssdsim::AdapterChoice,
    drives: u32,
    stripe: Option<u64>,
    state: ssdlab_ssdsim::Precondition,
    seed: u64,
    sim: Arc<Simulator>,
}

/// Drive states larger than this are not kept (each run clones its state).
const CACHE_MAX_BYTES: u64 = 4 << 30;

/// The drive state a case starts from, as a key (drive, array, adapter, state).
fn state_key(c: &Case) -> String {
    format!(
        "{}|{}|{:?}|{:?}|{}",
        c.drive, c.drives, c.stripe, c.adapter, c.state
    )
}

impl SimCache {
    /// A cache for one pass over a set of cases ([`simulate_all`]): the cases run grouped by the
    /// drive state they start from, and a state is dropped as soon as its last case is done, so
    /// only the states in use are held (a validation of every preset holds one or two drives at
    /// a time instead of all of them).
    pub fn single_pass() -> SimCache {
        SimCache {
            single_pass: true,
            ..Default::default()
        }
    }

    fn evict(&self, key: &str) {
        self.entries
            .lock()
            .expect("not poisoned")
            .retain(|e| e.key != key);
    }

    fn prepared(&self, c: &Case, drive: &DriveConfig, seed: u64) -> Option<Simulator> {
        let mut entries = self.entries.lock().expect("not poisoned");
        let hit = entries.iter().find(|e| {
            e.drives == c.drives
                && e.adapter == c.adapter
                && e.stripe == c.stripe
                && e.state == c.state
                && e.seed == seed
                && e.built.same_state_as(drive)
        });
        if let Some(e) = hit {
            return e.sim.retimed(&e.built, drive);
        }
        let target = case_target(c, drive);
        if ssdlab_engine::sim_memory_estimate(&target) > CACHE_MAX_BYTES {
            return None;
        }
        let mut sim = build_sim(&target, seed, None).ok()?;
        // the kept state and every run from it share the tables, each run copying only the
        // chunks it writes
        sim.freeze();
        entries.push(Entry {
            key: state_key(c),
            built: drive.clone(),
            adapter: c.adapter.clone(),
            drives: c.drives,
            stripe: c.stripe,
            state: c.state,
            seed,
            sim: Arc::new(sim.clone()),
        });
        Some(sim)
    }
}

/// Simulates one case on `drive` (from a drive state in `cache` when there is one).
pub fn simulate(
    c: &Case,
    drive: &DriveConfig,
    opts: &PredictOptions,
    cache: Option<&SimCache>,
) -> Result<Outcome, String> {
    let spec = case_spec(c, opts.seed, opts.max_time_ns, opts.max_ios);
    let target = case_target(c, drive);
    // what a data file can get wrong, in its own words (the engine's check speaks of flags)
    let capacity = drive.user_capacity().saturating_mul(c.drives as u64);
    if let Some(span) = c.span.filter(|&s| s > capacity) {
        return Err(format!(
            "span = {:?} is beyond the simulated {} ({})",
            ssdlab_workload::format_size(span),
            if c.drives > 1 { "array" } else { "drive" },
            ssdlab_workload::format_size(capacity)
        ));
    }
    ssdlab_engine::check_sim_run(&spec, &target, None).map_err(|e| e.render(&c.naming()))?;
    if opts.stopped() {
        return Err(INTERRUPTED.into());
    }
    let prepared = cache.and_then(|k| k.prepared(c, drive, opts.seed));
    let sim_opts = SimOptions {
        stop: opts.stop,
        ..Default::default()
    };
    let r = run_sim_prepared(&spec, &target, prepared, &sim_opts).map_err(|e| e.to_string())?;
    if r.interrupted || opts.stopped() {
        return Err(INTERRUPTED.into());
    }
    Outcome::of_case(&r, c)
}

/// Simulates every case, `opts.threads` at a time; `model` gives the drive model of a case's
/// drive name (None: the case fails with "no model").
pub fn simulate_all<F>(
    cases: &[&Case],
    model: F,
    opts: &PredictOptions,
    cache: Option<&SimCache>,
) -> Vec<Result<Outcome, String>>
where
    F: Fn(&str) -> Option<DriveConfig> + Sync,
{
    // cases that start from the same drive state run one after the other
    let mut order: Vec<usize> = (0..cases.len()).collect();
    let keys: Vec<String> = cases.iter().map(|c| state_key(c)).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]).then(a.cmp(&b)));
    let left: Mutex<std::collections::HashMap<&str, usize>> = Mutex::new(keys.iter().fold(
        std::collections::HashMap::new(),
        |mut m, k| {
            *m.entry(k.as_str()).or_insert(0) += 1;
            m
        },
    ));
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<Outcome, String>>>> = Mutex::new(vec![None; cases.len()]);
    let threads = opts.threads.clamp(1, cases.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= cases.len() {
                    break;
                }
                let i = order[k];
                let c = cases[i];
                let r = match model(&c.drive) {
                    Some(d) => simulate(c, &d, opts, cache),
                    None => Err(format!("no drive model named {:?}", c.drive)),
                };
                out.lock().expect("not poisoned")[i] = Some(r);
                if let Some(cache) = cache.filter(|c| c.single_pass) {
                    let mut left = left.lock().expect("not poisoned");
                    let n = left.get_mut(keys[i].as_str()).expect("counted");
                    *n -= 1;
                    if *n == 0 {
                        cache.evict(&keys[i]);
                    }
                }
            });
        }
    });
    out.into_inner()
        .expect("not poisoned")
        .into_iter()
        .map(|r| r.expect("every case simulated"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataSet;
    use std::path::Path;

    /// A rate `after` N bytes is the series' rate from the first second that begins past N.
    #[test]
    fn a_rate_after_n_bytes_comes_from_the_series_past_them() {
        let mb = 1e6;
        let mut r = ssdlab_stats::RunResult::default();
        for (i, bw) in [100.0, 100.0, 50.0, 50.0, 40.0].into_iter().enumerate() {
            r.series.push(ssdlab_stats::SeriesPoint {
                t_ms: (i as u64 + 1) * 1000,
                write_bw_bytes: bw * mb,
                write_iops: bw,
                ..Default::default()
            });
        }
        let mut c = Case::on_written_span("d", 1 << 30, 5_000_000_000);
        // 150 MB: past it from the third second on (200 MB moved by then)
        c.after_bytes = Some(150_000_000);
        let o = Outcome::of_case(&r, &c).unwrap();
        assert!((o.bw - 140.0 / 3.0 * mb).abs() < 1.0, "{}", o.bw);
        assert!((o.iops - 140.0 / 3.0).abs() < 1e-9, "{}", o.iops);
        // exactly at a second's start counts that second
        c.after_bytes = Some(200_000_000);
        assert!((Outcome::of_case(&r, &c).unwrap().bw - 140.0 / 3.0 * mb).abs() < 1.0);
        // beyond what the test moved: an error that says so
        c.after_bytes = Some(400_000_000);
        let e = Outcome::of_case(&r, &c).unwrap_err();
        assert!(e.contains("not more than after"), "{e}");
        // passed only within the last second: no whole second after it
        c.after_bytes = Some(330_000_000);
        let e = Outcome::of_case(&r, &c).unwrap_err();
        assert!(e.contains("only in its last second"), "{e}");
    }

    /// Cases on three drive states (fresh, full and an array), reads and writes, some sharing
    /// a state: the schedule may run them in any order, on any number of threads, with or
    /// without a cache, and each outcome is the one simulated alone.
    #[test]
    fn outcomes_do_not_depend_on_the_schedule() {
        let figure = |rw: &str, qd: u32, state: &str, extra: &str| {
            format!(
                "[[figure]]\ndrive = \"d\"\nmetric = \"iops\"\nvalue = 1000.0\nunit = \"IOPS\"\n\
                 rw = \"{rw}\"\nbs = \"4k\"\nqd = {qd}\nstate = \"{state}\"\nspan = \"8m\"\ntime = \"20ms\"\n{extra}"
            )
        };
        let mut text = String::from("[source]\ntitle = \"t\"\nkind = \"findings\"\n");
        for (rw, qd, state, extra) in [
            ("randread", 1, "full", ""),
            ("randwrite", 4, "full", ""),
            ("randread", 8, "full", ""),
            ("randwrite", 2, "fresh", ""),
            ("read", 4, "fresh", ""),
            ("randwrite", 4, "fresh", "drives = 2\nstripe = \"16k\"\n"),
            ("randread", 4, "full", "drives = 2\nstripe = \"16k\"\n"),
        ] {
            text += &figure(rw, qd, state, extra);
        }
        let d = DataSet::parse(Path::new("t.toml"), &text).unwrap();
        let cases: Vec<&Case> = d.figures.iter().map(|f| &f.case).collect();
        let drive = ssdlab_ssdsim::load_preset("vertex450-128g")
            .unwrap()
            .scaled(64)
            .unwrap();
        let model = |_: &str| Some(drive.clone());
        let base = PredictOptions {
            threads: 1,
            ..Default::default()
        };
        let alone: Vec<Outcome> = cases
            .iter()
            .map(|c| simulate(c, &drive, &base, None).unwrap())
            .collect();
        for threads in [1, 2, 3] {
            let opts = PredictOptions { threads, ..base };
            for cache in [
                None,
                Some(SimCache::single_pass()),
                Some(SimCache::default()),
            ] {
                let got: Vec<Outcome> = simulate_all(&cases, model, &opts, cache.as_ref())
                    .into_iter()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(got, alone, "threads {threads}");
                if let Some(c) = cache.filter(|c| c.single_pass) {
                    assert!(
                        c.entries.lock().unwrap().is_empty(),
                        "a single pass keeps no state when done"
                    );
                }
            }
        }
    }
}
