//! What an aging run (a file-system workload applied day after day to one simulated drive or
//! array) measured: per phase host and NAND writes, the time the writes took, and what the
//! drives still hold as valid data.

use serde::{Deserialize, Serialize};

/// One phase of an aging run (the initial fill, a day, or a probe) on all drives together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgingWindow {
    /// Bytes the host wrote (all drives).
    pub host_write_bytes: u64,
    /// Bytes programmed into the NAND (all drives; GC and pSLC folding included).
    pub nand_write_bytes: u64,
    /// TRIM commands that reached the drives (0 when the RAID driver drops them).
    pub drive_trims: u64,
    /// Bytes the file system freed and trimmed in this phase (whether or not the TRIMs reached
    /// the drives).
    pub fs_trimmed_bytes: u64,
    /// Virtual time from the first to the last completion of the phase's I/O, ns (idle time
    /// after it not included).
    pub elapsed_ns: u64,
    pub per_drive_host_write_bytes: Vec<u64>,
    pub per_drive_nand_write_bytes: Vec<u64>,
    /// Bytes the drives hold as valid data at the end of the phase (what they must keep
    /// through garbage collection; without TRIM, deleted files count too).
    pub drive_mapped_bytes: u64,
    /// Fewest free blocks of any drive at the end of the phase.
    pub free_blocks_min: u64,
}

impl AgingWindow {
    /// NAND bytes per host byte (0 when nothing was written).
    pub fn write_amplification(&self) -> f64 {
        ratio(self.nand_write_bytes, self.host_write_bytes)
    }

    /// Write amplification of drive `i`.
    pub fn drive_write_amplification(&self, i: usize) -> f64 {
        ratio(
            self.per_drive_nand_write_bytes.get(i).copied().unwrap_or(0),
            self.per_drive_host_write_bytes.get(i).copied().unwrap_or(0),
        )
    }

    /// Host write rate over the phase's I/O time, MB/s (10^6 bytes).
    pub fn write_mb_s(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.host_write_bytes as f64 * 1e3 / self.elapsed_ns as f64
    }

    /// Adds `o` (for totals over several phases; the end-state fields take `o`'s).
    pub fn add(&mut self, o: &AgingWindow) {
        self.host_write_bytes += o.host_write_bytes;
        self.nand_write_bytes += o.nand_write_bytes;
        self.drive_trims += o.drive_trims;
        self.fs_trimmed_bytes += o.fs_trimmed_bytes;
        self.elapsed_ns += o.elapsed_ns;
        for (v, w) in [
            (
                &mut self.per_drive_host_write_bytes,
                &o.per_drive_host_write_bytes,
            ),
            (
                &mut self.per_drive_nand_write_bytes,
                &o.per_drive_nand_write_bytes,
            ),
        ] {
            v.resize(v.len().max(w.len()), 0);
            for (a, b) in v.iter_mut().zip(w) {
                *a += b;
            }
        }
        self.drive_mapped_bytes = o.drive_mapped_bytes;
        self.free_blocks_min = o.free_blocks_min;
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// One simulated day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgingDay {
    /// 1-based.
    pub day: u32,
    /// The day's file activity, with the idle time after it (background GC counts here).
    pub work: AgingWindow,
    /// The write probe at the end of the day (on a copy of the drives: it changes nothing).
    pub probe: AgingWindow,
    /// File-system state at the end of the day.
    pub fs_used_bytes: u64,
    pub files: u64,
    pub free_extents: u64,
    pub created: u64,
    pub deleted: u64,
    pub rewritten: u64,
    pub appended: u64,
}

/// An aging run: the fill and every day, on one configuration of drives.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgingRun {
    pub label: String,
    /// Whether the host adapter passed TRIM to the drives.
    pub trim_passthrough: bool,
    pub drives: usize,
    /// Size of the volume (the drive or array), bytes.
    pub volume_bytes: u64,
    pub fill: AgingWindow,
    pub days: Vec<AgingDay>,
}

impl AgingRun {
    /// The days' work together (fill and probes not included).
    pub fn days_total(&self) -> AgingWindow {
        let mut t = AgingWindow::default();
        for d in &self.days {
            t.add(&d.work);
        }
        t
    }
}
