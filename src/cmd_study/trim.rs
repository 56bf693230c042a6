//! `ssdlab study trim`: glue from the options to the study's plan
//! (`ssdlab_sweep::study::trim`), the aging runs (`ssdlab_engine::run_aging`, both
//! configurations at once) and the report (`ssdlab_report::trim`).

use crate::cli::{auto_table_style, Failure};
use crate::exit::engine_failure;
use crate::signals;
use anyhow::{anyhow, Result};
use ssdlab_engine::{run_aging, SimOptions};
use ssdlab_sweep::study::trim::{plan, TrimOptions, TrimPlan};
use ssdlab_workload::aging::Aging;
use std::io::Write;

/// The trim study's options (checked by clap and `StudyArgs::trim_args`).
#[derive(Debug, Clone)]
pub struct TrimArgs {
    /// What the study simulates.
    pub study: TrimOptions,
    pub json: bool,
    pub max_memory: Option<u64>,
}

/// `ssdlab study trim`.
pub fn cmd_study_trim(a: &TrimArgs) -> Result<u8, Failure> {
    let TrimPlan {
        mut study,
        targets,
        spec,
        opts,
    } = plan(&a.study).map_err(|e| anyhow!(e))?;
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
