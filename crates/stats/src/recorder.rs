//! Hot-path recording: a few integer additions and three HDR histogram records per I/O.

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

/// Everything recorded for one op kind.
#[derive(Debug, Clone)]
pub struct KindRecorder {
    pub ios: u64,
    pub bytes: u64,
    pub short_ios: u64,
    pub errors: u64,
    pub slat: Histogram<u64>,
    pub clat: Histogram<u64>,
    pub lat: Histogram<u64>,
}

impl Default for KindRecorder {
    fn default() -> Self {
        KindRecorder {
            ios: 0,
            bytes: 0,
            short_ios: 0,
            errors: 0,
            slat: new_hist(),
            clat: new_hist(),
            lat: new_hist(),
        }
    }
}

#[inline]
fn rec(h: &mut Histogram<u64>, v: u64) {
    h.saturating_record(v.clamp(1, MAX_NS));
}

impl KindRecorder {
    fn merge(&mut self, o: &KindRecorder) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.short_ios += o.short_ios;
        self.errors += o.errors;
        self.slat.add(&o.slat).expect("same histogram bounds");
        self.clat.add(&o.clat).expect("same histogram bounds");
        self.lat.add(&o.lat).expect("same histogram bounds");
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
        rec(&mut k.slat, slat);
        rec(&mut k.clat, clat);
        rec(&mut k.lat, slat + clat);
        let idx = (t_rel / self.interval_ns) as usize;
        if idx >= self.series.len() {
            self.series.resize(idx + 1, Bucket::default());
        }
        let b = &mut self.series[idx];
        b.ios[kind.index()] += 1;
        b.bytes[kind.index()] += bytes;
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
        let total: u64 = self.kinds.iter().map(|k| k.lat.len()).sum();
        let count_le = |ns: u64| -> u64 {
            self.kinds
                .iter()
                .map(|k| {
                    k.lat
                        .iter_recorded()
                        .filter(|v| v.value_iterated_to() <= ns)
                        .map(|v| v.count_at_value())
                        .sum::<u64>()
                })
                .sum()
        };
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
            slat: lat_summary(&k.slat, false),
            clat: lat_summary(&k.clat, true),
            lat: lat_summary(&k.lat, true),
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
