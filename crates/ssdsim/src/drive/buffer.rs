//! The write buffer and the host stream: admitting writes while the buffer and the dies have
//! room, placing their mapping units into page groups on the die that can program soonest,
//! sealing full groups into program transactions, and the coalescing flush timer.

use super::{Drive, Shared};
use crate::controller::R_FLASH;
use crate::events::{ev, EV_FLUSH};
use crate::ftl::alloc::HOST_RESERVE;
use crate::ftl::mapping::{sector_mask, UNMAPPED};
use crate::ftl::NIL;
use crate::sched::{Tx, C_PROG, F_RMW, F_SLC, K_PROG, K_READ};
use crate::OpKind;

impl Drive {
    /// Whether a write of `len` bytes over `units` mapping units can enter the buffer now: there is buffer space,
    /// and the host stream has room for all its units (the open group, block sets with pages
    /// left, or dies that may open one without touching the GC reserve).
    #[inline(always)]
    pub(super) fn can_admit(&self, units: u64, len: u64) -> bool {
        self.ctl.fits(len) && self.stream_room(units) >= units
    }

    /// Room of the host stream for units of host data, counted until `need` is reached (so the
    /// answer is `need` or more when they fit).
    #[inline(always)]
    fn stream_room(&self, need: u64) -> u64 {
        let f = &self.ftl;
        let g = &f.g;
        let mut room = 0;
        if f.host_group != NIL {
            // whole (uncompressed) units that still fit: the worst case
            let gr = &f.groups[f.host_group as usize];
            let upp = g.upp as u64;
            room = (g.planes as u64).saturating_sub(gr.plane as u64 + 1) * upp;
            if (gr.plane as usize) < g.planes {
                room += g
                    .d_us
                    .div((g.page_sectors - gr.fill) as u64)
                    .min((g.spp - gr.slots) as u64);
            }
            if room >= need {
                return room;
            }
        }
        room + self.dies_room(need - room)
    }

    /// Room of the dies for more units of host data (open block sets with pages left, and dies
    /// that may open one without touching the GC reserve), counted until `need` is reached.
    #[cold]
    fn dies_room(&self, need: u64) -> u64 {
        let f = &self.ftl;
        let g = &f.g;
        let per_page = g.planes as u64 * g.upp as u64;
        let mut room = 0;
        for d in 0..g.dies {
            let w = &f.host_wp[d];
            if w.open && w.next_page < w.pages {
                room += (w.pages - w.next_page) as u64 * per_page;
            }
            let p0 = d * g.planes;
            if (p0..p0 + g.planes).all(|p| f.free[p].len() > HOST_RESERVE) {
                room += g.slc_ppb as u64 * per_page;
            }
            if room >= need {
                break;
            }
        }
        room
    }

    /// How many more mapping units of the waiting write `e` can enter the buffer now, when it
    /// does not fit whole: as many as the buffer space and the host stream (or, hybrid, the log
    /// pages) allow. A controller pulls a command's data by DMA as its buffer frees (SATA
    /// first-party DMA in data FISes of at most 8 KiB, NVMe PRP entries of a page), so a write
    /// larger than the free space, or than the whole buffer, streams in.
    #[cold]
    #[inline(never)]
    fn admit_units(&self, e: u32) -> u64 {
        let c = &self.host.cmds[e as usize];
        let ua = c.u0 + c.in_units;
        let mut k = c.u1 - ua;
        if self.ctl.cache_cap > 0 {
            let ubytes = self.ftl.g.us as u64 * 512;
            let room = self.ctl.cache_cap.saturating_sub(self.ctl.cache_used);
            let end = c.off.max(ua * ubytes) + room;
            if end < c.off + c.len {
                k = k.min((end / ubytes).saturating_sub(ua));
            }
        }
        if k == 0 {
            return 0;
        }
        if self.ftl.hy.is_some() {
            if self.ftl.hybrid_room(ua, ua + k) {
                return k;
            }
            // the longest prefix with log pages (`lo` fits, `hi` does not)
            let (mut lo, mut hi) = (0, k);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.ftl.hybrid_room(ua, ua + mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        } else {
            self.stream_room(k).min(k)
        }
    }

    /// Admits write commands waiting for buffer space, in order: whole while they fit, and the
    /// first that does not fit a part at a time ([`Drive::admit_units`]).
    pub(super) fn admit_waiters(&mut self, sh: &mut Shared, now: u64) {
        while let Some(&e) = self.ctl.waiters.front() {
            let c = &self.host.cmds[e as usize];
            if c.kind == OpKind::Trim {
                self.ctl.waiters.pop_front();
                self.trim(sh, e, now);
                continue;
            }
            let whole = c.in_units == 0
                && if self.ftl.hy.is_some() {
                    self.hybrid_can_admit(c.u0, c.u1, c.len)
                } else {
                    self.can_admit(c.u1 - c.u0, c.len)
                };
            if whole {
                self.ctl.waiters.pop_front();
                self.admit(sh, e, now);
                continue;
            }
            let k = self.admit_units(e);
            if k == 0 {
                break;
            }
            let c = &self.host.cmds[e as usize];
            let last = c.u0 + c.in_units + k == c.u1;
            if last {
                self.ctl.waiters.pop_front();
            }
            self.admit_general(sh, e, now, k);
            if !last {
                break;
            }
        }
        if !self.ctl.waiters.is_empty() {
            self.unblock(now);
        }
    }

    /// Writes wait for buffer space: if nothing already on its way to the NAND will free any,
    /// program the partly filled host group now.
    #[inline]
    pub(super) fn unblock(&mut self, now: u64) {
        if self.ftl.hy.is_some() {
            return self.hybrid_unblock(now);
        }
        let hg = self.ftl.host_group;
        if self.ftl.host_sealed == 0 && hg != NIL && self.ftl.groups[hg as usize].sectors > 0 {
            self.seal_host(hg, now);
        }
    }

    /// The write in slot `e` (the rest of it, if a part is in already) enters the buffer at
    /// `now`: its data crosses the link, its units are mapped into the host stream, and
    /// (write-back) it completes when the data is in.
    #[inline]
    pub(super) fn admit(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let c = &self.host.cmds[e as usize];
        if self.plain && c.whole && c.in_units == 0 {
            self.admit_plain(sh, e, now);
        } else {
            let k = c.u1 - c.u0 - c.in_units;
            self.admit_general(sh, e, now, k);
        }
    }

    /// [`Drive::admit`] of whole units on a plain drive (no compression, no per-unit costs, no
    /// version tracking, write-back buffer): the same steps without the general case's
    /// partial-unit, read-modify-write and write-through handling.
    fn admit_plain(&mut self, sh: &mut Shared, e: u32, now: u64) {
        let c = &self.host.cmds[e as usize];
        let (t_fw, len, u0, u1) = (c.t_fw, c.len, c.u0, c.u1);
        let start = now.max(t_fw);
        self.c.cache_wait_ns += start - t_fw;
        let t_data = self
            .host
            .xfer(&mut sh.uplink, self.w0, now, start, len, false, true, e);
        self.ctl.cache_used += len;
        self.admit_whole(u0, u1, t_data, now);
        self.ctl.last_arrival = self.ctl.last_arrival.max(t_data);
        self.arm_flush(sh);
        let c = &mut self.host.cmds[e as usize];
        c.done = c.done.max(t_data);
        c.remaining = 0;
        let done = c.done;
        self.complete(sh, e, done);
    }

    /// The next `k` mapping units of write `e` enter the buffer (all of it, or the part that
    /// fits: the command completes once its last part is in).
    #[inline(never)]
    fn admit_general(&mut self, sh: &mut Shared, e: u32, now: u64, k: u64) {
        let cmd = self.host.cmds[e as usize];
        let us = self.ftl.g.us as u64;
        let (u0, u1) = (cmd.u0 + cmd.in_units, cmd.u0 + cmd.in_units + k);
        let (first, last) = (cmd.in_units == 0, u1 == cmd.u1);
        let b0 = cmd.off.max(u0 * us * 512);
        let len = (cmd.off + cmd.len).min(u1 * us * 512) - b0;
        let start = now.max(cmd.t_fw);
        if last {
            // how long the write waited for space until its last part went in
            self.c.cache_wait_ns += start - cmd.t_fw;
        }
        let t_data = self
            .host
            .xfer(&mut sh.uplink, self.w0, now, start, len, false, first, e);
        let write_through = self.ctl.cache_cap == 0;
        if !write_through {
            self.ctl.cache_used += len;
        }
        let s0 = cmd.off / 512;
        let s1 = (cmd.off + cmd.len).div_ceil(512);
        let mut waiting_on = 0u32;
        let mut rmw_reads = 0u32;
        let mut last_gid = NIL;
        for u in u0..u1 {
            let a = s0.max(u * us) - u * us;
            let b = s1.min((u + 1) * us) - u * us;
            let full = a == 0 && b == us;
            let l = u as usize;
            let old = self.ftl.map.l2p.get(l);
            let data_sectors = if full || self.ftl.rmw { us } else { b - a };
            // old data to read before the unit is programmed: the unit under read-modify-write,
            // or the fragments a remapping drive merges
            let mut srcs = [(UNMAPPED, 0u32); 2];
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
                        srcs[0] = (old, old_cost);
                    }
                }
            }
            let mut cost = self.ctl.nand_sectors(data_sectors, cmd.frac);
            self.ftl.c.compression_saved_bytes += (data_sectors - cost) * 512;
            if let Some(ver) = self.ftl.map.ver.as_ref() {
                for i in 0..us as usize {
                    self.ftl.scratch_ver[i] = if (a as usize..b as usize).contains(&i) {
                        cmd.version
                    } else if old != UNMAPPED {
                        ver.get(old as usize * us as usize + i)
                    } else {
                        0
                    };
                }
            }
            if self.ftl.remap && !full {
                let merge = self.ftl.remap_partial_write(l, old, sector_mask(a, b));
                for (k, (slot, c)) in merge.into_iter().enumerate() {
                    if slot == UNMAPPED {
                        continue;
                    }
                    cost += c as u64;
                    if self.ftl.is_buffered(slot) {
                        self.c.cache_hits += 1;
                    } else {
                        self.c.fragment_reads += 1;
                        srcs[k] = (slot, c);
                    }
                }
                cost = cost.min(us);
            } else if old != UNMAPPED {
                self.ftl.invalidate(l, old);
            } else {
                self.ftl.mapped_units += 1;
            }
            if !self.ftl.map.cost.is_empty() {
                self.ftl.map.cost.set(l, cost as u8);
            }
            let (slot, gid, gfull) = if self.ftl.hy.is_some() {
                self.place_hybrid(l, t_data, (b - a) * 512, now)
            } else {
                self.place_host(cost as u32, t_data, (b - a) * 512, now)
            };
            self.ftl.map_unit(l, slot, cost as u32);
            if let Some(ver) = self.ftl.map.ver.as_mut() {
                let base = slot as usize * us as usize;
                for (i, &v) in self.ftl.scratch_ver.iter().enumerate() {
                    ver.set(base + i, v);
                }
            }
            for (src, src_cost) in srcs {
                if src == UNMAPPED {
                    continue;
                }
                // the old data must reach the controller before the merged unit is programmed;
                // the command waits for it only on a drive without a write buffer: a buffered
                // write completes once its data is in, and the merge costs flash time in the
                // background (its group, holding buffer space, is programmed after the read, so
                // writes throttle when the buffer fills)
                let rmw = self.ftl.rmw && write_through;
                let g = &self.ftl.g;
                let blk = g.slot_block(src);
                let tx = Tx {
                    ready: cmd.t_fw,
                    kind: K_READ,
                    plane: (g.block_plane(blk) % g.planes) as u8,
                    flags: F_RMW | if self.ftl.blk_slc[blk] { F_SLC } else { 0 },
                    page: g.slot_page(src),
                    blk: blk as u32,
                    owner: if rmw { e } else { NIL },
                    group: gid,
                    bytes: src_cost * 512,
                    host_bytes: 0,
                    next: NIL,
                    enq: 0,
                };
                self.ftl.groups[gid as usize].deps += 1;
                if rmw {
                    rmw_reads += 1;
                }
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
        if self.ftl.hy.is_some() {
            self.hybrid_arm_flush(sh);
        } else {
            self.arm_flush(sh);
        }
        // The write completes when its data is in the buffer and (write-through) after the old
        // data of partly written units has been merged and its pages are programmed; a write
        // still partly outside the buffer holds one piece open until its last part is in.
        let c = &mut self.host.cmds[e as usize];
        c.done = c.done.max(t_data);
        c.in_units += k;
        if first {
            c.remaining = 0;
        }
        c.remaining += waiting_on + rmw_reads;
        if first && !last {
            c.remaining += 1;
        } else if last && !first {
            c.remaining -= 1;
        }
        if last && c.remaining == 0 {
            let done = c.done;
            self.complete(sh, e, done);
        }
    }

    /// The units `u0..u1` of a whole-unit write on a plain drive enter the host stream.
    #[inline(always)]
    fn admit_whole(&mut self, u0: u64, u1: u64, t_data: u64, now: u64) {
        let us = self.ftl.g.us;
        let bytes = us as u64 * 512;
        for u in u0..u1 {
            let l = u as usize;
            // one lookup of the unit's entry for its read and its writes (`invalidate` and
            // `map_unit`, inlined by hand)
            let e = self.ftl.map.l2p.entry(l);
            // SAFETY: the map lives in self.ftl, which this call neither drops nor replaces
            // (the same holds for the two writes through `e` below).
            let old = unsafe { e.get() };
            if old != UNMAPPED {
                if self.ftl.is_buffered(old) {
                    self.ftl.c.cache_write_hits += 1;
                }
                let b = self.ftl.g.slot_block(old);
                self.ftl.blk_valid[b] -= self.ftl.map.unit_cost(l);
                // SAFETY: the map is still alive in self.ftl (see above).
                unsafe { e.set(UNMAPPED) };
            } else {
                self.ftl.mapped_units += 1;
            }
            let (slot, gid, gfull) = self.place_host(us, t_data, bytes, now);
            self.ftl.set_reverse(slot, l);
            // SAFETY: place_host allocates a slot but never drops or replaces the map (see
            // above).
            unsafe { e.set(slot) };
            let b = self.ftl.g.slot_block(slot);
            self.ftl.blk_valid[b] += us;
            if gfull {
                self.seal_host(gid, now);
            }
        }
    }

    /// Puts one unit into the host stream (opening a group on the best die when needed);
    /// returns its slot, its group and whether the group is now full.
    #[inline(always)]
    pub(super) fn place_host(
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
    pub(super) fn choose_host_die(&mut self, now: u64) -> usize {
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
    pub(super) fn seal_host(&mut self, id: u32, _now: u64) {
        self.ftl.seal(id);
        let d = self.ftl.groups[id as usize].die as usize;
        if self.ftl.host_pending[d].is_empty() && self.ftl.groups[id as usize].deps == 0 {
            self.enqueue_program(d, id);
        } else {
            self.ftl.host_pending[d].push_back(id);
        }
    }

    pub(super) fn enqueue_program(&mut self, d: usize, id: u32) {
        if self.ctl.fw_flash > 0 {
            // a `flash` core issues the program once the group's data is in
            let now = self.sched.now;
            let gr = &mut self.ftl.groups[id as usize];
            gr.ready = self
                .ctl
                .fw(self.w0, now, R_FLASH, gr.ready.max(now), self.ctl.fw_flash);
        }
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
    pub(super) fn drain_pending(&mut self, d: usize) {
        while let Some(&id) = self.ftl.host_pending[d].front() {
            let gr = &self.ftl.groups[id as usize];
            if gr.deps > 0 || !gr.sealed {
                break;
            }
            self.ftl.host_pending[d].pop_front();
            self.enqueue_program(d, id);
        }
    }

    pub(super) fn arm_flush(&mut self, sh: &mut Shared) {
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
        if self.ftl.hy.is_some() {
            return self.hybrid_flush_timer(sh, now);
        }
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
}
