//! Where and how a page was written, so that a report can be filed with it: the date (UTC),
//! the host, its kernel and CPU, the ssdlab version and the exact command line.

use crate::page::Page;

/// The facts of the machine and the process that wrote a page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Environment {
    /// `Thu Dec  3 18:02:06 2026 UTC`.
    pub written: String,
    pub host: String,
    /// `Linux 6.1.0-18-amd64`.
    pub kernel: String,
    /// The CPU model and the number of logical CPUs.
    pub cpu: String,
    /// `ssdlab 0.1.0`.
    pub version: String,
    /// The command line, quoted as a POSIX shell would need it.
    pub command: String,
}

impl Environment {
    /// This process's: the clock, `/proc/sys/kernel`, `/proc/cpuinfo` and the arguments
    /// (best effort: what cannot be read is "unknown").
    pub fn current(version: &str) -> Environment {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let kernel = match (
            read("/proc/sys/kernel/ostype"),
            read("/proc/sys/kernel/osrelease"),
        ) {
            (Some(t), Some(r)) => format!("{t} {r}"),
            (None, Some(r)) => r,
            _ => "unknown".into(),
        };
        let cpu = read("/proc/cpuinfo").map(|text| cpu_of(&text));
        let args: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        Environment {
            written: format!("{} UTC", utc_time(unix)),
            host: read("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            kernel,
            cpu: cpu.unwrap_or_else(|| "unknown".into()),
            version: format!("ssdlab {version}"),
            command: shell_line(&args),
        }
    }

    /// The facts as label and value rows.
    pub fn rows(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("written", &self.written),
            ("host", &self.host),
            ("kernel", &self.kernel),
            ("CPU", &self.cpu),
            ("version", &self.version),
            ("command", &self.command),
        ]
    }
}

impl Page {
    /// The environment the page was written in, as a table under its heading.
    pub fn environment(&mut self, env: &Environment) -> &mut Self {
        self.h2("Environment");
        let rows: Vec<Vec<String>> = env
            .rows()
            .into_iter()
            .map(|(k, v)| vec![k.to_string(), v.to_string()])
            .collect();
        self.table(&["", ""], &rows)
    }
}

/// `AMD EPYC 7763 64-Core Processor, 2 logical CPUs` from `/proc/cpuinfo`'s text.
fn cpu_of(cpuinfo: &str) -> String {
    let field = |line: &str, key: &str| {
        line.split_once(':')
            .filter(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().to_string())
    };
    let mut model = None;
    let mut n = 0;
    for line in cpuinfo.lines() {
        if field(line, "processor").is_some() {
            n += 1;
        }
        if model.is_none() {
            // x86 names it "model name"; arm64 has only its parts ("CPU part").
            model = field(line, "model name").or_else(|| field(line, "Model"));
        }
    }
    let model = model.unwrap_or_else(|| "unknown model".into());
    match n {
        0 => model,
        1 => format!("{model}, 1 logical CPU"),
        n => format!("{model}, {n} logical CPUs"),
    }
}

/// The arguments as one line a POSIX shell reads back as the same arguments.
pub fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `Mon Nov 30 21:28:00 2026` (UTC), as C's `ctime` writes it (fio's "time" field too).
pub fn utc_time(unix: u64) -> String {
    let days = unix / 86_400;
    let secs = unix % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        WD[(days % 7) as usize],
        MO[(m - 1) as usize],
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        y
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_cpus_and_command_lines() {
        assert_eq!(utc_time(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(utc_time(1_796_320_926), "Thu Dec  3 18:02:06 2026");
        let info = "processor\t: 0\nmodel name\t: Some CPU @ 2.0GHz\n\nprocessor\t: 1\nmodel name\t: Some CPU @ 2.0GHz\n";
        assert_eq!(cpu_of(info), "Some CPU @ 2.0GHz, 2 logical CPUs");
        let args: Vec<String> = [
            "ssdlab", "run", "--sim", "x25e-64g", "--rw", "a b", "it's", "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            shell_line(&args),
            r"ssdlab run --sim x25e-64g --rw 'a b' 'it'\''s' ''"
        );
        let e = Environment::current("9.9.9");
        assert_eq!(e.version, "ssdlab 9.9.9");
        assert!(e.written.ends_with("UTC"), "{}", e.written);
        let mut p = Page::new("t");
        p.environment(&e);
        assert!(p.finish().contains("<h2>Environment</h2>"));
    }
}
