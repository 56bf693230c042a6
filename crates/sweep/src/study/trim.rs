//! The trim study's plan (`ssdlab study trim`): from its options ([`TrimOptions`]) the two
//! simulated RAID 0 arrays (TRIM passed through and dropped), the aging workload, the aging
//! run's options and the report to fill ([`TrimPlan`]), all checked before anything is built.
//! Errors are the command's words.

use ssdlab_engine::{AgingOptions, SimTarget};
use ssdlab_report::trim::{TrimStudy, ASSUMED_PE_CYCLES};
use ssdlab_ssdsim::{AdapterChoice, Precondition};
use ssdlab_workload::{format_size, AgingSpec, AllocPolicy};

/// The stripe of the array: Intel RST's default on the Z77 of Review A.
pub const STRIPE: u64 = 16 << 10;

/// The trim study's options (checked by the command's parsers).
#[derive(Debug, Clone, PartialEq)]
pub struct TrimOptions {
    pub preset: String,
    pub days: u32,
    /// On the full-size array.
    pub daily_write: u64,
    pub fill: u32,
    pub seed: u64,
    pub scale: u32,
    /// On the full-size array; `None` = 1/8 of it.
    pub probe: Option<u64>,
    pub allocator: AllocPolicy,
    pub qd: u32,
}

/// Everything the trim study runs: the report (its runs still empty), the arrays with TRIM
/// passed through and dropped, the workload and the aging run's options.
#[derive(Debug, Clone)]
pub struct TrimPlan {
    pub study: TrimStudy,
    pub targets: [SimTarget; 2],
    pub spec: AgingSpec,
    pub opts: AgingOptions,
}

/// The trim study's plan, checked before anything is built.
pub fn plan(a: &TrimOptions) -> Result<TrimPlan, String> {
    let full = ssdlab_ssdsim::load_preset(&a.preset).map_err(|e| format!("--preset: {e}"))?;
    let drive = if a.scale > 1 {
        full.scaled(a.scale)
            .map_err(|e| format!("--scale {}: {e}", a.scale))?
    } else {
        full.clone()
    };
    let target = |trim: bool| SimTarget {
        name: a.preset.clone(),
        drive: drive.clone(),
        drives: 2,
        stripe: Some(STRIPE),
        // the array's default adapter (Intel RST chipset RAID for SATA drives), with TRIM
        // passed to the members (7-series chipsets) or not (earlier ones)
        adapter: AdapterChoice {
            trim_passthrough: Some(trim),
            ..Default::default()
        }
        .resolve(&drive, 2),
        state: Precondition::Fresh,
    };
    let volume = drive.user_capacity() / STRIPE * STRIPE * 2;
    let scale = a.scale as u64;
    let daily = (a.daily_write / scale).div_ceil(4096) * 4096;
    let probe = a.probe.unwrap_or(volume * scale / 8) / scale / 4096 * 4096;
    let spec = AgingSpec {
        fill_pct: a.fill,
        alloc: a.allocator,
        ..AgingSpec::new(volume, daily, a.seed)
    };
    spec.validate()
        .map_err(|e| format!("the trim study's workload: {e}"))?;
    if daily > volume {
        return Err(format!(
            "--daily-write {} is more than the whole array ({}) per day",
            format_size(a.daily_write),
            format_size(volume * scale)
        ));
    }
    let opts = AgingOptions {
        days: a.days,
        qd: a.qd,
        probe_bytes: probe,
        seed: a.seed,
        ..AgingOptions::default()
    };
    let pe = full.nand.pe_cycles;
    let study = TrimStudy {
        preset: a.preset.clone(),
        description: full.description.clone(),
        drives: 2,
        stripe_bytes: STRIPE,
        scale: a.scale,
        drive_bytes: drive.user_capacity(),
        full_raw_bytes: full.raw_capacity(),
        over_provisioning: 1.0 - drive.user_capacity() as f64 / drive.raw_capacity() as f64,
        full_over_provisioning: 1.0 - full.user_capacity() as f64 / full.raw_capacity() as f64,
        pe_cycles: if pe > 0 { pe } else { ASSUMED_PE_CYCLES },
        pe_assumed: pe == 0,
        daily_write_full: a.daily_write,
        fill_pct: a.fill,
        days: a.days,
        seed: a.seed,
        allocator: a.allocator.as_str().into(),
        qd: a.qd,
        probe_bytes: probe,
        runs: Vec::new(),
        interrupted: false,
    };
    Ok(TrimPlan {
        study,
        targets: [target(true), target(false)],
        spec,
        opts,
    })
}

/// Checks of the trim study's plan (unit tests).
#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> TrimOptions {
        TrimOptions {
            preset: "vertex450-128g".into(),
            days: 14,
            daily_write: 20 << 30,
            fill: 50,
            seed: 1,
            scale: 8,
            probe: None,
            allocator: AllocPolicy::default(),
            qd: 4,
        }
    }

    #[test]
    fn default_plan() {
        let p = plan(&defaults()).unwrap();
        let volume = p.targets[0].drive.user_capacity() / STRIPE * STRIPE * 2;
        assert_eq!(p.spec.span, volume);
        assert_eq!(p.opts.days, 14);
        // the probe: 1/8 of the full-size array, scaled down like it
        assert_eq!(p.opts.probe_bytes, volume / 8 / 4096 * 4096);
        assert_eq!(p.study.runs.len(), 0);
        assert_eq!((p.study.scale, p.study.stripe_bytes), (8, STRIPE));
        for t in &p.targets {
            assert_eq!((t.drives, t.stripe), (2, Some(STRIPE)));
        }
    }

    #[test]
    fn refused() {
        let e = |o: TrimOptions| plan(&o).unwrap_err();
        assert!(e(TrimOptions {
            preset: "no-such-drive".into(),
            ..defaults()
        })
        .starts_with("--preset: "));
        assert!(e(TrimOptions {
            daily_write: 1 << 50,
            ..defaults()
        })
        .starts_with("--daily-write 1 PiB is more than the whole array"));
    }
}
