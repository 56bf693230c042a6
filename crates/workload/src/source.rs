//! Where a worker's operations come from: generated ([`OpGen`], a closed loop that issues as
//! soon as a slot is free), generated at a fixed rate (fio's `rate_iops`: one op per period, on
//! an absolute schedule that catches up when behind), or replayed from a recorded trace
//! ([`Replay`], each op with the gap to the previous issue, ending with the trace).
//!
//! An enum rather than a trait object, so the engine's hot loop stays monomorphic and a source
//! can be cloned (the simulator runs a copy one op ahead to prefetch).

use crate::gen::{Op, OpGen};
use crate::replay::Trace;
use std::sync::Arc;

/// The next operation of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    pub op: Op,
    /// Issue no earlier than this long after the previous op of this source was issued
    /// (0 = as soon as a slot is free).
    pub gap_ns: u64,
    /// Gaps count from the previous op's *due* time even when it was issued late, so a source
    /// that fell behind catches up (a rate); otherwise a late op moves the schedule (a replay,
    /// as fio's `iolog_delay`).
    pub catch_up: bool,
    /// Issue only once every op issued before it has completed, `gap_ns` after the last of
    /// them completed (fio's `thinktime`: the queue is drained, then the job thinks).
    pub drain: bool,
}

/// A cursor over a shared, loaded trace.
#[derive(Debug, Clone)]
pub struct Replay {
    trace: Arc<Trace>,
    next: usize,
    /// Added to every offset (the region's start on the target).
    base: u64,
}

impl Replay {
    /// Replays `trace` from its first op, every offset shifted by `base`.
    pub fn new(trace: Arc<Trace>, base: u64) -> Replay {
        Replay {
            trace,
            next: 0,
            base,
        }
    }

    /// Ops not issued yet.
    pub fn remaining(&self) -> usize {
        self.trace.ops.len() - self.next
    }
}

/// A worker's op source.
#[derive(Debug, Clone)]
pub enum OpSource {
    Generated(OpGen),
    /// Generated ops, one per `period_ns` (the first at once).
    Paced {
        gen: OpGen,
        period_ns: u64,
        started: bool,
    },
    /// Generated ops with fio's think time: after every `every` ops — or, with `iotime_ns`,
    /// once `iotime_ns + think_ns` have passed since the last think began, whichever is first
    /// (fio's `thinktime_iotime`) — the queue is drained and the next op waits `think_ns` after
    /// the last completion.
    Thinking {
        gen: OpGen,
        think_ns: u64,
        every: u32,
        count: u32,
        iotime_ns: u64,
        /// When the last think began (the first op's time before any).
        last_think: Option<u64>,
        /// The next op comes after a think (decided when the op before it was taken, as fio
        /// decides after each issue).
        stall: bool,
    },
    Replay(Replay),
    /// A list of ops made in memory (e.g. by [`crate::aging::Aging`]), issued in order as fast
    /// as the queue depth allows; ends with the list.
    List(OpList),
}

/// A cursor over a shared list of ops.
#[derive(Debug, Clone)]
pub struct OpList {
    ops: Arc<[Op]>,
    next: usize,
    /// Added to every offset (the region's start on the target).
    base: u64,
}

impl OpList {
    /// Issues `ops` from the first, every offset shifted by `base`.
    pub fn new(ops: Arc<[Op]>, base: u64) -> OpList {
        OpList { ops, next: 0, base }
    }
}

impl Iterator for OpSource {
    type Item = Next;

    /// The next op, or `None` when the source is exhausted (only a replay ends). Time does not
    /// pass for this call: a think time due after a span of time (`thinktime_iotime`) needs
    /// [`OpSource::next_at`].
    #[inline]
    fn next(&mut self) -> Option<Next> {
        self.next_at(0)
    }
}

impl OpSource {
    /// The next op, taken at `now` (ns on the clock of the loop issuing it), or `None` when the
    /// source is exhausted (only a replay ends).
    #[inline]
    pub fn next_at(&mut self, now: u64) -> Option<Next> {
        match self {
            OpSource::Generated(g) => {
                let op = g.next_op();
                (!g.ended()).then_some(Next {
                    op,
                    gap_ns: 0,
                    catch_up: false,
                    drain: false,
                })
            }
            OpSource::Paced {
                gen,
                period_ns,
                started,
            } => {
                let op = gen.next_op();
                if gen.ended() {
                    return None;
                }
                let gap_ns = if *started { *period_ns } else { 0 };
                *started = true;
                Some(Next {
                    op,
                    gap_ns,
                    catch_up: true,
                    drain: false,
                })
            }
            OpSource::Thinking {
                gen,
                think_ns,
                every,
                count,
                iotime_ns,
                last_think,
                stall,
            } => {
                // fio's handle_thinktime after this op's issue: a think after `every` ops, or
                // once the I/O time and the think since the last think began have passed.
                let think = *stall;
                *count += 1;
                let began = *last_think.get_or_insert(now);
                let by_time = *iotime_ns > 0
                    && now.saturating_sub(began) >= iotime_ns.saturating_add(*think_ns);
                *stall = *count >= *every || by_time;
                if *stall {
                    *count = 0;
                    *last_think = Some(now);
                }
                let op = gen.next_op();
                if gen.ended() {
                    return None;
                }
                Some(Next {
                    op,
                    gap_ns: if think { *think_ns } else { 0 },
                    catch_up: false,
                    drain: think,
                })
            }
            OpSource::Replay(r) => {
                let t = r.trace.ops.get(r.next)?;
                r.next += 1;
                Some(Next {
                    op: Op {
                        kind: t.kind,
                        offset: r.base + t.offset,
                        len: t.len as u64,
                    },
                    gap_ns: t.gap_ns,
                    catch_up: false,
                    drain: false,
                })
            }
            OpSource::List(l) => {
                let op = *l.ops.get(l.next)?;
                l.next += 1;
                Some(Next {
                    op: Op {
                        offset: l.base + op.offset,
                        ..op
                    },
                    gap_ns: 0,
                    catch_up: false,
                    drain: false,
                })
            }
        }
    }
}

impl OpSource {
    /// True for sources whose ops carry gaps (a rate, or a replay that was not told to skip
    /// them).
    pub fn is_timed(&self) -> bool {
        match self {
            OpSource::Generated(_) | OpSource::List(_) => false,
            OpSource::Paced { .. } | OpSource::Thinking { .. } => true,
            OpSource::Replay(r) => r.trace.ops.iter().any(|o| o.gap_ns > 0),
        }
    }
}

impl OpSource {
    /// Worker `worker`'s source for `spec` on the region `[start, start+span)`: a replay of
    /// `trace` (offsets from `start`) when one is given, else the generator.
    pub fn for_worker(
        spec: &crate::WorkloadSpec,
        trace: Option<&Arc<Trace>>,
        start: u64,
        span: u64,
        worker: u32,
    ) -> OpSource {
        match trace {
            Some(t) => OpSource::Replay(Replay::new(Arc::clone(t), start)),
            None if spec.pace_ns > 0 => OpSource::Paced {
                gen: OpGen::new(spec, start, span, worker),
                period_ns: spec.pace_ns,
                started: false,
            },
            None if spec.think_ns > 0 => OpSource::Thinking {
                gen: OpGen::new(spec, start, span, worker),
                think_ns: spec.think_ns,
                every: spec.think_every.max(1),
                count: 0,
                iotime_ns: spec.think_iotime_ns,
                last_think: None,
                stall: false,
            },
            None => OpSource::Generated(OpGen::new(spec, start, span, worker)),
        }
    }
}

impl From<OpGen> for OpSource {
    fn from(g: OpGen) -> Self {
        OpSource::Generated(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{ReplaySpec, Trace};
    use crate::spec::WorkloadSpec;
    use crate::OpKind;
    use std::path::Path;

    /// fio's handle_thinktime: with `thinktime_iotime` alone the think comes once the I/O
    /// time plus the think have passed since the last think began (the first op's time before
    /// any); with a count as well, whichever comes first.
    #[test]
    fn thinking_by_time_and_by_count() {
        const MS: u64 = 1_000_000;
        let spec = WorkloadSpec {
            think_ns: 100 * MS,
            think_every: u32::MAX,
            think_iotime_ns: 400 * MS,
            ..Default::default()
        };
        let mut s = OpSource::for_worker(&spec, None, 0, 1 << 20, 0);
        // ops every 10 ms from t = 0; which of them come after a think
        let thinks: Vec<u64> = (0..120u64)
            .filter_map(|i| s.next_at(i * 10 * MS).filter(|n| n.drain).map(|_| i * 10))
            .collect();
        // the op at 500 ms decides the think, the next one (510) waits for it; then every 500
        assert_eq!(thinks, vec![510, 1010]);
        let n = s.next_at(1200 * MS).unwrap();
        assert!(!n.drain && n.gap_ns == 0);
        // with a count of 3 as well: the count wins while it is sooner
        let mut s = OpSource::for_worker(
            &WorkloadSpec {
                think_every: 3,
                ..spec.clone()
            },
            None,
            0,
            1 << 20,
            0,
        );
        let drains: Vec<bool> = (0..7u64)
            .map(|i| s.next_at(i * MS).unwrap().drain)
            .collect();
        assert_eq!(drains, vec![false, false, false, true, false, false, true]);
        // the plain iterator has no clock: only the count thinks
        let mut s = OpSource::for_worker(&spec, None, 0, 1 << 20, 0);
        assert!((0..1000).all(|_| !s.next().unwrap().drain));
    }

    #[test]
    fn generated_never_ends_replay_does() {
        let mut g: OpSource = OpGen::new(&WorkloadSpec::default(), 0, 1 << 20, 0).into();
        assert!(!g.is_timed());
        for _ in 0..1000 {
            assert_eq!(g.next().unwrap().gap_ns, 0);
        }
        let t = Trace::parse(
            b"fio version 3 iolog\n0 f add\n10 f read 0 4096\n30 f write 4096 512\n",
            Path::new("t"),
            &ReplaySpec::new("t"),
        )
        .unwrap();
        let mut r = OpSource::Replay(Replay::new(Arc::new(t), 1 << 20));
        assert!(r.is_timed());
        let a = r.next().unwrap();
        assert_eq!(
            (a.op.kind, a.op.offset, a.gap_ns),
            (OpKind::Read, 1 << 20, 10_000)
        );
        let b = r.next().unwrap();
        assert_eq!(
            (b.op.kind, b.op.len, b.gap_ns),
            (OpKind::Write, 512, 20_000)
        );
        assert!(r.next().is_none());
        assert!(r.next().is_none());
        // A rate: the first op at once, then one per period, catching up.
        let spec = WorkloadSpec {
            pace_ns: 2_000_000,
            ..Default::default()
        };
        let mut p = OpSource::for_worker(&spec, None, 0, 1 << 20, 0);
        assert!(p.is_timed());
        let gaps: Vec<(u64, bool)> = (0..3)
            .map(|_| p.next().map(|n| (n.gap_ns, n.catch_up)).unwrap())
            .collect();
        assert_eq!(gaps, vec![(0, true), (2_000_000, true), (2_000_000, true)]);
    }
}
