//! Real targets: regular files, block devices and the null target, driven by io_uring or by the
//! portable sync backend, one thread per worker.

use crate::backend::{Backend, Cqe};
use crate::engine_loop::{run_loop, Control, LoopOutcome};
use crate::fault::{FaultBackend, FaultPlan};
use crate::EngineError;
use ssdlab_stats::{CpuUsage, Recorder, RunResult, TargetDesc, DEPTH_LEVELS};
use ssdlab_uring::device::{self, TargetInfo, TargetKind};
use ssdlab_uring::{cpu, Dir, SyncBackend, UringBackend};
use ssdlab_workload::gen::worker_seed;
use ssdlab_workload::{format_size, Op, OpGen, OpKind, WorkloadSpec};
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where a real run goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RealTarget {
    /// Completes every I/O at once without touching any device: measures ssdlab's own overhead.
    Null,
    /// A regular file (created and laid out if needed) or a block device.
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
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        self.ring
            .submit_and_wait(min, Duration::from_nanos(timeout_ns))
    }
    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = now_ns(&self.origin);
        self.ring.reap(|slot, res| {
            out.push(Cqe {
                slot,
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

/// What one worker thread needs to run its loop once its backend is built.
struct Job<'a> {
    barrier: &'a Barrier,
    ctl: &'a Control,
    qd: u32,
    pattern: ssdlab_workload::Pattern,
    pattern_seed: u64,
    fault: Option<FaultPlan>,
}

impl Job<'_> {
    /// Waits for all workers, then runs the loop; a failed setup releases the others and stops them.
    fn run<B: Backend>(
        &self,
        backend: Result<B, String>,
        gens: &mut [OpGen],
        rec: &mut Recorder,
    ) -> Result<LoopOutcome, String> {
        match backend {
            Ok(b) => {
                self.barrier.wait();
                let slots = gens.len() as u32 * self.qd;
                Ok(match self.fault {
                    Some(plan) => self.go(&mut FaultBackend::new(b, plan, slots), gens, rec),
                    None => self.go(&mut { b }, gens, rec),
                })
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
}

impl Job<'_> {
    fn go<B: Backend>(&self, b: &mut B, gens: &mut [OpGen], rec: &mut Recorder) -> LoopOutcome {
        run_loop(
            b,
            gens,
            self.qd,
            self.pattern,
            self.pattern_seed,
            self.ctl,
            rec,
        )
    }
}

/// A prepared target: what to open and its geometry.
struct Prepared {
    info: Option<TargetInfo>,
    desc: TargetDesc,
    start: u64,
    span: u64,
    buf_align: usize,
}

fn prepare(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &RealOptions,
    notes: &mut Vec<String>,
) -> Result<Prepared, EngineError> {
    match target {
        RealTarget::Null => {
            let (start, span) = spec.region_for(opts.null_size, "the null target")?;
            Ok(Prepared {
                info: None,
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
            let mut info = device::probe(path)?;
            let writes = spec.writes();
            match info.kind {
                TargetKind::BlockDevice => {
                    if writes {
                        device::check_block_device_writable(&info, opts.allow_destroy)?;
                    }
                }
                TargetKind::File => {
                    let needed = match spec.span {
                        Some(span) => spec.offset.checked_add(span).ok_or_else(|| {
                            EngineError::Invalid("--offset + --span overflows".into())
                        })?,
                        None if info.exists && info.size > 0 => info.size,
                        None => {
                            return Err(EngineError::Invalid(format!(
                                "{}: the file does not exist or is empty; give --span to say how large to make it",
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
            let what = format!("{} ({})", path.display(), kind_name(info.kind));
            let (start, span) = spec.region_for(info.size, &what)?;
            if opts.direct {
                let a = info.dio_offset_align.max(1);
                for (name, v) in [("--bs", spec.bs), ("--align", spec.align), ("--offset", start)] {
                    if v % a != 0 {
                        return Err(EngineError::Invalid(format!(
                            "{name} {v} is not a multiple of {a} bytes, the direct-I/O alignment of {}; use a multiple of {a} or --buffered",
                            path.display()
                        )));
                    }
                }
            }
            let buf_align = info.dio_mem_align.max(512) as usize;
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
                info: Some(info),
                start,
                span,
                buf_align,
            })
        }
    }
}

fn kind_name(k: TargetKind) -> &'static str {
    match k {
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block",
    }
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
    let engine = match (target, opts.engine) {
        (RealTarget::Null, _) => "null",
        (_, EngineChoice::Sync) => "sync",
        (_, EngineChoice::IoUring) => {
            if !ssdlab_uring::io_uring_available() {
                return Err(EngineError::Invalid(
                    "io_uring is not available on this system (kernel too old, or disabled by sysctl/seccomp); use --engine sync".into(),
                ));
            }
            "io_uring"
        }
        (_, EngineChoice::Auto) => {
            if ssdlab_uring::io_uring_available() {
                "io_uring"
            } else {
                let note = "io_uring is not available here; using the sync engine (one thread per outstanding I/O)";
                (opts.on_note)(note);
                notes.push(note.into());
                "sync"
            }
        }
    };
    // Open every worker's file descriptor before starting anything, so errors come out cleanly.
    let writes = spec.writes();
    let mut files = Vec::new();
    if let Some(info) = &prep.info {
        for _ in 0..spec.jobs {
            files.push(Some(device::open_target(info, writes, opts.direct)?));
        }
    } else {
        files.resize_with(spec.jobs as usize, || None);
    }
    let ctl = Arc::new({
        let mut c = Control::new(spec.ramp_ns, spec.stop.time_ns, max_ios(spec));
        c.continue_on_error = opts.continue_on_error;
        c
    });
    let barrier = Arc::new(Barrier::new(spec.jobs as usize));
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let ru0 = cpu::rusage_self();
    let mut handles = Vec::new();
    for (w, file) in files.into_iter().enumerate() {
        let spec = spec.clone();
        let ctl = Arc::clone(&ctl);
        let barrier = Arc::clone(&barrier);
        let (start, span, align) = (prep.start, prep.span, prep.buf_align);
        let fault = opts.fault;
        let h = std::thread::Builder::new()
            .name(format!("ssdlab-worker-{w}"))
            .spawn(move || -> Result<(Recorder, LoopOutcome), String> {
                let mut gens = vec![OpGen::new(&spec, start, span, w as u32)];
                let mut rec = Recorder::default();
                let pseed = worker_seed(spec.seed ^ 0xda7a, w as u32);
                let bs = spec.bs as usize;
                let job = Job {
                    barrier: &barrier,
                    ctl: &ctl,
                    qd: spec.qd,
                    pattern: spec.pattern,
                    pattern_seed: pseed,
                    fault,
                };
                let origin = Instant::now();
                match (engine, file) {
                    ("io_uring", Some(f)) => job.run(
                        UringBackend::new(f, spec.qd, bs, align)
                            .map(|ring| UringAdapter { origin, ring })
                            .map_err(|e| format!("cannot set up io_uring: {e}")),
                        &mut gens,
                        &mut rec,
                    ),
                    ("sync", Some(f)) => job.run(
                        SyncBackend::new(f, spec.qd, bs, align)
                            .map(|pool| SyncAdapter { origin, pool })
                            .map_err(|e| format!("cannot start I/O threads: {e}")),
                        &mut gens,
                        &mut rec,
                    ),
                    _ => job.run(
                        Ok(NullBackend {
                            origin,
                            pending: Vec::with_capacity(spec.qd as usize),
                        }),
                        &mut gens,
                        &mut rec,
                    ),
                }
                .map(|out| (rec, out))
            })
            .map_err(|e| EngineError::Io(format!("cannot start worker thread: {e}")))?;
        handles.push(h);
    }
    let mut merged = Recorder::default();
    let mut outcome = LoopOutcome::default();
    let mut setup_error = None;
    for h in handles {
        match h.join() {
            Ok(Ok((rec, out))) => {
                merged.merge(&rec);
                outcome.runtime_ns = outcome.runtime_ns.max(out.runtime_ns);
                outcome.ramp_ns = outcome.ramp_ns.max(out.ramp_ns);
                outcome.interrupted |= out.interrupted;
                outcome.stopped_on_error |= out.stopped_on_error;
            }
            Ok(Err(e)) => setup_error = Some(e),
            Err(_) => setup_error = Some("a worker thread panicked".into()),
        }
    }
    if let Some(e) = setup_error {
        return Err(EngineError::Io(e));
    }
    let ru = cpu::rusage_self().since(&ru0);
    let mut desc = prep.desc;
    desc.engine = engine.to_string();
    let result = build_result(
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
    Ok(RunOutput { result, notes })
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
        device: None,
    }
}
