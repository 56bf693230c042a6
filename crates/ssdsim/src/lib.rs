//! Discrete-event SSD (and RAID 0 array) simulator for ssdlab.
//!
//! A drive is modelled as host link → controller (firmware, DRAM write cache, compression) →
//! FTL (page-level mapping, GC, TRIM, pSLC) → NAND (channels, dies, planes). Timing uses
//! resource reservation: every resource keeps a "busy until" timeline and a command reserves
//! them in order when it is submitted, so its completion time is known (or, for write-through
//! data waiting in a partly filled page, known once that page is programmed). Several drives
//! share one event queue and one host adapter (per-request overhead, optional shared uplink).
//!
//! Virtual time is in integer nanoseconds; runs are deterministic.

mod config;
mod drive;
mod events;
pub mod loadgen;
mod mem;
mod sim;

pub use config::{
    load_config_file, load_preset, preset_names, preset_summary, ConfigError, ControllerConfig,
    DriveConfig, FtlConfig, HostConfig, Interface, NandConfig, PresetInfo, Rated, UnalignedPolicy,
};
pub use drive::AllocError;
pub use sim::Simulator;

/// Why a simulator could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Alloc(#[from] AllocError),
}

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Host operation kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read,
    Write,
    Trim,
}

/// One host command.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostCmd {
    pub kind: OpKind,
    /// Byte offset within the drive's user capacity (sector-granular: rounded down to 512).
    pub offset: u64,
    /// Length in bytes (rounded up to whole sectors).
    pub len: u64,
    /// Caller's estimate of compressed size / size (0 < f <= 1); used by compressing drives.
    pub nand_fraction: f32,
}

impl HostCmd {
    pub fn read(offset: u64, len: u64) -> Self {
        HostCmd {
            kind: OpKind::Read,
            offset,
            len,
            nand_fraction: 1.0,
        }
    }
    pub fn write(offset: u64, len: u64) -> Self {
        HostCmd {
            kind: OpKind::Write,
            offset,
            len,
            nand_fraction: 1.0,
        }
    }
    pub fn trim(offset: u64, len: u64) -> Self {
        HostCmd {
            kind: OpKind::Trim,
            offset,
            len,
            nand_fraction: 1.0,
        }
    }
}

/// Drive state before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precondition {
    /// Everything trimmed.
    #[default]
    Fresh,
    /// The whole user capacity written sequentially once.
    Full,
    /// Full, then random overwrites of `ftl.steady_overwrite` × capacity (GC in steady state).
    Steady,
}

impl FromStr for Precondition {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "fresh" | "trimmed" | "empty" => Ok(Precondition::Fresh),
            "full" | "seq" | "sequential" => Ok(Precondition::Full),
            "steady" | "random" => Ok(Precondition::Steady),
            _ => Err(ConfigError::new(
                "precondition",
                format!("unknown state {s:?}; expected fresh, full or steady"),
            )),
        }
    }
}

impl std::fmt::Display for Precondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precondition::Fresh => "fresh",
            Precondition::Full => "full",
            Precondition::Steady => "steady",
        })
    }
}

/// Host adapter in front of the drives (an HBA or chipset RAID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterConfig {
    /// Shared uplink bandwidth for all drives' data transfers (e.g. a chipset DMI); None = none.
    pub uplink_bytes_per_sec: Option<u64>,
    /// Serial adapter/driver time per request, ns.
    pub per_request_overhead_ns: u64,
    /// Whether TRIM reaches the drives (false: trims complete in the adapter).
    pub trim_passthrough: bool,
}

impl Default for AdapterConfig {
    /// No uplink limit, no overhead, TRIM passes through.
    fn default() -> Self {
        Self::passthrough()
    }
}

impl AdapterConfig {
    /// No uplink limit, no overhead, TRIM passes through.
    pub fn passthrough() -> Self {
        AdapterConfig {
            uplink_bytes_per_sec: None,
            per_request_overhead_ns: 0,
            trim_passthrough: true,
        }
    }
}

/// Per-drive counters since the end of preconditioning.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DriveCounters {
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    /// Mapping units unmapped by TRIM.
    pub trimmed_units: u64,
    /// NAND page reads (host, read-modify-write and GC).
    pub nand_reads: u64,
    /// NAND page programs (host, pSLC, GC, folding).
    pub nand_programs: u64,
    /// Bytes programmed (pages × page size).
    pub nand_program_bytes: u64,
    pub nand_erases: u64,
    /// Greedy GC victims collected (pSLC folds counted separately).
    pub gc_runs: u64,
    /// Pages with valid data read by GC/folding.
    pub gc_pages_moved: u64,
    /// Mapping units relocated by GC/folding.
    pub gc_units_moved: u64,
    pub pslc_folds: u64,
    /// Old units read from NAND for unaligned writes under `rmw`.
    pub rmw_reads: u64,
    /// NAND bytes programmed / host bytes written.
    pub write_amplification: f64,
    /// Mapping units read (or merged) from the controller buffer / DRAM instead of NAND.
    pub cache_hits: u64,
    /// Units overwritten while their previous data was still in the buffer.
    pub cache_write_hits: u64,
    pub pslc_programs: u64,
    pub compression_saved_bytes: u64,
    pub per_die_busy_ns: Vec<u64>,
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    pub link_busy_ns: u64,
    pub fw_busy_ns: u64,
    /// Total time writes waited for write-cache space.
    pub cache_wait_ns: u64,
    pub mapped_bytes: u64,
    pub free_blocks: u64,
}
