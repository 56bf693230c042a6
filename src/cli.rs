//! Command-line definition and dispatch: parse → validated plan → library call → print → exit
//! code. The commands live in their own modules (`cmd_run`, `cmd_sweep`, `cmd_layout`).

use crate::output::{self, Dest};
use anyhow::anyhow;
use clap::{Args, Parser, Subcommand};
use ssdlab_report::{Exporter, Format, TableStyle};
use ssdlab_workload::{parse_duration, parse_size, Pattern, RwMode, StopCondition, WorkloadSpec};
use std::io::IsTerminal;
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
    Report(crate::cmd_report::ReportArgs),
    /// Run a built-in study (a classic review test; simulated, or the stripe study on real
    /// members with --target) into a results store in the current directory
    /// (ssdlab-study-stripe-PRESET.sqlite, ssdlab-study-alignment.sqlite; --db to choose), print
    /// its report and findings, and write its HTML report (--html to choose where).
    Study(crate::cmd_study::StudyArgs),
    /// Compare presets' simulated figures with published or measured ones (data files): error
    /// per figure and per workload family, and which claims (a > b, a / b ≈ r) hold.
    Validate(crate::cmd_validate::ValidateArgs),
    /// Fit a preset's free parameters to figures: measured now on a file or device (--target),
    /// or read from data files (--from); writes the fitted preset (--out).
    Calibrate(Box<crate::cmd_calibrate::CalibrateArgs>),
    /// Run fio job files or an fio command line (--name=x --rw=randread …) on real targets, or
    /// on a simulated drive or array (--sim).
    Fio(Box<crate::cmd_fio::FioArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of ssdlab or of one of its commands to stdout.
    Man(ManArgs),
}

#[derive(Args, Debug)]
struct CompletionsArgs {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
struct ManArgs {
    /// A command (run, sweep, report, …) for its own page; none for ssdlab(1).
    command: Option<String>,
}

/// The command-line definition (for completions, manual pages and their tests).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
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
    /// Percentage of reads in a mixed workload (rw/randrw); default 50..
    #[arg(long, visible_alias = "rwmixread", value_parser = pct_arg, allow_hyphen_values = true)]
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
    /// Length of the region; default from --offset to the end of the target..
    #[arg(long, visible_alias = "size", value_parser = positive_size_arg, allow_hyphen_values = true)]
    span: Option<u64>,
    /// Outstanding I/Os per worker (queue depth)..
    #[arg(long, visible_alias = "iodepth", default_value = "1", value_parser = positive_u32, allow_hyphen_values = true)]
    qd: u32,
    /// Number of workers..
    #[arg(long, visible_alias = "numjobs", default_value = "1", value_parser = positive_u32, allow_hyphen_values = true)]
    jobs: u32,
    /// Stop after this much measured time (500ms, 30s, 3m; a bare number is seconds). Default
    /// 10s when no stop is given..
    #[arg(long, visible_alias = "runtime", value_parser = duration_arg, allow_hyphen_values = true)]
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
    /// Data written: random (refilled per write; the default), scrambled (filled once, each
    /// 512-byte block of a write stamped with its offset and time: fio's default), once (filled
    /// once, written again unchanged), zeros, repeat[:BYTE], compress:N (each 4 KiB piece random
    /// for its first 100 − N % and zeros after), compress:N/SIZE[/0xHEX] (pieces of SIZE, the
    /// rest filled with the bytes given: fio's buffer_compress_chunk and buffer_pattern),
    /// bytes:0xHEX (1 to 64 bytes repeated from each block's start).
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
            ..Default::default()
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

fn format_arg(s: &str) -> Result<Format, String> {
    s.parse::<Format>()
}

/// How results are printed.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format: table (the default), json (fio's JSON with ssdlab's extras under
    /// "ssdlab"), json+ (fio's JSON+: adds the latency histograms), csv (one row per op kind),
    /// normal (fio's normal text), html (one self-contained page with charts; see
    /// docs/REPORTS.md).
    #[arg(long, value_name = "FORMAT", value_parser = format_arg, conflicts_with_all = ["json", "json_plus"])]
    pub output_format: Option<Format>,
    /// Same as --output-format json.
    #[arg(long, conflicts_with = "json_plus")]
    pub json: bool,
    /// Same as --output-format json+.
    #[arg(long)]
    pub json_plus: bool,
    /// Table borders: auto (Unicode on a terminal, ASCII otherwise; the default), unicode, ascii.
    #[arg(long, value_name = "STYLE", value_parser = ["auto", "unicode", "ascii"])]
    pub table_style: Option<String>,
    /// Write the output to FILE instead of stdout ("-": stdout). Never a file the command reads.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    pub fn dest(&self) -> Dest {
        Dest::from_arg(self.output.as_deref())
    }

    /// The format asked for (table when none is).
    pub fn format(&self) -> Format {
        match (self.output_format, self.json, self.json_plus) {
            (Some(f), _, _) => f,
            (None, true, _) => Format::Json,
            (None, _, true) => Format::JsonPlus,
            _ => Format::Table,
        }
    }

    /// The table style: ASCII unless the table goes to a terminal (or as asked).
    pub fn table_style(&self) -> TableStyle {
        match self.table_style.as_deref() {
            Some("unicode") => TableStyle::Unicode,
            Some("ascii") => TableStyle::Ascii,
            _ if self.dest() == Dest::Stdout && std::io::stdout().is_terminal() => {
                TableStyle::Unicode
            }
            _ => TableStyle::Ascii,
        }
    }

    /// The exporter of the chosen format.
    pub fn exporter(&self) -> anyhow::Result<Box<dyn Exporter>> {
        if self.table_style.is_some() && self.format() != Format::Table {
            return Err(anyhow!(
                "--table-style applies to --output-format table, not {}",
                self.format().as_str()
            ));
        }
        Ok(ssdlab_report::exporter(self.format(), self.table_style())?)
    }
}

/// Unicode table borders when stdout is a terminal, plain ASCII otherwise.
pub fn auto_table_style() -> TableStyle {
    if std::io::stdout().is_terminal() {
        TableStyle::Unicode
    } else {
        TableStyle::Ascii
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

/// fio option names `ssdlab run` knows under another name, and what to use instead.
const FIO_NAMES: &[(&str, &str)] = &[
    ("bs", "--bs"),
    ("blocksize", "--bs"),
    ("ba", "--align"),
    ("blockalign", "--align"),
    ("rwmixwrite", "--read-pct (100 minus the write share)"),
    ("percentage_random", "--random-pct"),
    ("randseed", "--seed"),
    ("ramp_time", "--ramp"),
    ("number_ios", "--ios"),
    ("io_size", "--bytes"),
    ("io_limit", "--bytes"),
    ("ioengine", "--engine auto|io_uring|sync"),
    ("direct", "it uses O_DIRECT unless --buffered"),
    ("buffered", "--buffered"),
    (
        "time_based",
        "it runs for --time (default 10s) unless --ios or --bytes ends it first",
    ),
    ("timeout", "--time"),
    ("iodepth_batch", "--submit-batch"),
    ("iodepth_batch_submit", "--submit-batch"),
    ("readwrite", "--rw"),
    ("zero_buffers", "--pattern zeros"),
    (
        "refill_buffers",
        "its default --pattern random refills every write",
    ),
    ("buffer_compress_percentage", "--pattern compress:N"),
    ("hipri", "--hipri"),
    ("sqthread_poll", "--sqthread-poll"),
    ("fixedbufs", "--fixedbufs on"),
    ("registerfiles", "--registerfiles on"),
    (
        "name",
        "runs have no names (ssdlab fio takes fio's command line as it is)",
    ),
];

/// A one-line answer to an option `ssdlab run` (or another command) does not know: the nearest
/// option of that command, or what a fio option is called here.
fn unknown_option_message(cmd: &clap::Command, sub: Option<&str>, arg: &str) -> String {
    let key = arg.trim_start_matches('-');
    let key = key.split_once('=').map(|(k, _)| k).unwrap_or(key);
    let sc = sub.and_then(|n| cmd.find_subcommand(n)).unwrap_or(cmd);
    let longs: Vec<String> = sc
        .get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    let dashed = key.replace('_', "-");
    let mut hint = if longs.contains(&dashed) {
        Some(format!("--{dashed}"))
    } else {
        None
    };
    if hint.is_none() && sub == Some("run") {
        if let Some((_, to)) = FIO_NAMES.iter().find(|(f, _)| *f == key) {
            if to.starts_with("--") {
                hint = Some(format!("{to} (fio's --{key})"));
            } else {
                return format!("fio's --{key} is not an option of ssdlab run: {to}");
            }
        }
    }
    if hint.is_none() {
        hint = longs
            .iter()
            .map(|l| (ssdlab_fiojob::options::edit_distance(&dashed, l), l))
            .filter(|(d, l)| *d <= 2.max(l.len() / 4))
            .min_by_key(|(d, _)| *d)
            .map(|(_, l)| format!("--{l}"));
    }
    let mut msg = format!("unknown option {}", arg.split('=').next().unwrap_or(arg));
    if let Some(h) = hint {
        msg.push_str(&format!("; did you mean {h}?"));
    }
    if sub == Some("run") && ssdlab_fiojob::options::is_fio_option(key) {
        msg.push_str(" (ssdlab fio takes fio's options as they are)");
    }
    msg
}

pub fn main() -> ExitCode {
    ssdlab_io::memory::limit_malloc_arenas();
    // `ssdlab fio` takes fio's own options (--name=x --rw=…): they are split off before clap
    // sees the arguments.
    let (args, fio_args) = crate::cmd_fio::split_argv(std::env::args_os().collect());
    let sub = args.get(1).and_then(|a| a.to_str()).map(String::from);
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
            let arg = e
                .get(clap::error::ContextKind::InvalidArg)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let negative = arg.len() > 1
                && arg.starts_with('-')
                && arg[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.');
            let msg = if negative {
                // `--qd -1`: clap takes the value for an option it does not know; of `-4k` it
                // names only `-4` (short options), so the whole word is looked up
                let argv: Vec<String> = std::env::args_os()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
                let at = argv
                    .iter()
                    .position(|a| *a == arg)
                    .or_else(|| argv.iter().position(|a| a.starts_with(&arg)));
                let before = at
                    .and_then(|i| argv[..i].last())
                    .filter(|a| a.starts_with("--"))
                    .map(|a| format!("{a} "))
                    .unwrap_or_default();
                let value = at.map(|i| argv[i].as_str()).unwrap_or(&arg);
                format!("{before}{value}: a negative number where a positive one is wanted")
            } else {
                unknown_option_message(&command(), sub.as_deref(), &arg)
            };
            output::note(&format!("error: {msg} (see --help)"));
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        Err(e) => return clap_failure(e),
    };
    let ranks = ssdlab_cluster::launched_by_mpi();
    // Under mpirun only rank 0 speaks.
    crate::signals::install(ranks.is_some_and(|(rank, _)| rank != 0));
    if let Some((rank, size)) = ranks {
        return main_ranks(cli.cmd, fio_args, rank, size);
    }
    finish(run_cmd(cli.cmd, fio_args))
}

fn run_cmd(cmd: Cmd, fio_args: crate::cmd_fio::FioArgv) -> Result<u8, Failure> {
    match cmd {
        Cmd::Fio(mut a) => {
            a.fio_args = fio_args;
            crate::cmd_fio::cmd_fio(*a)
        }
        Cmd::Run(a) => crate::cmd_run::cmd_run(*a),
        Cmd::Drives(a) => cmd_drives(a),
        Cmd::Layout(a) => crate::cmd_layout::cmd_layout(a),
        Cmd::Sweep(a) => crate::cmd_sweep::cmd_sweep(a),
        Cmd::Report(a) => crate::cmd_report::cmd_report(a),
        Cmd::Study(a) => crate::cmd_study::cmd_study(a),
        Cmd::Validate(a) => crate::cmd_validate::cmd_validate(a),
        Cmd::Calibrate(a) => crate::cmd_calibrate::cmd_calibrate(*a),
        Cmd::Completions(a) => cmd_completions(a),
        Cmd::Man(a) => cmd_man(a),
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
fn main_ranks(cmd: Cmd, fio_args: crate::cmd_fio::FioArgv, rank: usize, size: usize) -> ExitCode {
    if size <= 1 {
        return finish(run_cmd(cmd, fio_args));
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
fn main_ranks(cmd: Cmd, fio_args: crate::cmd_fio::FioArgv, rank: usize, _size: usize) -> ExitCode {
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
        other if me.size == 1 => run_cmd(other, fio_args),
        other => Err(Failure::new(
            EXIT_BAD_INPUT,
            anyhow!(
                "ssdlab {} does not run on several ranks (only run and sweep do); start it without mpirun",
                match other {
                    Cmd::Fio(_) => "fio",
                    Cmd::Drives(_) => "drives",
                    Cmd::Layout(_) => "layout",
                    Cmd::Report(_) => "report",
                    Cmd::Completions(_) => "completions",
                    Cmd::Man(_) => "man",
                    Cmd::Validate(_) => "validate",
                    Cmd::Calibrate(_) => "calibrate",
                    _ => "study",
                }
            ),
        )),
    };
    let mine = match &res {
        Ok(c) => *c,
        Err(f) => f.code,
    };
    // Rank 0 reports its error before the other ranks learn the job's code: once they have it
    // they exit, and mpirun aborts the job on the first non-zero exit, which could kill rank 0
    // before it has printed why.
    let reported = match res {
        Err(f) if me.rank == 0 => Some(finish(Err(f))),
        _ => None,
    };
    let code = ssdlab_cluster::finish(&mpi, mine);
    drop(mpi);
    reported.unwrap_or(ExitCode::from(code))
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
            // Rust's number-parsing texts, in words
            let mut msg = first
                .replace("invalid digit found in string", "not a whole number")
                .replace("cannot parse integer from empty string", "empty")
                .replace("number too large to fit in target type", "too large")
                .replace("invalid float literal", "not a number");
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

fn cmd_completions(a: CompletionsArgs) -> Result<u8, Failure> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut command(), "ssdlab", &mut out);
    output::stdout(&String::from_utf8_lossy(&out)).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    Ok(0)
}

/// The manual page of ssdlab (`None`) or of one of its commands, generated from the same
/// definition `--help` prints.
pub fn man_page(command_name: Option<&str>) -> anyhow::Result<Vec<u8>> {
    let mut cmd = command();
    cmd.build();
    let page = match command_name {
        None => cmd,
        Some(name) => {
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let sub = cmd
                .find_subcommand(name)
                .ok_or_else(|| anyhow!("no command '{name}' (commands: {})", names.join(", ")))?
                .clone();
            // clap names are &'static str; one page is made per process.
            let page_name: &'static str = Box::leak(format!("ssdlab-{name}").into_boxed_str());
            sub.name(page_name)
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    // EXIT STATUS, ENVIRONMENT and EXAMPLES go where man-pages(7) puts them: before VERSION.
    let page = String::from_utf8(out)?;
    let extra = man_sections(command_name).to_roff();
    let text = match page.find(".SH VERSION") {
        Some(at) => format!("{}{extra}{}", &page[..at], &page[at..]),
        None => format!("{page}{extra}"),
    };
    Ok(text.into_bytes())
}

/// The examples of each manual page: (command line, what it does).
fn man_examples(command_name: Option<&str>) -> &'static [(&'static str, &'static str)] {
    match command_name {
        None => &[
            ("ssdlab study stripe", "the stripe study on the default simulated drive (no hardware needed): which RAID 0 stripe size for which workload, with findings and an HTML report"),
            ("ssdlab run --sim vertex450-128g --state full --rw randread --qd 32 --time 10s", "a simulated drive, written full, under 4 KiB random reads at queue depth 32"),
            ("ssdlab run --target disk.img --span 1g --rw randwrite --qd 16 --time 30s --json", "a real file (laid out first), fio-style JSON on stdout"),
            ("ssdlab fio jobs.fio --output-format=json", "an fio job file, run as fio runs it"),
        ],
        Some("run") => &[
            ("ssdlab run --sim vertex450-128g --state full --rw randread --qd 32 --time 10s", "a simulated drive, written full first"),
            ("ssdlab run --sim x25e-64g --drives 2 --stripe 64k --state full --rw read --bs 128k --qd 8 --time 5s", "a simulated RAID 0 of two drives, written full first"),
            ("ssdlab run --target disk.img --span 1g --rw randwrite --qd 16 --time 30s --html r.html", "a real file, with an HTML report"),
            ("ssdlab run --null --rw randread --qd 32 --time 3s", "the engine alone (no device): how fast ssdlab itself goes"),
        ],
        Some("drives") => &[("ssdlab drives", "the presets, each with its sources")],
        Some("layout") => &[(
            "ssdlab layout --members 120g,120g --stripe 64k 0 256k",
            "where 256 KiB from the start of a two-member md RAID 0 land",
        )],
        Some("sweep") => &[
            ("ssdlab sweep examples/sweeps/stripe-study-sim.toml", "a sweep file into its results store (run it again to resume)"),
            ("ssdlab sweep examples/sweeps/stripe-study-sim.toml --dry-run", "the points it would run"),
        ],
        Some("report") => &[
            ("ssdlab report results.sqlite --html report.html", "gains, best stripes and findings, and an HTML page"),
            ("ssdlab report results.sqlite --csv points.csv", "every point as CSV"),
        ],
        Some("study") => &[
            ("ssdlab study stripe", "the stripe study on the default simulated drive"),
            ("ssdlab study alignment", "512-byte-aligned against 4 KiB-aligned writes on the classic drives"),
            ("ssdlab study stripe --preset x25e-64g --qd 1,4,32 --time 2s", "a quicker stripe study of another drive"),
        ],
        Some("validate") => &[(
            "ssdlab validate --against data/published",
            "every preset against the published figures in the repository's data directory",
        )],
        Some("calibrate") => &[
            ("ssdlab calibrate --target disk.img --base vertex450-128g --span 1g --out mine.toml", "measure a file (or a device) and fit a preset to it"),
            ("ssdlab calibrate --base x25e-64g --from figures.toml --out fitted.toml", "fit a preset to figures in a data file"),
        ],
        Some("fio") => &[
            ("ssdlab fio jobs.fio", "an fio job file, as fio runs it (or refused, naming the option)"),
            ("ssdlab fio --sim vertex450-128g --state full --name=r --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=32 --size=1g", "fio's command line on a simulated drive, written full first"),
            ("ssdlab fio --parse-only jobs.fio", "check a job file without running it"),
        ],
        Some("completions") => &[(
            "ssdlab completions bash > ~/.local/share/bash-completion/completions/ssdlab",
            "bash completion for the current user",
        )],
        Some("man") => &[("ssdlab man run | man -l -", "read the manual page of ssdlab run")],
        Some(_) => &[],
    }
}

#[cfg(test)]
mod man_tests {
    /// Every example of every manual page is a command line clap accepts (flags that exist,
    /// values that parse), and every page has the three sections.
    #[test]
    fn man_examples_parse_and_sections_exist() {
        let mut names: Vec<Option<String>> = vec![None];
        names.extend(
            super::command()
                .get_subcommands()
                .map(|c| Some(c.get_name().to_string()))
                .filter(|n| n.as_deref() != Some("help")),
        );
        for name in &names {
            let name = name.as_deref();
            let examples = super::man_examples(name);
            assert!(!examples.is_empty(), "{name:?} has examples");
            for (line, _) in examples {
                let args: Vec<&str> = line
                    .split(['|', '>'])
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .collect();
                // fio's own options are taken out before clap sees the rest, as in main.
                let os: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
                let (keep, fio) = crate::cmd_fio::split_argv(os);
                for (key, _, _) in &fio {
                    assert!(
                        ssdlab_fiojob::options::is_fio_option(key),
                        "{line}: {key} is not an fio option"
                    );
                }
                if let Err(e) = super::command().try_get_matches_from(&keep) {
                    panic!("{name:?}: {line}: {e}");
                }
            }
            let page = String::from_utf8(super::man_page(name).unwrap()).unwrap();
            for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH EXAMPLES"] {
                assert!(page.contains(section), "{name:?}: {section} in {page}");
            }
        }
    }
}

/// The sections clap does not make: EXIT STATUS, ENVIRONMENT, EXAMPLES.
fn man_sections(command_name: Option<&str>) -> roff::Roff {
    use roff::{bold, roman, Roff};
    let mut r = Roff::new();
    r.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        ("0", "Done."),
        ("1", "The work ran but something failed: I/O errors in a run, sweep points that failed, or a file that could not be written after the work was done (a full disk): the result is printed first, then the file is named."),
        ("2", "Bad input: one line on stderr says why, and nothing was created or written."),
        ("128+N", "Ended by signal N: 130 for SIGINT (Ctrl-C), 143 for SIGTERM, 129 for SIGHUP. The results so far are printed, marked interrupted; sweeps keep every finished point. A second signal ends ssdlab at once."),
    ] {
        r.control("TP", []).text([bold(code)]).text([roman(meaning)]);
    }
    r.control("SH", ["ENVIRONMENT"]);
    for (var, meaning) in [
        ("SSDLAB_STATE_DIR", "Where verify maps and other state between runs are kept; without it $XDG_STATE_HOME/ssdlab, then ~/.local/state/ssdlab."),
        ("XDG_STATE_HOME, HOME", "Used for the state directory when SSDLAB_STATE_DIR is not set."),
        ("SSDLAB_NO_STATUS", "When set, no status line or progress bar is drawn on stderr (they are drawn only when stderr is a terminal)."),
        ("Any variable named in a job file", "ssdlab fio substitutes ${VAR} in job files from the environment, as fio does (an unset variable is an empty string)."),
    ] {
        r.control("TP", []).text([bold(var)]).text([roman(meaning)]);
    }
    let examples = man_examples(command_name);
    if !examples.is_empty() {
        r.control("SH", ["EXAMPLES"]);
        for (line, what) in examples {
            r.control("TP", []).text([bold(*line)]).text([roman(*what)]);
        }
    }
    r
}

fn cmd_man(a: ManArgs) -> Result<u8, Failure> {
    let page = man_page(a.command.as_deref())?;
    output::stdout(&String::from_utf8_lossy(&page)).map_err(|e| Failure::new(EXIT_FAILED, e))?;
    Ok(0)
}

fn cmd_drives(a: DrivesArgs) -> Result<u8, Failure> {
    let infos: Vec<_> = ssdlab_ssdsim::preset_names()
        .into_iter()
        .filter_map(ssdlab_ssdsim::preset_summary)
        .collect();
    let text = if a.json {
        let v: Vec<serde_json::Value> = infos
            .iter()
            .map(|i| serde_json::json!({"name": i.name, "label": i.label, "description": i.description, "sources": i.sources}))
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
