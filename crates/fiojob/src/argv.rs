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
        if value.is_none() && !options::is_flag(key) && options::is_fio_option(key) {
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
