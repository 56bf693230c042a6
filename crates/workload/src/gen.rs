//! Per-worker operation generators: which op, where, how long.
//!
//! Random offsets are uniform over the region at the alignment (`offset + k·align`, the whole block
//! inside the region); sequential offsets advance by the block size and wrap to the region start.
//! With `random_pct` between 0 and 100 each op is random with that probability and otherwise continues
//! sequentially after the previous op, like fio's `percentage_random`. Each worker has its own stream
//! derived from the seed, so the same seed gives the same sequence.

use crate::rng::Rng;
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Operation kinds, in the order results are reported (fio: read, write, trim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl OpKind {
    pub const ALL: [OpKind; 3] = [OpKind::Read, OpKind::Write, OpKind::Trim];

    pub fn as_str(&self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Trim => "trim",
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    /// Byte offset from the start of the target.
    pub offset: u64,
    pub len: u64,
}

/// Derives worker `w`'s seed from the run seed.
pub fn worker_seed(seed: u64, worker: u32) -> u64 {
    seed ^ (worker as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Generates the op stream of one worker.
#[derive(Debug, Clone)]
pub struct OpGen {
    rng: Rng,
    start: u64,
    end: u64,
    bs: u64,
    align: u64,
    /// Number of aligned random positions in the region.
    positions: u64,
    read_pct: u32,
    random_pct: u32,
    next_seq: u64,
}

impl OpGen {
    /// A generator over `[start, start+span)`. `spec` must have been validated and `span ≥ bs`.
    pub fn new(spec: &WorkloadSpec, start: u64, span: u64, worker: u32) -> Self {
        assert!(span >= spec.bs && spec.align > 0 && spec.bs > 0);
        let positions = (span - spec.bs) / spec.align + 1;
        OpGen {
            rng: Rng::new(worker_seed(spec.seed, worker)),
            start,
            end: start + span,
            bs: spec.bs,
            align: spec.align,
            positions,
            read_pct: spec.read_pct as u32,
            random_pct: spec.random_pct as u32,
            next_seq: start,
        }
    }

    /// The region this generator stays in.
    pub fn region(&self) -> (u64, u64) {
        (self.start, self.end)
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> Op {
        let kind =
            if self.read_pct >= 100 || (self.read_pct > 0 && self.rng.percent() < self.read_pct) {
                OpKind::Read
            } else {
                OpKind::Write
            };
        let random =
            self.random_pct >= 100 || (self.random_pct > 0 && self.rng.percent() < self.random_pct);
        let offset = if random {
            self.start + self.rng.below(self.positions) * self.align
        } else {
            let mut o = self.next_seq;
            if o + self.bs > self.end {
                o = self.start;
            }
            o
        };
        self.next_seq = offset + self.bs;
        Op {
            kind,
            offset,
            len: self.bs,
        }
    }

    /// The generator's random stream, for data patterns.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;
    use proptest::prelude::*;

    fn spec(rw: RwMode, bs: u64, align: u64) -> WorkloadSpec {
        WorkloadSpec {
            rw,
            read_pct: rw.fixed_read_pct().unwrap_or(50),
            random_pct: rw.default_random_pct(),
            bs,
            align,
            ..Default::default()
        }
    }

    #[test]
    fn sequential_wraps() {
        let s = spec(RwMode::Read, 4096, 4096);
        let mut g = OpGen::new(&s, 8192, 3 * 4096, 0);
        let offs: Vec<u64> = (0..5).map(|_| g.next_op().offset).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192, 12288]);
    }

    #[test]
    fn same_seed_same_sequence() {
        let s = spec(RwMode::Randrw, 4096, 512);
        let a: Vec<Op> = {
            let mut g = OpGen::new(&s, 0, 1 << 30, 0);
            (0..1000).map(|_| g.next_op()).collect()
        };
        let mut g = OpGen::new(&s, 0, 1 << 30, 0);
        let b: Vec<Op> = (0..1000).map(|_| g.next_op()).collect();
        assert_eq!(a, b);
        let mut g1 = OpGen::new(&s, 0, 1 << 30, 1);
        let c: Vec<Op> = (0..1000).map(|_| g1.next_op()).collect();
        assert_ne!(a, c, "workers have their own streams");
    }

    #[test]
    fn unaligned_random_straddles_4k() {
        let s = spec(RwMode::Randwrite, 4096, 512);
        let mut g = OpGen::new(&s, 0, 1 << 30, 0);
        let straddling = (0..1000)
            .map(|_| g.next_op())
            .filter(|op| op.offset % 4096 != 0)
            .count();
        // 7 of 8 positions are not 4 KiB aligned.
        assert!(straddling > 800, "{straddling}");
    }

    #[test]
    fn mix_ratio_holds() {
        let mut s = spec(RwMode::Randrw, 4096, 4096);
        s.read_pct = 70;
        let mut g = OpGen::new(&s, 0, 1 << 30, 0);
        let reads = (0..10_000)
            .filter(|_| g.next_op().kind == OpKind::Read)
            .count();
        assert!((6700..7300).contains(&reads), "{reads}");
    }

    #[test]
    fn partial_random_continues_sequentially() {
        let mut s = spec(RwMode::Read, 4096, 4096);
        s.random_pct = 50;
        let mut g = OpGen::new(&s, 0, 1 << 30, 0);
        let mut prev = g.next_op();
        let mut seq = 0;
        for _ in 0..10_000 {
            let op = g.next_op();
            if op.offset == prev.offset + prev.len {
                seq += 1;
            }
            prev = op;
        }
        assert!((4500..5500).contains(&seq), "{seq}");
    }

    proptest! {
        #[test]
        fn ops_stay_in_region(
            start_blocks in 0u64..1000,
            span_blocks in 8u64..10_000,
            bs_sectors in 1u64..64,
            align_sectors in 1u64..64,
            random_pct in 0u8..=100,
            seed in any::<u64>(),
        ) {
            let align_sectors = align_sectors.min(bs_sectors);
            let bs = bs_sectors * 512;
            let mut s = spec(RwMode::Randrw, bs, align_sectors * 512);
            s.random_pct = random_pct;
            s.seed = seed;
            let start = start_blocks * 512;
            let span = (span_blocks * 512).max(bs);
            let mut g = OpGen::new(&s, start, span, 3);
            for _ in 0..500 {
                let op = g.next_op();
                prop_assert!(op.offset >= start);
                prop_assert!(op.offset + op.len <= start + span);
                prop_assert_eq!(op.len, bs);
            }
        }
    }
}
