//! JSON in fio's shape (`--output-format=json` and `json+`), so tools that read fio output read
//! ours: keys in fio's order (`stat.c`: `show_thread_status_json`, `add_ddir_status_json`,
//! `json_array_add_disk_util`), printed the way fio prints them. ssdlab's own data (spec,
//! target, series, device counters) sits in a separate `"ssdlab"` object per job, never mixed
//! into fio's fields.
//!
//! What the fields mean where ssdlab measures differently from fio:
//! - percentiles come from ssdlab's histograms (0.1 % resolution), not fio's bin midpoints;
//! - `slat_ns`, `clat_ns` and `lat_ns` all carry percentiles (and bins in JSON+), as fio does
//!   with `slat_percentiles=1`, `clat_percentiles=1`, `lat_percentiles=1` (set in "job options");
//! - `disk_util` lists the kernel's counters of the devices under a real target and, for a
//!   stripe set or simulated array, an entry for the array (its I/Os, with the members'
//!   averages in fio's `aggr_*` keys) followed by one entry per member.

use crate::export::{FioJob, Report};
use crate::json::Json;
use ssdlab_stats::{LatSummary, OpSummary, RunResult};
use ssdlab_workload::{format_size, Pattern};

/// Plain fio JSON, or JSON+ (latency histograms as `bins`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Json,
    JsonPlus,
}

/// fio prints percentile keys with `%f`.
fn pct_key(p: f64) -> String {
    format!("{p:.6}")
}

fn lat_obj(l: &LatSummary, flavor: Flavor) -> Json {
    let mut m = Json::obj()
        .with("min", l.min)
        .with("max", l.max)
        .with("mean", l.mean)
        .with("stddev", l.stddev)
        .with("N", l.n);
    if l.n > 0 && !l.percentiles.is_empty() {
        m.push(
            "percentile",
            Json::Obj(
                l.percentiles
                    .iter()
                    .map(|(q, v)| (pct_key(*q), Json::UInt(*v)))
                    .collect(),
            ),
        );
        if flavor == Flavor::JsonPlus {
            m.push(
                "bins",
                Json::Obj(
                    l.bins
                        .iter()
                        .map(|(v, c)| (v.to_string(), Json::UInt(*c)))
                        .collect(),
                ),
            );
        }
    }
    m
}

fn op_obj(o: &OpSummary, flavor: Flavor) -> Json {
    // fio works in whole milliseconds of runtime (`ts->runtime`), and counts a direction's
    // only when it moved bytes (`update_runtime`); its IOPS count every I/O issued.
    let runtime_ms = o.fio_runtime_ms();
    let bw_bytes = (1000 * o.bytes).checked_div(runtime_ms).unwrap_or(0);
    let iops = if runtime_ms > 0 {
        1000.0 * o.issued_ios() as f64 / runtime_ms as f64
    } else {
        0.0
    };
    // fio's share of the group's bandwidth (`convert_agg_kbytes_percent`, the mean truncated).
    let bw_agg = if o.bw_samples == 0 {
        0.0
    } else if bw_bytes > 1024 {
        (o.bw_mean_kib.trunc() * 100.0 / (bw_bytes as f64 / 1024.0)).min(100.0)
    } else {
        100.0
    };
    Json::obj()
        .with("io_bytes", o.bytes)
        .with("io_kbytes", o.bytes >> 10)
        .with("bw_bytes", bw_bytes)
        .with("bw", bw_bytes / 1024)
        .with("iops", iops)
        .with("runtime", runtime_ms)
        .with("total_ios", o.issued_ios())
        .with("short_ios", o.short_ios)
        .with("drop_ios", 0u64)
        .with("slat_ns", lat_obj(&o.slat, flavor))
        .with("clat_ns", lat_obj(&o.clat, flavor))
        .with("lat_ns", lat_obj(&o.lat, flavor))
        .with("bw_min", o.bw_min_kib)
        .with("bw_max", o.bw_max_kib)
        .with("bw_agg", bw_agg)
        .with("bw_mean", o.bw_mean_kib)
        .with("bw_dev", o.bw_dev_kib)
        .with("bw_samples", o.bw_samples)
        .with("iops_min", o.iops_min as u64)
        .with("iops_max", o.iops_max as u64)
        .with("iops_mean", o.iops_mean)
        .with("iops_stddev", o.iops_stddev)
        .with("iops_samples", o.samples)
}

fn levels(v: &[(String, f64)]) -> Json {
    Json::Obj(
        v.iter()
            .map(|(k, p)| (k.clone(), Json::Float(*p)))
            .collect(),
    )
}

/// fio's "job options" (all values are strings) describing the spec.
fn job_options(r: &RunResult) -> Json {
    let s = &r.spec;
    let mut m = Json::obj();
    let mut put = |k: &str, v: String| m.push(k, v);
    put("name", job_name(r));
    put("filename", r.target.name.clone());
    put("rw", s.mode_name().to_string());
    if s.reads() && s.writes() {
        put("rwmixread", s.read_pct.to_string());
    }
    if s.random_pct != s.rw.default_random_pct() {
        put("percentage_random", s.random_pct.to_string());
    }
    put("bs", s.bs.to_string());
    if s.align != s.bs {
        put("blockalign", s.align.to_string());
    }
    put("offset", r.target.offset.to_string());
    put("size", r.target.span.to_string());
    put("iodepth", s.qd.to_string());
    put("numjobs", s.jobs.to_string());
    put("ioengine", r.target.engine.to_string());
    put("direct", if r.target.direct { "1" } else { "0" }.into());
    if let Some(t) = s.stop.time_ns {
        put("runtime", format!("{}ms", t / 1_000_000));
        put("time_based", "1".into());
    }
    if let Some(n) = s.stop.ios {
        put("number_ios", n.to_string());
    }
    if let Some(b) = s.stop.bytes {
        put("io_size", b.to_string());
    }
    if s.ramp_ns > 0 {
        put("ramp_time", format!("{}ms", s.ramp_ns / 1_000_000));
    }
    match s.pattern {
        Pattern::Random => put("refill_buffers", "1".into()),
        Pattern::Zeros => put("zero_buffers", "1".into()),
        Pattern::Repeat(b) => put("buffer_pattern", format!("0x{b:02x}")),
        Pattern::Bytes(b) => put("buffer_pattern", b.hex()),
        Pattern::Compress(n) => {
            put("buffer_compress_percentage", n.to_string());
            // (fio's pieces are 512 bytes unless told)
            put("buffer_compress_chunk", "4096".into());
            put("refill_buffers", "1".into());
        }
        Pattern::Chunked(c) => {
            put("buffer_compress_percentage", c.pct.to_string());
            put("buffer_compress_chunk", c.chunk.to_string());
            if let Some(b) = c.fill {
                put("buffer_pattern", b.hex());
            }
            put("refill_buffers", "1".into());
        }
        // fio's defaults
        Pattern::Scrambled => {}
        Pattern::Once => put("scramble_buffers", "0".into()),
    }
    put("randseed", s.seed.to_string());
    // ssdlab reports percentiles of all three latencies (fio: only clat by default).
    put("slat_percentiles", "1".into());
    put("clat_percentiles", "1".into());
    put("lat_percentiles", "1".into());
    m
}

/// The job's name: `randread-4k-qd32`.
pub fn job_name(r: &RunResult) -> String {
    format!(
        "{}-{}-qd{}",
        r.spec.mode_name(),
        format_size(r.spec.bs).replace(' ', ""),
        r.spec.qd
    )
}

/// fio's `error`: the errno of the first error, 0 when none.
/// fio's job `error`: the error that ended the job, else (with `continue_on_error`) the first
/// one gone past.
fn job_errno(r: &RunResult) -> i64 {
    r.error_tally.error() as i64
}

/// fio's "job options": every value a string, in the order given.
fn options_obj(opts: &[(String, String)]) -> Json {
    // (fio drops an option given without a value, `time_based`, from the object: its value is
    // NULL; a section of such options alone prints `{}`)
    Json::Obj(
        opts.iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.clone(), Json::Str(v.clone())))
            .collect(),
    )
}

fn job_obj(r: &RunResult, fio: Option<&FioJob>, flavor: Flavor) -> Json {
    let (l_depth, l_target, l_pct, l_window) = crate::export::latency_keys(r, fio);
    let runtime_ms = r.runtime_ns / 1_000_000;
    let cpu_pct = |ns: u64| {
        if r.runtime_ns == 0 {
            0.0
        } else {
            100.0 * ns as f64 / (r.runtime_ns + r.ramp_ns) as f64
        }
    };
    let mut ssdlab = serde_json::json!({
        "spec": r.spec,
        "target": r.target,
        "runtime_ns": r.runtime_ns,
        "ramp_ns": r.ramp_ns,
        "interrupted": r.interrupted,
        "stopped_on_error": r.stopped_on_error,
        "errors": r.errors,
        "cpu": r.cpu,
        "cpu_ns_per_io": r.cpu_ns_per_io(),
        "read_mb_s": r.read.mb_s(),
        "write_mb_s": r.write.mb_s(),
        "read_mib_s": r.read.mib_s(),
        "write_mib_s": r.write.mib_s(),
        "series": r.series,
        "members": r.members,
        "verify": r.verify,
        "device": (!r.device.is_empty()).then_some(&r.device),
    });
    if !r.notes.is_empty() {
        ssdlab["notes"] = serde_json::json!(r.notes);
    }
    if let Some(ss) = &r.steady_state {
        ssdlab["steady_state"] = serde_json::json!(ss);
    }
    if let Some(c) = &r.adapter_cache {
        ssdlab["adapter_cache"] = serde_json::json!(c);
    }
    // What an fio job asked for that ssdlab ignored (--ignore-unsupported).
    if let Some(f) = fio {
        ssdlab["ignored_options"] = f
            .ignored
            .iter()
            .map(|i| serde_json::json!({"option": i.option, "at": i.at, "why": i.why}))
            .collect();
    }
    let mut job = match fio {
        // An fio job: its own name and group, when it started (ms since the epoch; simulated
        // drives: of virtual time), its options as written.
        Some(f) => Json::obj()
            .with("jobname", f.name.as_str())
            .with("groupid", f.group as u64)
            .with("job_start", r.timestamp_ms),
        None => Json::obj()
            .with("jobname", job_name(r))
            .with("groupid", 0u64),
    };
    job.push("error", job_errno(r));
    job.push("eta", 0u64);
    job.push(
        "elapsed",
        (r.runtime_ns + r.ramp_ns).div_ceil(1_000_000_000),
    );
    // (fio leaves a job's options out when its section set none)
    match fio {
        Some(f) if f.options.is_empty() => {}
        Some(f) => job.push("job options", options_obj(&f.options)),
        None => job.push("job options", job_options(r)),
    }
    // fio's unified_rw_reporting: `mixed` alone, or after the directions (`both`).
    let mixed = fio.and_then(|f| f.mixed.as_ref().map(|m| (m, f.mixed_only)));
    if !matches!(mixed, Some((_, true))) {
        job = job
            .with("read", op_obj(&r.read, flavor))
            .with("write", op_obj(&r.write, flavor))
            .with("trim", op_obj(&r.trim, flavor))
            .with(
                "sync",
                Json::obj().with("total_ios", 0u64).with(
                    "lat_ns",
                    Json::obj()
                        .with("min", 0u64)
                        .with("max", 0u64)
                        .with("mean", 0.0)
                        .with("stddev", 0.0)
                        .with("N", 0u64),
                ),
            );
    }
    if let Some((m, _)) = mixed {
        job.push("mixed", op_obj(m, flavor));
    }
    let job_runtime_ms = fio
        .and_then(|f| f.job_runtime_ns)
        .map_or(runtime_ms, |ns| ns / 1_000_000);
    let mut job = job
        .with("job_runtime", job_runtime_ms)
        .with("usr_cpu", cpu_pct(r.cpu.user_ns))
        .with("sys_cpu", cpu_pct(r.cpu.sys_ns))
        .with("ctx", r.cpu.ctx)
        .with("majf", r.cpu.majf)
        .with("minf", r.cpu.minf)
        .with("iodepth_level", levels(&r.iodepth_level))
        .with("iodepth_submit", levels(&r.iodepth_submit))
        .with("iodepth_complete", levels(&r.iodepth_complete))
        .with("latency_ns", levels(&r.latency_levels.ns))
        .with("latency_us", levels(&r.latency_levels.us))
        .with("latency_ms", levels(&r.latency_levels.ms));
    // fio's tally of the errors, with `continue_on_error` only.
    if fio.is_some_and(|f| f.continue_on_error) {
        job.push("total_err", r.error_tally.counted);
        job.push("first_error", r.error_tally.first as i64);
    }
    let mut job = job
        .with("latency_depth", l_depth)
        .with("latency_target", l_target)
        .with("latency_percentile", l_pct)
        .with("latency_window", l_window);
    // fio adds the description after the latency target's fields.
    if let Some(d) = fio.and_then(|f| f.description.as_deref()) {
        job.push("desc", d);
    }
    if let Some(ss) = &r.fio_steadystate {
        job.push("steadystate", steadystate_block(ss));
    }
    job.with("ssdlab", Json::from(&ssdlab))
}

/// fio's `steadystate` block (`stat.c`, `show_thread_status_json`).
fn steadystate_block(ss: &ssdlab_stats::FioSteadyState) -> Json {
    let c = &ss.criterion;
    let ints = |v: &[u64]| Json::Arr(v.iter().map(|&x| Json::UInt(x)).collect());
    let mut data = Json::obj()
        .with("bw_mean", ss.bw_mean())
        .with("iops_mean", ss.iops_mean());
    if c.metric == ssdlab_workload::SteadyMetric::Lat {
        data.push("lat_mean", ss.lat_mean());
        data.push("lat_ns", ints(&ss.lat_ns));
    }
    let data = data.with("iops", ints(&ss.iops)).with("bw", ints(&ss.bw));
    Json::obj()
        .with("ss", c.label())
        .with("duration", c.duration_ns / 1_000_000_000)
        .with("attained", u64::from(ss.attained))
        .with(
            "criterion",
            format!("{:.6}{}", ss.value as f32, if c.pct { "%" } else { "" }),
        )
        .with("max_deviation", ss.max_deviation)
        .with("slope", ss.slope)
        .with("data", data)
}

/// The counters of one `disk_util` entry.
#[derive(Debug, Clone, Copy, Default)]
struct DiskCount {
    ios: [u64; 2],
    merges: [u64; 2],
    ticks: [u64; 2],
    in_queue: u64,
    util: f64,
}

/// One `disk_util` entry in fio's key order.
fn disk_entry(name: &str, c: &DiskCount) -> Json {
    Json::obj()
        .with("name", name)
        .with("read_ios", c.ios[0])
        .with("write_ios", c.ios[1])
        .with("read_merges", c.merges[0])
        .with("write_merges", c.merges[1])
        .with("read_ticks", c.ticks[0])
        .with("write_ticks", c.ticks[1])
        .with("in_queue", c.in_queue)
        .with("util", c.util)
}

/// fio's `aggr_*` keys: the members' counters averaged, the busiest member's utilisation.
fn add_aggr(e: &mut Json, members: &[DiskCount]) {
    let n = members.len() as u64;
    if n == 0 {
        return;
    }
    let avg = |f: &dyn Fn(&DiskCount) -> u64| members.iter().map(f).sum::<u64>() / n;
    e.push("aggr_read_ios", avg(&|m| m.ios[0]));
    e.push("aggr_write_ios", avg(&|m| m.ios[1]));
    e.push("aggr_read_merges", avg(&|m| m.merges[0]));
    // sic: fio spells this one without the s
    e.push("aggr_write_merge", avg(&|m| m.merges[1]));
    e.push("aggr_read_ticks", avg(&|m| m.ticks[0]));
    e.push("aggr_write_ticks", avg(&|m| m.ticks[1]));
    e.push("aggr_in_queue", avg(&|m| m.in_queue));
    let util = members
        .iter()
        .map(|m| m.util)
        .fold(0.0, f64::max)
        .min(100.0);
    e.push("aggr_util", util);
}

fn kernel_count(d: &ssdlab_stats::DiskUtil) -> DiskCount {
    DiskCount {
        ios: [d.read_ios, d.write_ios],
        merges: [d.read_merges, d.write_merges],
        ticks: [d.read_ticks_ms, d.write_ticks_ms],
        in_queue: d.in_queue_ms,
        util: d.util(),
    }
}

fn disk_util(r: &RunResult) -> Vec<Json> {
    let mut out = Vec::new();
    // The kernel's devices, with md/dm members aggregated as fio does.
    for d in &r.disk_util {
        let mut e = disk_entry(&d.name, &kernel_count(d));
        let slaves: Vec<DiskCount> = r
            .disk_util
            .iter()
            .filter(|s| d.slaves.contains(&s.name))
            .map(kernel_count)
            .collect();
        add_aggr(&mut e, &slaves);
        out.push(e);
    }
    // A stripe set or simulated array: the array (its logical I/Os) with its members' averages,
    // then the members as ssdlab issued and timed their pieces.
    if !r.members.is_empty() {
        let total = r.runtime_ns.max(1) as f64;
        let ms = |ns: u64| ns / 1_000_000;
        let members: Vec<DiskCount> = r
            .members
            .iter()
            .map(|m| DiskCount {
                ios: [m.read_ios, m.write_ios],
                merges: [0, 0],
                ticks: [ms(m.read_ticks_ns), ms(m.write_ticks_ns)],
                in_queue: ms(m.read_ticks_ns + m.write_ticks_ns),
                util: (100.0 * m.busy_ns as f64 / total).min(100.0),
            })
            .collect();
        let ticks = |o: &OpSummary| (o.lat.mean * o.lat.n as f64 / 1e6) as u64;
        let (rt, wt) = (ticks(&r.read), ticks(&r.write) + ticks(&r.trim));
        let any = r.read.ios + r.write.ios + r.trim.ios > 0;
        let mut array = disk_entry(
            &r.target.name,
            &DiskCount {
                ios: [r.read.ios, r.write.ios + r.trim.ios],
                merges: [0, 0],
                ticks: [rt, wt],
                in_queue: rt + wt,
                // The closed loop keeps I/O in flight on the array for the whole measured time.
                util: if any { 100.0 } else { 0.0 },
            },
        );
        add_aggr(&mut array, &members);
        out.push(array);
        for (m, c) in r.members.iter().zip(&members) {
            out.push(disk_entry(&m.name, c));
        }
    }
    out
}

/// One fio-shaped JSON document for a set of runs (one job each).
pub fn fio_json(results: &[RunResult], flavor: Flavor) -> Json {
    fio_json_report(&Report::of_runs(results), flavor)
}

/// One fio-shaped JSON document for a report: one job per entry (fio jobs under their own
/// names and groups), fio's "global options" when the job files had any, and every device
/// of `disk_util` once.
pub fn fio_json_report(report: &Report<'_>, flavor: Flavor) -> Json {
    let ts_ms = report.results().next().map(|r| r.timestamp_ms).unwrap_or(0);
    let mut doc = Json::obj()
        .with("fio version", concat!("ssdlab-", env!("CARGO_PKG_VERSION")))
        .with("timestamp", ts_ms / 1000)
        .with("timestamp_ms", ts_ms)
        .with("time", ssdlab_chart::utc_time(ts_ms / 1000));
    // fio leaves "global options" out when there are none.
    if !report.global_options.is_empty() {
        doc.push("global options", options_obj(report.global_options));
    }
    doc.push(
        "jobs",
        report
            .jobs
            .iter()
            .map(|j| job_obj(j.result, j.fio, flavor))
            .collect::<Vec<_>>(),
    );
    // Jobs that ran together share devices (and a simulated array's members): each once.
    let mut seen = std::collections::HashSet::new();
    let disks: Vec<Json> = report
        .results()
        .flat_map(disk_util)
        .filter(|d| match d.get("name") {
            Some(Json::Str(n)) => seen.insert(n.clone()),
            _ => true,
        })
        .collect();
    // fio leaves disk_util out when it watched no device.
    if !disks.is_empty() {
        doc.push("disk_util", disks);
    }
    doc
}

/// fio JSON text (ending with a newline).
pub fn fio_json_string(results: &[RunResult]) -> String {
    fio_json(results, Flavor::Json).to_fio_string()
}

/// fio JSON+ text: fio JSON with the latency histograms (`bins`).
pub fn fio_json_plus_string(results: &[RunResult]) -> String {
    fio_json(results, Flavor::JsonPlus).to_fio_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_stats::{DiskUtil, MemberStats, OpSummary, RunResult};

    fn sample() -> RunResult {
        RunResult {
            runtime_ns: 2_000_000_000,
            read: OpSummary {
                ios: 1000,
                bytes: 4_096_000,
                runtime_ns: 2_000_000_000,
                iops: 500.0,
                bw_bytes: 2_048_000.0,
                clat: LatSummary {
                    n: 1000,
                    min: 10,
                    max: 100,
                    mean: 50.0,
                    stddev: 5.0,
                    percentiles: vec![(99.0, 90), (99.99, 100)],
                    bins: vec![(10, 400), (100, 600)],
                },
                bw_min_kib: 1900,
                bw_max_kib: 2100,
                bw_mean_kib: 2000.0,
                bw_samples: 4,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn parse(text: &str) -> serde_json::Value {
        serde_json::from_str(text).expect("valid JSON")
    }

    fn keys(v: &Json) -> Vec<&str> {
        match v {
            Json::Obj(p) => p.iter().map(|(k, _)| k.as_str()).collect(),
            _ => vec![],
        }
    }

    #[test]
    fn fio_fields_in_fio_order() {
        let doc = fio_json(&[sample()], Flavor::Json);
        assert_eq!(
            keys(&doc),
            ["fio version", "timestamp", "timestamp_ms", "time", "jobs"]
        );
        let Some(Json::Arr(jobs)) = doc.get("jobs") else {
            panic!("jobs")
        };
        assert_eq!(
            keys(&jobs[0]),
            [
                "jobname",
                "groupid",
                "error",
                "eta",
                "elapsed",
                "job options",
                "read",
                "write",
                "trim",
                "sync",
                "job_runtime",
                "usr_cpu",
                "sys_cpu",
                "ctx",
                "majf",
                "minf",
                "iodepth_level",
                "iodepth_submit",
                "iodepth_complete",
                "latency_ns",
                "latency_us",
                "latency_ms",
                "latency_depth",
                "latency_target",
                "latency_percentile",
                "latency_window",
                "ssdlab"
            ]
        );
        let read = jobs[0].get("read").unwrap();
        assert_eq!(
            keys(read),
            [
                "io_bytes",
                "io_kbytes",
                "bw_bytes",
                "bw",
                "iops",
                "runtime",
                "total_ios",
                "short_ios",
                "drop_ios",
                "slat_ns",
                "clat_ns",
                "lat_ns",
                "bw_min",
                "bw_max",
                "bw_agg",
                "bw_mean",
                "bw_dev",
                "bw_samples",
                "iops_min",
                "iops_max",
                "iops_mean",
                "iops_stddev",
                "iops_samples"
            ]
        );
        let v = parse(&fio_json_string(&[sample()]));
        let read = &v["jobs"][0]["read"];
        assert_eq!(read["io_bytes"], 4_096_000);
        assert_eq!(read["bw_bytes"], 2_048_000);
        assert_eq!(read["bw"], 2000);
        assert_eq!(read["runtime"], 2000);
        assert_eq!(read["total_ios"], 1000);
        assert_eq!(read["bw_min"], 1900);
        assert_eq!(read["bw_agg"], 100.0);
        assert_eq!(read["clat_ns"]["percentile"]["99.000000"], 90);
        assert_eq!(read["clat_ns"]["percentile"]["99.990000"], 100);
        assert!(read["clat_ns"].get("bins").is_none(), "bins only in JSON+");
        assert!(read["slat_ns"].get("percentile").is_none(), "no samples");
        assert!(v["jobs"][0]["job options"]["bs"].is_string());
        assert!(v["jobs"][0]["ssdlab"]["spec"].is_object());
        assert!(
            v.get("disk_util").is_none(),
            "fio leaves an empty disk_util out"
        );
        let plus = parse(&fio_json_plus_string(&[sample()]));
        assert_eq!(plus["jobs"][0]["read"]["clat_ns"]["bins"]["100"], 600);
    }

    /// fio's `error` is the error that ended the job, else the first one continue_on_error
    /// went past; `total_err` and `first_error` follow `latency_ms` with continue_on_error
    /// only; `total_ios` and the IOPS count the failed I/Os.
    #[test]
    fn errors_gone_past_as_fio_reports_them() {
        let mut r = sample();
        r.read.failed_ios = 48;
        r.read.runtime_ns = 1_999_999_001; // fio: 2,000 ms (whole µs rounded up)
        let text = |r: &RunResult, coe: bool| {
            let f = FioJob {
                continue_on_error: coe,
                ..FioJob::default()
            };
            job_obj(r, Some(&f), Flavor::Json).to_fio_string()
        };
        let one = |r: &RunResult, coe: bool| {
            serde_json::from_str::<serde_json::Value>(&text(r, coe)).unwrap()
        };
        r.error_tally.count(28);
        r.error_tally.count(5);
        let j = one(&r, true);
        assert_eq!(j["error"], 28);
        assert_eq!(j["total_err"], 2);
        assert_eq!(j["first_error"], 28);
        assert_eq!(j["read"]["total_ios"], 1048);
        assert_eq!(j["read"]["runtime"], 2000);
        assert_eq!(j["read"]["iops"], 524.0);
        let doc = text(&r, true);
        let at = |k: &str| doc.find(&format!("\"{k}\"")).unwrap();
        assert!(at("latency_ms") < at("total_err"));
        assert!(at("total_err") < at("first_error"));
        assert!(at("first_error") < at("latency_depth"));
        // an error that ends the job is its error; without continue_on_error, no tally keys
        r.error_tally.end(22);
        assert_eq!(one(&r, true)["error"], 22);
        let j = one(&r, false);
        assert!(j.get("total_err").is_none() && j.get("first_error").is_none());
    }

    #[test]
    fn job_error_and_disk_util() {
        let mut r = sample();
        r.errors.push(ssdlab_stats::IoErrorRecord {
            kind: ssdlab_workload::OpKind::Read,
            offset: 0,
            len: 4096,
            errno: 28,
            error: "ENOSPC".into(),
        });
        r.error_tally.end(28);
        r.disk_util = vec![
            DiskUtil {
                name: "md0".into(),
                read_ios: 100,
                msec: 1000,
                io_ticks_ms: 500,
                slaves: vec!["sda".into(), "sdb".into()],
                ..Default::default()
            },
            DiskUtil {
                name: "sda".into(),
                read_ios: 60,
                msec: 1000,
                io_ticks_ms: 700,
                ..Default::default()
            },
            DiskUtil {
                name: "sdb".into(),
                read_ios: 40,
                msec: 1000,
                io_ticks_ms: 300,
                ..Default::default()
            },
        ];
        r.members = vec![
            MemberStats {
                name: "a.img".into(),
                read_ios: 10,
                busy_ns: 1_000_000_000,
                ..Default::default()
            },
            MemberStats {
                name: "b.img".into(),
                read_ios: 20,
                busy_ns: 2_000_000_000,
                ..Default::default()
            },
        ];
        r.target.name = "a.img,b.img".into();
        let v = parse(&fio_json_string(&[r]));
        assert_eq!(v["jobs"][0]["error"], 28);
        let du = v["disk_util"].as_array().unwrap();
        assert_eq!(du.len(), 6);
        assert_eq!(du[0]["name"], "md0");
        assert_eq!(du[0]["util"], 50.0);
        assert_eq!(du[0]["aggr_read_ios"], 50);
        assert_eq!(du[0]["aggr_util"], 70.0);
        assert!(du[0].get("aggr_write_merge").is_some());
        assert!(du[1].get("aggr_read_ios").is_none());
        assert_eq!(du[3]["name"], "a.img,b.img");
        assert_eq!(du[3]["read_ios"], 1000);
        assert_eq!(du[3]["aggr_read_ios"], 15);
        assert_eq!(du[3]["aggr_util"], 100.0);
        assert_eq!(du[4]["util"], 50.0);
    }

    #[test]
    fn time_format() {
        let format_time = ssdlab_chart::utc_time;
        assert_eq!(format_time(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(format_time(1_796_083_200), "Tue Dec  1 00:00:00 2026");
    }
}
