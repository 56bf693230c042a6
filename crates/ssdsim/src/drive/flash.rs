//! Flash execution: what each die runs next (the transaction scheduler's choice), reads,
//! programs and erases with their channel transfers, program/erase suspension for reads, and
//! what a finished operation frees (pages, buffer space, waiting writes).

use super::{Drive, Shared, DIE_BITS};
use crate::controller::{GcJob, R_FTL};
use crate::events::{ev, EV_DIE_DONE, EV_DIE_WAKE, FW_WAKE};
use crate::ftl::{ERASING, NIL};
use crate::nand::MAX_PLANES;
use crate::sched::{
    Op, Suspended, Tx, C_GC, C_PROG, C_READ, F_MAP, F_RMW, F_SLC, GC_BACKGROUND, K_ERASE, K_MAPW,
    K_PROG, K_READ, K_SUSPEND,
};

impl Drive {
    /// Looks at every die whose queues changed: an idle die starts work, a busy die may be
    /// suspended for a read, or wakes when a queued transaction becomes ready.
    #[inline(always)]
    pub(super) fn service(&mut self, sh: &mut Shared, now: u64) {
        if !self.ftl.changed.is_empty() || !self.sched.dirty.is_empty() {
            self.service_dies(sh, now);
        }
    }

    pub(super) fn service_dies(&mut self, sh: &mut Shared, now: u64) {
        // dies whose blocks changed: GC mode, and GC when they need it
        while let Some(d) = self.ftl.changed.pop() {
            let d = d as usize;
            self.ftl.changed_flag[d] = false;
            let m = self.ftl.die_gc_mode(d);
            self.sched.set_mode(d, m);
            if self.ftl.hy.is_some() {
                self.ftl.hybrid_issue(d, &mut self.sched, now);
            } else if self.ftl.gc_start(d, now) {
                self.ftl.gc_issue(d, &mut self.sched, now);
            }
        }
        while let Some(d) = self.sched.dirty.pop() {
            let d = d as usize;
            self.sched.dies[d].dirty = false;
            if self.sched.dies[d].busy {
                if self.nand.program_suspend || self.nand.erase_suspend {
                    self.consider_suspend(sh, d, now);
                }
            } else {
                self.dispatch(sh, d, now);
            }
        }
    }

    /// Die `d` is free at `now`: start the next transaction the scheduler picks, resume a
    /// suspended operation, or sleep until a queued transaction becomes ready.
    pub(super) fn dispatch(&mut self, sh: &mut Shared, d: usize, now: u64) {
        loop {
            if self.sched.dies[d].busy {
                return;
            }
            let Some((class, prev)) = self.sched.pick(d, now) else {
                if self.sched.dies[d].susp.is_some() {
                    self.resume(sh, d, now);
                    return;
                }
                if let Some(a) = self.audit.as_mut() {
                    let idle_ok = !self.sched.any_ready(d, now, &[C_READ, C_PROG, C_GC]);
                    a.check(idle_ok, || {
                        format!("die {d} idle at {now} while a transaction is ready")
                    });
                }
                let t = self.sched.next_ready(d);
                self.arm_wake(sh, d, t);
                return;
            };
            let tx = self.sched.take(d, class, prev);
            if let Some(a) = self.audit.as_mut() {
                // work conservation: the die starts the transaction the moment both were free
                let since = self.sched.dies[d].idle_since.max(tx.ready).max(tx.enq);
                a.check(since == now, || {
                    format!("die {d}: idle from {since} until it started a transaction at {now}")
                });
                a.check(tx.ready <= now, || {
                    format!(
                        "die {d}: transaction starts at {now} before it is ready ({})",
                        tx.ready
                    )
                });
                let end = a.die_end[d];
                a.check(end <= now, || {
                    format!("die {d}: operation starts at {now} while busy until {end}")
                });
            }
            let started = match tx.kind {
                K_READ => self.start_read_op(sh, d, class, tx, now),
                K_PROG => {
                    self.start_program(sh, d, tx, now);
                    self.watch_reads(sh, d);
                    true
                }
                K_MAPW => {
                    self.start_map_write(sh, d, tx, now);
                    self.watch_reads(sh, d);
                    true
                }
                _ => {
                    self.start_erase(sh, d, tx, now);
                    self.watch_reads(sh, d);
                    true
                }
            };
            if started {
                return;
            }
        }
    }

    /// Starts queued GC jobs on the cores idle at `now`; wakes up when the first core frees if
    /// jobs are left.
    pub(super) fn fw_run_gc(&mut self, sh: &mut Shared, now: u64) {
        while !self.ctl.gc_jobs.is_empty() {
            let Some(core) = self.ctl.idle_core(now) else {
                let t = self.ctl.first_free(now);
                if t < self.ctl.fw_wake_at {
                    self.ctl.fw_wake_at = t;
                    sh.push(t, ev(EV_DIE_WAKE, self.idx, FW_WAKE));
                }
                return;
            };
            let job = self.ctl.gc_jobs.pop_front().expect("not empty");
            let end = self.ctl.run_gc_job(self.w0, core, now);
            self.gc_job_done(job, end);
        }
    }

    /// Books every queued GC job on the cores in arrival order from `now`, as a command
    /// arriving at `now` would be (the jobs go before it).
    #[inline]
    pub(super) fn flush_gc_jobs(&mut self, now: u64) {
        let cur = self.sched.now;
        while let Some(job) = self.ctl.gc_jobs.pop_front() {
            let end = self.ctl.fw(self.w0, cur, R_FTL, now, self.ctl.fw_gc_move);
            self.gc_job_done(job, end);
        }
    }

    /// The firmware's move of a GC page ends at `end`: the groups its data went into may be
    /// programmed from then on.
    fn gc_job_done(&mut self, job: GcJob, end: u64) {
        for id in job.into_iter().take_while(|&g| g != NIL) {
            let gr = &mut self.ftl.groups[id as usize];
            gr.ready = gr.ready.max(end);
            gr.deps -= 1;
            if gr.deps == 0 {
                let gd = gr.die as usize;
                self.ftl.drain_gc_pending(gd, &mut self.sched);
            }
        }
    }

    /// The firmware wake-up at `now`: a core may be idle for the queued GC jobs.
    pub(crate) fn fw_wake(&mut self, sh: &mut Shared, now: u64) {
        self.sched.now = now;
        if self.ctl.fw_wake_at != now {
            return; // superseded by an earlier wake-up
        }
        self.ctl.fw_wake_at = u64::MAX;
        self.fw_run_gc(sh, now);
        self.service(sh, now);
    }

    /// Marks die `d` busy with `op` until `op.end` and schedules its completion.
    #[inline]
    pub(super) fn begin(&mut self, sh: &mut Shared, d: usize, op: Op) {
        self.sched.set_end(d, op.end);
        let die = &mut self.sched.dies[d];
        die.busy = true;
        die.op = op;
        die.meter.add(self.w0, op.start, op.end);
        let gen = die.gen as u64 & ((1 << (48 - DIE_BITS)) - 1);
        sh.push(
            op.end,
            ev(EV_DIE_DONE, self.idx, gen << DIE_BITS | d as u64),
        );
        if let Some(a) = self.audit.as_mut() {
            a.die_end[d] = op.end;
        }
    }

    /// Starts a page read (with the same page of other planes: multi-plane): array read, then
    /// each page's data over the channel, each piece going on to its consumer as it arrives.
    /// Returns false when nothing needed reading (a GC page without live data).
    pub(super) fn start_read_op(
        &mut self,
        sh: &mut Shared,
        d: usize,
        class: usize,
        first: Tx,
        now: u64,
    ) -> bool {
        let mut txs = [first; MAX_PLANES];
        let mut n = 1;
        if self.nand.multi_plane && self.ftl.g.planes > 1 {
            n += self
                .sched
                .take_partners(d, class, &first, now, &mut txs[1..self.ftl.g.planes]);
        }
        let gc = class == C_GC;
        // (a drive of the hybrid scheme has no GC rounds: its GC-class reads are merge reads)
        let merge = gc && self.ftl.hy.is_some();
        if merge {
            self.ftl.hyb_mut().dies[d].queued -= n as u32;
        } else if gc {
            self.ftl.gc[d].queued -= n as u32;
        }
        let slc = first.flags & F_SLC != 0;
        let array_end = now + self.nand.read_ns(first.page, slc);
        let ch = self.ftl.g.die_channel(d);
        let mut t = array_end;
        let mut pages = 0;
        for tx in txs.iter().take(n) {
            if merge {
                if self.hybrid_merge_read(d, tx, now, array_end, &mut t) {
                    pages += 1;
                }
                continue;
            }
            if gc {
                let bytes = self.ftl.gc_page_live(tx.blk, tx.page);
                if bytes == 0 {
                    continue;
                }
                pages += 1;
                let ready = if self.ftl.copyback {
                    array_end
                } else {
                    t = self.channel(ch, now, t, bytes as u64);
                    self.ctl.decode(self.w0, now, t, bytes as u64)
                };
                // the firmware relocates the page (mapping updates, the data's handling) on a
                // core, after the host commands: the groups the data went into wait for it
                let fw = self.ctl.fw_gc_move > 0;
                let job = self.ftl.gc_move_scratch(
                    d,
                    tx.plane as usize,
                    ready,
                    now,
                    Some(&mut self.sched),
                    fw,
                );
                if fw {
                    self.ctl.gc_jobs.push_back(job);
                    if self.sched.mode[d] != GC_BACKGROUND {
                        // foreground GC (a plane below the hard free-block threshold): the
                        // moves take the cores in arrival order with the host commands, as the
                        // die interleaves GC with host programs
                        self.flush_gc_jobs(now);
                    } else {
                        self.fw_run_gc(sh, now);
                    }
                }
                continue;
            }
            pages += 1;
            t = self.channel(ch, now, t, tx.bytes as u64);
            // the die is held until its transfers end; the data is usable once decoded
            let usable = self.ctl.decode(self.w0, now, t, tx.bytes as u64);
            if tx.flags & F_RMW != 0 {
                let gr = &mut self.ftl.groups[tx.group as usize];
                gr.ready = gr.ready.max(usable);
                gr.deps -= 1;
                if gr.deps == 0 {
                    let gd = gr.die as usize;
                    if gr.gc {
                        self.ftl.drain_gc_pending(gd, &mut self.sched);
                    } else {
                        self.drain_pending(gd);
                    }
                }
                if tx.owner != NIL {
                    // (a GC merge read has no host command)
                    self.piece_done(sh, tx.owner, usable);
                }
            } else if tx.flags & F_MAP != 0 {
                self.c.map_reads += 1;
                self.map_loaded(sh, tx.group as usize, usable, now);
            } else {
                self.read_piece(sh, tx.owner, tx.host_bytes as u64, usable, now);
            }
        }
        if merge {
            self.ftl.hybrid_issue(d, &mut self.sched, now);
        } else if gc {
            self.ftl.gc_issue(d, &mut self.sched, now);
        }
        if pages == 0 {
            return false;
        }
        self.c.nand_reads += pages;
        self.c.nand_read_cmds += 1;
        let op = Op {
            kind: K_READ,
            n: pages as u8,
            start: now,
            array_start: now,
            end: t.max(array_end),
            ..Op::default()
        };
        self.begin(sh, d, op);
        true
    }

    /// `bytes` of `dur` on channel `ch` at the earliest gap from `t`; returns the end.
    #[inline]
    pub(super) fn channel(&mut self, ch: usize, now: u64, t: u64, bytes: u64) -> u64 {
        let dur = self.nand.bus_ns(bytes);
        let (s, e) = self.channels[ch].book(now, t, dur);
        self.ch_meter[ch].add(self.w0, s, e);
        e
    }

    /// A piece of host read data is in the controller at `t`: it goes over the link; the command
    /// completes with its last piece.
    #[inline]
    pub(super) fn read_piece(&mut self, sh: &mut Shared, e: u32, bytes: u64, t: u64, now: u64) {
        let first = self.host.cmds[e as usize].first;
        let end = self
            .host
            .xfer(&mut sh.uplink, self.w0, now, t, bytes, true, first, e);
        self.host.cmds[e as usize].first = false;
        self.piece_done(sh, e, end);
    }

    /// A piece of command `e` (read data delivered, old data merged, program done) ends at
    /// `t`; the command completes with its last piece.
    #[inline]
    pub(super) fn piece_done(&mut self, sh: &mut Shared, e: u32, t: u64) {
        let c = &mut self.host.cmds[e as usize];
        c.done = c.done.max(t);
        c.remaining -= 1;
        if c.remaining == 0 {
            let done = c.done;
            self.complete(sh, e, done);
        }
    }

    /// Starts the multi-plane program of a page group: data into the die over the channel,
    /// then the array program.
    pub(super) fn start_program(&mut self, sh: &mut Shared, d: usize, tx: Tx, now: u64) {
        let id = tx.owner;
        let gr = &self.ftl.groups[id as usize];
        if let Some(a) = self.audit.as_mut() {
            a.check(gr.deps == 0 && gr.ready <= now && gr.sealed, || {
                format!(
                    "die {d}: program of group {id} at {now} before its data (ready {}, {} reads pending)",
                    gr.ready, gr.deps
                )
            });
        }
        let (page, slc, gc, sectors) = (gr.page, gr.slc, gr.gc, gr.sectors);
        // (a hybrid group holds the pages of the planes in its mask)
        let used = if gr.hybrid {
            gr.pmask.count_ones()
        } else {
            gr.used_planes
        };
        let bytes = if gc && self.ftl.copyback {
            0
        } else {
            sectors as u64 * 512
        };
        let ch = self.ftl.g.die_channel(d);
        let xe = if bytes > 0 {
            self.channel(ch, now, now, bytes)
        } else {
            now
        };
        let mut tprog = self.nand.prog_ns(page, slc);
        if !self.nand.multi_plane {
            tprog *= used.max(1) as u64;
        }
        let used = used.max(1) as u64;
        if gc {
            let cap = self.ftl.g.ppb as i64;
            self.sched.gc_programmed(d, used, cap);
        } else {
            self.sched.host_programmed(d, used);
        }
        self.c.nand_programs += used;
        self.c.nand_program_cmds += 1;
        self.c.nand_program_bytes += used * self.ftl.g.page_bytes;
        if slc {
            self.c.pslc_programs += used;
        }
        let mut ids = [NIL; MAX_PLANES];
        ids[0] = id;
        self.begin(
            sh,
            d,
            Op {
                kind: K_PROG,
                n: 1,
                suspends: 0,
                start: now,
                array_start: xe,
                end: xe + tprog,
                ids,
            },
        );
    }

    /// Starts the write-back of a translation page of the cached mapping table: its data over
    /// the channel, then the program at the next page of the die's translation block; the
    /// first write into a new translation block erases it first (its old contents are stale,
    /// see [`crate::ftl::mapcache`]).
    #[cold]
    fn start_map_write(&mut self, sh: &mut Shared, d: usize, tx: Tx, now: u64) {
        let ppb = self.ftl.g.ppb as u64;
        let mc = self
            .ftl
            .mcache
            .as_mut()
            .expect("map write-backs come from the map cache");
        let w = mc.written[d];
        mc.written[d] += 1;
        let ch = self.ftl.g.die_channel(d);
        let xe = self.channel(ch, now, now, tx.bytes as u64);
        let mut end = xe + self.nand.prog_ns((w % ppb) as u32, false);
        if w > 0 && w.is_multiple_of(ppb) {
            end += self.nand.t_bers;
            self.c.map_erases += 1;
            self.c.nand_erases += 1;
            self.c.nand_erase_cmds += 1;
        }
        self.c.map_writes += 1;
        self.c.nand_programs += 1;
        self.c.nand_program_cmds += 1;
        self.c.nand_program_bytes += self.ftl.g.page_bytes;
        self.begin(
            sh,
            d,
            Op {
                kind: K_MAPW,
                n: 1,
                suspends: 0,
                start: now,
                array_start: xe,
                end,
                ids: [NIL; MAX_PLANES],
            },
        );
    }

    /// Starts a (multi-plane) block erase.
    pub(super) fn start_erase(&mut self, sh: &mut Shared, d: usize, first: Tx, now: u64) {
        let mut txs = [first; MAX_PLANES];
        let mut n = 1;
        if self.nand.multi_plane && self.ftl.g.planes > 1 {
            n += self
                .sched
                .take_partners(d, C_GC, &first, now, &mut txs[1..self.ftl.g.planes]);
        }
        let mut ids = [NIL; MAX_PLANES];
        for (i, tx) in txs.iter().take(n).enumerate() {
            ids[i] = tx.blk;
            if let Some(a) = self.audit.as_mut() {
                let b = tx.blk as usize;
                let (v, st) = (self.ftl.blk_valid[b], self.ftl.blk_state[b]);
                a.check(v == 0 && st == ERASING, || {
                    format!("die {d}: erase of block {b} holding {v} valid sectors (state {st})")
                });
            }
        }
        let dur = self.nand.t_bers * if self.nand.multi_plane { 1 } else { n as u64 };
        self.c.nand_erase_cmds += 1;
        self.begin(
            sh,
            d,
            Op {
                kind: K_ERASE,
                n: n as u8,
                suspends: 0,
                start: now,
                array_start: now,
                end: now + dur,
                ids,
            },
        );
    }

    /// A busy die with a ready host read: suspend its program or erase when the part allows it
    /// and enough of the operation remains; wake up when a queued read becomes ready.
    pub(super) fn consider_suspend(&mut self, sh: &mut Shared, d: usize, now: u64) {
        let die = &self.sched.dies[d];
        let op = die.op;
        let can = match op.kind {
            K_PROG | K_MAPW => self.nand.program_suspend,
            K_ERASE => self.nand.erase_suspend,
            _ => false,
        };
        if !can || die.susp.is_some() || op.suspends as u32 >= self.nand.max_suspends {
            return;
        }
        let r = self.sched.read_ready(d);
        if r == u64::MAX {
            return;
        }
        // the data transfer into the die cannot be suspended: decide once the array works
        let at = r.max(op.array_start);
        if at > now {
            self.arm_wake(sh, d, at);
            return;
        }
        if op.end <= now || op.end - now < self.sched.suspend_min.max(self.nand.t_suspend) {
            return;
        }
        let remaining = op.end - now;
        let w0 = self.w0;
        let die = &mut self.sched.dies[d];
        die.meter.remove(w0, now, op.end);
        die.susp = Some(Suspended { op, remaining });
        die.gen = die.gen.wrapping_add(1);
        die.busy = false;
        if op.kind != K_ERASE {
            self.c.program_suspends += 1;
        } else {
            self.c.erase_suspends += 1;
        }
        if let Some(a) = self.audit.as_mut() {
            a.die_end[d] = now;
        }
        self.begin(
            sh,
            d,
            Op {
                kind: K_SUSPEND,
                start: now,
                array_start: now,
                end: now + self.nand.t_suspend,
                ..Op::default()
            },
        );
    }

    /// No read is waiting on a die with a suspended operation: resume it.
    pub(super) fn resume(&mut self, sh: &mut Shared, d: usize, now: u64) {
        let s = self.sched.dies[d].susp.take().expect("suspended");
        let mut op = s.op;
        op.suspends += 1;
        op.start = now;
        op.array_start = now;
        op.end = now + self.nand.t_resume + s.remaining;
        self.begin(sh, d, op);
        self.watch_reads(sh, d);
    }

    /// Die `d` just started a program or erase: host reads queued for later (their commands
    /// still in the firmware) will want to suspend it, so wake up when the first is ready.
    #[inline]
    pub(super) fn watch_reads(&mut self, sh: &mut Shared, d: usize) {
        if self.nand.program_suspend || self.nand.erase_suspend {
            let r = self.sched.read_ready(d);
            if r != u64::MAX {
                let at = r.max(self.sched.dies[d].op.array_start);
                self.arm_wake(sh, d, at);
            }
        }
    }

    pub(super) fn arm_wake(&mut self, sh: &mut Shared, d: usize, t: u64) {
        let die = &mut self.sched.dies[d];
        if t < die.wake {
            die.wake = t;
            sh.push(t, ev(EV_DIE_WAKE, self.idx, d as u64));
        }
    }

    /// A wake-up of die `d` at `now`.
    pub(crate) fn die_wake(&mut self, sh: &mut Shared, d: usize, now: u64) {
        self.sched.now = now;
        let die = &mut self.sched.dies[d];
        if die.wake != now {
            return; // superseded by an earlier wake-up
        }
        die.wake = u64::MAX;
        if die.busy {
            self.consider_suspend(sh, d, now);
        } else {
            self.dispatch(sh, d, now);
        }
        self.service(sh, now);
    }

    /// The operation of die `d` (payload of the event: generation and die) ends at `now`.
    pub(crate) fn die_done(&mut self, sh: &mut Shared, payload: u64, now: u64) {
        self.sched.now = now;
        let d = (payload & ((1 << DIE_BITS) - 1)) as usize;
        let gen = payload >> DIE_BITS;
        let die = &mut self.sched.dies[d];
        if !die.busy || gen != die.gen as u64 & ((1 << (48 - DIE_BITS)) - 1) {
            return; // a suspended operation's old completion
        }
        die.busy = false;
        die.idle_since = now;
        self.sched.set_end(d, 0);
        let op = self.sched.dies[d].op;
        match op.kind {
            K_PROG => self.program_done(sh, d, op.ids[0], now),
            K_ERASE => {
                for &b in op.ids.iter().take(op.n as usize) {
                    self.ftl.erase_done(b as usize, now);
                }
                self.c.nand_erases += op.n as u64;
                self.admit_waiters(sh, now);
            }
            _ => {}
        }
        self.dispatch(sh, d, now);
        self.service(sh, now);
    }

    pub(super) fn program_done(&mut self, sh: &mut Shared, d: usize, id: u32, now: u64) {
        let gr = &mut self.ftl.groups[id as usize];
        let (gc, last) = (gr.gc, gr.last);
        if !gc && !gr.waiters.is_empty() {
            let waiters = std::mem::take(&mut gr.waiters);
            for &e in &waiters {
                self.piece_done(sh, e, now);
            }
            // give the buffer back to the group for reuse (no allocation)
            let mut w = waiters;
            w.clear();
            self.ftl.groups[id as usize].waiters = w;
        }
        let cache = self.ftl.group_programmed(id, now);
        self.ctl.cache_used -= cache;
        if self.ftl.hy.is_some() {
            // a merge may wait for this program (its source or the one before)
            self.ftl.hybrid_issue(d, &mut self.sched, now);
        } else if gc {
            self.ftl.gc_try_erase(d, &mut self.sched, now);
            self.ftl.gc_issue(d, &mut self.sched, now);
        }
        if last {
            // closed blocks may be collected (or folded) now
            self.ftl.mark_changed(d);
        }
        if cache > 0 || !self.ctl.waiters.is_empty() {
            self.admit_waiters(sh, now);
        }
    }
}
