//! Every `ssdlab` command that README.md and docs/*.md show in a code block runs as shown:
//! each doc's commands run in order, in one scratch directory per doc that holds copies of the
//! repository's `examples/` and `data/` (what the commands name), each through `sh -c` with
//! `ssdlab` standing for the built binary, and must exit 0 within `LIMIT`.
//!
//! docs/PERFORMANCE.md is left out: its commands are the benchmarks (minutes each; what they print
//! are timings of this machine, not outputs to compare), rerun by hand with the `bench/` scripts.
//!
//! What is read: fenced code blocks line by line (a `\` at the end joins the next line). A line
//! is a command when, after an optional `$ ` prompt, it starts with `ssdlab `, with
//! `cargo run --release -- ` (run as `ssdlab`) or with `mkdir ` (a directory the next command
//! writes into). In a block with `$ ` prompts, the lines after a command are its output, not
//! commands. Any other line naming the binary (`mpirun … ssdlab`,
//! `SSDLAB=… bench/x.sh`) cannot run here and must be exempted.
//!
//! An HTML comment on the line right before a block says what to do with it:
//! - `<!-- docs-commands: skip: REASON -->`: its commands are not run; the test lists each with
//!   the reason and fails on a skip without one;
//! - `<!-- docs-commands: slow: REASON -->`: its commands take minutes, too long for every CI
//!   run; they are listed as skipped, and run (each within `SLOW_LIMIT`) when
//!   `SSDLAB_DOCS_SLOW=1` is set: `SSDLAB_DOCS_SLOW=1 cargo test --release --test docs_commands`;
//! - `<!-- docs-commands: output -->`: the lines shown are checked against what the command
//!   printed (stdout and stderr), line by line and in order, with runs of whitespace counted as
//!   one space; a `…` line stands for lines left out, a `…` in a line for text left out. For a
//!   block of `$ ` commands, the lines after each command; for a block with no command, the
//!   output of the doc's last command;
//! - `<!-- docs-commands: exit N -->`: its commands must exit with status N (an error shown on
//!   purpose). `exit N; output` gives both;
//! - `<!-- docs-commands: file NAME -->`: the block is a file (a job file the commands after it
//!   read), written into the scratch directory as NAME.
//!
//! Measured on a 2-core machine shared with other builds (release build, load average about 5):
//! 34 commands run (6 of them with their output checked, 2 failing on purpose) and 54 exempted,
//! in 134 to 144 s of wall time over three runs (the docs run two at a time; README.md alone
//! takes about 125 s). The test prints each command's time and every exemption with its reason.
//! 17 of the 54 are in `slow` blocks: with `SSDLAB_DOCS_SLOW=1` all 51 ran and passed in 2,721 s
//! (6.6 GB peak RSS: `calibrate --target`), with two other simulations sharing the cores
//! (2026-12-06); the other 37 need a device, MPI, fio-plot, a second build or a preset a bench
//! script fits, or are synopses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most one command may take.
const LIMIT: Duration = Duration::from_secs(120);
/// The most one command of a `slow` block may take.
const SLOW_LIMIT: Duration = Duration::from_secs(900);

/// Whether `slow` blocks run (`SSDLAB_DOCS_SLOW=1`).
fn run_slow() -> bool {
    std::env::var_os("SSDLAB_DOCS_SLOW").is_some_and(|v| v == "1")
}

const MARKER: &str = "<!-- docs-commands:";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Debug, Default, Clone, PartialEq)]
struct Directives {
    skip: Option<String>,
    /// A `slow` block's reason.
    slow: Option<String>,
    output: bool,
    exit: i32,
    file: Option<String>,
}

/// A marker's text (what follows `docs-commands:`).
fn directives(text: &str) -> Result<Directives, String> {
    let text = text.trim();
    let mut d = Directives::default();
    for (word, slow) in [("skip", false), ("slow", true)] {
        if let Some(reason) = text.strip_prefix(word) {
            let reason = reason
                .trim_start()
                .strip_prefix(':')
                .unwrap_or(reason)
                .trim();
            if reason.is_empty() {
                return Err(format!("a {word} without a reason (`{word}: REASON`)"));
            }
            if slow {
                d.slow = Some(reason.to_string());
            } else {
                d.skip = Some(reason.to_string());
            }
            return Ok(d);
        }
    }
    for part in text.split(';').map(str::trim) {
        if part == "output" {
            d.output = true;
        } else if let Some(name) = part.strip_prefix("file ") {
            d.file = Some(name.trim().to_string());
        } else if let Some(n) = part.strip_prefix("exit ") {
            d.exit = n
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: exit takes a status"))?;
        } else {
            return Err(format!(
                "unknown directive `{part}` (skip: REASON, slow: REASON, output, exit N, file NAME)"
            ));
        }
    }
    Ok(d)
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    /// A command to run: its line and text (with `ssdlab` as the program), the expected exit
    /// status, and the output lines the doc shows for it (checked when not empty).
    Run {
        line: usize,
        cmd: String,
        exit: i32,
        output: Vec<String>,
        limit: Duration,
    },
    /// A command that is not run, and why.
    Skip {
        line: usize,
        cmd: String,
        reason: String,
    },
    /// Output the doc shows for the last command run.
    Output { line: usize, lines: Vec<String> },
    /// A file the doc shows, written into the scratch directory for the commands after it.
    File { name: String, text: String },
}

/// A code-block line as the command it runs (`ssdlab …`, or a `mkdir` the doc shows before
/// one), if it runs one.
fn as_command(l: &str) -> Option<String> {
    if let Some(rest) = l.strip_prefix("cargo run --release -- ") {
        return Some(format!("ssdlab {rest}"));
    }
    (l.starts_with("ssdlab ") || l.starts_with("mkdir ")).then(|| l.to_string())
}

/// Whether a line that is no command still names the binary (`mpirun -n 4 target/release/ssdlab`,
/// `SSDLAB=path/to/ssdlab bench/x.sh`).
fn names_binary(l: &str) -> bool {
    !l.starts_with('#')
        && l.split_whitespace().any(|w| {
            let w = w.trim_matches(|c| c == '\'' || c == '"');
            w == "ssdlab" || w.ends_with("/ssdlab")
        })
}

/// A doc's commands, skipped commands and output blocks, in order; or its errors. `slow` blocks
/// are run when `slow` is set, else skipped.
fn items(text: &str, slow: bool) -> Result<Vec<Item>, Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with(MARKER)
            && !lines
                .get(i + 1)
                .is_some_and(|n| n.trim().starts_with("```"))
        {
            errors.push(format!(
                "{}: a docs-commands marker not right before a code block",
                i + 1
            ));
        }
        if !l.starts_with("```") {
            i += 1;
            continue;
        }
        let marker = i
            .checked_sub(1)
            .map(|p| lines[p].trim())
            .and_then(|p| p.strip_prefix(MARKER))
            .map(|p| p.trim_end().trim_end_matches("-->"));
        let mut d = match marker.map(directives).transpose() {
            Ok(d) => d.unwrap_or_default(),
            Err(e) => {
                errors.push(format!("{i}: {e}"));
                Directives::default()
            }
        };
        let limit = if d.slow.is_some() { SLOW_LIMIT } else { LIMIT };
        if let Some(reason) = d.slow.take().filter(|_| !slow) {
            d.skip = Some(format!("slow (SSDLAB_DOCS_SLOW=1 runs it): {reason}"));
        }
        // the block's logical lines, continuations joined
        let fence = i;
        let mut body: Vec<(usize, String)> = Vec::new();
        let mut pending: Option<(usize, String)> = None;
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
            let l = lines[i].trim_end();
            if let Some(cont) = l.strip_suffix('\\') {
                joined.push_str(cont);
                joined.push(' ');
                pending = Some((start, joined));
            } else {
                joined.push_str(l);
                body.push((start, joined));
            }
            i += 1;
        }
        let fence_end = i + 1;
        if let Some(name) = &d.file {
            let text: String = lines[fence + 1..i]
                .iter()
                .map(|l| format!("{l}\n"))
                .collect();
            out.push(Item::File {
                name: name.clone(),
                text,
            });
            i += 1;
            continue;
        }
        i += 1;
        let prompts = body.iter().any(|(_, l)| l.trim_start().starts_with("$ "));
        let mut block = Vec::new();
        for (n, raw) in body {
            let t = raw.trim();
            let (is_prompt, t) = match t.strip_prefix("$ ") {
                Some(rest) => (true, rest.trim()),
                None => (false, t),
            };
            if prompts && !is_prompt {
                // output of the command above
                match block.last_mut() {
                    Some(Item::Run { output, .. }) if d.output => output.push(raw.clone()),
                    _ => {}
                }
                continue;
            }
            match (as_command(t), &d.skip) {
                (Some(cmd), Some(reason)) => block.push(Item::Skip {
                    line: n,
                    cmd,
                    reason: reason.clone(),
                }),
                (Some(cmd), None) => block.push(Item::Run {
                    line: n,
                    cmd,
                    exit: d.exit,
                    output: Vec::new(),
                    limit,
                }),
                (None, Some(reason)) if names_binary(t) => block.push(Item::Skip {
                    line: n,
                    cmd: t.to_string(),
                    reason: reason.clone(),
                }),
                (None, None) if names_binary(t) => errors.push(format!(
                    "{n}: `{t}` runs ssdlab in a way this test cannot: exempt its block \
                     (`{MARKER} skip: REASON -->`)"
                )),
                _ if !prompts && d.output => match block.last_mut() {
                    Some(Item::Output { lines, .. }) => lines.push(raw.clone()),
                    _ => block.push(Item::Output {
                        line: n,
                        lines: vec![raw.clone()],
                    }),
                },
                _ => {}
            }
        }
        let runs = block.iter().any(|b| matches!(b, Item::Run { .. }));
        let outputs = block.iter().any(|b| match b {
            Item::Run { output, .. } => !output.is_empty(),
            Item::Output { .. } => true,
            _ => false,
        });
        if d.output && !outputs {
            errors.push(format!(
                "{fence_end}: an `output` block that shows no output"
            ));
        }
        if d.exit != 0 && !runs {
            errors.push(format!("{fence_end}: an `exit` block that runs no command"));
        }
        if d.skip.is_some() && !block.iter().any(|b| matches!(b, Item::Skip { .. })) {
            errors.push(format!("{fence_end}: a `skip` block that has no command"));
        }
        out.extend(block);
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "PERFORMANCE.md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

struct Outcome {
    status: Option<i32>,
    text: String,
    took: Duration,
}

/// Runs `cmd` through `sh -c` in `dir`, `ssdlab` being the built binary; kills it (and what it
/// started) after `limit`.
fn run(dir: &Path, logs: &Path, cmd: &str, limit: Duration) -> Outcome {
    use std::os::unix::process::CommandExt;
    let (out_path, err_path) = (logs.join("stdout"), logs.join("stderr"));
    let started = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ssdlab() {{ \"$SSDLAB_BIN\" \"$@\"; }}\n{cmd}"))
        .env("SSDLAB_BIN", env!("CARGO_BIN_EXE_ssdlab"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0)
        .spawn()
        .expect("sh runs");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if started.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = std::fs::read_to_string(&out_path).unwrap_or_default();
    text.push_str(&std::fs::read_to_string(&err_path).unwrap_or_default());
    Outcome {
        status,
        text,
        took: started.elapsed(),
    }
}

fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `line` is `shown`, where a `…` in `shown` stands for any text left out.
fn shows(shown: &str, line: &str) -> bool {
    let mut parts = shown.split('…').map(str::trim);
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    if parts.is_empty() {
        return rest.is_empty();
    }
    for (k, p) in parts.iter().enumerate() {
        if k + 1 == parts.len() {
            return rest.trim_end().ends_with(p);
        }
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    true
}

/// The shown lines (`…` lines left out) not found in `actual`, in order.
fn missing(shown: &[String], actual: &str) -> Vec<String> {
    let actual: Vec<String> = actual.lines().map(squeeze).collect();
    let mut at = 0;
    let mut out = Vec::new();
    for s in shown.iter().map(|s| squeeze(s)) {
        if s.is_empty() || s == "…" || s == "..." {
            continue;
        }
        match actual[at..].iter().position(|a| shows(&s, a)) {
            Some(k) => at += k + 1,
            None => out.push(s),
        }
    }
    out
}

/// What each command took, by doc and line.
type Timings = Mutex<Vec<(String, usize, String)>>;

/// Runs one doc's items in order in a fresh scratch directory; returns the failures.
fn run_doc(name: &str, items: &[Item], report: &Timings) -> Vec<String> {
    let scratch = tempfile::Builder::new()
        .prefix("ssdlab-docs-commands-")
        .tempdir()
        .unwrap();
    let dir = scratch.path().join("work");
    for sub in ["examples", "data"] {
        copy_dir(&root().join(sub), &dir.join(sub));
    }
    let mut failures = Vec::new();
    let mut last: Option<(usize, String)> = None;
    for item in items {
        match item {
            Item::Run {
                line,
                cmd,
                exit,
                output,
                limit,
            } => {
                let o = run(&dir, scratch.path(), cmd, *limit);
                report.lock().unwrap().push((
                    name.to_string(),
                    *line,
                    format!("{name}:{line}: {:.1} s: {cmd}", o.took.as_secs_f64()),
                ));
                let tail: String = {
                    let lines: Vec<&str> = o.text.lines().collect();
                    lines[lines.len().saturating_sub(15)..].join("\n")
                };
                if o.status != Some(*exit) {
                    let got = o
                        .status
                        .map_or(format!("no exit status after {limit:?}"), |s| {
                            format!("exit {s}")
                        });
                    failures.push(format!(
                        "{name}:{line}: `{cmd}`: {got}, the doc expects exit {exit}:\n{tail}"
                    ));
                }
                let gone = missing(output, &o.text);
                if !gone.is_empty() {
                    failures.push(format!(
                        "{name}:{line}: `{cmd}` printed none of:\n  {}\nits output ends:\n{tail}",
                        gone.join("\n  ")
                    ));
                }
                last = Some((*line, o.text));
            }
            Item::Output { line, lines } => match &last {
                None => failures.push(format!("{name}:{line}: an output block before any command")),
                Some((at, text)) => {
                    let gone = missing(lines, text);
                    if !gone.is_empty() {
                        failures.push(format!(
                            "{name}:{line}: the command of line {at} printed none of:\n  {}",
                            gone.join("\n  ")
                        ));
                    }
                }
            },
            Item::File { name, text } => std::fs::write(dir.join(name), text).unwrap(),
            Item::Skip { .. } => {}
        }
    }
    failures
}

#[test]
fn every_documented_command_runs_as_documented() {
    let started = Instant::now();
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    for file in doc_files() {
        let name = rel(&file);
        match items(&std::fs::read_to_string(&file).unwrap(), run_slow()) {
            Ok(items) => docs.push((name, items)),
            Err(e) => errors.extend(e.into_iter().map(|e| format!("{name}:{e}"))),
        }
    }
    assert!(
        errors.is_empty(),
        "bad docs-commands markers:\n{}",
        errors.join("\n")
    );
    let mut skipped: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut runs = 0;
    for (name, items) in &docs {
        for it in items {
            match it {
                Item::Run { .. } => runs += 1,
                Item::Skip { line, cmd, reason } => skipped
                    .entry(reason)
                    .or_default()
                    .push(format!("{name}:{line}: {cmd}")),
                Item::Output { .. } | Item::File { .. } => {}
            }
        }
    }
    assert!(
        runs >= 20,
        "only {runs} commands found: is the scan broken?"
    );

    // the docs run side by side (each doc's commands in order), two at a time
    let report = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let next = Mutex::new(docs.iter());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((name, items)) = next.lock().unwrap().next() else {
                    break;
                };
                let f = run_doc(name, items, &report);
                failures.lock().unwrap().extend(f);
            });
        }
    });
    let mut report = report.into_inner().unwrap();
    report.sort();
    let exempt: usize = skipped.values().map(Vec::len).sum();
    // written to stderr itself, not through eprintln!, so that the list shows in CI's log when
    // the test passes too (the test harness captures only the print macros)
    let mut text = String::new();
    for (_, _, r) in &report {
        text.push_str(&format!("{r}\n"));
    }
    text.push_str(&format!("\n{exempt} documented commands exempted:\n"));
    for (reason, cmds) in &skipped {
        text.push_str(&format!("- {reason} ({}):\n", cmds.len()));
        for c in cmds {
            text.push_str(&format!("    {c}\n"));
        }
    }
    text.push_str(&format!(
        "\n{runs} documented commands run in {:.0} s\n",
        started.elapsed().as_secs_f64()
    ));
    std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes()).unwrap();
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} documented commands do not run as documented:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_scan_reads_the_markers() {
    let doc = "x\n```sh\nssdlab run --sim a \\\n  --qd 4 # why\nmpirun -n 2 ssdlab run\n```\n";
    assert!(
        items(doc, false).is_err(),
        "an mpirun line without an exemption"
    );
    let doc = "<!-- docs-commands: skip -->\n```\nssdlab run\n```\n";
    assert!(items(doc, false).is_err(), "a skip without a reason");
    let doc = "<!-- docs-commands: skip: needs a device -->\n```\nssdlab run --target /dev/x\n\
               mpirun -n 2 target/release/ssdlab run\n```\n\
               ```console\n$ ssdlab drives\nnot a command\n```\n\
               <!-- docs-commands: exit 2; output -->\n```\n$ cargo run --release -- fio u.fio\n\
               ssdlab: error: x\n…\n```\n<!-- docs-commands: output -->\n```\na   b\n```\n";
    let it = items(doc, false).unwrap();
    let reason = "needs a device".to_string();
    assert_eq!(
        it,
        vec![
            Item::Skip {
                line: 3,
                cmd: "ssdlab run --target /dev/x".into(),
                reason: reason.clone()
            },
            Item::Skip {
                line: 4,
                cmd: "mpirun -n 2 target/release/ssdlab run".into(),
                reason
            },
            Item::Run {
                line: 7,
                cmd: "ssdlab drives".into(),
                exit: 0,
                output: vec![],
                limit: LIMIT
            },
            Item::Run {
                line: 12,
                cmd: "ssdlab fio u.fio".into(),
                exit: 2,
                output: vec!["ssdlab: error: x".into(), "…".into()],
                limit: LIMIT
            },
            Item::Output {
                line: 18,
                lines: vec!["a   b".into()]
            },
        ]
    );
    assert_eq!(
        missing(&["a b".into(), "…".into(), "c".into()], "x\na  b\ny\nc\n"),
        Vec::<String>::new()
    );
    assert_eq!(
        missing(&["c".into(), "a b".into()], "a b\nc\n"),
        vec!["a b"]
    );
    assert!(shows("a … c", "a b c") && shows("a …", "a b") && shows("a … c … e", "a b c d e"));
    assert!(!shows("a … c", "a b") && !shows("a c", "a c d") && !shows("b … c", "a b c"));
    let doc = "<!-- docs-commands: slow: minutes -->\n```\nssdlab validate --against d\n```\n";
    let skipped = items(doc, false).unwrap();
    assert!(
        matches!(&skipped[..], [Item::Skip { reason, .. }] if reason.ends_with(": minutes")),
        "{skipped:?}"
    );
    let run = items(doc, true).unwrap();
    assert!(
        matches!(&run[..], [Item::Run { limit, .. }] if *limit == SLOW_LIMIT),
        "{run:?}"
    );
    assert!(items("<!-- docs-commands: slow -->\n```\nssdlab x\n```\n", false).is_err());
    let doc = "<!-- docs-commands: file u.fio -->\n```ini\n[a]\nx=1 \\\n```\n";
    assert_eq!(
        items(doc, false).unwrap(),
        vec![Item::File {
            name: "u.fio".into(),
            text: "[a]\nx=1 \\\n".into()
        }]
    );
}

#[test]
fn the_runner_fails_what_differs_from_the_doc() {
    let job = "[a]\nioengine=null\nsize=1m\nrw=read\n".to_string();
    let items = vec![
        Item::File {
            name: "a.fio".into(),
            text: job,
        },
        Item::Run {
            line: 1,
            cmd: "ssdlab fio a.fio".into(),
            exit: 0,
            output: vec!["a: (groupid=0, jobs=1): err= 0: …".into()],
            limit: LIMIT,
        },
        Item::Output {
            line: 2,
            lines: vec!["no such line".into()],
        },
        Item::Run {
            line: 3,
            cmd: "ssdlab fio missing.fio".into(),
            exit: 0,
            output: vec![],
            limit: LIMIT,
        },
    ];
    let failures = run_doc("t.md", &items, &Mutex::new(Vec::new()));
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(
        failures[0].starts_with("t.md:2: the command of line 1 printed none of:\n  no such line")
    );
    assert!(
        failures[1].starts_with("t.md:3: `ssdlab fio missing.fio`: exit 2, the doc expects exit 0")
    );
}
