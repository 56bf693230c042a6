//! The blind self-test on a fixed set of hidden drives: a model calibrated only through the
//! workload interface predicts held-out workloads (RAID 0 arrays, a mix, an alignment test at
//! another queue depth) within bounds. The bounds are the goals (median ≤ 10 %, worst
//! ≤ 25 %); the figures for more seeds are in docs/CALIBRATION.md.

use ssdlab_calib::blind::{self_test, BlindOptions};

#[test]
fn a_blind_calibration_predicts_held_out_workloads() {
    let base = ssdlab_ssdsim::load_preset("vertex450-128g")
        .unwrap()
        .scaled(16)
        .unwrap();
    let o = BlindOptions::default();
    for seed in [1, 2, 3] {
        let r = self_test(&base, seed, &o).unwrap();
        let detail: Vec<String> = r
            .predictions
            .iter()
            .map(|p| format!("{}: {:+.1} %", p.case.label(), p.error * 100.0))
            .collect();
        assert!(
            r.fit.error_after < r.fit.error_before,
            "seed {seed}: the fit did not improve on the base preset ({} -> {})",
            r.fit.error_before,
            r.fit.error_after
        );
        assert!(
            r.median <= 0.10 && r.worst <= 0.25,
            "seed {seed} (hidden {:?}): median {:.3}, worst {:.3}: {detail:#?}",
            r.hidden,
            r.median,
            r.worst
        );
    }
}
