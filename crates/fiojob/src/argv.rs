//! fio job options on `ssdlab fio`'s command line: split from the command's own flags
//! ([`split_argv`]), unknown ones refused with a suggestion ([`check_options`]), and a job file
//! given as "-" read from stdin ([`read_stdin_job`]).

use crate::options;
use std::ffi::OsString;

/// fio job options from the command line: key, value, argument position.
pub type FioArgv = Vec<(String, Option<String>, u32)>;

/// Splits `ssdlab fio …` arguments: the command's own flags (`own`: name and whether it takes a
/// value) and job files stay for the argument parser, fio job options (`--key=value`,
/// `--key value`, bare flags) come out with their position. Other commands' arguments pass
/// through unchanged.
pub fn split_argv(args: Vec<OsString>, own: &[(&str, bool)]) -> (Vec<OsString>, FioArgv) {
    if args.get(1).and_then(|a| a.to_str()) != Some("fio") {
        return (args, Vec::new());
    }
    let mut keep: Vec<OsString> = args[..2].to_vec();
    let mut fio = Vec::new();
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        let Some(s) = a.to_str() else {
            keep.push(a.clone());
            i += 1;
            continue;
        };
        if s == "--" {
            keep.extend(args[i..].iter().cloned());
            break;
        }
        let Some(opt) = s.strip_prefix("--") else {
            keep.push(a.clone());
            i += 1;
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (opt, None),
        };
        if let Some((_, takes)) = own.iter().find(|(f, _)| *f == key) {
            keep.push(a.clone());
            if *takes && value.is_none() {
                if let Some(v) = args.get(i + 1) {
                    keep.push(v.clone());
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        let mut value = value;
        let cli_value = FIO_CLI_OPTIONS.iter().any(|o| o.0 == key && o.1);
        if value.is_none() && (cli_value || !options::is_flag(key) && options::is_fio_option(key)) {
            // fio's getopt takes the next argument as the value of an option that needs one.
            if let Some(v) = args.get(i + 1).and_then(|v| v.to_str()) {
                if !v.starts_with("--") {
                    value = Some(v.to_string());
                    i += 1;
                }
            }
        }
        fio.push((key.to_string(), value, i as u32 - 1));
        i += 1;
    }
    (keep, fio)
}

/// What ssdlab makes of one of fio's own command-line options (fio's `init.c`, `l_opts`) —
/// those that are not job options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliOption {
    /// Accepted; it changes nothing ssdlab prints or measures (why).
    NoEffect(&'static str),
    /// `--readonly`: jobs that write or trim are refused, and no file is laid out.
    ReadOnly,
    /// Refused, naming why.
    Unsupported(&'static str),
}

/// fio 3.33's command-line options that are not job options and not ssdlab's own flags: name,
/// whether fio's getopt takes the next argument as its value, and what ssdlab makes of it.
pub const FIO_CLI_OPTIONS: &[(&str, bool, CliOption)] = &[
    (
        "eta",
        true,
        CliOption::NoEffect("ssdlab prints no ETA line"),
    ),
    (
        "eta-interval",
        true,
        CliOption::NoEffect("ssdlab prints no ETA line"),
    ),
    (
        "eta-newline",
        true,
        CliOption::NoEffect("ssdlab prints no ETA line"),
    ),
    (
        "alloc-size",
        true,
        CliOption::NoEffect("the size of fio's own shared-memory pool"),
    ),
    ("readonly", false, CliOption::ReadOnly),
    (
        "minimal",
        false,
        CliOption::Unsupported("fio's terse output (ssdlab prints normal, json or json+)"),
    ),
    (
        "terse-version",
        true,
        CliOption::Unsupported("fio's terse output (ssdlab prints normal, json or json+)"),
    ),
    (
        "append-terse",
        false,
        CliOption::Unsupported("fio's terse output (ssdlab prints normal, json or json+)"),
    ),
    (
        "latency-log",
        true,
        CliOption::Unsupported("deprecated in fio; use write_lat_log"),
    ),
    (
        "bandwidth-log",
        false,
        CliOption::Unsupported(
            "fio's aggregate bandwidth log (agg-*_bw.log); use write_bw_log per job",
        ),
    ),
    (
        "status-interval",
        true,
        CliOption::Unsupported("fio's periodic full status output"),
    ),
    (
        "max-jobs",
        true,
        CliOption::Unsupported("fio's limit on the number of jobs"),
    ),
    (
        "warnings-fatal",
        false,
        CliOption::Unsupported("fio's parse warnings as errors"),
    ),
    ("debug", true, CliOption::Unsupported("fio's debug output")),
    (
        "showcmd",
        false,
        CliOption::Unsupported("fio's job file printed as a command line"),
    ),
    (
        "version",
        false,
        CliOption::Unsupported("fio's version (ssdlab --version gives ssdlab's)"),
    ),
    (
        "cmdhelp",
        false,
        CliOption::Unsupported("fio's option help (ssdlab fio --help; docs/FIO-JOBS.md)"),
    ),
    (
        "enghelp",
        false,
        CliOption::Unsupported("fio's engine help (docs/FIO-JOBS.md, ioengine)"),
    ),
    (
        "profile",
        true,
        CliOption::Unsupported("fio's built-in profiles (tiobench, act)"),
    ),
    (
        "inflate-log",
        true,
        CliOption::Unsupported("fio's compressed logs"),
    ),
    (
        "aux-path",
        true,
        CliOption::Unsupported("fio's directory for its auxiliary files (verify state)"),
    ),
    (
        "merge-blktrace-only",
        false,
        CliOption::Unsupported("fio's blktrace merge without a run"),
    ),
    (
        "server",
        false,
        CliOption::Unsupported("fio's client/server mode"),
    ),
    (
        "server-internal",
        true,
        CliOption::Unsupported("fio's client/server mode"),
    ),
    (
        "daemonize",
        true,
        CliOption::Unsupported("fio's client/server mode"),
    ),
    (
        "client",
        true,
        CliOption::Unsupported("fio's client/server mode"),
    ),
    (
        "remote-config",
        true,
        CliOption::Unsupported("fio's client/server mode"),
    ),
    (
        "trigger-file",
        true,
        CliOption::Unsupported("fio's triggers"),
    ),
    (
        "trigger-timeout",
        true,
        CliOption::Unsupported("fio's triggers"),
    ),
    ("trigger", true, CliOption::Unsupported("fio's triggers")),
    (
        "trigger-remote",
        true,
        CliOption::Unsupported("fio's triggers"),
    ),
    (
        "cpuclock-test",
        false,
        CliOption::Unsupported("fio's self-tests"),
    ),
    ("crctest", false, CliOption::Unsupported("fio's self-tests")),
    (
        "memcpytest",
        false,
        CliOption::Unsupported("fio's self-tests"),
    ),
    (
        "idle-prof",
        true,
        CliOption::Unsupported("fio's idle profiling"),
    ),
];

/// fio's command-line options given, taken out of `fio_args`: `--readonly` (true when given),
/// the notes of those that change nothing, and the first refused one as an error.
pub fn take_cli_options(fio_args: &mut FioArgv) -> Result<(bool, Vec<String>), String> {
    let mut read_only = false;
    let mut notes = Vec::new();
    let mut err = None;
    fio_args.retain(|(k, v, pos)| {
        let Some((_, _, what)) = FIO_CLI_OPTIONS.iter().find(|o| o.0 == k) else {
            return true;
        };
        let shown = match v {
            Some(v) => format!("--{k}={v}"),
            None => format!("--{k}"),
        };
        match what {
            CliOption::NoEffect(why) => notes.push(format!("{shown}: no effect ({why})")),
            CliOption::ReadOnly => read_only = true,
            CliOption::Unsupported(why) => {
                err.get_or_insert(format!(
                    "command line argument {pos}: {shown}: not supported by ssdlab: {why}"
                ));
            }
        }
        false
    });
    match err {
        Some(e) => Err(e),
        None => Ok((read_only, notes)),
    }
}

/// Refuses the first command-line option that is no fio option, suggesting the nearest of the
/// command's own flags (`own`) or of fio's options.
pub fn check_options(fio_args: &FioArgv, own: &[(&str, bool)]) -> Result<(), String> {
    for (k, _, pos) in fio_args {
        if !options::is_fio_option(k) {
            let near = own
                .iter()
                .map(|(f, _)| *f)
                .map(|f| (options::edit_distance(k, f), f))
                .filter(|(d, f)| *d <= 2.max(f.len() / 4))
                .min_by_key(|(d, _)| *d)
                .map(|(_, f)| f);
            let hint = match (near, options::suggest(k)) {
                (Some(f), _) => format!("; did you mean --{f}?"),
                (None, Some(o)) => format!("; did you mean --{o}?"),
                _ => String::new(),
            };
            return Err(format!(
                "command line argument {pos}: unknown option --{k}{hint}"
            ));
        }
    }
    Ok(())
}

/// A job file given as "-": read from `stdin`, at most as large as a job file, text.
pub fn read_stdin_job(stdin: impl std::io::Read) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let cap = crate::ini::MAX_JOB_FILE_BYTES;
    let mut data = Vec::new();
    stdin
        .take(cap + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("stdin: cannot read the job file: {e}"))?;
    if data.len() as u64 > cap {
        return Err(format!("stdin: a job file of more than {cap} bytes"));
    }
    if data.contains(&0) {
        return Err("stdin: not a text file (a NUL byte), so not an fio job file".into());
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &[(&str, bool)] = &[("sim", true), ("json", false), ("output", true)];

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn argv_split_keeps_own_flags_and_takes_fio_options() {
        let (keep, fio) = split_argv(
            os(&[
                "ssdlab",
                "fio",
                "--name=x",
                "--rw",
                "randread",
                "--sim",
                "p",
                "--json",
                "a.fio",
                "--time_based",
                "--bs=4k",
                "--output",
                "o.json",
                "--size",
                "1g",
            ]),
            OWN,
        );
        assert_eq!(
            keep,
            os(&["ssdlab", "fio", "--sim", "p", "--json", "a.fio", "--output", "o.json"])
        );
        let f: Vec<(&str, Option<&str>)> = fio
            .iter()
            .map(|(k, v, _)| (k.as_str(), v.as_deref()))
            .collect();
        assert_eq!(
            f,
            vec![
                ("name", Some("x")),
                ("rw", Some("randread")),
                ("time_based", None),
                ("bs", Some("4k")),
                ("size", Some("1g")),
            ]
        );
        let (keep, fio) = split_argv(os(&["ssdlab", "run", "--qd", "4"]), OWN);
        assert_eq!(keep.len(), 4);
        assert!(fio.is_empty());
    }

    #[test]
    fn unknown_options_get_a_suggestion() {
        let (_, fio) = split_argv(os(&["ssdlab", "fio", "--jsn", "--bs=4k"]), OWN);
        assert_eq!(
            check_options(&fio, OWN).unwrap_err(),
            "command line argument 1: unknown option --jsn; did you mean --json?"
        );
        let (_, fio) = split_argv(os(&["ssdlab", "fio", "--bs=4k"]), OWN);
        assert_eq!(check_options(&fio, OWN), Ok(()));
    }

    #[test]
    fn stdin_jobs_are_text_of_bounded_size() {
        assert_eq!(read_stdin_job(&b"[j]\nrw=read\n"[..]).unwrap().len(), 12);
        assert!(read_stdin_job(&b"[j]\0"[..]).unwrap_err().contains("NUL"));
    }
}
