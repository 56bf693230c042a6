//! `ssdlab study stripe|alignment|trim`: the built-in review studies. `stripe` and `alignment`
//! are sweeps generated from the options (`--qd`, `--time`, `--stripes`, `--target`, …), run
//! into a results store like any sweep, then reported: tables and findings on stdout, an HTML
//! report with the charts (by default next to the store; `--html FILE` to choose). `trim` runs
//! an office-like aging workload day after day on a simulated RAID 0 with and without TRIM
//! pass-through (`ssdlab_engine::run_aging`) and prints its tables and findings (or JSON).

use crate::cli::{positive_size_arg, positive_u32, positive_usize, Failure};
use crate::signals;
use crate::store_report::{check_html, report_store, ReportArgs};
use crate::sweeping::{check_db, check_failure, check_sweep, point_runner, run_spec, study_db};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use ssdlab_engine::preset_file;
use ssdlab_sweep::{
    parse_mix, DriveState, PointTarget, SweepFile, SweepSpec, TargetTable, WorkloadTable,
};
use ssdlab_workload::{format_size, parse_duration, AllocPolicy, RwMode};
use std::path::{Path, PathBuf};

mod trim;

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
const REVIEW_STRIPES: [u64; 5] = [8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10];

/// The classic test's drives: the seven presets of 2009–2013 (each preset file holds the label
/// the reviews name it by).
const CLASSIC_PRESETS: [&str; 7] = [
    "c300-256g",
    "ssdnow-vplus-128g",
    "vertex-barefoot-120g",
    "vertex-le-100g",
    "vertex450-128g",
    "x25e-64g",
    "x25m-g2-160g",
];

/// A comma-separated list of queue depths (a newtype, so clap takes it as one value).
#[derive(Debug, Clone, PartialEq)]
pub struct QdList(pub Vec<u32>);

/// A comma-separated list of stripe sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct StripeList(pub Vec<u64>);

fn qd_arg(s: &str) -> Result<QdList, String> {
    qd_list(s).map(QdList)
}

fn stripe_arg(s: &str) -> Result<StripeList, String> {
    stripe_list(s).map(StripeList)
}

fn qd_list(s: &str) -> Result<Vec<u32>, String> {
    let v = s
        .split(',')
        .map(|x| positive_u32(x.trim()))
        .collect::<Result<Vec<u32>, String>>()?;
    if v.is_empty() {
        return Err("give at least one queue depth, e.g. 1,4,32".into());
    }
    for (i, q) in v.iter().enumerate() {
        if v[..i].contains(q) {
            return Err(format!("queue depth {q} is listed twice"));
        }
    }
    Ok(v)
}

fn stripe_list(s: &str) -> Result<Vec<u64>, String> {
    let v = s
        .split(',')
        .map(|x| positive_size_arg(x.trim()))
        .collect::<Result<Vec<u64>, String>>()?;
    for (i, x) in v.iter().enumerate() {
        if !x.is_power_of_two() || *x < 4096 {
            return Err(format!(
                "stripe {} must be a power of two of at least 4 KiB",
                format_size(*x)
            ));
        }
        if v[..i].contains(x) {
            return Err(format!("stripe {} is listed twice", format_size(*x)));
        }
    }
    Ok(v)
}

fn time_arg(s: &str) -> Result<String, String> {
    match parse_duration(s) {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(_) => Ok(s.trim().to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// `ssdlab study`: a built-in study (simulated unless `--target` names real members).
#[derive(Args, Debug)]
pub struct StudyArgs {
    /// Which study: stripe (one drive vs RAID 0 of two over stripe sizes), alignment (4 KiB
    /// random writes at 4 KiB vs 512-byte alignment on the seven classic drive presets) or trim (a RAID 0 of
    /// two aged by office-like file activity, TRIM passed through vs dropped).
    #[arg(default_value = "stripe")]
    name: String,
    /// Drive preset of the stripe and trim studies (default vertex450-128g); the stripe study
    /// also takes a preset file (e.g. one written by `ssdlab calibrate`). The alignment study
    /// compares the seven classic presets.
    #[arg(long, conflicts_with = "target")]
    preset: Option<String>,
    /// Run the stripe study on real members instead of simulated drives: two or more files or
    /// block devices (same safety rules as `run`; existing files, written by the write
    /// workloads). The first member alone is the single-drive baseline.
    #[arg(long, value_name = "A,B[,…]", value_delimiter = ',')]
    target: Vec<PathBuf>,
    /// Stripe sizes of the stripe study (default 8k,16k,32k,64k,128k as in the review; add 4k
    /// if you like).
    #[arg(long, value_name = "LIST", value_parser = stripe_arg, allow_hyphen_values = true)]
    stripes: Option<StripeList>,
    /// Queue depths (default 1,2,4,8,16,32 for the stripe study, 3 for the alignment study as
    /// in the classic test; one value, default 4, for the trim study's file activity).
    #[arg(long, value_name = "LIST", value_parser = qd_arg)]
    qd: Option<QdList>,
    /// Measured time per point (default 1s simulated / 2s real for the stripe study, 10s for
    /// the alignment study).
    #[arg(long, value_name = "DUR", value_parser = time_arg, allow_hyphen_values = true)]
    time: Option<String>,
    /// Runs per point (default 1 simulated, 3 on real targets: their spread decides ties).
    #[arg(long, value_name = "N", value_parser = positive_u32)]
    repeats: Option<u32>,
    /// Results store (SQLite; a study resumes from it when it exists). Default, in the current
    /// directory: ssdlab-study-stripe-PRESET.sqlite for the stripe study
    /// (ssdlab-study-stripe-vertex450-128g.sqlite with the default preset),
    /// ssdlab-study-alignment.sqlite for the alignment study.
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Where the HTML report goes (default: the store's name with .html, e.g.
    /// ssdlab-study-stripe-vertex450-128g.html). Never the store or a file the study reads.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Parallel workers for simulated points (default: as many cores as the memory estimate
    /// allows).
    #[arg(long, value_parser = positive_usize)]
    jobs: Option<usize>,
    /// Recommend a stripe for this workload mix, e.g. 4k-randread=0.7,128k-seqwrite=0.3.
    #[arg(long)]
    mix: Option<String>,
    /// Allow writes to block devices given with --target (devices with a filesystem,
    /// partitions or users are still refused).
    #[arg(long, requires = "target")]
    allow_destroy: bool,
    /// Refuse to start when the memory estimate is above SIZE (see `ssdlab sweep --help`).
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    max_memory: Option<u64>,
    /// Trim study: simulated days of use (default 14; endurance is projected from the
    /// write amplification of the second half).
    #[arg(long, value_name = "N", value_parser = positive_u32)]
    days: Option<u32>,
    /// Trim study: data written per day on the full-size array (default 20g, the 20 GB/day
    /// Intel and PC makers set as a client target; Micron and Intel put the average desktop
    /// at 7-10 GB/day).
    #[arg(long, value_name = "SIZE", value_parser = positive_size_arg, allow_hyphen_values = true)]
    daily_write: Option<u64>,
    /// Trim study: utilisation of the file system, percent (default 50: desktop file systems
    /// are on average half full, Douceur and Bolosky 1999).
    #[arg(long, value_name = "PCT", value_parser = fill_arg)]
    fill: Option<u32>,
    /// Trim study: seed of the workload and the drives (default 1).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Trim study: simulate the drives scaled down by N (blocks per plane, user capacity and
    /// pSLC divided by N, over-provisioning kept where the drive's spare blocks per plane
    /// allow: the output says when it is not), with the daily write and the probe scaled alike;
    /// 1 = full size (default 8).
    #[arg(long, value_name = "N", value_parser = positive_u32)]
    scale: Option<u32>,
    /// Trim study: size of the sustained-write probe at the end of each day, on the full-size
    /// array (default: 1/8 of the array; 0 = none).
    #[arg(long, value_name = "SIZE", value_parser = crate::cli::size_arg, allow_hyphen_values = true)]
    probe: Option<u64>,
    /// Trim study: the file system's allocator, next-fit (default; new data moves over the
    /// whole volume) or first-fit (packs data at the start).
    #[arg(long, value_name = "NAME", value_parser = alloc_arg)]
    allocator: Option<AllocPolicy>,
    /// Trim study: print the results as JSON instead of tables.
    #[arg(long)]
    json: bool,
}

fn fill_arg(s: &str) -> Result<u32, String> {
    match s.trim().trim_end_matches('%').trim().parse::<u32>() {
        Ok(v) if (1..=95).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a utilisation of 1 to 95 percent")),
    }
}

fn alloc_arg(s: &str) -> Result<AllocPolicy, String> {
    s.parse()
}

impl StudyArgs {
    /// The first trim-study flag given, for refusing it on the other studies.
    fn trim_flag(&self) -> Option<&'static str> {
        [
            ("--days", self.days.is_some()),
            ("--daily-write", self.daily_write.is_some()),
            ("--fill", self.fill.is_some()),
            ("--seed", self.seed.is_some()),
            ("--scale", self.scale.is_some()),
            ("--probe", self.probe.is_some()),
            ("--allocator", self.allocator.is_some()),
            ("--json", self.json),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(f, _)| f)
    }

    /// The trim study's options (flags of the other studies are refused).
    fn trim_args(&self) -> Result<trim::TrimArgs> {
        for (flag, given) in [
            ("--target", !self.target.is_empty()),
            ("--stripes", self.stripes.is_some()),
            ("--time", self.time.is_some()),
            ("--repeats", self.repeats.is_some()),
            ("--db", self.db.is_some()),
            ("--html", self.html.is_some()),
            ("--jobs", self.jobs.is_some()),
            ("--mix", self.mix.is_some()),
        ] {
            if given {
                bail!("{flag} does not apply to the trim study (it is simulated, keeps no store and prints its report)");
            }
        }
        let qd = match &self.qd {
            None => 4,
            Some(QdList(v)) if v.len() == 1 => v[0],
            Some(_) => bail!("--qd: the trim study takes one queue depth (its file activity's)"),
        };
        Ok(trim::TrimArgs {
            preset: self
                .preset
                .clone()
                .unwrap_or_else(|| "vertex450-128g".into()),
            days: self.days.unwrap_or(14),
            daily_write: self.daily_write.unwrap_or(20 << 30),
            fill: self.fill.unwrap_or(50),
            seed: self.seed.unwrap_or(1),
            scale: self.scale.unwrap_or(8),
            probe: self.probe,
            allocator: self.allocator.unwrap_or_default(),
            qd,
            json: self.json,
            max_memory: self.max_memory,
        })
    }
}

/// The size of a file or block device (0 when it cannot be read).
fn member_size(p: &Path) -> u64 {
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
fn plain(p: &Path) -> String {
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

/// The stripe study's workloads: the review's four corners.
const STRIPE_WORKLOADS: [&str; 4] = [
    "4k-randread",
    "4k-randwrite",
    "128k-seqread",
    "128k-seqwrite",
];

/// Sizes as the sweep file writes them ("8KiB").
fn size_texts(v: &[u64]) -> Vec<String> {
    v.iter().map(|x| format_size(*x).replace(' ', "")).collect()
}

/// The sweep of the stripe study.
fn stripe_sweep(a: &StudyArgs) -> Result<SweepFile> {
    let stripes = a.stripes.clone().map_or(REVIEW_STRIPES.to_vec(), |s| s.0);
    let qds = a.qd.clone().map_or(vec![1, 2, 4, 8, 16, 32], |q| q.0);
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
    if a.target.is_empty() {
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
    if a.target.len() < 2 {
        bail!("--target needs two or more members (A,B): the study compares one drive with a RAID 0 of them");
    }
    let smallest = a.target.iter().map(|p| member_size(p)).min().unwrap_or(0);
    let span = smallest.min(8 << 30) / (1 << 20) * (1 << 20);
    if span == 0 {
        let p = a
            .target
            .iter()
            .find(|p| member_size(p) < (1 << 20))
            .unwrap_or(&a.target[0]);
        bail!(
            "--target {}: missing, unreadable or smaller than 1 MiB; the study needs existing files or devices (create files with `ssdlab run --target FILE --span SIZE` first)",
            p.display()
        );
    }
    let names: Vec<String> = a.target.iter().map(|p| plain(p)).collect();
    let shown: Vec<String> = a.target.iter().map(|p| p.display().to_string()).collect();
    // a sweep file is UTF-8: the members as their lossy text
    let members: Vec<PathBuf> = a
        .target
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

/// The sweep of the alignment study.
fn alignment_sweep(a: &StudyArgs) -> Result<SweepFile> {
    for (flag, given) in [
        ("--preset", a.preset.is_some()),
        ("--target", !a.target.is_empty()),
        ("--stripes", a.stripes.is_some()),
    ] {
        if given {
            bail!("{flag} applies to the stripe study; the alignment study compares the seven classic drive presets");
        }
    }
    let qds = a.qd.clone().map_or(vec![3], |q| q.0);
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
fn study_files(spec: &SweepSpec, db: &Path) -> Vec<(String, PathBuf)> {
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

/// `ssdlab study`.
pub fn cmd_study(a: StudyArgs) -> Result<u8, Failure> {
    let Some((name, _)) = STUDIES.iter().find(|s| s.0 == a.name) else {
        let known: Vec<String> = STUDIES
            .iter()
            .map(|s| format!("{} ({})", s.0, s.1))
            .collect();
        return Err(anyhow!(
            "unknown study '{}'; built-in studies: {}",
            a.name,
            known.join(", ")
        )
        .into());
    };
    let mix = a.mix.as_deref().map(parse_mix).transpose()?;
    if let Some(p) = &a.preset {
        match preset_file(p) {
            // a preset file (a calibrated model from `ssdlab calibrate`) for the stripe study
            Some(_) if *name == "trim" => {
                return Err(anyhow!(
                    "--preset {p}: the trim study takes a preset name (see `ssdlab drives`)"
                )
                .into())
            }
            Some(_) => {
                ssdlab_engine::load_drive(p).map_err(|e| anyhow!("--preset {p}: {e}"))?;
            }
            None => {
                ssdlab_ssdsim::load_preset(p).map_err(|e| anyhow!("--preset: {e}"))?;
            }
        }
    }
    if *name == "trim" {
        return trim::cmd_study_trim(&a.trim_args()?);
    }
    if let Some(flag) = a.trim_flag() {
        return Err(anyhow!("{flag} applies to the trim study (ssdlab study trim)").into());
    }
    let sweep = match *name {
        "stripe" => stripe_sweep(&a)?,
        _ => alignment_sweep(&a)?,
    };
    let spec = sweep
        .spec_from_flags(Path::new("."))
        .map_err(|e| anyhow!("built-in study {name}: {e}"))?;
    if let Some(m) = &mix {
        spec.check_mix(m)?;
    }
    let db = a.db.clone().unwrap_or_else(|| study_db(&spec));
    check_db(&db, &spec, None)?;
    let html = a.html.clone().unwrap_or_else(|| {
        if a.db.is_some() {
            db.with_extension("html")
        } else {
            PathBuf::from(format!("ssdlab-{}.html", spec.name))
        }
    });
    check_html(&html, &study_files(&spec, &db))?;
    let runner = point_runner(a.allow_destroy, a.max_memory);
    let checked = check_sweep(&spec, &runner, a.jobs, a.max_memory).map_err(check_failure)?;
    let code = run_spec(
        &spec,
        &db,
        checked.jobs,
        false,
        &|p| runner.run(p),
        signals::stop_flag(),
        None,
    )?;
    if code != 0 {
        return Ok(code);
    }
    // the models' standing against the classic reviews' findings, kept in the store for `report`
    crate::standing::check_study(&db, &spec).map_err(|e| anyhow!("{}: {e}", db.display()))?;
    report_store(&ReportArgs {
        db,
        csv: None,
        mix: a.mix,
        qd: None,
        sweep: Some(spec.name.clone()),
        json: false,
        fio_json: None,
        html: Some(html),
    })
}

/// Checks for the parsers (unit tests).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::store_report::target_infos;

    #[test]
    fn lists() {
        assert_eq!(qd_list("1,2, 32").unwrap(), [1, 2, 32]);
        assert!(qd_list("1,1").unwrap_err().contains("twice"));
        assert!(qd_list("0").is_err());
        assert_eq!(stripe_list("4k,128k").unwrap(), [4096, 131072]);
        assert!(stripe_list("12k").unwrap_err().contains("power of two"));
        assert!(stripe_list("512").is_err());
        assert!(time_arg("0s").is_err());
        assert_eq!(plain(Path::new("/x/my disk.img")), "my_disk.img");
    }

    fn args(name: &str) -> StudyArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            a: StudyArgs,
        }
        P::parse_from(["x", name]).a
    }

    #[test]
    fn default_studies_parse() {
        let s = stripe_sweep(&args("stripe"))
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

        let s = alignment_sweep(&args("alignment"))
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
        let infos = target_infos(&s);
        let c300 = infos.iter().find(|i| i.label == "C300").unwrap();
        assert_eq!(c300.unaligned.as_deref(), Some("rmw"));
        let x25m = infos.iter().find(|i| i.label == "X25-M G2").unwrap();
        assert_eq!(x25m.unaligned.as_deref(), Some("remap"));
        // half the measured time when that is shorter
        let s = alignment_sweep(&args_of(&["alignment", "--time", "4s", "--qd", "1,32"]))
            .unwrap()
            .spec_from_flags(Path::new("."))
            .unwrap();
        assert_eq!(s.qds, [1, 32]);
        assert_eq!(s.workloads[0].spec.ramp_ns, 2_000_000_000);
        assert!(s.description.unwrap().contains("QD 1, 32"));
    }

    /// On real members: the first alone is the baseline, the span fits the smallest.
    #[test]
    fn stripe_study_on_real_members() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.img");
        let b = dir.path().join("b.img");
        std::fs::File::create(&a).unwrap().set_len(3 << 20).unwrap();
        std::fs::File::create(&b).unwrap().set_len(5 << 20).unwrap();
        let list = format!("{},{}", a.display(), b.display());
        let s = stripe_sweep(&args_of(&["stripe", "--target", &list]))
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
        assert_eq!(s.targets[1].kind, PointTarget::Real { paths: vec![a, b] });
        assert_eq!(s.targets[1].stripes, REVIEW_STRIPES);
        let e = stripe_sweep(&args_of(&["stripe", "--target", &list.replace(',', "")]));
        assert!(e.unwrap_err().to_string().contains("two or more members"));
    }

    fn args_of(argv: &[&str]) -> StudyArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            a: StudyArgs,
        }
        P::parse_from(std::iter::once("x").chain(argv.iter().copied())).a
    }
}
