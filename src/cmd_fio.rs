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
use crate::exit::{engine_failure, exit_code_for};
use crate::output::{self, check_writable_path, Dest};
use crate::{signals, status};
use anyhow::{anyhow, Result};
use clap::Args;
use ssdlab_engine::{preset_file, SimSession, SimSpec};
use ssdlab_fiojob::plan::{attach_logs, log_files, plan_units, LogFile, PlanOptions, Unit};
use ssdlab_fiojob::run::{
    build_report, check_waves, iolog_parts, run_waves, WaveError, WaveHooks, Waves,
};
use ssdlab_fiojob::{options, Job, SystemEnv};
use ssdlab_report::logs::{render_job_log, LogStyle};
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
the command-line jobs run first. docs/FIO-JOBS.md lists every supported key.")]
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
pub type FioArgv = Vec<(String, Option<String>, u32)>;

/// Splits `ssdlab fio …` arguments: ssdlab's flags and job files stay for clap, fio job options
/// (`--key=value`, `--key value`, bare flags) come out with their position. Other commands'
/// arguments pass through unchanged.
pub fn split_argv(args: Vec<OsString>) -> (Vec<OsString>, FioArgv) {
    if args.get(1).and_then(|a| a.to_str()) != Some("fio") {
        return (args, Vec::new());
    }
    let mut keep: Vec<OsString> = args[..2].to_vec();
    let mut fio = Vec::new();
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        let Some(s) = a.to_str() else {
            keep.push(a.clone());
            i += 1;
            continue;
        };
        if s == "--" {
            keep.extend(args[i..].iter().cloned());
            break;
        }
        let Some(opt) = s.strip_prefix("--") else {
            keep.push(a.clone());
            i += 1;
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (opt, None),
        };
        if let Some((_, takes)) = OWN_FLAGS.iter().find(|(f, _)| *f == key) {
            keep.push(a.clone());
            if *takes && value.is_none() {
                if let Some(v) = args.get(i + 1) {
                    keep.push(v.clone());
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        let mut value = value;
        if value.is_none() && !options::is_flag(key) && options::is_fio_option(key) {
            // fio's getopt takes the next argument as the value of an option that needs one.
            if let Some(v) = args.get(i + 1).and_then(|v| v.to_str()) {
                if !v.starts_with("--") {
                    value = Some(v.to_string());
                    i += 1;
                }
            }
        }
        fio.push((key.to_string(), value, i as u32 - 1));
        i += 1;
    }
    (keep, fio)
}

/// A job file given as "-": stdin, at most as large as a job file, text.
fn read_stdin_job() -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let cap = ssdlab_fiojob::ini::MAX_JOB_FILE_BYTES;
    let mut data = Vec::new();
    std::io::stdin()
        .lock()
        .take(cap + 1)
        .read_to_end(&mut data)
        .map_err(|e| anyhow!("stdin: cannot read the job file: {e}"))?;
    if data.len() as u64 > cap {
        return Err(anyhow!("stdin: a job file of more than {cap} bytes").into());
    }
    if data.contains(&0) {
        return Err(anyhow!("stdin: not a text file (a NUL byte), so not an fio job file").into());
    }
    Ok(data)
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
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for f in files {
        let ran: Vec<&(JobLog, u64, LogStyle)> =
            f.threads.iter().filter_map(|t| logs.get(t)).collect();
        if ran.is_empty() {
            continue;
        }
        let mut bytes = Vec::new();
        if f.append {
            match std::fs::read(&f.path) {
                Ok(b) => bytes = b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(fail(format!("{} {}: {e}", f.role, f.path.display()))),
            }
        }
        for (log, runtime, style) in ran {
            bytes.extend(render_job_log(log, f.kind, *runtime, style).into_bytes());
        }
        out.push((f.path.clone(), bytes));
    }
    if out.is_empty() {
        return Ok(());
    }
    output::write_files(&out).map_err(|e| fail(format!("cannot write the logs: {e}")))?;
    for (t, (log, _, _)) in logs {
        if log.dropped > 0 {
            output::note(&format!(
                "the logs of job {t} hold its first {} I/Os ({} more were not logged)",
                log.samples.len(),
                log.dropped
            ));
        }
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
    for (k, _, pos) in &a.fio_args {
        if !options::is_fio_option(k) {
            let own = OWN_FLAGS
                .iter()
                .map(|(f, _)| *f)
                .map(|f| (options::edit_distance(k, f), f))
                .filter(|(d, f)| *d <= 2.max(f.len() / 4))
                .min_by_key(|(d, _)| *d)
                .map(|(_, f)| f);
            let hint = match (own, options::suggest(k)) {
                (Some(f), _) => format!("; did you mean --{f}?"),
                (None, Some(o)) => format!("; did you mean --{o}?"),
                _ => String::new(),
            };
            return Err(Failure::new(
                EXIT_BAD_INPUT,
                anyhow!("command line argument {pos}: unknown option --{k}{hint}"),
            ));
        }
    }
    let mut sections = ssdlab_fiojob::argv_sections(&a.fio_args, &env, &a.section)?;
    let mut parser = ssdlab_fiojob::Parser::new(&env);
    parser.only = a.section.clone();
    for (i, f) in a.files.iter().enumerate() {
        if f.as_os_str() == "-" {
            // fio reads a job file named "-" from stdin (bounded like a job file).
            sections.extend(parser.text(&read_stdin_job()?, Path::new("stdin"), i)?);
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
    let mut notes = js.notes.clone();
    // Clones of a job without group_reporting are reported one by one.
    let per_worker = |j: &Job| !j.settings.group_reporting;

    // 2. Targets.
    let sim = match &a.sim {
        Some(name) => {
            let sets: Vec<(String, String)> = a
                .sets
                .iter()
                .map(|kv| {
                    kv.split_once('=')
                        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                        .ok_or_else(|| anyhow!("--set {kv}: expected KEY=VALUE"))
                })
                .collect::<Result<_>>()?;
            let drives = a.drives.unwrap_or(1);
            if a.stripe.is_some() && drives < 2 {
                return Err(anyhow!("--stripe applies to arrays: give --drives N (N > 1)").into());
            }
            let spec = SimSpec {
                preset: name.clone(),
                sets,
                drives,
                stripe: a.stripe,
                state: a.state.as_deref().unwrap_or("fresh").to_string(),
                adapter: ssdlab_ssdsim::AdapterChoice::default(),
            };
            Some(spec.build(output::note_once).map_err(|e| anyhow!(e))?)
        }
        None => None,
    };
    if sim.is_some() && a.allow_destroy {
        return Err(anyhow!(
            "--allow-destroy applies to real targets, not to simulated drives (--sim)"
        )
        .into());
    }
    if sim.is_some() {
        if let Some(j) = js.jobs.iter().find(|j| j.settings.verify) {
            return Err(anyhow!(
                "job {}: verify needs a real target: simulated drives carry no data",
                j.name
            )
            .into());
        }
    }
    let plan = PlanOptions {
        allow_destroy: a.allow_destroy,
        max_memory: a.max_memory,
        stop: Some(signals::stop_flag()),
        on_note: output::note,
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
    let mut logs: BTreeMap<&Path, &str> = BTreeMap::new();
    for u in &units {
        if let Some(t) = &u.iolog {
            let name = js.jobs[u.job].name.as_str();
            if let Some(other) = logs.insert(&t.path, name) {
                if other != name {
                    return Err(anyhow!(
                        "write_iolog {}: jobs {other} and {name} both write it (fio: give each job its own)",
                        t.path.display()
                    )
                    .into());
                }
            }
            ssdlab_engine::check_iolog_target(&t.path).map_err(|e| anyhow!(e))?;
        }
    }
    for p in logs.keys() {
        outputs.push(Named {
            role: "write_iolog",
            path: p,
        });
    }
    for f in &log_files {
        check_writable_path(f.role, &f.path).map_err(|e| anyhow!(e))?;
        outputs.push(Named {
            role: f.role,
            path: &f.path,
        });
    }
    let mut inputs: Vec<Named<'_>> = a
        .files
        .iter()
        .map(|path| Named {
            role: "the job file",
            path,
        })
        .collect();
    let included = parser.included();
    inputs.extend(included.iter().map(|path| Named {
        role: "an included job file",
        path,
    }));
    for u in &units {
        if let Some((t, _)) = &u.real {
            inputs.extend(t.paths().into_iter().map(|path| Named {
                role: "a job's target",
                path,
            }));
        }
        if let Some(r) = &u.spec.replay {
            inputs.push(Named {
                role: "read_iolog",
                path: &r.trace,
            });
        }
    }
    if let Some(p) = a.sim.as_deref().and_then(preset_file) {
        inputs.push(Named {
            role: "the preset file",
            path: p,
        });
    }
    check_outputs(&outputs, &inputs)?;

    // 4. Every job of every wave checked before anything is written.
    let nwaves = js.jobs.iter().map(|j| j.wave).max().unwrap_or(0) + 1;
    let wave_units =
        |w: usize| -> Vec<&Unit> { units.iter().filter(|u| js.jobs[u.job].wave == w).collect() };
    check_waves(&js, &units, sim.as_ref(), a.max_memory).map_err(|e| match e.job {
        Some(j) => job_failure(*e.error, &js.jobs[j]),
        None => engine_failure(*e.error),
    })?;
    for n in &notes {
        output::note(n);
    }
    if a.parse_only {
        let mut text = String::new();
        for w in 0..nwaves {
            for u in wave_units(w) {
                let j = &js.jobs[u.job];
                text.push_str(&format!(
                    "wave {w}: {} (group {}): {} on {}\n",
                    j.name,
                    j.group,
                    u.spec.summary(),
                    u.label
                ));
            }
        }
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
        .map(|(r, _)| exit_code_for(r))
        .max()
        .unwrap_or(0);
    if signals::stopped() {
        return Ok(signals::exit_code());
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn argv_split_keeps_own_flags_and_takes_fio_options() {
        let (keep, fio) = split_argv(os(&[
            "ssdlab",
            "fio",
            "--name=x",
            "--rw",
            "randread",
            "--sim",
            "p",
            "--json",
            "a.fio",
            "--time_based",
            "--bs=4k",
            "--output",
            "o.json",
            "--size",
            "1g",
        ]));
        assert_eq!(
            keep,
            os(&["ssdlab", "fio", "--sim", "p", "--json", "a.fio", "--output", "o.json"])
        );
        let f: Vec<(&str, Option<&str>)> = fio
            .iter()
            .map(|(k, v, _)| (k.as_str(), v.as_deref()))
            .collect();
        assert_eq!(
            f,
            vec![
                ("name", Some("x")),
                ("rw", Some("randread")),
                ("time_based", None),
                ("bs", Some("4k")),
                ("size", Some("1g")),
            ]
        );
        let (keep, fio) = split_argv(os(&["ssdlab", "run", "--qd", "4"]));
        assert_eq!(keep.len(), 4);
        assert!(fio.is_empty());
    }
}
