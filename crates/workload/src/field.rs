//! The settings of a workload that an error can be about, and how each front end names them.
//!
//! The checks of the workload, the planner and the engines know a setting only by what it is
//! ([`Field`]) and the value at fault; they never spell a flag. The front end that built the
//! workload renders their errors with its own [`Naming`]: ssdlab's command line says `--bs 3`
//! ([`Flags`], also what the errors' `Display` says), an fio job file `bs=3 (job.fio line 4)`,
//! a sweep or data file `bs = "3" (line 8)`.

use std::fmt;

/// A setting of a workload (or of its target) that a check can refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The access mode.
    Rw,
    /// The block size (any of them when they vary).
    Bs,
    /// The alignment of offsets.
    Align,
    /// Where the region starts.
    Offset,
    /// How long the region is.
    Span,
    /// Outstanding I/Os per worker.
    Qd,
    /// Workers.
    Jobs,
    /// Share of reads.
    ReadPct,
    /// Share of random offsets.
    RandomPct,
    /// A new random offset every N I/Os.
    RandomEvery,
    /// Measured time.
    Time,
    /// Number of I/Os.
    Ios,
    /// Number of bytes.
    Bytes,
    /// Verification of the data.
    Verify,
    /// The stripe of a RAID 0 array.
    Stripe,
}

impl Field {
    /// The flag of `ssdlab run` that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            Field::Rw => "--rw",
            Field::Bs => "--bs",
            Field::Align => "--align",
            Field::Offset => "--offset",
            Field::Span => "--span",
            Field::Qd => "--qd",
            Field::Jobs => "--jobs",
            Field::ReadPct => "--read-pct",
            Field::RandomPct => "--random-pct",
            Field::RandomEvery => "--random-every",
            Field::Time => "--time",
            Field::Ios => "--ios",
            Field::Bytes => "--bytes",
            Field::Verify => "--verify",
            Field::Stripe => "--stripe",
        }
    }

    /// True for settings measured in bytes.
    pub fn is_bytes(self) -> bool {
        matches!(
            self,
            Field::Bs | Field::Align | Field::Offset | Field::Span | Field::Bytes | Field::Stripe
        )
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flag())
    }
}

/// How a front end names settings in its messages.
pub trait Naming {
    /// The setting alone: `--bs`, `bs`.
    fn name(&self, f: Field) -> String;
    /// The setting with a value it has, and where it was set when that is known: `--bs 3`,
    /// `bs=3 (job.fio line 4)`, `bs = "3" (line 8)`.
    fn setting(&self, f: Field, value: u64) -> String;
    /// What turns O_DIRECT off (`--buffered`, `direct=0`); `None` where nothing does.
    fn buffered(&self) -> Option<String>;
}

impl<N: Naming + ?Sized> Naming for &N {
    fn name(&self, f: Field) -> String {
        (**self).name(f)
    }

    fn setting(&self, f: Field, value: u64) -> String {
        (**self).setting(f, value)
    }

    fn buffered(&self) -> Option<String> {
        (**self).buffered()
    }
}

/// ssdlab's own command line (`ssdlab run`, `study`, `calibrate --target`): `--bs 3`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags;

impl Naming for Flags {
    fn name(&self, f: Field) -> String {
        f.flag().to_string()
    }

    fn setting(&self, f: Field, value: u64) -> String {
        format!("{} {value}", f.flag())
    }

    fn buffered(&self) -> Option<String> {
        Some("--buffered".into())
    }
}

/// Where a key of a TOML file (a sweep or data file) was written: the key, its value as
/// written (TOML, quotes and all) and the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenKey {
    pub key: String,
    pub text: String,
    /// 1-based; 0 when unknown.
    pub line: usize,
}

/// The names of a workload read from a TOML file: each setting that was written, by the key
/// and line it was written at (`bs = "3" (line 8)`), and the key each other setting would have
/// (`align 4096`, for a setting left at its default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TomlNaming {
    /// The settings written in the file.
    pub written: Vec<(Field, WrittenKey)>,
    /// The file's key of each setting it has one for (those not listed go by their flag's name
    /// without dashes).
    pub keys: Vec<(Field, &'static str)>,
}

impl TomlNaming {
    /// Notes that `f` was written as `key = text` at `line`.
    pub fn set(&mut self, f: Field, key: &str, text: &str, line: usize) {
        self.written.retain(|(g, _)| *g != f);
        self.written.push((
            f,
            WrittenKey {
                key: key.to_string(),
                text: one_line(text),
                line,
            },
        ));
    }

    fn written(&self, f: Field) -> Option<&WrittenKey> {
        self.written.iter().find(|(g, _)| *g == f).map(|(_, w)| w)
    }

    fn key(&self, f: Field) -> String {
        self.keys
            .iter()
            .find(|(g, _)| *g == f)
            .map(|(_, k)| k.to_string())
            .unwrap_or_else(|| f.flag().trim_start_matches('-').replace('-', "_"))
    }
}

/// A value as an error quotes it: one line, at most 60 characters.
fn one_line(text: &str) -> String {
    let t: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(61)
        .collect();
    if t.chars().count() > 60 {
        format!("{}…", t.chars().take(60).collect::<String>())
    } else {
        t
    }
}

impl Naming for TomlNaming {
    fn name(&self, f: Field) -> String {
        self.written(f)
            .map(|w| w.key.clone())
            .unwrap_or_else(|| self.key(f))
    }

    fn setting(&self, f: Field, value: u64) -> String {
        match self.written(f) {
            Some(w) if w.line > 0 => format!("{} = {} (line {})", w.key, w.text, w.line),
            Some(w) => format!("{} = {}", w.key, w.text),
            None => format!("{} {value}", self.key(f)),
        }
    }

    fn buffered(&self) -> Option<String> {
        None
    }
}

/// Line (1-based) of the byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_toml_keys() {
        assert_eq!(Flags.setting(Field::Bs, 3), "--bs 3");
        assert_eq!(Flags.name(Field::ReadPct), "--read-pct");
        let mut n = TomlNaming {
            keys: vec![(Field::Span, "span")],
            ..Default::default()
        };
        n.set(Field::Bs, "bs", "\"3\"", 8);
        assert_eq!(n.setting(Field::Bs, 3), "bs = \"3\" (line 8)");
        assert_eq!(n.setting(Field::Align, 512), "align 512");
        assert_eq!(n.name(Field::ReadPct), "read_pct");
        assert_eq!(n.buffered(), None);
        let long = "x".repeat(500);
        n.set(Field::Span, "span", &long, 2);
        assert!(n.setting(Field::Span, 1).len() < 90);
        assert_eq!(line_of("a\nb\nc", 2), 2);
    }
}
