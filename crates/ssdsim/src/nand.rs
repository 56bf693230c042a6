//! The NAND array: geometry (channels → dies → planes → blocks → pages → mapping slots) and the
//! timing model of one die (array read, program, erase, suspend/resume, bus transfers).
//!
//! A new NAND timing model (e.g. per-page-type program times of TLC, read retries) belongs here:
//! the scheduler asks [`NandTiming`] how long each array operation and transfer takes.

use crate::config::DriveConfig;

/// Division by a run-time constant: a shift when it is a power of two (every geometry of the
/// presets), a plain division otherwise. Integer division costs tens of cycles and the hot
/// path needs several per request.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Div {
    d: u64,
    shift: u32,
    pow2: bool,
}

impl Div {
    pub(crate) fn new(d: u64) -> Div {
        assert!(d > 0, "division by zero");
        Div {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }
    #[inline]
    pub(crate) fn div(self, x: u64) -> u64 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    #[inline]
    pub(crate) fn rem(self, x: u64) -> u64 {
        if self.pow2 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
    #[inline]
    pub(crate) fn div_ceil(self, x: u64) -> u64 {
        self.div(x) + (self.rem(x) != 0) as u64
    }
}

/// Most planes per die the model supports (the config allows 1..=8).
pub(crate) const MAX_PLANES: usize = 8;

/// Physical layout. Blocks are numbered plane by plane (`plane · bpp + i`), planes die by die,
/// and die `d` sits on channel `d mod channels`; a mapping slot is
/// `(block · pages_per_block + page) · slots_per_page + i`.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Geometry {
    pub channels: usize,
    pub dies: usize,
    pub planes: usize,
    pub planes_total: usize,
    pub bpp: usize,
    pub blocks: usize,
    pub ppb: u32,
    /// Pages of a block programmed in SLC mode (`ppb / bits_per_cell`).
    pub slc_ppb: u32,
    pub page_bytes: u64,
    pub page_sectors: u32,
    /// Sectors per mapping unit.
    pub us: u32,
    pub unit_bytes: u64,
    /// Mapping slots per page (units per page × pack factor).
    pub spp: u32,
    /// Whole uncompressed units per page: `min(page_sectors / us, spp)`.
    pub upp: u32,
    pub total_slots: usize,
    pub d_unit: Div,
    pub d_us: Div,
    pub d_spp: Div,
    pub d_ppb: Div,
    pub d_bslots: Div,
    pub d_bpp: Div,
    pub d_planes: Div,
    pub d_channels: Div,
}

impl Geometry {
    pub(crate) fn new(cfg: &DriveConfig) -> Geometry {
        let n = &cfg.nand;
        let f = &cfg.ftl;
        let channels = n.channels as usize;
        let dies = channels * n.dies_per_channel as usize;
        let planes = n.planes_per_die as usize;
        let bpp = n.blocks_per_plane as usize;
        let us = (f.mapping_unit / 512) as u32;
        let spp = (n.page_bytes / f.mapping_unit) as u32 * f.pack_factor;
        let blocks = dies * planes * bpp;
        Geometry {
            channels,
            dies,
            planes,
            planes_total: dies * planes,
            bpp,
            blocks,
            ppb: n.pages_per_block,
            slc_ppb: n.pages_per_block / n.bits_per_cell.max(1),
            page_bytes: n.page_bytes,
            page_sectors: (n.page_bytes / 512) as u32,
            us,
            unit_bytes: f.mapping_unit,
            spp,
            upp: ((n.page_bytes / 512) as u32 / us).min(spp),
            total_slots: blocks * n.pages_per_block as usize * spp as usize,
            d_unit: Div::new(f.mapping_unit),
            d_us: Div::new(us as u64),
            d_spp: Div::new(spp as u64),
            d_ppb: Div::new(n.pages_per_block as u64),
            d_bslots: Div::new(n.pages_per_block as u64 * spp as u64),
            d_bpp: Div::new(bpp as u64),
            d_planes: Div::new(planes as u64),
            d_channels: Div::new(channels as u64),
        }
    }

    #[inline]
    pub(crate) fn slot_block(&self, slot: u32) -> usize {
        self.d_bslots.div(slot as u64) as usize
    }
    /// Page index of a slot within its block.
    #[inline]
    pub(crate) fn slot_page(&self, slot: u32) -> u32 {
        self.d_ppb.rem(self.d_spp.div(slot as u64)) as u32
    }
    /// Global page number of a slot (`block · ppb + page`).
    #[inline]
    pub(crate) fn slot_gpage(&self, slot: u32) -> u32 {
        self.d_spp.div(slot as u64) as u32
    }
    #[inline]
    pub(crate) fn block_plane(&self, blk: usize) -> usize {
        self.d_bpp.div(blk as u64) as usize
    }
    #[inline]
    pub(crate) fn plane_die(&self, plane: usize) -> usize {
        self.d_planes.div(plane as u64) as usize
    }
    #[inline]
    pub(crate) fn die_channel(&self, die: usize) -> usize {
        self.d_channels.rem(die as u64) as usize
    }
    /// First slot of page `page` of block `blk`.
    #[inline]
    pub(crate) fn page_slot(&self, blk: usize, page: u32) -> usize {
        (blk * self.ppb as usize + page as usize) * self.spp as usize
    }
}

/// Array and bus timings of the NAND part (all ns).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct NandTiming {
    /// Program time of each page index of a block in the native cell mode (page `i` is of
    /// type `i mod bits_per_cell`: lower, middle, upper, top).
    prog_by_page: Vec<u32>,
    /// Array read time of each page index of a block in the native cell mode.
    read_by_page: Vec<u32>,
    pub t_bers: u64,
    pub slc_t_r: u64,
    pub slc_t_prog: u64,
    pub bus_mt_s: u64,
    pub multi_plane: bool,
    pub program_suspend: bool,
    pub erase_suspend: bool,
    pub t_suspend: u64,
    pub t_resume: u64,
    pub max_suspends: u32,
    bus_memo: (u64, u64),
}

impl NandTiming {
    pub(crate) fn new(cfg: &DriveConfig) -> NandTiming {
        let n = &cfg.nand;
        let bits = n.bits_per_cell.max(1) as usize;
        // times per page type: lower, middle, upper, top
        let prog: Vec<u64> = if !n.t_prog_pages_ns.is_empty() {
            n.t_prog_pages_ns.clone()
        } else if bits == 2 && n.t_prog_upper_ns > 0 {
            vec![n.t_prog_ns, n.t_prog_upper_ns]
        } else {
            vec![n.t_prog_ns]
        };
        let read: Vec<u64> = if n.t_r_pages_ns.is_empty() {
            vec![n.t_r_ns]
        } else {
            n.t_r_pages_ns.clone()
        };
        let table = |by_type: &[u64]| -> Vec<u32> {
            (0..n.pages_per_block as usize)
                .map(|i| by_type[i % by_type.len()].min(u32::MAX as u64) as u32)
                .collect()
        };
        NandTiming {
            prog_by_page: table(&prog),
            read_by_page: table(&read),
            t_bers: n.t_bers_ns,
            slc_t_r: cfg.ftl.pslc_t_r_ns,
            slc_t_prog: cfg.ftl.pslc_t_prog_ns,
            bus_mt_s: n.bus_mt_s,
            multi_plane: n.multi_plane,
            program_suspend: n.program_suspend,
            erase_suspend: n.erase_suspend,
            t_suspend: n.t_suspend_ns,
            t_resume: n.t_resume_ns,
            max_suspends: n.max_suspends,
            bus_memo: (0, 0),
        }
    }

    /// Array read time of page `page` of a block (pSLC pages read faster; in the native mode
    /// each page type has its own time).
    #[inline]
    pub(crate) fn read_ns(&self, page: u32, slc: bool) -> u64 {
        if slc {
            self.slc_t_r
        } else {
            self.read_by_page[page as usize] as u64
        }
    }

    /// Program time of page `page` of a block: pSLC, or the native mode's page type.
    #[inline]
    pub(crate) fn prog_ns(&self, page: u32, slc: bool) -> u64 {
        if slc {
            self.slc_t_prog
        } else {
            self.prog_by_page[page as usize] as u64
        }
    }

    /// Time `bytes` take on the 8-bit channel bus.
    #[inline]
    pub(crate) fn bus_ns(&mut self, bytes: u64) -> u64 {
        // transfers come in a few sizes: remember the last one (saves a division)
        if bytes != self.bus_memo.0 {
            self.bus_memo = (bytes, bytes * 1000 / self.bus_mt_s);
        }
        self.bus_memo.1
    }
}

/// Busy time of one resource inside the measurement window `[w0, now]`: every busy interval is
/// added when it is booked, clipped at the window start; the part booked beyond the current
/// time is subtracted when the counters are read.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Meter {
    pub acc: u64,
}

impl Meter {
    #[inline]
    pub(crate) fn add(&mut self, w0: u64, s: u64, e: u64) {
        if e > w0 {
            self.acc += e - s.max(w0);
        }
    }
    /// Removes a booked stretch that will not happen after all (a suspended operation's rest).
    #[inline]
    pub(crate) fn remove(&mut self, w0: u64, s: u64, e: u64) {
        if e > w0 {
            self.acc = self.acc.saturating_sub(e - s.max(w0));
        }
    }
}
