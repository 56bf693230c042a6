//! Where a worker's operations come from: generated ([`OpGen`], a closed loop that issues as
//! soon as a slot is free), generated at a rate (fio's `rate`/`rate_iops`: each direction on an
//! absolute schedule of the bytes it issued, catching up when behind), or replayed from a
//! recorded trace ([`Replay`], each op with the gap to the previous issue, ending with the
//! trace).
//!
//! An enum rather than a trait object, so the engine's hot loop stays monomorphic and a source
//! can be cloned (the simulator runs a copy one op ahead to prefetch).

use crate::gen::{Op, OpGen, OpKind};
use crate::replay::Trace;
use std::sync::Arc;

/// The next operation of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    pub op: Op,
    /// Issue no earlier than this long after the previous op of this source was issued
    /// (0 = as soon as a slot is free); a late op moves the schedule (a replay, as fio's
    /// `iolog_delay`).
    pub gap_ns: u64,
    /// Issue no earlier than this time on the clock of the loop issuing it (0 = no such time):
    /// a rate's schedule, which a source that fell behind catches up.
    pub at_ns: u64,
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
    /// Generated ops at fio's rates: [`Rated`].
    Paced(Rated),
    /// Generated ops with fio's think time ([`Think`]).
    Thinking {
        gen: OpGen,
        think: Think,
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

/// fio's think time (`handle_thinktime`): after every `every` ops — or, with `iotime_ns`, once
/// `iotime_ns + think_ns` have passed since the last think began, whichever is first (fio's
/// `thinktime_iotime`) — the queue is drained and the next op waits `think_ns` after the last
/// completion.
#[derive(Debug, Clone)]
pub struct Think {
    think_ns: u64,
    every: u32,
    count: u32,
    iotime_ns: u64,
    /// When the last think began (the first op's time before any).
    last_think: Option<u64>,
    /// The next op comes after a think (decided when the op before it was taken, as fio
    /// decides after each issue).
    stall: bool,
}

impl Think {
    /// The think time of `spec`, if it has one.
    pub fn of(spec: &crate::WorkloadSpec) -> Option<Think> {
        (spec.think_ns > 0).then(|| Think {
            think_ns: spec.think_ns,
            every: spec.think_every.max(1),
            count: 0,
            iotime_ns: spec.think_iotime_ns,
            last_think: None,
            stall: false,
        })
    }

    /// An op is taken at `now`: whether it comes after a think; decides whether the next one
    /// will (fio's handle_thinktime after this op's issue: a think after `every` ops, or once
    /// the I/O time and the think since the last think began have passed).
    fn take(&mut self, now: u64) -> bool {
        let after = self.stall;
        self.count += 1;
        let began = *self.last_think.get_or_insert(now);
        let by_time = self.iotime_ns > 0
            && now.saturating_sub(began) >= self.iotime_ns.saturating_add(self.think_ns);
        self.stall = self.count >= self.every || by_time;
        if self.stall {
            self.count = 0;
            self.last_think = Some(now);
        }
        after
    }
}

/// Generated ops at fio's rates (`rate`, `rate_iops`): a direction's op is due once the bytes
/// that direction issued before it have taken their time at its rate since the first op (fio's
/// `usec_for_io`, an absolute schedule, so a source that fell behind catches up). In a mixed
/// job a drawn direction that is ahead of its schedule gives way to the other if that one is
/// due; when both are ahead the one due first is issued, at its time (fio's `rate_ddir`). With
/// a think time the op after a think waits for the think and for its time; the schedule does
/// not move, so the ops after a think catch up, unless `ignore_think` (fio's
/// `rate_ignore_thinktime`) moves the thinking direction's schedule by the think, less one
/// block so that the first op after it goes at once.
#[derive(Debug, Clone)]
pub struct Rated {
    gen: OpGen,
    /// Bytes per second per direction (read, write, trim); 0 = not capped.
    bps: [u64; 3],
    /// Bytes issued per direction.
    issued: [u64; 3],
    /// When the first op was taken (the schedule's zero).
    start: Option<u64>,
    think: Option<Think>,
    ignore_think: bool,
    /// The direction and size of the last op (the one a think follows).
    last: Option<(usize, u64)>,
    /// fio's `rate_process=poisson`.
    poisson: Option<Box<Poisson>>,
}

/// fio's Poisson rate process (`usec_for_io` with `rate_process=poisson`): per direction, the
/// time its next I/O is due, each one `(10^6 / iops) µs × −ln u` after the one before (u
/// uniform in (0, 1], whole µs as fio truncates them).
#[derive(Debug, Clone)]
struct Poisson {
    iops: [u64; 3],
    next_ns: [u64; 3],
    rng: crate::rng::Rng,
}

impl Poisson {
    /// Direction `d`'s next gap, ns.
    fn gap_ns(&mut self, d: usize) -> u64 {
        let mean_us = (1_000_000 / self.iops[d].max(1)) as f64;
        // (0, 1]: fio's `__rand_0_1` never gives the 0 whose logarithm is infinite here
        let u = 1.0 - (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (mean_us * -u.ln()) as u64 * 1000
    }
}

impl Rated {
    /// Paces `gen`'s ops at `bps` bytes per second per direction, with `think` between them.
    pub fn new(gen: OpGen, bps: [u64; 3], think: Option<Think>, ignore_think: bool) -> Rated {
        Rated {
            gen,
            bps,
            issued: [0; 3],
            start: None,
            think,
            ignore_think,
            last: None,
            poisson: None,
        }
    }

    /// The same pacing as a Poisson process of `iops` I/Os per second per direction (fio's
    /// `rate_process=poisson`), its draws from `seed`.
    pub fn with_poisson(mut self, iops: Option<[u64; 3]>, seed: u64) -> Rated {
        self.poisson = iops.map(|iops| {
            Box::new(Poisson {
                iops,
                next_ns: [0; 3],
                rng: crate::rng::Rng::new(seed),
            })
        });
        self
    }

    /// When direction `d`'s next op is due, in ns after the schedule's zero (0 when it is not
    /// capped).
    fn due(&self, d: usize) -> u64 {
        match self.bps[d] {
            0 => 0,
            _ if self.poisson.is_some() => self.poisson.as_ref().map_or(0, |p| p.next_ns[d]),
            bps => {
                (self.issued[d] as u128 * 1_000_000_000 / bps as u128).min(u64::MAX as u128) as u64
            }
        }
    }

    fn next_at(&mut self, now: u64) -> Option<Next> {
        let start = *self.start.get_or_insert(now);
        let after = self.think.as_mut().is_some_and(|t| t.take(now));
        let think_ns = self.think.as_ref().map_or(0, |t| t.think_ns);
        if after && self.ignore_think {
            // fio: the bytes the thinking direction would have done meanwhile, less one
            // block when an op's time fits in the think
            if let Some((d, bs)) = self.last.filter(|&(d, _)| self.bps[d] > 0) {
                let missed = (self.bps[d] as u128 * think_ns as u128 / 1_000_000_000) as u64;
                let per_op_ns = (bs as u128 * 1_000_000_000 / self.bps[d] as u128) as u64;
                let over = if per_op_ns <= think_ns { bs } else { 0 };
                self.issued[d] = self.issued[d].saturating_add(missed).saturating_sub(over);
            }
        }
        // the direction is chosen when the op is issued: after the think, if one comes first
        let elapsed = now
            .saturating_sub(start)
            .saturating_add(if after { think_ns } else { 0 });
        let op = if self.gen.mixes() {
            let (r, w) = (self.due(0), self.due(1));
            self.gen.next_op_steered(|drawn| {
                let (mine, other) = match drawn {
                    OpKind::Read => (r, w),
                    _ => (w, r),
                };
                let flip = |k| match k {
                    OpKind::Read => OpKind::Write,
                    _ => OpKind::Read,
                };
                // behind (or on) its schedule: as drawn; else the other if that one is behind,
                // else the one due first
                if mine <= elapsed || (other > elapsed && mine <= other) {
                    drawn
                } else {
                    flip(drawn)
                }
            })
        } else {
            self.gen.next_op()
        };
        if self.gen.ended() {
            return None;
        }
        let d = op.kind.index();
        let due = self.due(d);
        self.issued[d] += op.len;
        if let Some(p) = self.poisson.as_mut().filter(|_| self.bps[d] > 0) {
            let gap = p.gap_ns(d);
            p.next_ns[d] = p.next_ns[d].saturating_add(gap);
        }
        self.last = Some((d, op.len));
        Some(Next {
            op,
            gap_ns: if after { think_ns } else { 0 },
            at_ns: if self.bps[d] > 0 {
                start.saturating_add(due)
            } else {
                0
            },
            drain: after,
        })
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
                    at_ns: 0,
                    drain: false,
                })
            }
            OpSource::Paced(r) => r.next_at(now),
            OpSource::Thinking { gen, think } => {
                let after = think.take(now);
                let op = gen.next_op();
                if gen.ended() {
                    return None;
                }
                Some(Next {
                    op,
                    gap_ns: if after { think.think_ns } else { 0 },
                    at_ns: 0,
                    drain: after,
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
                    at_ns: 0,
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
                    at_ns: 0,
                    drain: false,
                })
            }
        }
    }
}

impl OpSource {
    /// True once after a generated source (plain, rated or thinking) began a new pass over its
    /// region ([`OpGen::take_wrapped`]); never for a replay or a list.
    pub fn take_wrapped(&mut self) -> bool {
        match self {
            OpSource::Generated(gen)
            | OpSource::Paced(Rated { gen, .. })
            | OpSource::Thinking { gen, .. } => gen.take_wrapped(),
            OpSource::Replay(_) | OpSource::List(_) => false,
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
            None if spec.rate_bps.iter().any(|&b| b > 0) => OpSource::Paced(
                Rated::new(
                    OpGen::new(spec, start, span, worker),
                    spec.rate_bps,
                    Think::of(spec),
                    spec.rate_ignore_think,
                )
                .with_poisson(
                    spec.rate_poisson,
                    spec.seed ^ 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(worker as u64 + 1),
                ),
            ),
            None if spec.think_ns > 0 => OpSource::Thinking {
                gen: OpGen::new(spec, start, span, worker),
                think: Think::of(spec).expect("a think time"),
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
    }

    /// fio's `rate_process=poisson`: the first op at once, then gaps drawn from an exponential
    /// distribution of mean 1/iops (whole µs): over 20,000 ops at 1,000 IOPS the mean gap is
    /// 1 ms within 3 % and the gaps vary as much as they average (coefficient of variation 1),
    /// where a linear rate's never vary.
    #[test]
    fn poisson_rates_draw_exponential_gaps() {
        let spec = WorkloadSpec {
            rate_bps: [1000 * 4096, 0, 0],
            rate_poisson: Some([1000, 0, 0]),
            ..Default::default()
        };
        let mut p = OpSource::for_worker(&spec, None, 0, 1 << 30, 0);
        let at: Vec<u64> = (0..20_000).map(|_| p.next_at(0).unwrap().at_ns).collect();
        assert_eq!(at[0], 0);
        let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        assert!(gaps.iter().all(|g| g % 1000.0 == 0.0), "whole microseconds");
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean / 1e6 - 1.0).abs() < 0.03, "mean gap {mean} ns");
        assert!(
            (sd / mean - 1.0).abs() < 0.05,
            "coefficient of variation {}",
            sd / mean
        );
        // another worker draws other gaps
        let mut q = OpSource::for_worker(&spec, None, 0, 1 << 30, 1);
        let other: Vec<u64> = (0..100).map(|_| q.next_at(0).unwrap().at_ns).collect();
        assert_ne!(other, at[..100]);
    }

    /// fio's rates: each direction's op due once the bytes it issued before have taken their
    /// time, from the first op on (a late source catches up); a mixed job's direction ahead
    /// of its schedule gives way to the other.
    #[test]
    fn rates_schedule_each_direction() {
        const MS: u64 = 1_000_000;
        // 500 IOPS of 4 KiB reads, the first op taken at 10 ms: due at 10, 12, 14 ms whenever
        // they are taken
        let spec = WorkloadSpec {
            rate_bps: [500 * 4096, 0, 0],
            ..Default::default()
        };
        let mut p = OpSource::for_worker(&spec, None, 0, 1 << 20, 0);
        assert!(p.is_timed());
        let at: Vec<u64> = [10, 11, 30]
            .iter()
            .map(|&t| p.next_at(t * MS).unwrap().at_ns)
            .collect();
        assert_eq!(at, vec![10 * MS, 12 * MS, 14 * MS]);
        // a mixed job with its writes capped at 100 IOPS: while the writes are ahead every
        // drawn write is a read, uncapped
        let mixed = WorkloadSpec {
            rw: crate::RwMode::Randrw,
            read_pct: 50,
            rate_bps: [0, 100 * 4096, 0],
            ..Default::default()
        };
        let mut p = OpSource::for_worker(&mixed, None, 0, 1 << 30, 0);
        let kinds = |p: &mut OpSource, now: u64, n: usize| -> Vec<(OpKind, u64)> {
            (0..n)
                .map(|_| p.next_at(now).map(|n| (n.op.kind, n.at_ns)).unwrap())
                .collect()
        };
        let first = kinds(&mut p, 0, 200);
        let writes: Vec<u64> = first
            .iter()
            .filter(|k| k.0 == OpKind::Write)
            .map(|k| k.1)
            .collect();
        assert_eq!(writes.len(), 1, "one write before its schedule is ahead");
        assert!(first.iter().all(|k| k.0 == OpKind::Write || k.1 == 0));
        // ... and both at 10 ms: the next drawn write is due
        let later = kinds(&mut p, 10 * MS, 200);
        assert_eq!(
            later.iter().filter(|k| k.0 == OpKind::Write).count(),
            1,
            "{later:?}"
        );
        // both capped and both ahead: the one due first, at its time
        let both = WorkloadSpec {
            rate_bps: [100 * 4096, 50 * 4096, 0],
            ..mixed
        };
        let mut p = OpSource::for_worker(&both, None, 0, 1 << 30, 0);
        let got = kinds(&mut p, 0, 8);
        let at: Vec<u64> = got.iter().map(|k| k.1).collect();
        let reads = got.iter().filter(|k| k.0 == OpKind::Read).count();
        // reads every 10 ms, writes every 20 ms, merged in time order
        let mut want: Vec<u64> = (0..reads as u64).map(|i| i * 10 * MS).collect();
        want.extend((0..(8 - reads) as u64).map(|i| i * 20 * MS));
        want.sort();
        assert_eq!(at, want, "{got:?}");
        assert!(at.windows(2).all(|w| w[0] <= w[1]));
    }
}
