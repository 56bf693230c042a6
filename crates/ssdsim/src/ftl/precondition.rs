//! Untimed preconditioning: the drive is brought into a state by running the FTL alone (no
//! timing, no events), the way a long workload would have left it.

use super::mapping::UNMAPPED;
use super::{Ftl, NIL};
use crate::Precondition;

impl Ftl {
    /// Writes unit `l` (whole, incompressible) through the host stream without timing; `rr`
    /// is the host stream's round-robin die cursor.
    pub(crate) fn fill_unit(&mut self, l: usize, rr: &mut usize) {
        if self.hy.is_some() {
            return self.hybrid_fill_unit(l);
        }
        let old = self.map.l2p.get(l);
        if old != UNMAPPED {
            self.invalidate(l, old);
        } else {
            self.mapped_units += 1;
        }
        let us = self.g.us;
        if !self.map.cost.is_empty() {
            self.map.cost.set(l, us as u8);
        }
        loop {
            if self.host_group == NIL {
                let d = self.untimed_host_die(rr);
                self.open_host_group(d, 0);
            }
            let id = self.host_group;
            let mut full = false;
            let slot = self.group_put(id, us, 0, &mut full);
            if let Some(slot) = slot {
                self.map_unit(l, slot, us);
            }
            if full {
                self.seal(id);
                self.group_programmed(id, 0);
            }
            if slot.is_some() {
                return;
            }
        }
    }

    /// Next die of the host stream (round-robin), collecting garbage first where a die runs
    /// short of free blocks.
    fn untimed_host_die(&mut self, rr: &mut usize) -> usize {
        let dies = self.g.dies;
        for _ in 0..dies {
            let d = *rr;
            *rr = if d + 1 == dies { 0 } else { d + 1 };
            self.reclaim_untimed(d, self.gc_hard as usize + 1);
            if self.host_can_use(d) {
                return d;
            }
        }
        panic!("free block pool exhausted (over-provisioning too small)");
    }

    /// Untimed GC on die `d` while a plane has fewer than `want` free blocks or more pSLC
    /// blocks than the region allows.
    pub(crate) fn reclaim_untimed(&mut self, d: usize, want: usize) {
        let mut guard = self.g.bpp * 2;
        while guard > 0 {
            let p0 = d * self.g.planes;
            let budget = self.slc_budget() as usize;
            let short = (p0..p0 + self.g.planes).any(|p| self.free[p].len() < want);
            let over = (p0..p0 + self.g.planes).any(|p| {
                self.slc_fifo[p].len() > budget || (self.idle_fold && !self.slc_fifo[p].is_empty())
            });
            if !(short || over) || !self.gc_round_untimed(d) {
                return;
            }
            guard -= 1;
        }
    }

    /// One GC round of die `d` without timing: every victim moved and erased at once.
    fn gc_round_untimed(&mut self, d: usize) -> bool {
        if !self.gc_start(d, 0) {
            return false;
        }
        let (pages, cur) = (self.gc[d].pages, self.gc[d].cur);
        // The victims' forward-map entries are looked up at random: fetch them a few pages
        // ahead of the walk so the cache misses overlap (no effect on the result).
        const AHEAD: u32 = 8;
        for k in 0..AHEAD.min(pages) {
            self.prefetch_gc_page(&cur, k);
        }
        for k in 0..pages {
            if k + AHEAD < pages {
                self.prefetch_gc_page(&cur, k + AHEAD);
            }
            for (p, &b) in cur.iter().enumerate().take(self.g.planes) {
                if b != NIL && self.blk_valid[b as usize] > 0 && self.gc_page_live(b, k) > 0 {
                    self.gc_move_scratch(d, p, 0, 0, None, false);
                }
            }
        }
        for &b in cur.iter().take(self.g.planes) {
            if b != NIL {
                self.spare_gained(0);
                self.erase_begin(b as usize);
                self.erase_done(b as usize, 0);
            }
        }
        let s = &mut self.gc[d];
        s.active = false;
        s.cur = [NIL; crate::nand::MAX_PLANES];
        true
    }

    /// Performance hint: starts fetching the forward-map entries of the units stored in page
    /// `page` of the victims `cur` (one per plane) into the CPU cache.
    #[inline]
    fn prefetch_gc_page(&self, cur: &[u32; crate::nand::MAX_PLANES], page: u32) {
        for &b in cur.iter().take(self.g.planes) {
            if b == NIL {
                continue;
            }
            let first = self.g.page_slot(b as usize, page);
            for s in first..first + self.g.spp as usize {
                let l = self.map.p2l.get(s);
                if l != UNMAPPED {
                    self.map.l2p.prefetch(l as usize);
                }
            }
        }
    }

    /// Brings the drive into the requested state without timing.
    pub(crate) fn precondition(&mut self, pre: Precondition, seed: u64) {
        let mut rr = 0usize;
        if matches!(pre, Precondition::Full | Precondition::Steady)
            && self.hy.is_none()
            && self.mapped_units == 0
            && self.map.frags.0.is_empty()
        {
            // a fresh drive: the fill keeps no reverse entries but those of SLC blocks; the
            // map is built when a block without them is collected (Mapping::p2l_built)
            self.map.unbuild_p2l(self.blk_valid.len());
        }
        if matches!(pre, Precondition::Full | Precondition::Steady) {
            for l in 0..self.user_units as usize {
                self.fill_unit(l, &mut rr);
            }
        }
        if matches!(pre, Precondition::Steady) {
            if self.hy.is_some() {
                self.hybrid_steady(seed);
            } else {
                self.steady_state(seed, &mut rr);
            }
        }
        self.finish_untimed(true);
        self.c = Default::default();
        if let Some(h) = self.hy.as_mut() {
            h.c = Default::default();
        }
        for e in self.blk_erase.iter_mut() {
            *e = 0;
        }
    }

    /// Random single-unit overwrites until garbage collection is in its steady state: first
    /// until the free pools reach the GC threshold, then in windows of 2 % of the capacity
    /// until the marginal write amplification (units written by the host and moved by GC, per
    /// host unit) changes by less than 1 % over three windows — what greedy GC converges to
    /// under uniform random writes — or `ftl.steady_overwrite` × capacity has been written.
    /// The marginal write amplification of the last window is kept ([`Ftl::steady_wa`]).
    fn steady_state(&mut self, seed: u64, rr: &mut usize) {
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let n = (self.steady_overwrite * self.user_units as f64) as u64;
        let mut done = 0u64;
        let mut write = |ftl: &mut Ftl, k: u64| {
            for _ in 0..k {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let l = (rng % ftl.user_units) as usize;
                ftl.fill_unit(l, rr);
            }
        };
        let limit = (self.gc_soft as u64 + 1) * self.g.planes_total as u64;
        while done < n && self.free_total > limit {
            write(self, 256);
            done += 256;
        }
        let window = (self.user_units / 50).max(256);
        let mut was: Vec<f64> = Vec::new();
        while done < n {
            let moved0 = self.c.gc_units_moved;
            let k = window.min(n - done);
            write(self, k);
            done += k;
            let wa = 1.0 + (self.c.gc_units_moved - moved0) as f64 / k as f64;
            was.push(wa);
            if let [.., a, _, _, d] = was[..] {
                if (d - a).abs() <= 0.01 * d {
                    break;
                }
            }
        }
        self.steady_wa = was.last().copied();
        self.steady_written = done as f64 / self.user_units as f64;
    }

    /// Ends untimed writing: programs what is still buffered and, when `idle`, leaves every
    /// plane with the background-GC reserve, as a drive that has been idle would (and, on a
    /// drive that folds its SLC cache when idle, the cache folded). Without `idle` the free
    /// pools stay where the writes left them, as for a workload that follows at once.
    pub(crate) fn finish_untimed(&mut self, idle: bool) {
        // program what is still buffered
        for id in [self.host_group]
            .into_iter()
            .chain(self.gc_group.clone())
            .filter(|&id| id != NIL)
        {
            self.seal(id);
            self.group_programmed(id, 0);
        }
        if idle && self.hy.is_none() {
            self.idle_fold = self.fold_when_idle;
            for d in 0..self.g.dies {
                self.reclaim_untimed(d, self.gc_soft as usize);
            }
            self.idle_fold = false;
        }
        for id in self.gc_group.clone().into_iter().filter(|&id| id != NIL) {
            self.seal(id);
            self.group_programmed(id, 0);
        }
        for gc in &mut self.gc {
            gc.programmed_seq = gc.next_seq;
        }
        if self.hy.is_some() {
            self.hybrid_settle();
        }
    }
}
