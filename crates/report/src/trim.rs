//! The TRIM study's report: an office-like aging workload on a RAID 0 array with TRIM passed
//! through to the members and with TRIM dropped by the RAID driver, side by side — write
//! amplification, the write speed of the day's writes and of an end-of-day write probe, and the
//! endurance (TBW) the measured write amplification projects.

use crate::table::TableStyle;
use comfy_table::{CellAlignment, Table};
use serde::Serialize;
use ssdlab_stats::{AgingRun, AgingWindow};
use ssdlab_workload::format_size;

/// P/E cycles assumed when a preset does not give its NAND's rating: a 2x-nm MLC rating
/// (IMFT 25 and 20 nm MLC are rated 3,000 by Micron).
pub const ASSUMED_PE_CYCLES: u32 = 3000;

/// What the study ran and what it measured.
#[derive(Debug, Clone, Serialize)]
pub struct TrimStudy {
    pub preset: String,
    pub description: String,
    pub drives: usize,
    pub stripe_bytes: u64,
    /// The simulated drives are the preset scaled down by this factor (1 = full size).
    pub scale: u32,
    /// User capacity of one simulated drive.
    pub drive_bytes: u64,
    /// Raw NAND capacity of one full-size drive (for the endurance projection).
    pub full_raw_bytes: u64,
    /// Over-provisioning (1 − user / raw capacity) of the simulated and of the full-size drive.
    pub over_provisioning: f64,
    pub full_over_provisioning: f64,
    pub pe_cycles: u32,
    /// `pe_cycles` is [`ASSUMED_PE_CYCLES`], the preset giving none.
    pub pe_assumed: bool,
    /// Writes per day on the full-size array (the simulated array takes this / scale).
    pub daily_write_full: u64,
    pub fill_pct: u32,
    pub days: u32,
    pub seed: u64,
    pub allocator: String,
    pub qd: u32,
    pub probe_bytes: u64,
    /// With pass-through first, then without.
    pub runs: Vec<AgingRun>,
    /// The run was stopped before every day was simulated.
    pub interrupted: bool,
}

/// The endurance a run's write amplification projects for full-size drives.
#[derive(Debug, Clone, Serialize)]
pub struct Endurance {
    pub label: String,
    /// Days the write amplification below is measured over (the second half).
    pub days: String,
    /// Over those days.
    pub write_amplification: f64,
    /// Over all the days (the fill not included).
    pub write_amplification_all_days: f64,
    pub per_drive_write_amplification: Vec<f64>,
    /// Host bytes each drive can take: P/E cycles × raw NAND / its write amplification.
    pub per_drive_tbw_bytes: Vec<f64>,
    /// Host bytes the array can take until its first member is worn out.
    pub array_tbw_bytes: f64,
    /// Years at the daily write.
    pub years: f64,
    /// Mean write speed of the days' writes, MB/s.
    pub day_write_mb_s: f64,
    /// End-of-day probe on the last day, MB/s.
    pub last_probe_mb_s: f64,
    /// Mean of the probes, MB/s.
    pub probe_mb_s: f64,
}

impl TrimStudy {
    /// The days whose write amplification projects the endurance: the second half (the
    /// drives have been written over by then; the first days still find never-written
    /// blocks and need little garbage collection).
    pub fn steady_days(&self, run: &AgingRun) -> std::ops::RangeInclusive<u32> {
        let n = run.days.len() as u32;
        (n / 2 + 1).min(n.max(1))..=n.max(1)
    }

    pub fn endurance(&self, run: &AgingRun) -> Endurance {
        let mut t = AgingWindow::default();
        let days = self.steady_days(run);
        for d in run.days.iter().filter(|d| days.contains(&d.day)) {
            t.add(&d.work);
        }
        let all = run.days_total();
        let wa: Vec<f64> = (0..run.drives)
            .map(|i| t.drive_write_amplification(i))
            .collect();
        let budget = self.pe_cycles as f64 * self.full_raw_bytes as f64;
        let tbw: Vec<f64> = wa
            .iter()
            .map(|w| if *w > 0.0 { budget / w } else { 0.0 })
            .collect();
        // the array wears out with its first member; each takes its share of the host writes
        let array = (0..run.drives)
            .filter_map(|i| {
                let share = t.per_drive_host_write_bytes.get(i).copied().unwrap_or(0) as f64
                    / t.host_write_bytes.max(1) as f64;
                (share > 0.0 && tbw[i] > 0.0).then(|| tbw[i] / share)
            })
            .fold(f64::INFINITY, f64::min);
        let array = if array.is_finite() { array } else { 0.0 };
        let n = run.days.len().max(1) as f64;
        Endurance {
            label: run.label.clone(),
            days: format!("{}–{}", days.start(), days.end()),
            write_amplification: t.write_amplification(),
            write_amplification_all_days: all.write_amplification(),
            per_drive_write_amplification: wa,
            per_drive_tbw_bytes: tbw,
            array_tbw_bytes: array,
            years: array / (self.daily_write_full.max(1) as f64 * 365.0),
            day_write_mb_s: all.write_mb_s(),
            last_probe_mb_s: run.days.last().map_or(0.0, |d| d.probe.write_mb_s()),
            probe_mb_s: run.days.iter().map(|d| d.probe.write_mb_s()).sum::<f64>() / n,
        }
    }

    /// What was simulated, in a few lines.
    pub fn header(&self) -> Vec<String> {
        let mut v = vec![
            format!(
                "TRIM study: {} × {} in RAID 0 ({} stripe), TRIM passed to the members vs dropped by the RAID driver",
                self.drives,
                self.preset,
                format_size(self.stripe_bytes)
            ),
            format!(
                "workload: office-like file-system aging ({} allocator, lognormal file sizes), filled to {} %, then {} day{} of {}/day on the full-size array; seed {}",
                self.allocator,
                self.fill_pct,
                self.days,
                if self.days == 1 { "" } else { "s" },
                format_size(self.daily_write_full),
                self.seed
            ),
        ];
        if self.scale > 1 {
            v.push(format!(
                "simulated at 1/{} scale: drives of {} (blocks per plane, user capacity and pSLC divided by {}; over-provisioning {:.1} %, full size {:.1} %), so {}/day and a {} write probe; endurance is projected for the full-size drives",
                self.scale,
                format_size(self.drive_bytes),
                self.scale,
                100.0 * self.over_provisioning,
                100.0 * self.full_over_provisioning,
                format_size(self.daily_write_full / self.scale as u64),
                format_size(self.probe_bytes)
            ));
        } else {
            v.push(format!(
                "full-size drives of {}; {} write probe at the end of each day",
                format_size(self.drive_bytes),
                format_size(self.probe_bytes)
            ));
        }
        v
    }

    /// The per-day table, both configurations side by side, with the fill and the total.
    pub fn table(&self, style: TableStyle) -> String {
        let mut t = Table::new();
        t.load_preset(style.preset());
        t.set_header(vec![
            "day",
            "host writes",
            "WA trim",
            "WA no trim",
            "day MB/s trim",
            "day MB/s no trim",
            "probe MB/s trim",
            "probe MB/s no trim",
            "valid on drives trim",
            "valid on drives no trim",
        ]);
        let (Some(a), Some(b)) = (self.runs.first(), self.runs.get(1)) else {
            return String::new();
        };
        let pct = |w: &AgingWindow, run: &AgingRun| {
            format!(
                "{:.0} %",
                100.0 * w.drive_mapped_bytes as f64 / run.volume_bytes.max(1) as f64
            )
        };
        let row = |name: String, x: &AgingWindow, y: &AgingWindow, px: String, py: String| {
            vec![
                name,
                format_size(x.host_write_bytes),
                format!("{:.2}", x.write_amplification()),
                format!("{:.2}", y.write_amplification()),
                format!("{:.0}", x.write_mb_s()),
                format!("{:.0}", y.write_mb_s()),
                px,
                py,
                pct(x, a),
                pct(y, b),
            ]
        };
        t.add_row(row("fill".into(), &a.fill, &b.fill, "-".into(), "-".into()));
        for (x, y) in a.days.iter().zip(&b.days) {
            let probe = |w: &AgingWindow| {
                if w.host_write_bytes > 0 {
                    format!("{:.0}", w.write_mb_s())
                } else {
                    "-".into()
                }
            };
            t.add_row(row(
                x.day.to_string(),
                &x.work,
                &y.work,
                probe(&x.probe),
                probe(&y.probe),
            ));
        }
        let (ea, eb) = (self.endurance(a), self.endurance(b));
        t.add_row(row(
            format!("days 1–{}", a.days.len()),
            &a.days_total(),
            &b.days_total(),
            format!("{:.0}", ea.probe_mb_s),
            format!("{:.0}", eb.probe_mb_s),
        ));
        for i in 1..t.column_count() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string()
    }

    /// The endurance block.
    pub fn endurance_table(&self, style: TableStyle) -> String {
        let mut t = Table::new();
        t.load_preset(style.preset());
        t.set_header(vec![
            "configuration",
            "WA all days",
            "WA steady (days)",
            "TBW per drive",
            "TBW array",
            "years at the daily write",
        ]);
        for r in &self.runs {
            let e = self.endurance(r);
            t.add_row(vec![
                r.label.clone(),
                format!("{:.2}", e.write_amplification_all_days),
                format!("{:.2} ({})", e.write_amplification, e.days),
                e.per_drive_tbw_bytes
                    .iter()
                    .map(|b| tb(*b))
                    .collect::<Vec<_>>()
                    .join(" / "),
                tb(e.array_tbw_bytes),
                format!("{:.1}", e.years),
            ]);
        }
        for i in 1..t.column_count() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string()
    }

    /// The findings in words.
    pub fn findings(&self) -> Vec<String> {
        let (Some(a), Some(b)) = (self.runs.first(), self.runs.get(1)) else {
            return Vec::new();
        };
        let (ea, eb) = (self.endurance(a), self.endurance(b));
        let cmp = |x: f64, y: f64, words: [&'static str; 2]| {
            if (x - y).abs() <= 0.005 * x.abs().max(y.abs()) {
                "about the same"
            } else if x < y {
                words[0]
            } else {
                words[1]
            }
        };
        let mut v = vec![
            format!(
                "with TRIM pass-through write amplification is {} ({:.2} vs {:.2} over days {}, {:.2} vs {:.2} over all {} days)",
                cmp(ea.write_amplification, eb.write_amplification, ["lower", "higher"]),
                ea.write_amplification,
                eb.write_amplification,
                ea.days,
                ea.write_amplification_all_days,
                eb.write_amplification_all_days,
                a.days.len()
            ),
            format!(
                "with TRIM pass-through sustained writes are {} (the {} probe at the end of each day: {:.0} vs {:.0} MB/s on average, {:.0} vs {:.0} MB/s on the last day; the days' own writes {:.0} vs {:.0} MB/s)",
                cmp(eb.probe_mb_s, ea.probe_mb_s, ["faster", "slower"]),
                format_size(self.probe_bytes),
                ea.probe_mb_s,
                eb.probe_mb_s,
                ea.last_probe_mb_s,
                eb.last_probe_mb_s,
                ea.day_write_mb_s,
                eb.day_write_mb_s
            ),
            format!(
                "projected endurance of the full-size array: {} vs {} of host writes ({:.0} vs {:.0} years at {}/day), from {} P/E cycles{} × {} raw NAND per drive / the steady write amplification",
                tb(ea.array_tbw_bytes),
                tb(eb.array_tbw_bytes),
                ea.years,
                eb.years,
                format_size(self.daily_write_full),
                self.pe_cycles,
                if self.pe_assumed {
                    " (assumed: the preset gives no rating; a 2x-nm MLC rating)"
                } else {
                    " (the preset's NAND rating)"
                },
                format_size(self.full_raw_bytes)
            ),
        ];
        if let (Some(x), Some(y)) = (a.days.last(), b.days.last()) {
            v.push(format!(
                "after day {}: the file system holds {}; the drives hold {} as valid data with TRIM, {} without (deleted files stay valid to a drive that is never told)",
                x.day,
                format_size(x.fs_used_bytes),
                format_size(x.work.drive_mapped_bytes),
                format_size(y.work.drive_mapped_bytes)
            ));
        }
        let same_op = (self.over_provisioning - self.full_over_provisioning).abs() <= 0.01;
        if self.scale > 1 && same_op {
            v.push(format!(
                "write amplification was measured on drives scaled to 1/{}: the same utilisation and over-provisioning fractions, so the same GC pressure, but fewer blocks per plane",
                self.scale
            ));
        }
        if !same_op {
            v.push(format!(
                "caution: at this scale the drives have {:.1} % over-provisioning instead of {:.1} % (GC needs its spare blocks in every plane), so GC pressure is not the full-size drive's; use a smaller --scale",
                100.0 * self.over_provisioning,
                100.0 * self.full_over_provisioning
            ));
        }
        if self.interrupted {
            v.push("interrupted: the figures cover the days simulated before the stop".into());
        }
        v
    }

    /// Everything as text: header, tables, findings.
    pub fn render(&self, style: TableStyle) -> String {
        let mut s = String::new();
        for l in self.header() {
            s.push_str(&l);
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.table(style));
        s.push_str("\n\n");
        s.push_str(&self.endurance_table(style));
        s.push_str("\n\nfindings:\n");
        for f in self.findings() {
            s.push_str("  - ");
            s.push_str(&f);
            s.push('\n');
        }
        s
    }

    /// The study as JSON: the parameters, every run with its days, and the endurance figures.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            let e: Vec<Endurance> = self.runs.iter().map(|r| self.endurance(r)).collect();
            o.insert(
                "endurance".into(),
                serde_json::to_value(e).unwrap_or_default(),
            );
            o.insert("findings".into(), self.findings().into());
        }
        v
    }
}

/// Bytes as decimal terabytes (how TBW is rated).
fn tb(b: f64) -> String {
    format!("{:.1} TB", b / 1e12)
}
