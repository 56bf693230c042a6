//! One simulated drive: the layers wired together and driven by events.
//!
//! A command flows down — host interface ([`crate::host`]) → firmware and write buffer
//! ([`crate::controller`]) → FTL ([`crate::ftl`]) → flash transaction scheduler
//! ([`crate::sched`]) → NAND dies and channels ([`crate::nand`]) — and its completion flows
//! back up as an event. Every resource that serves requests in a chosen order is event-driven
//! (a die decides what to run when it becomes free); resources that serve requests in the
//! order of their times are timelines (firmware cores: busy-until; channels and the link:
//! calendars with gap filling).

use crate::config::{DriveConfig, Interface};
use crate::controller::Controller;
use crate::counters::{Audit, AuditReport, DriveCounters, RawCounters, Utilisation};
use crate::events::{ev, Agenda, Calendar, EV_DIE_DONE, EV_DIE_WAKE, EV_FLUSH, EV_HOST_DONE};
use crate::ftl::alloc::HOST_RESERVE;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::{try_vec, try_vec_with_capacity, AllocError, Ftl, ERASING, NIL};
use crate::host::{Cmd, Host, Queued, Uplink};
use crate::mem::prefetch;
use crate::nand::{Meter, NandTiming, MAX_PLANES};
use crate::sched::{
    Op, Sched, Suspended, Tx, C_GC, C_PROG, C_READ, F_RMW, F_SLC, K_ERASE, K_PROG, K_READ,
    K_SUSPEND,
};
use crate::{HostCmd, OpKind};

/// State shared by all drives behind one host adapter.
#[derive(Clone)]
pub(crate) struct Shared {
    pub heap: Agenda,
    pub seq: u64,
    pub uplink: Uplink,
}

impl Shared {
    /// Schedules an internal event (its own sequence number orders ties).
    #[inline]
    pub(crate) fn push(&mut self, t: u64, tag: u64) {
        self.seq += 1;
        self.heap.push(t, self.seq, tag);
    }
}

const DIE_BITS: u64 = 20;

#[derive(Clone)]
pub(crate) struct Drive {
    idx: u32,
    pub(crate) ftl: Ftl,
    sched: Sched,
    nand: NandTiming,
    host: Host,
    ctl: Controller,
    channels: Vec<Calendar>,
    ch_meter: Vec<Meter>,
    /// The host stream's last die (round-robin order for ties).
    last_host_die: usize,
    /// Start of the measurement window.
    w0: u64,
    write_seq: u32,
    /// No compression, no per-unit NAND costs, no version tracking, a write-back buffer:
    /// whole-unit writes take [`Drive::admit_whole`].
    plain: bool,
    c: RawCounters,
    audit: Option<Box<Audit>>,
}

/// Capacities planned for a configuration: page groups and transactions in flight.
fn plan(cfg: &DriveConfig) -> (usize, usize) {
    let n = &cfg.nand;
    let dies = (n.channels * n.dies_per_channel) as usize;
    let group_bytes = n.page_bytes * n.planes_per_die as u64;
    let qd = cfg.host.queue_depth as usize;
    let groups = dies * 4 + (cfg.controller.cache_bytes / group_bytes) as usize + qd * 2 + 16;
    let txs = groups + qd * 8 + dies * (n.planes_per_die as usize * 4 + 8) + 64;
    (groups, txs)
}

impl Drive {
    /// Bytes of memory (address space) [`Drive::try_new`] allocates for `cfg`: mapping tables,
    /// block state, page groups, transaction queues, command slots. Kept next to `try_new` so
    /// the two stay in step (a test checks the estimate against what is really allocated).
    pub(crate) fn memory_estimate(cfg: &DriveConfig, tracking: bool) -> u64 {
        let (groups, txs) = plan(cfg);
        let dies = (cfg.nand.channels * cfg.nand.dies_per_channel) as usize;
        let channels = cfg.nand.channels as u64;
        Ftl::memory_estimate(cfg, tracking, groups)
            + Sched::memory_estimate(dies, txs)
            + Host::memory_estimate(cfg.host.queue_depth as usize)
            + Controller::memory_estimate(cfg)
            + channels * (8 * 16 + 8)
    }

    /// A fresh (trimmed) drive. Every table whose size comes from the configuration is
    /// allocated fallibly: running out of memory is an error naming the table, not an abort.
    pub(crate) fn try_new(
        cfg: &DriveConfig,
        tracking: bool,
        idx: u32,
    ) -> Result<Drive, AllocError> {
        let (groups, txs) = plan(cfg);
        let ftl = Ftl::try_new(cfg, tracking, groups)?;
        let dies = ftl.g.dies;
        let mut channels = try_vec_with_capacity(ftl.g.channels, "channel timelines")?;
        for _ in 0..ftl.g.channels {
            let mut c = Calendar::default();
            c.try_reserve(8)
                .map_err(|_| AllocError::new("channel timelines", 8 * 16))?;
            channels.push(c);
        }
        let ctl = Controller::try_new(cfg)?;
        let plain = !tracking && ftl.map.cost.is_empty() && !ctl.compression && ctl.cache_cap > 0;
        Ok(Drive {
            idx,
            plain,
            sched: Sched::try_new(
                dies,
                txs,
                cfg.sched.read_priority,
                cfg.sched.suspend_min_remaining_ns,
                cfg.nand.t_prog_ns,
            )?,
            nand: NandTiming::new(cfg),
            host: Host::try_new(
                cfg.host.interface == Interface::Nvme,
                cfg.host.link_bytes_per_sec,
                cfg.host.cmd_overhead_ns,
                cfg.host.queue_depth as usize,
            )?,
            ctl,
            ch_meter: try_vec(Meter::default(), ftl.g.channels, "channel timelines")?,
            channels,
            last_host_die: dies - 1,
            w0: 0,
            write_seq: 0,
            c: RawCounters::default(),
            audit: None,
            ftl,
        })
    }

    /// Brings the drive into the requested state without timing simulation.
    pub(crate) fn precondition(&mut self, pre: crate::Precondition, seed: u64) {
        self.ftl.precondition(pre, seed);
        for d in 0..self.ftl.g.dies {
            let m = self.ftl.die_gc_mode(d);
            self.sched.set_mode(d, m);
            self.ftl.changed_flag[d] = false;
        }
        self.ftl.changed.clear();
        self.ftl.reset_free_stats(0);
    }

    pub(crate) fn enable_audit(&mut self) {
        self.audit = Some(Box::new(Audit {
            die_end: vec![0; self.ftl.g.dies],
            ..Audit::default()
        }));
    }

    pub(crate) fn audit_report(&self) -> Option<AuditReport> {
        self.audit.as_ref().map(|a| a.r.clone())
    }

    // ---------------------------------------------------------------- host commands

    /// Hint: a command at byte `offset` is coming soon; start loading its mapping entry into
    /// the cache so that its submission does not wait for memory.
    #[inline(always)]
    pub(crate) fn prefetch(&self, offset: u64) {
        prefetch(
            self.ftl.map.l2p.raw(),
            self.ftl.g.d_unit.div(offset) as usize,
        );
    }

    /// A host command arrives at `now` (events before `now` have been processed).
    #[inline(always)]
    pub(crate) fn submit(&mut self, sh: &mut Shared, now: u64, tag: u64, seq: u64, cmd: HostCmd) {
        self.sched.now = now;
        let u = self.ftl.g.d_unit.div(cmd.offset) as usize;
        prefetch(self.ftl.map.l2p.raw(), u);
        if cmd.kind == OpKind::Write && u < self.ftl.map.l2p.len() {
            // with the entry itself cached (prefetched one command ahead by the caller), also
            // start on the valid count of the block holding the data being overwritten
            let old = self.ftl.map.l2p.get(u);
            if old != UNMAPPED {
                prefetch(&self.ftl.blk_valid, self.ftl.g.slot_block(old));
            }
        }
        match self.host.alloc() {
            Some(e) => self.start(sh, e, now, tag, seq, cmd),
            // every queue slot taken: the host keeps it until one frees
            None => self.host.wait.push_back(Queued { tag, seq, cmd }),
        }
        self.service(sh, now);
    }

    #[inline(always)]
    fn start(&mut self, sh: &mut Shared, e: u32, now: u64, tag: u64, seq: u64, cmd: HostCmd) {
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
            remaining: 0,
            done: now,
            first: true,
        };
        match cmd.kind {
            OpKind::Read => self.start_read(sh, e, now),
            OpKind::Write => self.start_write(sh, e, now),
            OpKind::Trim => {
                self.c.host_trims += 1;
                let t = self.ctl.fw_op(self.w0, now, self.ctl.fw_trim);
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

    fn trim(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let c = self.host.cmds[e as usize];
        self.ftl.trim(c.off, c.len);
        let done = self.host.xfer(
            &mut sh.uplink,
            self.w0,
            now,
            now.max(c.t_fw),
            0,
            false,
            true,
        );
        self.complete(sh, e, done);
    }

    #[inline]
    fn complete(&mut self, sh: &mut Shared, e: u32, t: u64) {
        let seq = self.host.cmds[e as usize].seq;
        sh.heap
            .push_completion(t, seq, ev(EV_HOST_DONE, self.idx, e as u64));
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
        self.host.release(e);
        if !self.host.wait.is_empty() {
            self.start_queued(sh, t);
        }
        tag
    }

    #[cold]
    fn start_queued(&mut self, sh: &mut Shared, t: u64) {
        self.sched.now = t;
        if let Some(q) = self.host.wait.pop_front() {
            let e = self.host.alloc().expect("a slot was just freed");
            self.start(sh, e, t, q.tag, q.seq, q.cmd);
            self.service(sh, t);
        }
    }

    fn start_read(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let Cmd { off, len, .. } = self.host.cmds[e as usize];
        self.c.host_reads += 1;
        self.c.host_read_bytes += len;
        let g = &self.ftl.g;
        let ub = g.unit_bytes;
        let s0 = off / 512;
        let s1 = (off + len).div_ceil(512);
        let u0 = g.d_us.div(s0);
        let u1 = g.d_us.div_ceil(s1);
        let t_fw = self.ctl.fw_op(
            self.w0,
            now,
            self.ctl.fw_read + self.ctl.fw_read_unit * len.div_ceil(4096).saturating_sub(1),
        );
        self.host.cmds[e as usize].t_fw = t_fw;
        let mut dram = 0u64;
        let mut pages = 0u32;
        let mut tx = Tx::default();
        let mut cur_page = u32::MAX;
        for u in u0..u1 {
            let l = u as usize;
            let host_b = (off + len).min((u + 1) * ub) - off.max(u * ub);
            let slot = self.ftl.map.l2p.get(l);
            if slot == UNMAPPED {
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
            if gp == cur_page {
                tx.bytes += nand_b;
                tx.host_bytes += host_b as u32;
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
                ready: t_fw,
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
            // data held in the controller (or unmapped: zeros) goes to the host at once
            let end = self
                .host
                .xfer(&mut sh.uplink, self.w0, now, t_fw, dram, true, true);
            let c = &mut self.host.cmds[e as usize];
            c.first = false;
            c.done = end;
            if pages == 0 {
                self.complete(sh, e, end);
            }
        }
    }

    #[inline]
    fn enqueue_read(&mut self, tx: Tx) {
        let d = self
            .ftl
            .g
            .plane_die(self.ftl.g.block_plane(tx.blk as usize));
        self.sched.enqueue(d, C_READ, tx);
    }

    fn start_write(&mut self, sh: &mut Shared, e: u32, now: u64) {
        self.write_seq += 1;
        let c = &mut self.host.cmds[e as usize];
        c.version = self.write_seq;
        let (off, len) = (c.off, c.len);
        self.c.host_writes += 1;
        self.c.host_write_bytes += len;
        let g = &self.ftl.g;
        let s0 = off / 512;
        let s1 = (off + len).div_ceil(512);
        let aligned = g.d_us.rem(s0) == 0 && g.d_us.rem(s1) == 0;
        let mut fwt =
            self.ctl.fw_write + self.ctl.fw_write_unit * (len.div_ceil(4096)).saturating_sub(1);
        if !aligned && !self.ftl.rmw {
            fwt += self.ctl.remap_cost;
        }
        let t_fw = self.ctl.fw_op(self.w0, now, fwt);
        self.host.cmds[e as usize].t_fw = t_fw;
        if self.ctl.waiters.is_empty() && self.can_admit(off, len) {
            self.admit(sh, e, now);
        } else {
            self.ctl.waiters.push_back(e);
            self.unblock(now);
        }
    }

    /// Whether a write of `len` bytes at `off` can enter the buffer now: there is buffer space,
    /// and the host stream has room for all its units (the open group, block sets with pages
    /// left, or dies that may open one without touching the GC reserve).
    #[inline(always)]
    fn can_admit(&self, off: u64, len: u64) -> bool {
        if !self.ctl.fits(len) {
            return false;
        }
        let g = &self.ftl.g;
        let units = g.d_unit.div_ceil(off + len) - g.d_unit.div(off);
        let f = &self.ftl;
        let mut need = units;
        if f.host_group != NIL {
            // whole (uncompressed) units that still fit: the worst case
            let gr = &f.groups[f.host_group as usize];
            let upp = g.upp as u64;
            let mut room = (g.planes as u64).saturating_sub(gr.plane as u64 + 1) * upp;
            if (gr.plane as usize) < g.planes {
                room += g
                    .d_us
                    .div((g.page_sectors - gr.fill) as u64)
                    .min((g.spp - gr.slots) as u64);
            }
            if room >= need {
                return true;
            }
            need -= room;
        }
        self.host_has_room(need)
    }

    /// Whether the dies can take `need` more units of host data.
    #[cold]
    fn host_has_room(&self, mut need: u64) -> bool {
        let f = &self.ftl;
        let g = &f.g;
        let per_page = g.planes as u64 * g.upp as u64;
        for d in 0..g.dies {
            let w = &f.host_wp[d];
            let mut room = 0;
            if w.open && w.next_page < w.pages {
                room += (w.pages - w.next_page) as u64 * per_page;
            }
            let p0 = d * g.planes;
            if (p0..p0 + g.planes).all(|p| f.free[p].len() > HOST_RESERVE) {
                room += f.pages_in(false) as u64 / 2 * per_page;
            }
            if room >= need {
                return true;
            }
            need -= room;
        }
        false
    }

    /// Admits write commands waiting for buffer space, in order, while they fit.
    fn admit_waiters(&mut self, sh: &mut Shared, now: u64) {
        while let Some(&e) = self.ctl.waiters.front() {
            let c = &self.host.cmds[e as usize];
            if c.kind == OpKind::Trim {
                self.ctl.waiters.pop_front();
                self.trim(sh, e, now);
                continue;
            }
            if !self.can_admit(c.off, c.len) {
                break;
            }
            self.ctl.waiters.pop_front();
            self.admit(sh, e, now);
        }
        if !self.ctl.waiters.is_empty() {
            self.unblock(now);
        }
    }

    /// Writes wait for buffer space: if nothing already on its way to the NAND will free any,
    /// program the partly filled host group now.
    fn unblock(&mut self, now: u64) {
        let hg = self.ftl.host_group;
        if self.ftl.host_sealed == 0 && hg != NIL && self.ftl.groups[hg as usize].sectors > 0 {
            self.seal_host(hg, now);
        }
    }

    /// The write in slot `e` enters the buffer at `now`: its data crosses the link, its units
    /// are mapped into the host stream, and (write-back) it completes when the data is in.
    fn admit(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let cmd = self.host.cmds[e as usize];
        let start = now.max(cmd.t_fw);
        self.c.cache_wait_ns += start - cmd.t_fw;
        let t_data = self
            .host
            .xfer(&mut sh.uplink, self.w0, now, start, cmd.len, false, true);
        let write_through = self.ctl.cache_cap == 0;
        if !write_through {
            self.ctl.cache_used += cmd.len;
        }
        let g = &self.ftl.g;
        let us = g.us as u64;
        let s0 = cmd.off / 512;
        let s1 = (cmd.off + cmd.len).div_ceil(512);
        let u0 = g.d_us.div(s0);
        let u1 = g.d_us.div_ceil(s1);
        let mut waiting_on = 0u32;
        let mut rmw_reads = 0u32;
        let mut last_gid = NIL;
        let whole = self.plain && g.d_us.rem(s0) == 0 && g.d_us.rem(s1) == 0;
        if whole {
            self.admit_whole(u0, u1, t_data, now);
        }
        for u in if whole { 0..0 } else { u0..u1 } {
            let a = s0.max(u * us) - u * us;
            let b = s1.min((u + 1) * us) - u * us;
            let full = a == 0 && b == us;
            let l = u as usize;
            let old = self.ftl.map.l2p.get(l);
            let data_sectors = if full || self.ftl.rmw { us } else { b - a };
            let mut rmw_src = UNMAPPED;
            let old_cost = self.ftl.map.unit_cost(l);
            if old != UNMAPPED {
                let buffered = self.ftl.is_buffered(old);
                if buffered {
                    self.ftl.c.cache_write_hits += 1;
                }
                if !full && self.ftl.rmw {
                    if buffered {
                        self.c.cache_hits += 1;
                    } else {
                        self.c.rmw_reads += 1;
                        rmw_src = old;
                    }
                }
            }
            let cost = self.ctl.nand_sectors(data_sectors, cmd.frac);
            self.ftl.c.compression_saved_bytes += (data_sectors - cost) * 512;
            if let Some(ver) = self.ftl.map.ver.as_ref() {
                for i in 0..us as usize {
                    self.ftl.scratch_ver[i] = if (a as usize..b as usize).contains(&i) {
                        cmd.version
                    } else if old != UNMAPPED {
                        ver[old as usize * us as usize + i]
                    } else {
                        0
                    };
                }
            }
            if old != UNMAPPED {
                self.ftl.invalidate(l, old);
            } else {
                self.ftl.mapped_units += 1;
            }
            if !self.ftl.map.cost.is_empty() {
                self.ftl.map.cost[l] = cost as u8;
            }
            let (slot, gid, gfull) = self.place_host(cost as u32, t_data, (b - a) * 512, now);
            self.ftl.map_unit(l, slot, cost as u32);
            if let Some(ver) = self.ftl.map.ver.as_mut() {
                let base = slot as usize * us as usize;
                ver[base..base + us as usize].copy_from_slice(&self.ftl.scratch_ver);
            }
            if rmw_src != UNMAPPED {
                // the old unit must reach the controller before the merged unit is programmed
                let g = &self.ftl.g;
                let blk = g.slot_block(rmw_src);
                let tx = Tx {
                    ready: cmd.t_fw,
                    kind: K_READ,
                    plane: (g.block_plane(blk) % g.planes) as u8,
                    flags: F_RMW | if self.ftl.blk_slc[blk] { F_SLC } else { 0 },
                    page: g.slot_page(rmw_src),
                    blk: blk as u32,
                    owner: e,
                    group: gid,
                    bytes: old_cost * 512,
                    host_bytes: 0,
                    next: NIL,
                    enq: 0,
                };
                self.ftl.groups[gid as usize].deps += 1;
                rmw_reads += 1;
                self.enqueue_read(tx);
            }
            if write_through && gid != last_gid {
                self.ftl.groups[gid as usize].waiters.push(e);
                waiting_on += 1;
                last_gid = gid;
            }
            if gfull {
                self.seal_host(gid, now);
            }
        }
        self.ctl.last_arrival = self.ctl.last_arrival.max(t_data);
        self.arm_flush(sh);
        // The write completes when its data is in the buffer, after the old data of partly
        // written units has been merged (`rmw`: the buffer holds whole mapping units), and
        // (write-through) after its pages are programmed.
        let c = &mut self.host.cmds[e as usize];
        c.done = t_data;
        c.remaining = waiting_on + rmw_reads;
        if c.remaining == 0 {
            self.complete(sh, e, t_data);
        }
    }

    /// [`Drive::admit`] of whole units on a plain drive (no compression, no per-unit costs, no
    /// version tracking, write-back buffer): the same steps without the general case's
    /// partial-unit, read-modify-write and write-through handling.
    #[inline]
    fn admit_whole(&mut self, u0: u64, u1: u64, t_data: u64, now: u64) {
        let us = self.ftl.g.us;
        let bytes = us as u64 * 512;
        for u in u0..u1 {
            let l = u as usize;
            let old = self.ftl.map.l2p.get(l);
            if old != UNMAPPED {
                if self.ftl.is_buffered(old) {
                    self.ftl.c.cache_write_hits += 1;
                }
                self.ftl.invalidate(l, old);
            } else {
                self.ftl.mapped_units += 1;
            }
            let (slot, gid, gfull) = self.place_host(us, t_data, bytes, now);
            self.ftl.map_unit(l, slot, us);
            if gfull {
                self.seal_host(gid, now);
            }
        }
    }

    /// Puts one unit into the host stream (opening a group on the best die when needed);
    /// returns its slot, its group and whether the group is now full.
    #[inline(always)]
    fn place_host(
        &mut self,
        cost: u32,
        ready: u64,
        cache_bytes: u64,
        now: u64,
    ) -> (u32, u32, bool) {
        loop {
            if self.ftl.host_group == NIL {
                let d = self.choose_host_die(now);
                self.ftl.open_host_group(d, now);
            }
            let id = self.ftl.host_group;
            let mut full = false;
            if let Some(slot) = self.ftl.group_put(id, cost, ready, &mut full) {
                self.ftl.groups[id as usize].cache_bytes += cache_bytes;
                return (slot, id, full);
            }
            self.seal_host(id, now);
        }
    }

    /// The die for the host stream's next page group: the one that can start a program soonest
    /// (idle, or the shortest queue of host programs), avoiding dies in foreground GC;
    /// round-robin order breaks ties.
    fn choose_host_die(&mut self, now: u64) -> usize {
        let n = self.ftl.g.dies;
        let first = if self.last_host_die + 1 >= n {
            0
        } else {
            self.last_host_die + 1
        };
        const HI: u64 = 1 << 63;
        let avail = &self.sched.avail;
        let mut best = usize::MAX;
        let mut best_key = u64::MAX;
        // (foreground GC, when a new host program could start) packed in one u64
        let key_of = |a: u64| (a & HI) | (a & !HI).max(now);
        // dies first..n, then 0..first
        let mut d = first;
        for _ in 0..n {
            let key = key_of(avail[d]);
            if key < best_key && self.ftl.host_can_use(d) {
                best_key = key;
                best = d;
                if key == now {
                    break;
                }
            }
            d += 1;
            if d == n {
                d = 0;
            }
        }
        if best == usize::MAX {
            // every die at its GC reserve: take the die with the most free blocks
            let planes = self.ftl.g.planes;
            best = (0..n)
                .max_by_key(|&d| {
                    (d * planes..(d + 1) * planes)
                        .map(|p| self.ftl.free[p].len())
                        .min()
                        .unwrap_or(0)
                })
                .expect("at least one die");
        }
        self.last_host_die = best;
        best
    }

    /// Host group `id` takes no more data: its program is queued (in page order behind groups
    /// of the same die still waiting for read-modify-write reads).
    fn seal_host(&mut self, id: u32, _now: u64) {
        self.ftl.seal(id);
        let d = self.ftl.groups[id as usize].die as usize;
        if self.ftl.host_pending[d].is_empty() && self.ftl.groups[id as usize].deps == 0 {
            self.enqueue_program(d, id);
        } else {
            self.ftl.host_pending[d].push_back(id);
        }
    }

    fn enqueue_program(&mut self, d: usize, id: u32) {
        let gr = &self.ftl.groups[id as usize];
        self.sched.enqueue(
            d,
            C_PROG,
            Tx {
                ready: gr.ready,
                kind: K_PROG,
                flags: if gr.slc { F_SLC } else { 0 },
                owner: id,
                ..Tx::default()
            },
        );
    }

    /// Queues the programs of die `d`'s sealed host groups whose reads have all arrived.
    fn drain_pending(&mut self, d: usize) {
        while let Some(&id) = self.ftl.host_pending[d].front() {
            let gr = &self.ftl.groups[id as usize];
            if gr.deps > 0 || !gr.sealed {
                break;
            }
            self.ftl.host_pending[d].pop_front();
            self.enqueue_program(d, id);
        }
    }

    fn arm_flush(&mut self, sh: &mut Shared) {
        if self.ctl.flush_at == u64::MAX && self.ftl.host_group != NIL {
            let t = self.ctl.last_arrival + self.ctl.coalesce;
            self.ctl.flush_at = t;
            sh.push(t, ev(EV_FLUSH, self.idx, 0));
        }
    }

    /// Flush timer: a partly filled host group is programmed once no host data has arrived for
    /// `coalesce_ns` (a saturated drive keeps filling its groups instead).
    pub(crate) fn flush_timer(&mut self, sh: &mut Shared, now: u64) {
        self.sched.now = now;
        self.ctl.flush_at = u64::MAX;
        let hg = self.ftl.host_group;
        if hg == NIL || self.ftl.groups[hg as usize].sectors == 0 {
            return;
        }
        if self.ctl.last_arrival + self.ctl.coalesce <= now {
            self.seal_host(hg, now);
            self.service(sh, now);
        } else {
            self.arm_flush(sh);
        }
    }

    // ---------------------------------------------------------------- flash scheduling

    /// Looks at every die whose queues changed: an idle die starts work, a busy die may be
    /// suspended for a read, or wakes when a queued transaction becomes ready.
    #[inline(always)]
    fn service(&mut self, sh: &mut Shared, now: u64) {
        if !self.ftl.changed.is_empty() || !self.sched.dirty.is_empty() {
            self.service_dies(sh, now);
        }
    }

    fn service_dies(&mut self, sh: &mut Shared, now: u64) {
        // dies whose blocks changed: GC mode, and GC when they need it
        while let Some(d) = self.ftl.changed.pop() {
            let d = d as usize;
            self.ftl.changed_flag[d] = false;
            let m = self.ftl.die_gc_mode(d);
            self.sched.set_mode(d, m);
            if self.ftl.gc_start(d, now) {
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
    fn dispatch(&mut self, sh: &mut Shared, d: usize, now: u64) {
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

    /// Marks die `d` busy with `op` until `op.end` and schedules its completion.
    #[inline]
    fn begin(&mut self, sh: &mut Shared, d: usize, op: Op) {
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
    fn start_read_op(
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
        if gc {
            self.ftl.gc[d].queued -= n as u32;
        }
        let slc = first.flags & F_SLC != 0;
        let array_end = now + self.nand.read_ns(slc);
        let ch = self.ftl.g.die_channel(d);
        let mut t = array_end;
        let mut pages = 0;
        for tx in txs.iter().take(n) {
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
                    t
                };
                self.ftl
                    .gc_move_scratch(d, tx.plane as usize, ready, now, Some(&mut self.sched));
                continue;
            }
            pages += 1;
            t = self.channel(ch, now, t, tx.bytes as u64);
            if tx.flags & F_RMW != 0 {
                let gr = &mut self.ftl.groups[tx.group as usize];
                gr.ready = gr.ready.max(t);
                gr.deps -= 1;
                if gr.deps == 0 {
                    let gd = gr.die as usize;
                    self.drain_pending(gd);
                }
                self.piece_done(sh, tx.owner, t);
            } else {
                self.read_piece(sh, tx.owner, tx.host_bytes as u64, t, now);
            }
        }
        if gc {
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
    fn channel(&mut self, ch: usize, now: u64, t: u64, bytes: u64) -> u64 {
        let dur = self.nand.bus_ns(bytes);
        let (s, e) = self.channels[ch].book(now, t, dur);
        self.ch_meter[ch].add(self.w0, s, e);
        e
    }

    /// A piece of host read data is in the controller at `t`: it goes over the link; the command
    /// completes with its last piece.
    #[inline]
    fn read_piece(&mut self, sh: &mut Shared, e: u32, bytes: u64, t: u64, now: u64) {
        let first = self.host.cmds[e as usize].first;
        let end = self
            .host
            .xfer(&mut sh.uplink, self.w0, now, t, bytes, true, first);
        self.host.cmds[e as usize].first = false;
        self.piece_done(sh, e, end);
    }

    /// A piece of command `e` (read data delivered, old data merged, program done) ends at
    /// `t`; the command completes with its last piece.
    #[inline]
    fn piece_done(&mut self, sh: &mut Shared, e: u32, t: u64) {
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
    fn start_program(&mut self, sh: &mut Shared, d: usize, tx: Tx, now: u64) {
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
        let (page, slc, used, gc, sectors) = (gr.page, gr.slc, gr.used_planes, gr.gc, gr.sectors);
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

    /// Starts a (multi-plane) block erase.
    fn start_erase(&mut self, sh: &mut Shared, d: usize, first: Tx, now: u64) {
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
    fn consider_suspend(&mut self, sh: &mut Shared, d: usize, now: u64) {
        let die = &self.sched.dies[d];
        let op = die.op;
        let can = match op.kind {
            K_PROG => self.nand.program_suspend,
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
        if op.kind == K_PROG {
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
    fn resume(&mut self, sh: &mut Shared, d: usize, now: u64) {
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
    fn watch_reads(&mut self, sh: &mut Shared, d: usize) {
        if self.nand.program_suspend || self.nand.erase_suspend {
            let r = self.sched.read_ready(d);
            if r != u64::MAX {
                let at = r.max(self.sched.dies[d].op.array_start);
                self.arm_wake(sh, d, at);
            }
        }
    }

    fn arm_wake(&mut self, sh: &mut Shared, d: usize, t: u64) {
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

    fn program_done(&mut self, sh: &mut Shared, d: usize, id: u32, now: u64) {
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
        if gc {
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

    // ---------------------------------------------------------------- counters

    /// Starts the measurement window at `now`: counters restart, busy times count from here.
    pub(crate) fn reset_counters(&mut self, now: u64) {
        self.w0 = now;
        self.c = RawCounters::default();
        self.ftl.c = Default::default();
        self.ftl.reset_free_stats(now);
        for die in &mut self.sched.dies {
            die.meter.acc = if die.busy && die.op.end > now {
                die.op.end - now.max(die.op.start)
            } else {
                0
            };
        }
        for (m, c) in self.ch_meter.iter_mut().zip(&self.channels) {
            m.acc = c.busy_after(now);
        }
        for (m, &f) in self.ctl.fw_meter.iter_mut().zip(&self.ctl.fw) {
            m.acc = f.saturating_sub(now);
        }
        self.host.up_meter.acc = self.host.up.busy_after(now);
        self.host.down_meter.acc = self.host.down.busy_after(now);
    }

    /// Counters over `[window start, now]`.
    pub(crate) fn counters(&self, now: u64) -> DriveCounters {
        let c = &self.c;
        let f = &self.ftl.c;
        let (mut mn, mut mx, mut sum) = (u32::MAX, 0u32, 0u64);
        for &e in &self.ftl.blk_erase {
            mn = mn.min(e);
            mx = mx.max(e);
            sum += e as u64;
        }
        let window = now.saturating_sub(self.w0);
        let (free_mean, spare_mean) = self.ftl.free_means(self.w0, now);
        let dies: Vec<u64> = self
            .sched
            .dies
            .iter()
            .map(|die| {
                let future = if die.busy {
                    die.op.end.saturating_sub(now)
                } else {
                    0
                };
                die.meter.acc.saturating_sub(future)
            })
            .collect();
        let channels: Vec<u64> = self
            .ch_meter
            .iter()
            .zip(&self.channels)
            .map(|(m, c)| m.acc.saturating_sub(c.busy_after(now)))
            .collect();
        let fw: Vec<u64> = self
            .ctl
            .fw_meter
            .iter()
            .zip(&self.ctl.fw)
            .map(|(m, &f)| m.acc.saturating_sub(f.saturating_sub(now)))
            .collect();
        let link = self
            .host
            .up_meter
            .acc
            .saturating_sub(self.host.up.busy_after(now));
        let link_down = self
            .host
            .down_meter
            .acc
            .saturating_sub(self.host.down.busy_after(now));
        DriveCounters {
            window_ns: window,
            host_read_bytes: c.host_read_bytes,
            host_write_bytes: c.host_write_bytes,
            host_reads: c.host_reads,
            host_writes: c.host_writes,
            host_trims: c.host_trims,
            trimmed_units: f.trimmed_units,
            nand_reads: c.nand_reads,
            nand_read_cmds: c.nand_read_cmds,
            nand_programs: c.nand_programs,
            nand_program_cmds: c.nand_program_cmds,
            nand_program_bytes: c.nand_program_bytes,
            nand_erases: c.nand_erases,
            nand_erase_cmds: c.nand_erase_cmds,
            gc_runs: f.gc_runs,
            gc_pages_moved: f.gc_pages_moved,
            gc_units_moved: f.gc_units_moved,
            pslc_folds: f.pslc_folds,
            rmw_reads: c.rmw_reads,
            write_amplification: if c.host_write_bytes > 0 {
                c.nand_program_bytes as f64 / c.host_write_bytes as f64
            } else {
                0.0
            },
            cache_hits: c.cache_hits,
            cache_write_hits: f.cache_write_hits,
            pslc_programs: c.pslc_programs,
            compression_saved_bytes: f.compression_saved_bytes,
            program_suspends: c.program_suspends,
            erase_suspends: c.erase_suspends,
            erase_count_min: mn,
            erase_count_max: mx,
            erase_count_mean: sum as f64 / self.ftl.blk_erase.len() as f64,
            link_busy_ns: link,
            link_to_host_busy_ns: link_down,
            fw_busy_ns: fw.iter().sum(),
            cache_wait_ns: c.cache_wait_ns,
            mapped_bytes: self.ftl.mapped_units * self.ftl.g.unit_bytes,
            free_blocks: self.ftl.free_total,
            free_blocks_mean: free_mean,
            spare_blocks_mean: spare_mean,
            free_blocks_min: self.ftl.free_min,
            utilisation: Utilisation::new(window, &dies, &channels, &fw, link, link_down),
            per_die_busy_ns: dies,
            per_channel_busy_ns: channels,
            per_fw_busy_ns: fw,
        }
    }

    /// Data version of a logical sector (tracking mode): `None` when unmapped or never written.
    pub(crate) fn read_version(&self, sector: u64) -> Option<u32> {
        let ver = self.ftl.map.ver.as_ref()?;
        let us = self.ftl.g.us as u64;
        let u = (sector / us) as usize;
        if u >= self.ftl.map.l2p.len() {
            return None;
        }
        let slot = self.ftl.map.l2p.get(u);
        if slot == UNMAPPED {
            return None;
        }
        let v = ver[slot as usize * us as usize + (sector % us) as usize];
        (v != 0).then_some(v)
    }

    pub(crate) fn write_seq(&self) -> u32 {
        self.write_seq
    }

    /// Work still queued or running inside the drive (GC, programs of buffered data).
    pub(crate) fn busy(&self) -> bool {
        (0..self.ftl.g.dies).any(|d| self.sched.dies[d].busy || self.sched.queued_total(d) > 0)
    }

    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        self.ftl.check_invariants()?;
        let used = self.ctl.cache_used;
        if self.ctl.cache_cap > 0 && used > self.ctl.cache_cap {
            return Err(format!(
                "write buffer holds {used} bytes, more than its {} bytes",
                self.ctl.cache_cap
            ));
        }
        Ok(())
    }
}
