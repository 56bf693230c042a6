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

/// A permutation of `0..n` walked one value at a time: a full-period LCG modulo the next power of
/// two, scrambled by a bijective mix, with values `>= n` skipped (cycle walking). Every value
/// comes exactly once per pass; each pass uses a new order. This is ssdlab's random map (fio's
/// default: every block once before any repeats).
#[derive(Debug, Clone)]
struct Permutation {
    n: u64,
    mask: u64,
    bits: u32,
    state: u64,
    inc: u64,
    mul: u64,
    /// Steps left in this pass of the LCG (it has period `mask + 1`).
    left: u64,
    /// Where each pass's order comes from.
    rng: Rng,
    /// A new pass began since the last look.
    renewed: bool,
}

impl Permutation {
    fn new(n: u64, rng: Rng) -> Self {
        debug_assert!(n > 0);
        let m = n.next_power_of_two();
        let mut p = Permutation {
            n,
            mask: m - 1,
            bits: m.trailing_zeros(),
            state: 0,
            inc: 1,
            mul: 1,
            left: 0,
            rng,
            renewed: false,
        };
        p.new_pass();
        p
    }

    fn new_pass(&mut self) {
        self.state = self.rng.next_u64() & self.mask;
        // Odd increment (modulo 1 when the mask is 0: a single value).
        self.inc = (self.rng.next_u64() | 1) & self.mask.max(1);
        self.mul = self.rng.next_u64() | 1;
        self.left = self.mask + 1;
    }

    /// A bijection of `0..=mask` (xorshift and odd multiplication modulo a power of two).
    #[inline]
    fn mix(&self, x: u64) -> u64 {
        let h = (self.bits / 2).max(1);
        let mut y = x ^ (x >> h);
        y = y.wrapping_mul(self.mul) & self.mask;
        y ^ (y >> h)
    }

    #[inline]
    fn next(&mut self) -> u64 {
        loop {
            if self.left == 0 {
                self.new_pass();
                self.renewed = true;
            }
            self.left -= 1;
            // a ≡ 1 (mod 4), c odd: full period modulo any power of two.
            self.state = self
                .state
                .wrapping_mul(0x5851_F42D_4C95_7F2D)
                .wrapping_add(self.inc)
                & self.mask;
            let v = self.mix(self.state);
            if v < self.n {
                return v;
            }
        }
    }
}

/// fio's random map for I/Os of varying sizes (its `axmap`): a bit per block of the smallest
/// size. A drawn block already used moves on to the next free one; an I/O marks the blocks it
/// covers and is cut short at the first block already used, as fio cuts it (so a job with a
/// `bssplit` and the random map issues some sizes the split does not name, as fio does). When
/// every block is used, a new pass begins.
#[derive(Debug, Clone)]
struct BlockMap {
    bits: Vec<u64>,
    n: u64,
    used: u64,
}

impl BlockMap {
    fn new(n: u64) -> Self {
        BlockMap {
            bits: vec![0; n.div_ceil(64) as usize],
            n,
            used: 0,
        }
    }

    #[inline]
    fn is_set(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    /// The first free block at or after `b` (wrapping), starting a new pass when none is left;
    /// `true` with it when a new pass began.
    fn free_from(&mut self, b: u64) -> (u64, bool) {
        let mut renewed = false;
        if self.used >= self.n {
            self.bits.iter_mut().for_each(|w| *w = 0);
            self.used = 0;
            renewed = true;
        }
        let mut i = b;
        loop {
            let w = self.bits[(i / 64) as usize];
            if w == u64::MAX {
                i = (i / 64 + 1) * 64;
            } else if !self.is_set(i) {
                return (i, renewed);
            } else {
                i += 1;
            }
            if i >= self.n {
                i = 0;
            }
        }
    }

    /// Marks up to `want` blocks from `b`, stopping at one already used; how many.
    fn mark(&mut self, b: u64, want: u64) -> u64 {
        let mut k = 0;
        while k < want && b + k < self.n && !self.is_set(b + k) {
            let i = b + k;
            self.bits[(i / 64) as usize] |= 1 << (i % 64);
            k += 1;
        }
        self.used += k;
        k
    }
}

/// Most blocks the random map of varying block sizes keeps (a bit each: 128 MiB).
pub const MAX_BLOCK_MAP: u64 = 1 << 30;

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
    /// Where each direction's last op ended (fio's `last_pos`: reads and writes of a mixed
    /// sequential job each go their own way through the region, as in fio).
    last: [u64; 2],
    /// Bytes added after each sequential op: skipped (fio's `rw=write:4k`), or, negative, gone
    /// back (`rw=read:-8k`).
    seq_add: i64,
    /// fio's strided zones: the zones, the current zone's start and the bytes done in it.
    zones: Option<(crate::Strided, u64, u64)>,
    /// A random decision only every `random_every` ops; `count` counts them.
    random_every: u32,
    count: u32,
    /// Random positions without repeats within a pass (the random map).
    map: Option<Permutation>,
    /// A new pass over the region began (the random map started again, or sequential I/O
    /// wrapped to the start) since [`take_wrapped`](Self::take_wrapped) last looked.
    wrapped: bool,
    /// Block sizes that vary (fio's bssplit, bsrange, a size per direction).
    sizes: Option<Box<crate::dist::BlockSizes>>,
    /// A skewed distribution of random offsets (fio's random_distribution).
    sampler: Option<Box<crate::dist::Sampler>>,
    /// The random map of varying block sizes, in blocks of the smallest size.
    blocks: Option<(BlockMap, u64)>,
    /// A job with several files: a generator per file, and fio's switching between them
    /// (this generator's own state is then unused).
    files: Option<Box<crate::files::FileSet>>,
    /// fio's trim modes: the ops made are trims, or trims each followed by `then_write`.
    trim: crate::spec::TrimMode,
    /// The write of the range the last trim trimmed (fio's trimwrite), issued next.
    then_write: Option<Op>,
    /// Passes ended so far (the offsets ran out: fio's file done), and after how many the
    /// generator has nothing more (`u64::MAX`: never).
    passes: u64,
    pass_limit: u64,
    /// [`WorkloadSpec::more_passes_below`] (0: none), the largest block, and the bytes of the
    /// ops made so far.
    more_below: u64,
    max_bs: u64,
    made: u64,
    /// Neither several files nor trims: [`next_op`](Self::next_op) is the read/write stream
    /// itself (one branch on the hot path).
    plain: bool,
    /// [`WorkloadSpec::repeat_passes`]: what the generator is built from, to build it again at
    /// each pass's start, and whether a pass ended in the op just made (which is then made
    /// again, the first of the new pass).
    restart: Option<Box<Restart>>,
    restart_due: bool,
}

/// What [`OpGen::new`] built a generator from.
#[derive(Debug, Clone)]
struct Restart {
    spec: WorkloadSpec,
    start: u64,
    span: u64,
    worker: u32,
}

impl OpGen {
    /// A generator over `[start, start+span)`. `spec` must have been validated and `span ≥ bs`.
    pub fn new(spec: &WorkloadSpec, start: u64, span: u64, worker: u32) -> Self {
        let mut g = Self::one(spec, start, span, worker);
        if let Some(files) = spec.files.as_ref().filter(|f| !f.regions.is_empty()) {
            // Each file its own generator over its region, with its own random stream.
            let mut one = spec.clone();
            one.files = None;
            // the job's passes are those of all its files together (and start them again)
            one.passes = None;
            one.repeat_passes = false;
            let gens = files
                .regions
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    one.seed = worker_seed(spec.seed ^ 0x6669_6c65, i as u32);
                    Self::one(&one, r.base + r.offset, r.span, worker)
                })
                .collect();
            let rng = Rng::new(worker_seed(spec.seed ^ 0x6e65_7874, worker));
            g.files = Some(Box::new(crate::files::FileSet::new(
                gens,
                files.service,
                rng,
            )));
            g.plain = false;
        }
        if spec.repeat_passes {
            g.restart = Some(Box::new(Restart {
                spec: spec.clone(),
                start,
                span,
                worker,
            }));
        }
        g
    }

    /// A generator over one region.
    fn one(spec: &WorkloadSpec, start: u64, span: u64, worker: u32) -> Self {
        assert!(span >= spec.min_bs() && spec.align > 0 && spec.bs > 0);
        // Positions of the smallest size (fio's `last_block`): every aligned offset where it
        // fits; the size of each I/O is then drawn among those that fit there.
        let min_bs = spec.min_bs();
        let positions = if min_bs > spec.align {
            (span - min_bs) / spec.align + 1
        } else {
            span / spec.align
        };
        // Varying sizes: fio's map of blocks (cut I/Os); one size: a permutation of positions.
        let varying = spec.block_sizes.is_some();
        let blocks =
            (varying && spec.random_map && spec.random_pct > 0 && spec.distribution.is_uniform())
                .then(|| {
                    (
                        BlockMap::new((span / min_bs).clamp(1, MAX_BLOCK_MAP)),
                        min_bs,
                    )
                });
        // The map has its own stream, so the op-kind draws stay those of a run without it.
        let map =
            (!varying && spec.random_map && spec.random_pct > 0 && spec.distribution.is_uniform())
                .then(|| {
                    Permutation::new(
                        positions,
                        Rng::new(worker_seed(spec.seed ^ 0x6d61_7000, worker)),
                    )
                });
        // fio's zipf, pareto and normal count blocks of the smallest size, the last one
        // partial (a rank there is moved back to the last position); its zones count positions.
        let ranges = if spec.align == min_bs {
            span.div_ceil(min_bs)
        } else {
            positions
        };
        let sampler = crate::dist::Sampler::new(
            &spec.distribution,
            ranges,
            positions,
            spec.align,
            &mut Rng::new(worker_seed(spec.seed ^ 0x6469_7374, worker)),
        )
        .map(Box::new);
        OpGen {
            rng: Rng::new(worker_seed(spec.seed, worker)),
            start,
            end: start + span,
            bs: spec.bs,
            align: spec.align,
            positions,
            // Trims are made as writes.
            read_pct: if spec.trims() {
                0
            } else {
                spec.read_pct as u32
            },
            random_pct: spec.random_pct as u32,
            last: [start; 2],
            seq_add: spec.seq_skip.min(i64::MAX as u64) as i64
                - spec.seq_back.min(i64::MAX as u64) as i64,
            zones: spec.strided.map(|z| (z, start, 0)),
            random_every: spec.random_every.max(1),
            count: 0,
            map,
            wrapped: false,
            sizes: spec.block_sizes.clone().map(Box::new),
            sampler,
            blocks,
            files: None,
            trim: spec.trim,
            then_write: None,
            passes: 0,
            pass_limit: spec.passes.unwrap_or(u64::MAX),
            more_below: spec.more_passes_below.unwrap_or(0),
            max_bs: spec.bs.max(1),
            made: 0,
            plain: spec.trim.is_none(),
            restart: None,
            restart_due: false,
        }
    }

    /// True once the generator has ended its last pass ([`WorkloadSpec::passes`]): the op
    /// [`next_op`](Self::next_op) last gave belongs to a pass that is not run, and there are
    /// no more.
    #[inline]
    pub fn ended(&self) -> bool {
        self.passes >= self.pass_limit
    }

    /// A pass over the region ended: fio's offsets ran out (`get_next_offset` fails), so its
    /// file is done; the next pass starts from the beginning.
    fn pass_end(&mut self) {
        self.wrapped = true;
        self.passes += 1;
        self.more_passes();
        self.restart_due = self.restart.is_some() && !self.ended();
    }

    /// A pass ended in the op just made and the next starts the random streams again (fio's
    /// reseed at a loop's start): the generator is built afresh — only the counts of passes
    /// and bytes carry over — and the op made again, the first of the new pass, from nothing
    /// the old pass drew.
    #[cold]
    #[inline(never)]
    fn restarted(&mut self, steer: &dyn Fn(OpKind) -> OpKind) -> Op {
        // (the new generator keeps what it is built from, for the pass after)
        let r = self.restart.as_deref().expect("a generator that restarts");
        let mut g = OpGen::new(&r.spec, r.start, r.span, r.worker);
        g.passes = self.passes;
        g.pass_limit = self.pass_limit;
        g.made = self.made;
        g.wrapped = true;
        if let Some(f) = &mut g.files {
            f.passes = self.passes;
        }
        *self = g;
        if self.plain {
            self.next_made_with(steer)
        } else if let Some(f) = &mut self.files {
            f.next_op_steered(steer)
        } else {
            self.next_special()
        }
    }

    /// fio's `keep_running` once a job's `loops` are run: with `io_size`, another pass starts
    /// while the job has done less than it by at least its largest block.
    #[inline]
    fn more_passes(&mut self) {
        if self.passes >= self.pass_limit
            && self.made < self.more_below
            && self.more_below - self.made >= self.max_bs
        {
            self.pass_limit = self.passes + 1;
        }
    }

    /// The sequential offsets of direction `d` ran out: a sequential job's pass ends; a random
    /// job's sequential stretch (`percentage_random`, `rw=randread:N`) starts the region again
    /// (fio takes a random block there, and its pass ends with the random map).
    fn seq_out(&mut self, d: usize) -> u64 {
        if self.random_pct == 0 {
            self.pass_end();
        } else {
            self.wrapped = true;
        }
        self.last[d] = self.start;
        self.start
    }

    /// True once after each new pass over the region began (fio drops the page cache there).
    #[inline]
    pub fn take_wrapped(&mut self) -> bool {
        if let Some(f) = &mut self.files {
            return f.take_wrapped();
        }
        std::mem::take(&mut self.wrapped)
    }

    /// The region this generator stays in.
    pub fn region(&self) -> (u64, u64) {
        (self.start, self.end)
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> Op {
        let mut op = if self.plain {
            self.next_made()
        } else {
            self.next_special()
        };
        if self.restart_due {
            op = self.restarted(&|k| k);
        }
        self.made += op.len;
        op
    }

    /// The next operation of a job of several files or of trims.
    #[cold]
    fn next_special(&mut self) -> Op {
        if let Some(f) = &mut self.files {
            let op = f.next_op();
            // a job's passes are those of its files together
            if f.passes != self.passes {
                self.files_pass_end();
            }
            return op;
        }
        if self.trim.is_none() {
            return self.next_made();
        }
        // fio's trim modes make write-direction ops (offsets and sizes as a write job's) and
        // trim them; trimwrite then writes the range it trimmed, at the same offset with the
        // same length (fio's `set_rw_ddir` alternates trim and write; randtrimwrite's write
        // takes the trim's offset and length).
        if let Some(w) = self.then_write.take() {
            return w;
        }
        let op = self.next_made();
        if self.trim == crate::spec::TrimMode::ThenWrite {
            self.then_write = Some(Op {
                kind: OpKind::Write,
                ..op
            });
        }
        Op {
            kind: OpKind::Trim,
            ..op
        }
    }

    /// The next operation of a mixed read/write job, its direction as drawn or as `steer` turns
    /// it (fio's `rate_ddir`: a direction ahead of its rate gives way to the other). Trims are
    /// not steered.
    pub fn next_op_steered(&mut self, steer: impl Fn(OpKind) -> OpKind) -> Op {
        let mut op = if self.plain {
            self.next_made_with(&steer)
        } else if let Some(f) = &mut self.files {
            let op = f.next_op_steered(&steer);
            if f.passes != self.passes {
                self.files_pass_end();
            }
            op
        } else {
            self.next_special()
        };
        if self.restart_due {
            op = self.restarted(&steer);
        }
        self.made += op.len;
        op
    }

    /// Every file's pass ended: the job's pass ends ([`pass_end`](Self::pass_end) for a job of
    /// several files).
    fn files_pass_end(&mut self) {
        if let Some(f) = &self.files {
            self.passes = f.passes;
        }
        self.more_passes();
        self.restart_due = self.restart.is_some() && !self.ended();
    }

    /// True when the job draws both reads and writes.
    pub fn mixes(&self) -> bool {
        self.trim.is_none() && self.read_pct > 0 && self.read_pct < 100
    }

    /// The next operation of the read/write stream.
    #[inline]
    fn next_made(&mut self) -> Op {
        self.next_made_with(|k| k)
    }

    /// The next operation of the read/write stream, its drawn direction passed through `steer`.
    #[inline]
    fn next_made_with(&mut self, steer: impl Fn(OpKind) -> OpKind) -> Op {
        let kind = steer(
            if self.read_pct >= 100 || (self.read_pct > 0 && self.rng.percent() < self.read_pct) {
                OpKind::Read
            } else {
                OpKind::Write
            },
        );
        let decide = if self.random_every > 1 {
            let d = self.count == 0;
            self.count = (self.count + 1) % self.random_every;
            d
        } else {
            true
        };
        let random = decide
            && (self.random_pct >= 100
                || (self.random_pct > 0 && self.rng.percent() < self.random_pct));
        let d = kind.index();
        if self.sizes.is_none() {
            let offset = if random {
                self.random_position(d)
            } else {
                self.seq_offset(d, self.bs)
            };
            self.last[d] = offset + self.bs;
            return Op {
                kind,
                offset,
                len: self.bs,
            };
        }
        if random {
            if let Some((m, unit)) = &mut self.blocks {
                // fio: a free block (the next one after a drawn block that is used), a size
                // drawn among those that fit before the end, cut at the next used block
                // (`mark_random_map`).
                let unit = *unit;
                let (b, renewed) = m.free_from(self.rng.below(m.n));
                if renewed {
                    self.pass_end();
                }
                let offset = self.start + b * unit;
                let len = self.pick(d, self.end - offset);
                let Some((m, _)) = &mut self.blocks else {
                    unreachable!()
                };
                let got = m.mark(b, len.div_ceil(unit));
                let len = len.min(got * unit);
                self.last[d] = offset + len;
                return Op { kind, offset, len };
            }
        }
        let offset = if random {
            self.random_position(d)
        } else {
            let min = self.choice(d).bounds().0;
            self.seq_offset(d, min)
        };
        let len = self.pick(d, self.end - offset);
        self.last[d] = offset + len;
        Op { kind, offset, len }
    }

    /// The size of an I/O of direction `d` with `room` bytes before the region's end.
    #[inline]
    fn pick(&mut self, d: usize, room: u64) -> u64 {
        let s = self.sizes.as_deref().expect("varying sizes");
        let c = if d == OpKind::Read.index() {
            &s.read
        } else {
            &s.write
        };
        c.pick(&mut self.rng, room)
    }

    /// The block sizes of direction `d` (varying sizes only).
    fn choice(&self, d: usize) -> &crate::dist::BsChoice {
        let s = self.sizes.as_deref().expect("varying sizes");
        if d == OpKind::Read.index() {
            &s.read
        } else {
            &s.write
        }
    }

    /// A random offset for direction `d`: the random map's next position, a position of the
    /// distribution (moved back to the last position where the smallest size fits), or a
    /// uniform one.
    #[inline]
    fn random_position(&mut self, d: usize) -> u64 {
        let pos = match (&mut self.map, &self.sampler) {
            (_, Some(s)) => s.next(&mut self.rng, d).min(self.positions - 1),
            (Some(p), None) => {
                let v = p.next();
                if std::mem::take(&mut p.renewed) {
                    self.pass_end();
                }
                v
            }
            (None, None) => self.rng.below(self.positions),
        };
        self.start + pos * self.align
    }

    /// The next sequential offset of direction `d`, as fio's `get_next_seq_offset` works it out
    /// (`f` the region's start, `s` its size, the file taken to end with the region): after
    /// each op the next one starts where it ended, plus the `:N` modifier; going back before the
    /// start wraps to the end, going past the end wraps to the start. Where fio's offsets run
    /// out instead — the last op ended at or past the end, or the next one would not fit —
    /// the pass ends (fio's file is done) and the next pass starts the region again.
    fn seq_offset(&mut self, d: usize, bs: u64) -> u64 {
        if self.zones.is_none() {
            return self.seq_offset_in(d, bs);
        }
        self.strided_offset(d, bs)
    }

    /// [`seq_offset`](Self::seq_offset) in fio's strided zones: before each op, a zone that
    /// has had its bytes is left for the next one (wrapping to the region's start past its
    /// end), and an op that would start past the zone's range starts at the zone's start
    /// again; a pass that ends starts again at the first zone. (Kept out of line: the plain
    /// sequential path stays as small as it was.)
    #[inline(never)]
    fn strided_offset(&mut self, d: usize, bs: u64) -> u64 {
        let Some((z, at, done)) = &mut self.zones else {
            unreachable!()
        };
        if *done >= z.size {
            *done = 0;
            *at += z.range + z.skip;
            if *at >= self.end {
                *at = self.start;
            }
            self.last[d] = *at;
        }
        if self.last[d] >= *at + z.range {
            self.last[d] = *at;
        }
        let passes = self.passes;
        let o = self.seq_offset_in(d, bs);
        let Some((_, at, done)) = &mut self.zones else {
            unreachable!()
        };
        if self.passes != passes {
            (*at, *done) = (self.start, 0);
        }
        *done += bs;
        o
    }

    fn seq_offset_in(&mut self, d: usize, bs: u64) -> u64 {
        let (f, end) = (self.start, self.end);
        if self.seq_add == 0 {
            let o = self.last[d];
            if o + bs > end {
                return self.seq_out(d);
            }
            return o;
        }
        // fio: `last_pos < real_file_size`, else no offset (the file is done)
        if self.last[d] >= end {
            return self.seq_out(d);
        }
        let s = end - f;
        let add = self.seq_add as u64;
        // fio's "rewind to the end" for a region that does not start at 0 (relative `s`).
        let back_to = if end > s { s } else { end };
        if self.last[d] == f && f != 0 && self.seq_add < 0 {
            self.last[d] = back_to;
        }
        let mut pos = self.last[d].wrapping_sub(f);
        if pos != 0 {
            pos = pos.wrapping_add(add);
            if pos >= end {
                self.wrapped = true;
                pos = if self.seq_add > 0 {
                    f
                } else {
                    back_to.wrapping_add(add)
                };
            }
        }
        if pos >= s || pos.saturating_add(bs) > s {
            return self.seq_out(d);
        }
        f + pos
    }

    /// The generator's random stream, for data patterns.
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's strided zones (`setup_strided_zone_mode`), as fio 3.33 issues them on its null
    /// engine: 192k per zone of 128k (back to the zone's start after 128k), 64k skipped; the
    /// zone at 960k runs past the 1 MiB region, so the pass ends there and the next starts at
    /// the first zone again.
    #[test]
    fn strided_zones_move_as_fio_moves_them() {
        let spec = WorkloadSpec {
            rw: RwMode::Write,
            read_pct: 0,
            random_pct: 0,
            bs: 64 << 10,
            align: 64 << 10,
            span: Some(1 << 20),
            strided: Some(crate::Strided {
                size: 192 << 10,
                range: 128 << 10,
                skip: 64 << 10,
            }),
            ..Default::default()
        };
        let mut g = OpGen::new(&spec, 0, 1 << 20, 0);
        let blocks: Vec<u64> = (0..20).map(|_| g.next_op().offset >> 16).collect();
        assert_eq!(
            blocks,
            [0, 1, 0, 3, 4, 3, 6, 7, 6, 9, 10, 9, 12, 13, 12, 15, 0, 1, 0, 3]
        );
    }

    /// fio's `get_next_seq_offset` runs out of offsets where the last op ended at the region's
    /// end (or the next would not fit): the pass ends there. With a limit of passes the
    /// generator ends (fio without io_size: 22 writes of 4k every 12k over 256k); without one
    /// it starts again; a random job's sequential stretch starts again without ending a pass.
    #[test]
    fn passes_end_where_the_offsets_run_out() {
        let spec = |passes| WorkloadSpec {
            rw: RwMode::Write,
            read_pct: 0,
            random_pct: 0,
            seq_skip: 8192,
            span: Some(256 << 10),
            passes,
            ..Default::default()
        };
        let mut g = OpGen::new(&spec(Some(2)), 0, 256 << 10, 0);
        let mut offsets = Vec::new();
        while !g.ended() {
            let op = g.next_op();
            if !g.ended() {
                offsets.push(op.offset);
            }
        }
        assert_eq!(offsets.len(), 44, "two passes of 22");
        assert_eq!(offsets[21], 21 * 12288);
        assert_eq!(offsets[22], 0, "the second pass starts at the start");
        // without a limit: on and on
        let mut g = OpGen::new(&spec(None), 0, 256 << 10, 0);
        assert!((0..1000).all(|_| {
            g.next_op();
            !g.ended()
        }));
        // a hole reaching past the end wraps to the start (fio's pos >= size) without ending
        // the pass: 4k every 8k over 256k laps the same offsets until a budget ends the job
        // (fio: 64 writes, its 256k of bytes)
        let mut s = spec(Some(1));
        s.seq_skip = 4096;
        let mut g = OpGen::new(&s, 0, 256 << 10, 0);
        let n = (0..100).take_while(|_| {
            g.next_op();
            !g.ended()
        });
        assert_eq!(n.count(), 100, "the offsets never run out");
    }

    /// fio's `randrepeat` across loops (`clear_io_state` reseeds at each loop's start): each
    /// pass that ends where the random map runs out draws again what the first drew — offsets,
    /// sizes and directions (fio 3.33, `rw=randwrite size=64k bs=4k loops=2`: the 16 offsets
    /// twice in the same order) — and without it each pass draws anew. A generator without a
    /// random map never ends a pass (fio's budget of all its loops ends it in one).
    #[test]
    fn passes_repeat_their_draws_with_randrepeat() {
        let spec = |repeat: bool, sizes: bool, map: bool| WorkloadSpec {
            rw: RwMode::Randrw,
            read_pct: 30,
            random_pct: 100,
            span: Some(64 << 10),
            passes: Some(3),
            repeat_passes: repeat,
            random_map: map,
            block_sizes: sizes.then_some(crate::dist::BlockSizes {
                read: crate::dist::BsChoice::Range(4096, 16384),
                write: crate::dist::BsChoice::Range(4096, 16384),
            }),
            ..Default::default()
        };
        let passes = |s: &WorkloadSpec| {
            let mut g = OpGen::new(s, 0, 64 << 10, 0);
            let mut ops = Vec::new();
            while ops.len() < 200 {
                let op = g.next_op();
                if g.ended() {
                    break;
                }
                ops.push((op.kind, op.offset, op.len));
            }
            ops
        };
        for sizes in [false, true] {
            let ops = passes(&spec(true, sizes, true));
            let n = ops.len() / 3;
            assert_eq!(ops.len(), 3 * n, "three passes alike ({sizes})");
            assert!(n >= 4, "{n} ops a pass ({sizes})");
            assert_eq!(ops[..n], ops[n..2 * n], "sizes {sizes}");
            assert_eq!(ops[..n], ops[2 * n..], "sizes {sizes}");
            let anew = passes(&spec(false, sizes, true));
            assert_ne!(anew[..n], anew[n..2 * n], "without randrepeat ({sizes})");
        }
        // no random map: no pass ends, nothing starts again
        let ops = passes(&spec(true, false, false));
        assert_eq!(ops.len(), 200);
        assert_ne!(ops[..16], ops[16..32]);
    }

    /// fio's `keep_running` with io_size: once its loops are run, the job starts another pass
    /// while it has done less than io_size by at least its largest block, and that pass runs
    /// to the region's end (the budget, not the generator, stops it short).
    #[test]
    fn passes_go_on_below_io_size() {
        let ops_until_ended = |below: u64| {
            let spec = WorkloadSpec {
                rw: RwMode::Read,
                read_pct: 100,
                random_pct: 0,
                bs: 4096,
                span: Some(256 << 10),
                passes: Some(1),
                more_passes_below: Some(below),
                ..Default::default()
            };
            let mut g = OpGen::new(&spec, 0, 256 << 10, 0);
            let mut n = 0;
            while n < 10_000 {
                g.next_op();
                if g.ended() {
                    break;
                }
                n += 1;
            }
            n
        };
        // 384k after one pass of 256k: a second pass, whole
        assert_eq!(ops_until_ended(384 << 10), 128);
        // 640k: two more passes
        assert_eq!(ops_until_ended(640 << 10), 192);
        // less than a block short after a pass: done
        assert_eq!(ops_until_ended((256 << 10) + 4095), 64);
        assert_eq!(ops_until_ended((256 << 10) + 4096), 128);
        // at or below one pass: the loops alone
        assert_eq!(ops_until_ended(100 << 10), 64);
    }
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

    #[test]
    fn random_map_visits_every_position_once_per_pass() {
        for n_blocks in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let mut s = spec(RwMode::Randread, 4096, 4096);
            s.random_map = true;
            let mut g = OpGen::new(&s, 0, n_blocks * 4096, 0);
            for pass in 0..3 {
                let mut seen: Vec<u64> = (0..n_blocks).map(|_| g.next_op().offset / 4096).collect();
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..n_blocks).collect::<Vec<_>>(),
                    "pass {pass} of {n_blocks}"
                );
            }
        }
        // Without the map, 1000 draws over 1000 blocks repeat some (birthday bound).
        let s = spec(RwMode::Randread, 4096, 4096);
        let mut g = OpGen::new(&s, 0, 1000 * 4096, 0);
        let mut v: Vec<u64> = (0..1000).map(|_| g.next_op().offset).collect();
        v.sort_unstable();
        v.dedup();
        assert!(v.len() < 1000);
    }

    #[test]
    fn random_every_n_runs_sequentially_between() {
        // fio's rw=randread:8: a new random offset every 8 ops, sequential in between.
        let mut s = spec(RwMode::Randread, 4096, 4096);
        s.random_every = 8;
        let mut g = OpGen::new(&s, 0, 1 << 30, 0);
        let ops: Vec<Op> = (0..64).map(|_| g.next_op()).collect();
        for (i, w) in ops.windows(2).enumerate() {
            let seq = w[1].offset == w[0].offset + 4096;
            if (i + 1) % 8 != 0 {
                assert!(seq, "op {} should follow op {}", i + 1, i);
            }
        }
        let jumps = ops
            .windows(2)
            .filter(|w| w[1].offset != w[0].offset + 4096)
            .count();
        assert!(jumps >= 6, "{jumps}");
    }

    #[test]
    fn sequential_with_holes() {
        // fio's rw=write:4k: skip 4k after every write.
        let mut s = spec(RwMode::Write, 4096, 4096);
        s.seq_skip = 4096;
        let mut g = OpGen::new(&s, 0, 64 * 1024, 0);
        let offs: Vec<u64> = (0..10).map(|_| g.next_op().offset).collect();
        assert_eq!(
            offs,
            vec![0, 8192, 16384, 24576, 32768, 40960, 49152, 57344, 0, 8192]
        );
    }

    #[test]
    fn passes_are_told() {
        for rw in [RwMode::Read, RwMode::Randread] {
            let mut s = spec(rw, 4096, 4096);
            s.random_map = true;
            let mut g = OpGen::new(&s, 0, 16 * 4096, 0);
            let wraps: Vec<usize> = (0..48)
                .filter(|_| {
                    g.next_op();
                    g.take_wrapped()
                })
                .collect();
            assert_eq!(wraps, vec![16, 32], "{rw:?}: a new pass every 16 ops");
        }
    }

    #[test]
    fn backwards_and_per_direction_like_fio() {
        // fio 3.33, --ioengine=null --size=64k --bs=4k --rw=read:-8k, write_iolog offsets.
        let mut s = spec(RwMode::Read, 4096, 4096);
        s.seq_back = 8192;
        let mut g = OpGen::new(&s, 0, 64 * 1024, 0);
        let offs: Vec<u64> = (0..16).map(|_| g.next_op().offset / 1024).collect();
        assert_eq!(
            offs,
            vec![0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0]
        );
        // --offset=16k: fio rewinds to its (relative) size first.
        let mut g = OpGen::new(&s, 16 * 1024, 64 * 1024, 0);
        let offs: Vec<u64> = (0..16).map(|_| g.next_op().offset / 1024).collect();
        assert_eq!(
            offs,
            vec![56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 72, 68, 64, 60, 56]
        );
        // --bs=8k --rw=write:-4k: forward by 4k.
        let mut s = spec(RwMode::Write, 8192, 8192);
        s.seq_back = 4096;
        let mut g = OpGen::new(&s, 0, 64 * 1024, 0);
        let offs: Vec<u64> = (0..8).map(|_| g.next_op().offset / 1024).collect();
        assert_eq!(offs, vec![0, 4, 8, 12, 16, 20, 24, 28]);
        // --rw=write:12k.
        let mut s = spec(RwMode::Write, 4096, 4096);
        s.seq_skip = 12288;
        let mut g = OpGen::new(&s, 0, 64 * 1024, 0);
        let offs: Vec<u64> = (0..6).map(|_| g.next_op().offset / 1024).collect();
        assert_eq!(offs, vec![0, 16, 32, 48, 0, 16]);
        // rw=rw: reads and writes each go their own way (fio's last_pos per direction).
        let s = spec(RwMode::Rw, 4096, 4096);
        let mut g = OpGen::new(&s, 0, 64 * 1024, 0);
        let mut next = [0u64; 2];
        for _ in 0..32 {
            let op = g.next_op();
            let d = op.kind.index();
            assert_eq!(op.offset, next[d] % (64 * 1024), "{op:?}");
            next[d] = op.offset + 4096;
        }
    }

    #[test]
    fn trim_modes_trim_then_write_the_same_range() {
        use crate::spec::TrimMode;
        // fio 3.33 --ioengine=null --size=32k --bs=4k --rw=trimwrite, write_iolog: trim 0,
        // write 0, trim 4k, write 4k, …
        let mut s = spec(RwMode::Write, 4096, 4096);
        s.trim = TrimMode::ThenWrite;
        let mut g = OpGen::new(&s, 0, 32 * 1024, 0);
        let ops: Vec<(OpKind, u64)> = (0..16)
            .map(|_| g.next_op())
            .map(|o| (o.kind, o.offset / 1024))
            .collect();
        let want: Vec<(OpKind, u64)> = (0..8)
            .flat_map(|i| [(OpKind::Trim, 4 * i), (OpKind::Write, 4 * i)])
            .collect();
        assert_eq!(ops, want);
        // rw=trim: the write job's offsets, trimmed.
        s.trim = TrimMode::Only;
        let mut g = OpGen::new(&s, 0, 32 * 1024, 0);
        let offs: Vec<u64> = (0..9)
            .map(|_| g.next_op())
            .inspect(|o| assert_eq!(o.kind, OpKind::Trim))
            .map(|o| o.offset / 1024)
            .collect();
        assert_eq!(offs, vec![0, 4, 8, 12, 16, 20, 24, 28, 0]);
        // randtrimwrite: each random trim (the random map: every block once) is written next.
        let mut s = spec(RwMode::Randwrite, 4096, 4096);
        s.random_map = true;
        s.trim = TrimMode::ThenWrite;
        let mut g = OpGen::new(&s, 0, 64 * 4096, 0);
        let mut trimmed = Vec::new();
        for _ in 0..64 {
            let (t, w) = (g.next_op(), g.next_op());
            assert_eq!((t.kind, w.kind), (OpKind::Trim, OpKind::Write));
            assert_eq!((t.offset, t.len), (w.offset, w.len));
            trimmed.push(t.offset / 4096);
        }
        trimmed.sort_unstable();
        assert_eq!(trimmed, (0..64).collect::<Vec<_>>());
        // A mixed spec's reads do not turn into trims: trims come from the write direction.
        let mut s = spec(RwMode::Randrw, 4096, 4096);
        s.trim = TrimMode::Only;
        let mut g = OpGen::new(&s, 0, 1 << 20, 0);
        assert!((0..100).all(|_| g.next_op().kind == OpKind::Trim));
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
            random_map in any::<bool>(),
            every in 1u32..5,
            skip_sectors in 0u64..9,
        ) {
            let align_sectors = align_sectors.min(bs_sectors);
            let bs = bs_sectors * 512;
            let mut s = spec(RwMode::Randrw, bs, align_sectors * 512);
            s.random_pct = random_pct;
            s.seed = seed;
            s.random_map = random_map;
            s.random_every = every;
            if skip_sectors % 2 == 0 {
                s.seq_skip = skip_sectors * 512;
            } else {
                s.seq_back = skip_sectors * 512;
            }
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

    fn varying(rw: RwMode, c: crate::dist::BsChoice, map: bool) -> WorkloadSpec {
        let (min, max) = c.bounds();
        let mut s = spec(rw, max, min);
        s.block_sizes = Some(crate::dist::BlockSizes {
            read: c.clone(),
            write: c,
        });
        s.random_map = map;
        s
    }

    #[test]
    fn the_random_map_of_varying_sizes_covers_each_block_once() {
        // fio's axmap: I/Os cut at used blocks, every block of the smallest size once a pass.
        let c = crate::dist::BsChoice::split(vec![(4096, Some(50)), (65536, Some(50))]).unwrap();
        for seed in [1, 2, 3] {
            let mut s = varying(RwMode::Randwrite, c.clone(), true);
            s.seed = seed;
            let span = 4 << 20;
            let mut g = OpGen::new(&s, 1 << 20, span, 0);
            let mut covered = vec![false; (span / 4096) as usize];
            let mut total = 0;
            while total < span {
                let op = g.next_op();
                assert!(op.offset >= 1 << 20 && op.offset + op.len <= (1 << 20) + span);
                assert!(op.len.is_multiple_of(4096) && op.len >= 4096 && op.len <= 65536);
                for b in (op.offset - (1 << 20)) / 4096..(op.offset - (1 << 20) + op.len) / 4096 {
                    assert!(!covered[b as usize], "block {b} twice in a pass");
                    covered[b as usize] = true;
                }
                total += op.len;
            }
            assert!(covered.iter().all(|&c| c));
            assert!(!g.take_wrapped());
            g.next_op();
            assert!(g.take_wrapped(), "a new pass");
        }
    }

    #[test]
    fn varying_sizes_without_the_map_keep_their_shares_and_the_region() {
        let c = crate::dist::BsChoice::split(vec![
            (4096, Some(60)),
            (16384, Some(30)),
            (131072, Some(10)),
        ])
        .unwrap();
        let s = varying(RwMode::Randread, c, false);
        let span = 1 << 30;
        let mut g = OpGen::new(&s, 0, span, 0);
        let mut n = std::collections::BTreeMap::new();
        for _ in 0..100_000 {
            let op = g.next_op();
            assert!(op.offset.is_multiple_of(4096) && op.offset + op.len <= span);
            *n.entry(op.len).or_insert(0u32) += 1;
        }
        for (b, p) in [(4096, 0.6), (16384, 0.3), (131072, 0.1)] {
            assert!((n[&b] as f64 / 100_000.0 - p).abs() < 0.01, "{n:?}");
        }
        // Sequential: each I/O where the last ended; near the end only sizes that fit.
        let r = crate::dist::BsChoice::Range(4096, 65536);
        let s = varying(RwMode::Write, r, false);
        let mut g = OpGen::new(&s, 0, 1 << 20, 0);
        let mut at = 0;
        for _ in 0..1000 {
            let op = g.next_op();
            assert!(op.offset + op.len <= 1 << 20);
            if op.offset != 0 {
                assert_eq!(op.offset, at);
            }
            at = op.offset + op.len;
        }
    }
}
