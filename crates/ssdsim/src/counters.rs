//! Device counters: what the drive did inside the measurement window, and how busy each
//! resource was (so a user can see what binds). Counters are written by the model and only read
//! to build [`DriveCounters`]; the JSON is made from them, never read back.

use serde::Serialize;

/// Raw event counts of one drive since the window started.
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct RawCounters {
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    pub nand_reads: u64,
    pub nand_read_cmds: u64,
    pub nand_programs: u64,
    pub nand_program_cmds: u64,
    pub nand_program_bytes: u64,
    pub nand_erases: u64,
    pub nand_erase_cmds: u64,
    pub rmw_reads: u64,
    pub fragment_reads: u64,
    /// Translation pages of the cached mapping table read, written back, and translation blocks
    /// erased.
    pub map_reads: u64,
    pub map_writes: u64,
    pub map_erases: u64,
    pub cache_hits: u64,
    pub unwritten_read_bytes: u64,
    pub pslc_programs: u64,
    pub cache_wait_ns: u64,
    pub program_suspends: u64,
    pub erase_suspends: u64,
}

/// Busy fraction of every resource over the measurement window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Utilisation {
    /// Per die: time the die was occupied (array operation, its data transfer, waiting for the
    /// channel or a suspend) / window.
    pub dies: Vec<f64>,
    /// Per channel: bus transfer time / window.
    pub channels: Vec<f64>,
    /// Per firmware core.
    pub fw_cores: Vec<f64>,
    /// Per firmware core: its roles (`all`, or `host`, `ftl`, `flash` joined with `+`).
    pub fw_roles: Vec<String>,
    /// Per host CPU taking the drive's completions (one per SATA drive, one per NVMe queue):
    /// the host's completion handling.
    pub host_cpus: Vec<f64>,
    /// Per ECC decode engine (empty when decoding is not a separate stage).
    pub ecc_engines: Vec<f64>,
    /// Host link (SATA: both directions; NVMe: host → drive).
    pub link: f64,
    /// NVMe only: drive → host.
    pub link_to_host: f64,
    pub die_mean: f64,
    pub die_max: f64,
    pub channel_max: f64,
    pub fw_max: f64,
    pub ecc_max: f64,
    /// The most utilised resource (`die 3`, `channel 0`, `fw core 0` — with its roles when it
    /// has not all of them, `fw core 1 (flash)` —, `ecc engine 0`, `link`, `link to host`,
    /// `host cpu 0`).
    pub busiest: String,
    pub busiest_utilisation: f64,
}

/// Per-drive counters over the measurement window (from [`crate::Simulator::reset_counters`],
/// or from the end of preconditioning, to the simulator's current time).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DriveCounters {
    /// Length of the window the counters cover, ns.
    pub window_ns: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    /// Mapping units unmapped by TRIM.
    pub trimmed_units: u64,
    /// NAND page reads (host, read-modify-write and GC).
    pub nand_reads: u64,
    /// NAND read commands (a multi-plane read of several pages counts once).
    pub nand_read_cmds: u64,
    /// NAND page programs (host, pSLC, GC, folding).
    pub nand_programs: u64,
    /// NAND program commands (a multi-plane program counts once).
    pub nand_program_cmds: u64,
    /// Bytes programmed (pages × page size).
    pub nand_program_bytes: u64,
    pub nand_erases: u64,
    pub nand_erase_cmds: u64,
    /// GC victims collected (pSLC folds counted separately).
    pub gc_runs: u64,
    /// Pages with valid data read by GC/folding.
    pub gc_pages_moved: u64,
    /// Mapping units relocated by GC/folding.
    pub gc_units_moved: u64,
    pub pslc_folds: u64,
    /// Old units read from NAND for unaligned writes under `rmw`.
    pub rmw_reads: u64,
    /// NAND reads of the older fragment of a unit (`remap`): for host reads of its sectors,
    /// and for partial rewrites that merge it.
    pub fragment_reads: u64,
    /// Partial rewrites (`remap`) that merged a unit's two older fragments into its new slot.
    pub remap_merges: u64,
    /// Fragmented units merged by GC when it moved one of their parts.
    pub gc_merges: u64,
    /// Units whose sectors lie in two slots at the end of the window (`remap`).
    pub fragmented_units: u64,
    /// Cached mapping table (`controller.map_cache_bytes`): translation-page lookups (one per
    /// page a command or GC move touches), misses that read the page from the flash, NAND
    /// reads and write-backs of translation pages, and translation blocks erased. The reads,
    /// programs and erases are also in the `nand_*` counters (and in the write amplification).
    pub map_lookups: u64,
    pub map_misses: u64,
    pub map_reads: u64,
    pub map_writes: u64,
    pub map_erases: u64,
    /// Merges of the hybrid log-block scheme (`ftl.scheme = "hybrid"`; absent for a
    /// page-mapped drive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<MergeCounters>,
    /// NAND bytes programmed / host bytes written.
    pub write_amplification: f64,
    /// Mapping units read (or merged) from the controller buffer / DRAM instead of NAND.
    pub cache_hits: u64,
    /// Bytes the host read from never-written (or trimmed) units: returned as zeros without
    /// touching the flash, as a real drive does.
    pub unwritten_read_bytes: u64,
    /// Units overwritten while their previous data was still in the buffer.
    pub cache_write_hits: u64,
    pub pslc_programs: u64,
    pub compression_saved_bytes: u64,
    /// Programs and erases suspended for reads.
    pub program_suspends: u64,
    pub erase_suspends: u64,
    /// Busy time per die inside the window, ns.
    pub per_die_busy_ns: Vec<u64>,
    /// Busy time per channel inside the window, ns.
    pub per_channel_busy_ns: Vec<u64>,
    /// Busy time per firmware core inside the window, ns.
    pub per_fw_busy_ns: Vec<u64>,
    /// Busy time per ECC decode engine inside the window, ns (empty without the stage).
    pub per_ecc_busy_ns: Vec<u64>,
    /// Busy time per host CPU handling the drive's completions inside the window, ns.
    pub per_host_cpu_busy_ns: Vec<u64>,
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    /// Host link busy time (SATA: both directions; NVMe: host → drive), ns.
    pub link_busy_ns: u64,
    /// NVMe: drive → host link busy time, ns.
    pub link_to_host_busy_ns: u64,
    /// Firmware busy time, all cores, ns.
    pub fw_busy_ns: u64,
    /// Total time writes waited for write-buffer space (or a block to write into), ns.
    pub cache_wait_ns: u64,
    pub mapped_bytes: u64,
    /// Free blocks now, their time average over the window and their minimum.
    pub free_blocks: u64,
    pub free_blocks_mean: f64,
    pub free_blocks_min: u64,
    /// Blocks holding no valid data (free, being erased, or collected and waiting for their
    /// erase), time average over the window: the spare space not holding data.
    pub spare_blocks_mean: f64,
    pub utilisation: Utilisation,
}

/// What the hybrid log-block scheme's merges did over the window. Their page reads, programs
/// and erases are also in the `nand_*` counters (and the write amplification).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MergeCounters {
    /// Full merges: every valid page of a logical block copied into a new data block.
    pub full_merges: u64,
    /// Partial merges: a sequential log block holding a prefix of its logical block completed
    /// from the data block and made the data block.
    pub partial_merges: u64,
    /// Switch merges: a sequential log block holding its whole logical block in order made the
    /// data block, without copying.
    pub switch_merges: u64,
    /// Pages copied by merges (one page read and one page programmed each).
    pub merge_pages: u64,
}

/// Busy times of a drive's resources over a window, ns.
pub(crate) struct Busy<'a> {
    pub dies: &'a [u64],
    pub channels: &'a [u64],
    pub fw: &'a [u64],
    pub fw_roles: &'a [String],
    pub ecc: &'a [u64],
    pub link: u64,
    pub link_to_host: u64,
    pub host_cpu: &'a [u64],
}

impl Utilisation {
    pub(crate) fn new(window: u64, b: Busy<'_>) -> Utilisation {
        let Busy {
            dies,
            channels,
            fw,
            fw_roles,
            ecc,
            link,
            link_to_host,
            host_cpu,
        } = b;
        let w = window.max(1) as f64;
        let frac = |v: &[u64]| v.iter().map(|&b| b as f64 / w).collect::<Vec<f64>>();
        let dies = frac(dies);
        let channels = frac(channels);
        let fw_cores = frac(fw);
        let ecc_engines = frac(ecc);
        let host_cpus = frac(host_cpu);
        let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
        let (link, link_to_host) = (link as f64 / w, link_to_host as f64 / w);
        let mut busiest = (String::new(), -1.0);
        let mut consider = |name: String, u: f64| {
            if u > busiest.1 {
                busiest = (name, u);
            }
        };
        for (i, &u) in dies.iter().enumerate() {
            consider(format!("die {i}"), u);
        }
        for (i, &u) in channels.iter().enumerate() {
            consider(format!("channel {i}"), u);
        }
        for (i, &u) in fw_cores.iter().enumerate() {
            match fw_roles.get(i).map(String::as_str) {
                None | Some("all") => consider(format!("fw core {i}"), u),
                Some(r) => consider(format!("fw core {i} ({r})"), u),
            }
        }
        for (i, &u) in ecc_engines.iter().enumerate() {
            consider(format!("ecc engine {i}"), u);
        }
        consider("link".into(), link);
        consider("link to host".into(), link_to_host);
        for (i, &u) in host_cpus.iter().enumerate() {
            consider(format!("host cpu {i}"), u);
        }
        Utilisation {
            die_mean: dies.iter().sum::<f64>() / dies.len().max(1) as f64,
            die_max: max(&dies),
            channel_max: max(&channels),
            fw_max: max(&fw_cores),
            ecc_max: max(&ecc_engines),
            dies,
            channels,
            fw_cores,
            fw_roles: fw_roles.to_vec(),
            host_cpus,
            ecc_engines,
            link,
            link_to_host,
            busiest: busiest.0,
            busiest_utilisation: busiest.1.max(0.0),
        }
    }
}

/// What the invariant audit found ([`crate::Simulator::enable_audit`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditReport {
    /// Checks made.
    pub checks: u64,
    /// Checks that failed.
    pub violations: u64,
    /// The first failures, described.
    pub messages: Vec<String>,
}

/// Invariant checks run while the model executes (tests): transactions start no earlier than
/// their dependencies, dies never idle while a transaction could start, operations on a die do
/// not overlap.
#[derive(Debug, Clone, Default)]
pub(crate) struct Audit {
    pub r: AuditReport,
    /// Per die: end of the last operation started (operations must not overlap).
    pub die_end: Vec<u64>,
}

impl Audit {
    #[inline]
    pub(crate) fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.r.checks += 1;
        if !ok {
            self.r.violations += 1;
            if self.r.messages.len() < 20 {
                self.r.messages.push(what());
            }
        }
    }
}
