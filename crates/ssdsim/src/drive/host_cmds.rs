//! Host commands inside the drive: a command takes a slot, pays its firmware time, and
//! starts as a read (mapping lookup, flash reads queued), a write (into the write buffer) or
//! a trim; its completion is handed back to the host interface.

use super::{Drive, Shared};
use crate::controller::{R_FLASH, R_FTL, R_HOST};
use crate::events::{ev, EV_HOST_DONE, EV_IDLE};
use crate::ftl::mapping::{sector_mask, UNMAPPED};
use crate::ftl::NIL;
use crate::host::{Cmd, Queued};
use crate::mem::prefetch;
use crate::sched::{Tx, C_READ, F_SLC, K_READ};
use crate::{HostCmd, OpKind};

impl Drive {
    /// Hint: a command at byte `offset` is coming soon; start loading its mapping entry into
    /// the cache so that its submission does not wait for memory.
    #[inline(always)]
    pub(crate) fn prefetch(&self, offset: u64) {
        self.ftl
            .map
            .l2p
            .prefetch(self.ftl.g.d_unit.div(offset) as usize);
    }

    /// A host command arrives at `now` (events before `now` have been processed).
    #[inline(always)]
    pub(crate) fn submit(&mut self, sh: &mut Shared, now: u64, tag: u64, seq: u64, cmd: HostCmd) {
        self.sched.now = now;
        let u = self.ftl.g.d_unit.div(cmd.offset) as usize;
        if cmd.kind == OpKind::Write {
            // with the entry itself cached (prefetched one command ahead by the caller), also
            // start on the valid count of the block holding the data being overwritten
            if let Some(old) = self.ftl.map.l2p.try_get(u) {
                if old != UNMAPPED {
                    prefetch(&self.ftl.blk_valid, self.ftl.g.slot_block(old));
                }
            }
        } else {
            self.ftl.map.l2p.prefetch(u);
        }
        if self.idle_fold_ns > 0 {
            self.host_active();
        }
        let q = self.host.queue_of(cmd.queue);
        match self.host.alloc(q) {
            Some(e) => self.start(sh, e, now, tag, seq, cmd),
            // every slot of its queue taken: the host keeps it until one frees
            None => self.host.hold(q, Queued { tag, seq, cmd }),
        }
        self.service(sh, now);
    }

    #[inline(always)]
    pub(super) fn start(
        &mut self,
        sh: &mut Shared,
        e: u32,
        now: u64,
        tag: u64,
        seq: u64,
        cmd: HostCmd,
    ) {
        let off = cmd.offset.min(self.ftl.user_bytes);
        let len = cmd.len.min(self.ftl.user_bytes - off);
        self.host.cmds[e as usize] = Cmd {
            tag,
            seq,
            kind: cmd.kind,
            off,
            len,
            frac: cmd.nand_fraction,
            version: 0,
            arrive: now,
            t_fw: now,
            m_s: 0,
            m_per: 0,
            remaining: 0,
            done: now,
            first: true,
            u0: 0,
            u1: 0,
            whole: false,
            in_units: 0,
        };
        match cmd.kind {
            OpKind::Read => self.start_read(sh, e, now),
            OpKind::Write => self.start_write(sh, e, now),
            OpKind::Trim => {
                self.c.host_trims += 1;
                let t_in = self.host.arrive(self.w0, now);
                let t = self.ctl.fw(self.w0, now, R_HOST, t_in, self.ctl.fw_trim);
                self.host.cmds[e as usize].t_fw = t;
                if self.ctl.waiters.is_empty() {
                    self.trim(sh, e, now);
                } else {
                    // unmap only after the writes submitted before it
                    self.ctl.waiters.push_back(e);
                }
            }
        }
    }

    pub(super) fn trim(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let c = self.host.cmds[e as usize];
        self.ftl.trim(c.off, c.len);
        // the range list of the DATA SET MANAGEMENT command: one 512-byte block
        let done = self.host.xfer(
            &mut sh.uplink,
            self.w0,
            now,
            now.max(c.t_fw),
            512,
            false,
            true,
            e,
        );
        self.complete(sh, e, done);
    }

    /// Command `e`'s last piece ends at `t`: the firmware completes it (`fw_complete_ns` on a
    /// host core), the host interface delivers the completion and the host handles it.
    #[inline]
    pub(super) fn complete(&mut self, sh: &mut Shared, e: u32, t: u64) {
        let now = self.sched.now;
        let t = self.ctl.fw(self.w0, now, R_HOST, t, self.ctl.fw_complete);
        let q = self.host.queue_of_slot(e);
        let t = self.host.finish(self.w0, now, t, q);
        let seq = self.host.cmds[e as usize].seq;
        sh.heap
            .push_completion(t, seq, ev(EV_HOST_DONE, self.idx, e as u64));
    }

    /// Books a command's mapping stage on an `ftl` core from `t`: `fw_map_ns`, then `per` ns
    /// for each 4 KiB unit beyond the first. Returns when its first unit is mapped (unit k is
    /// mapped `k × per` later).
    #[inline]
    fn book_map(&mut self, now: u64, t: u64, len: u64, per: u64) -> u64 {
        let more = len.div_ceil(4096).saturating_sub(1) * per;
        let dur = self.ctl.fw_map + more;
        if dur == 0 {
            return t;
        }
        let end = self.ctl.fw(self.w0, now, R_FTL, t, dur);
        end - more
    }

    /// The completion of command slot `e` is delivered at `t`: the slot frees (a command
    /// waiting for one starts). Returns the caller's tag.
    #[inline]
    pub(crate) fn host_done(&mut self, sh: &mut Shared, e: u32, t: u64) -> u64 {
        let tag = self.host.cmds[e as usize].tag;
        if let Some(a) = self.audit.as_mut() {
            let cmd = &self.host.cmds[e as usize];
            let (arrive, done) = (cmd.arrive, cmd.done);
            a.check(t >= arrive && t >= done, || {
                format!("command completes at {t} before arriving ({arrive}) or finishing ({done})")
            });
        }
        let q = self.host.release(e);
        if self.host.waiting > 0 && !self.host.wait[q].is_empty() {
            self.start_queued(sh, t, q);
        } else if self.idle_fold_ns > 0 && self.host.idle() {
            sh.push(t + self.idle_fold_ns, ev(EV_IDLE, self.idx, self.idle_gen));
        }
        tag
    }

    /// A host command arrived: background folding of the SLC cache stops starting new rounds,
    /// and an idle timer armed before is stale.
    #[inline]
    fn host_active(&mut self) {
        self.idle_gen = (self.idle_gen + 1) & ((1 << 48) - 1);
        self.ftl.idle_fold = false;
    }

    /// The idle timer of generation `gen` fires: when no host command came since, the dies
    /// fold their SLC blocks into the native cell mode in the background.
    pub(crate) fn idle_timer(&mut self, sh: &mut Shared, now: u64, gen: u64) {
        if gen != self.idle_gen || !self.host.idle() {
            return;
        }
        self.sched.now = now;
        self.ftl.idle_fold = true;
        for d in 0..self.ftl.g.dies {
            self.ftl.mark_changed(d);
        }
        self.service(sh, now);
    }

    #[cold]
    pub(super) fn start_queued(&mut self, sh: &mut Shared, t: u64, queue: usize) {
        self.sched.now = t;
        if let Some(q) = self.host.next_waiting(queue) {
            let e = self.host.alloc(queue).expect("a slot was just freed");
            self.start(sh, e, t, q.tag, q.seq, q.cmd);
            self.service(sh, t);
        }
    }

    pub(super) fn start_read(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let Cmd { off, len, .. } = self.host.cmds[e as usize];
        self.c.host_reads += 1;
        self.c.host_read_bytes += len;
        let t_in = self.host.arrive(self.w0, now);
        let t_dec = self.ctl.fw(self.w0, now, R_HOST, t_in, self.ctl.fw_read);
        let per = self.ctl.fw_read_unit;
        let m_s = self.book_map(now, t_dec, len, per);
        let mut t_fw = m_s;
        {
            let c = &mut self.host.cmds[e as usize];
            c.m_s = m_s;
            c.m_per = per as u32;
        }
        if self.ftl.mcache.is_some() {
            // where the data is comes from translation pages the cache may have to load first
            let g = &self.ftl.g;
            let (u0, u1) = (
                g.d_us.div(off / 512),
                g.d_us.div_ceil((off + len).div_ceil(512)),
            );
            let (waits, at) = self.ftl.map_touch(u0, u1, false, t_fw, e, &mut self.sched);
            t_fw = t_fw.max(at);
            if waits > 0 {
                let c = &mut self.host.cmds[e as usize];
                c.t_fw = t_fw;
                c.remaining = waits;
                return;
            }
        }
        self.host.cmds[e as usize].t_fw = t_fw;
        self.issue_reads(sh, e, t_fw, now);
    }

    /// The read of translation page `tp` delivers it at `t`: the host reads waiting for it go
    /// on (each once its last page is in, with its data reads).
    #[cold]
    #[inline(never)]
    pub(super) fn map_loaded(&mut self, sh: &mut Shared, tp: usize, t: u64, now: u64) {
        let Some(mc) = self.ftl.mcache.as_mut() else {
            return;
        };
        mc.loaded(tp, t);
        while let Some(e) = self.ftl.mcache.as_mut().and_then(|m| m.take_waiter(tp)) {
            let c = &mut self.host.cmds[e as usize];
            c.t_fw = c.t_fw.max(t);
            c.remaining -= 1;
            if c.remaining == 0 {
                let t = c.t_fw;
                self.issue_reads(sh, e, t, now);
            }
        }
    }

    /// Host read `e`, its mapping known at `t_fw`: queues the flash reads of its units and sends
    /// what the controller holds (or zeros for unwritten units) to the host.
    fn issue_reads(&mut self, sh: &mut Shared, e: u32, t_fw: u64, now: u64) {
        let Cmd {
            off,
            len,
            m_s,
            m_per,
            ..
        } = self.host.cmds[e as usize];
        // when the lookup of the 4 KiB unit holding the command's byte `rel` is done
        let mapped = |rel: u64| {
            let k = rel / 4096;
            if k == 0 || m_per == 0 {
                t_fw
            } else {
                t_fw.max(m_s + k * m_per as u64)
            }
        };
        let g = &self.ftl.g;
        let ub = g.unit_bytes;
        let s0 = off / 512;
        let s1 = (off + len).div_ceil(512);
        let u0 = g.d_us.div(s0);
        let u1 = g.d_us.div_ceil(s1);
        let mut dram = 0u64;
        let mut pages = 0u32;
        let mut tx = Tx::default();
        let mut cur_page = u32::MAX;
        for u in u0..u1 {
            let l = u as usize;
            let mut host_b = (off + len).min((u + 1) * ub) - off.max(u * ub);
            let slot = self.ftl.map.l2p.get(l);
            if self.ftl.remap && slot != UNMAPPED {
                if let Some(f) = self.ftl.map.frag(l) {
                    // sectors still in the unit's older slot are read from there
                    let us = self.ftl.g.us as u64;
                    let want = sector_mask(s0.max(u * us) - u * us, s1.min((u + 1) * us) - u * us);
                    let in_frag = ((want & f.fmask).count_ones() as u64 * 512).min(host_b);
                    if in_frag > 0 {
                        host_b -= in_frag;
                        if self.ftl.is_buffered(f.fslot) {
                            self.c.cache_hits += 1;
                            dram += in_frag;
                        } else {
                            self.c.fragment_reads += 1;
                            pages += 1;
                            let g = &self.ftl.g;
                            let blk = g.slot_block(f.fslot);
                            let rel = (u + 1) * ub - 1 - off;
                            self.enqueue_read(Tx {
                                ready: mapped(rel.min(len - 1)),
                                kind: K_READ,
                                plane: (g.block_plane(blk) % g.planes) as u8,
                                flags: if self.ftl.blk_slc[blk] { F_SLC } else { 0 },
                                page: g.slot_page(f.fslot),
                                blk: blk as u32,
                                owner: e,
                                group: NIL,
                                bytes: f.fcost * 512,
                                host_bytes: in_frag as u32,
                                next: NIL,
                                enq: 0,
                            });
                        }
                    }
                    if want & f.pmask == 0 {
                        // nothing wanted in the unit's slot (the rest was never written)
                        self.c.unwritten_read_bytes += host_b;
                        dram += host_b;
                        continue;
                    }
                }
            }
            if slot == UNMAPPED {
                self.c.unwritten_read_bytes += host_b;
                dram += host_b;
                continue;
            }
            if self.ftl.is_buffered(slot) {
                self.c.cache_hits += 1;
                dram += host_b;
                continue;
            }
            let g = &self.ftl.g;
            let gp = g.slot_gpage(slot);
            let nand_b = self.ftl.map.unit_cost(l) * 512;
            let ready = mapped(((u + 1) * ub).min(off + len) - 1 - off);
            if gp == cur_page {
                tx.bytes += nand_b;
                tx.host_bytes += host_b as u32;
                tx.ready = ready;
                continue;
            }
            let blk = g.slot_block(slot);
            let (plane, page) = ((g.block_plane(blk) % g.planes) as u8, g.slot_page(slot));
            if cur_page != u32::MAX {
                self.enqueue_read(tx);
            }
            cur_page = gp;
            pages += 1;
            tx = Tx {
                ready,
                kind: K_READ,
                plane,
                flags: if self.ftl.blk_slc[blk] { F_SLC } else { 0 },
                page,
                blk: blk as u32,
                owner: e,
                group: NIL,
                bytes: nand_b,
                host_bytes: host_b as u32,
                next: NIL,
                enq: 0,
            };
        }
        self.host.cmds[e as usize].remaining = pages;
        if cur_page != u32::MAX {
            self.enqueue_read(tx);
        }
        if dram > 0 || pages == 0 {
            // data held in the controller (or unmapped: zeros) goes to the host once looked up
            let t = mapped(len.max(1) - 1);
            let end = self
                .host
                .xfer(&mut sh.uplink, self.w0, now, t, dram, true, true, e);
            let c = &mut self.host.cmds[e as usize];
            c.first = false;
            c.done = end;
            if pages == 0 {
                self.complete(sh, e, end);
            }
        }
    }

    /// Queues a host read's page read on its die, once a `flash` core has issued it.
    #[inline]
    pub(super) fn enqueue_read(&mut self, mut tx: Tx) {
        if self.ctl.fw_flash > 0 {
            tx.ready = self.ctl.fw(
                self.w0,
                self.sched.now,
                R_FLASH,
                tx.ready,
                self.ctl.fw_flash,
            );
        }
        let d = self
            .ftl
            .g
            .plane_die(self.ftl.g.block_plane(tx.blk as usize));
        self.sched.enqueue(d, C_READ, tx);
    }

    #[inline(always)]
    pub(super) fn start_write(&mut self, sh: &mut Shared, e: u32, now: u64) {
        self.write_seq += 1;
        let g = &self.ftl.g;
        let c = &mut self.host.cmds[e as usize];
        c.version = self.write_seq;
        let (off, len) = (c.off, c.len);
        let s0 = off / 512;
        let s1 = (off + len).div_ceil(512);
        let aligned = g.d_us.rem(s0) == 0 && g.d_us.rem(s1) == 0;
        // the units it touches, worked out once for the room check and the admission
        c.u0 = g.d_us.div(s0);
        c.u1 = g.d_us.div_ceil(s1);
        c.whole = aligned;
        let units = c.u1 - c.u0;
        self.c.host_writes += 1;
        self.c.host_write_bytes += len;
        let mut fwt = self.ctl.fw_write;
        if !aligned && !self.ftl.rmw {
            fwt += self.ctl.remap_cost;
        }
        let t_in = self.host.arrive(self.w0, now);
        // writes queue behind the GC moves waiting for a core (reads go ahead of them)
        if !self.ctl.gc_jobs.is_empty() {
            self.flush_gc_jobs(t_in);
        }
        let t_fw = self.ctl.fw(self.w0, now, R_HOST, t_in, fwt);
        // the later units' mapping updates run beside the data transfer; the write completes
        // when both are done
        let per = self.ctl.fw_write_unit;
        let m_s = self.book_map(now, t_fw, len, per);
        let m_end = m_s + len.div_ceil(4096).saturating_sub(1) * per;
        let c = &mut self.host.cmds[e as usize];
        c.t_fw = t_fw;
        c.done = m_end.max(t_fw);
        if self.ftl.mcache.is_some() {
            // the write changes its units' translation pages (loaded first on a miss; the data
            // goes to the buffer meanwhile)
            let (u0, u1) = (self.host.cmds[e as usize].u0, self.host.cmds[e as usize].u1);
            self.ftl.map_touch(u0, u1, true, t_fw, NIL, &mut self.sched);
        }
        if self.ctl.waiters.is_empty()
            && if self.ftl.hy.is_some() {
                let c = &self.host.cmds[e as usize];
                self.hybrid_can_admit(c.u0, c.u1, len)
            } else {
                self.can_admit(units, len)
            }
        {
            self.admit(sh, e, now);
        } else if self.ctl.waiters.is_empty() {
            // first in line: it goes in a part at a time as space allows
            self.ctl.waiters.push_back(e);
            self.admit_waiters(sh, now);
        } else {
            self.ctl.waiters.push_back(e);
            self.unblock(now);
        }
    }
}
