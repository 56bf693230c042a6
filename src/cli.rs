//! Command-line parsing and dispatch.

use anyhow::{anyhow, Context, Result};
use clap::{Args, Parser, Subcommand};
use ssdlab_engine::{EngineChoice, RealOptions, RealTarget};
use ssdlab_stats::RunResult;
use ssdlab_workload::{parse_duration, parse_size, Pattern, RwMode, StopCondition, WorkloadSpec};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for bad input (usage errors, unusable targets).
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code when the run finished but I/O errors happened.
const EXIT_IO_ERRORS: u8 = 1;
/// Exit code when the run was interrupted with Ctrl-C (results are still printed).
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser, Debug)]
#[command(
    name = "ssdlab",
    version,
    about = "Measure drives and files like fio/Iometer, simulate SSDs and RAID 0 arrays",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run one workload against a file, a block device or the null target.
    Run(RunArgs),
}

fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

fn positive_size_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

fn duration_arg(s: &str) -> Result<u64, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

fn pct_arg(s: &str) -> Result<u8, String> {
    match s.trim().trim_end_matches('%').parse::<u32>() {
        Ok(v) if v <= 100 => Ok(v as u8),
        _ => Err(format!("'{s}' is not a percentage (0..100)")),
    }
}

fn positive_u32(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

fn positive_u64(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

fn rw_arg(s: &str) -> Result<RwMode, String> {
    s.parse::<RwMode>().map_err(|e| e.to_string())
}

fn pattern_arg(s: &str) -> Result<Pattern, String> {
    s.parse::<Pattern>()
}

/// The workload options shared by every command that runs I/O.
#[derive(Args, Debug, Clone)]
struct WorkloadArgs {
    /// I/O pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, default_value = "randread", value_parser = rw_arg)]
    rw: RwMode,
    /// Percentage of reads in a mixed workload (rw/randrw); default 50.
    #[arg(long, value_parser = pct_arg, allow_hyphen_values = true)]
    read_pct: Option<u8>,
    /// Percentage of random offsets (fio's percentage_random); default from --rw.
    #[arg(long, value_parser = pct_arg, allow_hyphen_values = true)]
    random_pct: Option<u8>,
    /// Transfer size (512, 4k, 128KiB, 1m).
    #[arg(long, default_value = "4k", value_parser = positive_size_arg, allow_hyphen_values = true)]
    bs: u64,
    /// Offset alignment (fio's blockalign); default = --bs. 512 gives sector-aligned I/O.
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    align: Option<u64>,
    /// Start of the region on the target.
    #[arg(long, default_value = "0", value_parser = size_arg, allow_hyphen_values = true)]
    offset: u64,
    /// Length of the region; default from --offset to the end of the target.
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    span: Option<u64>,
    /// Outstanding I/Os per worker (queue depth).
    #[arg(long, default_value = "1", value_parser = positive_u32, allow_hyphen_values = true)]
    qd: u32,
    /// Number of workers.
    #[arg(long, default_value = "1", value_parser = positive_u32, allow_hyphen_values = true)]
    jobs: u32,
    /// Stop after this much measured time (500ms, 30s, 3m). Default 10s when no stop is given.
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true)]
    time: Option<u64>,
    /// Stop after this many I/Os (all workers together).
    #[arg(long, value_parser = positive_u64, allow_hyphen_values = true)]
    ios: Option<u64>,
    /// Stop after this many bytes (all workers together).
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    bytes: Option<u64>,
    /// Warm-up time excluded from the results.
    #[arg(long, default_value = "0", value_parser = duration_arg, allow_hyphen_values = true)]
    ramp: u64,
    /// Data written: random (refilled per write), zeros, repeat[:BYTE], compress:N.
    #[arg(long, default_value = "random", value_parser = pattern_arg)]
    pattern: Pattern,
    /// Seed of the offset and data streams (same seed → same offsets).
    #[arg(long, default_value_t = 0x5eed_1ab5)]
    seed: u64,
}

impl WorkloadArgs {
    fn to_spec(&self) -> Result<WorkloadSpec> {
        let read_pct = match (self.rw.fixed_read_pct(), self.read_pct) {
            (Some(_), Some(_)) => {
                return Err(anyhow!(ssdlab_workload::SpecError::ReadPctFixed(self.rw)))
            }
            (Some(fixed), None) => fixed,
            (None, given) => given.unwrap_or(50),
        };
        let mut stop = StopCondition {
            time_ns: self.time,
            ios: self.ios,
            bytes: self.bytes,
        };
        if stop.is_unbounded() {
            stop.time_ns = Some(ssdlab_workload::spec::DEFAULT_TIME_NS);
        }
        let spec = WorkloadSpec {
            rw: self.rw,
            read_pct,
            random_pct: self.random_pct.unwrap_or(self.rw.default_random_pct()),
            bs: self.bs,
            align: self.align.unwrap_or(self.bs),
            offset: self.offset,
            span: self.span,
            qd: self.qd,
            jobs: self.jobs,
            stop,
            ramp_ns: self.ramp,
            pattern: self.pattern,
            seed: self.seed,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// How results are printed.
#[derive(Args, Debug, Clone)]
struct OutputArgs {
    /// Print one JSON document in fio's shape (ssdlab's extras under "ssdlab").
    #[arg(long)]
    json: bool,
    /// Write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// File or block device to test. A missing file is created (needs --span); a short one is
    /// extended with data; nothing is ever truncated.
    #[arg(long, value_name = "PATH", required_unless_present = "null", conflicts_with = "null")]
    target: Option<PathBuf>,
    /// Use the null target: I/O completes at once; measures ssdlab's own overhead.
    #[arg(long)]
    null: bool,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// I/O engine: auto (io_uring, else sync), io_uring, sync.
    #[arg(long, default_value = "auto", value_parser = ["auto", "io_uring", "sync"])]
    engine: String,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    buffered: bool,
    /// Allow writes to a block device (devices with a filesystem, partitions or users are still refused).
    #[arg(long)]
    allow_destroy: bool,
    /// Keep going after I/O errors (they are counted and reported).
    #[arg(long)]
    continue_on_error: bool,
    /// Inject a fault for testing error handling: eio@N, enospc@N, short@N (N-th I/O; +EVERY repeats).
    #[arg(long, hide = true, value_parser = |s: &str| s.parse::<ssdlab_engine::FaultPlan>())]
    inject_fault: Option<ssdlab_engine::FaultPlan>,
    #[command(flatten)]
    out: OutputArgs,
}

/// A failure with the exit code it maps to.
struct Failure {
    code: u8,
    err: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            code: EXIT_BAD_INPUT,
            err: e.into(),
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    install_interrupt_handler();
    let res = match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("ssdlab: error: {:#}", f.err);
            ExitCode::from(f.code)
        }
    }
}

fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if ssdlab_engine::interrupted() {
            // A second Ctrl-C: give up at once.
            std::process::exit(EXIT_INTERRUPTED as i32);
        }
        eprintln!("ssdlab: interrupted; draining in-flight I/O and printing results so far (Ctrl-C again to quit at once)");
        ssdlab_engine::request_interrupt();
    });
}

/// Checks that an output path is creatable as a regular file before any work starts.
fn check_output_path(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(anyhow!(
            "--output {}: exists and is not a regular file",
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if parent.is_dir() {
                Ok(())
            } else {
                Err(anyhow!(
                    "--output {}: directory {} does not exist",
                    path.display(),
                    parent.display()
                ))
            }
        }
    }
}

fn emit(out: &OutputArgs, results: &[RunResult]) -> Result<()> {
    let text = if out.json {
        ssdlab_report::fio_json_string(results)
    } else {
        results
            .iter()
            .map(ssdlab_report::render_table)
            .collect::<Vec<_>>()
            .join("\n")
    };
    match &out.output {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display())),
        None => {
            let mut so = std::io::stdout().lock();
            so.write_all(text.as_bytes())
                .and_then(|_| so.flush())
                .context("cannot write to stdout")
        }
    }
}

fn exit_code_for(r: &RunResult) -> u8 {
    if r.interrupted {
        EXIT_INTERRUPTED
    } else if !r.errors.is_empty() {
        EXIT_IO_ERRORS
    } else {
        0
    }
}

fn cmd_run(a: RunArgs) -> Result<u8, Failure> {
    let spec = a.workload.to_spec()?;
    if let Some(p) = &a.out.output {
        check_output_path(p)?;
    }
    let target = match &a.target {
        Some(p) => RealTarget::Path(p.clone()),
        None => RealTarget::Null,
    };
    let opts = RealOptions {
        engine: match a.engine.as_str() {
            "io_uring" => EngineChoice::IoUring,
            "sync" => EngineChoice::Sync,
            _ => EngineChoice::Auto,
        },
        direct: !a.buffered,
        allow_destroy: a.allow_destroy,
        continue_on_error: a.continue_on_error,
        on_note: |n| eprintln!("ssdlab: {n}"),
        fault: a.inject_fault,
        ..Default::default()
    };
    let out = ssdlab_engine::run_real(&spec, &target, &opts)?;
    emit(&a.out, std::slice::from_ref(&out.result))?;
    Ok(exit_code_for(&out.result))
}
