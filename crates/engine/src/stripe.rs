//! A userspace RAID 0 stripe set over real members (or null members): every request is split at
//! each chunk boundary with the md raid0 layout of `ssdlab-layout`, each piece goes to its member's
//! own O_DIRECT file handle, and the request completes when all its pieces have.
//!
//! [`StripeAdapter`] is generic over how pieces reach the members ([`MemberIo`]): one io_uring
//! ring over every member's file ([`UringBackend`]), or null members that complete every piece
//! at once ([`NullMembers`]).

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

/// How the pieces of a stripe set's requests reach its members.
pub(crate) trait MemberIo {
    /// Pieces take time on their member: its busy time and service ticks are counted (null
    /// members count I/Os and bytes only).
    const TIMED: bool;
    /// fio's `iodepth_batch_submit` of the members' queue (0: no batching).
    fn submit_batch(&self) -> u32;
    /// The data buffer of request slot `slot`, when there is one.
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]>;
    /// Queues a piece: `len` bytes of slot `slot`'s buffer from `buf_offset`, to or from
    /// `member_offset` on member `member`.
    fn push_piece(
        &mut self,
        slot: u32,
        member: u32,
        buf_offset: usize,
        dir: Dir,
        member_offset: u64,
        len: u32,
    ) -> io::Result<()>;
    /// Submits what is queued and waits for `min` completions.
    fn submit_and_wait(&mut self, min: usize) -> io::Result<()>;
    /// Submits what is queued and waits for one completion, at most `timeout`.
    fn submit_and_wait_timeout(&mut self, timeout: Duration) -> io::Result<()>;
    /// Hands every completed piece (slot, member, result) to `f`.
    fn reap(&mut self, f: impl FnMut(u32, u32, i32));
}

impl MemberIo for UringBackend {
    const TIMED: bool = true;
    #[inline]
    fn submit_batch(&self) -> u32 {
        UringBackend::submit_batch(self)
    }
    #[inline]
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        UringBackend::buffer(self, slot)
    }
    #[inline]
    fn push_piece(
        &mut self,
        slot: u32,
        member: u32,
        buf_offset: usize,
        dir: Dir,
        member_offset: u64,
        len: u32,
    ) -> io::Result<()> {
        // one registered file per member, in member order
        UringBackend::push_piece(
            self,
            slot,
            member,
            member,
            buf_offset,
            dir,
            member_offset,
            len,
        )
    }
    #[inline]
    fn submit_and_wait(&mut self, min: usize) -> io::Result<()> {
        UringBackend::submit_and_wait(self, min)
    }
    #[inline]
    fn submit_and_wait_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        UringBackend::submit_and_wait_timeout(self, timeout)
    }
    #[inline]
    fn reap(&mut self, f: impl FnMut(u32, u32, i32)) {
        UringBackend::reap(self, f);
    }
}

/// Members of the null target: every piece completes at once, with its whole length. (The
/// adapter hands them a request whole, after counting its pieces on the members.)
#[derive(Default)]
pub(crate) struct NullMembers {
    /// Pieces (slot, member, length) completed at submission, reported at the next reap.
    done: Vec<(u32, u32, i32)>,
}

impl MemberIo for NullMembers {
    const TIMED: bool = false;
    #[inline]
    fn submit_batch(&self) -> u32 {
        0
    }
    #[inline]
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }
    #[inline]
    fn push_piece(
        &mut self,
        slot: u32,
        member: u32,
        _buf_offset: usize,
        _dir: Dir,
        _member_offset: u64,
        len: u32,
    ) -> io::Result<()> {
        self.done.push((slot, member, len as i32));
        Ok(())
    }
    #[inline]
    fn submit_and_wait(&mut self, _min: usize) -> io::Result<()> {
        Ok(())
    }
    #[inline]
    fn submit_and_wait_timeout(&mut self, _timeout: Duration) -> io::Result<()> {
        Ok(())
    }
    #[inline]
    fn reap(&mut self, mut f: impl FnMut(u32, u32, i32)) {
        for &(slot, member, res) in &self.done {
            f(slot, member, res);
        }
        self.done.clear();
    }
}

/// The stripe set backend over members reached through `M`.
pub(crate) struct StripeAdapter<M: MemberIo> {
    origin: Instant,
    map: StripeMap,
    io: M,
    parents: Vec<Parent>,
    members: Vec<MemberAcc>,
    /// Scratch buffer for one reap pass: (slot, member, result).
    reaped: Vec<(u32, u32, i32)>,
    /// Clock read once per submission batch (0 = not read yet in this batch).
    batch_time: u64,
}

/// The most pieces a request of `bs` bytes is split into on `map`.
pub(crate) fn max_pieces(map: &StripeMap, bs: u64) -> u64 {
    bs.div_ceil(map.chunk()) + 1
}

impl<M: MemberIo> StripeAdapter<M> {
    pub(crate) fn new(
        origin: Instant,
        map: StripeMap,
        io: M,
        slots: u32,
        names: Vec<String>,
    ) -> Self {
        StripeAdapter {
            origin,
            io,
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
            reaped: Vec::new(),
            batch_time: 0,
            map,
        }
    }

    /// A piece of `slot`'s request on `member` completed with `res` at `t` (timed members only:
    /// null members complete whole requests in `reap`).
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
                started_ns: Cqe::WITH_BATCH,
            });
        }
    }
}

impl<M: MemberIo> Backend for StripeAdapter<M> {
    #[inline]
    fn now(&mut self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn submit_batch(&self) -> u32 {
        self.io.submit_batch()
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.io.buffer(slot)
    }

    #[inline]
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        if op.kind == OpKind::Trim {
            return Err(crate::real::no_trims());
        }
        let read = op.kind == OpKind::Read;
        let dir = if read { Dir::Read } else { Dir::Write };
        if !M::TIMED {
            // Null members: count the pieces on their members, then complete the request as
            // one (no clock, no service or busy time).
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
            // (a request is at most 1 GiB: the length fits; its completion is reported as is)
            return self
                .io
                .push_piece(slot, 0, 0, dir, op.offset, op.len as u32);
        }
        if self.batch_time == 0 {
            self.batch_time = self.origin.elapsed().as_nanos().max(1) as u64;
        }
        let now = self.batch_time;
        let mut n = 0u32;
        for piece in self.map.split(op.offset, op.len) {
            // Queue first: a refused piece leaves the member's counters untouched.
            if let Err(e) = self.io.push_piece(
                slot,
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
        // no timeout needed: the ring's wait always ends with a completion
        self.io.submit_and_wait(min)
    }

    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        self.batch_time = 0;
        let left = deadline_ns.saturating_sub(self.now());
        if inflight > 0 {
            // (null members have completed already)
            self.io.submit_and_wait_timeout(Duration::from_nanos(left))
        } else {
            crate::backend::wait_out(|| self.now(), deadline_ns);
            Ok(())
        }
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let t = self.now();
        if !M::TIMED {
            // null members complete whole requests (see `push`)
            self.io.reap(|slot, _, res| {
                out.push(Cqe {
                    slot,
                    res: res as i64,
                    t_ns: t,
                    started_ns: Cqe::WITH_BATCH,
                })
            });
            return;
        }
        let mut reaped = std::mem::take(&mut self.reaped);
        self.io
            .reap(|slot, member, res| reaped.push((slot, member, res)));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Null members: every request completes with its whole length once all its pieces are
    /// back, the pieces are counted on the members the md layout gives, and no time is kept.
    #[test]
    fn null_members_count_pieces_and_keep_no_time() {
        let map = StripeMap::new(&[1 << 20, 1 << 20], 16 << 10, 512).unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        let mut s = StripeAdapter::new(Instant::now(), map, NullMembers::default(), 4, names);
        // one piece on member 0, one request split over both members (8 KiB on each side of
        // the first chunk boundary), one piece on member 1
        let ops = [(0u64, 4096u64), (8 << 10, 16 << 10), (16 << 10, 4096)];
        for (slot, &(offset, len)) in ops.iter().enumerate() {
            let op = Op {
                kind: if slot == 1 {
                    OpKind::Write
                } else {
                    OpKind::Read
                },
                offset,
                len,
            };
            s.push(slot as u32, &op).unwrap();
        }
        s.submit_wait(1, 0).unwrap();
        let mut out = Vec::new();
        s.reap(&mut out);
        let done: Vec<(u32, i64)> = out.iter().map(|c| (c.slot, c.res)).collect();
        assert_eq!(done, [(0, 4096), (1, 16 << 10), (2, 4096)]);
        let m = s.member_stats();
        assert_eq!((m[0].read_ios, m[0].read_bytes), (1, 4096));
        assert_eq!((m[0].write_ios, m[0].write_bytes), (1, 8 << 10));
        assert_eq!((m[1].read_ios, m[1].read_bytes), (1, 4096));
        assert_eq!((m[1].write_ios, m[1].write_bytes), (1, 8 << 10));
        for m in &m {
            assert_eq!((m.busy_ns, m.read_ticks_ns, m.write_ticks_ns), (0, 0, 0));
        }
        assert_eq!(s.submit_batch(), 0);
        assert!(s.buffer(0).is_none());
    }
}
