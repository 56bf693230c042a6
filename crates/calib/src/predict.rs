//! Simulating the workloads of figures and claims: each [`Case`] becomes a workload
//! ([`case_spec`]) on a simulated drive or array ([`case_target`]) and runs through the same
//! engine loop and result type as `ssdlab run --sim`.

use crate::data::{Case, Metric};
use ssdlab_engine::{build_sim, run_sim_prepared, SimOptions, SimTarget};
use ssdlab_ssdsim::{DriveConfig, Simulator};
use ssdlab_workload::{StopCondition, WorkloadSpec};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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
    /// How much memory the cases simulated at once, and the drive states kept for them, may
    /// take by their estimates ([`simulate_all`]).
    pub memory_budget: MemoryBudget,
}

/// How much memory cases simulated side by side may take by their estimates: a case starts
/// beside others only while it fits, and one that needs more than the budget runs alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryBudget {
    /// `threads` at a time, whatever they take.
    Unbounded,
    /// At most this many bytes.
    Bytes(u64),
    /// No more than the largest case needs alone (so running cases side by side costs no
    /// memory beyond the largest of them), and at most the bytes given.
    LargestCase(Option<u64>),
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
            memory_budget: MemoryBudget::Unbounded,
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
    entries: Mutex<Entries>,
    /// Signalled when a state being built is kept (or its build ended without one).
    built: Condvar,
    /// Keep a state only while cases that need it are left ([`SimCache::single_pass`]).
    single_pass: bool,
}

/// The kept states, and the states being built (key, seed, drive), which another case that
/// needs one waits for instead of building it again. The lock is never held while a state is
/// built, so states of other drives build side by side.
#[derive(Default)]
struct Entries {
    kept: Vec<Entry>,
    building: Vec<(String, u64, DriveConfig)>,
}

impl std::ops::Deref for Entries {
    type Target = Vec<Entry>;
    fn deref(&self) -> &Vec<Entry> {
        &self.kept
    }
}

impl std::ops::DerefMut for Entries {
    fn deref_mut(&mut self) -> &mut Vec<Entry> {
        &mut self.kept
    }
}

/// Takes a state off the list of states being built when its build ends, kept or not (also
/// when the build panics, so that no case waits for it forever).
struct Building<'c> {
    cache: &'c SimCache,
    key: String,
    seed: u64,
    drive: &'c DriveConfig,
}

impl Drop for Building<'_> {
    fn drop(&mut self) {
        let mut st = self.cache.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = st
            .building
            .iter()
            .position(|b| b.0 == self.key && b.1 == self.seed && b.2.same_state_as(self.drive))
        {
            st.building.remove(i);
        }
        self.cache.built.notify_all();
    }
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
    /// Bytes the kept state holds (its tables as built, and the rest by estimate).
    held: u64,
    /// Bytes a run that writes it may add by building its reverse maps.
    reverse_pending: u64,
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

    /// What the kept state of drive-state key `key` holds, and what a run that writes it may
    /// add (see [`Entry`]); None when no such state is kept.
    fn held(&self, key: &str) -> Option<(u64, u64)> {
        let entries = self.entries.lock().expect("not poisoned");
        entries
            .iter()
            .filter(|e| e.key == key)
            .map(|e| (e.held, e.reverse_pending))
            .max()
    }

    fn evict(&self, key: &str) {
        self.entries
            .lock()
            .expect("not poisoned")
            .retain(|e| e.key != key);
    }

    fn prepared(&self, c: &Case, drive: &DriveConfig, seed: u64) -> Option<Simulator> {
        let key = state_key(c);
        let mut entries = self.entries.lock().expect("not poisoned");
        loop {
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
            // the same state being built by another case: wait for it
            let pending = entries
                .building
                .iter()
                .any(|b| b.0 == key && b.1 == seed && b.2.same_state_as(drive));
            if !pending {
                break;
            }
            entries = self.built.wait(entries).expect("not poisoned");
        }
        let target = case_target(c, drive);
        if ssdlab_engine::sim_memory_estimate(&target) > CACHE_MAX_BYTES {
            return None;
        }
        entries.building.push((key.clone(), seed, drive.clone()));
        drop(entries);
        let _building = Building {
            cache: self,
            key: key.clone(),
            seed,
            drive,
        };
        let mut sim = build_sim(&target, seed, None).ok()?;
        // what the state holds, measured before freezing (a frozen table's chunks count as
        // shared, not held)
        let fresh = SimTarget {
            state: ssdlab_ssdsim::Precondition::Fresh,
            ..target
        };
        let held = ssdlab_engine::sim_memory_estimate(&fresh).saturating_add(sim.table_bytes());
        // the kept state and every run from it share the tables, each run copying only the
        // chunks it writes
        sim.freeze();
        // after freezing: a run's clone that builds the map copies the shared chunks too
        let reverse_pending = sim.reverse_map_pending_bytes();
        self.entries.lock().expect("not poisoned").push(Entry {
            key,
            built: drive.clone(),
            adapter: c.adapter.clone(),
            drives: c.drives,
            stripe: c.stripe,
            state: c.state,
            seed,
            sim: Arc::new(sim.clone()),
            held,
            reverse_pending,
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

/// What simulating a case takes in memory, by estimate ([`ssdlab_engine::sim_memory_estimate`]
/// and [`ssdlab_engine::sim_run_memory_estimate`]).
#[derive(Debug, Clone, Copy)]
struct Need {
    /// The drive state the run starts from, when a [`SimCache`] keeps it (shared by the cases
    /// that start from it, held until the last of them is done).
    state: Option<u64>,
    /// The run itself: its own copy of the drive state when none is kept; else the table
    /// chunks it writes (a kept state's clone copies those only).
    run: u64,
    /// The run writes, so it may build the reverse maps the kept state left unbuilt.
    writes: bool,
}

impl Need {
    fn of(c: &Case, drive: &DriveConfig, opts: &PredictOptions, cache: Option<&SimCache>) -> Need {
        use ssdlab_engine::{sim_memory_estimate, sim_memory_need, sim_touch};
        let spec = case_spec(c, opts.seed, opts.max_time_ns, opts.max_ios);
        let target = case_target(c, drive);
        // what a run of `spec` on `t` needs: its tables, its outstanding I/Os, a margin
        let slots = spec.qd as u64 * c.drives as u64;
        let run_on = |t: &SimTarget| sim_memory_need(t, slots, sim_touch(&spec, t)).bytes;
        let state = sim_memory_estimate(&target);
        if cache.is_none() || state > CACHE_MAX_BYTES {
            return Need {
                state: None,
                run: run_on(&target),
                writes: false,
            };
        }
        // a clone of the kept state copies the chunks the run writes: as on a fresh drive
        let fresh = SimTarget {
            state: ssdlab_ssdsim::Precondition::Fresh,
            ..target
        };
        Need {
            state: Some(state),
            run: run_on(&fresh).saturating_sub(sim_memory_estimate(&fresh)),
            writes: spec.writes(),
        }
    }
}

/// Lets cases run side by side while their memory ([`Need`]) fits in a budget, in the order
/// they were taken: the first case waiting starts once it fits, or once nothing else runs (so
/// a case larger than the budget runs alone, and every case runs).
struct Gate {
    budget: u64,
    s: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Bytes the running cases and the kept states take.
    used: u64,
    running: usize,
    /// The positions (in the order cases are taken) of the cases waiting to start.
    waiting: BTreeSet<usize>,
    /// The kept drive states by key.
    kept: HashMap<String, Kept>,
}

/// A drive state kept for the cases that start from it, as the gate counts it.
#[derive(Debug, Clone, Copy)]
struct Kept {
    /// Bytes reserved for it: its estimate until it is built and no run that started while it
    /// was an estimate still writes (the estimate counts the reverse maps such a run may
    /// build), then what it holds as built.
    bytes: u64,
    /// Bytes a run that writes it may add (its reverse maps), once built.
    reverse: u64,
    /// Counted as built.
    built: bool,
    /// Runs that write it, started while it was counted by estimate, still running.
    early_writers: usize,
    /// What it holds as built (bytes, bytes a writing run adds), known and not yet counted.
    pending: Option<(u64, u64)>,
}

impl Gate {
    fn new(budget: u64) -> Gate {
        Gate {
            budget,
            s: Mutex::default(),
            cv: Condvar::new(),
        }
    }

    /// Waits until the case at position `pos` of drive state `key` may start; what it was
    /// given is handed back when the [`Pass`] is done or dropped.
    fn enter<'g>(&'g self, pos: usize, key: &'g str, need: Need) -> Pass<'g> {
        let mut s = self.s.lock().expect("not poisoned");
        s.waiting.insert(pos);
        loop {
            let kept = s.kept.get(key).copied();
            let state = match (kept, need.state) {
                (None, Some(b)) => b,
                _ => 0,
            };
            let reverse = match kept {
                Some(k) if need.writes && k.built => k.reverse,
                _ => 0,
            };
            let run = need.run.saturating_add(reverse);
            let first = s.waiting.first() == Some(&pos);
            let fits = s.used.saturating_add(run).saturating_add(state) <= self.budget;
            if first && (fits || s.running == 0) {
                s.waiting.remove(&pos);
                // a writer that starts while the state is an estimate leans on the estimate's
                // reverse maps: the estimate stays reserved until it is done
                let early = need.writes && need.state.is_some() && !kept.is_some_and(|k| k.built);
                if need.state.is_some() {
                    let k = s.kept.entry(key.to_string()).or_insert(Kept {
                        bytes: state,
                        reverse: 0,
                        built: false,
                        early_writers: 0,
                        pending: None,
                    });
                    k.early_writers += early as usize;
                }
                s.used = s.used.saturating_add(state).saturating_add(run);
                s.running += 1;
                // the next one waiting may fit beside it
                self.cv.notify_all();
                return Pass {
                    gate: self,
                    key,
                    run,
                    early,
                    done: false,
                };
            }
            s = self.cv.wait(s).expect("not poisoned");
        }
    }

    /// A case of drive state `key` is done (`pass`: the bytes its [`Pass`] holds, given back,
    /// and whether it wrote the state while it was an estimate) or none is left (`None`); the
    /// state is counted as built (`built`: bytes held, bytes a writing run adds) once no early
    /// writer runs, or given back when it was dropped (`dropped`).
    fn leave(
        &self,
        pass: Option<(u64, bool)>,
        key: &str,
        built: Option<(u64, u64)>,
        dropped: bool,
    ) {
        let mut s = self.s.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((run, _)) = pass {
            s.used = s.used.saturating_sub(run);
            s.running -= 1;
        }
        if dropped {
            if let Some(k) = s.kept.remove(key) {
                s.used = s.used.saturating_sub(k.bytes);
            }
        } else if let Some(mut k) = s.kept.get(key).copied() {
            if pass.is_some_and(|(_, early)| early) {
                k.early_writers -= 1;
            }
            if let Some(b) = built {
                k.pending = Some(b);
            }
            if let (Some((bytes, reverse)), 0, false) = (k.pending, k.early_writers, k.built) {
                s.used = s.used.saturating_sub(k.bytes).saturating_add(bytes);
                k = Kept {
                    bytes,
                    reverse,
                    built: true,
                    pending: None,
                    ..k
                };
            }
            s.kept.insert(key.to_string(), k);
        }
        self.cv.notify_all();
    }
}

/// A case's leave to run from a [`Gate`]: given back by [`Pass::done`], or on drop (a run
/// that panicked must not keep the others waiting; the state it started from stays counted
/// until the end, since its count of cases left is not brought down).
struct Pass<'g> {
    gate: &'g Gate,
    key: &'g str,
    run: u64,
    /// It writes a state that was counted by estimate when it started.
    early: bool,
    done: bool,
}

impl Pass<'_> {
    fn done(mut self, built: Option<(u64, u64)>, dropped: bool) {
        self.done = true;
        self.gate
            .leave(Some((self.run, self.early)), self.key, built, dropped);
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.gate
                .leave(Some((self.run, self.early)), self.key, None, false);
        }
    }
}

/// Simulates every case, `opts.threads` at a time and within `opts.memory_budget`; `model`
/// gives the drive model of a case's drive name (None: the case fails with "no model").
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
    let left: Mutex<HashMap<&str, usize>> =
        Mutex::new(keys.iter().fold(HashMap::new(), |mut m, k| {
            *m.entry(k.as_str()).or_insert(0) += 1;
            m
        }));
    let drives: Vec<Option<DriveConfig>> = cases.iter().map(|c| model(&c.drive)).collect();
    // the estimates only where a budget is kept (a fit calls this for every evaluation)
    let needs: Vec<Option<Need>> = match opts.memory_budget {
        MemoryBudget::Unbounded => Vec::new(),
        _ => cases
            .iter()
            .zip(&drives)
            .map(|(c, d)| d.as_ref().map(|d| Need::of(c, d, opts, cache)))
            .collect(),
    };
    let largest = needs
        .iter()
        .flatten()
        .map(|n| n.run.saturating_add(n.state.unwrap_or(0)))
        .max()
        .unwrap_or(0);
    let gate = match opts.memory_budget {
        MemoryBudget::Unbounded => None,
        MemoryBudget::Bytes(b) => Some(Gate::new(b)),
        MemoryBudget::LargestCase(cap) => Some(Gate::new(cap.map_or(largest, |c| c.min(largest)))),
    };
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
                let key = keys[i].as_str();
                let mut pass = None;
                let r = match &drives[i] {
                    Some(d) => {
                        if let (Some(g), Some(need)) = (&gate, needs.get(i).copied().flatten()) {
                            pass = Some(g.enter(k, key, need));
                        }
                        simulate(c, d, opts, cache)
                    }
                    None => Err(format!("no drive model named {:?}", c.drive)),
                };
                out.lock().expect("not poisoned")[i] = Some(r);
                let built = cache.and_then(|c| c.held(key));
                let mut dropped = false;
                if let Some(cache) = cache.filter(|c| c.single_pass) {
                    let mut left = left.lock().expect("not poisoned");
                    let n = left.get_mut(key).expect("counted");
                    *n -= 1;
                    if *n == 0 {
                        cache.evict(key);
                        dropped = true;
                    }
                }
                match (pass, &gate) {
                    (Some(p), _) => p.done(built, dropped),
                    (None, Some(g)) if dropped => g.leave(None, key, None, true),
                    _ => {}
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
        // budgets: none, one that lets every case run alone only, one that pairs some
        for (threads, memory_budget) in [
            (1, MemoryBudget::Unbounded),
            (2, MemoryBudget::Unbounded),
            (3, MemoryBudget::Unbounded),
            (2, MemoryBudget::Bytes(1)),
            (3, MemoryBudget::Bytes(48 << 20)),
            (2, MemoryBudget::LargestCase(None)),
        ] {
            let opts = PredictOptions {
                threads,
                memory_budget,
                ..base
            };
            for cache in [
                None,
                Some(SimCache::single_pass()),
                Some(SimCache::default()),
            ] {
                let got: Vec<Outcome> = simulate_all(&cases, model, &opts, cache.as_ref())
                    .into_iter()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(got, alone, "threads {threads}, budget {memory_budget:?}");
                if let Some(c) = cache.filter(|c| c.single_pass) {
                    assert!(
                        c.entries.lock().unwrap().is_empty(),
                        "a single pass keeps no state when done"
                    );
                }
            }
        }
    }

    /// A run that writes a drive state still counted by its estimate keeps the estimate
    /// reserved (it covers the reverse maps the run may build) until it is done, though
    /// another case reports the state as built before; writers that start later reserve the
    /// reverse maps themselves.
    #[test]
    fn an_early_writer_keeps_the_estimate_until_it_is_done() {
        let gate = Gate::new(100);
        let used = || gate.s.lock().unwrap().used;
        let built = Some((40, 30));
        let need = |writes| Need {
            state: Some(60),
            run: 10,
            writes,
        };
        let writer = gate.enter(0, "k", need(true));
        let reader = gate.enter(1, "k", need(false));
        assert_eq!(used(), 80);
        reader.done(built, false);
        assert_eq!(used(), 70, "the estimate stays while the early writer runs");
        writer.done(built, false);
        assert_eq!(used(), 40, "then the state counts as built");
        let late = gate.enter(2, "k", need(true));
        assert_eq!(used(), 80, "a later writer reserves the reverse maps");
        late.done(built, true);
        assert_eq!(used(), 0, "all given back once the state is dropped");
    }

    /// The gate lets cases run side by side only while what they and the kept states take
    /// fits in the budget; a case larger than the budget runs alone; a kept state is counted
    /// once for all its cases, as built once it is, and given back when dropped; every case
    /// runs (none waits for good), on any number of threads.
    #[test]
    fn the_gate_keeps_cases_within_the_budget() {
        const BUDGET: u64 = 100;
        let need = |state, run, writes| Need { state, run, writes };
        // (key, need, the kept state as built: bytes, bytes a writing run adds)
        type GateCase<'a> = (&'a str, Need, Option<(u64, u64)>);
        let cases: Vec<GateCase> = vec![
            ("a", need(Some(60), 10, false), Some((40, 30))),
            ("a", need(Some(60), 10, true), Some((40, 30))),
            ("a", need(Some(60), 10, false), Some((40, 30))),
            ("b", need(None, 50, false), None),
            ("b", need(None, 50, false), None),
            ("c", need(None, 150, false), None),
            ("d", need(Some(30), 20, true), Some((30, 0))),
            ("d", need(Some(30), 20, false), Some((30, 0))),
            ("e", need(None, 5, false), None),
            ("e", need(None, 5, false), None),
        ];
        for threads in [1, 2, 3, 4] {
            let gate = Gate::new(BUDGET);
            let next = AtomicUsize::new(0);
            let left: Mutex<HashMap<&str, usize>> = Mutex::new(HashMap::new());
            for (k, _, _) in &cases {
                *left.lock().unwrap().entry(k).or_insert(0) += 1;
            }
            let most = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| loop {
                        let pos = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(key, n, built)) = cases.get(pos) else {
                            break;
                        };
                        let pass = gate.enter(pos, key, n);
                        {
                            let st = gate.s.lock().unwrap();
                            assert!(
                                st.used <= BUDGET || st.running == 1,
                                "{} used by {} cases",
                                st.used,
                                st.running
                            );
                            if n.run > BUDGET {
                                assert_eq!(st.running, 1, "a case over the budget runs alone");
                            }
                            most.fetch_max(st.running, Ordering::Relaxed);
                        }
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        let dropped = {
                            let mut l = left.lock().unwrap();
                            let c = l.get_mut(key).unwrap();
                            *c -= 1;
                            *c == 0
                        };
                        pass.done(built, dropped);
                    });
                }
            });
            let st = gate.s.lock().unwrap();
            assert_eq!((st.used, st.running), (0, 0), "everything given back");
            assert!(st.kept.is_empty() && st.waiting.is_empty());
            assert!(most.load(Ordering::Relaxed) <= threads);
            if threads > 1 {
                assert!(
                    most.load(Ordering::Relaxed) > 1,
                    "small cases ran side by side"
                );
            }
        }
    }
}
