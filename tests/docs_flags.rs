//! The docs name only flags that exist: every `--flag` that README.md, docs/*.md and the
//! example files show with an `ssdlab COMMAND` must be in that command's `--help`, and every
//! flag named on its own in the prose must be in some command's `--help`.
//!
//! What is read: fenced code blocks line by line (a `\` at the end joins the next line) and
//! inline code spans. `ssdlab fio` also takes fio's own command-line options (`--name=x
//! --rw=randread`), so on its lines only flags spelled with a hyphen inside (ssdlab's style;
//! fio's options use underscores) are checked, except the few fio options spelled that way.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const COMMANDS: &[&str] = &[
    "run",
    "drives",
    "layout",
    "sweep",
    "report",
    "study",
    "validate",
    "calibrate",
    "fio",
    "completions",
    "man",
];

/// fio's own command-line options with a hyphen in their name (`fio --help`), and `--eta`,
/// which are no job options: `ssdlab fio` takes or refuses them by name (docs/FIO-JOBS.md).
const FIO_HYPHEN_OPTIONS: &[&str] = &[
    "--eta",
    "--output-format",
    "--parse-only",
    "--bandwidth-log",
    "--minimal",
    "--append-terse",
    "--terse-version",
    "--debug",
    "--cmdhelp",
    "--enghelp",
    "--showcmd",
    "--readonly",
    "--eta-newline",
    "--eta-interval",
    "--status-interval",
    "--section",
    "--alloc-size",
    "--warnings-fatal",
    "--max-jobs",
    "--server",
    "--daemonize",
    "--client",
    "--remote-config",
    "--idle-prof",
    "--inflate-log",
    "--trigger-file",
    "--trigger-timeout",
    "--trigger",
    "--trigger-remote",
    "--aux-path",
    "--merge-blktrace-only",
];

/// Flags the docs name that are not ssdlab's, each for a reason the docs give beside it.
const NOT_SSDLAB: &[(&str, &str)] = &[
    ("--oversubscribe", "mpirun's (README, Many hosts)"),
    ("--allow-run-as-root", "mpirun's (README, Many hosts)"),
    ("--features", "cargo's (--features mpi)"),
    ("--validate", "fio_jsonplus_clat2csv's (FIO.md)"),
    (
        "--key",
        "the placeholder of fio's command-line syntax (FIO-JOBS.md)",
    ),
    (
        "--iodeph",
        "a mistyped fio option, to show the suggestion (FIO-JOBS.md)",
    ),
    (
        "--blocksize",
        "fio's name, to show the suggestion (FIO-JOBS.md)",
    ),
    (
        "--inject-fault",
        "hidden from --help on purpose: the tests' fault injection (ARCHITECTURE.md)",
    ),
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ssdlab")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The long flags of `ssdlab COMMAND --help` (and `--help`/`--version` themselves).
fn help_flags(cmd: &str) -> BTreeSet<String> {
    let out = Command::new(bin())
        .args([cmd, "--help"])
        .output()
        .expect("ssdlab runs");
    assert!(out.status.success(), "ssdlab {cmd} --help fails");
    let text = String::from_utf8(out.stdout).expect("help is UTF-8");
    let mut flags: BTreeSet<String> = flags_in(&text).into_iter().collect();
    flags.insert("--help".into());
    flags.insert("--version".into());
    flags
}

/// `--word-word` tokens in `s` (a flag's name: letters, digits and hyphens, starting with a
/// letter), without any `=value`.
fn flags_in(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let starts = b[i] == b'-'
            && b[i + 1] == b'-'
            && b[i + 2].is_ascii_alphabetic()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'-' || b[j] == b'_') {
            j += 1;
        }
        out.push(s[i..j].trim_end_matches('-').to_string());
        i = j;
    }
    out
}

/// The ssdlab command a snippet runs (`ssdlab run …`, `cargo run --release -- run …`), with
/// the text after it; None when it runs none.
fn command_of(snippet: &str) -> Option<(&'static str, String)> {
    let words: Vec<&str> = snippet.split_whitespace().collect();
    for (k, w) in words.iter().enumerate() {
        let is_ssdlab = w.ends_with("ssdlab") && !w.contains("ssdlab-") || *w == "--";
        if !is_ssdlab || *w == "--" && !words[..k].contains(&"cargo") {
            continue;
        }
        if let Some(next) = words.get(k + 1) {
            if let Some(c) = COMMANDS.iter().find(|c| **c == *next) {
                return Some((c, words[k + 2..].join(" ")));
            }
        }
    }
    None
}

/// The snippets of a Markdown text: code-block lines (continuations joined) and inline spans,
/// each with its line number.
fn snippets(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            let (start, mut joined) = pending.take().unwrap_or((n, String::new()));
            let l = line.trim_end();
            if let Some(cont) = l.strip_suffix('\\') {
                joined.push_str(cont);
                joined.push(' ');
                pending = Some((start, joined));
            } else {
                joined.push_str(l);
                // a comment after the command is prose about it, not part of it
                let cmd = joined.split(" # ").next().unwrap_or("").to_string();
                out.push((start, cmd));
            }
            continue;
        }
        let mut rest = line;
        while let Some(a) = rest.find('`') {
            let after = &rest[a + 1..];
            let Some(e) = after.find('`') else { break };
            out.push((n, after[..e].to_string()));
            rest = &after[e + 1..];
        }
    }
    out
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    for dir in ["docs", "examples", "data/published", "bench"] {
        let Ok(rd) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        let mut more: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        more.sort();
        files.extend(more);
    }
    files
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn every_documented_flag_exists() {
    let help: BTreeMap<&str, BTreeSet<String>> =
        COMMANDS.iter().map(|c| (*c, help_flags(c))).collect();
    let any: BTreeSet<&String> = help.values().flatten().collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, s) in snippets(&text) {
            if let Some((cmd, args)) = command_of(&s) {
                for f in flags_in(&args) {
                    if cmd == "fio" && (!f[2..].contains('-') || FIO_HYPHEN_OPTIONS.contains(&&*f))
                    {
                        continue;
                    }
                    checked += 1;
                    if !help[cmd].contains(&f) {
                        wrong.push(format!("{}:{line}: ssdlab {cmd} has no {f}", rel(&file)));
                    }
                }
            } else if s.starts_with("--") && s.split_whitespace().count() <= 3 {
                // a flag named in the prose (`--store`, `--set KEY=VALUE`); fio's own options
                // (`--time_based`) are documented as fio's
                let Some(f) = flags_in(&s).into_iter().next() else {
                    continue;
                };
                if f.contains('_')
                    || FIO_HYPHEN_OPTIONS.contains(&&*f)
                    || NOT_SSDLAB.iter().any(|(n, _)| *n == f)
                {
                    continue;
                }
                checked += 1;
                if !any.contains(&f) {
                    wrong.push(format!("{}:{line}: no ssdlab command has {f}", rel(&file)));
                }
            }
        }
    }
    eprintln!("{checked} documented flags checked");
    assert!(
        checked > 200,
        "only {checked} flags found: is the scan broken?"
    );
    assert!(
        wrong.is_empty(),
        "{} documented flags do not exist:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_scan_finds_flags_where_the_docs_put_them() {
    let text = "Run `ssdlab run --sim x --qd 4` or\n\n```sh\nssdlab study --time 1s \\\n  --qd 1,2 # then --not-this\ncargo run --release -- sweep f.toml --db x.sqlite\n```\nand `--store`.";
    let s = snippets(text);
    let cmds: Vec<(&str, Vec<String>)> = s
        .iter()
        .filter_map(|(_, s)| command_of(s).map(|(c, a)| (c, flags_in(&a))))
        .collect();
    assert_eq!(
        cmds,
        vec![
            ("run", vec!["--sim".to_string(), "--qd".into()]),
            ("study", vec!["--time".to_string(), "--qd".into()]),
            ("sweep", vec!["--db".to_string()]),
        ]
    );
    assert!(s.iter().any(|(_, x)| x == "--store"));
    assert_eq!(flags_in("a--b --c-d=1 x--y --e"), vec!["--c-d", "--e"]);
}
