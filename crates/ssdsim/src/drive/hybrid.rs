//! The drive's side of the hybrid log-block scheme ([`crate::ftl::hybrid`]): host writes placed
//! into the log blocks of their logical block's die, the room check of a write, sealing the
//! open log groups, and the merge reads as the dies issue them.

use super::{Drive, Shared};
use crate::events::{ev, EV_FLUSH};
use crate::ftl::hybrid::{LogBlk, Place, Sw, R_RW, R_SW};
use crate::ftl::NIL;
use crate::sched::Tx;

impl Drive {
    /// Whether a write of `len` bytes over units `u0..u1` can enter the buffer now (hybrid):
    /// buffer space, and the log pages its dies need.
    #[inline(never)]
    pub(super) fn hybrid_can_admit(&self, u0: u64, u1: u64, len: u64) -> bool {
        self.ctl.fits(len) && self.ftl.hybrid_room(u0, u1)
    }

    /// Places unit `l` of a host write (data in the controller at `ready`, `cache_bytes` of
    /// buffer) into a log block of its die, as FAST decides; returns its slot, its page group
    /// and whether the group is now full (the caller seals it). The room was checked at
    /// admission.
    pub(super) fn place_hybrid(
        &mut self,
        l: usize,
        ready: u64,
        cache_bytes: u64,
        now: u64,
    ) -> (u32, u32, bool) {
        let (lb, off) = self.ftl.lb_of(l);
        let d = self.ftl.lb_die(lb);
        let (release, place) = self.ftl.hybrid_decide(d, lb, off);
        if release {
            self.hybrid_release_sw(d);
        }
        let planes = self.ftl.g.planes as u32;
        let (slot, id, full) = match place {
            Place::SwNew | Place::SwAppend => {
                if place == Place::SwNew {
                    let blk = self.ftl.alloc_set(d, now, R_SW);
                    self.ftl.hyb_mut().dies[d].sw = Some(Sw {
                        lb,
                        blk,
                        next: 0,
                        group: NIL,
                    });
                    self.ftl.mark_changed(d);
                }
                let sw = self.ftl.hyb().dies[d].sw.expect("sequential log block");
                let (k, p) = (off / planes, off % planes);
                let mut id = sw.group;
                if id != NIL {
                    let gr = &self.ftl.groups[id as usize];
                    if gr.page != k || gr.plane > p {
                        self.seal_host(id, now);
                        id = NIL;
                    }
                }
                if id == NIL {
                    id = self.ftl.hybrid_group(d, &sw.blk, k, p, false);
                }
                let slot = self.ftl.hybrid_put(id, p, ready);
                let full = p + 1 == planes;
                let s = self.ftl.hyb_mut().dies[d]
                    .sw
                    .as_mut()
                    .expect("sequential log block");
                s.next += 1;
                s.group = if full { NIL } else { id };
                (slot, id, full)
            }
            Place::Rw => {
                let total = self.ftl.g.ppb * planes;
                let x = &self.ftl.hyb().dies[d];
                let mut id = x.rw_group;
                if id == NIL {
                    if x.rw.back().is_none_or(|b| b.pos >= total) {
                        let blk = self.ftl.alloc_set(d, now, R_RW);
                        self.ftl.hyb_mut().dies[d]
                            .rw
                            .push_back(LogBlk { blk, pos: 0 });
                        self.ftl.hybrid_maybe_victim(d);
                        self.ftl.mark_changed(d);
                    }
                    let x = self.ftl.hyb_mut().dies[d].rw.back_mut().expect("log block");
                    let (k, p0, blk) = (x.pos / planes, x.pos % planes, x.blk);
                    x.pos = (k + 1) * planes;
                    id = self.ftl.hybrid_group(d, &blk, k, p0, false);
                    self.ftl.hyb_mut().dies[d].rw_group = id;
                }
                let p = self.ftl.groups[id as usize].plane;
                let slot = self.ftl.hybrid_put(id, p, ready);
                let full = p + 1 == planes;
                if full {
                    self.ftl.hyb_mut().dies[d].rw_group = NIL;
                    self.ftl.hybrid_maybe_victim(d);
                    self.ftl.mark_changed(d);
                }
                (slot, id, full)
            }
        };
        self.ftl.groups[id as usize].cache_bytes += cache_bytes;
        (slot, id, full)
    }

    /// Releases die `d`'s sequential log block: its open page group is programmed, and its
    /// merge (switch, partial or full) is queued.
    fn hybrid_release_sw(&mut self, d: usize) {
        let Some(s) = self.ftl.hyb_mut().dies[d].sw.take() else {
            return;
        };
        if s.group != NIL {
            self.seal_host(s.group, self.sched.now);
        }
        self.ftl.push_seq_job(d, s);
    }

    /// Programs every partly filled log page group (the buffer needs the space, or the flush
    /// timer of a drive without a write buffer fired).
    pub(super) fn hybrid_seal_open(&mut self, now: u64) {
        for d in 0..self.ftl.g.dies {
            let x = &self.ftl.hyb().dies[d];
            let (rw, sw) = (x.rw_group, x.sw.map_or(NIL, |s| s.group));
            for id in [rw, sw] {
                if id != NIL && self.ftl.groups[id as usize].sectors > 0 {
                    self.seal_host(id, now);
                }
            }
            let x = &mut self.ftl.hyb_mut().dies[d];
            if rw != NIL {
                x.rw_group = NIL;
            }
            if let Some(s) = x.sw.as_mut() {
                s.group = NIL;
            }
            if rw != NIL {
                self.ftl.hybrid_maybe_victim(d);
                self.ftl.mark_changed(d);
            }
        }
    }

    /// Writes wait (hybrid): when nothing on its way to the NAND will free buffer space, the
    /// open log page groups are programmed; a die whose open random log block cannot take the
    /// first waiting write, with no merge to make room, closes it so that it is merged.
    #[cold]
    #[inline(never)]
    pub(super) fn hybrid_unblock(&mut self, now: u64) {
        let Some(&e) = self.ctl.waiters.front() else {
            return;
        };
        let c = &self.host.cmds[e as usize];
        if c.kind != crate::OpKind::Write {
            return;
        }
        // the part of the write not in the buffer yet
        let us = self.ftl.g.us as u64;
        let ua = c.u0 + c.in_units;
        let rest = c.off + c.len - c.off.max(ua * us * 512);
        if self.ftl.host_sealed == 0 && !self.ctl.fits(rest) {
            self.hybrid_seal_open(now);
        }
        let c = &self.host.cmds[e as usize];
        let mut stuck = Vec::new();
        self.ftl.hybrid_stuck(c.u0 + c.in_units, c.u1, &mut stuck);
        for d in stuck {
            let x = &self.ftl.hyb().dies[d];
            let id = x.rw_group;
            if id != NIL && x.rw.len() == 1 {
                self.seal_host(id, now);
                self.ftl.hyb_mut().dies[d].rw_group = NIL;
            }
            self.ftl.hybrid_close_log(d);
        }
    }

    /// Whether a log page group is open (holding data not yet sealed).
    fn hybrid_open_groups(&self) -> bool {
        !self.ftl.hyb().no_open_groups()
    }

    /// Arms the flush timer (hybrid): only a drive without a write buffer programs a partly
    /// filled log page group on a timer (its writes complete when programmed); with a buffer the
    /// group waits for its die's next write, the buffer's need or a merge, so that a random
    /// write does not leave a plane's page of the log block unused.
    pub(super) fn hybrid_arm_flush(&mut self, sh: &mut Shared) {
        if self.ctl.cache_cap == 0 && self.ctl.flush_at == u64::MAX && self.hybrid_open_groups() {
            let t = self.ctl.last_arrival + self.ctl.coalesce;
            self.ctl.flush_at = t;
            sh.push(t, ev(EV_FLUSH, self.idx, 0));
        }
    }

    /// The flush timer fired (hybrid).
    pub(super) fn hybrid_flush_timer(&mut self, sh: &mut Shared, now: u64) {
        if !self.hybrid_open_groups() {
            return;
        }
        if self.ctl.last_arrival + self.ctl.coalesce <= now {
            self.hybrid_seal_open(now);
            self.service(sh, now);
        } else {
            self.hybrid_arm_flush(sh);
        }
    }

    /// A merge read of die `d` is issued at `now` (the page array read ends at `array_end`,
    /// channel transfers book from `*t`): when its page is still current it moves into its
    /// merge group. Returns whether a page was read.
    pub(super) fn hybrid_merge_read(
        &mut self,
        d: usize,
        tx: &Tx,
        now: u64,
        array_end: u64,
        t: &mut u64,
    ) -> bool {
        let src = self.ftl.g.page_slot(tx.blk as usize, tx.page) as u32;
        let live = self.ftl.map.l2p.get(tx.owner as usize) == src;
        if live {
            let bytes = self.ftl.g.page_bytes;
            let ready = if self.ftl.copyback {
                array_end
            } else {
                let ch = self.ftl.g.die_channel(d);
                *t = self.channel(ch, now, *t, bytes);
                self.ctl.decode(self.w0, now, *t, bytes)
            };
            self.ftl
                .hybrid_merge_read(tx.owner as usize, src, tx.group, ready);
        }
        let gr = &mut self.ftl.groups[tx.group as usize];
        gr.deps -= 1;
        if gr.deps == 0 {
            self.ftl.drain_gc_pending(d, &mut self.sched);
        }
        live
    }
}
