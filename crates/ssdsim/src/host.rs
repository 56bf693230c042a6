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
    /// Firmware done with the command.
    pub t_fw: u64,
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

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Host {
    pub nvme: bool,
    link_bps: u64,
    pub cmd_overhead: u64,
    /// Host → drive (and both directions on SATA).
    pub up: Calendar,
    /// Drive → host (NVMe only).
    pub down: Calendar,
    pub up_meter: Meter,
    pub down_meter: Meter,
    link_memo: (u64, u64),
    pub cmds: Vec<Cmd>,
    free: Vec<u32>,
    pub wait: VecDeque<Queued>,
}

impl Host {
    pub(crate) fn memory_estimate(queue_depth: usize) -> u64 {
        (queue_depth * (size_of::<Cmd>() + 4 + size_of::<Queued>()) + 2 * 64 * 16) as u64
    }

    pub(crate) fn try_new(
        nvme: bool,
        link_bps: u64,
        cmd_overhead: u64,
        queue_depth: usize,
    ) -> Result<Host, AllocError> {
        let mut cmds = try_vec_with_capacity(queue_depth, "command slots")?;
        let mut free = try_vec_with_capacity(queue_depth, "command slots")?;
        for i in 0..queue_depth {
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
                remaining: 0,
                done: 0,
                first: true,
                u0: 0,
                u1: 0,
                whole: false,
            });
            free.push((queue_depth - 1 - i) as u32);
        }
        let mut up = Calendar::default();
        let mut down = Calendar::default();
        up.try_reserve(64)
            .map_err(|_| AllocError::new("link timeline", 64 * 16))?;
        down.try_reserve(64)
            .map_err(|_| AllocError::new("link timeline", 64 * 16))?;
        Ok(Host {
            nvme,
            link_bps,
            cmd_overhead,
            up,
            down,
            up_meter: Meter::default(),
            down_meter: Meter::default(),
            link_memo: (0, 0),
            cmds,
            free,
            wait: try_deque(queue_depth, "command queue")?,
        })
    }

    /// A free command slot.
    #[inline]
    pub(crate) fn alloc(&mut self) -> Option<u32> {
        self.free.pop()
    }

    #[inline]
    pub(crate) fn release(&mut self, e: u32) {
        self.free.push(e);
    }

    #[inline]
    fn link_ns(&mut self, bytes: u64) -> u64 {
        if bytes != self.link_memo.0 {
            self.link_memo = (bytes, bytes * 1_000_000_000 / self.link_bps);
        }
        self.link_memo.1
    }

    /// Moves `bytes` over the link no earlier than `t` (plus the command's protocol exchange
    /// when `overhead`), sharing the adapter's uplink; returns when the data has arrived.
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
    ) -> u64 {
        let dur = if overhead { self.cmd_overhead } else { 0 } + self.link_ns(bytes);
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
