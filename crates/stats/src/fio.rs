//! fio's own bucket layouts, so ssdlab's counters land in the same buckets fio's would: the
//! latency histogram bins of `--output-format=json+` (`stat.h`: `FIO_IO_U_PLAT_*`), the
//! `iodepth_level` / `iodepth_submit` / `iodepth_complete` maps (`io_u.c`) and the
//! `latency_ns` / `latency_us` / `latency_ms` ranges.

/// Bits of a value kept exactly in each group of fio's latency histogram (`FIO_IO_U_PLAT_BITS`).
pub const PLAT_BITS: u32 = 6;
/// Bins per group (`FIO_IO_U_PLAT_VAL`).
pub const PLAT_VAL: usize = 1 << PLAT_BITS;
/// Groups (`FIO_IO_U_PLAT_GROUP_NR`).
pub const PLAT_GROUP_NR: usize = 29;
/// Bins in all (`FIO_IO_U_PLAT_NR`, 1856); the last one also holds everything above it.
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL;

/// fio's bin of a latency in ns (`plat_val_to_idx`): values below 128 have a bin each, every
/// power-of-two range above is cut into 64 bins; values past the last group share the last bin.
#[inline]
pub fn plat_val_to_idx(val: u64) -> usize {
    let msb = if val == 0 {
        0
    } else {
        63 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio prints for bin `idx` (`plat_idx_to_val`): the value itself below 128, else the
/// middle of the bin's range (rounded down, as fio's integer conversion does).
pub fn plat_idx_to_val(idx: usize) -> u64 {
    assert!(idx < PLAT_NR, "fio latency bin {idx} out of range");
    if idx < (PLAT_VAL << 1) {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL) as u64;
    // base + (k + 0.5) * 2^error_bits, truncated like fio's double → integer conversion
    base + (k << error_bits) + ((1u64 << error_bits) >> 1)
}

/// `iodepth_level` keys: a depth counts in the highest bucket not above it (fio's
/// `io_u_mark_depth`: 1, 2–3, 4–7, 8–15, 16–31, 32–63, ≥ 64).
pub const DEPTH_LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];

/// The `iodepth_level` bucket of `depth` I/Os in flight.
#[inline]
pub fn depth_bucket(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// `iodepth_submit` / `iodepth_complete` keys: how many I/Os one submission (or one reap) handled
/// (fio's `__io_u_mark_map`: 0, 1–4, 5–8, 9–16, 17–32, 33–64, > 64).
pub const BATCH_LEVELS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// The `iodepth_submit` / `iodepth_complete` bucket of a batch of `n` I/Os.
#[inline]
pub fn batch_bucket(n: u64) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Upper bounds (exclusive, ns) of fio's completion-latency ranges: `latency_ns` "2" … "1000",
/// `latency_us` "2" … "1000", `latency_ms` "2" … "2000"; the 32nd range is `latency_ms` ">=2000".
const LAT_LEVEL_BOUNDS: [u64; 31] = [
    2,
    4,
    10,
    20,
    50,
    100,
    250,
    500,
    750,
    1_000,
    2_000,
    4_000,
    10_000,
    20_000,
    50_000,
    100_000,
    250_000,
    500_000,
    750_000,
    1_000_000,
    2_000_000,
    4_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    750_000_000,
    1_000_000_000,
    2_000_000_000,
];

/// Number of latency ranges: 10 in ns, 10 in µs, 12 in ms.
pub const LAT_LEVELS: usize = 32;

/// The range of `2^msb` for every `msb`: a start for [`lat_level`], which then steps over at
/// most two bounds (no power-of-two range holds more than two of them).
const LEVEL_AT_POW2: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut msb = 0;
    while msb < 64 {
        let v = 1u64 << msb;
        let mut l = 0;
        while l < LAT_LEVEL_BOUNDS.len() && LAT_LEVEL_BOUNDS[l] <= v {
            l += 1;
        }
        t[msb] = l as u8;
        msb += 1;
    }
    t
};

/// [`LAT_LEVEL_BOUNDS`] followed by two bounds no value reaches, so [`lat_level`] can look two
/// steps past any start without a check.
const PADDED_BOUNDS: [u64; 33] = {
    let mut t = [u64::MAX; 33];
    let mut i = 0;
    while i < LAT_LEVEL_BOUNDS.len() {
        t[i] = LAT_LEVEL_BOUNDS[i];
        i += 1;
    }
    t
};

/// The latency range of a completion latency of `ns` (fio's `io_u_mark_latency`): range `i`
/// holds the values below bound `i` and at or above bound `i - 1`. A table lookup and two
/// comparisons without branches (it runs once per I/O); no power-of-two range holds more than
/// two bounds, and `u64::MAX` itself is the one value the padding cannot tell apart.
#[inline]
pub fn lat_level(ns: u64) -> usize {
    let msb = 63 - (ns | 1).leading_zeros() as usize;
    let mut l = LEVEL_AT_POW2[msb] as usize;
    l += (ns >= PADDED_BOUNDS[l]) as usize;
    l += (ns >= PADDED_BOUNDS[l]) as usize;
    l.min(LAT_LEVEL_BOUNDS.len())
}

/// The key of latency range `i` within its unit.
pub fn lat_level_key(i: usize) -> &'static str {
    const KEYS: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    if i < 20 {
        KEYS[i % 10]
    } else {
        KEYS[i - 20]
    }
}

/// fio's percentages of a distribution (`stat_calc_dist`, `stat_calc_lat`): a bucket that holds
/// anything shows at least `floor` percent.
pub fn percentages(counts: &[u64], total: u64, floor: f64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| {
            if total == 0 {
                0.0
            } else {
                let p = 100.0 * c as f64 / total as f64;
                if p < floor && c > 0 {
                    floor
                } else {
                    p
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's own functions, transcribed literally (with the double arithmetic of the original).
    fn fio_val_to_idx(val: u64) -> usize {
        let msb = if val == 0 {
            0
        } else {
            64 - val.leading_zeros() - 1
        };
        if msb <= 6 {
            return val as usize;
        }
        let error_bits = msb - 6;
        let base = (error_bits + 1) << 6;
        let offset = 63 & (val >> error_bits) as u32;
        let idx = base + offset;
        if (idx as usize) < PLAT_NR - 1 {
            idx as usize
        } else {
            PLAT_NR - 1
        }
    }

    fn fio_idx_to_val(idx: usize) -> u64 {
        if idx < 128 {
            return idx as u64;
        }
        let error_bits = (idx >> 6) as u32 - 1;
        let base = 1u64 << (error_bits + 6);
        let k = (idx % 64) as f64;
        base + ((k + 0.5) * (1u64 << error_bits) as f64) as u64
    }

    #[test]
    fn bins_match_fio() {
        for idx in 0..PLAT_NR {
            assert_eq!(plat_idx_to_val(idx), fio_idx_to_val(idx), "bin {idx}");
        }
        let mut v = 0u64;
        while v < 1 << 40 {
            assert_eq!(plat_val_to_idx(v), fio_val_to_idx(v), "value {v}");
            v = v + 1 + v / 97;
        }
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
        // the values fio printed for a real run's bins
        for printed in [620u64, 636, 1048, 45824, 128512, 9371648] {
            assert_eq!(plat_idx_to_val(plat_val_to_idx(printed)), printed);
        }
    }

    #[test]
    fn depth_and_batch_buckets() {
        let depth: Vec<usize> = [1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 1000]
            .iter()
            .map(|&d| depth_bucket(d))
            .collect();
        assert_eq!(depth, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
        let batch: Vec<usize> = [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65]
            .iter()
            .map(|&n| batch_bucket(n))
            .collect();
        assert_eq!(batch, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6]);
    }

    #[test]
    fn latency_ranges() {
        assert_eq!(lat_level(0), 0);
        assert_eq!(lat_level(1), 0);
        assert_eq!(lat_level(2), 1);
        assert_eq!(lat_level(999), 9);
        assert_eq!(lat_level(1_000), 10); // latency_us "2"
        assert_eq!(lat_level(1_999), 10);
        assert_eq!(lat_level(2_000), 11);
        assert_eq!(lat_level(999_999), 19);
        assert_eq!(lat_level(1_000_000), 20); // latency_ms "2"
        assert_eq!(lat_level(1_999_999_999), 30); // latency_ms "2000"
        assert_eq!(lat_level(2_000_000_000), 31); // latency_ms ">=2000"
        assert_eq!(lat_level(u64::MAX), 31);
        // no power-of-two range holds more than two bounds (what lat_level relies on)
        for msb in 0..64 {
            let (lo, hi) = (1u64 << msb, (1u64 << msb).saturating_mul(2));
            let n = LAT_LEVEL_BOUNDS
                .iter()
                .filter(|&&b| b > lo && b <= hi)
                .count();
            assert!(n <= 2, "2^{msb}: {n} bounds");
        }
        // the table walk agrees with a search over the bounds everywhere
        let mut v = 0u64;
        while v < 1 << 42 {
            for x in [v, v.saturating_sub(1), v + 1] {
                assert_eq!(
                    lat_level(x),
                    LAT_LEVEL_BOUNDS.partition_point(|&b| b <= x),
                    "{x}"
                );
            }
            v = v + 1 + v / 61;
        }
        for b in LAT_LEVEL_BOUNDS {
            assert_eq!(lat_level(b), LAT_LEVEL_BOUNDS.partition_point(|&x| x <= b));
            assert_eq!(
                lat_level(b - 1),
                LAT_LEVEL_BOUNDS.partition_point(|&x| x < b)
            );
        }
        assert_eq!(lat_level_key(0), "2");
        assert_eq!(lat_level_key(19), "1000");
        assert_eq!(lat_level_key(30), "2000");
        assert_eq!(lat_level_key(31), ">=2000");
    }

    #[test]
    fn percentage_floor() {
        assert_eq!(
            percentages(&[1, 9999, 0], 10000, 0.1),
            vec![0.1, 99.99, 0.0]
        );
        assert_eq!(percentages(&[0, 0], 0, 0.1), vec![0.0, 0.0]);
    }
}
