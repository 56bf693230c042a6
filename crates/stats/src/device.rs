//! What a simulated drive did over a measurement window, typed: [`DriveCounters`] per drive
//! (host and NAND operations, garbage collection, the mapping cache, busy times) with its
//! [`Utilisation`] (how busy each resource was and which one binds), the hybrid FTL's
//! [`MergeCounters`], and the host RAID driver's [`WriteCacheCounters`]. The simulator fills
//! them; results carry them (`RunResult::device`, `RunResult::adapter_cache`) and the reports,
//! sweeps and rank merges read their fields, never keys of a JSON object. Every field has a
//! default, so results stored before a counter existed still load.

use serde::{Deserialize, Serialize};

/// Busy fraction of every resource over the measurement window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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

/// Per-drive counters over the measurement window (from the simulator's `reset_counters`,
/// or from the end of preconditioning, to the simulator's current time).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
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

/// What the cache did over the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WriteCacheCounters {
    /// Host write bytes taken into the cache.
    pub absorbed_bytes: u64,
    /// Bytes written from the cache to the members (completed).
    pub flushed_bytes: u64,
    /// Host read bytes served from the cache.
    pub read_hit_bytes: u64,
    /// Host writes that found the cache full, and the time they waited for room, ns.
    pub full_waits: u64,
    pub full_wait_ns: u64,
    /// Most dirty bytes held at once.
    pub peak_dirty_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_round_trip_exactly_and_older_results_still_load() {
        let d = DriveCounters {
            host_write_bytes: 4096 * 733,
            write_amplification: 1.0 / 3.0,
            hybrid: Some(MergeCounters {
                full_merges: 2,
                ..MergeCounters::default()
            }),
            utilisation: Utilisation {
                dies: vec![0.1, 0.7],
                busiest: "die 1".into(),
                busiest_utilisation: 0.7,
                ..Utilisation::default()
            },
            ..DriveCounters::default()
        };
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<DriveCounters>(&text).unwrap(), d);
        // a page-mapped drive has no merge counters in its JSON
        let plain = serde_json::to_value(DriveCounters::default()).unwrap();
        assert!(plain.get("hybrid").is_none());
        // a result stored before some counters existed: what it has, the rest zero
        let old: DriveCounters = serde_json::from_str(
            r#"{"nand_reads": 58, "utilisation": {"busiest": "link", "busiest_utilisation": 0.5}}"#,
        )
        .unwrap();
        assert_eq!(old.nand_reads, 58);
        assert_eq!(old.map_lookups, 0);
        assert_eq!(old.utilisation.busiest, "link");
        assert!(old.utilisation.dies.is_empty());
    }
}
