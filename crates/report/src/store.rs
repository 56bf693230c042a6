//! The SQLite results store: every sweep point and every stored single run, with its full spec and
//! result, so a sweep can be resumed and reports regenerated later. The schema is documented in
//! `docs/STORE.md`; any change to it bumps [`SCHEMA_VERSION`].
//!
//! Identification: the SQLite header's `application_id` is [`APPLICATION_ID`] (`"SSDL"`), its
//! `user_version` is the schema version, and the `meta` table repeats both in words. A file that is
//! not SQLite, or SQLite without our application id, is refused; so is a store of another schema
//! version (never silently misread).

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde::{Deserialize, Serialize};
use ssdlab_stats::RunResult;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// `PRAGMA application_id` of every ssdlab store: the ASCII bytes "SSDL".
pub const APPLICATION_ID: i32 = 0x5353_444C;
/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i32 = 1;

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why a store could not be opened or used.
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
    #[error("{path}: {why}")]
    Path { path: String, why: String },
    #[error("results store {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("results store {path}: stored JSON cannot be read: {source}")]
    Json {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("results store {path}: no point with key {key}")]
    UnknownPoint { path: String, key: String },
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

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens a store for writing; a missing file (and only a missing file) is created with the
    /// current schema. Anything that is not a regular file is refused.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        match std::fs::metadata(path) {
            Ok(_) => Self::open_mode(path, false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(path),
            Err(e) => Err(path_err(path, format!("cannot read: {e}"))),
        }
    }

    /// Opens an existing store (never creates one); `read_only` for reports.
    pub fn open_existing(path: &Path, read_only: bool) -> Result<Store, StoreError> {
        match std::fs::metadata(path) {
            Ok(_) => Self::open_mode(path, read_only),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::Missing {
                path: path.display().to_string(),
            }),
            Err(e) => Err(path_err(path, format!("cannot read: {e}"))),
        }
    }

    /// A fresh store in memory (tests).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|e| sql_err(&path, e))?;
        let mut s = Store { conn, path };
        s.init_schema()?;
        Ok(s)
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
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
        // create_new: a regular file, and only if nothing is there (no race with another creator).
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| path_err(path, format!("cannot create: {e}")))?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sql_err(path, e))?;
        let mut s = Store {
            conn,
            path: path.to_path_buf(),
        };
        s.configure()?;
        s.init_schema()?;
        Ok(s)
    }

    fn open_mode(path: &Path, read_only: bool) -> Result<Store, StoreError> {
        let not_store = |why: &str| StoreError::NotAStore {
            path: path.display().to_string(),
            why: why.to_string(),
        };
        let meta =
            std::fs::metadata(path).map_err(|e| path_err(path, format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(not_store("not a regular file"));
        }
        if meta.len() == 0 {
            return Err(not_store("the file is empty"));
        }
        let mut head = [0u8; 16];
        {
            use std::io::Read;
            let mut f = std::fs::File::open(path)
                .map_err(|e| path_err(path, format!("cannot open: {e}")))?;
            let n = f
                .read(&mut head)
                .map_err(|e| path_err(path, format!("cannot read: {e}")))?;
            if n < 16 || &head != SQLITE_MAGIC {
                return Err(not_store("not an SQLite database"));
            }
        }
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
        let s = Store {
            conn,
            path: path.to_path_buf(),
        };
        s.configure()?;
        let app: i32 = s
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::NotADatabase =>
                {
                    not_store("not an SQLite database")
                }
                e => sql_err(path, e),
            })?;
        if app != APPLICATION_ID {
            return Err(not_store(&format!(
                "SQLite application id {app:#x}, ssdlab stores have {APPLICATION_ID:#x}"
            )));
        }
        let version: i32 = s
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| sql_err(path, e))?;
        if version != SCHEMA_VERSION {
            return Err(StoreError::Version {
                path: path.display().to_string(),
                found: version,
                expected: SCHEMA_VERSION,
            });
        }
        // The meta table must agree with the header.
        let meta_version: Option<String> = s
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| not_store(&format!("meta table unreadable: {e}")))?;
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
        Ok(s)
    }

    fn configure(&self) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    fn init_schema(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| sql_err(&path, e))?;
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

    /// A value from the `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Records that sweep `name` is being run with `spec_toml`; returns its id (the same id when
    /// the sweep is already in the store).
    pub fn begin_sweep(&mut self, name: &str, spec_toml: &str) -> Result<i64, StoreError> {
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
    /// are added as pending, known ones keep their results (status done when a result exists),
    /// points of this sweep that are no longer listed become stale. Returns the keys already
    /// finished.
    pub fn sync_points(
        &mut self,
        sweep_id: i64,
        points: &[PointRecord],
    ) -> Result<HashSet<String>, StoreError> {
        let path = self.path.clone();
        let e = |err| sql_err(&path, err);
        let tx = self.conn.transaction().map_err(e)?;
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
            tx.execute(
                "UPDATE points SET status = 'stale' WHERE sweep_id = ?1",
                [sweep_id],
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

    /// Writes the result of a finished point in its own transaction.
    pub fn record_result(&mut self, key: &str, result: &RunResult) -> Result<(), StoreError> {
        let json = serde_json::to_string(result).map_err(|e| StoreError::Json {
            path: self.path.display().to_string(),
            source: e,
        })?;
        let s = ResultSummary::of(result, now_ms());
        let path = self.path.clone();
        let e = |err| sql_err(&path, err);
        let tx = self.conn.transaction().map_err(e)?;
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
            "INSERT OR REPLACE INTO results(point_key, finished_ms, iops, read_iops, write_iops, mb_s,
                lat_mean_ns, lat_p99_ns, result_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
        tx.commit().map_err(e)
    }

    /// Marks a point failed with its error (it is retried on the next run).
    pub fn record_failure(&mut self, key: &str, error: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE points SET status = 'failed', error = ?2 WHERE point_key = ?1 AND status != 'done'",
                params![key, error],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
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
                source: e,
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
        let json = serde_json::to_string(result).map_err(|e| StoreError::Json {
            path: self.path.display().to_string(),
            source: e,
        })?;
        let s = ResultSummary::of(result, now_ms());
        self.conn
            .query_row(
                "INSERT INTO runs(label, target_kind, target_name, workload, finished_ms, iops, read_iops,
                    write_iops, mb_s, lat_mean_ns, lat_p99_ns, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
                params![
                    label,
                    result.target.kind,
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
                source: e,
            })
    }

    /// Raw access for tests and one-off maintenance.
    #[doc(hidden)]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

fn sql_err(path: &Path, e: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.display().to_string(),
        source: e,
    }
}

fn path_err(path: &Path, why: String) -> StoreError {
    StoreError::Path {
        path: path.display().to_string(),
        why,
    }
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
}
