//! Planning a real run's targets: everything that can be checked is checked here, before the first
//! byte is written ([`plan`]); only then are files laid out ([`Plan::lay_out`]), with an undo
//! record so a run that cannot start after all gives back what it took ([`LaidOut`]).
//!
//! What [`plan`] checks, without side effects: every path's type and safety (block devices need
//! `allow_destroy` and must hold no data and be unused), duplicate RAID 0 members (same file by
//! device and inode, or two spellings of a path not created yet), the region against the target
//! size the layout will give, bs/align/offset/stripe against the direct-I/O alignment (for files
//! still to be created: the alignment their filesystem will give them), O_DIRECT support, and the
//! free space every file to be laid out needs on its filesystem (statvfs).

use crate::error::DeviceError;
use crate::fill::{lay_out_with, Cleanup, LayoutError, Undo};
use crate::identity::PathId;
use crate::probe::{probe, PathKind, TargetInfo};
use crate::safety::check_block_device_writable;
use ssdlab_layout::StripeMap;
use ssdlab_workload::{format_size, Field, Flags, Naming, SpecError, WorkloadSpec};
use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Where a real run goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RealTarget {
    /// Completes every I/O at once without touching any device: measures ssdlab's own overhead.
    Null,
    /// A regular file (created and laid out if needed) or a block device.
    Path(PathBuf),
    /// A userspace RAID 0 stripe set (md raid0 layout) over the members with this chunk size.
    Raid0 { members: Vec<Member>, stripe: u64 },
    /// A job's several files or devices (fio's `nrfiles`, `filename=a:b`): file `i` is the
    /// region `i` of the workload's files ([`ssdlab_workload::Files`]), each I/O going to the
    /// file it falls in.
    Files(Vec<PathBuf>),
}

impl RealTarget {
    /// The paths this target reads or writes (no null members).
    pub fn paths(&self) -> Vec<&Path> {
        match self {
            RealTarget::Null => vec![],
            RealTarget::Path(p) => vec![p.as_path()],
            RealTarget::Files(ps) => ps.iter().map(|p| p.as_path()).collect(),
            RealTarget::Raid0 { members, .. } => members
                .iter()
                .filter_map(|m| match m {
                    Member::Path(p) => Some(p.as_path()),
                    Member::Null(_) => None,
                })
                .collect(),
        }
    }
}

/// A member of a real stripe set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    /// A null member of this size (completes at once).
    Null(u64),
    Path(PathBuf),
}

/// Options of planning that are not part of the workload.
#[derive(Debug, Clone, Copy)]
pub struct PlanOptions {
    /// O_DIRECT: sizes and offsets must fit the direct-I/O alignment.
    pub direct: bool,
    /// Writes to block devices are allowed (still refused when they hold data or are in use).
    pub allow_destroy: bool,
    /// Size of the null target (and of nothing else).
    pub null_size: u64,
    /// A new file's missing directories are made (mode 0700) when it is laid out, as fio's
    /// `create_work_dirs` makes them; otherwise such a path is refused.
    pub create_dirs: bool,
}

/// The directory a new file at `path` would be made in, or the nearest existing one above
/// it when directories are missing (see [`crate::probe::missing_dirs`]).
fn existing_dir(path: &Path) -> PathBuf {
    crate::probe::missing_dirs(path)
        .map(|(_, d)| d)
        .unwrap_or_else(|| crate::probe::parent_of(path))
}

/// Why a target cannot be used. Every variant means nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{role}{}: the file does not exist or is empty; give --span to say how large to make it", path.display())]
    SizeUnknown { role: &'static str, path: PathBuf },
    #[error("{role}{}: a character device has no size; give --span to say how much of it to use (fio: size)", path.display())]
    CharSize { role: &'static str, path: PathBuf },
    #[error("{}: verification of a character device (a read gives back nothing written)", path.display())]
    CharVerify { path: PathBuf },
    #[error("{}: is the file standard output goes to: writing it would overwrite the report (send standard output elsewhere, or the report to a file of its own)", path.display())]
    StdoutTarget { path: PathBuf },
    #[error("{}: a character device cannot be opened with O_DIRECT (fio's direct=1 fails with EINVAL); use buffered I/O (--buffered, fio's direct=0)", path.display())]
    CharDirect { path: PathBuf },
    #[error("--raid0 needs at least two members (A,B[,C…])")]
    TooFewMembers,
    #[error("the job has {paths} files and {regions} file regions")]
    FileRegions { paths: usize, regions: usize },
    #[error("--stripe must be greater than 0")]
    ZeroStripe,
    #[error("--raid0 members are either all null:SIZE or all files/devices")]
    MixedNullMembers,
    #[error("RAID 0 member {path} is listed twice (same as {first})")]
    DuplicateMember { path: String, first: String },
    #[error(
        "RAID 0 members have different logical block sizes: {a} has {a_size}, {b} has {b_size}"
    )]
    BlockSizes {
        a: String,
        a_size: u64,
        b: String,
        b_size: u64,
    },
    #[error("--stripe {stripe}: {why}")]
    Stripe { stripe: String, why: String },
    #[error("{}", render_unaligned(&Flags, *.field, *.value, *.align, .what))]
    Unaligned {
        field: Field,
        value: u64,
        align: u64,
        what: String,
    },
    #[error("{}", render_overflow(&Flags, *.offset, *.span))]
    RegionOverflow { offset: u64, span: u64 },
    #[error("not enough free space on the filesystem of {path}: laying out {files} needs {needed}, {free} is free")]
    NoSpace {
        path: String,
        files: String,
        needed: String,
        free: String,
    },
    #[error("{}: cannot read the free space of its filesystem: {err}", path.display())]
    Statvfs { path: PathBuf, err: String },
}

fn render_unaligned(n: &dyn Naming, field: Field, value: u64, align: u64, what: &str) -> String {
    let or = n.buffered().map(|b| format!(" or {b}")).unwrap_or_default();
    format!(
        "{} is not a multiple of {align} bytes, the direct-I/O alignment of {what}; use a multiple of {align}{or}",
        n.setting(field, value)
    )
}

fn render_overflow(n: &dyn Naming, offset: u64, span: u64) -> String {
    format!(
        "{} + {} overflows",
        n.setting(Field::Offset, offset),
        n.setting(Field::Span, span)
    )
}

impl PlanError {
    /// The message, naming the settings the way `n` does (`Display` names ssdlab's flags).
    pub fn render(&self, n: &dyn Naming) -> String {
        match self {
            PlanError::Spec(e) => e.render(n),
            PlanError::Unaligned {
                field,
                value,
                align,
                what,
            } => render_unaligned(n, *field, *value, *align, what),
            PlanError::RegionOverflow { offset, span } => render_overflow(n, *offset, *span),
            PlanError::ZeroStripe => format!("{} must be greater than 0", n.name(Field::Stripe)),
            PlanError::Stripe { stripe, why } => {
                format!("{} {stripe}: {why}", n.name(Field::Stripe))
            }
            e => e.to_string(),
        }
    }
}

/// One file or device of a plan.
#[derive(Debug, Clone)]
pub struct PlannedPath {
    /// What probing found (before any layout).
    pub info: TargetInfo,
    /// Lay the file out to this many bytes first (created or extended); `None` = use as it is.
    pub lay_out_to: Option<u64>,
    /// How the layout makes it that long (data by default).
    pub fill: crate::fill::Fill,
    /// What a layout with data writes (pseudo-random data when `None`).
    pub data: Option<crate::fill::LayoutData>,
    /// Its size once laid out.
    pub size: u64,
    /// How the path is shown ("RAID 0 member " prefix in errors is added by the caller).
    pub name: String,
    /// Notes from the safety checks for the user (e.g. blkid was not available, so only the
    /// built-in signature detector looked at a device).
    pub notes: Vec<String>,
}

/// The checked targets of a run; nothing has been written yet.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The files or devices: none (null target), one, or the members of a stripe set in order.
    pub paths: Vec<PlannedPath>,
    /// Null member sizes of a null stripe set (empty otherwise).
    pub null_members: Vec<u64>,
    /// The stripe map of a RAID 0 target.
    pub map: Option<StripeMap>,
    /// Size of the target (the array for a stripe set) after layout.
    pub size: u64,
    /// The region the run works on.
    pub start: u64,
    pub span: u64,
    /// Alignment of I/O buffers in memory.
    pub buf_align: usize,
    /// True when the run writes.
    pub writes: bool,
    /// Direct I/O (O_DIRECT) on real files and devices.
    pub direct: bool,
}

impl Plan {
    /// True for the null target or a stripe set of null members.
    pub fn is_null(&self) -> bool {
        self.paths.is_empty()
    }

    /// The first file the layout would create or extend (fio's `--readonly` refuses that).
    pub fn first_layout(&self) -> Option<&std::path::Path> {
        self.paths
            .iter()
            .find(|p| {
                p.lay_out_to
                    .is_some_and(|n| !p.info.exists || p.info.size < n)
            })
            .map(|p| p.info.path.as_path())
    }

    /// Bytes the layout will write (files to create or extend).
    pub fn layout_bytes(&self) -> u64 {
        self.paths
            .iter()
            .filter_map(|p| p.lay_out_to.map(|n| n.saturating_sub(p.info.size)))
            .sum()
    }

    /// Lays out the files that need it (see [`crate::fill`]), calling `on_note` before each.
    /// On failure every file already laid out by this call is given back too. On success the
    /// returned [`LaidOut`] holds the fresh probes and the undo records: call
    /// [`LaidOut::commit`] once the run has started, or drop it / [`LaidOut::undo`] to give
    /// everything back.
    pub fn lay_out(
        &self,
        stop: Option<&AtomicBool>,
        on_note: &dyn Fn(&str),
    ) -> Result<LaidOut, LayoutError> {
        let mut done = LaidOut {
            infos: Vec::new(),
            undo: Vec::new(),
            dirs: Vec::new(),
        };
        for p in &self.paths {
            if !p.info.exists && p.lay_out_to.is_some() {
                if let Some((missing, _)) = crate::probe::missing_dirs(&p.info.path) {
                    for d in missing {
                        on_note(&format!(
                            "creating directory {} (mode 0700, as fio's create_work_dirs)",
                            d.display()
                        ));
                        let made = std::fs::DirBuilder::new()
                            .mode(0o700)
                            .create(&d)
                            .map(|_| true)
                            .or_else(|e| {
                                if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() {
                                    Ok(false)
                                } else {
                                    Err(e)
                                }
                            });
                        match made {
                            Ok(true) => done.dirs.push(d),
                            Ok(false) => {}
                            Err(err) => {
                                let earlier = done.undo();
                                return Err(with_earlier(
                                    LayoutError::Failed {
                                        path: d,
                                        what: "cannot create the directory",
                                        err,
                                        cleanup: Cleanup::Untouched,
                                    },
                                    earlier,
                                ));
                            }
                        }
                    }
                }
            }
            match p.lay_out_to {
                Some(n) if !p.info.exists || p.info.size < n => {
                    let (from, to) = (format_size(p.info.size), format_size(n));
                    let how = match p.fill {
                        crate::fill::Fill::Data => "",
                        crate::fill::Fill::Allocate => {
                            " (space allocated, no data written: fio's fallocate)"
                        }
                        crate::fill::Fill::AllocateKeepSize => {
                            " (space allocated past its end: fio's fallocate=keep)"
                        }
                        crate::fill::Fill::Truncate => " (sparse: fio's fallocate=truncate)",
                        crate::fill::Fill::Nothing => " (nothing allocated: the writes extend it)",
                    };
                    on_note(&if from == to {
                        // Too close for the rounded sizes to differ: say it in bytes.
                        format!(
                            "laying out {}: {} → {} bytes{how}",
                            p.info.path.display(),
                            p.info.size,
                            n
                        )
                    } else {
                        format!("laying out {}: {from} → {to}{how}", p.info.path.display())
                    });
                    match lay_out_with(&p.info, n, stop, p.fill, p.data, on_note) {
                        Ok(l) => {
                            done.infos.push(l.info);
                            done.undo.extend(l.undo);
                        }
                        Err(e) => {
                            let earlier = done.undo();
                            return Err(with_earlier(e, earlier));
                        }
                    }
                }
                _ => done.infos.push(p.info.clone()),
            }
        }
        Ok(done)
    }
}

/// Adds what happened to earlier files of the same layout to a layout error.
fn with_earlier(e: LayoutError, earlier: Vec<(PathBuf, Cleanup)>) -> LayoutError {
    if earlier.is_empty() {
        return e;
    }
    let extra: Vec<String> = earlier
        .iter()
        .map(|(p, c)| format!("{}: {c}", p.display()))
        .collect();
    let with = |c: Cleanup| Cleanup::Also {
        first: Box::new(c),
        others: extra.join("; "),
    };
    match e {
        LayoutError::Failed {
            path,
            what,
            err,
            cleanup,
        } => LayoutError::Failed {
            path,
            what,
            err,
            cleanup: with(cleanup),
        },
        LayoutError::Interrupted { path, cleanup } => LayoutError::Interrupted {
            path,
            cleanup: with(cleanup),
        },
        LayoutError::Refused(err) => LayoutError::RefusedAfter {
            err,
            cleanup: Cleanup::Also {
                first: Box::new(Cleanup::Untouched),
                others: extra.join("; "),
            },
        },
        other @ LayoutError::RefusedAfter { .. } => other,
    }
}

/// Files laid out for a run: fresh probes, in plan order, and what to undo.
#[derive(Debug)]
pub struct LaidOut {
    /// Fresh probes of the plan's paths, in order.
    pub infos: Vec<TargetInfo>,
    undo: Vec<Undo>,
    /// Directories this layout made, outermost first (removed, when empty, on undo).
    dirs: Vec<PathBuf>,
}

impl LaidOut {
    /// True when the layout wrote something.
    pub fn wrote(&self) -> bool {
        !self.undo.is_empty() || !self.dirs.is_empty()
    }

    /// The run has started: keep the files.
    pub fn commit(mut self) {
        self.undo.clear();
        self.dirs.clear();
    }

    /// Keeps the files at these paths as laid out, now: they are not given back if the run
    /// does not start, and their descriptors are closed (a file held open outlives an unlink of
    /// its name, which would then only take the name away: fio's filedelete times the whole
    /// unlink).
    pub fn keep(&mut self, paths: &std::collections::HashSet<PathBuf>) {
        self.undo.retain(|u| !paths.contains(u.path()));
    }

    /// Gives back everything this layout wrote; returns what was done per path.
    pub fn undo(&mut self) -> Vec<(PathBuf, Cleanup)> {
        let files: Vec<(PathBuf, Cleanup)> = self
            .undo
            .drain(..)
            .rev()
            .map(|u| {
                let p = u.path().to_path_buf();
                (p, u.undo())
            })
            .collect();
        // (innermost first; one something else put a file in stays)
        for d in self.dirs.drain(..).rev() {
            let _ = std::fs::remove_dir(&d);
        }
        files
    }
}

impl Drop for LaidOut {
    fn drop(&mut self) {
        let _ = self.undo();
    }
}

fn region_end(spec: &WorkloadSpec) -> Result<Option<u64>, PlanError> {
    spec.span
        .map(|span| {
            spec.offset
                .checked_add(span)
                .ok_or(PlanError::RegionOverflow {
                    offset: spec.offset,
                    span,
                })
        })
        .transpose()
}

/// With O_DIRECT, sizes and offsets must be multiples of the target's direct-I/O alignment.
fn check_direct_alignment(
    values: &[(Field, u64)],
    align: u64,
    what: &str,
) -> Result<(), PlanError> {
    let a = align.max(1);
    for (field, v) in values {
        if v % a != 0 {
            return Err(PlanError::Unaligned {
                field: *field,
                value: *v,
                align: a,
                what: what.to_string(),
            });
        }
    }
    Ok(())
}

/// Checks that a file can be written (created in its directory when missing): not under `/dev`,
/// not on a read-only filesystem, and writable by this user.
fn check_writable_place(info: &TargetInfo) -> Result<(), DeviceError> {
    let path = info.path.as_path();
    let dir = existing_dir(path);
    if !info.exists && std::fs::canonicalize(&dir).is_ok_and(|d| d.starts_with("/dev")) {
        return Err(DeviceError::NoSuchDevice {
            path: path.to_path_buf(),
        });
    }
    let on = if info.exists { path } else { dir.as_path() };
    if rustix::fs::statvfs(on)
        .is_ok_and(|st| st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
    {
        return Err(DeviceError::ReadOnly {
            path: path.to_path_buf(),
        });
    }
    let want = if info.exists {
        rustix::fs::Access::WRITE_OK
    } else {
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK
    };
    if rustix::fs::access(on, want).is_err() {
        return Err(DeviceError::PermissionDenied {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Whether `path` names the regular file standard output is redirected to (`/dev/stdout`, or
/// the file itself): a target written there would be overwritten by the report, or overwrite
/// it.
fn is_stdout(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| crate::identity::is_stdout_file(&m))
}

/// fio's `fill_device` on one path: a regular file is created (or kept) as it is, never laid
/// out, and the job's writes grow it up to `needed` bytes — the job ends where the file system
/// is full; a block device is planned as for any write.
fn plan_filled(
    path: &Path,
    needed: Option<u64>,
    opts: &PlanOptions,
) -> Result<PlannedPath, PlanError> {
    let mut p = plan_path(path, Some(0), true, opts, "")?;
    if p.info.kind == PathKind::File {
        p.lay_out_to = (!p.info.exists).then_some(0);
        p.size = p.info.size.max(needed.unwrap_or(0));
    }
    Ok(p)
}

/// Probes one path, checks write safety, and decides how large a file must be laid out.
fn plan_path(
    path: &Path,
    needed: Option<u64>,
    writes: bool,
    opts: &PlanOptions,
    role: &'static str,
) -> Result<PlannedPath, PlanError> {
    let info = if opts.create_dirs {
        crate::probe::probe_creating_dirs(path)?
    } else {
        probe(path)?
    };
    if writes && is_stdout(path) {
        return Err(PlanError::StdoutTarget {
            path: path.to_path_buf(),
        });
    }
    let mut notes = Vec::new();
    let (lay_out_to, size) = match info.kind {
        PathKind::BlockDevice => {
            if writes {
                notes = check_block_device_writable(&info, opts.allow_destroy)?.notes;
            }
            (None, info.size)
        }
        // /dev/null or /dev/zero: nothing to lay out, nothing kept, no size of its own
        PathKind::CharDevice => match needed {
            Some(n) => (None, n),
            None => {
                return Err(PlanError::CharSize {
                    role,
                    path: path.to_path_buf(),
                })
            }
        },
        PathKind::File => {
            if writes {
                crate::safety::check_file_writable(&info)?;
            }
            let needed = match needed {
                Some(n) => n,
                None if info.exists && info.size > 0 => info.size,
                None => {
                    return Err(PlanError::SizeUnknown {
                        role,
                        path: path.to_path_buf(),
                    })
                }
            };
            let grow = !info.exists || info.size < needed;
            if grow || writes {
                check_writable_place(&info)?;
            }
            (grow.then_some(needed), info.size.max(needed))
        }
    };
    if opts.direct && info.kind == PathKind::CharDevice {
        return Err(PlanError::CharDirect {
            path: path.to_path_buf(),
        });
    }
    if opts.direct && !info.direct_io_supported() {
        return Err(DeviceError::DirectUnsupported {
            path: path.to_path_buf(),
        }
        .into());
    }
    Ok(PlannedPath {
        name: path.display().to_string(),
        info,
        lay_out_to,
        fill: Default::default(),
        data: None,
        size,
        notes,
    })
}

/// The size of the file system `path` is on (of its directory when it does not exist yet),
/// bytes: no file on it can grow longer.
pub fn fs_size(path: &Path) -> Result<u64, PlanError> {
    let anchor = if path.exists() {
        path.to_path_buf()
    } else {
        existing_dir(path)
    };
    let st = rustix::fs::statvfs(&anchor).map_err(|e| PlanError::Statvfs {
        path: anchor.clone(),
        err: e.to_string(),
    })?;
    Ok(st.f_blocks.saturating_mul(st.f_frsize.max(1)))
}

/// Checks that every filesystem has room for the files to be laid out on it (all of `paths`
/// together: several files on one filesystem add up).
pub fn check_free_space(paths: &[PlannedPath]) -> Result<(), PlanError> {
    // Group by filesystem (the device of the file, or of its parent directory when missing).
    let mut by_fs: BTreeMap<u64, (PathBuf, u64, Vec<String>)> = BTreeMap::new();
    for p in paths {
        let Some(to) = p.lay_out_to else { continue };
        let grow = to.saturating_sub(p.info.size);
        if grow == 0 {
            continue;
        }
        let anchor = if p.info.exists {
            p.info.path.clone()
        } else {
            existing_dir(&p.info.path)
        };
        let dev = std::fs::metadata(&anchor)
            .map(|m| m.dev())
            .map_err(|e| PlanError::Statvfs {
                path: anchor.clone(),
                err: e.to_string(),
            })?;
        let e = by_fs.entry(dev).or_insert_with(|| (anchor, 0, Vec::new()));
        e.1 += grow;
        e.2.push(p.name.clone());
    }
    for (_, (anchor, grow, names)) in by_fs {
        let st = rustix::fs::statvfs(&anchor).map_err(|e| PlanError::Statvfs {
            path: anchor.clone(),
            err: e.to_string(),
        })?;
        let frsize = st.f_frsize.max(1);
        let free = st.f_bavail.saturating_mul(frsize);
        // Round each file's growth up to whole blocks, plus a little for metadata (extents).
        let needed = grow.div_ceil(frsize) * frsize + grow / 512;
        if needed > free {
            return Err(PlanError::NoSpace {
                path: anchor.display().to_string(),
                files: names.join(", "),
                needed: format_size(needed),
                free: format_size(free),
            });
        }
    }
    Ok(())
}

/// Checks everything about a real run's targets that can be checked before writing (see the
/// module docs) and returns the plan.
pub fn plan(
    spec: &WorkloadSpec,
    target: &RealTarget,
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    spec.validate()?;
    let writes = spec.writes();
    match target {
        RealTarget::Null => {
            let (start, span) = spec.region_for(opts.null_size, "the null target")?;
            Ok(Plan {
                paths: vec![],
                null_members: vec![],
                map: None,
                size: opts.null_size,
                start,
                span,
                buf_align: 4096,
                writes,
                direct: false,
            })
        }
        RealTarget::Path(path) => {
            let p = if spec.fill_device {
                plan_filled(path, region_end(spec)?, opts)?
            } else {
                plan_path(path, region_end(spec)?, writes, opts, "")?
            };
            let kind = match p.info.kind {
                PathKind::File => "file",
                PathKind::BlockDevice => "block",
                PathKind::CharDevice => "character device",
            };
            if p.info.kind == PathKind::CharDevice && (spec.verify || spec.verify_by_pattern) {
                return Err(PlanError::CharVerify { path: path.clone() });
            }
            let what = format!("{} ({kind})", path.display());
            let (start, span) = spec.region_for(p.size, &what)?;
            if opts.direct {
                // The block sizes first: the alignment defaults to the block size, and the
                // setting given is named.
                let mut values: Vec<(Field, u64)> = spec
                    .block_size_values()
                    .into_iter()
                    .map(|b| (Field::Bs, b))
                    .collect();
                values.extend([(Field::Align, spec.align), (Field::Offset, start)]);
                check_direct_alignment(
                    &values,
                    p.info.dio_offset_align,
                    &path.display().to_string(),
                )?;
            }
            let paths = vec![p];
            check_free_space(&paths)?;
            Ok(Plan {
                buf_align: paths[0].info.dio_mem_align.max(512) as usize,
                size: paths[0].size,
                paths,
                null_members: vec![],
                map: None,
                start,
                span,
                writes,
                direct: opts.direct,
            })
        }
        RealTarget::Raid0 { members, stripe } => plan_raid0(spec, members, *stripe, opts),
        RealTarget::Files(paths) => plan_files(spec, paths, opts),
    }
}

/// A job's several files: each planned as one file is (its safety, its layout to the end of
/// its region, the direct-I/O alignment of its offset), the free space for all together.
fn plan_files(
    spec: &WorkloadSpec,
    paths: &[PathBuf],
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    let regions = spec.files.as_ref().map_or(&[][..], |f| &f.regions[..]);
    if regions.len() != paths.len() || paths.is_empty() {
        return Err(PlanError::FileRegions {
            paths: paths.len(),
            regions: regions.len(),
        });
    }
    let writes = spec.writes();
    let mut planned = Vec::with_capacity(paths.len());
    for (path, r) in paths.iter().zip(regions) {
        let end = r
            .offset
            .checked_add(r.span)
            .ok_or(PlanError::RegionOverflow {
                offset: r.offset,
                span: r.span,
            })?;
        let p = plan_path(path, Some(end), writes, opts, "")?;
        if end > p.size {
            return Err(SpecError::BeyondTarget {
                offset: r.offset,
                span: r.span,
                end,
                what: path.display().to_string(),
                size: format_size(p.size),
            }
            .into());
        }
        if opts.direct {
            let mut values: Vec<(Field, u64)> = spec
                .block_size_values()
                .into_iter()
                .map(|b| (Field::Bs, b))
                .collect();
            values.extend([(Field::Align, spec.align), (Field::Offset, r.offset)]);
            check_direct_alignment(
                &values,
                p.info.dio_offset_align,
                &path.display().to_string(),
            )?;
        }
        planned.push(p);
    }
    check_free_space(&planned)?;
    let end = regions
        .iter()
        .map(|r| r.base + r.offset + r.span)
        .max()
        .unwrap_or(0);
    Ok(Plan {
        buf_align: planned
            .iter()
            .map(|p| p.info.dio_mem_align.max(512) as usize)
            .max()
            .unwrap_or(512),
        size: end,
        paths: planned,
        null_members: vec![],
        map: None,
        start: 0,
        span: end,
        writes,
        direct: opts.direct,
    })
}

fn plan_raid0(
    spec: &WorkloadSpec,
    members: &[Member],
    stripe: u64,
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    if members.len() < 2 {
        return Err(PlanError::TooFewMembers);
    }
    if stripe == 0 {
        return Err(PlanError::ZeroStripe);
    }
    let nulls: Vec<u64> = members
        .iter()
        .filter_map(|m| match m {
            Member::Null(s) => Some(*s),
            Member::Path(_) => None,
        })
        .collect();
    if !nulls.is_empty() && nulls.len() != members.len() {
        return Err(PlanError::MixedNullMembers);
    }
    let n = members.len() as u64;
    let mut paths: Vec<PlannedPath> = Vec::new();
    let (sizes, block, dio_align, mem_align) = if !nulls.is_empty() {
        (nulls.clone(), 512u64, 512u64, 4096u64)
    } else {
        // Each member gets an equal share of the region, rounded up to whole chunks.
        let needed = region_end(spec)?.map(|end| end.div_ceil(n).div_ceil(stripe) * stripe);
        let mut seen: Vec<(PathId, String)> = Vec::new();
        for m in members {
            let Member::Path(path) = m else {
                unreachable!("checked above: no null members here")
            };
            // Duplicates first: the same file twice is an error whatever else is wrong with it.
            if let Ok(id) = PathId::of(path) {
                if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
                    return Err(PlanError::DuplicateMember {
                        path: path.display().to_string(),
                        first: first.clone(),
                    });
                }
                seen.push((id, path.display().to_string()));
            }
        }
        for m in members {
            let Member::Path(path) = m else {
                unreachable!("checked above: no null members here")
            };
            paths.push(plan_path(
                path,
                needed,
                spec.writes(),
                opts,
                "RAID 0 member ",
            )?);
        }
        let first = &paths[0].info;
        if let Some(other) = paths
            .iter()
            .find(|p| p.info.logical_block_size != first.logical_block_size)
        {
            return Err(PlanError::BlockSizes {
                a: first.path.display().to_string(),
                a_size: first.logical_block_size,
                b: other.info.path.display().to_string(),
                b_size: other.info.logical_block_size,
            });
        }
        let block = first.logical_block_size.max(512);
        let dio = paths
            .iter()
            .map(|p| p.info.dio_offset_align.max(1))
            .max()
            .unwrap_or(512);
        let mem = paths
            .iter()
            .map(|p| p.info.dio_mem_align)
            .max()
            .unwrap_or(512)
            .max(512);
        (paths.iter().map(|p| p.size).collect(), block, dio, mem)
    };
    let map = StripeMap::new(&sizes, stripe, block).map_err(|e| PlanError::Stripe {
        stripe: format_size(stripe),
        why: e.to_string(),
    })?;
    let what = format!(
        "the RAID 0 array ({} members, {} stripe)",
        members.len(),
        format_size(stripe)
    );
    let (start, span) = spec.region_for(map.size(), &what)?;
    let direct = opts.direct && nulls.is_empty();
    if direct {
        let mut values: Vec<(Field, u64)> = spec
            .block_size_values()
            .into_iter()
            .map(|b| (Field::Bs, b))
            .collect();
        values.extend([
            (Field::Align, spec.align),
            (Field::Offset, start),
            (Field::Stripe, stripe),
        ]);
        check_direct_alignment(&values, dio_align, "the RAID 0 members")?;
    }
    check_free_space(&paths)?;
    Ok(Plan {
        size: map.size(),
        paths,
        null_members: nulls,
        map: Some(map),
        start,
        span,
        buf_align: mem_align as usize,
        writes: spec.writes(),
        direct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_workload::RwMode;

    /// fio's create_work_dirs: a new file's missing directories are made (0700) as it is laid
    /// out, given back (when empty) with the file when the run does not start, kept once it
    /// has; without `create_dirs` such a path is refused, nothing made.
    #[test]
    fn missing_directories_are_made_and_given_back() {
        use std::os::unix::fs::PermissionsExt as _;
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("a/b/f.img");
        let spec = WorkloadSpec {
            rw: RwMode::Write,
            read_pct: 0,
            random_pct: 0,
            span: Some(1 << 20),
            ..Default::default()
        };
        let target = RealTarget::Path(path.clone());
        let mut opts = PlanOptions {
            direct: false,
            allow_destroy: false,
            null_size: 0,
            create_dirs: false,
        };
        assert!(plan(&spec, &target, &opts).is_err());
        assert!(!d.path().join("a").exists());
        opts.create_dirs = true;
        let p = plan(&spec, &target, &opts).unwrap();
        assert!(!d.path().join("a").exists(), "planning makes nothing");
        let laid = p.lay_out(None, &|_| {}).unwrap();
        assert!(laid.wrote());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
        let mode = std::fs::metadata(d.path().join("a/b"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(laid);
        assert!(!d.path().join("a").exists(), "given back");
        // a directory that already exists on the way is left alone
        std::fs::create_dir(d.path().join("a")).unwrap();
        let laid = plan(&spec, &target, &opts)
            .unwrap()
            .lay_out(None, &|_| {})
            .unwrap();
        drop(laid);
        assert!(d.path().join("a").is_dir() && !d.path().join("a/b").exists());
        // kept once the run has started
        let laid = plan(&spec, &target, &opts)
            .unwrap()
            .lay_out(None, &|_| {})
            .unwrap();
        laid.commit();
        assert!(path.is_file());
        // a file kept at once is not held open: an unlink frees it (its last link and its
        // last descriptor gone), and it is not given back
        std::fs::remove_file(&path).unwrap();
        let mut laid = plan(&spec, &target, &opts)
            .unwrap()
            .lay_out(None, &|_| {})
            .unwrap();
        laid.keep(&[path.clone()].into_iter().collect());
        let fd_of = |p: &std::path::Path| {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
                .any(|l| l == p)
        };
        assert!(!fd_of(&path), "no descriptor of it is held");
        drop(laid);
        assert!(path.is_file(), "kept");
    }
}
