//! What `ssdlab fio` prints: fio's JSON (`--output-format=json`), JSON+ (`json+`: the JSON with
//! every completion-latency bin) and fio's normal text (`show_thread_status_normal` and the
//! group summary of fio's `stat.c`). All output of `ssdlab fio` is made here, from
//! [`Report`] entries, so it can move behind a shared exporter interface as a whole.
//!
//! The JSON is `ssdlab_report::fio_json`'s document with the fio job's own name, reporting
//! group, "job options" and the top-level "global options" put in.

use serde_json::{json, Map, Value};
use ssdlab_stats::{OpSummary, RunResult};
use ssdlab_workload::OpKind;

/// The output formats of `ssdlab fio`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Normal,
    Json,
    JsonPlus,
}

impl Format {
    /// fio's `--output-format` names (several may be given comma-separated; ssdlab prints one).
    pub fn parse(s: &str) -> Result<Format, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let one = |p: &str| match p {
            "normal" => Ok(Format::Normal),
            "json" => Ok(Format::Json),
            "json+" => Ok(Format::JsonPlus),
            "terse" => {
                Err("--output-format=terse is not supported (normal, json, json+)".to_string())
            }
            o => Err(format!("--output-format={o}: normal, json or json+")),
        };
        match parts.as_slice() {
            [p] => one(p),
            _ => Err(format!(
                "--output-format={s}: ssdlab prints one format at a time (normal, json or json+)"
            )),
        }
    }
}

/// One entry of the report: a job, a clone of one, or a reporting group.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub group: u32,
    /// Clones reported together.
    pub members: u32,
    pub result: RunResult,
    /// `(ns, count)` completion-latency bins per kind (read, write, trim) for JSON+.
    pub bins: [Vec<(u64, u64)>; 3],
    /// The job's own options as written.
    pub options: Vec<(String, String)>,
    pub description: Option<String>,
    /// fio's one-line job description (`name: (g=0): rw=…`).
    pub header: String,
}

/// Everything `ssdlab fio` reports.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub entries: Vec<Entry>,
    pub global_options: Vec<(String, String)>,
}

/// The report in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Normal => normal(report),
        Format::Json | Format::JsonPlus => {
            let mut s = serde_json::to_string_pretty(&json(report, format == Format::JsonPlus))
                .expect("JSON values serialise");
            s.push('\n');
            s
        }
    }
}

fn options_obj(opts: &[(String, String)]) -> Value {
    let mut m = Map::new();
    for (k, v) in opts {
        m.insert(k.clone(), Value::String(v.clone()));
    }
    Value::Object(m)
}

/// fio's JSON document (JSON+ with `plus`).
pub fn json(report: &Report, plus: bool) -> Value {
    let results: Vec<RunResult> = report.entries.iter().map(|e| e.result.clone()).collect();
    let mut doc = ssdlab_report::fio_json(&results);
    if let Some(jobs) = doc.get_mut("jobs").and_then(Value::as_array_mut) {
        for (j, e) in jobs.iter_mut().zip(&report.entries) {
            j["jobname"] = json!(e.name);
            j["groupid"] = json!(e.group);
            // When the job started: ms since the epoch (simulated drives: of virtual time).
            j["job_start"] = json!(e.result.timestamp_ms);
            j["job options"] = options_obj(&e.options);
            if let Some(d) = &e.description {
                j["desc"] = json!(d);
            }
            if plus {
                for (kind, bins) in OpKind::ALL.iter().zip(&e.bins) {
                    let b: Map<String, Value> = bins
                        .iter()
                        .map(|(v, c)| (v.to_string(), json!(c)))
                        .collect();
                    if let Some(clat) = j
                        .get_mut(kind.as_str())
                        .and_then(|o| o.get_mut("clat_ns"))
                        .and_then(Value::as_object_mut)
                    {
                        clat.insert("bins".into(), Value::Object(b));
                    }
                }
            }
        }
    }
    // Members of a simulated array appear once, not once per job.
    if let Some(du) = doc.get_mut("disk_util").and_then(Value::as_array_mut) {
        let mut seen = std::collections::HashSet::new();
        du.retain(|d| seen.insert(d["name"].as_str().unwrap_or_default().to_string()));
    }
    if !report.global_options.is_empty() {
        if let Some(obj) = doc.as_object_mut() {
            // fio puts "global options" right after "time".
            let mut out = Map::new();
            for (k, v) in std::mem::take(obj) {
                let is_time = k == "time";
                out.insert(k, v);
                if is_time {
                    out.insert("global options".into(), options_obj(&report.global_options));
                }
            }
            *obj = out;
        }
    }
    doc
}

/// fio's `num2str`: at most `maxlen` digits, then a unit prefix (k, M, G… or Ki, Mi, Gi…).
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: &str) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = num;
    let mut post = 0usize;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < SI.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefixes[post]);
    };
    let digits = num.to_string().len();
    if maxlen as i64 - digits as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post]);
    }
    let decimals = maxlen - digits - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &frac[2..], prefixes[post])
}

/// fio's `display_lat`: a latency line in ns, µs or ms.
fn lat_line(out: &mut String, name: &str, l: &ssdlab_stats::LatSummary) {
    if l.n == 0 {
        return;
    }
    let (mut min, mut max, mut mean, mut dev) = (l.min, l.max, l.mean, l.stddev);
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1e6;
        dev /= 1e6;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1e3;
        dev /= 1e3;
        "(usec)"
    } else {
        "(nsec)"
    };
    out.push_str(&format!(
        "    {name} {base}: min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}\n",
        num2str(min, 6, false, ""),
        num2str(max, 6, false, ""),
    ));
}

/// fio's `show_clat_percentiles`.
fn percentiles(out: &mut String, name: &str, l: &ssdlab_stats::LatSummary) {
    if l.n == 0 || l.percentiles.is_empty() {
        return;
    }
    let vals: Vec<u64> = l.percentiles.iter().map(|p| p.1).collect();
    let minv = *vals.iter().min().unwrap_or(&0);
    let maxv = *vals.iter().max().unwrap_or(&0);
    let (scale, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (1_000_000, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1000, "usec")
    } else {
        (1, "nsec")
    };
    out.push_str(&format!("    {name} percentiles ({unit}):\n     |"));
    let width = 5usize.max(((maxv / scale).max(1) as f64).log10() as usize + 1);
    let per_line = (80 - 7) / (2 + 10 + width);
    let n = l.percentiles.len();
    for (j, (p, v)) in l.percentiles.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let v = v.div_ceil(scale);
        let last = j == n - 1;
        out.push_str(&format!(
            " {p:5.2}th=[{v:width$}]{}",
            if last { '\n' } else { ',' }
        ));
        if !last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn ddir_status(out: &mut String, name: &str, o: &OpSummary) {
    let runt_ms = o.runtime_ns / 1_000_000;
    if runt_ms == 0 && o.ios == 0 {
        return;
    }
    let runt = runt_ms.max(1);
    let bw = 1000 * o.bytes / runt;
    let iops = 1000 * o.ios / runt;
    out.push_str(&format!(
        "  {name}: IOPS={}, BW={} ({})({}/{runt_ms}msec)\n",
        num2str(iops, 4, false, ""),
        num2str(bw, 4, true, "B/s"),
        num2str(bw, 4, false, "B/s"),
        num2str(o.bytes, 4, true, "B"),
    ));
    lat_line(out, "slat", &o.slat);
    lat_line(out, "clat", &o.clat);
    lat_line(out, " lat", &o.lat);
    percentiles(out, "clat", &o.clat);
    if o.samples > 0 {
        let kib = |b: f64| b / 1024.0;
        let (mut min, mut max, mut mean, mut dev) =
            (kib(o.bw_min), kib(o.bw_max), kib(o.bw_mean), kib(o.bw_dev));
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            min /= 1024.0;
            max /= 1024.0;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        out.push_str(&format!(
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per=100.00%, avg={mean:5.02}, stdev={dev:5.02}, samples={}\n",
            min as u64, max as u64, o.samples
        ));
        out.push_str(&format!(
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}\n",
            o.iops_min as u64, o.iops_max as u64, o.iops_mean, o.iops_stddev, o.samples
        ));
    }
}

fn lat_levels(out: &mut String, unit: &str, levels: &[(String, f64)]) {
    let shown: Vec<String> = levels
        .iter()
        .filter(|(_, p)| *p > 0.0)
        .map(|(k, p)| format!("{k}={:3.2}%", p.max(0.01)))
        .collect();
    for chunk in shown.chunks(5) {
        out.push_str(&format!("  lat ({unit})   : {}\n", chunk.join(", ")));
    }
}

fn depth_line(levels: &[(String, f64)]) -> String {
    let get = |k: &str| {
        levels
            .iter()
            .find(|(l, _)| l == k)
            .map(|(_, p)| if *p > 0.0 && *p < 0.1 { 0.1 } else { *p })
            .unwrap_or(0.0)
    };
    format!(
        "1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
        get("1"),
        get("2"),
        get("4"),
        get("8"),
        get("16"),
        get("32"),
        get(">=64")
    )
}

/// fio's normal text.
pub fn normal(report: &Report) -> String {
    let mut out = String::new();
    // One line per job (not per clone), as fio starts them.
    let mut seen = std::collections::HashSet::new();
    for e in &report.entries {
        if seen.insert(e.header.as_str()) {
            out.push_str(&e.header);
            out.push('\n');
        }
    }
    out.push_str(concat!("ssdlab-", env!("CARGO_PKG_VERSION"), "\n\n"));
    for e in &report.entries {
        let r = &e.result;
        let err = if r.errors.is_empty() { 0 } else { 5 };
        let state = if r.interrupted { " (interrupted)" } else { "" };
        out.push_str(&format!(
            "{}: (groupid={}, jobs={}): err={err:2}: {}{state}\n",
            e.name,
            e.group,
            e.members,
            target_text(r)
        ));
        if let Some(d) = &e.description {
            out.push_str(&format!("  Description  : [{d}]\n"));
        }
        for (kind, o) in [("read", &r.read), ("write", &r.write), ("trim", &r.trim)] {
            if o.ios > 0 || o.bytes > 0 {
                ddir_status(&mut out, kind, o);
            }
        }
        lat_levels(&mut out, "nsec", &r.latency_levels.ns);
        lat_levels(&mut out, "usec", &r.latency_levels.us);
        lat_levels(&mut out, "msec", &r.latency_levels.ms);
        let secs = (r.runtime_ns + r.ramp_ns) as f64;
        let pct = |ns: u64| {
            if secs > 0.0 {
                100.0 * ns as f64 / secs
            } else {
                0.0
            }
        };
        out.push_str(&format!(
            "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}\n",
            pct(r.cpu.user_ns),
            pct(r.cpu.sys_ns),
            r.cpu.ctx,
            r.cpu.majf,
            r.cpu.minf
        ));
        out.push_str(&format!(
            "  IO depths    : {}\n",
            depth_line(&r.iodepth_level)
        ));
        out.push_str(&format!(
            "     issued rwts: total={},{},{},0 short={},{},{},0 dropped=0,0,0,0\n",
            r.read.ios + r.read.errors,
            r.write.ios + r.write.errors,
            r.trim.ios + r.trim.errors,
            r.read.short_ios,
            r.write.short_ios,
            r.trim.short_ios
        ));
        let errs = r.read.errors + r.write.errors + r.trim.errors;
        if errs > 0 {
            let first = r.errors.first().map(|e| e.error.as_str()).unwrap_or("");
            out.push_str(&format!(
                "     errors    : total={errs}, first_error={first}\n"
            ));
        }
        if let Some(v) = &r.verify {
            out.push_str(&format!(
                "     verify    : sectors ok={}, bad={}, never written={}\n",
                v.sectors_ok, v.sectors_bad, v.sectors_unwritten
            ));
        }
        out.push_str(&format!(
            "     latency   : target=0, window=0, percentile=100.00%, depth={}\n\n",
            r.spec.qd
        ));
    }
    // Run status per reporting group.
    let mut groups: Vec<u32> = report.entries.iter().map(|e| e.group).collect();
    groups.dedup();
    for g in groups {
        out.push_str(&format!("\nRun status group {g} (all jobs):\n"));
        let es: Vec<&Entry> = report.entries.iter().filter(|e| e.group == g).collect();
        for (label, kind) in [
            ("   READ", OpKind::Read),
            ("  WRITE", OpKind::Write),
            ("   TRIM", OpKind::Trim),
        ] {
            let ops: Vec<&OpSummary> = es
                .iter()
                .map(|e| e.result.op(kind))
                .filter(|o| o.ios > 0)
                .collect();
            if ops.is_empty() {
                continue;
            }
            let io: u64 = ops.iter().map(|o| o.bytes).sum();
            let runs: Vec<u64> = ops
                .iter()
                .map(|o| (o.runtime_ns / 1_000_000).max(1))
                .collect();
            let max_run = *runs.iter().max().unwrap_or(&1);
            let min_run = *runs.iter().min().unwrap_or(&1);
            let bws: Vec<u64> = ops
                .iter()
                .zip(&runs)
                .map(|(o, r)| 1000 * o.bytes / r)
                .collect();
            let agg = 1000 * io / max_run;
            let (bmin, bmax) = (
                *bws.iter().min().unwrap_or(&0),
                *bws.iter().max().unwrap_or(&0),
            );
            out.push_str(&format!(
                "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={min_run}-{max_run}msec\n",
                num2str(agg, 4, true, "B/s"),
                num2str(agg, 4, false, "B/s"),
                num2str(bmin, 4, true, "B/s"),
                num2str(bmax, 4, true, "B/s"),
                num2str(bmin, 4, false, "B/s"),
                num2str(bmax, 4, false, "B/s"),
                num2str(io, 4, true, "B"),
                num2str(io, 4, false, "B"),
            ));
        }
    }
    // Members of arrays (fio's disk stats), once each.
    let mut seen = std::collections::HashSet::new();
    let members: Vec<&ssdlab_stats::MemberStats> = report
        .entries
        .iter()
        .flat_map(|e| e.result.members.iter())
        .filter(|m| seen.insert(m.name.clone()))
        .collect();
    if !members.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for m in members {
            out.push_str(&format!(
                "  {}: ios={}/{}, ticks={}/{}\n",
                m.name,
                m.read_ios,
                m.write_ios,
                m.read_ticks_ns / 1_000_000,
                m.write_ticks_ns / 1_000_000
            ));
        }
    }
    out
}

/// Where an entry ran, in place of fio's `pid=…: date`.
fn target_text(r: &RunResult) -> String {
    let t = &r.target;
    match t.kind.as_str() {
        "sim" | "sim-raid0" => format!("simulated {}", t.name),
        "null" => "null target".to_string(),
        _ => format!(
            "{} ({}, {})",
            t.name,
            t.engine,
            if t.direct { "direct" } else { "buffered" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_like_fio() {
        // Values from fio's own output of the same numbers.
        assert_eq!(num2str(6065, 4, false, ""), "6065");
        assert_eq!(num2str(24_848_000, 4, true, "B/s"), "23.7MiB/s");
        assert_eq!(num2str(24_848_000, 4, false, "B/s"), "24.8MB/s");
        assert_eq!(num2str(60_500, 4, false, ""), "60.5k");
        assert_eq!(num2str(4_804_700, 6, false, ""), "4804.7k");
        assert_eq!(num2str(4324, 6, false, ""), "4324");
        assert_eq!(num2str(0, 4, true, "B"), "0B");
    }

    #[test]
    fn formats() {
        assert_eq!(Format::parse("json").unwrap(), Format::Json);
        assert_eq!(Format::parse("json+").unwrap(), Format::JsonPlus);
        assert!(Format::parse("terse").is_err());
        assert!(Format::parse("json,normal").is_err());
    }
}
