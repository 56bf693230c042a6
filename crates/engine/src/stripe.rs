//! A userspace RAID 0 stripe set over real members (or null members): every request is split at
//! each chunk boundary with the md raid0 layout of `ssdlab-layout`, each piece goes to its member's
//! own O_DIRECT file handle, and the request completes when all its pieces have.

use crate::backend::{Backend, Cqe};
use ssdlab_io::{Dir, UringBackend};
use ssdlab_layout::StripeMap;
use ssdlab_stats::MemberStats;
use ssdlab_workload::{Op, OpKind};
use std::io;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default)]
struct MemberAcc {
    inflight: u32,
    busy_since: u64,
    stats: MemberStats,
}

/// Per-slot state of a parent request.
#[derive(Debug, Clone, Copy, Default)]
struct Parent {
    remaining: u32,
    /// Bytes moved so far, or the first error (negative errno).
    res: i64,
    kind_read: bool,
    t_submit: u64,
}

/// The stripe set backend. `ring == None` means null members (complete at once).
pub(crate) struct StripeAdapter {
    origin: Instant,
    map: StripeMap,
    ring: Option<UringBackend>,
    parents: Vec<Parent>,
    members: Vec<MemberAcc>,
    /// Null members: requests (slot, length) completed at submission, reported at the next reap.
    null_done: Vec<(u32, u64)>,
    /// Scratch buffer for one reap pass: (slot, member, result).
    reaped: Vec<(u32, u32, i32)>,
    /// Clock read once per submission batch (0 = not read yet in this batch).
    batch_time: u64,
}

impl StripeAdapter {
    pub(crate) fn max_pieces(map: &StripeMap, bs: u64) -> u64 {
        bs.div_ceil(map.chunk()) + 1
    }

    pub(crate) fn new(
        origin: Instant,
        map: StripeMap,
        ring: Option<UringBackend>,
        slots: u32,
        names: Vec<String>,
    ) -> Self {
        StripeAdapter {
            origin,
            ring,
            parents: vec![Parent::default(); slots as usize],
            members: names
                .into_iter()
                .map(|name| MemberAcc {
                    stats: MemberStats {
                        name,
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            null_done: Vec::new(),
            reaped: Vec::new(),
            batch_time: 0,
            map,
        }
    }

    /// A piece of `slot`'s request on `member` completed with `res` at `t`.
    #[inline]
    fn complete_piece(&mut self, slot: u32, member: u32, res: i32, t: u64, out: &mut Vec<Cqe>) {
        let slot = slot as usize;
        let m = &mut self.members[member as usize];
        let p = &mut self.parents[slot];
        let service = t.saturating_sub(p.t_submit);
        if p.kind_read {
            m.stats.read_ticks_ns += service;
        } else {
            m.stats.write_ticks_ns += service;
        }
        m.inflight -= 1;
        if m.inflight == 0 {
            m.stats.busy_ns += t.saturating_sub(m.busy_since);
        }
        if res < 0 {
            if p.res >= 0 {
                p.res = res as i64;
            }
        } else if p.res >= 0 {
            p.res += res as i64;
        }
        p.remaining -= 1;
        if p.remaining == 0 {
            out.push(Cqe {
                slot: slot as u32,
                res: p.res,
                t_ns: t,
            });
        }
    }
}

impl Backend for StripeAdapter {
    #[inline]
    fn now(&mut self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn submit_batch(&self) -> u32 {
        self.ring.as_ref().map_or(0, |r| r.submit_batch())
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.ring.as_mut()?.buffer(slot)
    }

    #[inline]
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        if op.kind == OpKind::Trim {
            return Err(crate::real::no_trims());
        }
        let read = op.kind == OpKind::Read;
        let Some(ring) = self.ring.as_mut() else {
            // Null members complete at once: count the pieces, no service time, no busy time.
            let mut count = |member: usize, len: u64| {
                let m = &mut self.members[member].stats;
                if read {
                    m.read_ios += 1;
                    m.read_bytes += len;
                } else {
                    m.write_ios += 1;
                    m.write_bytes += len;
                }
            };
            if self.map.within_one_chunk(op.offset, op.len) {
                count(self.map.map(op.offset).0, op.len);
            } else {
                for piece in self.map.split(op.offset, op.len) {
                    count(piece.member, piece.len);
                }
            }
            self.null_done.push((slot, op.len));
            return Ok(());
        };
        if self.batch_time == 0 {
            self.batch_time = self.origin.elapsed().as_nanos().max(1) as u64;
        }
        let now = self.batch_time;
        let dir = if read { Dir::Read } else { Dir::Write };
        let mut n = 0u32;
        for piece in self.map.split(op.offset, op.len) {
            // Queue first: a refused piece leaves the member's counters untouched.
            if let Err(e) = ring.push_piece(
                slot,
                piece.member as u32,
                piece.member as u32,
                (piece.logical_offset - op.offset) as usize,
                dir,
                piece.member_offset,
                piece.len as u32,
            ) {
                if n == 0 {
                    return Err(e);
                }
                // Some pieces are already in flight: the parent completes with the error
                // once they are back.
                let p = &mut self.parents[slot as usize];
                *p = Parent {
                    remaining: n,
                    res: -(libc_eio()),
                    kind_read: read,
                    t_submit: now,
                };
                return Ok(());
            }
            let m = &mut self.members[piece.member];
            if m.inflight == 0 {
                m.busy_since = now;
            }
            m.inflight += 1;
            if read {
                m.stats.read_ios += 1;
                m.stats.read_bytes += piece.len;
            } else {
                m.stats.write_ios += 1;
                m.stats.write_bytes += piece.len;
            }
            n += 1;
        }
        self.parents[slot as usize] = Parent {
            remaining: n,
            res: 0,
            kind_read: read,
            t_submit: now,
        };
        Ok(())
    }

    fn submit_wait(&mut self, min: usize, _timeout_ns: u64) -> io::Result<()> {
        self.batch_time = 0;
        match self.ring.as_mut() {
            // no timeout needed: the ring's wait always ends with a completion
            Some(r) => r.submit_and_wait(min),
            None => Ok(()),
        }
    }

    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        self.batch_time = 0;
        let left = deadline_ns.saturating_sub(self.now());
        match self.ring.as_mut() {
            Some(r) if inflight > 0 => r.submit_and_wait_timeout(Duration::from_nanos(left)),
            // Null members have completed already.
            None if inflight > 0 => Ok(()),
            _ => {
                std::thread::sleep(Duration::from_nanos(left));
                Ok(())
            }
        }
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = self.now();
        let Some(r) = self.ring.as_mut() else {
            out.extend(self.null_done.drain(..).map(|(slot, len)| Cqe {
                slot,
                res: len as i64,
                t_ns: t,
            }));
            return;
        };
        let mut reaped = std::mem::take(&mut self.reaped);
        r.reap(|slot, member, res| reaped.push((slot, member, res)));
        for &(slot, member, res) in &reaped {
            self.complete_piece(slot, member, res, t, out);
        }
        reaped.clear();
        self.reaped = reaped;
    }

    fn mark_measurement_start(&mut self) {
        let now = self.now();
        for m in &mut self.members {
            m.stats = MemberStats {
                name: std::mem::take(&mut m.stats.name),
                ..Default::default()
            };
            m.busy_since = now;
        }
    }

    fn member_stats(&mut self) -> Vec<MemberStats> {
        let now = self.now();
        self.members
            .iter()
            .map(|m| {
                let mut s = m.stats.clone();
                if m.inflight > 0 {
                    s.busy_ns += now.saturating_sub(m.busy_since);
                }
                s
            })
            .collect()
    }
}

/// EIO, for a request whose last pieces the ring refused.
fn libc_eio() -> i64 {
    5
}
