//! The simulator: N drives in one event queue behind one host adapter, and the event loop.

use crate::adapter::{too_large, ItemKind, Waiting, WriteCache, WriteCacheCounters, CACHE_TAG};
use crate::config::{ConfigError, DriveConfig};
use crate::counters::AuditReport;
use crate::drive::{Drive, Shared};
use crate::events::{
    ev, ev_drive, ev_kind, ev_payload, Agenda, Calendar, Ring, EV_ADAPTER_DONE, EV_ARRIVE,
    EV_CACHE_PUMP, EV_DIE_DONE, EV_DIE_WAKE, EV_FLUSH, EV_HOST_DONE, EV_IDLE, FW_WAKE, MAX_DRIVES,
};
use crate::ftl::AllocError;
use crate::host::Uplink;
use crate::SimError;
use crate::{AdapterConfig, DriveCounters, HostCmd, OpKind, Precondition};

/// A command held by the host adapter (driver overhead, or a TRIM it completes itself).
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct AdapterSlot {
    tag: u64,
    seq: u64,
    drive: u32,
    cmd: HostCmd,
}

/// A set of simulated drives sharing one event queue and host adapter. Cloning gives an
/// independent copy (e.g. of a preconditioned state, to run several workloads from it).
#[derive(Clone)]
pub struct Simulator {
    pub(crate) drives: Vec<Drive>,
    pub(crate) sh: Shared,
    pub(crate) adapter_overhead: u64,
    /// No driver time and no cache: host commands go straight to their drive.
    pub(crate) direct: bool,
    pub(crate) adapter_free: u64,
    pub(crate) trim_passthrough: bool,
    pub(crate) adapter: Vec<AdapterSlot>,
    pub(crate) adapter_slots: Vec<u32>,
    /// The driver's write-back cache, when it has one.
    pub(crate) cache: Option<Box<WriteCache>>,
    /// Completions delivered by the event loop, not yet returned (in time order).
    pub(crate) ready: Ring<(u64, u64)>,
    pub(crate) pending: usize,
    pub(crate) now: u64,
}

/// Writes placed on a simulator's drives through their FTLs without timing (mapping,
/// allocation and GC as in a timed run, no events, no clock): the fast way to write a drive into
/// a state, as `Precondition::Full` does. Obtained from [`Simulator::untimed_fill`] before
/// anything has run; when it is dropped, what is still buffered is programmed. The free pools
/// stay where the writes left them (near the foreground-GC threshold after random overwrites):
/// the next run starts at once, as a test that follows its preconditioning does.
pub struct UntimedFill<'a> {
    sim: &'a mut Simulator,
    /// Per drive: the host stream's round-robin die cursor.
    rr: Vec<usize>,
}

impl UntimedFill<'_> {
    /// Writes the whole mapping units covering `[offset, offset + len)` (bytes) of `drive`, in
    /// order, as new (incompressible) data.
    pub fn write(&mut self, drive: usize, offset: u64, len: u64) {
        self.sim.drives[drive].fill_untimed(offset, len, &mut self.rr[drive]);
    }

    /// Performance hint: `offset` of `drive` will be written soon (a few writes ahead); starts
    /// fetching its mapping entry into the CPU cache. No effect on results.
    #[inline]
    pub fn prefetch(&self, drive: usize, offset: u64) {
        if let Some(d) = self.sim.drives.get(drive) {
            d.prefetch(offset);
        }
    }
}

impl Drop for UntimedFill<'_> {
    fn drop(&mut self) {
        for d in &mut self.sim.drives {
            d.finish_untimed();
        }
    }
}

impl Simulator {
    /// Untimed writing ([`UntimedFill`]), available while nothing has been submitted or
    /// scheduled on the simulator (its clock at 0, no event ever queued) and it keeps no
    /// per-sector data versions; `None` otherwise.
    pub fn untimed_fill(&mut self) -> Option<UntimedFill<'_>> {
        let idle = self.now == 0
            && self.pending == 0
            && self.sh.seq == 0
            && self.ready.is_empty()
            && self.drives.iter().all(|d| d.ftl.map.ver.is_none());
        let rr = vec![0; self.drives.len()];
        idle.then_some(UntimedFill { sim: self, rr })
    }

    /// Build `n_drives` identical drives, preconditioned to `pre` (drive i uses `seed + i`).
    pub fn new(
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        pre: Precondition,
        seed: u64,
    ) -> Result<Self, SimError> {
        Self::build(drive, n_drives, adapter, pre, seed, false)
    }

    /// Makes the drives' mapping tables shared with every later clone: a clone then costs its
    /// directories, not a copy of the tables, and each side copies a 64 KiB chunk of a table
    /// only when it first writes into it. For a drive state that many runs start from (a
    /// fitter's, a sweep's): a read-only run on a clone of a full 1 TB drive copies nothing.
    /// Results are unchanged (the tables read the same); only memory and time are saved.
    pub fn freeze(&mut self) {
        for d in &mut self.drives {
            d.freeze();
        }
    }

    /// A copy of this simulator — built from `built` and brought into its state, nothing run yet
    /// — whose drives have the timing of `cfg` (see [`DriveConfig::same_state_as`]): the same
    /// as building it from `cfg` with the same state and seed, without preconditioning again.
    /// None when the drives have run or `cfg` differs from `built` in more than timing.
    pub fn retimed(&self, built: &DriveConfig, cfg: &DriveConfig) -> Option<Simulator> {
        if self.now != 0
            || self.pending != 0
            || !built.same_state_as(cfg)
            || cfg.validate().is_err()
        {
            return None;
        }
        let mut s = self.clone();
        for d in &mut s.drives {
            if !d.retime(cfg).ok()? {
                return None;
            }
        }
        Some(s)
    }

    /// Bytes of memory `n_drives` drives of `drive` take (see [`DriveConfig::memory_estimate`]),
    /// plus the shared event queue.
    pub fn memory_estimate(drive: &DriveConfig, n_drives: usize) -> u64 {
        Self::memory_estimate_touch(drive, n_drives, crate::Touch::ALL)
    }

    /// Bytes of memory `n_drives` drives of `drive` take when a run writes what `touch` says
    /// on each (see [`DriveConfig::memory_estimate_touch`]), plus the shared event queue.
    pub fn memory_estimate_touch(drive: &DriveConfig, n_drives: usize, touch: crate::Touch) -> u64 {
        let per = drive.memory_estimate_touch(touch);
        let queue = Self::queue_len(drive) as u64 * 48;
        (per + queue).saturating_mul(n_drives as u64)
    }

    /// Bytes of memory the drives' mapping tables hold now: they grow as a run writes new
    /// regions (allocated per 64 KiB chunk on first write).
    pub fn table_bytes(&self) -> u64 {
        self.drives.iter().map(|d| d.ftl.map.held_bytes()).sum()
    }

    /// Bytes the drives' reverse (flash-to-logical) maps take more once built: a drive that
    /// its state filled holds none but for its SLC blocks until garbage collection first needs
    /// one, so a run that writes it may add this much; 0 when every map is built.
    pub fn reverse_map_pending_bytes(&self) -> u64 {
        self.drives
            .iter()
            .map(|d| d.ftl.map.p2l_pending_bytes())
            .sum()
    }

    fn queue_len(drive: &DriveConfig) -> usize {
        let dies = (drive.nand.channels * drive.nand.dies_per_channel) as usize;
        drive.host.queue_depth as usize * 4 + dies * 3 + 256
    }

    /// Like [`Simulator::new`] but keeps a per-sector data version for
    /// [`Simulator::read_version`] (slower, more memory; for tests).
    pub fn with_tracking(
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        pre: Precondition,
        seed: u64,
    ) -> Result<Self, SimError> {
        Self::build(drive, n_drives, adapter, pre, seed, true)
    }

    pub(crate) fn build(
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        pre: Precondition,
        seed: u64,
        tracking: bool,
    ) -> Result<Self, SimError> {
        drive.validate()?;
        if n_drives == 0 || n_drives > MAX_DRIVES {
            return Err(ConfigError::new("n_drives", format!("must be 1..={MAX_DRIVES}")).into());
        }
        if adapter.uplink_bytes_per_sec == Some(0) {
            return Err(ConfigError::new("adapter.uplink_bytes_per_sec", "must be > 0").into());
        }
        if let Some(c) = &adapter.write_cache {
            if c.bytes == 0 || c.copy_bytes_per_sec == 0 || c.flush_depth == 0 {
                return Err(ConfigError::new(
                    "adapter.write_cache",
                    "size, copy rate and flush depth must be > 0",
                )
                .into());
            }
        }
        let mut drives = Vec::new();
        drives.try_reserve_exact(n_drives).map_err(|_| AllocError {
            what: "drive list",
            bytes: n_drives.saturating_mul(size_of::<Drive>()),
        })?;
        for i in 0..n_drives {
            let mut d = Drive::try_new(drive, tracking, i as u32, adapter.host)?;
            d.precondition(pre, seed.wrapping_add(i as u64));
            drives.push(d);
        }
        let cap = n_drives * Self::queue_len(drive);
        let mut ready = Ring::default();
        ready
            .try_reserve(n_drives * drive.host.queue_depth as usize * 2 + 64)
            .map_err(|_| AllocError::new("completion queue", cap * 16))?;
        Ok(Simulator {
            drives,
            sh: Shared {
                heap: Agenda::with_capacity(cap, n_drives * drive.host.queue_depth as usize + 64),
                seq: 0,
                uplink: Uplink {
                    bps: adapter.uplink_bytes_per_sec.unwrap_or(0),
                    cal: Calendar::default(),
                },
            },
            adapter_overhead: adapter.per_request_overhead_ns,
            direct: adapter.per_request_overhead_ns == 0 && adapter.write_cache.is_none(),
            adapter_free: 0,
            trim_passthrough: adapter.trim_passthrough,
            adapter: Vec::new(),
            adapter_slots: Vec::new(),
            cache: adapter
                .write_cache
                .map(|c| Box::new(WriteCache::new(c, n_drives))),
            ready,
            pending: 0,
            now: 0,
        })
    }

    /// The host adapter the simulator was built with.
    pub fn adapter_config(&self) -> AdapterConfig {
        AdapterConfig {
            uplink_bytes_per_sec: (self.sh.uplink.bps > 0).then_some(self.sh.uplink.bps),
            per_request_overhead_ns: self.adapter_overhead,
            trim_passthrough: self.trim_passthrough,
            write_cache: self.cache.as_ref().map(|c| c.cfg),
            host: self
                .drives
                .first()
                .map(|d| d.host_stack())
                .unwrap_or_default(),
        }
    }

    /// Number of drives.
    pub fn drives(&self) -> usize {
        self.drives.len()
    }

    /// Virtual time of the latest event processed or command submitted, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Submit a command to `drive` at virtual time `now_ns` (non-decreasing across calls; an
    /// earlier time is treated as the latest one seen). Everything the drives do before
    /// `now_ns` (background GC, buffered programs) happens first.
    pub fn submit(&mut self, now_ns: u64, tag: u64, drive: usize, cmd: HostCmd) {
        assert!(
            drive < self.drives.len(),
            "drive index {drive} out of range"
        );
        let now = now_ns.max(self.now);
        self.advance(now);
        self.now = now;
        self.sh.seq += 1;
        let seq = self.sh.seq;
        self.pending += 1;
        debug_assert!(tag & CACHE_TAG == 0, "host tags stay below 2^63");
        let bypass = cmd.kind == OpKind::Trim && !self.trim_passthrough;
        if self.direct && !bypass {
            self.drives[drive].submit(&mut self.sh, now, tag, seq, cmd);
            return;
        }
        if self.cache.is_some() && !bypass && self.submit_cached(now, tag, seq, drive, cmd) {
            return;
        }
        // the adapter's driver handles requests one at a time
        let s = now.max(self.adapter_free);
        self.adapter_free = s + self.adapter_overhead;
        let t = self.adapter_free;
        if bypass {
            self.adapter_complete(tag, seq, drive, t);
        } else {
            let i = self.hold(AdapterSlot {
                tag,
                seq,
                drive: drive as u32,
                cmd,
            });
            self.sh.push(t, ev(EV_ARRIVE, drive as u32, i as u64));
        }
    }

    /// Keeps a command in the adapter; returns its slot.
    fn hold(&mut self, slot: AdapterSlot) -> u32 {
        match self.adapter_slots.pop() {
            Some(i) => {
                self.adapter[i as usize] = slot;
                i
            }
            None => {
                self.adapter.push(slot);
                (self.adapter.len() - 1) as u32
            }
        }
    }

    /// Processes every event up to and including `t`.
    #[inline]
    fn advance(&mut self, t: u64) {
        while let Some(et) = self.sh.heap.peek_time() {
            if et > t {
                break;
            }
            let (et, tag) = self.sh.heap.pop().expect("peeked");
            self.now = self.now.max(et);
            self.handle(et, tag);
        }
    }

    // Out of line: inlined into the event loop it made the loop slower (user time of `speed
    // requests 2000000` 0.39–0.41 s against 0.33–0.35 s; docs/PERFORMANCE.md).
    #[inline(never)]
    fn handle(&mut self, t: u64, tag: u64) {
        let d = ev_drive(tag);
        let p = ev_payload(tag);
        match ev_kind(tag) {
            EV_HOST_DONE => {
                let user = self.drives[d].host_done(&mut self.sh, p as u32, t);
                if user & CACHE_TAG != 0 {
                    self.cache_done(user, t);
                } else {
                    self.ready.push_back((user, t));
                }
            }
            EV_DIE_DONE => self.drives[d].die_done(&mut self.sh, p, t),
            EV_DIE_WAKE if p == FW_WAKE => self.drives[d].fw_wake(&mut self.sh, t),
            EV_DIE_WAKE => self.drives[d].die_wake(&mut self.sh, p as usize, t),
            EV_FLUSH => self.drives[d].flush_timer(&mut self.sh, t),
            EV_CACHE_PUMP => self.pump(d as u32, t),
            EV_IDLE => self.drives[d].idle_timer(&mut self.sh, t, p),
            EV_ARRIVE => {
                let s = self.adapter[p as usize];
                self.adapter_slots.push(p as u32);
                self.drives[s.drive as usize].submit(&mut self.sh, t, s.tag, s.seq, s.cmd);
            }
            _ => {
                let s = self.adapter[p as usize];
                self.adapter_slots.push(p as u32);
                self.ready.push_back((s.tag, t));
            }
        }
    }

    /// Performance hint: `cmd` will be submitted to `drive` soon (typically the next command of
    /// a closed loop, known one request ahead). Starts fetching the drive's mapping entries for
    /// it into the CPU cache; has no effect on results. Out-of-range drives are ignored.
    #[inline]
    pub fn prefetch(&self, drive: usize, cmd: &HostCmd) {
        if let Some(d) = self.drives.get(drive) {
            d.prefetch(cmd.offset);
        }
    }

    /// Earliest pending completion `(tag, time_ns)`, ties in submission order. Advances virtual
    /// time through the drives' internal work up to that completion; `None` when no command is
    /// outstanding.
    #[inline]
    pub fn next_completion(&mut self) -> Option<(u64, u64)> {
        loop {
            if let Some(x) = self.ready.pop_front() {
                self.pending -= 1;
                return Some(x);
            }
            if self.pending == 0 {
                return None;
            }
            let (t, tag) = self.sh.heap.pop()?;
            self.now = self.now.max(t);
            if ev_kind(tag) == EV_HOST_DONE {
                // the usual case: hand the completion over directly
                let user =
                    self.drives[ev_drive(tag)].host_done(&mut self.sh, ev_payload(tag) as u32, t);
                if user & CACHE_TAG != 0 {
                    self.cache_done(user, t);
                    continue;
                }
                self.pending -= 1;
                return Some((user, t));
            }
            self.handle(t, tag);
        }
    }

    /// Commands submitted and not yet returned by `next_completion`.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Lets the drives work without host commands until `t_ns` (background GC, buffered
    /// programs); completions that fall before `t_ns` stay available to `next_completion`.
    pub fn run_until(&mut self, t_ns: u64) {
        let t = t_ns.max(self.now);
        self.advance(t);
        self.now = t;
    }

    /// Lets the drives finish all internal work (buffered programs, GC down to the background
    /// threshold) with no host commands; returns the time they went idle.
    pub fn run_until_idle(&mut self) -> u64 {
        while self.drives.iter().any(|d| d.busy()) || self.cache.as_ref().is_some_and(|c| c.busy())
        {
            let Some((t, tag)) = self.sh.heap.pop() else {
                break;
            };
            self.now = self.now.max(t);
            self.handle(t, tag);
        }
        self.now
    }

    /// Starts the measurement window at the current time: counters restart and utilisation is
    /// measured from here ([`Simulator::counters`] reports up to the current time).
    pub fn reset_counters(&mut self) {
        let now = self.now;
        for d in &mut self.drives {
            d.reset_counters(now);
        }
        if let Some(c) = self.cache.as_mut() {
            c.c = WriteCacheCounters {
                peak_dirty_bytes: c.used,
                ..Default::default()
            };
        }
    }

    /// What the driver's write-back cache did over the window (`None` without one).
    pub fn write_cache_counters(&self) -> Option<WriteCacheCounters> {
        self.cache.as_ref().map(|c| c.c)
    }

    /// A host command with the write-back cache on. Returns false when the command takes the
    /// adapter's usual path (a read of data not in the cache).
    #[cold]
    #[inline(never)]
    fn submit_cached(&mut self, now: u64, tag: u64, seq: u64, drive: usize, cmd: HostCmd) -> bool {
        let Some(c) = self.cache.as_mut() else {
            return false;
        };
        let d = drive as u32;
        let t0 = now.max(self.adapter_free) + self.adapter_overhead;
        match cmd.kind {
            OpKind::Read if !c.overlaps(d, &cmd) => return false,
            OpKind::Read => {
                c.c.read_hit_bytes += cmd.len;
                let t = t0 + c.copy_ns(cmd.len);
                self.adapter_free = t0;
                self.adapter_complete(tag, seq, drive, t);
            }
            OpKind::Write if !too_large(&c.cfg, &cmd) => {
                self.adapter_free = t0;
                if c.has_room(cmd.len) {
                    let t = t0 + c.copy_ns(cmd.len);
                    c.take(d, cmd, t);
                    self.adapter_complete(tag, seq, drive, t);
                    self.sh.push(t, ev(EV_CACHE_PUMP, d, 0));
                } else {
                    c.c.full_waits += 1;
                    c.waiting.push_back(Waiting {
                        tag,
                        seq,
                        drive: d,
                        cmd,
                        t0,
                    });
                }
            }
            // a TRIM, or a write larger than the whole cache: to the member behind its dirty data
            _ => {
                self.adapter_free = t0;
                c.order(d, tag, cmd, t0);
                self.sh.push(t0, ev(EV_CACHE_PUMP, d, 0));
            }
        }
        true
    }

    /// Completes host command `tag` in the adapter at `t`.
    fn adapter_complete(&mut self, tag: u64, seq: u64, drive: usize, t: u64) {
        let i = self.hold(AdapterSlot {
            tag,
            seq,
            drive: drive as u32,
            cmd: HostCmd::read(0, 0),
        });
        self.sh
            .heap
            .push_completion(t, seq, ev(EV_ADAPTER_DONE, drive as u32, i as u64));
    }

    /// Hands member `drive` what the cache has ready for it, up to the flush depth.
    fn pump(&mut self, drive: u32, now: u64) {
        while let Some((tag, cmd)) = self.cache.as_mut().and_then(|c| c.next_for(drive, now)) {
            self.sh.seq += 1;
            let seq = self.sh.seq;
            self.drives[drive as usize].submit(&mut self.sh, now, tag, seq, cmd);
        }
    }

    /// A member completed a command the cache gave it: room frees, waiting writes come in.
    #[cold]
    #[inline(never)]
    fn cache_done(&mut self, tag: u64, t: u64) {
        let Some(c) = self.cache.as_mut() else {
            return;
        };
        let item = c.done(tag);
        if let ItemKind::Ordered { tag } = item.kind {
            self.ready.push_back((tag, t));
        }
        while let Some(c) = self.cache.as_mut() {
            let Some(w) = c.waiting.front().copied() else {
                break;
            };
            if c.used + w.cmd.len > c.cfg.bytes {
                break;
            }
            c.waiting.pop_front();
            let start = t.max(w.t0);
            c.c.full_wait_ns += start - w.t0;
            let done = start + c.copy_ns(w.cmd.len);
            c.take(w.drive, w.cmd, done);
            self.adapter_complete(w.tag, w.seq, w.drive as usize, done);
            self.sh.push(done, ev(EV_CACHE_PUMP, w.drive, 0));
        }
        self.pump(item.drive, t);
    }

    /// One counter set per drive, over the window from [`Simulator::reset_counters`] (or the
    /// end of preconditioning) to the current time.
    pub fn counters(&self) -> Vec<DriveCounters> {
        self.drives.iter().map(|d| d.counters(self.now)).collect()
    }

    /// Turns on the invariant audit of every drive (dependencies, work conservation, no
    /// overlapping die operations); costs time, for tests.
    pub fn enable_audit(&mut self) {
        for d in &mut self.drives {
            d.enable_audit();
        }
    }

    /// What the audit found so far, all drives together (`None` when it is off).
    pub fn audit_report(&self) -> Option<AuditReport> {
        let mut all: Option<AuditReport> = None;
        for r in self.drives.iter().filter_map(|d| d.audit_report()) {
            let a = all.get_or_insert_with(AuditReport::default);
            a.checks += r.checks;
            a.violations += r.violations;
            a.messages.extend(r.messages);
        }
        all
    }

    /// Check FTL consistency of every drive (map ↔ reverse map, valid counts, free lists).
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, d) in self.drives.iter().enumerate() {
            d.check_invariants()
                .map_err(|e| format!("drive {i}: {e}"))?;
        }
        Ok(())
    }

    /// Data version stored for a logical sector (512 B) of `drive`, when built with
    /// [`Simulator::with_tracking`]: the 1-based index of the write command (per drive, in
    /// submission order) that last wrote it; `None` when unmapped, trimmed, never written or
    /// tracking is off. Preconditioning data reads as `None`.
    pub fn read_version(&self, drive: usize, sector: u64) -> Option<u32> {
        self.drives.get(drive)?.read_version(sector)
    }

    /// For drives brought into `steady` state: per drive, the marginal write amplification GC
    /// had reached when the untimed preconditioning stopped, and the random overwrites it took
    /// (in capacities). None for other states.
    pub fn steady_state(&self) -> Vec<Option<(f64, f64)>> {
        self.drives
            .iter()
            .map(|d| d.ftl.steady_wa.map(|wa| (wa, d.ftl.steady_written)))
            .collect()
    }

    /// Write commands submitted to `drive` so far (the version the next write gets, minus 1).
    pub fn write_count(&self, drive: usize) -> u32 {
        self.drives[drive].write_seq()
    }
}
