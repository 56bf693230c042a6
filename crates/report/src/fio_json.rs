//! JSON in fio's shape (`--output-format=json`), so tools that read fio output read ours.
//! ssdlab's own data (spec, target, series, device counters) sits in a separate `"ssdlab"` object
//! per job, never mixed into fio's fields.

use serde_json::{json, Map, Value};
use ssdlab_stats::{LatSummary, OpSummary, RunResult};
use ssdlab_workload::{format_size, Pattern};

/// fio prints percentile keys with `%f`.
fn pct_key(p: f64) -> String {
    format!("{p:.6}")
}

fn lat_obj(l: &LatSummary) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), json!(l.min));
    m.insert("max".into(), json!(l.max));
    m.insert("mean".into(), json!(l.mean));
    m.insert("stddev".into(), json!(l.stddev));
    m.insert("N".into(), json!(l.n));
    if !l.percentiles.is_empty() {
        let p: Map<String, Value> = l
            .percentiles
            .iter()
            .map(|(q, v)| (pct_key(*q), json!(v)))
            .collect();
        m.insert("percentile".into(), Value::Object(p));
    }
    Value::Object(m)
}

fn op_obj(o: &OpSummary) -> Value {
    let runtime_ms = o.runtime_ns / 1_000_000;
    let bw_bytes = (1000 * o.bytes).checked_div(runtime_ms).unwrap_or(0);
    json!({
        "io_bytes": o.bytes,
        "io_kbytes": o.bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": o.iops,
        "runtime": runtime_ms,
        "total_ios": o.ios,
        "short_ios": o.short_ios,
        "drop_ios": 0,
        "slat_ns": lat_obj(&o.slat),
        "clat_ns": lat_obj(&o.clat),
        "lat_ns": lat_obj(&o.lat),
        "bw_min": (o.bw_min / 1024.0) as u64,
        "bw_max": (o.bw_max / 1024.0) as u64,
        "bw_agg": if o.ios > 0 { 100.0 } else { 0.0 },
        "bw_mean": o.bw_mean / 1024.0,
        "bw_dev": o.bw_dev / 1024.0,
        "bw_samples": o.samples,
        "iops_min": o.iops_min as u64,
        "iops_max": o.iops_max as u64,
        "iops_mean": o.iops_mean,
        "iops_stddev": o.iops_stddev,
        "iops_samples": o.samples,
    })
}

fn levels(v: &[(String, f64)]) -> Value {
    Value::Object(v.iter().map(|(k, p)| (k.clone(), json!(p))).collect())
}

/// fio's "job options" (all values are strings) describing the spec.
fn job_options(r: &RunResult) -> Value {
    let s = &r.spec;
    let mut m = Map::new();
    let mut put = |k: &str, v: String| {
        m.insert(k.to_string(), Value::String(v));
    };
    put("name", job_name(r));
    put("filename", r.target.name.clone());
    put("rw", s.rw.to_string());
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
    put("ioengine", r.target.engine.clone());
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
        Pattern::Compress(n) => {
            put("buffer_compress_percentage", n.to_string());
            put("refill_buffers", "1".into());
        }
    }
    put("randseed", s.seed.to_string());
    Value::Object(m)
}

fn job_name(r: &RunResult) -> String {
    format!(
        "{}-{}-qd{}",
        r.spec.rw,
        format_size(r.spec.bs).replace(' ', ""),
        r.spec.qd
    )
}

fn job_obj(r: &RunResult) -> Value {
    let runtime_ms = r.runtime_ns / 1_000_000;
    let cpu_pct = |ns: u64| {
        if r.runtime_ns == 0 {
            0.0
        } else {
            100.0 * ns as f64 / (r.runtime_ns + r.ramp_ns) as f64
        }
    };
    let error = if r.errors.is_empty() {
        0
    } else {
        // fio reports the first error's errno; we keep the text in the ssdlab object.
        5
    };
    let ssdlab = json!({
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
        "device": r.device,
    });
    let depth = levels(&r.iodepth_level);
    json!({
        "jobname": job_name(r),
        "groupid": 0,
        "error": error,
        "eta": 0,
        "elapsed": (r.runtime_ns + r.ramp_ns).div_ceil(1_000_000_000),
        "job options": job_options(r),
        "read": op_obj(&r.read),
        "write": op_obj(&r.write),
        "trim": op_obj(&r.trim),
        "sync": {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}},
        "job_runtime": runtime_ms,
        "usr_cpu": cpu_pct(r.cpu.user_ns),
        "sys_cpu": cpu_pct(r.cpu.sys_ns),
        "ctx": r.cpu.ctx,
        "majf": r.cpu.majf,
        "minf": r.cpu.minf,
        "iodepth_level": depth,
        "iodepth_submit": depth,
        "iodepth_complete": depth,
        "latency_ns": levels(&r.latency_levels.ns),
        "latency_us": levels(&r.latency_levels.us),
        "latency_ms": levels(&r.latency_levels.ms),
        "latency_depth": r.spec.qd,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
        "ssdlab": ssdlab,
    })
}

/// One fio-shaped JSON document for a set of runs (one job each).
pub fn fio_json(results: &[RunResult]) -> Value {
    let ts_ms = results.first().map(|r| r.timestamp_ms).unwrap_or(0);
    let disk_util: Vec<Value> = results
        .iter()
        .flat_map(|r| {
            let total_ns: u64 = (r.runtime_ns + r.ramp_ns).max(1);
            r.members.iter().map(move |m| {
                json!({
                    "name": m.name,
                    "read_ios": m.read_ios,
                    "write_ios": m.write_ios,
                    "read_merges": 0,
                    "write_merges": 0,
                    "read_ticks": m.read_ticks_ns / 1_000_000,
                    "write_ticks": m.write_ticks_ns / 1_000_000,
                    "in_queue": (m.read_ticks_ns + m.write_ticks_ns) / 1_000_000,
                    "util": 100.0 * m.busy_ns as f64 / total_ns as f64,
                })
            })
        })
        .collect();
    json!({
        "fio version": concat!("ssdlab-", env!("CARGO_PKG_VERSION")),
        "timestamp": ts_ms / 1000,
        "timestamp_ms": ts_ms,
        "time": format_time(ts_ms / 1000),
        "jobs": results.iter().map(job_obj).collect::<Vec<_>>(),
        "disk_util": disk_util,
    })
}

/// Pretty JSON text, ending with a newline.
pub fn fio_json_string(results: &[RunResult]) -> String {
    let mut s = serde_json::to_string_pretty(&fio_json(results)).expect("JSON values serialise");
    s.push('\n');
    s
}

/// `Mon Nov 30 21:28:00 2026` (UTC), like fio's "time" field.
fn format_time(unix: u64) -> String {
    let days = unix / 86_400;
    let secs = unix % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        WD[(days % 7) as usize],
        MO[(m - 1) as usize],
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        y
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_stats::{OpSummary, RunResult};

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
                },
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn fio_fields() {
        let v = fio_json(&[sample()]);
        for k in [
            "fio version",
            "timestamp",
            "timestamp_ms",
            "time",
            "jobs",
            "disk_util",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        let job = &v["jobs"][0];
        for k in [
            "jobname",
            "groupid",
            "error",
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
            "latency_ns",
            "latency_us",
            "latency_ms",
        ] {
            assert!(job.get(k).is_some(), "missing job.{k}");
        }
        let read = &job["read"];
        assert_eq!(read["io_bytes"], 4_096_000);
        assert_eq!(read["bw_bytes"], 2_048_000);
        assert_eq!(read["bw"], 2000);
        assert_eq!(read["runtime"], 2000);
        assert_eq!(read["total_ios"], 1000);
        assert_eq!(read["clat_ns"]["percentile"]["99.000000"], 90);
        assert_eq!(read["clat_ns"]["percentile"]["99.990000"], 100);
        assert!(job["job options"]["bs"].is_string());
        assert!(job["ssdlab"]["spec"].is_object());
    }

    #[test]
    fn time_format() {
        assert_eq!(format_time(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(format_time(1_796_083_200), "Tue Dec  1 00:00:00 2026");
    }
}
