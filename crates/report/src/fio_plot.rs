//! Where `ssdlab report DB --fio-json DIR` puts one fio JSON file per sweep point, laid out the
//! way fio-plot's own benchmark driver (bench-fio) lays out its runs, so `fio-plot -i DIR …`
//! draws a sweep:
//!
//! ```text
//! DIR/<sweep>/<target>[-stripe-<S>]/<bs>/<rw>-<iodepth>-<numjobs>.json          (read/write/randread/randwrite)
//! DIR/<sweep>/<target>[-stripe-<S>]/<rw><rwmixread>/<bs>/<rw>-<iodepth>-<numjobs>.json   (rw/randrw)
//! ```
//!
//! with `run-<N>/` before the file name when the sweep repeats its points (N from 1), as
//! bench-fio does. One directory holds the queue depths of one target, stripe and block size
//! for every rw: the `-i` of fio-plot's bar charts (`-l`, `-N`), which select files by the `rw`,
//! `iodepth` and `numjobs` in their "job options". When two workloads of a sweep would write the
//! same files (same rw, mix and block size, but e.g. another alignment), each workload's name is
//! used as its directory instead.

use ssdlab_workload::{RwMode, WorkloadSpec};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// What names a point's file.
#[derive(Debug, Clone)]
pub struct PlotPoint<'a> {
    pub sweep: &'a str,
    pub target: &'a str,
    pub stripe: Option<u64>,
    pub workload: &'a str,
    pub spec: &'a WorkloadSpec,
    /// 0-based repeat.
    pub repeat: u32,
    /// Whether the sweep has more than one repeat.
    pub repeated: bool,
}

/// A path component made of letters, digits, `.`, `_`, `-` and `+` only.
fn clean(s: &str) -> String {
    let c: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    match c.as_str() {
        "" | "." | ".." => "_".to_string(),
        _ => c,
    }
}

/// `4k`, `128k`, `1m`, or bytes, as block sizes are written in fio job files.
pub fn short_size(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}m", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}k", b >> 10)
    } else {
        b.to_string()
    }
}

fn workload_dir(spec: &WorkloadSpec) -> PathBuf {
    match spec.rw {
        RwMode::Rw | RwMode::Randrw => {
            PathBuf::from(format!("{}{}", spec.rw, spec.read_pct)).join(short_size(spec.bs))
        }
        _ => PathBuf::from(short_size(spec.bs)),
    }
}

fn target_dir(p: &PlotPoint) -> String {
    match p.stripe {
        Some(s) => clean(&format!("{}-stripe-{}", p.target, short_size(s))),
        None => clean(p.target),
    }
}

/// The relative path of each point's file, in the order given.
pub fn layout(points: &[PlotPoint]) -> Vec<PathBuf> {
    // Workloads whose files would collide (same directory and rw: e.g. two alignments of 4 KiB
    // random writes) use their names as directories.
    let key = |p: &PlotPoint| {
        (
            p.sweep.to_string(),
            target_dir(p),
            workload_dir(p.spec),
            p.spec.rw.as_str(),
        )
    };
    let mut owners: HashMap<(String, String, PathBuf, &str), HashSet<&str>> = HashMap::new();
    for p in points {
        owners.entry(key(p)).or_default().insert(p.workload);
    }
    points
        .iter()
        .map(|p| {
            let wdir = workload_dir(p.spec);
            let shared = owners.get(&key(p)).is_some_and(|o| o.len() > 1);
            let mut path = PathBuf::from(clean(p.sweep)).join(target_dir(p));
            path.push(if shared {
                PathBuf::from(clean(p.workload))
            } else {
                wdir
            });
            if p.repeated {
                path.push(format!("run-{}", p.repeat + 1));
            }
            path.push(format!("{}-{}-{}.json", p.spec.rw, p.spec.qd, p.spec.jobs));
            path
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rw: RwMode, bs: u64, qd: u32, align: u64) -> WorkloadSpec {
        WorkloadSpec {
            rw,
            bs,
            qd,
            align,
            read_pct: 70,
            ..Default::default()
        }
    }

    #[test]
    fn bench_fio_layout() {
        let a = spec(RwMode::Randread, 4096, 1, 4096);
        let b = spec(RwMode::Randread, 4096, 32, 4096);
        let m = spec(RwMode::Randrw, 4096, 8, 4096);
        let u = spec(RwMode::Randwrite, 4096, 3, 512);
        let v = spec(RwMode::Randwrite, 4096, 3, 4096);
        let pt = |spec, target, stripe, workload, repeat| PlotPoint {
            sweep: "study-stripe",
            target,
            stripe,
            workload,
            spec,
            repeat,
            repeated: false,
        };
        let points = [
            pt(&a, "single", None, "4k-randread", 0),
            pt(&b, "raid0", Some(16384), "4k-randread", 0),
            pt(&m, "single", None, "mix", 0),
            pt(&u, "x25m g2/old", None, "4k-randwrite-512", 0),
            pt(&v, "x25m g2/old", None, "4k-randwrite", 0),
        ];
        let names: Vec<String> = layout(&points)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "study-stripe/single/4k/randread-1-1.json",
                "study-stripe/raid0-stripe-16k/4k/randread-32-1.json",
                "study-stripe/single/randrw70/4k/randrw-8-1.json",
                "study-stripe/x25m_g2_old/4k-randwrite-512/randwrite-3-1.json",
                "study-stripe/x25m_g2_old/4k-randwrite/randwrite-3-1.json",
            ]
        );
        let mut r = pt(&a, "single", None, "4k-randread", 1);
        r.repeated = true;
        assert_eq!(
            layout(&[r])[0],
            PathBuf::from("study-stripe/single/4k/run-2/randread-1-1.json")
        );
        assert_eq!(short_size(131072), "128k");
        assert_eq!(short_size(1 << 20), "1m");
        assert_eq!(short_size(512), "512");
        assert_eq!(clean(".."), "_");
    }
}
