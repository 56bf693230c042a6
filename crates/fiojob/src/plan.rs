//! How each job of a job set lands on a target: fio's regions (`offset`, `size`, `filesize`,
//! percentages of the target's length, `offset_increment` per clone), default file names
//! (`JOB.CLONE.FILENO` in `directory`), several files per job, traces replayed onto their
//! files or devices, the simulated drive; and what the engine needs for each (its workload,
//! target and options, the ring, the sync mode, the layout fill, the page-cache advice, the
//! logs, the read-back of `verify`). [`plan_units`] turns a [`JobSet`] into the [`Unit`]s the
//! engine runs.
//!
//! Planning looks at the targets (their kind and length) but writes nothing.

use crate::job::split_filenames;
use crate::{Engine, Fadvise, Fallocate, Job, JobSet, Settings, Size};
use ssdlab_engine::{
    EngineChoice, FixedBufs, IologTarget, RealOptions, RealTarget, RingOptions, SimSpec, SimTarget,
};
use ssdlab_io::cache::FileAdvice;
use ssdlab_io::{FileOp, SyncMode};
use ssdlab_report::logs::{file_name, shared_file_name, LogKind, LogStyle};
use ssdlab_stats::LogConfig;
use ssdlab_target::Fill;
use ssdlab_workload::replay::{TraceFile, TraceShape};
use ssdlab_workload::{FileRegion, Files, ReplaySpec, Trace, WorkloadSpec};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// A job that cannot be planned onto its target (nothing was written); the message names the
/// job and what is wrong, in fio's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

type Result<T, E = PlanError> = std::result::Result<T, E>;

/// A [`PlanError`] with a formatted message.
macro_rules! plan_err {
    ($($t:tt)*) => {
        PlanError(format!($($t)*))
    };
}

/// Returns a [`PlanError`] with a formatted message.
macro_rules! bail {
    ($($t:tt)*) => {
        return Err(plan_err!($($t)*))
    };
}

/// What the caller decides for every real unit: the command's safety and memory options, the
/// stop flag its signal handler raises, and where the engine's notes go.
#[derive(Debug, Clone, Copy)]
pub struct PlanOptions {
    /// Jobs may write to block devices (`--allow-destroy`).
    pub allow_destroy: bool,
    /// Refuse a run whose memory estimate is above this many bytes (`--max-memory`).
    pub max_memory: Option<u64>,
    /// Raised from outside (Ctrl-C) to stop a layout or a run.
    pub stop: Option<&'static AtomicBool>,
    /// Where the engine's notes go (the binary prints them on stderr).
    pub on_note: fn(&str),
    /// fio's `--readonly`: no file is laid out (the jobs that write were refused before).
    pub read_only: bool,
}

/// One engine job: a fio job (or one clone of it, when clones have files of their own).
#[derive(Debug)]
pub struct Unit {
    /// The index of its job in [`JobSet::jobs`].
    pub job: usize,
    /// How many of the job's clones it runs.
    pub clones: u32,
    /// What it does.
    pub spec: WorkloadSpec,
    /// Its real target and the engine's options for it (`None` on a simulated drive).
    pub real: Option<(RealTarget, RealOptions<'static>)>,
    /// Where its `write_iolog` goes.
    pub iolog: Option<IologTarget>,
    /// The file or device shown in the header.
    pub label: String,
    /// Read the region back with verification after the job (fio's verify phase).
    pub verify_back: bool,
    /// The job's loops, each run and then read back in turn (fio's `thread_main`: `do_io`,
    /// then `do_verify`, once a loop; [`crate::job::verifies_each_loop`]); 1: one run of all
    /// its loops (read back once after, with `verify_back`).
    pub verify_loops: u64,
    /// fio sizes a job when it starts: a job whose region is its file's whole length, on a
    /// file that a `fill_device` job of an earlier wave grows, takes the length this file
    /// has when its wave starts (planned with the most it can have).
    pub sized_at_start: Option<PathBuf>,
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

/// Whether fio rounds the job's start up to a block: when `offset` or `offset_increment` is a
/// percentage (`get_start_offset`; to the smallest block size, as `offset_align` is
/// unsupported).
fn start_rounds_up(s: &Settings) -> bool {
    matches!(s.offset, Some(Size::Percent(_)))
        || matches!(s.offset_increment, Some(Size::Percent(_)))
}

/// `off` rounded up as fio rounds the job's start ([`start_rounds_up`]).
fn round_start(s: &Settings, off: u64) -> u64 {
    if !start_rounds_up(s) {
        return off;
    }
    let a = s.min_block_size_any().max(1);
    off.div_ceil(a).saturating_mul(a)
}

/// fio's `get_start_offset`: where clone `clone` of the job starts on a file of `total` bytes:
/// `offset` (or its percentage of the file) plus `clone` × `offset_increment` (or its
/// percentage), rounded up to the smallest block size when a percentage is involved
/// (`offset=10%` of 1 MiB starts at 106496 with 4 KiB blocks, not 104857).
fn start_offset(s: &Settings, total: u64, clone: u32) -> u64 {
    let base = s.offset.map_or(0, |o| resolve_size(o, total));
    let inc = s.offset_increment.map_or(0, |i| resolve_size(i, total));
    round_start(s, base.saturating_add(inc.saturating_mul(clone as u64)))
}

/// The region `(offset, span)` of a job on a target of `total` bytes (`None`: a file that does
/// not exist yet), for its first clone.
fn region(s: &Settings, total: Option<u64>, what: &str, job: &str) -> Result<(u64, u64)> {
    let t = total.unwrap_or(0);
    let pct_needs_size = |k: &str| {
        plan_err!("job {job}: {k} is a percentage, and {what} does not exist yet to take it of")
    };
    let offset = match s.offset {
        None => 0,
        Some(Size::Percent(_)) if total.is_none() => return Err(pct_needs_size("offset")),
        Some(_) => start_offset(s, t, 0),
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
        (Size::Percent(p), None) => Err(plan_err!(
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
    let off = round_start(s, off);
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

/// fio's `allow_file_create=0`: a job whose file does not exist fails ("file creation
/// disallowed by allow_file_create=0"); refused before anything is created.
fn no_create(s: &Settings, info: &ssdlab_target::TargetInfo, job: &str) -> Result<()> {
    if !s.allow_file_create && !info.exists {
        bail!(
            "job {job}: {} does not exist, and allow_file_create=0 forbids creating it (fio fails the job: \"file creation disallowed by allow_file_create=0\"); nothing was created",
            info.path.display()
        );
    }
    Ok(())
}

/// `directory` joined with a file name the way fio does (an absolute name stands alone).
fn in_directory(s: &Settings, name: &str) -> PathBuf {
    match &s.directory {
        Some(d) if !Path::new(name).is_absolute() => Path::new(d).join(name),
        _ => PathBuf::from(name),
    }
}

/// The seed of a job: `randseed`, or a new one every run with `randrepeat=0`.
fn seed_of(s: &Settings, run_time_seed: u64) -> u64 {
    if s.randrepeat {
        s.randseed
    } else {
        run_time_seed
    }
}

/// A seed of this run's own, for jobs with `randrepeat=0` (one for the whole run, so that jobs
/// that share their buffers' streams, `dedupe_global`, make the same ones).
fn time_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// The size of the simulated target (a stripe set that cannot be built counts as one drive:
/// the engine refuses it when the run is checked). Not the engine's `sim_geometry`, which also
/// checks a workload against the target and is the engine's own.
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
    Trace::load(r).map_err(|e| plan_err!("job {job}: {e}"))
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
                plan_err!(
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
    // (fio's fill_device writes the file from its start, neither truncated nor allocated)
    if s.create_on_open || s.fill_device {
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

/// The random seed of a job whose first clone is fio thread `first` (from 1): fio seeds every
/// stream of a thread by its thread number (`setup_random_seeds`: `seed * thread_number + i`),
/// so two jobs of one `randseed` draw different offsets and data; the first job keeps the
/// seed itself.
fn job_seed(seed: u64, first: u32) -> u64 {
    if first <= 1 {
        return seed;
    }
    let mut z = (first as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    seed ^ z ^ (z >> 31)
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
    if s.cpus_allowed.is_some()
        || s.numa_cpus.is_some()
        || s.mem_policy.is_some()
        || s.nice != 0
        || s.prio.is_some()
        || s.prioclass.is_some()
    {
        note(
            format!(
                "job {}: where and how its threads run (cpus_allowed, numa_*, nice, prio, prioclass) has no effect on the simulated drive (simulated time does not depend on them)",
                j.name
            ),
            notes,
        );
    }
    if s.dedupe(1 << 30).is_some() && s.mode.writes() {
        note(
            format!(
                "job {}: dedupe_percentage has no effect on the simulated drive: its controller does not deduplicate (what it compresses is buffer_compress_percentage's share)",
                j.name
            ),
            notes,
        );
    }
    note(
        format!(
            "job {}: ioengine={} on the simulated drive: {} (file names{} do not apply: there is no file system or page cache)",
            j.name,
            s.engine.name(),
            match s.engine {
                Engine::Sync(_) => "one I/O at a time (QD 1), as fio's synchronous engines".to_string(),
                Engine::Null => "the drive's queue at iodepth (fio's null engine would complete without a device)".to_string(),
                _ if s.polls() => "one I/O at a time (QD 1): iodepth_batch_complete_min=0 without a maximum is fio's polling, a completion reaped after every submission".to_string(),
                _ => match s.iodepth_batch.unwrap_or(1) {
                    0 | 1 => format!("iodepth={} outstanding I/Os per clone", s.iodepth),
                    b => format!("iodepth={} outstanding I/Os per clone, each reaching the drive as it is issued (iodepth_batch={b} is not simulated: it changes when fio hands its I/Os to the kernel, counted in iodepth_submit)", s.iodepth),
                },
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
                    in_directory(s, &s.file_name(job, c, i))
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
        let offset_of = |total: u64| start_offset(s, total, 0);
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

/// What a job's file is ([`ssdlab_target::probe`]). `/dev/null` and `/dev/zero`, which fio's
/// examples read and write as files, are a job's one file (`several`: a job of several files,
/// where they are refused); any other character device is refused by the probe.
fn probe_for_fio(
    path: &Path,
    job: &str,
    several: bool,
    create_dirs: bool,
) -> Result<ssdlab_target::TargetInfo> {
    // (fio's create_work_dirs makes a new file's missing directories, mode 0700, when the job
    // sets up its files; so does the layout — not for the files a replayed trace names, which
    // ssdlab never creates in directories of their own)
    let info = if create_dirs {
        ssdlab_target::probe_creating_dirs(path)
    } else {
        ssdlab_target::probe(path)
    }
    .map_err(|e| plan_err!("job {job}: {e}"))?;
    if several && info.kind == ssdlab_target::PathKind::CharDevice {
        bail!(
            "job {job}: {} is a character device: not supported by ssdlab in a job of several files",
            path.display()
        );
    }
    Ok(info)
}

/// The checks of a job on `/dev/null` or `/dev/zero` (`what`), which have no size: fio fails
/// the job without `size` (error 22); reads of `/dev/null` end at once with nothing (fio's
/// error 5, "full resid"), as they do here.
fn check_char_device(s: &Settings, what: &str, job: &str) -> Result<()> {
    let pct = |k: &str| {
        plan_err!("job {job}: {k} is a percentage, and {what} is a character device, which has no size to take it of")
    };
    match s.size {
        None => bail!("job {job}: {what} is a character device, which has no size: give size= (fio fails such a job with error 22)"),
        Some(Size::Percent(_)) => return Err(pct("size")),
        Some(Size::Bytes(_)) => {}
    }
    if matches!(s.offset, Some(Size::Percent(_))) {
        return Err(pct("offset"));
    }
    if s.filesize.is_some() {
        bail!("job {job}: filesize on {what}, a character device: not supported by ssdlab");
    }
    Ok(())
}

/// Files per job from which fio's bookkeeping between the files of `filestat`, `filedelete`
/// and `filecreate` outweighs the operations (on tmpfs, fio 3.33's `filecreate` with 2,000
/// files per job: 7 µs per create, 84 µs per file in all; with 16,000: 10 µs and 390 µs).
const PATH_OP_MANY_FILES: u32 = 1000;

/// What ssdlab does not do with several files in a job, refused by name.
fn check_several(s: &Settings, job: &str, n: usize) -> Result<()> {
    // (fio's engines that work on a file's name never keep it open)
    if let Some(o) = s
        .openfiles
        .filter(|&o| o != 0 && o != n as u64 && !s.engine.file_op().on_path())
    {
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

/// The simulated drive or array of `ssdlab fio --sim PRESET`, from `--set` (`KEY=VALUE`),
/// `--drives` (default 1), `--stripe` (arrays only) and `--state` (default `fresh`) as given.
pub fn sim_spec(
    preset: &str,
    sets: &[String],
    drives: Option<u32>,
    stripe: Option<u64>,
    state: Option<&str>,
) -> Result<SimSpec, String> {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))
        })
        .collect::<Result<_, String>>()?;
    let drives = drives.unwrap_or(1);
    if stripe.is_some() && drives < 2 {
        return Err("--stripe applies to arrays: give --drives N (N > 1)".into());
    }
    Ok(SimSpec {
        sets,
        drives,
        stripe,
        state: state.unwrap_or("fresh").to_string(),
        ..SimSpec::preset(preset)
    })
}

/// Refuses what the jobs cannot do on simulated drives: `--allow-destroy` (real targets only),
/// `verify` (simulated drives carry no data) and the engines of file operations (no file
/// system).
pub fn check_sim_jobs(js: &JobSet, allow_destroy: bool) -> Result<(), String> {
    if allow_destroy {
        return Err(
            "--allow-destroy applies to real targets, not to simulated drives (--sim)".into(),
        );
    }
    if let Some(j) = js.jobs.iter().find(|j| j.settings.verify) {
        return Err(format!(
            "job {}: verify needs a real target: simulated drives carry no data",
            j.name
        ));
    }
    if let Some(j) = js
        .jobs
        .iter()
        .find(|j| j.settings.engine.file_op() != FileOp::Data)
    {
        return Err(format!(
            "job {}: ioengine={} works on files (their allocation, length or name): a simulated drive has no file system (--sim runs reads, writes and trims)",
            j.name,
            j.settings.engine.name()
        ));
    }
    Ok(())
}

/// Builds the units of every job (`per_worker`: whether a job's clones are reported one by
/// one); notes go to `notes`.
pub fn plan_units(
    js: &JobSet,
    sim: Option<&SimTarget>,
    a: &PlanOptions,
    per_worker: &dyn Fn(&Job) -> bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Unit>> {
    let stop = a.stop;
    let mut units = Vec::new();
    // The files the jobs before lay out, and to what length: fio sets a job's files up when
    // it starts, after the jobs before it (and the clones of a job one after another), so an
    // `offset` or `size` percentage is of the length they left.
    let mut laid: Vec<(PathBuf, u64)> = Vec::new();
    // The files `fill_device` jobs grow, and the wave of the job.
    let mut filled: Vec<(PathBuf, usize)> = Vec::new();
    let mut noted = std::collections::HashSet::new();
    let mut note = |n: String, notes: &mut Vec<String>| {
        if noted.insert(n.clone()) {
            notes.push(n);
        }
    };
    let firsts = first_threads(js);
    let run_time_seed = time_seed();
    for (ji, j) in js.jobs.iter().enumerate() {
        let s = &j.settings;
        let name = j.name.as_str();
        // fio names a job's files after its section, whatever its `name=` (add_job's jobname)
        let fname = j.section.as_str();
        let seed = job_seed(seed_of(s, run_time_seed), firsts[ji]);
        let clones = s.numjobs;
        // fio's str_directory_cb: `directory` must exist (lstat: a directory, not a link to
        // one); only a file name's missing directories are made (create_work_dirs)
        if let (None, Some(d)) = (sim, s.directory.as_deref()) {
            let is_dir = std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir());
            if !is_dir {
                bail!(
                    "job {name}: directory={d}: {d} is not a directory (fio refuses it; it makes the missing directories of a file name, not of directory=)"
                );
            }
        }
        if s.dedupe_pct > 0 && s.verify && s.mode.writes() {
            note(
                format!(
                    "job {name}: dedupe_percentage has no effect on verified writes: they carry their own headers and data, as in fio"
                ),
                notes,
            );
        }
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
        if s.engine.file_op().on_path() && s.nrfiles >= PATH_OP_MANY_FILES {
            note(
                format!(
                    "job {name}: ioengine={} times one operation per file, as fio does; fio's own time between files grows with their number (its file bookkeeping), so with {} files its IOPS and runtime are lower than ssdlab's for the same operation times",
                    s.engine.name(),
                    s.nrfiles
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
            if s.latency_target_ns > 0 && clones > 1 && !per_worker(j) {
                // (the clones of such a job share one recorder on the simulated drive, and
                // each starts its statistics again on its own)
                bail!(
                    "job {name}: latency_target with numjobs={clones} and group_reporting on --sim is not supported by ssdlab: each clone's search starts the statistics again, which the clones of one reporting group share on a simulated drive"
                );
            }
            let size = sim_size(sim);
            if let Some(first) = several_files(s, fname, 0) {
                // Several files: several regions of the drive, one after another.
                check_several(s, name, first.len())?;
                for c in 0..clones {
                    let names = several_files(s, fname, c).unwrap_or_default();
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
                        verify_loops: 1,
                        sized_at_start: None,
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
                                Some(_) => (start_offset(s, size, c), span, span),
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
                            verify_loops: 1,
                            sized_at_start: None,
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
                verify_loops: 1,
                sized_at_start: None,
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
            file_op: s.file_op(),
            mem_policy: s.mem_policy.clone(),
            nice: s.nice,
            io_priority: (s.prio.is_some() || s.prioclass.is_some())
                .then(|| (s.prioclass.unwrap_or(0), s.prio.unwrap_or(0))),
            fill: fill_of(s),
            layout_data: s.layout_data(),
            create_dirs: s.read_iolog.is_none(),
            invalidate: s.invalidate,
            advice: advice_of(s),
            pre_read: s.pre_read,
            direct: s.direct,
            allow_destroy: a.allow_destroy,
            continue_on_error: s.non_fatal.classes != 0,
            non_fatal: Some(ssdlab_engine::NonFatal {
                sync_engine: matches!(s.engine, Engine::Sync(_)),
                ..s.non_fatal
            }),
            null_size,
            on_note: a.on_note,
            submit_batch: s.iodepth_batch.unwrap_or(1),
            // fio reaps at most iodepth_batch_complete_max (its default: the minimum, 1)
            // completions before it refills the queue
            reap_max: s.reap_max(),
            stop,
            max_memory: a.max_memory,
            ring: ring_of(s),
            per_worker: per_worker(j) && clones > 1,
            read_only: a.read_only,
            ..Default::default()
        };
        if s.polls() && !s.sync_engine() && s.iodepth > 1 {
            note(
                format!(
                    "job {name}: iodepth_batch_complete_min=0 without iodepth_batch_complete_max: fio then reaps a completion after every submission, so the depth is 1, not iodepth={}, as in fio (fio spins for it, ssdlab waits)",
                    s.iodepth
                ),
                notes,
            );
        }
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
        if let Some(mut r) = s.replay() {
            // fio 3.33 skips entries by replay_skip in blktrace replays only (blktrace.c)
            let iolog = !ssdlab_workload::replay::is_blktrace_file(&r.trace);
            if iolog && !r.skip.is_empty() {
                note(
                    format!(
                        "job {name}: replay_skip has no effect on a fio iolog ({}): fio 3.33 skips entries of blktrace replays only, so every entry is replayed, as in fio",
                        r.trace.display()
                    ),
                    notes,
                );
                r.skip = Default::default();
            }
            let t = match Trace::load(&r) {
                Err(ssdlab_workload::replay::TraceError::Syncs { path, syncs }) if iolog => bail!(
                    "job {name}: {path}: the trace has {syncs} sync/flush entries, which fio issues and ssdlab does not (replay_skip, which fio applies to blktrace replays only, cannot skip them in a fio iolog)"
                ),
                t => t.map_err(|e| plan_err!("job {name}: {e}"))?,
            };
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
                verify_loops: 1,
                sized_at_start: None,
            });
            continue;
        }
        if let (Engine::Null, Some(first)) = (s.engine, several_files(s, fname, 0)) {
            // fio's null engine with several files: a null file of each file's size.
            check_several(s, name, first.len())?;
            let batch = s.iodepth_batch.unwrap_or(1).max(1);
            for c in 0..clones {
                let names: Vec<String> = several_files(s, fname, c)
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
                    verify_loops: 1,
                    sized_at_start: None,
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
                    verify_loops: 1,
                    sized_at_start: None,
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
                let offset = start_offset(s, size, c);
                let mut spec = s.workload(offset, size.max(1), 1, clone_seed(seed, c));
                spec.qd = spec.qd.min(batch);
                let file = match &s.filename {
                    Some(f) => split_filenames(f).concat(),
                    None => s.file_name(fname, c, 0),
                };
                units.push(Unit {
                    job: ji,
                    clones: 1,
                    spec,
                    real: Some((RealTarget::Null, opts(offset.saturating_add(size)))),
                    iolog: write_iolog(&file),
                    label: "null".into(),
                    verify_back: false,
                    verify_loops: 1,
                    sized_at_start: None,
                });
            }
            continue;
        }
        if let Some(first) = several_files(s, fname, 0) {
            // Several files: shared by the clones (filename=a:b), or each clone's own
            // (JOB.CLONE.FILENO); each clone a job of its own, as in fio.
            check_several(s, name, first.len())?;
            for c in 0..clones {
                let names = several_files(s, fname, c).unwrap_or_default();
                let mut lens = Vec::with_capacity(names.len());
                for n in &names {
                    let info = probe_for_fio(Path::new(n), name, true, s.read_iolog.is_none())?;
                    no_create(s, &info, name)?;
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
                    verify_loops: 1,
                    sized_at_start: None,
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
                .map(|c| (in_directory(s, &s.file_name(fname, c, 0)), 1, c))
                .collect(),
        };
        for (path, n, clone) in files {
            let info = probe_for_fio(&path, name, false, s.read_iolog.is_none())?;
            no_create(s, &info, name)?;
            let what = path.display().to_string();
            let chardev = info.kind == ssdlab_target::PathKind::CharDevice;
            if chardev {
                check_char_device(s, &what, name)?;
            }
            if s.mode.trims() && chardev {
                bail!(
                    "job {name}: rw={} on {what}, a character device: fio's trims are BLKDISCARD, which a character device does not take (fio ends the job with error 25, \"Inappropriate ioctl for device\"); trim a block device, ioengine=null or --sim",
                    s.mode.name()
                );
            }
            if s.engine.file_op() != FileOp::Data && info.kind != ssdlab_target::PathKind::File {
                bail!(
                    "job {name}: ioengine={} on {what}: ssdlab runs fio's file-operation engines on regular files only (on a block device fio's falloc would zero what its trims punch)",
                    s.engine.name()
                );
            }
            // (fio's file-operation engines take a regular file's trims: falloc punches
            // holes, ftruncate fails them with EINVAL)
            if s.mode.trims()
                && info.kind == ssdlab_target::PathKind::File
                && s.engine.file_op() == FileOp::Data
            {
                bail!(
                    "job {name}: rw={} on {what}, a regular file{}: fio's trims are BLKDISCARD, which a regular file does not take (fio ends the job with error 25, \"Inappropriate ioctl for device\"); trim a block device, ioengine=falloc (holes punched), ioengine=null or --sim",
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
                .or((info.exists && !chardev).then_some(info.size));
            let real = total.unwrap_or(0);
            let whole = s.size.is_none() && s.filesize.is_none();
            // fio's fill_device without size: the writes run until the file system is full
            // (fio's size is unbounded): the region ends one block past the size of the file
            // system, which no file on it can reach, so a write fails with ENOSPC first
            let total = if s.fill_device && whole && info.kind == ssdlab_target::PathKind::File {
                let fs = ssdlab_target::fs_size(&path).map_err(|e| plan_err!("job {name}: {e}"))?;
                let bs = s.block_size().max(1);
                filled.push((path.clone(), j.wave));
                Some((fs / bs + 1) * bs)
            } else {
                total
            };
            let after_fill =
                whole && !s.fill_device && filled.iter().any(|(p, w)| *p == path && *w < j.wave);
            if after_fill && s.create_serialize {
                bail!(
                    "job {name}: its region is the length of {what}, which a fill_device job before it fills: fio sets every job's files up before any runs (create_serialize=1, its default), so it fails this job (error 22, \"you need to specify size=\"); give size=, or create_serialize=0 (fio then sizes the job when it starts, as its surface-scan example does)"
                );
            }
            let sized_at_start = after_fill.then(|| path.clone());
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
                    let (mut off, mut span) = region(s, total, &what, name)?;
                    if let Some(inc) = s.offset_increment {
                        if matches!(inc, Size::Percent(_)) && total.is_none() {
                            bail!("job {name}: offset_increment is a percentage, and {what} does not exist yet");
                        }
                        off = start_offset(s, total.unwrap_or(0), clone);
                        // without size (or with a percentage of it), each clone's region ends
                        // where the file does, as fio's io_size = real size − file_offset
                        if let (Some(t), None | Some(Size::Percent(_))) = (total, s.size) {
                            if off >= t {
                                bail!("job {name}: clone {clone}'s offset {off} (with offset_increment) is at or beyond the end of {what} ({t} bytes): fio does no I/O there");
                            }
                            span = span.min(t - off);
                        }
                    }
                    (off, span, span)
                }
            };
            match laid.iter_mut().find(|(p, _)| *p == path) {
                Some((_, l)) => *l = (*l).max(off + span),
                None => laid.push((path.clone(), real.max(off + span))),
            }
            if s.dedupe(1).is_some()
                && fill_of(s) == Fill::Data
                && info.kind == ssdlab_target::PathKind::File
                && real < off.saturating_add(span)
            {
                bail!(
                    "job {name}: dedupe_percentage on {what}, which ssdlab would lay out for a job that {}, is not supported by ssdlab: fio writes the layout with the job's deduplicable buffers, ssdlab with unique data; lay the file out first (with a write job before it)",
                    if s.mode.reads() { "reads" } else { "overwrites (overwrite=1)" }
                );
            }
            // (fio's filecreate lays nothing out, nor does ssdlab for it)
            if total.is_some()
                && !s.fill_device
                && s.engine.file_op() != FileOp::Create
                && info.kind == ssdlab_target::PathKind::File
                && real < off.saturating_add(span)
            {
                note(
                    format!(
                        "job {name}: {what} is shorter than the job needs: fio deletes and lays out such a file again; ssdlab keeps its data and extends it"
                    ),
                    notes,
                );
            }
            // fio issues a sequential I/O that starts before the region's end and ends past it,
            // inside a longer file (`get_next_offset` bounds the start by the region, the end by
            // the file); ssdlab's pass ends at the last I/O inside the region
            let bs = s.block_size().max(1);
            if !s.mode.random()
                && !s.time_based
                && span % bs != 0
                && real > off.saturating_add(span)
            {
                note(
                    format!(
                        "job {name}: its region ({span} bytes) is not a whole number of {bs}-byte blocks on a longer {what}: fio issues one more I/O across the region's end, ssdlab ends each pass at the last I/O inside it"
                    ),
                    notes,
                );
            }
            let mut spec = s.workload(off, pass, n, clone_seed(seed, clone));
            spec.span = Some(span);
            // (a job that reads back after each loop: each loop's bytes)
            let verify_loops = if crate::job::verifies_each_loop(&js.jobs, ji) {
                s.loops
            } else {
                1
            };
            if s.verify
                && s.do_verify
                && s.mode.writes()
                && spec.stop.bytes.is_some_and(|b| b / verify_loops > span)
            {
                bail!(
                    "job {name}: verify with io_size ({}) above the {span} bytes of its region is not supported by ssdlab: fio counts the verify phase's reads toward io_size and writes and verifies again (size=64k io_size=96k writes 64k, then reads it back)",
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
                verify_loops,
                sized_at_start,
            });
        }
    }
    // fio's buffer seeds are the thread's own, and with dedupe_global a working set spans
    // every thread of the run
    let threads = first_threads(js)
        .last()
        .zip(js.jobs.last())
        .map_or(0, |(f, j)| f + j.settings.numjobs - 1);
    let at = unit_threads(js, &units);
    for (u, t) in units.iter_mut().zip(at) {
        if let Some(d) = &mut u.spec.dedupe {
            d.thread = t - 1;
            d.seed = seed_of(&js.jobs[u.job].settings, run_time_seed);
            if js.jobs[u.job].settings.dedupe_global {
                d.global_threads = Some(threads);
            }
        }
    }
    verify_alone(js, &units)?;
    names_across_waves(js, &units)?;
    names_one_block(js, &units)?;
    Ok(units)
}

/// A verifying job (each clone) needs its files to itself while its wave runs: ssdlab keeps
/// one written-map per target and reads back what the job wrote. A file a verifying unit
/// shares with another unit of its wave (clones of one `filename`, another job's) is refused
/// before anything is laid out; clones each on their own file (fio's `JOB.CLONE.0`) run
/// together, as in fio.
fn verify_alone(js: &JobSet, units: &[Unit]) -> Result<()> {
    let paths = |u: &Unit| -> Vec<PathBuf> {
        u.real
            .as_ref()
            .map(|(t, _)| t.paths().into_iter().map(Path::to_path_buf).collect())
            .unwrap_or_default()
    };
    for (i, u) in units.iter().enumerate() {
        if !u.spec.verify {
            continue;
        }
        let wave = js.jobs[u.job].wave;
        for p in paths(u) {
            let other = units.iter().enumerate().find(|&(k, o)| {
                k != i && js.jobs[o.job].wave == wave && paths(o).iter().any(|q| same_file(&p, q))
            });
            if let Some((_, o)) = other {
                let name = &js.jobs[u.job].name;
                let who = if o.job == u.job {
                    "another clone of it".to_string()
                } else {
                    format!("job {}", js.jobs[o.job].name)
                };
                bail!(
                    "job {name}: verify on {}, which {who} uses at the same time, is not supported by ssdlab: ssdlab verifies a file only for the one job (or clone) of its wave that uses it (give each clone its own file — no filename= makes fio's JOB.CLONE.0 — or stonewall the other job)",
                    p.display()
                );
            }
        }
    }
    Ok(())
}

/// Whether two paths name the same file: by device and inode where both exist, else by their
/// absolute form.
/// fio sets every job's files up before any job runs (`create_serialize`, its default), and
/// ssdlab each wave's when the wave starts. The two differ where a job creates or deletes the
/// files of a job of a later wave: fio lays the later job's files out first, so its filecreate
/// opens files already there and the later job finds what its filedelete deleted gone, where
/// ssdlab would lay them out after — refused, naming both jobs. (A later `filecreate` lays
/// nothing out, in either.)
fn names_across_waves(js: &JobSet, units: &[Unit]) -> Result<()> {
    use std::collections::HashSet;
    use std::os::unix::fs::MetadataExt;
    #[derive(PartialEq, Eq, Hash)]
    enum Key {
        Inode(u64, u64),
        Path(PathBuf),
    }
    let key = |p: &Path| match std::fs::metadata(p) {
        Ok(m) => Key::Inode(m.dev(), m.ino()),
        Err(_) => Key::Path(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
    };
    let paths = |u: &Unit| -> Vec<PathBuf> {
        u.real
            .as_ref()
            .map(|(t, _)| t.paths().into_iter().map(Path::to_path_buf).collect())
            .unwrap_or_default()
    };
    let op = |u: &Unit| js.jobs[u.job].settings.engine.file_op();
    for u in units {
        let (FileOp::Create | FileOp::Unlink) = op(u) else {
            continue;
        };
        let wave = js.jobs[u.job].wave;
        let later: Vec<&Unit> = units
            .iter()
            .filter(|o| js.jobs[o.job].wave > wave && op(o) != FileOp::Create)
            .collect();
        if later.is_empty() {
            continue;
        }
        let mine: HashSet<Key> = paths(u).iter().map(|p| key(p)).collect();
        for o in later {
            if let Some(p) = paths(o).into_iter().find(|p| mine.contains(&key(p))) {
                let (name, other) = (&js.jobs[u.job].name, &js.jobs[o.job].name);
                let (does, then) = if op(u) == FileOp::Create {
                    (
                        "creates",
                        "its filecreate would open the file laid out for the later job",
                    )
                } else {
                    ("deletes", "the later job would find it gone")
                };
                bail!(
                    "job {name}: ioengine={} {does} {}, which job {other} of a later wave uses, is not supported by ssdlab: fio lays out every job's files before any job runs, so {then}; ssdlab lays out each wave's files when it starts (give the later job files of its own)",
                    js.jobs[u.job].settings.engine.name(),
                    p.display()
                );
            }
        }
    }
    Ok(())
}

/// fio's `filestat`, `filedelete` and `filecreate` time one operation per file and count the
/// file's other blocks as I/Os that take no time; ssdlab times each I/O as one operation, so it
/// runs them where each file's region is one block (`Settings::path_op_unsupported`).
fn names_one_block(js: &JobSet, units: &[Unit]) -> Result<()> {
    for u in units {
        let s = &js.jobs[u.job].settings;
        if !s.engine.file_op().on_path() {
            continue;
        }
        let bs = u.spec.bs;
        let spans: Vec<Option<u64>> = match &u.spec.files {
            Some(f) => f.regions.iter().map(|r| Some(r.span)).collect(),
            None => vec![u.spec.span.or_else(|| {
                let (t, _) = u.real.as_ref()?;
                let p = t.paths().into_iter().next()?;
                std::fs::metadata(p).ok().map(|m| m.len())
            })],
        };
        if let Some(other) = spans.into_iter().find(|&n| n != Some(bs)) {
            let is = other.map_or("of unknown size".to_string(), |n| format!("of {n} bytes"));
            bail!(
                "job {}: ioengine={} on a file {is}, not one block (bs={bs}): fio times one operation per file, ssdlab one per block; not supported by ssdlab (set filesize={bs})",
                js.jobs[u.job].name,
                s.engine.name()
            );
        }
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
    }
}

/// fio's thread number (from 1) of each unit's first clone: each unit's clones are fio threads
/// numbered from its job's first.
fn unit_threads(js: &JobSet, units: &[Unit]) -> Vec<u32> {
    let firsts = first_threads(js);
    let mut taken = vec![0u32; js.jobs.len()];
    units
        .iter()
        .map(|u| {
            let t = firsts[u.job] + taken[u.job];
            taken[u.job] += u.spec.jobs;
            t
        })
        .collect()
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

/// The read-back of a verifying write job: its region read once, sequentially, checked; no
/// more than the job wrote (a pass of `size` smaller than `filesize`'s region, or `io_size`
/// smaller than the region: fio verifies what it wrote).
pub fn verify_spec(w: &WorkloadSpec) -> WorkloadSpec {
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
pub fn log_config(s: &Settings, spec: &WorkloadSpec) -> Option<LogConfig> {
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
pub fn log_style(s: &Settings) -> LogStyle {
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
        prio: s.log_prio.then(|| s.io_priority_value()),
    }
}

/// One log file of the run: its kind, the option that asked for it, and the fio thread numbers
/// whose logs it holds (one, or with `per_job_logs=0` every thread of the jobs sharing it, which
/// fio appends to the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    /// The file.
    pub path: PathBuf,
    /// What it logs.
    pub kind: LogKind,
    /// The option that asked for it (`write_bw_log`, …).
    pub role: &'static str,
    /// The fio threads whose logs it holds.
    pub threads: Vec<u32>,
    /// Appended to (`per_job_logs=0`) rather than written anew.
    pub append: bool,
}

/// fio's thread number (from 1, in job order, each clone its own) of each job's first clone.
pub fn first_threads(js: &JobSet) -> Vec<u32> {
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
pub fn log_files(js: &JobSet) -> Result<Vec<LogFile>> {
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

/// What the engine keeps for each unit's logs (set in its real options too), and fio's thread
/// number of each unit's first clone (each unit's clones are fio threads numbered from its
/// job's first).
pub fn attach_logs(js: &JobSet, units: &mut [Unit]) -> (Vec<Option<LogConfig>>, Vec<u32>) {
    let unit_logs: Vec<Option<LogConfig>> = units
        .iter()
        .map(|u| log_config(&js.jobs[u.job].settings, &u.spec))
        .collect();
    let unit_threads = unit_threads(js, units);
    for (u, c) in units.iter_mut().zip(&unit_logs) {
        if let Some((_, o)) = &mut u.real {
            o.log = *c;
        }
    }
    (unit_logs, unit_threads)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            region(&s, Some(1 << 20), "f", "j").unwrap(),
            (256 << 10, 512 << 10)
        );
        // a percentage between blocks: the start rounded up to the smallest block (fio's
        // get_start_offset), 250000 → 253952
        assert_eq!(
            region(&s, Some(1_000_000), "f", "j").unwrap(),
            (253_952, 500_000)
        );
        assert_eq!(start_offset(&s, 1_000_000, 0), 253_952);
        s.offset = None;
        s.offset_increment = Some(Size::Percent(30.0));
        assert_eq!(start_offset(&s, 1 << 20, 2), 630_784);
        s.offset_increment = Some(Size::Bytes(1000));
        assert_eq!(start_offset(&s, 1 << 20, 2), 2000, "bytes are not rounded");
        s.offset_increment = None;
        s.offset = Some(Size::Percent(25.0));
        assert!(region(&s, None, "f", "j").is_err());
        s.size = Some(Size::Bytes(4096));
        s.offset = Some(Size::Bytes(8192));
        assert_eq!(region(&s, None, "f", "j").unwrap(), (8192, 4096));
    }
}
