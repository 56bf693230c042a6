//! Flash transaction scheduler: per-die queues of transactions (page reads, page-group programs,
//! block erases) in three classes — host reads (with the reads of read-modify-write), host
//! programs, and GC traffic (GC reads, GC programs, erases, pSLC folding) — served in time order
//! whenever the die is free (work-conserving: a die never idles while one of its queues holds a
//! transaction that is ready).
//!
//! Priorities (the usual firmware policy; MQSim's `TSU_Priority_OutOfOrder` is similar): host
//! reads first; then host programs, with GC filling the idle time (*background* GC, while a
//! plane of the die is below the soft free-block threshold). Below the hard threshold GC is
//! *foreground*: GC and host programs are interleaved so that GC moves `v / (1 - v)` pages for
//! every page the host programs (`v`: valid fraction of the blocks being collected), which frees
//! blocks exactly as fast as the host consumes them; when a plane is down to its last free
//! block GC goes strictly first.
//! Commands are formed at dispatch: reads and erases of other planes of the same die at the
//! same page index join the head transaction as one multi-plane command; a page group already is
//! one multi-plane program. A running program or erase can be suspended for host reads where the
//! NAND part supports it.
//!
//! The scheduler only holds queues and die state and makes the choices; the drive
//! ([`crate::drive`]) executes the chosen commands against the NAND timing and the channels.

use crate::ftl::{try_vec_with_capacity, AllocError, NIL};
use crate::nand::{Meter, MAX_PLANES};

/// Transaction classes, in default priority order.
pub(crate) const C_READ: usize = 0;
pub(crate) const C_PROG: usize = 1;
pub(crate) const C_GC: usize = 2;
pub(crate) const CLASSES: usize = 3;

pub(crate) const K_READ: u8 = 0;
pub(crate) const K_PROG: u8 = 1;
pub(crate) const K_ERASE: u8 = 2;
/// The die is waiting out a suspend command (no transaction).
pub(crate) const K_SUSPEND: u8 = 3;
/// A write-back of a translation page of the cached mapping table ([`crate::ftl::mapcache`]),
/// queued with the host programs and kept in their order.
pub(crate) const K_MAPW: u8 = 4;

/// Programs of a die's program queue go in order: page groups and map write-backs.
#[inline(always)]
fn ordered(kind: u8) -> bool {
    kind == K_PROG || kind == K_MAPW
}

/// Transaction flags.
pub(crate) const F_SLC: u8 = 1;
/// A read of old data a page group waits for (`group`): read-modify-write (`owner` is the
/// write command, which completes after it) or the merge of a fragmented unit (`owner` NIL).
pub(crate) const F_RMW: u8 = 2;
/// A read of a translation page of the cached mapping table (`group`: the page; the host reads
/// waiting for it are listed by the cache).
pub(crate) const F_MAP: u8 = 4;
/// A read of a merge of the hybrid scheme ([`crate::ftl::hybrid`]), in the GC class: `owner`
/// is the logical unit, `group` the merge's page group waiting for it.
pub(crate) const F_MERGE: u8 = 8;

/// GC only in idle die time (host programs first).
pub(crate) const GC_BACKGROUND: u8 = 0;
/// GC interleaved with host programs at the rate that keeps the free blocks level.
pub(crate) const GC_FOREGROUND: u8 = 1;
/// A plane is down to its last free block: GC first.
pub(crate) const GC_CRITICAL: u8 = 2;

/// Multi-plane partners are looked for among this many transactions behind the head.
const PARTNER_WINDOW: usize = 16;

/// One flash transaction.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Tx {
    /// Earliest start: when the data or the command is in the controller.
    pub ready: u64,
    /// Next in its die's class queue (intrusive list), or NIL.
    pub next: u32,
    pub kind: u8,
    pub plane: u8,
    pub flags: u8,
    /// Page index within the block (reads: multi-plane partners share it).
    pub page: u32,
    /// Block (reads, erases).
    pub blk: u32,
    /// Host command (host reads, RMW reads), page group (programs) or die (GC reads).
    pub owner: u32,
    /// Page group waiting for the data (RMW reads).
    pub group: u32,
    /// Bytes crossing the channel (reads: NAND bytes of the units wanted).
    pub bytes: u32,
    /// Bytes the host receives (host reads).
    pub host_bytes: u32,
    /// When it was queued (audits).
    pub enq: u64,
}

#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

/// The operation a die is executing.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Op {
    pub kind: u8,
    pub n: u8,
    pub suspends: u8,
    pub start: u64,
    /// When the data transfer into the die ends and the array operation starts (programs).
    pub array_start: u64,
    pub end: u64,
    /// Page groups (programs) or blocks (erases).
    pub ids: [u32; MAX_PLANES],
}

/// A program or erase put aside by a suspend.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Suspended {
    pub op: Op,
    pub remaining: u64,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Die {
    q: [List; CLASSES],
    pub busy: bool,
    pub op: Op,
    /// Bumped whenever the pending completion event of the die becomes stale (suspend).
    pub gen: u32,
    /// Time of the pending wake-up event, or `u64::MAX`.
    pub wake: u64,
    pub susp: Option<Suspended>,
    pub dirty: bool,
    /// When the die last became free (audits).
    pub idle_since: u64,
    pub meter: Meter,
}

impl Default for Die {
    fn default() -> Self {
        let l = List {
            head: NIL,
            tail: NIL,
            len: 0,
        };
        Die {
            q: [l; CLASSES],
            busy: false,
            op: Op::default(),
            gen: 0,
            wake: u64::MAX,
            susp: None,
            dirty: false,
            idle_since: 0,
            meter: Meter::default(),
        }
    }
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Sched {
    pub txs: Vec<Tx>,
    free_tx: u32,
    pub dies: Vec<Die>,
    /// Per die (compact, for the host stream's choice of die): end of the running operation
    /// (0 when idle), host programs queued, and whether a plane of the die is short of free
    /// blocks (then GC goes before host programs).
    pub end: Vec<u64>,
    pub nprog: Vec<u32>,
    /// GC mode: [`GC_BACKGROUND`], [`GC_FOREGROUND`] or [`GC_CRITICAL`].
    pub mode: Vec<u8>,
    /// Foreground GC: GC pages owed for host pages programmed (×256), and the rate (×256:
    /// `v / (1 - v)` of the victims being collected).
    pub debt: Vec<i64>,
    pub ratio: Vec<u32>,
    /// Per die, packed for the host stream's scan: foreground GC (top bit) and the time a new
    /// host program could start, ignoring the current time (`end + nprog · t_prog`).
    pub avail: Vec<u64>,
    pub t_prog: u64,
    /// Dies whose queues changed since the drive last looked at them.
    pub dirty: Vec<u32>,
    pub read_priority: bool,
    pub suspend_min: u64,
    /// The drive's current time (stamps queued transactions).
    pub now: u64,
}

impl Sched {
    /// Bytes [`Sched::try_new`] allocates for `dies` dies and `txs` transaction slots.
    pub(crate) fn memory_estimate(dies: usize, txs: usize) -> u64 {
        (dies * (size_of::<Die>() + 4 + 8 + 4 + 1 + 8 + 8 + 4) + txs * size_of::<Tx>()) as u64
    }

    pub(crate) fn try_new(
        dies: usize,
        txs: usize,
        read_priority: bool,
        suspend_min: u64,
        t_prog: u64,
    ) -> Result<Sched, AllocError> {
        let mut pool = try_vec_with_capacity(txs, "transaction queues")?;
        for i in 0..txs {
            pool.push(Tx {
                next: if i + 1 < txs { (i + 1) as u32 } else { NIL },
                ..Tx::default()
            });
        }
        let mut ds = try_vec_with_capacity(dies, "die state")?;
        ds.resize(dies, Die::default());
        Ok(Sched {
            txs: pool,
            free_tx: if txs > 0 { 0 } else { NIL },
            dies: ds,
            end: crate::ftl::try_vec(0u64, dies, "die state")?,
            nprog: crate::ftl::try_vec(0u32, dies, "die state")?,
            mode: crate::ftl::try_vec(GC_BACKGROUND, dies, "die state")?,
            debt: crate::ftl::try_vec(0i64, dies, "die state")?,
            ratio: crate::ftl::try_vec(0u32, dies, "die state")?,
            avail: crate::ftl::try_vec(0u64, dies, "die state")?,
            t_prog,
            dirty: try_vec_with_capacity(dies, "die state")?,
            read_priority,
            suspend_min,
            now: 0,
        })
    }

    /// Appends `tx` to die `d`'s queue of `class`.
    #[inline]
    pub(crate) fn enqueue(&mut self, d: usize, class: usize, mut tx: Tx) {
        let i = if self.free_tx != NIL {
            let i = self.free_tx;
            self.free_tx = self.txs[i as usize].next;
            i
        } else {
            // more transactions in flight than planned for: grow (amortised, rare)
            self.txs.push(Tx::default());
            (self.txs.len() - 1) as u32
        };
        tx.next = NIL;
        tx.enq = self.now;
        self.txs[i as usize] = tx;
        let die = &mut self.dies[d];
        let l = &mut die.q[class];
        if l.tail == NIL {
            l.head = i;
        } else {
            self.txs[l.tail as usize].next = i;
        }
        l.tail = i;
        l.len += 1;
        if class == C_PROG {
            self.nprog[d] += 1;
            self.avail[d] += self.t_prog;
        }
        if !die.dirty {
            die.dirty = true;
            self.dirty.push(d as u32);
        }
    }

    /// Removes the transaction after `prev` (or the head when `prev` is NIL) from a class queue.
    fn unlink(&mut self, d: usize, class: usize, prev: u32) -> Tx {
        let l = &mut self.dies[d].q[class];
        let i = if prev == NIL {
            l.head
        } else {
            self.txs[prev as usize].next
        };
        let next = self.txs[i as usize].next;
        if prev == NIL {
            l.head = next;
        } else {
            self.txs[prev as usize].next = next;
        }
        if l.tail == i {
            l.tail = prev;
        }
        l.len -= 1;
        if class == C_PROG {
            self.nprog[d] -= 1;
            self.avail[d] -= self.t_prog;
        }
        let tx = self.txs[i as usize];
        self.txs[i as usize].next = self.free_tx;
        self.free_tx = i;
        tx
    }

    /// Removes and returns up to `out.len()` ready transactions of `kind` behind the head of
    /// `class` that can join a multi-plane command with `first` (another plane not yet used, the
    /// same page index for reads); returns how many.
    pub(crate) fn take_partners(
        &mut self,
        d: usize,
        class: usize,
        first: &Tx,
        now: u64,
        out: &mut [Tx],
    ) -> usize {
        let mut used = 1u32 << first.plane;
        let mut n = 0;
        let mut prev = NIL;
        let mut i = self.dies[d].q[class].head;
        let mut seen = 0;
        while i != NIL && n < out.len() && seen < PARTNER_WINDOW {
            let t = self.txs[i as usize];
            seen += 1;
            if t.kind == first.kind
                && t.ready <= now
                && used & (1 << t.plane) == 0
                && (t.kind != K_READ
                    || (t.page == first.page && t.flags & F_SLC == first.flags & F_SLC))
            {
                used |= 1 << t.plane;
                out[n] = self.unlink(d, class, prev);
                n += 1;
                i = if prev == NIL {
                    self.dies[d].q[class].head
                } else {
                    self.txs[prev as usize].next
                };
                continue;
            }
            prev = i;
            i = t.next;
        }
        n
    }

    /// Position (the transaction before it, NIL for the head) of the first transaction of
    /// `class` on die `d` that can start at `now`: ready, and not a program behind an earlier
    /// program that is not ready (a die programs its pages in order).
    #[inline]
    fn find(&self, d: usize, class: usize, now: u64) -> Option<u32> {
        let mut prev = NIL;
        let mut i = self.dies[d].q[class].head;
        let mut prog_seen = false;
        while i != NIL {
            let t = &self.txs[i as usize];
            if ordered(t.kind) {
                if !prog_seen && t.ready <= now {
                    return Some(prev);
                }
                prog_seen = true;
                if class == C_PROG {
                    // only programs in this queue: the head decides
                    return None;
                }
            } else if t.ready <= now {
                return Some(prev);
            }
            prev = i;
            i = t.next;
        }
        None
    }

    #[inline]
    fn ready_of(&self, d: usize, class: usize, prev: u32) -> u64 {
        let i = if prev == NIL {
            self.dies[d].q[class].head
        } else {
            self.txs[prev as usize].next
        };
        self.txs[i as usize].ready
    }

    /// The transaction die `d` should serve next at `now`, if one can start: its class and
    /// position (see [`Sched::take`]). While an operation is suspended only host reads may run.
    #[inline]
    pub(crate) fn pick(&self, d: usize, now: u64) -> Option<(usize, u32)> {
        let die = &self.dies[d];
        let gc_first = match self.mode[d] {
            GC_CRITICAL => true,
            GC_FOREGROUND => self.debt[d] > 0,
            _ => false,
        };
        let read = self.find(d, C_READ, now);
        if die.susp.is_some() {
            return read.map(|p| (C_READ, p));
        }
        if let Some(p) = read {
            if self.read_priority {
                return Some((C_READ, p));
            }
            // reads and host programs in the order they became ready
            match self.find(d, C_PROG, now) {
                Some(q) if self.ready_of(d, C_PROG, q) < self.ready_of(d, C_READ, p) => {
                    if gc_first {
                        if let Some(g) = self.find(d, C_GC, now) {
                            return Some((C_GC, g));
                        }
                    }
                    return Some((C_PROG, q));
                }
                _ => return Some((C_READ, p)),
            }
        }
        let order = if gc_first {
            [C_GC, C_PROG]
        } else {
            [C_PROG, C_GC]
        };
        for c in order {
            if let Some(p) = self.find(d, c, now) {
                return Some((c, p));
            }
        }
        None
    }

    /// Removes the transaction at a position returned by [`Sched::pick`].
    #[inline]
    pub(crate) fn take(&mut self, d: usize, class: usize, prev: u32) -> Tx {
        self.unlink(d, class, prev)
    }

    /// Die `d` now runs until `end` (0: idle): refresh its packed availability.
    #[inline]
    pub(crate) fn set_end(&mut self, d: usize, end: u64) {
        self.end[d] = end;
        self.refresh(d);
    }

    /// Die `d` enters GC mode `mode`.
    pub(crate) fn set_mode(&mut self, d: usize, mode: u8) {
        if mode == GC_BACKGROUND {
            self.debt[d] = 0;
        }
        self.mode[d] = mode;
        self.refresh(d);
    }

    #[inline]
    fn refresh(&mut self, d: usize) {
        let fg = (self.mode[d] != GC_BACKGROUND) as u64;
        self.avail[d] = fg << 63 | (self.end[d] + self.nprog[d] as u64 * self.t_prog);
    }

    /// Foreground GC accounting: the host programmed `pages` pages on die `d`.
    #[inline]
    pub(crate) fn host_programmed(&mut self, d: usize, pages: u64) {
        if self.mode[d] != GC_BACKGROUND {
            self.debt[d] += (pages * self.ratio[d] as u64) as i64;
        }
    }

    /// Foreground GC accounting: GC programmed `pages` pages on die `d` (credit is capped at a
    /// block's worth, so idle-time GC cannot starve GC later).
    #[inline]
    pub(crate) fn gc_programmed(&mut self, d: usize, pages: u64, cap: i64) {
        self.debt[d] = (self.debt[d] - (pages as i64) * 256).max(-cap * 256);
    }

    /// Earliest time a queued transaction of die `d` becomes ready (`u64::MAX` when nothing is
    /// queued); programs count only at the head of their order.
    pub(crate) fn next_ready(&self, d: usize) -> u64 {
        let mut t = u64::MAX;
        for c in 0..CLASSES {
            let mut i = self.dies[d].q[c].head;
            let mut prog_seen = false;
            while i != NIL {
                let x = &self.txs[i as usize];
                if !ordered(x.kind) || !prog_seen {
                    t = t.min(x.ready);
                }
                if ordered(x.kind) {
                    prog_seen = true;
                    if c == C_PROG {
                        break;
                    }
                }
                i = x.next;
            }
        }
        t
    }

    /// Earliest ready host read of die `d` (reads can suspend a busy die).
    #[inline]
    pub(crate) fn read_ready(&self, d: usize) -> u64 {
        let mut t = u64::MAX;
        let mut i = self.dies[d].q[C_READ].head;
        while i != NIL {
            t = t.min(self.txs[i as usize].ready);
            i = self.txs[i as usize].next;
        }
        t
    }

    /// Audit of work conservation, written independently of [`Sched::pick`]: whether a
    /// transaction of die `d` in one of `classes` could start at `now` (ready, and not a program
    /// queued behind another program of its queue).
    pub(crate) fn any_ready(&self, d: usize, now: u64, classes: &[usize]) -> bool {
        classes.iter().any(|&c| {
            let mut first_prog = true;
            let mut i = self.dies[d].q[c].head;
            while i != NIL {
                let x = &self.txs[i as usize];
                let eligible = !ordered(x.kind) || first_prog;
                if ordered(x.kind) {
                    first_prog = false;
                }
                if eligible && x.ready <= now {
                    return true;
                }
                i = x.next;
            }
            false
        })
    }

    /// Transactions queued on die `d` (all classes).
    pub(crate) fn queued_total(&self, d: usize) -> u32 {
        self.dies[d].q.iter().map(|l| l.len).sum()
    }
}
