//! The hybrid log-block scheme (`ftl.scheme = "hybrid"`): FAST, after Lee et al., "A log
//! buffer-based flash translation layer using fully-associative sector translation", ACM TECS
//! 6(3), 2007, which extends BAST (Kim et al., "A space-efficient flash translation layer for
//! CompactFlash systems", IEEE Trans. Consumer Electronics 48(2), 2002).
//!
//! **Layout.** A *logical block* is `planes × pages_per_block` consecutive logical pages (the
//! mapping unit is the page). It lives on die `lb mod dies` and is block-mapped: its *data
//! block* is one block on every plane of the die, and logical page `i` sits at page
//! `i / planes` of the block on plane `i mod planes`, so a page index of the data block is one
//! multi-plane program, as everywhere in the model. Each die runs FAST over its logical blocks:
//!
//! - one **sequential log block** (SW), owned by one logical block, holding its pages
//!   `0..next` at their data-block positions;
//! - `ftl.log_blocks` **random log blocks** (RW), fully associative: any page of any of the
//!   die's logical blocks, appended in arrival order.
//!
//! **Writes** (FAST's algorithm; the paper's in-place write into a free page of the data block is
//! left out: MLC NAND programs a block's pages in order): a write of page 0 of a logical block
//! releases the SW (its merge is queued) and starts a new one; a write of the SW owner's next
//! page appends to the SW; any other write goes to the open RW log block (a write to the SW
//! owner out of order first releases the SW). When the die has allocated all its random log
//! blocks, the oldest is merged: for every logical block with valid data in it, a **full
//! merge** reads every valid page of the logical block from its data block and the random log
//! blocks, programs them at their offsets into a free block and erases the old data block;
//! then the log block is erased. A released SW is **switched** (it becomes the data block, the
//! old data block is erased) when it holds the whole logical block in order, or completed by a
//! **partial merge** (the pages after its prefix copied from the data block) when it holds a
//! prefix; when neither is possible it is fully merged.
//!
//! **Timing.** Merges are ordinary flash work: page reads (merge reads, class GC), page-group
//! programs (copyback when `ftl.copyback`) and erases through the scheduler, one merge at a
//! time per die, walked page index by page index like a GC round. They run in idle die time
//! while the die can still take host writes, and first (before host programs) when a host write
//! waits for a random log page on that die. Pages still in the write buffer are not merged:
//! they stay valid in their log block.
//!
//! Every logical page is in exactly one place: its data block at its offset, the SW (at its
//! offset), a random log block, or the running merge's destination at its offset
//! ([`Ftl::hybrid_check`]). The page map (`l2p`) keeps where each page is: a read finds it at
//! the cost the firmware's per-command time already counts, whether it is in a log or a data
//! block.

use super::alloc::Group;
use super::mapping::UNMAPPED;
use super::{try_vec, try_vec_with_capacity, AllocError, Ftl, CLOSED, ERASING, FREE, NIL, VICTIM};
use crate::nand::MAX_PLANES;
use crate::sched::{Sched, Tx, C_GC, F_MERGE, GC_BACKGROUND, GC_CRITICAL, K_READ};
use std::collections::VecDeque;

/// Block roles.
pub(crate) const R_NONE: u8 = 0;
pub(crate) const R_DATA: u8 = 1;
pub(crate) const R_SW: u8 = 2;
pub(crate) const R_RW: u8 = 3;
pub(crate) const R_DEST: u8 = 4;

/// Free block sets a die keeps for a merge's destination: log blocks are opened only above.
const RESERVE: usize = 1;
/// Merge page groups a die may have waiting for their programs before the merge reads on.
const AHEAD: u32 = 2;

type Set = [u32; MAX_PLANES];

/// The sequential log block of a die.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Sw {
    /// The logical block it belongs to.
    pub lb: u32,
    pub blk: Set,
    /// Pages `0..next` of the logical block are in it.
    pub next: u32,
    /// The open page group (NIL: none).
    pub group: u32,
}

/// A random log block.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct LogBlk {
    pub blk: Set,
    /// Next position not yet handed out (`page · planes + plane`).
    pub pos: u32,
}

/// Merge work of a die, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Job {
    /// Full merge of a logical block (for a random log block being merged).
    Full(u32),
    /// A released sequential log block holding pages `0..next` of `lb`: switch, partial or
    /// full merge.
    Seq { lb: u32, blk: Set, next: u32 },
    /// The oldest random log block: merge the logical blocks with data in it, then erase it.
    Victim(Set),
}

/// The merge a die is running.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Run {
    pub lb: u32,
    /// Partial merge: the destination is the released SW, and only the old data block's pages
    /// from offset `from` on are copied.
    pub partial: bool,
    pub from: u32,
    pub dest: Set,
    /// The old data block (erased after; `[NIL; _]` when none).
    pub old: Set,
    /// A released SW merged fully (erased after; `[NIL; _]` when none).
    pub sw: Set,
    /// Next page index of the destination to read for.
    pub cursor: u32,
    /// Pages moved so far.
    pub moved: u32,
}

/// FAST state of one die.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct HyDie {
    pub sw: Option<Sw>,
    /// Random log blocks, oldest first; the last one takes writes.
    pub rw: VecDeque<LogBlk>,
    /// The open page group of the newest random log block (NIL: none).
    pub rw_group: u32,
    /// A random log block is being merged (it counts against `ftl.log_blocks` until its erase
    /// is queued).
    pub victim: bool,
    pub jobs: VecDeque<Job>,
    pub run: Option<Run>,
    /// Reads of the running merge's current page index not yet started.
    pub queued: u32,
}

/// Merge counters.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct MergeCounts {
    pub full: u64,
    pub partial: u64,
    pub switch: u64,
    /// Pages copied by merges (each one page read and one page programmed).
    pub pages: u64,
}

/// The hybrid scheme's tables.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Hybrid {
    /// Pages per logical block (`planes × pages_per_block`).
    pub lbp: u32,
    /// Logical blocks.
    pub lbs: u32,
    /// Random log blocks per die.
    pub n_rw: u32,
    /// Per logical block: its data block on each plane of its die (`planes` entries each; NIL
    /// when it has none).
    pub data: Vec<u32>,
    /// Per block: its role (`R_*`).
    pub role: Vec<u8>,
    /// Per block: page groups of the hybrid scheme using it whose program has not completed
    /// (counted on the block set's first plane).
    pub pend: Vec<u16>,
    pub dies: Vec<HyDie>,
    pub c: MergeCounts,
}

impl Hybrid {
    pub(crate) fn try_new(
        lbp: u32,
        lbs: u32,
        n_rw: u32,
        planes: usize,
        blocks: usize,
        dies: usize,
    ) -> Result<Hybrid, AllocError> {
        let mut ds = try_vec_with_capacity(dies, "hybrid die state")?;
        for _ in 0..dies {
            ds.push(HyDie {
                rw_group: NIL,
                ..HyDie::default()
            });
        }
        Ok(Hybrid {
            lbp,
            lbs,
            n_rw,
            data: try_vec(NIL, lbs as usize * planes, "hybrid block map")?,
            role: try_vec(R_NONE, blocks, "hybrid block roles")?,
            pend: try_vec(0u16, blocks, "hybrid block roles")?,
            dies: ds,
            c: MergeCounts::default(),
        })
    }

    /// Bytes [`Hybrid::try_new`] allocates.
    pub(crate) fn memory_estimate(lbs: u64, planes: u64, blocks: u64, dies: u64) -> u64 {
        lbs * planes * 4 + blocks * 3 + dies * (size_of::<HyDie>() as u64 + 256)
    }

    /// Whether a state read from a file has the tables of `fresh` (built for the
    /// configuration) and names only blocks and logical blocks that exist.
    pub(crate) fn check_shape(&self, fresh: &Hybrid, planes: usize) -> Result<(), String> {
        if (self.lbp, self.lbs, self.n_rw) != (fresh.lbp, fresh.lbs, fresh.n_rw)
            || self.data.len() != fresh.data.len()
            || self.role.len() != fresh.role.len()
            || self.pend.len() != fresh.pend.len()
            || self.dies.len() != fresh.dies.len()
        {
            return Err("its hybrid block map differs from the configuration's".into());
        }
        let blocks = self.role.len() as u32;
        let set_ok = |s: &Set| s.iter().take(planes).all(|&b| b == NIL || b < blocks);
        let lb_ok = |lb: u32| lb < self.lbs;
        let ok = self.data.iter().all(|&b| b == NIL || b < blocks)
            && self.dies.iter().all(|d| {
                d.sw.is_none_or(|s| lb_ok(s.lb) && set_ok(&s.blk))
                    && d.rw.iter().all(|l| set_ok(&l.blk))
                    && d.jobs.iter().all(|j| match j {
                        Job::Full(lb) => lb_ok(*lb),
                        Job::Seq { lb, blk, .. } => lb_ok(*lb) && set_ok(blk),
                        Job::Victim(blk) => set_ok(blk),
                    })
                    && d.run.is_none_or(|r| {
                        lb_ok(r.lb) && set_ok(&r.dest) && set_ok(&r.old) && set_ok(&r.sw)
                    })
            });
        if !ok {
            return Err("its hybrid tables name blocks that do not exist".into());
        }
        Ok(())
    }

    /// Nothing in flight: no open page group.
    pub(crate) fn no_open_groups(&self) -> bool {
        self.dies
            .iter()
            .all(|d| d.rw_group == NIL && d.sw.is_none_or(|s| s.group == NIL))
    }

    /// Merge work queued or running on any die.
    pub(crate) fn busy(&self) -> bool {
        self.dies
            .iter()
            .any(|d| d.run.is_some() || !d.jobs.is_empty())
    }
}

/// Where a write goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    /// A new sequential log block (page 0 of its logical block).
    SwNew,
    /// The sequential log block's next page.
    SwAppend,
    /// The open random log block.
    Rw,
}

impl Ftl {
    #[inline]
    pub(crate) fn hyb(&self) -> &Hybrid {
        self.hy.as_deref().expect("hybrid scheme")
    }

    #[inline]
    pub(crate) fn hyb_mut(&mut self) -> &mut Hybrid {
        self.hy.as_deref_mut().expect("hybrid scheme")
    }

    /// Logical block and offset of unit `l`.
    #[inline]
    pub(crate) fn lb_of(&self, l: usize) -> (u32, u32) {
        let lbp = self.hyb().lbp as usize;
        ((l / lbp) as u32, (l % lbp) as u32)
    }

    /// The die of logical block `lb`.
    #[inline]
    pub(crate) fn lb_die(&self, lb: u32) -> usize {
        lb as usize % self.g.dies
    }

    /// The slot of offset `off` in block set `blk` laid out as a data block.
    #[inline]
    pub(crate) fn slot_at(&self, blk: &Set, off: u32) -> u32 {
        let p = self.g.planes as u32;
        self.g.page_slot(blk[(off % p) as usize] as usize, off / p) as u32
    }

    /// The data block of `lb` (`[NIL; _]` when none).
    pub(crate) fn data_set(&self, lb: u32) -> Set {
        let h = self.hyb();
        let p = self.g.planes;
        let mut s = [NIL; MAX_PLANES];
        s[..p].copy_from_slice(&h.data[lb as usize * p..(lb as usize + 1) * p]);
        s
    }

    fn set_data(&mut self, lb: u32, s: &Set) {
        let p = self.g.planes;
        self.hyb_mut().data[lb as usize * p..(lb as usize + 1) * p].copy_from_slice(&s[..p]);
    }

    fn set_role(&mut self, s: &Set, role: u8) {
        let p = self.g.planes;
        let h = self.hyb_mut();
        for &b in s.iter().take(p) {
            h.role[b as usize] = role;
        }
    }

    /// Valid sectors in block set `s`.
    fn set_valid(&self, s: &Set) -> u64 {
        s.iter()
            .take(self.g.planes)
            .map(|&b| self.blk_valid[b as usize] as u64)
            .sum()
    }

    /// Free block sets of die `d` (the fewest free blocks of its planes).
    #[inline]
    pub(crate) fn free_sets(&self, d: usize) -> usize {
        let p0 = d * self.g.planes;
        (p0..p0 + self.g.planes)
            .map(|p| self.free[p].len())
            .min()
            .unwrap_or(0)
    }

    /// Takes a free block on every plane of die `d` in `role`.
    pub(crate) fn alloc_set(&mut self, d: usize, now: u64, role: u8) -> Set {
        let mut s = [NIL; MAX_PLANES];
        for (p, b) in s.iter_mut().enumerate().take(self.g.planes) {
            *b = self.alloc_block(d * self.g.planes + p, false, now);
        }
        self.set_role(&s, role);
        s
    }

    /// Block set `s` (no valid data left) is to be erased: at once when untimed, else once
    /// the merge groups up to `seq` are programmed (see [`Ftl::gc_try_erase`]).
    fn release_set(&mut self, d: usize, s: &Set, seq: u64, now: u64, timed: bool) {
        self.set_role(s, R_NONE);
        for &b in s.iter().take(self.g.planes) {
            let b = b as usize;
            debug_assert_eq!(self.blk_valid[b], 0, "released block {b} holds data");
            self.blk_state[b] = VICTIM;
            self.spare_gained(now);
            if timed {
                self.gc[d].waiting.push((b as u32, seq));
            } else {
                self.erase_begin(b);
                self.erase_done(b, now);
            }
        }
    }

    /// Pages still free in the die's open random log block.
    fn rw_open_room(&self, d: usize) -> u64 {
        let h = self.hyb();
        let x = &h.dies[d];
        let total = self.g.ppb as u64 * self.g.planes as u64;
        let mut room =
            x.rw.back()
                .map_or(0, |l| total.saturating_sub(l.pos as u64));
        if x.rw_group != NIL {
            room += self.g.planes as u64 - self.groups[x.rw_group as usize].plane as u64;
        }
        room
    }

    /// Random log pages die `d` can take now, when `sets` block sets are needed for new
    /// sequential log blocks first; `None` when those cannot be had.
    fn rw_room(&self, d: usize, sets: u64) -> Option<u64> {
        let h = self.hyb();
        let x = &h.dies[d];
        let spare = (self.free_sets(d) as u64).saturating_sub(RESERVE as u64);
        if sets > spare {
            return None;
        }
        let total = self.g.ppb as u64 * self.g.planes as u64;
        let slots = (h.n_rw as u64).saturating_sub(x.rw.len() as u64 + x.victim as u64);
        Some(self.rw_open_room(d) + slots.min(spare - sets) * total)
    }

    /// Released sequential log blocks of die `d` waiting for their merge.
    fn seq_pending(&self, d: usize) -> usize {
        self.hyb().dies[d]
            .jobs
            .iter()
            .filter(|j| matches!(j, Job::Seq { .. }))
            .count()
    }

    /// GC mode of die `d` under the hybrid scheme: merges go first while a host write would
    /// wait for a log block on it (no random log page left, or a released sequential log block
    /// still to merge), else they use idle time.
    pub(crate) fn hybrid_mode(&self, d: usize) -> u8 {
        match self.rw_room(d, 0) {
            Some(r) if r > 0 && self.free_sets(d) > RESERVE && self.seq_pending(d) == 0 => {
                GC_BACKGROUND
            }
            _ => GC_CRITICAL,
        }
    }

    /// Queues the merge of a released sequential log block: ahead of the random log blocks'
    /// merges (it is short, and the next sequential log block may wait for it), behind other
    /// released sequential log blocks.
    pub(crate) fn push_seq_job(&mut self, d: usize, s: Sw) {
        let x = &mut self.hyb_mut().dies[d];
        let at = x
            .jobs
            .iter()
            .take_while(|j| matches!(j, Job::Seq { .. }))
            .count();
        x.jobs.insert(
            at,
            Job::Seq {
                lb: s.lb,
                blk: s.blk,
                next: s.next,
            },
        );
        self.mark_changed(d);
    }

    /// FAST's choice for a write of page `off` of `lb` on die `d`: whether the sequential log
    /// block must be released first, and where the page goes.
    #[inline]
    pub(crate) fn hybrid_decide(&self, d: usize, lb: u32, off: u32) -> (bool, Place) {
        let sw = &self.hyb().dies[d].sw;
        if off == 0 {
            return (sw.is_some(), Place::SwNew);
        }
        match sw {
            Some(s) if s.lb == lb && s.next == off => (false, Place::SwAppend),
            Some(s) if s.lb == lb => (true, Place::Rw),
            _ => (false, Place::Rw),
        }
    }

    /// What the write of units `u0..u1` needs on each die it touches: `f(die, random log
    /// pages, new sequential log blocks)`, or `f(die, u64::MAX, _)` when it would open a
    /// sequential log block while another one still waits for its merge. Stops at the first
    /// `false` and returns it.
    fn hybrid_needs(&self, u0: u64, u1: u64, mut f: impl FnMut(usize, u64, u64) -> bool) -> bool {
        if u1 <= u0 {
            return true;
        }
        let h = self.hyb();
        let lbp = h.lbp as u64;
        let dies = self.g.dies as u64;
        let (lb0, lb1) = (u0 / lbp, (u1 - 1) / lbp);
        // each die once, with every part of the write it gets
        for lb in lb0..=lb1.min(lb0 + dies - 1) {
            let d = (lb % dies) as usize;
            let mut sw = h.dies[d].sw.map(|s| (s.lb as u64, s.next as u64));
            // released sequential log blocks not merged yet: a new one is opened only while at
            // most one waits (so a die never holds more than two)
            let mut seq = self.seq_pending(d);
            let (mut rw, mut sets) = (0u64, 0u64);
            let mut l = lb;
            while l <= lb1 {
                let a = u0.max(l * lbp) - l * lbp;
                let b = u1.min((l + 1) * lbp) - l * lbp;
                match sw {
                    _ if a == 0 => {
                        seq += sw.is_some() as usize;
                        if seq > 1 {
                            rw = u64::MAX;
                        }
                        sets += 1;
                        sw = Some((l, b));
                    }
                    Some((sl, sn)) if sl == l && sn == a => sw = Some((l, b)),
                    Some((sl, _)) if sl == l => {
                        seq += 1;
                        sw = None;
                        rw = rw.saturating_add(b - a);
                    }
                    _ => rw = rw.saturating_add(b - a),
                }
                l += dies;
            }
            if !f(d, rw, sets) {
                return false;
            }
        }
        true
    }

    /// Whether the write of units `u0..u1` can be placed now: the sequential log blocks it
    /// starts and the random log pages it needs are there on every die it touches.
    pub(crate) fn hybrid_room(&self, u0: u64, u1: u64) -> bool {
        self.hybrid_needs(u0, u1, |d, rw, sets| {
            self.rw_room(d, sets).is_some_and(|r| r >= rw)
        })
    }

    /// The dies where the write of units `u0..u1` waits for random log pages that will not come
    /// by themselves: every random log block allocated, none being merged, and the open one
    /// too full for the write (with one random log block per die). Their open log block is
    /// closed (its last pages stay unused) so that it is merged.
    pub(crate) fn hybrid_stuck(&self, u0: u64, u1: u64, out: &mut Vec<usize>) {
        self.hybrid_needs(u0, u1, |d, rw, sets| {
            let x = &self.hyb().dies[d];
            let room = self.rw_room(d, sets).unwrap_or(u64::MAX);
            if rw != u64::MAX && rw > room && !x.victim && x.rw.len() == self.hyb().n_rw as usize {
                out.push(d);
            }
            true
        });
    }

    /// Closes die `d`'s open random log block early (see [`Ftl::hybrid_stuck`]) when it is the
    /// only one, and starts the merge of the oldest; an open page group must have been sealed.
    pub(crate) fn hybrid_close_log(&mut self, d: usize) {
        let total = self.g.ppb * self.g.planes as u32;
        let x = &mut self.hyb_mut().dies[d];
        debug_assert_eq!(x.rw_group, NIL);
        if x.rw.len() == 1 {
            if let Some(l) = x.rw.back_mut() {
                l.pos = total;
            }
        }
        self.hybrid_maybe_victim(d);
        self.mark_changed(d);
    }

    /// After untimed writing: a die whose random log blocks are all allocated starts merging
    /// the oldest, as the timed path does when it allocates the last.
    pub(crate) fn hybrid_settle(&mut self) {
        for d in 0..self.g.dies {
            self.hybrid_maybe_victim(d);
        }
    }

    /// A page group of the hybrid scheme on die `d`: page `page` of block set `blk`, filled
    /// from plane `first` on; a merge group (`gc`) gets the die's next GC sequence number.
    pub(crate) fn hybrid_group(
        &mut self,
        d: usize,
        blk: &Set,
        page: u32,
        first: u32,
        gc: bool,
    ) -> u32 {
        let id = match self.group_free.pop() {
            Some(id) => id,
            None => {
                self.groups.push(Group::default());
                (self.groups.len() - 1) as u32
            }
        };
        let seq = if gc {
            let s = &mut self.gc[d];
            s.next_seq += 1;
            s.next_seq
        } else {
            0
        };
        let last = page + 1 == self.g.ppb;
        let gr = &mut self.groups[id as usize];
        gr.die = d as u32;
        gr.page = page;
        gr.blk = *blk;
        gr.slc = false;
        gr.gc = gc;
        gr.last = last;
        gr.plane = first;
        gr.clear(seq);
        gr.hybrid = true;
        self.hyb_mut().pend[blk[0] as usize] += 1;
        id
    }

    /// Puts one page into plane `p` of hybrid group `id` (data in the controller at `ready`);
    /// returns its slot.
    #[inline]
    pub(crate) fn hybrid_put(&mut self, id: u32, p: u32, ready: u64) -> u32 {
        let us = self.g.us;
        let ppb = self.g.ppb as usize;
        let gr = &mut self.groups[id as usize];
        debug_assert_eq!(gr.pmask & (1 << p), 0, "page put twice");
        gr.pmask |= 1 << p;
        gr.plane = p + 1;
        gr.used_planes = gr.used_planes.max(p + 1);
        gr.sectors += us;
        gr.ready = gr.ready.max(ready);
        (gr.blk[p as usize] as usize * ppb + gr.page as usize) as u32
    }

    /// Program bookkeeping of hybrid group `id` (called by [`Ftl::group_programmed`]).
    pub(crate) fn hybrid_programmed(&mut self, id: u32) {
        let b0 = self.groups[id as usize].blk[0] as usize;
        self.hyb_mut().pend[b0] -= 1;
    }

    /// A merge group left without data (its pages were overwritten before their reads):
    /// recycled without a program.
    pub(crate) fn hybrid_discard(&mut self, id: u32) {
        let gr = &self.groups[id as usize];
        let (d, seq, b0) = (gr.die as usize, gr.seq, gr.blk[0] as usize);
        debug_assert!(gr.hybrid && gr.gc);
        self.hyb_mut().pend[b0] -= 1;
        let s = &mut self.gc[d];
        s.sealed -= 1;
        s.programmed_seq = s.programmed_seq.max(seq);
        self.group_free.push(id);
    }

    /// Whether die `d` has programmed every page group of block set `s`.
    #[inline]
    fn set_programmed(&self, s: &Set) -> bool {
        self.hyb().pend[s[0] as usize] == 0
    }

    /// The random log block of die `d` that is full and oldest becomes the one merged, once
    /// the die has allocated all its random log blocks.
    pub(crate) fn hybrid_maybe_victim(&mut self, d: usize) {
        let total = self.g.ppb * self.g.planes as u32;
        let h = self.hyb_mut();
        let x = &mut h.dies[d];
        if x.victim || x.rw.len() < h.n_rw as usize {
            return;
        }
        let front_full =
            x.rw.front().is_some_and(|l| l.pos >= total) && (x.rw.len() > 1 || x.rw_group == NIL);
        if !front_full {
            return;
        }
        let v = x.rw.pop_front().expect("checked");
        x.victim = true;
        x.jobs.push_back(Job::Victim(v.blk));
        self.mark_changed(d);
    }

    /// The slot of the page of `l` a merge of kind (`partial`, from offset `from`, the released
    /// SW `sw` merged fully) moves, if it moves one.
    fn merge_source(
        &self,
        l: usize,
        off: u32,
        partial: bool,
        from: u32,
        old: &Set,
        sw: &Set,
    ) -> Option<u32> {
        if off < from {
            return None;
        }
        let s = self.map.l2p.get(l);
        if s == UNMAPPED {
            return None;
        }
        let b = self.g.slot_block(s) as u32;
        let in_set = |x: &Set| x.iter().take(self.g.planes).any(|&y| y == b);
        if partial {
            return in_set(old).then_some(s);
        }
        let role = self.hyb().role[b as usize];
        let take = match role {
            R_DATA => in_set(old),
            R_RW => true,
            R_SW => in_set(sw),
            _ => false,
        };
        // pages still in the write buffer stay where they are
        (take && !self.is_buffered(s)).then_some(s)
    }

    /// Whether any page of `lb` is a merge source.
    fn any_source(&self, lb: u32, partial: bool, from: u32, old: &Set, sw: &Set) -> bool {
        let lbp = self.hyb().lbp;
        let base = lb as usize * lbp as usize;
        (from..lbp).any(|off| {
            let l = base + off as usize;
            l < self.user_units as usize
                && self.merge_source(l, off, partial, from, old, sw).is_some()
        })
    }

    /// Moves the page of `l` from `src` to `dst` (a merge copy).
    #[inline]
    pub(crate) fn hybrid_move(&mut self, l: usize, src: u32, dst: u32) {
        let us = self.g.us;
        self.blk_valid[self.g.slot_block(src)] -= us;
        self.map_unit(l, dst, us);
        self.map.copy_versions(src, dst);
        self.hyb_mut().c.pages += 1;
    }

    /// Starts die `d`'s next merge job, if it can start now; returns whether anything changed
    /// (a job started, expanded or completed). Untimed (`sched` None): the merge runs whole.
    fn hybrid_start_job(&mut self, d: usize, now: u64, timed: bool) -> bool {
        let Some(&job) = self.hyb().dies[d].jobs.front() else {
            return false;
        };
        let none = [NIL; MAX_PLANES];
        let lbp = self.hyb().lbp;
        match job {
            Job::Victim(v) => {
                if timed && !self.set_programmed(&v) {
                    return false;
                }
                let mut lbs: Vec<u32> = Vec::new();
                for &b in v.iter().take(self.g.planes) {
                    for k in 0..self.g.ppb {
                        let s = self.g.page_slot(b as usize, k);
                        if let Some(l) = self.map.live(s) {
                            lbs.push((l / lbp as usize) as u32);
                        }
                    }
                }
                lbs.sort_unstable();
                lbs.dedup();
                let seq = self.gc[d].next_seq;
                let x = &mut self.hyb_mut().dies[d];
                if lbs.is_empty() {
                    x.jobs.pop_front();
                    x.victim = false;
                    self.release_set(d, &v, seq, now, timed);
                    self.mark_changed(d);
                } else {
                    for &lb in lbs.iter().rev() {
                        x.jobs.push_front(Job::Full(lb));
                    }
                }
                true
            }
            Job::Full(lb) => {
                let old = self.data_set(lb);
                if timed && old[0] != NIL && !self.set_programmed(&old) {
                    return false;
                }
                let any = self.any_source(lb, false, 0, &old, &none);
                if any && self.free_sets(d) == 0 {
                    return false; // waits for an erase
                }
                self.hyb_mut().dies[d].jobs.pop_front();
                self.hyb_mut().c.full += 1;
                if !any {
                    if old[0] != NIL && self.set_valid(&old) == 0 {
                        self.set_data(lb, &none);
                        let seq = self.gc[d].next_seq;
                        self.release_set(d, &old, seq, now, timed);
                    }
                    return true;
                }
                let dest = self.alloc_set(d, now, R_DEST);
                self.start_run(d, lb, false, 0, dest, old, none, now, timed);
                true
            }
            Job::Seq { lb, blk, next } => {
                if timed && !self.set_programmed(&blk) {
                    return false;
                }
                let old = self.data_set(lb);
                if timed && old[0] != NIL && !self.set_programmed(&old) {
                    return false;
                }
                let old_empty = old[0] == NIL || self.set_valid(&old) == 0;
                if next == lbp && old_empty {
                    // switch: the log block is the logical block, whole and in order
                    self.hyb_mut().dies[d].jobs.pop_front();
                    self.hyb_mut().c.switch += 1;
                    self.set_data(lb, &blk);
                    self.set_role(&blk, R_DATA);
                    if old[0] != NIL {
                        let seq = self.gc[d].next_seq;
                        self.release_set(d, &old, seq, now, timed);
                    }
                    return true;
                }
                // a prefix: the rest of the logical block is copied from the data block, when
                // no page of the prefix is still valid there
                let prefix_ok = next < lbp
                    && (old_empty
                        || (0..next).all(|off| {
                            let l = lb as usize * lbp as usize + off as usize;
                            l >= self.user_units as usize || {
                                let s = self.map.l2p.get(l);
                                s == UNMAPPED || {
                                    let b = self.g.slot_block(s) as u32;
                                    !old.iter().take(self.g.planes).any(|&y| y == b)
                                }
                            }
                        }));
                if prefix_ok {
                    self.hyb_mut().dies[d].jobs.pop_front();
                    self.hyb_mut().c.partial += 1;
                    self.set_role(&blk, R_DEST);
                    self.start_run(d, lb, true, next, blk, old, none, now, timed);
                    return true;
                }
                if self.free_sets(d) == 0 {
                    return false;
                }
                self.hyb_mut().dies[d].jobs.pop_front();
                self.hyb_mut().c.full += 1;
                let dest = self.alloc_set(d, now, R_DEST);
                self.start_run(d, lb, false, 0, dest, old, blk, now, timed);
                true
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn start_run(
        &mut self,
        d: usize,
        lb: u32,
        partial: bool,
        from: u32,
        dest: Set,
        old: Set,
        sw: Set,
        now: u64,
        timed: bool,
    ) {
        let run = Run {
            lb,
            partial,
            from,
            dest,
            old,
            sw,
            cursor: from / self.g.planes as u32,
            moved: 0,
        };
        self.hyb_mut().dies[d].run = Some(run);
        if !timed {
            self.run_untimed(d, now);
        }
    }

    /// Untimed: every page of the running merge moved at once, then the merge ends.
    fn run_untimed(&mut self, d: usize, now: u64) {
        let r = self.hyb().dies[d].run.expect("running");
        let planes = self.g.planes as u32;
        let lbp = self.hyb().lbp;
        let base = r.lb as usize * lbp as usize;
        let mut moved = 0;
        for off in r.from..lbp {
            let l = base + off as usize;
            if l >= self.user_units as usize {
                break;
            }
            if let Some(src) = self.merge_source(l, off, r.partial, r.from, &r.old, &r.sw) {
                let dst = self.slot_at(&r.dest, off);
                self.hybrid_move(l, src, dst);
                let b = r.dest[(off % planes) as usize] as usize;
                let page = off / planes;
                self.blk_prog[b] = self.blk_prog[b].max(page as u16 + 1);
                if page + 1 == self.g.ppb {
                    self.blk_state[b] = CLOSED;
                }
                moved += 1;
            }
        }
        if let Some(run) = self.hyb_mut().dies[d].run.as_mut() {
            run.moved += moved;
        }
        self.finish_run(d, now, false);
    }

    /// The running merge of die `d` has read every page it moves: the destination becomes the
    /// data block, the blocks it emptied are erased once the copies are programmed.
    fn finish_run(&mut self, d: usize, now: u64, timed: bool) {
        let r = self.hyb_mut().dies[d].run.take().expect("running");
        let none = [NIL; MAX_PLANES];
        let seq = self.gc[d].next_seq;
        if !r.partial && r.moved == 0 {
            self.set_data(r.lb, &none);
            self.release_set(d, &r.dest, seq, now, timed);
        } else {
            self.set_data(r.lb, &r.dest);
            self.set_role(&r.dest, R_DATA);
        }
        if r.old[0] != NIL {
            self.release_set(d, &r.old, seq, now, timed);
        }
        if r.sw[0] != NIL {
            self.release_set(d, &r.sw, seq, now, timed);
        }
        self.mark_changed(d);
    }

    /// Timed merging on die `d`: starts jobs and issues the running merge's reads one page
    /// index of the destination at a time (the next once the previous reads have started and
    /// the merge's programs keep up); queues the erases whose data is programmed.
    pub(crate) fn hybrid_issue(&mut self, d: usize, sched: &mut Sched, now: u64) {
        loop {
            let x = &self.hyb().dies[d];
            let Some(r) = x.run else {
                if self.hybrid_start_job(d, now, true) {
                    continue;
                }
                break;
            };
            if x.queued > 0 || self.gc[d].sealed >= AHEAD {
                break;
            }
            if r.cursor >= self.g.ppb {
                self.finish_run(d, now, true);
                continue;
            }
            let k = r.cursor;
            self.hyb_mut().dies[d].run.as_mut().expect("running").cursor = k + 1;
            let planes = self.g.planes as u32;
            let lbp = self.hyb().lbp;
            let base = r.lb as usize * lbp as usize;
            let mut srcs = [(NIL, NIL); MAX_PLANES];
            let mut n = 0;
            for p in 0..planes {
                let off = k * planes + p;
                let l = base + off as usize;
                if l >= self.user_units as usize {
                    break;
                }
                if let Some(s) = self.merge_source(l, off, r.partial, r.from, &r.old, &r.sw) {
                    srcs[n] = (l as u32, s);
                    n += 1;
                }
            }
            if n == 0 {
                continue;
            }
            let id = self.hybrid_group(d, &r.dest, k, 0, true);
            self.groups[id as usize].deps = n as u32;
            self.seal(id);
            self.gc_pending[d].push_back(id);
            for &(l, s) in srcs.iter().take(n) {
                let b = self.g.slot_block(s);
                sched.enqueue(
                    d,
                    C_GC,
                    Tx {
                        ready: now,
                        kind: K_READ,
                        plane: (self.g.block_plane(b) % self.g.planes) as u8,
                        flags: F_MERGE,
                        page: self.g.slot_page(s),
                        blk: b as u32,
                        owner: l,
                        group: id,
                        bytes: self.g.page_bytes as u32,
                        ..Tx::default()
                    },
                );
            }
            self.hyb_mut().dies[d].queued = n as u32;
            break;
        }
        self.gc_try_erase(d, sched, now);
    }

    /// The merge read of unit `l` from slot `src` for group `id` is issued: when the page is
    /// still current it moves into the group (data in the controller at `ready`); returns
    /// whether it did.
    pub(crate) fn hybrid_merge_read(&mut self, l: usize, src: u32, id: u32, ready: u64) -> bool {
        if self.map.l2p.get(l) != src {
            return false;
        }
        let (_, off) = self.lb_of(l);
        let p = off % self.g.planes as u32;
        let dst = self.hybrid_put(id, p, ready);
        self.hybrid_move(l, src, dst);
        let d = self.groups[id as usize].die as usize;
        if let Some(r) = self.hyb_mut().dies[d].run.as_mut() {
            r.moved += 1;
        }
        true
    }

    /// Runs die `d`'s merge jobs without timing until none can go on.
    fn hybrid_jobs_untimed(&mut self, d: usize) {
        while self.hybrid_start_job(d, 0, false) {}
        debug_assert!(self.hyb().dies[d].jobs.is_empty(), "untimed merge stuck");
    }

    /// Untimed: marks slot `s` (block `b`, page `page`) programmed.
    fn programmed_untimed(&mut self, s: u32) {
        let b = self.g.slot_block(s);
        let page = self.g.slot_page(s);
        self.blk_prog[b] = self.blk_prog[b].max(page as u16 + 1);
        if page + 1 == self.g.ppb {
            self.blk_state[b] = CLOSED;
        }
    }

    /// Writes unit `l` (whole) under the hybrid scheme without timing.
    pub(crate) fn hybrid_fill_unit(&mut self, l: usize) {
        let (lb, off) = self.lb_of(l);
        let d = self.lb_die(lb);
        let (release, place) = self.hybrid_decide(d, lb, off);
        if release {
            let s = self.hyb_mut().dies[d]
                .sw
                .take()
                .expect("a sequential log block");
            self.push_seq_job(d, s);
            self.hybrid_jobs_untimed(d);
        }
        let total = self.g.ppb * self.g.planes as u32;
        if place == Place::Rw && self.hyb().dies[d].rw.back().is_none_or(|x| x.pos >= total) {
            // no random log page left: the oldest random log block is merged first (with the
            // page's old data still valid, as FAST merges before it writes)
            let n_rw = self.hyb().n_rw as usize;
            if self.hyb().dies[d].rw.len() >= n_rw {
                let v = self.hyb_mut().dies[d].rw.pop_front().expect("a log block");
                let x = &mut self.hyb_mut().dies[d];
                x.victim = true;
                x.jobs.push_back(Job::Victim(v.blk));
                self.hybrid_jobs_untimed(d);
            }
        }
        let old = self.map.l2p.get(l);
        if old != UNMAPPED {
            self.invalidate(l, old);
        } else {
            self.mapped_units += 1;
        }
        let slot = match place {
            Place::SwNew | Place::SwAppend => {
                if place == Place::SwNew {
                    let blk = self.alloc_set(d, 0, R_SW);
                    self.hyb_mut().dies[d].sw = Some(Sw {
                        lb,
                        blk,
                        next: 0,
                        group: NIL,
                    });
                }
                let sw = self.hyb_mut().dies[d].sw.as_mut().expect("sequential log");
                sw.next += 1;
                let blk = sw.blk;
                self.slot_at(&blk, off)
            }
            Place::Rw => {
                let full = self.hyb().dies[d].rw.back().is_none_or(|x| x.pos >= total);
                if full {
                    let blk = self.alloc_set(d, 0, R_RW);
                    self.hyb_mut().dies[d].rw.push_back(LogBlk { blk, pos: 0 });
                }
                let planes = self.g.planes as u32;
                let x = self.hyb_mut().dies[d].rw.back_mut().expect("a log block");
                let pos = x.pos;
                x.pos += 1;
                let blk = x.blk;
                self.g
                    .page_slot(blk[(pos % planes) as usize] as usize, pos / planes)
                    as u32
            }
        };
        self.programmed_untimed(slot);
        self.map_unit(l, slot, self.g.us);
    }

    /// `steady` preconditioning under the hybrid scheme: random single-page overwrites, in
    /// windows of the drive's random log capacity, until the marginal write amplification
    /// (pages written and merged per page written) changes by less than 1 % over three windows,
    /// or `ftl.steady_overwrite` × the capacity has been written.
    pub(crate) fn hybrid_steady(&mut self, seed: u64) {
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let n = (self.steady_overwrite * self.user_units as f64) as u64;
        let h = self.hyb();
        let window = (h.n_rw as u64 * h.lbp as u64 * self.g.dies as u64).max(256);
        let mut done = 0u64;
        let mut was: Vec<f64> = Vec::new();
        while done < n {
            let moved0 = self.hyb().c.pages;
            let k = window.min(n - done);
            for _ in 0..k {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let l = (rng % self.user_units) as usize;
                self.hybrid_fill_unit(l);
            }
            done += k;
            let wa = 1.0 + (self.hyb().c.pages - moved0) as f64 / k as f64;
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

    /// The hybrid scheme's invariants: every mapped page lies where its logical block's
    /// layout puts it (its data block or the running merge's destination at its offset, the
    /// sequential log block below `next`, or a random log block of its die), every used block
    /// has one role, the log blocks of a die are within `ftl.log_blocks`.
    pub(crate) fn hybrid_check(&self) -> Result<(), String> {
        let h = self.hyb();
        let planes = self.g.planes;
        let blocks = self.blk_state.len();
        // expected roles, and for data-layout blocks the logical block (and SW `next`)
        let mut want = vec![R_NONE; blocks];
        let mut owner = vec![(NIL, u32::MAX); blocks];
        let mut put = |s: &Set, role: u8, lb: u32, next: u32| -> Result<(), String> {
            for &b in s.iter().take(planes) {
                let b = b as usize;
                if want[b] != R_NONE {
                    return Err(format!("block {b} has two roles ({} and {role})", want[b]));
                }
                want[b] = role;
                owner[b] = (lb, next);
            }
            Ok(())
        };
        for lb in 0..h.lbs {
            let s = self.data_set(lb);
            if s[0] != NIL {
                put(&s, R_DATA, lb, h.lbp)?;
            }
        }
        for (d, x) in h.dies.iter().enumerate() {
            if x.rw.len() + x.victim as usize > h.n_rw as usize {
                return Err(format!(
                    "die {d}: {} random log blocks, more than {}",
                    x.rw.len() + x.victim as usize,
                    h.n_rw
                ));
            }
            if let Some(s) = x.sw {
                put(&s.blk, R_SW, s.lb, s.next)?;
            }
            for l in &x.rw {
                put(&l.blk, R_RW, NIL, 0)?;
            }
            let mut victims = 0;
            for j in &x.jobs {
                match *j {
                    Job::Seq { lb, blk, next } => put(&blk, R_SW, lb, next)?,
                    Job::Victim(blk) => {
                        victims += 1;
                        put(&blk, R_RW, NIL, 0)?
                    }
                    Job::Full(_) => {}
                }
            }
            if victims != x.victim as usize {
                return Err(format!(
                    "die {d}: {victims} victims queued, flag {}",
                    x.victim
                ));
            }
            if let Some(r) = x.run {
                put(&r.dest, R_DEST, r.lb, h.lbp)?;
                // (the old data block is still the logical block's data block until the merge
                // ends; a released sequential log block merged fully is still read from)
                if r.sw[0] != NIL {
                    put(&r.sw, R_SW, r.lb, h.lbp)?;
                }
                if r.old != self.data_set(r.lb) {
                    return Err(format!(
                        "die {d}: the merge of {} reads another data block",
                        r.lb
                    ));
                }
            }
        }
        for (b, &w) in want.iter().enumerate() {
            if h.role[b] != w {
                return Err(format!("block {b}: role {} but {w} expected", h.role[b]));
            }
            let st = self.blk_state[b];
            if w != R_NONE && matches!(st, FREE | ERASING) {
                return Err(format!("block {b}: role {w} but free or erasing"));
            }
            if w == R_NONE && self.blk_valid[b] != 0 {
                return Err(format!(
                    "block {b}: {} valid sectors and no role",
                    self.blk_valid[b]
                ));
            }
        }
        for (l, slot) in self.map.l2p.iter().enumerate() {
            if slot == UNMAPPED {
                continue;
            }
            let (lb, off) = (l as u32 / h.lbp, l as u32 % h.lbp);
            let b = self.g.slot_block(slot);
            let d = self.g.plane_die(self.g.block_plane(b));
            if d != self.lb_die(lb) {
                return Err(format!(
                    "unit {l}: on die {d}, its logical block {lb} on die {}",
                    self.lb_die(lb)
                ));
            }
            match want[b] {
                R_RW => {}
                R_DATA | R_SW | R_DEST => {
                    let (olb, next) = owner[b];
                    let right_plane = off as usize % planes == self.g.block_plane(b) % planes;
                    let right_page = self.g.slot_page(slot) == off / planes as u32;
                    if olb != lb || !right_plane || !right_page || off >= next {
                        return Err(format!(
                            "unit {l} (logical block {lb}, page {off}): slot {slot} in block {b} (role {}, of logical block {olb}) is not its place",
                            want[b]
                        ));
                    }
                }
                r => return Err(format!("unit {l}: slot {slot} in block {b} of role {r}")),
            }
        }
        Ok(())
    }
}
