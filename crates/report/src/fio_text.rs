//! fio's normal text output (`--output-format normal`; `ssdlab fio`'s default): fio's
//! `show_thread_status_normal`, the run status of each reporting group and the disk stats of
//! fio's `stat.c`, from a [`Report`]. fio jobs appear under their own names and groups; plain
//! runs are named after their spec, in group 0.

use crate::export::Report;
use crate::fio_json::job_name;
use ssdlab_stats::{EngineKind, OpSummary, RunResult, TargetKind};
use ssdlab_workload::OpKind;

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

/// fio's `show_ss_normal`: the steady-state line of a job.
fn steadystate_line(ss: &ssdlab_stats::FioSteadyState, si: bool) -> String {
    let c = &ss.criterion;
    let (bw, bw_alt) = two_units(ss.bw_mean(), "B/s", si);
    let lat = if c.metric == ssdlab_workload::SteadyMetric::Lat {
        let ns = ss.lat_mean();
        let (v, unit) = if ns >= 1_000_000 {
            (ns / 1_000_000, "msec")
        } else if ns >= 1_000 {
            (ns / 1_000, "usec")
        } else {
            (ns, "nsec")
        };
        format!(", lat={}{unit}", num2str(v, 4, false, ""))
    } else {
        String::new()
    };
    format!(
        "  steadystate  : attained={}, bw={bw} ({bw_alt}), iops={}{lat}, {}{}={:.3}{}\n",
        if ss.attained { "yes" } else { "no" },
        num2str(ss.iops_mean(), 4, false, ""),
        c.metric_name(),
        if c.slope { " slope" } else { " mean dev" },
        ss.value,
        if c.pct { "%" } else { "" }
    )
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

/// `num2str` of a rate or size, binary units first (fio's default) or decimal first
/// (`kb_base=1000`).
fn two_units(v: u64, unit: &str, si: bool) -> (String, String) {
    let bin = num2str(v, 4, true, unit);
    let dec = num2str(v, 4, false, unit);
    if si {
        (dec, bin)
    } else {
        (bin, dec)
    }
}

fn ddir_status(out: &mut String, name: &str, o: &OpSummary, si: bool) {
    // fio's `show_ddir_status`: nothing for a direction without runtime (no bytes moved).
    let runt_ms = o.fio_runtime_ms();
    if runt_ms == 0 {
        return;
    }
    let runt = runt_ms;
    let bw = 1000 * o.bytes / runt;
    let iops = 1000 * o.issued_ios() / runt;
    let (bw1, bw2) = two_units(bw, "B/s", si);
    out.push_str(&format!(
        "  {name}: IOPS={}, BW={bw1} ({bw2})({}/{runt_ms}msec)\n",
        num2str(iops, 4, false, ""),
        two_units(o.bytes, "B", si).0,
    ));
    lat_line(out, "slat", &o.slat);
    lat_line(out, "clat", &o.clat);
    lat_line(out, " lat", &o.lat);
    percentiles(out, "clat", &o.clat);
    if o.bw_samples > 0 {
        let (mut min, mut max, mut mean, mut dev) = (
            o.bw_min_kib as f64,
            o.bw_max_kib as f64,
            o.bw_mean_kib,
            o.bw_dev_kib,
        );
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
            min as u64, max as u64, o.bw_samples
        ));
    }
    if o.samples > 0 {
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

/// The one-line description fio prints before a job starts, for a run that is not an fio job.
fn run_header(r: &RunResult, name: &str) -> String {
    let bs = format!("{}B-{}B", r.spec.bs, r.spec.bs);
    format!(
        "{name}: (g=0): rw={}, bs=(R) {bs}, (W) {bs}, (T) {bs}, ioengine={}, iodepth={}",
        r.spec.mode_name(),
        if r.target.engine == EngineKind::Unknown {
            r.target.kind.as_str()
        } else {
            r.target.engine.as_str()
        },
        r.spec.qd
    )
}

/// One entry of the text: a run with its fio name, group, clones and header.
struct Entry<'a> {
    r: &'a RunResult,
    name: String,
    group: u32,
    members: u32,
    description: Option<&'a str>,
    header: String,
    ignored: &'a [crate::export::Ignored],
    /// fio's unified_rw_reporting: the mixed summary, and whether the directions are left out.
    mixed: Option<(&'a OpSummary, bool)>,
    /// kb_base=1000: decimal units first.
    si: bool,
    /// Print fio's tally of the errors (`continue_on_error`; runs: when there were errors).
    continue_on_error: bool,
    /// The fio job, if the entry is one.
    fio: Option<&'a crate::export::FioJob>,
}

/// The C library's text of an errno (fio's `strerror`), "Success" for 0.
fn strerror(errno: i32) -> String {
    if errno == 0 {
        return "Success".into();
    }
    let t = std::io::Error::from_raw_os_error(errno).to_string();
    match t.rfind(" (os error ") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// fio's normal text (`show_thread_status_normal`, the group summary and the disk stats of
/// fio's `stat.c`).
pub fn normal_text(report: &Report<'_>) -> String {
    let entries: Vec<Entry<'_>> = report
        .jobs
        .iter()
        .map(|j| match j.fio {
            Some(f) => Entry {
                r: j.result,
                name: f.name.clone(),
                group: f.group,
                members: f.members,
                description: f.description.as_deref(),
                header: f.header.clone(),
                ignored: &f.ignored,
                mixed: f.mixed.as_ref().map(|m| (m, f.mixed_only)),
                si: f.kb_base == 1000,
                continue_on_error: f.continue_on_error,
                fio: Some(f),
            },
            None => {
                let name = job_name(j.result);
                Entry {
                    r: j.result,
                    header: run_header(j.result, &name),
                    name,
                    group: 0,
                    members: j.result.spec.jobs,
                    description: None,
                    ignored: &[],
                    mixed: None,
                    si: false,
                    continue_on_error: j.result.error_tally.counted > 0,
                    fio: None,
                }
            }
        })
        .collect();
    let mut out = String::new();
    // One line per job (not per clone), as fio starts them.
    let mut seen = std::collections::HashSet::new();
    for e in &entries {
        if seen.insert(e.header.as_str()) {
            out.push_str(&e.header);
            out.push('\n');
        }
    }
    out.push_str(concat!("ssdlab-", env!("CARGO_PKG_VERSION"), "\n\n"));
    for e in &entries {
        let r = e.r;
        // fio: `err= 5 (file:…, func=check_min_rate, error=…)`; here the first error's text.
        // (fio's job error: the one that ended the job, else the first gone past)
        let errno = r.error_tally.error();
        let err = match r.errors.iter().find(|x| x.errno == errno) {
            _ if errno == 0 => " 0".to_string(),
            None => format!("{errno:2}"),
            Some(x) => format!("{:2} (error={})", x.errno, x.error),
        };
        let state = if r.interrupted { " (interrupted)" } else { "" };
        out.push_str(&format!(
            "{}: (groupid={}, jobs={}): err={err}: {}{state}\n",
            e.name,
            e.group,
            e.members,
            target_text(r)
        ));
        if let Some(d) = e.description {
            out.push_str(&format!("  Description  : [{d}]\n"));
        }
        // ssdlab's own line: what it ran without (--ignore-unsupported).
        for i in e.ignored {
            out.push_str(&format!(
                "  ignored      : {} ({}): {}\n",
                i.option, i.at, i.why
            ));
        }
        if !matches!(e.mixed, Some((_, true))) {
            for (kind, o) in [("read", &r.read), ("write", &r.write), ("trim", &r.trim)] {
                if o.ios > 0 || o.bytes > 0 {
                    ddir_status(&mut out, kind, o, e.si);
                }
            }
        }
        if let Some((m, _)) = e.mixed {
            ddir_status(&mut out, "mixed", m, e.si);
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
            r.read.issued_ios(),
            r.write.issued_ios(),
            r.trim.issued_ios(),
            r.read.short_ios,
            r.write.short_ios,
            r.trim.short_ios
        ));
        // fio's tally of the errors, with continue_on_error only
        if e.continue_on_error {
            let t = &r.error_tally;
            out.push_str(&format!(
                "     errors    : total={}, first_error={}/<{}>\n",
                t.counted,
                t.first,
                strerror(t.first)
            ));
        }
        if let Some(v) = &r.verify {
            out.push_str(&format!(
                "     verify    : sectors ok={}, bad={}, never written={}\n",
                v.sectors_ok, v.sectors_bad, v.sectors_unwritten
            ));
        }
        let (depth, target, pct, window) = crate::export::latency_keys(r, e.fio);
        out.push_str(&format!(
            "     latency   : target={target}, window={window}, percentile={pct:.2}%, depth={depth}\n"
        ));
        if let Some(ss) = &r.fio_steadystate {
            out.push_str(&steadystate_line(ss, e.si));
        }
        out.push('\n');
    }
    // Run status per reporting group.
    let mut groups: Vec<u32> = entries.iter().map(|e| e.group).collect();
    groups.dedup();
    for g in groups {
        out.push_str(&format!("\nRun status group {g} (all jobs):\n"));
        let es: Vec<&Entry<'_>> = entries.iter().filter(|e| e.group == g).collect();
        let si = es.iter().any(|e| e.si);
        // fio's unified_rw_reporting: a MIXED line (alone for `mixed`).
        let mixed: Vec<&OpSummary> = es.iter().filter_map(|e| e.mixed.map(|m| m.0)).collect();
        let mixed_only = es.iter().all(|e| matches!(e.mixed, Some((_, true))));
        let mut lines: Vec<(&str, Vec<&OpSummary>)> = Vec::new();
        if !mixed_only {
            for (label, kind) in [
                ("   READ", OpKind::Read),
                ("  WRITE", OpKind::Write),
                ("   TRIM", OpKind::Trim),
            ] {
                lines.push((label, es.iter().map(|e| e.r.op(kind)).collect()));
            }
        }
        if !mixed.is_empty() {
            lines.push(("  MIXED", mixed));
        }
        for (label, ops) in lines {
            let ops: Vec<&OpSummary> = ops.into_iter().filter(|o| o.ios > 0).collect();
            if ops.is_empty() {
                continue;
            }
            let io: u64 = ops.iter().map(|o| o.bytes).sum();
            let runs: Vec<u64> = ops.iter().map(|o| o.fio_runtime_ms().max(1)).collect();
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
            let (a1, a2) = two_units(agg, "B/s", si);
            let (lo1, lo2) = two_units(bmin, "B/s", si);
            let (hi1, hi2) = two_units(bmax, "B/s", si);
            let (io1, io2) = two_units(io, "B", si);
            out.push_str(&format!(
                "{label}: bw={a1} ({a2}), {lo1}-{hi1} ({lo2}-{hi2}), io={io1} ({io2}), run={min_run}-{max_run}msec\n",
            ));
        }
    }
    // fio's disk stats: the kernel's devices, then the members of arrays, once each.
    let mut seen = std::collections::HashSet::new();
    let mut lines = Vec::new();
    for e in &entries {
        for d in &e.r.disk_util {
            if seen.insert(d.name.clone()) {
                lines.push(format!(
                    "  {}: ios={}/{}, sectors={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                    d.name,
                    d.read_ios,
                    d.write_ios,
                    d.read_sectors,
                    d.write_sectors,
                    d.read_merges,
                    d.write_merges,
                    d.read_ticks_ms,
                    d.write_ticks_ms,
                    d.in_queue_ms,
                    d.util()
                ));
            }
        }
        for m in &e.r.members {
            if seen.insert(m.name.clone()) {
                lines.push(format!(
                    "  {}: ios={}/{}, ticks={}/{}",
                    m.name,
                    m.read_ios,
                    m.write_ios,
                    m.read_ticks_ns / 1_000_000,
                    m.write_ticks_ns / 1_000_000
                ));
            }
        }
    }
    if !lines.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// Where an entry ran, in place of fio's `pid=…: date`.
fn target_text(r: &RunResult) -> String {
    let t = &r.target;
    match t.kind {
        TargetKind::Sim | TargetKind::SimRaid0 => format!("simulated {}", t.name),
        TargetKind::Null => "null target".to_string(),
        TargetKind::File
        | TargetKind::Block
        | TargetKind::Char
        | TargetKind::Raid0
        | TargetKind::Unknown => format!(
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
    fn a_plain_run_reads_like_fio() {
        let r = RunResult::default();
        let text = normal_text(&Report::of_runs(std::slice::from_ref(&r)));
        assert!(text.contains("(groupid=0, jobs=1): err= 0"), "{text}");
        assert!(text.contains("IO depths    :"), "{text}");
    }
}
