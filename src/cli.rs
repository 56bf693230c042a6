//! Command-line definition and dispatch: parse → validated plan → library call → print → exit
//! code. The commands live in their own modules (`cmd_run`, `cmd_sweep`, `cmd_layout`).

use crate::output::{self, Dest};
use anyhow::anyhow;
use clap::{Args, Parser, Subcommand};
use ssdlab_workload::{parse_duration, parse_size, Pattern, RwMode, StopCondition, WorkloadSpec};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code for bad input (usage errors, unusable targets): nothing was written.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code when the run finished but I/O errors happened, or something failed after writing.
pub const EXIT_FAILED: u8 = 1;

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
    /// Run one workload against a file, a block device, a RAID 0 stripe set, the null target, or a
    /// simulated drive or array (--sim).
    Run(Box<crate::cmd_run::RunArgs>),
    /// List the simulated drive presets with their sources.
    Drives(DrivesArgs),
    /// Show where a logical range of a RAID 0 array lands on its members (md raid0 layout).
    Layout(crate::cmd_layout::LayoutArgs),
    /// Run a sweep file (targets × stripes × workloads × queue depths) into a results store.
    Sweep(crate::cmd_sweep::SweepArgs),
    /// Print gains, best stripes and recommendations from a results store.
    Report(crate::cmd_sweep::ReportArgs),
    /// Run a built-in simulated study (a classic review test) and print its report.
    Study(crate::cmd_sweep::StudyArgs),
}

#[derive(Args, Debug)]
struct DrivesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

pub fn positive_size_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

pub fn duration_arg(s: &str) -> Result<u64, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

fn pct_arg(s: &str) -> Result<u8, String> {
    match s.trim().trim_end_matches('%').parse::<u32>() {
        Ok(v) if v <= 100 => Ok(v as u8),
        _ => Err(format!("'{s}' is not a percentage (0..100)")),
    }
}

pub fn positive_u32(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

pub fn positive_usize(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
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
    s.parse::<Pattern>().map_err(|e| e.to_string())
}

/// The workload options shared by every command that runs I/O.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
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
    /// Data written: random (refilled per write; the default), zeros, repeat[:BYTE], compress:N.
    #[arg(long, value_parser = pattern_arg)]
    pattern: Option<Pattern>,
    /// Seed of the offset and data streams (same seed → same offsets).
    #[arg(long, default_value_t = 0x5eed_1ab5)]
    seed: u64,
    /// Writes carry per-sector headers (offset, generation, seed, CRC32C); reads check them.
    #[arg(long)]
    pub verify: bool,
}

impl WorkloadArgs {
    /// The --ios/--bytes budget given, if any.
    pub fn stop_budget(&self) -> Option<()> {
        (self.ios.is_some() || self.bytes.is_some()).then_some(())
    }

    pub fn to_spec(&self) -> anyhow::Result<WorkloadSpec> {
        let read_pct = match (self.rw.fixed_read_pct(), self.read_pct) {
            (Some(_), Some(_)) => {
                return Err(anyhow!(ssdlab_workload::SpecError::ReadPctFixed(self.rw)))
            }
            (Some(fixed), None) => fixed,
            (None, given) => given.unwrap_or(50),
        };
        if let Some(p) = self.pattern {
            if read_pct == 100 {
                return Err(anyhow!(
                    "--pattern sets the data written, and --rw {} writes nothing",
                    self.rw
                ));
            }
            if self.verify {
                return Err(anyhow!(
                    "--pattern {p} and --verify both decide the data written; choose one"
                ));
            }
        }
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
            pattern: self.pattern.unwrap_or_default(),
            seed: self.seed,
            verify: self.verify,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// The I/O budget implied by `--ios` and `--bytes` (the smaller wins), in I/Os.
pub fn budget_ios(spec: &WorkloadSpec) -> Option<u64> {
    let by_bytes = spec.stop.bytes.map(|b| b.div_ceil(spec.bs));
    match (spec.stop.ios, by_bytes) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How results are printed.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print one JSON document in fio's shape (ssdlab's extras under "ssdlab").
    #[arg(long)]
    pub json: bool,
    /// Write the output to FILE instead of stdout ("-": stdout). Never a file the command reads.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    pub fn dest(&self) -> Dest {
        Dest::from_arg(self.output.as_deref())
    }
}

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub err: anyhow::Error,
}

impl Failure {
    pub fn new(code: u8, err: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code,
            err: err.into(),
        }
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            code: EXIT_BAD_INPUT,
            err: e.into(),
        }
    }
}

/// The longest error message printed (a message quoting a huge input is cut).
const MAX_ERROR: usize = 1000;

/// `s` cut to at most `max` bytes (at a character boundary), with an ellipsis when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// Makes one line of a (possibly multi-line) error message: the source snippets some parsers
/// print (`  |`, `3 | text`, `  ^`) are dropped, the other lines are joined.
pub fn one_line(msg: &str) -> String {
    let is_snippet = |l: &str| {
        let t = l.trim_start();
        let rest = t
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        rest.starts_with('|')
            || (!t.is_empty() && t.chars().all(|c| c == '^' || c == ' ' || c == '~'))
    };
    let parts: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| !is_snippet(l))
        .collect();
    match parts.split_first() {
        None => String::new(),
        Some((first, [])) => first.to_string(),
        Some((first, rest)) => format!("{first}: {}", rest.join("; ")),
    }
}

pub fn main() -> ExitCode {
    ssdlab_io::memory::limit_malloc_arenas();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_failure(e),
    };
    let ranks = ssdlab_cluster::launched_by_mpi();
    // Under mpirun only rank 0 speaks.
    crate::signals::install(ranks.is_some_and(|(rank, _)| rank != 0));
    if let Some((rank, size)) = ranks {
        return main_ranks(cli.cmd, rank, size);
    }
    finish(run_cmd(cli.cmd))
}

fn run_cmd(cmd: Cmd) -> Result<u8, Failure> {
    match cmd {
        Cmd::Run(a) => crate::cmd_run::cmd_run(*a),
        Cmd::Drives(a) => cmd_drives(a),
        Cmd::Layout(a) => crate::cmd_layout::cmd_layout(a),
        Cmd::Sweep(a) => crate::cmd_sweep::cmd_sweep(a),
        Cmd::Report(a) => crate::cmd_sweep::cmd_report(a),
        Cmd::Study(a) => crate::cmd_sweep::cmd_study(a),
    }
}

/// Prints a failure (one line on stderr) and gives the exit code.
fn finish(res: Result<u8, Failure>) -> ExitCode {
    match res {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            output::note(&format!(
                "error: {}",
                truncate(&one_line(&format!("{:#}", f.err)), MAX_ERROR)
            ));
            ExitCode::from(f.code)
        }
    }
}

/// Started by an MPI launcher as rank `rank` of `size`, in a build without MPI: one rank alone
/// runs as usual; more would be independent copies, so they are refused (rank 0 says why).
#[cfg(not(feature = "mpi"))]
fn main_ranks(cmd: Cmd, rank: usize, size: usize) -> ExitCode {
    if size <= 1 {
        return finish(run_cmd(cmd));
    }
    if rank == 0 {
        output::note(&format!(
            "error: ssdlab was started by an MPI launcher as {size} ranks, but this ssdlab was built without MPI and would run {size} independent copies; build it with `cargo build --release --features mpi` (README.md, \"Many hosts\")"
        ));
    }
    ExitCode::from(EXIT_BAD_INPUT)
}

/// One rank of an MPI job: `run` and `sweep` run on every rank together; other commands run
/// only in a job of one rank. Every rank ends with rank 0's exit code; only rank 0 prints.
#[cfg(feature = "mpi")]
fn main_ranks(cmd: Cmd, rank: usize, _size: usize) -> ExitCode {
    let mpi = match ssdlab_cluster::mpi_rt::Mpi::init() {
        Ok(m) => m,
        Err(e) => {
            if rank == 0 {
                output::note(&format!("error: cannot start MPI: {e}"));
            }
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let me = mpi.info().clone();
    let res = match cmd {
        Cmd::Run(a) => crate::cmd_run::run_on_ranks(*a, &mpi, &me),
        Cmd::Sweep(a) => crate::cmd_sweep::sweep_on_ranks(a, &mpi, &me),
        other if me.size == 1 => run_cmd(other),
        other => Err(Failure::new(
            EXIT_BAD_INPUT,
            anyhow!(
                "ssdlab {} does not run on several ranks (only run and sweep do); start it without mpirun",
                match other {
                    Cmd::Drives(_) => "drives",
                    Cmd::Layout(_) => "layout",
                    Cmd::Report(_) => "report",
                    _ => "study",
                }
            ),
        )),
    };
    let mine = match &res {
        Ok(c) => *c,
        Err(f) => f.code,
    };
    let code = ssdlab_cluster::finish(&mpi, mine);
    drop(mpi);
    if me.rank == 0 {
        if let Err(f) = res {
            return finish(Err(Failure::new(code, f.err)));
        }
    }
    ExitCode::from(code)
}

/// Help and version go to stdout as clap prints them; a usage error becomes one line on stderr
/// (exit 2), like every other error.
fn clap_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(if e.use_stderr() { EXIT_BAD_INPUT } else { 0 })
        }
        _ => {
            let text = e.render().to_string();
            let mut lines = text.lines().map(str::trim).skip_while(|l| l.is_empty());
            let first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error:")
                .trim();
            let mut msg = first.to_string();
            if msg.ends_with(':') {
                // "the following required arguments were not provided:" + an indented list.
                let items: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
                msg.push(' ');
                msg.push_str(&items.join(", "));
            }
            // Keep clap's suggestion ("tip: a similar argument exists: '--iodepth'").
            if let Some(tip) = text.lines().map(str::trim).find(|l| l.starts_with("tip:")) {
                msg.push_str("; ");
                msg.push_str(tip.trim_start_matches("tip:").trim());
            }
            // Under mpirun every rank parses the same arguments; rank 0 says what is wrong.
            if ssdlab_cluster::launched_by_mpi().is_none_or(|(rank, _)| rank == 0) {
                output::note(&format!("error: {msg} (see --help)"));
            }
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn cmd_drives(a: DrivesArgs) -> Result<u8, Failure> {
    let infos: Vec<_> = ssdlab_ssdsim::preset_names()
        .into_iter()
        .filter_map(ssdlab_ssdsim::preset_summary)
        .collect();
    let text = if a.json {
        let v: Vec<serde_json::Value> = infos
            .iter()
            .map(|i| serde_json::json!({"name": i.name, "description": i.description, "sources": i.sources}))
            .collect();
        serde_json::to_string_pretty(&v)? + "\n"
    } else {
        let mut s = String::new();
        for i in &infos {
            s.push_str(&format!("{:<22} {}\n", i.name, i.description));
            for src in &i.sources {
                s.push_str(&format!("{:<22}   source: {src}\n", ""));
            }
        }
        s
    };
    output::stdout(&text).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_drops_snippets() {
        let toml = "TOML parse error at line 3, column 7\n  |\n3 | qd = [1,\n  |       ^\ninvalid array\nexpected `]`\n";
        assert_eq!(
            one_line(toml),
            "TOML parse error at line 3, column 7: invalid array; expected `]`"
        );
        assert_eq!(one_line("plain"), "plain");
        assert_eq!(one_line("a\n\nb"), "a: b");
    }
}
