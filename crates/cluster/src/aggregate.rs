//! What each rank reports to rank 0, and the job's result built from it: one aggregated
//! [`RunResult`] (counts summed, latency from the merged histograms, rates summed over ranks,
//! series summed, CPU over all ranks) plus the per-rank and per-host view.

use crate::rank::who;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use ssdlab_report::table::{fmt_count, fmt_lat};
use ssdlab_stats::{
    CpuUsage, LatSummary, MemberStats, OpSummary, Recorder, RunResult, TargetDesc, VerifySummary,
};
use ssdlab_workload::WorkloadSpec;
use std::collections::BTreeMap;

/// One op kind of one rank: counts, rates and total latency (with percentiles).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindLine {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub errors: u64,
    pub short_ios: u64,
    /// Total latency (submission + completion), ns.
    pub lat: LatSummary,
    /// Completion latency, ns.
    pub clat: LatSummary,
}

impl KindLine {
    fn of(o: &OpSummary) -> KindLine {
        KindLine {
            ios: o.ios,
            bytes: o.bytes,
            iops: o.iops,
            bw_bytes: o.bw_bytes,
            errors: o.errors,
            short_ios: o.short_ios,
            lat: o.lat.clone(),
            clat: o.clat.clone(),
        }
    }
}

/// What a rank that ran reports (compact: its histograms travel separately, merged on the way).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankRun {
    pub target: TargetDesc,
    pub read: KindLine,
    pub write: KindLine,
    pub trim: KindLine,
    pub runtime_ns: u64,
    pub ramp_ns: u64,
    pub timestamp_ms: u64,
    pub interrupted: bool,
    pub stopped_on_error: bool,
    pub stonewalled: bool,
    /// The rank's `--ios`/`--bytes` budget, in I/Os, when it had one.
    pub budget_ios: Option<u64>,
    pub cpu: CpuUsage,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device: Vec<ssdlab_stats::device::DriveCounters>,
    /// The kernel's counters of the devices under the rank's target (fio's `disk_util`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<ssdlab_stats::DiskUtil>,
    /// How many I/O errors the rank recorded (their first records travel with the histograms).
    pub error_count: u64,
}

impl RankRun {
    /// The compact report of a finished run.
    pub fn of(r: &RunResult, budget_ios: Option<u64>) -> RankRun {
        RankRun {
            target: r.target.clone(),
            read: KindLine::of(&r.read),
            write: KindLine::of(&r.write),
            trim: KindLine::of(&r.trim),
            runtime_ns: r.runtime_ns,
            ramp_ns: r.ramp_ns,
            timestamp_ms: r.timestamp_ms,
            interrupted: r.interrupted,
            stopped_on_error: r.stopped_on_error,
            stonewalled: r.stonewalled,
            budget_ios,
            cpu: r.cpu.clone(),
            members: r.members.clone(),
            verify: r.verify.clone(),
            notes: r.notes.clone(),
            device: r.device.clone(),
            disk_util: r.disk_util.clone(),
            error_count: r.read.errors + r.write.errors + r.trim.errors,
        }
    }

    fn kinds(&self) -> [&KindLine; 3] {
        [&self.read, &self.write, &self.trim]
    }

    pub fn ios(&self) -> u64 {
        self.kinds().iter().map(|k| k.ios).sum()
    }
    pub fn iops(&self) -> f64 {
        self.kinds().iter().map(|k| k.iops).sum()
    }
    pub fn bw_bytes(&self) -> f64 {
        self.kinds().iter().map(|k| k.bw_bytes).sum()
    }
    /// Mean total latency over all kinds, ns.
    pub fn lat_mean(&self) -> f64 {
        let n: u64 = self.kinds().iter().map(|k| k.lat.n).sum();
        if n == 0 {
            return 0.0;
        }
        self.kinds()
            .iter()
            .map(|k| k.lat.mean * k.lat.n as f64)
            .sum::<f64>()
            / n as f64
    }
    /// Total-latency percentile `p` of the worst kind, ns.
    pub fn lat_pct(&self, p: f64) -> u64 {
        self.kinds()
            .iter()
            .filter_map(|k| k.lat.percentile(p))
            .max()
            .unwrap_or(0)
    }
}

/// Why a rank has no result: its message, and the exit code it maps to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankFailure {
    pub code: u8,
    pub message: String,
    /// The rank stopped because another rank failed (not a cause of its own).
    pub because_of_others: bool,
}

/// One rank's report to rank 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: usize,
    pub host: String,
    pub local_rank: usize,
    pub outcome: Result<RankRun, RankFailure>,
}

impl RankReport {
    pub fn who(&self) -> String {
        who(self.rank, &self.host)
    }
}

/// The job's result at rank 0.
#[derive(Debug, Clone)]
pub struct JobResult {
    /// Every rank's I/O as one run: what `--json` prints as the job.
    pub aggregate: RunResult,
    pub ranks: Vec<RankReport>,
    /// Time rank 0 spent merging and gathering after its own run ended, ns.
    pub aggregation_ns: u64,
    /// Why the job's ranks were stopped early, if they were ("rank 2 (b) finished its --ios first").
    pub stopped_by: Option<String>,
    pub stonewall: bool,
}

/// Builds the aggregated result from the merged recorder and the ranks' reports. Counts,
/// latency distributions, series and depth levels come from the merged recorder (exact); IOPS
/// and bandwidth per kind are the sums of the ranks' own rates; CPU is the sum over ranks; the
/// measured time is the longest rank's.
pub fn aggregate(
    spec: &WorkloadSpec,
    mut target: TargetDesc,
    rec: &Recorder,
    ranks: &[RankReport],
) -> RunResult {
    let runs: Vec<&RankRun> = ranks
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok())
        .collect();
    let runtime_ns = runs.iter().map(|r| r.runtime_ns).max().unwrap_or(0);
    let ramp_ns = runs.iter().map(|r| r.ramp_ns).max().unwrap_or(0);
    // the merged recorder's latencies and depths; rates are the sum of the ranks' own (each
    // over its own runtime)
    let rate = |pick: fn(&RankRun) -> &KindLine| {
        (
            runs.iter().map(|r| pick(r).iops).sum::<f64>(),
            runs.iter().map(|r| pick(r).bw_bytes).sum(),
        )
    };
    let mut cpu = CpuUsage::default();
    for r in &runs {
        cpu.user_ns += r.cpu.user_ns;
        cpu.sys_ns += r.cpu.sys_ns;
        cpu.ctx += r.cpu.ctx;
        cpu.majf += r.cpu.majf;
        cpu.minf += r.cpu.minf;
    }
    let mut members = Vec::new();
    let mut devices = Vec::new();
    let mut verify: Option<VerifySummary> = None;
    for rep in ranks {
        let Ok(r) = &rep.outcome else { continue };
        for m in &r.members {
            members.push(MemberStats {
                name: format!("rank{}:{}", rep.rank, m.name),
                ..m.clone()
            });
        }
        devices.extend(r.device.iter().cloned());
        if let Some(v) = &r.verify {
            let acc = verify.get_or_insert_with(VerifySummary::default);
            acc.sectors_ok += v.sectors_ok;
            acc.sectors_unwritten += v.sectors_unwritten;
            acc.sectors_bad += v.sectors_bad;
        }
    }
    let hosts: std::collections::BTreeSet<&str> = ranks.iter().map(|r| r.host.as_str()).collect();
    // The kernel's disk counters are per host: the first rank that ran on each host says them
    // (ranks on one host see the same disks), named after the host when there are several.
    let mut disk_util = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for rep in ranks {
        let Ok(r) = &rep.outcome else { continue };
        if !seen.insert(rep.host.as_str()) {
            continue;
        }
        for d in &r.disk_util {
            let mut d = d.clone();
            if hosts.len() > 1 {
                d.name = format!("{}:{}", rep.host, d.name);
            }
            disk_util.push(d);
        }
    }
    target
        .details
        .push(("ranks".into(), ranks.len().to_string()));
    target
        .details
        .push(("hosts".into(), hosts.len().to_string()));
    let mut result = RunResult {
        timestamp_ms: runs.iter().map(|r| r.timestamp_ms).min().unwrap_or(0),
        interrupted: runs.iter().any(|r| r.interrupted),
        stopped_on_error: runs.iter().any(|r| r.stopped_on_error),
        stonewalled: runs.iter().any(|r| r.stonewalled),
        cpu,
        members,
        verify,
        notes: {
            // each rank's notes, once (ranks on the same drive model often say the same)
            let mut notes: Vec<String> = Vec::new();
            for n in runs.iter().flat_map(|r| &r.notes) {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
            notes
        },
        device: devices,
        // each rank's array has its own cache: its counters stay with the rank's result
        adapter_cache: None,
        disk_util,
        // Time-series logs stay with each rank (a job on several ranks refuses them).
        logs: Vec::new(),
        ..RunResult::from_recorder(spec, target, rec, runtime_ns, ramp_ns)
    };
    for (s, pick) in [
        (
            &mut result.read,
            (|r: &RankRun| &r.read) as fn(&RankRun) -> &KindLine,
        ),
        (&mut result.write, |r: &RankRun| &r.write),
        (&mut result.trim, |r: &RankRun| &r.trim),
    ] {
        (s.iops, s.bw_bytes) = rate(pick);
    }
    result
}

/// min / mean / max of a value over the ranks that ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

fn spread(v: impl Iterator<Item = f64>) -> Spread {
    let v: Vec<f64> = v.collect();
    if v.is_empty() {
        return Spread::default();
    }
    Spread {
        min: v.iter().cloned().fold(f64::INFINITY, f64::min),
        mean: v.iter().sum::<f64>() / v.len() as f64,
        max: v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// One host's ranks together.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostLine {
    pub host: String,
    pub ranks: usize,
    pub iops: f64,
    pub bw_bytes: f64,
    /// Mean total latency over the host's I/Os (exact: weighted by each rank's count), ns.
    pub lat_mean_ns: f64,
    /// The highest p99 of the host's ranks, ns (a bound, not the host's merged p99).
    pub worst_rank_p99_ns: u64,
    pub errors: u64,
    pub failed_ranks: usize,
}

/// The per-rank and per-host view of a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Spreads {
    pub iops: Spread,
    pub mb_s: Spread,
    pub lat_mean_ns: Spread,
    pub lat_p99_ns: Spread,
    /// The rank with the lowest IOPS: (rank, host, IOPS, percent below the mean).
    pub slowest: Option<(usize, String, f64, f64)>,
    pub hosts: Vec<HostLine>,
}

impl JobResult {
    /// min/mean/max over the ranks that ran, the slowest rank, and one line per host.
    pub fn spreads(&self) -> Spreads {
        let runs: Vec<(&RankReport, &RankRun)> = self
            .ranks
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok().map(|o| (r, o)))
            .collect();
        let iops = spread(runs.iter().map(|r| r.1.iops()));
        let slowest = runs
            .iter()
            .min_by(|a, b| a.1.iops().total_cmp(&b.1.iops()))
            .map(|(rep, r)| {
                let below = if iops.mean > 0.0 {
                    100.0 * (iops.mean - r.iops()) / iops.mean
                } else {
                    0.0
                };
                (rep.rank, rep.host.clone(), r.iops(), below)
            });
        let mut hosts: BTreeMap<&str, (HostLine, f64, u64)> = BTreeMap::new();
        for rep in &self.ranks {
            let e = hosts.entry(rep.host.as_str()).or_insert_with(|| {
                (
                    HostLine {
                        host: rep.host.clone(),
                        ..Default::default()
                    },
                    0.0,
                    0,
                )
            });
            e.0.ranks += 1;
            match &rep.outcome {
                Ok(r) => {
                    e.0.iops += r.iops();
                    e.0.bw_bytes += r.bw_bytes();
                    e.0.worst_rank_p99_ns = e.0.worst_rank_p99_ns.max(r.lat_pct(99.0));
                    e.0.errors += r.error_count;
                    let n: u64 = r.kinds().iter().map(|k| k.lat.n).sum();
                    e.1 += r.lat_mean() * n as f64;
                    e.2 += n;
                }
                Err(_) => e.0.failed_ranks += 1,
            }
        }
        Spreads {
            iops,
            mb_s: spread(runs.iter().map(|r| r.1.bw_bytes() / 1e6)),
            lat_mean_ns: spread(runs.iter().map(|r| r.1.lat_mean())),
            lat_p99_ns: spread(runs.iter().map(|r| r.1.lat_pct(99.0) as f64)),
            slowest,
            hosts: hosts
                .into_values()
                .map(|(mut h, sum, n)| {
                    h.lat_mean_ns = if n > 0 { sum / n as f64 } else { 0.0 };
                    h
                })
                .collect(),
        }
    }

    /// The per-rank and per-host tables printed under the aggregate's table. Up to `max_rows`
    /// ranks are listed (the slowest first when there are more).
    pub fn render(&self, max_rows: usize) -> String {
        let s = self.spreads();
        let mut out = String::new();
        let hosts = s.hosts.len();
        out.push_str(&format!(
            "ranks:    {} on {} host{}{}",
            self.ranks.len(),
            hosts,
            if hosts == 1 { "" } else { "s" },
            if self.stonewall { ", stonewalling" } else { "" }
        ));
        if let Some(by) = &self.stopped_by {
            out.push_str(&format!("; stopped early: {by}"));
        }
        out.push('\n');
        let budget = self.stonewall
            && self
                .ranks
                .iter()
                .any(|r| r.outcome.as_ref().is_ok_and(|o| o.budget_ios.is_some()));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        let mut header = vec![
            "rank", "host", "target", "ios", "IOPS", "MB/s", "lat mean", "p99", "runtime", "errors",
        ];
        if budget {
            header.push("done");
        }
        header.push("status");
        t.set_header(header);
        let mut order: Vec<&RankReport> = self.ranks.iter().collect();
        if order.len() > max_rows {
            order.sort_by(|a, b| {
                let k = |r: &RankReport| r.outcome.as_ref().map_or(-1.0, |o| o.iops());
                k(a).total_cmp(&k(b))
            });
            order.truncate(max_rows);
        }
        for rep in order {
            let mut row = vec![rep.rank.to_string(), rep.host.clone()];
            match &rep.outcome {
                Ok(r) => {
                    row.extend([
                        r.target.name.clone(),
                        r.ios().to_string(),
                        fmt_count(r.iops()),
                        format!("{:.1}", r.bw_bytes() / 1e6),
                        fmt_lat(r.lat_mean()),
                        fmt_lat(r.lat_pct(99.0) as f64),
                        format!("{:.3} s", r.runtime_ns as f64 / 1e9),
                        r.error_count.to_string(),
                    ]);
                    if budget {
                        row.push(match r.budget_ios {
                            Some(b) if b > 0 => {
                                format!(
                                    "{:.1}%",
                                    100.0 * (r.ios() + r.error_count) as f64 / b as f64
                                )
                            }
                            _ => "-".into(),
                        });
                    }
                    row.push(status(r).into());
                }
                Err(f) => {
                    row.extend(["-"; 8].map(String::from));
                    if budget {
                        row.push("-".into());
                    }
                    row.push(format!("failed: {}", f.message));
                }
            }
            t.add_row(row);
        }
        if self.ranks.len() > 1 {
            for (name, pick) in [("min", 0usize), ("mean", 1), ("max", 2)] {
                let v = |sp: &Spread| [sp.min, sp.mean, sp.max][pick];
                let mut row = vec![
                    name.to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    fmt_count(v(&s.iops)),
                    format!("{:.1}", v(&s.mb_s)),
                    fmt_lat(v(&s.lat_mean_ns)),
                    fmt_lat(v(&s.lat_p99_ns)),
                    String::new(),
                    String::new(),
                ];
                if budget {
                    row.push(String::new());
                }
                row.push(String::new());
                t.add_row(row);
            }
        }
        for i in [3usize, 4, 5, 6, 7, 8, 9, 10] {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&t.to_string());
        out.push('\n');
        if self.ranks.len() > max_rows {
            out.push_str(&format!(
                "          (the {max_rows} slowest of {} ranks; --json lists every rank)\n",
                self.ranks.len()
            ));
        }
        if let (Some((rank, host, iops, below)), true) = (&s.slowest, self.ranks.len() > 1) {
            out.push_str(&format!(
                "slowest:  rank {rank} on {host}: {} IOPS, {below:.1}% below the mean of the ranks\n",
                fmt_count(*iops)
            ));
        }
        if hosts > 1 {
            let mut ht = Table::new();
            ht.load_preset(UTF8_FULL_CONDENSED);
            ht.set_header(vec![
                "host",
                "ranks",
                "IOPS",
                "MB/s",
                "lat mean",
                "worst rank p99",
                "errors",
                "failed ranks",
            ]);
            for h in &s.hosts {
                ht.add_row(vec![
                    h.host.clone(),
                    h.ranks.to_string(),
                    fmt_count(h.iops),
                    format!("{:.1}", h.bw_bytes / 1e6),
                    fmt_lat(h.lat_mean_ns),
                    fmt_lat(h.worst_rank_p99_ns as f64),
                    h.errors.to_string(),
                    h.failed_ranks.to_string(),
                ]);
            }
            for i in 1..=7 {
                if let Some(c) = ht.column_mut(i) {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
            out.push_str(&ht.to_string());
            out.push('\n');
        }
        out
    }

    /// ssdlab's object for the job (`jobs[0].ssdlab.cluster` in the JSON output).
    pub fn cluster_json(&self) -> Value {
        let s = self.spreads();
        let ranks: Vec<Value> = self
            .ranks
            .iter()
            .map(|rep| match &rep.outcome {
                Ok(r) => json!({
                    "rank": rep.rank,
                    "host": rep.host,
                    "local_rank": rep.local_rank,
                    "ok": true,
                    "target": r.target,
                    "ios": r.ios(),
                    "iops": r.iops(),
                    "bw_bytes": r.bw_bytes(),
                    "lat_mean_ns": r.lat_mean(),
                    "lat_p99_ns": r.lat_pct(99.0),
                    "read": r.read,
                    "write": r.write,
                    "trim": r.trim,
                    "runtime_ns": r.runtime_ns,
                    "ramp_ns": r.ramp_ns,
                    "interrupted": r.interrupted,
                    "stopped_on_error": r.stopped_on_error,
                    "stonewalled": r.stonewalled,
                    "budget_ios": r.budget_ios,
                    "errors": r.error_count,
                    "cpu": r.cpu,
                    "cpu_ns_per_io": if r.ios() > 0 {
                        (r.cpu.user_ns + r.cpu.sys_ns) as f64 / r.ios() as f64
                    } else { 0.0 },
                    "members": r.members,
                    "verify": r.verify,
                    "device": (!r.device.is_empty()).then_some(&r.device),
                }),
                Err(f) => json!({
                    "rank": rep.rank,
                    "host": rep.host,
                    "local_rank": rep.local_rank,
                    "ok": false,
                    "error": f.message,
                    "exit_code": f.code,
                }),
            })
            .collect();
        json!({
            "ranks": self.ranks.len(),
            "hosts": s.hosts.len(),
            "stonewall": self.stonewall,
            "stopped_by": self.stopped_by,
            "aggregation_ns": self.aggregation_ns,
            "iops": s.iops,
            "mb_s": s.mb_s,
            "lat_mean_ns": s.lat_mean_ns,
            "lat_p99_ns": s.lat_p99_ns,
            "slowest": s.slowest.as_ref().map(|(rank, host, iops, below)| json!({
                "rank": rank, "host": host, "iops": iops, "pct_below_mean": below
            })),
            "per_host": s.hosts,
            "per_rank": ranks,
        })
    }

    /// The fio-shaped JSON document: one job (the aggregate), the ranks under its `ssdlab`
    /// object as `cluster`.
    pub fn fio_json_string(&self) -> String {
        use ssdlab_report::json::Json;
        let mut doc = ssdlab_report::fio_json(
            std::slice::from_ref(&self.aggregate),
            ssdlab_report::fio_json::Flavor::Json,
        );
        let job = match doc.get_mut("jobs") {
            Some(Json::Arr(jobs)) => jobs.first_mut(),
            _ => None,
        };
        if let Some(job) = job {
            // The job's rates are the sums of the ranks' own rates (as in the table), not its
            // I/Os over the longest rank's time (fio's group reporting).
            let agg = &self.aggregate;
            for (kind, o) in [
                ("read", &agg.read),
                ("write", &agg.write),
                ("trim", &agg.trim),
            ] {
                if let Some(k) = job.get_mut(kind) {
                    let bw_bytes = o.bw_bytes.round() as u64;
                    k.set("iops", o.iops);
                    k.set("bw_bytes", bw_bytes);
                    k.set("bw", bw_bytes / 1024);
                }
            }
            if let Some(ssdlab) = job.get_mut("ssdlab") {
                ssdlab.push("cluster", Json::from(&self.cluster_json()));
            }
        }
        doc.to_fio_string()
    }
}

fn status(r: &RankRun) -> &'static str {
    if r.interrupted {
        "interrupted"
    } else if r.stopped_on_error {
        "stopped on error"
    } else if r.stonewalled {
        "stonewalled"
    } else {
        "ok"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_stats::Recorder;
    use ssdlab_workload::OpKind;

    /// Two ranks' results merged: latencies and depths from the merged recorder (as a single
    /// run would show them), rates summed from the ranks' own, the longest runtime, the
    /// earliest start, how each ended, and the rank and host counts in the target.
    #[test]
    fn ranks_merge_into_one_result() {
        let mut rec = Recorder::new();
        for (i, clat) in [1_000u64, 3_000, 5_000].into_iter().enumerate() {
            rec.record(0, OpKind::Read, 4096, 100, clat, i as u64 * 1_000_000);
        }
        rec.record_depth(4, 3);
        let spec = WorkloadSpec::default();
        let run = |iops: f64, runtime_ns: u64, timestamp_ms: u64, stonewalled: bool| RankRun {
            read: KindLine {
                iops,
                bw_bytes: iops * 4096.0,
                ..KindLine::default()
            },
            runtime_ns,
            timestamp_ms,
            stonewalled,
            ..RankRun::default()
        };
        let ranks = [
            RankReport {
                rank: 0,
                host: "a".into(),
                local_rank: 0,
                outcome: Ok(run(100.0, 2_000_000_000, 50, false)),
            },
            RankReport {
                rank: 1,
                host: "b".into(),
                local_rank: 0,
                outcome: Ok(run(300.0, 3_000_000_000, 40, true)),
            },
        ];
        let alone = RunResult::from_recorder(&spec, TargetDesc::default(), &rec, 3_000_000_000, 0);
        let r = aggregate(&spec, TargetDesc::default(), &rec, &ranks);
        assert_eq!(r.read.iops, 400.0);
        assert_eq!(r.read.bw_bytes, 400.0 * 4096.0);
        assert_eq!(r.read.lat, alone.read.lat);
        assert_eq!(r.read.ios, 3);
        assert_eq!(r.iodepth_level, alone.iodepth_level);
        assert_eq!(r.latency_levels, alone.latency_levels);
        assert_eq!(r.series, alone.series);
        assert_eq!((r.runtime_ns, r.timestamp_ms), (3_000_000_000, 40));
        assert!(r.stonewalled && !r.interrupted);
        assert!(r.logs.is_empty(), "time-series logs stay with each rank");
        assert!(r.target.details.contains(&("ranks".into(), "2".into())));
        assert!(r.target.details.contains(&("hosts".into(), "2".into())));
    }
}
