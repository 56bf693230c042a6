//! The sweep file (TOML): what to run. See `docs/SWEEPS.md` for the format.

use crate::SweepError;
use serde::Deserialize;
use ssdlab_ssdsim::{AdapterChoice, AdapterModel};
use ssdlab_workload::replay::Skip;
use ssdlab_workload::{
    line_of, parse_duration, parse_size, Field, Flags, Naming, Pattern, ReplaySpec, RwMode,
    StopCondition, TomlNaming, Trace, WorkloadSpec,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A size written as a number of bytes or a string with a unit ("4k", "8GiB").
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum SizeVal {
    Int(u64),
    Str(String),
}

impl SizeVal {
    fn bytes(&self, field: &str) -> Result<u64, SweepError> {
        match self {
            SizeVal::Int(v) => Ok(*v),
            SizeVal::Str(s) => parse_size(s).map_err(|e| SweepError::field(field, e.to_string())),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    name: String,
    #[serde(default)]
    description: Option<String>,
    time: String,
    #[serde(default)]
    ramp: Option<String>,
    #[serde(default)]
    repeats: Option<u32>,
    qd: Vec<u32>,
    #[serde(default)]
    workloads: Option<Vec<String>>,
    #[serde(default)]
    workload: Option<Vec<RawWorkload>>,
    #[serde(default)]
    target: Option<Vec<RawTarget>>,
    /// Default stripes for array targets that give none.
    #[serde(default)]
    stripes: Option<Vec<SizeVal>>,
    /// Default region length for every workload.
    #[serde(default)]
    span: Option<Spanned<SizeVal>>,
    #[serde(default)]
    seed: Option<u64>,
    /// `fresh` (default) or `carry`.
    #[serde(default)]
    history: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: String,
    #[serde(default)]
    rw: Option<Spanned<String>>,
    #[serde(default)]
    bs: Option<Spanned<SizeVal>>,
    /// Replay this trace (fio iolog v2/v3 or blktrace) instead of generating ops.
    #[serde(default)]
    trace: Option<PathBuf>,
    #[serde(default)]
    no_stall: Option<bool>,
    #[serde(default)]
    time_scale: Option<u32>,
    #[serde(default)]
    replay_skip: Option<String>,
    #[serde(default)]
    align: Option<Spanned<SizeVal>>,
    #[serde(default)]
    read_pct: Option<Spanned<u8>>,
    #[serde(default)]
    random_pct: Option<Spanned<u8>>,
    #[serde(default)]
    offset: Option<Spanned<SizeVal>>,
    #[serde(default)]
    span: Option<Spanned<SizeVal>>,
    #[serde(default)]
    jobs: Option<Spanned<u32>>,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    time: Option<String>,
    #[serde(default)]
    ramp: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    sim: Option<String>,
    #[serde(default)]
    drives: Option<u32>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    overrides: Option<BTreeMap<String, toml::Value>>,
    /// Simulated arrays: the host adapter (`chipset` or `none`; default for the drive) and
    /// settings of it changed.
    #[serde(default)]
    adapter: Option<String>,
    #[serde(default)]
    adapter_cache: Option<SizeVal>,
    #[serde(default)]
    adapter_overhead: Option<String>,
    #[serde(default)]
    uplink: Option<SizeVal>,
    #[serde(default)]
    trim_passthrough: Option<bool>,
    #[serde(default)]
    path: Option<PathBuf>,
    #[serde(default)]
    members: Option<Vec<PathBuf>>,
    #[serde(default)]
    stripes: Option<Vec<SizeVal>>,
    #[serde(default)]
    baseline: Option<bool>,
    /// The host a real target is local to (its points run only on ranks of that host).
    #[serde(default)]
    host: Option<String>,
}

/// A sweep file as a typed value, for sweeps made in code (the built-in studies): the keys of
/// the file's format (`docs/SWEEPS.md`) that such sweeps use, in the file's order; sizes and
/// durations as the file writes them ("8GiB", "100ms"). A [`SweepSpec`] keeps its file's text
/// (stored with the results, compared when a sweep resumes, shown and parsed again by reports),
/// so [`SweepFile::spec_from_flags`] writes that text with the TOML serializer and validates it
/// as any sweep file is: the sweep is exactly the one its stored text describes.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SweepFile {
    /// Comment lines at the top of the file (each without its `# `).
    #[serde(skip)]
    pub comment: Vec<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Measured time per point.
    pub time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<String>,
    /// Default region length of every workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
    pub qd: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// Seed of every workload's random stream (the sweep file's `seed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Workload shorthands (`4k-randread`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<String>,
    /// `[[workload]]` tables, after the shorthands.
    #[serde(rename = "workload", skip_serializing_if = "Vec::is_empty")]
    pub workload_tables: Vec<WorkloadTable>,
    /// `[[target]]` tables.
    #[serde(rename = "target")]
    pub targets: Vec<TargetTable>,
}

/// A `[[workload]]` table of a [`SweepFile`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadTable {
    pub name: String,
    pub rw: RwMode,
    pub bs: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub align: Option<String>,
}

/// A `[[target]]` table of a [`SweepFile`]: `sim` (simulated drives), `path` (one real file or
/// device) or `members` (a RAID 0 of real ones).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TargetTable {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sim: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<PathBuf>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<DriveState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drives: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stripes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<bool>,
}

impl SweepFile {
    /// The file's text: the comment lines, then the keys and tables.
    pub fn to_toml(&self) -> Result<String, SweepError> {
        let body = toml::to_string(self).map_err(|e| SweepError::Toml(e.to_string()))?;
        let mut text: String = self.comment.iter().map(|l| format!("# {l}\n")).collect();
        text.push_str(&body);
        Ok(text)
    }

    /// The sweep of a built-in study, written from its command line: its text checked as
    /// [`SweepSpec::parse_from_flags`] checks it (relative paths against `base_dir`).
    pub fn spec_from_flags(&self, base_dir: &Path) -> Result<SweepSpec, SweepError> {
        SweepSpec::parse_from_flags(&self.to_toml()?, base_dir)
    }
}

/// Preconditioning state of simulated drives before each point.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum DriveState {
    /// Trimmed, as new.
    Fresh,
    /// Sequentially filled once.
    Full,
    /// Random-write steady state.
    Steady,
}

impl DriveState {
    pub fn as_str(&self) -> &'static str {
        match self {
            DriveState::Fresh => "fresh",
            DriveState::Full => "full",
            DriveState::Steady => "steady",
        }
    }
}

/// Where a target's I/O goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum PointTarget {
    /// `drives` simulated drives of a preset (1 = a single drive, more = a RAID 0 array).
    Sim {
        preset: String,
        drives: u32,
        state: DriveState,
        /// Preset fields overridden (`key = value`, as `ssdlab run --set` takes them).
        overrides: BTreeMap<String, String>,
        /// The host adapter as asked for (left out of the point key when nothing is asked: a
        /// single drive's key stays what it was before the adapter keys existed).
        #[serde(default, skip_serializing_if = "AdapterChoice::is_default")]
        adapter: AdapterChoice,
        /// An array with no adapter named: it runs behind the default adapter of its drive
        /// (chipset RAID for SATA drives), which arrays did not have before the adapter
        /// existed; in the point key so that such points of older stores run again.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        default_adapter: bool,
    },
    /// Real files or block devices: one path = a single target, several = RAID 0 members in order.
    /// Relative paths are resolved against the sweep file's directory.
    Real { paths: Vec<PathBuf> },
}

impl PointTarget {
    /// Number of drives (members).
    pub fn drives(&self) -> u32 {
        match self {
            PointTarget::Sim { drives, .. } => *drives,
            PointTarget::Real { paths } => paths.len() as u32,
        }
    }

    /// True for simulated targets (run in parallel).
    pub fn is_sim(&self) -> bool {
        matches!(self, PointTarget::Sim { .. })
    }
}

/// One target of the sweep, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTarget {
    /// Unique label used in reports.
    pub label: String,
    pub kind: PointTarget,
    /// Stripe sizes in bytes (empty for single-drive targets).
    pub stripes: Vec<u64>,
    /// True for baseline targets (other targets' gains are computed against one).
    pub baseline: bool,
    /// Label of the baseline this target is compared with (None for baselines).
    pub baseline_label: Option<String>,
    /// Real targets: the host the files or devices are on (`host = "node07"`). Under mpirun its
    /// points run only on ranks of that host, one at a time, alongside other targets; without it
    /// they run on rank 0. Not part of the point key.
    pub host: Option<String>,
}

/// One named workload of the sweep (its `qd` is set per point).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedWorkload {
    pub name: String,
    pub spec: WorkloadSpec,
    /// Its settings as the sweep file wrote them (key, value, line), for messages about them.
    pub naming: TomlNaming,
}

/// The keys a sweep file names a workload's settings by (those not here: the flag's name).
const SWEEP_KEYS: [(Field, &str); 4] = [
    (Field::ReadPct, "read_pct"),
    (Field::RandomPct, "random_pct"),
    (Field::Stripe, "stripes"),
    (Field::Qd, "qd"),
];

/// Notes in `n` where a key of the sweep file was written (its value as written, its line).
fn note_key<T>(n: &mut TomlNaming, text: &str, f: Field, key: &str, v: Option<&Spanned<T>>) {
    if let Some(v) = v {
        let span = v.span();
        let written = text.get(span.clone()).unwrap_or("");
        n.set(f, key, written, line_of(text, span.start));
    }
}

/// What a simulated drive has been through when a point starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum History {
    /// Every point starts from its own copy of the drive in the target's `state`.
    #[default]
    Fresh,
    /// The points of one target (one stripe, one repeat) run in order — workload by workload,
    /// QD by QD — on one drive that keeps what each point did to it, the way a review runs its
    /// queue depths back to back on the same drive. Real targets always keep their history.
    Carry,
}

impl History {
    pub fn as_str(self) -> &'static str {
        match self {
            History::Fresh => "fresh",
            History::Carry => "carry",
        }
    }
}

/// A validated sweep: the matrix targets × stripes × workloads × QDs × repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    pub name: String,
    pub description: Option<String>,
    pub qds: Vec<u32>,
    pub repeats: u32,
    pub workloads: Vec<NamedWorkload>,
    pub targets: Vec<SweepTarget>,
    /// Whether simulated points start fresh or carry the drive's history from point to point.
    pub history: History,
    /// The file's text, stored with the results.
    pub source: String,
    /// A built-in study's sweep, written from its command line: messages about a point's
    /// settings name the flags (`--qd 3`), not the keys of a file the user never saw.
    pub from_flags: bool,
}

/// The workload shorthands always known by name.
pub const SHORTHANDS: [&str; 4] = [
    "4k-randread",
    "4k-randwrite",
    "128k-seqread",
    "128k-seqwrite",
];

/// Access modes a shorthand `<bs>-<mode>` may use.
const SHORTHAND_MODES: [(&str, RwMode); 8] = [
    ("randread", RwMode::Randread),
    ("randwrite", RwMode::Randwrite),
    ("seqread", RwMode::Read),
    ("seqwrite", RwMode::Write),
    ("randrw", RwMode::Randrw),
    ("seqrw", RwMode::Rw),
    ("read", RwMode::Read),
    ("write", RwMode::Write),
];

pub use ssdlab_workload::edit_distance;

/// The candidate nearest to `word`, if it is near enough to be a plausible typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Parses a shorthand like `4k-randread` or `64k-seqwrite` into (rw, bs).
pub fn parse_shorthand(name: &str) -> Option<(RwMode, u64)> {
    let (bs, mode) = name.trim().split_once('-')?;
    let bs = parse_size(bs).ok().filter(|&b| b > 0)?;
    let mode = mode.to_ascii_lowercase();
    let rw = SHORTHAND_MODES.iter().find(|(m, _)| *m == mode)?.1;
    Some((rw, bs))
}

/// Largest sweep file read (real ones are a few KiB).
const MAX_SWEEP_FILE: u64 = 1 << 20;

/// Longest sweep name (it names the default store file).
const MAX_NAME: usize = 100;

/// A sweep name is used as a file name (the default store) and in reports: it must be a plain
/// name, not a path.
fn check_name(name: &str) -> Result<(), SweepError> {
    let why = if name.is_empty() {
        "must not be empty".to_string()
    } else if name.len() > MAX_NAME {
        format!("is {} bytes long; use at most {MAX_NAME}", name.len())
    } else if name.contains(['/', '\\']) {
        format!("'{name}' is a path; use a plain name (the store is NAME.sqlite)")
    } else if name.starts_with('.') {
        format!("'{name}' starts with a dot; use a plain name")
    } else if name.chars().any(char::is_control) {
        "contains control characters".to_string()
    } else {
        return Ok(());
    };
    Err(SweepError::field("name", why))
}

fn dur(field: &str, s: &str) -> Result<u64, SweepError> {
    parse_duration(s).map_err(|e| SweepError::field(field, e.to_string()))
}

fn no_dups<T: PartialEq + std::fmt::Debug>(
    field: &str,
    items: &[T],
    show: impl Fn(&T) -> String,
) -> Result<(), SweepError> {
    for (i, a) in items.iter().enumerate() {
        if items[..i].contains(a) {
            return Err(SweepError::field(
                field,
                format!("{} is listed twice", show(a)),
            ));
        }
    }
    Ok(())
}

fn toml_value_string(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl SweepSpec {
    /// How the sweep file names the settings of its workload `name`: the keys it wrote them
    /// with, and where (`bs = "3" (line 8)`), for messages about a point of that workload.
    /// A built-in study's ([`SweepSpec::from_flags`]) names the flags.
    pub fn naming_of(&self, name: &str) -> Box<dyn Naming + '_> {
        if self.from_flags {
            return Box::new(Flags);
        }
        match self.workloads.iter().find(|w| w.name == name) {
            Some(w) => Box::new(&w.naming),
            None => Box::new(TomlNaming {
                keys: SWEEP_KEYS.to_vec(),
                ..Default::default()
            }),
        }
    }

    /// Reads and validates a sweep file; relative target paths are resolved against its directory.
    pub fn from_file(path: &Path) -> Result<SweepSpec, SweepError> {
        let meta = std::fs::metadata(path).map_err(|e| SweepError::File {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        if !meta.is_file() {
            return Err(SweepError::File {
                path: path.display().to_string(),
                why: "not a regular file".into(),
            });
        }
        if meta.len() > MAX_SWEEP_FILE {
            return Err(SweepError::File {
                path: path.display().to_string(),
                why: format!(
                    "{} bytes; a sweep file is at most {MAX_SWEEP_FILE}",
                    meta.len()
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| SweepError::File {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Self::parse(&text, base).map_err(|e| e.in_file(path))
    }

    /// Parses and validates sweep file text; relative paths are resolved against `base_dir`.
    pub fn parse(text: &str, base_dir: &Path) -> Result<SweepSpec, SweepError> {
        Self::parse_as(text, base_dir, false)
    }

    /// [`SweepSpec::parse`] for the sweep of a built-in study, written from its command line:
    /// its messages name the flags ([`SweepSpec::from_flags`]).
    pub fn parse_from_flags(text: &str, base_dir: &Path) -> Result<SweepSpec, SweepError> {
        Self::parse_as(text, base_dir, true)
    }

    fn parse_as(text: &str, base_dir: &Path, from_flags: bool) -> Result<SweepSpec, SweepError> {
        let raw: RawSweep =
            toml::from_str(text).map_err(|e| SweepError::Toml(e.to_string().trim().to_string()))?;
        let name = raw.name.trim().to_string();
        check_name(&name)?;
        let time_ns = dur("time", &raw.time)?;
        if time_ns == 0 {
            return Err(SweepError::field("time", "must be greater than 0"));
        }
        let ramp_ns = match &raw.ramp {
            Some(r) => dur("ramp", r)?,
            None => 0,
        };
        let history = match raw.history.as_deref().map(str::trim) {
            None => History::Fresh,
            Some(h) if h.eq_ignore_ascii_case("fresh") => History::Fresh,
            Some(h) if h.eq_ignore_ascii_case("carry") => History::Carry,
            Some(h) => {
                return Err(SweepError::field(
                    "history",
                    format!(
                        "unknown value '{h}'; use \"fresh\" (every point starts from its own copy of the drive) or \"carry\" (points run in order on one drive per target)"
                    ),
                ))
            }
        };
        let repeats = raw.repeats.unwrap_or(1);
        if repeats == 0 {
            return Err(SweepError::field("repeats", "must be at least 1"));
        }
        if raw.qd.is_empty() {
            return Err(SweepError::field(
                "qd",
                "the list is empty; give at least one queue depth, e.g. qd = [1, 4, 32]",
            ));
        }
        if raw.qd.contains(&0) {
            return Err(SweepError::field(
                "qd",
                "queue depths must be greater than 0",
            ));
        }
        no_dups("qd", &raw.qd, |q| format!("queue depth {q}"))?;
        let span = raw
            .span
            .as_ref()
            .map(|s| s.get_ref().bytes("span"))
            .transpose()?;
        let mut base_naming = TomlNaming {
            keys: SWEEP_KEYS.to_vec(),
            ..Default::default()
        };
        note_key(
            &mut base_naming,
            text,
            Field::Span,
            "span",
            raw.span.as_ref(),
        );
        if span == Some(0) {
            return Err(SweepError::field("span", "must be greater than 0"));
        }
        let base = WorkloadSpec {
            stop: StopCondition {
                time_ns: Some(time_ns),
                ..Default::default()
            },
            ramp_ns,
            span,
            seed: raw.seed.unwrap_or(WorkloadSpec::default().seed),
            ..Default::default()
        };

        // Workloads: shorthands first, then [[workload]] tables, in file order.
        let mut workloads = Vec::new();
        if let Some(list) = &raw.workloads {
            if list.is_empty() && raw.workload.as_ref().map(Vec::len).unwrap_or(0) == 0 {
                return Err(SweepError::field(
                    "workloads",
                    format!(
                        "the list is empty; use shorthands such as {}",
                        SHORTHANDS.join(", ")
                    ),
                ));
            }
            for w in list {
                let Some((rw, bs)) = parse_shorthand(w) else {
                    let prefix = w.split_once('-').map(|(b, _)| b).unwrap_or("4k");
                    let generated: Vec<String> = SHORTHAND_MODES
                        .iter()
                        .map(|(m, _)| format!("{prefix}-{m}"))
                        .collect();
                    let hint = nearest(
                        w,
                        SHORTHANDS
                            .iter()
                            .copied()
                            .chain(generated.iter().map(String::as_str)),
                    )
                    .filter(|n| !n.eq_ignore_ascii_case(w.trim()))
                    .map(|n| format!("; did you mean {n}?"))
                    .unwrap_or_else(|| {
                        format!(
                            "; shorthands are <size>-<mode> with a size above 0, such as {} (modes: {})",
                            SHORTHANDS.join(", "),
                            SHORTHAND_MODES.map(|m| m.0).join(", ")
                        )
                    });
                    return Err(SweepError::field(
                        "workloads",
                        format!("unknown workload '{w}'{hint}"),
                    ));
                };
                let spec = WorkloadSpec {
                    rw,
                    read_pct: rw.fixed_read_pct().unwrap_or(50),
                    random_pct: rw.default_random_pct(),
                    bs,
                    align: bs,
                    ..base.clone()
                };
                workloads.push(NamedWorkload {
                    name: w.trim().to_ascii_lowercase(),
                    spec,
                    naming: base_naming.clone(),
                });
            }
        }
        for w in raw.workload.iter().flatten() {
            workloads.push(Self::table_workload(
                w,
                &base,
                base_dir,
                text,
                &base_naming,
            )?);
        }
        if workloads.is_empty() {
            return Err(SweepError::field(
                "workloads",
                format!(
                    "no workloads; give workloads = [\"{}\", ...] or [[workload]] tables",
                    SHORTHANDS[0]
                ),
            ));
        }
        no_dups(
            "workloads",
            &workloads.iter().map(|w| w.name.clone()).collect::<Vec<_>>(),
            |n| format!("workload '{n}'"),
        )?;
        for w in &workloads {
            let mut s = w.spec.clone();
            s.qd = raw.qd[0];
            s.validate().map_err(|e| {
                let why = match from_flags {
                    true => e.to_string(),
                    false => e.render(&w.naming),
                };
                SweepError::field(&format!("workload '{}'", w.name), why)
            })?;
        }

        let default_stripes = match &raw.stripes {
            Some(v) => Some(Self::stripes("stripes", v)?),
            None => None,
        };
        let targets = Self::targets(
            raw.target.as_deref().unwrap_or(&[]),
            default_stripes.as_deref(),
            base_dir,
        )?;

        Ok(SweepSpec {
            name,
            description: raw.description,
            qds: raw.qd,
            repeats,
            workloads,
            targets,
            history,
            source: text.to_string(),
            from_flags,
        })
    }

    /// A `[[workload]]` that replays a trace: its shape gives the block size, alignment, region
    /// and read share; the sweep's QD bounds the replay's queue depth, its `time` caps it.
    fn trace_workload(
        w: &RawWorkload,
        base: &WorkloadSpec,
        base_dir: &Path,
        naming: TomlNaming,
    ) -> Result<NamedWorkload, SweepError> {
        let name = w.name.trim().to_string();
        let field = |f: &str| format!("workload '{name}'.{f}");
        for (k, set) in [
            ("rw", w.rw.is_some()),
            ("bs", w.bs.is_some()),
            ("align", w.align.is_some()),
            ("read_pct", w.read_pct.is_some()),
            ("random_pct", w.random_pct.is_some()),
            ("span", w.span.is_some()),
            ("pattern", w.pattern.is_some()),
        ] {
            if set {
                return Err(SweepError::field(
                    &field(k),
                    "does not apply to a trace workload (the trace says what it does)",
                ));
            }
        }
        let path = resolve(base_dir, w.trace.as_deref().expect("trace workload"));
        let mut r = ReplaySpec::new(&path);
        r.no_stall = w.no_stall.unwrap_or(false);
        r.time_scale = w.time_scale.unwrap_or(100);
        if let Some(sk) = &w.replay_skip {
            r.skip = Skip::parse(sk).map_err(|e| SweepError::field(&field("replay_skip"), e))?;
        }
        let trace =
            Trace::load(&r).map_err(|e| SweepError::field(&field("trace"), e.to_string()))?;
        r.digest = Some(
            Trace::digest_of(&path)
                .map_err(|e| SweepError::field(&field("trace"), e.to_string()))?,
        );
        let shape = trace.shape();
        let read_pct = shape.read_pct();
        let bs = shape.max_len.max(1);
        let mut spec = WorkloadSpec {
            rw: match read_pct {
                100 => RwMode::Randread,
                0 => RwMode::Randwrite,
                _ => RwMode::Randrw,
            },
            read_pct,
            random_pct: 100,
            bs,
            align: shape.align.min(bs).max(1),
            offset: match &w.offset {
                Some(o) => o.get_ref().bytes(&field("offset"))?,
                None => 0,
            },
            span: Some(shape.end.max(bs)),
            jobs: w.jobs.as_ref().map_or(1, |j| *j.get_ref()),
            seed: w.seed.unwrap_or(base.seed),
            replay: Some(r),
            ..base.clone()
        };
        if let Some(t) = &w.time {
            let t = dur(&field("time"), t)?;
            if t == 0 {
                return Err(SweepError::field(&field("time"), "must be greater than 0"));
            }
            spec.stop.time_ns = Some(t);
        }
        if let Some(rp) = &w.ramp {
            spec.ramp_ns = dur(&field("ramp"), rp)?;
        }
        Ok(NamedWorkload { name, spec, naming })
    }

    fn table_workload(
        w: &RawWorkload,
        base: &WorkloadSpec,
        base_dir: &Path,
        text: &str,
        base_naming: &TomlNaming,
    ) -> Result<NamedWorkload, SweepError> {
        let name = w.name.trim().to_string();
        let field = |f: &str| format!("workload '{name}'.{f}");
        if name.is_empty() {
            return Err(SweepError::field("workload.name", "must not be empty"));
        }
        let mut naming = base_naming.clone();
        let n = &mut naming;
        note_key(n, text, Field::Rw, "rw", w.rw.as_ref());
        note_key(n, text, Field::Bs, "bs", w.bs.as_ref());
        note_key(n, text, Field::Align, "align", w.align.as_ref());
        note_key(n, text, Field::Offset, "offset", w.offset.as_ref());
        note_key(n, text, Field::Span, "span", w.span.as_ref());
        note_key(n, text, Field::Jobs, "jobs", w.jobs.as_ref());
        note_key(n, text, Field::ReadPct, "read_pct", w.read_pct.as_ref());
        note_key(
            n,
            text,
            Field::RandomPct,
            "random_pct",
            w.random_pct.as_ref(),
        );
        if w.trace.is_some() {
            return Self::trace_workload(w, base, base_dir, naming);
        }
        for (k, set) in [
            ("no_stall", w.no_stall.is_some()),
            ("time_scale", w.time_scale.is_some()),
            ("replay_skip", w.replay_skip.is_some()),
        ] {
            if set {
                return Err(SweepError::field(
                    &field(k),
                    "applies to trace workloads (trace = \"FILE\")",
                ));
            }
        }
        let Some(rw) = &w.rw else {
            return Err(SweepError::field(
                &field("rw"),
                "missing: give rw and bs, or trace = \"FILE\"",
            ));
        };
        let Some(bs) = &w.bs else {
            return Err(SweepError::field(
                &field("bs"),
                "missing: give rw and bs, or trace = \"FILE\"",
            ));
        };
        let rw: RwMode = rw
            .get_ref()
            .parse()
            .map_err(|e: ssdlab_workload::SpecError| {
                SweepError::field(&field("rw"), e.render(&naming))
            })?;
        let bs = bs.get_ref().bytes(&field("bs"))?;
        let read_pct = match (
            rw.fixed_read_pct(),
            w.read_pct.as_ref().map(|p| *p.get_ref()),
        ) {
            (Some(_), Some(_)) => {
                return Err(SweepError::field(
                    &field("read_pct"),
                    format!("only applies to mixed workloads (rw or randrw), not to {rw}"),
                ))
            }
            (Some(f), None) => f,
            (None, g) => g.unwrap_or(50),
        };
        let mut spec = WorkloadSpec {
            rw,
            read_pct,
            random_pct: w
                .random_pct
                .as_ref()
                .map_or(rw.default_random_pct(), |p| *p.get_ref()),
            bs,
            align: match &w.align {
                Some(a) => a.get_ref().bytes(&field("align"))?,
                None => bs,
            },
            offset: match &w.offset {
                Some(o) => o.get_ref().bytes(&field("offset"))?,
                None => 0,
            },
            span: match &w.span {
                Some(s) => Some(s.get_ref().bytes(&field("span"))?),
                None => base.span,
            },
            jobs: w.jobs.as_ref().map_or(1, |j| *j.get_ref()),
            pattern: match &w.pattern {
                Some(p) => p
                    .parse::<Pattern>()
                    .map_err(|e| SweepError::field(&field("pattern"), e.to_string()))?,
                None => Pattern::Random,
            },
            seed: w.seed.unwrap_or(base.seed),
            ..base.clone()
        };
        if w.pattern.is_some() && !spec.writes() {
            return Err(SweepError::field(
                &field("pattern"),
                format!("sets the data written, and rw = \"{rw}\" writes nothing"),
            ));
        }
        if let Some(t) = &w.time {
            let t = dur(&field("time"), t)?;
            if t == 0 {
                return Err(SweepError::field(&field("time"), "must be greater than 0"));
            }
            spec.stop.time_ns = Some(t);
        }
        if let Some(r) = &w.ramp {
            spec.ramp_ns = dur(&field("ramp"), r)?;
        }
        Ok(NamedWorkload { name, spec, naming })
    }

    fn stripes(field: &str, v: &[SizeVal]) -> Result<Vec<u64>, SweepError> {
        if v.is_empty() {
            return Err(SweepError::field(
                field,
                "the list is empty; give stripe sizes, e.g. stripes = [\"16k\", \"64k\"]",
            ));
        }
        let mut out = Vec::new();
        for s in v {
            let b = s.bytes(field)?;
            if b == 0 {
                return Err(SweepError::field(
                    field,
                    "a stripe size must be greater than 0",
                ));
            }
            if b % 512 != 0 {
                return Err(SweepError::field(
                    field,
                    format!("stripe size {b} is not a multiple of 512 bytes"),
                ));
            }
            out.push(b);
        }
        no_dups(field, &out, |b| {
            format!("stripe {}", ssdlab_workload::format_size(*b))
        })?;
        Ok(out)
    }

    fn targets(
        raw: &[RawTarget],
        default_stripes: Option<&[u64]>,
        base_dir: &Path,
    ) -> Result<Vec<SweepTarget>, SweepError> {
        if raw.is_empty() {
            return Err(SweepError::field(
                "target",
                "no targets; add [[target]] tables (sim = \"PRESET\" or path = \"FILE\" / members = [...])",
            ));
        }
        let mut out: Vec<SweepTarget> = Vec::new();
        for (i, t) in raw.iter().enumerate() {
            let field = format!("target #{}", i + 1);
            let f = |k: &str| format!("{field}.{k}");
            let kind = match (&t.sim, &t.path, &t.members) {
                (Some(preset), None, None) => {
                    let drives = t.drives.unwrap_or(1);
                    if drives == 0 {
                        return Err(SweepError::field(&f("drives"), "must be at least 1"));
                    }
                    let state = match t.state.as_deref().map(str::to_ascii_lowercase).as_deref() {
                        None | Some("fresh") => DriveState::Fresh,
                        Some("full") => DriveState::Full,
                        Some("steady") => DriveState::Steady,
                        Some(other) => {
                            let hint = nearest(other, ["fresh", "full", "steady"])
                                .map(|n| format!("; did you mean {n}?"))
                                .unwrap_or_default();
                            return Err(SweepError::field(
                                &f("state"),
                                format!(
                                    "unknown state '{other}' (use fresh, full or steady){hint}"
                                ),
                            ));
                        }
                    };
                    if preset.trim().is_empty() {
                        return Err(SweepError::field(&f("sim"), "must name a preset"));
                    }
                    let adapter = AdapterChoice {
                        model: t
                            .adapter
                            .as_deref()
                            .map(|m| m.parse::<AdapterModel>())
                            .transpose()
                            .map_err(|e| SweepError::field(&f("adapter"), e))?,
                        cache_bytes: t
                            .adapter_cache
                            .as_ref()
                            .map(|v| v.bytes(&f("adapter_cache")))
                            .transpose()?,
                        per_request_overhead_ns: t
                            .adapter_overhead
                            .as_deref()
                            .map(|v| dur(&f("adapter_overhead"), v))
                            .transpose()?,
                        uplink_bytes_per_sec: t
                            .uplink
                            .as_ref()
                            .map(|v| v.bytes(&f("uplink")))
                            .transpose()?,
                        trim_passthrough: t.trim_passthrough,
                        host: None,
                    };
                    for (k, set) in [
                        ("adapter_cache", adapter.cache_bytes.is_some()),
                        ("trim_passthrough", adapter.trim_passthrough.is_some()),
                    ] {
                        if set && drives < 2 {
                            return Err(SweepError::field(
                                &f(k),
                                "applies to arrays (drives > 1): it is the RAID driver's",
                            ));
                        }
                    }
                    for (k, v) in [
                        ("adapter_cache", adapter.cache_bytes),
                        ("uplink", adapter.uplink_bytes_per_sec),
                    ] {
                        if v == Some(0) {
                            return Err(SweepError::field(&f(k), "must be greater than 0"));
                        }
                    }
                    PointTarget::Sim {
                        default_adapter: drives > 1 && adapter.model.is_none(),
                        adapter,
                        preset: preset.trim().to_string(),
                        drives,
                        state,
                        overrides: t
                            .overrides
                            .iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), toml_value_string(v)))
                            .collect(),
                    }
                }
                (None, Some(p), None) => {
                    Self::real_only(t, &field)?;
                    PointTarget::Real {
                        paths: vec![resolve(base_dir, p)],
                    }
                }
                (None, None, Some(m)) => {
                    Self::real_only(t, &field)?;
                    if m.is_empty() {
                        return Err(SweepError::field(&f("members"), "the list is empty"));
                    }
                    let paths: Vec<PathBuf> = m.iter().map(|p| resolve(base_dir, p)).collect();
                    no_dups(&f("members"), &paths, |p| format!("member {}", p.display()))?;
                    PointTarget::Real { paths }
                }
                (None, None, None) => {
                    return Err(SweepError::field(
                        &field,
                        "give sim = \"PRESET\", path = \"FILE\" or members = [\"A\", \"B\"]",
                    ))
                }
                _ => {
                    return Err(SweepError::field(
                        &field,
                        "give only one of sim, path and members",
                    ))
                }
            };
            let drives = kind.drives();
            let stripes = match (&t.stripes, drives) {
                (Some(_), 1) => {
                    return Err(SweepError::field(
                        &f("stripes"),
                        "stripes only apply to arrays (drives > 1 or several members)",
                    ))
                }
                (Some(v), _) => Self::stripes(&f("stripes"), v)?,
                (None, 1) => Vec::new(),
                (None, _) => match default_stripes {
                    Some(d) => d.to_vec(),
                    None => {
                        return Err(SweepError::field(
                            &f("stripes"),
                            "an array needs stripe sizes: stripes = [\"16k\", \"64k\"] here or at the top of the file",
                        ))
                    }
                },
            };
            let label = match &t.label {
                Some(l) if l.trim().is_empty() => {
                    return Err(SweepError::field(&f("label"), "must not be empty"))
                }
                Some(l) => l.trim().to_string(),
                None => auto_label(&kind),
            };
            if let Some(prev) = out.iter().position(|o| o.label == label) {
                return Err(SweepError::field(
                    &field,
                    format!(
                        "has the same label '{label}' as target #{}; give one of them label = \"...\"",
                        prev + 1
                    ),
                ));
            }
            let host = match (&t.host, kind.is_sim()) {
                (None, _) => None,
                (Some(_), true) => {
                    return Err(SweepError::field(
                        &f("host"),
                        "only applies to real targets (path = \"FILE\" or members = [...]); simulated points run on any rank",
                    ))
                }
                (Some(h), false) => Some(check_host(&f("host"), h)?),
            };
            out.push(SweepTarget {
                label,
                kind,
                stripes,
                baseline: t.baseline.unwrap_or(false),
                baseline_label: None,
                host,
            });
        }
        // Baselines: those marked, else every single-drive target not marked baseline = false.
        let explicit = raw.iter().any(|t| t.baseline == Some(true));
        for (t, r) in out.iter_mut().zip(raw) {
            t.baseline = if explicit {
                r.baseline == Some(true)
            } else {
                t.kind.drives() == 1 && r.baseline != Some(false)
            };
        }
        for (i, t) in out.iter().enumerate() {
            if t.baseline && t.stripes.len() > 1 {
                return Err(SweepError::field(
                    &format!("target #{}.baseline", i + 1),
                    "a baseline array must have exactly one stripe size",
                ));
            }
        }
        // Each other target is compared with the baseline of the same kind of drive when there is
        // one (same preset, state and overrides), else with the first baseline.
        let baselines: Vec<(String, PointTarget)> = out
            .iter()
            .filter(|t| t.baseline)
            .map(|t| (t.label.clone(), t.kind.clone()))
            .collect();
        for t in out.iter_mut().filter(|t| !t.baseline) {
            let same = baselines.iter().find(|(_, k)| match (k, &t.kind) {
                (
                    PointTarget::Sim {
                        preset: a,
                        state: sa,
                        overrides: oa,
                        ..
                    },
                    PointTarget::Sim {
                        preset: b,
                        state: sb,
                        overrides: ob,
                        ..
                    },
                ) => a == b && sa == sb && oa == ob,
                (PointTarget::Real { .. }, PointTarget::Real { .. }) => true,
                _ => false,
            });
            t.baseline_label = same.or(baselines.first()).map(|(l, _)| l.clone());
        }
        Ok(out)
    }

    fn real_only(t: &RawTarget, field: &str) -> Result<(), SweepError> {
        for (k, set) in [
            ("drives", t.drives.is_some()),
            ("state", t.state.is_some()),
            ("overrides", t.overrides.is_some()),
            ("adapter", t.adapter.is_some()),
            ("adapter_cache", t.adapter_cache.is_some()),
            ("adapter_overhead", t.adapter_overhead.is_some()),
            ("uplink", t.uplink.is_some()),
            ("trim_passthrough", t.trim_passthrough.is_some()),
        ] {
            if set {
                return Err(SweepError::field(
                    &format!("{field}.{k}"),
                    "only applies to simulated targets (sim = \"PRESET\")",
                ));
            }
        }
        Ok(())
    }

    /// The traces replayed by trace workloads (inputs of the sweep).
    pub fn traces(&self) -> Vec<&Path> {
        self.workloads
            .iter()
            .filter_map(|w| w.spec.replay.as_ref().map(|r| r.trace.as_path()))
            .collect()
    }

    /// Every real path of the sweep (members and single targets), in file order.
    pub fn real_paths(&self) -> Vec<&Path> {
        self.targets
            .iter()
            .filter_map(|t| match &t.kind {
                PointTarget::Real { paths } => Some(paths.iter().map(PathBuf::as_path)),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Checks that every real path exists and is a regular file or a block device (nothing is
    /// created or written).
    pub fn check_real_paths(&self) -> Result<(), SweepError> {
        self.check_real_paths_of(|_| true)
    }

    /// [`SweepSpec::check_real_paths`] for the targets `mine` keeps (those on this host, when
    /// the others are on other hosts).
    pub fn check_real_paths_of(
        &self,
        mine: impl Fn(&SweepTarget) -> bool,
    ) -> Result<(), SweepError> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        for t in self.targets.iter().filter(|t| mine(t)) {
            if let PointTarget::Real { paths } = &t.kind {
                let mut seen: Vec<((u64, u64), &Path)> = Vec::new();
                for p in paths {
                    if let Ok(m) = std::fs::metadata(p) {
                        let id = if m.file_type().is_block_device() {
                            (u64::MAX, m.rdev())
                        } else {
                            (m.dev(), m.ino())
                        };
                        if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
                            return Err(SweepError::Target {
                                label: t.label.clone(),
                                why: format!(
                                    "member {} is the same file or device as {}",
                                    p.display(),
                                    first.display()
                                ),
                            });
                        }
                        seen.push((id, p));
                    }
                    let what = if paths.len() > 1 { "member" } else { "target" };
                    match std::fs::metadata(p) {
                        Ok(m) if m.is_file() || m.file_type().is_block_device() => {}
                        Ok(_) => {
                            return Err(SweepError::Target {
                                label: t.label.clone(),
                                why: format!(
                                    "{what} {} is neither a regular file nor a block device",
                                    p.display()
                                ),
                            })
                        }
                        Err(e) => {
                            return Err(SweepError::Target {
                                label: t.label.clone(),
                                why: format!("{what} {}: {e}", p.display()),
                            })
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The first target with a `host` that none of `hosts` is (see [`host_matches`]).
    pub fn unplaced_target(&self, hosts: &[String]) -> Option<&SweepTarget> {
        self.targets.iter().find(|t| {
            t.host
                .as_deref()
                .is_some_and(|h| !hosts.iter().any(|x| host_matches(h, x)))
        })
    }

    /// Checks simulated presets against the known names, suggesting the nearest for a typo.
    pub fn check_presets(&self, known: &[&str]) -> Result<(), SweepError> {
        for t in &self.targets {
            if let PointTarget::Sim { preset, .. } = &t.kind {
                if !known.iter().any(|k| k == preset) {
                    let hint = nearest(preset, known.iter().copied())
                        .map(|n| format!("; did you mean {n}?"))
                        .unwrap_or_else(|| format!(" (known: {})", known.join(", ")));
                    return Err(SweepError::Target {
                        label: t.label.clone(),
                        why: format!("unknown preset '{preset}'{hint}"),
                    });
                }
            }
        }
        Ok(())
    }

    /// Checks that every workload of a mix (see [`crate::parse_mix`]) is one of this sweep's.
    pub fn check_mix(&self, mix: &[(String, f64)]) -> Result<(), SweepError> {
        let names: Vec<&str> = self.workloads.iter().map(|w| w.name.as_str()).collect();
        for (w, _) in mix {
            if !names.contains(&w.as_str()) {
                let hint = nearest(w, names.iter().copied())
                    .map(|n| format!("; did you mean {n}?"))
                    .unwrap_or_else(|| format!(" (the sweep has {})", names.join(", ")));
                return Err(SweepError::Mix(format!(
                    "workload '{w}' is not in sweep '{}'{hint}",
                    self.name
                )));
            }
        }
        Ok(())
    }

    /// The file name part of the default store: the sweep name with unusual characters replaced.
    pub fn default_db_name(&self) -> String {
        let s: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{}.sqlite", s.trim_start_matches('.'))
    }
}

/// Longest host name (a DNS name is at most 253 bytes).
const MAX_HOST: usize = 253;

/// A target's `host`: a plain host name, trimmed.
fn check_host(field: &str, h: &str) -> Result<String, SweepError> {
    let h = h.trim();
    let why = if h.is_empty() {
        "must name a host, e.g. host = \"node07\"".to_string()
    } else if h.len() > MAX_HOST {
        format!(
            "is {} bytes long; a host name has at most {MAX_HOST}",
            h.len()
        )
    } else if let Some(c) = h
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '{' | '}'))
    {
        format!("'{}' is not a host name (it holds {c:?})", h.escape_debug())
    } else {
        return Ok(h.to_string());
    };
    Err(SweepError::field(field, why))
}

/// True when a target's `host` names the host `actual` (a rank's MPI processor name, or this
/// machine's host name): the same name ignoring case, or the same first label when only one of
/// the two is a full domain name (`node07` and `node07.cluster.example`).
pub fn host_matches(wanted: &str, actual: &str) -> bool {
    if wanted.eq_ignore_ascii_case(actual) {
        return true;
    }
    let short = |s: &str| s.split('.').next().unwrap_or(s).to_string();
    match (wanted.contains('.'), actual.contains('.')) {
        (false, true) => wanted.eq_ignore_ascii_case(&short(actual)),
        (true, false) => short(wanted).eq_ignore_ascii_case(actual),
        _ => false,
    }
}

/// Resolves `p` against `base` and drops `.` components (lexically; links are not followed).
fn resolve(base: &Path, p: &Path) -> PathBuf {
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    full.components().collect()
}

/// A readable default label: `sim:PRESET`, `sim:PRESET x2`, `+ state/overrides`, or the paths.
fn auto_label(kind: &PointTarget) -> String {
    match kind {
        PointTarget::Sim {
            preset,
            drives,
            state,
            overrides,
            adapter,
            ..
        } => {
            let mut s = format!("sim:{preset}");
            if *drives > 1 {
                s.push_str(&format!(" x{drives}"));
            }
            if *state != DriveState::Fresh {
                s.push_str(&format!(" [{}]", state.as_str()));
            }
            if !overrides.is_empty() {
                let o: Vec<String> = overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
                s.push_str(&format!(" {{{}}}", o.join(",")));
            }
            if let Some(m) = adapter.model {
                s.push_str(&format!(" adapter={m}"));
            }
            if let Some(b) = adapter.cache_bytes {
                s.push_str(&format!(" cache={}", ssdlab_workload::format_size(b)));
            }
            s
        }
        PointTarget::Real { paths } => {
            let names: Vec<String> = paths
                .iter()
                .map(|p| {
                    p.file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_else(|| p.display().to_string())
                })
                .collect();
            if paths.len() > 1 {
                format!("raid0({})", names.join(","))
            } else {
                names.join("")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("4k-randred", "4k-randread"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(nearest("4k-randred", SHORTHANDS), Some("4k-randread"));
        assert_eq!(nearest("zzzzzzzzz", SHORTHANDS), None);
    }

    #[test]
    fn shorthands() {
        assert_eq!(
            parse_shorthand("4k-randread"),
            Some((RwMode::Randread, 4096))
        );
        assert_eq!(
            parse_shorthand("128k-seqwrite"),
            Some((RwMode::Write, 131072))
        );
        assert_eq!(parse_shorthand("1m-seqread"), Some((RwMode::Read, 1 << 20)));
        assert_eq!(parse_shorthand("4k-randred"), None);
        assert_eq!(parse_shorthand("0-randread"), None);
    }

    fn sweep_with(target: &str) -> Result<SweepSpec, SweepError> {
        let text = format!(
            "name = \"a\"\nqd = [1]\ntime = \"10ms\"\nworkloads = [\"4k-randread\"]\n\
             [[target]]\nsim = \"x25e-64g\"\n\n[[target]]\nsim = \"x25e-64g\"\n\
             drives = 2\nstripes = [\"8k\"]\n{target}\n"
        );
        SweepSpec::parse(&text, Path::new("."))
    }

    #[test]
    fn adapter_keys_of_simulated_arrays() {
        let s = sweep_with(
            "adapter = \"none\"\nadapter_cache = \"64m\"\nadapter_overhead = \"5us\"\n\
             uplink = \"1g\"\ntrim_passthrough = false",
        )
        .unwrap();
        let PointTarget::Sim { adapter, .. } = &s.targets[1].kind else {
            panic!("a simulated target")
        };
        assert_eq!(
            *adapter,
            AdapterChoice {
                model: Some(AdapterModel::None),
                uplink_bytes_per_sec: Some(1 << 30),
                per_request_overhead_ns: Some(5_000),
                trim_passthrough: Some(false),
                cache_bytes: Some(64 << 20),
                host: None,
            }
        );
        assert!(s.targets[1].label.contains("adapter=none"));
        // no adapter key: a single drive's target (so its point key) is as before the adapter
        // existed; an array's says it runs behind the default adapter (older points run again)
        let s = sweep_with("").unwrap();
        let json = serde_json::to_string(&s.targets[0].kind).unwrap();
        assert!(!json.contains("adapter"), "{json}");
        let json = serde_json::to_string(&s.targets[1].kind).unwrap();
        assert!(json.contains("\"default_adapter\":true"), "{json}");
        for (bad, field) in [
            ("adapter = \"hba\"", "adapter"),
            ("adapter_cache = \"0\"", "adapter_cache"),
            ("adapter_overhead = \"soon\"", "adapter_overhead"),
        ] {
            let e = sweep_with(bad).unwrap_err().to_string();
            assert!(e.contains(field), "{bad}: {e}");
        }
    }

    #[test]
    fn a_typed_sweep_file_writes_the_file_it_stands_for() {
        let f = SweepFile {
            comment: vec!["A sweep made in code".into(), "(two lines)".into()],
            name: "typed".into(),
            description: Some("say \"hi\"".into()),
            time: "1s".into(),
            ramp: Some("100ms".into()),
            span: Some("8GiB".into()),
            qd: vec![1, 32],
            repeats: Some(1),
            seed: None,
            workloads: vec!["4k-randread".into()],
            workload_tables: vec![WorkloadTable {
                name: "w512".into(),
                rw: RwMode::Randwrite,
                bs: "4k".into(),
                align: Some("512".into()),
            }],
            targets: vec![
                TargetTable {
                    label: Some("single".into()),
                    sim: Some("x25e-64g".into()),
                    state: Some(DriveState::Full),
                    baseline: Some(true),
                    ..Default::default()
                },
                TargetTable {
                    label: Some("raid0".into()),
                    sim: Some("x25e-64g".into()),
                    drives: Some(2),
                    stripes: Some(vec!["8KiB".into(), "16KiB".into()]),
                    ..Default::default()
                },
            ],
        };
        let text = f.to_toml().unwrap();
        let want = "# A sweep made in code\n# (two lines)\nname = \"typed\"\n\
                    description = 'say \"hi\"'\ntime = \"1s\"\nramp = \"100ms\"\nspan = \"8GiB\"\n\
                    qd = [1, 32]\nrepeats = 1\nworkloads = [\"4k-randread\"]\n\n\
                    [[workload]]\nname = \"w512\"\nrw = \"randwrite\"\nbs = \"4k\"\nalign = \"512\"\n\n\
                    [[target]]\nlabel = \"single\"\nsim = \"x25e-64g\"\nstate = \"full\"\nbaseline = true\n\n\
                    [[target]]\nlabel = \"raid0\"\nsim = \"x25e-64g\"\ndrives = 2\nstripes = [\"8KiB\", \"16KiB\"]\n";
        assert_eq!(text, want);
        let s = f.spec_from_flags(Path::new(".")).unwrap();
        assert_eq!(
            s,
            SweepSpec::parse_from_flags(want, Path::new(".")).unwrap()
        );
        assert_eq!(s.targets[1].stripes, [8 << 10, 16 << 10]);
        assert_eq!(s.workloads[1].spec.align, 512);
    }
}
