//! The default human-readable output: a short header and one table row per op kind.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use ssdlab_stats::RunResult;
use ssdlab_workload::{format_duration, format_size, OpKind};

/// Formats a latency in ns with a readable unit.
pub fn fmt_lat(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Formats a rate with thousands grouping (`123,456`).
pub fn fmt_count(v: f64) -> String {
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Renders a run as text for the terminal.
pub fn render_table(r: &RunResult) -> String {
    let mut out = String::new();
    let t = &r.target;
    let mut target = format!("{} {}", t.kind, t.name);
    if t.kind != "null" {
        target.push_str(&format!(" ({}", format_size(t.size)));
        if !t.engine.is_empty() {
            target.push_str(&format!(", {}", t.engine));
        }
        if t.kind != "sim" && t.kind != "sim-raid0" {
            target.push_str(if t.direct { ", O_DIRECT" } else { ", buffered" });
        }
        target.push(')');
    }
    out.push_str(&format!("target:   {target}\n"));
    for (k, v) in &t.details {
        out.push_str(&format!("          {k}: {v}\n"));
    }
    out.push_str(&format!(
        "workload: {}, region {} + {}, pattern {}, seed {}\n",
        r.spec.summary(),
        format_size(t.offset),
        format_size(t.span),
        r.spec.pattern,
        r.spec.seed
    ));
    let mut status = format!("runtime:  {}", format_duration(r.runtime_ns));
    if r.ramp_ns > 0 {
        status.push_str(&format!(" (after {} ramp)", format_duration(r.ramp_ns)));
    }
    if r.interrupted {
        status.push_str("  [INTERRUPTED: results so far]");
    }
    if r.stopped_on_error {
        status.push_str("  [STOPPED ON I/O ERROR]");
    }
    out.push_str(&status);
    out.push('\n');

    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "op", "ios", "IOPS", "MB/s", "MiB/s", "lat mean", "p50", "p99", "p99.9", "max", "errors",
    ]);
    for kind in OpKind::ALL {
        let o = r.op(kind);
        if o.ios == 0 && o.errors == 0 {
            continue;
        }
        let p = |q: f64| {
            o.lat
                .percentile(q)
                .map(|v| fmt_lat(v as f64))
                .unwrap_or_else(|| "-".into())
        };
        table.add_row(vec![
            kind.as_str().to_string(),
            o.ios.to_string(),
            fmt_count(o.iops),
            format!("{:.1}", o.mb_s()),
            format!("{:.1}", o.mib_s()),
            fmt_lat(o.lat.mean),
            p(50.0),
            p(99.0),
            p(99.9),
            fmt_lat(o.lat.max as f64),
            o.errors.to_string(),
        ]);
    }
    for i in 1..=10 {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    out.push_str(&table.to_string());
    out.push('\n');
    if !r.members.is_empty() {
        let mut mt = Table::new();
        mt.load_preset(UTF8_FULL_CONDENSED);
        mt.set_header(vec![
            "member",
            "read ios",
            "write ios",
            "MB read",
            "MB written",
            "util %",
        ]);
        let total = (r.runtime_ns + r.ramp_ns).max(1) as f64;
        for m in &r.members {
            mt.add_row(vec![
                m.name.clone(),
                m.read_ios.to_string(),
                m.write_ios.to_string(),
                format!("{:.1}", m.read_bytes as f64 / 1e6),
                format!("{:.1}", m.write_bytes as f64 / 1e6),
                format!("{:.1}", 100.0 * m.busy_ns as f64 / total),
            ]);
        }
        out.push_str(&mt.to_string());
        out.push('\n');
    }
    let ios = r.read.ios + r.write.ios + r.trim.ios;
    if t.kind != "sim" && t.kind != "sim-raid0" && ios > 0 {
        out.push_str(&format!(
            "cpu:      user {}, sys {}, {:.0} ns of CPU per I/O, {} context switches\n",
            format_duration(r.cpu.user_ns),
            format_duration(r.cpu.sys_ns),
            r.cpu_ns_per_io(),
            r.cpu.ctx
        ));
    }
    if let Some(v) = &r.verify {
        out.push_str(&format!(
            "verify:   {} sectors ok, {} never written by a verifying run, {} bad\n",
            v.sectors_ok, v.sectors_unwritten, v.sectors_bad
        ));
    }
    for e in &r.errors {
        out.push_str(&format!(
            "error:    {} at offset {} (+{}): {}\n",
            e.kind.as_str(),
            e.offset,
            e.len,
            e.error
        ));
    }
    out
}
