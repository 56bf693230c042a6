//! The job-file syntax, as fio's `__parse_jobs_ini` reads it, and fio's command-line job form.
//!
//! - Sections `[name]`; a section whose name starts with `global` is a global section. Every
//!   non-empty line before the first section is an error, as in fio.
//! - Option lines `key=value` or a bare `key` (a flag). Blanks around the key and the value are
//!   dropped.
//! - `;` and `#` start a comment anywhere on a line (so neither can appear in a value, as in
//!   fio).
//! - `include FILE` inside a section reads option lines from FILE (relative paths: from the
//!   current directory when the file is there, else from the including file's directory);
//!   included files hold options only, no sections, and may include others (cycles are refused).
//! - `${VAR}` in an option line is replaced by the environment variable's value; an unset
//!   variable is an empty string, as in fio. `$pagesize`, `$mb_memory` and `$ncpus` are
//!   replaced by the system's values.
//!
//! Lines are bytes: text that is not UTF-8 is read lossily (and then fails as an unknown key
//! or a bad value), never a panic.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where something was written: a job file and line, or a command-line argument.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    /// The job file (or `command line`).
    pub file: Arc<str>,
    /// 1-based line, or argument position on the command line.
    pub line: u32,
    /// Set for the command line (then `line` is the argument's position).
    pub argv: bool,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.argv {
            write!(f, "command line argument {}", self.line)
        } else {
            write!(f, "{} line {}", self.file, self.line)
        }
    }
}

/// One `key[=value]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub key: String,
    pub value: Option<String>,
    pub loc: Loc,
    /// `${VAR}`s of the line that were not set (put in as empty strings, as fio does).
    pub unset: Vec<String>,
}

impl Opt {
    /// `key=value` or `key`, as written (after substitutions).
    pub fn text(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// A section with its options in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub global: bool,
    pub loc: Loc,
    pub opts: Vec<Opt>,
    /// Which job file (0-based) the section comes from; the command line's sections are file
    /// `usize::MAX`.
    pub file_index: usize,
}

/// A job file or command line that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    #[error("{path}: cannot read the job file: {why}")]
    Read { path: String, why: String },
    #[error("{loc}: {why}")]
    At { loc: Loc, why: String },
}

/// Values of the environment and the system for substitutions (a trait so tests and fuzzing
/// control them).
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
    /// `$pagesize`, `$mb_memory`, `$ncpus`.
    fn keyword(&self, name: &str) -> Option<String>;
    /// Reads an included file.
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
    fn exists(&self, path: &Path) -> bool;
}

/// The process's environment and files.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemEnv;

impl Env for SystemEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn keyword(&self, name: &str) -> Option<String> {
        match name {
            "pagesize" => Some("4096".to_string()).map(|d| {
                std::fs::read_to_string("/proc/self/smaps")
                    .ok()
                    .and_then(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("KernelPageSize:"))
                            .and_then(|v| {
                                v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
                            })
                            .map(|kb| (kb * 1024).to_string())
                    })
                    .unwrap_or(d)
            }),
            "mb_memory" => std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                    .map(|kb| (kb / 1024).to_string())
            }),
            "ncpus" => std::thread::available_parallelism()
                .ok()
                .map(|n| n.get().to_string()),
            _ => None,
        }
    }
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        // Regular files only (a FIFO would block, /dev/zero never end), at most 16 MiB.
        let bytes = ssdlab_workload::input::read_input(path, MAX_JOB_FILE_BYTES)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        // A job file is text: a binary file (a program, an image) is refused as a whole
        // instead of being quoted line by line.
        if let Some(at) = bytes.iter().position(|&b| b == 0) {
            return Err(std::io::Error::other(format!(
                "not a text file (a NUL byte at byte {at}), so not an fio job file"
            )));
        }
        Ok(bytes)
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

/// Longest option line fio reads (`OPT_LEN_MAX`).
const MAX_LINE: usize = 8192;
/// Deepest include nesting.
const MAX_INCLUDE_DEPTH: usize = 16;
/// Largest job file (or included file) read.
pub const MAX_JOB_FILE_BYTES: u64 = 16 << 20;
/// Most `include`s followed, each time counted.
pub const MAX_INCLUDES: u32 = 4096;
/// Most bytes read through `include`, all included files counted each time they are included.
pub const MAX_INCLUDED_BYTES: u64 = 64 << 20;

/// Strips a comment (`;` or `#` anywhere) and blanks.
fn strip(line: &str) -> &str {
    let cut = line.find([';', '#']).unwrap_or(line.len());
    line[..cut].trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// Replaces `${VAR}` and fio's `$keywords` in an option line; `unset` collects the variables
/// that were not set, `calc` is set when a keyword was replaced (fio then does the value's
/// arithmetic with `bc`, see [`calculate`]).
fn substitute(
    line: &str,
    env: &dyn Env,
    loc: &Loc,
    unset: &mut Vec<String>,
    calc: &mut bool,
) -> Result<String, SyntaxError> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('}') {
            Some(j) if j > 0 => {
                let name = &after[..j];
                // An unset variable is an empty string, as in fio.
                match env.var(name) {
                    Some(v) => out.push_str(&v),
                    None => unset.push(name.to_string()),
                }
                rest = &after[j + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    for kw in ["pagesize", "mb_memory", "ncpus"] {
        let word = format!("${kw}");
        if out.contains(&word) {
            let v = env.keyword(kw).ok_or_else(|| SyntaxError::At {
                loc: loc.clone(),
                why: format!("cannot find the value of {word}"),
            })?;
            out = out.replace(&word, &v);
            *calc = true;
        }
    }
    Ok(out)
}

/// fio's `bc_calc`: a value that had `$pagesize`, `$mb_memory` or `$ncpus` in it and holds
/// `+ - * /` is computed by `bc` (integer arithmetic; `size=8*1024*$pagesize`).
fn calculate(value: &str, loc: &Loc) -> Result<String, SyntaxError> {
    if !value.contains(['+', '-', '*', '/']) || value.contains('\'') {
        return Ok(value.to_string());
    }
    crate::value::bc(value).map_err(|why| SyntaxError::At {
        loc: loc.clone(),
        why,
    })
}

/// Splits `key=value` / `key` (blanks around both dropped).
fn split_opt(line: &str, loc: Loc, unset: Vec<String>) -> Result<Opt, SyntaxError> {
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
        None => (line.trim(), None),
    };
    if key.is_empty() {
        return Err(SyntaxError::At {
            loc,
            why: format!("'{line}' has no option name"),
        });
    }
    Ok(Opt {
        key: key.to_string(),
        value,
        loc,
        unset,
    })
}

/// Reads job files into sections.
pub struct Parser<'e> {
    env: &'e dyn Env,
    /// Only these sections (fio's `--section`); globals always.
    pub only: Vec<String>,
    /// Every file read through `include`.
    included: std::cell::RefCell<Vec<PathBuf>>,
    /// Bytes read through `include` so far (bounded by [`MAX_INCLUDED_BYTES`]).
    included_bytes: std::cell::Cell<u64>,
    /// Includes read so far (bounded by [`MAX_INCLUDES`]).
    includes: std::cell::Cell<u32>,
}

impl<'e> Parser<'e> {
    pub fn new(env: &'e dyn Env) -> Self {
        Parser {
            env,
            only: Vec::new(),
            included: Default::default(),
            included_bytes: Default::default(),
            includes: Default::default(),
        }
    }

    /// The files read through `include` so far (inputs of the command).
    pub fn included(&self) -> Vec<PathBuf> {
        self.included.borrow().clone()
    }

    /// Reads the job file at `path` (file `file_index` of the command).
    pub fn file(&self, path: &Path, file_index: usize) -> Result<Vec<Section>, SyntaxError> {
        let data = self.env.read(path).map_err(|e| SyntaxError::Read {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        self.text(&data, path, file_index)
    }

    /// Reads job-file bytes (`path` names them in messages and anchors relative includes).
    pub fn text(
        &self,
        data: &[u8],
        path: &Path,
        file_index: usize,
    ) -> Result<Vec<Section>, SyntaxError> {
        let text = String::from_utf8_lossy(data);
        let file: Arc<str> = Arc::from(path.display().to_string().as_str());
        let mut sections: Vec<Section> = Vec::new();
        let mut skipping = false;
        let mut stack = vec![path.to_path_buf()];
        for (i, raw) in text.split('\n').enumerate() {
            let loc = Loc {
                file: Arc::clone(&file),
                line: (i + 1) as u32,
                argv: false,
            };
            if raw.len() > MAX_LINE {
                return Err(SyntaxError::At {
                    loc,
                    why: format!("line longer than {MAX_LINE} bytes"),
                });
            }
            let line = strip(raw);
            if line.is_empty() {
                continue;
            }
            if let Some(head) = line.strip_prefix('[') {
                let Some(name) = head.strip_suffix(']') else {
                    return Err(SyntaxError::At {
                        loc,
                        why: format!("'{line}': a section header is [name]"),
                    });
                };
                let name = name.trim();
                if name.is_empty() || name.len() > 255 || name.contains(['[', ']']) {
                    return Err(SyntaxError::At {
                        loc,
                        why: format!("'{line}' is not a section name (1 to 255 characters)"),
                    });
                }
                let global = name.starts_with("global");
                skipping = !global && !self.only.is_empty() && !self.only.iter().any(|o| o == name);
                if !skipping {
                    sections.push(Section {
                        name: name.to_string(),
                        global,
                        loc,
                        opts: Vec::new(),
                        file_index,
                    });
                }
                continue;
            }
            if skipping {
                continue;
            }
            let Some(sec) = sections.last_mut() else {
                return Err(SyntaxError::At {
                    loc,
                    why: format!("option '{line}' is outside of any [section]"),
                });
            };
            self.option_line(line, loc, &mut sec.opts, &mut stack)?;
        }
        Ok(sections)
    }

    /// One option line of a section (or of an included file).
    fn option_line(
        &self,
        line: &str,
        loc: Loc,
        opts: &mut Vec<Opt>,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), SyntaxError> {
        // fio takes any line that starts with "include" as an include: the file's name is what
        // follows the one character after the word (`include f`, `include=f`; fio keeps a
        // second space as part of the name)
        if let Some(rest) = line.strip_prefix("include") {
            let mut c = rest.chars();
            c.next();
            return self.include(c.as_str(), loc, opts, stack);
        }
        let mut unset = Vec::new();
        let mut calc = false;
        let line = substitute(line, self.env, &loc, &mut unset, &mut calc)?;
        let mut opt = split_opt(&line, loc, unset)?;
        if calc {
            if let Some(v) = &opt.value {
                opt.value = Some(calculate(v, &opt.loc)?);
            }
        }
        opts.push(opt);
        Ok(())
    }

    fn include(
        &self,
        name: &str,
        loc: Loc,
        opts: &mut Vec<Opt>,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), SyntaxError> {
        let err = |why: String| SyntaxError::At {
            loc: loc.clone(),
            why,
        };
        if name.is_empty() {
            return Err(err("include needs a file name".into()));
        }
        let name = substitute(name, self.env, &loc, &mut Vec::new(), &mut false)?;
        let p = PathBuf::from(&name);
        let current = stack.last().cloned().unwrap_or_default();
        let path = if p.is_absolute() || self.env.exists(&p) {
            p
        } else {
            match current.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.join(&p),
                _ => p,
            }
        };
        if stack.len() > MAX_INCLUDE_DEPTH {
            return Err(err(format!(
                "include {name}: more than {MAX_INCLUDE_DEPTH} nested includes"
            )));
        }
        if stack.contains(&path) {
            return Err(err(format!(
                "include {name}: {} includes itself",
                path.display()
            )));
        }
        let data = self
            .env
            .read(&path)
            .map_err(|e| err(format!("include {}: {e}", path.display())))?;
        // Files including others many times each fan out: the whole expansion is bounded.
        let total = self.included_bytes.get() + data.len() as u64;
        let count = self.includes.get() + 1;
        if count > MAX_INCLUDES {
            return Err(err(format!(
                "include {name}: more than {MAX_INCLUDES} includes in all (files included many times over?)"
            )));
        }
        self.includes.set(count);
        if total > MAX_INCLUDED_BYTES {
            return Err(err(format!(
                "include {name}: the includes add up to more than {} MiB (files included many times over?)",
                MAX_INCLUDED_BYTES >> 20
            )));
        }
        self.included_bytes.set(total);
        if !self.included.borrow().contains(&path) {
            self.included.borrow_mut().push(path.clone());
        }
        let text = String::from_utf8_lossy(&data);
        let file: Arc<str> = Arc::from(path.display().to_string().as_str());
        stack.push(path);
        for (i, raw) in text.split('\n').enumerate() {
            let l = Loc {
                file: Arc::clone(&file),
                line: (i + 1) as u32,
                argv: false,
            };
            if raw.len() > MAX_LINE {
                return Err(SyntaxError::At {
                    loc: l,
                    why: format!("line longer than {MAX_LINE} bytes"),
                });
            }
            let line = strip(raw);
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                return Err(SyntaxError::At {
                    loc: l,
                    why: "included files hold options only, no [sections] (as in fio)".into(),
                });
            }
            self.option_line(line, l, opts, stack)?;
        }
        stack.pop();
        Ok(())
    }
}

/// fio's command-line jobs: `--name=NAME` starts a job (`--name=global…` a global section),
/// options before the first `--name` are global. `args` are `(key, value, position)` already
/// split by the caller (which knows which keys take a value).
pub fn argv_sections(
    args: &[(String, Option<String>, u32)],
    env: &dyn Env,
    only: &[String],
) -> Result<Vec<Section>, SyntaxError> {
    let file: Arc<str> = Arc::from("command line");
    let mut sections: Vec<Section> = Vec::new();
    let mut skipping = false;
    for (key, value, pos) in args {
        let loc = Loc {
            file: Arc::clone(&file),
            line: *pos,
            argv: true,
        };
        let mut unset = Vec::new();
        let mut calc = false;
        let value = match value {
            Some(v) => {
                let v = substitute(v, env, &loc, &mut unset, &mut calc)?;
                Some(if calc { calculate(&v, &loc)? } else { v })
            }
            None => None,
        };
        if key == "name" {
            let name = value.clone().unwrap_or_default();
            if name.trim().is_empty() {
                return Err(SyntaxError::At {
                    loc,
                    why: "--name needs a job name".into(),
                });
            }
            let global = name.starts_with("global");
            skipping = !global && !only.is_empty() && !only.contains(&name);
            if !skipping {
                sections.push(Section {
                    name: name.clone(),
                    global,
                    loc: loc.clone(),
                    opts: vec![Opt {
                        key: "name".into(),
                        value: Some(name),
                        loc,
                        unset,
                    }],
                    file_index: usize::MAX,
                });
            }
            continue;
        }
        if skipping {
            continue;
        }
        if sections.is_empty() {
            sections.push(Section {
                name: "global".into(),
                global: true,
                loc: loc.clone(),
                opts: Vec::new(),
                file_index: usize::MAX,
            });
        }
        let sec = sections.last_mut().expect("pushed above");
        sec.opts.push(Opt {
            key: key.clone(),
            value,
            loc,
            unset,
        });
    }
    Ok(sections)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;

    /// An environment with fixed variables and in-memory files.
    #[derive(Default)]
    pub(crate) struct FakeEnv {
        pub vars: HashMap<String, String>,
        pub files: HashMap<PathBuf, Vec<u8>>,
    }

    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).cloned()
        }
        fn keyword(&self, name: &str) -> Option<String> {
            match name {
                "pagesize" => Some("4096".into()),
                "ncpus" => Some("8".into()),
                "mb_memory" => Some("16384".into()),
                _ => None,
            }
        }
        fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            self.files
                .get(path)
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        }
        fn exists(&self, path: &Path) -> bool {
            self.files.contains_key(path)
        }
    }

    fn parse(text: &str) -> Result<Vec<Section>, SyntaxError> {
        Parser::new(&FakeEnv::default()).text(text.as_bytes(), Path::new("j.fio"), 0)
    }

    #[test]
    fn sections_flags_comments_and_blanks() {
        let s = parse(
            "; a comment\n# another\n\n[global]\nbs = 4k\ntime_based\n\
             [job1]  \n  rw=randread ; trailing comment\nnumjobs=4\t; 4 threads\r\n\
             [global-more]\ndirect=1\n",
        )
        .unwrap();
        assert_eq!(s.len(), 3);
        assert!(s[0].global && !s[1].global && s[2].global);
        assert_eq!(s[0].opts[0].key, "bs");
        assert_eq!(s[0].opts[0].value.as_deref(), Some("4k"));
        assert_eq!(s[0].opts[1].key, "time_based");
        assert_eq!(s[0].opts[1].value, None);
        assert_eq!(s[1].name, "job1");
        assert_eq!(s[1].loc.line, 7);
        assert_eq!(s[1].opts[0].value.as_deref(), Some("randread"));
        assert_eq!(s[1].opts[1].value.as_deref(), Some("4"));
        assert_eq!(s[1].opts[1].loc.line, 9);
    }

    #[test]
    fn errors_name_the_line() {
        for (text, want) in [
            ("bs=4k\n[job]\n", "line 1"),
            ("[job\nbs=4k\n", "section header"),
            ("[]\n", "not a section name"),
            ("[j]\n=4k\n", "no option name"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn env_vars_and_keywords() {
        let mut env = FakeEnv::default();
        env.vars.insert("DEV".into(), "/dev/nvme0n1".into());
        let s = Parser::new(&env)
            .text(
                b"[j]\nfilename=${DEV}\nnumjobs=$ncpus\nx=${ unterminated\n",
                Path::new("j.fio"),
                0,
            )
            .unwrap();
        assert_eq!(s[0].opts[0].value.as_deref(), Some("/dev/nvme0n1"));
        assert_eq!(s[0].opts[1].value.as_deref(), Some("8"));
        assert_eq!(s[0].opts[2].value.as_deref(), Some("${ unterminated"));
        // A keyword with arithmetic is computed as fio's bc does (examples/page_fault.fio).
        let s = Parser::new(&env)
            .text(
                b"[j]\nsize=8*1024*$pagesize\nsize=5*1024*1024*$mb_memory/8 # 5/8\nrw=read:-8k\n",
                Path::new("j.fio"),
                0,
            )
            .unwrap();
        assert_eq!(s[0].opts[0].value.as_deref(), Some("33554432"));
        assert_eq!(s[0].opts[1].value.as_deref(), Some("10737418240"));
        assert_eq!(
            s[0].opts[2].value.as_deref(),
            Some("read:-8k"),
            "no keyword, no bc"
        );
        // An unset variable is an empty string (as fio does).
        let s = Parser::new(&env)
            .text(b"[j]\nfilename=/x/${NOPE}y\n", Path::new("j.fio"), 0)
            .unwrap();
        assert_eq!(s[0].opts[0].value.as_deref(), Some("/x/y"));
    }

    #[test]
    fn includes_relative_nested_and_cycles() {
        let mut env = FakeEnv::default();
        env.files.insert(
            "/jobs/common.fio".into(),
            b"bs=8k\ninclude more.fio\n".to_vec(),
        );
        env.files
            .insert("/jobs/more.fio".into(), b"; c\niodepth=4\n".to_vec());
        env.files
            .insert("/jobs/loop.fio".into(), b"include loop.fio\n".to_vec());
        env.files.insert("/jobs/sect.fio".into(), b"[x]\n".to_vec());
        let p = Parser::new(&env);
        let s = p
            .text(
                b"[j]\nrw=read\ninclude common.fio\nsize=1m\n",
                Path::new("/jobs/main.fio"),
                0,
            )
            .unwrap();
        let keys: Vec<&str> = s[0].opts.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, vec!["rw", "bs", "iodepth", "size"]);
        assert_eq!(&*s[0].opts[2].loc.file, "/jobs/more.fio");
        assert_eq!(s[0].opts[2].loc.line, 2);
        // as fio: the name follows the one character after "include" (`include=f` too)
        let s = p
            .text(b"[j]\ninclude=more.fio\n", Path::new("/jobs/main.fio"), 0)
            .unwrap();
        assert_eq!(s[0].opts[0].key, "iodepth");
        let e = p
            .text(b"[j]\ninclude loop.fio\n", Path::new("/jobs/main.fio"), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("includes itself"), "{e}");
        let e = p
            .text(b"[j]\ninclude sect.fio\n", Path::new("/jobs/main.fio"), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [sections]"), "{e}");
        let e = p
            .text(
                b"[j]\ninclude nothere.fio\n",
                Path::new("/jobs/main.fio"),
                0,
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothere.fio") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn section_filter() {
        let env = FakeEnv::default();
        let mut p = Parser::new(&env);
        p.only = vec!["b".into()];
        let s = p
            .text(
                b"[global]\nbs=4k\n[a]\nrw=read\n[b]\nrw=write\n",
                Path::new("j"),
                0,
            )
            .unwrap();
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["global", "b"]);
    }

    #[test]
    fn argv_jobs() {
        let a = |k: &str, v: Option<&str>, p| (k.to_string(), v.map(String::from), p);
        let s = argv_sections(
            &[
                a("rw", Some("read"), 1),
                a("name", Some("x"), 2),
                a("bs", Some("8k"), 3),
                a("name", Some("y"), 4),
                a("time_based", None, 5),
            ],
            &FakeEnv::default(),
            &[],
        )
        .unwrap();
        assert_eq!(s.len(), 3);
        assert!(s[0].global);
        assert_eq!(s[1].name, "x");
        assert_eq!(s[1].opts.len(), 2);
        assert_eq!(s[2].opts[1].key, "time_based");
        assert!(s[2].opts[1].loc.to_string().contains("argument 5"));
    }

    #[test]
    fn include_fan_out_is_bounded() {
        let mut env = FakeEnv::default();
        // Fan-out: 12 files each including the next 10 times (10^12 includes) is refused.
        for i in 0..12 {
            let next = format!("include f{}.fio\n", i + 1).repeat(10);
            env.files
                .insert(format!("/jobs/f{i}.fio").into(), next.into_bytes());
        }
        env.files
            .insert("/jobs/f12.fio".into(), b"bs=4k\n".to_vec());
        let p2 = Parser::new(&env);
        let e = p2
            .text(b"[j]\ninclude f0.fio\n", Path::new("/jobs/main.fio"), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 4096 includes in all"), "{e}");
        // A bare include names what is missing.
        let e = p2
            .text(b"[j]\ninclude\n", Path::new("/jobs/main.fio"), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("include needs a file name"), "{e}");
    }
}
