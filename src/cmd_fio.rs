//! `ssdlab fio`: fio job files and fio command lines, run on real targets as fio would, or on a
//! simulated drive or array (`--sim`).
//!
//! Order of business, as for `ssdlab run`: the job files are read and every job resolved
//! (`ssdlab-fiojob`: unknown keys and bad values are errors, unsupported keys refuse the run
//! unless `--ignore-unsupported`); every job's target is worked out (file names, sizes given as
//! percentages, traces); outputs are checked against every input (job files, includes, targets,
//! traces, presets); every job of every wave is checked by the engine as `ssdlab run` checks
//! its run (targets planned, block-device safety, engine and ring limits, memory) — all before
//! the first byte of the first job is written. Then the waves run one after the other (jobs of
//! a wave together), and the report is printed in fio's normal text, JSON or JSON+.

use crate::cli::{positive_size_arg, positive_u32, size_arg, Failure, EXIT_BAD_INPUT};
use crate::exit::{engine_failure, fio_exit_code_for};
use crate::output::{self, check_writable_path, Dest};
use crate::{signals, status};
use anyhow::{anyhow, Result};
use clap::Args;
use ssdlab_engine::{preset_file, SimSession};
use ssdlab_fiojob::argv::read_stdin_job;
use ssdlab_fiojob::paths::iolog_outputs;
use ssdlab_fiojob::plan::{
    attach_logs, check_sim_jobs, log_files, plan_units, sim_spec, LogFile, PlanOptions,
};
use ssdlab_fiojob::run::{
    build_report, check_waves, dropped_log_notes, iolog_parts, parse_only_text, render_logs,
    run_waves, WaveError, WaveHooks, Waves,
};
use ssdlab_fiojob::{Job, SystemEnv};
use ssdlab_report::logs::LogStyle;
use ssdlab_report::{exporter, Format, Report, ReportJob, TableStyle};
use ssdlab_stats::JobLog;
use ssdlab_target::{check_outputs, Named};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `ssdlab fio`: run fio job files or an fio command line.
#[derive(Args, Debug, Default)]
#[command(after_help = "\
fio job options go on the command line as fio takes them: --name=NAME starts a job, options \
before the first --name apply to every job (--rw=randread --bs=4k --iodepth=32 --size=1g \
--filename=F --ioengine=io_uring --direct=1 …). Job files and command-line jobs may be mixed; \
the command-line jobs run first. docs/FIO-JOBS.md lists every supported key.

fio's own options: --eta, --eta-newline and --eta-interval (no ETA line is printed) and \
--alloc-size change nothing and say so; --readonly refuses jobs that write or trim and any file \
layout, as fio's; --minimal, --terse-version, --append-terse, --status-interval, --max-jobs, \
--warnings-fatal, --debug, --showcmd, --bandwidth-log and fio's client/server, trigger and \
self-test options are refused by name.")]
pub struct FioArgs {
    /// fio job files ("-" reads one from stdin, as fio does); each after the first runs after the
    /// ones before (fio's implicit stonewall).
    #[arg(value_name = "JOB.fio")]
    pub files: Vec<PathBuf>,
    /// Run every job on a simulated drive instead: a preset name (`ssdlab drives`) or a preset
    /// TOML file. Job files' filenames and engines are then not used.
    #[arg(long, value_name = "PRESET")]
    pub sim: Option<String>,
    /// Number of simulated drives (more than one builds a RAID 0 array).
    #[arg(long, value_parser = positive_u32, requires = "sim")]
    pub drives: Option<u32>,
    /// Stripe (chunk) size of the simulated array (default 512k).
    #[arg(long, value_parser = size_arg, requires = "sim", allow_hyphen_values = true)]
    pub stripe: Option<u64>,
    /// State of the simulated drives before the first job: fresh (the default), full, steady.
    #[arg(long, requires = "sim")]
    pub state: Option<String>,
    /// Override a preset parameter (KEY=VALUE), as `ssdlab run --set`.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "sim")]
    pub sets: Vec<String>,
    /// Print fio's JSON (same as --output-format=json).
    #[arg(long, conflicts_with_all = ["json_plus", "output_format"])]
    pub json: bool,
    /// Print fio's JSON+ (JSON with every completion-latency bin; --output-format=json+).
    #[arg(long, conflicts_with = "output_format")]
    pub json_plus: bool,
    /// fio's output format: normal (the default), json or json+.
    #[arg(long, value_name = "FORMAT", value_parser = fio_format)]
    pub output_format: Option<Format>,
    /// Write the report to FILE ("-": stdout). Never a file the command reads.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Run even when jobs use options ssdlab does not implement; they are listed and ignored.
    #[arg(long)]
    pub ignore_unsupported: bool,
    /// Allow jobs to write to block devices (devices that hold data or are in use are refused anyway).
    #[arg(long)]
    pub allow_destroy: bool,
    /// Refuse to start when a wave's memory estimate is above SIZE.
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    pub max_memory: Option<u64>,
    /// Only run the job sections with this name (fio's --section; repeatable).
    #[arg(long, value_name = "NAME")]
    pub section: Vec<String>,
    /// Read and check the jobs (and their targets), print what would run, and run nothing.
    #[arg(long)]
    pub parse_only: bool,
    /// fio job options taken from the command line by [`split_argv`].
    #[arg(skip)]
    pub fio_args: FioArgv,
}

/// ssdlab's own flags of `ssdlab fio` and whether each takes a value; every other `--key` is an
/// fio job option.
const OWN_FLAGS: &[(&str, bool)] = &[
    ("sim", true),
    ("drives", true),
    ("stripe", true),
    ("state", true),
    ("set", true),
    ("json", false),
    ("json-plus", false),
    ("output-format", true),
    ("output", true),
    ("ignore-unsupported", false),
    ("allow-destroy", false),
    ("max-memory", true),
    ("section", true),
    ("parse-only", false),
    ("help", false),
];

/// fio job options from the command line: key, value, argument position.
pub type FioArgv = ssdlab_fiojob::argv::FioArgv;

/// Splits `ssdlab fio …` arguments: ssdlab's flags and job files stay for clap, fio job options
/// (`--key=value`, `--key value`, bare flags) come out with their position. Other commands'
/// arguments pass through unchanged.
pub fn split_argv(args: Vec<OsString>) -> (Vec<OsString>, FioArgv) {
    ssdlab_fiojob::argv::split_argv(args, OWN_FLAGS)
}

/// fio's `--output-format` names (several may be given comma-separated in fio; ssdlab prints
/// one): normal, json, json+.
fn fio_format(s: &str) -> Result<Format, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    match parts.as_slice() {
        ["normal"] => Ok(Format::Normal),
        ["json"] => Ok(Format::Json),
        ["json+"] => Ok(Format::JsonPlus),
        ["terse"] => Err("--output-format=terse is not supported (normal, json, json+)".into()),
        [o] => Err(format!("--output-format={o}: normal, json or json+")),
        _ => Err(format!(
            "--output-format={s}: ssdlab prints one format at a time (normal, json or json+)"
        )),
    }
}

fn format_of(a: &FioArgs) -> Format {
    if a.json {
        Format::Json
    } else if a.json_plus {
        Format::JsonPlus
    } else {
        a.output_format.unwrap_or(Format::Normal)
    }
}

/// A job's error in fio's words: its options as written and where (`bs=3 (job.fio line 4)`),
/// with the exit code of the error's class.
fn job_failure(e: ssdlab_engine::EngineError, j: &Job) -> Failure {
    crate::exit::engine_failure_in(
        e,
        &ssdlab_fiojob::JobNaming::new(&j.settings),
        &format!("job {}: ", j.name),
    )
}

/// Writes the log files, all or none (a shared file, `per_job_logs=0`, after what it held, as
/// fio appends to it). `logs`: each fio thread's log, its measured time and its line style.
fn write_logs(
    files: &[LogFile],
    logs: &BTreeMap<u32, (JobLog, u64, LogStyle)>,
) -> Result<(), Failure> {
    let fail = |e: String| Failure::new(crate::cli::EXIT_FAILED, anyhow!(e));
    let out = render_logs(files, logs).map_err(fail)?;
    if out.is_empty() {
        return Ok(());
    }
    output::write_files(&out).map_err(|e| fail(format!("cannot write the logs: {e}")))?;
    for n in dropped_log_notes(logs) {
        output::note(&n);
    }
    output::note_logs_written(out.len(), &out[0].0);
    Ok(())
}

pub fn cmd_fio(a: FioArgs) -> Result<u8, Failure> {
    if a.files.is_empty() && a.fio_args.is_empty() {
        return Err(Failure::new(
            EXIT_BAD_INPUT,
            anyhow!("no jobs: give job files or fio options (--name=NAME --rw=… --filename=…); see ssdlab fio --help"),
        ));
    }
    let format = format_of(&a);
    // 1. Read every job.
    let env = SystemEnv;
    let mut fio_args = a.fio_args.clone();
    let (read_only, cli_notes) = ssdlab_fiojob::argv::take_cli_options(&mut fio_args)
        .map_err(|e| Failure::new(EXIT_BAD_INPUT, anyhow!(e)))?;
    for n in &cli_notes {
        output::note(n);
    }
    ssdlab_fiojob::argv::check_options(&fio_args, OWN_FLAGS)
        .map_err(|e| Failure::new(EXIT_BAD_INPUT, anyhow!(e)))?;
    let mut sections = ssdlab_fiojob::argv_sections(&fio_args, &env, &a.section)?;
    let mut parser = ssdlab_fiojob::Parser::new(&env);
    parser.only = a.section.clone();
    for (i, f) in a.files.iter().enumerate() {
        if f.as_os_str() == "-" {
            // fio reads a job file named "-" from stdin (bounded like a job file).
            let text = read_stdin_job(std::io::stdin().lock()).map_err(|e| anyhow!(e))?;
            sections.extend(parser.text(&text, Path::new("stdin"), i)?);
            continue;
        }
        sections.extend(parser.file(f, i)?);
    }
    let js = ssdlab_fiojob::resolve(&sections)?;
    if js.jobs.is_empty() {
        return Err(Failure::new(
            EXIT_BAD_INPUT,
            anyhow!("no jobs defined (only global options)"),
        ));
    }
    if !js.unsupported.is_empty() {
        let list: Vec<String> = js.unsupported.iter().map(|i| i.to_string()).collect();
        if !a.ignore_unsupported {
            return Err(Failure::new(
                EXIT_BAD_INPUT,
                anyhow!(
                    "not supported by ssdlab (nothing was run; --ignore-unsupported runs without them): {}",
                    list.join("; ")
                ),
            ));
        }
        output::note(&format!(
            "ignoring what ssdlab does not support: {}",
            list.join("; ")
        ));
    }
    if read_only {
        // fio's fixup_options: "trim and write operations are not allowed with the --readonly
        // parameter"
        if let Some(j) = js
            .jobs
            .iter()
            .find(|j| j.settings.mode.writes() || j.settings.mode.trims())
        {
            return Err(Failure::new(
                EXIT_BAD_INPUT,
                anyhow!(
                    "job {}: trim and write operations are not allowed with the --readonly parameter (as in fio); nothing was run",
                    j.name
                ),
            ));
        }
    }
    let mut notes = js.notes.clone();
    // Clones of a job without group_reporting are reported one by one.
    let per_worker = |j: &Job| !j.settings.group_reporting;

    // 2. Targets.
    let sim = match &a.sim {
        Some(name) => {
            let spec = sim_spec(name, &a.sets, a.drives, a.stripe, a.state.as_deref())
                .map_err(|e| anyhow!(e))?;
            let t = spec.build(output::note_once).map_err(|e| anyhow!(e))?;
            check_sim_jobs(&js, a.allow_destroy).map_err(|e| anyhow!(e))?;
            Some(t)
        }
        None => None,
    };
    let plan = PlanOptions {
        allow_destroy: a.allow_destroy,
        max_memory: a.max_memory,
        stop: Some(signals::stop_flag()),
        on_note: output::note,
        read_only,
    };
    let mut units = plan_units(&js, sim.as_ref(), &plan, &per_worker, &mut notes)?;
    // fio's logs: the engine keeps them per unit; each unit's clones are fio threads numbered
    // from its job's first.
    let log_files = log_files(&js)?;
    let (unit_logs, unit_threads) = attach_logs(&js, &mut units);

    // 3. Outputs against inputs.
    let dest = Dest::from_arg(a.output.as_deref());
    if let Some(p) = dest.file() {
        check_writable_path("--output", p).map_err(|e| anyhow!(e))?;
    }
    let mut outputs: Vec<Named<'_>> = dest
        .file()
        .map(|path| Named {
            role: "--output",
            path,
        })
        .into_iter()
        .collect();
    let iologs = iolog_outputs(&js, &units).map_err(|e| anyhow!(e))?;
    outputs.extend(iologs.into_iter().map(|path| Named {
        role: "write_iolog",
        path,
    }));
    for f in &log_files {
        check_writable_path(f.role, &f.path).map_err(|e| anyhow!(e))?;
        outputs.push(Named {
            role: f.role,
            path: &f.path,
        });
    }
    let included = parser.included();
    let preset = a.sim.as_deref().and_then(preset_file);
    let inputs = ssdlab_fiojob::paths::inputs(&a.files, &included, &units, preset);
    check_outputs(&outputs, &inputs)?;

    // 4. Every job of every wave checked before anything is written.
    check_waves(&js, &units, sim.as_ref(), a.max_memory).map_err(|e| match e.job {
        Some(j) => job_failure(*e.error, &js.jobs[j]),
        None => engine_failure(*e.error),
    })?;
    for n in &notes {
        output::note(n);
    }
    if a.parse_only {
        let text = parse_only_text(&js, &units);
        dest.write(&text)
            .map_err(|e| Failure::new(crate::cli::EXIT_FAILED, anyhow!("cannot write: {e}")))?;
        return Ok(0);
    }

    // The clones of a job write one log, as in fio: each writes a part of its own, merged
    // into the log when its wave has run.
    let merges = iolog_parts(&js, &mut units);

    // 5. Run the waves.
    let session = match &sim {
        Some(t) => {
            let seed = units.first().map(|u| u.spec.seed).unwrap_or(0);
            Some(
                crate::signals::while_building(|| SimSession::new(t, seed, a.max_memory))
                    .map_err(engine_failure)?,
            )
        }
        None => None,
    };
    let hooks = WaveHooks {
        stop: signals::stop_flag(),
        stopped: &signals::stopped,
        status: &|spec, simulated, f| status::with_status_line(spec, simulated, f),
        max_memory: a.max_memory,
        per_worker: &per_worker,
    };
    let Waves {
        measured,
        thread_logs,
        failure,
    } = run_waves(
        &js,
        &units,
        &unit_logs,
        &unit_threads,
        &merges,
        session,
        &hooks,
    );
    let mut failure = failure.map(|e| match e {
        WaveError::Engine(e) => engine_failure(e),
        WaveError::Log(m) => Failure::new(crate::cli::EXIT_FAILED, anyhow!(m)),
    });

    // 6. The report.
    let entries = build_report(&js, &units, &measured);
    let report = Report {
        jobs: entries
            .iter()
            .map(|(result, fio)| ReportJob {
                result,
                fio: Some(fio),
            })
            .collect(),
        global_options: &js.global_options,
    };
    for n in entries.iter().flat_map(|(r, _)| &r.notes) {
        crate::output::note_once(n);
    }
    // fio names a failed job's error on stderr (`m: rate_iops_min=100 not met, got 49 IOPS`).
    for (r, fio) in &entries {
        if let Some(e) = r.errors.first() {
            eprintln!("{}: {} (error {})", fio.name, e.error, e.errno);
        }
        let t = &r.error_tally;
        if fio.continue_on_error && t.counted > 0 {
            let ended = if t.fatal != 0 {
                format!("error {} ended the job", t.fatal)
            } else {
                "none ended the job".to_string()
            };
            eprintln!(
                "{}: continue_on_error counted {} error(s) (the first: error {}); {ended}",
                fio.name, t.counted, t.first
            );
        }
    }
    // The one exporter of each format, as `ssdlab run` uses them.
    let bytes = exporter(format, TableStyle::Ascii)
        .and_then(|x| x.export(&report))
        .map_err(|e| Failure::new(crate::cli::EXIT_FAILED, e))?;
    if !entries.is_empty() {
        if let Err(e) = dest.write_bytes(&bytes) {
            // --output cannot be written (a full disk): the report goes to stdout instead of
            // being lost, and the failure is reported after it.
            let (shown, on_stdout) = match &dest {
                Dest::File(p) => (
                    format!("--output {}", p.display()),
                    output::stdout_bytes(&bytes).is_ok(),
                ),
                Dest::Stdout => ("stdout".to_string(), false),
            };
            return Err(Failure::new(
                crate::cli::EXIT_FAILED,
                anyhow!(
                    "cannot write the report to {shown}: {e}{}",
                    if on_stdout {
                        " (the report was printed on stdout instead)"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    // The logs after the report, as fio writes them when its jobs end.
    if let Err(e) = write_logs(&log_files, &thread_logs) {
        failure.get_or_insert(e);
    }
    if let Some(f) = failure {
        return Err(f);
    }
    let code = entries
        .iter()
        .map(|(r, _)| fio_exit_code_for(r))
        .max()
        .unwrap_or(0);
    if signals::stopped() {
        return Ok(signals::exit_code());
    }
    Ok(code)
}
