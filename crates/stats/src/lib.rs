//! Statistics of a run: what the engine records while I/O completes ([`Recorder`]) and what a run
//! reports when it ends ([`RunResult`]). Recorders of several workers merge exactly (histograms are
//! added bucket by bucket), so a multi-worker result is the same as if one recorder had seen everything.

pub mod aging;
pub mod device;
pub mod fio;
pub mod log;
mod recorder;
mod result;

pub use aging::{AgingDay, AgingRun, AgingWindow};
pub use log::{
    HistLine, JobLog, KindMax, KindWindow, LogConfig, LogRecorder, LogSample, LogWindow,
};
pub use recorder::{
    DecodeError, KindRecorder, LatHist, Recorder, MAX_WINDOWS, SERIES_NS, STAT_WINDOW_NS,
};
pub use result::{
    CpuUsage, DepthLevels, DiskUtil, EngineKind, ErrorTally, FioSteadyState, IoErrorRecord,
    LatLevels, LatSummary, MemberStats, OpSummary, RunResult, SeriesPoint, SteadyState, TargetDesc,
    TargetKind, VerifySummary, PERCENTILES,
};
