//! Garbage collection and pSLC folding, page by page.
//!
//! A die collects in *rounds*: when a plane of the die falls below the soft free-block
//! threshold (`ftl.gc_bg_free_blocks`), or holds more pSLC blocks than the shrinking pSLC region
//! allows, the die picks one victim per plane (the policy's choice, or the oldest pSLC block
//! when folding) and walks the victims' pages in step, one page index at a time: each step is a
//! GC read transaction per plane (a multi-plane read when the scheduler pairs them). When a read
//! is issued to the die its live units are remapped into the die's GC page group; full GC groups
//! become multi-plane GC programs. A victim is erased once every GC group holding its data is
//! programmed. All of this is ordinary scheduler traffic in the GC class: low priority while
//! free blocks are above the hard threshold (`ftl.gc_fg_free_blocks`), ahead of host programs
//! below it.
//!
//! A new victim policy belongs in [`Ftl::select_victim`].

use super::mapping::{Frag, UNMAPPED};
use super::{try_vec_with_capacity, AllocError, Ftl, CLOSED, NIL, VICTIM};
use crate::config::GcPolicy;
use crate::controller::GcJob;
use crate::nand::MAX_PLANES;
use crate::sched::{
    Sched, Tx, C_GC, C_READ, F_RMW, F_SLC, GC_BACKGROUND, GC_CRITICAL, GC_FOREGROUND, K_ERASE,
    K_PROG, K_READ,
};

/// GC state of one die.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct DieGc {
    /// A round is moving data.
    pub active: bool,
    /// The round folds pSLC blocks.
    pub fold: bool,
    /// The round's victim per plane, or NIL.
    pub cur: [u32; MAX_PLANES],
    /// Sequence number of the GC group that received the victim's last moved unit (0: none).
    pub last_seq: [u64; MAX_PLANES],
    /// Pages per victim block (pSLC blocks hold half).
    pub pages: u32,
    /// Next page index to read.
    pub cursor: u32,
    /// GC reads queued on the die and not yet started.
    pub queued: u32,
    /// Sealed GC groups whose program has not completed.
    pub sealed: u32,
    /// GC pages to move per page written, ×256 (`v / (1 - v)` of the round's victims).
    pub ratio_q8: u32,
    pub next_seq: u64,
    pub programmed_seq: u64,
    /// Victims fully read, waiting for their moved data to be programmed: (block, group seq).
    pub waiting: Vec<(u32, u64)>,
}

/// GC reads run at most this many sealed-but-unprogrammed GC groups ahead of the programs.
const GC_AHEAD: u32 = 2;

impl DieGc {
    pub(crate) fn try_new(planes: usize) -> Result<DieGc, AllocError> {
        Ok(DieGc {
            active: false,
            fold: false,
            cur: [NIL; MAX_PLANES],
            last_seq: [0; MAX_PLANES],
            pages: 0,
            cursor: 0,
            queued: 0,
            sealed: 0,
            ratio_q8: 0,
            next_seq: 0,
            programmed_seq: 0,
            waiting: try_vec_with_capacity(4 * planes, "GC state")?,
        })
    }

    pub(crate) fn heap_bytes(planes: usize) -> u64 {
        (4 * planes * size_of::<(u32, u64)>()) as u64
    }
}

impl Ftl {
    /// The block of `plane` to collect under the configured policy: closed MLC blocks holding
    /// some invalid data. `None` when no block would free anything.
    pub(crate) fn select_victim(&mut self, plane: usize, now: u64) -> Option<usize> {
        let bpp = self.g.bpp;
        let base = plane * bpp;
        let full = self.g.ppb * self.g.page_sectors;
        let eligible = |f: &Ftl, b: usize| f.blk_state[b] == CLOSED && !f.blk_slc[b];
        match self.policy {
            GcPolicy::Greedy => self.greedy(base, full),
            GcPolicy::DChoices => {
                let mut best = usize::MAX;
                let mut best_v = u32::MAX;
                for _ in 0..self.d_choices {
                    let b = base + (self.xorshift() % bpp as u64) as usize;
                    if eligible(self, b) && self.blk_valid[b] < best_v {
                        best_v = self.blk_valid[b];
                        best = b;
                    }
                }
                if best != usize::MAX && best_v < full {
                    Some(best)
                } else {
                    self.greedy(base, full)
                }
            }
            GcPolicy::CostBenefit => {
                let mut best = usize::MAX;
                let mut best_s = f64::NEG_INFINITY;
                for b in base..base + bpp {
                    if !eligible(self, b) || self.blk_valid[b] >= full {
                        continue;
                    }
                    let u = self.blk_valid[b] as f64 / full as f64;
                    let age = now.saturating_sub(self.blk_time[b]) as f64 + 1.0;
                    let score = (1.0 - u) * age / (1.0 + u);
                    if score > best_s {
                        best_s = score;
                        best = b;
                    }
                }
                (best != usize::MAX).then_some(best)
            }
        }
    }

    /// Greedy: the closed MLC block with the fewest valid sectors (lowest index on ties).
    fn greedy(&self, base: usize, full: u32) -> Option<usize> {
        let mut best = usize::MAX;
        let mut best_v = u32::MAX;
        for b in base..base + self.g.bpp {
            if self.blk_state[b] == CLOSED && !self.blk_slc[b] && self.blk_valid[b] < best_v {
                best_v = self.blk_valid[b];
                best = b;
            }
        }
        (best != usize::MAX && best_v < full).then_some(best)
    }

    /// Free blocks of `plane`, counting those being erased.
    #[inline]
    pub(crate) fn free_soon(&self, plane: usize) -> usize {
        self.free[plane].len() + self.erasing[plane] as usize
    }

    /// GC mode of die `d` from its planes' free blocks (counting those being erased):
    /// foreground below the hard threshold, critical at the last free block.
    #[inline]
    pub(crate) fn die_gc_mode(&self, d: usize) -> u8 {
        if self.hy.is_some() {
            return self.hybrid_mode(d);
        }
        let p0 = d * self.g.planes;
        let low = (p0..p0 + self.g.planes)
            .map(|p| self.free_soon(p))
            .min()
            .unwrap_or(0);
        if low <= 1 {
            GC_CRITICAL
        } else if low < self.gc_hard as usize || self.over_slc_share(d) {
            GC_FOREGROUND
        } else {
            GC_BACKGROUND
        }
    }

    /// A drive that folds while writing (`ftl.pslc_when_full = "fold"`) holds more SLC blocks
    /// on die `d` than the cache's share: it folds the oldest in step with the host's writes
    /// (foreground), not only in the gaps the host leaves.
    #[inline]
    fn over_slc_share(&self, d: usize) -> bool {
        if !self.fold_when_full {
            return false;
        }
        let budget = self.slc_budget() as usize;
        let p0 = d * self.g.planes;
        (p0..p0 + self.g.planes).any(|p| self.slc_fifo[p].len() > budget)
    }

    /// What die `d` needs: `Some(true)` to fold pSLC blocks, `Some(false)` to collect MLC
    /// blocks, `None` nothing.
    fn gc_need(&self, d: usize) -> Option<bool> {
        let p0 = d * self.g.planes;
        let planes = p0..p0 + self.g.planes;
        let budget = self.slc_budget() as usize;
        if planes.clone().any(|p| self.slc_fifo[p].len() > budget) {
            return Some(true);
        }
        if self.idle_fold && planes.clone().any(|p| !self.slc_fifo[p].is_empty()) {
            return Some(true);
        }
        if planes
            .clone()
            .any(|p| self.free_soon(p) < self.gc_soft as usize)
        {
            return Some(planes.clone().any(|p| !self.slc_fifo[p].is_empty()));
        }
        None
    }

    /// Starts a GC round on die `d` when it needs one; returns whether it did.
    pub(crate) fn gc_start(&mut self, d: usize, now: u64) -> bool {
        if self.gc[d].active || self.hy.is_some() {
            // (the hybrid scheme merges instead)
            return false;
        }
        let Some(fold) = self.gc_need(d) else {
            return false;
        };
        let planes = self.g.planes;
        let mut cur = [NIL; MAX_PLANES];
        let mut any = false;
        let (mut valid, mut cap) = (0u64, 0u64);
        let block_sectors =
            (if fold { self.g.slc_ppb } else { self.g.ppb }) as u64 * self.g.page_sectors as u64;
        for (p, c) in cur.iter_mut().enumerate().take(planes) {
            let plane = d * planes + p;
            let v = if fold {
                self.slc_fifo[plane].pop_front().map(|b| b as usize)
            } else {
                self.select_victim(plane, now)
            };
            if let Some(b) = v {
                self.blk_state[b] = VICTIM;
                *c = b as u32;
                any = true;
                valid += self.blk_valid[b] as u64;
                cap += block_sectors;
            }
        }
        if !any {
            return false;
        }
        // GC must be able to place everything it moves: in a new block set (a free block on
        // every plane; a victim holds less than a block), or in its current set when that has
        // as many pages left as a victim has. Otherwise it waits for the erases of earlier
        // victims.
        let p0 = d * planes;
        let w = &self.gc_wp[d];
        let room = w.open && w.pages - w.next_page >= block_sectors as u32 / self.g.page_sectors;
        if !room && (p0..p0 + planes).any(|p| self.free[p].is_empty()) {
            for (p, &b) in cur.iter().enumerate().take(planes) {
                if b != NIL {
                    self.blk_state[b as usize] = CLOSED;
                    if fold {
                        self.slc_fifo[p0 + p].push_front(b);
                    }
                }
            }
            return false;
        }
        // the victims' units are looked up by slot: build the reverse map first when a victim
        // was written without it (Mapping::p2l_built)
        if !self.map.p2l_built
            && cur
                .iter()
                .take(planes)
                .any(|&b| b != NIL && self.map.p2l_missing[b as usize])
        {
            self.map.ensure_p2l();
        }
        for &b in cur.iter().take(planes) {
            if b != NIL {
                if fold {
                    self.c.pslc_folds += 1;
                } else {
                    self.c.gc_runs += 1;
                }
            }
        }
        // a freed block takes `v` of a block of moves: v / (1 - v) moved per page written; a
        // folded SLC block frees all of its pages for SLC writes again: v moved per page written
        let free = if fold {
            cap
        } else {
            cap.saturating_sub(valid).max(1)
        };
        let s = &mut self.gc[d];
        s.ratio_q8 = (valid * 256 / free).min(256 * 256) as u32;
        s.active = true;
        s.fold = fold;
        s.cur = cur;
        s.last_seq = [0; MAX_PLANES];
        s.pages = if fold { self.g.slc_ppb } else { self.g.ppb };
        s.cursor = 0;
        s.queued = 0;
        true
    }

    /// Issues die `d`'s next GC read step (one page index of every victim) when the previous
    /// one has started and the GC programs keep up; ends the round after the last page.
    pub(crate) fn gc_issue(&mut self, d: usize, sched: &mut Sched, now: u64) {
        sched.ratio[d] = self.gc[d].ratio_q8;
        loop {
            let s = &mut self.gc[d];
            if !s.active || s.queued > 0 || s.sealed >= GC_AHEAD {
                return;
            }
            if s.cursor < s.pages {
                let k = s.cursor;
                s.cursor += 1;
                let fold = s.fold;
                let cur = s.cur;
                let mut n = 0;
                for (p, &b) in cur.iter().enumerate().take(self.g.planes) {
                    if b == NIL || self.blk_valid[b as usize] == 0 {
                        continue;
                    }
                    sched.enqueue(
                        d,
                        C_GC,
                        Tx {
                            ready: now,
                            kind: K_READ,
                            plane: p as u8,
                            flags: if fold { F_SLC } else { 0 },
                            page: k,
                            blk: b,
                            owner: d as u32,
                            ..Tx::default()
                        },
                    );
                    n += 1;
                }
                self.gc[d].queued = n;
                if n > 0 {
                    return;
                }
                // every victim already empty: skip ahead
                self.gc[d].cursor = self.gc[d].pages;
                continue;
            }
            self.gc_round_end(d, sched, now);
            return;
        }
    }

    /// All pages of the round's victims are read: they wait for their data's programs, and the
    /// next round starts when the die still needs one (otherwise the partial GC group is
    /// programmed so the victims can be erased).
    fn gc_round_end(&mut self, d: usize, sched: &mut Sched, now: u64) {
        self.gc[d].active = false;
        for p in 0..self.g.planes {
            let s = &mut self.gc[d];
            if s.cur[p] != NIL {
                s.waiting.push((s.cur[p], s.last_seq[p]));
                s.cur[p] = NIL;
                self.spare_gained(now);
            }
        }
        self.gc_try_erase(d, sched, now);
        if self.gc_start(d, now) {
            self.gc_issue(d, sched, now);
        } else if self.gc_group[d] != NIL && !self.gc[d].waiting.is_empty() {
            let id = self.gc_group[d];
            self.seal(id);
            self.enqueue_gc_program(d, id, sched);
        }
    }

    /// Queues the program of sealed GC group `id`.
    pub(crate) fn enqueue_gc_program(&mut self, d: usize, id: u32, sched: &mut Sched) {
        if !self.gc_pending[d].is_empty() || self.groups[id as usize].deps > 0 {
            // behind the reads of merged fragments, in page order
            self.gc_pending[d].push_back(id);
            return;
        }
        self.queue_gc_program(d, id, sched);
    }

    /// Queues the programs of die `d`'s sealed GC groups whose merge reads have all arrived.
    pub(crate) fn drain_gc_pending(&mut self, d: usize, sched: &mut Sched) {
        while let Some(&id) = self.gc_pending[d].front() {
            let gr = &self.groups[id as usize];
            if gr.deps > 0 || !gr.sealed {
                break;
            }
            self.gc_pending[d].pop_front();
            if gr.sectors == 0 {
                // a merge group of the hybrid scheme whose pages were all overwritten before
                // their reads: nothing to program
                self.hybrid_discard(id);
                continue;
            }
            self.queue_gc_program(d, id, sched);
        }
    }

    fn queue_gc_program(&mut self, d: usize, id: u32, sched: &mut Sched) {
        let gr = &self.groups[id as usize];
        sched.enqueue(
            d,
            C_GC,
            Tx {
                ready: gr.ready,
                kind: K_PROG,
                owner: id,
                ..Tx::default()
            },
        );
    }

    /// Queues the erase of every waiting victim whose moved data is programmed.
    pub(crate) fn gc_try_erase(&mut self, d: usize, sched: &mut Sched, now: u64) {
        let mut i = 0;
        while i < self.gc[d].waiting.len() {
            let (b, need) = self.gc[d].waiting[i];
            if need <= self.gc[d].programmed_seq {
                self.gc[d].waiting.swap_remove(i);
                self.erase_begin(b as usize);
                let plane = self.g.block_plane(b as usize);
                sched.enqueue(
                    d,
                    C_GC,
                    Tx {
                        ready: now,
                        kind: K_ERASE,
                        plane: (plane % self.g.planes) as u8,
                        blk: b,
                        ..Tx::default()
                    },
                );
            } else {
                i += 1;
            }
        }
    }

    /// Collects the live units of page `page` of `blk` into the scratch list; returns their
    /// NAND bytes.
    pub(crate) fn gc_page_live(&mut self, blk: u32, page: u32) -> u32 {
        let first = self.g.page_slot(blk as usize, page);
        let spp = self.g.spp as usize;
        let mut bytes = 0;
        let mut n = 0;
        for s in first..first + spp {
            let live = if self.remap {
                self.map.live_part(s)
            } else {
                self.map.live_whole(s)
            };
            if let Some((_, cost)) = live {
                bytes += cost * 512;
                self.scratch_units[n] = s as u32;
                n += 1;
            }
        }
        if n < spp {
            self.scratch_units[n] = NIL;
        }
        bytes
    }

    /// Moves the units collected by [`Ftl::gc_page_live`] into die `d`'s GC group (data in the
    /// controller at `ready`); full groups are queued as programs (untimed: `sched` is None and
    /// they are programmed at once).
    ///
    /// With `hold`, every group that receives a unit counts one more dependency (the
    /// firmware's move of this page, which ends later), and the groups are returned.
    pub(crate) fn gc_move_scratch(
        &mut self,
        d: usize,
        plane_in_die: usize,
        ready: u64,
        now: u64,
        mut sched: Option<&mut Sched>,
        hold: bool,
    ) -> GcJob {
        let mut held: GcJob = [NIL; 9];
        self.c.gc_pages_moved += 1;
        for i in 0..self.g.spp as usize {
            let old = self.scratch_units[i];
            if old == NIL {
                break;
            }
            // (unit, NAND sectors to move, the unit's other part to merge: slot, its sectors)
            let (l, cost, merge) = if self.remap {
                match self.remap_move_part(old) {
                    // merged away by a move of its other part in this page
                    None => continue,
                    Some(x) => x,
                }
            } else {
                let l = self.map.p2l.get(old as usize) as usize;
                (l, self.map.unit_cost(l), None)
            };
            loop {
                let id = self.gc_group_of(d, now);
                let mut full = false;
                let slot = self.group_put(id, cost, ready, &mut full);
                if let Some(slot) = slot {
                    match merge {
                        None => {
                            let ob = self.g.slot_block(old);
                            self.blk_valid[ob] -= cost;
                            self.map.copy_versions(old, slot);
                        }
                        Some((f, other)) => {
                            self.merge_move(l, f, other, slot, cost, id, now, sched.as_deref_mut())
                        }
                    }
                    self.map_unit(l, slot, cost);
                    self.c.gc_units_moved += 1;
                    if self.mcache.is_some() {
                        // the move changes the unit's translation page
                        if let Some(s) = sched.as_deref_mut() {
                            self.map_touch(l as u64, l as u64 + 1, true, ready, NIL, s);
                        }
                    }
                    if hold && !held.contains(&id) {
                        let free = held.iter().position(|&g| g == NIL);
                        held[free.expect("a GC page fills at most 9 groups")] = id;
                        self.groups[id as usize].deps += 1;
                    }
                    self.gc[d].last_seq[plane_in_die] = self.groups[id as usize].seq;
                }
                if full {
                    self.seal(id);
                    match sched.as_deref_mut() {
                        Some(s) => self.enqueue_gc_program(d, id, s),
                        None => {
                            self.group_programmed(id, now);
                        }
                    }
                }
                if slot.is_some() {
                    break;
                }
            }
        }
        held
    }

    /// What GC moves for the part of a unit in slot `old` on a remapping drive: the unit, its
    /// NAND sectors, and for a fragmented unit its fragment entry and the other part (slot,
    /// sectors), merged into the move; `None` when the slot is no longer live.
    #[inline(never)]
    #[allow(clippy::type_complexity)]
    fn remap_move_part(&self, old: u32) -> Option<(usize, u32, Option<(Frag, (u32, u32))>)> {
        let (l, c) = self.map.live_part(old as usize)?;
        Some(match self.map.frag(l) {
            Some(f) if f.fmask != 0 => {
                let (p, cp) = (self.map.l2p.get(l), self.map.unit_cost(l));
                let other = if old == p {
                    (f.fslot, f.fcost)
                } else {
                    (p, cp)
                };
                (l, (cp + f.fcost).min(self.g.us), Some((f, other)))
            }
            _ => (l, c, None),
        })
    }

    /// GC merges fragmented unit `l` into `slot` of group `id` and reads its other part
    /// (`other`: slot, sectors) for the group when timed.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn merge_move(
        &mut self,
        l: usize,
        f: Frag,
        (other, other_cost): (u32, u32),
        slot: u32,
        cost: u32,
        id: u32,
        now: u64,
        sched: Option<&mut Sched>,
    ) {
        self.merge_fragments(l, f, slot, cost);
        if let Some(s) = sched {
            // (nothing to read when the other part is in the controller: still buffered, or in
            // the page GC has just read)
            let same_page = self.g.slot_gpage(other) == self.g.slot_gpage(self.scratch_units[0]);
            if !self.is_buffered(other) && !same_page {
                self.merge_read(other, other_cost, id, now, s);
            }
        }
    }

    /// GC moves fragmented unit `l` (fragment entry `f`) whole into `slot` (`cost` NAND
    /// sectors): both old parts stop counting, the entry keeps only the sectors never written.
    /// The caller maps `l` to `slot`.
    fn merge_fragments(&mut self, l: usize, f: Frag, slot: u32, cost: u32) {
        let p = self.map.l2p.get(l);
        let cp = self.map.unit_cost(l);
        self.blk_valid[self.g.slot_block(p)] -= cp;
        self.blk_valid[self.g.slot_block(f.fslot)] -= f.fcost;
        let pmask = f.pmask | f.fmask;
        if pmask == self.full_mask() {
            self.map.frags.0.remove(&(l as u32));
        } else {
            self.map.frags.0.insert(
                l as u32,
                Frag {
                    pmask,
                    fmask: 0,
                    fslot: UNMAPPED,
                    fcost: 0,
                },
            );
        }
        if !self.map.cost.is_empty() {
            self.map.cost.set(l, cost as u8);
        }
        // the unit's slot carries every sector's version (tracking mode)
        self.map.copy_versions(p, slot);
        self.c.gc_merges += 1;
    }

    /// Queues the read of the other part of a unit GC merges into group `id`: the group's
    /// program waits for it.
    fn merge_read(&mut self, src: u32, sectors: u32, id: u32, now: u64, sched: &mut Sched) {
        let blk = self.g.slot_block(src);
        let plane = self.g.block_plane(blk);
        self.groups[id as usize].deps += 1;
        sched.enqueue(
            self.g.plane_die(plane),
            C_READ,
            Tx {
                ready: now,
                kind: K_READ,
                plane: (plane % self.g.planes) as u8,
                flags: F_RMW | if self.blk_slc[blk] { F_SLC } else { 0 },
                page: self.g.slot_page(src),
                blk: blk as u32,
                owner: NIL,
                group: id,
                bytes: sectors * 512,
                ..Tx::default()
            },
        );
    }
}
