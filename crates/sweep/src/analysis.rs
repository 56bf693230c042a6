//! Gains over the single-drive baseline, best stripe per workload (and per workload × QD), and a
//! stripe recommendation for a workload mix. Works on what the store holds, so a partial sweep can
//! be analysed too (only complete comparisons are used).

use crate::spec::nearest;
use crate::SweepError;
use serde::Serialize;
use ssdlab_report::csv::PointCsvRow;
use ssdlab_store::{PointStatus, ResultSummary, StoredPoint};
use std::collections::HashMap;

/// Repeats of one (target, stripe, workload, QD) averaged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub target_label: String,
    pub drives: u32,
    pub stripe: Option<u64>,
    pub workload: String,
    pub qd: u32,
    pub baseline: bool,
    pub baseline_label: Option<String>,
    /// Finished repeats averaged here.
    pub repeats: usize,
    /// True for simulated points (deterministic: a tie is within 1 %).
    pub simulated: bool,
    /// Lowest and highest IOPS of the repeats (the spread that decides ties on real targets).
    pub iops_min: f64,
    pub iops_max: f64,
    /// Means over the repeats.
    pub iops: f64,
    pub mb_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: f64,
    /// Lowest and highest of the repeats for MB/s and the latencies (the report's error bars).
    pub mb_s_min: f64,
    pub mb_s_max: f64,
    pub lat_mean_min_ns: f64,
    pub lat_mean_max_ns: f64,
    pub lat_p99_min_ns: f64,
    pub lat_p99_max_ns: f64,
    /// Mean IOPS of the baseline at the same workload and QD.
    pub baseline_iops: Option<f64>,
    /// `iops / baseline_iops`.
    pub ratio: Option<f64>,
    /// `(ratio - 1) * 100`.
    pub gain_pct: Option<f64>,
    /// Simulated points: what the drives did (the first repeat's counters), when attached
    /// ([`Analysis::attach_devices`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<crate::device::DeviceSummary>,
}

impl Cell {
    /// The first finished repeat (lowest repeat number) of this cell among `points`.
    pub(crate) fn first_repeat<'a>(
        &self,
        points: impl IntoIterator<Item = &'a StoredPoint>,
    ) -> Option<&'a StoredPoint> {
        points
            .into_iter()
            .filter(|p| p.status == PointStatus::Done)
            .filter(|p| {
                let r = &p.record;
                r.target_label == self.target_label
                    && r.stripe == self.stripe
                    && r.workload_name == self.workload
                    && r.qd == self.qd
            })
            .min_by_key(|p| p.record.repeat)
    }
}

/// The best stripe of an array target for one workload (over all QDs, or at one QD).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestStripe {
    pub target_label: String,
    pub workload: String,
    /// None: geometric mean over every QD measured for all stripes.
    pub qd: Option<u32>,
    pub stripe: u64,
    /// Geometric mean of the IOPS (over the QDs considered).
    pub iops: f64,
    /// Geometric mean of the gain ratio over the baseline, when there is a baseline.
    pub ratio: Option<f64>,
    /// Second best stripe and its score relative to the best (< 1).
    pub runner_up: Option<(u64, f64)>,
    /// Every stripe that ties with the highest score (within `tie_margin`), highest first;
    /// `stripe` is the conventional default among them ([`CONVENTIONAL_STRIPES`]) or else the
    /// highest.
    pub tied: Vec<u64>,
    /// What counts as a tie, as a fraction of the score: 1 % on simulated points, the spread of
    /// the repeats on real ones (at least 1 %).
    pub tie_margin: f64,
    /// The best stripe outside the tie and how far the best stripe (the top of the tie) is ahead
    /// of it, as a fraction: always more than `tie_margin` (None when every stripe ties or there
    /// is only one).
    pub margin: Option<(u64, f64)>,
    /// Number of stripes compared.
    pub compared: usize,
    /// Set when the stability check ([`Analysis::attach_check`]) found other stripes best:
    /// they are in `tied` too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unstable: Option<Unstable>,
}

/// What a stability check found where it disagreed with a pick: the points of the stripes
/// close to the best run again, longer and with another seed (simulated points are
/// deterministic, so their repeats cannot show how far a pick rests on the point's length or
/// its random stream). A pick it does not confirm is a tie of both answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unstable {
    /// How the check ran (`2 s per point and another seed`).
    pub check: String,
    /// The stripes the sweep's own points found best (its tie).
    pub first: Vec<u64>,
    /// The stripes the check found best (its own tie, within the same margin).
    pub best: Vec<u64>,
}

impl BestStripe {
    /// How the pick reads ([`pick_phrase`]).
    pub fn phrase(&self) -> String {
        pick_phrase(
            self.stripe,
            &self.tied,
            self.compared,
            self.tie_margin,
            self.margin,
            self.unstable.as_ref(),
        )
    }
}

impl MixRecommendation {
    /// How the pick reads ([`pick_phrase`]).
    pub fn phrase(&self) -> String {
        pick_phrase(
            self.stripe,
            &self.tied,
            self.ranking.len(),
            self.tie_margin,
            self.margin,
            self.unstable.as_ref(),
        )
    }
}

/// How far behind the best a stripe may be for the stability check to run it again: 5 %.
pub const CHECK_WINDOW: f64 = 0.05;

/// Stripe sizes preferred among tied ones, most conventional first: 16 KiB (Intel RST's RAID 0
/// default on the chipsets of the classic reviews), then 64 KiB and 128 KiB (later RST
/// defaults), then 512 KiB (mdadm's default chunk).
pub const CONVENTIONAL_STRIPES: [u64; 4] = [16 << 10, 64 << 10, 128 << 10, 512 << 10];

/// Picks among `scores` (stripe, score), highest score first: the stripes within `tie` of the
/// highest tie; the conventional default among them wins, else the highest. Returns (chosen,
/// tied stripes smallest first, the best stripe outside the tie and the best score's margin
/// over it). The margin is the top's, not the chosen one's: ties are not transitive, so a
/// chosen stripe at the bottom of the tie may be less than the tie margin ahead of the next.
pub type Pick = (u64, Vec<u64>, Option<(u64, f64)>);

/// See [`Pick`].
pub fn pick_with_ties(scores: &[(u64, f64)], tie: f64) -> Option<Pick> {
    let mut v: Vec<(u64, f64)> = scores.to_vec();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top = v.first()?.1;
    let within = |x: f64| top <= 0.0 || x >= top * (1.0 - tie);
    let mut tied: Vec<u64> = v.iter().filter(|s| within(s.1)).map(|s| s.0).collect();
    let chosen = CONVENTIONAL_STRIPES
        .iter()
        .copied()
        .find(|c| tied.contains(c))
        .unwrap_or(tied[0]);
    tied.sort_unstable();
    let margin = v
        .iter()
        .find(|s| !within(s.1))
        .filter(|s| s.1 > 0.0)
        .map(|s| (s.0, top / s.1 - 1.0));
    Some((chosen, tied, margin))
}

/// `8 KiB`, `8 KiB and 16 KiB`, `8 KiB, 16 KiB and 32 KiB`.
pub fn list_sizes(v: &[u64]) -> String {
    let s: Vec<String> = v.iter().map(|x| ssdlab_workload::format_size(*x)).collect();
    match s.len() {
        0 => String::new(),
        1 => s[0].clone(),
        n => format!("{} and {}", s[..n - 1].join(", "), s[n - 1]),
    }
}

/// The recommended stripe of one array target for a workload mix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixRecommendation {
    pub target_label: String,
    /// The mix, weights normalised to sum 1.
    pub mix: Vec<(String, f64)>,
    pub qd: Option<u32>,
    pub stripe: u64,
    /// Weighted geometric mean of the per-workload gain ratios (None without a baseline).
    pub ratio: Option<f64>,
    /// Every stripe: (stripe, score relative to the best, weighted ratio).
    pub ranking: Vec<(u64, f64, Option<f64>)>,
    /// Per workload of the mix at the chosen stripe: (workload, weight, ratio).
    pub per_workload: Vec<(String, f64, Option<f64>)>,
    /// Stripes that tie with the best mix score (see [`BestStripe::tied`]).
    pub tied: Vec<u64>,
    /// What counts as a tie (fraction of the score).
    pub tie_margin: f64,
    /// The best stripe outside the tie and how far the chosen one is ahead of it (fraction).
    pub margin: Option<(u64, f64)>,
    /// A sentence explaining the choice.
    pub explanation: String,
    /// See [`BestStripe::unstable`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unstable: Option<Unstable>,
}

/// The analysis of one sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub sweep: String,
    /// Points of the current sweep file, and how many of them are finished.
    pub points: usize,
    pub done: usize,
    pub failed: usize,
    /// Points of earlier versions of the sweep file (ignored).
    pub stale: usize,
    /// Workloads and QDs in sweep order.
    pub workloads: Vec<String>,
    /// The workload of each name (as its first point ran it).
    pub workload_specs: Vec<(String, ssdlab_workload::WorkloadSpec)>,
    pub qds: Vec<u32>,
    pub cells: Vec<Cell>,
    pub best_per_workload: Vec<BestStripe>,
    pub best_per_workload_qd: Vec<BestStripe>,
    /// What the numbers cannot say about themselves (the models' standing against published
    /// findings), given by the caller; the last findings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    /// The stability check's points (another sweep: the close stripes again, longer, another
    /// seed) and how they ran, when attached ([`Analysis::attach_check`]).
    #[serde(skip)]
    pub check: Option<(Box<Analysis>, String)>,
}

/// (stripe, geometric-mean IOPS, geometric-mean gain ratio).
type StripeScore = (u64, f64, Option<f64>);

fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    if v.iter().any(|x| *x <= 0.0 || !x.is_finite()) {
        return 0.0;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

fn push_unique<T: PartialEq + Clone>(v: &mut Vec<T>, x: &T) {
    if !v.contains(x) {
        v.push(x.clone());
    }
}

impl Analysis {
    /// Analyses the stored points of one sweep.
    pub fn new(sweep: &str, points: &[StoredPoint]) -> Analysis {
        let live: Vec<&StoredPoint> = points
            .iter()
            .filter(|p| p.status != PointStatus::Stale)
            .collect();
        let mut workloads = Vec::new();
        let mut workload_specs: Vec<(String, ssdlab_workload::WorkloadSpec)> = Vec::new();
        let mut qds = Vec::new();
        let mut order: Vec<(String, Option<u64>, String, u32)> = Vec::new();
        let mut groups: HashMap<(String, Option<u64>, String, u32), Vec<&StoredPoint>> =
            HashMap::new();
        let mut sorted = live.clone();
        sorted.sort_by_key(|p| p.record.seq);
        for p in &sorted {
            let r = &p.record;
            if !workloads.contains(&r.workload_name) {
                if let Ok(spec) = serde_json::from_str(&r.workload_json) {
                    workload_specs.push((r.workload_name.clone(), spec));
                }
            }
            push_unique(&mut workloads, &r.workload_name);
            push_unique(&mut qds, &r.qd);
            if p.status != PointStatus::Done || p.result.is_none() {
                continue;
            }
            let k = (
                r.target_label.clone(),
                r.stripe,
                r.workload_name.clone(),
                r.qd,
            );
            if !groups.contains_key(&k) {
                order.push(k.clone());
            }
            groups.entry(k).or_default().push(p);
        }
        let mut cells: Vec<Cell> = order
            .iter()
            .map(|k| {
                let g = &groups[k];
                let n = g.len() as f64;
                let mean =
                    |f: &dyn Fn(&StoredPoint) -> f64| g.iter().map(|p| f(p)).sum::<f64>() / n;
                let r0 = &g[0].record;
                let iops = || g.iter().map(|p| p.result.as_ref().map_or(0.0, |r| r.iops));
                // (lowest, highest) of a figure over the repeats
                let range = |f: &dyn Fn(&ResultSummary) -> f64| {
                    let v = || g.iter().map(|p| p.result.as_ref().map_or(0.0, f));
                    (
                        v().fold(f64::INFINITY, f64::min),
                        v().fold(f64::NEG_INFINITY, f64::max),
                    )
                };
                let mb_s = range(&|r| r.mb_s);
                let lat_mean = range(&|r| r.lat_mean_ns);
                let lat_p99 = range(&|r| r.lat_p99_ns);
                Cell {
                    target_label: k.0.clone(),
                    drives: r0.drives,
                    stripe: k.1,
                    workload: k.2.clone(),
                    qd: k.3,
                    baseline: r0.baseline,
                    baseline_label: r0.baseline_label.clone(),
                    repeats: g.len(),
                    simulated: r0.target_json.contains(r#""kind":"sim""#),
                    iops_min: iops().fold(f64::INFINITY, f64::min),
                    iops_max: iops().fold(0.0, f64::max),
                    iops: mean(&|p| p.result.as_ref().map_or(0.0, |r| r.iops)),
                    mb_s: mean(&|p| p.result.as_ref().map_or(0.0, |r| r.mb_s)),
                    lat_mean_ns: mean(&|p| p.result.as_ref().map_or(0.0, |r| r.lat_mean_ns)),
                    lat_p99_ns: mean(&|p| p.result.as_ref().map_or(0.0, |r| r.lat_p99_ns)),
                    mb_s_min: mb_s.0,
                    mb_s_max: mb_s.1,
                    lat_mean_min_ns: lat_mean.0,
                    lat_mean_max_ns: lat_mean.1,
                    lat_p99_min_ns: lat_p99.0,
                    lat_p99_max_ns: lat_p99.1,
                    baseline_iops: None,
                    ratio: None,
                    gain_pct: None,
                    device: None,
                }
            })
            .collect();
        let base: HashMap<(String, String, u32), f64> = cells
            .iter()
            .filter(|c| c.baseline)
            .map(|c| ((c.target_label.clone(), c.workload.clone(), c.qd), c.iops))
            .collect();
        for c in cells.iter_mut().filter(|c| !c.baseline) {
            if let Some(bl) = &c.baseline_label {
                if let Some(&b) = base.get(&(bl.clone(), c.workload.clone(), c.qd)) {
                    c.baseline_iops = Some(b);
                    if b > 0.0 {
                        c.ratio = Some(c.iops / b);
                        c.gain_pct = Some((c.iops / b - 1.0) * 100.0);
                    }
                }
            }
        }
        let mut a = Analysis {
            sweep: sweep.to_string(),
            points: live.len(),
            done: live
                .iter()
                .filter(|p| p.status == PointStatus::Done)
                .count(),
            failed: live
                .iter()
                .filter(|p| p.status == PointStatus::Failed)
                .count(),
            stale: points.len() - live.len(),
            workloads,
            workload_specs,
            qds,
            cells,
            best_per_workload: Vec::new(),
            best_per_workload_qd: Vec::new(),
            caveats: Vec::new(),
            check: None,
        };
        a.pick_best();
        a
    }

    /// Fills the best stripes per workload (and per workload × QD).
    fn pick_best(&mut self) {
        let a = self;
        a.best_per_workload.clear();
        a.best_per_workload_qd.clear();
        for t in a.array_targets() {
            for w in &a.workloads {
                if let Some(b) = a.best(&t, w, None) {
                    a.best_per_workload.push(b);
                }
                for &q in &a.qds {
                    if let Some(b) = a.best(&t, w, Some(q)) {
                        a.best_per_workload_qd.push(b);
                    }
                }
            }
        }
    }

    /// Attaches a stability check: the analysis of the same sweep's close stripes run again
    /// (`how`: `2 s per point and another seed`). Every pick the check does not confirm — its
    /// best stripes (within the tie margin) not all among the pick's ties — becomes a tie of
    /// both answers ([`BestStripe::unstable`]).
    pub fn attach_check(&mut self, check: Analysis, how: String) {
        self.check = Some((Box::new(check), how));
        self.pick_best();
    }

    /// The stripes of `target` within [`CHECK_WINDOW`] of the best for `workload` (over every
    /// QD), best first: what a stability check runs again. Empty when every stripe ties (no
    /// check can make the pick more of a tie), when no other stripe is that close, or when
    /// nothing is comparable.
    pub fn contenders(&self, target: &str, workload: &str) -> Vec<u64> {
        let mut scores = self.stripe_scores(target, workload, None);
        scores.sort_by(|a, b| b.1.total_cmp(&a.1));
        let Some(top) = scores.first().map(|s| s.1) else {
            return Vec::new();
        };
        let tie = self.tie_margin(target, &[workload], None);
        let plain: Vec<(u64, f64)> = scores.iter().map(|s| (s.0, s.1)).collect();
        let close: Vec<u64> = scores
            .iter()
            .filter(|s| s.1 >= top * (1.0 - CHECK_WINDOW))
            .map(|s| s.0)
            .collect();
        match pick_with_ties(&plain, tie) {
            // one close stripe alone cannot lose its lead to another
            Some((_, tied, _)) if tied.len() < scores.len() && close.len() > 1 => close,
            _ => Vec::new(),
        }
    }

    /// Labels of targets that have stripes (arrays), in sweep order.
    pub fn array_targets(&self) -> Vec<String> {
        let mut v = Vec::new();
        for c in self.cells.iter().filter(|c| c.stripe.is_some()) {
            push_unique(&mut v, &c.target_label);
        }
        v
    }

    /// Stripes measured for a target, in sweep order.
    pub fn stripes(&self, target: &str) -> Vec<u64> {
        let mut v = Vec::new();
        for c in self.cells.iter().filter(|c| c.target_label == target) {
            if let Some(s) = c.stripe {
                push_unique(&mut v, &s);
            }
        }
        v
    }

    /// The cell of (target, stripe, workload, qd).
    pub fn cell(
        &self,
        target: &str,
        stripe: Option<u64>,
        workload: &str,
        qd: u32,
    ) -> Option<&Cell> {
        self.cells.iter().find(|c| {
            c.target_label == target && c.stripe == stripe && c.workload == workload && c.qd == qd
        })
    }

    /// Per stripe: (geomean IOPS, geomean ratio) over the QDs measured for every stripe (and the
    /// baseline, for the ratio). None when nothing is comparable.
    fn stripe_scores(&self, target: &str, workload: &str, qd: Option<u32>) -> Vec<StripeScore> {
        let stripes = self.stripes(target);
        let qds: Vec<u32> = self
            .qds
            .iter()
            .copied()
            .filter(|q| qd.is_none_or_eq(*q))
            .filter(|q| {
                stripes
                    .iter()
                    .all(|s| self.cell(target, Some(*s), workload, *q).is_some())
            })
            .collect();
        if qds.is_empty() {
            return Vec::new();
        }
        let with_ratio = qds.iter().all(|q| {
            stripes.iter().all(|s| {
                self.cell(target, Some(*s), workload, *q)
                    .and_then(|c| c.ratio)
                    .is_some()
            })
        });
        stripes
            .iter()
            .map(|s| {
                let cells: Vec<&Cell> = qds
                    .iter()
                    .filter_map(|q| self.cell(target, Some(*s), workload, *q))
                    .collect();
                let iops = geomean(&cells.iter().map(|c| c.iops).collect::<Vec<_>>());
                let ratio = with_ratio
                    .then(|| geomean(&cells.iter().filter_map(|c| c.ratio).collect::<Vec<_>>()));
                (*s, iops, ratio)
            })
            .collect()
    }

    /// What counts as a tie among the stripes of `target` for `workloads` at `qd` (all QDs for
    /// None): 1 %, or the largest relative spread of the repeats of a real point when wider.
    pub fn tie_margin(&self, target: &str, workloads: &[&str], qd: Option<u32>) -> f64 {
        self.cells
            .iter()
            .filter(|c| c.target_label == target && c.stripe.is_some())
            .filter(|c| workloads.contains(&c.workload.as_str()) && qd.is_none_or_eq(c.qd))
            .filter(|c| !c.simulated && c.repeats > 1 && c.iops > 0.0)
            .map(|c| (c.iops_max - c.iops_min) / c.iops)
            .fold(0.01, f64::max)
    }

    fn best(&self, target: &str, workload: &str, qd: Option<u32>) -> Option<BestStripe> {
        let mut scores = self.stripe_scores(target, workload, qd);
        if scores.is_empty() {
            return None;
        }
        scores.sort_by(|a, b| b.1.total_cmp(&a.1));
        let tie = self.tie_margin(target, &[workload], qd);
        let plain: Vec<(u64, f64)> = scores.iter().map(|s| (s.0, s.1)).collect();
        let checked = self.check.as_ref().map(|(c, how)| {
            let v: Vec<(u64, f64)> = c
                .stripe_scores(target, workload, qd)
                .iter()
                .map(|s| (s.0, s.1))
                .collect();
            (v, how.as_str())
        });
        let (chosen, tied, margin, unstable) = pick_checked(&plain, tie, checked)?;
        let best = *scores.iter().find(|s| s.0 == chosen)?;
        let top = scores[0].1;
        Some(BestStripe {
            target_label: target.to_string(),
            workload: workload.to_string(),
            qd,
            stripe: best.0,
            iops: best.1,
            ratio: best.2,
            runner_up: scores.iter().find(|s| s.0 != chosen).map(|s| {
                (
                    s.0,
                    if top > 0.0 {
                        s.1 / best.1.max(1e-12)
                    } else {
                        0.0
                    },
                )
            }),
            tied,
            tie_margin: tie,
            margin,
            compared: scores.len(),
            unstable,
        })
    }

    /// Recommends a stripe per array target for a workload mix (weights need not sum to 1):
    /// the stripe with the highest weighted geometric mean of per-workload scores, each the
    /// geometric mean over the QDs (or at `qd` only).
    pub fn recommend(
        &self,
        mix: &[(String, f64)],
        qd: Option<u32>,
    ) -> Result<Vec<MixRecommendation>, SweepError> {
        if mix.is_empty() {
            return Err(SweepError::Mix("the mix is empty".into()));
        }
        for (w, _) in mix {
            if !self.workloads.contains(w) {
                let hint = nearest(w, self.workloads.iter().map(String::as_str))
                    .map(|n| format!("; did you mean {n}?"))
                    .unwrap_or_else(|| format!(" (the sweep has {})", self.workloads.join(", ")));
                return Err(SweepError::Mix(format!(
                    "workload '{w}' is not in sweep '{}'{hint}",
                    self.sweep
                )));
            }
        }
        if let Some(q) = qd {
            if !self.qds.contains(&q) {
                return Err(SweepError::Mix(format!(
                    "QD {q} is not in sweep '{}' (it has {:?})",
                    self.sweep, self.qds
                )));
            }
        }
        let total: f64 = mix.iter().map(|m| m.1).sum();
        let mix: Vec<(String, f64)> = mix.iter().map(|(w, x)| (w.clone(), x / total)).collect();
        let mut out = Vec::new();
        for t in self.array_targets() {
            let per: Vec<(String, f64, Vec<StripeScore>)> = mix
                .iter()
                .map(|(w, x)| (w.clone(), *x, self.stripe_scores(&t, w, qd)))
                .collect();
            if per.iter().any(|p| p.2.is_empty()) {
                continue;
            }
            let rank = mix_rank(&per, &self.stripes(&t));
            let names: Vec<&str> = mix.iter().map(|m| m.0.as_str()).collect();
            let tie = self.tie_margin(&t, &names, qd);
            let plain: Vec<(u64, f64)> = rank.iter().map(|r| (r.0, r.1)).collect();
            // the check's rank over its stripes: a workload it did not run again (every stripe
            // tied there) counts with the sweep's own scores of those stripes
            let checked = self.check.as_ref().map(|(c, how)| {
                let stripes = c.stripes(&t);
                let per: Vec<(String, f64, Vec<StripeScore>)> = per
                    .iter()
                    .map(|(w, x, sc)| {
                        let own = c.stripe_scores(&t, w, qd);
                        let sc = if own.is_empty() {
                            sc.iter()
                                .filter(|s| stripes.contains(&s.0))
                                .copied()
                                .collect()
                        } else {
                            own
                        };
                        (w.clone(), *x, sc)
                    })
                    .collect();
                let v: Vec<(u64, f64)> = if per.iter().any(|p| p.2.is_empty()) {
                    Vec::new()
                } else {
                    mix_rank(&per, &stripes)
                        .iter()
                        .map(|r| (r.0, r.1))
                        .collect()
                };
                (v, how.as_str())
            });
            let Some((chosen, tied, margin, unstable)) = pick_checked(&plain, tie, checked) else {
                continue;
            };
            let best = *rank.iter().find(|r| r.0 == chosen).unwrap_or(&rank[0]);
            let per_workload: Vec<(String, f64, Option<f64>)> = per
                .iter()
                .map(|(w, x, sc)| {
                    (
                        w.clone(),
                        *x,
                        sc.iter().find(|v| v.0 == best.0).and_then(|v| v.2),
                    )
                })
                .collect();
            let fs = ssdlab_workload::format_size;
            let mut why = format!("{t}: stripe {}", fs(best.0));
            if let Some(r) = best.2 {
                why.push_str(&format!(
                    " gives {:.2}x the baseline for this mix ({:+.0}%)",
                    r,
                    (r - 1.0) * 100.0
                ));
            } else {
                why.push_str(" scores best for this mix (no baseline to compare with)");
            }
            let parts: Vec<String> = per_workload
                .iter()
                .map(|(w, x, r)| match r {
                    Some(r) => format!("{w} {:.0}% weight at {:.2}x", x * 100.0, r),
                    None => format!("{w} {:.0}% weight", x * 100.0),
                })
                .collect();
            why.push_str(&format!(": {}", parts.join(", ")));
            why.push_str(&format!(
                "; {}",
                pick_phrase(best.0, &tied, rank.len(), tie, margin, unstable.as_ref())
            ));
            if let Some(q) = qd {
                why.push_str(&format!(" (at QD{q})"));
            } else {
                why.push_str(" (geometric mean over all QDs)");
            }
            out.push(MixRecommendation {
                target_label: t.clone(),
                mix: mix.clone(),
                qd,
                stripe: best.0,
                ratio: best.2,
                ranking: rank,
                per_workload,
                tied,
                tie_margin: tie,
                margin,
                explanation: why,
                unstable,
            });
        }
        Ok(out)
    }

    /// One CSV row per finished point; gains against the baseline's mean over repeats.
    pub fn csv_rows(&self, points: &[StoredPoint]) -> Vec<PointCsvRow> {
        let mut pts: Vec<&StoredPoint> = points
            .iter()
            .filter(|p| p.status == PointStatus::Done && p.result.is_some())
            .collect();
        pts.sort_by_key(|p| p.record.seq);
        pts.iter()
            .map(|p| {
                let r = &p.record;
                let res = p.result.as_ref().expect("filtered");
                let base = if r.baseline {
                    None
                } else {
                    self.cells
                        .iter()
                        .find(|c| {
                            c.baseline
                                && Some(&c.target_label) == r.baseline_label.as_ref()
                                && c.workload == r.workload_name
                                && c.qd == r.qd
                        })
                        .map(|c| c.iops)
                };
                PointCsvRow {
                    sweep: self.sweep.clone(),
                    target: r.target_label.clone(),
                    drives: r.drives,
                    stripe_bytes: r.stripe,
                    workload: r.workload_name.clone(),
                    qd: r.qd,
                    repeat: r.repeat,
                    iops: res.iops,
                    mb_s: res.mb_s,
                    lat_mean_us: res.lat_mean_ns / 1e3,
                    lat_p99_us: res.lat_p99_ns / 1e3,
                    gain_pct: base
                        .filter(|b| *b > 0.0)
                        .map(|b| (res.iops / b - 1.0) * 100.0),
                }
            })
            .collect()
    }
}

/// Per stripe of `stripes`: the weighted geometric mean of its per-workload IOPS normalised
/// by the workload's best stripe (so workloads with large IOPS do not dominate; the same
/// ranking as the weighted ratio) relative to the best stripe's, and its weighted geometric
/// mean gain ratio; best first. `per`: (workload, weight, every stripe's score).
fn mix_rank(
    per: &[(String, f64, Vec<StripeScore>)],
    stripes: &[u64],
) -> Vec<(u64, f64, Option<f64>)> {
    let with_ratio = per.iter().all(|p| p.2.iter().all(|s| s.2.is_some()));
    let mut rank: Vec<(u64, f64, Option<f64>)> = stripes
        .iter()
        .filter_map(|s| {
            let mut ln_score = 0.0;
            let mut ln_ratio = 0.0;
            for (_, x, sc) in per {
                let best = sc.iter().map(|v| v.1).fold(0.0, f64::max);
                let me = sc.iter().find(|v| v.0 == *s)?;
                ln_score += x * (me.1 / best).max(1e-12).ln();
                ln_ratio += x * me.2.unwrap_or(1.0).max(1e-12).ln();
            }
            Some((*s, ln_score.exp(), with_ratio.then(|| ln_ratio.exp())))
        })
        .collect();
    rank.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top = rank.first().map_or(0.0, |r| r.1);
    rank.into_iter()
        .map(|(s, sc, r)| (s, if top > 0.0 { sc / top } else { 0.0 }, r))
        .collect()
}

/// A [`Pick`] and what the stability check found against it.
pub type CheckedPick = (u64, Vec<u64>, Option<(u64, f64)>, Option<Unstable>);

/// [`pick_with_ties`] on `scores`, then against a stability check's scores of the stripes it
/// ran again (`checked`: scores and how the check ran): where the check's best stripes (within
/// `tie`) are not all tied in the pick, the tie becomes both answers — the conventional
/// default among them is picked, else the highest score — and the margin is the lead of the
/// tie's top over the best stripe outside it.
pub fn pick_checked(
    scores: &[(u64, f64)],
    tie: f64,
    checked: Option<(Vec<(u64, f64)>, &str)>,
) -> Option<CheckedPick> {
    let (chosen, tied, margin) = pick_with_ties(scores, tie)?;
    let Some((check, how)) = checked else {
        return Some((chosen, tied, margin, None));
    };
    let Some((_, best, _)) = pick_with_ties(&check, tie) else {
        return Some((chosen, tied, margin, None));
    };
    if best.iter().all(|s| tied.contains(s)) {
        return Some((chosen, tied, margin, None));
    }
    let first = tied.clone();
    let mut all = tied;
    for s in &best {
        push_unique(&mut all, s);
    }
    all.sort_unstable();
    let mut v: Vec<(u64, f64)> = scores.to_vec();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    let chosen = CONVENTIONAL_STRIPES
        .iter()
        .copied()
        .find(|c| all.contains(c))
        .or_else(|| v.iter().find(|s| all.contains(&s.0)).map(|s| s.0))?;
    let top = v[0].1;
    let margin = v
        .iter()
        .find(|s| !all.contains(&s.0))
        .filter(|s| s.1 > 0.0)
        .map(|s| (s.0, top / s.1 - 1.0));
    let unstable = Unstable {
        check: how.to_string(),
        first,
        best,
    };
    Some((chosen, all, margin, Some(unstable)))
}

/// How a pick reads: `8 KiB is the best stripe, 3.2 % ahead of 16 KiB`, `32 KiB and 64 KiB tie
/// for best (within 1 %); 64 KiB is picked as the conventional default; the best of them is
/// 3.2 % ahead of 16 KiB`,
/// `the stripe size makes no difference (all 5 within 1 %); 16 KiB is picked as the
/// conventional default`.
/// A pick a stability check did not confirm reads `not stable: 8 KiB is best in the sweep's
/// points, 16 KiB and 128 KiB tie for best (within 1 %) run again at 2 s per point and another
/// seed; so 8 KiB, 16 KiB and 128 KiB count as a tie: 16 KiB is picked as the conventional
/// default; the best of them is 2.7 % ahead of 32 KiB`.
pub fn pick_phrase(
    chosen: u64,
    tied: &[u64],
    compared: usize,
    tie: f64,
    margin: Option<(u64, f64)>,
    unstable: Option<&Unstable>,
) -> String {
    let fs = ssdlab_workload::format_size;
    let within = format!("within {:.0} %", (tie * 100.0).max(1.0));
    let best = |v: &[u64]| {
        if v.len() > 1 {
            format!("{} tie for best ({within})", list_sizes(v))
        } else {
            format!("{} is best", list_sizes(v))
        }
    };
    let mut s = if let Some(u) = unstable {
        let all = if tied.len() == compared {
            format!("all {compared} count as a tie")
        } else {
            format!("{} count as a tie", list_sizes(tied))
        };
        format!(
            "not stable: {} in the sweep's points, {} run again at {}; so {all}: {} is picked",
            best(&u.first),
            best(&u.best),
            u.check,
            fs(chosen)
        )
    } else if tied.len() > 1 && tied.len() == compared {
        format!(
            "the stripe size makes no difference (all {compared} {within}); {} is picked",
            fs(chosen)
        )
    } else if tied.len() > 1 {
        format!(
            "{} tie for best ({within}); {} is picked",
            list_sizes(tied),
            fs(chosen)
        )
    } else {
        format!("{} is the best stripe", fs(chosen))
    };
    if tied.len() > 1 {
        s.push_str(if CONVENTIONAL_STRIPES.contains(&chosen) {
            " as the conventional default"
        } else {
            " as it scores highest"
        });
    }
    if let Some((next, m)) = margin {
        if tied.len() > 1 {
            s.push_str(&format!(
                "; the best of them is {:.1} % ahead of {}",
                m * 100.0,
                fs(next)
            ));
        } else {
            s.push_str(&format!(", {:.1} % ahead of {}", m * 100.0, fs(next)));
        }
    }
    s
}

trait QdFilter {
    fn is_none_or_eq(&self, q: u32) -> bool;
}

impl QdFilter for Option<u32> {
    fn is_none_or_eq(&self, q: u32) -> bool {
        match self {
            None => true,
            Some(x) => *x == q,
        }
    }
}

/// Parses `--mix 4k-randread=0.7,128k-seqwrite=0.3` (weights positive; they are normalised).
pub fn parse_mix(s: &str) -> Result<Vec<(String, f64)>, SweepError> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((w, x)) = part.split_once('=') else {
            return Err(SweepError::Mix(format!(
                "'{part}' is not WORKLOAD=WEIGHT (example: 4k-randread=0.7,128k-seqwrite=0.3)"
            )));
        };
        let w = w.trim().to_string();
        let x: f64 = x.trim().trim_end_matches('%').parse().map_err(|_| {
            SweepError::Mix(format!("weight '{}' of {w} is not a number", x.trim()))
        })?;
        if !(x.is_finite() && x > 0.0) {
            return Err(SweepError::Mix(format!(
                "weight of {w} must be greater than 0"
            )));
        }
        if x > 1e9 {
            return Err(SweepError::Mix(format!(
                "weight {x} of {w} is too large; weights are relative (0.7, 70 and 70% mean the same)"
            )));
        }
        if out.iter().any(|o| o.0 == w) {
            return Err(SweepError::Mix(format!("{w} is listed twice")));
        }
        out.push((w, x));
    }
    if out.is_empty() {
        return Err(SweepError::Mix(
            "the mix is empty (example: 4k-randread=0.7,128k-seqwrite=0.3)".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tie_tests {
    use super::*;

    const K: u64 = 1024;

    #[test]
    fn a_clear_winner_states_its_margin() {
        let (c, tied, m) =
            pick_with_ties(&[(8 * K, 100.0), (16 * K, 90.0), (64 * K, 80.0)], 0.01).unwrap();
        assert_eq!((c, tied.as_slice()), (8 * K, [8 * K].as_slice()));
        let (next, m) = m.unwrap();
        assert_eq!(next, 16 * K);
        assert!((m - 100.0 / 90.0 + 1.0).abs() < 1e-12);
        let p = pick_phrase(c, &[8 * K], 3, 0.01, Some((next, m)), None);
        assert_eq!(p, "8 KiB is the best stripe, 11.1 % ahead of 16 KiB");
    }

    #[test]
    fn a_tie_is_a_tie_and_the_conventional_default_wins_it() {
        // 8 KiB is 0.5 % ahead of 16 KiB: a tie within 1 %; 16 KiB is the conventional default.
        let scores = [(8 * K, 100.0), (16 * K, 99.5), (128 * K, 90.0)];
        let (c, tied, m) = pick_with_ties(&scores, 0.01).unwrap();
        assert_eq!(c, 16 * K);
        assert_eq!(tied, [8 * K, 16 * K]);
        let (next, m) = m.unwrap();
        assert_eq!(next, 128 * K);
        assert!((m - 100.0 / 90.0 + 1.0).abs() < 1e-12);
        let p = pick_phrase(c, &tied, 3, 0.01, Some((next, m)), None);
        assert_eq!(p, "8 KiB and 16 KiB tie for best (within 1 %); 16 KiB is picked as the conventional default; the best of them is 11.1 % ahead of 128 KiB");
        // A wider margin (the spread of real repeats) makes more ties.
        let (_, tied, m) = pick_with_ties(&scores, 0.15).unwrap();
        assert_eq!((tied.len(), m), (3, None));
        let p = pick_phrase(16 * K, &tied, 3, 0.15, None, None);
        assert!(
            p.starts_with("the stripe size makes no difference (all 3 within 15 %)"),
            "{p}"
        );
        // Without a conventional stripe in the tie, the highest score is picked.
        let (c, tied, _) =
            pick_with_ties(&[(8 * K, 100.0), (32 * K, 99.8), (16 * K, 50.0)], 0.01).unwrap();
        assert_eq!((c, tied), (8 * K, vec![8 * K, 32 * K]));
        assert!(
            pick_phrase(c, &[8 * K, 32 * K], 3, 0.01, None, None).contains("as it scores highest")
        );
        assert!(pick_with_ties(&[], 0.01).is_none());
        // Ties are not transitive: 128 KiB ties with 8 KiB (0.8 % behind) and 16 KiB is 1.2 %
        // behind 8 KiB, outside the tie, though only 0.4 % behind 128 KiB. The margin is the
        // tie's lead (over the tie margin), not the chosen stripe's.
        let scores = [(8 * K, 100.0), (128 * K, 99.2), (16 * K, 98.8)];
        let (c, tied, m) = pick_with_ties(&scores, 0.01).unwrap();
        assert_eq!((c, tied), (128 * K, vec![8 * K, 128 * K]));
        let (next, m) = m.unwrap();
        assert_eq!(next, 16 * K);
        assert!(m > 0.01, "{m}");
    }
}
