//! Messages about a job's settings in fio's words: the checks of the workload and of its
//! target know a setting only as a [`Field`]; a job names it by the option that set it, as
//! written and where (`bs=3 (job.fio line 4)`, `--bs=3` on the command line).

use crate::job::{Settings, Written};
use crate::value;
use ssdlab_workload::{Field, Naming};

/// The options that set a field, fio's name first. `last`: the last of them written decides
/// (else the first written in this order does, as `size` wins over `filesize`).
fn options_of(f: Field) -> (&'static [&'static str], bool) {
    match f {
        Field::Rw | Field::RandomEvery => (&["rw"], true),
        Field::Bs => (&["bs", "bsrange", "bssplit"], true),
        Field::Align => (&["ba"], true),
        Field::Offset => (&["offset"], true),
        Field::Span => (&["size", "filesize"], false),
        Field::Qd => (&["iodepth"], true),
        Field::Jobs => (&["numjobs"], true),
        Field::ReadPct => (&["rwmixread", "rwmixwrite"], true),
        Field::RandomPct => (&["percentage_random"], true),
        Field::Time => (&["runtime"], true),
        Field::Ios => (&["number_ios"], true),
        Field::Bytes => (&["io_size"], true),
        Field::Verify => (&["verify"], true),
        // not an fio option: `ssdlab fio --stripe` (simulated arrays)
        Field::Stripe => (&[], true),
    }
}

/// The names of one job's settings.
#[derive(Debug, Clone, Copy)]
pub struct JobNaming<'a> {
    pub settings: &'a Settings,
}

impl<'a> JobNaming<'a> {
    pub fn new(settings: &'a Settings) -> Self {
        JobNaming { settings }
    }

    fn find(&self, keys: &[&str], last: bool) -> Option<&'a Written> {
        let w = &self.settings.written;
        if last {
            w.iter()
                .rev()
                .find(|w| keys.contains(&w.canonical.as_str()))
        } else {
            keys.iter()
                .find_map(|k| w.iter().find(|w| w.canonical == *k))
        }
    }

    fn written(&self, f: Field) -> Option<&'a Written> {
        let (keys, last) = options_of(f);
        self.find(keys, last)
    }

    /// True when `text` means exactly `v` (`4k` is 4096), so that the value is not repeated.
    fn means(&self, f: Field, text: &str, v: u64) -> bool {
        let kb = self.settings.kb_base;
        if f.is_bytes() {
            value::bytes(text, kb) == Ok(v)
        } else {
            value::int(text) == Ok(v)
        }
    }
}

impl Naming for JobNaming<'_> {
    fn name(&self, f: Field) -> String {
        match self.written(f) {
            Some(w) if w.loc.argv => format!("--{}", w.key),
            Some(w) => w.key.clone(),
            None => match options_of(f).0.first() {
                Some(k) => k.to_string(),
                None => f.flag().to_string(),
            },
        }
    }

    fn setting(&self, f: Field, v: u64) -> String {
        let Some(w) = self.written(f) else {
            return match options_of(f).0.first() {
                Some(k) => format!("{k}={v}"),
                None => format!("{} {v}", f.flag()),
            };
        };
        let text = w.value.as_deref().unwrap_or("").trim();
        let shown = crate::job::short_text(text, 60);
        let opt = if w.loc.argv {
            format!("--{}={shown}", w.key)
        } else {
            format!("{}={shown}", w.key)
        };
        let value = (!self.means(f, text, v)).then(|| {
            if f.is_bytes() {
                format!("{v} bytes")
            } else {
                v.to_string()
            }
        });
        match (w.loc.argv, value) {
            (true, None) => opt,
            (true, Some(v)) => format!("{opt} ({v})"),
            (false, None) => format!("{opt} ({})", w.loc),
            (false, Some(v)) => format!("{opt} ({v}, {})", w.loc),
        }
    }

    fn buffered(&self) -> Option<String> {
        Some(match self.find(&["direct", "buffered"], true) {
            Some(w) if w.loc.argv => "--direct=0".into(),
            _ => "direct=0".into(),
        })
    }
}
