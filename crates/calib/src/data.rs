//! Data files: figures as a source published or as `ssdlab calibrate` measured them, and
//! qualitative claims (`a > b`, `a / b ≈ r`) between two workloads.
//!
//! One file per source (`data/published/*.toml` in the repository):
//!
//! ```toml
//! [source]
//! title = "AnandTech: The Crucial RealSSD C300"
//! url = "https://www.anandtech.com/show/…"
//! kind = "review"            # review | datasheet | measured | findings
//! method = "Iometer; 4 KiB random over an 8 GB span, QD 3, 3 minutes"
//!
//! [[figure]]
//! drive = "c300-256g"        # the preset (or model) the figure is for
//! metric = "bw"              # bw | iops | lat (mean completion latency)
//! value = 162.3
//! unit = "MB/s"              # MB/s MiB/s GB/s KB/s IOPS us ms, as published
//! rw = "randwrite"           # read write randread randwrite randrw
//! bs = "4k"
//! qd = 3
//! span = "8g"                # omitted: the whole drive
//! align = "512"              # omitted: the block size
//! state = "fresh"            # fresh | full | steady (omitted: fresh)
//! time = "180s"              # omitted: 60 s
//! pattern = "random"         # data written: random | zeros | repeat[:BYTE] | compress:N
//! after = "160000000000"     # optional: the rate of what was moved after the first N bytes
//! use = "validate"           # fit | validate (omitted: fit for datasheet and measured
//!                            # sources, validate for reviews and findings)
//! quote = "the C300 manages 162.3MB/s"   # the source's words giving the number
//!
//! [[claim]]
//! text = "512-B-aligned: the Vertex LE is ahead of the X25-E"
//! metric = "bw"
//! kind = "greater"           # greater (a > b) | ratio (a / b = value ± tolerance)
//! a = { drive = "vertex-le-100g", rw = "randwrite", bs = "4k", qd = 3, span = "8g", align = "512" }
//! b = { drive = "x25e-64g", rw = "randwrite", bs = "4k", qd = 3, span = "8g", align = "512" }
//! ```
//!
//! Everything is checked when the file is read; the first problem is reported with the file and
//! the figure or claim it is in.

use serde::{Deserialize, Serialize};
use ssdlab_ssdsim::{AdapterChoice, AdapterModel, Precondition};
use ssdlab_workload::{parse_duration, parse_size, Field, Pattern, RwMode, TomlNaming};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use thiserror::Error;

/// Test length assumed when a figure does not say.
pub const DEFAULT_TIME_NS: u64 = 60_000_000_000;
/// Largest data file read.
const MAX_FILE: u64 = 4 << 20;

/// A data file that cannot be used, with where the problem is.
#[derive(Debug, Error)]
pub enum DataError {
    #[error("{path}: {msg}")]
    File { path: String, msg: String },
    #[error("{path}: {item}: {msg}")]
    Item {
        path: String,
        item: String,
        msg: String,
    },
}

/// Where the figures of a file come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

/// The workload of a figure or of one side of a claim, as written in the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    pub drive: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drives: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe: Option<String>,
    pub rw: String,
    pub bs: String,
    pub qd: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<u8>,
    /// The host adapter (`chipset`, `none`; default: the one such drives get, see
    /// `ssdlab_ssdsim::AdapterModel::default_for`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// An array's RAID driver write-back cache in host memory (size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_cache: Option<String>,
    /// The data written (`random`, `zeros`, `repeat[:BYTE]`, `compress:N`; default random:
    /// incompressible, as AS SSD and Iometer's full-random pattern write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The figure is the rate over what the test moved after its first `after` bytes (a
    /// size): the rate once a cache is full, as a long write's chart shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// A figure as written in the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawFigure {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub drive: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drives: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe: Option<String>,
    pub rw: String,
    pub bs: String,
    pub qd: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_cache: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The rate over what the test moved after its first N bytes (see [`RawCase::after`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// "lower" or "upper" when the source gives only a bound ("over 160 MB/s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// `fit` (a figure `ssdlab calibrate` may fit a model to: ratings, datasheets, this
    /// machine's measurements) or `validate` (held out: only `ssdlab validate` reads it).
    /// Default: `fit` for sources of kind datasheet and measured, `validate` for reviews and
    /// findings.
    #[serde(default, rename = "use", skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// The words of the source the figure was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_note: Option<String>,
}

/// Whether a figure is a value or only a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// The value as published: the error is simulated / published − 1.
    Exact,
    /// "At least": no error when the simulation reaches it.
    Lower,
    /// "At most": no error when the simulation stays below it.
    Upper,
}

/// A claim as written in the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawClaim {
    pub text: String,
    pub metric: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    pub a: RawCase,
    pub b: RawCase,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub source: Source,
    #[serde(default, rename = "figure", skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<RawFigure>,
    #[serde(default, rename = "claim", skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<RawClaim>,
}

/// What a figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Throughput, bytes/s.
    Bw,
    /// I/Os per second.
    Iops,
    /// Mean completion latency, ns.
    Lat,
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bw" => Ok(Metric::Bw),
            "iops" => Ok(Metric::Iops),
            "lat" => Ok(Metric::Lat),
            _ => Err(format!("metric {s:?}: expected bw, iops or lat")),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Metric::Bw => "bw",
            Metric::Iops => "iops",
            Metric::Lat => "lat",
        })
    }
}

impl Metric {
    /// Whether a larger value is better (throughput) or worse (latency).
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Metric::Lat)
    }
}

/// The factor from a published unit to the metric's base unit (bytes/s, IOPS, ns).
pub fn unit_factor(metric: Metric, unit: &str) -> Result<f64, String> {
    let f = match (metric, unit) {
        (Metric::Bw, "B/s") => 1.0,
        (Metric::Bw, "KB/s") => 1e3,
        (Metric::Bw, "KiB/s") => 1024.0,
        (Metric::Bw, "MB/s") => 1e6,
        (Metric::Bw, "MiB/s") => 1_048_576.0,
        (Metric::Bw, "GB/s") => 1e9,
        (Metric::Bw, "GiB/s") => 1_073_741_824.0,
        (Metric::Iops, "IOPS") => 1.0,
        (Metric::Lat, "ns") => 1.0,
        (Metric::Lat, "us") | (Metric::Lat, "µs") => 1e3,
        (Metric::Lat, "ms") => 1e6,
        _ => {
            let expect = match metric {
                Metric::Bw => "B/s, KB/s, KiB/s, MB/s, MiB/s, GB/s or GiB/s",
                Metric::Iops => "IOPS",
                Metric::Lat => "ns, us or ms",
            };
            return Err(format!(
                "unit {unit:?} for metric {metric}: expected {expect}"
            ));
        }
    };
    Ok(f)
}

/// A workload on a drive or an array of it, checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Case {
    pub drive: String,
    pub drives: u32,
    pub stripe: Option<u64>,
    pub rw: RwMode,
    pub bs: u64,
    pub qd: u32,
    pub span: Option<u64>,
    pub align: u64,
    pub state: Precondition,
    pub time_ns: u64,
    pub read_pct: u8,
    /// The host adapter asked for (nothing: the default for the drive and array size).
    pub adapter: AdapterChoice,
    /// The data written.
    pub pattern: Pattern,
    /// The rate is taken over what the test moved after its first this many bytes.
    pub after_bytes: Option<u64>,
}

/// Which kind of workload a case is, for the per-family error summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    RandomRead,
    RandomWrite,
    SequentialRead,
    SequentialWrite,
    Mixed,
    Raid,
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::RandomRead => "random read",
            Family::RandomWrite => "random write",
            Family::SequentialRead => "sequential read",
            Family::SequentialWrite => "sequential write",
            Family::Mixed => "mixed",
            Family::Raid => "RAID 0",
        })
    }
}

impl Case {
    /// 4 KiB random reads at QD 1 on one drive over `span` bytes from the start, written first
    /// (`full`), for `time_ns`: the base the suite's and the self-test's workloads vary.
    pub fn on_written_span(drive: &str, span: u64, time_ns: u64) -> Case {
        Case {
            drive: drive.to_string(),
            drives: 1,
            stripe: None,
            rw: RwMode::Randread,
            bs: 4096,
            qd: 1,
            span: Some(span),
            align: 4096,
            state: Precondition::Full,
            time_ns,
            read_pct: 100,
            adapter: AdapterChoice::default(),
            pattern: Pattern::Random,
            after_bytes: None,
        }
    }

    pub fn family(&self) -> Family {
        if self.drives > 1 {
            return Family::Raid;
        }
        match self.rw {
            RwMode::Randread => Family::RandomRead,
            RwMode::Randwrite => Family::RandomWrite,
            RwMode::Read => Family::SequentialRead,
            RwMode::Write => Family::SequentialWrite,
            _ => Family::Mixed,
        }
    }

    /// A short description: `randwrite 4k QD3 8g span 512-aligned fresh`.
    pub fn label(&self) -> String {
        let mut s = format!(
            "{} {} QD{}",
            self.rw.as_str(),
            ssdlab_workload::format_size(self.bs),
            self.qd
        );
        if matches!(self.rw, RwMode::Randrw | RwMode::Rw) {
            s.push_str(&format!(" {}% read", self.read_pct));
        }
        if let Some(span) = self.span {
            s.push_str(&format!(" {} span", ssdlab_workload::format_size(span)));
        }
        if self.align != self.bs {
            s.push_str(&format!(" {}-aligned", self.align));
        }
        if self.drives > 1 {
            s.push_str(&format!(
                " RAID0×{} {}",
                self.drives,
                ssdlab_workload::format_size(self.stripe.unwrap_or(0))
            ));
        }
        if let Some(m) = self.adapter.model {
            s.push_str(&format!(" adapter {m}"));
        }
        if let Some(b) = self.adapter.cache_bytes {
            s.push_str(&format!(" cache {}", ssdlab_workload::format_size(b)));
        }
        if self.pattern != Pattern::Random {
            s.push_str(&format!(" {}", self.pattern));
        }
        s.push_str(&format!(" {}", self.state));
        if let Some(b) = self.after_bytes {
            s.push_str(&format!(" after {}", ssdlab_workload::format_size(b)));
        }
        s
    }
}

fn size(what: &str, s: &str) -> Result<u64, String> {
    let v = parse_size(s).map_err(|e| format!("{what}: {e}"))?;
    if v == 0 {
        return Err(format!("{what} must be greater than 0"));
    }
    Ok(v)
}

impl RawCase {
    /// Checks the workload and gives it its defaults.
    pub fn parse(&self) -> Result<Case, String> {
        if self.drive.trim().is_empty() {
            return Err("drive is empty".into());
        }
        let rw = RwMode::from_str(&self.rw).map_err(|e| e.to_string())?;
        let bs = size("bs", &self.bs)?;
        if bs % 512 != 0 {
            return Err(format!(
                "bs = {:?}: a transfer must be a whole number of 512-byte sectors",
                self.bs
            ));
        }
        if self.qd == 0 || self.qd > 4096 {
            return Err(format!("qd {} must be within 1..=4096", self.qd));
        }
        let drives = self.drives.unwrap_or(1);
        if drives == 0 || drives > 64 {
            return Err(format!("drives {drives} must be within 1..=64"));
        }
        let stripe = self
            .stripe
            .as_deref()
            .map(|s| size("stripe", s))
            .transpose()?;
        if drives > 1 && stripe.is_none() {
            return Err("an array (drives > 1) needs a stripe".into());
        }
        let span = self.span.as_deref().map(|s| size("span", s)).transpose()?;
        let align = match &self.align {
            Some(a) => size("align", a)?,
            None => bs,
        };
        if align % 512 != 0 {
            return Err(format!(
                "align = {:?}: offsets are aligned to whole 512-byte sectors",
                self.align.as_deref().unwrap_or_default()
            ));
        }
        let state = match &self.state {
            Some(s) => Precondition::from_str(s).map_err(|e| e.message)?,
            None => Precondition::Fresh,
        };
        let time_ns = match &self.time {
            Some(t) => parse_duration(t).map_err(|e| format!("time: {e}"))?,
            None => DEFAULT_TIME_NS,
        };
        if time_ns == 0 {
            return Err("time must be greater than 0".into());
        }
        let read_pct = match (rw.fixed_read_pct(), self.rwmixread) {
            (Some(p), None) => p,
            (Some(_), Some(_)) => {
                return Err(format!(
                    "rwmixread applies to randrw and rw, not {}",
                    self.rw
                ))
            }
            (None, Some(p)) if p <= 100 => p,
            (None, Some(p)) => return Err(format!("rwmixread {p} is not a percentage")),
            (None, None) => 50,
        };
        let adapter = AdapterChoice {
            model: self
                .adapter
                .as_deref()
                .map(|m| m.parse::<AdapterModel>())
                .transpose()?,
            cache_bytes: self
                .adapter_cache
                .as_deref()
                .map(|s| size("adapter_cache", s))
                .transpose()?,
            ..Default::default()
        };
        if adapter.cache_bytes.is_some() && drives < 2 {
            return Err("adapter_cache is an array's RAID driver cache: give drives > 1".into());
        }
        let pattern = match &self.pattern {
            Some(p) => Pattern::from_str(p).map_err(|e| e.to_string())?,
            None => Pattern::Random,
        };
        let after_bytes = self
            .after
            .as_deref()
            .map(|s| size("after", s))
            .transpose()?;
        let case = Case {
            pattern,
            adapter,
            after_bytes,
            drive: self.drive.trim().to_string(),
            drives,
            stripe,
            rw,
            bs,
            qd: self.qd,
            span,
            align,
            state,
            time_ns,
            read_pct,
        };
        // what the workload checks refuse (a span below one block, an alignment above the
        // block size), in the file's words
        crate::predict::case_spec(&case, 0, None, None)
            .validate()
            .map_err(|e| e.render(&self.naming()))?;
        Ok(case)
    }

    /// The file's names of the workload's settings, with their values as written
    /// (`bs = "3"`); the figure or claim the error is in gives the line.
    pub fn naming(&self) -> TomlNaming {
        let mut n = TomlNaming {
            keys: DATA_KEYS.to_vec(),
            ..Default::default()
        };
        n.set(Field::Rw, "rw", &format!("{:?}", self.rw), 0);
        n.set(Field::Bs, "bs", &format!("{:?}", self.bs), 0);
        n.set(Field::Qd, "qd", &self.qd.to_string(), 0);
        for (f, key, v) in [
            (Field::Span, "span", &self.span),
            (Field::Align, "align", &self.align),
            (Field::Time, "time", &self.time),
            (Field::Stripe, "stripe", &self.stripe),
        ] {
            if let Some(v) = v {
                n.set(f, key, &format!("{v:?}"), 0);
            }
        }
        if let Some(p) = self.rwmixread {
            n.set(Field::ReadPct, "rwmixread", &p.to_string(), 0);
        }
        n
    }
}

/// The keys a data file names a workload's settings by (those not here: the flag's name).
const DATA_KEYS: [(Field, &str); 2] = [(Field::ReadPct, "rwmixread"), (Field::Stripe, "stripe")];

impl Case {
    /// The data file's names of the settings, with the case's values (`bs = "4 KiB"`): for a
    /// case whose text is no longer at hand (a measured or stored one).
    pub fn naming(&self) -> TomlNaming {
        let mut n = TomlNaming {
            keys: DATA_KEYS.to_vec(),
            ..Default::default()
        };
        let size = |v: u64| format!("{:?}", ssdlab_workload::format_size(v));
        n.set(Field::Rw, "rw", &format!("{:?}", self.rw.as_str()), 0);
        n.set(Field::Bs, "bs", &size(self.bs), 0);
        n.set(Field::Align, "align", &size(self.align), 0);
        n.set(Field::Qd, "qd", &self.qd.to_string(), 0);
        if let Some(s) = self.span {
            n.set(Field::Span, "span", &size(s), 0);
        }
        if let Some(s) = self.stripe {
            n.set(Field::Stripe, "stripe", &size(s), 0);
        }
        n
    }
}

impl RawFigure {
    fn case(&self) -> RawCase {
        RawCase {
            drive: self.drive.clone(),
            drives: self.drives,
            stripe: self.stripe.clone(),
            rw: self.rw.clone(),
            bs: self.bs.clone(),
            qd: self.qd,
            span: self.span.clone(),
            align: self.align.clone(),
            state: self.state.clone(),
            time: self.time.clone(),
            rwmixread: self.rwmixread,
            adapter: self.adapter.clone(),
            adapter_cache: self.adapter_cache.clone(),
            pattern: self.pattern.clone(),
            after: self.after.clone(),
        }
    }
}

impl Figure {
    /// simulated / published − 1, or 0 when the figure is a bound the simulation meets.
    pub fn error(&self, simulated: f64) -> f64 {
        let e = simulated / self.value - 1.0;
        match self.bound {
            Bound::Exact => e,
            Bound::Lower => e.min(0.0),
            Bound::Upper => e.max(0.0),
        }
    }
}

/// A published or measured figure, checked, in the metric's base unit.
#[derive(Debug, Clone)]
pub struct Figure {
    pub case: Case,
    pub metric: Metric,
    /// In bytes/s, IOPS or ns.
    pub value: f64,
    pub bound: Bound,
    /// Whether calibration may fit to it.
    pub usage: Usage,
    /// As written in the file (for display).
    pub raw: RawFigure,
    /// The file and the figure's position in it (`file.toml#3`), or its id.
    pub origin: String,
}

/// What a figure is for: fitting a model, or checking one on data it was not fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Usage {
    /// `ssdlab calibrate` may fit to it (ratings, datasheets, measurements of this machine).
    Fit,
    /// Held out: `ssdlab validate` reports its error apart from the fitted figures'.
    Validate,
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Usage::Fit => "fit",
            Usage::Validate => "validate",
        })
    }
}

impl Usage {
    /// What a figure of a source of `kind` is for when it does not say.
    pub fn default_for(kind: &str) -> Usage {
        match kind {
            "datasheet" | "measured" => Usage::Fit,
            _ => Usage::Validate,
        }
    }
}

/// What a claim asserts about a / b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClaimKind {
    /// a is better than b (higher throughput, lower latency).
    Greater,
    /// a / b is `value` within a relative `tolerance`.
    Ratio { value: f64, tolerance: f64 },
}

#[derive(Debug, Clone)]
pub struct Claim {
    pub text: String,
    pub metric: Metric,
    pub kind: ClaimKind,
    pub a: Case,
    pub b: Case,
    pub origin: String,
}

/// One data file, checked.
#[derive(Debug, Clone)]
pub struct DataSet {
    pub path: PathBuf,
    pub source: Source,
    pub figures: Vec<Figure>,
    pub claims: Vec<Claim>,
}

const KINDS: [&str; 4] = ["review", "datasheet", "measured", "findings"];

/// The largest figure read, in the metric's base unit (bytes/s, IOPS, ns): far beyond any
/// storage device, so a typo or a unit mix-up. A claim's ratio is bounded by it too.
const MAX_BASE: f64 = 1e15;

/// A number from a data file as it reads there: `1e308`, not its 309 digits.
fn shown(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

impl DataSet {
    /// Reads and checks a data file.
    pub fn read(path: &Path) -> Result<DataSet, DataError> {
        let p = path.display().to_string();
        let file_err = |msg: String| DataError::File {
            path: p.clone(),
            msg,
        };
        let meta = std::fs::metadata(path).map_err(|e| file_err(e.to_string()))?;
        if !meta.is_file() {
            return Err(file_err("not a regular file".into()));
        }
        if meta.len() > MAX_FILE {
            return Err(file_err(format!(
                "{} bytes; a data file is at most {MAX_FILE}",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| file_err(e.to_string()))?;
        DataSet::parse(path, &text)
    }

    /// Checks the text of a data file (`path` names it in errors).
    pub fn parse(path: &Path, text: &str) -> Result<DataSet, DataError> {
        let p = path.display().to_string();
        let raw: RawFile = toml::from_str(text).map_err(|e| DataError::File {
            path: p.clone(),
            msg: e.to_string().trim_end().replace('\n', " "),
        })?;
        // the lines of the [[figure]] and [[claim]] headers, to name them in errors
        let header_lines = |h: &str| -> Vec<usize> {
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.trim() == h)
                .map(|(i, _)| i + 1)
                .collect()
        };
        let lines = (header_lines("[[figure]]"), header_lines("[[claim]]"));
        DataSet::from_raw_lines(path, raw, Some(&lines))
    }

    /// Checks a data file already read (`path` names it in errors).
    pub fn from_raw(path: &Path, raw: RawFile) -> Result<DataSet, DataError> {
        DataSet::from_raw_lines(path, raw, None)
    }

    /// [`DataSet::from_raw`], naming the line of a figure's or claim's header in errors when
    /// `lines` gives them.
    fn from_raw_lines(
        path: &Path,
        raw: RawFile,
        lines: Option<&(Vec<usize>, Vec<usize>)>,
    ) -> Result<DataSet, DataError> {
        let p = path.display().to_string();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| p.clone());
        if !KINDS.contains(&raw.source.kind.as_str()) {
            return Err(DataError::File {
                path: p,
                msg: format!(
                    "source.kind {:?}: expected one of {}",
                    raw.source.kind,
                    KINDS.join(", ")
                ),
            });
        }
        let mut figures = Vec::with_capacity(raw.figures.len());
        for (i, f) in raw.figures.iter().enumerate() {
            let mut item = match &f.id {
                Some(id) => format!("figure {id:?}"),
                None => format!("figure {}", i + 1),
            };
            if let Some(l) = lines.and_then(|l| l.0.get(i)) {
                item.push_str(&format!(" (line {l})"));
            }
            let err = |msg: String| DataError::Item {
                path: p.clone(),
                item: item.clone(),
                msg,
            };
            let case = f.case().parse().map_err(err)?;
            let metric = Metric::from_str(&f.metric).map_err(err)?;
            if metric == Metric::Lat && case.after_bytes.is_some() {
                return Err(err(
                    "after applies to rates (bw, iops): a latency figure is over the whole test"
                        .into(),
                ));
            }
            let factor = unit_factor(metric, &f.unit).map_err(err)?;
            if !(f.value.is_finite() && f.value > 0.0) {
                return Err(err(format!(
                    "value {} must be a positive number",
                    shown(f.value)
                )));
            }
            if f.value * factor > MAX_BASE {
                return Err(err(format!(
                    "value = {:.3e} {} is beyond any storage device",
                    f.value, f.unit
                )));
            }
            let bound = match f.bound.as_deref() {
                None => Bound::Exact,
                Some("lower") => Bound::Lower,
                Some("upper") => Bound::Upper,
                Some(b) => return Err(err(format!("bound {b:?}: expected lower or upper"))),
            };
            let usage = match f.usage.as_deref() {
                None => Usage::default_for(&raw.source.kind),
                Some("fit") => Usage::Fit,
                Some("validate") => Usage::Validate,
                Some(u) => return Err(err(format!("use {u:?}: expected fit or validate"))),
            };
            if raw.source.kind == "findings" && usage == Usage::Fit {
                return Err(err(
                    "use \"fit\": a findings file is never fitted to (use = \"validate\")".into(),
                ));
            }
            figures.push(Figure {
                case,
                metric,
                value: f.value * factor,
                bound,
                usage,
                raw: f.clone(),
                origin: format!("{name}#{}", i + 1),
            });
        }
        let mut claims = Vec::with_capacity(raw.claims.len());
        for (i, c) in raw.claims.iter().enumerate() {
            let item = match lines.and_then(|l| l.1.get(i)) {
                Some(l) => format!("claim {} (line {l})", i + 1),
                None => format!("claim {}", i + 1),
            };
            let err = |msg: String| DataError::Item {
                path: p.clone(),
                item: item.clone(),
                msg,
            };
            let metric = Metric::from_str(&c.metric).map_err(err)?;
            let kind = match (c.kind.as_str(), c.value, c.tolerance) {
                ("greater", None, None) => ClaimKind::Greater,
                ("greater", _, _) => {
                    return Err(err("a greater claim takes no value or tolerance".into()))
                }
                ("ratio", Some(value), tolerance) => {
                    let tolerance = tolerance.unwrap_or(0.15);
                    if !(value.is_finite() && value > 0.0) {
                        return Err(err(format!(
                            "value {} must be a positive ratio",
                            shown(value)
                        )));
                    }
                    // a figure is at most MAX_BASE and, in bytes/s, IOPS or ns, hardly below 1:
                    // no two storage devices' figures differ by more
                    if !(1.0 / MAX_BASE..=MAX_BASE).contains(&value) {
                        return Err(err(format!(
                            "value = {} is beyond any two storage devices (a ratio within 1e-15 … 1e15)",
                            shown(value)
                        )));
                    }
                    if !(tolerance.is_finite() && (0.0..10.0).contains(&tolerance)) {
                        return Err(err(format!(
                            "tolerance {} must be a fraction (0.15 = ±15 %)",
                            shown(tolerance)
                        )));
                    }
                    ClaimKind::Ratio { value, tolerance }
                }
                ("ratio", None, _) => return Err(err("a ratio claim needs a value".into())),
                (k, _, _) => return Err(err(format!("kind {k:?}: expected greater or ratio"))),
            };
            let a = c.a.parse().map_err(|m| err(format!("a: {m}")))?;
            let b = c.b.parse().map_err(|m| err(format!("b: {m}")))?;
            claims.push(Claim {
                text: c.text.clone(),
                metric,
                kind,
                a,
                b,
                origin: format!("{name}#claim{}", i + 1),
            });
        }
        if figures.is_empty() && claims.is_empty() {
            return Err(DataError::File {
                path: p,
                msg: "holds no [[figure]] and no [[claim]]".into(),
            });
        }
        Ok(DataSet {
            path: path.to_path_buf(),
            source: raw.source,
            figures,
            claims,
        })
    }

    /// The drives the file's figures and claims name.
    pub fn drives(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .figures
            .iter()
            .map(|f| f.case.drive.clone())
            .chain(
                self.claims
                    .iter()
                    .flat_map(|c| [c.a.drive.clone(), c.b.drive.clone()]),
            )
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// Where the two classic reviews' findings live in the repository (and what
/// [`builtin_findings`] holds: the file is built into the binary).
pub const BUILTIN_FINDINGS_PATH: &str = "data/published/seed-findings.toml";

/// The text of [`BUILTIN_FINDINGS_PATH`] as it was when ssdlab was built.
pub const BUILTIN_FINDINGS_TEXT: &str = include_str!("../../../data/published/seed-findings.toml");

/// The two classic reviews' findings as claims per drive (Review A: Vertex 450 RAID 0 stripes
/// and queue depths; Review B: 512-B- vs 4 KiB-aligned random writes on the classic drives),
/// built into the binary so that a study can check its drive's model against them wherever it
/// runs. Origins read `seed-findings.toml#claimN`, as `ssdlab validate --against` names them.
pub fn builtin_findings() -> DataSet {
    DataSet::parse(Path::new("seed-findings.toml"), BUILTIN_FINDINGS_TEXT)
        .expect("the built-in findings are checked by the tests")
}

impl Claim {
    /// The drives the claim's two workloads run on.
    pub fn drives(&self) -> [&str; 2] {
        [self.a.drive.as_str(), self.b.drive.as_str()]
    }
}

/// Writes a data file (measured figures) as TOML.
pub fn to_toml(raw: &RawFile) -> String {
    toml::to_string_pretty(raw).expect("a data file serialises")
}

/// The data files `args` name (`calibrate --from`, `validate --against`): a directory stands
/// for every `.toml` file in it (sorted; at least one), a file for itself. Errors begin with
/// `flag`.
pub fn data_paths(args: &[PathBuf], flag: &str) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in args {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{flag} {}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|q| q.extension().is_some_and(|x| x == "toml") && q.is_file())
                .collect();
            if v.is_empty() {
                return Err(format!("{flag} {}: holds no .toml data file", p.display()));
            }
            v.sort();
            out.extend(v);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn data_paths_expand_directories() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let e = data_paths(std::slice::from_ref(&empty), "--from").unwrap_err();
        assert_eq!(
            e,
            format!("--from {}: holds no .toml data file", empty.display())
        );
        std::fs::write(dir.path().join("b.toml"), "").unwrap();
        std::fs::write(dir.path().join("a.toml"), "").unwrap();
        std::fs::write(dir.path().join("c.txt"), "").unwrap();
        let got = data_paths(&[dir.path().to_path_buf(), "x.toml".into()], "--from").unwrap();
        assert_eq!(
            got,
            vec![
                dir.path().join("a.toml"),
                dir.path().join("b.toml"),
                PathBuf::from("x.toml")
            ]
        );
    }

    use super::*;

    fn parse(text: &str) -> Result<DataSet, DataError> {
        DataSet::parse(Path::new("t.toml"), text)
    }

    const HEAD: &str = "[source]\ntitle = \"t\"\nkind = \"review\"\n";

    #[test]
    fn a_figure_is_read_in_base_units_with_its_defaults() {
        let d = parse(&format!(
            "{HEAD}[[figure]]\ndrive = \"c300-256g\"\nmetric = \"bw\"\nvalue = 162.5\nunit = \"MB/s\"\nrw = \"randwrite\"\nbs = \"4k\"\nqd = 3\nspan = \"8g\"\nalign = \"512\"\ntime = \"180s\"\n"
        ))
        .unwrap();
        let f = &d.figures[0];
        assert_eq!(f.value, 162.5e6);
        assert_eq!(f.case.bs, 4096);
        assert_eq!(f.case.align, 512);
        assert_eq!(f.case.span, Some(8 << 30));
        assert_eq!(f.case.state, Precondition::Fresh);
        assert_eq!(f.case.time_ns, 180_000_000_000);
        assert_eq!(f.case.family(), Family::RandomWrite);
        assert_eq!(f.origin, "t.toml#1");
    }

    #[test]
    fn a_rate_after_a_cache_keeps_its_size_and_a_latency_takes_none() {
        let fig = |metric: &str, unit: &str| {
            format!(
                "{HEAD}[[figure]]\ndrive = \"d\"\nmetric = \"{metric}\"\nvalue = 1.0\nunit = \"{unit}\"\nrw = \"write\"\nbs = \"1m\"\nqd = 1\ntime = \"60s\"\nafter = \"160000000000\"\n"
            )
        };
        let d = parse(&fig("bw", "MB/s")).unwrap();
        assert_eq!(d.figures[0].case.after_bytes, Some(160_000_000_000));
        assert!(d.figures[0].case.label().ends_with("after 149.01 GiB"));
        let e = parse(&fig("lat", "ms")).unwrap_err().to_string();
        assert!(
            e.contains("figure 1") && e.contains("after applies to rates"),
            "{e}"
        );
        let e = parse(&fig("bw", "MB/s").replace("160000000000", "0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("after must be greater than 0"), "{e}");
    }

    #[test]
    fn bad_figures_name_the_field_at_fault() {
        let fig = |extra: &str| {
            format!(
                "{HEAD}[[figure]]\ndrive = \"x\"\nrw = \"randread\"\nbs = \"4k\"\nqd = 1\n{extra}\n"
            )
        };
        for (extra, want) in [
            (
                "metric = \"bw\"\nvalue = 1.0\nunit = \"IOPS\"",
                "unit \"IOPS\" for metric bw",
            ),
            (
                "metric = \"speed\"\nvalue = 1.0\nunit = \"MB/s\"",
                "metric \"speed\"",
            ),
            (
                "metric = \"iops\"\nvalue = -3.0\nunit = \"IOPS\"",
                "must be a positive",
            ),
            (
                "metric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\nrwmixread = 70",
                "rwmixread",
            ),
            (
                "metric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\nstate = \"warm\"",
                "unknown state",
            ),
            (
                "metric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\ndrives = 2",
                "needs a stripe",
            ),
            (
                "metric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\nspeed = 2",
                "unknown field",
            ),
            (
                "metric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\nadapter = \"hba\"",
                "unknown adapter",
            ),
            (
                "metric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\nadapter_cache = \"64m\"",
                "give drives > 1",
            ),
        ] {
            let e = parse(&fig(extra)).unwrap_err().to_string();
            assert!(e.contains(want), "{extra}: {e}");
            assert!(e.starts_with("t.toml"), "{e}");
        }
    }

    #[test]
    fn a_figure_may_name_its_arrays_host_adapter() {
        let d = parse(&format!(
            "{HEAD}[[figure]]\ndrive = \"c300-256g\"\nmetric = \"iops\"\nvalue = 5.0\nunit = \"IOPS\"\nrw = \"randwrite\"\nbs = \"4k\"\nqd = 2\ndrives = 2\nstripe = \"8k\"\nadapter = \"chipset\"\nadapter_cache = \"256m\"\n[[figure]]\ndrive = \"c300-256g\"\nmetric = \"iops\"\nvalue = 5.0\nunit = \"IOPS\"\nrw = \"randwrite\"\nbs = \"4k\"\nqd = 2\n"
        ))
        .unwrap();
        let a = &d.figures[0].case.adapter;
        assert_eq!(a.model, Some(AdapterModel::Chipset));
        assert_eq!(a.cache_bytes, Some(256 << 20));
        assert!(d.figures[0]
            .case
            .label()
            .contains("adapter chipset cache 256 MiB"));
        assert!(d.figures[1].case.adapter.is_default());
    }

    #[test]
    fn a_figure_is_fitted_or_held_out() {
        let fig = |kind: &str, extra: &str| {
            format!(
                "[source]\ntitle = \"t\"\nkind = \"{kind}\"\n[[figure]]\ndrive = \"x\"\nmetric = \"iops\"\nvalue = 3.0\nunit = \"IOPS\"\nrw = \"randwrite\"\nbs = \"4k\"\nqd = 1\n{extra}\n"
            )
        };
        let usage = |kind: &str, extra: &str| parse(&fig(kind, extra)).map(|d| d.figures[0].usage);
        assert_eq!(usage("review", "").unwrap(), Usage::Validate);
        assert_eq!(usage("datasheet", "").unwrap(), Usage::Fit);
        assert_eq!(usage("measured", "").unwrap(), Usage::Fit);
        assert_eq!(usage("review", "use = \"fit\"").unwrap(), Usage::Fit);
        assert_eq!(
            usage("datasheet", "use = \"validate\"").unwrap(),
            Usage::Validate
        );
        let e = usage("findings", "use = \"fit\"").unwrap_err().to_string();
        assert!(e.contains("never fitted"), "{e}");
        let e = usage("review", "use = \"maybe\"").unwrap_err().to_string();
        assert!(e.contains("expected fit or validate"), "{e}");
        let d = parse(&fig("review", "pattern = \"compress:50\"\nquote = \"q\"")).unwrap();
        assert_eq!(d.figures[0].case.pattern, Pattern::Compress(50));
        assert!(d.figures[0].case.label().contains("compress:50"));
        assert!(parse(&fig("review", "pattern = \"sometimes\"")).is_err());
    }

    #[test]
    fn the_built_in_findings_are_the_repositorys_file() {
        let d = builtin_findings();
        assert_eq!(d.source.kind, "findings");
        // Review A's claims on the Vertex 450, Review B's on the classic drives, two bounds.
        let on = |drive: &str| {
            d.claims
                .iter()
                .filter(|c| c.drives().contains(&drive))
                .count()
        };
        assert_eq!(on("vertex450-128g"), 17);
        assert!(on("c300-256g") >= 4, "{}", on("c300-256g"));
        assert_eq!(d.figures.len(), 2);
        assert!(d.figures.iter().all(|f| f.bound == Bound::Lower));
        assert_eq!(d.claims[1].origin, "seed-findings.toml#claim2");
        // the copy in the binary is the file in the repository
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(BUILTIN_FINDINGS_PATH);
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            BUILTIN_FINDINGS_TEXT
        );
    }

    #[test]
    fn claims_are_checked() {
        let side = "{ drive = \"a\", rw = \"randwrite\", bs = \"4k\", qd = 2 }";
        let ok = parse(&format!(
            "[source]\ntitle = \"t\"\nkind = \"findings\"\n[[claim]]\ntext = \"x\"\nmetric = \"iops\"\nkind = \"ratio\"\nvalue = 4.25\na = {side}\nb = {side}\n"
        ))
        .unwrap();
        assert_eq!(
            ok.claims[0].kind,
            ClaimKind::Ratio {
                value: 4.25,
                tolerance: 0.15
            }
        );
        let e = parse(&format!(
            "[source]\ntitle = \"t\"\nkind = \"findings\"\n[[claim]]\ntext = \"x\"\nmetric = \"iops\"\nkind = \"ratio\"\na = {side}\nb = {side}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("needs a value"), "{e}");
        // absurd numbers are refused as written, naming the claim's line, never in 309 digits
        for (fields, want) in [
            (
                "value = 1e308",
                "value = 1e308 is beyond any two storage devices",
            ),
            (
                "value = 1e-300",
                "value = 1e-300 is beyond any two storage devices",
            ),
            ("value = 2e15", "value = 2e15 is beyond"),
            ("value = -1e308", "value -1e308 must be a positive ratio"),
            ("value = 2.0\ntolerance = 1e308", "tolerance 1e308 must be"),
            ("value = 2.0\ntolerance = -0.5", "tolerance -0.5 must be"),
        ] {
            let e = parse(&format!(
                "[source]\ntitle = \"t\"\nkind = \"findings\"\n[[claim]]\ntext = \"x\"\nmetric = \"iops\"\nkind = \"ratio\"\n{fields}\na = {side}\nb = {side}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains("claim 1 (line 4): "), "{fields}: {e}");
            assert!(e.contains(want), "{fields}: {e}");
            assert!(e.len() < 200, "{fields}: {e}");
        }
        let e = parse(&format!(
            "{HEAD}[[figure]]\ndrive = \"x\"\nmetric = \"iops\"\nvalue = -1e308\nunit = \"IOPS\"\nrw = \"randread\"\nbs = \"4k\"\nqd = 1\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("value -1e308 must be a positive number"), "{e}");
        // the bound keeps every ratio a data file can state
        assert!(parse(&format!(
            "[source]\ntitle = \"t\"\nkind = \"findings\"\n[[claim]]\ntext = \"x\"\nmetric = \"iops\"\nkind = \"ratio\"\nvalue = 0.002\na = {side}\nb = {side}\n"
        ))
        .is_ok());
        let e = parse("[source]\ntitle = \"t\"\nkind = \"review\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [[figure]]"), "{e}");
    }
}
