//! `ssdlab study trim`: glue from the options to the aging runs (`ssdlab_engine::run_aging`,
//! both configurations at once) and the report (`ssdlab_report::trim`).

use crate::cli::{auto_table_style, Failure};
use crate::exit::engine_failure;
use crate::signals;
use anyhow::{anyhow, Result};
use ssdlab_engine::{run_aging, AgingOptions, SimOptions, SimTarget};
use ssdlab_report::trim::{TrimStudy, ASSUMED_PE_CYCLES};
use ssdlab_ssdsim::{AdapterChoice, Precondition};
use ssdlab_workload::aging::Aging;
use ssdlab_workload::{AgingSpec, AllocPolicy};
use std::io::Write;

/// The stripe of the array: Intel RST's default on the Z77 of Review A.
const STRIPE: u64 = 16 << 10;

/// The trim study's options (checked by clap and `StudyArgs::trim_args`).
#[derive(Debug, Clone)]
pub struct TrimArgs {
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
    pub json: bool,
    pub max_memory: Option<u64>,
}

/// Everything the study runs, checked before anything is built.
fn plan(a: &TrimArgs) -> Result<(TrimStudy, [SimTarget; 2], AgingSpec, AgingOptions)> {
    let full = ssdlab_ssdsim::load_preset(&a.preset).map_err(|e| anyhow!("--preset: {e}"))?;
    let drive = if a.scale > 1 {
        full.scaled(a.scale)
            .map_err(|e| anyhow!("--scale {}: {e}", a.scale))?
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
        .map_err(|e| anyhow!("the trim study's workload: {e}"))?;
    if daily > volume {
        return Err(anyhow!(
            "--daily-write {} is more than the whole array ({}) per day",
            format_full(a.daily_write),
            format_full(volume * scale)
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
    Ok((study, [target(true), target(false)], spec, opts))
}

fn format_full(b: u64) -> String {
    ssdlab_workload::format_size(b)
}

/// `ssdlab study trim`.
pub fn cmd_study_trim(a: &TrimArgs) -> Result<u8, Failure> {
    let (mut study, targets, spec, opts) = plan(a)?;
    for t in &targets {
        // memory for the drives, the copy each probe runs on, and both configurations at once
        let mut t4 = t.clone();
        t4.drives *= 4;
        ssdlab_engine::check_sim_target(&t4, a.max_memory).map_err(engine_failure)?;
    }
    let sim = SimOptions {
        stop: Some(signals::stop_flag()),
        max_memory: a.max_memory,
        ..SimOptions::default()
    };
    let labels = ["TRIM passed through", "TRIM dropped by the RAID driver"];
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .zip(labels)
            .map(|(t, label)| {
                let aging = Aging::new(spec.clone()).map_err(|e| anyhow!(e));
                let (sim, opts) = (&sim, &opts);
                s.spawn(move || -> Result<_, Failure> {
                    let aging = aging?;
                    run_aging(t, aging, label, opts, sim, &|_| {}).map_err(engine_failure)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a simulation thread panicked").into()))
            })
            .collect()
    });
    for r in results {
        let (run, stopped) = r?;
        study.interrupted |= stopped;
        study.runs.push(run);
    }
    let text = if a.json {
        let mut s =
            serde_json::to_string_pretty(&study.to_json()).map_err(|e| anyhow!("JSON: {e}"))?;
        s.push('\n');
        s
    } else {
        study.render(auto_table_style())
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(Failure::new(
                crate::cli::EXIT_FAILED,
                anyhow!("stdout: {e}"),
            ));
        }
    }
    Ok(if study.interrupted {
        signals::exit_code()
    } else {
        0
    })
}
