//! The latency distributions the HTML report of a sweep shows as histograms: not every point's
//! (a stripe study has 144), but per workload the run at the highest queue depth of each array
//! target at its best stripe for that workload, or, in a sweep without arrays or alignment pairs,
//! of each target. The results store keeps each run's latency percentiles (not fio's bins), so
//! the histograms are rebuilt from them (`ssdlab_report::html::percentile_shares`).

use crate::analysis::{Analysis, Cell};
use ssdlab_stats::{LatSummary, RunResult};
use ssdlab_store::StoredPoint;
use ssdlab_workload::OpKind;

/// The latency of one stored run, for a histogram in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct PointLatency {
    pub target_label: String,
    pub stripe: Option<u64>,
    pub workload: String,
    pub qd: u32,
    /// The repeat shown (0-based: the first that finished) and how many finished.
    pub repeat: u32,
    pub repeats: usize,
    /// Per op kind that did I/O: its total latency (completion latency when total latency has no
    /// percentiles, as the cells' p99).
    pub ops: Vec<(OpKind, LatSummary)>,
}

impl Analysis {
    /// The cells whose latency histograms the report shows: per workload, at the highest QD
    /// measured, each array target at its best stripe for the workload; in a sweep with neither
    /// arrays nor alignment pairs, each target. None for alignment studies (one bar chart per QD
    /// already compares the drives there).
    pub fn histogram_cells(&self) -> Vec<&Cell> {
        let highest = |t: &str, stripe: Option<u64>, w: &str| {
            self.cells
                .iter()
                .filter(|c| c.target_label == t && c.stripe == stripe && c.workload == w)
                .max_by_key(|c| c.qd)
        };
        let mut out = Vec::new();
        let arrays = self.array_targets();
        for w in &self.workloads {
            if !arrays.is_empty() {
                for t in &arrays {
                    let best = self
                        .best_per_workload
                        .iter()
                        .find(|b| &b.target_label == t && &b.workload == w);
                    if let Some(c) = best.and_then(|b| highest(t, Some(b.stripe), w)) {
                        out.push(c);
                    }
                }
            } else if self.alignment_pairs().is_empty() {
                for t in self.target_labels() {
                    if let Some(c) = highest(&t, None, w) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    /// The latency of the first finished repeat of every [`Analysis::histogram_cells`] cell,
    /// read with `load` (the stored result of a point key). Cells whose result cannot be read
    /// are left out.
    pub fn latency_histograms(
        &self,
        points: &[StoredPoint],
        load: impl Fn(&str) -> Option<RunResult>,
    ) -> Vec<PointLatency> {
        self.histogram_cells()
            .into_iter()
            .filter_map(|c| {
                let first = c.first_repeat(points.iter().filter(|p| p.result.is_some()))?;
                let r = load(&first.record.key)?;
                let ops: Vec<(OpKind, LatSummary)> = OpKind::ALL
                    .into_iter()
                    .map(|k| (k, r.op(k)))
                    .filter(|(_, o)| o.ios > 0 || o.lat.n > 0)
                    .map(|(k, o)| {
                        let l = if o.lat.percentiles.is_empty() {
                            &o.clat
                        } else {
                            &o.lat
                        };
                        (k, l.clone())
                    })
                    .collect();
                Some(PointLatency {
                    target_label: c.target_label.clone(),
                    stripe: c.stripe,
                    workload: c.workload.clone(),
                    qd: c.qd,
                    repeat: first.record.repeat,
                    repeats: c.repeats,
                    ops,
                })
            })
            .collect()
    }
}
