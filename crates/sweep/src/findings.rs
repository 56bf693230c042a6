//! Plain-language findings computed from a sweep's numbers, the way a review states them: the
//! best stripe for random and for sequential work (with its margin, ties called ties), the queue
//! depth where the array starts to pay off, where the gains level off, the all-round default;
//! and for alignment comparisons, per drive how much slower sector-aligned writes are, with the
//! reason the drive's controller gives.

use crate::analysis::Analysis;
use ssdlab_workload::{format_size, WorkloadSpec};

/// What the caller knows about a target that the numbers do not say (simulated drives: the
/// preset). The sweep crate knows no presets; the binary fills this in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetInfo {
    /// The target's label in the sweep.
    pub label: String,
    /// The preset's one-line description.
    pub description: Option<String>,
    /// What the FTL does with partial-page writes: "rmw" or "remap".
    pub unaligned: Option<String>,
    /// The preset's parameters, as text (the report's appendix).
    pub parameters: Option<String>,
    /// How far the preset can be trusted, when it was calibrated (one sentence).
    pub calibration: Option<String>,
}

/// A gain at or above this (as a ratio) means the array pays off.
const PAYS_OFF: f64 = 1.10;
/// Gains within this (ratio) of the highest gain count as levelled off.
const PLATEAU: f64 = 0.95;
/// Alignment costs less than this (ratio) count as "makes little difference".
const LITTLE: f64 = 1.10;

/// The reason a drive's unaligned-write policy gives, in words.
pub fn policy_reason(policy: &str) -> &'static str {
    match policy {
        "rmw" => "its controller read-modify-writes partial pages (reads the old page, merges, writes it whole)",
        "remap" => "its controller remaps sectors, so a partial page costs bookkeeping and leaves the rest of the unit where it was (merged later), not a read first",
        _ => "its controller's unaligned-write policy is not known",
    }
}

fn is_sequential(spec: Option<&WorkloadSpec>) -> bool {
    spec.is_some_and(|s| s.random_pct == 0)
}

impl Analysis {
    /// The spec of workload `name`.
    pub fn spec(&self, name: &str) -> Option<&WorkloadSpec> {
        self.workload_specs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    /// True when `name` is sequential (no random offsets): its numbers read best as MB/s.
    pub fn is_sequential(&self, name: &str) -> bool {
        is_sequential(self.spec(name))
    }

    /// Pairs of workloads that differ only in their offset alignment: (aligned to the block
    /// size, aligned to less), in sweep order.
    pub fn alignment_pairs(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (a, sa) in &self.workload_specs {
            if sa.align < sa.bs {
                continue;
            }
            for (b, sb) in &self.workload_specs {
                if sb.align >= sb.bs {
                    continue;
                }
                let mut x = sb.clone();
                x.align = sa.align;
                if x == *sa {
                    out.push((a.clone(), b.clone()));
                }
            }
        }
        out
    }

    /// The labels of the targets, in sweep order.
    pub fn target_labels(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for c in &self.cells {
            if !v.contains(&c.target_label) {
                v.push(c.target_label.clone());
            }
        }
        v
    }

    /// Findings of every kind the sweep supports.
    pub fn findings(&self, infos: &[TargetInfo]) -> Vec<String> {
        let mut out = self.stripe_findings();
        out.extend(self.alignment_findings(infos));
        for i in infos {
            if let Some(c) = &i.calibration {
                out.push(format!(
                    "{}: the simulated figures come from a calibrated model, {c}.",
                    i.label
                ));
            }
        }
        out.extend(self.caveats.iter().cloned());
        out
    }

    /// Per array target: the best stripe per workload, for random and sequential work, where
    /// the array pays off, where gains level off, and the all-round default.
    pub fn stripe_findings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in self.array_targets() {
            let base = self
                .cells
                .iter()
                .find(|c| c.target_label == t)
                .and_then(|c| c.baseline_label.clone());
            for b in self
                .best_per_workload
                .iter()
                .filter(|b| b.target_label == t)
            {
                let mut s = format!("{t}, {}: {}", b.workload, b.phrase());
                if let (Some(r), Some(bl)) = (b.ratio, &base) {
                    s.push_str(&format!(
                        "; {:+.0} % over {bl} (geometric mean over the QDs)",
                        (r - 1.0) * 100.0
                    ));
                }
                out.push(s + ".");
            }
            let (seq, rand): (Vec<String>, Vec<String>) = self
                .workloads
                .iter()
                .cloned()
                .partition(|w| self.is_sequential(w));
            for (kind, ws) in [("random", &rand), ("sequential", &seq)] {
                if ws.len() < 2 {
                    continue;
                }
                let mix: Vec<(String, f64)> = ws.iter().map(|w| (w.clone(), 1.0)).collect();
                if let Ok(recs) = self.recommend(&mix, None) {
                    for r in recs.iter().filter(|r| r.target_label == t) {
                        out.push(format!(
                            "{t}: for {kind} work ({}): {}{}.",
                            ws.join(", "),
                            r.phrase(),
                            r.ratio
                                .map(|x| format!("; {:+.0} % over one drive", (x - 1.0) * 100.0))
                                .unwrap_or_default(),
                        ));
                    }
                }
            }
            if base.is_some() {
                out.extend(self.payoff_findings(&t));
            }
            out.extend(self.limit_findings(&t));
            if base.is_some() {
                out.extend(self.beyond_findings(&t));
            }
            let all: Vec<(String, f64)> = self.workloads.iter().map(|w| (w.clone(), 1.0)).collect();
            if all.len() > 1 {
                if let Ok(recs) = self.recommend(&all, None) {
                    for r in recs.iter().filter(|r| r.target_label == t) {
                        out.push(format!(
                            "{t}: all-round default {} (every workload weighted equally: {}){}.",
                            format_size(r.stripe),
                            r.phrase(),
                            r.ratio
                                .map(|x| format!("; {:+.0} % over one drive", (x - 1.0) * 100.0))
                                .unwrap_or_default(),
                        ));
                    }
                }
            }
        }
        out
    }

    /// Per workload: the first QD from which the best stripe gains at least +10 % at every
    /// higher QD, and the QD from which the gain stays within 5 % of its highest.
    fn payoff_findings(&self, t: &str) -> Vec<String> {
        let mut out = Vec::new();
        for w in &self.workloads {
            // Best gain per QD over the stripes.
            let gains: Vec<(u32, f64, u64)> = self
                .qds
                .iter()
                .filter_map(|&q| {
                    self.cells
                        .iter()
                        .filter(|c| c.target_label == t && &c.workload == w && c.qd == q)
                        .filter_map(|c| Some((c.ratio?, c.stripe?)))
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .map(|(r, s)| (q, r, s))
                })
                .collect();
            if gains.is_empty() {
                continue;
            }
            let pays = (0..gains.len()).find(|&i| gains[i..].iter().all(|g| g.1 >= PAYS_OFF));
            let top = gains.iter().map(|g| g.1).fold(0.0, f64::max);
            let level = (0..gains.len())
                .find(|&i| gains[i..].iter().all(|g| g.1 >= top * PLATEAU))
                .unwrap_or(gains.len() - 1);
            let pct = |r: f64| format!("{:+.0} %", (r - 1.0) * 100.0);
            let mut s = format!("{t}, {w}: ");
            match pays {
                Some(0) => s.push_str(&format!(
                    "the array pays off from the lowest QD measured (QD {}: {} with {})",
                    gains[0].0,
                    pct(gains[0].1),
                    format_size(gains[0].2)
                )),
                Some(i) => s.push_str(&format!(
                    "the array starts to pay off at QD {} ({} with {}; {} at QD {})",
                    gains[i].0,
                    pct(gains[i].1),
                    format_size(gains[i].2),
                    pct(gains[i - 1].1),
                    gains[i - 1].0
                )),
                None if top < PAYS_OFF => s.push_str(&format!(
                    "the array never gains 10 % or more (best {} at QD {})",
                    pct(top),
                    gains.iter().find(|g| g.1 == top).map_or(0, |g| g.0)
                )),
                None => s.push_str(&format!(
                    "the array gains 10 % or more only at some QDs, not from one QD on (best {} at QD {})",
                    pct(top),
                    gains.iter().find(|g| g.1 == top).map_or(0, |g| g.0)
                )),
            }
            let last = gains[gains.len() - 1];
            if level + 1 < gains.len() {
                s.push_str(&format!(
                    "; gains level off from QD {} ({} there, {} at QD {})",
                    gains[level].0,
                    pct(gains[level].1),
                    pct(last.1),
                    last.0
                ));
            } else if gains.len() > 1 && last.1 < top * PLATEAU {
                let peak = gains.iter().find(|g| g.1 == top).unwrap_or(&last);
                s.push_str(&format!(
                    "; gains peak at QD {} ({}) and fall to {} at QD {}",
                    peak.0,
                    pct(peak.1),
                    pct(last.1),
                    last.0
                ));
            } else if gains.len() > 1 {
                s.push_str(&format!(
                    "; gains still grow at the highest QD measured ({} at QD {})",
                    pct(last.1),
                    last.0
                ));
            }
            out.push(s + ".");
        }
        out
    }

    /// MB/s of (target, workload, qd) for a single target (no stripe).
    fn mb_s(&self, target: &str, workload: &str, qd: u32) -> Option<f64> {
        self.cells
            .iter()
            .find(|c| c.target_label == target && c.workload == workload && c.qd == qd)
            .map(|c| c.mb_s)
    }

    /// Per target and QD: how much slower the less-aligned workload is, and why (from the
    /// target's unaligned-write policy); then who is fastest each way.
    pub fn alignment_findings(&self, infos: &[TargetInfo]) -> Vec<String> {
        let mut out = Vec::new();
        for (aligned, unaligned) in self.alignment_pairs() {
            let (Some(sa), Some(su)) = (self.spec(&aligned), self.spec(&unaligned)) else {
                continue;
            };
            let au = format_size(su.align).replace(' ', "-");
            let aa = format_size(sa.align).replace(' ', "-");
            for &q in &self.qds {
                let at_qd = if self.qds.len() > 1 {
                    format!(" at QD {q}")
                } else {
                    String::new()
                };
                let mut rows: Vec<(String, f64, f64)> = Vec::new();
                for t in self.target_labels() {
                    let (Some(a), Some(u)) =
                        (self.mb_s(&t, &aligned, q), self.mb_s(&t, &unaligned, q))
                    else {
                        continue;
                    };
                    rows.push((t.clone(), a, u));
                    let why = infos
                        .iter()
                        .find(|i| i.label == t)
                        .and_then(|i| i.unaligned.as_deref())
                        .map(policy_reason);
                    let ratio = if u > 0.0 { a / u } else { f64::INFINITY };
                    let mut s = if ratio >= LITTLE {
                        format!(
                            "{t}: {au}-aligned writes are {ratio:.1}x slower than {aa}-aligned{at_qd} ({u:.1} vs {a:.1} MB/s)"
                        )
                    } else if ratio > 1.0 / LITTLE {
                        format!(
                            "{t}: alignment makes little difference{at_qd}: {au}-aligned writes run at {:.0} % of the {aa}-aligned speed ({u:.1} vs {a:.1} MB/s)",
                            100.0 / ratio
                        )
                    } else {
                        format!(
                            "{t}: {au}-aligned writes are {:.1}x faster than {aa}-aligned{at_qd} ({u:.1} vs {a:.1} MB/s)",
                            1.0 / ratio
                        )
                    };
                    let policy = infos
                        .iter()
                        .find(|i| i.label == t)
                        .and_then(|i| i.unaligned.as_deref());
                    match (policy, why) {
                        // The data and the policy agree.
                        (Some("rmw"), Some(w)) if ratio >= LITTLE => s.push_str(&format!(": {w}")),
                        (Some("remap"), Some(w)) if ratio < LITTLE => s.push_str(&format!(": {w}")),
                        (Some("rmw"), Some(_)) => s.push_str(
                            ": its controller read-modify-writes partial pages, but the cost does not show in this run (its write cache absorbs a short run, or something else limits it first; the classic test ran 3 minutes: --time 3m)",
                        ),
                        (Some("remap"), Some(_)) => s.push_str(
                            ": its controller remaps sectors, yet the sector-aligned writes still cost more here (remapping bookkeeping per command, and units left in two places that reads and GC must merge)",
                        ),
                        (_, Some(w)) => s.push_str(&format!(": {w}")),
                        (_, None) => {}
                    }
                    let limit = |w: &str| {
                        self.cells
                            .iter()
                            .find(|c| c.target_label == t && c.workload == w && c.qd == q)
                            .and_then(|c| c.device.as_ref())
                            .and_then(crate::device::DeviceSummary::limit)
                    };
                    if let (Some(lu), Some(la)) = (limit(&unaligned), limit(&aligned)) {
                        s.push_str(&format!(
                            ". What limits it: {au}-aligned writes: {lu}; {aa}-aligned: {la}"
                        ));
                    }
                    out.push(s + ".");
                }
                if rows.len() > 1 {
                    let fastest = |f: &dyn Fn(&(String, f64, f64)) -> f64| {
                        let mut v = rows.clone();
                        v.sort_by(|x, y| f(y).total_cmp(&f(x)));
                        (v[0].0.clone(), f(&v[0]), v[1].0.clone(), f(&v[1]))
                    };
                    let (n1, v1, n2, v2) = fastest(&|r| r.2);
                    out.push(format!(
                        "Fastest {au}-aligned{at_qd}: {n1} ({v1:.1} MB/s), then {n2} ({v2:.1} MB/s)."
                    ));
                    let (n1, v1, n2, v2) = fastest(&|r| r.1);
                    out.push(format!(
                        "Fastest {aa}-aligned{at_qd}: {n1} ({v1:.1} MB/s), then {n2} ({v2:.1} MB/s)."
                    ));
                }
            }
        }
        out
    }
}
