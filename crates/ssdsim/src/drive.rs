//! One simulated drive: FTL state (functional) plus resource timelines (timing).
//!
//! The functional state (mapping, validity, GC, pSLC) is updated when a command is submitted;
//! the timing is computed at the same moment by reserving resources in order (firmware CPU,
//! link, cache space, channels, dies), so each command's completion time is known at
//! submission — except for write-through data waiting in a partly filled page, which completes
//! when that page is programmed (page full or `coalesce_ns` deadline).

use crate::config::{DriveConfig, Interface, UnalignedPolicy};
use crate::events::SortedFifo;
use crate::mem::{prefetch, HugeVec};
use crate::{DriveCounters, HostCmd, OpKind};
use std::collections::VecDeque;

pub(crate) const UNMAPPED: u32 = u32::MAX;
const FREE: u8 = 0;
const OPEN: u8 = 1;
const CLOSED: u8 = 2;

pub(crate) type Heap = crate::events::EventQueue;

/// A table of the simulated drive could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate the simulated drive's {what} ({bytes} bytes)")]
pub struct AllocError {
    pub what: &'static str,
    pub bytes: usize,
}

impl AllocError {
    fn new(what: &'static str, bytes: usize) -> Self {
        AllocError { what, bytes }
    }
}

/// `vec![value; len]`, or an error instead of an abort.
fn try_vec<T: Clone>(value: T, len: usize, what: &'static str) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| AllocError::new(what, len.saturating_mul(size_of::<T>())))?;
    v.resize(len, value);
    Ok(v)
}

fn try_vec_with_capacity<T>(len: usize, what: &'static str) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| AllocError::new(what, len.saturating_mul(size_of::<T>())))?;
    Ok(v)
}

/// State shared by all drives behind one host adapter.
#[derive(Clone)]
pub(crate) struct Shared {
    pub heap: Heap,
    pub uplink_free: u64,
    pub uplink_bps: u64,
}

#[derive(Clone, Copy, Default)]
struct HostWp {
    open: bool,
    slc: bool,
    blk: [u32; 8],
    page: u32,
    plane: u32,      // plane whose page is being filled
    base_plane: u32, // first plane of the group not yet programmed
    fill: u32,       // sectors used in the current plane page
    slots: u32,      // slots used in the current plane page
    g_sectors: u32,  // data sectors not yet programmed
    g_cache: u64,    // host bytes (cache charge) not yet programmed
    g_ready: u64,    // data of the pending pages is in the controller at this time
    g_first: u64,    // arrival of the oldest pending data
    g_cmd: u32,      // last write command that put data into the pending pages
}

#[derive(Clone, Copy, Default)]
struct GcWp {
    open: bool,
    blk: u32,
    page: u32,
    fill: u32,
    slots: u32,
    sectors: u32,
    ready: u64,
}

#[derive(Clone, Copy)]
struct Waiting {
    tag: u64,
    seq: u64,
    min: u64,
    done: u64,
    slot: u32,
}

#[derive(Default, Clone)]
pub(crate) struct RawCounters {
    host_read_bytes: u64,
    host_write_bytes: u64,
    host_reads: u64,
    host_writes: u64,
    host_trims: u64,
    trimmed_units: u64,
    nand_reads: u64,
    nand_programs: u64,
    nand_program_bytes: u64,
    nand_erases: u64,
    gc_runs: u64,
    gc_pages_moved: u64,
    gc_units_moved: u64,
    pslc_folds: u64,
    rmw_reads: u64,
    cache_hits: u64,
    cache_write_hits: u64,
    pslc_programs: u64,
    compression_saved_bytes: u64,
    link_busy_ns: u64,
    fw_busy_ns: u64,
    cache_wait_ns: u64,
}

#[derive(Clone)]
pub(crate) struct Drive {
    // geometry
    dies: usize,
    planes: usize,
    bpp: usize,
    ppb: u32,
    page_bytes: u64,
    page_sectors: u32,
    us: u32, // sectors per mapping unit
    unit_bytes: u64,
    spp: u32,      // slots per page
    d_unit: Div,   // unit_bytes
    d_us: Div,     // us
    d_spp: Div,    // spp
    d_ppb: Div,    // ppb
    d_bslots: Div, // slots per block
    d_bpp: Div,    // bpp
    d_planes: Div,
    d_channels: Div,
    user_units: u64,
    user_bytes: u64,
    // policy / timing params
    rmw: bool,
    compression: bool,
    nvme: bool,
    link_bps: u64,
    cmd_overhead: u64,
    fw_read: u64,
    fw_write: u64,
    fw_trim: u64,
    fw_read_unit: u64,
    fw_write_unit: u64,
    remap_cost: u64,
    coalesce: u64,
    cache_cap: u64,
    t_r: u64,
    t_prog: u64,
    t_prog_upper: u64,
    t_bers: u64,
    slc_t_prog: u64,
    slc_t_r: u64,
    bus_mt_s: u64,
    bus_memo: (u64, u64),  // (bytes, bus_ns(bytes))
    link_memo: (u64, u64), // (bytes, link_ns(bytes))
    copyback: bool,
    gc_bg: u32,
    gc_fg: u32,
    pslc_cfg_blocks: u32,
    steady_overwrite: f64,
    // timing state
    pub(crate) timing: bool,
    now: u64,
    slots: Vec<u64>,
    slot_next: usize,
    enter_floor: u64,
    fw: Vec<u64>,
    link_up: u64,
    link_down: u64,
    ch_free: Vec<u64>,
    die_free: Vec<u64>,
    die_busy: Vec<u64>,
    cache_used: u64,
    cache_fifo: SortedFifo,
    cache_floor: u64,
    // FTL state
    l2p: Map,
    cost: HugeVec<u8>,
    p2l: Map,
    ver: Option<HugeVec<u32>>,
    blk_valid: Vec<u32>,
    blk_erase: Vec<u32>,
    blk_state: Vec<u8>,
    blk_slc: Vec<bool>,
    free: Vec<VecDeque<u32>>,
    slc_fifo: Vec<VecDeque<u32>>,
    slc_count: Vec<u32>,
    wp: Vec<HostWp>,
    host_die: usize,
    gwp: Vec<GcWp>,
    recent: Vec<(u32, u64)>,
    recent_mask: usize,
    mapped_units: u64,
    waiting: Vec<Waiting>,
    cmd_done: u64,
    write_seq: u32,
    scratch: Vec<u32>,
    pub(crate) c: RawCounters,
}

/// Division by a run-time constant: a shift when it is a power of two (every geometry of the
/// presets), a plain division otherwise. Integer division costs tens of cycles and the hot
/// path needs several per request.
#[derive(Clone, Copy)]
struct Div {
    d: u64,
    shift: u32,
    pow2: bool,
}

impl Div {
    fn new(d: u64) -> Div {
        assert!(d > 0, "division by zero");
        Div {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }
    #[inline]
    fn div(self, x: u64) -> u64 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    #[inline]
    fn rem(self, x: u64) -> u64 {
        if self.pow2 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
    #[inline]
    fn div_ceil(self, x: u64) -> u64 {
        self.div(x) + (self.rem(x) != 0) as u64
    }
}

/// A table of u32 entries whose initial state (every entry [`UNMAPPED`]) is all-zero memory:
/// entries are stored bit-inverted. A new table then costs no writes, and only the pages a run
/// touches are ever faulted in (a fresh 128 GB drive used over an 8 GiB span touches a few MiB
/// of its 250 MB of maps).
#[derive(Clone)]
struct Map(HugeVec<u32>);

impl Map {
    fn try_new(len: usize, what: &'static str) -> Result<Map, AllocError> {
        const { assert!(!UNMAPPED == 0) };
        HugeVec::try_from_elem(0, len)
            .map(Map)
            .map_err(|bytes| AllocError::new(what, bytes))
    }
    #[inline]
    fn get(&self, i: usize) -> u32 {
        !self.0[i]
    }
    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        self.0[i] = !v;
    }
    #[inline]
    fn len(&self) -> usize {
        self.0.len()
    }
    /// The stored (inverted) entries, for prefetching.
    #[inline]
    fn raw(&self) -> &[u32] {
        &self.0
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().map(|&x| !x)
    }
}

#[inline]
fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

impl Drive {
    /// Bytes of memory (address space) [`Drive::try_new`] allocates for `cfg`: the mapping tables,
    /// per-block state, free lists and write-cache bookkeeping. Kept next to `new` so the two
    /// stay in step (a test checks the estimate against what is really allocated).
    pub(crate) fn memory_estimate(cfg: &DriveConfig, tracking: bool) -> u64 {
        let n = &cfg.nand;
        let f = &cfg.ftl;
        let channels = n.channels as u64;
        let dies = channels * n.dies_per_channel as u64;
        let planes = n.planes_per_die as u64;
        let bpp = n.blocks_per_plane as u64;
        let planes_total = dies * planes;
        let blocks = planes_total * bpp;
        let us = f.mapping_unit / 512;
        let spp = (n.page_bytes / f.mapping_unit) * f.pack_factor as u64;
        let user_units = f.user_capacity_bytes.div_ceil(f.mapping_unit);
        let total_slots = blocks * n.pages_per_block as u64 * spp;
        let variable_cost = cfg.controller.compression || f.unaligned == UnalignedPolicy::Remap;
        let (recent_len, fifo_cap) = Self::cache_tables(cfg);
        let mut b = 4 * user_units + 4 * total_slots; // l2p, p2l
        if variable_cost {
            b += user_units; // cost
        }
        if tracking {
            b += 4 * total_slots * us;
        }
        b += blocks * (4 + 4 + 1 + 1); // valid, erase, state, slc
        b += blocks * 4 * 2; // free lists and pSLC FIFOs (one block id each)
        b += recent_len as u64 * 16 + fifo_cap as u64 * 16;
        b += dies * 64 + planes_total * 32 + cfg.host.queue_depth as u64 * 48;
        b
    }

    /// Lengths of the recently-written table and the write-cache FIFO.
    fn cache_tables(cfg: &DriveConfig) -> (usize, usize) {
        let n = &cfg.nand;
        let cache_cap = cfg.controller.cache_bytes;
        let recent_len = if cache_cap > 0 {
            ((cache_cap / cfg.ftl.mapping_unit).max(1024) as usize)
                .next_power_of_two()
                .min(1 << 22)
        } else {
            4096
        };
        let group_bytes = n.page_bytes * n.planes_per_die as u64;
        let fifo_cap = ((cache_cap / group_bytes.max(1)) as usize)
            .saturating_mul(2)
            .saturating_add(1024);
        (recent_len, fifo_cap)
    }

    /// A fresh (trimmed) drive. Every table whose size comes from the configuration is
    /// allocated fallibly: running out of memory is an error naming the table, not an abort.
    pub(crate) fn try_new(cfg: &DriveConfig, tracking: bool) -> Result<Drive, AllocError> {
        let n = &cfg.nand;
        let f = &cfg.ftl;
        let channels = n.channels as usize;
        let dies = channels * n.dies_per_channel as usize;
        let planes = n.planes_per_die as usize;
        let bpp = n.blocks_per_plane as usize;
        let planes_total = dies * planes;
        let blocks = planes_total * bpp;
        let us = (f.mapping_unit / 512) as u32;
        let upp = (n.page_bytes / f.mapping_unit) as u32;
        let spp = upp * f.pack_factor;
        let user_units = f.user_capacity_bytes.div_ceil(f.mapping_unit);
        let total_slots = blocks * n.pages_per_block as usize * spp as usize;
        let variable_cost = cfg.controller.compression || f.unaligned == UnalignedPolicy::Remap;
        let mut free = Vec::with_capacity(planes_total);
        for p in 0..planes_total {
            let mut q = VecDeque::with_capacity(bpp);
            for b in 0..bpp {
                q.push_back((p * bpp + b) as u32);
            }
            free.push(q);
        }
        let cache_cap = cfg.controller.cache_bytes;
        let (recent_len, fifo_cap) = Self::cache_tables(cfg);
        let mut free = try_vec_with_capacity(planes_total, "free-block lists")?;
        for p in 0..planes_total {
            let mut q = VecDeque::new();
            q.try_reserve_exact(bpp)
                .map_err(|_| AllocError::new("free-block lists", bpp * 4))?;
            for b in 0..bpp {
                q.push_back((p * bpp + b) as u32);
            }
            free.push(q);
        }
        let mut slc_fifo = try_vec_with_capacity(planes_total, "pSLC block lists")?;
        for _ in 0..planes_total {
            let mut q = VecDeque::new();
            q.try_reserve_exact(bpp)
                .map_err(|_| AllocError::new("pSLC block lists", bpp * 4))?;
            slc_fifo.push(q);
        }
        let l2p = Map::try_new(user_units as usize, "logical-to-physical map")?;
        let cost = if variable_cost {
            HugeVec::try_from_elem(0, user_units as usize)
                .map_err(|b| AllocError::new("per-unit cost table", b))?
        } else {
            HugeVec::new()
        };
        let p2l = Map::try_new(total_slots, "physical-to-logical map")?;
        let ver = if tracking {
            Some(
                HugeVec::try_from_elem(0, total_slots * us as usize)
                    .map_err(|b| AllocError::new("version table", b))?,
            )
        } else {
            None
        };
        let blk_valid = try_vec(0u32, blocks, "block valid counts")?;
        let blk_erase = try_vec(0u32, blocks, "block erase counts")?;
        let blk_state = try_vec(FREE, blocks, "block states")?;
        let blk_slc = try_vec(false, blocks, "block modes")?;
        let recent = try_vec((UNMAPPED, 0u64), recent_len, "write-cache table")?;
        let mut cache_fifo = SortedFifo::default();
        cache_fifo
            .try_reserve(fifo_cap)
            .map_err(|_| AllocError::new("write-cache queue", fifo_cap * 16))?;
        Ok(Drive {
            dies,
            planes,
            bpp,
            ppb: n.pages_per_block,
            page_bytes: n.page_bytes,
            page_sectors: (n.page_bytes / 512) as u32,
            us,
            unit_bytes: f.mapping_unit,
            spp,
            d_unit: Div::new(f.mapping_unit),
            d_us: Div::new(us as u64),
            d_spp: Div::new(spp as u64),
            d_ppb: Div::new(n.pages_per_block as u64),
            d_bslots: Div::new(n.pages_per_block as u64 * spp as u64),
            d_bpp: Div::new(bpp as u64),
            d_planes: Div::new(planes as u64),
            d_channels: Div::new(channels as u64),
            user_units,
            user_bytes: f.user_capacity_bytes,
            rmw: f.unaligned == UnalignedPolicy::Rmw,
            compression: cfg.controller.compression,
            nvme: cfg.host.interface == Interface::Nvme,
            link_bps: cfg.host.link_bytes_per_sec,
            cmd_overhead: cfg.host.cmd_overhead_ns,
            fw_read: cfg.controller.fw_read_ns,
            fw_write: cfg.controller.fw_write_ns,
            fw_trim: cfg.controller.fw_trim_ns,
            fw_read_unit: cfg.controller.fw_read_per_unit_ns,
            fw_write_unit: cfg.controller.fw_write_per_unit_ns,
            remap_cost: cfg.controller.remap_cost_ns,
            coalesce: cfg.controller.coalesce_ns,
            cache_cap,
            t_r: n.t_r_ns,
            t_prog: n.t_prog_ns,
            t_prog_upper: if n.t_prog_upper_ns > 0 {
                n.t_prog_upper_ns
            } else {
                n.t_prog_ns
            },
            t_bers: n.t_bers_ns,
            slc_t_prog: f.pslc_t_prog_ns,
            slc_t_r: f.pslc_t_r_ns,
            bus_mt_s: n.bus_mt_s,
            bus_memo: (0, 0),
            link_memo: (0, 0),
            copyback: f.copyback,
            gc_bg: f.gc_bg_free_blocks,
            gc_fg: f.gc_fg_free_blocks,
            pslc_cfg_blocks: cfg.pslc_blocks_per_plane(),
            steady_overwrite: f.steady_overwrite,
            timing: false,
            now: 0,
            slots: vec![0; cfg.host.queue_depth as usize],
            slot_next: 0,
            enter_floor: 0,
            fw: vec![0; cfg.controller.fw_units as usize],
            link_up: 0,
            link_down: 0,
            ch_free: vec![0; channels],
            die_free: vec![0; dies],
            die_busy: vec![0; dies],
            cache_used: 0,
            cache_fifo,
            cache_floor: 0,
            l2p,
            cost,
            p2l,
            ver,
            blk_valid,
            blk_erase,
            blk_state,
            blk_slc,
            free,
            slc_fifo,
            slc_count: vec![0; planes_total],
            wp: vec![HostWp::default(); dies],
            host_die: 0,
            gwp: vec![GcWp::default(); planes_total],
            recent,
            recent_mask: recent_len - 1,
            mapped_units: 0,
            waiting: Vec::with_capacity(cfg.host.queue_depth as usize + 8),
            cmd_done: 0,
            write_seq: 0,
            scratch: vec![0; us as usize],
            c: RawCounters::default(),
        })
    }

    // ---------------------------------------------------------------- geometry helpers

    #[inline]
    fn slot_block(&self, slot: u32) -> usize {
        self.d_bslots.div(slot as u64) as usize
    }
    #[inline]
    fn slot_page(&self, slot: u32) -> u32 {
        self.d_ppb.rem(self.d_spp.div(slot as u64)) as u32
    }
    #[inline]
    fn block_plane(&self, blk: usize) -> usize {
        self.d_bpp.div(blk as u64) as usize
    }
    #[inline]
    fn plane_die(&self, plane: usize) -> usize {
        self.d_planes.div(plane as u64) as usize
    }
    #[inline]
    fn die_channel(&self, die: usize) -> usize {
        self.d_channels.rem(die as u64) as usize
    }
    #[inline]
    fn pages_in(&self, slc: bool) -> u32 {
        if slc {
            self.ppb / 2
        } else {
            self.ppb
        }
    }
    #[inline]
    fn unit_cost(&self, l: usize) -> u32 {
        if self.cost.is_empty() {
            self.us
        } else {
            self.cost[l] as u32
        }
    }
    #[inline]
    fn bus_ns(&mut self, bytes: u64) -> u64 {
        // transfers come in a few sizes: remember the last one (saves a division)
        if bytes != self.bus_memo.0 {
            self.bus_memo = (bytes, bytes * 1000 / self.bus_mt_s);
        }
        self.bus_memo.1
    }
    #[inline]
    fn link_ns(&mut self, bytes: u64) -> u64 {
        if bytes != self.link_memo.0 {
            self.link_memo = (bytes, bytes * 1_000_000_000 / self.link_bps);
        }
        self.link_memo.1
    }

    // ---------------------------------------------------------------- resources

    /// Reserve a die for `dur` starting no earlier than `t`; returns the end.
    #[inline]
    fn die_op(&mut self, die: usize, t: u64, dur: u64) -> u64 {
        let s = t.max(self.die_free[die]);
        let e = s + dur;
        self.die_free[die] = e;
        self.die_busy[die] += dur;
        e
    }
    #[inline]
    fn chan_xfer(&mut self, die: usize, t: u64, bytes: u64) -> u64 {
        let ch = self.die_channel(die);
        let s = t.max(self.ch_free[ch]);
        let e = s + self.bus_ns(bytes);
        self.ch_free[ch] = e;
        e
    }

    /// Link transfer (plus per-command protocol overhead) sharing the adapter uplink.
    fn link_xfer(&mut self, sh: &mut Shared, t: u64, bytes: u64, to_host: bool) -> u64 {
        let dur = self.cmd_overhead + self.link_ns(bytes);
        let lf = if self.nvme && to_host {
            self.link_down
        } else {
            self.link_up
        };
        let mut s = t.max(lf);
        let mut e = s + dur;
        if sh.uplink_bps > 0 && bytes > 0 {
            s = s.max(sh.uplink_free);
            let ud = bytes * 1_000_000_000 / sh.uplink_bps;
            sh.uplink_free = s + ud;
            e = s + dur.max(ud);
        }
        if self.nvme && to_host {
            self.link_down = e;
        } else {
            self.link_up = e;
        }
        self.c.link_busy_ns += dur;
        e
    }

    fn fw_op(&mut self, t: u64, dur: u64) -> u64 {
        let mut best = 0;
        for i in 1..self.fw.len() {
            if self.fw[i] < self.fw[best] {
                best = i;
            }
        }
        let s = t.max(self.fw[best]);
        self.fw[best] = s + dur;
        self.c.fw_busy_ns += dur;
        s + dur
    }

    /// Wait for `bytes` of write-cache space; returns the admission time. Cached data leaves
    /// the cache when its page program completes (in completion-time order).
    fn cache_admit(&mut self, t: u64, bytes: u64) -> u64 {
        let mut t = t.max(self.cache_floor);
        while let Some((rt, b)) = self.cache_fifo.peek() {
            if rt > t {
                break;
            }
            self.cache_used -= b;
            self.cache_fifo.pop();
        }
        while self.cache_used + bytes > self.cache_cap {
            if self.cache_fifo.is_empty() {
                // everything cached sits in a pending page: program it now
                let wp = self.wp[self.host_die];
                if wp.g_sectors > 0 || wp.fill > 0 {
                    self.program_host(self.host_die, t);
                    continue;
                }
                break;
            }
            let (rt, b) = self.cache_fifo.pop().expect("non-empty");
            t = t.max(rt);
            self.cache_used -= b;
        }
        self.cache_used += bytes;
        self.cache_floor = t;
        t
    }

    // ---------------------------------------------------------------- block management

    fn alloc_block(&mut self, plane: usize, slc: bool) -> u32 {
        let b = self.free[plane].pop_front().expect(
            "free block pool exhausted (GC could not keep up; over-provisioning too small)",
        );
        self.blk_state[b as usize] = OPEN;
        self.blk_slc[b as usize] = slc;
        if slc {
            self.slc_count[plane] += 1;
        }
        b
    }

    fn erase(&mut self, blk: usize, t: u64) {
        debug_assert_eq!(self.blk_valid[blk], 0);
        let plane = self.block_plane(blk);
        if self.blk_slc[blk] {
            self.slc_count[plane] -= 1;
        }
        self.blk_state[blk] = FREE;
        self.blk_slc[blk] = false;
        self.blk_erase[blk] += 1;
        self.c.nand_erases += 1;
        if self.timing {
            let d = self.plane_die(plane);
            self.die_op(d, t, self.t_bers);
        }
        self.free[plane].push_back(blk as u32);
    }

    fn slc_budget(&self) -> u32 {
        if self.pslc_cfg_blocks == 0 {
            return 0;
        }
        let used = self.mapped_units as f64 / self.user_units as f64;
        ((self.pslc_cfg_blocks as f64) * (1.0 - used)).floor() as u32
    }

    /// Open new host blocks on every plane of `die` (running GC / folding first if needed).
    fn open_host_blocks(&mut self, die: usize, t: u64) {
        let budget = self.slc_budget();
        for p in 0..self.planes {
            let plane = die * self.planes + p;
            self.reclaim(plane, t, budget);
        }
        let slc =
            budget > 0 && (0..self.planes).all(|p| self.slc_count[die * self.planes + p] < budget);
        let mut w = self.wp[die];
        for p in 0..self.planes {
            w.blk[p] = self.alloc_block(die * self.planes + p, slc);
        }
        w.open = true;
        w.slc = slc;
        w.page = 0;
        w.plane = 0;
        w.base_plane = 0;
        w.fill = 0;
        w.slots = 0;
        self.wp[die] = w;
    }

    /// pSLC folding and GC for one plane before a new host block is taken from it.
    fn reclaim(&mut self, plane: usize, t: u64, budget: u32) {
        let mut guard = self.bpp * 2;
        while self.slc_fifo[plane].len() as u32 > budget && guard > 0 {
            self.fold_one(plane, t);
            guard -= 1;
        }
        while (self.free[plane].len() as u32) < self.gc_fg + 1 && guard > 0 {
            if !self.slc_fifo[plane].is_empty() {
                self.fold_one(plane, t);
            } else if !self.gc_one(plane, t) {
                break;
            }
            guard -= 1;
        }
        if (self.free[plane].len() as u32) < self.gc_bg + 1 {
            let die = self.plane_die(plane);
            if !self.timing || self.die_free[die] <= t {
                if !self.slc_fifo[plane].is_empty() {
                    self.fold_one(plane, t);
                } else {
                    self.gc_one(plane, t);
                }
            }
        }
    }

    fn fold_one(&mut self, plane: usize, t: u64) {
        if let Some(b) = self.slc_fifo[plane].pop_front() {
            self.c.pslc_folds += 1;
            self.relocate(b as usize, t);
            self.erase(b as usize, t);
        }
    }

    /// Greedy GC: victim = closed MLC block with the fewest valid sectors.
    fn gc_one(&mut self, plane: usize, t: u64) -> bool {
        let base = plane * self.bpp;
        let mut best = usize::MAX;
        let mut best_v = u32::MAX;
        for b in base..base + self.bpp {
            if self.blk_state[b] == CLOSED && !self.blk_slc[b] && self.blk_valid[b] < best_v {
                best_v = self.blk_valid[b];
                best = b;
            }
        }
        if best == usize::MAX || best_v >= self.ppb * self.page_sectors {
            return false;
        }
        self.c.gc_runs += 1;
        self.relocate(best, t);
        self.erase(best, t);
        true
    }

    /// Move every valid unit of `blk` to the GC write point of its plane.
    fn relocate(&mut self, blk: usize, t: u64) {
        let plane = self.block_plane(blk);
        let die = self.plane_die(plane);
        let slc = self.blk_slc[blk];
        let pages = self.pages_in(slc);
        let spp = self.spp as usize;
        for pg in 0..pages {
            let first = (blk * self.ppb as usize + pg as usize) * spp;
            let mut sectors = 0u32;
            for s in first..first + spp {
                if let Some(l) = self.live(s) {
                    sectors += self.unit_cost(l);
                }
            }
            if sectors == 0 {
                continue;
            }
            self.c.nand_reads += 1;
            self.c.gc_pages_moved += 1;
            let mut ready = t;
            if self.timing {
                let tr = if slc { self.slc_t_r } else { self.t_r };
                ready = self.die_op(die, t, tr);
                if !self.copyback {
                    ready = self.chan_xfer(die, ready, sectors as u64 * 512);
                }
            }
            for s in first..first + spp {
                if let Some(l) = self.live(s) {
                    self.gc_move(plane, l, s as u32, ready);
                }
            }
        }
    }

    fn gc_move(&mut self, plane: usize, l: usize, old: u32, ready: u64) {
        let cost = self.unit_cost(l);
        let mut w = self.gwp[plane];
        if w.open && (w.fill + cost > self.page_sectors || w.slots >= self.spp) {
            self.gwp[plane] = w;
            self.program_gc(plane);
            w = self.gwp[plane];
        }
        if !w.open {
            w.blk = self.alloc_block(plane, false);
            w.open = true;
            w.page = 0;
            w.fill = 0;
            w.slots = 0;
            w.sectors = 0;
            w.ready = 0;
        }
        let slot = ((w.blk as usize * self.ppb as usize + w.page as usize) * self.spp as usize
            + w.slots as usize) as u32;
        w.fill += cost;
        w.slots += 1;
        w.sectors += cost;
        w.ready = w.ready.max(ready);
        self.gwp[plane] = w;
        // move the mapping
        let ob = self.slot_block(old);
        self.blk_valid[ob] -= cost;
        self.p2l.set(slot as usize, l as u32);
        self.l2p.set(l, slot);
        self.blk_valid[w.blk as usize] += cost;
        self.c.gc_units_moved += 1;
        if let Some(ver) = self.ver.as_mut() {
            let us = self.us as usize;
            ver.copy_within(
                old as usize * us..old as usize * us + us,
                slot as usize * us,
            );
        }
        if w.fill >= self.page_sectors || w.slots >= self.spp {
            self.program_gc(plane);
        }
    }

    fn program_gc(&mut self, plane: usize) {
        let mut w = self.gwp[plane];
        if w.sectors > 0 || w.fill > 0 {
            self.c.nand_programs += 1;
            self.c.nand_program_bytes += self.page_bytes;
            if self.timing {
                let die = self.plane_die(plane);
                let mut t = w.ready;
                if !self.copyback {
                    t = self.chan_xfer(die, t, w.sectors as u64 * 512);
                }
                let tp = if w.page % 2 == 1 {
                    self.t_prog_upper
                } else {
                    self.t_prog
                };
                self.die_op(die, t, tp);
            }
        }
        w.page += 1;
        w.fill = 0;
        w.slots = 0;
        w.sectors = 0;
        w.ready = 0;
        if w.page >= self.ppb {
            self.blk_state[w.blk as usize] = CLOSED;
            w.open = false;
        }
        self.gwp[plane] = w;
    }

    // ---------------------------------------------------------------- host write point

    /// Place one unit into the host stream; returns its slot.
    fn host_place(&mut self, l: usize, cost: u32, ready: u64, cache_bytes: u64) -> u32 {
        loop {
            let d = self.host_die;
            if !self.wp[d].open {
                self.open_host_blocks(d, ready);
            }
            let w = &mut self.wp[d];
            if w.fill + cost <= self.page_sectors && w.slots < self.spp {
                let p = w.plane as usize;
                let slot = ((w.blk[p] as usize * self.ppb as usize + w.page as usize)
                    * self.spp as usize
                    + w.slots as usize) as u32;
                if w.g_sectors == 0 {
                    w.g_first = ready;
                    w.g_ready = ready;
                }
                w.fill += cost;
                w.slots += 1;
                w.g_sectors += cost;
                w.g_cache += cache_bytes;
                w.g_ready = w.g_ready.max(ready);
                w.g_cmd = self.write_seq;
                let blk = w.blk[p] as usize;
                let full = w.fill >= self.page_sectors || w.slots >= self.spp;
                self.p2l.set(slot as usize, l as u32);
                self.l2p.set(l, slot);
                self.blk_valid[blk] += cost;
                if full {
                    self.advance_plane(d);
                }
                return slot;
            }
            self.advance_plane(d);
        }
    }

    /// The current plane page of `d` is closed; move to the next plane (programming the group
    /// when all planes are done).
    fn advance_plane(&mut self, d: usize) {
        let w = &mut self.wp[d];
        w.plane += 1;
        w.fill = 0;
        w.slots = 0;
        if w.plane as usize == self.planes {
            let t = w.g_ready;
            self.program_host(d, t);
        }
    }

    /// Program the pending pages of die `d` (planes base_plane..=plane, or ..plane when the
    /// current plane page is empty) no earlier than `t`. Completes the group when all planes
    /// are programmed.
    fn program_host(&mut self, d: usize, t: u64) {
        let mut w = self.wp[d];
        let last_excl = if (w.plane as usize) < self.planes && w.fill > 0 {
            w.plane + 1
        } else {
            w.plane
        };
        let npages = last_excl.saturating_sub(w.base_plane);
        if npages > 0 {
            self.c.nand_programs += npages as u64;
            self.c.nand_program_bytes += npages as u64 * self.page_bytes;
            if w.slc {
                self.c.pslc_programs += npages as u64;
            }
            if self.timing {
                let start = t.max(w.g_ready);
                let xfer = self.chan_xfer(d, start, w.g_sectors as u64 * 512);
                let tp = if w.slc {
                    self.slc_t_prog
                } else if w.page % 2 == 1 {
                    self.t_prog_upper
                } else {
                    self.t_prog
                };
                let done = self.die_op(d, xfer, tp);
                if w.g_cache > 0 {
                    self.cache_fifo.push((done, w.g_cache));
                }
                if w.g_cmd == self.write_seq {
                    self.cmd_done = self.cmd_done.max(done);
                }
                // remember when the data leaves the buffer (read hits before that)
                let spp = self.spp as usize;
                for p in w.base_plane..last_excl {
                    let first =
                        (w.blk[p as usize] as usize * self.ppb as usize + w.page as usize) * spp;
                    for s in first..first + spp {
                        if let Some(l) = self.live(s) {
                            self.recent[l & self.recent_mask] = (l as u32, done);
                        }
                    }
                }
                self.resolve_waiting(done);
            }
        }
        w.g_sectors = 0;
        w.g_cache = 0;
        w.g_ready = 0;
        if (w.plane as usize) < self.planes && w.fill > 0 {
            // partial page flushed: the rest of that page is lost (MLC can't be re-programmed)
            w.plane += 1;
            w.fill = 0;
            w.slots = 0;
        }
        w.base_plane = w.plane;
        if w.plane as usize >= self.planes {
            w.page += 1;
            w.plane = 0;
            w.base_plane = 0;
            if w.page >= self.pages_in(w.slc) {
                for p in 0..self.planes {
                    let b = w.blk[p] as usize;
                    self.blk_state[b] = CLOSED;
                    if w.slc {
                        self.slc_fifo[d * self.planes + p].push_back(b as u32);
                    }
                }
                w.open = false;
            }
            self.wp[d] = w;
            self.host_die = self.next_host_die(d);
        } else {
            self.wp[d] = w;
        }
    }

    /// Next die for the host stream: the one that becomes free first (round-robin order breaks
    /// ties), so host data avoids dies busy with GC; plain round-robin without timing.
    fn next_host_die(&self, d: usize) -> usize {
        let n = self.dies;
        let first = if d + 1 >= n { d + 1 - n } else { d + 1 };
        if !self.timing {
            return first;
        }
        // the earliest free die in round-robin order first..n, 0..first (strict `<`: the first
        // one found wins ties); two plain scans instead of one with a wrapping index
        let mut best = first;
        let mut best_t = self.die_free[first];
        for (c, &t) in self.die_free.iter().enumerate().skip(first + 1) {
            if t < best_t {
                best_t = t;
                best = c;
            }
        }
        for (c, &t) in self.die_free[..first].iter().enumerate() {
            if t < best_t {
                best_t = t;
                best = c;
            }
        }
        best
    }

    fn resolve_waiting(&mut self, done: u64) {
        // waiting entries are completed by the caller that owns the heap: park them with
        // the final time; `drain_waiting` pushes them.
        for w in self.waiting.iter_mut() {
            if w.done == u64::MAX {
                w.done = done.max(w.min);
            }
        }
    }

    /// Push completed write-through commands to the heap.
    #[inline]
    fn drain_waiting(&mut self, heap: &mut Heap) {
        // usually nothing waits: skip the call
        if !self.waiting.is_empty() {
            self.drain_waiting_slow(heap);
        }
    }

    fn drain_waiting_slow(&mut self, heap: &mut Heap) {
        let mut i = 0;
        while i < self.waiting.len() {
            let w = self.waiting[i];
            if w.done != u64::MAX {
                heap.push(w.done, w.seq, w.tag);
                self.slots[w.slot as usize] = w.done;
                self.waiting.swap_remove(i);
            } else {
                i += 1;
            }
        }
        // keep submission order stable among remaining entries is not needed: all resolve
        // together
    }

    /// Pending (unprogrammed) host data: its flush deadline.
    #[inline]
    pub(crate) fn pending_deadline(&self) -> Option<u64> {
        let w = &self.wp[self.host_die];
        if w.open && w.g_sectors > 0 {
            Some(w.g_first + self.coalesce)
        } else {
            None
        }
    }

    /// Program the pending host pages at their deadline.
    pub(crate) fn flush_pending(&mut self, heap: &mut Heap) {
        if let Some(dl) = self.pending_deadline() {
            self.program_host(self.host_die, dl);
            self.drain_waiting(heap);
        }
    }

    fn is_buffered(&self, l: usize, slot: u32, now: u64) -> bool {
        let (rl, rt) = self.recent[l & self.recent_mask];
        if rl == l as u32 && rt > now {
            return true;
        }
        let d = self.host_die;
        let w = &self.wp[d];
        if !w.open || w.g_sectors == 0 {
            return false;
        }
        let blk = self.slot_block(slot);
        let page = self.slot_page(slot);
        if page != w.page {
            return false;
        }
        (w.base_plane as usize..self.planes).any(|p| w.blk[p] as usize == blk)
            || self
                .gwp
                .iter()
                .any(|g| g.open && g.blk as usize == blk && g.page == page)
    }

    /// The logical unit stored in `slot`, if that data is still current. The reverse map is
    /// never cleared on overwrite (that would cost a cache miss per host write): a slot is live
    /// exactly when the forward map points back at it.
    #[inline]
    fn live(&self, slot: usize) -> Option<usize> {
        let l = self.p2l.get(slot);
        (l != UNMAPPED && self.l2p.get(l as usize) == slot as u32).then_some(l as usize)
    }

    /// Drop the current mapping of `l` (stored in `slot`).
    #[inline]
    fn invalidate(&mut self, l: usize, slot: u32) {
        let cost = self.unit_cost(l);
        let b = self.slot_block(slot);
        self.blk_valid[b] -= cost;
        self.l2p.set(l, UNMAPPED);
    }

    // ---------------------------------------------------------------- host commands

    /// Hint: a command at byte `offset` is coming soon; start loading its mapping entries into
    /// the cache so that its submission does not wait for memory.
    #[inline(always)]
    pub(crate) fn prefetch(&self, offset: u64) {
        self.prefetch_unit(self.d_unit.div(offset) as usize);
    }

    #[inline(always)]
    fn prefetch_unit(&self, u: usize) {
        prefetch(self.l2p.raw(), u);
        prefetch(&self.recent, u & self.recent_mask);
    }

    /// Submit a host command; its completion goes to `sh.heap` (now or when its pending page
    /// is programmed).
    pub(crate) fn submit(&mut self, sh: &mut Shared, now: u64, tag: u64, seq: u64, cmd: HostCmd) {
        // Start loading the mapping entries early (usually cache misses) so the loads overlap
        // the resource bookkeeping below (a no-op when the caller prefetched them already).
        let u = self.d_unit.div(cmd.offset) as usize;
        self.prefetch_unit(u);
        if cmd.kind == OpKind::Write {
            // with the entry itself cached (prefetched one command ahead by the caller), also
            // start on the valid count of the block holding the data being overwritten
            if u < self.l2p.len() {
                let old = self.l2p.get(u);
                if old != UNMAPPED {
                    prefetch(&self.blk_valid, self.slot_block(old));
                }
            }
        }
        self.now = now;
        if let Some(dl) = self.pending_deadline() {
            if dl <= now {
                self.flush_pending(&mut sh.heap);
            }
        }
        // NCQ slot (FIFO admission)
        let mut si = self.pick_slot(now);
        if self.slots[si] == u64::MAX {
            self.flush_pending(&mut sh.heap);
            si = self.pick_slot(now);
        }
        self.slot_next = if si + 1 == self.slots.len() {
            0
        } else {
            si + 1
        };
        let enter = now.max(self.slots[si]).max(self.enter_floor);
        self.enter_floor = enter;
        let lbs = 512u64;
        let off = cmd.offset.min(self.user_bytes);
        let len = cmd.len.min(self.user_bytes - off);
        let done = match cmd.kind {
            OpKind::Read => self.read(sh, enter, off, len),
            OpKind::Trim => {
                self.c.host_trims += 1;
                let t = self.fw_op(enter, self.fw_trim);
                self.trim(off, len);
                self.link_xfer(sh, t, 0, false)
            }
            OpKind::Write => {
                let _ = lbs;
                match self.write(sh, enter, off, len, cmd.nand_fraction) {
                    Some(t) => t,
                    None => {
                        self.slots[si] = u64::MAX;
                        self.waiting.push(Waiting {
                            tag,
                            seq,
                            min: self.cmd_done,
                            done: u64::MAX,
                            slot: si as u32,
                        });
                        // a later program of the pending page resolves it
                        self.drain_waiting(&mut sh.heap);
                        return;
                    }
                }
            }
        };
        self.slots[si] = done;
        sh.heap.push(done, seq, tag);
        self.drain_waiting(&mut sh.heap);
    }

    /// An NCQ slot for a command arriving at `now`: the one that frees first. Any slot already
    /// free at `now` is as good as the earliest one (virtual time never goes back, so its old
    /// value can never matter again), so the slot used longest ago (round-robin) is tried first.
    #[inline]
    fn pick_slot(&self, now: u64) -> usize {
        let h = self.slot_next;
        if self.slots[h] <= now {
            return h;
        }
        let mut best = 0;
        for i in 1..self.slots.len() {
            if self.slots[i] < self.slots[best] {
                best = i;
            }
        }
        best
    }

    fn write(&mut self, sh: &mut Shared, enter: u64, off: u64, len: u64, frac: f32) -> Option<u64> {
        self.c.host_writes += 1;
        self.c.host_write_bytes += len;
        self.write_seq += 1;
        self.cmd_done = 0;
        let us = self.us as u64;
        let s0 = off / 512;
        let s1 = (off + len).div_ceil(512);
        let u0 = self.d_us.div(s0);
        let u1 = self.d_us.div_ceil(s1);
        let aligned = self.d_us.rem(s0) == 0 && self.d_us.rem(s1) == 0;
        let mut fwt = self.fw_write + self.fw_write_unit * (len.div_ceil(4096)).saturating_sub(1);
        if !aligned && !self.rmw {
            fwt += self.remap_cost;
        }
        let t = self.fw_op(enter, fwt);
        let t_data = self.link_xfer(sh, t, len, false);
        let mut done = t_data;
        if self.cache_cap > 0 {
            let a = self.cache_admit(t_data, len);
            self.c.cache_wait_ns += a - t_data;
            done = a;
        }
        let frac = if self.compression {
            (frac as f64).clamp(1.0 / 4096.0, 1.0)
        } else {
            1.0
        };
        for u in u0..u1 {
            let a = s0.max(u * us) - u * us;
            let b = s1.min((u + 1) * us) - u * us;
            let full = a == 0 && b == us;
            let l = u as usize;
            let old = self.l2p.get(l);
            let mut ready = t_data;
            let data_sectors = if full || self.rmw { us } else { b - a };
            if old != UNMAPPED {
                let buffered = self.is_buffered(l, old, t_data);
                if buffered {
                    self.c.cache_write_hits += 1;
                }
                if !full && self.rmw {
                    if buffered {
                        self.c.cache_hits += 1;
                    } else {
                        self.c.rmw_reads += 1;
                        self.c.nand_reads += 1;
                        let blk = self.slot_block(old);
                        let die = self.plane_die(self.block_plane(blk));
                        let tr = if self.blk_slc[blk] {
                            self.slc_t_r
                        } else {
                            self.t_r
                        };
                        let r = self.die_op(die, t_data, tr);
                        ready = self.chan_xfer(die, r, self.unit_cost(l) as u64 * 512);
                    }
                }
            }
            let cost = if self.compression {
                (((data_sectors * 512) as f64 * frac / 512.0).ceil() as u64).clamp(1, data_sectors)
            } else {
                data_sectors
            };
            self.c.compression_saved_bytes += (data_sectors - cost) * 512;
            if let Some(ver) = self.ver.as_ref() {
                for i in 0..us as usize {
                    self.scratch[i] = if (a as usize..b as usize).contains(&i) {
                        self.write_seq
                    } else if old != UNMAPPED {
                        ver[old as usize * us as usize + i]
                    } else {
                        0
                    };
                }
            }
            if old != UNMAPPED {
                self.invalidate(l, old);
            } else {
                self.mapped_units += 1;
            }
            if !self.cost.is_empty() {
                self.cost[l] = cost as u8;
            }
            let slot = self.host_place(l, cost as u32, ready, (b - a) * 512);
            if let Some(ver) = self.ver.as_mut() {
                let base = slot as usize * us as usize;
                ver[base..base + us as usize].copy_from_slice(&self.scratch);
            }
        }
        if self.cache_cap > 0 {
            return Some(done);
        }
        let w = &self.wp[self.host_die];
        let min = self.cmd_done.max(t_data);
        if w.open && w.g_sectors > 0 && w.g_cmd == self.write_seq {
            self.cmd_done = min;
            None
        } else {
            Some(min)
        }
    }

    fn read(&mut self, sh: &mut Shared, enter: u64, off: u64, len: u64) -> u64 {
        self.c.host_reads += 1;
        self.c.host_read_bytes += len;
        let s0 = off / 512;
        let s1 = (off + len).div_ceil(512);
        let u0 = self.d_us.div(s0);
        let u1 = self.d_us.div_ceil(s1);
        let t = self.fw_op(
            enter,
            self.fw_read + self.fw_read_unit * len.div_ceil(4096).saturating_sub(1),
        );
        let mut ready = t;
        let mut last_page = u32::MAX;
        let mut page_done = t;
        for u in u0..u1 {
            let l = u as usize;
            let slot = self.l2p.get(l);
            if slot == UNMAPPED {
                continue;
            }
            if self.is_buffered(l, slot, t) {
                self.c.cache_hits += 1;
                continue;
            }
            let blk = self.slot_block(slot);
            let die = self.plane_die(self.block_plane(blk));
            let page = self.d_spp.div(slot as u64) as u32;
            if page != last_page {
                last_page = page;
                self.c.nand_reads += 1;
                let tr = if self.blk_slc[blk] {
                    self.slc_t_r
                } else {
                    self.t_r
                };
                page_done = self.die_op(die, t, tr);
            }
            let e = self.chan_xfer(die, page_done, self.unit_cost(l) as u64 * 512);
            ready = ready.max(e);
        }
        self.link_xfer(sh, ready, len, true)
    }

    fn trim(&mut self, off: u64, len: u64) {
        let u0 = self.d_unit.div_ceil(off);
        let u1 = self.d_unit.div(off + len);
        for u in u0..u1.max(u0) {
            let l = u as usize;
            let slot = self.l2p.get(l);
            if slot != UNMAPPED {
                self.invalidate(l, slot);
                self.mapped_units -= 1;
                self.c.trimmed_units += 1;
            }
        }
    }

    // ---------------------------------------------------------------- preconditioning

    fn fill_unit(&mut self, l: usize) {
        let old = self.l2p.get(l);
        if old != UNMAPPED {
            self.invalidate(l, old);
        } else {
            self.mapped_units += 1;
        }
        if !self.cost.is_empty() {
            self.cost[l] = self.us as u8;
        }
        self.host_place(l, self.us, 0, 0);
    }

    /// Bring the drive into the requested state without timing simulation.
    pub(crate) fn precondition(&mut self, pre: crate::Precondition, seed: u64) {
        use crate::Precondition;
        self.timing = false;
        if matches!(pre, Precondition::Full | Precondition::Steady) {
            for l in 0..self.user_units as usize {
                self.fill_unit(l);
            }
        }
        if matches!(pre, Precondition::Steady) {
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            // Random single-unit overwrites into the over-provisioned space, stopping when the
            // free pools reach the background-GC threshold (or after `steady_overwrite` ×
            // capacity): every block ends up with a binomial spread of invalid units and the
            // next host writes need GC at once — the state greedy GC holds under random
            // writes, built without running GC (a 128 GB drive takes a few seconds).
            let n = (self.steady_overwrite * self.user_units as f64) as u64;
            let mut done = 0u64;
            let limit = (self.gc_bg as usize + 1) * self.free.len();
            while done < n {
                for _ in 0..256 {
                    let l = (xorshift(&mut rng) % self.user_units) as usize;
                    self.fill_unit(l);
                    done += 1;
                }
                if self.free.iter().map(|f| f.len()).sum::<usize>() <= limit {
                    break;
                }
            }
        }
        if self.pending_deadline().is_some() {
            self.program_host(self.host_die, 0);
        }
        // leave every plane with the background-GC reserve, as an idle drive would
        for plane in 0..self.free.len() {
            let mut guard = self.bpp;
            while (self.free[plane].len() as u32) < self.gc_bg + 1 && guard > 0 {
                let progressed = if !self.slc_fifo[plane].is_empty() {
                    self.fold_one(plane, 0);
                    true
                } else {
                    self.gc_one(plane, 0)
                };
                if !progressed {
                    break;
                }
                guard -= 1;
            }
        }
        self.c = RawCounters::default();
        for e in self.blk_erase.iter_mut() {
            *e = 0;
        }
        self.timing = true;
    }

    // ---------------------------------------------------------------- inspection

    pub(crate) fn counters(&self) -> DriveCounters {
        let c = &self.c;
        let (mut mn, mut mx, mut sum) = (u32::MAX, 0u32, 0u64);
        for &e in &self.blk_erase {
            mn = mn.min(e);
            mx = mx.max(e);
            sum += e as u64;
        }
        DriveCounters {
            host_read_bytes: c.host_read_bytes,
            host_write_bytes: c.host_write_bytes,
            host_reads: c.host_reads,
            host_writes: c.host_writes,
            host_trims: c.host_trims,
            trimmed_units: c.trimmed_units,
            nand_reads: c.nand_reads,
            nand_programs: c.nand_programs,
            nand_program_bytes: c.nand_program_bytes,
            nand_erases: c.nand_erases,
            gc_runs: c.gc_runs,
            gc_pages_moved: c.gc_pages_moved,
            gc_units_moved: c.gc_units_moved,
            pslc_folds: c.pslc_folds,
            rmw_reads: c.rmw_reads,
            write_amplification: if c.host_write_bytes > 0 {
                c.nand_program_bytes as f64 / c.host_write_bytes as f64
            } else {
                0.0
            },
            cache_hits: c.cache_hits,
            cache_write_hits: c.cache_write_hits,
            pslc_programs: c.pslc_programs,
            compression_saved_bytes: c.compression_saved_bytes,
            per_die_busy_ns: self.die_busy.clone(),
            erase_count_min: mn,
            erase_count_max: mx,
            erase_count_mean: sum as f64 / self.blk_erase.len() as f64,
            link_busy_ns: c.link_busy_ns,
            fw_busy_ns: c.fw_busy_ns,
            cache_wait_ns: c.cache_wait_ns,
            mapped_bytes: self.mapped_units * self.unit_bytes,
            free_blocks: self.free.iter().map(|f| f.len() as u64).sum(),
        }
    }

    /// Data version of a logical sector (tracking mode): `None` when unmapped or never written.
    pub(crate) fn read_version(&self, sector: u64) -> Option<u32> {
        let ver = self.ver.as_ref()?;
        let us = self.us as u64;
        let u = (sector / us) as usize;
        if u >= self.l2p.len() {
            return None;
        }
        let slot = self.l2p.get(u);
        if slot == UNMAPPED {
            return None;
        }
        let v = ver[slot as usize * us as usize + (sector % us) as usize];
        (v != 0).then_some(v)
    }

    pub(crate) fn write_seq(&self) -> u32 {
        self.write_seq
    }

    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let mut valid = vec![0u64; self.blk_valid.len()];
        let mut mapped = 0u64;
        for (l, slot) in self.l2p.iter().enumerate() {
            if slot == UNMAPPED {
                continue;
            }
            mapped += 1;
            if slot as usize >= self.p2l.len() {
                return Err(format!("unit {l}: slot {slot} out of range"));
            }
            if self.p2l.get(slot as usize) != l as u32 {
                return Err(format!(
                    "unit {l}: slot {slot} reverse-maps to {}",
                    self.p2l.get(slot as usize)
                ));
            }
            let b = self.slot_block(slot);
            if self.blk_state[b] == FREE {
                return Err(format!("unit {l}: slot {slot} lies in free block {b}"));
            }
            valid[b] += self.unit_cost(l) as u64;
        }
        if mapped != self.mapped_units {
            return Err(format!(
                "mapped unit count {} != map population {mapped}",
                self.mapped_units
            ));
        }
        let live = (0..self.p2l.len())
            .filter(|&s| self.live(s).is_some())
            .count() as u64;
        if live != mapped {
            return Err(format!(
                "{live} live reverse entries but {mapped} mapped units"
            ));
        }
        for (b, &v) in valid.iter().enumerate() {
            if self.blk_valid[b] as u64 != v {
                return Err(format!(
                    "block {b}: valid count {} != {v} from the map",
                    self.blk_valid[b]
                ));
            }
        }
        for (p, fl) in self.free.iter().enumerate() {
            let base = p * self.bpp;
            let nfree = (base..base + self.bpp)
                .filter(|&b| self.blk_state[b] == FREE)
                .count();
            if nfree != fl.len() {
                return Err(format!(
                    "plane {p}: {} blocks on the free list, {nfree} blocks free",
                    fl.len()
                ));
            }
            for &b in fl {
                if self.blk_state[b as usize] != FREE || self.blk_valid[b as usize] != 0 {
                    return Err(format!("plane {p}: free-list block {b} not free/empty"));
                }
                if b as usize / self.bpp != p {
                    return Err(format!("plane {p}: free-list block {b} from another plane"));
                }
            }
            let slc = (base..base + self.bpp)
                .filter(|&b| self.blk_state[b] != FREE && self.blk_slc[b])
                .count() as u32;
            if slc != self.slc_count[p] {
                return Err(format!(
                    "plane {p}: pSLC count {} != {slc}",
                    self.slc_count[p]
                ));
            }
        }
        Ok(())
    }
}
