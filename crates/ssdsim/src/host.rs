//! Host interface: the command slots of the link's queue (SATA NCQ, NVMe queues), commands in
//! flight, and the link itself (SATA: one half-duplex link; NVMe: one link per direction).
//!
//! Data crosses the link in pieces as it becomes available (cut-through): a read sends each
//! NAND page's data as soon as the page is in the controller, the way first-party DMA with a
//! buffer offset (SATA NCQ) or PRP lists (NVMe) allow. The host adapter in front of several
//! drives (per-request driver overhead, a shared uplink such as a chipset DMI) sits in
//! [`crate::sim`].

use crate::events::Calendar;
use crate::ftl::{try_deque, try_vec_with_capacity, AllocError};
use crate::nand::Meter;
use crate::{HostCmd, OpKind};
use std::collections::VecDeque;

/// A command inside the drive.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Cmd {
    pub tag: u64,
    pub seq: u64,
    pub kind: OpKind,
    pub off: u64,
    pub len: u64,
    pub frac: f32,
    /// Data version of a write (tracking).
    pub version: u32,
    /// Arrival at the drive.
    pub arrive: u64,
    /// Firmware done with the command's decode (and, on a drive with a cached map, its
    /// translation pages in): its first 4 KiB is mapped.
    pub t_fw: u64,
    /// Start of the lookups of its later 4 KiB units on an `ftl` core (unit k ≥ 1 is mapped at
    /// `m_s + k × m_per`).
    pub m_s: u64,
    pub m_per: u32,
    /// Pieces still outstanding: NAND pages of a read, programs of a write-through write.
    pub remaining: u32,
    /// Latest end of the pieces so far.
    pub done: u64,
    /// No data of the command has crossed the link yet (the protocol overhead goes first).
    pub first: bool,
    /// Mapping units the command touches, `u0..u1` (set when a write starts).
    pub u0: u64,
    pub u1: u64,
    /// A write starts and ends on mapping-unit boundaries.
    pub whole: bool,
    /// Mapping units of a write already in the buffer (from `u0` on): a write that does not
    /// fit whole enters it a part at a time as space frees, the way a controller pulls a
    /// command's data by DMA as its buffer allows.
    #[serde(default)]
    pub in_units: u64,
}

/// A command waiting for a free slot of the drive's queue.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Queued {
    pub tag: u64,
    pub seq: u64,
    pub cmd: HostCmd,
}

/// Shared by all drives behind the adapter.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Uplink {
    pub bps: u64,
    pub cal: Calendar,
}

/// The host computer's own time per command (operating system block layer and the AHCI or
/// NVMe driver), outside the drive.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct HostStack {
    /// From the application's submission until the driver has handed the command to the
    /// device (block layer, driver, the AHCI command slot or NVMe doorbell write), ns: a latency
    /// (the submitting threads work in parallel).
    pub submit_ns: u64,
    /// From the device's completion until the application has it (interrupt, the driver's
    /// completion handling, block layer, waking the thread), ns, on the one CPU that takes the
    /// drive's (SATA port's, NVMe queue's) interrupts: completions queue for it.
    pub complete_ns: u64,
}

impl HostStack {
    /// The host's time per command for a drive on `iface`, as Intel measured Linux's storage
    /// stack (block layer and driver) per I/O: 6.0 µs through AHCI, 2.8 µs through NVMe
    /// (split evenly between submission and completion).
    pub fn default_for(iface: crate::Interface) -> HostStack {
        if iface.is_sata() {
            HostStack {
                submit_ns: 3_000,
                complete_ns: 3_000,
            }
        } else {
            HostStack {
                submit_ns: 1_400,
                complete_ns: 1_400,
            }
        }
    }
}

/// The host side of the drive's queues: SATA NCQ (one queue of at most 32 commands), or NVMe
/// I/O queue pairs, each with its own submission queue depth and its own waiting commands.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Host {
    pub nvme: bool,
    link_bps: u64,
    pub cmd_overhead: u64,
    /// SATA: framing and handshake per frame (FIS), ns (0: the link is one payload rate).
    fis: u64,
    /// SATA: the command's frames on the link before the firmware has it (Register FIS host to
    /// device, Register FIS device to host), ns.
    cmd_fis: u64,
    /// SATA: the DMA Setup FIS before each stretch of data, ns.
    setup_fis: u64,
    /// SATA: the DMA Activate FIS before each data frame the host sends, ns.
    activate_fis: u64,
    /// SATA: the Set Device Bits FIS that completes an NCQ command, ns.
    sdb_fis: u64,
    /// The command slot whose data crossed the link last: a stretch that continues it needs no
    /// new DMA Setup frame.
    last_burst: u32,
    pub stack: HostStack,
    /// Per interrupt CPU (one per SATA drive, one per NVMe queue): completion handling.
    pub cpu: Vec<Calendar>,
    pub cpu_meter: Vec<Meter>,
    /// Queues (1 on SATA) and command slots per queue: slot `e` belongs to queue `e / depth`.
    pub queues: u32,
    depth: u32,
    /// Submission to the controller's start on a command: doorbell write plus the fetch of the
    /// submission entry (NVMe), ns.
    pub sub_lat: u64,
    /// Completion entry and interrupt reaching the host (NVMe), ns.
    pub cq_lat: u64,
    /// Commands holding a slot.
    pub in_flight: u32,
    /// Commands waiting in the host for a slot of their queue (all queues).
    pub waiting: u32,
    /// Host → drive (and both directions on SATA).
    pub up: Calendar,
    /// Drive → host (NVMe only).
    pub down: Calendar,
    pub up_meter: Meter,
    pub down_meter: Meter,
    link_memo: (u64, u64),
    pub cmds: Vec<Cmd>,
    /// Free slots of each queue.
    free: Vec<Vec<u32>>,
    /// Commands waiting for a slot, per queue.
    pub wait: Vec<VecDeque<Queued>>,
}

/// Queue layout and NVMe command-path latencies of a [`Host`].
pub(crate) struct HostShape {
    pub nvme: bool,
    pub link_bps: u64,
    pub cmd_overhead: u64,
    /// SATA frame overhead, ns (0: none).
    pub fis_ns: u64,
    pub stack: HostStack,
    pub queues: usize,
    pub depth: usize,
    pub sub_lat: u64,
    pub cq_lat: u64,
}

impl Host {
    pub(crate) fn memory_estimate(queues: usize, depth: usize) -> u64 {
        let slots = queues * depth;
        (slots * (size_of::<Cmd>() + 4 + size_of::<Queued>())
            + queues * (size_of::<Vec<u32>>() + size_of::<VecDeque<Queued>>())
            + 2 * 64 * 16) as u64
    }

    pub(crate) fn try_new(shape: HostShape) -> Result<Host, AllocError> {
        let (queues, depth) = (shape.queues.max(1), shape.depth.max(1));
        let slots = queues * depth;
        let mut cmds = try_vec_with_capacity(slots, "command slots")?;
        for _ in 0..slots {
            cmds.push(Cmd {
                tag: 0,
                seq: 0,
                kind: OpKind::Read,
                off: 0,
                len: 0,
                frac: 1.0,
                version: 0,
                arrive: 0,
                t_fw: 0,
                m_s: 0,
                m_per: 0,
                remaining: 0,
                done: 0,
                first: true,
                u0: 0,
                u1: 0,
                whole: false,
                in_units: 0,
            });
        }
        let mut free = try_vec_with_capacity(queues, "command slots")?;
        let mut wait = try_vec_with_capacity(queues, "command queue")?;
        for q in 0..queues {
            let mut f = try_vec_with_capacity(depth, "command slots")?;
            for i in 0..depth {
                f.push((q * depth + depth - 1 - i) as u32);
            }
            free.push(f);
            wait.push(try_deque(if q == 0 { depth } else { 0 }, "command queue")?);
        }
        let mut up = Calendar::default();
        let mut down = Calendar::default();
        // room for the frames of every command in flight (SATA: a command's frames are booked
        // at different times, so the link's calendar holds several intervals per command)
        let n = 64 + 4 * slots;
        up.try_reserve(n)
            .map_err(|_| AllocError::new("link timeline", n * 16))?;
        down.try_reserve(n)
            .map_err(|_| AllocError::new("link timeline", n * 16))?;
        let cpus = if shape.nvme { queues } else { 1 };
        let mut cpu = try_vec_with_capacity(cpus, "host CPUs")?;
        for _ in 0..cpus {
            let mut c = Calendar::default();
            c.try_reserve(64)
                .map_err(|_| AllocError::new("host CPUs", 64 * 16))?;
            cpu.push(c);
        }
        let mut cpu_meter = try_vec_with_capacity(cpus, "host CPUs")?;
        cpu_meter.resize(cpus, Meter::default());
        // a frame: its framing and handshake, then its payload at the line's data rate
        let fis = shape.fis_ns;
        let frame = |bytes: u64| {
            if fis == 0 {
                0
            } else {
                fis + bytes * 1_000_000_000 / shape.link_bps
            }
        };
        Ok(Host {
            nvme: shape.nvme,
            link_bps: shape.link_bps,
            cmd_overhead: shape.cmd_overhead,
            fis,
            cmd_fis: frame(20) + frame(20),
            setup_fis: frame(28),
            activate_fis: frame(4),
            sdb_fis: frame(8),
            last_burst: u32::MAX,
            stack: shape.stack,
            cpu,
            cpu_meter,
            queues: queues as u32,
            depth: depth as u32,
            sub_lat: shape.sub_lat,
            cq_lat: shape.cq_lat,
            in_flight: 0,
            waiting: 0,
            up,
            down,
            up_meter: Meter::default(),
            down_meter: Meter::default(),
            link_memo: (0, 0),
            cmds,
            free,
            wait,
        })
    }

    /// The queue a command posted by the host's stream `stream` goes to.
    #[inline]
    pub(crate) fn queue_of(&self, stream: u16) -> usize {
        if self.queues == 1 {
            0
        } else {
            stream as usize % self.queues as usize
        }
    }

    /// A free command slot of queue `q`.
    #[inline]
    pub(crate) fn alloc(&mut self, q: usize) -> Option<u32> {
        let e = self.free[q].pop();
        self.in_flight += e.is_some() as u32;
        e
    }

    /// Frees slot `e`; returns its queue.
    #[inline]
    pub(crate) fn release(&mut self, e: u32) -> usize {
        let q = self.queue_of_slot(e);
        self.free[q].push(e);
        self.in_flight -= 1;
        q
    }

    /// Holds a command until a slot of queue `q` frees.
    #[cold]
    pub(crate) fn hold(&mut self, q: usize, c: Queued) {
        self.wait[q].push_back(c);
        self.waiting += 1;
    }

    /// The next command waiting for a slot of queue `q`.
    #[inline]
    pub(crate) fn next_waiting(&mut self, q: usize) -> Option<Queued> {
        let c = self.wait[q].pop_front();
        self.waiting -= c.is_some() as u32;
        c
    }

    /// No command of the host is in the drive or waiting for a slot.
    #[inline]
    pub(crate) fn idle(&self) -> bool {
        self.in_flight == 0 && self.waiting == 0
    }

    #[inline]
    fn link_ns(&mut self, bytes: u64) -> u64 {
        if bytes != self.link_memo.0 {
            self.link_memo = (bytes, bytes * 1_000_000_000 / self.link_bps);
        }
        self.link_memo.1
    }

    /// A command posted by the host at `now` reaches the firmware: the host's submission time,
    /// then (SATA) its command frames on the link or (NVMe) the doorbell and the fetch of its
    /// submission entry. Returns when the firmware can start on it.
    #[inline(always)]
    pub(crate) fn arrive(&mut self, w0: u64, now: u64) -> u64 {
        let t = now + self.stack.submit_ns + self.sub_lat;
        if self.cmd_fis == 0 {
            return t;
        }
        let (s, e) = self.up.book(now, t, self.cmd_fis);
        self.up_meter.add(w0, s, e);
        e
    }

    /// A command whose last piece is done at `t` (the firmware has completed it) reaches the
    /// application: (SATA) the Set Device Bits frame on the link, (NVMe) the completion entry and
    /// interrupt, then the host's completion handling on the CPU taking queue `q`'s interrupts.
    /// `now` is the current time.
    #[inline(always)]
    pub(crate) fn finish(&mut self, w0: u64, now: u64, t: u64, q: usize) -> u64 {
        let mut t = t + self.cq_lat;
        if self.sdb_fis > 0 {
            let (s, e) = self.up.book(now, t, self.sdb_fis);
            self.up_meter.add(w0, s, e);
            t = e;
        }
        if self.stack.complete_ns > 0 {
            let c = if self.cpu.len() == 1 {
                0
            } else {
                q % self.cpu.len()
            };
            let (s, e) = self.cpu[c].book(now, t, self.stack.complete_ns);
            self.cpu_meter[c].add(w0, s, e);
            t = e;
        }
        t
    }

    /// The queue of command slot `e`.
    #[inline]
    pub(crate) fn queue_of_slot(&self, e: u32) -> usize {
        if self.queues == 1 {
            0
        } else {
            (e / self.depth) as usize
        }
    }

    /// Link time of `bytes` of data of command slot `e` in one stretch (SATA: a DMA Setup frame
    /// unless the stretch continues the command whose data went last, then data frames of at
    /// most 8 KiB, each with its framing and handshake, and a DMA Activate frame before each one
    /// the host sends).
    #[inline(always)]
    fn data_ns(&mut self, bytes: u64, to_host: bool, e: u32) -> u64 {
        let t = self.link_ns(bytes);
        if self.fis == 0 || bytes == 0 {
            return t;
        }
        let frames = bytes.div_ceil(8192);
        let per = if to_host {
            self.fis
        } else {
            self.fis + self.activate_fis
        };
        let setup = if self.last_burst == e {
            0
        } else {
            self.last_burst = e;
            self.setup_fis
        };
        setup + t + frames * per
    }

    /// Moves `bytes` of command slot `e` over the link no earlier than `t` (plus
    /// `host.cmd_overhead_ns` when `overhead`: the command's first transfer), sharing the
    /// adapter's uplink; returns when the data has arrived.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn xfer(
        &mut self,
        up: &mut Uplink,
        w0: u64,
        now: u64,
        t: u64,
        bytes: u64,
        to_host: bool,
        overhead: bool,
        e: u32,
    ) -> u64 {
        let dur = if overhead { self.cmd_overhead } else { 0 } + self.data_ns(bytes, to_host, e);
        let down = self.nvme && to_host;
        let (s, mut e) = if down {
            self.down.book(now, t, dur)
        } else {
            self.up.book(now, t, dur)
        };
        if down {
            self.down_meter.add(w0, s, e);
        } else {
            self.up_meter.add(w0, s, e);
        }
        if up.bps > 0 && bytes > 0 {
            // the shared uplink carries the payload once the link has started it
            let ud = bytes * 1_000_000_000 / up.bps;
            let (_, ue) = up.cal.book(now, s, ud);
            e = e.max(ue);
        }
        e
    }
}
