//! Discrete-event SSD (and RAID 0 array) simulator for ssdlab.
//!
//! A drive is modelled layer by layer, like a controller: host interface (command slots,
//! cut-through link transfers; the `host` module) → controller (firmware cores, DRAM write
//! buffer, compression) → FTL (page-level mapping, page groups, GC and pSLC folding moved page
//! by page, TRIM) → flash transaction scheduler (per-die queues with priorities, multi-plane
//! command formation, program/erase suspend) → NAND (dies, channels, timings). Dies are
//! event-driven: each decides what to run when it becomes free. Several drives share one event
//! queue and one host adapter (per-request overhead, optional shared uplink).
//! `docs/SIMULATOR.md` explains the model layer by layer.
//!
//! Virtual time is in integer nanoseconds; runs are deterministic.

mod adapter;
mod config;
mod controller;
mod counters;
mod drive;
mod events;
mod ftl;
mod host;
pub mod loadgen;
mod mem;
mod nand;
mod sched;
mod sim;
mod state;

pub use adapter::{WriteCacheConfig, WriteCacheCounters};
pub use config::{
    load_config_file, load_preset, pcie_payload_rate, preset_names, preset_summary, preset_toml,
    Calibration, ConfigError, ControllerConfig, DriveConfig, FtlConfig, FtlScheme, GcPolicy,
    HostConfig, Interface, NandConfig, PresetInfo, PslcWhenFull, Rated, SchedConfig,
    UnalignedPolicy,
};
pub use counters::{AuditReport, DriveCounters, MergeCounters, Utilisation};
pub use ftl::AllocError;
pub use host::HostStack;
pub use sim::{Simulator, UntimedFill};
pub use state::{StateError, StateExtra, STATE_MAGIC, STATE_VERSION};

/// The simulator's model version: raised whenever a change of the model changes what it
/// simulates, so that stored results of an earlier model (a sweep's points) are simulated again
/// instead of being mixed with new ones. 2: the SATA link's frames, the host's time per command,
/// firmware cores with roles and pipelined stages, buffered read-modify-write. 3: the hybrid
/// log-block FTL (`ftl.scheme = "hybrid"`) of the vertex-barefoot-120g and ssdnow-vplus-128g
/// presets.
pub const MODEL_VERSION: u32 = 3;

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

/// Host operation kind: the workload's own (read, write, trim), so a simulated command and
/// the I/O that made it share one type.
pub use ssdlab_workload::OpKind;

/// One host command.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostCmd {
    pub kind: OpKind,
    /// Byte offset within the drive's user capacity (sector-granular: rounded down to 512).
    pub offset: u64,
    /// Length in bytes (rounded up to whole sectors).
    pub len: u64,
    /// Caller's estimate of compressed size / size (0 < f <= 1); used by compressing drives.
    pub nand_fraction: f32,
    /// The host stream (job, worker) posting the command: an NVMe drive puts it on I/O queue
    /// `queue mod host.nvme_queues`. Ignored by SATA drives (one NCQ queue).
    pub queue: u16,
}

impl HostCmd {
    pub fn read(offset: u64, len: u64) -> Self {
        HostCmd {
            kind: OpKind::Read,
            offset,
            len,
            nand_fraction: 1.0,
            queue: 0,
        }
    }
    pub fn write(offset: u64, len: u64) -> Self {
        HostCmd {
            kind: OpKind::Write,
            offset,
            len,
            nand_fraction: 1.0,
            queue: 0,
        }
    }
    pub fn trim(offset: u64, len: u64) -> Self {
        HostCmd {
            kind: OpKind::Trim,
            offset,
            len,
            nand_fraction: 1.0,
            queue: 0,
        }
    }
}

/// What a run can write of one drive, for sizing its memory: the mapping tables are sparse
/// (allocated per 64 KiB chunk on first write), so a drive takes memory for the logical
/// region written and the flash written, not for its capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touch {
    /// Bytes of the drive's logical space the run can write (one contiguous region).
    pub logical_bytes: u64,
    /// Bytes the run can write to the drive (host writes), at most.
    pub written_bytes: u64,
}

impl Touch {
    /// Everything: a drive written whole (preconditioned full or steady, or no bound known).
    pub const ALL: Touch = Touch {
        logical_bytes: u64::MAX,
        written_bytes: u64::MAX,
    };
    /// Nothing written: a fresh drive, or a read-only run on one.
    pub const NONE: Touch = Touch {
        logical_bytes: 0,
        written_bytes: 0,
    };

    /// What a drive brought into state `pre` has written before a run starts.
    pub fn of_state(pre: Precondition) -> Touch {
        match pre {
            Precondition::Fresh => Touch::NONE,
            Precondition::Full | Precondition::Steady => Touch::ALL,
        }
    }

    /// Both together (regions as one region covering both).
    pub fn plus(self, o: Touch) -> Touch {
        Touch {
            logical_bytes: self.logical_bytes.max(o.logical_bytes),
            written_bytes: self.written_bytes.saturating_add(o.written_bytes),
        }
    }
}

/// Drive state before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
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
    /// The driver's write-back cache in host memory (`None`: writes go straight through).
    #[serde(default)]
    pub write_cache: Option<WriteCacheConfig>,
    /// The host computer's own time per command (block layer and AHCI/NVMe driver), on every
    /// command of every drive.
    #[serde(default)]
    pub host: HostStack,
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
            write_cache: None,
            host: HostStack::default(),
        }
    }
}

/// The host adapters simulated drives can sit behind, by name (`run --adapter`, a sweep
/// target's `adapter`); [`AdapterModel::default_for`] picks the one a drive and array size get
/// when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdapterModel {
    /// Requests go straight to the drives: no shared uplink, no driver time (a drive on its
    /// own port, NVMe drives on CPU PCIe lanes).
    None,
    /// Chipset RAID: Intel Rapid Storage Technology on a 6- or 7-series PCH (the Z77 of the
    /// classic RAID 0 reviews). Every member's data crosses the PCH's DMI 2.0 link to the CPU:
    /// four lanes at 5 GT/s with 8b/10b coding, 2 GB/s each way (Intel 7 Series / C216 Chipset
    /// Family PCH datasheet, 326776, "Direct Media Interface"). TRIM reaches RAID 0 members
    /// (RST 11.0 and later on 7-series chipsets). RST's volume write-back cache is off unless
    /// asked for (`--adapter-cache`), as in RST itself. Intel publishes no per-request driver
    /// time, so none is assumed; `--adapter-overhead` adds one.
    Chipset,
}

impl AdapterModel {
    /// The DMI 2.0 payload rate of [`AdapterModel::Chipset`], bytes/s.
    pub const DMI2_BYTES_PER_SEC: u64 = 2_000_000_000;

    pub fn as_str(self) -> &'static str {
        match self {
            AdapterModel::None => "none",
            AdapterModel::Chipset => "chipset",
        }
    }

    /// The adapter's settings.
    pub fn config(self) -> AdapterConfig {
        match self {
            AdapterModel::None => AdapterConfig::passthrough(),
            AdapterModel::Chipset => AdapterConfig {
                uplink_bytes_per_sec: Some(Self::DMI2_BYTES_PER_SEC),
                ..AdapterConfig::passthrough()
            },
        }
    }

    /// The adapter `n` drives of `drive` sit behind unless told otherwise: an array of SATA
    /// drives is chipset RAID (where SATA RAID 0 is built on desktops, and what the classic
    /// reviews measured); a single drive, or an array of NVMe drives (on CPU lanes, striped by
    /// the OS), goes straight through.
    pub fn default_for(drive: &DriveConfig, n: usize) -> AdapterModel {
        if n > 1 && drive.host.interface != Interface::Nvme {
            AdapterModel::Chipset
        } else {
            AdapterModel::None
        }
    }
}

impl std::fmt::Display for AdapterModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AdapterModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "passthrough" | "pass-through" => Ok(AdapterModel::None),
            "chipset" | "rst" => Ok(AdapterModel::Chipset),
            _ => Err(format!("unknown adapter {s:?} (use chipset or none)")),
        }
    }
}

/// A simulated target's adapter as asked for: a named model (or the default for the drive and
/// array size) with fields overridden.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AdapterChoice {
    /// None: [`AdapterModel::default_for`] the drive and array size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<AdapterModel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_bytes_per_sec: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request_overhead_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_passthrough: Option<bool>,
    /// Bytes of the driver's write-back cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
    /// The host's own time per command (None: [`HostStack::default_for`] the drive's
    /// interface).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostStack>,
}

impl AdapterChoice {
    /// Nothing asked for: the default model, as it is.
    pub fn is_default(&self) -> bool {
        *self == AdapterChoice::default()
    }

    /// The model used for `n` drives of `drive`.
    pub fn model_for(&self, drive: &DriveConfig, n: usize) -> AdapterModel {
        self.model
            .unwrap_or_else(|| AdapterModel::default_for(drive, n))
    }

    /// The settings for `n` drives of `drive`.
    pub fn resolve(&self, drive: &DriveConfig, n: usize) -> AdapterConfig {
        let mut c = self.model_for(drive, n).config();
        if let Some(u) = self.uplink_bytes_per_sec {
            c.uplink_bytes_per_sec = Some(u);
        }
        if let Some(o) = self.per_request_overhead_ns {
            c.per_request_overhead_ns = o;
        }
        if let Some(t) = self.trim_passthrough {
            c.trim_passthrough = t;
        }
        if let Some(b) = self.cache_bytes {
            c.write_cache = Some(WriteCacheConfig::with_size(b));
        }
        c.host = self
            .host
            .unwrap_or_else(|| HostStack::default_for(drive.host.interface));
        c
    }
}
