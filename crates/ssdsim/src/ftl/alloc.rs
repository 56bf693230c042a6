//! Block allocation and write points.
//!
//! Each die has a host block set and a GC block set: one open block per plane, written a page
//! index at a time. A *page group* is one page index of a block set — one page on every plane
//! of the die — and is programmed with one multi-plane program once its pages are full (or when
//! the controller flushes it early). Host data is striped over the dies group by group, the
//! scheduler choosing the die (see [`crate::drive`]).

use super::{Ftl, CLOSED, ERASING, FREE, NIL, OPEN, VICTIM};

use crate::nand::MAX_PLANES;

/// One open block per plane of a die, filled page index by page index.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct BlockSet {
    pub open: bool,
    pub slc: bool,
    pub blk: [u32; MAX_PLANES],
    /// Next page index to hand out.
    pub next_page: u32,
    /// Pages per block in this mode (pSLC blocks hold half).
    pub pages: u32,
}

/// One page index of a block set: up to one page per plane, programmed together.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Group {
    pub die: u32,
    pub page: u32,
    pub blk: [u32; MAX_PLANES],
    pub slc: bool,
    pub gc: bool,
    /// Last page of the block set: the blocks close when this group is programmed.
    pub last: bool,
    /// Fill position: plane being filled, sectors and slots used in its page.
    pub plane: u32,
    pub fill: u32,
    pub slots: u32,
    /// Planes holding data (a flushed group leaves the later planes' pages unused).
    pub used_planes: u32,
    /// Data sectors to transfer to the die.
    pub sectors: u32,
    /// Write-buffer bytes freed when the program completes.
    pub cache_bytes: u64,
    /// All data of the group is in the controller at this time.
    pub ready: u64,
    /// Outstanding reads the data depends on (read-modify-write).
    pub deps: u32,
    pub sealed: bool,
    /// GC groups: sequence number on their die (victims are erased once the group holding
    /// their last moved unit is programmed).
    pub seq: u64,
    /// Write-through commands waiting for this program.
    pub waiters: Vec<u32>,
    /// A group of the hybrid scheme (`ftl::hybrid`): its pages sit at fixed planes, `pmask`
    /// says which it holds.
    pub hybrid: bool,
    pub pmask: u8,
}

impl Group {
    /// A group taken from the pool starts empty: nothing filled, waiting or programmed, `seq`
    /// its place in its die's order. (Where it goes is set by the caller.)
    pub(crate) fn clear(&mut self, seq: u64) {
        self.fill = 0;
        self.slots = 0;
        self.used_planes = 0;
        self.sectors = 0;
        self.cache_bytes = 0;
        self.ready = 0;
        self.deps = 0;
        self.sealed = false;
        self.seq = seq;
        self.waiters.clear();
        self.pmask = 0;
    }
}

/// Blocks a plane keeps for GC: the host may not take the last one.
pub(crate) const HOST_RESERVE: usize = 1;

impl Ftl {
    /// Takes a free block of `plane` for writing.
    pub(crate) fn alloc_block(&mut self, plane: usize, slc: bool, now: u64) -> u32 {
        let b = self.free[plane].pop_front().expect(
            "free block pool exhausted (GC could not keep up; over-provisioning too small)",
        );
        self.blk_state[b as usize] = OPEN;
        self.blk_slc[b as usize] = slc;
        self.blk_prog[b as usize] = 0;
        if slc {
            self.slc_count[plane] += 1;
        }
        self.free_changed(plane, now, -1, true);
        b
    }

    /// Whether die `d` can take host data now: its host block set has pages left, or every
    /// plane has a free block beyond the GC reserve.
    #[inline]
    pub(crate) fn host_can_use(&self, d: usize) -> bool {
        let w = &self.host_wp[d];
        if w.open && w.next_page < w.pages {
            return true;
        }
        let p0 = d * self.g.planes;
        (p0..p0 + self.g.planes).all(|p| self.free[p].len() > HOST_RESERVE)
    }

    /// Opens a new host block set on die `d` (pSLC while the region has room).
    fn open_host_blocks(&mut self, d: usize, now: u64) {
        let budget = self.slc_budget();
        let planes = self.g.planes;
        // past the cache's share a folding drive still writes SLC (the oldest SLC blocks are
        // folded to make room, see `gc_need`)
        let slc = budget > 0
            && (self.fold_when_full
                || (0..planes).all(|p| self.slc_count[d * planes + p] < budget));
        let mut w = BlockSet {
            open: true,
            slc,
            next_page: 0,
            pages: self.pages_in(slc),
            ..Default::default()
        };
        for p in 0..planes {
            w.blk[p] = self.alloc_block(d * planes + p, slc, now);
        }
        self.host_wp[d] = w;
    }

    /// Opens a new GC block set on die `d` (GC may take the last free block of a plane).
    fn open_gc_blocks(&mut self, d: usize, now: u64) {
        let planes = self.g.planes;
        let mut w = BlockSet {
            open: true,
            slc: false,
            next_page: 0,
            pages: self.g.ppb,
            ..Default::default()
        };
        for p in 0..planes {
            w.blk[p] = self.alloc_block(d * planes + p, false, now);
        }
        self.gc_wp[d] = w;
    }

    fn new_group(&mut self, d: usize, gc: bool, now: u64) -> u32 {
        let wp = if gc { self.gc_wp[d] } else { self.host_wp[d] };
        let w = if wp.open && wp.next_page < wp.pages {
            wp
        } else {
            if gc {
                self.open_gc_blocks(d, now);
                self.gc_wp[d]
            } else {
                self.open_host_blocks(d, now);
                self.host_wp[d]
            }
        };
        let id = match self.group_free.pop() {
            Some(id) => id,
            None => {
                self.groups.push(Group::default());
                (self.groups.len() - 1) as u32
            }
        };
        let page = w.next_page;
        let seq = if gc {
            let s = &mut self.gc[d];
            s.next_seq += 1;
            s.next_seq
        } else {
            0
        };
        let gr = &mut self.groups[id as usize];
        gr.die = d as u32;
        gr.page = page;
        gr.blk = w.blk;
        gr.slc = w.slc;
        gr.gc = gc;
        gr.last = page + 1 == w.pages;
        gr.plane = 0;
        gr.clear(seq);
        gr.hybrid = false;
        if gc {
            self.gc_wp[d].next_page += 1;
        } else {
            self.host_wp[d].next_page += 1;
        }
        id
    }

    /// Opens the host stream's next group on die `d`; returns whether new blocks were taken.
    pub(crate) fn open_host_group(&mut self, d: usize, now: u64) -> bool {
        debug_assert_eq!(self.host_group, NIL);
        let w = &self.host_wp[d];
        let fresh = !(w.open && w.next_page < w.pages);
        let id = self.new_group(d, false, now);
        self.host_group = id;
        fresh
    }

    /// The open GC group of die `d` (opened when needed).
    pub(crate) fn gc_group_of(&mut self, d: usize, now: u64) -> u32 {
        if self.gc_group[d] == NIL {
            self.gc_group[d] = self.new_group(d, true, now);
        }
        self.gc_group[d]
    }

    /// Puts a unit of `cost` sectors into group `id`; returns its slot, or `None` when the group
    /// is full. Sets `*full` when this unit filled the group's last page.
    #[inline(always)]
    pub(crate) fn group_put(
        &mut self,
        id: u32,
        cost: u32,
        ready: u64,
        full: &mut bool,
    ) -> Option<u32> {
        let planes = self.g.planes as u32;
        let page_sectors = self.g.page_sectors;
        let spp = self.g.spp;
        let ppb = self.g.ppb as usize;
        let gr = &mut self.groups[id as usize];
        loop {
            if gr.plane >= planes {
                *full = true;
                return None;
            }
            if gr.fill + cost <= page_sectors && gr.slots < spp {
                let slot = ((gr.blk[gr.plane as usize] as usize * ppb + gr.page as usize)
                    * spp as usize
                    + gr.slots as usize) as u32;
                gr.fill += cost;
                gr.slots += 1;
                gr.sectors += cost;
                gr.ready = gr.ready.max(ready);
                gr.used_planes = gr.plane + 1;
                if gr.fill >= page_sectors || gr.slots >= spp {
                    gr.plane += 1;
                    gr.fill = 0;
                    gr.slots = 0;
                }
                *full = gr.plane >= planes;
                return Some(slot);
            }
            gr.plane += 1;
            gr.fill = 0;
            gr.slots = 0;
        }
    }

    /// Closes group `id` for more data (full, or flushed with its later pages left unused).
    pub(crate) fn seal(&mut self, id: u32) {
        let gr = &mut self.groups[id as usize];
        gr.sealed = true;
        let d = gr.die as usize;
        if gr.gc {
            if self.gc_group[d] == id {
                self.gc_group[d] = NIL;
            }
            self.gc[d].sealed += 1;
        } else {
            if self.host_group == id {
                self.host_group = NIL;
            }
            self.host_sealed += 1;
        }
    }

    /// The program of group `id` finished (or, untimed, happened): its pages hold data, the
    /// blocks close after their last page, the group is recycled. Returns the write-buffer
    /// bytes it held.
    pub(crate) fn group_programmed(&mut self, id: u32, now: u64) -> u64 {
        if self.groups[id as usize].hybrid {
            self.programmed::<true>(id, now)
        } else {
            self.programmed::<false>(id, now)
        }
    }

    /// [`Ftl::group_programmed`]; a hybrid group (`HYBRID`) programs only the planes it holds
    /// (another group may program the same page index of the other planes).
    #[inline(always)]
    fn programmed<const HYBRID: bool>(&mut self, id: u32, now: u64) -> u64 {
        let gr = &self.groups[id as usize];
        let (d, page, last, slc, gc) = (gr.die as usize, gr.page, gr.last, gr.slc, gr.gc);
        let blk = gr.blk;
        let cache = gr.cache_bytes;
        let pmask = gr.pmask as u32;
        if HYBRID {
            self.hybrid_programmed(id);
        }
        for (p, &b) in blk.iter().take(self.g.planes).enumerate() {
            if !HYBRID || pmask & (1 << p) != 0 {
                self.blk_prog[b as usize] = (page + 1) as u16;
            }
            if last {
                let b = b as usize;
                self.blk_state[b] = CLOSED;
                self.blk_time[b] = now;
                if slc {
                    let plane = self.g.block_plane(b);
                    self.slc_fifo[plane].push_back(b as u32);
                }
            }
        }
        if last {
            if gc {
                if self.gc_wp[d].blk[0] == blk[0] {
                    self.gc_wp[d].open = false;
                }
            } else if self.host_wp[d].blk[0] == blk[0] {
                self.host_wp[d].open = false;
            }
        }
        if gc {
            let s = &mut self.gc[d];
            s.sealed -= 1;
            s.programmed_seq = s.programmed_seq.max(self.groups[id as usize].seq);
        } else {
            self.host_sealed -= 1;
        }
        self.group_free.push(id);
        cache
    }

    /// Marks `blk` (all data moved out) for erasure.
    pub(crate) fn erase_begin(&mut self, blk: usize) {
        debug_assert_eq!(self.blk_valid[blk], 0);
        debug_assert_eq!(self.blk_state[blk], VICTIM);
        let plane = self.g.block_plane(blk);
        self.blk_state[blk] = ERASING;
        self.erasing[plane] += 1;
        self.mark_changed(self.g.plane_die(plane));
    }

    /// The erase of `blk` completed: it is free again.
    pub(crate) fn erase_done(&mut self, blk: usize, now: u64) {
        debug_assert_eq!(self.blk_valid[blk], 0);
        let plane = self.g.block_plane(blk);
        if self.blk_slc[blk] {
            self.slc_count[plane] -= 1;
        }
        self.erasing[plane] -= 1;
        self.blk_state[blk] = FREE;
        self.blk_slc[blk] = false;
        self.map.drop_block(blk, self.block_slots(blk));
        self.blk_prog[blk] = 0;
        self.blk_erase[blk] += 1;
        self.free[plane].push_back(blk as u32);
        self.free_changed(plane, now, 1, false);
    }
}
