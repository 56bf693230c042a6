//! A small closed-loop load generator on virtual time (used by tests, calibration and the
//! benchmark; the real engine lives in `ssdlab-engine`).

use crate::{HostCmd, OpKind, Simulator};

/// Where the offsets go: one after another, or at random.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Sequential,
    Random,
}

/// A fixed-block closed-loop workload against one drive.
#[derive(Debug, Clone)]
pub struct Workload {
    pub kind: OpKind,
    pub pattern: Access,
    /// Block size in bytes.
    pub bs: u64,
    /// Offset alignment in bytes (random pattern; sequential starts at `base + align_shift`).
    pub align: u64,
    /// Bytes added to every offset (e.g. 512 for misaligned 4 KiB I/O).
    pub shift: u64,
    /// First byte of the region.
    pub base: u64,
    /// Region size in bytes.
    pub span: u64,
    /// Outstanding commands.
    pub qd: usize,
    pub nand_fraction: f32,
    /// Virtual time excluded from the measurement at the start, ns.
    pub warmup_ns: u64,
    /// Measured virtual time after the warm-up, ns.
    pub duration_ns: u64,
    pub seed: u64,
}

impl Workload {
    pub fn new(kind: OpKind, pattern: Access, bs: u64, span: u64, qd: usize) -> Self {
        Workload {
            kind,
            pattern,
            bs,
            align: bs,
            shift: 0,
            base: 0,
            span,
            qd,
            nand_fraction: 1.0,
            warmup_ns: 0,
            duration_ns: 1_000_000_000,
            seed: 1,
        }
    }
}

/// Measured figures (virtual time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadResult {
    /// Commands completed inside the measurement window.
    pub ios: u64,
    pub bytes: u64,
    /// Length of the measurement window, ns.
    pub elapsed_ns: u64,
    pub iops: f64,
    pub mb_s: f64,
    pub mean_latency_ns: f64,
    /// Virtual time when the run (including drain) ended.
    pub end_ns: u64,
    /// All commands completed (warm-up included).
    pub total_ios: u64,
}

#[inline]
fn next_rand(s: &mut u64) -> u64 {
    // splitmix64
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Offset generator for a workload.
pub struct Offsets {
    pattern: Access,
    base: u64,
    bs: u64,
    align: u64,
    shift: u64,
    slots: u64,
    next: u64,
    rng: u64,
}

impl Offsets {
    pub fn new(w: &Workload) -> Self {
        let align = w.align.max(512);
        let usable = w.span.saturating_sub(w.bs + w.shift);
        Offsets {
            pattern: w.pattern,
            base: w.base,
            bs: w.bs,
            align,
            shift: w.shift,
            slots: usable / align + 1,
            next: 0,
            rng: w.seed,
        }
    }
    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        match self.pattern {
            Access::Random => {
                self.base + (next_rand(&mut self.rng) % self.slots) * self.align + self.shift
            }
            Access::Sequential => {
                let steps = (self.slots * self.align / self.bs).max(1);
                let o = self.base + (self.next % steps) * self.bs + self.shift;
                self.next += 1;
                o
            }
        }
    }
}

/// Run `w` against `drive` starting at virtual time `start_ns`, keeping `w.qd` commands
/// outstanding until `warmup + duration` has passed, then drain.
pub fn run(sim: &mut Simulator, drive: usize, w: &Workload, start_ns: u64) -> LoadResult {
    let mut gen = Offsets::new(w);
    let qd = w.qd.max(1);
    let mut submit_t = vec![0u64; qd];
    let measure_from = start_ns + w.warmup_ns;
    let stop = measure_from + w.duration_ns;
    let mut r = LoadResult::default();
    let mut lat_sum = 0u128;
    for (tag, st) in submit_t.iter_mut().enumerate() {
        let cmd = HostCmd {
            kind: w.kind,
            offset: gen.next_offset(),
            len: w.bs,
            nand_fraction: w.nand_fraction,
            queue: 0,
        };
        *st = start_ns;
        sim.submit(start_ns, tag as u64, drive, cmd);
    }
    let mut end = start_ns;
    // The next offset is drawn one request ahead so its mapping entries can be prefetched
    // while the current request is simulated.
    let mut next = gen.next_offset();
    while let Some((tag, t)) = sim.next_completion() {
        end = end.max(t);
        r.total_ios += 1;
        let st = submit_t[tag as usize];
        if t >= measure_from && t < stop {
            r.ios += 1;
            r.bytes += w.bs;
            lat_sum += (t - st) as u128;
        }
        if t < stop {
            let cmd = HostCmd {
                kind: w.kind,
                offset: next,
                len: w.bs,
                nand_fraction: w.nand_fraction,
                queue: 0,
            };
            submit_t[tag as usize] = t;
            next = gen.next_offset();
            sim.prefetch(
                drive,
                &HostCmd {
                    offset: next,
                    ..cmd
                },
            );
            sim.submit(t, tag, drive, cmd);
        }
    }
    r.elapsed_ns = w.duration_ns;
    let secs = w.duration_ns as f64 / 1e9;
    r.iops = r.ios as f64 / secs;
    r.mb_s = r.bytes as f64 / secs / 1e6;
    r.mean_latency_ns = if r.ios > 0 {
        lat_sum as f64 / r.ios as f64
    } else {
        0.0
    };
    r.end_ns = end;
    r
}
