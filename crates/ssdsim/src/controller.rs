//! Controller: firmware cores (the command path), the DRAM write buffer and on-the-fly
//! compression.
//!
//! The firmware is a set of cores, each with roles (`controller.cores`): **host** (the host
//! interface layer: decoding a command, `fw_read_ns`/`fw_write_ns`/`fw_trim_ns`, and completing
//! it, `fw_complete_ns`), **ftl** (mapping lookups and updates per 4 KiB beyond a command's
//! first, `fw_*_per_unit_ns`, and GC page moves, `fw_gc_move_ns`) and **flash** (issuing the
//! host path's NAND commands, `fw_flash_ns`). A command's stages run one after the other on
//! cores of their roles, so on a controller with several cores the stages of different
//! commands overlap (command A's completion while B is decoded and C's pages are looked up),
//! and a large command's later units are looked up while its first pages are already being
//! read. Each core is a calendar of busy intervals: a stage takes the earliest gap at or after
//! the time it can start on the core of its role that can start it first (a core's event loop
//! serves whatever work is ready). GC page moves are background work with a priority between
//! the commands:
//!
//! - A move is queued as a job and starts only on a core idle at that moment (a wake-up when
//!   the first core frees checks again, since commands that arrived meanwhile go first). Reads
//!   and TRIMs overtake queued moves: a read waits for the move a core is running and for moves
//!   already booked (by a write or by foreground GC), not for those still queued.
//! - A write arriving while moves are queued books them first, in arrival order: writes
//!   consume the free blocks that GC makes, so they do not overtake it.
//! - Foreground GC (a plane below the hard free-block threshold) books its moves at once, in
//!   arrival order with the commands, as the die interleaves GC with host programs then.
//!
//! The moved data's page group is programmed only after its move ends.
//!
//! Write data is accepted into the buffer only when there is room (the drive requests the data
//! from the host then); it leaves when its page group has been programmed.

use crate::config::DriveConfig;
use crate::events::{Calendar, Ring};
use crate::ftl::{try_vec, AllocError};
use crate::nand::Meter;

/// Page groups one GC page move's units went into: a page's units fill at most
/// `pack_factor` (≤ 8) pages' worth of sectors, so they reach at most 9 groups. NIL where unused.
pub(crate) type GcJob = [u32; 9];

/// Firmware roles (a core's bit mask).
pub(crate) const ROLE_HOST: u8 = 1;
pub(crate) const ROLE_FTL: u8 = 2;
pub(crate) const ROLE_FLASH: u8 = 4;
pub(crate) const ALL_ROLES: u8 = ROLE_HOST | ROLE_FTL | ROLE_FLASH;
/// Role indices for [`Controller::fw`].
pub(crate) const R_HOST: usize = 0;
pub(crate) const R_FTL: usize = 1;
pub(crate) const R_FLASH: usize = 2;

/// The roles a `controller.cores` entry names (`"host+ftl"`, `"all"`).
pub(crate) fn roles_of(s: &str) -> Result<u8, String> {
    let mut m = 0;
    for part in s.split('+') {
        m |= match part.trim().to_ascii_lowercase().as_str() {
            "host" => ROLE_HOST,
            "ftl" => ROLE_FTL,
            "flash" => ROLE_FLASH,
            "all" => ALL_ROLES,
            other => {
                return Err(format!(
                    "unknown role {other:?}; use host, ftl, flash (joined with +) or all"
                ))
            }
        };
    }
    Ok(m)
}

/// The role names of a mask, for reports (`host+ftl`).
pub(crate) fn role_names(m: u8) -> String {
    if m == ALL_ROLES {
        return "all".into();
    }
    let mut v = Vec::new();
    for (bit, name) in [
        (ROLE_HOST, "host"),
        (ROLE_FTL, "ftl"),
        (ROLE_FLASH, "flash"),
    ] {
        if m & bit != 0 {
            v.push(name);
        }
    }
    v.join("+")
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Controller {
    /// Per firmware core: its bookings (gaps are used).
    pub fw: Vec<Calendar>,
    pub fw_meter: Vec<Meter>,
    /// Per firmware core: its roles.
    pub roles: Vec<u8>,
    /// Per role (host, ftl, flash): the cores that have it.
    pub by_role: [Vec<u8>; 3],
    pub fw_complete: u64,
    pub fw_flash: u64,
    pub fw_map: u64,
    pub fw_read: u64,
    pub fw_write: u64,
    pub fw_trim: u64,
    pub fw_read_unit: u64,
    pub fw_write_unit: u64,
    /// Firmware time per NAND page moved by GC.
    pub fw_gc_move: u64,
    /// GC page moves waiting for an idle core, in order: the page groups each one's data went
    /// into (NIL where unused); each of them counts the job as a dependency.
    pub gc_jobs: Ring<GcJob>,
    /// Time of the armed firmware wake-up, or `u64::MAX`.
    pub fw_wake_at: u64,
    /// ECC decode time per 4 KiB (0: no separate stage).
    pub ecc_ns: u64,
    /// Per ECC decode engine: its bookings (gaps are used, as on a channel).
    pub ecc: Vec<Calendar>,
    pub ecc_meter: Vec<Meter>,
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
        let cores = cfg
            .controller
            .cores
            .len()
            .max(cfg.controller.fw_units as usize) as u64;
        cores * (64 * 16 + 32)
            + cfg.host.queue_depth as u64 * 8
            + cfg.controller.ecc_engines as u64 * 64
    }

    pub(crate) fn try_new(cfg: &DriveConfig) -> Result<Controller, AllocError> {
        let c = &cfg.controller;
        let roles: Vec<u8> = if c.cores.is_empty() {
            vec![ALL_ROLES; c.fw_units as usize]
        } else {
            c.cores
                .iter()
                .map(|r| roles_of(r).unwrap_or(ALL_ROLES))
                .collect()
        };
        let units = roles.len();
        let mut by_role: [Vec<u8>; 3] = Default::default();
        for (i, &m) in roles.iter().enumerate() {
            for (r, bit) in [ROLE_HOST, ROLE_FTL, ROLE_FLASH].into_iter().enumerate() {
                if m & bit != 0 {
                    by_role[r].push(i as u8);
                }
            }
        }
        let mut fw = try_vec(Calendar::default(), units, "firmware cores")?;
        for cal in &mut fw {
            cal.try_reserve(256)
                .map_err(|_| AllocError::new("firmware cores", 256 * 16))?;
        }
        let engines = if c.ecc_decode_ns > 0 {
            c.ecc_engines as usize
        } else {
            0
        };
        Ok(Controller {
            fw,
            fw_meter: try_vec(Meter::default(), units, "firmware cores")?,
            roles,
            by_role,
            fw_complete: c.fw_complete_ns,
            fw_flash: c.fw_flash_ns,
            fw_map: c.fw_map_ns,
            fw_read: c.fw_read_ns,
            fw_write: c.fw_write_ns,
            fw_trim: c.fw_trim_ns,
            fw_read_unit: c.fw_read_per_unit_ns,
            fw_write_unit: c.fw_write_per_unit_ns,
            fw_gc_move: c.fw_gc_move_ns,
            gc_jobs: Ring::default(),
            fw_wake_at: u64::MAX,
            ecc_ns: c.ecc_decode_ns,
            ecc: try_vec(Calendar::default(), engines, "ECC engines")?,
            ecc_meter: try_vec(Meter::default(), engines, "ECC engines")?,
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

    /// Runs `dur` of firmware work of role `role` (index: 0 host, 1 ftl, 2 flash) that can start
    /// at `t` on the core of that role that can start it first (the earliest gap); `now` is the
    /// current time. Returns its end (`t` when `dur` is 0).
    #[inline]
    pub(crate) fn fw(&mut self, w0: u64, now: u64, role: usize, t: u64, dur: u64) -> u64 {
        if dur == 0 {
            return t;
        }
        let cores = &self.by_role[role];
        let best = if cores.len() == 1 {
            cores[0] as usize
        } else {
            let mut best = cores[0] as usize;
            let mut best_start = u64::MAX;
            for &c in cores {
                let s = self.fw[c as usize].peek(t.max(now), dur);
                if s < best_start {
                    (best, best_start) = (c as usize, s);
                }
            }
            best
        };
        let (s, e) = self.fw[best].book(now, t.max(now), dur);
        self.fw_meter[best].add(w0, s, e);
        e
    }

    /// An `ftl` core free for a GC move of `fw_gc_move` ns from `now`, if any.
    #[inline]
    pub(crate) fn idle_core(&self, now: u64) -> Option<usize> {
        self.by_role[1]
            .iter()
            .map(|&c| c as usize)
            .find(|&c| self.fw[c].peek(now, self.fw_gc_move) == now)
    }

    /// When an `ftl` core could next start a GC move.
    #[inline]
    pub(crate) fn first_free(&self, now: u64) -> u64 {
        self.by_role[1]
            .iter()
            .map(|&c| self.fw[c as usize].peek(now, self.fw_gc_move))
            .min()
            .unwrap_or(now)
    }

    /// Runs one GC job on idle core `core` from `now`; returns its end.
    #[inline]
    pub(crate) fn run_gc_job(&mut self, w0: u64, core: usize, now: u64) -> u64 {
        let (s, e) = self.fw[core].book(now, now, self.fw_gc_move);
        self.fw_meter[core].add(w0, s, e);
        e
    }

    /// `bytes` read from the NAND reach the controller at `t`: they are decoded on the ECC
    /// engine that can finish first; returns when the data is usable (`t` without the stage).
    #[inline]
    pub(crate) fn decode(&mut self, w0: u64, now: u64, t: u64, bytes: u64) -> u64 {
        if self.ecc_ns == 0 {
            return t;
        }
        let dur = self.ecc_ns * bytes.div_ceil(4096).max(1);
        let mut best = 0;
        let mut best_start = u64::MAX;
        for (i, e) in self.ecc.iter().enumerate() {
            let s = e.peek(t, dur);
            if s < best_start {
                (best, best_start) = (i, s);
            }
        }
        let (s, e) = self.ecc[best].book(now, t, dur);
        self.ecc_meter[best].add(w0, s, e);
        e
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
