//! Expansion of a sweep into its ordered points, and the stable point key.

use crate::spec::{History, PointTarget, SweepSpec};
use serde::Serialize;
use ssdlab_store::PointRecord;
use ssdlab_workload::WorkloadSpec;
use std::collections::VecDeque;

/// One run of the sweep matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Stable hash of everything that defines the point (the resume key); 32 hex digits.
    pub key: String,
    /// Position in the expanded sweep.
    pub seq: usize,
    /// Name of the sweep.
    pub sweep: String,
    /// Label of the target (unique in the sweep).
    pub target_label: String,
    /// Where the I/O goes: simulated drives or real paths.
    pub target: PointTarget,
    /// True when this point belongs to a baseline target.
    pub baseline: bool,
    /// The baseline target this point is compared with.
    pub baseline_label: Option<String>,
    pub workload_name: String,
    /// The complete workload of this point: `qd`, stop time, ramp and seed already set
    /// (repeat `r` uses the workload's seed + `r`).
    pub spec: WorkloadSpec,
    pub qd: u32,
    /// Stripe (chunk) size in bytes for arrays; None for a single drive.
    pub stripe: Option<u64>,
    /// Number of drives (members).
    pub drives: u32,
    /// 0-based repeat index.
    pub repeat: u32,
    /// With `history = "carry"`: the position ([`Point::seq`]) of the point that runs before
    /// this one on the same simulated drive. `None` for the first point of a drive and for
    /// every point of a sweep whose points start fresh.
    pub carry_from: Option<usize>,
    /// A simulated point of a sweep with `history = "carry"`: it runs on its chain's drive
    /// ([`Point::chain`]).
    pub carried: bool,
    /// The host of a real target that names one ([`crate::SweepTarget::host`]); not part of the
    /// key or the stored record.
    pub host: Option<String>,
}

impl Point {
    /// True for simulated points (run in parallel).
    pub fn is_sim(&self) -> bool {
        self.target.is_sim()
    }

    /// The simulated drive (or array) a carried point runs on: one per target, stripe and
    /// repeat (each repeat is an independent replica of the whole sequence).
    pub fn chain(&self) -> String {
        format!(
            "{}|{}|{}",
            self.target_label,
            self.stripe.map_or(String::new(), |s| s.to_string()),
            self.repeat
        )
    }

    /// A one-line description for progress and listings.
    pub fn describe(&self) -> String {
        let mut s = self.target_label.clone();
        if let Some(st) = self.stripe {
            s.push_str(&format!(" stripe {}", ssdlab_workload::format_size(st)));
        }
        s.push_str(&format!(" {} QD{}", self.workload_name, self.qd));
        s.push_str(&format!(" #{}", self.repeat + 1));
        s
    }

    /// The row stored in the results store's `points` table.
    pub fn record(&self) -> PointRecord {
        PointRecord {
            key: self.key.clone(),
            seq: self.seq as i64,
            target_label: self.target_label.clone(),
            target_json: serde_json::to_string(&self.target).expect("target serialises"),
            baseline: self.baseline,
            baseline_label: self.baseline_label.clone(),
            workload_name: self.workload_name.clone(),
            workload_json: serde_json::to_string(&self.spec).expect("spec serialises"),
            qd: self.qd,
            stripe: self.stripe,
            drives: self.drives,
            repeat: self.repeat,
        }
    }
}

/// What the key is computed over (field order is part of the format: do not reorder).
#[derive(Serialize)]
struct KeyView<'a> {
    v: u32,
    sweep: &'a str,
    target_label: &'a str,
    target: &'a PointTarget,
    workload: &'a str,
    spec: &'a WorkloadSpec,
    stripe: Option<u64>,
    repeat: u32,
    /// With carried history, the key of the point run before this one on the same drive (its
    /// result depends on everything before it); absent otherwise, so that keys of points that
    /// start fresh stay as they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    after: Option<&'a str>,
    /// Simulated targets: the simulator's model version, so that points simulated by an earlier
    /// model are simulated again rather than mixed with new ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<u32>,
}

/// FNV-1a, 128 bits: small, stable across Rust versions and platforms.
pub fn fnv1a128(data: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for &b in data {
        h ^= b as u128;
        h = h.wrapping_mul(PRIME);
    }
    h
}

fn point_key(p: &Point, after: Option<&str>) -> String {
    let view = KeyView {
        v: 1,
        sweep: &p.sweep,
        target_label: &p.target_label,
        target: &p.target,
        workload: &p.workload_name,
        spec: &p.spec,
        stripe: p.stripe,
        repeat: p.repeat,
        after,
        model: matches!(p.target, PointTarget::Sim { .. }).then_some(ssdlab_ssdsim::MODEL_VERSION),
    };
    let json = serde_json::to_string(&view).expect("key view serialises");
    format!("{:032x}", fnv1a128(json.as_bytes()))
}

impl SweepSpec {
    /// How many points the sweep expands to (`None` when the count overflows), computed without
    /// expanding it.
    pub fn point_count(&self) -> Option<u64> {
        let per_target = (self.workloads.len() as u64)
            .checked_mul(self.qds.len() as u64)?
            .checked_mul(self.repeats as u64)?;
        self.targets.iter().try_fold(0u64, |acc, t| {
            acc.checked_add(per_target.checked_mul(t.stripes.len().max(1) as u64)?)
        })
    }

    /// The points of the sweep in their fixed order: target, stripe, workload, QD, repeat.
    pub fn points(&self) -> Vec<Point> {
        self.points_iter().collect()
    }

    /// The points one at a time, in the order of [`SweepSpec::points`], without holding them all.
    ///
    /// With `history = "carry"` the points of one simulated target, stripe and repeat form a
    /// chain run in this order on one drive; each point's key then includes the key of the point
    /// before it, so a change early in a chain makes every later point new.
    pub fn points_iter(&self) -> impl Iterator<Item = Point> + '_ {
        let repeats = self.repeats as usize;
        let carry = self.history == History::Carry;
        let per_block = self.workloads.len() * self.qds.len() * repeats;
        self.targets
            .iter()
            .flat_map(|t| {
                let stripes: Vec<Option<u64>> = if t.stripes.is_empty() {
                    vec![None]
                } else {
                    t.stripes.iter().copied().map(Some).collect()
                };
                stripes.into_iter().map(move |stripe| (t, stripe))
            })
            .flat_map(move |(t, stripe)| {
                self.workloads
                    .iter()
                    .flat_map(move |w| self.qds.iter().map(move |&qd| (t, stripe, w, qd)))
            })
            .flat_map(move |(t, stripe, w, qd)| {
                (0..self.repeats).map(move |r| (t, stripe, w, qd, r))
            })
            .enumerate()
            // the keys of the last `repeats` points: the one before a point on its drive is
            // `repeats` places back (repeats are the innermost loop)
            .scan(
                VecDeque::<String>::with_capacity(repeats + 1),
                move |recent, (seq, (t, stripe, w, qd, repeat))| {
                    let mut spec = w.spec.clone();
                    spec.qd = qd;
                    spec.seed = spec.seed.wrapping_add(repeat as u64);
                    let chained = carry && t.kind.is_sim() && seq % per_block >= repeats;
                    let mut p = Point {
                        key: String::new(),
                        seq,
                        sweep: self.name.clone(),
                        target_label: t.label.clone(),
                        target: t.kind.clone(),
                        baseline: t.baseline,
                        baseline_label: t.baseline_label.clone(),
                        workload_name: w.name.clone(),
                        spec,
                        qd,
                        stripe,
                        drives: t.kind.drives(),
                        repeat,
                        carry_from: chained.then(|| seq - repeats),
                        carried: carry && t.kind.is_sim(),
                        host: t.host.clone(),
                    };
                    let after = if chained {
                        recent.front().map(String::as_str)
                    } else {
                        None
                    };
                    p.key = point_key(&p, after);
                    if recent.len() == repeats {
                        recent.pop_front();
                    }
                    recent.push_back(p.key.clone());
                    Some(p)
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_known_values() {
        // Reference values of FNV-1a 128.
        assert_eq!(fnv1a128(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(fnv1a128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
    }
}
