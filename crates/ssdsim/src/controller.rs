//! Controller: firmware cores (the command path), the DRAM write buffer and on-the-fly
//! compression.
//!
//! Commands reach the firmware in arrival order and each takes the core that frees first, so
//! a core is a FIFO server whose requests come in time order (a busy-until time per core is
//! exact here). The firmware's work comes in three kinds: per command (`fw_read_ns`,
//! `fw_write_ns`, `fw_trim_ns`), per 4 KiB of a command beyond the first
//! (`fw_*_per_unit_ns`), and per NAND page that GC relocates (`fw_gc_move_ns`, booked on the
//! same cores when the die starts the GC read, so GC moves and host commands queue for the
//! same cores). Write data is accepted into the buffer only when there is room (the drive
//! requests the data from the host then); it leaves when its page group has been programmed.

use crate::config::DriveConfig;
use crate::events::Ring;
use crate::ftl::{try_vec, AllocError};
use crate::nand::Meter;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Controller {
    /// Per firmware core: busy until.
    pub fw: Vec<u64>,
    pub fw_meter: Vec<Meter>,
    pub fw_read: u64,
    pub fw_write: u64,
    pub fw_trim: u64,
    pub fw_read_unit: u64,
    pub fw_write_unit: u64,
    /// Firmware time per NAND page moved by GC.
    pub fw_gc_move: u64,
    pub remap_cost: u64,
    /// Write buffer size (0: write-through, a write completes when its data is programmed).
    pub cache_cap: u64,
    pub cache_used: u64,
    /// Write commands waiting for buffer space (or for a block to write into), and TRIMs
    /// behind them, in order.
    pub waiters: Ring<u32>,
    /// A partly filled page group is programmed this long after the last host data arrived.
    pub coalesce: u64,
    /// Arrival of the latest host write data.
    pub last_arrival: u64,
    /// Time of the pending flush-timer event, or `u64::MAX`.
    pub flush_at: u64,
    pub compression: bool,
}

impl Controller {
    pub(crate) fn memory_estimate(cfg: &DriveConfig) -> u64 {
        cfg.controller.fw_units as u64 * (8 + 8) + cfg.host.queue_depth as u64 * 8
    }

    pub(crate) fn try_new(cfg: &DriveConfig) -> Result<Controller, AllocError> {
        let c = &cfg.controller;
        let units = c.fw_units as usize;
        Ok(Controller {
            fw: try_vec(0u64, units, "firmware cores")?,
            fw_meter: try_vec(Meter::default(), units, "firmware cores")?,
            fw_read: c.fw_read_ns,
            fw_write: c.fw_write_ns,
            fw_trim: c.fw_trim_ns,
            fw_read_unit: c.fw_read_per_unit_ns,
            fw_write_unit: c.fw_write_per_unit_ns,
            fw_gc_move: c.fw_gc_move_ns,
            remap_cost: c.remap_cost_ns,
            cache_cap: c.cache_bytes,
            cache_used: 0,
            waiters: {
                let mut w = Ring::default();
                // twice the queue depth: the queue slides its items down rarely
                let n = 2 * cfg.host.queue_depth as usize;
                w.try_reserve(n)
                    .map_err(|_| AllocError::new("write-buffer queue", n * 4))?;
                w
            },
            coalesce: c.coalesce_ns,
            last_arrival: 0,
            flush_at: u64::MAX,
            compression: c.compression,
        })
    }

    /// Runs `dur` of firmware work for a command arriving at `t` on the core that frees first;
    /// returns when it is done.
    #[inline]
    pub(crate) fn fw_op(&mut self, w0: u64, t: u64, dur: u64) -> u64 {
        let mut best = 0;
        for i in 1..self.fw.len() {
            if self.fw[i] < self.fw[best] {
                best = i;
            }
        }
        let s = t.max(self.fw[best]);
        self.fw[best] = s + dur;
        self.fw_meter[best].add(w0, s, s + dur);
        s + dur
    }

    /// Whether `bytes` more fit into the write buffer.
    #[inline]
    pub(crate) fn fits(&self, bytes: u64) -> bool {
        self.cache_cap == 0 || self.cache_used + bytes <= self.cache_cap
    }

    /// NAND sectors a write of `data_sectors` takes after compression (`frac` = compressed
    /// size / size as estimated by the host pattern).
    #[inline]
    pub(crate) fn nand_sectors(&self, data_sectors: u64, frac: f32) -> u64 {
        if self.compression {
            let frac = (frac as f64).clamp(1.0 / 4096.0, 1.0);
            (((data_sectors * 512) as f64 * frac / 512.0).ceil() as u64).clamp(1, data_sectors)
        } else {
            data_sectors
        }
    }
}
