//! Recorded I/O patterns: fio's iolog (versions 2 and 3) and blktrace binary traces, read into a
//! [`Trace`] the engine replays, and fio's version 3 iolog written by [`IologLine`].
//!
//! The semantics are fio's (`iolog.c`, `blktrace.c`):
//!
//! - **iolog v2**: `fio version 2 iolog`, then `FILE add|open|close` and
//!   `FILE read|write|trim|sync|datasync|wait OFFSET LENGTH` lines. `wait` delays the next I/O
//!   by OFFSET microseconds (the documented meaning).
//! - **iolog v3**: `fio version 3 iolog`, every line prefixed by a timestamp in microseconds
//!   since the start of the recording; an I/O waits for the time between its timestamp and the
//!   previous line's (file actions included), measured from the previous issue. `wait` lines are
//!   ignored, as in fio.
//! - **blktrace**: the binary `blk_io_trace` records (either byte order); only queue events are
//!   replayed (reads, writes, discards as trims, flushes as syncs), timed by the gap between
//!   consecutive queue events, offsets in 512-byte sectors. The queue depth the trace reached
//!   (queue to complete, capped at 1024) is kept, fio's default `iodepth` for the replay.
//!
//! Options, applied while reading ([`ReplaySpec`]): `no_stall` (fio `replay_no_stall`: no gaps,
//! order kept), `time_scale` (percent of the recorded rate: 200 = twice as fast), `align`
//! (offsets aligned down; for blktrace also lengths up), `scale` (offsets divided), and `skip`
//! (kinds dropped; as in fio, a dropped entry's gap is dropped with it).
//!
//! Syncs are not replayed: a trace holding any is refused unless `skip` names `sync`. Malformed
//! lines are refused with their line number (fio skips them with a message).

use crate::gen::{Op, OpKind};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const IOLOG_V2: &str = "fio version 2 iolog";
const IOLOG_V3: &str = "fio version 3 iolog";
const BLK_IO_TRACE_MAGIC: u32 = 0x6561_7400;
const BLK_IO_TRACE_VERSION: u32 = 0x07;
const BLK_TRACE_LEN: usize = 48;
const BLK_TC_SHIFT: u32 = 16;
const BLK_TC_WRITE: u32 = 1 << 1;
const BLK_TC_FLUSH: u32 = 1 << 2;
const BLK_TC_NOTIFY: u32 = 1 << 10;
const BLK_TC_DISCARD: u32 = 1 << 13;
const BLK_TC_READ: u32 = 1 << 0;
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_COMPLETE: u32 = 8;
/// Longest line of a text iolog (fio reads 4096-byte lines).
const MAX_LINE: usize = 4096;

fn is_false(b: &bool) -> bool {
    !*b
}
fn hundred() -> u32 {
    100
}
fn is_hundred(v: &u32) -> bool {
    *v == 100
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Entry kinds a replay may drop (fio's `replay_skip`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skip {
    #[serde(default, skip_serializing_if = "is_false")]
    pub read: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub write: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub trim: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub sync: bool,
}

impl Skip {
    pub fn is_empty(&self) -> bool {
        *self == Skip::default()
    }

    /// Parses fio's comma list (`read,write,trim,sync`).
    pub fn parse(s: &str) -> Result<Skip, String> {
        let mut k = Skip::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "read" => k.read = true,
                "write" => k.write = true,
                "trim" => k.trim = true,
                "sync" => k.sync = true,
                other => {
                    return Err(format!(
                        "unknown skip type '{other}' (use read, write, trim, sync)"
                    ))
                }
            }
        }
        Ok(k)
    }

    fn skips(&self, kind: OpKind) -> bool {
        match kind {
            OpKind::Read => self.read,
            OpKind::Write => self.write,
            OpKind::Trim => self.trim,
        }
    }
}

/// What to replay and how (fio's `read_iolog` and `replay_*` options). Serialisable, so a stored
/// result says which trace it replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySpec {
    /// The trace file (iolog v2/v3 or blktrace binary; the format is detected).
    pub trace: PathBuf,
    /// Issue as fast as the queue depth allows, in the trace's order (fio `replay_no_stall`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_stall: bool,
    /// Percent of the recorded rate (fio `replay_time_scale`): 200 replays twice as fast.
    #[serde(default = "hundred", skip_serializing_if = "is_hundred")]
    pub time_scale: u32,
    /// Align offsets down to this power of two (fio `replay_align`); 0 = as recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub align: u64,
    /// Divide offsets by this (fio `replay_scale`); 0 or 1 = as recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scale: u64,
    /// Kinds of entries not replayed (fio `replay_skip`).
    #[serde(default, skip_serializing_if = "Skip::is_empty")]
    pub skip: Skip,
    /// Digest of the trace's bytes when the spec was made (a results store tells traces apart
    /// by it); not checked by the replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl ReplaySpec {
    /// Replays `trace` as recorded.
    pub fn new(trace: impl Into<PathBuf>) -> ReplaySpec {
        ReplaySpec {
            trace: trace.into(),
            no_stall: false,
            time_scale: 100,
            align: 0,
            scale: 0,
            skip: Skip::default(),
            digest: None,
        }
    }

    /// Checks the options themselves.
    pub fn validate(&self) -> Result<(), TraceError> {
        let bad = |why: String| TraceError::Option(why);
        if self.time_scale == 0 {
            return Err(bad("replay_time_scale must be greater than 0".into()));
        }
        if self.align != 0 && !self.align.is_power_of_two() {
            return Err(bad(format!(
                "replay_align={} must be a power of two",
                self.align
            )));
        }
        Ok(())
    }
}

/// The format a trace file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TraceFormat {
    IologV2,
    IologV3,
    Blktrace,
}

impl TraceFormat {
    pub fn as_str(&self) -> &'static str {
        match self {
            TraceFormat::IologV2 => "fio iolog v2",
            TraceFormat::IologV3 => "fio iolog v3",
            TraceFormat::Blktrace => "blktrace",
        }
    }
}

/// A file or device the trace addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceFile {
    /// A file named in an iolog.
    Named(String),
    /// A block device of a blktrace, by device number.
    Device { major: u32, minor: u32 },
}

impl std::fmt::Display for TraceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceFile::Named(n) => f.write_str(n),
            TraceFile::Device { major, minor } => write!(f, "device {major}:{minor}"),
        }
    }
}

/// One recorded I/O: issued `gap_ns` after the previous one of the trace was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOp {
    pub gap_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub kind: OpKind,
    /// Index into [`Trace::files`].
    pub file: u16,
}

/// A trace read into memory, options applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub format: TraceFormat,
    pub files: Vec<TraceFile>,
    pub ops: Vec<TraceOp>,
    /// Entries dropped by `skip` (syncs included).
    pub skipped: u64,
    /// `wait` lines of a v3 iolog, ignored as fio does.
    pub ignored_waits: u64,
    /// blktrace: zero-length queue events, ignored as fio does.
    pub ignored_empty: u64,
    /// blktrace: the deepest queue the trace reached (queue to complete, 1..=1024), fio's
    /// default `iodepth` for the replay.
    pub depth: Option<u32>,
}

/// Why a trace cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: cannot read the trace: {why}")]
    Read { path: String, why: String },
    #[error("{path}: not a trace ssdlab replays (fio iolog version 2 or 3, or a blktrace binary file; fio dropped iolog version 1 too)")]
    Format { path: String },
    #[error("{path} line {line}: {why}")]
    Line {
        path: String,
        line: usize,
        why: String,
    },
    #[error("{path}: blktrace record {record}: {why}")]
    Record {
        path: String,
        record: u64,
        why: String,
    },
    #[error("{path}: the trace has {syncs} sync/flush entries, which ssdlab does not issue; add replay_skip=sync to replay the rest")]
    Syncs { path: String, syncs: u64 },
    #[error("{path}: the trace has no I/O to replay{}", if *.skipped > 0 { format!(" ({} entries skipped)", .skipped) } else { String::new() })]
    Empty { path: String, skipped: u64 },
    #[error("{path}: {ops} I/Os take about {} MiB to hold, more than this process may take (ulimit -v, the cgroup's memory)", .bytes >> 20)]
    Memory { path: String, ops: u64, bytes: u64 },
    #[error("{path} {at}: the I/O comes {} days after the trace starts; ssdlab replays at most {} days (replay_time_scale or replay_no_stall=1 shorten it)", days_after(*.at_ns), MAX_TRACE_NS / 86_400_000_000_000)]
    TooLong {
        path: String,
        at: String,
        at_ns: u64,
    },
    #[error("{0}")]
    Option(String),
}

/// Whole days of `ns`; "more than …" where the time ran past what ns count (the clock's end).
fn days_after(ns: u64) -> String {
    let days = ns / 86_400_000_000_000;
    if ns == u64::MAX {
        format!("more than {days}")
    } else {
        days.to_string()
    }
}

/// Longest trace replayed, in (scaled) time from its first I/O: 30 days. Runs keep per-interval
/// samples and a simulated drive steps through its idle time, so a longer trace would not end
/// in any useful time (a timestamp of 2^64 µs would take years).
pub const MAX_TRACE_NS: u64 = 30 * 86_400_000_000_000;

/// Largest trace file read: 16 GiB.
pub const MAX_TRACE_BYTES: u64 = 16 << 30;

/// Room for `ops` trace entries, or the error naming what they would take.
fn reserve_ops(v: &mut Vec<TraceOp>, ops: usize, path: &str) -> Result<(), TraceError> {
    v.try_reserve_exact(ops).map_err(|_| TraceError::Memory {
        path: path.to_string(),
        ops: ops as u64,
        bytes: (ops * std::mem::size_of::<TraceOp>()) as u64,
    })
}

/// What a trace does, for checking it against a target and describing it as a workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceShape {
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    /// Largest op length.
    pub max_len: u64,
    /// The largest power of two dividing every offset and length (capped at 1 MiB).
    pub align: u64,
    /// Lowest offset and end of the highest op.
    pub start: u64,
    pub end: u64,
    /// Sum of the gaps: the recorded duration at the chosen scale.
    pub duration_ns: u64,
}

impl TraceShape {
    pub fn ops(&self) -> u64 {
        self.reads + self.writes + self.trims
    }

    /// Percent of reads, rounded; never 100 when anything writes (the write checks must see it)
    /// and never 0 when anything reads.
    pub fn read_pct(&self) -> u8 {
        let n = self.ops();
        if n == 0 {
            return 100;
        }
        let pct = ((self.reads * 100 + n / 2) / n) as u8;
        if self.reads < n {
            pct.min(99)
        } else if self.reads > 0 {
            pct.max(1)
        } else {
            pct
        }
    }
}

impl Trace {
    /// Reads the trace `spec` names (format detected), with its options applied.
    pub fn load(spec: &ReplaySpec) -> Result<Trace, TraceError> {
        spec.validate()?;
        let data = read_trace(&spec.trace)?;
        Self::parse(&data, &spec.trace, spec)
    }

    /// Reads a trace from its bytes (`path` names it in errors).
    pub fn parse(data: &[u8], path: &Path, spec: &ReplaySpec) -> Result<Trace, TraceError> {
        spec.validate()?;
        let p = path.display().to_string();
        let trace = if blktrace_order(data).is_some() {
            parse_blktrace(data, &p, spec)?
        } else {
            parse_iolog(data, &p, spec)?
        };
        if trace.ops.is_empty() {
            return Err(TraceError::Empty {
                path: p,
                skipped: trace.skipped,
            });
        }
        Ok(trace)
    }

    /// Counts, sizes, alignment and extent of the ops.
    pub fn shape(&self) -> TraceShape {
        let mut s = TraceShape {
            start: u64::MAX,
            align: 1 << 20,
            ..Default::default()
        };
        let mut bits: u64 = 0;
        for op in &self.ops {
            match op.kind {
                OpKind::Read => s.reads += 1,
                OpKind::Write => s.writes += 1,
                OpKind::Trim => s.trims += 1,
            }
            s.max_len = s.max_len.max(op.len as u64);
            bits |= op.offset | op.len as u64;
            s.start = s.start.min(op.offset);
            s.end = s.end.max(op.offset + op.len as u64);
            s.duration_ns = s.duration_ns.saturating_add(op.gap_ns);
        }
        if bits != 0 {
            s.align = s.align.min(1 << bits.trailing_zeros().min(63));
        }
        if self.ops.is_empty() {
            s.start = 0;
        }
        s
    }

    /// Bytes this trace takes in memory.
    pub fn memory(&self) -> u64 {
        (self.ops.len() * std::mem::size_of::<TraceOp>()) as u64
    }

    /// FNV-1a (64 bits) of a trace file's bytes, as hex: tells traces apart in stored results.
    pub fn digest_of(path: &Path) -> Result<String, TraceError> {
        let data = read_trace(path)?;
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &data {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Ok(format!("{h:016x}"))
    }
}

/// Lines in `data` (newlines, plus one for an unterminated last line).
fn line_count(data: &[u8]) -> usize {
    data.iter().filter(|&&b| b == b'\n').count() + 1
}

/// A trace file's bytes: a regular file of at most [`MAX_TRACE_BYTES`].
fn read_trace(path: &Path) -> Result<Vec<u8>, TraceError> {
    crate::input::read_input(path, MAX_TRACE_BYTES).map_err(|e| TraceError::Read {
        path: path.display().to_string(),
        why: e.to_string(),
    })
}

/// Scales a recorded gap (fio's `delay_since_ttime`).
fn scaled_gap(gap_ns: u64, spec: &ReplaySpec) -> u64 {
    if spec.no_stall {
        0
    } else if spec.time_scale == 100 {
        gap_ns
    } else {
        ((gap_ns as u128 * 100) / spec.time_scale as u128).min(u64::MAX as u128) as u64
    }
}

fn place(offset: u64, spec: &ReplaySpec) -> u64 {
    let mut o = offset;
    if spec.scale > 1 {
        o /= spec.scale;
    }
    if spec.align > 0 {
        o &= !(spec.align - 1);
    }
    o
}

fn parse_iolog(data: &[u8], path: &str, spec: &ReplaySpec) -> Result<Trace, TraceError> {
    let text = std::str::from_utf8(data).map_err(|_| TraceError::Format {
        path: path.to_string(),
    })?;
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    let format = if first.starts_with(IOLOG_V2) {
        TraceFormat::IologV2
    } else if first.starts_with(IOLOG_V3) {
        TraceFormat::IologV3
    } else {
        return Err(TraceError::Format {
            path: path.to_string(),
        });
    };
    let v3 = format == TraceFormat::IologV3;
    let mut t = Trace {
        format,
        files: Vec::new(),
        ops: Vec::new(),
        skipped: 0,
        ignored_waits: 0,
        ignored_empty: 0,
        depth: None,
    };
    let mut syncs = 0u64;
    // Gap carried to the next op: file actions' gaps add up into it (they are issued at once
    // after their own delay, moving fio's last-issue time).
    let mut carry: u64 = 0;
    let mut last_ts: Option<u64> = None;
    let mut elapsed: u64 = 0;
    // Every line may be an I/O: room for them all before the first (an iolog line is at least
    // a few bytes), so a trace too large for memory is refused, not aborted on.
    reserve_ops(&mut t.ops, line_count(data), path)?;
    for (i, raw) in lines.enumerate() {
        let line_no = i + 2;
        let err = |why: String| TraceError::Line {
            path: path.to_string(),
            line: line_no,
            why,
        };
        if raw.len() > MAX_LINE {
            return Err(err(format!(
                "line longer than {MAX_LINE} bytes (fio reads at most that)"
            )));
        }
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (ts, rest) = if v3 {
            let ts: u64 = fields[0]
                .parse()
                .map_err(|_| err(format!("'{}' is not a timestamp (microseconds)", fields[0])))?;
            (Some(ts), &fields[1..])
        } else {
            (None, &fields[..])
        };
        // v3: the gap is the time since the previous line's timestamp (the first line: none).
        let gap_ns = match (ts, last_ts) {
            (Some(t), Some(prev)) if t >= prev => (t - prev).saturating_mul(1000),
            _ => 0,
        };
        if ts.is_some() {
            last_ts = ts;
        }
        let gap_ns = scaled_gap(gap_ns, spec);
        elapsed = elapsed.saturating_add(gap_ns);
        if elapsed > MAX_TRACE_NS {
            return Err(TraceError::TooLong {
                path: path.to_string(),
                at: format!("line {line_no}"),
                at_ns: elapsed,
            });
        }
        match rest {
            [file, action] => {
                match *action {
                    "add" => {
                        if !t
                            .files
                            .iter()
                            .any(|f| f == &TraceFile::Named(file.to_string()))
                        {
                            if t.files.len() >= u16::MAX as usize {
                                return Err(err("more than 65535 files".into()));
                            }
                            t.files.push(TraceFile::Named(file.to_string()));
                        }
                    }
                    "open" | "close" => {
                        if !t
                            .files
                            .iter()
                            .any(|f| f == &TraceFile::Named(file.to_string()))
                        {
                            return Err(err(format!(
                                "'{action}' of file {file}, which was not added"
                            )));
                        }
                    }
                    other => {
                        return Err(err(format!(
                            "unknown file action '{other}' (add, open, close)"
                        )))
                    }
                }
                carry = carry.saturating_add(gap_ns);
            }
            [file, action, offset, len] => {
                let offset: u64 = offset
                    .parse()
                    .map_err(|_| err(format!("offset '{offset}' is not a number")))?;
                let len: u32 = len
                    .parse()
                    .map_err(|_| err(format!("length '{len}' is not a number below 2^32")))?;
                let kind = match *action {
                    "read" => Some(OpKind::Read),
                    "write" => Some(OpKind::Write),
                    "trim" => Some(OpKind::Trim),
                    "sync" | "datasync" => None,
                    "wait" if v3 => {
                        t.ignored_waits += 1;
                        continue;
                    }
                    "wait" => {
                        if !spec.no_stall {
                            // v2: wait OFFSET microseconds before the next I/O.
                            carry =
                                carry.saturating_add(scaled_gap(offset.saturating_mul(1000), spec));
                        }
                        continue;
                    }
                    other => {
                        return Err(err(format!(
                            "unknown action '{other}' (read, write, trim, sync, datasync, wait)"
                        )))
                    }
                };
                let Some(file_idx) = t
                    .files
                    .iter()
                    .position(|f| f == &TraceFile::Named(file.to_string()))
                else {
                    return Err(err(format!(
                        "I/O on file {file}, which was not added (a '{file} add' line comes first)"
                    )));
                };
                let Some(kind) = kind else {
                    if spec.skip.sync {
                        t.skipped += 1;
                    } else {
                        syncs += 1;
                    }
                    continue;
                };
                if spec.skip.skips(kind) {
                    t.skipped += 1;
                    continue;
                }
                if len == 0 {
                    return Err(err(format!("{action} of length 0")));
                }
                let offset = place(offset, spec);
                if offset.checked_add(len as u64).is_none() {
                    return Err(err("offset + length overflows".into()));
                }
                t.ops.push(TraceOp {
                    gap_ns: carry.saturating_add(gap_ns),
                    offset,
                    len,
                    kind,
                    file: file_idx as u16,
                });
                carry = 0;
            }
            _ => {
                let want = if v3 {
                    "TIMESTAMP FILE ACTION [OFFSET LENGTH]"
                } else {
                    "FILE ACTION [OFFSET LENGTH]"
                };
                return Err(err(format!("expected {want}, found '{line}'")));
            }
        }
    }
    if syncs > 0 {
        return Err(TraceError::Syncs {
            path: path.to_string(),
            syncs,
        });
    }
    Ok(t)
}

/// The byte order of a blktrace file (`Some(true)` = swapped), or `None` when it is not one.
/// True when the file at `path` starts as a blktrace binary trace (else it is read as a fio
/// iolog); false when it cannot be read (loading it then says why).
pub fn is_blktrace_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; BLK_TRACE_LEN];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| blktrace_order(&head).is_some())
}

fn blktrace_order(data: &[u8]) -> Option<bool> {
    if data.len() < BLK_TRACE_LEN {
        return None;
    }
    let m = u32::from_le_bytes(data[0..4].try_into().ok()?);
    if m & 0xffff_ff00 == BLK_IO_TRACE_MAGIC {
        return Some(false);
    }
    if m.swap_bytes() & 0xffff_ff00 == BLK_IO_TRACE_MAGIC {
        return Some(true);
    }
    None
}

/// One `struct blk_io_trace`.
#[derive(Debug, Clone, Copy)]
struct BlkRecord {
    magic: u32,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
    pdu_len: u16,
}

fn read_record(b: &[u8], swap: bool) -> BlkRecord {
    let u32_at = |o: usize| {
        let v = u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        if swap {
            v.swap_bytes()
        } else {
            v
        }
    };
    let u64_at = |o: usize| {
        let v = u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        if swap {
            v.swap_bytes()
        } else {
            v
        }
    };
    let pdu = u16::from_le_bytes(b[46..48].try_into().expect("2 bytes"));
    BlkRecord {
        magic: u32_at(0),
        time: u64_at(8),
        sector: u64_at(16),
        bytes: u32_at(24),
        action: u32_at(28),
        device: u32_at(36),
        pdu_len: if swap { pdu.swap_bytes() } else { pdu },
    }
}

/// Writes one blktrace record (little-endian), for tests and tools that make traces.
pub fn blktrace_record(
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
) -> [u8; BLK_TRACE_LEN] {
    let mut b = [0u8; BLK_TRACE_LEN];
    b[0..4].copy_from_slice(&(BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION).to_le_bytes());
    b[8..16].copy_from_slice(&time_ns.to_le_bytes());
    b[16..24].copy_from_slice(&sector.to_le_bytes());
    b[24..28].copy_from_slice(&bytes.to_le_bytes());
    b[28..32].copy_from_slice(&action.to_le_bytes());
    b[36..40].copy_from_slice(&device.to_le_bytes());
    b
}

/// blktrace action codes for [`blktrace_record`]: a queued read, write, discard or flush, and
/// their completions.
pub mod blk_action {
    use super::*;
    pub const QUEUE_READ: u32 = TA_QUEUE | (1 << 4 | BLK_TC_READ) << BLK_TC_SHIFT;
    pub const QUEUE_WRITE: u32 = TA_QUEUE | (1 << 4 | BLK_TC_WRITE) << BLK_TC_SHIFT;
    pub const QUEUE_DISCARD: u32 = TA_QUEUE | (1 << 4 | BLK_TC_DISCARD) << BLK_TC_SHIFT;
    pub const QUEUE_FLUSH: u32 = TA_QUEUE | (1 << 4 | BLK_TC_FLUSH | BLK_TC_WRITE) << BLK_TC_SHIFT;
    pub const COMPLETE_READ: u32 = TA_COMPLETE | (1 << 7 | BLK_TC_READ) << BLK_TC_SHIFT;
    pub const COMPLETE_WRITE: u32 = TA_COMPLETE | (1 << 7 | BLK_TC_WRITE) << BLK_TC_SHIFT;
    /// A device number as blktrace stores it (major << 20 | minor).
    pub fn device(major: u32, minor: u32) -> u32 {
        major << 20 | (minor & 0xf_ffff)
    }
}

fn parse_blktrace(data: &[u8], path: &str, spec: &ReplaySpec) -> Result<Trace, TraceError> {
    let swap = blktrace_order(data).unwrap_or(false);
    let mut t = Trace {
        format: TraceFormat::Blktrace,
        files: Vec::new(),
        ops: Vec::new(),
        skipped: 0,
        ignored_waits: 0,
        ignored_empty: 0,
        depth: None,
    };
    let mut syncs = 0u64;
    let mut last_time: Option<u64> = None;
    // Depth per direction (read, write, trim): now and the deepest seen.
    let mut this_depth = [0i64; 3];
    let mut depth = [0i64; 3];
    let mut pos = 0usize;
    let mut record = 0u64;
    let mut elapsed: u64 = 0;
    reserve_ops(&mut t.ops, data.len() / BLK_TRACE_LEN, path)?;
    let tc = |r: &BlkRecord, c: u32| r.action & (c << BLK_TC_SHIFT) != 0;
    let ddir = |r: &BlkRecord| -> Option<usize> {
        if tc(r, BLK_TC_READ) {
            Some(0)
        } else if tc(r, BLK_TC_WRITE) {
            Some(1)
        } else if tc(r, BLK_TC_DISCARD) {
            Some(2)
        } else {
            None
        }
    };
    while pos < data.len() {
        record += 1;
        let err = |why: String| TraceError::Record {
            path: path.to_string(),
            record,
            why,
        };
        if data.len() - pos < BLK_TRACE_LEN {
            // fio stops at a short read with a message; a truncated tail is refused here.
            return Err(err(format!(
                "the file ends inside a record ({} of {BLK_TRACE_LEN} bytes)",
                data.len() - pos
            )));
        }
        let r = read_record(&data[pos..pos + BLK_TRACE_LEN], swap);
        pos += BLK_TRACE_LEN;
        if r.magic & 0xffff_ff00 != BLK_IO_TRACE_MAGIC {
            return Err(err(format!("bad magic {:#x}", r.magic)));
        }
        if r.magic & 0xff != BLK_IO_TRACE_VERSION {
            return Err(err(format!(
                "blktrace version {} (fio and ssdlab read version {BLK_IO_TRACE_VERSION})",
                r.magic & 0xff
            )));
        }
        pos = pos.saturating_add(r.pdu_len as usize);
        if pos > data.len() {
            return Err(err("the file ends inside a record's payload".into()));
        }
        let act = r.action & 0xffff;
        if !tc(&r, BLK_TC_NOTIFY) {
            if let Some(d) = ddir(&r) {
                match act {
                    TA_QUEUE => this_depth[d] += 1,
                    TA_BACKMERGE | TA_FRONTMERGE => this_depth[d] -= 1,
                    TA_COMPLETE => {
                        depth[d] = depth[d].max(this_depth[d]);
                        this_depth[d] = 0;
                    }
                    _ => {}
                }
            }
        }
        if act != TA_QUEUE || tc(&r, BLK_TC_NOTIFY) {
            continue;
        }
        let gap_ns = match last_time {
            Some(prev) if r.time >= prev => r.time - prev,
            _ => 0,
        };
        last_time = Some(r.time);
        let gap_ns = scaled_gap(gap_ns, spec);
        elapsed = elapsed.saturating_add(gap_ns);
        if elapsed > MAX_TRACE_NS {
            return Err(TraceError::TooLong {
                path: path.to_string(),
                at: format!("record {record}"),
                at_ns: elapsed,
            });
        }
        let kind = if tc(&r, BLK_TC_DISCARD) {
            OpKind::Trim
        } else if tc(&r, BLK_TC_FLUSH) {
            if spec.skip.sync {
                t.skipped += 1;
            } else {
                syncs += 1;
            }
            continue;
        } else if tc(&r, BLK_TC_WRITE) {
            OpKind::Write
        } else {
            OpKind::Read
        };
        if spec.skip.skips(kind) {
            t.skipped += 1;
            continue;
        }
        let mut bytes = r.bytes as u64;
        if bytes == 0 {
            t.ignored_empty += 1;
            continue;
        }
        if spec.align > 0 {
            bytes = bytes.div_ceil(spec.align) * spec.align;
        }
        let len = u32::try_from(bytes).map_err(|_| err("length above 4 GiB".into()))?;
        let offset = place(
            r.sector
                .checked_mul(512)
                .ok_or_else(|| err("sector overflows".into()))?,
            spec,
        );
        if offset.checked_add(len as u64).is_none() {
            return Err(err("offset + length overflows".into()));
        }
        let (major, minor) = (r.device >> 20, r.device & 0xf_ffff);
        let dev = TraceFile::Device { major, minor };
        let file = match t.files.iter().position(|f| *f == dev) {
            Some(i) => i,
            None => {
                if t.files.len() >= u16::MAX as usize {
                    return Err(err("more than 65535 devices".into()));
                }
                t.files.push(dev);
                t.files.len() - 1
            }
        };
        t.ops.push(TraceOp {
            gap_ns,
            offset,
            len,
            kind,
            file: file as u16,
        });
    }
    if syncs > 0 {
        return Err(TraceError::Syncs {
            path: path.to_string(),
            syncs,
        });
    }
    let max = depth.iter().copied().max().unwrap_or(0).clamp(0, 1024) as u32;
    t.depth = Some(max.max(1));
    Ok(t)
}

/// Writes fio version 3 iolog lines (`write_iolog`): the header, file actions and I/Os, each
/// with a timestamp in microseconds since the start of the run.
#[derive(Debug, Default)]
pub struct IologLine;

impl IologLine {
    pub const HEADER: &'static str = "fio version 3 iolog\n";

    /// `TS FILE ACTION`.
    pub fn file_action(out: &mut String, t_us: u64, file: &str, action: &str) {
        let _ = writeln!(out, "{t_us} {file} {action}");
    }

    /// `TS FILE read|write|trim OFFSET LENGTH`.
    pub fn io(out: &mut String, t_us: u64, file: &str, op: &Op) {
        let _ = writeln!(
            out,
            "{t_us} {file} {} {} {}",
            op.kind.as_str(),
            op.offset,
            op.len
        );
    }

    /// The timestamp of a line written by [`IologLine`] (for merging several workers' logs).
    pub fn timestamp(line: &str) -> Option<u64> {
        line.split_ascii_whitespace().next()?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, spec: &ReplaySpec) -> Result<Trace, TraceError> {
        Trace::parse(text.as_bytes(), Path::new("t.log"), spec)
    }

    fn spec() -> ReplaySpec {
        ReplaySpec::new("t.log")
    }

    #[test]
    fn v3_gaps_are_timestamp_differences_in_microseconds() {
        let t = parse(
            "fio version 3 iolog\n31 /tmp/fx add\n157 /tmp/fx open\n165 /tmp/fx read 61440 4096\n\
             7793 /tmp/fx write 774144 8192\n10127 /tmp/fx trim 0 4096\n10200 /tmp/fx close\n",
            &spec(),
        )
        .unwrap();
        assert_eq!(t.format, TraceFormat::IologV3);
        assert_eq!(t.files, vec![TraceFile::Named("/tmp/fx".into())]);
        let gaps: Vec<u64> = t.ops.iter().map(|o| o.gap_ns).collect();
        // The first I/O carries the file actions' gaps (126 µs + 8 µs) since the first line.
        assert_eq!(gaps, vec![134_000, 7_628_000, 2_334_000]);
        let kinds: Vec<OpKind> = t.ops.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, vec![OpKind::Read, OpKind::Write, OpKind::Trim]);
        let s = t.shape();
        assert_eq!((s.reads, s.writes, s.trims), (1, 1, 1));
        assert_eq!(s.max_len, 8192);
        assert_eq!(s.align, 4096);
        assert_eq!(s.end, 774144 + 8192);
        assert_eq!(s.read_pct(), 33);
    }

    #[test]
    fn scale_no_stall_align_and_skip() {
        let text = "fio version 3 iolog\n0 f add\n100 f read 4097 512\n300 f write 10000 512\n";
        let mut s = spec();
        s.time_scale = 200;
        let t = parse(text, &s).unwrap();
        assert_eq!(t.ops[0].gap_ns, 50_000);
        assert_eq!(t.ops[1].gap_ns, 100_000);
        s.no_stall = true;
        s.align = 4096;
        let t = parse(text, &s).unwrap();
        assert!(t.ops.iter().all(|o| o.gap_ns == 0));
        assert_eq!(t.ops[0].offset, 4096);
        assert_eq!(t.ops[1].offset, 8192);
        let mut s = spec();
        s.skip = Skip::parse("write").unwrap();
        s.scale = 2;
        let t = parse(text, &s).unwrap();
        assert_eq!(t.ops.len(), 1);
        assert_eq!(t.ops[0].offset, 2048);
        assert_eq!(t.skipped, 1);
        s.skip.read = true;
        assert!(matches!(parse(text, &s), Err(TraceError::Empty { .. })));
        assert!(Skip::parse("reads").is_err());
        let mut s = spec();
        s.align = 3000;
        assert!(parse(text, &s).is_err());
    }

    #[test]
    fn v2_waits_and_syncs() {
        let text = "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 250 0\n\
                    f write 4096 4096\nf sync 0 0\nf close\n";
        let e = parse(text, &spec()).unwrap_err();
        assert!(matches!(e, TraceError::Syncs { syncs: 1, .. }), "{e}");
        assert!(e.to_string().contains("replay_skip=sync"));
        let mut s = spec();
        s.skip.sync = true;
        let t = parse(text, &s).unwrap();
        assert_eq!(t.format, TraceFormat::IologV2);
        assert_eq!(t.ops.len(), 2);
        assert_eq!(t.ops[1].gap_ns, 250_000);
        s.no_stall = true;
        assert_eq!(parse(text, &s).unwrap().ops[1].gap_ns, 0);
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, want) in [
            ("fio version 3 iolog\n0 f add\nx f read 0 1\n", "line 3"),
            ("fio version 3 iolog\n0 f read 0 512\n", "not added"),
            (
                "fio version 2 iolog\nf add\nf frobnicate 0 1\n",
                "unknown action",
            ),
            ("fio version 2 iolog\nf add\nf read zero 1\n", "offset"),
            ("fio version 2 iolog\nf add\nf read 0 1 2 3\n", "expected"),
            ("fio version 2 iolog\nf add\nf read 0 0\n", "length 0"),
            ("fio version 2 iolog\ng open\n", "not added"),
            // A timestamp the replay would wait years for (a 2^64 µs one never ended on --sim).
            (
                "fio version 3 iolog\n0 f add\n1 f read 0 512\n18446744073709551615 f read 0 512\n",
                "line 4: the I/O comes more than 213503 days after the trace starts; ssdlab replays at most 30 days",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f read 0 512\n2592000000001 f read 0 512\n",
                "line 4",
            ),
        ] {
            let e = parse(text, &spec()).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = parse("rw, 0, 512\n", &spec()).unwrap_err();
        assert!(matches!(e, TraceError::Format { .. }));
        assert!(matches!(
            parse("fio version 3 iolog\n", &spec()),
            Err(TraceError::Empty { .. })
        ));
        // v3 wait lines are ignored like fio does.
        let t = parse(
            "fio version 3 iolog\n0 f add\n5 f wait 100 0\n10 f read 0 512\n",
            &spec(),
        )
        .unwrap();
        assert_eq!(t.ignored_waits, 1);
        // Exactly 30 days is replayed; twice as fast, 60 days are too.
        let month = "fio version 3 iolog\n0 f add\n0 f read 0 512\n2592000000000 f read 0 512\n";
        assert_eq!(parse(month, &spec()).unwrap().ops.len(), 2);
        let two = "fio version 3 iolog\n0 f add\n0 f read 0 512\n5184000000000 f read 0 512\n";
        let mut fast = spec();
        fast.time_scale = 200;
        assert_eq!(parse(two, &fast).unwrap().ops.len(), 2);
        assert!(parse(two, &spec()).is_err());
    }

    fn blk(records: &[[u8; BLK_TRACE_LEN]]) -> Vec<u8> {
        records.concat()
    }

    #[test]
    fn blktrace_queue_events_depth_and_devices() {
        use blk_action::*;
        let dev = device(259, 1);
        let data = blk(&[
            blktrace_record(1_000, 8, 4096, QUEUE_READ, dev),
            blktrace_record(3_000, 16, 4096, QUEUE_READ, dev),
            blktrace_record(3_500, 8, 4096, COMPLETE_READ, dev),
            blktrace_record(6_000, 100, 8192, QUEUE_WRITE, dev),
            blktrace_record(7_000, 100, 8192, COMPLETE_WRITE, dev),
            blktrace_record(9_000, 200, 4096, QUEUE_DISCARD, device(8, 0)),
            blktrace_record(9_500, 0, 0, QUEUE_READ, dev),
        ]);
        let t = Trace::parse(&data, Path::new("t.bin"), &spec()).unwrap();
        assert_eq!(t.format, TraceFormat::Blktrace);
        assert_eq!(
            t.files,
            vec![
                TraceFile::Device {
                    major: 259,
                    minor: 1
                },
                TraceFile::Device { major: 8, minor: 0 }
            ]
        );
        let got: Vec<(u64, u64, OpKind, u16)> = t
            .ops
            .iter()
            .map(|o| (o.gap_ns, o.offset, o.kind, o.file))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 4096, OpKind::Read, 0),
                (2_000, 8192, OpKind::Read, 0),
                (3_000, 51200, OpKind::Write, 0),
                (3_000, 102400, OpKind::Trim, 1),
            ]
        );
        assert_eq!(t.depth, Some(2));
        assert_eq!(t.ignored_empty, 1);
        // Big-endian files read the same.
        let swapped: Vec<u8> = data
            .chunks(BLK_TRACE_LEN)
            .flat_map(|r| {
                let mut b = r.to_vec();
                for (a, n) in [
                    (0, 4),
                    (4, 4),
                    (8, 8),
                    (16, 8),
                    (24, 4),
                    (28, 4),
                    (32, 4),
                    (36, 4),
                    (40, 4),
                    (44, 2),
                    (46, 2),
                ] {
                    b[a..a + n].reverse();
                }
                b
            })
            .collect();
        let t2 = Trace::parse(&swapped, Path::new("t.bin"), &spec()).unwrap();
        assert_eq!(t2.ops, t.ops);
        // A flush is a sync.
        let data = blk(&[
            blktrace_record(0, 8, 4096, QUEUE_READ, dev),
            blktrace_record(10, 0, 0, QUEUE_FLUSH, dev),
        ]);
        let e = Trace::parse(&data, Path::new("t.bin"), &spec()).unwrap_err();
        assert!(matches!(e, TraceError::Syncs { syncs: 1, .. }), "{e}");
        // A truncated record is refused.
        let e = Trace::parse(&data[..60], Path::new("t.bin"), &spec()).unwrap_err();
        assert!(e.to_string().contains("record 2"), "{e}");
    }

    #[test]
    fn written_lines_read_back() {
        let mut s = String::from(IologLine::HEADER);
        IologLine::file_action(&mut s, 0, "/x", "add");
        IologLine::file_action(&mut s, 0, "/x", "open");
        let op = Op {
            kind: OpKind::Write,
            offset: 8192,
            len: 4096,
        };
        IologLine::io(&mut s, 12, "/x", &op);
        IologLine::io(
            &mut s,
            40,
            "/x",
            &Op {
                kind: OpKind::Read,
                ..op
            },
        );
        IologLine::file_action(&mut s, 50, "/x", "close");
        let t = parse(&s, &spec()).unwrap();
        assert_eq!(t.ops.len(), 2);
        assert_eq!(t.ops[0].gap_ns, 12_000);
        assert_eq!(t.ops[1].gap_ns, 28_000);
        assert_eq!(IologLine::timestamp("40 /x read 8192 4096"), Some(40));
    }
}
