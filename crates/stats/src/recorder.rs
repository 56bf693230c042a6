//! Hot-path recording: a few integer additions and three latency histogram records per I/O.

use crate::result::{
    IoErrorRecord, LatLevels, LatSummary, OpSummary, SeriesPoint, VerifySummary, PERCENTILES,
};
use hdrhistogram::Histogram;
use ssdlab_workload::OpKind;

/// Highest trackable latency: one hour in nanoseconds (higher values are clamped).
const MAX_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept by the histograms (0.1 % resolution, like fio's bins).
const SIGFIG: u8 = 3;
/// Keep at most this many error records with their offsets (all errors are counted).
const MAX_ERROR_RECORDS: usize = 16;
/// fio's `iodepth_level` buckets: depth 1, 2, 3–4, 5–8, 9–16, 17–32, ≥ 64 (33–63 go to "32").
pub const DEPTH_LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];

fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, SIGFIG).expect("valid histogram bounds")
}

/// log2 of the sub-buckets per bucket that hdrhistogram uses for [`SIGFIG`] digits: the smallest
/// power of two ≥ 2·10^SIGFIG (2048 for 3 digits).
const SUB_BITS: u32 = 11;
/// Half the sub-buckets of a bucket: every bucket but the first uses only its upper half.
const HALF_BITS: u32 = SUB_BITS - 1;
const _: () = assert!(1u64 << (SUB_BITS - 1) < 2 * 10u64.pow(SIGFIG as u32));
const _: () = assert!(1u64 << SUB_BITS >= 2 * 10u64.pow(SIGFIG as u32));

/// A latency histogram with exactly the bins of an hdrhistogram `Histogram::<u64>` over
/// `1..=MAX_NS` with [`SIGFIG`] digits (lowest value 1, so unit magnitude 0), reduced to what the
/// hot path needs: recording is an index computation and one increment (hdrhistogram also keeps
/// min, max and total per record and checks the range). The bins continue past `MAX_NS` to the
/// whole `u64` range, so no value needs clamping when it is recorded; values out of range are
/// clamped bin by bin when the histogram itself is rebuilt from the counts for the results
/// ([`LatHist::to_histogram`]). The rebuilt histogram equals one the clamped values were recorded
/// into, so every statistic and percentile is the same as with hdrhistogram directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatHist {
    /// Count per bin, bins `0..=index(u64::MAX)` (bins past `index(MAX_NS)` are never touched
    /// in practice, so their zero pages are never faulted in).
    counts: Box<[u64]>,
}

impl Default for LatHist {
    fn default() -> Self {
        LatHist {
            counts: vec![0; Self::index(u64::MAX) + 1].into_boxed_slice(),
        }
    }
}

impl LatHist {
    /// hdrhistogram's bin of `v`: bucket `b` holds values `< 2^(SUB_BITS+b)` at a resolution of
    /// `2^b`, and stores only its upper half (the lower half is bucket `b-1`), so the bin is
    /// `(b+1)·2^HALF_BITS + (v >> b) - 2^HALF_BITS`.
    #[inline]
    fn index(v: u64) -> usize {
        let bucket = (64 - SUB_BITS) - (v | ((1 << SUB_BITS) - 1)).leading_zeros();
        ((bucket as usize) << HALF_BITS) + (v >> bucket) as usize
    }

    /// The lowest value of bin `i` (the inverse of [`LatHist::index`]).
    fn value_at(i: usize) -> u64 {
        let bucket = (i >> HALF_BITS) as u32;
        let sub = (i & ((1 << HALF_BITS) - 1)) as u64;
        if bucket == 0 {
            sub
        } else {
            (sub + (1 << HALF_BITS)) << (bucket - 1)
        }
    }

    /// Records one latency in ns (as if clamped into `1..=MAX_NS`, like `saturating_record`).
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
    }

    /// Number of recorded values.
    pub fn len(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }

    /// Adds another histogram's counts (exact).
    pub fn add(&mut self, o: &LatHist) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
    }

    /// The equivalent hdrhistogram histogram (equal to one the same values, clamped into
    /// `1..=MAX_NS`, were recorded into).
    pub fn to_histogram(&self) -> Histogram<u64> {
        // Bins are ordered by value: bin 0 holds only 0 (clamped to 1), the bins past MAX_NS's
        // hold only values above it (clamped to MAX_NS).
        let (lo, hi) = (Self::index(1), Self::index(MAX_NS));
        let mut counts = self.counts[..=hi].to_vec();
        counts[lo] += counts[0];
        counts[0] = 0;
        counts[hi] += self.counts[hi + 1..].iter().sum::<u64>();
        let mut h = new_hist();
        for (i, &c) in counts.iter().enumerate() {
            if c > 0 {
                h.record_n(Self::value_at(i), c)
                    .expect("bin values lie in the histogram's range");
            }
        }
        h
    }
}

/// Everything recorded for one op kind.
#[derive(Debug, Clone, Default)]
pub struct KindRecorder {
    pub ios: u64,
    pub bytes: u64,
    pub short_ios: u64,
    pub errors: u64,
    pub slat: LatHist,
    pub clat: LatHist,
    pub lat: LatHist,
}

impl KindRecorder {
    fn merge(&mut self, o: &KindRecorder) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.short_ios += o.short_ios;
        self.errors += o.errors;
        self.slat.add(&o.slat);
        self.clat.add(&o.clat);
        self.lat.add(&o.lat);
    }
}

/// Per-second counters: ios and bytes per op kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bucket {
    ios: [u64; 3],
    bytes: [u64; 3],
}

/// What one worker (or a merge of workers) recorded.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub kinds: [KindRecorder; 3],
    series: Vec<Bucket>,
    interval_ns: u64,
    /// The series interval the last completion fell in, `[cur_start, cur_end)` with index
    /// `cur`: completions arrive nearly in time order, so most need no division to find theirs.
    cur: usize,
    cur_start: u64,
    cur_end: u64,
    /// Submissions per fio iodepth bucket (depth in flight right after the submission).
    pub depth_counts: [u64; 7],
    pub error_records: Vec<IoErrorRecord>,
    /// Verification counters (sectors ok / never written / bad).
    pub verify: VerifySummary,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new(1_000_000_000)
    }
}

impl Recorder {
    /// A recorder whose series has one point per `interval_ns` (1 s like fio's log_avg_msec=1000).
    pub fn new(interval_ns: u64) -> Self {
        Recorder {
            kinds: Default::default(),
            series: Vec::with_capacity(64),
            interval_ns: interval_ns.max(1),
            cur: 0,
            cur_start: 0,
            cur_end: 0,
            depth_counts: [0; 7],
            error_records: Vec::new(),
            verify: VerifySummary::default(),
        }
    }

    /// Records one successful completion. `t_rel` is the completion time since measurement start.
    #[inline]
    pub fn record(&mut self, kind: OpKind, bytes: u64, slat: u64, clat: u64, t_rel: u64) {
        let k = &mut self.kinds[kind.index()];
        k.ios += 1;
        k.bytes += bytes;
        k.slat.record(slat);
        k.clat.record(clat);
        k.lat.record(slat + clat);
        if !(self.cur_start..self.cur_end).contains(&t_rel) {
            self.enter_interval(t_rel);
        }
        let b = &mut self.series[self.cur];
        b.ios[kind.index()] += 1;
        b.bytes[kind.index()] += bytes;
    }

    /// Makes the series interval holding `t_rel` the current one (growing the series to it).
    #[cold]
    fn enter_interval(&mut self, t_rel: u64) {
        let idx = (t_rel / self.interval_ns) as usize;
        if idx >= self.series.len() {
            self.series.resize(idx + 1, Bucket::default());
        }
        self.cur = idx;
        self.cur_start = idx as u64 * self.interval_ns;
        self.cur_end = self.cur_start.saturating_add(self.interval_ns);
    }

    /// Notes that a short transfer happened (already recorded with the bytes it moved).
    pub fn record_short(&mut self, kind: OpKind) {
        self.kinds[kind.index()].short_ios += 1;
    }

    /// Records a failed I/O with its offset and reason.
    pub fn record_error(&mut self, kind: OpKind, offset: u64, len: u64, error: String) {
        self.kinds[kind.index()].errors += 1;
        if self.error_records.len() < MAX_ERROR_RECORDS {
            self.error_records.push(IoErrorRecord {
                kind,
                offset,
                len,
                error,
            });
        }
    }

    /// Records that `n` I/Os were submitted leaving `depth` in flight.
    #[inline]
    pub fn record_depth(&mut self, depth: u32, n: u64) {
        let b = match depth {
            0 | 1 => 0,
            2 => 1,
            3..=4 => 2,
            5..=8 => 3,
            9..=16 => 4,
            17..=63 => 5,
            _ => 6,
        };
        self.depth_counts[b] += n;
    }

    /// Adds another recorder's data (exact: histograms add bucket by bucket).
    pub fn merge(&mut self, o: &Recorder) {
        for (a, b) in self.kinds.iter_mut().zip(o.kinds.iter()) {
            a.merge(b);
        }
        if o.series.len() > self.series.len() {
            self.series.resize(o.series.len(), Bucket::default());
        }
        for (a, b) in self.series.iter_mut().zip(o.series.iter()) {
            for i in 0..3 {
                a.ios[i] += b.ios[i];
                a.bytes[i] += b.bytes[i];
            }
        }
        for (a, b) in self.depth_counts.iter_mut().zip(o.depth_counts.iter()) {
            *a += b;
        }
        self.verify.sectors_ok += o.verify.sectors_ok;
        self.verify.sectors_unwritten += o.verify.sectors_unwritten;
        self.verify.sectors_bad += o.verify.sectors_bad;
        for e in &o.error_records {
            if self.error_records.len() < MAX_ERROR_RECORDS {
                self.error_records.push(e.clone());
            }
        }
    }

    /// fio's latency_ns / latency_us / latency_ms distributions: percent of I/Os (all kinds) whose
    /// total latency falls in each bucket ("2" = up to 2 units, ">=2000" = the rest).
    pub fn latency_levels(&self) -> LatLevels {
        const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
        // (highest value of the bin, count) of every non-empty bin of every kind
        let bins: Vec<(u64, u64)> = self
            .kinds
            .iter()
            .flat_map(|k| {
                let h = k.lat.to_histogram();
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let total: u64 = bins.iter().map(|b| b.1).sum();
        let count_le =
            |ns: u64| -> u64 { bins.iter().filter(|b| b.0 <= ns).map(|b| b.1).sum::<u64>() };
        let pct = |c: u64| {
            if total == 0 {
                0.0
            } else {
                100.0 * c as f64 / total as f64
            }
        };
        let mut levels = LatLevels::default();
        let mut prev = 0u64;
        for (unit, out) in [
            (1u64, &mut levels.ns),
            (1_000, &mut levels.us),
            (1_000_000, &mut levels.ms),
        ] {
            for s in STEPS {
                let c = count_le(s * unit);
                out.push((s.to_string(), pct(c - prev)));
                prev = c;
            }
        }
        let c = count_le(2000 * 1_000_000);
        levels.ms.push(("2000".into(), pct(c - prev)));
        levels.ms.push((">=2000".into(), pct(total - c)));
        levels
    }

    /// fio's `iodepth_level`: percent of submissions at each depth level ([`DEPTH_LEVELS`]).
    pub fn iodepth_levels(&self) -> Vec<(String, f64)> {
        let total: u64 = self.depth_counts.iter().sum();
        DEPTH_LEVELS
            .iter()
            .zip(self.depth_counts.iter())
            .map(|(k, &c)| {
                let pct = if total == 0 {
                    0.0
                } else {
                    100.0 * c as f64 / total as f64
                };
                (k.to_string(), pct)
            })
            .collect()
    }

    /// Total I/Os of all kinds.
    pub fn total_ios(&self) -> u64 {
        self.kinds.iter().map(|k| k.ios).sum()
    }

    /// Total errors of all kinds.
    pub fn total_errors(&self) -> u64 {
        self.kinds.iter().map(|k| k.errors).sum()
    }

    /// The per-interval series, trimmed to `runtime_ns` (a last partial interval is kept).
    pub fn series(&self, runtime_ns: u64) -> Vec<SeriesPoint> {
        let n = runtime_ns.div_ceil(self.interval_ns) as usize;
        (0..n.max(self.series.len().min(n)))
            .map(|i| {
                let b = self.series.get(i).copied().unwrap_or_default();
                let start = i as u64 * self.interval_ns;
                let len = (runtime_ns.saturating_sub(start))
                    .min(self.interval_ns)
                    .max(1);
                let per_s = 1e9 / len as f64;
                SeriesPoint {
                    t_ms: (start + len) / 1_000_000,
                    read_iops: b.ios[0] as f64 * per_s,
                    write_iops: b.ios[1] as f64 * per_s,
                    trim_iops: b.ios[2] as f64 * per_s,
                    read_bw_bytes: b.bytes[0] as f64 * per_s,
                    write_bw_bytes: b.bytes[1] as f64 * per_s,
                    trim_bw_bytes: b.bytes[2] as f64 * per_s,
                }
            })
            .collect()
    }

    /// Summarises one op kind over `runtime_ns` of measured time.
    pub fn summary(&self, kind: OpKind, runtime_ns: u64) -> OpSummary {
        let k = &self.kinds[kind.index()];
        let secs = runtime_ns as f64 / 1e9;
        let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        // Per-interval IOPS and bandwidth statistics over full intervals (fio's bw_*/iops_* fields).
        let full = (runtime_ns / self.interval_ns) as usize;
        let per_s = 1e9 / self.interval_ns as f64;
        let samples: Vec<(f64, f64)> = (0..full)
            .map(|i| {
                let b = self.series.get(i).copied().unwrap_or_default();
                (
                    b.ios[kind.index()] as f64 * per_s,
                    b.bytes[kind.index()] as f64 * per_s,
                )
            })
            .collect();
        let stats = |f: &dyn Fn(&(f64, f64)) -> f64| -> (f64, f64, f64, f64) {
            if samples.is_empty() || k.ios == 0 {
                return (0.0, 0.0, 0.0, 0.0);
            }
            let vals: Vec<f64> = samples.iter().map(f).collect();
            let n = vals.len() as f64;
            let mean = vals.iter().sum::<f64>() / n;
            let var = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            let min = vals.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            (min, max, mean, var.sqrt())
        };
        let (iops_min, iops_max, iops_mean, iops_stddev) = stats(&|s| s.0);
        let (bw_min, bw_max, bw_mean, bw_dev) = stats(&|s| s.1);
        OpSummary {
            ios: k.ios,
            bytes: k.bytes,
            runtime_ns,
            iops: rate(k.ios),
            bw_bytes: rate(k.bytes),
            short_ios: k.short_ios,
            errors: k.errors,
            slat: lat_summary(&k.slat.to_histogram(), false),
            clat: lat_summary(&k.clat.to_histogram(), true),
            lat: lat_summary(&k.lat.to_histogram(), true),
            iops_min,
            iops_max,
            iops_mean,
            iops_stddev,
            bw_min,
            bw_max,
            bw_mean,
            bw_dev,
            samples: if k.ios == 0 { 0 } else { samples.len() as u64 },
        }
    }
}

fn lat_summary(h: &Histogram<u64>, with_percentiles: bool) -> LatSummary {
    if h.is_empty() {
        return LatSummary::default();
    }
    LatSummary {
        n: h.len(),
        min: h.min(),
        max: h.max(),
        mean: h.mean(),
        stddev: h.stdev(),
        percentiles: if with_percentiles {
            PERCENTILES
                .iter()
                .map(|&p| (p, h.value_at_quantile(p / 100.0)))
                .collect()
        } else {
            Vec::new()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_summarise() {
        let mut r = Recorder::default();
        for i in 0..1000u64 {
            r.record(OpKind::Read, 4096, 100, 1000 + i, i * 2_000_000);
        }
        let s = r.summary(OpKind::Read, 2_000_000_000);
        assert_eq!(s.ios, 1000);
        assert_eq!(s.bytes, 4_096_000);
        assert!((s.iops - 500.0).abs() < 1e-9);
        assert_eq!(s.clat.min, 1000);
        assert!(s.clat.max >= 1999 && s.clat.max <= 2001);
        assert!((s.clat.mean - 1499.5).abs() < 2.0);
        assert_eq!(s.samples, 2);
        assert_eq!(s.iops_min, 500.0);
        let p50 = s.clat.percentiles.iter().find(|p| p.0 == 50.0).unwrap().1;
        assert!((1495..=1505).contains(&p50), "{p50}");
        assert_eq!(r.series(2_000_000_000).len(), 2);
    }

    #[test]
    fn merge_is_exact() {
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        let mut all = Recorder::default();
        for i in 0..5000u64 {
            let (target, kind) = if i % 3 == 0 {
                (&mut a, OpKind::Write)
            } else {
                (&mut b, OpKind::Read)
            };
            let lat = (i * 7919) % 100_000 + 1;
            target.record(kind, 4096, 10, lat, i * 1_000_000);
            all.record(kind, 4096, 10, lat, i * 1_000_000);
        }
        a.merge(&b);
        for kind in OpKind::ALL {
            let x = a.summary(kind, 5_000_000_000);
            let y = all.summary(kind, 5_000_000_000);
            assert_eq!(x, y);
        }
    }

    #[test]
    fn lat_hist_equals_hdrhistogram() {
        let mut direct = new_hist();
        let mut fast = LatHist::default();
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut values = vec![
            0, 1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097,
        ];
        values.extend([MAX_NS - 1, MAX_NS, MAX_NS + 1, u64::MAX]);
        for shift in 0..64 {
            values.push(1u64 << shift);
            values.push((1u64 << shift).wrapping_sub(1));
            values.push((1u64 << shift) + 1);
        }
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // log-uniform over 1 ns .. ~2 h
            values.push((x >> 22) >> (x % 42));
        }
        for &v in &values {
            direct.saturating_record(v.clamp(1, MAX_NS));
            fast.record(v);
        }
        let rebuilt = fast.to_histogram();
        assert_eq!(rebuilt, direct);
        assert_eq!(rebuilt.len(), direct.len());
        assert_eq!(rebuilt.min(), direct.min());
        assert_eq!(rebuilt.max(), direct.max());
        assert_eq!(rebuilt.mean().to_bits(), direct.mean().to_bits());
        assert_eq!(rebuilt.stdev().to_bits(), direct.stdev().to_bits());
        for p in PERCENTILES {
            let q = p / 100.0;
            assert_eq!(rebuilt.value_at_quantile(q), direct.value_at_quantile(q));
        }
        assert_eq!(fast.len(), values.len() as u64);
        for v in rebuilt.iter_recorded() {
            assert_eq!(
                LatHist::value_at(LatHist::index(v.value_iterated_to())),
                direct.lowest_equivalent(v.value_iterated_to())
            );
        }
    }

    #[test]
    fn depth_buckets() {
        let mut r = Recorder::default();
        r.record_depth(1, 1);
        r.record_depth(32, 10);
        r.record_depth(64, 2);
        assert_eq!(r.depth_counts, [1, 0, 0, 0, 0, 10, 2]);
    }

    #[test]
    fn errors_are_capped_but_counted() {
        let mut r = Recorder::default();
        for i in 0..100 {
            r.record_error(OpKind::Write, i * 4096, 4096, "EIO".into());
        }
        assert_eq!(r.total_errors(), 100);
        assert_eq!(r.error_records.len(), MAX_ERROR_RECORDS);
        assert_eq!(r.error_records[3].offset, 3 * 4096);
    }
}

#[cfg(test)]
mod level_tests {
    use super::*;

    #[test]
    fn latency_levels_sum_to_100() {
        let mut r = Recorder::default();
        r.record(OpKind::Read, 1, 0, 1_500, 0); // 1.5 us → us "2"
        r.record(OpKind::Read, 1, 0, 3_000_000, 0); // 3 ms → ms "4"
        r.record(OpKind::Write, 1, 0, 5_000_000_000, 0); // 5 s → ms ">=2000"
        r.record(OpKind::Write, 1, 0, 3, 0); // 3 ns → ns "4"
        let l = r.latency_levels();
        let sum: f64 = l.ns.iter().chain(&l.us).chain(&l.ms).map(|x| x.1).sum();
        assert!((sum - 100.0).abs() < 1e-9, "{sum}");
        let get = |v: &Vec<(String, f64)>, k: &str| v.iter().find(|x| x.0 == k).unwrap().1;
        assert_eq!(get(&l.us, "2"), 25.0);
        assert_eq!(get(&l.ms, "4"), 25.0);
        assert_eq!(get(&l.ms, ">=2000"), 25.0);
        assert_eq!(get(&l.ns, "4"), 25.0);
    }
}

/// A recorder's bytes could not be read back ([`Recorder::from_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read a recorder: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Magic and version of [`Recorder::to_bytes`].
const CODEC_MAGIC: &[u8; 4] = b"SLR1";

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .buf
                .get(self.at)
                .ok_or_else(|| DecodeError("truncated".into()))?;
            self.at += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError("a number is too long".into()))
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| DecodeError("truncated".into()))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn len(&mut self, max: usize, what: &str) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        if n > max as u64 {
            return Err(DecodeError(format!("{what}: {n} is more than {max}")));
        }
        Ok(n as usize)
    }
}

impl LatHist {
    /// Sparse: the number of non-empty bins, then (gap to the previous bin, count) per bin.
    fn encode(&self, out: &mut Vec<u8>) {
        let nonzero = self.counts.iter().filter(|&&c| c > 0).count();
        put_varint(out, nonzero as u64);
        let mut prev = 0usize;
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                put_varint(out, (i - prev) as u64);
                put_varint(out, c);
                prev = i;
            }
        }
    }

    /// Adds the counts of an encoded histogram (decoding and merging in one pass).
    fn add_encoded(&mut self, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        let n = r.len(self.counts.len(), "histogram bins")?;
        let mut at = 0usize;
        for _ in 0..n {
            at = at
                .checked_add(r.varint()? as usize)
                .filter(|&i| i < self.counts.len())
                .ok_or_else(|| DecodeError("histogram bin out of range".into()))?;
            self.counts[at] = self.counts[at]
                .checked_add(r.varint()?)
                .ok_or_else(|| DecodeError("histogram count overflows".into()))?;
        }
        Ok(())
    }
}

impl Recorder {
    /// A compact, self-contained encoding of everything recorded (histograms as their non-empty
    /// bins), for sending to another process: [`Recorder::merge_bytes`] and
    /// [`Recorder::from_bytes`] read it back exactly.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(CODEC_MAGIC);
        put_varint(&mut out, self.interval_ns);
        for k in &self.kinds {
            for v in [k.ios, k.bytes, k.short_ios, k.errors] {
                put_varint(&mut out, v);
            }
            k.slat.encode(&mut out);
            k.clat.encode(&mut out);
            k.lat.encode(&mut out);
        }
        put_varint(&mut out, self.series.len() as u64);
        for b in &self.series {
            for v in b.ios.iter().chain(b.bytes.iter()) {
                put_varint(&mut out, *v);
            }
        }
        for v in self.depth_counts {
            put_varint(&mut out, v);
        }
        for v in [
            self.verify.sectors_ok,
            self.verify.sectors_unwritten,
            self.verify.sectors_bad,
        ] {
            put_varint(&mut out, v);
        }
        put_varint(&mut out, self.error_records.len() as u64);
        for e in &self.error_records {
            put_varint(&mut out, e.kind.index() as u64);
            put_varint(&mut out, e.offset);
            put_varint(&mut out, e.len);
            put_varint(&mut out, e.error.len() as u64);
            out.extend_from_slice(e.error.as_bytes());
        }
        out
    }

    /// Reads a recorder written by [`Recorder::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Recorder, DecodeError> {
        let mut r = Recorder::new(1);
        r.merge_bytes(bytes)?;
        Ok(r)
    }

    /// Adds an encoded recorder (as [`Recorder::merge`] would add the decoded one, without
    /// building it). Both must use the same series interval, unless this one is empty.
    pub fn merge_bytes(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader { buf: bytes, at: 0 };
        if r.bytes(4)? != CODEC_MAGIC {
            return Err(DecodeError("not an ssdlab recorder (bad magic)".into()));
        }
        let interval = r.varint()?.max(1);
        let empty = self.total_ios() == 0 && self.series.is_empty();
        if interval != self.interval_ns {
            if !empty {
                return Err(DecodeError(format!(
                    "series interval {interval} ns differs from {} ns",
                    self.interval_ns
                )));
            }
            self.interval_ns = interval;
            self.cur_start = 0;
            self.cur_end = 0;
        }
        for k in self.kinds.iter_mut() {
            k.ios += r.varint()?;
            k.bytes += r.varint()?;
            k.short_ios += r.varint()?;
            k.errors += r.varint()?;
            k.slat.add_encoded(&mut r)?;
            k.clat.add_encoded(&mut r)?;
            k.lat.add_encoded(&mut r)?;
        }
        // A series longer than 100 years of seconds is not a recorder's.
        let n = r.len(1 << 32, "series length")?;
        if n > self.series.len() {
            self.series.resize(n, Bucket::default());
        }
        for b in self.series.iter_mut().take(n) {
            for v in b.ios.iter_mut().chain(b.bytes.iter_mut()) {
                *v += r.varint()?;
            }
        }
        for v in self.depth_counts.iter_mut() {
            *v += r.varint()?;
        }
        self.verify.sectors_ok += r.varint()?;
        self.verify.sectors_unwritten += r.varint()?;
        self.verify.sectors_bad += r.varint()?;
        let n = r.len(1 << 20, "error records")?;
        for _ in 0..n {
            let kind = match r.varint()? {
                0 => OpKind::Read,
                1 => OpKind::Write,
                2 => OpKind::Trim,
                k => return Err(DecodeError(format!("unknown op kind {k}"))),
            };
            let offset = r.varint()?;
            let len = r.varint()?;
            let tl = r.len(1 << 20, "error text")?;
            let error = String::from_utf8(r.bytes(tl)?.to_vec())
                .map_err(|_| DecodeError("error text is not UTF-8".into()))?;
            if self.error_records.len() < MAX_ERROR_RECORDS {
                self.error_records.push(IoErrorRecord {
                    kind,
                    offset,
                    len,
                    error,
                });
            }
        }
        if r.at != bytes.len() {
            return Err(DecodeError(format!(
                "{} bytes left over",
                bytes.len() - r.at
            )));
        }
        Ok(())
    }

    /// Prefixes every kept error record's text (`"rank 3 (node7): "`), so merged records still
    /// say where they happened.
    pub fn prefix_errors(&mut self, prefix: &str) {
        for e in &mut self.error_records {
            e.error = format!("{prefix}{}", e.error);
        }
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;

    fn sample(seed: u64, n: u64) -> Recorder {
        let mut r = Recorder::default();
        let mut x = seed | 1;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let kind = OpKind::ALL[(x % 3) as usize];
            r.record(kind, 4096, x % 500, (x >> 20) % 2_000_000, i * 3_000_000);
            r.record_depth((x % 40) as u32, 1);
        }
        r.record_short(OpKind::Write);
        r.record_error(OpKind::Write, 8192, 4096, "EIO: Input/output error".into());
        r.verify.sectors_ok = seed;
        r
    }

    fn same(a: &Recorder, b: &Recorder) {
        for kind in OpKind::ALL {
            assert_eq!(
                a.summary(kind, 7_000_000_000),
                b.summary(kind, 7_000_000_000)
            );
        }
        assert_eq!(a.series(7_000_000_000), b.series(7_000_000_000));
        assert_eq!(a.depth_counts, b.depth_counts);
        assert_eq!(a.error_records, b.error_records);
        assert_eq!(a.verify, b.verify);
        assert_eq!(a.latency_levels(), b.latency_levels());
    }

    #[test]
    fn round_trip_is_exact() {
        let a = sample(7, 3000);
        let bytes = a.to_bytes();
        same(&Recorder::from_bytes(&bytes).unwrap(), &a);
        // sparse: far smaller than the dense bins
        assert!(bytes.len() < 64 << 10, "{}", bytes.len());
        same(
            &Recorder::from_bytes(&Recorder::default().to_bytes()).unwrap(),
            &Recorder::default(),
        );
    }

    #[test]
    fn merge_bytes_equals_merge() {
        let (a, b) = (sample(3, 2000), sample(11, 5000));
        let mut via_merge = a.clone();
        via_merge.merge(&b);
        let mut via_bytes = a.clone();
        via_bytes.merge_bytes(&b.to_bytes()).unwrap();
        same(&via_bytes, &via_merge);
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let bytes = sample(5, 100).to_bytes();
        for cut in [0, 3, 4, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(Recorder::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(Recorder::from_bytes(&bad).is_err());
        let mut long = bytes;
        long.push(0);
        assert!(Recorder::from_bytes(&long).is_err());
        let mut other = Recorder::new(500_000_000);
        other.record(OpKind::Read, 1, 1, 1, 0);
        assert!(other.merge_bytes(&sample(1, 10).to_bytes()).is_err());
    }
}
