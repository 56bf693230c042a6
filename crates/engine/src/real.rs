//! Real targets: regular files, block devices and the null target, driven by io_uring or by the
//! portable sync backend, one thread per worker.

use crate::backend::{Backend, Cqe};
use crate::engine_loop::{run_loop, Control, DataOpts, LoopOutcome};
use crate::fault::{FaultBackend, FaultPlan};
use crate::stripe::StripeAdapter;
use crate::EngineError;
use ssdlab_layout::StripeMap;
use ssdlab_stats::{CpuUsage, MemberStats, Recorder, RunResult, TargetDesc, DEPTH_LEVELS};
use ssdlab_uring::device::{self, TargetInfo, TargetKind};
use ssdlab_uring::{cpu, Dir, SyncBackend, UringBackend};
use ssdlab_workload::gen::worker_seed;
use ssdlab_workload::{format_size, Op, OpGen, OpKind, WorkloadSpec};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where a real run goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RealTarget {
    /// Completes every I/O at once without touching any device: measures ssdlab's own overhead.
    Null,
    /// A regular file (created and laid out if needed) or a block device.
    Path(PathBuf),
    /// A userspace RAID 0 stripe set (md raid0 layout) over the members with this chunk size.
    Raid0 { members: Vec<Member>, stripe: u64 },
}

/// A member of a real stripe set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    /// A null member of this size (completes at once).
    Null(u64),
    Path(PathBuf),
}

/// Which I/O engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// io_uring when the kernel allows it, otherwise sync (with a note).
    Auto,
    IoUring,
    Sync,
}

/// Options of a real run that are not part of the workload.
#[derive(Debug, Clone)]
pub struct RealOptions {
    pub engine: EngineChoice,
    /// O_DIRECT (bypass the page cache). Default true.
    pub direct: bool,
    /// Allow writes to a block device (still refused when it holds data or is in use).
    pub allow_destroy: bool,
    pub continue_on_error: bool,
    /// Size of the null target.
    pub null_size: u64,
    /// Called with diagnostics (file layout, engine fallback) as they happen; the CLI prints them
    /// to stderr.
    pub on_note: fn(&str),
    /// Inject faults (tests): see [`FaultPlan`].
    pub fault: Option<FaultPlan>,
    /// io_uring: submit as soon as this many I/Os are queued (fio's `iodepth_batch_submit`);
    /// 0 = one system call per batch of refills. Default 1.
    pub submit_batch: u32,
}

impl Default for RealOptions {
    fn default() -> Self {
        RealOptions {
            engine: EngineChoice::Auto,
            direct: true,
            allow_destroy: false,
            continue_on_error: false,
            null_size: 1 << 40,
            on_note: |_| {},
            fault: None,
            submit_batch: 1,
        }
    }
}

/// A finished run plus diagnostics for stderr.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub result: RunResult,
    pub notes: Vec<String>,
}

fn now_ns(origin: &Instant) -> u64 {
    origin.elapsed().as_nanos() as u64
}

/// The null target: every pushed op completes immediately with its full length.
struct NullBackend {
    origin: Instant,
    pending: Vec<(u32, u64)>,
}

impl Backend for NullBackend {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }
    #[inline]
    fn push(&mut self, slot: u32, op: &Op) {
        self.pending.push((slot, op.len));
    }
    fn submit_wait(&mut self, _min: usize, _timeout_ns: u64) -> io::Result<()> {
        Ok(())
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = now_ns(&self.origin);
        out.extend(self.pending.drain(..).map(|(slot, len)| Cqe {
            slot,
            res: len as i64,
            t_ns: t,
        }));
    }
}

fn dir(kind: OpKind) -> Dir {
    match kind {
        OpKind::Read => Dir::Read,
        _ => Dir::Write,
    }
}

struct UringAdapter {
    origin: Instant,
    ring: UringBackend,
}

impl Backend for UringAdapter {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        Some(self.ring.buffer(slot))
    }
    #[inline]
    fn push(&mut self, slot: u32, op: &Op) {
        self.ring.push(slot, dir(op.kind), op.offset, op.len as u32);
    }
    fn submit_wait(&mut self, min: usize, _timeout_ns: u64) -> io::Result<()> {
        // no timeout needed: the ring's wait always ends with a completion
        self.ring.submit_and_wait(min)
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = now_ns(&self.origin);
        self.ring.reap(|slot, res| {
            out.push(Cqe {
                slot: slot as u32,
                res: res as i64,
                t_ns: t,
            })
        });
    }
}

struct SyncAdapter {
    origin: Instant,
    pool: SyncBackend,
}

impl Backend for SyncAdapter {
    fn now(&mut self) -> u64 {
        now_ns(&self.origin)
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        Some(self.pool.buffer(slot))
    }
    fn push(&mut self, slot: u32, op: &Op) {
        self.pool.push(slot, dir(op.kind), op.offset, op.len as u32);
    }
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        self.pool.wait(min, Duration::from_nanos(timeout_ns));
        Ok(())
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let origin = self.origin;
        self.pool.reap(|slot, res, at| {
            out.push(Cqe {
                slot,
                res: res as i64,
                t_ns: at.saturating_duration_since(origin).as_nanos() as u64,
            })
        });
    }
}

/// Process CPU usage over the I/O phase: from the moment every worker has set up its backend
/// (the first one past the start barrier takes the snapshot) until the last worker's loop ends.
/// Setup (ring and buffer registration, file layout) and teardown (merging results) stay out,
/// as in fio, whose `usr_cpu`/`sys_cpu` cover only the job's I/O phase. Process-wide, so the
/// sync engine's I/O threads are included.
#[derive(Default)]
struct CpuWindow {
    start: Mutex<Option<cpu::Rusage>>,
    end: Mutex<Option<cpu::Rusage>>,
    running: AtomicUsize,
}

impl CpuWindow {
    /// A worker with a working backend: counts itself in, waits for all workers at `barrier`
    /// and opens the window (once, in the barrier's leader). Counting in before the barrier
    /// means the window closes only when the last of them is done.
    fn start(&self, barrier: &Barrier) {
        self.running.fetch_add(1, Ordering::SeqCst);
        if barrier.wait().is_leader() {
            *self.start.lock().unwrap_or_else(|e| e.into_inner()) = Some(cpu::rusage_self());
        }
    }

    /// A worker's loop has ended; the last one closes the window.
    fn finish(&self) {
        if self.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            *self.end.lock().unwrap_or_else(|e| e.into_inner()) = Some(cpu::rusage_self());
        }
    }

    /// Usage over the window, or `None` when it was never opened or closed.
    fn usage(&self) -> Option<cpu::Rusage> {
        let start = (*self.start.lock().unwrap_or_else(|e| e.into_inner()))?;
        let end = (*self.end.lock().unwrap_or_else(|e| e.into_inner()))?;
        Some(end.since(&start))
    }
}

/// What one worker thread needs to run its loop once its backend is built.
struct Job<'a> {
    barrier: &'a Barrier,
    cpu: &'a CpuWindow,
    ctl: &'a Control,
    qd: u32,
    data: DataOpts,
    fault: Option<FaultPlan>,
}

/// What a worker brings back.
type WorkerOut = (Recorder, LoopOutcome, Vec<MemberStats>);

impl Job<'_> {
    /// Waits for all workers, then runs the loop; a failed setup releases the others and stops them.
    fn run<B: Backend>(
        &self,
        backend: Result<B, String>,
        gens: &mut [OpGen],
        mut rec: Recorder,
    ) -> Result<WorkerOut, String> {
        match backend {
            Ok(mut b) => {
                self.cpu.start(self.barrier);
                let slots = gens.len() as u32 * self.qd;
                let out = match self.fault {
                    Some(plan) => {
                        let mut fb = FaultBackend::new(b, plan, slots);
                        let o = self.go(&mut fb, gens, &mut rec);
                        (o, fb.member_stats())
                    }
                    None => {
                        let o = self.go(&mut b, gens, &mut rec);
                        (o, b.member_stats())
                    }
                };
                Ok((rec, out.0, out.1))
            }
            Err(e) => {
                self.ctl
                    .error_stop
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                self.barrier.wait();
                Err(e)
            }
        }
    }

    fn go<B: Backend>(&self, b: &mut B, gens: &mut [OpGen], rec: &mut Recorder) -> LoopOutcome {
        let out = run_loop(b, gens, self.qd, self.data, self.ctl, rec);
        self.cpu.finish();
        out
    }
}

/// A prepared target: what to open and its geometry.
struct Prepared {
    /// Files to open per worker: none (null), one (single target) or the members of a stripe set.
    infos: Vec<TargetInfo>,
    /// The stripe map when the target is a RAID 0 stripe set.
    map: Option<StripeMap>,
    member_names: Vec<String>,
    desc: TargetDesc,
    start: u64,
    span: u64,
    buf_align: usize,
}

fn kind_name(k: TargetKind) -> &'static str {
    match k {
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block",
    }
}

/// Probes a path target, checks write safety, and lays a file out to `needed` bytes if short.
fn prepare_path(
    path: &Path,
    needed: Option<u64>,
    writes: bool,
    opts: &RealOptions,
    notes: &mut Vec<String>,
    role: &str,
) -> Result<TargetInfo, EngineError> {
    let mut info = device::probe(path)?;
    match info.kind {
        TargetKind::BlockDevice => {
            if writes {
                device::check_block_device_writable(&info, opts.allow_destroy)?;
            }
        }
        TargetKind::File => {
            let needed = match needed {
                Some(n) => n,
                None if info.exists && info.size > 0 => info.size,
                None => {
                    return Err(EngineError::Invalid(format!(
                        "{role}{}: the file does not exist or is empty; give --span to say how large to make it",
                        path.display()
                    )))
                }
            };
            if !info.exists || info.size < needed {
                let note = format!(
                    "laying out {}: {} → {}",
                    path.display(),
                    format_size(info.size),
                    format_size(needed)
                );
                (opts.on_note)(&note);
                notes.push(note);
                info = device::prepare_file(&info, needed)?;
            }
        }
    }
    Ok(info)
}

/// With O_DIRECT, sizes and offsets must be multiples of the target's direct-I/O alignment.
fn check_direct_alignment(
    values: &[(&str, u64)],
    align: u64,
    what: &str,
) -> Result<(), EngineError> {
    let a = align.max(1);
    for (name, v) in values {
        if v % a != 0 {
            return Err(EngineError::Invalid(format!(
                "{name} {v} is not a multiple of {a} bytes, the direct-I/O alignment of {what}; use a multiple of {a} or --buffered"
            )));
        }
    }
    Ok(())
}

fn region_end(spec: &WorkloadSpec) -> Result<Option<u64>, EngineError> {
    spec.span
        .map(|span| {
            spec.offset
                .checked_add(span)
                .ok_or_else(|| EngineError::Invalid("--offset + --span overflows".into()))
        })
        .transpose()
}

fn prepare(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions,
    notes: &mut Vec<String>,
) -> Result<Prepared, EngineError> {
    let writes = spec.writes();
    match target {
        RealTarget::Null => {
            let (start, span) = spec.region_for(opts.null_size, "the null target")?;
            Ok(Prepared {
                infos: vec![],
                map: None,
                member_names: vec![],
                desc: TargetDesc {
                    kind: "null".into(),
                    name: "null".into(),
                    size: opts.null_size,
                    engine: "null".into(),
                    direct: false,
                    offset: start,
                    span,
                    details: vec![],
                },
                start,
                span,
                buf_align: 4096,
            })
        }
        RealTarget::Path(path) => {
            let info = prepare_path(path, region_end(spec)?, writes, opts, notes, "")?;
            let what = format!("{} ({})", path.display(), kind_name(info.kind));
            let (start, span) = spec.region_for(info.size, &what)?;
            if opts.direct {
                check_direct_alignment(
                    &[
                        ("--bs", spec.bs),
                        ("--align", spec.align),
                        ("--offset", start),
                    ],
                    info.dio_offset_align,
                    &path.display().to_string(),
                )?;
            }
            Ok(Prepared {
                desc: TargetDesc {
                    kind: kind_name(info.kind).into(),
                    name: path.display().to_string(),
                    size: info.size,
                    engine: String::new(),
                    direct: opts.direct,
                    offset: start,
                    span,
                    details: info
                        .model
                        .iter()
                        .map(|m| ("model".to_string(), m.clone()))
                        .collect(),
                },
                buf_align: info.dio_mem_align.max(512) as usize,
                infos: vec![info],
                map: None,
                member_names: vec![],
                start,
                span,
            })
        }
        RealTarget::Raid0 { members, stripe } => prepare_raid0(spec, members, *stripe, opts, notes),
    }
}

fn prepare_raid0(
    spec: &WorkloadSpec,
    members: &[Member],
    stripe: u64,
    opts: &RealOptions,
    notes: &mut Vec<String>,
) -> Result<Prepared, EngineError> {
    if members.len() < 2 {
        return Err(EngineError::Invalid(
            "--raid0 needs at least two members (A,B[,C…])".into(),
        ));
    }
    if stripe == 0 {
        return Err(EngineError::Invalid(
            "--stripe must be greater than 0".into(),
        ));
    }
    let nulls = members
        .iter()
        .filter(|m| matches!(m, Member::Null(_)))
        .count();
    if nulls != 0 && nulls != members.len() {
        return Err(EngineError::Invalid(
            "--raid0 members are either all null:SIZE or all files/devices".into(),
        ));
    }
    let n = members.len() as u64;
    let mut infos = Vec::new();
    let mut names = Vec::new();
    let mut sizes = Vec::new();
    let mut block = 512u64;
    let mut dio_align = 512u64;
    let mut mem_align = 4096u64;
    if nulls > 0 {
        for (i, m) in members.iter().enumerate() {
            if let Member::Null(size) = m {
                sizes.push(*size);
                names.push(format!("null{i}"));
            }
        }
    } else {
        // Each member gets an equal share of the region, rounded up to whole chunks.
        let needed = region_end(spec)?.map(|end| end.div_ceil(n).div_ceil(stripe) * stripe);
        let mut seen: Vec<(u64, u64, String)> = Vec::new();
        for m in members {
            let Member::Path(path) = m else {
                unreachable!()
            };
            let probe = device::probe(path)?;
            if !probe.exists && needed.is_none() {
                return Err(EngineError::Invalid(format!(
                    "RAID 0 member {} does not exist; create it or give --span so ssdlab lays it out",
                    path.display()
                )));
            }
            let info = prepare_path(path, needed, spec.writes(), opts, notes, "RAID 0 member ")?;
            let id = std::fs::metadata(path)
                .map(|md| {
                    use std::os::unix::fs::MetadataExt;
                    if info.kind == TargetKind::BlockDevice {
                        (md.rdev(), 0)
                    } else {
                        (md.dev(), md.ino())
                    }
                })
                .map_err(|e| EngineError::Io(format!("{}: {e}", path.display())))?;
            if let Some(prev) = seen.iter().find(|s| (s.0, s.1) == id) {
                return Err(EngineError::Invalid(format!(
                    "RAID 0 member {} is listed twice (same as {})",
                    path.display(),
                    prev.2
                )));
            }
            seen.push((id.0, id.1, path.display().to_string()));
            names.push(path.display().to_string());
            sizes.push(info.size);
            infos.push(info);
        }
        let first = infos[0].logical_block_size;
        if let Some(other) = infos.iter().find(|i| i.logical_block_size != first) {
            return Err(EngineError::Invalid(format!(
                "RAID 0 members have different logical block sizes: {} has {}, {} has {}",
                infos[0].path.display(),
                first,
                other.path.display(),
                other.logical_block_size
            )));
        }
        block = first.max(512);
        dio_align = infos
            .iter()
            .map(|i| i.dio_offset_align.max(1))
            .max()
            .unwrap_or(512);
        mem_align = infos
            .iter()
            .map(|i| i.dio_mem_align)
            .max()
            .unwrap_or(512)
            .max(512);
    }
    let map = StripeMap::new(&sizes, stripe, block)
        .map_err(|e| EngineError::Invalid(format!("--stripe {}: {e}", format_size(stripe))))?;
    let what = format!(
        "the RAID 0 array ({} members, {} stripe)",
        members.len(),
        format_size(stripe)
    );
    let (start, span) = spec.region_for(map.size(), &what)?;
    if opts.direct && nulls == 0 {
        check_direct_alignment(
            &[
                ("--bs", spec.bs),
                ("--align", spec.align),
                ("--offset", start),
                ("--stripe", stripe),
            ],
            dio_align,
            "the RAID 0 members",
        )?;
    }
    Ok(Prepared {
        desc: TargetDesc {
            kind: "raid0".into(),
            name: names.join(","),
            size: map.size(),
            engine: String::new(),
            direct: opts.direct && nulls == 0,
            offset: start,
            span,
            details: vec![
                ("stripe".into(), format_size(stripe)),
                ("members".into(), members.len().to_string()),
                ("zones".into(), map.zones().len().to_string()),
            ],
        },
        infos,
        map: Some(map),
        member_names: names,
        start,
        span,
        buf_align: mem_align as usize,
    })
}

/// Runs `spec` against a real target and returns the merged result of all workers.
pub fn run_real(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions,
) -> Result<RunOutput, EngineError> {
    spec.validate()?;
    let mut notes = Vec::new();
    let prep = prepare(spec, target, opts, &mut notes)?;
    let real_io = !prep.infos.is_empty();
    if spec.verify && !real_io {
        return Err(EngineError::Invalid(
            "--verify needs data on a real target (a file, a device or a stripe set of them)"
                .into(),
        ));
    }
    let engine = match (real_io, opts.engine) {
        (false, _) => "null",
        (true, EngineChoice::Sync) if prep.map.is_some() => {
            return Err(EngineError::Invalid(
                "the RAID 0 stripe set needs the io_uring engine (--engine io_uring or auto)"
                    .into(),
            ))
        }
        (true, EngineChoice::Sync) => "sync",
        (true, EngineChoice::IoUring) => {
            if !ssdlab_uring::io_uring_available() {
                return Err(EngineError::Invalid(
                    "io_uring is not available on this system (kernel too old, or disabled by sysctl/seccomp); use --engine sync".into(),
                ));
            }
            "io_uring"
        }
        (true, EngineChoice::Auto) => {
            if ssdlab_uring::io_uring_available() {
                "io_uring"
            } else if prep.map.is_some() {
                return Err(EngineError::Invalid(
                    "io_uring is not available on this system, and the RAID 0 stripe set needs it"
                        .into(),
                ));
            } else {
                let note = "io_uring is not available here; using the sync engine (one thread per outstanding I/O)";
                (opts.on_note)(note);
                notes.push(note.into());
                "sync"
            }
        }
    };
    // Open every worker's file descriptors before starting anything, so errors come out cleanly.
    let writes = spec.writes();
    let mut files: Vec<Vec<File>> = Vec::new();
    for _ in 0..spec.jobs {
        let mut fs = Vec::new();
        for info in &prep.infos {
            fs.push(device::open_target(info, writes, opts.direct)?);
        }
        files.push(fs);
    }
    let ctl = Arc::new({
        let mut c = Control::new(spec.ramp_ns, spec.stop.time_ns, max_ios(spec));
        c.continue_on_error = opts.continue_on_error;
        c
    });
    let barrier = Arc::new(Barrier::new(spec.jobs as usize));
    let cpu_window = Arc::new(CpuWindow::default());
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let ru0 = cpu::rusage_self();
    let mut handles = Vec::new();
    for (w, mut fs) in files.into_iter().enumerate() {
        let spec = spec.clone();
        let ctl = Arc::clone(&ctl);
        let barrier = Arc::clone(&barrier);
        let cpu_window = Arc::clone(&cpu_window);
        let (start, span, align) = (prep.start, prep.span, prep.buf_align);
        let fault = opts.fault;
        let submit_batch = opts.submit_batch;
        let map = prep.map.clone();
        let names = prep.member_names.clone();
        let h = std::thread::Builder::new()
            .name(format!("ssdlab-worker-{w}"))
            .spawn(move || -> Result<WorkerOut, String> {
                let mut gens = vec![OpGen::new(&spec, start, span, w as u32)];
                let rec = Recorder::default();
                let bs = spec.bs as usize;
                let job = Job {
                    barrier: &barrier,
                    cpu: &cpu_window,
                    ctl: &ctl,
                    qd: spec.qd,
                    data: DataOpts {
                        pattern: spec.pattern,
                        pattern_seed: worker_seed(spec.seed ^ 0xda7a, w as u32),
                        verify: spec.verify.then_some(spec.seed),
                    },
                    fault,
                };
                let origin = Instant::now();
                match (map, engine) {
                    (Some(map), _) => {
                        let ring = if fs.is_empty() {
                            Ok(None)
                        } else {
                            let pieces = StripeAdapter::max_pieces(&map, spec.bs) as u32;
                            UringBackend::with_files(fs, spec.qd, spec.qd * pieces, bs, align)
                                .map(|mut r| {
                                    r.set_submit_batch(submit_batch);
                                    Some(r)
                                })
                                .map_err(|e| format!("cannot set up io_uring: {e}"))
                        };
                        job.run(
                            ring.map(|r| StripeAdapter::new(origin, map, r, spec.qd, names)),
                            &mut gens,
                            rec,
                        )
                    }
                    (None, "io_uring") => job.run(
                        UringBackend::new(fs.remove(0), spec.qd, bs, align)
                            .map(|mut ring| {
                                ring.set_submit_batch(submit_batch);
                                UringAdapter { origin, ring }
                            })
                            .map_err(|e| format!("cannot set up io_uring: {e}")),
                        &mut gens,
                        rec,
                    ),
                    (None, "sync") => job.run(
                        SyncBackend::new(fs.remove(0), spec.qd, bs, align)
                            .map(|pool| SyncAdapter { origin, pool })
                            .map_err(|e| format!("cannot start I/O threads: {e}")),
                        &mut gens,
                        rec,
                    ),
                    _ => job.run(
                        Ok(NullBackend {
                            origin,
                            pending: Vec::with_capacity(spec.qd as usize),
                        }),
                        &mut gens,
                        rec,
                    ),
                }
            })
            .map_err(|e| EngineError::Io(format!("cannot start worker thread: {e}")))?;
        handles.push(h);
    }
    let mut merged = Recorder::default();
    let mut outcome = LoopOutcome::default();
    let mut members: Vec<MemberStats> = Vec::new();
    let mut setup_error = None;
    for h in handles {
        match h.join() {
            Ok(Ok((rec, out, ms))) => {
                merged.merge(&rec);
                outcome.runtime_ns = outcome.runtime_ns.max(out.runtime_ns);
                outcome.ramp_ns = outcome.ramp_ns.max(out.ramp_ns);
                outcome.interrupted |= out.interrupted;
                outcome.stopped_on_error |= out.stopped_on_error;
                merge_members(&mut members, ms);
            }
            Ok(Err(e)) => setup_error = Some(e),
            Err(_) => setup_error = Some("a worker thread panicked".into()),
        }
    }
    if let Some(e) = setup_error {
        return Err(EngineError::Io(e));
    }
    let ru = cpu_window
        .usage()
        .unwrap_or_else(|| cpu::rusage_self().since(&ru0));
    let mut desc = prep.desc;
    desc.engine = engine.to_string();
    let mut result = build_result(
        spec,
        desc,
        &merged,
        outcome,
        started,
        CpuUsage {
            user_ns: ru.user_ns,
            sys_ns: ru.sys_ns,
            ctx: ru.nvcsw + ru.nivcsw,
            majf: ru.majflt,
            minf: ru.minflt,
        },
    );
    result.members = members;
    if spec.verify {
        result.verify = Some(merged.verify.clone());
    }
    Ok(RunOutput { result, notes })
}

/// Adds one worker's member statistics. Counts and ticks add up; busy time is the largest of the
/// workers' (each worker only sees its own I/O, so this is a lower bound of the member's busy time).
fn merge_members(acc: &mut Vec<MemberStats>, ms: Vec<MemberStats>) {
    if acc.is_empty() {
        *acc = ms;
        return;
    }
    for (a, m) in acc.iter_mut().zip(ms) {
        a.read_ios += m.read_ios;
        a.write_ios += m.write_ios;
        a.read_bytes += m.read_bytes;
        a.write_bytes += m.write_bytes;
        a.read_ticks_ns += m.read_ticks_ns;
        a.write_ticks_ns += m.write_ticks_ns;
        a.busy_ns = a.busy_ns.max(m.busy_ns);
    }
}

/// The I/O budget implied by `--ios` and `--bytes` (the smaller wins).
pub(crate) fn max_ios(spec: &WorkloadSpec) -> Option<u64> {
    let by_bytes = spec.stop.bytes.map(|b| b.div_ceil(spec.bs));
    match (spec.stop.ios, by_bytes) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Turns a merged recorder into the result every front end shows.
pub(crate) fn build_result(
    spec: &WorkloadSpec,
    target: TargetDesc,
    rec: &Recorder,
    out: LoopOutcome,
    timestamp_ms: u64,
    cpu: CpuUsage,
) -> RunResult {
    let total_sub: u64 = rec.depth_counts.iter().sum();
    let iodepth_level = DEPTH_LEVELS
        .iter()
        .zip(rec.depth_counts.iter())
        .map(|(k, &c)| {
            let pct = if total_sub == 0 {
                0.0
            } else {
                100.0 * c as f64 / total_sub as f64
            };
            (k.to_string(), pct)
        })
        .collect();
    RunResult {
        spec: spec.clone(),
        target,
        read: rec.summary(OpKind::Read, out.runtime_ns),
        write: rec.summary(OpKind::Write, out.runtime_ns),
        trim: rec.summary(OpKind::Trim, out.runtime_ns),
        runtime_ns: out.runtime_ns,
        ramp_ns: out.ramp_ns,
        timestamp_ms,
        interrupted: out.interrupted,
        stopped_on_error: out.stopped_on_error,
        cpu,
        iodepth_level,
        latency_levels: rec.latency_levels(),
        errors: rec.error_records.clone(),
        series: rec.series(out.runtime_ns),
        members: Vec::new(),
        verify: None,
        device: None,
    }
}
