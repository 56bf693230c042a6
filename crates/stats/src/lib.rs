//! Statistics of a run: what the engine records while I/O completes ([`Recorder`]) and what a run
//! reports when it ends ([`RunResult`]). Recorders of several workers merge exactly (histograms are
//! added bucket by bucket), so a multi-worker result is the same as if one recorder had seen everything.

mod recorder;
mod result;

pub use recorder::{DecodeError, KindRecorder, Recorder, DEPTH_LEVELS};
pub use result::{
    CpuUsage, IoErrorRecord, LatLevels, LatSummary, MemberStats, OpSummary, RunResult, SeriesPoint,
    TargetDesc, VerifySummary, PERCENTILES,
};
