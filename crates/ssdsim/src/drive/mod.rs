//! One simulated drive: the layers wired together and driven by events.
//!
//! A command flows down — host interface ([`crate::host`]) → firmware and write buffer
//! ([`crate::controller`]) → FTL ([`crate::ftl`]) → flash transaction scheduler
//! ([`crate::sched`]) → NAND dies and channels ([`crate::nand`]) — and its completion flows
//! back up as an event. Every resource that serves requests in a chosen order is event-driven
//! (a die decides what to run when it becomes free); resources that serve requests in the
//! order of their times are timelines (firmware cores: busy-until; channels and the link:
//! calendars with gap filling).
//!
//! The drive's own steps live beside this file, one per stage a command passes through:
//! `host_cmds` (a command takes a slot and starts as a read, write or trim), `buffer` (the
//! write buffer and the host stream: admission, page groups, sealing, the flush timer),
//! `flash` (what each die runs next, reads/programs/erases with their transfers, suspension,
//! and what a finished operation frees) and `window` (the measurement window's counters).
//! The state they work on belongs to the layer modules: a new GC policy goes to
//! [`crate::ftl::gc`], a new NAND timing model to [`crate::nand`], a new scheduling rule to
//! [`crate::sched`].

use crate::config::{DriveConfig, Interface};
use crate::controller::Controller;
use crate::counters::{Audit, AuditReport, RawCounters};
use crate::events::{Agenda, Calendar};
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::{try_vec, try_vec_with_capacity, AllocError, Ftl};
use crate::host::{Host, HostShape, HostStack, Uplink};
use crate::nand::{Meter, NandTiming};
use crate::sched::Sched;

mod buffer;
mod flash;
mod host_cmds;
mod hybrid;
mod window;

/// State shared by all drives behind one host adapter.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
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

#[derive(Clone, serde::Serialize, serde::Deserialize)]
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
    /// `ftl.pslc_idle_fold_ns` (0 = no idle folding).
    idle_fold_ns: u64,
    /// Bumped by every host command: an idle timer armed before it is stale.
    idle_gen: u64,
    /// No compression, no per-unit NAND costs, no version tracking, a write-back buffer:
    /// whole-unit writes take [`Drive::admit_whole`].
    plain: bool,
    c: RawCounters,
    /// Not part of a saved state (an audit is turned on by tests, for one run).
    #[serde(skip)]
    audit: Option<Box<Audit>>,
}

/// The flash scheduler of a drive of `cfg` with `dies` dies and room for `txs` transactions.
fn new_sched(cfg: &DriveConfig, dies: usize, txs: usize) -> Result<Sched, AllocError> {
    Sched::try_new(
        dies,
        txs,
        cfg.sched.read_priority,
        cfg.sched.suspend_min_remaining_ns,
        cfg.nand.prog_mean_ns(),
    )
}

/// The host interface of a drive of `cfg` behind a host whose own time per command is `stack`.
fn new_host(cfg: &DriveConfig, stack: HostStack) -> Result<Host, AllocError> {
    Host::try_new(HostShape {
        nvme: cfg.host.interface == Interface::Nvme,
        link_bps: cfg.host.link_rate(),
        cmd_overhead: cfg.host.cmd_overhead_ns,
        fis_ns: cfg.host.fis_overhead_ns(),
        stack,
        queues: cfg.host.nvme_queues as usize,
        depth: cfg.host.queue_depth as usize,
        sub_lat: cfg.host.doorbell_ns + cfg.host.sq_fetch_ns,
        cq_lat: cfg.host.completion_ns,
    })
}

/// Capacities planned for a configuration: page groups and transactions in flight.
fn plan(cfg: &DriveConfig) -> (usize, usize) {
    let n = &cfg.nand;
    let dies = (n.channels * n.dies_per_channel) as usize;
    let qd = cfg.host.queue_depth as usize * cfg.host.nvme_queues as usize;
    // a sealed group holds at least one mapping unit of buffered data (groups sealed early by
    // the flush timer are partly filled), so the buffer holds at most this many
    let groups = dies * 4
        + (cfg.controller.cache_bytes / cfg.ftl.mapping_unit.max(512)) as usize
        + qd * 2
        + 16;
    let txs = groups + qd * 8 + dies * (n.planes_per_die as usize * 4 + 8) + 64;
    (groups, txs)
}

impl Drive {
    /// See [`Simulator::freeze`](crate::Simulator::freeze).
    pub(crate) fn freeze(&mut self) {
        self.ftl.freeze();
    }

    /// Bytes of memory (address space) a drive of `cfg` takes when a run writes what `touch`
    /// says: what [`Drive::try_new`] allocates (block state, page groups, transaction queues,
    /// command slots, the mapping tables' directories) and the chunks of the sparse mapping
    /// tables the writes reach. Kept next to `try_new` so the two stay in step.
    pub(crate) fn memory_estimate(cfg: &DriveConfig, tracking: bool, touch: crate::Touch) -> u64 {
        let (groups, txs) = plan(cfg);
        let dies = (cfg.nand.channels * cfg.nand.dies_per_channel) as usize;
        let channels = cfg.nand.channels as u64;
        Ftl::memory_estimate(cfg, tracking, groups, touch)
            + Sched::memory_estimate(dies, txs)
            + Host::memory_estimate(cfg.host.nvme_queues as usize, cfg.host.queue_depth as usize)
            + Controller::memory_estimate(cfg)
            + channels * (8 * 16 + 8)
    }

    /// A fresh (trimmed) drive. Every table whose size comes from the configuration is
    /// allocated fallibly: running out of memory is an error naming the table, not an abort.
    pub(crate) fn try_new(
        cfg: &DriveConfig,
        tracking: bool,
        idx: u32,
        stack: HostStack,
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
        let plain = !tracking
            && ftl.map.cost.is_empty()
            && !ctl.compression
            && ctl.cache_cap > 0
            && ftl.hy.is_none();
        Ok(Drive {
            idx,
            plain,
            sched: new_sched(cfg, dies, txs)?,
            nand: NandTiming::new(cfg),
            host: new_host(cfg, stack)?,
            ctl,
            ch_meter: try_vec(Meter::default(), ftl.g.channels, "channel timelines")?,
            channels,
            last_host_die: dies - 1,
            w0: 0,
            write_seq: 0,
            idle_fold_ns: if cfg.ftl.pslc_bytes > 0 {
                cfg.ftl.pslc_idle_fold_ns
            } else {
                0
            },
            idle_gen: 0,
            c: RawCounters::default(),
            audit: None,
            ftl,
        })
    }

    /// Gives the drive the timing of `cfg` (firmware, host interface, write-buffer size, NAND
    /// times, scheduler) and keeps its state (mapping, blocks, free pools). Only for a drive
    /// that has not run and a `cfg` that [`DriveConfig::same_state_as`] the drive's own; false
    /// (the drive unusable) when a page group is still in use.
    pub(crate) fn retime(&mut self, cfg: &DriveConfig) -> Result<bool, AllocError> {
        let (groups, txs) = plan(cfg);
        if !self.ftl.resize_group_pool(groups)? {
            return Ok(false);
        }
        self.sched = new_sched(cfg, self.ftl.g.dies, txs)?;
        self.nand = NandTiming::new(cfg);
        self.host = new_host(cfg, self.host.stack)?;
        self.ctl = Controller::try_new(cfg)?;
        self.settle_modes();
        Ok(true)
    }

    /// Brings the drive into the requested state without timing simulation.
    pub(crate) fn precondition(&mut self, pre: crate::Precondition, seed: u64) {
        self.ftl.precondition(pre, seed);
        self.settle_modes();
    }

    /// Sets the dies' scheduling modes from the FTL's state after untimed work.
    fn settle_modes(&mut self) {
        for d in 0..self.ftl.g.dies {
            let m = self.ftl.die_gc_mode(d);
            self.sched.set_mode(d, m);
            self.ftl.changed_flag[d] = false;
        }
        self.ftl.changed.clear();
        self.ftl.reset_free_stats(0);
        if let Some(h) = &self.ftl.hy {
            // merges queued by untimed writing start with the first timed work
            let busy: Vec<usize> = (0..h.dies.len())
                .filter(|&d| !h.dies[d].jobs.is_empty())
                .collect();
            for d in busy {
                self.ftl.mark_changed(d);
            }
        }
    }

    /// Writes the whole mapping units covering `[offset, offset + len)` (bytes) through the
    /// FTL without timing, the way [`Drive::precondition`] fills a drive; `rr` is the host
    /// stream's die cursor. [`Drive::finish_untimed`] ends a series of these.
    pub(crate) fn fill_untimed(&mut self, offset: u64, len: u64, rr: &mut usize) {
        let ub = self.ftl.g.unit_bytes;
        let u0 = offset / ub;
        let u1 = offset
            .saturating_add(len)
            .div_ceil(ub)
            .min(self.ftl.user_units);
        for u in u0..u1 {
            self.ftl.fill_unit(u as usize, rr);
        }
    }

    /// Programs what untimed writes left buffered and sets the dies' scheduling modes from the
    /// result (the free pools as the writes left them: the next run follows at once).
    pub(crate) fn finish_untimed(&mut self) {
        self.ftl.finish_untimed(false);
        self.settle_modes();
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
        let v = ver.get(slot as usize * us as usize + (sector % us) as usize);
        (v != 0).then_some(v)
    }

    pub(crate) fn host_stack(&self) -> HostStack {
        self.host.stack
    }

    pub(crate) fn write_seq(&self) -> u32 {
        self.write_seq
    }

    /// Work still queued or running inside the drive (GC, programs of buffered data, GC moves
    /// waiting for a firmware core).
    pub(crate) fn busy(&self) -> bool {
        !self.ctl.gc_jobs.is_empty()
            || self.ftl.hy.as_ref().is_some_and(|h| h.busy())
            || (0..self.ftl.g.dies)
                .any(|d| self.sched.dies[d].busy || self.sched.queued_total(d) > 0)
    }

    /// Whether a drive read from a state file has the tables a drive built for its
    /// configuration (`fresh`) has: the same geometry and per-die, per-plane, per-block and
    /// per-channel table sizes (so no index into them can fall outside).
    pub(crate) fn check_shape(&self, fresh: &Drive) -> Result<(), String> {
        let (a, b) = (&self.ftl, &fresh.ftl);
        if postcard::to_allocvec(&a.g).ok() != postcard::to_allocvec(&b.g).ok()
            || a.user_units != b.user_units
            || a.map.us != b.map.us
        {
            return Err("its geometry differs from the configuration's".into());
        }
        macro_rules! same_len {
            ($($x:ident).+) => {
                if self.$($x).+.len() != fresh.$($x).+.len() {
                    return Err(format!(
                        "{} has {} entries, the configuration gives {}",
                        stringify!($($x).+),
                        self.$($x).+.len(),
                        fresh.$($x).+.len()
                    ));
                }
            };
        }
        match (&self.ftl.hy, &fresh.ftl.hy) {
            (None, None) => {}
            (Some(a), Some(b)) => a.check_shape(b, self.ftl.g.planes)?,
            _ => return Err("its mapping scheme differs from the configuration's".into()),
        }
        match (&self.ftl.mcache, &fresh.ftl.mcache) {
            (None, None) => {}
            (Some(a), Some(b)) => a.check_shape(b, self.host.cmds.len())?,
            _ => return Err("its cached mapping table differs from the configuration's".into()),
        }
        same_len!(channels);
        same_len!(ch_meter);
        same_len!(ftl.blk_valid);
        same_len!(ftl.blk_erase);
        same_len!(ftl.blk_state);
        same_len!(ftl.blk_slc);
        same_len!(ftl.blk_prog);
        same_len!(ftl.blk_time);
        same_len!(ftl.free);
        same_len!(ftl.erasing);
        same_len!(ftl.slc_fifo);
        same_len!(ftl.slc_count);
        same_len!(ftl.host_wp);
        same_len!(ftl.gc_wp);
        same_len!(ftl.gc_group);
        same_len!(ftl.host_pending);
        same_len!(ftl.gc_pending);
        same_len!(ftl.gc);
        same_len!(ftl.changed_flag);
        same_len!(ftl.scratch_units);
        same_len!(ftl.scratch_ver);
        same_len!(sched.dies);
        same_len!(sched.end);
        same_len!(sched.nprog);
        same_len!(sched.mode);
        same_len!(sched.debt);
        same_len!(sched.ratio);
        same_len!(sched.avail);
        same_len!(host.cmds);
        same_len!(ctl.fw);
        same_len!(ctl.fw_meter);
        same_len!(ctl.roles);
        same_len!(host.cpu);
        same_len!(host.cpu_meter);
        same_len!(ctl.ecc);
        same_len!(ctl.ecc_meter);
        let blocks = a.blk_state.len() as u32;
        let ok = a
            .free
            .iter()
            .chain(&a.slc_fifo)
            .all(|q| q.len() <= a.g.bpp && q.iter().all(|&b| b < blocks));
        if !ok {
            return Err("a block list holds blocks that do not exist".into());
        }
        let (units, slots) = (a.user_units as usize, a.g.total_slots);
        let ok = (a.map.frags.0.is_empty() || a.remap)
            && a.map.frags.0.iter().all(|(&l, f)| {
                (l as usize) < units && (f.fmask == 0 || (f.fslot as usize) < slots)
            });
        if !ok {
            return Err("its fragment table names units or slots that do not exist".into());
        }
        Ok(())
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
