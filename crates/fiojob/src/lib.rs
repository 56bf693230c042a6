//! fio job files and fio command lines, read the way fio 3.x reads them, into jobs ssdlab runs.
//!
//! A hand-written parser, because fio's syntax is not quite INI (bare flags, `;`/`#` comments
//! anywhere, `[global]` applying only to later sections, `include`, `${VAR}`), and INI crates
//! were found to mis-read bare flags and merge repeated `[global]` sections.
//!
//! * [`ini`]: sections and options from job files (includes, substitutions, line numbers) and
//!   from fio's command-line form (`--name=x --rw=randread …`).
//! * [`value`]: fio's units (`kb_base`, the IEC quirk, percentages, times, ranges, per-direction
//!   lists).
//! * [`options`]: every fio option name, aliases, flags, options accepted without effect, and
//!   suggestions for typos.
//! * [`job`]: typed settings with fio's defaults, jobs with their waves (stonewall, wait_for)
//!   and reporting groups, unsupported keys with their lines, and the ssdlab workload of a job.
//! * [`naming`]: messages about a job's settings in fio's words (`bs=3 (job.fio line 4)`).
//! * [`plan`]: how each job lands on a target (regions, percentages of a target's length,
//!   default file names, several files, traces, the simulated drive) and the engine's units,
//!   options and logs for it (and the log files the jobs write); it probes targets and writes
//!   nothing.
//! * [`paths`]: what a planned job set reads and writes besides its targets' data, for the
//!   check of outputs against inputs.
//! * [`argv`]: fio options on `ssdlab fio`'s command line (split from its own flags, unknown
//!   ones refused) and a job file read from stdin.
//! * [`run`]: the waves of planned jobs checked by the engine before anything is written, then
//!   run one after the other (fio's verify phase, clones' `write_iolog` parts merged), and the
//!   report entries made of what they measured.
//!
//! The parser and the settings know no files: only [`plan`] (which reads) and [`run`] (which
//! runs the jobs) touch targets.

pub mod argv;
pub mod ini;
pub mod job;
pub mod naming;
pub mod options;
pub mod paths;
pub mod plan;
pub mod run;
mod table;
pub mod value;

pub use ini::{argv_sections, Env, Loc, Opt, Parser, Section, SyntaxError, SystemEnv};
pub use job::{
    resolve, Engine, ExitWhat, Fadvise, Fallocate, Issue, Job, JobError, JobSet, Mode, Settings,
    Unified, Written, FIO_RANDSEED,
};
pub use naming::JobNaming;
pub use value::Size;
