//! `ssdlab validate`: glue from the options to `ssdlab-calib`'s validation (the models and
//! figures validated, the report as tables, JSON or an HTML page).

use crate::cli::{duration_arg, positive_size_arg, Failure, EXIT_FAILED};
use crate::figures::read_data;
use crate::output::{self, check_writable_path};
use crate::signals;
use anyhow::anyhow;
use clap::Args;
use ssdlab_calib::data::data_paths;
use ssdlab_calib::validate::Selection;
use ssdlab_calib::{render, validate, PredictOptions};
use ssdlab_engine::preset_file;
use ssdlab_target::{check_outputs, Named};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Presets (built-in names or preset files) to validate; none: every built-in preset the
    /// data names.
    presets: Vec<String>,
    /// Data files of published or measured figures and claims (`data/published/*.toml`), or a
    /// results store whose stored runs are the measurements; a directory stands for every .toml
    /// file in it. Repeatable.
    #[arg(long, required = true, value_name = "FILE|DIR|STORE")]
    against: Vec<PathBuf>,
    /// The drive name in the data that the (single) preset given models (default: the preset's
    /// own name).
    #[arg(long, value_name = "NAME")]
    drive: Option<String>,
    /// Simulate each figure at most this long (virtual time; default: the test length the
    /// figure states, 60 s when it states none).
    #[arg(long, value_parser = duration_arg, value_name = "DURATION", allow_hyphen_values = true)]
    max_time: Option<u64>,
    /// Simulate figures side by side only while their memory estimates (the drive states
    /// kept for them included) fit in SIZE; a figure that needs more runs alone (default: what
    /// the largest figure needs alone, so side by side costs no more memory than it; never
    /// more than this process may allocate).
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    max_memory: Option<u64>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Also write the validation as one self-contained HTML page (charts of the error per
    /// workload family and of published against simulated figures per drive, then the tables).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

pub fn cmd_validate(a: ValidateArgs) -> Result<u8, Failure> {
    if a.max_time == Some(0) {
        return Err(anyhow!("--max-time must be greater than 0").into());
    }
    let against = data_paths(&a.against, "--against").map_err(|e| anyhow!(e))?;
    // --html: writable, and not one of the inputs
    if let Some(h) = &a.html {
        check_writable_path("--html", h).map_err(|e| anyhow!(e))?;
        let inputs: Vec<Named<'_>> = against
            .iter()
            .map(|p| Named {
                role: "an --against file",
                path: p,
            })
            .chain(a.presets.iter().filter_map(|p| {
                preset_file(p).map(|path| Named {
                    role: "a preset file",
                    path,
                })
            }))
            .collect();
        check_outputs(
            &[Named {
                role: "--html",
                path: h,
            }],
            &inputs,
        )?;
    }
    let data = read_data(&against, "--against")?;
    let sel = Selection::of(&data, &a.presets, a.drive.as_deref()).map_err(|e| anyhow!(e))?;
    let opts = PredictOptions {
        max_time_ns: a.max_time,
        stop: Some(signals::stop_flag()),
        memory_budget: crate::figures::memory_budget(a.max_memory),
        ..Default::default()
    };
    output::note(&format!(
        "simulating {} figures and {} claims …",
        sel.figures.len(),
        sel.claims.len()
    ));
    let v = validate(&sel.figures, &sel.claims, |n| sel.model(n), &opts);
    if opts.stopped() {
        return Err(Failure::new(signals::exit_code(), anyhow!("interrupted")));
    }
    if let Some(why) = v.nothing_simulated() {
        return Err(anyhow!("nothing could be simulated ({why}); nothing to report").into());
    }
    let text = if a.json {
        serde_json::to_string_pretty(&v).expect("serialises") + "\n"
    } else {
        render(&v)
    };
    output::stdout(&text).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    if let Some(h) = &a.html {
        let title = format!("ssdlab validate: {}", sel.names());
        let meta = format!(
            "against {}",
            data.iter()
                .map(|d| d.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let env = ssdlab_chart::Environment::current(ssdlab_report::html::VERSION);
        let page = ssdlab_calib::validate::render_html(&v, &title, &meta, Some(&env));
        output::write_file(h, page.as_bytes())
            .map_err(|e| Failure::new(EXIT_FAILED, anyhow!("--html {}: {e}", h.display())))?;
        output::note(&format!("validate: report written to {}", h.display()));
    }
    Ok(0)
}
