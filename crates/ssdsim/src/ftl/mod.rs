//! Flash translation layer: mapping ([`mapping`]), the cached map of a controller without DRAM
//! for it ([`mapcache`]), block allocation and write points ([`alloc`]), garbage collection and
//! pSLC folding ([`gc`]) and untimed preconditioning ([`precondition`]).
//!
//! The FTL's state changes when the controller acts: a host write is mapped when the command is
//! admitted to the write buffer, a GC move when its read is issued to the die, a block becomes
//! free when its erase completes. The FTL hands the flash transactions it needs (programs of
//! filled page groups, GC reads, erases) to the flash scheduler ([`crate::sched`]).

pub(crate) mod alloc;
pub(crate) mod gc;
pub(crate) mod hybrid;
pub(crate) mod mapcache;
pub(crate) mod mapping;
pub(crate) mod precondition;

use crate::config::{DriveConfig, FtlScheme, GcPolicy, UnalignedPolicy};
use crate::nand::Geometry;
use alloc::{BlockSet, Group};
use gc::DieGc;
use hybrid::Hybrid;
use mapcache::MapCache;
use mapping::{shrink, Frag, Mapping, FRAG_ENTRY_BYTES, UNMAPPED};
use std::collections::VecDeque;

pub(crate) const NIL: u32 = u32::MAX;

/// A table of the simulated drive could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate the simulated drive's {what} ({bytes} bytes)")]
pub struct AllocError {
    pub what: &'static str,
    pub bytes: usize,
}

impl AllocError {
    pub(crate) fn new(what: &'static str, bytes: usize) -> Self {
        AllocError { what, bytes }
    }
}

/// `vec![value; len]`, or an error instead of an abort.
pub(crate) fn try_vec<T: Clone>(
    value: T,
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| AllocError::new(what, len.saturating_mul(size_of::<T>())))?;
    v.resize(len, value);
    Ok(v)
}

pub(crate) fn try_vec_with_capacity<T>(
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| AllocError::new(what, len.saturating_mul(size_of::<T>())))?;
    Ok(v)
}

pub(crate) fn try_deque<T>(len: usize, what: &'static str) -> Result<VecDeque<T>, AllocError> {
    let mut v = VecDeque::new();
    v.try_reserve_exact(len)
        .map_err(|_| AllocError::new(what, len.saturating_mul(size_of::<T>())))?;
    Ok(v)
}

// block states
pub(crate) const FREE: u8 = 0;
pub(crate) const OPEN: u8 = 1;
pub(crate) const CLOSED: u8 = 2;
/// Chosen by GC: its valid data is being moved out.
pub(crate) const VICTIM: u8 = 3;
/// Empty, erase queued or running.
pub(crate) const ERASING: u8 = 4;

/// FTL activity counters (the drive merges them into its counters).
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct FtlCounters {
    pub trimmed_units: u64,
    pub gc_runs: u64,
    pub pslc_folds: u64,
    pub gc_pages_moved: u64,
    pub gc_units_moved: u64,
    pub cache_write_hits: u64,
    pub compression_saved_bytes: u64,
    /// Partial rewrites (`remap`) that merged two older fragments of a unit into the new slot.
    pub remap_merges: u64,
    /// Fragmented units merged by GC when it moved one of their parts.
    pub gc_merges: u64,
    /// Lookups of translation pages in the cached mapping table, and those that missed and read
    /// the page from the flash (`controller.map_cache_bytes`).
    pub map_lookups: u64,
    pub map_misses: u64,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Ftl {
    pub g: Geometry,
    pub user_units: u64,
    pub user_bytes: u64,
    pub rmw: bool,
    /// `unaligned = "remap"`: partly rewritten units keep fragments ([`Frag`]).
    pub remap: bool,
    pub copyback: bool,
    pub map: Mapping,
    // per block
    pub blk_valid: Vec<u32>,
    pub blk_erase: Vec<u32>,
    pub blk_state: Vec<u8>,
    pub blk_slc: Vec<bool>,
    /// Pages of the block programmed so far (data in later pages is still in the controller).
    pub blk_prog: Vec<u16>,
    /// When the block was closed (cost-benefit age), ns.
    pub blk_time: Vec<u64>,
    // per plane
    pub free: Vec<VecDeque<u32>>,
    pub erasing: Vec<u32>,
    pub slc_fifo: Vec<VecDeque<u32>>,
    pub slc_count: Vec<u32>,
    pub pslc_cfg_blocks: u32,
    /// pSLC blocks per plane kept whatever the fill.
    pub pslc_static_blocks: u32,
    /// The host has been idle long enough: fold pSLC blocks in the background
    /// (`ftl.pslc_idle_fold_ns`).
    pub idle_fold: bool,
    /// The drive folds its SLC cache when the host is idle (`ftl.pslc_idle_fold_ns` > 0).
    pub fold_when_idle: bool,
    /// `ftl.pslc_when_full = "fold"`: host writes keep landing in SLC blocks past the cache's
    /// share while the oldest are folded.
    pub fold_when_full: bool,
    pub free_total: u64,
    /// ∫ free blocks dt over the measurement window (for the mean), and where it stands.
    pub free_area: u128,
    pub free_last_t: u64,
    pub free_min: u64,
    /// Blocks holding no valid data: free, being erased, or collected and waiting for their
    /// erase (the physical spare at this moment), and its integral over the window.
    pub spare_total: u64,
    pub spare_area: u128,
    pub mapped_units: u64,
    // write points and page groups
    pub host_wp: Vec<BlockSet>,
    pub gc_wp: Vec<BlockSet>,
    pub groups: Vec<Group>,
    pub group_free: Vec<u32>,
    /// The open host group (the host stream's current die and page), or NIL.
    pub host_group: u32,
    /// Per die: the open GC group, or NIL.
    pub gc_group: Vec<u32>,
    /// Per die: sealed host groups waiting for RMW reads (programs must go in page order).
    pub host_pending: Vec<VecDeque<u32>>,
    /// Per die: sealed GC groups waiting for the reads of merged fragments (in page order).
    pub gc_pending: Vec<VecDeque<u32>>,
    /// Sealed host groups whose program has not completed (they hold write-buffer space).
    pub host_sealed: u64,
    // garbage collection
    pub gc: Vec<DieGc>,
    pub policy: GcPolicy,
    pub d_choices: u32,
    pub gc_soft: u32,
    pub gc_hard: u32,
    pub rng: u64,
    pub steady_overwrite: f64,
    /// Dies whose free blocks changed (the drive updates their GC mode and starts GC).
    pub changed: Vec<u32>,
    pub changed_flag: Vec<bool>,
    /// Live units of the page being moved (scratch).
    pub scratch_units: Vec<u32>,
    pub scratch_ver: Vec<u32>,
    /// The cached mapping table of a controller without DRAM for the map (`None`: the whole
    /// table in DRAM).
    pub mcache: Option<MapCache>,
    pub c: FtlCounters,
    /// `steady` preconditioning: the marginal write amplification GC had reached (None when
    /// the drive was not brought into the steady state) and the overwrites it took, in
    /// capacities.
    pub steady_wa: Option<f64>,
    pub steady_written: f64,
    /// The hybrid log-block scheme's tables (`ftl.scheme = "hybrid"`; `None`: page mapping).
    pub hy: Option<Box<Hybrid>>,
}

impl Ftl {
    /// See [`Simulator::freeze`](crate::Simulator::freeze).
    pub(crate) fn freeze(&mut self) {
        self.map.freeze();
    }

    /// A pool of `cap` free page groups (handed out in id order).
    fn group_pool(cap: usize) -> Result<(Vec<Group>, Vec<u32>), AllocError> {
        let mut groups = try_vec_with_capacity(cap, "page groups")?;
        let mut group_free = try_vec_with_capacity(cap, "page groups")?;
        for i in 0..cap {
            groups.push(Group::default());
            group_free.push((cap - 1 - i) as u32);
        }
        Ok((groups, group_free))
    }

    /// Gives the pool of page groups `cap` groups, as a drive built with that capacity has
    /// (see `Drive::retime`). Only when no group is in use; false otherwise (nothing changed).
    pub(crate) fn resize_group_pool(&mut self, cap: usize) -> Result<bool, AllocError> {
        let idle = self.group_free.len() == self.groups.len()
            && self.host_group == NIL
            && self.gc_group.iter().all(|&g| g == NIL)
            && self.host_pending.iter().all(|q| q.is_empty())
            && self.gc_pending.iter().all(|q| q.is_empty())
            && self.host_sealed == 0;
        if !idle {
            return Ok(false);
        }
        if cap != self.groups.len() {
            let (groups, group_free) = Self::group_pool(cap)?;
            self.groups = groups;
            self.group_free = group_free;
        }
        Ok(true)
    }
    /// Bytes the FTL takes when a run writes what `touch` says: mapping tables (sparse: the
    /// chunks the written logical region and the written flash reach), block and plane state,
    /// page groups. The per-block and per-plane tables are small per block (28 bytes) and are
    /// allocated whole.
    pub(crate) fn memory_estimate(
        cfg: &DriveConfig,
        tracking: bool,
        groups_cap: usize,
        touch: crate::Touch,
    ) -> u64 {
        let g = Geometry::new(cfg);
        let f = &cfg.ftl;
        let user_units = f.user_capacity_bytes.div_ceil(f.mapping_unit);
        let variable = cfg.controller.compression || f.unaligned == UnalignedPolicy::Remap;
        let blocks = g.blocks as u64;
        let units = touch.logical_bytes.div_ceil(f.mapping_unit).min(user_units);
        // every sector written lies in one unit: no more units than sectors written
        let written_units = touch.written_bytes.div_ceil(512);
        // Blocks are taken from the front of each plane's free list, so the flash written lies
        // in one run of slots per plane (two with a pSLC region, whose data is written again
        // when folded); each plane's open block counts whole.
        let total_slots = g.total_slots as u64;
        let slot_bytes = (cfg.nand.page_bytes / g.spp as u64).max(1);
        let pslc = cfg.pslc_blocks_per_plane() > 0;
        let written = touch
            .written_bytes
            .saturating_mul(if pslc { 2 } else { 1 })
            .div_ceil(slot_bytes);
        let planes = g.planes_total as u64;
        let open = planes * g.ppb as u64 * g.spp as u64 * if pslc { 2 } else { 1 };
        let slots = if touch.written_bytes == 0 {
            0
        } else {
            written.saturating_add(open).min(total_slots)
        };
        let runs = planes * if pslc { 2 } else { 1 };
        let mut b = Mapping::bytes(
            user_units,
            total_slots,
            g.us as u64,
            variable,
            tracking,
            (units, written_units),
            (slots, runs),
        );
        b += blocks * (4 + 4 + 1 + 1 + 2 + 8); // valid, erase, state, slc, programmed, time
        b += blocks * 4 * 2; // free lists and pSLC FIFOs (one block id each)
        b += g.planes_total as u64 * (4 + 4) + g.dies as u64 * 2 * size_of::<BlockSet>() as u64;
        b += groups_cap as u64 * (size_of::<Group>() as u64 + 4);
        // the per-die queues of sealed host groups
        let pending = (2 * groups_cap / g.dies.max(1) + 16).min(groups_cap.max(4)) as u64;
        b += g.dies as u64 * (pending + 4) * 4;
        b += g.dies as u64 * (size_of::<DieGc>() as u64 + DieGc::heap_bytes(g.planes) + 4 * 8);
        b += (g.spp as u64 + g.us as u64) * 4 + g.dies as u64 * 5;
        if f.unaligned == UnalignedPolicy::Remap {
            // at most one fragment entry per unit written
            b += written_units.min(units) * FRAG_ENTRY_BYTES;
        }
        if f.scheme == FtlScheme::Hybrid {
            let lbp = g.planes as u64 * g.ppb as u64;
            b += Hybrid::memory_estimate(
                user_units.div_ceil(lbp),
                g.planes as u64,
                blocks,
                g.dies as u64,
            );
        }
        if cfg.controller.map_cache_bytes > 0 {
            b += MapCache::memory_estimate(
                cfg.controller.map_cache_bytes,
                cfg.nand.page_bytes,
                user_units,
                g.dies,
            );
        }
        b
    }

    pub(crate) fn try_new(
        cfg: &DriveConfig,
        tracking: bool,
        groups_cap: usize,
    ) -> Result<Ftl, AllocError> {
        let g = Geometry::new(cfg);
        let f = &cfg.ftl;
        let user_units = f.user_capacity_bytes.div_ceil(f.mapping_unit);
        let variable = cfg.controller.compression || f.unaligned == UnalignedPolicy::Remap;
        let map = Mapping::try_new(user_units as usize, g.total_slots, g.us, variable, tracking)?;
        let mut free = try_vec_with_capacity(g.planes_total, "free-block lists")?;
        for p in 0..g.planes_total {
            let mut q = try_deque(g.bpp, "free-block lists")?;
            for b in 0..g.bpp {
                q.push_back((p * g.bpp + b) as u32);
            }
            free.push(q);
        }
        let mut slc_fifo = try_vec_with_capacity(g.planes_total, "pSLC block lists")?;
        for _ in 0..g.planes_total {
            slc_fifo.push(try_deque(g.bpp, "pSLC block lists")?);
        }
        let (groups, group_free) = Self::group_pool(groups_cap)?;
        let mut gcs = try_vec_with_capacity(g.dies, "GC state")?;
        for _ in 0..g.dies {
            gcs.push(DieGc::try_new(g.planes)?);
        }
        let mut host_pending = try_vec_with_capacity(g.dies, "page groups")?;
        let mut gc_pending = try_vec_with_capacity(g.dies, "page groups")?;
        // sealed host groups wait in page order behind read-modify-write reads: a die's queue
        // can hold a share of the buffer's groups
        let pending = (2 * groups_cap / g.dies.max(1) + 16).min(groups_cap.max(4));
        for _ in 0..g.dies {
            host_pending.push(try_deque(pending, "page groups")?);
            gc_pending.push(try_deque(4, "page groups")?);
        }
        let blocks = g.blocks;
        let hy = match f.scheme {
            FtlScheme::Page => None,
            FtlScheme::Hybrid => {
                let lbp = (g.planes * g.ppb as usize) as u64;
                Some(Box::new(Hybrid::try_new(
                    lbp as u32,
                    user_units.div_ceil(lbp) as u32,
                    f.log_blocks,
                    g.planes,
                    blocks,
                    g.dies,
                )?))
            }
        };
        Ok(Ftl {
            hy,
            user_units,
            user_bytes: f.user_capacity_bytes,
            rmw: f.unaligned == UnalignedPolicy::Rmw,
            remap: f.unaligned == UnalignedPolicy::Remap,
            copyback: f.copyback,
            map,
            blk_valid: try_vec(0u32, blocks, "block valid counts")?,
            blk_erase: try_vec(0u32, blocks, "block erase counts")?,
            blk_state: try_vec(FREE, blocks, "block states")?,
            blk_slc: try_vec(false, blocks, "block modes")?,
            blk_prog: try_vec(0u16, blocks, "block program frontiers")?,
            blk_time: try_vec(0u64, blocks, "block ages")?,
            free,
            erasing: try_vec(0u32, g.planes_total, "plane state")?,
            slc_fifo,
            slc_count: try_vec(0u32, g.planes_total, "plane state")?,
            pslc_cfg_blocks: cfg.pslc_blocks_per_plane(),
            pslc_static_blocks: cfg
                .pslc_static_blocks_per_plane()
                .min(cfg.pslc_blocks_per_plane()),
            idle_fold: false,
            fold_when_idle: f.pslc_bytes > 0 && f.pslc_idle_fold_ns > 0,
            fold_when_full: f.pslc_bytes > 0
                && f.pslc_when_full == crate::config::PslcWhenFull::Fold,
            free_total: blocks as u64,
            free_area: 0,
            free_last_t: 0,
            free_min: blocks as u64,
            spare_total: blocks as u64,
            spare_area: 0,
            mapped_units: 0,
            host_wp: try_vec(BlockSet::default(), g.dies, "write points")?,
            gc_wp: try_vec(BlockSet::default(), g.dies, "write points")?,
            groups,
            group_free,
            host_group: NIL,
            gc_group: try_vec(NIL, g.dies, "write points")?,
            host_pending,
            gc_pending,
            host_sealed: 0,
            gc: gcs,
            policy: f.gc_policy,
            d_choices: f.gc_d_choices,
            gc_soft: f.gc_bg_free_blocks,
            gc_hard: f.gc_fg_free_blocks,
            rng: 0x2545_F491_4F6C_DD1D,
            steady_overwrite: f.steady_overwrite,
            changed: try_vec_with_capacity(g.dies, "plane state")?,
            changed_flag: try_vec(false, g.dies, "plane state")?,
            scratch_units: try_vec(0u32, g.spp as usize, "scratch")?,
            scratch_ver: try_vec(0u32, g.us as usize, "scratch")?,
            mcache: match cfg.controller.map_cache_bytes {
                0 => None,
                b => Some(MapCache::try_new(b, g.page_bytes, user_units, g.dies)?),
            },
            c: FtlCounters::default(),
            steady_wa: None,
            steady_written: 0.0,
            g,
        })
    }

    /// Whether the data in `slot` has not been programmed yet (it is still in the controller's
    /// buffer: host write buffer or GC buffer).
    #[inline]
    pub(crate) fn is_buffered(&self, slot: u32) -> bool {
        let b = self.g.slot_block(slot);
        self.g.slot_page(slot) >= self.blk_prog[b] as u32
    }

    /// Drops the current mapping of `l` (stored in `slot`), with its older fragment if any.
    #[inline(always)]
    pub(crate) fn invalidate(&mut self, l: usize, slot: u32) {
        let cost = self.map.unit_cost(l);
        let b = self.g.slot_block(slot);
        self.blk_valid[b] -= cost;
        self.map.l2p.set(l, UNMAPPED);
        if self.remap {
            self.drop_fragment(l);
        }
    }

    /// Drops the fragment entry of unit `l` (remap), with the older slot's data if any.
    #[inline(never)]
    fn drop_fragment(&mut self, l: usize) {
        if let Some(f) = self.map.frags.0.remove(&(l as u32)) {
            if f.fmask != 0 {
                self.blk_valid[self.g.slot_block(f.fslot)] -= f.fcost;
            }
        }
    }

    /// The sector mask of a whole unit.
    #[inline]
    pub(crate) fn full_mask(&self) -> u32 {
        mapping::sector_mask(0, self.g.us as u64)
    }

    /// A write of the sectors `mask` (not the whole unit) to unit `l`, under the `remap` policy,
    /// before its data is placed: the unit's old slot `old` (or UNMAPPED) and older fragment
    /// keep what the write does not cover. Returns the old parts to merge into the new slot,
    /// when two would be left (the controller reads them and programs the whole unit), as
    /// (slot, NAND sectors) with UNMAPPED for none; their sectors must be added to the new
    /// slot's cost.
    pub(crate) fn remap_partial_write(&mut self, l: usize, old: u32, mask: u32) -> [(u32, u32); 2] {
        let none = [(UNMAPPED, 0); 2];
        let key = l as u32;
        if old == UNMAPPED {
            self.mapped_units += 1;
            self.map.frags.0.insert(
                key,
                Frag {
                    pmask: mask,
                    fmask: 0,
                    fslot: UNMAPPED,
                    fcost: 0,
                },
            );
            return none;
        }
        let full = self.full_mask();
        let e = self.map.frag(l);
        let mp = e.map_or(full, |f| f.pmask);
        let cp = self.map.unit_cost(l);
        self.blk_valid[self.g.slot_block(old)] -= cp;
        self.map.l2p.set(l, UNMAPPED);
        let (mf, cf, fs) = match e {
            Some(f) if f.fmask != 0 => {
                self.blk_valid[self.g.slot_block(f.fslot)] -= f.fcost;
                (f.fmask, f.fcost, f.fslot)
            }
            _ => (0, 0, UNMAPPED),
        };
        let (mp2, mf2) = (mp & !mask, mf & !mask);
        let (cp2, cf2) = (shrink(cp, mp, mp2), shrink(cf, mf, mf2));
        let (pmask, frag, merge) = match (mp2 != 0, mf2 != 0) {
            (false, false) => (mask, None, none),
            (true, false) => (mask, Some((old, mp2, cp2)), none),
            (false, true) => (mask, Some((fs, mf2, cf2)), none),
            (true, true) => {
                self.c.remap_merges += 1;
                (mask | mp2 | mf2, None, [(old, cp2), (fs, cf2)])
            }
        };
        match frag {
            Some((slot, fmask, fcost)) => {
                self.blk_valid[self.g.slot_block(slot)] += fcost;
                self.map.frags.0.insert(
                    key,
                    Frag {
                        pmask,
                        fmask,
                        fslot: slot,
                        fcost,
                    },
                );
            }
            None if pmask == full => {
                self.map.frags.0.remove(&key);
            }
            None => {
                self.map.frags.0.insert(
                    key,
                    Frag {
                        pmask,
                        fmask: 0,
                        fslot: UNMAPPED,
                        fcost: 0,
                    },
                );
            }
        }
        merge
    }

    /// Maps `l` (already costed) to `slot` and counts it valid there.
    #[inline(always)]
    pub(crate) fn map_unit(&mut self, l: usize, slot: u32, cost: u32) {
        let b = self.g.slot_block(slot);
        if self.map.p2l_built {
            self.map.map(l, slot);
        } else if self.blk_slc[b] {
            self.map.keep_block(b, self.block_slots(b));
            self.map.map(l, slot);
        } else {
            // no reverse entry yet (Mapping::p2l_built): built before the block is collected
            self.map.l2p.set(l, slot);
            self.map.p2l_missing[b] = true;
        }
        self.blk_valid[b] += cost;
    }

    /// The physical slots of block `blk`.
    #[inline]
    pub(crate) fn block_slots(&self, blk: usize) -> std::ops::Range<usize> {
        self.g.page_slot(blk, 0)..self.g.page_slot(blk + 1, 0)
    }

    /// Points the reverse map's entry of `slot` at unit `l` (a host write: its forward entry
    /// is set by the caller).
    #[inline(always)]
    pub(crate) fn set_reverse(&mut self, slot: u32, l: usize) {
        if !self.map.p2l_built {
            let b = self.g.slot_block(slot);
            self.map.keep_block(b, self.block_slots(b));
        }
        self.map.p2l.set(slot as usize, l as u32);
    }

    /// TRIM: unmaps every whole unit inside `[off, off + len)`.
    pub(crate) fn trim(&mut self, off: u64, len: u64) {
        let u0 = self.g.d_unit.div_ceil(off);
        let u1 = self.g.d_unit.div(off + len);
        for u in u0..u1.max(u0) {
            let l = u as usize;
            let slot = self.map.l2p.get(l);
            if slot != UNMAPPED {
                self.invalidate(l, slot);
                self.mapped_units -= 1;
                self.c.trimmed_units += 1;
            }
        }
    }

    /// pSLC blocks per plane the host may fill now: the static part of the cache, plus the
    /// dynamic part, which shrinks as the drive fills (it is carved out of free space).
    pub(crate) fn slc_budget(&self) -> u32 {
        if self.pslc_cfg_blocks == 0 {
            return 0;
        }
        let used = self.mapped_units as f64 / self.user_units as f64;
        let dynamic = self.pslc_cfg_blocks - self.pslc_static_blocks;
        self.pslc_static_blocks + ((dynamic as f64) * (1.0 - used)).floor() as u32
    }

    #[inline]
    pub(crate) fn pages_in(&self, slc: bool) -> u32 {
        if slc {
            self.g.slc_ppb
        } else {
            self.g.ppb
        }
    }

    /// Notes that the free blocks of die `d` changed.
    #[inline]
    pub(crate) fn mark_changed(&mut self, d: usize) {
        if !self.changed_flag[d] {
            self.changed_flag[d] = true;
            self.changed.push(d as u32);
        }
    }

    /// Notes a change of the free-block count of `plane` at `now` (`spare`: the spare count
    /// changes too).
    #[inline]
    pub(crate) fn free_changed(&mut self, plane: usize, now: u64, delta: i64, spare: bool) {
        self.mark_changed(self.g.plane_die(plane));
        self.integrate(now);
        self.free_total = (self.free_total as i64 + delta) as u64;
        if spare {
            self.spare_total = (self.spare_total as i64 + delta) as u64;
        }
        self.free_min = self.free_min.min(self.free_total);
    }

    /// A collected victim holds no valid data any more: it joins the spare blocks.
    #[inline]
    pub(crate) fn spare_gained(&mut self, now: u64) {
        self.integrate(now);
        self.spare_total += 1;
    }

    #[inline]
    fn integrate(&mut self, now: u64) {
        if now > self.free_last_t {
            let dt = (now - self.free_last_t) as u128;
            self.free_area += self.free_total as u128 * dt;
            self.spare_area += self.spare_total as u128 * dt;
            self.free_last_t = now;
        }
    }

    /// Starts the free-block averages at `now`.
    pub(crate) fn reset_free_stats(&mut self, now: u64) {
        self.free_area = 0;
        self.spare_area = 0;
        self.free_last_t = now;
        self.free_min = self.free_total;
    }

    /// Mean free and spare blocks over `[w0, now]`.
    pub(crate) fn free_means(&self, w0: u64, now: u64) -> (f64, f64) {
        let dt = now.saturating_sub(self.free_last_t) as u128;
        let free = self.free_area + self.free_total as u128 * dt;
        let spare = self.spare_area + self.spare_total as u128 * dt;
        if now > w0 {
            let w = (now - w0) as f64;
            (free as f64 / w, spare as f64 / w)
        } else {
            (self.free_total as f64, self.spare_total as f64)
        }
    }

    #[inline]
    pub(crate) fn xorshift(&mut self) -> u64 {
        let s = &mut self.rng;
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// FTL consistency: every mapped unit points at a live slot in a used block, valid counts
    /// match the map, free lists hold exactly the free blocks.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let g = &self.g;
        let mut valid = vec![0u64; self.blk_valid.len()];
        let mut mapped = 0u64;
        for (l, slot) in self.map.l2p.iter().enumerate() {
            if slot == UNMAPPED {
                continue;
            }
            mapped += 1;
            if slot as usize >= self.map.p2l.len() {
                return Err(format!("unit {l}: slot {slot} out of range"));
            }
            let b = g.slot_block(slot);
            // unbuilt, a block holding data either keeps its reverse entries (and the chunks
            // under them) or is built before it is collected (Mapping::p2l_built)
            let unbuilt = !self.map.p2l_built;
            if unbuilt && !self.map.p2l_missing[b] && !self.map.p2l_kept[b] {
                return Err(format!(
                    "unit {l}: block {b} holds it with neither its reverse entries kept nor \
                     marked to build them"
                ));
            }
            let has_entries = !unbuilt || !self.map.p2l_missing[b];
            if has_entries && self.map.p2l.get(slot as usize) != l as u32 {
                return Err(format!(
                    "unit {l}: slot {slot} reverse-maps to {}",
                    self.map.p2l.get(slot as usize)
                ));
            }
            if matches!(self.blk_state[b], FREE | ERASING) {
                return Err(format!(
                    "unit {l}: slot {slot} lies in free/erasing block {b}"
                ));
            }
            valid[b] += self.map.unit_cost(l) as u64;
        }
        let mut fragments = 0u64;
        for (&l, f) in &self.map.frags.0 {
            if !self.remap {
                return Err(format!(
                    "unit {l}: a fragment entry without the remap policy"
                ));
            }
            if self.map.l2p.get(l as usize) == UNMAPPED {
                return Err(format!("unit {l}: a fragment entry but no mapping"));
            }
            if f.pmask == 0
                || f.pmask & f.fmask != 0
                || (f.pmask | f.fmask) & !self.full_mask() != 0
            {
                return Err(format!("unit {l}: bad fragment masks {f:?}"));
            }
            if f.fmask == 0 {
                if f.pmask == self.full_mask() {
                    return Err(format!("unit {l}: a fragment entry for a whole unit"));
                }
                continue;
            }
            fragments += 1;
            let slot = f.fslot;
            if slot as usize >= self.map.p2l.len()
                || (self.map.p2l_built && self.map.p2l.get(slot as usize) != l)
            {
                return Err(format!(
                    "unit {l}: fragment slot {slot} does not reverse-map to it"
                ));
            }
            if f.fcost == 0 || f.fcost > f.fmask.count_ones() {
                return Err(format!("unit {l}: fragment cost {} for {:?}", f.fcost, f));
            }
            let b = g.slot_block(slot);
            if matches!(self.blk_state[b], FREE | ERASING) {
                return Err(format!(
                    "unit {l}: fragment slot {slot} lies in free/erasing block {b}"
                ));
            }
            valid[b] += f.fcost as u64;
        }
        if mapped != self.mapped_units {
            return Err(format!(
                "mapped unit count {} != map population {mapped}",
                self.mapped_units
            ));
        }
        // (an unbuilt reverse map has nothing to check: Mapping::p2l_built)
        if self.map.p2l_built {
            let live = (0..self.map.p2l.len())
                .filter(|&s| self.map.live(s).is_some())
                .count() as u64;
            if live != mapped + fragments {
                return Err(format!(
                    "{live} live reverse entries but {mapped} mapped units and {fragments} fragments"
                ));
            }
        }
        for (b, &v) in valid.iter().enumerate() {
            if self.blk_valid[b] as u64 != v {
                return Err(format!(
                    "block {b}: valid count {} != {v} from the map",
                    self.blk_valid[b]
                ));
            }
        }
        let mut total = 0u64;
        for (p, fl) in self.free.iter().enumerate() {
            let base = p * g.bpp;
            let nfree = (base..base + g.bpp)
                .filter(|&b| self.blk_state[b] == FREE)
                .count();
            if nfree != fl.len() {
                return Err(format!(
                    "plane {p}: {} blocks on the free list, {nfree} blocks free",
                    fl.len()
                ));
            }
            total += nfree as u64;
            for &b in fl {
                if self.blk_state[b as usize] != FREE || self.blk_valid[b as usize] != 0 {
                    return Err(format!("plane {p}: free-list block {b} not free/empty"));
                }
                if b as usize / g.bpp != p {
                    return Err(format!("plane {p}: free-list block {b} from another plane"));
                }
            }
            let slc = (base..base + g.bpp)
                .filter(|&b| self.blk_state[b] != FREE && self.blk_slc[b])
                .count() as u32;
            if slc != self.slc_count[p] {
                return Err(format!(
                    "plane {p}: pSLC count {} != {slc}",
                    self.slc_count[p]
                ));
            }
            let erasing = (base..base + g.bpp)
                .filter(|&b| self.blk_state[b] == ERASING)
                .count() as u32;
            if erasing != self.erasing[p] {
                return Err(format!(
                    "plane {p}: {} erases counted, {erasing} blocks erasing",
                    self.erasing[p]
                ));
            }
        }
        if total != self.free_total {
            return Err(format!(
                "free block total {} != {total} on the lists",
                self.free_total
            ));
        }
        let waiting: u64 = self.gc.iter().map(|s| s.waiting.len() as u64).sum();
        let erasing: u64 = self.erasing.iter().map(|&e| e as u64).sum();
        if self.spare_total != total + erasing + waiting {
            return Err(format!(
                "spare blocks {} != {total} free + {erasing} erasing + {waiting} collected",
                self.spare_total
            ));
        }
        if let Some(mc) = &self.mcache {
            mc.check()?;
        }
        if self.hy.is_some() {
            self.hybrid_check()?;
        }
        Ok(())
    }
}
