//! The workload model shared by real runs and simulated runs: what I/O to issue.
//!
//! * [`units`]: parsing sizes (`4k`, `8GiB`) and durations (`500ms`, `3m`) like fio does.
//! * [`field`]: the settings an error can be about ([`Field`]), named per front end ([`Naming`]).
//! * [`spec`]: [`WorkloadSpec`], the serde-serialisable description of a run, and its validation.
//! * [`gen`]: deterministic per-worker offset/op generators.
//! * [`pattern`]: data patterns written by writes and their expected compressibility.
//! * [`rng`]: a small, fast, seedable PRNG (xoshiro256**), so a seed gives the same sequence everywhere.
//! * [`replay`]: recorded traces (fio iolog v2/v3, blktrace) read into a [`replay::Trace`], and
//!   fio's v3 iolog lines for recording one.
//! * [`aging`]: an office-like file-system aging workload (files created, rewritten and deleted
//!   with TRIM over days).
//! * [`input`]: reading the files a user names (job files, traces): regular files only, bounded.
//! * [`source`]: [`OpSource`], where a worker's ops come from (generated or replayed).

pub mod aging;
pub mod dedupe;
pub mod dist;
pub mod field;
pub mod files;
pub mod gen;
pub mod input;
pub mod pattern;
pub mod replay;
pub mod rng;
pub mod source;
pub mod spec;
pub mod steady;
pub mod units;
pub mod verify;

pub use aging::{AgingSpec, AllocPolicy};
pub use dedupe::{Dedupe, DedupeGen, DedupeMode};
pub use dist::{BlockSizes, BsChoice, Distribution, Zone};
pub use field::{line_of, Field, Flags, Naming, TomlNaming, WrittenKey};
pub use files::{FileRegion, FileService, Files};
pub use gen::{Op, OpGen, OpKind};
pub use pattern::{scramble, Chunked, Pattern, PatternBytes, PatternError};
pub use replay::{ReplaySpec, Trace, TraceError};
pub use source::{Next, OpList, OpSource, Rated, Replay, Think};
pub use spec::{
    CompletionBatch, LatencyTarget, MinRate, RwMode, SpecError, StopCondition, Strided, TrimMode,
    VerifyBacklog, WorkloadSpec,
};
pub use steady::{SteadyCriterion, SteadyMetric};
pub use units::{
    edit_distance, format_duration, format_size, parse_duration, parse_size, UnitError,
};
