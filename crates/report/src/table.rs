//! The default human-readable output: a short header and one table row per op kind.

use comfy_table::presets::{ASCII_FULL_CONDENSED, UTF8_FULL_CONDENSED};
use comfy_table::{CellAlignment, Table};
use ssdlab_stats::device::DriveCounters;
use ssdlab_stats::{EngineKind, RunResult, TargetKind};
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

/// How table borders are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableStyle {
    /// Box-drawing characters (for a terminal).
    #[default]
    Unicode,
    /// Plain ASCII (`+`, `-`, `|`): for files, pipes and terminals without Unicode.
    Ascii,
}

impl TableStyle {
    /// The comfy-table preset of this style.
    pub fn preset(self) -> &'static str {
        match self {
            TableStyle::Unicode => UTF8_FULL_CONDENSED,
            TableStyle::Ascii => ASCII_FULL_CONDENSED,
        }
    }
}

/// Renders a run as text for the terminal (Unicode borders).
pub fn render_table(r: &RunResult) -> String {
    render_table_styled(r, TableStyle::Unicode)
}

/// Renders a run as text with the given border style.
pub fn render_table_styled(r: &RunResult, style: TableStyle) -> String {
    let mut out = String::new();
    let t = &r.target;
    let mut target = format!("{} {}", t.kind, t.name);
    if t.kind != TargetKind::Null {
        target.push_str(&format!(" ({}", format_size(t.size)));
        if t.engine != EngineKind::Unknown {
            target.push_str(&format!(", {}", t.engine));
        }
        if !t.kind.is_sim() {
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
    table.load_preset(style.preset());
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
        mt.load_preset(style.preset());
        mt.set_header(vec![
            "member",
            "read ios",
            "write ios",
            "MB read",
            "MB written",
            "util %",
        ]);
        // members count busy time from the end of the ramp
        let total = r.runtime_ns.max(1) as f64;
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
    if let Some(dt) = drive_table(&r.device, style) {
        out.push_str(&dt);
        out.push('\n');
    }
    if let Some(l) = crate::limits::limited_by(&r.device) {
        out.push_str(&format!("limited by: {l}\n"));
    }
    if let Some(c) = crate::limits::adapter_cache_phrase(r.adapter_cache.as_ref()) {
        out.push_str(&format!("RAID driver cache: {c}\n"));
    }
    if let Some(ss) = &r.steady_state {
        let rounds: Vec<String> = ss.rounds.iter().map(|v| format!("{v:.0}")).collect();
        out.push_str(&format!("rounds:   IOPS {}\n", rounds.join(", ")));
    }
    for n in &r.notes {
        out.push_str(&format!("note:     {n}\n"));
    }
    let ios = r.read.ios + r.write.ios + r.trim.ios;
    if !t.kind.is_sim() && ios > 0 {
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

/// The simulated drives' counters (one row per drive): what a storage engineer looks at after a
/// write test — write amplification, NAND traffic, garbage collection, cache and RMW activity.
/// `None` without simulated drives.
fn drive_table(drives: &[DriveCounters], style: TableStyle) -> Option<String> {
    if drives.is_empty() {
        return None;
    }
    let mut t = Table::new();
    t.load_preset(style.preset());
    t.set_header(vec![
        "drive",
        "WA",
        "host MB wr",
        "NAND MB wr",
        "NAND reads",
        "erases",
        "GC runs",
        "GC moved",
        "RMW reads",
        "cache hits",
        "compr. saved MB",
    ]);
    for (i, d) in drives.iter().enumerate() {
        let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
        t.add_row(vec![
            i.to_string(),
            format!("{:.2}", d.write_amplification),
            mb(d.host_write_bytes),
            mb(d.nand_program_bytes),
            d.nand_reads.to_string(),
            d.nand_erases.to_string(),
            d.gc_runs.to_string(),
            d.gc_units_moved.to_string(),
            d.rmw_reads.to_string(),
            d.cache_write_hits.to_string(),
            mb(d.compression_saved_bytes),
        ]);
    }
    for i in 1..=10 {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    Some(t.to_string())
}

#[cfg(test)]
mod drive_table_tests {
    use super::*;

    #[test]
    fn drive_counters_render_one_row_per_drive() {
        let d = DriveCounters {
            write_amplification: 2.5,
            host_write_bytes: 4_000_000,
            nand_program_bytes: 10_000_000,
            nand_reads: 7,
            nand_erases: 3,
            gc_runs: 2,
            gc_units_moved: 1500,
            cache_write_hits: 9,
            ..DriveCounters::default()
        };
        let out = drive_table(&[d.clone(), d], TableStyle::Unicode).expect("table");
        assert!(out.contains("2.50"), "{out}");
        assert!(out.contains("10.0"), "{out}");
        assert!(out.contains("1500"), "{out}");
        assert_eq!(out.matches("2.50").count(), 2, "{out}");
        assert!(drive_table(&[], TableStyle::Ascii).is_none());
    }
}
