//! The built-in studies of `ssdlab study` ([`STUDIES`]): the sweeps of `stripe` and `alignment`
//! built from a few typed options ([`StudyOptions`]) as the sweep file they stand for, and the
//! files such a study reads or writes ([`study_files`]). Errors are the command's words.
//!
//! [`trim`] plans the trim study, an aging run rather than a sweep.

use crate::{DriveState, PointTarget, SweepFile, SweepSpec, TargetTable, WorkloadTable};
use ssdlab_engine::preset_file;
use ssdlab_workload::{format_size, parse_duration, RwMode};
use std::path::{Path, PathBuf};

pub mod trim;

/// The built-in studies: name and description.
pub const STUDIES: [(&str, &str); 3] = [
    (
        "stripe",
        "one drive vs RAID 0 of two, stripes 8k–128k, 4 workloads × QD 1–32 (144 points)",
    ),
    (
        "alignment",
        "4 KiB random writes, 4 KiB- vs 512-byte-aligned, QD 3, on the seven classic drive presets",
    ),
    (
        "trim",
        "RAID 0 of two with TRIM passed through vs dropped, office-like file activity over days",
    ),
];

/// The stripe sizes of the classic review (Intel RST offers 4k–128k; 4k is optional here).
pub const REVIEW_STRIPES: [u64; 5] = [8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10];

/// The classic test's drives: the seven presets of 2009–2013 (each preset file holds the label
/// the reviews name it by).
pub const CLASSIC_PRESETS: [&str; 7] = [
    "c300-256g",
    "ssdnow-vplus-128g",
    "vertex-barefoot-120g",
    "vertex-le-100g",
    "vertex450-128g",
    "x25e-64g",
    "x25m-g2-160g",
];

/// The stripe study's workloads: the review's four corners.
pub const STRIPE_WORKLOADS: [&str; 4] = [
    "4k-randread",
    "4k-randwrite",
    "128k-seqread",
    "128k-seqwrite",
];

/// The options of a study's sweep; `None` (or no target) is the study's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StudyOptions {
    /// Drive preset (name or preset file) of the stripe study; default vertex450-128g.
    pub preset: Option<String>,
    /// Real members of the stripe study (two or more) instead of simulated drives.
    pub targets: Vec<PathBuf>,
    /// Stripe sizes of the stripe study; default [`REVIEW_STRIPES`].
    pub stripes: Option<Vec<u64>>,
    /// Queue depths; default 1–32 for the stripe study, 3 for the alignment study.
    pub qds: Option<Vec<u32>>,
    /// Measured time per point as the sweep file writes it ("2s").
    pub time: Option<String>,
    /// Runs per point; default 1 simulated, 3 on real members.
    pub repeats: Option<u32>,
}

/// The size of a file or block device (0 when it cannot be read).
pub fn member_size(p: &Path) -> u64 {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(p) {
        Ok(m) if m.file_type().is_block_device() => std::fs::File::open(p)
            .ok()
            .and_then(|f| ssdlab_io::blockdev::size_bytes(&f).ok())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// A plain name made of a path's file name (for the sweep's name).
pub fn plain(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .chars()
        .take(30)
        .collect()
}

/// Sizes as the sweep file writes them ("8KiB").
fn size_texts(v: &[u64]) -> Vec<String> {
    v.iter().map(|x| format_size(*x).replace(' ', "")).collect()
}

/// The sweep of the stripe study: one drive vs RAID 0 of two (simulated), or the first of
/// `targets` alone vs RAID 0 of them all (measured, over a span that fits the smallest).
pub fn stripe_sweep(a: &StudyOptions) -> Result<SweepFile, String> {
    let stripes = a.stripes.clone().unwrap_or_else(|| REVIEW_STRIPES.to_vec());
    let qds = a.qds.clone().unwrap_or_else(|| vec![1, 2, 4, 8, 16, 32]);
    let list = stripes
        .iter()
        .map(|s| format_size(*s))
        .collect::<Vec<_>>()
        .join(", ");
    let base = SweepFile {
        qd: qds,
        workloads: STRIPE_WORKLOADS.map(String::from).to_vec(),
        ..SweepFile::default()
    };
    if a.targets.is_empty() {
        let preset = a.preset.as_deref().unwrap_or("vertex450-128g");
        // a preset file is named by its file name in the study's name and store
        let shown = match preset_file(preset) {
            Some(f) => plain(f).trim_end_matches(".toml").to_string(),
            None => preset.to_string(),
        };
        let sim = |label: &str| TargetTable {
            label: Some(label.into()),
            sim: Some(preset.into()),
            state: Some(DriveState::Full),
            ..TargetTable::default()
        };
        return Ok(SweepFile {
            comment: vec![
                "Built-in study \"stripe\": which stripe size for a RAID 0 of two drives, and what does it gain over".into(),
                "one drive at each queue depth? (ssdlab study stripe)".into(),
            ],
            name: format!("study-stripe-{shown}"),
            description: Some(format!(
                "{preset}: one drive vs RAID 0 of two, stripes {list} (simulated)"
            )),
            time: a.time.clone().unwrap_or_else(|| "1s".into()),
            ramp: Some("100ms".into()),
            span: Some("8GiB".into()),
            repeats: Some(a.repeats.unwrap_or(1)),
            targets: vec![
                TargetTable {
                    baseline: Some(true),
                    ..sim("single")
                },
                TargetTable {
                    drives: Some(2),
                    stripes: Some(size_texts(&stripes)),
                    ..sim("raid0")
                },
            ],
            ..base
        });
    }
    if a.targets.len() < 2 {
        return Err("--target needs two or more members (A,B): the study compares one drive with a RAID 0 of them".into());
    }
    let smallest = a.targets.iter().map(|p| member_size(p)).min().unwrap_or(0);
    let span = smallest.min(8 << 30) / (1 << 20) * (1 << 20);
    if span == 0 {
        let p = a
            .targets
            .iter()
            .find(|p| member_size(p) < (1 << 20))
            .unwrap_or(&a.targets[0]);
        return Err(format!(
            "--target {}: missing, unreadable or smaller than 1 MiB; the study needs existing files or devices (create files with `ssdlab run --target FILE --span SIZE` first)",
            p.display()
        ));
    }
    let names: Vec<String> = a.targets.iter().map(|p| plain(p)).collect();
    let shown: Vec<String> = a.targets.iter().map(|p| p.display().to_string()).collect();
    // a sweep file is UTF-8: the members as their lossy text
    let members: Vec<PathBuf> = a
        .targets
        .iter()
        .map(|p| PathBuf::from(p.to_string_lossy().into_owned()))
        .collect();
    Ok(SweepFile {
        comment: vec![
            "Built-in study \"stripe\" on real members (ssdlab study stripe --target ...)".into(),
        ],
        name: format!("study-stripe-{}", names.join("+")),
        description: Some(format!(
            "{}: one member vs RAID 0 of {}, stripes {list} (measured)",
            shown[0],
            shown.join(" + ")
        )),
        time: a.time.clone().unwrap_or_else(|| "2s".into()),
        ramp: Some("500ms".into()),
        span: Some(format!("{}MiB", span >> 20)),
        repeats: Some(a.repeats.unwrap_or(3)),
        targets: vec![
            TargetTable {
                label: Some(format!("single ({})", shown[0])),
                path: Some(members[0].clone()),
                baseline: Some(true),
                ..TargetTable::default()
            },
            TargetTable {
                label: Some(format!("raid0 ({})", shown.join("+"))),
                members: Some(members),
                stripes: Some(size_texts(&stripes)),
                ..TargetTable::default()
            },
        ],
        ..base
    })
}

/// What a stability check's name adds to its study's sweep name.
pub const CHECK_SUFFIX: &str = "-check";

/// The stability check of a simulated stripe study `main` (see
/// [`crate::Analysis::attach_check`]): its array target again with the `stripes` close to the
/// best of the `workloads` whose pick is not a tie of every stripe, at twice the time per point
/// and with another seed (simulated points are deterministic: only another run length and
/// random stream show how far a pick rests on them). Returns the sweep and how it runs
/// (`2 s per point and another seed`).
pub fn stripe_check_sweep(
    main: &SweepFile,
    workloads: &[String],
    stripes: &[u64],
) -> Result<(SweepFile, String), String> {
    let t = parse_duration(&main.time).map_err(|e| format!("time {}: {e}", main.time))?;
    let doubled = t * 2;
    let seed = ssdlab_workload::WorkloadSpec::default().seed;
    let shown = if doubled.is_multiple_of(1_000_000_000) {
        format!("{} s", doubled / 1_000_000_000)
    } else if doubled.is_multiple_of(1_000_000) {
        format!("{} ms", doubled / 1_000_000)
    } else {
        ssdlab_workload::format_duration(doubled)
    };
    let how = format!("{shown} per point and another seed");
    let targets: Vec<TargetTable> = main
        .targets
        .iter()
        .filter(|t| t.stripes.is_some())
        .map(|t| TargetTable {
            stripes: Some(size_texts(stripes)),
            ..t.clone()
        })
        .collect();
    Ok((
        SweepFile {
            comment: vec![format!(
                "Stability check of the built-in study {}: the stripes close to the best again, {how}",
                main.name
            )],
            name: format!("{}{CHECK_SUFFIX}", main.name),
            description: Some(format!("stability check of {}: {how}", main.name)),
            time: if doubled.is_multiple_of(1_000_000) {
                format!("{}ms", doubled / 1_000_000)
            } else {
                format!("{}us", doubled.div_ceil(1000))
            },
            repeats: Some(1),
            seed: Some(seed.wrapping_add(1)),
            workloads: workloads.to_vec(),
            targets,
            ..main.clone()
        },
        how,
    ))
}

/// The sweep a store's sweep `name` is the stability check of, when it is one (named
/// `MAIN-check` and described as its check).
pub fn check_of(name: &str, description: Option<&str>) -> Option<String> {
    let main = name.strip_suffix(CHECK_SUFFIX)?;
    description?
        .starts_with(&format!("stability check of {main}:"))
        .then(|| main.to_string())
}

/// How a stability check ran, from its description (see [`stripe_check_sweep`]).
pub fn check_how(description: &str) -> String {
    description
        .split_once(": ")
        .map_or(description, |x| x.1)
        .to_string()
}

/// The sweep of the alignment study: 4 KiB random writes at 4 KiB vs 512-byte alignment on
/// the [`CLASSIC_PRESETS`] (the stripe study's preset, targets and stripes are refused).
pub fn alignment_sweep(a: &StudyOptions) -> Result<SweepFile, String> {
    for (flag, given) in [
        ("--preset", a.preset.is_some()),
        ("--target", !a.targets.is_empty()),
        ("--stripes", a.stripes.is_some()),
    ] {
        if given {
            return Err(format!("{flag} applies to the stripe study; the alignment study compares the seven classic drive presets"));
        }
    }
    let qds = a.qds.clone().unwrap_or_else(|| vec![3]);
    let time = a.time.as_deref().unwrap_or("10s");
    // The classic test's warm-up: 5 s, or half the measured time when that is shorter.
    let ramp_ms = (parse_duration(time).unwrap_or(0) / 2_000_000).min(5_000);
    let write = |name: &str, align: &str| WorkloadTable {
        name: name.into(),
        rw: RwMode::Randwrite,
        bs: "4k".into(),
        align: Some(align.into()),
    };
    Ok(SweepFile {
        comment: vec![
            "Built-in study \"alignment\": 4 KiB random writes over an 8 GiB span at 4 KiB alignment vs".into(),
            "512-byte alignment (a Windows XP partition offset), on the seven classic drive presets: the classic test".into(),
            "(3 outstanding I/Os, average MB/s). (ssdlab study alignment)".into(),
        ],
        name: "study-alignment".into(),
        description: Some(format!(
            "4 KiB random writes, 4 KiB- vs 512-byte-aligned, QD {}, the seven classic drive presets (simulated)",
            qds.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )),
        time: time.into(),
        ramp: Some(format!("{ramp_ms}ms")),
        span: Some("8GiB".into()),
        qd: qds,
        repeats: Some(a.repeats.unwrap_or(1)),
        workload_tables: vec![
            write("4k-randwrite-aligned", "4k"),
            write("4k-randwrite-512", "512"),
        ],
        // the classic test's drives: the seven presets of 2009–2013 (the modern presets are for
        // sweeps of their own)
        targets: CLASSIC_PRESETS
            .iter()
            .map(|name| TargetTable {
                label: Some(
                    ssdlab_ssdsim::load_preset(name)
                        .map_or(name.to_string(), |d| d.label().to_string()),
                ),
                sim: Some((*name).into()),
                baseline: Some(false),
                ..TargetTable::default()
            })
            .collect(),
        ..SweepFile::default()
    })
}

/// The files a study reads or writes besides its HTML report, with their roles.
pub fn study_files(spec: &SweepSpec, db: &Path) -> Vec<(String, PathBuf)> {
    let mut v = vec![("the results store".to_string(), db.to_path_buf())];
    for x in ["-journal", "-wal", "-shm"] {
        let mut n = db.as_os_str().to_owned();
        n.push(x);
        v.push(("a file of the results store".into(), PathBuf::from(n)));
    }
    for t in &spec.targets {
        match &t.kind {
            PointTarget::Real { paths } => {
                for p in paths {
                    v.push((format!("target '{}'", t.label), p.clone()));
                }
            }
            PointTarget::Sim { preset, .. } => {
                if let Some(p) = preset_file(preset) {
                    v.push(("a preset file".into(), p.to_path_buf()));
                }
            }
        }
    }
    v
}

/// Checks of the studies' sweeps (unit tests).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names() {
        assert_eq!(plain(Path::new("/x/my disk.img")), "my_disk.img");
        assert_eq!(plain(Path::new("/x/.hidden")), "hidden");
    }

    #[test]
    fn default_studies_parse() {
        let s = stripe_sweep(&StudyOptions::default())
            .unwrap()
            .spec_from_flags(Path::new("."))
            .unwrap();
        assert_eq!(s.point_count(), Some(144));
        assert_eq!(s.name, "study-stripe-vertex450-128g");
        assert!(s.from_flags);
        assert!(s.source.starts_with("# Built-in study \"stripe\""));
        assert_eq!(s.qds, [1, 2, 4, 8, 16, 32]);
        assert_eq!(s.repeats, 1);
        let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, STRIPE_WORKLOADS);
        for w in &s.workloads {
            assert_eq!(w.spec.stop.time_ns, Some(1_000_000_000));
            assert_eq!(w.spec.ramp_ns, 100_000_000);
            assert_eq!(w.spec.span, Some(8 << 30));
        }
        let [single, raid0] = &s.targets[..] else {
            panic!("two targets: {:?}", s.targets)
        };
        assert_eq!((single.label.as_str(), single.baseline), ("single", true));
        assert_eq!((raid0.label.as_str(), raid0.baseline), ("raid0", false));
        assert_eq!(raid0.baseline_label.as_deref(), Some("single"));
        assert_eq!(raid0.stripes, REVIEW_STRIPES);
        for (t, n) in [(single, 1), (raid0, 2)] {
            let PointTarget::Sim {
                preset,
                drives,
                state,
                ..
            } = &t.kind
            else {
                panic!("simulated: {t:?}")
            };
            assert_eq!(
                (preset.as_str(), *drives, *state),
                ("vertex450-128g", n, DriveState::Full)
            );
        }

        let s = alignment_sweep(&StudyOptions::default())
            .unwrap()
            .spec_from_flags(Path::new("."))
            .unwrap();
        assert_eq!(s.name, "study-alignment");
        assert_eq!(s.targets.len(), 7);
        assert!(s.targets.iter().all(|t| !t.baseline));
        assert_eq!(s.qds, [3]);
        assert_eq!(s.point_count(), Some(14));
        let aligns: Vec<(&str, u64)> = s
            .workloads
            .iter()
            .map(|w| (w.name.as_str(), w.spec.align))
            .collect();
        assert_eq!(
            aligns,
            [("4k-randwrite-aligned", 4096), ("4k-randwrite-512", 512)]
        );
        for w in &s.workloads {
            assert_eq!((w.spec.rw, w.spec.bs), (RwMode::Randwrite, 4096));
            assert_eq!(w.spec.stop.time_ns, Some(10_000_000_000));
            // the classic test's warm-up: 5 s
            assert_eq!(w.spec.ramp_ns, 5_000_000_000);
        }
        // half the measured time when that is shorter
        let s = alignment_sweep(&StudyOptions {
            time: Some("4s".into()),
            qds: Some(vec![1, 32]),
            ..StudyOptions::default()
        })
        .unwrap()
        .spec_from_flags(Path::new("."))
        .unwrap();
        assert_eq!(s.qds, [1, 32]);
        assert_eq!(s.workloads[0].spec.ramp_ns, 2_000_000_000);
        assert!(s.description.unwrap().contains("QD 1, 32"));
        // the stripe study's options are refused
        let e = alignment_sweep(&StudyOptions {
            stripes: Some(vec![4096]),
            ..StudyOptions::default()
        });
        assert!(e
            .unwrap_err()
            .starts_with("--stripes applies to the stripe study"));
    }

    /// On real members: the first alone is the baseline, the span fits the smallest.
    #[test]
    fn stripe_study_on_real_members() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.img");
        let b = dir.path().join("b.img");
        std::fs::File::create(&a).unwrap().set_len(3 << 20).unwrap();
        std::fs::File::create(&b).unwrap().set_len(5 << 20).unwrap();
        let on = |targets: Vec<PathBuf>| {
            stripe_sweep(&StudyOptions {
                targets,
                ..StudyOptions::default()
            })
        };
        let s = on(vec![a.clone(), b.clone()])
            .unwrap()
            .spec_from_flags(Path::new("."))
            .unwrap();
        assert_eq!(s.name, "study-stripe-a.img+b.img");
        assert_eq!(s.repeats, 3);
        assert_eq!(s.workloads[0].spec.span, Some(3 << 20));
        assert_eq!(s.workloads[0].spec.stop.time_ns, Some(2_000_000_000));
        assert_eq!(
            s.targets[0].kind,
            PointTarget::Real {
                paths: vec![a.clone()]
            }
        );
        assert!(s.targets[0].baseline);
        assert_eq!(
            s.targets[1].kind,
            PointTarget::Real {
                paths: vec![a.clone(), b.clone()]
            }
        );
        assert_eq!(s.targets[1].stripes, REVIEW_STRIPES);
        let e = on(vec![a.clone()]);
        assert!(e.unwrap_err().contains("two or more members"));
        let e = on(vec![a, dir.path().join("missing.img")]);
        assert!(e.unwrap_err().contains("missing.img: missing, unreadable"));
    }
}
