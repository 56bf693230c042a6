//! The SQLite results store: every sweep point and every stored single run, with its full spec and
//! result, so a sweep can be resumed and reports regenerated later. The schema is documented in
//! `docs/STORE.md`; any change to it bumps [`SCHEMA_VERSION`].
//!
//! Identification: the SQLite header's `application_id` is [`APPLICATION_ID`] (`"SSDL"`), its
//! `user_version` is the schema version, and the `meta` table repeats both in words. A file that is
//! not SQLite, or SQLite without our application id, is refused; so is a store of another schema
//! version (never silently misread).
//!
//! Safety under concurrency and faults (details in `docs/STORE.md`):
//! * a new store is built in a temporary file beside the target and published with a hard link
//!   (or a no-replace rename), so a store file is either absent or complete, and two processes
//!   creating the same store at once both end up with the one that was published first;
//! * every connection waits up to [`BUSY_TIMEOUT`] for a lock, and every write transaction takes
//!   the write lock when it begins (`BEGIN IMMEDIATE`), so concurrent writers queue up;
//! * a store that cannot be written (read-only file system, immutable file, no permission) opens
//!   read-only, and the methods that would write only do so when something actually changes;
//! * opening checks the file's size against its header, runs `PRAGMA quick_check` and checks
//!   every stored value's type, text encoding and JSON, so a damaged store is refused
//!   ([`StoreError::Corrupt`]) instead of being reported from;
//! * a full disk or an I/O error is [`StoreError::Io`] ([`StoreError::is_io_failure`]), distinct
//!   from bad input; the transaction that hit it is rolled back.

use rusqlite::types::ValueRef;
use rusqlite::{
    params, Connection, DatabaseName, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior,
};
use serde::{Deserialize, Serialize};
use ssdlab_stats::RunResult;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// `PRAGMA application_id` of every ssdlab store: the ASCII bytes "SSDL".
pub const APPLICATION_ID: i32 = 0x5353_444C;
/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i32 = 1;
/// How long a connection waits for a lock held by another connection or process before it gives
/// up with "database is locked".
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why a store could not be opened or used.
///
/// Every message is complete on its own and names the file: the cause (SQLite's, the JSON
/// parser's or the file system's message) is part of the message and deliberately not exposed as
/// [`std::error::Error::source`], so printing the error with its source chain (`anyhow`'s `{:#}`)
/// never repeats text.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("{path} is not an ssdlab results store ({why})")]
    NotAStore { path: String, why: String },
    #[error(
        "{path} was written by schema version {found}, this ssdlab reads version {expected}; \
         re-run the sweep into a new file"
    )]
    Version {
        path: String,
        found: i32,
        expected: i32,
    },
    #[error("{path} does not exist")]
    Missing { path: String },
    /// A problem with the path or the request (directory missing, permission denied, a point that
    /// belongs to another sweep…): bad input, nothing was written.
    #[error("{path}: {why}")]
    Path { path: String, why: String },
    /// The file system or the device failed: disk full (`SQLITE_FULL`, `ENOSPC`, `EDQUOT`), an I/O
    /// error (`SQLITE_IOERR*`, `EIO`), or the store file exists but cannot be opened
    /// (`SQLITE_CANTOPEN`). The transaction that hit it was rolled back; once the cause is fixed, a
    /// later run resumes. See [`StoreError::is_io_failure`].
    #[error("results store {path}: I/O failure: {why}")]
    Io { path: String, why: String },
    /// The file is an ssdlab store but it is damaged (truncated, overwritten, inconsistent); it is
    /// not read.
    #[error(
        "{path} is damaged and was not read ({why}); restore it from a copy or re-run the sweep \
         into a new file"
    )]
    Corrupt { path: String, why: String },
    /// The store cannot be written (read-only file system, immutable file, no write permission)
    /// and something needs writing; nothing was written.
    #[error(
        "{path} is read-only (read-only file system, immutable file or no write permission), \
         but {need}"
    )]
    ReadOnly { path: String, need: String },
    /// Any other SQLite error.
    #[error("results store {path}: {err}")]
    Sqlite { path: String, err: rusqlite::Error },
    #[error("results store {path}: stored JSON cannot be read: {err}")]
    Json {
        path: String,
        err: serde_json::Error,
    },
    #[error("results store {path}: no point with key {key}")]
    UnknownPoint { path: String, key: String },
}

impl StoreError {
    /// True when the error is a failure of the file system or the device (disk full, quota, I/O
    /// error, an existing store that cannot be opened) rather than bad input: the CLI reports it
    /// with exit code 1. The store stays consistent; a later run resumes.
    pub fn is_io_failure(&self) -> bool {
        matches!(self, StoreError::Io { .. })
    }
}

/// Status of a sweep point in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointStatus {
    /// Not run yet (or interrupted before it finished).
    Pending,
    /// Finished: a row in `results` exists.
    Done,
    /// The last attempt failed; retried on the next run of the sweep.
    Failed,
    /// No longer produced by the current sweep file (kept, but ignored by reports).
    Stale,
}

impl PointStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            PointStatus::Pending => "pending",
            PointStatus::Done => "done",
            PointStatus::Failed => "failed",
            PointStatus::Stale => "stale",
        }
    }

    fn parse(s: &str) -> PointStatus {
        match s {
            "done" => PointStatus::Done,
            "failed" => PointStatus::Failed,
            "stale" => PointStatus::Stale,
            _ => PointStatus::Pending,
        }
    }
}

/// One sweep point as stored in `points` (what it is, not how it went).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    /// Stable hash of the point (the resume key).
    pub key: String,
    /// Position in the expanded sweep (report order).
    pub seq: i64,
    pub target_label: String,
    /// The target as JSON (the sweep crate's `PointTarget`).
    pub target_json: String,
    /// True when this point belongs to a baseline target.
    pub baseline: bool,
    /// Label of the baseline target this point is compared with (None for baselines and when the
    /// sweep has no baseline).
    pub baseline_label: Option<String>,
    pub workload_name: String,
    /// The full `WorkloadSpec` as JSON.
    pub workload_json: String,
    pub qd: u32,
    /// Stripe (chunk) size in bytes; None for single-drive targets.
    pub stripe: Option<u64>,
    pub drives: u32,
    /// Repeat index, 0-based.
    pub repeat: u32,
}

/// The headline numbers of one finished point (the full result is in `result_json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSummary {
    pub finished_ms: i64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    /// Megabytes (10^6) per second, all op kinds.
    pub mb_s: f64,
    pub lat_mean_ns: f64,
    /// 99th percentile of total latency (worst op kind), ns; 0 when unknown.
    pub lat_p99_ns: f64,
}

impl ResultSummary {
    /// The headline numbers of a result.
    pub fn of(r: &RunResult, finished_ms: i64) -> ResultSummary {
        ResultSummary {
            finished_ms,
            iops: r.total_iops(),
            read_iops: r.read.iops,
            write_iops: r.write.iops,
            mb_s: r.total_bw_bytes() / 1e6,
            lat_mean_ns: r.mean_lat_ns(),
            lat_p99_ns: p99_ns(r),
        }
    }
}

/// The 99th percentile of total latency, worst over the op kinds that ran (completion latency when
/// total latency has no percentiles).
pub fn p99_ns(r: &RunResult) -> f64 {
    [&r.read, &r.write, &r.trim]
        .iter()
        .filter(|o| o.ios > 0 || o.lat.n > 0)
        .filter_map(|o| o.lat.percentile(99.0).or_else(|| o.clat.percentile(99.0)))
        .max()
        .unwrap_or(0) as f64
}

/// A point with its status and, when finished, its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPoint {
    pub record: PointRecord,
    pub status: PointStatus,
    /// Error of the last failed attempt.
    pub error: Option<String>,
    pub result: Option<ResultSummary>,
}

/// A row of `sweeps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub id: i64,
    pub name: String,
    /// The sweep file as last run.
    pub spec_toml: String,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// A row of `runs` (single `ssdlab run --store` results), without the full JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub label: String,
    pub target_kind: String,
    pub target_name: String,
    pub workload: String,
    pub summary: ResultSummary,
}

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

const SCHEMA_V1: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE sweeps (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    spec_toml   TEXT NOT NULL,
    created_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL
);
CREATE TABLE points (
    sweep_id        INTEGER NOT NULL REFERENCES sweeps(id),
    point_key       TEXT NOT NULL UNIQUE,
    seq             INTEGER NOT NULL,
    target_label    TEXT NOT NULL,
    target_json     TEXT NOT NULL,
    baseline        INTEGER NOT NULL,
    baseline_label  TEXT,
    workload_name   TEXT NOT NULL,
    workload_json   TEXT NOT NULL,
    qd              INTEGER NOT NULL,
    stripe          INTEGER,
    drives          INTEGER NOT NULL,
    repeat          INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending','done','failed','stale')),
    error           TEXT
);
CREATE INDEX points_by_sweep ON points(sweep_id, seq);
CREATE TABLE results (
    point_key    TEXT PRIMARY KEY REFERENCES points(point_key),
    finished_ms  INTEGER NOT NULL,
    iops         REAL NOT NULL,
    read_iops    REAL NOT NULL,
    write_iops   REAL NOT NULL,
    mb_s         REAL NOT NULL,
    lat_mean_ns  REAL NOT NULL,
    lat_p99_ns   REAL NOT NULL,
    result_json  TEXT NOT NULL
);
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    label        TEXT NOT NULL,
    target_kind  TEXT NOT NULL,
    target_name  TEXT NOT NULL,
    workload     TEXT NOT NULL,
    finished_ms  INTEGER NOT NULL,
    iops         REAL NOT NULL,
    read_iops    REAL NOT NULL,
    write_iops   REAL NOT NULL,
    mb_s         REAL NOT NULL,
    lat_mean_ns  REAL NOT NULL,
    lat_p99_ns   REAL NOT NULL,
    result_json  TEXT NOT NULL
);
";

/// True when `path` is a file that begins like an SQLite database (a results store, or a file to
/// be refused as one by [`Store::open_existing`]); false for anything else, such as a TOML file.
/// Only a regular file is opened, and without blocking: a FIFO (which would wait for a writer
/// forever) or a device is not a store.
pub fn looks_like_sqlite(path: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 16];
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .and_then(|f| {
            let is_file = f.metadata()?.is_file();
            (&f).read_exact(&mut head)?;
            Ok(is_file)
        })
        .is_ok_and(|is_file| is_file && &head == SQLITE_MAGIC)
}

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The store cannot be written (opened read-only, or the file could only be opened that way).
    read_only: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("read_only", &self.read_only)
            .finish()
    }
}

/// The type a stored column must have (checked on open).
#[derive(Clone, Copy)]
enum Col {
    Int,
    OptInt,
    Num,
    Text,
    OptText,
    Json,
}

/// Every column of every table, with its type: the content check made on open.
const COLUMNS: &[(&str, &[(&str, Col)])] = &[
    ("meta", &[("key", Col::Text), ("value", Col::Text)]),
    (
        "sweeps",
        &[
            ("id", Col::Int),
            ("name", Col::Text),
            ("spec_toml", Col::Text),
            ("created_ms", Col::Int),
            ("updated_ms", Col::Int),
        ],
    ),
    (
        "points",
        &[
            ("sweep_id", Col::Int),
            ("point_key", Col::Text),
            ("seq", Col::Int),
            ("target_label", Col::Text),
            ("target_json", Col::Json),
            ("baseline", Col::Int),
            ("baseline_label", Col::OptText),
            ("workload_name", Col::Text),
            ("workload_json", Col::Json),
            ("qd", Col::Int),
            ("stripe", Col::OptInt),
            ("drives", Col::Int),
            ("repeat", Col::Int),
            ("status", Col::Text),
            ("error", Col::OptText),
        ],
    ),
    (
        "results",
        &[
            ("point_key", Col::Text),
            ("finished_ms", Col::Int),
            ("iops", Col::Num),
            ("read_iops", Col::Num),
            ("write_iops", Col::Num),
            ("mb_s", Col::Num),
            ("lat_mean_ns", Col::Num),
            ("lat_p99_ns", Col::Num),
            ("result_json", Col::Json),
        ],
    ),
    (
        "runs",
        &[
            ("id", Col::Int),
            ("label", Col::Text),
            ("target_kind", Col::Text),
            ("target_name", Col::Text),
            ("workload", Col::Text),
            ("finished_ms", Col::Int),
            ("iops", Col::Num),
            ("read_iops", Col::Num),
            ("write_iops", Col::Num),
            ("mb_s", Col::Num),
            ("lat_mean_ns", Col::Num),
            ("lat_p99_ns", Col::Num),
            ("result_json", Col::Json),
        ],
    ),
];

/// What is wrong with one stored value, if anything.
fn check_value(v: ValueRef<'_>, col: Col) -> Option<&'static str> {
    let text = |b: &[u8]| {
        std::str::from_utf8(b)
            .is_err()
            .then_some("is not valid UTF-8 text")
    };
    match (col, v) {
        (Col::Int | Col::OptInt, ValueRef::Integer(_)) => None,
        (Col::OptInt | Col::OptText, ValueRef::Null) => None,
        (Col::Num, ValueRef::Integer(_)) => None,
        (Col::Num, ValueRef::Real(x)) if x.is_finite() => None,
        (Col::Num, ValueRef::Real(_)) => Some("is not a finite number"),
        (Col::Text | Col::OptText, ValueRef::Text(b)) => text(b),
        (Col::Json, ValueRef::Text(b)) => text(b).or_else(|| {
            serde_json::from_slice::<serde::de::IgnoredAny>(b)
                .is_err()
                .then_some("is not valid JSON")
        }),
        (Col::Int | Col::OptInt, _) => Some("is not an integer"),
        (Col::Num, _) => Some("is not a number"),
        (Col::Text | Col::OptText | Col::Json, _) => Some("is not text"),
    }
}

/// A temporary file beside a store being created; removed (with any journal SQLite left beside
/// it) when dropped, whatever happened.
struct TempStore {
    path: PathBuf,
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl TempStore {
    /// Creates `.NAME.ssdlab-tmp-PID-N` in `dir` (never anywhere else), with `O_EXCL`.
    fn create(target: &Path, dir: &Path, name: &OsStr) -> Result<TempStore, StoreError> {
        // Keep the temporary name within NAME_MAX however long the store's name is.
        let name: String = name.to_string_lossy().chars().take(120).collect();
        loop {
            let n = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".{name}.ssdlab-tmp-{}-{n}", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(TempStore { path }),
                // Left by a process with the same id (another PID namespace): take the next name.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1_000_000 => {}
                Err(e) => return Err(io_err(target, "cannot create", e)),
            }
        }
    }
}

impl Drop for TempStore {
    fn drop(&mut self) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Gives the complete store `tmp` the name `target` without ever replacing an existing file.
/// Returns false when `target` already exists (another process published its store first).
fn publish(tmp: &Path, target: &Path) -> Result<bool, StoreError> {
    publish_with(tmp, target, |a, b| std::fs::hard_link(a, b))
}

/// [`publish`] with the hard link made by `link` (tests fake a file system without links).
fn publish_with(
    tmp: &Path,
    target: &Path,
    link: impl FnOnce(&Path, &Path) -> std::io::Result<()>,
) -> Result<bool, StoreError> {
    let link_err = match link(tmp, target) {
        Ok(()) => return Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => e,
    };
    // No hard links here (FAT, some FUSE file systems): an atomic rename that never replaces.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        match renameat_with(CWD, tmp, CWD, target, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(true),
            Err(Errno::EXIST) => return Ok(false),
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {}
            // The rename is supported but failed: its error says why (no space, no permission…).
            Err(e) => return Err(io_err(target, "cannot create", e.into())),
        }
    }
    Err(io_err(
        target,
        "cannot create (the file system supports neither hard links nor no-replace renames)",
        link_err,
    ))
}

impl Store {
    /// Opens a store for writing; a missing file (and only a missing file) is created with the
    /// current schema. Anything that is not a regular file is refused. A store that cannot be
    /// opened for writing (read-only file system, immutable file, no write permission) is opened
    /// read-only ([`Store::is_read_only`]): reading works, and the writing methods succeed as long
    /// as nothing actually needs writing.
    ///
    /// Safe against other processes doing the same at the same time: the store is built in a
    /// temporary file beside `path` and published atomically, so every opener sees either no file
    /// or a complete store.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        match std::fs::metadata(path) {
            Ok(_) => Self::open_mode(path, false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(path),
            Err(e) => Err(io_err(path, "cannot read", e)),
        }
    }

    /// Opens an existing store (never creates one); `read_only` for reports.
    pub fn open_existing(path: &Path, read_only: bool) -> Result<Store, StoreError> {
        match std::fs::metadata(path) {
            Ok(_) => Self::open_mode(path, read_only),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::Missing {
                path: path.display().to_string(),
            }),
            Err(e) => Err(io_err(path, "cannot read", e)),
        }
    }

    /// A fresh store in memory (tests).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| sql_err(&path, e))?;
        let mut s = Store {
            conn,
            path,
            read_only: false,
        };
        s.init_schema()?;
        Ok(s)
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the store cannot be written: opened read-only, or on a read-only file system, or
    /// the file is immutable or not writable by this user.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// `Err(StoreError::ReadOnly)` naming `need` (what would have to be written) when the store
    /// cannot be written.
    pub fn require_writable(&self, need: &str) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                path: self.path.display().to_string(),
                need: need.to_string(),
            });
        }
        Ok(())
    }

    fn create(path: &Path) -> Result<Store, StoreError> {
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(path_err(
                path,
                format!("directory {} does not exist", parent.display()),
            ));
        }
        let Some(name) = path.file_name() else {
            return Err(path_err(path, "not a file name".into()));
        };
        let tmp = TempStore::create(path, parent, name)?;
        {
            let conn = Connection::open_with_flags(
                &tmp.path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| sql_err(path, e))?;
            let mut s = Store {
                conn,
                path: path.to_path_buf(),
                read_only: false,
            };
            s.configure()?;
            // Nobody else sees the temporary file, and it is thrown away on any error: no
            // journal, no syncs while building it, one sync before it is published.
            s.conn
                .execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
                .map_err(|e| sql_err(path, e))?;
            s.init_schema()?;
            s.conn.close().map_err(|(_, e)| sql_err(path, e))?;
            std::fs::File::open(&tmp.path)
                .and_then(|f| f.sync_all())
                .map_err(|e| io_err(path, "cannot create", e))?;
        }
        if publish(&tmp.path, path)? {
            drop(tmp);
            // Make the new name durable (best effort: not every file system syncs directories).
            if let Ok(d) = std::fs::File::open(parent) {
                let _ = d.sync_all();
            }
        } else {
            // Another process created the store first: use theirs.
            drop(tmp);
        }
        Self::open_mode(path, false)
    }

    fn open_mode(path: &Path, read_only: bool) -> Result<Store, StoreError> {
        let not_store = |why: &str| StoreError::NotAStore {
            path: path.display().to_string(),
            why: why.to_string(),
        };
        let meta = std::fs::metadata(path).map_err(|e| io_err(path, "cannot read", e))?;
        if !meta.is_file() {
            return Err(not_store("not a regular file"));
        }
        if meta.len() == 0 {
            return Err(not_store("the file is empty"));
        }
        let mut head = [0u8; 16];
        {
            use std::io::Read;
            let mut f = std::fs::File::open(path).map_err(|e| io_err(path, "cannot open", e))?;
            let n = f
                .read(&mut head)
                .map_err(|e| io_err(path, "cannot read", e))?;
            if n < 16 || &head != SQLITE_MAGIC {
                return Err(not_store("not an SQLite database"));
            }
        }
        // Read-write when possible; SQLite itself falls back to read-only when the file cannot be
        // opened for writing (EROFS, EPERM, EACCES).
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
        let mut s = Store {
            conn,
            path: path.to_path_buf(),
            read_only,
        };
        s.configure()?;
        if !read_only {
            s.read_only = s
                .conn
                .is_readonly(DatabaseName::Main)
                .map_err(|e| s.sql(e))?;
        }
        s.check()?;
        Ok(s)
    }

    /// Errors while identifying and checking a store on open.
    fn open_err(&self, e: rusqlite::Error) -> StoreError {
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => StoreError::NotAStore {
                path: self.path.display().to_string(),
                why: "not an SQLite database".into(),
            },
            _ => self.sql(e),
        }
    }

    fn corrupt(&self, why: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.display().to_string(),
            why: one_line(&why),
        }
    }

    /// Identifies the store and checks its integrity, in one read transaction (so that no writer
    /// commits in between).
    fn check(&self) -> Result<(), StoreError> {
        let path = self.path.as_path();
        let not_store = |why: &str| StoreError::NotAStore {
            path: path.display().to_string(),
            why: why.to_string(),
        };
        let tx = self.conn.unchecked_transaction().map_err(|e| self.sql(e))?;
        let pragma = |name: &str| -> Result<i64, StoreError> {
            tx.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
                .map_err(|e| self.open_err(e))
        };
        let app = pragma("application_id")?;
        if app != i64::from(APPLICATION_ID) {
            return Err(not_store(&format!(
                "SQLite application id {app:#x}, ssdlab stores have {APPLICATION_ID:#x}"
            )));
        }
        let version = pragma("user_version")?;
        if version != i64::from(SCHEMA_VERSION) {
            return Err(StoreError::Version {
                path: path.display().to_string(),
                found: version as i32,
                expected: SCHEMA_VERSION,
            });
        }
        // A file shorter than its header says has lost data (SQLite would read zeros there).
        let (page_size, page_count) = (pragma("page_size")?, pragma("page_count")?);
        let len = std::fs::metadata(path)
            .map_err(|e| io_err(path, "cannot read", e))?
            .len();
        let declared = page_size.saturating_mul(page_count);
        if (len as i64) < declared {
            return Err(self.corrupt(format!(
                "the file is truncated: {len} bytes, its header declares {page_count} pages of \
                 {page_size} bytes"
            )));
        }
        // The meta table must agree with the header.
        let meta_version: Option<String> = tx
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| match e.sqlite_error_code() {
                Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => self.sql(e),
                _ => not_store(&format!("meta table unreadable: {e}")),
            })?;
        match meta_version.as_deref().map(str::parse::<i32>) {
            Some(Ok(v)) if v == SCHEMA_VERSION => {}
            Some(Ok(v)) => {
                return Err(StoreError::Version {
                    path: path.display().to_string(),
                    found: v,
                    expected: SCHEMA_VERSION,
                })
            }
            _ => return Err(not_store("meta.schema_version is missing")),
        }
        // The b-trees, free list and constraints.
        let problems: Vec<String> = {
            let mut q = tx
                .prepare("PRAGMA quick_check(3)")
                .map_err(|e| self.sql(e))?;
            let rows = q.query_map([], |r| r.get(0)).map_err(|e| self.sql(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))?
        };
        if problems != ["ok"] {
            return Err(self.corrupt(format!("integrity check: {}", problems.join("; "))));
        }
        self.check_contents(&tx)?;
        tx.commit().map_err(|e| self.sql(e))
    }

    /// Every stored value has its column's type, text is UTF-8, JSON parses, and the tables refer
    /// to each other consistently. SQLite keeps no checksums, so this is what catches most damage
    /// inside stored values (it cannot catch a changed digit that leaves everything well-formed).
    fn check_contents(&self, tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
        // A table or column that is missing is damage too (SQLITE_ERROR "no such table").
        let content = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(ErrorCode::Unknown) => self.corrupt(format!("unexpected tables: {e}")),
            _ => self.sql(e),
        };
        for (table, cols) in COLUMNS {
            let names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
            let mut q = tx
                .prepare(&format!("SELECT rowid, {} FROM {table}", names.join(", ")))
                .map_err(content)?;
            let mut rows = q.query([]).map_err(content)?;
            while let Some(r) = rows.next().map_err(content)? {
                for (i, (name, col)) in cols.iter().enumerate() {
                    let v = r.get_ref(i + 1).map_err(content)?;
                    if let Some(problem) = check_value(v, *col) {
                        let rowid: i64 = r.get(0).map_err(content)?;
                        return Err(
                            self.corrupt(format!("{table}.{name} of row {rowid} {problem}"))
                        );
                    }
                }
            }
        }
        let consistency = [
            (
                "SELECT point_key FROM points WHERE status NOT IN ('pending','done','failed','stale')",
                "has an unknown status",
            ),
            (
                "SELECT point_key FROM points p WHERE status = 'done'
                   AND NOT EXISTS (SELECT 1 FROM results r WHERE r.point_key = p.point_key)",
                "is done but has no result",
            ),
            (
                "SELECT point_key FROM results r
                   WHERE NOT EXISTS (SELECT 1 FROM points p WHERE p.point_key = r.point_key)",
                "has a result but no point",
            ),
            (
                "SELECT point_key FROM points p
                   WHERE NOT EXISTS (SELECT 1 FROM sweeps s WHERE s.id = p.sweep_id)",
                "belongs to no sweep",
            ),
        ];
        for (sql, problem) in consistency {
            let bad: Option<String> = tx
                .query_row(&format!("{sql} LIMIT 1"), [], |r| r.get(0))
                .optional()
                .map_err(content)?;
            if let Some(key) = bad {
                return Err(self.corrupt(format!("point {key} {problem}")));
            }
        }
        Ok(())
    }

    fn configure(&self) -> Result<(), StoreError> {
        self.conn
            .busy_handler(Some(wait_for_lock))
            .map_err(|e| self.sql(e))?;
        // SQLite's own temporary tables and sort files stay in memory: nothing is written
        // anywhere but beside the store.
        self.conn
            .execute_batch("PRAGMA temp_store = MEMORY;")
            .map_err(|e| self.sql(e))
    }

    fn init_schema(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        tx.execute_batch(SCHEMA_V1).map_err(|e| sql_err(&path, e))?;
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
        ))
        .map_err(|e| sql_err(&path, e))?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?1), ('created_by', ?2), ('created_ms', ?3)",
            params![
                SCHEMA_VERSION.to_string(),
                format!("ssdlab {}", env!("CARGO_PKG_VERSION")),
                now_ms().to_string()
            ],
        )
        .map_err(|e| sql_err(&path, e))?;
        tx.commit().map_err(|e| sql_err(&path, e))
    }

    fn sql(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.path, e)
    }

    /// A write transaction that holds the write lock from its start (`BEGIN IMMEDIATE`): waits
    /// for other writers instead of failing half-way with "database is locked".
    fn write_tx(&mut self) -> Result<rusqlite::Transaction<'_>, StoreError> {
        let path = self.path.clone();
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))
    }

    /// A value from the `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Sets a value in the `meta` table (replacing the key's old value).
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.require_writable("set a meta value")?;
        let path = self.path.clone();
        let tx = self.write_tx()?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )
        .map_err(|e| sql_err(&path, e))?;
        tx.commit().map_err(|e| sql_err(&path, e))
    }

    /// Records that sweep `name` is being run with `spec_toml`; returns its id (the same id when
    /// the sweep is already in the store). Writes nothing when the sweep is stored with the same
    /// text; safe when another process does the same at once (an upsert).
    pub fn begin_sweep(&mut self, name: &str, spec_toml: &str) -> Result<i64, StoreError> {
        let stored: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT id, spec_toml FROM sweeps WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        match &stored {
            Some((id, spec)) if spec == spec_toml => return Ok(*id),
            Some(_) => self.require_writable(&format!(
                "the sweep file of '{name}' changed and must be stored"
            ))?,
            None => self.require_writable(&format!("sweep '{name}' is not in it yet"))?,
        }
        let now = now_ms();
        self.conn
            .query_row(
                "INSERT INTO sweeps(name, spec_toml, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT(name) DO UPDATE SET spec_toml = excluded.spec_toml, updated_ms = excluded.updated_ms
                 RETURNING id",
                params![name, spec_toml, now],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))
    }

    /// Makes the store's points of sweep `sweep_id` match `points` (one transaction): new points
    /// are added as pending, known ones keep their results (status done when a result exists) or
    /// their failure, points of this sweep that are no longer listed become stale. Returns the
    /// keys already finished. Writes nothing when the store already matches (so a finished sweep
    /// can be re-run on a read-only store); safe when another process syncs the same sweep at once.
    pub fn sync_points(
        &mut self,
        sweep_id: i64,
        points: &[PointRecord],
    ) -> Result<HashSet<String>, StoreError> {
        if let Some(done) = self.synced(sweep_id, points)? {
            return Ok(done);
        }
        self.require_writable(&format!(
            "the points of sweep id {sweep_id} changed and must be stored"
        ))?;
        let path = self.path.clone();
        let e = |err| sql_err(&path, err);
        let tx = self.write_tx()?;
        {
            let mut other = tx
                .prepare("SELECT sweep_id FROM points WHERE point_key = ?1")
                .map_err(e)?;
            let mut up = tx
                .prepare(
                    "INSERT INTO points(sweep_id, point_key, seq, target_label, target_json, baseline,
                        baseline_label, workload_name, workload_json, qd, stripe, drives, repeat, status)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'pending')
                     ON CONFLICT(point_key) DO UPDATE SET seq = excluded.seq,
                        baseline = excluded.baseline, baseline_label = excluded.baseline_label,
                        status = CASE WHEN EXISTS (SELECT 1 FROM results r WHERE r.point_key = excluded.point_key)
                                      THEN 'done'
                                      WHEN status = 'failed' THEN 'failed'
                                      ELSE 'pending' END",
                )
                .map_err(e)?;
            for p in points {
                let owner: Option<i64> = other
                    .query_row([&p.key], |r| r.get(0))
                    .optional()
                    .map_err(e)?;
                if let Some(o) = owner {
                    if o != sweep_id {
                        return Err(path_err(
                            &path,
                            format!("point {} belongs to another sweep (id {o})", p.key),
                        ));
                    }
                }
                up.execute(params![
                    sweep_id,
                    p.key,
                    p.seq,
                    p.target_label,
                    p.target_json,
                    p.baseline,
                    p.baseline_label,
                    p.workload_name,
                    p.workload_json,
                    p.qd,
                    p.stripe.map(|s| s as i64),
                    p.drives,
                    p.repeat,
                ])
                .map_err(e)?;
            }
            // Points of this sweep that the sweep no longer produces.
            let listed: HashSet<&str> = points.iter().map(|p| p.key.as_str()).collect();
            let known: Vec<String> = {
                let mut q = tx
                    .prepare(
                        "SELECT point_key FROM points WHERE sweep_id = ?1 AND status != 'stale'",
                    )
                    .map_err(e)?;
                let rows = q.query_map([sweep_id], |r| r.get(0)).map_err(e)?;
                rows.collect::<Result<_, _>>().map_err(e)?
            };
            let mut stale = tx
                .prepare("UPDATE points SET status = 'stale' WHERE point_key = ?1")
                .map_err(e)?;
            for k in known.iter().filter(|k| !listed.contains(k.as_str())) {
                stale.execute([k]).map_err(e)?;
            }
            tx.execute(
                "UPDATE sweeps SET updated_ms = ?2 WHERE id = ?1",
                params![sweep_id, now_ms()],
            )
            .map_err(e)?;
        }
        let done = {
            let mut q = tx
                .prepare("SELECT point_key FROM points WHERE sweep_id = ?1 AND status = 'done'")
                .map_err(e)?;
            let rows = q
                .query_map([sweep_id], |r| r.get::<_, String>(0))
                .map_err(e)?;
            rows.collect::<Result<HashSet<_>, _>>().map_err(e)?
        };
        tx.commit().map_err(e)?;
        Ok(done)
    }

    /// The finished keys when the stored points of `sweep_id` already are what
    /// [`Store::sync_points`] would make of them; None when something must be written.
    fn synced(
        &self,
        sweep_id: i64,
        points: &[PointRecord],
    ) -> Result<Option<HashSet<String>>, StoreError> {
        struct Row {
            seq: i64,
            baseline: bool,
            baseline_label: Option<String>,
            status: PointStatus,
            has_result: bool,
        }
        let e = |err| self.sql(err);
        let tx = self.conn.unchecked_transaction().map_err(e)?;
        let stored: HashMap<String, Row> = {
            let mut q = tx
                .prepare(
                    "SELECT p.point_key, p.seq, p.baseline, p.baseline_label, p.status,
                            EXISTS (SELECT 1 FROM results r WHERE r.point_key = p.point_key)
                     FROM points p WHERE p.sweep_id = ?1",
                )
                .map_err(e)?;
            let rows = q
                .query_map([sweep_id], |r| {
                    let status: String = r.get(4)?;
                    Ok((
                        r.get::<_, String>(0)?,
                        Row {
                            seq: r.get(1)?,
                            baseline: r.get(2)?,
                            baseline_label: r.get(3)?,
                            status: PointStatus::parse(&status),
                            has_result: r.get(5)?,
                        },
                    ))
                })
                .map_err(e)?;
            rows.collect::<Result<_, _>>().map_err(e)?
        };
        tx.commit().map_err(e)?;
        let mut done = HashSet::new();
        for p in points {
            let Some(row) = stored.get(&p.key) else {
                return Ok(None);
            };
            let want = if row.has_result {
                PointStatus::Done
            } else if row.status == PointStatus::Failed {
                PointStatus::Failed
            } else {
                PointStatus::Pending
            };
            if row.status != want
                || row.seq != p.seq
                || row.baseline != p.baseline
                || row.baseline_label != p.baseline_label
            {
                return Ok(None);
            }
            if row.has_result {
                done.insert(p.key.clone());
            }
        }
        let listed: HashSet<&str> = points.iter().map(|p| p.key.as_str()).collect();
        let unlisted_live = stored
            .iter()
            .any(|(k, r)| r.status != PointStatus::Stale && !listed.contains(k.as_str()));
        Ok(if unlisted_live { None } else { Some(done) })
    }

    /// Writes the result of a finished point in its own transaction (replacing the result of the
    /// same point stored meanwhile by another process, if any).
    pub fn record_result(&mut self, key: &str, result: &RunResult) -> Result<(), StoreError> {
        self.require_writable(&format!("the result of point {key} must be stored"))?;
        let json = serde_json::to_string(result).map_err(|e| StoreError::Json {
            path: self.path.display().to_string(),
            err: e,
        })?;
        let s = ResultSummary::of(result, now_ms());
        let path = self.path.clone();
        let e = |err| sql_err(&path, err);
        let tx = self.write_tx()?;
        let n = tx
            .execute(
                "UPDATE points SET status = 'done', error = NULL WHERE point_key = ?1",
                [key],
            )
            .map_err(e)?;
        if n == 0 {
            return Err(StoreError::UnknownPoint {
                path: path.display().to_string(),
                key: key.to_string(),
            });
        }
        tx.execute(
            "INSERT INTO results(point_key, finished_ms, iops, read_iops, write_iops, mb_s,
                lat_mean_ns, lat_p99_ns, result_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT(point_key) DO UPDATE SET finished_ms = excluded.finished_ms,
                iops = excluded.iops, read_iops = excluded.read_iops,
                write_iops = excluded.write_iops, mb_s = excluded.mb_s,
                lat_mean_ns = excluded.lat_mean_ns, lat_p99_ns = excluded.lat_p99_ns,
                result_json = excluded.result_json",
            params![
                key,
                s.finished_ms,
                s.iops,
                s.read_iops,
                s.write_iops,
                s.mb_s,
                s.lat_mean_ns,
                s.lat_p99_ns,
                json
            ],
        )
        .map_err(e)?;
        tx.execute(
            "UPDATE sweeps SET updated_ms = ?2
             WHERE id = (SELECT sweep_id FROM points WHERE point_key = ?1)",
            params![key, s.finished_ms],
        )
        .map_err(e)?;
        tx.commit().map_err(e)
    }

    /// Marks a point failed with its error (it is retried on the next run); a point that is
    /// already done (for instance finished meanwhile by another process) stays done.
    pub fn record_failure(&mut self, key: &str, error: &str) -> Result<(), StoreError> {
        self.require_writable(&format!("the failure of point {key} must be stored"))?;
        let path = self.path.clone();
        let e = |err| sql_err(&path, err);
        let tx = self.write_tx()?;
        let n = tx
            .execute(
                "UPDATE points SET status = 'failed', error = ?2 WHERE point_key = ?1 AND status != 'done'",
                params![key, error],
            )
            .map_err(e)?;
        if n > 0 {
            tx.execute(
                "UPDATE sweeps SET updated_ms = ?2
                 WHERE id = (SELECT sweep_id FROM points WHERE point_key = ?1)",
                params![key, now_ms()],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    /// All sweeps, oldest first.
    pub fn sweeps(&self) -> Result<Vec<SweepRow>, StoreError> {
        let mut q = self
            .conn
            .prepare("SELECT id, name, spec_toml, created_ms, updated_ms FROM sweeps ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = q
            .query_map([], |r| {
                Ok(SweepRow {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    spec_toml: r.get(2)?,
                    created_ms: r.get(3)?,
                    updated_ms: r.get(4)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The sweep called `name`, if stored.
    pub fn sweep_by_name(&self, name: &str) -> Result<Option<SweepRow>, StoreError> {
        Ok(self.sweeps()?.into_iter().find(|s| s.name == name))
    }

    /// Every point of a sweep (stale ones included), in sweep order, with results where finished.
    pub fn points(&self, sweep_id: i64) -> Result<Vec<StoredPoint>, StoreError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT p.point_key, p.seq, p.target_label, p.target_json, p.baseline, p.baseline_label,
                        p.workload_name, p.workload_json, p.qd, p.stripe, p.drives, p.repeat, p.status,
                        p.error, r.finished_ms, r.iops, r.read_iops, r.write_iops, r.mb_s,
                        r.lat_mean_ns, r.lat_p99_ns
                 FROM points p LEFT JOIN results r ON r.point_key = p.point_key
                 WHERE p.sweep_id = ?1 ORDER BY p.status = 'stale', p.seq, p.point_key",
            )
            .map_err(|e| self.sql(e))?;
        let rows = q
            .query_map([sweep_id], |r| {
                let finished: Option<i64> = r.get(14)?;
                let result = match finished {
                    Some(finished_ms) => Some(ResultSummary {
                        finished_ms,
                        iops: r.get(15)?,
                        read_iops: r.get(16)?,
                        write_iops: r.get(17)?,
                        mb_s: r.get(18)?,
                        lat_mean_ns: r.get(19)?,
                        lat_p99_ns: r.get(20)?,
                    }),
                    None => None,
                };
                let status: String = r.get(12)?;
                Ok(StoredPoint {
                    record: PointRecord {
                        key: r.get(0)?,
                        seq: r.get(1)?,
                        target_label: r.get(2)?,
                        target_json: r.get(3)?,
                        baseline: r.get(4)?,
                        baseline_label: r.get(5)?,
                        workload_name: r.get(6)?,
                        workload_json: r.get(7)?,
                        qd: r.get(8)?,
                        stripe: r.get::<_, Option<i64>>(9)?.map(|s| s as u64),
                        drives: r.get(10)?,
                        repeat: r.get(11)?,
                    },
                    status: PointStatus::parse(&status),
                    error: r.get(13)?,
                    result,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The full stored result of a finished point.
    pub fn result(&self, key: &str) -> Result<Option<RunResult>, StoreError> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT result_json FROM results WHERE point_key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        json.map(|j| serde_json::from_str(&j))
            .transpose()
            .map_err(|e| StoreError::Json {
                path: self.path.display().to_string(),
                err: e,
            })
    }

    /// The stored JSON text of a finished point's result, exactly as written.
    pub fn result_json(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT result_json FROM results WHERE point_key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Stores the result of a single run (`ssdlab run --store`); returns its id.
    pub fn insert_run(&mut self, label: &str, result: &RunResult) -> Result<i64, StoreError> {
        self.require_writable("a run must be stored")?;
        let json = serde_json::to_string(result).map_err(|e| StoreError::Json {
            path: self.path.display().to_string(),
            err: e,
        })?;
        let s = ResultSummary::of(result, now_ms());
        self.conn
            .query_row(
                "INSERT INTO runs(label, target_kind, target_name, workload, finished_ms, iops, read_iops,
                    write_iops, mb_s, lat_mean_ns, lat_p99_ns, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
                params![
                    label,
                    result.target.kind.as_str(),
                    result.target.name,
                    result.spec.summary(),
                    s.finished_ms,
                    s.iops,
                    s.read_iops,
                    s.write_iops,
                    s.mb_s,
                    s.lat_mean_ns,
                    s.lat_p99_ns,
                    json
                ],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))
    }

    /// All stored single runs, oldest first.
    pub fn runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut q = self
            .conn
            .prepare(
                "SELECT id, label, target_kind, target_name, workload, finished_ms, iops, read_iops,
                        write_iops, mb_s, lat_mean_ns, lat_p99_ns FROM runs ORDER BY id",
            )
            .map_err(|e| self.sql(e))?;
        let rows = q
            .query_map([], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    target_kind: r.get(2)?,
                    target_name: r.get(3)?,
                    workload: r.get(4)?,
                    summary: ResultSummary {
                        finished_ms: r.get(5)?,
                        iops: r.get(6)?,
                        read_iops: r.get(7)?,
                        write_iops: r.get(8)?,
                        mb_s: r.get(9)?,
                        lat_mean_ns: r.get(10)?,
                        lat_p99_ns: r.get(11)?,
                    },
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The full stored result of a single run.
    pub fn run_result(&self, id: i64) -> Result<Option<RunResult>, StoreError> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT result_json FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.sql(e))?;
        json.map(|j| serde_json::from_str(&j))
            .transpose()
            .map_err(|e| StoreError::Json {
                path: self.path.display().to_string(),
                err: e,
            })
    }

    /// Raw access for tests and one-off maintenance.
    #[doc(hidden)]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

/// The busy handler of every connection: while another connection holds the lock, try again
/// every 1–10 ms (a lock is usually held for one point's transaction, a few milliseconds), for
/// [`BUSY_TIMEOUT`] in all; then the statement fails with "database is locked". (SQLite's own
/// `busy_timeout` handler sleeps up to 100 ms between tries, which makes concurrent writers slow.)
fn wait_for_lock(tries: i32) -> bool {
    let n = u64::try_from(tries).unwrap_or(0);
    let waited_ms = if n < 10 {
        n * (n + 1) / 2
    } else {
        55 + (n - 10) * 10
    };
    if u128::from(waited_ms) >= BUSY_TIMEOUT.as_millis() {
        return false;
    }
    std::thread::sleep(Duration::from_millis((n + 1).min(10)));
    true
}

/// An SQLite error, classified: I/O failures, damage and refused writes get their own variants.
fn sql_err(path: &Path, e: rusqlite::Error) -> StoreError {
    let p = path.display().to_string();
    let why = || match e.sqlite_error() {
        Some(f) if f.extended_code != (f.extended_code & 0xff) => {
            one_line(&format!("{e} (SQLite error {})", f.extended_code))
        }
        _ => one_line(&e.to_string()),
    };
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull | ErrorCode::SystemIoFailure) => StoreError::Io {
            path: p,
            why: why(),
        },
        // The store is there, yet it (or its journal) cannot be opened.
        Some(ErrorCode::CannotOpen) if path.exists() => StoreError::Io {
            path: p,
            why: why(),
        },
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
            path: p,
            why: why(),
        },
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly {
            path: p,
            need: format!("a write was refused ({})", why()),
        },
        _ => StoreError::Sqlite { path: p, err: e },
    }
}

/// A file-system error while opening or creating `path`: disk full, quota and EIO are I/O
/// failures, everything else (permission denied, read-only file system…) is a path problem.
fn io_err(path: &Path, what: &str, e: std::io::Error) -> StoreError {
    use rustix::io::Errno;
    let failure = matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) || [Errno::NOSPC, Errno::IO, Errno::DQUOT]
        .iter()
        .any(|c| e.raw_os_error() == Some(c.raw_os_error()));
    let (path, why) = (path.display().to_string(), format!("{what}: {e}"));
    if failure {
        StoreError::Io { path, why }
    } else {
        StoreError::Path { path, why }
    }
}

fn path_err(path: &Path, why: String) -> StoreError {
    StoreError::Path {
        path: path.display().to_string(),
        why,
    }
}

/// Messages are printed on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, seq: i64) -> PointRecord {
        PointRecord {
            key: key.to_string(),
            seq,
            target_label: "sim x2".into(),
            target_json: "{}".into(),
            baseline: false,
            baseline_label: Some("sim".into()),
            workload_name: "4k-randread".into(),
            workload_json: "{}".into(),
            qd: 4,
            stripe: Some(16384),
            drives: 2,
            repeat: 0,
        }
    }

    fn result(iops: f64) -> RunResult {
        let mut r = RunResult::default();
        r.read.iops = iops;
        r.read.ios = 10;
        r.read.bw_bytes = iops * 4096.0;
        r.read.lat.n = 10;
        r.read.lat.mean = 1000.0;
        r.read.lat.percentiles = vec![(50.0, 900), (99.0, 5000)];
        r
    }

    #[test]
    fn meta_values_are_set_and_replaced() {
        let mut s = Store::open_in_memory().unwrap();
        assert_eq!(s.meta("standing/x").unwrap(), None);
        s.set_meta("standing/x", "a").unwrap();
        s.set_meta("standing/x", "b").unwrap();
        assert_eq!(s.meta("standing/x").unwrap().as_deref(), Some("b"));
    }

    #[test]
    fn create_reopen_and_resume_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sqlite");
        {
            let mut s = Store::open(&p).unwrap();
            let id = s.begin_sweep("study", "name = 'study'").unwrap();
            let done = s.sync_points(id, &[rec("a", 0), rec("b", 1)]).unwrap();
            assert!(done.is_empty());
            s.record_result("a", &result(1234.0)).unwrap();
            s.record_failure("b", "boom").unwrap();
            assert_eq!(s.insert_run("x", &result(5.0)).unwrap(), 1);
        }
        let mut s = Store::open(&p).unwrap();
        assert_eq!(s.meta("schema_version").unwrap().as_deref(), Some("1"));
        assert!(s.meta("created_by").unwrap().unwrap().starts_with("ssdlab"));
        let id = s.begin_sweep("study", "name = 'study' # v2").unwrap();
        assert_eq!(s.sweeps().unwrap().len(), 1);
        // "b" dropped from the file, "c" added.
        let done = s.sync_points(id, &[rec("a", 0), rec("c", 1)]).unwrap();
        assert_eq!(done, HashSet::from(["a".to_string()]));
        let pts = s.points(id).unwrap();
        let st: Vec<_> = pts
            .iter()
            .map(|p| (p.record.key.as_str(), p.status))
            .collect();
        assert_eq!(
            st,
            [
                ("a", PointStatus::Done),
                ("c", PointStatus::Pending),
                ("b", PointStatus::Stale)
            ]
        );
        let a = pts[0].result.as_ref().unwrap();
        assert_eq!(a.iops, 1234.0);
        assert_eq!(a.lat_p99_ns, 5000.0);
        assert_eq!(s.result("a").unwrap().unwrap(), result(1234.0));
        assert_eq!(s.runs().unwrap()[0].summary.iops, 5.0);
        assert!(matches!(
            s.record_result("zzz", &result(1.0)),
            Err(StoreError::UnknownPoint { .. })
        ));
    }

    #[test]
    fn refuses_non_sqlite_and_foreign_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notes.txt");
        std::fs::write(&p, "hello, this is not a database at all").unwrap();
        let e = Store::open(&p).unwrap_err().to_string();
        assert!(e.contains("is not an ssdlab results store"), "{e}");
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"hello, this is not a database at all"
        );

        let empty = dir.path().join("empty.sqlite");
        std::fs::write(&empty, "").unwrap();
        let e = Store::open(&empty).unwrap_err().to_string();
        assert!(e.contains("is not an ssdlab results store"), "{e}");

        let foreign = dir.path().join("other.sqlite");
        {
            let c = Connection::open(&foreign).unwrap();
            c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
                .unwrap();
        }
        let e = Store::open(&foreign).unwrap_err().to_string();
        assert!(e.contains("is not an ssdlab results store"), "{e}");
        let e = Store::open_existing(&foreign, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not an ssdlab results store"), "{e}");

        let e = Store::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = Store::open_existing(&dir.path().join("missing.sqlite"), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert!(!dir.path().join("missing.sqlite").exists());
        let e = Store::open(&dir.path().join("no/such/dir/x.sqlite"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn refuses_other_schema_versions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old.sqlite");
        drop(Store::open(&p).unwrap());
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch("PRAGMA user_version = 0;").unwrap();
        }
        let e = Store::open(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{} was written by schema version 0, this ssdlab reads version 1; \
                 re-run the sweep into a new file",
                p.display()
            )
        );
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch("PRAGMA user_version = 2;").unwrap();
        }
        let e = Store::open_existing(&p, true).unwrap_err().to_string();
        assert!(
            e.contains("schema version 2, this ssdlab reads version 1"),
            "{e}"
        );
        // Header says 1 but the meta table disagrees: still refused.
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(
                "PRAGMA user_version = 1; UPDATE meta SET value = '3' WHERE key = 'schema_version';",
            )
            .unwrap();
        }
        let e = Store::open(&p).unwrap_err().to_string();
        assert!(e.contains("schema version 3"), "{e}");
    }

    /// Formats `e` the way the CLI does and checks that no text is printed twice: no link of the
    /// source chain repeats another, `cause` appears exactly once, and all of it is one line.
    fn assert_printed_once(e: StoreError, cause: &str) {
        let chain: Vec<String> =
            std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
                .map(|e| e.to_string())
                .collect();
        let full = format!("{:#}", anyhow::Error::from(e));
        assert_eq!(full.matches(cause).count(), 1, "{cause:?} in {full:?}");
        for (i, a) in chain.iter().enumerate() {
            for b in &chain[i + 1..] {
                assert!(!a.contains(b.as_str()), "{full:?} repeats {b:?}");
            }
        }
        assert!(!full.contains('\n'), "{full:?}");
        assert!(full.contains("r.sqlite"), "{full:?} does not name the file");
    }

    #[test]
    fn every_error_prints_its_cause_once() {
        let p = Path::new("r.sqlite");
        let s = || p.display().to_string();
        let sql = Connection::open_in_memory()
            .unwrap()
            .execute("INSERT INTO nowhere VALUES (1)", [])
            .unwrap_err();
        let sql_text = sql.to_string();
        assert!(sql_text.contains("nowhere"), "{sql_text}");
        let json = serde_json::from_str::<RunResult>("{ not json").unwrap_err();
        let json_text = json.to_string();
        let io = std::io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error());
        let io_text = io.to_string();
        let cases = [
            (
                StoreError::NotAStore {
                    path: s(),
                    why: "not an SQLite database".into(),
                },
                "not an SQLite database".to_string(),
            ),
            (
                StoreError::Version {
                    path: s(),
                    found: 7,
                    expected: 1,
                },
                "schema version 7".to_string(),
            ),
            (StoreError::Missing { path: s() }, "does not exist".into()),
            (
                path_err(p, "directory x does not exist".into()),
                "directory x does not exist".into(),
            ),
            (io_err(p, "cannot create", io), io_text),
            (
                StoreError::Corrupt {
                    path: s(),
                    why: "integrity check: page 3 is never used".into(),
                },
                "page 3 is never used".into(),
            ),
            (
                StoreError::ReadOnly {
                    path: s(),
                    need: "2 points still need to run".into(),
                },
                "2 points still need to run".into(),
            ),
            (sql_err(p, sql), sql_text),
            (
                StoreError::Json {
                    path: s(),
                    err: json,
                },
                json_text,
            ),
            (
                StoreError::UnknownPoint {
                    path: s(),
                    key: "abc123".into(),
                },
                "abc123".into(),
            ),
        ];
        for (e, cause) in cases {
            assert_printed_once(e, &cause);
        }
    }

    #[test]
    fn io_failures_are_told_from_bad_input() {
        use rusqlite::ffi;
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("r.sqlite");
        std::fs::write(&existing, "x").unwrap();
        let missing = dir.path().join("missing.sqlite");
        let code = |c: i32| rusqlite::Error::SqliteFailure(ffi::Error::new(c), None);
        let io = |c: rustix::io::Errno| std::io::Error::from_raw_os_error(c.raw_os_error());
        use rustix::io::Errno;
        for (e, io_failure) in [
            (sql_err(&existing, code(ffi::SQLITE_FULL)), true),
            (sql_err(&existing, code(ffi::SQLITE_IOERR)), true),
            (sql_err(&existing, code(ffi::SQLITE_IOERR_WRITE)), true),
            (sql_err(&existing, code(ffi::SQLITE_IOERR_FSYNC)), true),
            (sql_err(&existing, code(ffi::SQLITE_CANTOPEN)), true),
            (sql_err(&missing, code(ffi::SQLITE_CANTOPEN)), false),
            (sql_err(&existing, code(ffi::SQLITE_CONSTRAINT)), false),
            (sql_err(&existing, code(ffi::SQLITE_BUSY)), false),
            (sql_err(&existing, code(ffi::SQLITE_CORRUPT)), false),
            (sql_err(&existing, code(ffi::SQLITE_READONLY)), false),
            (io_err(&existing, "cannot create", io(Errno::NOSPC)), true),
            (io_err(&existing, "cannot create", io(Errno::IO)), true),
            (io_err(&existing, "cannot create", io(Errno::DQUOT)), true),
            (io_err(&existing, "cannot create", io(Errno::ACCESS)), false),
            (io_err(&existing, "cannot create", io(Errno::ROFS)), false),
            (
                StoreError::Corrupt {
                    path: "x".into(),
                    why: "y".into(),
                },
                false,
            ),
        ] {
            assert_eq!(e.is_io_failure(), io_failure, "{e}");
            assert_eq!(matches!(e, StoreError::Io { .. }), io_failure, "{e}");
        }
        assert!(matches!(
            sql_err(&existing, code(ffi::SQLITE_CORRUPT)),
            StoreError::Corrupt { .. }
        ));
        assert!(matches!(
            sql_err(&existing, code(ffi::SQLITE_READONLY)),
            StoreError::ReadOnly { .. }
        ));
        // The extended code is named: "disk I/O error (SQLite error 778)".
        let e = sql_err(&existing, code(ffi::SQLITE_IOERR_WRITE)).to_string();
        assert!(e.contains("I/O failure") && e.contains("778"), "{e}");
    }

    /// A store opened read-only serves a finished sweep again without writing; anything that
    /// would write is refused with a clear error and leaves the file as it was.
    #[test]
    fn read_only_store_reruns_a_finished_sweep_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sqlite");
        let pts = [rec("a", 0), rec("b", 1)];
        {
            let mut s = Store::open(&p).unwrap();
            assert!(!s.is_read_only());
            let id = s.begin_sweep("study", "spec").unwrap();
            s.sync_points(id, &pts).unwrap();
            s.record_result("a", &result(1.0)).unwrap();
            s.record_result("b", &result(2.0)).unwrap();
        }
        let before = std::fs::read(&p).unwrap();
        let mut s = Store::open_existing(&p, true).unwrap();
        assert!(s.is_read_only());
        let id = s.begin_sweep("study", "spec").unwrap();
        let done = s.sync_points(id, &pts).unwrap();
        assert_eq!(done, HashSet::from(["a".to_string(), "b".to_string()]));
        assert_eq!(s.points(id).unwrap().len(), 2);
        s.require_writable("nothing").map(|_| ()).unwrap_err();
        for e in [
            s.begin_sweep("study", "spec, changed").unwrap_err(),
            s.begin_sweep("other", "spec").unwrap_err(),
            s.sync_points(id, &[rec("a", 0)]).unwrap_err(),
            s.sync_points(id, &[rec("a", 0), rec("b", 1), rec("c", 2)])
                .unwrap_err(),
            s.record_result("a", &result(3.0)).unwrap_err(),
            s.record_failure("a", "boom").unwrap_err(),
            s.insert_run("x", &result(3.0)).unwrap_err(),
        ] {
            assert!(matches!(e, StoreError::ReadOnly { .. }), "{e}");
            assert!(e.to_string().contains("is read-only"), "{e}");
        }
        drop(s);
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }

    /// Re-syncing an unchanged sweep writes nothing; a failed point keeps its failure until it
    /// runs again; points dropped from the sweep become stale and come back when listed again.
    #[test]
    fn sync_writes_only_changes_and_keeps_failures() {
        let mut s = Store::open_in_memory().unwrap();
        let id = s.begin_sweep("study", "spec").unwrap();
        let pts = [rec("a", 0), rec("b", 1), rec("c", 2)];
        s.sync_points(id, &pts).unwrap();
        s.record_result("a", &result(1.0)).unwrap();
        s.record_failure("b", "boom").unwrap();
        let changes = |s: &Store| s.conn.total_changes();
        let before = changes(&s);
        assert_eq!(s.begin_sweep("study", "spec").unwrap(), id);
        let done = s.sync_points(id, &pts).unwrap();
        assert_eq!(done, HashSet::from(["a".to_string()]));
        assert_eq!(changes(&s), before, "an unchanged sweep must write nothing");
        let status = |s: &Store| -> Vec<(String, PointStatus, Option<String>)> {
            s.points(id)
                .unwrap()
                .into_iter()
                .map(|p| (p.record.key, p.status, p.error))
                .collect()
        };
        assert_eq!(
            status(&s),
            [
                ("a".into(), PointStatus::Done, None),
                ("b".into(), PointStatus::Failed, Some("boom".into())),
                ("c".into(), PointStatus::Pending, None),
            ]
        );
        // Drop "c", reorder: a write.
        s.sync_points(id, &[rec("b", 0), rec("a", 1)]).unwrap();
        assert!(changes(&s) > before);
        assert_eq!(
            status(&s),
            [
                ("b".into(), PointStatus::Failed, Some("boom".into())),
                ("a".into(), PointStatus::Done, None),
                ("c".into(), PointStatus::Stale, None),
            ]
        );
        s.sync_points(id, &pts).unwrap();
        assert_eq!(status(&s)[2], ("c".into(), PointStatus::Pending, None));
        // A failure never overrides a result stored meanwhile (by another process, say).
        s.record_failure("a", "late").unwrap();
        assert_eq!(status(&s)[0], ("a".into(), PointStatus::Done, None));
    }

    /// Without hard links (FAT, some FUSE file systems) the store is published with a no-replace
    /// rename: the first creator wins, a later one finds the name taken and nothing is replaced.
    #[test]
    fn publish_falls_back_to_a_no_replace_rename() {
        let dir = tempfile::tempdir().unwrap();
        let no_links = |_: &Path, _: &Path| -> std::io::Result<()> {
            Err(std::io::Error::from_raw_os_error(
                rustix::io::Errno::PERM.raw_os_error(),
            ))
        };
        let target = dir.path().join("r.sqlite");
        let (a, b) = (dir.path().join("a.tmp"), dir.path().join("b.tmp"));
        std::fs::write(&a, "first").unwrap();
        std::fs::write(&b, "second").unwrap();
        assert!(publish_with(&a, &target, no_links).unwrap());
        assert!(!a.exists());
        assert!(!publish_with(&b, &target, no_links).unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "first");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "second");
        // With links: the same outcome, the temporary name stays for the caller to remove.
        let target = dir.path().join("s.sqlite");
        assert!(publish(&b, &target).unwrap());
        std::fs::write(&a, "third").unwrap();
        assert!(!publish(&a, &target).unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "second");
    }
}
