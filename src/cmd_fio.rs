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
use crate::presets::{preset_file, sim_target};
use crate::{signals, status};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use ssdlab_engine::{
    EngineChoice, FixedBufs, IologTarget, LoopOutcome, RealJob, RealOptions, RealTarget,
    RingOptions, SimJob, SimOptions, SimSession, SimTarget, SteadyGroup,
};
use ssdlab_fiojob::job::split_filenames;
use ssdlab_fiojob::{
    options, Engine, Fadvise, Fallocate, Job, JobSet, Settings, Size, SystemEnv, Unified,
};
use ssdlab_io::cache::FileAdvice;
use ssdlab_io::SyncMode;
use ssdlab_report::logs::{file_name, render_job_log, shared_file_name, LogKind, LogStyle};
use ssdlab_report::{exporter, FioJob, Format, Ignored, Report, ReportJob, TableStyle};
use ssdlab_stats::{JobLog, LogConfig, Recorder, RunResult};
use ssdlab_target::Fill;
use ssdlab_target::{check_outputs, Named};
use ssdlab_workload::replay::{TraceFile, TraceShape};
use ssdlab_workload::{FileRegion, Files, ReplaySpec, Trace, WorkloadSpec};
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

/// One engine job: a fio job (or one clone of it, when clones have files of their own).
struct Unit {
    job: usize,
    clones: u32,
    spec: WorkloadSpec,
    real: Option<(RealTarget, RealOptions<'static>)>,
    iolog: Option<IologTarget>,
    /// The file or device shown in the header.
    label: String,
    /// Read the region back with verification after the job (fio's verify phase).
    verify_back: bool,
}

/// What a unit measured.
#[derive(Clone)]
struct Measured {
    result: RunResult,
    recorder: Recorder,
    outcome: LoopOutcome,
    workers: Vec<(RunResult, Recorder)>,
    /// Why the job's `write_iolog` was not kept.
    iolog_error: Option<String>,
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

/// The ring options of a job on the io_uring engine (fio's defaults: no fixed buffers, no
/// registered files).
fn ring_of(s: &Settings) -> RingOptions {
    match s.engine {
        Engine::IoUring => RingOptions {
            iopoll: s.hipri,
            sqpoll: s.sqthread_poll,
            fixed_bufs: if s.fixedbufs {
                FixedBufs::On
            } else {
                FixedBufs::Off
            },
            register_files: s.registerfiles,
        },
        Engine::Async(_) if sync_mode_of(s) != SyncMode::Threads => RingOptions::default(),
        Engine::Async(_) => RingOptions {
            fixed_bufs: FixedBufs::Off,
            register_files: false,
            ..RingOptions::default()
        },
        _ => RingOptions::default(),
    }
}

/// A size of a target (or a percentage of it) in bytes.
fn resolve_size(s: Size, total: u64) -> u64 {
    match s {
        Size::Bytes(b) => b,
        Size::Percent(p) => ((total as f64) * p / 100.0) as u64,
    }
}

/// The region `(offset, span)` of a job on a target of `total` bytes (`None`: a file that does
/// not exist yet).
fn region(s: &Settings, total: Option<u64>, what: &str, job: &str) -> Result<(u64, u64)> {
    let t = total.unwrap_or(0);
    let pct_needs_size = |k: &str| {
        anyhow!("job {job}: {k} is a percentage, and {what} does not exist yet to take it of")
    };
    let offset = match s.offset {
        None => 0,
        Some(Size::Percent(_)) if total.is_none() => return Err(pct_needs_size("offset")),
        Some(o) => resolve_size(o, t),
    };
    let size = s.size.or(s.filesize.map(Size::Bytes));
    let span = match size {
        Some(Size::Percent(_)) if total.is_none() => return Err(pct_needs_size("size")),
        Some(Size::Percent(p)) => {
            let v = resolve_size(Size::Percent(p), t);
            v.min(t.saturating_sub(offset))
        }
        Some(Size::Bytes(b)) => b,
        None => match total {
            Some(t) if t > offset => t - offset,
            Some(_) => bail!("job {job}: offset {offset} is at or beyond the end of {what}"),
            None => bail!(
                "job {job}: {what} does not exist: give size= (fio lays out a file of that size)"
            ),
        },
    };
    if span == 0 {
        bail!("job {job}: the region on {what} is empty (size=0)");
    }
    Ok((offset, span))
}

/// fio's region of a job of one file with one `filesize` F (`setup_files`): the file is F
/// long whatever its length (one longer is left as it is, one shorter is laid out to the
/// region's end); the region runs from the offset (`offset`, a percentage of the length the
/// target has, plus `offset_increment` per clone) to F, or is `size=N%` of F (rounded down to
/// the smallest block) from the offset; `size` in bytes caps a pass (fio lowers `size` to the
/// region, so without `io_size` a pass ends at the file's end). `real`: the target's length
/// (0 for a file still to be laid out; `None` for fio's null file without `size`, which has
/// none). Returns (offset, region, bytes of a pass).
fn filesize_region(
    s: &Settings,
    fsz: u64,
    real: Option<u64>,
    clone: u32,
    job: &str,
    what: &str,
) -> Result<(u64, u64, u64)> {
    let of = |v: Size, k: &str| {
        match (v, real) {
        (Size::Bytes(b), _) => Ok(b),
        (Size::Percent(p), Some(r)) => Ok(resolve_size(Size::Percent(p), r)),
        (Size::Percent(p), None) => Err(anyhow!(
            "job {job}: {k}={p}% of {what}, which has no length without size=: fio refuses it too (\"you need to specify valid offset=\")"
        )),
    }
    };
    let mut off = match s.offset {
        Some(o) => of(o, "offset")?,
        None => 0,
    };
    if let Some(inc) = s.offset_increment {
        off = off.saturating_add(of(inc, "offset_increment")?.saturating_mul(clone as u64));
    }
    if off >= fsz {
        bail!(
            "job {job}: offset {off}{} on {what} is at or beyond filesize={fsz}, the end of the job's file: fio runs no I/O and fails",
            if clone > 0 && s.offset_increment.is_some() {
                format!(" (clone {clone}, with offset_increment)")
            } else {
                String::new()
            }
        );
    }
    let mut region = fsz - off;
    if let Some(Size::Percent(p)) = s.size {
        region = resolve_size(Size::Percent(p), fsz).min(region);
        region -= region % s.min_block_size_any();
    }
    let pass = match s.size {
        Some(Size::Bytes(b)) => b.min(region),
        _ => region,
    };
    if pass < s.min_block_size_any() {
        bail!(
            "job {job}: the region on {what} ({pass} bytes of filesize={fsz}) is smaller than one block ({} bytes): fio fails too (\"blocksize is larger than data set range\")",
            s.min_block_size_any()
        );
    }
    Ok((off, region, pass))
}

/// `directory` joined with a file name the way fio does (an absolute name stands alone).
fn in_directory(s: &Settings, name: &str) -> PathBuf {
    match &s.directory {
        Some(d) if !Path::new(name).is_absolute() => Path::new(d).join(name),
        _ => PathBuf::from(name),
    }
}

/// The seed of a job: `randseed`, or a new one every run with `randrepeat=0`.
fn seed_of(s: &Settings) -> u64 {
    if s.randrepeat {
        s.randseed
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    }
}

/// The size of the simulated target.
fn sim_size(t: &SimTarget) -> u64 {
    let d = t.drive.user_capacity();
    match t.stripe {
        Some(st) if t.drives > 1 => {
            let block = t.drive.logical_block_size();
            ssdlab_layout::StripeMap::new(&vec![d; t.drives], st, block)
                .map(|m| m.size())
                .unwrap_or(d)
        }
        _ => d,
    }
}

/// The trace of a job, loaded (for its shape and the files it names).
fn load_trace(r: &ReplaySpec, job: &str) -> Result<Trace> {
    Trace::load(r).map_err(|e| anyhow!("job {job}: {e}"))
}

/// Where a replay goes on real targets: `replay_redirect`, else the one file or device the
/// trace names.
fn replay_target(s: &Settings, trace: &Trace, job: &str) -> Result<PathBuf> {
    if let Some(r) = &s.replay_redirect {
        return Ok(PathBuf::from(r));
    }
    if s.filename.is_some() {
        bail!(
            "job {job}: filename= with read_iolog: fio replays onto the files the trace names; give replay_redirect=FILE to replay onto another"
        );
    }
    match trace.files.as_slice() {
        [TraceFile::Named(f)] => Ok(PathBuf::from(f)),
        [TraceFile::Device { major, minor }] => ssdlab_target::device_node(*major, *minor)
            .ok_or_else(|| {
                anyhow!(
                    "job {job}: the trace was recorded on device {major}:{minor}, which this system does not have; give replay_redirect=DEVICE"
                )
            }),
        files => bail!(
            "job {job}: the trace addresses {} files or devices ({}); ssdlab replays onto one target: give replay_redirect=TARGET",
            files.len(),
            files.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// fio's one-line job description.
fn header(j: &Job, label: &str) -> String {
    let s = &j.settings;
    // fio's num2str with 4 digits: 4096B, 16.0KiB.
    let size = |b: u64| ssdlab_report::fio_text::num2str(b, 4, true, "B");
    let bs = |i: usize| {
        let (lo, hi) = s.bs_of(i).bounds();
        format!("{}-{}", size(lo), size(hi))
    };
    let rw = if s.read_iolog.is_some() {
        "replay".to_string()
    } else {
        s.mode.name().to_string()
    };
    format!(
        "{}: (g={}): rw={rw}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}, file={label}",
        j.name,
        j.group,
        bs(0),
        bs(1),
        bs(2),
        s.engine.name(),
        s.iodepth
    )
}

/// How the sync engine does a job's I/Os: fio's libaio on a buffered file does each I/O inside
/// `io_submit` (the kernel has no asynchronous buffered I/O for it), and glibc's POSIX AIO
/// (fio's posixaio) serves one file's requests in order on one thread.
fn sync_mode_of(s: &Settings) -> SyncMode {
    match s.engine {
        Engine::Async("libaio") if !s.direct => SyncMode::Serial,
        Engine::Async("posixaio") => SyncMode::Queue,
        _ => SyncMode::Threads,
    }
}

/// How a file the job needs is laid out, as fio's `extend_file` does it: with data for a job
/// that reads (or writes with `overwrite=1`); otherwise as `fallocate=` says (fio's default on
/// Linux: allocated, unwritten extents); not at all with `create_on_open`.
fn fill_of(s: &Settings) -> Fill {
    if s.create_on_open {
        return Fill::Nothing;
    }
    if s.mode.reads() || s.overwrite {
        return Fill::Data;
    }
    match s.fallocate {
        Fallocate::Native | Fallocate::Posix => Fill::Allocate,
        Fallocate::Keep => Fill::AllocateKeepSize,
        Fallocate::Truncate => Fill::Truncate,
        Fallocate::None => Fill::Nothing,
    }
}

/// fio's `fadvise_hint` (default: random advice for random modes, sequential otherwise).
fn advice_of(s: &Settings) -> Option<FileAdvice> {
    match s.fadvise {
        Fadvise::None => None,
        Fadvise::ByMode if s.mode.random() => Some(FileAdvice::Random),
        Fadvise::ByMode => Some(FileAdvice::Sequential),
        Fadvise::Random => Some(FileAdvice::Random),
        Fadvise::Sequential => Some(FileAdvice::Sequential),
        Fadvise::NoReuse => Some(FileAdvice::NoReuse),
    }
}

/// The random seed of clone `c` of a job (fio seeds each clone by its thread number).
fn clone_seed(seed: u64, c: u32) -> u64 {
    if c == 0 {
        seed
    } else {
        ssdlab_workload::gen::worker_seed(seed, c)
    }
}

/// One meaning per engine: on the drive, the engine sets the queue depth as in fio (a sync
/// engine: one I/O at a time; an asynchronous one: iodepth).
fn sim_note(j: &Job, note: &mut dyn FnMut(String, &mut Vec<String>), notes: &mut Vec<String>) {
    let s = &j.settings;
    note(
        format!(
            "job {}: ioengine={} on the simulated drive: {} (file names{} do not apply: there is no file system or page cache)",
            j.name,
            s.engine.name(),
            match s.engine {
                Engine::Sync(_) => "one I/O at a time (QD 1), as fio's synchronous engines".to_string(),
                Engine::Null => "the drive's queue at iodepth (fio's null engine would complete without a device)".to_string(),
                _ => format!("iodepth={} outstanding I/Os per clone", s.iodepth),
            },
            if s.direct { "" } else { " and direct=0" },
        ),
        notes,
    );
}

/// The files of clone `c` of a job with several (fio's `nrfiles` without `filename`, named
/// JOB.CLONE.FILENO in the directory; or `filename=a:b`), or with a range of file sizes;
/// `None` for a job of one file of one size.
fn several_files(s: &Settings, job: &str, c: u32) -> Option<Vec<String>> {
    match &s.filename {
        Some(f) => {
            let v = split_filenames(f);
            // A range of file sizes is drawn per file, one file too.
            (v.len() > 1 || s.filesize_max.is_some()).then(|| {
                v.iter()
                    .map(|n| in_directory(s, n).display().to_string())
                    .collect()
            })
        }
        None => (s.nrfiles > 1 || s.filesize_max.is_some()).then(|| {
            (0..s.nrfiles)
                .map(|i| {
                    in_directory(s, &format!("{job}.{c}.{i}"))
                        .display()
                        .to_string()
                })
                .collect()
        }),
    }
}

/// The regions of a job's several files as fio sizes them (`filesize`, a range drawn per file
/// and rounded down to the smallest block size; else `size` split evenly; else each file's own
/// length, `lens`), `offset` applied in each file, laid out one after another in the job's
/// address space from `base`; and the bytes of one pass (`size` caps the files' total).
fn file_regions(
    s: &Settings,
    lens: &[Option<u64>],
    job: &str,
    seed: u64,
    base: u64,
) -> Result<(Vec<FileRegion>, u64)> {
    let n = lens.len() as u64;
    let min_bs = s.min_block_size_any();
    let mut rng = ssdlab_workload::rng::Rng::new(seed ^ 0x6669_6c65_7369_7a65);
    let mut regions = Vec::with_capacity(lens.len());
    let mut at = base;
    for (i, len) in lens.iter().enumerate() {
        let offset_of = |total: u64| s.offset.map_or(0, |o| resolve_size(o, total));
        let (offset, span) = match (s.filesize, s.filesize_max, s.size) {
            (Some(lo), hi, _) => {
                let l = match hi {
                    Some(hi) => {
                        let v = lo + rng.below(hi - lo);
                        v - v % min_bs
                    }
                    None => lo,
                };
                let o = offset_of(l);
                if o >= l {
                    bail!("job {job}: offset {o} is at or beyond the end of file {i} ({l} bytes, filesize=)");
                }
                // `size=N%`: that share of the file from the offset, rounded down to a block.
                match s.size {
                    Some(Size::Percent(p)) => {
                        let v = resolve_size(Size::Percent(p), l).min(l - o);
                        (o, v - v % min_bs)
                    }
                    _ => (o, l - o),
                }
            }
            (None, _, Some(Size::Bytes(b))) => (offset_of(len.unwrap_or(0)), b / n),
            (None, _, Some(Size::Percent(p))) => match len {
                Some(l) => {
                    let o = offset_of(*l);
                    (o, resolve_size(Size::Percent(p), *l).min(l.saturating_sub(o)))
                }
                None => bail!(
                    "job {job}: size={p}% of files that do not exist yet: give size= in bytes"
                ),
            },
            (None, _, None) => match len {
                Some(l) if *l > 0 => {
                    let o = offset_of(*l);
                    if o >= *l {
                        bail!("job {job}: offset {o} is at or beyond the end of file {i} ({l} bytes)");
                    }
                    (o, l - o)
                }
                _ => bail!(
                    "job {job}: file {i} does not exist: give size= or filesize= (fio lays out files of that size)"
                ),
            },
        };
        if span < min_bs {
            bail!("job {job}: file {i}'s region of {span} bytes is smaller than one block ({min_bs} bytes)");
        }
        regions.push(FileRegion {
            base: at,
            offset,
            span,
        });
        at += offset + span;
    }
    let all: u64 = regions.iter().map(|r| r.span).sum();
    let pass = match (s.filesize, s.size) {
        (Some(_), Some(Size::Bytes(b))) => all.min(b),
        _ => all,
    };
    Ok((regions, pass))
}

/// The workload of a job with several files: `regions`, switched as `file_service_type` says,
/// `pass` bytes a pass.
fn files_workload(s: &Settings, regions: Vec<FileRegion>, pass: u64, seed: u64) -> WorkloadSpec {
    let end = regions
        .iter()
        .map(|r| r.base + r.offset + r.span)
        .max()
        .unwrap_or(0);
    let mut spec = s.workload(0, pass, 1, seed);
    spec.offset = 0;
    spec.span = Some(end);
    spec.files = Some(Files {
        regions,
        service: s.file_service,
    });
    spec
}

/// What a job's file is ([`ssdlab_target::probe`]). A character device (`/dev/null`,
/// `/dev/zero`, which fio's examples read and write as files) is refused as not supported,
/// not as a wrong path.
fn probe_for_fio(path: &Path, job: &str) -> Result<ssdlab_target::TargetInfo> {
    use std::os::unix::fs::FileTypeExt as _;
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device()) {
        bail!(
            "job {job}: {} is a character device: not supported by ssdlab (fio reads and writes character devices as files; ssdlab measures regular files and block devices — ioengine=null stands in for /dev/null and /dev/zero)",
            path.display()
        );
    }
    ssdlab_target::probe(path).map_err(|e| anyhow!("job {job}: {e}"))
}

/// What ssdlab does not do with several files in a job, refused by name.
fn check_several(s: &Settings, job: &str, n: usize) -> Result<()> {
    if let Some(o) = s.openfiles.filter(|&o| o != 0 && o != n as u64) {
        bail!("job {job}: openfiles={o}: fewer files open at once than the job has ({n}) is not supported by ssdlab (it keeps every file open, fio's default)");
    }
    if s.verify {
        bail!("job {job}: verify with several files in a job is not supported by ssdlab");
    }
    if s.replay().is_some() {
        bail!("job {job}: read_iolog with several files in a job is not supported by ssdlab");
    }
    if s.offset_increment.is_some() {
        bail!("job {job}: offset_increment with several files in a job is not supported by ssdlab");
    }
    if s.mode.trims() {
        bail!(
            "job {job}: rw={} with several files in a job is not supported by ssdlab",
            s.mode.name()
        );
    }
    Ok(())
}

/// Builds the units of every job; notes go to `notes`.
fn plan_units(
    js: &JobSet,
    sim: Option<&SimTarget>,
    a: &FioArgs,
    per_worker: &dyn Fn(&Job) -> bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Unit>> {
    let stop = Some(signals::stop_flag());
    let mut units = Vec::new();
    // The files the jobs before lay out, and to what length: fio sets a job's files up when
    // it starts, after the jobs before it (and the clones of a job one after another), so an
    // `offset` or `size` percentage is of the length they left.
    let mut laid: Vec<(PathBuf, u64)> = Vec::new();
    let mut noted = std::collections::HashSet::new();
    let mut note = |n: String, notes: &mut Vec<String>| {
        if noted.insert(n.clone()) {
            notes.push(n);
        }
    };
    for (ji, j) in js.jobs.iter().enumerate() {
        let s = &j.settings;
        let name = j.name.as_str();
        let seed = seed_of(s);
        let clones = s.numjobs;
        if s.sync_engine() && s.iodepth > 1 {
            note(
                format!(
                    "job {name}: iodepth={} has no effect with ioengine={} (one I/O at a time, as in fio)",
                    s.iodepth,
                    s.engine.name()
                ),
                notes,
            );
        }
        let write_iolog = |file_name: &str| {
            s.write_iolog
                .as_ref()
                .map(|p| IologTarget::new(PathBuf::from(p), file_name.to_string()))
        };
        if let Some(sim) = sim {
            let size = sim_size(sim);
            if let Some(first) = several_files(s, name, 0) {
                // Several files: several regions of the drive, one after another.
                check_several(s, name, first.len())?;
                for c in 0..clones {
                    let names = several_files(s, name, c).unwrap_or_default();
                    let lens = vec![None; names.len()];
                    let (regions, pass) = file_regions(s, &lens, name, clone_seed(seed, c), 0)?;
                    let spec = files_workload(s, regions, pass, clone_seed(seed, c));
                    let end = spec.span.unwrap_or(0);
                    if end > size {
                        bail!(
                            "job {name}: its {} files need {end} bytes of the simulated drive {}, which has {size}",
                            names.len(),
                            sim.name
                        );
                    }
                    let iolog = write_iolog(&sim.name).map(|mut t| {
                        t.files = files_of(&spec, &names);
                        t
                    });
                    units.push(Unit {
                        job: ji,
                        clones: 1,
                        spec,
                        real: None,
                        iolog,
                        label: sim.name.clone(),
                        verify_back: false,
                    });
                }
                sim_note(j, &mut note, notes);
                continue;
            }
            let (spec, label) = match s.replay() {
                Some(r) => {
                    let t = load_trace(&r, name)?;
                    let shape = t.shape();
                    let offset = match s.offset {
                        Some(o) => resolve_size(o, size),
                        None => 0,
                    };
                    (
                        s.replay_workload(&shape, r, offset, clones, seed),
                        sim.name.clone(),
                    )
                }
                None => {
                    let what = format!("the simulated drive {}", sim.name);
                    let (off, span) = match s.filesize {
                        Some(_) => (0, 0),
                        None => region(s, Some(size), &what, name)?,
                    };
                    // Each clone its own job with its own size and random stream, as in fio.
                    let file_name = s.filename.clone().unwrap_or_else(|| sim.name.clone());
                    for c in 0..clones {
                        // One file of one `filesize`: fio's region of it on the drive.
                        let (off, span, pass) = match s.filesize {
                            Some(f) => filesize_region(s, f, Some(size), c, name, &what)?,
                            // clone k at offset + k × offset_increment, as on a file
                            None => match s.offset_increment {
                                Some(inc) => (
                                    off.saturating_add(
                                        resolve_size(inc, size).saturating_mul(c as u64),
                                    ),
                                    span,
                                    span,
                                ),
                                None => (off, span, span),
                            },
                        };
                        if off.saturating_add(span) > size {
                            match s.filesize {
                                Some(f) => bail!("job {name}: filesize={f} from offset {off} ends beyond {what}, which has {size} bytes"),
                                None => bail!("job {name}: clone {c}'s region ({span} bytes from offset {off}, with offset_increment) ends beyond {what}, which has {size} bytes"),
                            }
                        }
                        let mut spec = s.workload(off, pass, 1, clone_seed(seed, c));
                        spec.span = Some(span);
                        units.push(Unit {
                            job: ji,
                            clones: 1,
                            spec,
                            real: None,
                            iolog: write_iolog(&file_name),
                            label: sim.name.clone(),
                            verify_back: false,
                        });
                    }
                    sim_note(j, &mut note, notes);
                    continue;
                }
            };
            sim_note(j, &mut note, notes);
            let file_name = s.filename.clone().unwrap_or_else(|| sim.name.clone());
            units.push(Unit {
                job: ji,
                clones,
                spec,
                real: None,
                iolog: write_iolog(&file_name),
                label,
                verify_back: false,
            });
            continue;
        }
        let sync_mode = sync_mode_of(s);
        let opts = |null_size: u64| RealOptions {
            engine: match (s.engine, sync_mode) {
                (Engine::IoUring, _) | (Engine::Async(_), SyncMode::Threads) => {
                    EngineChoice::IoUring
                }
                _ => EngineChoice::Sync,
            },
            sync_mode,
            fill: fill_of(s),
            invalidate: s.invalidate,
            advice: advice_of(s),
            pre_read: s.pre_read,
            direct: s.direct,
            allow_destroy: a.allow_destroy,
            continue_on_error: s.continue_on_error,
            null_size,
            on_note: output::note,
            submit_batch: s.iodepth_batch.unwrap_or(1),
            // fio reaps at most iodepth_batch_complete_max (its default: the minimum, 1)
            // completions before it refills the queue
            reap_max: s.iodepth_batch_complete_max.unwrap_or(1).max(1),
            stop,
            max_memory: a.max_memory,
            ring: ring_of(s),
            per_worker: per_worker(j) && clones > 1,
            ..Default::default()
        };
        match (s.engine, sync_mode) {
            (Engine::Async(e), SyncMode::Threads) => note(
                format!("ioengine={e} runs on ssdlab's io_uring engine (same queue depth, plain buffers and descriptors)"),
                notes,
            ),
            (Engine::Async(e), SyncMode::Serial) => note(
                format!(
                    "job {name}: ioengine={e} on a buffered file (direct=0): the kernel does each I/O inside io_submit, so, as in fio, the I/Os are done one at a time as they are submitted and reaped afterwards (iodepth={} in flight, one being done)",
                    s.iodepth
                ),
                notes,
            ),
            (Engine::Async(e), SyncMode::Queue) => note(
                format!(
                    "job {name}: ioengine={e}: glibc's POSIX AIO does one file's I/Os one at a time on one thread, and so does ssdlab (iodepth={} queued, one being done)",
                    s.iodepth
                ),
                notes,
            ),
            _ => {}
        }
        if let Some(r) = s.replay() {
            let t = load_trace(&r, name)?;
            let path = replay_target(s, &t, name)?;
            let shape: TraceShape = t.shape();
            let offset = match s.offset {
                Some(Size::Bytes(o)) => o,
                Some(Size::Percent(_)) => {
                    bail!("job {name}: offset= as a percentage with read_iolog")
                }
                None => 0,
            };
            let spec = s.replay_workload(&shape, r, offset, clones, seed);
            let label = path.display().to_string();
            units.push(Unit {
                job: ji,
                clones,
                spec,
                real: Some((RealTarget::Path(path), opts(0))),
                iolog: write_iolog(&label),
                label,
                verify_back: false,
            });
            continue;
        }
        if let (Engine::Null, Some(first)) = (s.engine, several_files(s, name, 0)) {
            // fio's null engine with several files: a null file of each file's size.
            check_several(s, name, first.len())?;
            let batch = s.iodepth_batch.unwrap_or(1).max(1);
            for c in 0..clones {
                let names: Vec<String> = several_files(s, name, c)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|n| n.strip_prefix("./").map(str::to_string).unwrap_or(n))
                    .collect();
                let lens = vec![None; names.len()];
                let (regions, pass) = file_regions(s, &lens, name, clone_seed(seed, c), 0)?;
                let mut spec = files_workload(s, regions, pass, clone_seed(seed, c));
                spec.qd = spec.qd.min(batch);
                let end = spec.span.unwrap_or(0);
                let iolog = write_iolog("null").map(|mut t| {
                    t.files = files_of(&spec, &names);
                    t
                });
                units.push(Unit {
                    job: ji,
                    clones: 1,
                    spec,
                    real: Some((RealTarget::Null, opts(end))),
                    iolog,
                    label: "null".into(),
                    verify_back: false,
                });
            }
            continue;
        }
        if let (Engine::Null, Some(f)) = (s.engine, s.filesize) {
            // fio's null file of one `filesize`: as long as `size` (its length when it is
            // given; none without), the region and the pass as on a file.
            let real = match s.size {
                Some(Size::Bytes(b)) => Some(b),
                _ => None,
            };
            let batch = s.iodepth_batch.unwrap_or(1).max(1);
            for c in 0..clones {
                let (off, span, pass) = filesize_region(s, f, real, c, name, "the null file")?;
                let mut spec = s.workload(off, pass, 1, clone_seed(seed, c));
                spec.span = Some(span);
                spec.qd = spec.qd.min(batch);
                units.push(Unit {
                    job: ji,
                    clones: 1,
                    spec,
                    real: Some((RealTarget::Null, opts(off + span))),
                    iolog: write_iolog("null"),
                    label: "null".into(),
                    verify_back: false,
                });
            }
            continue;
        }
        if matches!(s.engine, Engine::Null) {
            let size = match s.size {
                Some(Size::Bytes(b)) => b,
                Some(Size::Percent(_)) => bail!("job {name}: ioengine=null needs size= in bytes"),
                None => bail!("job {name}: ioengine=null needs size= (fio's null engine does too)"),
            };
            // fio's null "file" is the job's region: `size` bytes from `offset` on.
            let offset = match s.offset {
                Some(o) => resolve_size(o, size),
                None => 0,
            };
            // fio's null engine holds one submission batch in flight at a time: it completes
            // what was committed before it takes more (its queue answers "busy" until then).
            let batch = s.iodepth_batch.unwrap_or(1).max(1);
            if s.queue_depth() > batch {
                note(
                    format!(
                        "job {name}: ioengine=null: fio's null engine has one submission batch in flight at a time (iodepth_batch={batch}), so the depth is {batch}, not iodepth={}, as in fio",
                        s.iodepth
                    ),
                    notes,
                );
            }
            for c in 0..clones {
                // clone k at offset + k × offset_increment (of the null file's size), and its
                // file named as fio names it (JOB.CLONE.0, or filename=)
                let offset = match s.offset_increment {
                    Some(inc) => {
                        offset.saturating_add(resolve_size(inc, size).saturating_mul(c as u64))
                    }
                    None => offset,
                };
                let mut spec = s.workload(offset, size.max(1), 1, clone_seed(seed, c));
                spec.qd = spec.qd.min(batch);
                let file = match &s.filename {
                    Some(f) => split_filenames(f).concat(),
                    None => format!("{name}.{c}.0"),
                };
                units.push(Unit {
                    job: ji,
                    clones: 1,
                    spec,
                    real: Some((RealTarget::Null, opts(offset.saturating_add(size)))),
                    iolog: write_iolog(&file),
                    label: "null".into(),
                    verify_back: false,
                });
            }
            continue;
        }
        if let Some(first) = several_files(s, name, 0) {
            // Several files: shared by the clones (filename=a:b), or each clone's own
            // (JOB.CLONE.FILENO); each clone a job of its own, as in fio.
            check_several(s, name, first.len())?;
            for c in 0..clones {
                let names = several_files(s, name, c).unwrap_or_default();
                let mut lens = Vec::with_capacity(names.len());
                for n in &names {
                    let info = probe_for_fio(Path::new(n), name)?;
                    lens.push(info.exists.then_some(info.size));
                }
                let (regions, pass) = file_regions(s, &lens, name, clone_seed(seed, c), 0)?;
                let spec = files_workload(s, regions, pass, clone_seed(seed, c));
                let label = names.join(":");
                let iolog = write_iolog(&label).map(|mut t| {
                    t.files = files_of(&spec, &names);
                    t
                });
                let mut o = opts(0);
                o.per_worker = false;
                units.push(Unit {
                    job: ji,
                    clones: 1,
                    spec,
                    real: Some((
                        RealTarget::Files(names.iter().map(PathBuf::from).collect()),
                        o,
                    )),
                    iolog,
                    label,
                    verify_back: false,
                });
            }
            continue;
        }
        // One file shared by the clones, or (without filename=) a file per clone, named as
        // fio names it: JOB.CLONE.0 in the directory. With offset_increment each clone has its
        // own region (clone k at offset + k × increment).
        // Each clone is a job of its own (its own size, number_ios and random stream), as in
        // fio; clones of one file share it.
        let files: Vec<(PathBuf, u32, u32)> = match &s.filename {
            Some(f) => (0..clones)
                .map(|c| (in_directory(s, &split_filenames(f).concat()), 1, c))
                .collect(),
            None => (0..clones)
                .map(|c| (in_directory(s, &format!("{name}.{c}.0")), 1, c))
                .collect(),
        };
        for (path, n, clone) in files {
            let info = probe_for_fio(&path, name)?;
            let what = path.display().to_string();
            if s.mode.trims() && info.kind == ssdlab_target::TargetKind::File {
                bail!(
                    "job {name}: rw={} on {what}, a regular file{}: fio's trims are BLKDISCARD, which a regular file does not take (fio ends the job with error 25, \"Inappropriate ioctl for device\"); trim a block device, ioengine=null or --sim",
                    s.mode.name(),
                    if info.exists { "" } else { " (to be created)" }
                );
            }
            // (fio lays out the files of a job's clones one clone after another before any
            // starts, `create_serialize`: a clone after the first finds a shared file as long
            // as the clones before it made it.)
            let total = laid
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, l)| *l)
                .or(info.exists.then_some(info.size));
            let real = total.unwrap_or(0);
            if let (0, Some(_), Some(Size::Percent(p))) = (real, s.filesize, s.offset) {
                if p > 0.0 {
                    note(
                        format!("job {name}: offset={p}% of {what}, which does not exist yet, is 0, as in fio"),
                        notes,
                    );
                }
            }
            let (off, span, pass) = match s.filesize {
                // One file of one `filesize`: fio's region of it.
                Some(f) => filesize_region(s, f, Some(real), clone, name, &what)?,
                None => {
                    let (mut off, span) = region(s, total, &what, name)?;
                    if let Some(inc) = s.offset_increment {
                        if matches!(inc, Size::Percent(_)) && total.is_none() {
                            bail!("job {name}: offset_increment is a percentage, and {what} does not exist yet");
                        }
                        off += resolve_size(inc, total.unwrap_or(0)) * clone as u64;
                    }
                    (off, span, span)
                }
            };
            match laid.iter_mut().find(|(p, _)| *p == path) {
                Some((_, l)) => *l = (*l).max(off + span),
                None => laid.push((path.clone(), real.max(off + span))),
            }
            if total.is_some()
                && info.kind == ssdlab_target::TargetKind::File
                && real < off.saturating_add(span)
            {
                note(
                    format!(
                        "job {name}: {what} is shorter than the job needs: fio deletes and lays out such a file again; ssdlab keeps its data and extends it"
                    ),
                    notes,
                );
            }
            let mut spec = s.workload(off, pass, n, clone_seed(seed, clone));
            spec.span = Some(span);
            if s.filesize.is_some()
                && s.verify
                && s.do_verify
                && s.mode.writes()
                && s.mode.random()
                && spec.stop.bytes.is_some_and(|b| b < span)
            {
                bail!(
                    "job {name}: verify with rw={} writing {} of the {span} bytes of its region (size= below filesize=) is not supported by ssdlab: fio reads back the blocks it wrote, ssdlab reads its region from the start",
                    s.mode.name(),
                    spec.stop.bytes.unwrap_or(0)
                );
            }
            let mut o = opts(0);
            o.per_worker = per_worker(j) && n > 1;
            units.push(Unit {
                job: ji,
                clones: n,
                spec,
                real: Some((RealTarget::Path(path.clone()), o)),
                iolog: write_iolog(&what),
                label: what,
                verify_back: s.verify && s.do_verify && s.mode.writes(),
            });
        }
    }
    Ok(units)
}

/// The names an iolog gives a job's files, with where each begins in its address space.
fn files_of(spec: &WorkloadSpec, names: &[String]) -> Vec<(u64, String)> {
    spec.files
        .as_ref()
        .map(|f| {
            f.regions
                .iter()
                .zip(names)
                .map(|(r, n)| (r.base, n.clone()))
                .collect()
        })
        .unwrap_or_default()
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

/// The read-back of a verifying write job: its region read once, sequentially, checked; no
/// more than the job wrote (a pass of `size` smaller than `filesize`'s region, or `io_size`
/// smaller than the region: fio verifies what it wrote).
fn verify_spec(w: &WorkloadSpec) -> WorkloadSpec {
    let mut v = w.clone();
    v.rw = ssdlab_workload::RwMode::Read;
    v.read_pct = 100;
    v.random_pct = 0;
    v.random_map = false;
    v.random_every = 1;
    v.seq_skip = 0;
    v.seq_back = 0;
    v.jobs = 1;
    v.ramp_ns = 0;
    // fio's verify loop checks no minimum rate
    v.min_rate = None;
    v.stop = ssdlab_workload::StopCondition {
        bytes: match (v.span, w.stop.bytes) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, _) => a,
        },
        ..Default::default()
    };
    v
}

/// What the engine keeps for a job's logs (fio's `write_*_log`), if it has any.
fn log_config(s: &Settings, spec: &WorkloadSpec) -> Option<LogConfig> {
    let lines = s.bw_log.is_some() || s.iops_log.is_some() || s.lat_log.is_some();
    if !lines && s.hist_log.is_none() {
        return None;
    }
    // (a histogram log alone needs no line per I/O: one-second windows cost next to nothing)
    let interval_ns = match s.log_avg_msec {
        0 if !lines => 1_000_000_000,
        ms => ms.saturating_mul(1_000_000),
    };
    let averaged = lines && s.log_avg_msec > 0;
    Some(LogConfig {
        interval_ns,
        // fio's bw_avg_time and iops_avg_time follow log_avg_msec when the log is written
        bw: averaged && s.bw_log.is_some(),
        iops: averaged && s.iops_log.is_some(),
        reserve: (spec.stop.time_ns.unwrap_or(0))
            .checked_div(interval_ns)
            .unwrap_or(0)
            .min(1 << 20) as usize,
        max: s.log_max_value,
        hist_msec: if s.hist_log.is_some() {
            s.log_hist_msec
        } else {
            0
        },
    })
}

/// How fio writes a job's log lines.
fn log_style(s: &Settings) -> LogStyle {
    LogStyle {
        offset: s.log_offset,
        max: s.log_max_value,
        hist_coarseness: s.log_hist_coarseness,
        // fio's synchronous engines record no submission latency (`io_u_queued` is not called
        // for them), and fio's null engine at iodepth=1 is one (`null.c`: FIO_SYNCIO)
        slat: match s.engine {
            Engine::Sync(_) => false,
            Engine::Null => s.iodepth > 1,
            _ => true,
        },
    }
}

/// One log file of the run: its kind, the option that asked for it, and the fio thread numbers
/// whose logs it holds (one, or with `per_job_logs=0` every thread of the jobs sharing it, which
/// fio appends to the file).
struct LogFile {
    path: PathBuf,
    kind: LogKind,
    role: &'static str,
    threads: Vec<u32>,
    append: bool,
}

/// fio's thread number (from 1, in job order, each clone its own) of each job's first clone.
fn first_threads(js: &JobSet) -> Vec<u32> {
    js.jobs
        .iter()
        .scan(1u32, |next, j| {
            let first = *next;
            *next = next.saturating_add(j.settings.numjobs);
            Some(first)
        })
        .collect()
}

/// Every log file the jobs write, named as fio 3.33 names them (`init.c`: `gen_log_name`:
/// `PREFIX_KIND.N.log`, or `PREFIX_KIND.log` with `per_job_logs=0`; the prefix relative to the
/// current directory, the job's name when none is given).
fn log_files(js: &JobSet) -> Result<Vec<LogFile>> {
    let firsts = first_threads(js);
    let mut files: Vec<LogFile> = Vec::new();
    for (j, &first) in js.jobs.iter().zip(&firsts) {
        let s = &j.settings;
        for (prefix, role, kinds) in [
            (&s.bw_log, "write_bw_log", &[LogKind::Bw][..]),
            (
                &s.lat_log,
                "write_lat_log",
                &[LogKind::Lat, LogKind::Slat, LogKind::Clat][..],
            ),
            (&s.hist_log, "write_hist_log", &[LogKind::ClatHist][..]),
            (&s.iops_log, "write_iops_log", &[LogKind::Iops][..]),
        ] {
            let Some(prefix) = prefix else { continue };
            let prefix = Path::new(if prefix.is_empty() { &j.name } else { prefix });
            for &kind in kinds {
                for t in first..first.saturating_add(s.numjobs) {
                    let path = if s.per_job_logs {
                        file_name(prefix, kind, t)
                    } else {
                        shared_file_name(prefix, kind)
                    };
                    match files.iter_mut().find(|f| f.path == path) {
                        Some(f) if f.append && !s.per_job_logs && f.kind == kind => {
                            f.threads.push(t)
                        }
                        Some(f) => bail!(
                            "{role}: job {} would write {}, which {} writes already; give the logs other names",
                            j.name,
                            path.display(),
                            f.role
                        ),
                        None => files.push(LogFile {
                            path,
                            kind,
                            role,
                            threads: vec![t],
                            append: !s.per_job_logs,
                        }),
                    }
                }
            }
        }
    }
    Ok(files)
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
            Some(sim_target(
                name,
                &sets,
                drives,
                a.stripe,
                a.state.as_deref().unwrap_or("fresh"),
                &ssdlab_ssdsim::AdapterChoice::default(),
            )?)
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
    let mut units = plan_units(&js, sim.as_ref(), &a, &per_worker, &mut notes)?;
    // fio's logs: the engine keeps them per unit; each unit's clones are fio threads numbered
    // from its job's first.
    let log_files = log_files(&js)?;
    let unit_logs: Vec<Option<LogConfig>> = units
        .iter()
        .map(|u| log_config(&js.jobs[u.job].settings, &u.spec))
        .collect();
    let unit_threads: Vec<u32> = {
        let firsts = first_threads(&js);
        let mut taken = vec![0u32; js.jobs.len()];
        units
            .iter()
            .map(|u| {
                let t = firsts[u.job] + taken[u.job];
                taken[u.job] += u.spec.jobs;
                t
            })
            .collect()
    };
    for (u, c) in units.iter_mut().zip(&unit_logs) {
        if let Some((_, o)) = &mut u.real {
            o.log = *c;
        }
    }

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
    for w in 0..nwaves {
        let us = wave_units(w);
        match &sim {
            Some(t) => {
                for u in &us {
                    ssdlab_engine::check_sim_run(&u.spec, t, a.max_memory)
                        .map_err(|e| job_failure(e, &js.jobs[u.job]))?;
                }
            }
            None => {
                // Each job alone first, so that what is wrong with one is said in its words
                // (its options as written, where); then what the wave's jobs need together.
                for u in &us {
                    let (t, o) = u.real.as_ref().expect("real unit");
                    ssdlab_engine::check_real(&u.spec, t, o)
                        .map_err(|e| job_failure(e, &js.jobs[u.job]))?;
                }
                let jobs: Vec<RealJob<'_>> = us
                    .iter()
                    .map(|u| {
                        let (t, o) = u.real.as_ref().expect("real unit");
                        RealJob {
                            spec: &u.spec,
                            target: t,
                            opts: o,
                            iolog: None,
                        }
                    })
                    .collect();
                ssdlab_engine::check_real_jobs(&jobs).map_err(engine_failure)?;
                for u in us.iter().filter(|u| u.verify_back) {
                    let (t, o) = u.real.as_ref().expect("real unit");
                    ssdlab_engine::check_real(&verify_spec(&u.spec), t, o)
                        .map_err(|e| job_failure(e, &js.jobs[u.job]))?;
                }
            }
        }
    }
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
    let mut merges: Vec<(usize, PathBuf, Vec<PathBuf>)> = Vec::new();
    let sharing: Vec<usize> = units
        .iter()
        .map(|u| {
            u.iolog.as_ref().map_or(0, |t| {
                units
                    .iter()
                    .filter(|v| v.iolog.as_ref().is_some_and(|x| x.path == t.path))
                    .count()
            })
        })
        .collect();
    for i in 0..units.len() {
        let Some(t) = &units[i].iolog else { continue };
        let dest = t.path.clone();
        if sharing[i] < 2 {
            continue;
        }
        let k = match merges.iter().position(|(_, d, _)| *d == dest) {
            Some(k) => k,
            None => {
                merges.push((js.jobs[units[i].job].wave, dest.clone(), Vec::new()));
                merges.len() - 1
            }
        };
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let part = dest.with_file_name(format!(
            ".{name}.ssdlab-{}-clone{}.log",
            std::process::id(),
            merges[k].2.len()
        ));
        merges[k].2.push(part.clone());
        if let Some(t) = &mut units[i].iolog {
            t.path = part;
        }
    }

    // 5. Run the waves.
    let mut measured: Vec<Option<Measured>> = vec![None; units.len()];
    let mut session = match &sim {
        Some(t) => {
            let seed = units.first().map(|u| u.spec.seed).unwrap_or(0);
            Some(
                crate::signals::while_building(|| SimSession::new(t, seed, a.max_memory))
                    .map_err(engine_failure)?,
            )
        }
        None => None,
    };
    let mut failure: Option<Failure> = None;
    let mut thread_logs: BTreeMap<u32, (JobLog, u64, LogStyle)> = BTreeMap::new();
    for w in 0..nwaves {
        if signals::stopped() {
            break;
        }
        let idx: Vec<usize> = (0..units.len())
            .filter(|&i| js.jobs[units[i].job].wave == w)
            .collect();
        let Some(&lead) = idx.first() else {
            continue;
        };
        // fio's steadystate with group_reporting: the wave's units of one reporting group are
        // checked together, in fio's order of threads (the last one keeps the samples).
        let mut steady_members: Vec<(u32, Vec<usize>)> = Vec::new();
        for &i in &idx {
            let j = &js.jobs[units[i].job];
            if !j.settings.group_reporting || units[i].spec.steady.is_none() {
                continue;
            }
            match steady_members.iter_mut().find(|(g, _)| *g == j.group) {
                Some((_, m)) => m.push(i),
                None => steady_members.push((j.group, vec![i])),
            }
        }
        let steady_groups: Vec<SteadyGroup> = steady_members
            .iter()
            .map(|(_, m)| SteadyGroup::new(m.len()))
            .collect();
        let steady_member = |i: usize| {
            steady_members
                .iter()
                .zip(&steady_groups)
                .find_map(|((_, m), g)| m.iter().position(|&x| x == i).map(|k| g.member(k)))
        };
        // The status line of `ssdlab run` (on a terminal): the wave's jobs report together;
        // its ETA follows the wave's first job.
        let simulated = session.is_some();
        let got: Result<Vec<Measured>, Failure> = status::with_status_line(
            &units[lead].spec,
            simulated,
            |progress| match &mut session {
                Some(sess) => {
                    let jobs: Vec<SimJob<'_>> = idx
                        .iter()
                        .map(|&i| SimJob {
                            spec: &units[i].spec,
                            iolog: units[i].iolog.clone(),
                            log: unit_logs[i],
                            steady_group: steady_member(i),
                        })
                        .collect();
                    let any_per_worker = idx.iter().any(|&i| per_worker(&js.jobs[units[i].job]));
                    sess.run(
                        &jobs,
                        &SimOptions {
                            stop: Some(signals::stop_flag()),
                            max_memory: a.max_memory,
                            per_worker: any_per_worker,
                            log: None,
                            progress,
                            ..Default::default()
                        },
                    )
                    .map(|outs| {
                        outs.into_iter()
                            .map(|o| Measured {
                                result: o.result,
                                recorder: o.recorder,
                                outcome: o.outcome,
                                workers: o.workers.into_iter().zip(o.worker_recorders).collect(),
                                iolog_error: o.iolog_error,
                            })
                            .collect()
                    })
                    .map_err(engine_failure)
                }
                None => {
                    let opts: Vec<RealOptions<'_>> = idx
                        .iter()
                        .map(|&i| RealOptions {
                            progress,
                            steady_group: steady_member(i),
                            ..units[i].real.as_ref().expect("real unit").1.clone()
                        })
                        .collect();
                    let jobs: Vec<RealJob<'_>> = idx
                        .iter()
                        .zip(&opts)
                        .map(|(&i, o)| {
                            let (t, _) = units[i].real.as_ref().expect("real unit");
                            RealJob {
                                spec: &units[i].spec,
                                target: t,
                                opts: o,
                                iolog: units[i].iolog.clone(),
                            }
                        })
                        .collect();
                    ssdlab_engine::run_real_jobs(&jobs)
                        .map(|outs| {
                            outs.into_iter()
                                .map(|o| Measured {
                                    result: o.result,
                                    recorder: o.recorder,
                                    outcome: o.outcome,
                                    workers: o
                                        .workers
                                        .into_iter()
                                        .zip(o.worker_recorders)
                                        .collect(),
                                    iolog_error: o.iolog_error,
                                })
                                .collect()
                        })
                        .map_err(engine_failure)
                }
            },
        );
        match got {
            Ok(ms) => {
                // The engine numbers the wave's workers from 1 in the order of its jobs; fio
                // numbers its threads over the whole run.
                let mut local = 1u32;
                for (&i, mut m) in idx.iter().zip(ms) {
                    let n = units[i].spec.jobs;
                    for mut l in std::mem::take(&mut m.result.logs) {
                        let t = unit_threads[i] + l.job.saturating_sub(local);
                        l.job = t;
                        thread_logs.insert(
                            t,
                            (
                                l,
                                m.result.runtime_ns,
                                log_style(&js.jobs[units[i].job].settings),
                            ),
                        );
                    }
                    local += n;
                    // (the lines are kept once, here: the recorders keep only their windows)
                    for rec in
                        std::iter::once(&mut m.recorder).chain(m.workers.iter_mut().map(|(_, r)| r))
                    {
                        if let Some(l) = &mut rec.log {
                            l.clear_lines();
                        }
                    }
                    for (r, _) in &mut m.workers {
                        r.logs.clear();
                    }
                    // The measurement stands and is printed; the log is reported after it.
                    if let Some(e) = m.iolog_error.take() {
                        failure.get_or_insert(Failure::new(
                            crate::cli::EXIT_FAILED,
                            anyhow!("{e} (the result was printed; the log was not kept)"),
                        ));
                    }
                    measured[i] = Some(m);
                }
            }
            Err(f) => {
                failure = Some(f);
                break;
            }
        }
        for (_, dest, parts) in merges.iter().filter(|(mw, _, _)| *mw == w) {
            if let Err(e) = ssdlab_engine::merge_iologs(parts, dest) {
                failure.get_or_insert(Failure::new(
                    crate::cli::EXIT_FAILED,
                    anyhow!(
                        "write_iolog {}: {e} (the result was printed; the log was not kept)",
                        dest.display()
                    ),
                ));
            }
        }
        if failure.is_some() {
            break;
        }
        // fio's verify phase: read back what each verifying write job wrote.
        for &i in &idx {
            let u = &units[i];
            if !u.verify_back || signals::stopped() {
                continue;
            }
            let Some(m) = measured[i].as_mut() else {
                continue;
            };
            if !m.result.errors.is_empty() {
                continue;
            }
            // fio verifies only when the write phase ended with its size: a runtime that ended
            // it first ends the job (`td->terminate`), without a verify phase.
            if !m.outcome.budget_done && !m.outcome.source_done {
                let n = format!(
                    "job {}: the runtime ended the write phase before its size was written: no verify phase, as in fio",
                    js.jobs[u.job].name
                );
                m.result.notes.push(n);
                continue;
            }
            let (t, o) = u.real.as_ref().expect("real unit");
            // (the logs are the job's own I/O: fio's verify phase reads are not in them)
            let o = RealOptions {
                log: None,
                ..o.clone()
            };
            match ssdlab_engine::run_real(&verify_spec(&u.spec), t, &o) {
                Ok(v) => {
                    m.recorder.merge(&v.recorder);
                    m.outcome.runtime_ns += v.outcome.runtime_ns;
                    m.outcome.interrupted |= v.outcome.interrupted;
                    m.outcome.stopped_on_error |= v.outcome.stopped_on_error;
                    let mut r = ssdlab_engine::build_result(
                        &u.spec,
                        m.result.target.clone(),
                        &m.recorder,
                        m.outcome,
                        m.result.timestamp_ms,
                        m.result.cpu.clone(),
                    );
                    r.verify = v.result.verify.clone();
                    r.members = m.result.members.clone();
                    r.disk_util = m.result.disk_util.clone();
                    m.result = r;
                    m.workers.clear();
                }
                Err(e) => {
                    failure = Some(engine_failure(e));
                    break;
                }
            }
        }
        if failure.is_some() {
            break;
        }
    }

    // Parts of clones' logs a failed or interrupted wave did not merge.
    for p in merges.iter().flat_map(|(_, _, parts)| parts) {
        let _ = std::fs::remove_file(p);
    }

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

/// An entry being put together.
struct Building {
    job: usize,
    unit: usize,
    group: u32,
    members: u32,
    recorder: Recorder,
    outcomes: Vec<LoopOutcome>,
    first: RunResult,
    errors: Vec<ssdlab_stats::IoErrorRecord>,
    /// fio's `steadystate` block of a group: its last member's (the one that keeps the
    /// group's samples, `stat.c` copies each member's in turn).
    steady: Option<ssdlab_stats::FioSteadyState>,
}

/// The report entries, by fio's rule (`stat.c`): every clone of a job without
/// `group_reporting` is an entry of its own; a job with it joins the entry before it when that
/// is of the same reporting group, else starts one.
fn build_report(
    js: &JobSet,
    units: &[Unit],
    measured: &[Option<Measured>],
) -> Vec<(RunResult, FioJob)> {
    let mut built: Vec<Building> = Vec::new();
    for (i, u) in units.iter().enumerate() {
        let Some(m) = &measured[i] else { continue };
        let j = &js.jobs[u.job];
        let gr = j.settings.group_reporting;
        if gr {
            if let Some(b) = built.last_mut().filter(|b| b.group == j.group) {
                b.recorder.merge(&m.recorder);
                b.outcomes.push(m.outcome);
                b.members += u.clones;
                b.errors.extend(m.result.errors.iter().cloned());
                b.steady = m.result.fio_steadystate.clone();
                continue;
            }
            built.push(Building {
                job: u.job,
                unit: i,
                group: j.group,
                members: u.clones,
                recorder: m.recorder.clone(),
                outcomes: vec![m.outcome],
                first: m.result.clone(),
                errors: m.result.errors.clone(),
                steady: m.result.fio_steadystate.clone(),
            });
        } else if m.workers.len() > 1 {
            for (r, rec) in &m.workers {
                built.push(Building {
                    job: u.job,
                    unit: i,
                    group: j.group,
                    members: 1,
                    recorder: rec.clone(),
                    outcomes: Vec::new(),
                    first: r.clone(),
                    errors: r.errors.clone(),
                    steady: r.fio_steadystate.clone(),
                });
            }
        } else {
            built.push(Building {
                job: u.job,
                unit: i,
                group: j.group,
                members: u.clones,
                recorder: m.recorder.clone(),
                outcomes: Vec::new(),
                first: m.result.clone(),
                errors: m.result.errors.clone(),
                steady: m.result.fio_steadystate.clone(),
            });
        }
    }
    built
        .into_iter()
        .map(|b| {
            let j = &js.jobs[b.job];
            // fio's job_runtime of a reporting group adds its members' runtimes up.
            let job_runtime_ns = (b.outcomes.len() > 1)
                .then(|| b.outcomes.iter().map(|o| o.runtime_ns).sum::<u64>());
            // Several units together: rebuilt from their recorders.
            let result = if b.outcomes.len() > 1 {
                let mut spec = units[b.unit].spec.clone();
                spec.jobs = b.members;
                let mut r = ssdlab_engine::build_result(
                    &spec,
                    b.first.target.clone(),
                    &b.recorder,
                    ssdlab_engine::merge_outcomes(&b.outcomes),
                    b.first.timestamp_ms,
                    b.first.cpu.clone(),
                );
                r.members = b.first.members.clone();
                r.disk_util = b.first.disk_util.clone();
                r.device = b.first.device.clone();
                r.verify = b.first.verify.clone();
                r.errors = b.errors;
                r.fio_steadystate = b.steady;
                r
            } else {
                b.first
            };
            let description = j
                .options
                .iter()
                .rev()
                .find(|(k, _)| k == "description")
                .or_else(|| {
                    js.global_options
                        .iter()
                        .rev()
                        .find(|(k, _)| k == "description")
                })
                .map(|(_, v)| v.clone());
            let mixed = (j.settings.unified != Unified::None).then(|| {
                b.recorder
                    .unified()
                    .summary(ssdlab_workload::OpKind::Read, result.runtime_ns)
            });
            (
                result,
                FioJob {
                    name: j.name.clone(),
                    group: b.group,
                    members: b.members,
                    options: j.options.clone(),
                    description,
                    header: header(j, &units[b.unit].label),
                    ignored: j
                        .settings
                        .ignored
                        .iter()
                        .map(|i| Ignored {
                            option: i.key.clone(),
                            at: i.loc.as_ref().map(|l| l.to_string()).unwrap_or_default(),
                            why: i.why.clone(),
                        })
                        .collect(),
                    mixed,
                    mixed_only: j.settings.unified == Unified::Mixed,
                    kb_base: j.settings.kb_base,
                    job_runtime_ns,
                },
            )
        })
        .collect()
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

    #[test]
    fn regions() {
        let mut s = Settings::default();
        assert!(
            region(&s, None, "f", "j").is_err(),
            "a missing file needs size="
        );
        assert_eq!(region(&s, Some(1 << 20), "f", "j").unwrap(), (0, 1 << 20));
        s.size = Some(Size::Percent(50.0));
        s.offset = Some(Size::Percent(25.0));
        assert_eq!(region(&s, Some(1000), "f", "j").unwrap(), (250, 500));
        assert!(region(&s, None, "f", "j").is_err());
        s.size = Some(Size::Bytes(4096));
        s.offset = Some(Size::Bytes(8192));
        assert_eq!(region(&s, None, "f", "j").unwrap(), (8192, 4096));
    }
}
