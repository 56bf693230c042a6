//! What the simulated drives did at each point, kept with the analysis so that the findings can
//! say why the numbers are what they are: what binds a workload at its lowest and highest queue
//! depth (the busiest resource and how busy it is), and which mechanism produced a gain beyond
//! the number of drives (two drives giving more than twice one) — the members' SLC cache, their
//! garbage collection, their write buffers, the RAID driver's cache — or that no counter
//! explains it.

use crate::analysis::{Analysis, Cell};
use serde::Serialize;
use ssdlab_report::limits::{busiest, limit_phrase, Busiest};
use ssdlab_stats::RunResult;
use ssdlab_store::StoredPoint;
use ssdlab_workload::format_size;

/// One simulated drive's counters over a point's measurement window (the few that explain a
/// result; the stored result has them all).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DriveSummary {
    /// NAND bytes programmed / host bytes written (below 1: the write buffer still held data
    /// at the end of the window).
    pub write_amplification: f64,
    pub host_writes: u64,
    pub host_write_bytes: u64,
    /// NAND page programs, and those in pSLC mode.
    pub nand_programs: u64,
    pub pslc_programs: u64,
    /// Mapping units relocated by garbage collection (and folding).
    pub gc_units_moved: u64,
    /// Total time writes waited for write-buffer space (or a block to write into), ns.
    pub cache_wait_ns: u64,
    /// The busiest resource (`all 16 dies`, `fw core 0 (host+ftl)`) and its busy fraction.
    pub busiest: String,
    pub busiest_utilisation: f64,
}

impl DriveSummary {
    /// pSLC programs as a share of all programs (None without programs).
    pub fn pslc_share(&self) -> Option<f64> {
        (self.nand_programs > 0).then(|| self.pslc_programs as f64 / self.nand_programs as f64)
    }

    /// Mean wait for write-buffer space per host write, ns (None without writes).
    pub fn wait_per_write_ns(&self) -> Option<f64> {
        (self.host_writes > 0).then(|| self.cache_wait_ns as f64 / self.host_writes as f64)
    }
}

/// What the host RAID driver's write-back cache did over a point.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CacheSummary {
    pub absorbed_bytes: u64,
    pub flushed_bytes: u64,
    pub full_waits: u64,
    pub peak_dirty_bytes: u64,
}

/// The counters of a point's drives (one per member of an array).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeviceSummary {
    pub drives: Vec<DriveSummary>,
    /// I/Os completed in the measurement window, and I/Os outstanding at once (QD × jobs): the
    /// window's edges cut up to that many, the count's own uncertainty.
    pub measured_ios: u64,
    pub in_flight: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_cache: Option<CacheSummary>,
}

impl DeviceSummary {
    /// The summary of a simulated result (None for real targets and results without counters).
    pub fn of(r: &RunResult) -> Option<DeviceSummary> {
        let drives: Vec<DriveSummary> = r
            .device
            .iter()
            .map(|d| {
                let top = busiest(std::slice::from_ref(d)).pop();
                DriveSummary {
                    write_amplification: d.write_amplification,
                    host_writes: d.host_writes,
                    host_write_bytes: d.host_write_bytes,
                    nand_programs: d.nand_programs,
                    pslc_programs: d.pslc_programs,
                    gc_units_moved: d.gc_units_moved,
                    cache_wait_ns: d.cache_wait_ns,
                    busiest: top.as_ref().map(|b| b.name.clone()).unwrap_or_default(),
                    busiest_utilisation: top.map_or(0.0, |b| b.utilisation),
                }
            })
            .collect();
        if drives.is_empty() {
            return None;
        }
        let adapter_cache = r.adapter_cache.as_ref().map(|c| CacheSummary {
            absorbed_bytes: c.absorbed_bytes,
            flushed_bytes: c.flushed_bytes,
            full_waits: c.full_waits,
            peak_dirty_bytes: c.peak_dirty_bytes,
        });
        Some(DeviceSummary {
            drives,
            measured_ios: r.read.ios + r.write.ios + r.trim.ios,
            in_flight: r.spec.total_qd(),
            adapter_cache,
        })
    }

    /// What limits the point, in words (`all 16 dies, 100 % busy`).
    pub fn limit(&self) -> Option<String> {
        let b: Vec<Busiest> = self
            .drives
            .iter()
            .filter(|d| !d.busiest.is_empty())
            .map(|d| Busiest {
                name: d.busiest.clone(),
                utilisation: d.busiest_utilisation,
            })
            .collect();
        limit_phrase(&b)
    }

    /// The relative uncertainty of the point's IOPS from the window's edges: the I/Os in flight
    /// when it opens or closes count or not by chance (0 without a count).
    pub fn edge_noise(&self) -> f64 {
        if self.measured_ios == 0 {
            return 0.0;
        }
        self.in_flight as f64 / self.measured_ios as f64
    }
}

/// The margin a gain must clear to count as beyond the drive count: the tie margin (the
/// simulation's own noise between two configurations, at least 1 %) plus the edge noise of the
/// array's point and of the baseline's (a short window at a high QD counts a few % by chance).
fn beyond_margin(c: &Cell, base: Option<&Cell>, tie: f64) -> f64 {
    let edge = |c: Option<&Cell>| {
        c.and_then(|c| c.device.as_ref())
            .map_or(0.0, DeviceSummary::edge_noise)
    };
    tie.max(0.01) + edge(Some(c)) + edge(base)
}

/// Whether the array's gain exceeds the drive count by more than `margin`.
fn beyond(c: &Cell, margin: f64) -> bool {
    c.ratio
        .is_some_and(|r| r > c.drives as f64 * (1.0 + margin))
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn us(ns: f64) -> String {
    format!("{:.0} us", ns / 1e3)
}

fn each(v: &[String]) -> String {
    match v {
        [] => String::new(),
        [a] => a.clone(),
        [a, b] => format!("{a} and {b}"),
        _ => format!("{} and {}", v[..v.len() - 1].join(", "), v[v.len() - 1]),
    }
}

/// Which counters differ between one drive (`single`) and the members of an array (`array`) at
/// the same point, each as a clause that says how: the mechanisms that can make N drives more
/// than N times as fast as one. Empty when none differs.
pub fn explain_gain(single: &DeviceSummary, array: &DeviceSummary) -> Vec<String> {
    let mut out = Vec::new();
    let Some(one) = single.drives.first() else {
        return out;
    };
    let members = &array.drives;
    if members.is_empty() {
        return out;
    }
    if let Some(c) = array
        .adapter_cache
        .as_ref()
        .filter(|c| c.absorbed_bytes > 0)
    {
        out.push(format!(
            "the RAID driver's write-back cache took {:.0} MB of the writes into host memory and completed them from there (peak {:.0} MB dirty, {:.0} MB written on to the drives)",
            c.absorbed_bytes as f64 / 1e6,
            c.peak_dirty_bytes as f64 / 1e6,
            c.flushed_bytes as f64 / 1e6
        ));
    }
    // each member takes part of the writes: its SLC cache may hold them where one drive's fills
    if let (Some(s), Some(m)) = (
        one.pslc_share(),
        mean(members.iter().filter_map(DriveSummary::pslc_share)),
    ) {
        if m - s >= 0.10 {
            out.push(format!(
                "each member takes part of the writes, so its SLC cache holds more of them: {:.0} % of its programs are SLC against {:.0} % on one drive",
                m * 100.0,
                s * 100.0
            ));
        }
    }
    // garbage collection: one drive moves more data per byte written
    let m_wa = mean(
        members
            .iter()
            .filter(|d| d.host_write_bytes > 0)
            .map(|d| d.write_amplification),
    );
    if let (true, Some(m)) = (one.host_write_bytes > 0, m_wa) {
        let s = one.write_amplification;
        if s > 1.0 && s > m * 1.05 {
            out.push(format!(
                "one drive collects garbage at a write amplification of {s:.2} ({} units moved), each member at {m:.2} ({})",
                one.gc_units_moved,
                each(
                    &members
                        .iter()
                        .map(|d| d.gc_units_moved.to_string())
                        .collect::<Vec<_>>()
                )
            ));
        } else if m < 1.0 && m < s / 1.05 {
            out.push(format!(
                "each member's flash took in {:.0} % of the bytes written to it against {:.0} % on one drive: the rest still sat in its write buffer at the end of the point",
                m * 100.0,
                s * 100.0
            ));
        }
    }
    // write buffers: writes wait for room on one drive, not on the members
    if let (Some(s), Some(m)) = (
        one.wait_per_write_ns(),
        mean(members.iter().filter_map(DriveSummary::wait_per_write_ns)),
    ) {
        if s > 1.5 * m && s - m >= 5_000.0 {
            let waits: Vec<String> = members
                .iter()
                .filter_map(DriveSummary::wait_per_write_ns)
                .map(us)
                .collect();
            let on = if waits.windows(2).all(|w| w[0] == w[1]) {
                format!("{} on each member", waits[0])
            } else {
                format!("{} on the members", each(&waits))
            };
            out.push(format!(
                "writes waited {} on average for write-buffer space on one drive against {on}: their buffers were not full",
                us(s)
            ));
        }
    }
    // what binds: another resource, or the same one far less busy
    let top = members
        .iter()
        .max_by(|a, b| a.busiest_utilisation.total_cmp(&b.busiest_utilisation))
        .expect("not empty");
    if !one.busiest.is_empty()
        && (one.busiest != top.busiest
            || (one.busiest_utilisation - top.busiest_utilisation).abs() >= 0.10)
    {
        out.push(format!(
            "one drive's busiest resource is {} ({:.0} % busy), the members' {} ({:.0} % busy)",
            one.busiest,
            one.busiest_utilisation * 100.0,
            top.busiest,
            top.busiest_utilisation * 100.0
        ));
    }
    out
}

impl Analysis {
    /// Attaches to every cell the device counters of its first finished repeat, read with
    /// `load` (the stored result of a point key). Cells of real targets keep none.
    pub fn attach_devices(
        &mut self,
        points: &[StoredPoint],
        load: impl Fn(&str) -> Option<RunResult>,
    ) {
        for c in &mut self.cells {
            if !c.simulated {
                continue;
            }
            let first = c.first_repeat(points);
            c.device = first
                .and_then(|p| load(&p.record.key))
                .and_then(|r| DeviceSummary::of(&r));
        }
    }

    /// Per workload of array target `t`: what limits one drive and the array (at the workload's
    /// best stripe) at the lowest and the highest QD.
    pub fn limit_findings(&self, t: &str) -> Vec<String> {
        let mut out = Vec::new();
        let (Some(&lo), Some(&hi)) = (self.qds.first(), self.qds.last()) else {
            return out;
        };
        let base = self
            .cells
            .iter()
            .find(|c| c.target_label == t)
            .and_then(|c| c.baseline_label.clone());
        for w in &self.workloads {
            let Some(best) = self
                .best_per_workload
                .iter()
                .find(|b| b.target_label == t && &b.workload == w)
            else {
                continue;
            };
            let at = |target: &str, stripe: Option<u64>| -> Option<String> {
                let l = |q: u32| {
                    self.cell(target, stripe, w, q)
                        .and_then(|c| c.device.as_ref())
                        .and_then(DeviceSummary::limit)
                };
                if lo == hi {
                    return l(lo).map(|x| format!("at QD {lo} {x}"));
                }
                match (l(lo), l(hi)) {
                    (Some(a), Some(b)) => Some(format!("at QD {lo} {a}, at QD {hi} {b}")),
                    _ => None,
                }
            };
            let mut parts = Vec::new();
            if let Some(x) = base.as_deref().and_then(|b| at(b, None)) {
                parts.push(format!("one drive: {x}"));
            }
            if let Some(x) = at(t, Some(best.stripe)) {
                parts.push(format!("the array ({}): {x}", format_size(best.stripe)));
            }
            if !parts.is_empty() {
                out.push(format!("{t}, {w}: what limits it: {}.", parts.join("; ")));
            }
        }
        out
    }

    /// Per workload of array target `t` whose gain over one drive exceeds the drive count: where
    /// it does, and the mechanism the counters show at its highest gain (or that none does).
    pub fn beyond_findings(&self, t: &str) -> Vec<String> {
        let mut out = Vec::new();
        for w in &self.workloads {
            let tie = self.tie_margin(t, &[w.as_str()], None);
            let base_of = |c: &Cell| {
                c.baseline_label
                    .as_deref()
                    .and_then(|b| self.cell(b, None, w, c.qd))
            };
            let over: Vec<&Cell> = self
                .cells
                .iter()
                .filter(|c| c.target_label == t && &c.workload == w && c.stripe.is_some())
                .filter(|c| beyond(c, beyond_margin(c, base_of(c), tie)))
                .collect();
            let Some(top) = over
                .iter()
                .max_by(|a, b| a.ratio.unwrap_or(0.0).total_cmp(&b.ratio.unwrap_or(0.0)))
            else {
                continue;
            };
            let mut qds: Vec<u32> = over.iter().map(|c| c.qd).collect();
            qds.sort_unstable();
            qds.dedup();
            let n = top.drives;
            let times = match n {
                2 => "twice".to_string(),
                n => format!("{n} times"),
            };
            let mut s = format!(
                "{t}, {w}: {n} drives give more than {times} one drive (up to {:+.0} % at QD {} with {}; beyond {}x at QD {}): ",
                top.gain_pct.unwrap_or(0.0),
                top.qd,
                format_size(top.stripe.unwrap_or(0)),
                n,
                qds.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let single = top
                .baseline_label
                .as_deref()
                .and_then(|b| self.cell(b, None, w, top.qd))
                .and_then(|c| c.device.as_ref());
            match (single, top.device.as_ref()) {
                (Some(one), Some(arr)) => {
                    let why = explain_gain(one, arr);
                    if why.is_empty() {
                        s.push_str("no device counter explains it (write amplification, GC moves, SLC share, write-buffer waits and the busiest resource are alike on one drive and on the members)");
                    } else {
                        s.push_str(&why.join("; "));
                    }
                }
                _ if !top.simulated => s.push_str(
                    "measured drives carry no device counters to explain it; a cache in the drives or in the host can",
                ),
                _ => s.push_str("the stored results carry no device counters to explain it"),
            }
            out.push(s + ".");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(wa: f64, pslc: u64, wait_us: u64, busiest: &str, u: f64) -> DriveSummary {
        DriveSummary {
            write_amplification: wa,
            host_writes: 1000,
            host_write_bytes: 4_096_000,
            nand_programs: 100,
            pslc_programs: pslc,
            gc_units_moved: ((wa - 1.0).max(0.0) * 1000.0) as u64,
            cache_wait_ns: wait_us * 1000 * 1000,
            busiest: busiest.into(),
            busiest_utilisation: u,
        }
    }

    fn dev(d: Vec<DriveSummary>) -> DeviceSummary {
        DeviceSummary {
            drives: d,
            adapter_cache: None,
            ..Default::default()
        }
    }

    #[test]
    fn the_slc_cache_of_each_member_explains_a_gain() {
        let one = dev(vec![drive(1.0, 40, 0, "all 16 dies", 1.0)]);
        let two = dev(vec![
            drive(1.0, 92, 0, "all 16 dies", 1.0),
            drive(1.0, 92, 0, "all 16 dies", 1.0),
        ]);
        let why = explain_gain(&one, &two);
        assert_eq!(why, ["each member takes part of the writes, so its SLC cache holds more of them: 92 % of its programs are SLC against 40 % on one drive"]);
    }

    #[test]
    fn garbage_collection_and_buffer_waits_explain_a_gain() {
        let one = dev(vec![drive(2.1, 0, 120, "fw core 0", 0.99)]);
        let two = dev(vec![
            drive(1.0, 0, 5, "all 16 dies", 0.8),
            drive(1.02, 0, 7, "all 16 dies", 0.82),
        ]);
        let why = explain_gain(&one, &two);
        assert_eq!(why.len(), 3, "{why:?}");
        assert!(why[0].starts_with("one drive collects garbage at a write amplification of 2.10 (1100 units moved), each member at 1.01 (0 and 20)"), "{}", why[0]);
        assert!(why[1].starts_with("writes waited 120 us on average for write-buffer space on one drive against 5 us and 7 us on the members"), "{}", why[1]);
        assert_eq!(why[2], "one drive's busiest resource is fw core 0 (99 % busy), the members' all 16 dies (82 % busy)");
    }

    #[test]
    fn the_raid_drivers_cache_is_named_first() {
        let one = dev(vec![drive(1.0, 0, 0, "all 16 dies", 1.0)]);
        let mut two = dev(vec![
            drive(1.0, 0, 0, "all 16 dies", 1.0),
            drive(1.0, 0, 0, "all 16 dies", 1.0),
        ]);
        assert!(explain_gain(&one, &two).is_empty(), "nothing differs");
        two.adapter_cache = Some(CacheSummary {
            absorbed_bytes: 512_000_000,
            flushed_bytes: 300_000_000,
            full_waits: 0,
            peak_dirty_bytes: 256_000_000,
        });
        let why = explain_gain(&one, &two);
        assert_eq!(why.len(), 1);
        assert!(
            why[0].starts_with("the RAID driver's write-back cache took 512 MB"),
            "{}",
            why[0]
        );
    }

    fn cell(ratio: f64, ios: u64, qd: u64) -> Cell {
        Cell {
            target_label: "raid0".into(),
            drives: 2,
            stripe: Some(8192),
            workload: "128k-seqread".into(),
            qd: qd as u32,
            baseline: false,
            baseline_label: Some("single".into()),
            repeats: 1,
            simulated: true,
            iops_min: 0.0,
            iops_max: 0.0,
            iops: 0.0,
            mb_s: 0.0,
            lat_mean_ns: 0.0,
            lat_p99_ns: 0.0,
            mb_s_min: 0.0,
            mb_s_max: 0.0,
            lat_mean_min_ns: 0.0,
            lat_mean_max_ns: 0.0,
            lat_p99_min_ns: 0.0,
            lat_p99_max_ns: 0.0,
            baseline_iops: None,
            ratio: Some(ratio),
            gain_pct: Some((ratio - 1.0) * 100.0),
            device: Some(DeviceSummary {
                measured_ios: ios,
                in_flight: qd,
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_gain_just_past_the_drive_count_is_within_the_windows_noise() {
        // 2.03x with 32 in flight of 800 counted on one drive and 1600 on the array: the
        // window's edges alone can make 6 %
        let arr = cell(2.03, 1600, 32);
        let one = cell(1.0, 800, 32);
        let m = beyond_margin(&arr, Some(&one), 0.01);
        assert!((m - (0.01 + 0.02 + 0.04)).abs() < 1e-9, "{m}");
        assert!(!beyond(&arr, m));
        // the same gain over long windows is beyond
        let arr = cell(2.03, 1_600_000, 32);
        let one = cell(1.0, 800_000, 32);
        assert!(beyond(&arr, beyond_margin(&arr, Some(&one), 0.01)));
        assert!(beyond(&cell(2.5, 1600, 32), m));
    }

    #[test]
    fn equal_waits_on_the_members_are_said_once() {
        let one = dev(vec![drive(1.0, 0, 7000, "all 16 dies", 1.0)]);
        let two = dev(vec![
            drive(1.0, 0, 185, "all 16 dies", 1.0),
            drive(1.0, 0, 185, "all 16 dies", 1.0),
        ]);
        let why = explain_gain(&one, &two);
        assert!(
            why[0].contains("against 185 us on each member"),
            "{}",
            why[0]
        );
    }

    #[test]
    fn a_buffer_still_filling_shows_as_flash_taking_in_less() {
        let one = dev(vec![drive(0.84, 0, 0, "all 16 dies", 1.0)]);
        let two = dev(vec![
            drive(0.76, 0, 0, "all 16 dies", 1.0),
            drive(0.76, 0, 0, "all 16 dies", 1.0),
        ]);
        let why = explain_gain(&one, &two);
        assert_eq!(why, ["each member's flash took in 76 % of the bytes written to it against 84 % on one drive: the rest still sat in its write buffer at the end of the point"]);
    }
}
