//! Mixes of block sizes and skewed offsets, as fio draws them:
//!
//! - [`BlockSizes`]: a size per direction that is fixed, a weighted split (fio's `bssplit`: a
//!   percentage per size, the sizes tried in the order of their percentages, what the
//!   percentages leave to the most frequent), or a range (fio's `bsrange`: `min + max·u`, cut to
//!   a multiple of `min` and to `max`, as in fio).
//! - [`Distribution`]: where random offsets land (fio's `random_distribution`): uniform; zipf
//!   (θ) and pareto (h) with fio's generators, the ranks spread over the region by fio's
//!   golden-ratio hash; normal (fio's sum of twelve uniforms plus a deviation of `dev` % of the
//!   region); zoned (a share of the I/Os to a share of the region, per direction) and zoned_abs
//!   (a share of the I/Os to a size in bytes).
//!
//! Offsets are counted in *positions* (`offset = start + position · align`) as for uniform
//! random I/O; a drawn position too close to the end for the I/O's size is moved back to the
//! last one that fits.

use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// The block size of one direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BsChoice {
    Fixed(u64),
    /// (size, percent) in fio's lookup order (ascending percent, stable).
    Split(Vec<(u64, u32)>),
    /// (min, max).
    Range(u64, u64),
}

impl BsChoice {
    /// The smallest and largest size it gives.
    pub fn bounds(&self) -> (u64, u64) {
        match self {
            BsChoice::Fixed(b) => (*b, *b),
            BsChoice::Split(v) => (
                v.iter().map(|x| x.0).min().unwrap_or(0),
                v.iter().map(|x| x.0).max().unwrap_or(0),
            ),
            BsChoice::Range(a, b) => (*a, *b),
        }
    }

    /// A split as fio keeps it (`bssplit_ddir`): entries without a percentage (or with 0) share
    /// what the others leave, then the entries are sorted by percentage, as fio sorts them for
    /// its lookup. Percentages that add to more than 100 with one entry left to fill in are
    /// refused (fio's unsigned `100 - sum` would give that entry an absurd share).
    pub fn split(entries: Vec<(u64, Option<u32>)>) -> Result<BsChoice, String> {
        if entries.is_empty() {
            return Err("an empty split".into());
        }
        let given: u32 = entries.iter().filter_map(|e| e.1).sum();
        let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
        if given > 100 && missing > 0 {
            return Err("the percentages add to more than 100".into());
        }
        let share = match missing {
            0 => 0,
            1 if entries.len() == 1 => 100,
            m => (100 - given) / m,
        };
        let mut v: Vec<(u64, u32)> = entries
            .into_iter()
            .map(|(b, p)| (b, p.unwrap_or(share)))
            .collect();
        v.sort_by_key(|e| e.1);
        Ok(BsChoice::Split(v))
    }

    /// Draws the size of an I/O that has `room` bytes before the region's end, as fio's
    /// `get_next_buflen` does: a split takes the first size (in the order of their
    /// percentages) whose running percentage reaches the draw and that fits, else the last one
    /// looked at (what the percentages leave goes to the most frequent size); a range takes
    /// `min + max·u`. Either is then cut down to a multiple of the smallest size and to the
    /// largest, and drawn again until it fits. The smallest size must fit (`room ≥ min`).
    #[inline]
    pub fn pick(&self, rng: &mut Rng, room: u64) -> u64 {
        let (min, max) = self.bounds();
        if min == max || room <= min {
            return min;
        }
        // fio draws until a size fits; a split whose fitting sizes all have 0 % would draw
        // forever in fio, so ssdlab stops after many draws with the smallest.
        for _ in 0..10_000 {
            let u = unit(rng);
            let mut b = match self {
                BsChoice::Fixed(b) => *b,
                BsChoice::Split(v) => {
                    let x = u * 100.0;
                    let mut cum = 0u32;
                    let mut b = 0;
                    for &(s, p) in v {
                        if p == 0 {
                            continue;
                        }
                        b = s;
                        cum += p;
                        if x <= cum as f64 && s <= room {
                            break;
                        }
                    }
                    b
                }
                BsChoice::Range(lo, hi) => lo + (*hi as f64 * u) as u64,
            };
            if min.is_power_of_two() {
                b &= !(min - 1);
            } else {
                b -= b % min;
            }
            b = b.min(max);
            if b <= room {
                return b;
            }
        }
        min
    }

    /// Every size it can give: a split's sizes cut to multiples of its smallest, a range's
    /// multiples of its smallest.
    pub fn sizes(&self) -> Vec<u64> {
        let (min, max) = self.bounds();
        let mut v: Vec<u64> = match self {
            BsChoice::Fixed(b) => vec![*b],
            BsChoice::Split(l) => l
                .iter()
                .filter(|e| e.1 > 0)
                .map(|e| e.0 - e.0 % min.max(1))
                .collect(),
            // fio cuts `min + max·u` to a multiple of min, then to max (which need not be one).
            BsChoice::Range(..) => (1..=max / min.max(1))
                .map(|k| k * min)
                .chain([max])
                .collect(),
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// A uniform draw in `[0, 1)` (53 bits).
#[inline]
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Block sizes of reads and writes (trims follow writes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizes {
    pub read: BsChoice,
    pub write: BsChoice,
}

impl BlockSizes {
    /// The smallest and largest size of either direction.
    pub fn bounds(&self) -> (u64, u64) {
        let (a, b) = self.read.bounds();
        let (c, d) = self.write.bounds();
        (a.min(c), b.max(d))
    }
}

/// A zone of fio's `zoned`/`zoned_abs` distributions: a share of the I/Os to a part of the
/// region (`size` in percent of the region, or in bytes for `zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub access_pct: u32,
    pub size: u64,
}

/// Where random offsets land (fio's `random_distribution`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    #[default]
    Uniform,
    Zipf {
        theta: f64,
        center: Option<f64>,
    },
    Pareto {
        h: f64,
        center: Option<f64>,
    },
    /// fio's `normal`: `dev` is the deviation in percent of the region.
    Normal {
        dev: f64,
        center: Option<f64>,
    },
    /// Zones of reads and of writes, sizes in percent of the region.
    Zoned {
        read: Vec<Zone>,
        write: Vec<Zone>,
    },
    /// Zones of reads and of writes, sizes in bytes from the region's start.
    ZonedAbs {
        read: Vec<Zone>,
        write: Vec<Zone>,
    },
}

impl Distribution {
    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Uniform)
    }

    /// fio's name of it (`zipf:1.2`, `zoned:…`).
    pub fn describe(&self) -> String {
        let zones = |z: &[Zone], abs: bool| {
            z.iter()
                .map(|z| {
                    if abs {
                        format!("{}/{}", z.access_pct, crate::format_size(z.size))
                    } else {
                        format!("{}/{}", z.access_pct, z.size)
                    }
                })
                .collect::<Vec<_>>()
                .join(":")
        };
        match self {
            Distribution::Uniform => "random".into(),
            Distribution::Zipf { theta, .. } => format!("zipf:{theta}"),
            Distribution::Pareto { h, .. } => format!("pareto:{h}"),
            Distribution::Normal { dev, .. } => format!("normal:{dev}"),
            Distribution::Zoned { read, write } => {
                format!("zoned:{},{}", zones(read, false), zones(write, false))
            }
            Distribution::ZonedAbs { read, write } => {
                format!("zoned_abs:{},{}", zones(read, true), zones(write, true))
            }
        }
    }
}

/// fio's `__hash_u64`: spreads ranks over the region (the golden ratio, 64 bits).
#[inline]
fn hash(v: u64) -> u64 {
    v.wrapping_mul(0x61C8_8646_80B5_83EB)
}

/// A sampler of positions in `0..n` for one [`Distribution`].
#[derive(Debug, Clone)]
pub(crate) enum Sampler {
    Zipf {
        n: u64,
        theta: f64,
        zetan: f64,
        zeta2: f64,
        off: u64,
    },
    Pareto {
        n: u64,
        pow: f64,
        off: u64,
    },
    Normal {
        n: u64,
        stddev: u64,
        off: u64,
    },
    /// Per direction (read, write): for each of fio's 100 percent draws, the zone's first
    /// position and its number of positions (none: uniform over the `n` positions, as fio does
    /// for a direction without zones).
    Zoned(u64, [Vec<(u64, u64)>; 2]),
}

/// Most terms of zipf's normalising sum, as fio caps them.
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// fio's `__rand(…) / FRAND32_MAX`: a draw in `[0, 1]` from 32 bits.
fn uniform01(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 32) as f64 / u32::MAX as f64
}

impl Sampler {
    /// The sampler of `d`: zipf, pareto and normal over `n` ranges (fio's `nranges`, the
    /// region in blocks of the smallest block size, rounded up), zones over `positions` (fio's
    /// `last_block`) of `align` bytes. `rng` draws fio's random offset of the ranks (`rand_off`)
    /// where no center is given.
    pub(crate) fn new(
        d: &Distribution,
        n: u64,
        positions: u64,
        align: u64,
        rng: &mut Rng,
    ) -> Option<Sampler> {
        let n = n.max(1);
        let positions = positions.max(1);
        let off = |center: &Option<f64>, rng: &mut Rng| match center {
            Some(c) => (n as f64 * c) as u64,
            None => rng.next_u64() >> 32,
        };
        // fio's zone table (`__td_zone_gen_index`): entry j of 100 is the zone whose running
        // access percentage passes j, as (start, end) in percent or bytes.
        let table = |zones: &[Zone]| -> Vec<(u64, u64)> {
            let mut t = Vec::with_capacity(100);
            let mut prev = 0u64;
            for z in zones {
                for _ in 0..z.access_pct {
                    t.push((prev, prev + z.size));
                }
                prev += z.size;
            }
            t.truncate(100);
            t
        };
        Some(match d {
            Distribution::Uniform => return None,
            Distribution::Zipf { theta, center } => {
                let zetan: f64 = (0..n.min(ZIPF_MAX_GEN))
                    .map(|i| (1.0 / (i + 1) as f64).powf(*theta))
                    .sum();
                Sampler::Zipf {
                    n,
                    theta: *theta,
                    zetan,
                    zeta2: 1.0 + 0.5f64.powf(*theta),
                    off: off(center, rng),
                }
            }
            Distribution::Pareto { h, center } => Sampler::Pareto {
                n,
                pow: h.ln() / (1.0 - h).ln(),
                off: off(center, rng),
            },
            Distribution::Normal { dev, center } => Sampler::Normal {
                n,
                stddev: if *dev == 0.0 {
                    0
                } else {
                    ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2)
                },
                // fio: nranges·(center − 0.5), converted to unsigned (below 0.5 it wraps).
                off: match center {
                    Some(c) => {
                        let o = n as f64 * (c - 0.5);
                        if o < 0.0 {
                            (o as i64) as u64
                        } else {
                            o as u64
                        }
                    }
                    None => 0,
                },
            },
            Distribution::Zoned { read, write } => {
                // Percent of the positions: from stotal·lastb/100, lastb·(send−stotal)/100 of them.
                let t = |z: &[Zone]| -> Vec<(u64, u64)> {
                    table(z)
                        .into_iter()
                        .map(|(a, b)| (a * positions / 100, positions * (b - a) / 100))
                        .collect()
                };
                Sampler::Zoned(positions, [t(read), t(write)])
            }
            Distribution::ZonedAbs { read, write } => {
                // Bytes: from size_prev/ba to size/ba, at most the region (fio stops the job
                // where a zone passes the end; ssdlab refuses that before running,
                // [`WorkloadSpec::region_for`](crate::WorkloadSpec::region_for)).
                let t = |z: &[Zone]| -> Vec<(u64, u64)> {
                    table(z)
                        .into_iter()
                        .map(|(a, b)| {
                            let (s, e) = ((a / align).min(positions), (b / align).min(positions));
                            (s, e - s)
                        })
                        .collect()
                };
                Sampler::Zoned(positions, [t(read), t(write)])
            }
        })
    }

    /// The next position (direction `d`: 0 read, 1 write).
    #[inline]
    pub(crate) fn next(&self, rng: &mut Rng, d: usize) -> u64 {
        match self {
            Sampler::Zipf {
                n,
                theta,
                zetan,
                zeta2,
                off,
            } => {
                // fio's zipf_next (Gray et al.'s method).
                let nf = *n as f64;
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = uniform01(rng);
                let z = u * zetan;
                let v = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (nf * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                (hash(v - 1).wrapping_add(*off)) % n
            }
            Sampler::Pareto { n, pow, off } => {
                let u = uniform01(rng);
                let v = ((n - 1) as f64 * u.powf(*pow)) as u64;
                (hash(v).wrapping_add(*off)) % n
            }
            Sampler::Normal { n, stddev, off } => {
                // fio's gauss_next: the mean of twelve draws in 0..=n (rounded up), plus a
                // deviation in ±stddev/2 halved until the sum stays below n (fio adds the
                // deviation as an unsigned number, so a sum that would go below 0 halves too).
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum += (rng.next_u64() >> 32) % (n + 1);
                }
                sum = sum.div_ceil(12);
                if *stddev > 0 {
                    let r = (rng.next_u64() >> 32) as f64 / (u32::MAX as f64 + 1.0);
                    let mut dev = (*stddev as f64 * r) as i64 - (*stddev / 2) as i64;
                    while dev != 0 && sum.wrapping_add(dev as u64) >= *n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as u64);
                }
                (hash(sum).wrapping_add(*off)) % n
            }
            Sampler::Zoned(n, t) => {
                let t = &t[d.min(1)];
                if t.is_empty() {
                    return (*n as f64 * unit(rng)) as u64;
                }
                // fio: v in 1..=100 picks the zone, then a uniform block in it.
                let (a, len) = t[(rng.below(100) as usize).min(t.len() - 1)];
                a + (len as f64 * unit(rng)) as u64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(z: &[(u32, u64)]) -> Vec<Zone> {
        z.iter()
            .map(|&(access_pct, size)| Zone { access_pct, size })
            .collect()
    }

    /// Shares of each size over `n` draws with `room` bytes.
    fn shares(c: &BsChoice, seed: u64, n: u32, room: u64) -> std::collections::BTreeMap<u64, f64> {
        let mut rng = Rng::new(seed);
        let mut m = std::collections::BTreeMap::new();
        for _ in 0..n {
            *m.entry(c.pick(&mut rng, room)).or_insert(0.0) += 1.0 / n as f64;
        }
        m
    }

    #[test]
    fn splits_fill_in_and_draw_their_shares() {
        // fio's examples/iometer-file-access-server.fio
        let given = [
            (512, 10),
            (1024, 5),
            (2048, 5),
            (4096, 60),
            (8192, 2),
            (16384, 4),
            (32768, 4),
            (65536, 10),
        ];
        let s = BsChoice::split(given.iter().map(|&(b, p)| (b, Some(p))).collect()).unwrap();
        assert_eq!(s.bounds(), (512, 65536));
        for seed in [1, 7, 99] {
            let m = shares(&s, seed, 200_000, u64::MAX);
            for (b, p) in given {
                let got = m.get(&b).copied().unwrap_or(0.0);
                assert!(
                    (got - p as f64 / 100.0).abs() < 0.006,
                    "seed {seed}: {b}: {got}"
                );
            }
        }
        // A missing percentage (or 0) shares what the others leave.
        let s = BsChoice::split(vec![(4096, Some(50)), (8192, None), (16384, None)]).unwrap();
        assert_eq!(
            s,
            BsChoice::Split(vec![(8192, 25), (16384, 25), (4096, 50)])
        );
        assert_eq!(
            BsChoice::split(vec![(4096, None)]).unwrap(),
            BsChoice::Split(vec![(4096, 100)])
        );
        assert!(BsChoice::split(vec![(1, Some(80)), (2, None), (3, None), (4, Some(30))]).is_err());
        assert!(BsChoice::split(vec![(1, Some(80)), (2, None), (4, Some(30))]).is_err());
        // Percentages short of 100: the rest goes to the most frequent size, as in fio.
        let s = BsChoice::split(vec![(4096, Some(10)), (8192, Some(20))]).unwrap();
        let m = shares(&s, 3, 100_000, u64::MAX);
        assert!(
            (m[&4096] - 0.10).abs() < 0.01 && (m[&8192] - 0.90).abs() < 0.01,
            "{m:?}"
        );
    }

    #[test]
    fn sizes_are_multiples_of_the_smallest_and_fit() {
        // fio cuts a size to a multiple of the smallest: 6k with 4k the smallest is 4k.
        let s = BsChoice::split(vec![(4096, Some(50)), (6144, Some(50))]).unwrap();
        assert_eq!(s.sizes(), vec![4096]);
        let m = shares(&s, 5, 10_000, u64::MAX);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![4096]);
        // Non-powers of two: cut by the remainder.
        let r = BsChoice::Range(3000, 10000);
        let mut rng = Rng::new(11);
        for room in [3000, 5999, 6000, 9000, 20_000] {
            for _ in 0..2000 {
                let b = r.pick(&mut rng, room);
                assert!(
                    (b.is_multiple_of(3000) || b == 10000)
                        && (3000..=10000).contains(&b)
                        && b <= room.max(3000)
                );
            }
        }
        // bsrange: min + max·u cut to multiples of min: here each of the four equally often.
        let r = BsChoice::Range(4096, 16384);
        assert_eq!(r.sizes(), vec![4096, 8192, 12288, 16384]);
        let m = shares(&r, 9, 40_000, u64::MAX);
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), r.sizes());
        assert!(m.values().all(|&p| (p - 0.25).abs() < 0.01), "{m:?}");
        // Near the end only what fits is drawn: a split falls through to the next size that
        // fits, a range draws again.
        let s = BsChoice::split(vec![(4096, Some(50)), (65536, Some(50))]).unwrap();
        assert_eq!(
            shares(&s, 1, 1000, 32768)
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            vec![4096]
        );
        let m = shares(&r, 1, 30_000, 8192);
        assert!(
            (m[&4096] - 0.5).abs() < 0.02 && (m[&8192] - 0.5).abs() < 0.02,
            "{m:?}"
        );
    }

    #[test]
    fn draws_repeat_with_the_seed() {
        let s = BsChoice::Range(512, 65536);
        let d = Distribution::Zipf {
            theta: 1.2,
            center: None,
        };
        let run = |seed: u64| -> Vec<u64> {
            let mut rng = Rng::new(seed);
            let z = Sampler::new(&d, 1000, 1000, 4096, &mut Rng::new(seed)).unwrap();
            (0..500)
                .flat_map(|_| [s.pick(&mut rng, 1 << 20), z.next(&mut rng, 0)])
                .collect()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    /// Hits per position over `draws` draws, sorted from the hottest.
    fn hits(d: &Distribution, n: u64, draws: u32, seed: u64, dir: usize) -> Vec<u32> {
        let mut rng = Rng::new(seed);
        let s = Sampler::new(d, n, n, 4096, &mut rng).unwrap();
        let mut h = vec![0u32; n as usize];
        for _ in 0..draws {
            let p = s.next(&mut rng, dir);
            assert!(p < n, "{d:?}: {p} of {n}");
            h[p as usize] += 1;
        }
        h
    }

    fn top_share(mut h: Vec<u32>, frac: f64) -> f64 {
        h.sort_unstable_by(|a, b| b.cmp(a));
        let total: u32 = h.iter().sum();
        let k = ((h.len() as f64 * frac) as usize).max(1);
        h[..k].iter().sum::<u32>() as f64 / total as f64
    }

    #[test]
    fn zipf_and_pareto_have_fios_hot_sets() {
        let n = 10_000u64;
        // zipf(θ): rank k is drawn in proportion to 1/k^θ; the hottest 1 % of 10000 ranks
        // take H(100, θ)/H(10000, θ) of the draws.
        for theta in [0.8, 1.2, 2.0] {
            let zeta = |m: u64| (1..=m).map(|k| (k as f64).powf(-theta)).sum::<f64>();
            let want = zeta(100) / zeta(n);
            for seed in [1, 2] {
                let d = Distribution::Zipf {
                    theta,
                    center: None,
                };
                let got = top_share(hits(&d, n, 200_000, seed, 0), 0.01);
                // Gray's method approximates the tail, so a few points of slack.
                assert!((got - want).abs() < 0.05, "θ {theta}: {got} vs {want}");
            }
        }
        // pareto(h): rank (n−1)·u^p with p = ln h / ln(1−h), so the ranks below k take
        // (k/(n−1))^(1/p) of the draws; their positions (fio's hash, centre 0: no offset) take
        // that and what other ranks the hash folds onto them.
        for h in [0.1, 0.2, 0.3] {
            let d = Distribution::Pareto {
                h,
                center: Some(0.0),
            };
            let p: f64 = h.ln() / (1.0 - h).ln();
            let k = n / 5;
            let hot: std::collections::BTreeSet<u64> = (0..k).map(|v| hash(v) % n).collect();
            let mass = |v: u64| ((v as f64 / (n - 1) as f64).powf(1.0 / p)).min(1.0);
            let want: f64 = (0..n)
                .filter(|v| hot.contains(&(hash(*v) % n)))
                .map(|v| mass(v + 1) - mass(v))
                .sum();
            let hv = hits(&d, n, 200_000, 3, 0);
            let got = hot.iter().map(|&x| hv[x as usize]).sum::<u32>() as f64 / 200_000.0;
            assert!((got - want).abs() < 0.01, "h {h}: {got} vs {want}");
        }
        // The hash spreads the hot ranks over the region (not all at the start).
        let h = hits(
            &Distribution::Zipf {
                theta: 1.2,
                center: None,
            },
            n,
            50_000,
            4,
            0,
        );
        let first_tenth: u32 = h[..(n / 10) as usize].iter().sum();
        assert!(first_tenth < 40_000, "{first_tenth}");
    }

    #[test]
    fn zones_take_their_share_in_their_part() {
        let n = 10_000u64;
        // zoned:50/5:30/15:20/80 (fio's jesd219 example) for reads, 100/10 for writes.
        let d = Distribution::Zoned {
            read: zones(&[(50, 5), (30, 15), (20, 80)]),
            write: zones(&[(100, 10)]),
        };
        for seed in [1, 2] {
            let h = hits(&d, n, 200_000, seed, 0);
            let part = |a: u64, b: u64| {
                h[(a * n / 100) as usize..(b * n / 100) as usize]
                    .iter()
                    .sum::<u32>() as f64
                    / 200_000.0
            };
            for (a, b, want) in [(0, 5, 0.5), (5, 20, 0.3), (20, 100, 0.2)] {
                assert!((part(a, b) - want).abs() < 0.01, "{a}-{b}: {}", part(a, b));
            }
            // Within a zone, uniform: the zone's two halves alike.
            assert!((part(0, 2) * 2.5 - part(2, 5) * 2.5 / 1.5).abs() < 0.03);
            let w = hits(&d, n, 50_000, seed, 1);
            assert!(w[(n / 10) as usize..].iter().all(|&x| x == 0));
        }
        // zoned_abs: 60 % of the I/Os to the first 1 MiB of 40 MiB (positions of 4 KiB).
        let d = Distribution::ZonedAbs {
            read: zones(&[(60, 1 << 20), (40, 39 << 20)]),
            write: vec![],
        };
        let h = hits(&d, n, 100_000, 5, 0);
        let first: u32 = h[..256].iter().sum();
        assert!((first as f64 / 100_000.0 - 0.6).abs() < 0.01, "{first}");
        // A direction without zones is uniform over the region.
        let w = hits(&d, n, 100_000, 5, 1);
        for k in 0..10 {
            let tenth: u32 = w[(k * n / 10) as usize..((k + 1) * n / 10) as usize]
                .iter()
                .sum();
            assert!(
                (tenth as f64 / 100_000.0 - 0.1).abs() < 0.01,
                "{k}: {tenth}"
            );
        }
    }

    #[test]
    fn normal_concentrates_on_fios_bell() {
        let n = 10_000u64;
        // Without a deviation: the mean of twelve uniforms, standard deviation n/√144 = n/12;
        // before the hash about 68 % of the draws lie within n/12 of the middle, so the
        // hottest 1/6 of the positions take about that share.
        for dev in [0.0, 10.0] {
            let d = Distribution::Normal { dev, center: None };
            let got = top_share(hits(&d, n, 200_000, 6, 0), 1.0 / 6.0);
            assert!((0.62..0.78).contains(&got), "dev {dev}: {got}");
        }
        // A centre shifts, never leaves the region.
        let d = Distribution::Normal {
            dev: 5.0,
            center: Some(0.1),
        };
        hits(&d, n, 10_000, 7, 0);
    }
}
