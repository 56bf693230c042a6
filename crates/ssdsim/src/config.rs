//! Drive configuration (TOML), validation, dotted-path overrides and the embedded presets.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A configuration error naming the offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid drive config: {field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the field (e.g. `nand.channels`), or `preset` / `file`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Host interface kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// SATA 1.5 Gb/s (SATA revision 1) with NCQ (at most 32 commands inside the drive).
    #[serde(rename = "sata1.5g")]
    Sata1g5,
    /// SATA 3 Gb/s with NCQ.
    Sata3g,
    /// SATA 6 Gb/s with NCQ.
    Sata6g,
    /// NVMe over PCIe (queue count × depth commands inside the drive, full-duplex link).
    Nvme,
}

impl Interface {
    /// The SATA line rate in bits per second (None for NVMe).
    pub fn sata_line_bps(self) -> Option<u64> {
        match self {
            Interface::Sata1g5 => Some(1_500_000_000),
            Interface::Sata3g => Some(3_000_000_000),
            Interface::Sata6g => Some(6_000_000_000),
            Interface::Nvme => None,
        }
    }

    /// Whether the drive is a SATA drive (one half-duplex link, NCQ, FIS exchange).
    pub fn is_sata(self) -> bool {
        self != Interface::Nvme
    }
}

/// Link-layer cost of one SATA frame (FIS) beyond its payload, in dword (40-bit) times: SOF,
/// CRC and EOF, the X_RDY/R_RDY, R_IP, WTRM/R_OK handshake primitives and the turnaround of the
/// half-duplex link. Derived (not measured here) from what SATA drives reach at most: 8 KiB data
/// frames at this cost give 572 MB/s on a 6 Gb/s link and 286 MB/s on 3 Gb/s, the ceilings the
/// fastest drives of each generation measured sequentially (about 550–560 and 280–285 MB/s);
/// with the command's own frames a 4 KiB read then costs 10.3 µs of a 6 Gb/s link, the ~97K
/// IOPS ceiling of SATA 6 Gb/s drives.
pub const SATA_FIS_OVERHEAD_DWORDS: u64 = 100;

/// What the FTL does with a write that covers only part of a mapping unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnalignedPolicy {
    /// Read the old unit from NAND (tR + transfer), merge, rewrite the whole unit.
    Rmw,
    /// Sector-granular remapping: no read, only the written sectors are programmed, at a
    /// per-command mapping cost (`controller.remap_cost_ns`).
    Remap,
}

/// What host writes do once the SLC cache's share is used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PslcWhenFull {
    /// Straight to native blocks.
    #[default]
    Native,
    /// Into SLC blocks while the oldest are folded into native blocks.
    Fold,
}

/// How the FTL maps logical pages to flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FtlScheme {
    /// Page-level mapping: any mapping unit anywhere, greedy (or other) garbage collection.
    #[default]
    Page,
    /// Hybrid log-block mapping after FAST (Lee et al., ACM TECS 6(3), 2007; BAST: Kim et al.,
    /// IEEE Trans. Consumer Electronics 48(2), 2002): data blocks are block-mapped (page `i` of
    /// a logical block at page `i` of its data block), writes go to a few page-mapped log
    /// blocks — one sequential log block and `ftl.log_blocks` fully associative random log
    /// blocks per die — and are merged into data blocks (switch, partial and full merges)
    /// when log space runs out. See `ftl::hybrid`.
    Hybrid,
}

impl FtlScheme {
    fn is_page(&self) -> bool {
        *self == FtlScheme::Page
    }
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// Block sets per die the hybrid scheme needs beyond the data blocks and the random log blocks:
/// the sequential log block and the one replacing it while the old one waits for its merge,
/// a running merge's destination, and blocks waiting for their erase.
pub(crate) const HYBRID_SPARE_SETS: u64 = 6;

/// How the FTL picks the block to collect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The closed block with the fewest valid sectors (the classic choice of SSD firmware).
    #[default]
    Greedy,
    /// Rosenblum & Ousterhout's cost-benefit: the highest `(1 - u) · age / (1 + u)`, where `u`
    /// is the valid fraction and `age` the time since the block was last written.
    CostBenefit,
    /// Greedy among `ftl.gc_d_choices` blocks drawn at random (the d-choices family analysed by
    /// Van Houdt); cheap for very large planes.
    DChoices,
}

/// Host link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// `sata3g`, `sata6g` or `nvme`.
    pub interface: Interface,
    /// Data bandwidth of the link in bytes per second. 0 (the default): derived from the
    /// interface — SATA: the line rate after 8b/10b coding (600 MB/s at 6 Gb/s), each frame
    /// paying its framing and handshake on top (`SATA_FIS_OVERHEAD_DWORDS`); NVMe: from
    /// `pcie_gen`, `pcie_lanes` and `pcie_mps_bytes`. A value given here is the payload rate of
    /// the link as one figure (frames cost nothing on top).
    #[serde(default)]
    pub link_bytes_per_sec: u64,
    /// Extra link time per command beyond the protocol's frames, ns (default 0: the SATA frames
    /// of a command — command, DMA set-up, data, status — are counted one by one).
    #[serde(default)]
    pub cmd_overhead_ns: u64,
    /// Commands the drive accepts at once: SATA NCQ at most 32; NVMe: entries of each I/O
    /// submission queue (`nvme_queues` queues of this depth).
    pub queue_depth: u32,
    /// NVMe: PCIe generation of the link (1–5); with `pcie_lanes` it gives the link rate when
    /// `link_bytes_per_sec` is 0. 0 = not given.
    #[serde(default)]
    pub pcie_gen: u32,
    /// NVMe: PCIe lanes (1, 2, 4, 8 or 16). 0 = not given.
    #[serde(default)]
    pub pcie_lanes: u32,
    /// NVMe: largest TLP payload (Max_Payload_Size), bytes: 128–4096. Sets the share of the
    /// link that carries data (each TLP also carries about 26 bytes of header, sequence
    /// number, LCRC and framing).
    #[serde(default = "default_mps")]
    pub pcie_mps_bytes: u32,
    /// NVMe: I/O submission/completion queue pairs in use. The engine's streams (jobs,
    /// workers) go to queue `stream mod nvme_queues`, as Linux blk-mq gives each CPU its own
    /// queue; a full queue holds its next commands in the host.
    #[serde(default = "one")]
    pub nvme_queues: u32,
    /// NVMe: the host's doorbell write (a posted MMIO write) reaching the controller, ns.
    #[serde(default)]
    pub doorbell_ns: u64,
    /// NVMe: the controller's DMA fetch of the 64-byte submission entry from host memory (a
    /// PCIe read round trip), ns.
    #[serde(default)]
    pub sq_fetch_ns: u64,
    /// NVMe: posting the 16-byte completion entry and the MSI-X interrupt reaching the host,
    /// ns.
    #[serde(default)]
    pub completion_ns: u64,
}

fn default_mps() -> u32 {
    256
}

impl HostConfig {
    /// Data bytes per second of the link: `link_bytes_per_sec` when given, else derived from
    /// the SATA line rate (8b/10b) or from the PCIe generation, lanes and payload size (NVMe).
    pub fn link_rate(&self) -> u64 {
        if self.link_bytes_per_sec > 0 {
            return self.link_bytes_per_sec;
        }
        match self.interface.sata_line_bps() {
            Some(bps) => bps / 10,
            None => pcie_payload_rate(self.pcie_gen, self.pcie_lanes, self.pcie_mps_bytes),
        }
    }

    /// Link time of one SATA frame's framing and handshake, ns (0 for NVMe, or when the link's
    /// rate is given as one payload figure).
    pub fn fis_overhead_ns(&self) -> u64 {
        match self.interface.sata_line_bps() {
            Some(bps) if self.link_bytes_per_sec == 0 => {
                SATA_FIS_OVERHEAD_DWORDS * 40 * 1_000_000_000 / bps
            }
            _ => 0,
        }
    }
}

/// Data bytes per second a PCIe link carries in one direction: transfer rate per lane ×
/// lanes × line-code efficiency (8b/10b for generations 1 and 2, 128b/130b from 3) / 8, times
/// the TLP payload share `mps / (mps + 26)` (header 16 B, sequence number 2 B, LCRC 4 B,
/// framing 4 B). Flow-control and ACK packets are not deducted. 0 for an unknown generation.
pub fn pcie_payload_rate(gen: u32, lanes: u32, mps: u32) -> u64 {
    let (gt_s, code) = match gen {
        1 => (2.5e9, 8.0 / 10.0),
        2 => (5.0e9, 8.0 / 10.0),
        3 => (8.0e9, 128.0 / 130.0),
        4 => (16.0e9, 128.0 / 130.0),
        5 => (32.0e9, 128.0 / 130.0),
        _ => return 0,
    };
    let tlp = mps as f64 / (mps as f64 + 26.0);
    (gt_s * code / 8.0 * lanes as f64 * tlp) as u64
}

/// Controller (firmware, DRAM, compression).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Firmware time to decode a read command, ns, on a `host` core (with `fw_map_ns` and the
    /// completion, the command's firmware time).
    pub fw_read_ns: u64,
    /// Firmware time to decode a write command and set up its data transfer, ns, on a `host`
    /// core.
    pub fw_write_ns: u64,
    /// Firmware time per TRIM command, ns, on a `host` core.
    pub fw_trim_ns: u64,
    /// Additional firmware time per 4 KiB unit of a read command beyond the first (its
    /// mapping lookup), ns, on an `ftl` core: bounds the large-block read throughput of
    /// controllers slower than their link; a unit's page read starts once it is looked up.
    #[serde(default)]
    pub fw_read_per_unit_ns: u64,
    /// Additional firmware time per 4 KiB unit of a write command beyond the first (its
    /// mapping update), ns, on an `ftl` core.
    #[serde(default)]
    pub fw_write_per_unit_ns: u64,
    /// Firmware time to relocate one NAND page of live data during garbage collection (or
    /// pSLC folding), ns: the mapping updates and the handling of the moved data by the
    /// firmware. It runs on the firmware cores, so GC moves compete with host commands for
    /// them. 0 (the default): GC costs the firmware nothing, only NAND and channel time.
    #[serde(default)]
    pub fw_gc_move_ns: u64,
    /// Parallel firmware processing units, each doing every kind of firmware work (used when
    /// `cores` is empty).
    #[serde(default = "one")]
    pub fw_units: u32,
    /// The controller's firmware cores and what each does, one entry per core: `host`
    /// (command decode and completion: the host interface layer), `ftl` (mapping lookups and
    /// updates per 4 KiB, GC page moves), `flash` (issuing NAND commands: the flash interface
    /// layer), joined with `+` when one core does several (`"host+ftl"`), `all` for every role.
    /// A command's stages run on the cores of their role and overlap across commands and with
    /// the flash. Empty: `fw_units` cores doing everything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<String>,
    /// Firmware time per read or write command for its mapping (the lookup or the allocation
    /// and update of its first 4 KiB), ns, on an `ftl` core, after the command's decode.
    #[serde(default)]
    pub fw_map_ns: u64,
    /// Firmware time per command when it completes (status posted, slot freed), ns, on a
    /// `host` core.
    #[serde(default)]
    pub fw_complete_ns: u64,
    /// Firmware time to issue one NAND command of the host path (a page read, a page group's
    /// program), ns, on a `flash` core. GC's NAND commands are in `fw_gc_move_ns`.
    #[serde(default)]
    pub fw_flash_ns: u64,
    /// ECC decoding of data read from the NAND, ns per 4 KiB on one decode engine: a stage
    /// between the channel and the host (or the GC buffer) that reads queue for when the
    /// engines are busy. 0 (the default): decoding keeps pace with the channels (inline, as
    /// with per-channel BCH engines) and costs nothing separately.
    #[serde(default)]
    pub ecc_decode_ns: u64,
    /// Decode engines shared by all channels (with `ecc_decode_ns`).
    #[serde(default = "one")]
    pub ecc_engines: u32,
    /// Controller memory holding the mapping table, bytes: on-chip SRAM, or the host memory
    /// buffer (HMB) of a DRAM-less NVMe drive. The table lives in flash as translation pages
    /// (one NAND page of 4-byte entries each) and this many bytes of them are cached, least
    /// recently used out first; a miss costs a NAND read before the command can go on, and a
    /// changed page pushed out is programmed back (see `ftl::mapcache`). 0 (the default): the
    /// whole table is in DRAM and costs nothing.
    #[serde(default)]
    pub map_cache_bytes: u64,
    /// DRAM write-cache size in bytes (write-back); 0 = no cache: a write completes after its
    /// NAND program.
    pub cache_bytes: u64,
    /// On-the-fly compression (SandForce style): NAND bytes = ceil(len × nand_fraction).
    #[serde(default)]
    pub compression: bool,
    /// Extra firmware time for a command that is not aligned to the mapping unit under the
    /// `remap` policy, ns.
    #[serde(default)]
    pub remap_cost_ns: u64,
    /// How long a partly filled NAND page waits in the controller buffer for more data
    /// before it is programmed anyway, ns.
    pub coalesce_ns: u64,
}

fn one() -> u32 {
    1
}

/// Flash translation layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// User-visible capacity in bytes (multiple of 512). Physical capacity minus this is the
    /// over-provisioning.
    pub user_capacity_bytes: u64,
    /// Mapping unit in bytes: a multiple of 512 that divides the page size (512, 4096, page).
    pub mapping_unit: u64,
    /// `rmw` or `remap`.
    pub unaligned: UnalignedPolicy,
    /// Physical slots per page = units per page × pack_factor. Values > 1 let compressed units
    /// and sub-unit fragments (remap) share pages (1..=8).
    #[serde(default = "one")]
    pub pack_factor: u32,
    /// Background GC starts when a plane has fewer free blocks than this (and its die is idle).
    pub gc_bg_free_blocks: u32,
    /// Foreground (urgent) GC runs before new host blocks are opened while a plane has fewer free
    /// blocks than this.
    pub gc_fg_free_blocks: u32,
    /// GC moves use the die-internal copyback (no channel transfer).
    #[serde(default)]
    pub copyback: bool,
    /// SLC write cache (pseudo-SLC: blocks of the NAND programmed one bit per cell), bytes of
    /// SLC capacity when the drive is empty; 0 = none. The part above `pslc_static_bytes` is
    /// dynamic: it shrinks in proportion as the user data fills the drive.
    #[serde(default)]
    pub pslc_bytes: u64,
    /// The part of the SLC cache kept whatever the fill (carved out of the over-provisioning;
    /// Samsung calls it the "default" TurboWrite region), bytes.
    #[serde(default)]
    pub pslc_static_bytes: u64,
    /// Once the host has had no command in flight for this long, the drive folds its SLC
    /// blocks into the native cell mode in the background (the cache is ready for the next
    /// burst), ns. 0 = fold only when the space is needed (GC pressure, or the cache's share
    /// shrinking as the drive fills).
    #[serde(default)]
    pub pslc_idle_fold_ns: u64,
    /// What host writes do once the SLC cache's share is used up: `native` (the default) —
    /// they go straight to native (MLC/TLC/QLC) blocks; `fold` — they keep landing in SLC
    /// blocks while the oldest SLC blocks are folded into native ones to make room, so every
    /// byte is programmed twice (and read once) while the host writes (Samsung's Intelligent
    /// TurboWrite as TechPowerUp saw the 980 "flushing SLC back to TLC" during a long write).
    #[serde(default)]
    pub pslc_when_full: PslcWhenFull,
    /// Program time of a pSLC page, ns.
    #[serde(default)]
    pub pslc_t_prog_ns: u64,
    /// Read time of a pSLC page, ns.
    #[serde(default)]
    pub pslc_t_r_ns: u64,
    /// `steady` preconditioning: random overwrites after the sequential fill, in multiples of
    /// the user capacity.
    #[serde(default = "default_steady")]
    pub steady_overwrite: f64,
    /// Victim selection: `greedy` (default), `cost-benefit` or `d-choices`.
    #[serde(default)]
    pub gc_policy: GcPolicy,
    /// Blocks sampled per victim choice under `d-choices`.
    #[serde(default = "default_d")]
    pub gc_d_choices: u32,
    /// Mapping scheme: `page` (the default) or `hybrid` (FAST-style log blocks; needs
    /// `mapping_unit` = `nand.page_bytes`, `pack_factor` = 1, `unaligned = "rmw"`, no pSLC
    /// cache, no compression and no cached map).
    #[serde(default, skip_serializing_if = "FtlScheme::is_page")]
    pub scheme: FtlScheme,
    /// `hybrid`: random-write log blocks per die (each a block on every plane of the die, as
    /// the data blocks are), besides the die's one sequential log block. 0 with `page`.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub log_blocks: u32,
}

fn default_d() -> u32 {
    8
}

fn default_steady() -> f64 {
    1.0
}

/// NAND array geometry and timings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Page size in bytes (multiple of 512).
    pub page_bytes: u64,
    /// Channel bus rate in MT/s (8-bit bus: one byte per transfer).
    pub bus_mt_s: u64,
    /// Page read time, ns.
    pub t_r_ns: u64,
    /// Page program time, ns (lower page when `t_prog_upper_ns` is set; ignored when
    /// `t_prog_pages_ns` is given).
    pub t_prog_ns: u64,
    /// MLC upper (odd) page program time, ns; 0 = all pages take `t_prog_ns`.
    #[serde(default)]
    pub t_prog_upper_ns: u64,
    /// Bits stored per cell: 1 (SLC), 2 (MLC, the default), 3 (TLC), 4 (QLC). A word line
    /// holds this many pages (lower, middle, upper, top); a block in SLC mode holds
    /// `pages_per_block / bits_per_cell` pages.
    #[serde(default = "two")]
    pub bits_per_cell: u32,
    /// Program time of each page type, ns: `bits_per_cell` values (lower, (middle,) upper,
    /// (top)); page `i` of a block is of type `i mod bits_per_cell`. For one-shot programmed
    /// 3D NAND (a whole word line in one operation) give each type the one-shot time divided
    /// by the pages of the word line. Empty = `t_prog_ns` / `t_prog_upper_ns`.
    #[serde(default)]
    pub t_prog_pages_ns: Vec<u64>,
    /// Read time of each page type, ns (`bits_per_cell` values; more read thresholds take
    /// longer on the upper pages). Empty = `t_r_ns` for every page.
    #[serde(default)]
    pub t_r_pages_ns: Vec<u64>,
    /// Block erase time, ns.
    pub t_bers_ns: u64,
    /// Multi-plane (two-plane) read, program and erase commands: one page per plane at the
    /// same page index run in one array operation. Off: planes are operated one at a time.
    #[serde(default = "yes")]
    pub multi_plane: bool,
    /// The part can suspend a page program to serve reads and resume it afterwards.
    #[serde(default)]
    pub program_suspend: bool,
    /// The part can suspend a block erase to serve reads and resume it afterwards.
    #[serde(default)]
    pub erase_suspend: bool,
    /// Time from the suspend command until the die accepts a read, ns.
    #[serde(default = "default_t_suspend")]
    pub t_suspend_ns: u64,
    /// Extra array time a resumed program or erase needs (the interrupted step is redone), ns.
    #[serde(default = "default_t_resume")]
    pub t_resume_ns: u64,
    /// At most this many suspensions of one program or erase (bounds its delay).
    #[serde(default = "default_max_suspends")]
    pub max_suspends: u32,
    /// Rated program/erase cycles per block (the NAND maker's endurance rating); 0 = unknown.
    /// Used only to project endurance (TBW); the model does not wear blocks out.
    #[serde(default)]
    pub pe_cycles: u32,
}

fn yes() -> bool {
    true
}
fn two() -> u32 {
    2
}
fn default_t_suspend() -> u64 {
    20_000
}
fn default_t_resume() -> u64 {
    20_000
}
fn default_max_suspends() -> u32 {
    16
}

impl NandConfig {
    /// Mean program time of a page in the native cell mode, ns.
    pub fn prog_mean_ns(&self) -> u64 {
        if self.t_prog_pages_ns.is_empty() {
            self.t_prog_ns
        } else {
            self.t_prog_pages_ns.iter().sum::<u64>() / self.t_prog_pages_ns.len() as u64
        }
    }
}

/// Flash transaction scheduler policy (the controller's back end).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedConfig {
    /// Host reads go before host programs and background GC on each die (the usual firmware
    /// policy). Off: host reads and host programs are served in the order they became ready.
    #[serde(default = "yes")]
    pub read_priority: bool,
    /// A program or erase is suspended for a read only when at least this much of it remains, ns.
    #[serde(default = "default_suspend_min")]
    pub suspend_min_remaining_ns: u64,
}

fn default_suspend_min() -> u64 {
    100_000
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            read_priority: true,
            suspend_min_remaining_ns: default_suspend_min(),
        }
    }
}

/// Manufacturer ratings used by calibration (0 = unknown).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rated {
    #[serde(default)]
    pub seq_read_mb_s: f64,
    #[serde(default)]
    pub seq_write_mb_s: f64,
    #[serde(default)]
    pub rand_read_iops: f64,
    #[serde(default)]
    pub rand_write_iops: f64,
}

/// A complete drive description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    pub name: String,
    /// The drive's short name in reports and studies (`Vertex 450`, `X25-E`); empty: `name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub sources: Vec<String>,
    pub host: HostConfig,
    pub controller: ControllerConfig,
    pub ftl: FtlConfig,
    pub nand: NandConfig,
    #[serde(default)]
    pub sched: SchedConfig,
    #[serde(default)]
    pub rated: Rated,
    /// How the preset was fitted (written by `ssdlab calibrate`; none for the built-in presets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
}

/// What a fitted preset was fitted to and how close it came (the `[calibration]` table
/// `ssdlab calibrate` writes): reports quote it next to the figures simulated with the preset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Figures fitted to.
    pub figures: u32,
    /// Root-mean-square error of the fit, as a fraction (0.05: typically 5 % off).
    pub rms_error: f64,
    /// Median |error| per workload family after the fit ("random read" = 0.03).
    #[serde(default)]
    pub families: std::collections::BTreeMap<String, f64>,
    /// The data files fitted to.
    #[serde(default)]
    pub fitted_to: Vec<String>,
}

impl Calibration {
    /// One sentence for reports: "fitted by ssdlab calibrate to 17 figures (rms error 4.2 %);
    /// median error 3 % on random read, 5 % on random write".
    pub fn summary(&self) -> String {
        let mut s = format!(
            "fitted by ssdlab calibrate to {} figures (rms error {:.1} %)",
            self.figures,
            self.rms_error * 100.0
        );
        if !self.families.is_empty() {
            let parts: Vec<String> = self
                .families
                .iter()
                .map(|(f, e)| format!("±{:.0} % on {f}", e * 100.0))
                .collect();
            s.push_str(&format!("; median error {}", parts.join(", ")));
        }
        s
    }
}

fn err(field: &str, msg: impl Into<String>) -> Result<(), ConfigError> {
    Err(ConfigError::new(field, msg))
}

impl DriveConfig {
    /// Bytes of memory one simulated drive of this configuration takes when written whole
    /// (mapping tables, block state, write-cache bookkeeping).
    pub fn memory_estimate(&self) -> u64 {
        self.memory_estimate_touch(crate::Touch::ALL)
    }

    /// Bytes of memory one simulated drive of this configuration takes for a run that writes
    /// what `touch` says (the mapping tables grow with the regions written): what a command
    /// must budget before building it.
    pub fn memory_estimate_touch(&self, touch: crate::Touch) -> u64 {
        crate::drive::Drive::memory_estimate(self, false, touch)
    }

    /// User capacity in bytes.
    pub fn user_capacity(&self) -> u64 {
        self.ftl.user_capacity_bytes
    }

    /// Logical block (sector) size: always 512.
    pub fn logical_block_size(&self) -> u64 {
        512
    }

    /// Raw NAND capacity in bytes.
    pub fn raw_capacity(&self) -> u64 {
        let n = &self.nand;
        n.channels as u64
            * n.dies_per_channel as u64
            * n.planes_per_die as u64
            * n.blocks_per_plane as u64
            * n.pages_per_block as u64
            * n.page_bytes
    }

    /// Check every field; the error names the first offending one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = &self.nand;
        if n.channels == 0 {
            return err("nand.channels", "must be at least 1");
        }
        if n.dies_per_channel == 0 {
            return err("nand.dies_per_channel", "must be at least 1");
        }
        if n.planes_per_die == 0 || n.planes_per_die > 8 {
            return err("nand.planes_per_die", "must be 1..=8");
        }
        if n.blocks_per_plane < 8 {
            return err("nand.blocks_per_plane", "must be at least 8");
        }
        if n.pages_per_block < 2 || !n.pages_per_block.is_multiple_of(2) {
            return err("nand.pages_per_block", "must be an even number >= 2");
        }
        if n.page_bytes == 0 || !n.page_bytes.is_multiple_of(512) || n.page_bytes > 65536 {
            return err(
                "nand.page_bytes",
                "must be a non-zero multiple of 512 (at most 64 KiB)",
            );
        }
        if n.bus_mt_s == 0 {
            return err("nand.bus_mt_s", "must be > 0");
        }
        if n.t_r_ns == 0 {
            return err("nand.t_r_ns", "must be > 0");
        }
        if n.t_prog_ns == 0 {
            return err("nand.t_prog_ns", "must be > 0");
        }
        if n.t_bers_ns == 0 {
            return err("nand.t_bers_ns", "must be > 0");
        }
        if n.bits_per_cell == 0 || n.bits_per_cell > 4 {
            return err("nand.bits_per_cell", "must be 1..=4 (SLC, MLC, TLC, QLC)");
        }
        if !n.pages_per_block.is_multiple_of(n.bits_per_cell) {
            return err(
                "nand.pages_per_block",
                format!(
                    "must be a multiple of bits_per_cell ({}): a block holds whole word lines",
                    n.bits_per_cell
                ),
            );
        }
        for (field, v) in [
            ("nand.t_prog_pages_ns", &n.t_prog_pages_ns),
            ("nand.t_r_pages_ns", &n.t_r_pages_ns),
        ] {
            if !v.is_empty() && v.len() != n.bits_per_cell as usize {
                return err(
                    field,
                    format!(
                        "give one time per page type: {} values for bits_per_cell = {} ({} given)",
                        n.bits_per_cell,
                        n.bits_per_cell,
                        v.len()
                    ),
                );
            }
            if v.iter().any(|&t| t == 0 || t > 1_000_000_000) {
                return err(field, "every time must be 1..=1000000000 ns");
            }
        }
        if n.t_prog_upper_ns > 0 && n.bits_per_cell != 2 {
            return err(
                "nand.t_prog_upper_ns",
                "is the MLC upper-page time (bits_per_cell = 2); use t_prog_pages_ns for other cells",
            );
        }
        if n.max_suspends > 64 {
            return err("nand.max_suspends", "must be 0..=64");
        }
        if n.channels as u64 * n.dies_per_channel as u64 > 1 << 20 {
            return err("nand.dies_per_channel", "at most 2^20 dies per drive");
        }
        // Upper bounds far above any real part: a time in hours or a link of a few bytes per
        // second would send the simulated clock (and everything sized by it) past any use.
        const SECOND: u64 = 1_000_000_000;
        let c = &self.controller;
        let f = &self.ftl;
        for (field, v, limit) in [
            ("nand.t_r_ns", n.t_r_ns, SECOND),
            ("nand.t_prog_ns", n.t_prog_ns, SECOND),
            ("nand.t_prog_upper_ns", n.t_prog_upper_ns, SECOND),
            ("nand.t_bers_ns", n.t_bers_ns, SECOND),
            ("ftl.pslc_t_prog_ns", f.pslc_t_prog_ns, SECOND),
            ("ftl.pslc_t_r_ns", f.pslc_t_r_ns, SECOND),
            ("host.cmd_overhead_ns", self.host.cmd_overhead_ns, SECOND),
            ("controller.fw_read_ns", c.fw_read_ns, SECOND),
            ("controller.fw_write_ns", c.fw_write_ns, SECOND),
            ("controller.fw_trim_ns", c.fw_trim_ns, SECOND),
            (
                "controller.fw_read_per_unit_ns",
                c.fw_read_per_unit_ns,
                SECOND,
            ),
            (
                "controller.fw_write_per_unit_ns",
                c.fw_write_per_unit_ns,
                SECOND,
            ),
            ("controller.fw_gc_move_ns", c.fw_gc_move_ns, SECOND),
            ("controller.fw_complete_ns", c.fw_complete_ns, SECOND),
            ("controller.fw_map_ns", c.fw_map_ns, SECOND),
            ("controller.fw_flash_ns", c.fw_flash_ns, SECOND),
            ("controller.ecc_decode_ns", c.ecc_decode_ns, SECOND),
            ("controller.remap_cost_ns", c.remap_cost_ns, SECOND),
            ("controller.coalesce_ns", c.coalesce_ns, 10 * SECOND),
            ("nand.t_suspend_ns", n.t_suspend_ns, SECOND),
            ("nand.t_resume_ns", n.t_resume_ns, SECOND),
            (
                "sched.suspend_min_remaining_ns",
                self.sched.suspend_min_remaining_ns,
                SECOND,
            ),
        ] {
            if v > limit {
                return err(field, format!("must be at most {limit} ns ({v} given)"));
            }
        }
        for (field, v) in [
            ("rated.seq_read_mb_s", self.rated.seq_read_mb_s),
            ("rated.seq_write_mb_s", self.rated.seq_write_mb_s),
            ("rated.rand_read_iops", self.rated.rand_read_iops),
            ("rated.rand_write_iops", self.rated.rand_write_iops),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return err(
                    field,
                    format!("must be a finite number >= 0 (0 = unknown), not {v}"),
                );
            }
        }
        let h = &self.host;
        let nvme = h.interface == Interface::Nvme;
        if !nvme {
            for (field, set) in [
                ("host.pcie_gen", h.pcie_gen != 0),
                ("host.pcie_lanes", h.pcie_lanes != 0),
                ("host.nvme_queues", h.nvme_queues != 1),
                ("host.doorbell_ns", h.doorbell_ns != 0),
                ("host.sq_fetch_ns", h.sq_fetch_ns != 0),
                ("host.completion_ns", h.completion_ns != 0),
            ] {
                if set {
                    return err(field, "applies to NVMe drives (interface = \"nvme\")");
                }
            }
        }
        if h.pcie_gen > 5 {
            return err("host.pcie_gen", "must be 1..=5 (0 = not given)");
        }
        if ![0, 1, 2, 4, 8, 16].contains(&h.pcie_lanes) {
            return err(
                "host.pcie_lanes",
                "must be 1, 2, 4, 8 or 16 (0 = not given)",
            );
        }
        if !(128..=4096).contains(&h.pcie_mps_bytes) || !h.pcie_mps_bytes.is_power_of_two() {
            return err(
                "host.pcie_mps_bytes",
                "must be a power of two from 128 to 4096",
            );
        }
        if nvme && h.link_bytes_per_sec == 0 && (h.pcie_gen == 0 || h.pcie_lanes == 0) {
            return err(
                "host.link_bytes_per_sec",
                "must be given (bytes/s), or be 0 with host.pcie_gen and host.pcie_lanes set",
            );
        }
        if h.link_rate() < 1_000_000 {
            return err(
                "host.link_bytes_per_sec",
                "must be at least 1000000 (1 MB/s)",
            );
        }
        if h.nvme_queues == 0 || h.nvme_queues > 1024 {
            return err("host.nvme_queues", "must be 1..=1024");
        }
        if h.nvme_queues as u64 * h.queue_depth as u64 > 65536 {
            return err(
                "host.nvme_queues",
                "queues × queue_depth must be at most 65536 commands",
            );
        }
        for (field, v) in [
            ("host.doorbell_ns", h.doorbell_ns),
            ("host.sq_fetch_ns", h.sq_fetch_ns),
            ("host.completion_ns", h.completion_ns),
        ] {
            if v > SECOND {
                return err(field, format!("must be at most {SECOND} ns ({v} given)"));
            }
        }
        if h.queue_depth == 0 {
            return err("host.queue_depth", "must be at least 1");
        }
        if h.interface != Interface::Nvme && h.queue_depth > 32 {
            return err("host.queue_depth", "SATA NCQ allows at most 32 commands");
        }
        if h.queue_depth > 65536 {
            return err("host.queue_depth", "at most 65536");
        }
        if c.fw_units == 0 || c.fw_units > 64 {
            return err("controller.fw_units", "must be 1..=64");
        }
        if c.cores.len() > 64 {
            return err("controller.cores", "at most 64 cores");
        }
        let mut covered = 0u8;
        for core in &c.cores {
            let m = crate::controller::roles_of(core)
                .map_err(|m| ConfigError::new("controller.cores", format!("{core:?}: {m}")))?;
            covered |= m;
        }
        if !c.cores.is_empty() && covered != crate::controller::ALL_ROLES {
            return err(
                "controller.cores",
                "every role (host, ftl, flash) needs at least one core",
            );
        }
        if c.ecc_engines == 0 || c.ecc_engines > 64 {
            return err("controller.ecc_engines", "must be 1..=64");
        }
        if c.map_cache_bytes > 0 && c.map_cache_bytes < n.page_bytes {
            return err(
                "controller.map_cache_bytes",
                format!(
                    "must be 0 (the whole map in DRAM) or at least one translation page ({} bytes, nand.page_bytes)",
                    n.page_bytes
                ),
            );
        }
        let mu = f.mapping_unit;
        if mu == 0 || !mu.is_multiple_of(512) {
            return err("ftl.mapping_unit", "must be a non-zero multiple of 512");
        }
        if c.cache_bytes > 0 && c.cache_bytes < mu {
            return err(
                "controller.cache_bytes",
                format!(
                    "must be 0 (no write buffer) or at least one mapping unit ({mu} bytes, ftl.mapping_unit): a write enters the buffer a unit at a time"
                ),
            );
        }
        if !n.page_bytes.is_multiple_of(mu) {
            return err(
                "ftl.mapping_unit",
                format!("must divide the page size ({} bytes)", n.page_bytes),
            );
        }
        if f.unaligned == UnalignedPolicy::Remap && mu > 32 * 512 {
            return err(
                "ftl.mapping_unit",
                "must be at most 16 KiB under unaligned = \"remap\" (its fragments track 32 sectors per unit)",
            );
        }
        if f.pack_factor == 0 || f.pack_factor > 8 {
            return err("ftl.pack_factor", "must be 1..=8");
        }
        if f.gc_fg_free_blocks < 2 {
            return err("ftl.gc_fg_free_blocks", "must be at least 2");
        }
        if f.gc_bg_free_blocks < f.gc_fg_free_blocks {
            return err("ftl.gc_bg_free_blocks", "must be >= gc_fg_free_blocks");
        }
        if f.gc_d_choices == 0 || f.gc_d_choices > 1024 {
            return err("ftl.gc_d_choices", "must be 1..=1024");
        }
        if !(f.steady_overwrite >= 0.0 && f.steady_overwrite <= 10.0) {
            return err("ftl.steady_overwrite", "must be 0..=10");
        }
        if f.user_capacity_bytes == 0 || !f.user_capacity_bytes.is_multiple_of(512) {
            return err(
                "ftl.user_capacity_bytes",
                "must be a non-zero multiple of 512",
            );
        }
        let raw = self.raw_capacity();
        self.validate_scheme()?;
        if f.user_capacity_bytes >= raw {
            return err(
                "ftl.user_capacity_bytes",
                format!(
                    "over-provisioning must be positive: user capacity {} >= raw capacity {}",
                    f.user_capacity_bytes, raw
                ),
            );
        }
        let planes_total = n.channels as u64 * n.dies_per_channel as u64 * n.planes_per_die as u64;
        let block_bytes = n.pages_per_block as u64 * n.page_bytes;
        let user_blocks_per_plane = f.user_capacity_bytes.div_ceil(planes_total * block_bytes);
        let spare =
            n.blocks_per_plane as u64 - user_blocks_per_plane.min(n.blocks_per_plane as u64);
        let pslc_blocks = self.pslc_blocks_per_plane() as u64;
        let needed = if f.scheme == FtlScheme::Hybrid {
            // checked per die in validate_scheme
            0
        } else {
            f.gc_bg_free_blocks as u64 + 3
        };
        if spare < needed {
            return err(
                "ftl.user_capacity_bytes",
                format!(
                    "over-provisioning too small: {spare} spare blocks per plane, need at least {needed} (gc_bg_free_blocks + 3)"
                ),
            );
        }
        if f.pslc_static_bytes > f.pslc_bytes {
            return err(
                "ftl.pslc_static_bytes",
                "must not exceed pslc_bytes (the whole SLC cache when the drive is empty)",
            );
        }
        if f.pslc_idle_fold_ns > 3600 * SECOND {
            return err("ftl.pslc_idle_fold_ns", "must be at most one hour");
        }
        if f.pslc_bytes > 0 && n.bits_per_cell == 1 {
            return err(
                "ftl.pslc_bytes",
                "an SLC drive has no pseudo-SLC cache (set 0)",
            );
        }
        let static_blocks = self.pslc_static_blocks_per_plane() as u64;
        if spare < needed + static_blocks {
            return err(
                "ftl.pslc_static_bytes",
                format!(
                    "the static SLC cache takes {static_blocks} of the {spare} spare blocks per plane; GC needs {needed}"
                ),
            );
        }
        if f.pslc_bytes > 0 {
            if f.pslc_t_prog_ns == 0 {
                return err("ftl.pslc_t_prog_ns", "must be > 0 when pslc_bytes > 0");
            }
            if f.pslc_t_r_ns == 0 {
                return err("ftl.pslc_t_r_ns", "must be > 0 when pslc_bytes > 0");
            }
            if pslc_blocks == 0 || pslc_blocks > n.blocks_per_plane as u64 / 2 {
                return err(
                    "ftl.pslc_bytes",
                    "must give between 1 block per plane and half of the blocks",
                );
            }
        }
        let slots = planes_total
            * n.blocks_per_plane as u64
            * n.pages_per_block as u64
            * (n.page_bytes / mu)
            * f.pack_factor as u64;
        if slots >= u32::MAX as u64 {
            return err(
                "ftl.mapping_unit",
                "too many physical mapping slots for 32-bit maps (use a larger unit)",
            );
        }
        Ok(())
    }

    /// The hybrid scheme's requirements (see [`FtlScheme::Hybrid`]).
    fn validate_scheme(&self) -> Result<(), ConfigError> {
        let (n, f, c) = (&self.nand, &self.ftl, &self.controller);
        if f.scheme == FtlScheme::Page {
            if f.log_blocks != 0 {
                return err(
                    "ftl.log_blocks",
                    "applies to ftl.scheme = \"hybrid\" (0 with the page scheme)",
                );
            }
            return Ok(());
        }
        let hybrid = "with ftl.scheme = \"hybrid\"";
        if f.mapping_unit != n.page_bytes {
            return err(
                "ftl.mapping_unit",
                format!(
                    "must equal nand.page_bytes ({}) {hybrid}: its log and data blocks map whole pages",
                    n.page_bytes
                ),
            );
        }
        if f.pack_factor != 1 {
            return err("ftl.pack_factor", format!("must be 1 {hybrid}"));
        }
        if f.unaligned != UnalignedPolicy::Rmw {
            return err("ftl.unaligned", format!("must be \"rmw\" {hybrid}"));
        }
        if f.pslc_bytes != 0 || f.pslc_static_bytes != 0 {
            return err(
                "ftl.pslc_bytes",
                format!("must be 0 {hybrid} (no SLC cache)"),
            );
        }
        if c.compression {
            return err("controller.compression", format!("must be false {hybrid}"));
        }
        if c.map_cache_bytes != 0 {
            return err(
                "controller.map_cache_bytes",
                format!("must be 0 {hybrid} (the block map is small; it is kept in DRAM)"),
            );
        }
        if f.log_blocks == 0 {
            return err(
                "ftl.log_blocks",
                format!("must be at least 1 {hybrid} (random log blocks per die)"),
            );
        }
        let dies = n.channels as u64 * n.dies_per_channel as u64;
        let lb_pages = n.planes_per_die as u64 * n.pages_per_block as u64;
        let lbs = (f.user_capacity_bytes.div_ceil(n.page_bytes)).div_ceil(lb_pages);
        let per_die = lbs.div_ceil(dies.max(1));
        let have = n.blocks_per_plane as u64;
        let used = per_die + HYBRID_SPARE_SETS;
        if used > have {
            return err(
                "ftl.user_capacity_bytes",
                format!(
                    "too large for the hybrid scheme: {per_die} data blocks per die plus {HYBRID_SPARE_SETS} for the sequential log, merges and erases need more than the {have} blocks per plane"
                ),
            );
        }
        if used + f.log_blocks as u64 > have {
            return err(
                "ftl.log_blocks",
                format!(
                    "{} random log blocks per die do not fit: the die's {have} blocks per plane hold {per_die} data blocks and {HYBRID_SPARE_SETS} for the sequential log, merges and erases; at most {}",
                    f.log_blocks,
                    have - used
                ),
            );
        }
        Ok(())
    }

    /// A smaller copy of this drive for tests and quick studies: blocks per plane, user
    /// capacity, pSLC size and the cached map divided by `factor` (timings, cache and geometry otherwise
    /// unchanged; the user capacity shrinks further where GC needs more spare blocks than the
    /// scaled over-provisioning leaves). The result is validated.
    pub fn scaled(&self, factor: u32) -> Result<DriveConfig, ConfigError> {
        let mut c = self.clone();
        let f = factor.max(1) as u64;
        c.nand.blocks_per_plane = (c.nand.blocks_per_plane as u64 / f).max(8) as u32;
        let n = &c.nand;
        let planes_total = n.channels as u64 * n.dies_per_channel as u64 * n.planes_per_die as u64;
        let block_bytes = n.pages_per_block as u64 * n.page_bytes;
        // keep the over-provisioning fraction, but at least the spare blocks GC (or the hybrid
        // scheme's log blocks and merges) need
        let spare = match c.ftl.scheme {
            FtlScheme::Page => c.ftl.gc_bg_free_blocks as u64 + 4,
            FtlScheme::Hybrid => c.ftl.log_blocks as u64 + HYBRID_SPARE_SETS + 1,
        };
        let max_user =
            (n.blocks_per_plane as u64).saturating_sub(spare) * planes_total * block_bytes;
        c.ftl.user_capacity_bytes = ((c.ftl.user_capacity_bytes / f).min(max_user)) / 4096 * 4096;
        c.ftl.pslc_bytes /= f;
        c.ftl.pslc_static_bytes /= f;
        // the cached share of the map stays the same (at least one translation page)
        if c.controller.map_cache_bytes > 0 {
            c.controller.map_cache_bytes =
                (c.controller.map_cache_bytes / f).max(c.nand.page_bytes);
        }
        if c.ftl.pslc_bytes > 0 && c.pslc_blocks_per_plane() == 0 {
            c.ftl.pslc_bytes = 0;
            c.ftl.pslc_static_bytes = 0;
        }
        c.name = format!("{}/{}", self.name, factor);
        c.validate()?;
        Ok(c)
    }

    /// pSLC blocks per plane when the drive is empty.
    pub fn pslc_blocks_per_plane(&self) -> u32 {
        self.slc_blocks(self.ftl.pslc_bytes)
    }

    /// pSLC blocks per plane kept whatever the fill (the static part of the cache).
    pub fn pslc_static_blocks_per_plane(&self) -> u32 {
        self.slc_blocks(self.ftl.pslc_static_bytes)
    }

    /// Blocks per plane that hold `bytes` in SLC mode.
    fn slc_blocks(&self, bytes: u64) -> u32 {
        let n = &self.nand;
        if bytes == 0 {
            return 0;
        }
        let planes_total = n.channels as u64 * n.dies_per_channel as u64 * n.planes_per_die as u64;
        let slc_block_bytes = (n.pages_per_block / n.bits_per_cell.max(1)) as u64 * n.page_bytes;
        bytes
            .div_ceil((planes_total * slc_block_bytes).max(1))
            .min(u32::MAX as u64) as u32
    }

    /// Parse a TOML drive description and validate it.
    pub fn from_toml_str(text: &str) -> Result<DriveConfig, ConfigError> {
        let cfg: DriveConfig = toml::from_str(text)
            .map_err(|e| ConfigError::new("toml", e.to_string().trim_end().replace('\n', " ")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The drive's short name: its `label`, or its `name` when it has none.
    pub fn label(&self) -> &str {
        if self.label.is_empty() {
            &self.name
        } else {
            &self.label
        }
    }

    /// Whether a drive of `other` brought into a state is the same as one of `self` in that
    /// state: the two differ only in timing (firmware and per-unit times, GC move and remap
    /// costs, ECC decoding, the coalescing timer, the write buffer's size (not whether there is one), the
    /// host's command overhead, latencies and link, NAND times
    /// and bus rate, the scheduler's options) and in name, label, description, sources and
    /// ratings.
    /// Then a preconditioned drive of one can be given the other's timing
    /// ([`crate::Simulator::retimed`]) instead of being built and preconditioned again.
    pub fn same_state_as(&self, other: &DriveConfig) -> bool {
        fn shape(c: &DriveConfig) -> DriveConfig {
            let mut c = c.clone();
            c.name.clear();
            c.label.clear();
            c.description.clear();
            c.sources.clear();
            c.rated = Rated::default();
            c.calibration = None;
            let k = &mut c.controller;
            k.fw_read_ns = 0;
            k.fw_write_ns = 0;
            k.fw_trim_ns = 0;
            k.fw_read_per_unit_ns = 0;
            k.fw_write_per_unit_ns = 0;
            k.fw_gc_move_ns = 0;
            k.fw_complete_ns = 0;
            k.fw_map_ns = 0;
            k.fw_flash_ns = 0;
            k.fw_units = 1;
            k.cores.clear();
            k.ecc_decode_ns = 0;
            k.ecc_engines = 1;
            k.remap_cost_ns = 0;
            k.coalesce_ns = 0;
            // the write buffer's size is timing; whether there is one is not
            k.cache_bytes = k.cache_bytes.min(1);
            let h = &mut c.host;
            h.cmd_overhead_ns = 0;
            h.doorbell_ns = 0;
            h.sq_fetch_ns = 0;
            h.completion_ns = 0;
            h.link_bytes_per_sec = 0;
            let n = &mut c.nand;
            n.t_r_ns = 0;
            n.t_prog_ns = 0;
            n.t_prog_upper_ns = 0;
            n.t_prog_pages_ns.clear();
            n.t_r_pages_ns.clear();
            n.t_bers_ns = 0;
            n.bus_mt_s = 0;
            n.t_suspend_ns = 0;
            n.t_resume_ns = 0;
            c.sched = SchedConfig::default();
            c
        }
        toml::Value::try_from(shape(self)).ok() == toml::Value::try_from(shape(other)).ok()
    }

    /// Dotted-path override such as `nand.channels=4` (`key`=`nand.channels`, `value`=`4`).
    /// Integers accept binary suffixes (`4k`, `256m`, `8g`). The result is re-validated; on
    /// error `self` is unchanged. Several overrides together: [`DriveConfig::set_all`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let mut cfg = self.clone();
        cfg.set_unchecked(key, value)?;
        cfg.validate()?;
        *self = cfg;
        Ok(())
    }

    /// Applies several overrides together, in any order, then validates once: a value that is
    /// only valid with another one (`nand.channels` with `ftl.user_capacity_bytes`) is accepted
    /// whatever the order. When the overrides change the raw NAND capacity and do not set
    /// `ftl.user_capacity_bytes`, the user capacity is scaled with it, keeping the preset's
    /// over-provisioning (rounded down to 4 KiB); the returned notes say so. On error `self` is
    /// unchanged and the error names the field.
    pub fn set_all(&mut self, sets: &[(String, String)]) -> Result<Vec<String>, ConfigError> {
        let mut cfg = self.clone();
        for (k, v) in sets {
            cfg.set_unchecked(k, v)?;
        }
        let mut notes = Vec::new();
        let (raw0, raw1) = (self.raw_capacity(), cfg.raw_capacity());
        let user_set = sets
            .iter()
            .any(|(k, _)| k.trim() == "ftl.user_capacity_bytes");
        if raw0 != raw1 && raw0 > 0 && !user_set {
            let scaled = (self.ftl.user_capacity_bytes as u128 * raw1 as u128 / raw0 as u128)
                .min(u64::MAX as u128) as u64
                & !4095;
            if scaled != cfg.ftl.user_capacity_bytes {
                let op = |user: u64, raw: u64| (raw as f64 / user.max(1) as f64 - 1.0) * 100.0;
                notes.push(format!(
                    "the raw NAND capacity changed from {} to {} bytes: ftl.user_capacity_bytes scaled from {} to {} (over-provisioning {:.1} %, as the preset's {:.1} %; set ftl.user_capacity_bytes to choose)",
                    raw0,
                    raw1,
                    cfg.ftl.user_capacity_bytes,
                    scaled,
                    op(scaled, raw1),
                    op(self.ftl.user_capacity_bytes, raw0)
                ));
                cfg.ftl.user_capacity_bytes = scaled;
            }
        }
        // the SLC cache is a share of the NAND: it scales with the raw capacity too
        let slc_set = sets.iter().any(|(k, _)| {
            let k = k.trim();
            k == "ftl.pslc_bytes" || k == "ftl.pslc_static_bytes"
        });
        if raw0 != raw1 && raw0 > 0 && !slc_set && cfg.ftl.pslc_bytes > 0 {
            let scale = |b: u64| (b as u128 * raw1 as u128 / raw0 as u128) as u64 & !4095;
            let (p0, s0) = (cfg.ftl.pslc_bytes, cfg.ftl.pslc_static_bytes);
            cfg.ftl.pslc_bytes = scale(p0);
            cfg.ftl.pslc_static_bytes = scale(s0).min(cfg.ftl.pslc_bytes);
            let line = format!(
                "ftl.pslc_bytes scaled from {p0} to {} and ftl.pslc_static_bytes from {s0} to {} with it",
                cfg.ftl.pslc_bytes, cfg.ftl.pslc_static_bytes
            );
            match notes.last_mut() {
                Some(n) => {
                    n.push_str("; ");
                    n.push_str(&line);
                }
                None => notes.push(format!("the raw NAND capacity changed: {line}")),
            }
        }
        cfg.validate()?;
        *self = cfg;
        Ok(notes)
    }

    /// One override without validation (the type of the value is still checked).
    fn set_unchecked(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let mut root = toml::Value::try_from(&*self)
            .map_err(|e| ConfigError::new(key, format!("cannot serialize config: {e}")))?;
        // keys left out of the serialised form while they hold their defaults can be set too
        if let Some(ftl) = root.get_mut("ftl").and_then(|t| t.as_table_mut()) {
            ftl.entry("scheme")
                .or_insert_with(|| toml::Value::String("page".into()));
            ftl.entry("log_blocks")
                .or_insert_with(|| toml::Value::Integer(0));
        }
        let mut cur = &mut root;
        let parts: Vec<&str> = key.split('.').collect();
        for (i, p) in parts.iter().enumerate() {
            let table = cur
                .as_table_mut()
                .ok_or_else(|| ConfigError::new(key, "unknown key"))?;
            if !table.contains_key(*p) {
                return Err(ConfigError::new(key, "unknown key"));
            }
            cur = table.get_mut(*p).expect("checked");
            if i + 1 < parts.len() && !cur.is_table() {
                return Err(ConfigError::new(key, "unknown key"));
            }
        }
        let v = value.trim();
        let newv = match cur {
            toml::Value::Integer(_) => {
                toml::Value::Integer(parse_int(v).ok_or_else(|| {
                    ConfigError::new(key, format!("expected an integer, got {v:?}"))
                })?)
            }
            toml::Value::Float(_) => toml::Value::Float(
                v.parse::<f64>()
                    .map_err(|_| ConfigError::new(key, format!("expected a number, got {v:?}")))?,
            ),
            toml::Value::Boolean(_) => toml::Value::Boolean(match v {
                "true" | "1" | "yes" | "on" => true,
                "false" | "0" | "no" | "off" => false,
                _ => {
                    return Err(ConfigError::new(
                        key,
                        format!("expected a boolean, got {v:?}"),
                    ))
                }
            }),
            toml::Value::String(_) => toml::Value::String(v.trim_matches('"').to_string()),
            toml::Value::Table(_) => {
                return Err(ConfigError::new(key, "is a section, not a value"))
            }
            toml::Value::Array(_) => {
                let parsed: toml::Value = toml::from_str(&format!("x = {v}"))
                    .map_err(|e| ConfigError::new(key, format!("expected an array: {e}")))?;
                parsed.get("x").cloned().expect("parsed")
            }
            toml::Value::Datetime(_) => return Err(ConfigError::new(key, "unsupported type")),
        };
        *cur = newv;
        let cfg: DriveConfig = root.try_into().map_err(|e: toml::de::Error| {
            ConfigError::new(key, e.to_string().trim().to_string())
        })?;
        *self = cfg;
        Ok(())
    }
}

fn parse_int(v: &str) -> Option<i64> {
    let v = v.trim().replace('_', "");
    let lower = v.to_ascii_lowercase();
    let (num, mul) = if let Some(s) = lower.strip_suffix("kib").or(lower.strip_suffix('k')) {
        (s.to_string(), 1i64 << 10)
    } else if let Some(s) = lower.strip_suffix("mib").or(lower.strip_suffix('m')) {
        (s.to_string(), 1 << 20)
    } else if let Some(s) = lower.strip_suffix("gib").or(lower.strip_suffix('g')) {
        (s.to_string(), 1 << 30)
    } else if let Some(s) = lower.strip_suffix("tib").or(lower.strip_suffix('t')) {
        (s.to_string(), 1 << 40)
    } else {
        (lower, 1)
    };
    num.trim().parse::<i64>().ok()?.checked_mul(mul)
}

macro_rules! presets {
    ($($name:literal),* $(,)?) => {
        const PRESETS: &[(&str, &str)] = &[
            $(($name, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../presets/", $name, ".toml")))),*
        ];
    };
}

presets!(
    "vertex450-128g",
    "vertex-le-100g",
    "c300-256g",
    "x25m-g2-160g",
    "x25e-64g",
    "vertex-barefoot-120g",
    "ssdnow-vplus-128g",
    "crucial-mx500-1t",
    "samsung-870qvo-1t",
    "samsung-980pro-1t",
    "samsung-980-1t",
);

/// Name, label, description and sources of a preset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PresetInfo {
    pub name: String,
    /// The short name reports and studies show (`Vertex 450`).
    pub label: String,
    pub description: String,
    pub sources: Vec<String>,
}

/// Names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// Description and sources of a built-in preset.
pub fn preset_summary(name: &str) -> Option<PresetInfo> {
    let cfg = load_preset(name).ok()?;
    Some(PresetInfo {
        label: cfg.label().to_string(),
        name: cfg.name,
        description: cfg.description,
        sources: cfg.sources,
    })
}

/// The TOML text of a built-in preset (with its comments and sources).
pub fn preset_toml(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Load (and validate) a built-in preset.
pub fn load_preset(name: &str) -> Result<DriveConfig, ConfigError> {
    match PRESETS.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => DriveConfig::from_toml_str(text)
            .map_err(|e| ConfigError::new(format!("preset {n}: {}", e.field), e.message)),
        None => Err(ConfigError::new(
            "preset",
            format!(
                "unknown preset {name:?}; known presets: {}",
                preset_names().join(", ")
            ),
        )),
    }
}

/// Load (and validate) a drive description from a TOML file.
pub fn load_config_file(path: &Path) -> Result<DriveConfig, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new("file", format!("{}: {e}", path.display())))?;
    DriveConfig::from_toml_str(&text)
}
