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
use ssdlab_sweep::parse_mix;
use ssdlab_sweep::study::trim::TrimOptions;
use ssdlab_sweep::study::{alignment_sweep, stripe_sweep, study_files, StudyOptions, STUDIES};
use ssdlab_workload::{format_size, parse_duration, AllocPolicy};
use std::path::{Path, PathBuf};

mod trim;

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

    /// The options of the stripe and alignment studies' sweeps.
    fn study_options(&self) -> StudyOptions {
        StudyOptions {
            preset: self.preset.clone(),
            targets: self.target.clone(),
            stripes: self.stripes.clone().map(|s| s.0),
            qds: self.qd.clone().map(|q| q.0),
            time: self.time.clone(),
            repeats: self.repeats,
        }
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
            study: TrimOptions {
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
            },
            json: self.json,
            max_memory: self.max_memory,
        })
    }
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
    let opts = a.study_options();
    let sweep = match *name {
        "stripe" => stripe_sweep(&opts),
        _ => alignment_sweep(&opts),
    }
    .map_err(|e| anyhow!(e))?;
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
    if *name == "stripe" && opts.targets.is_empty() {
        let code = run_check(&sweep, &spec, &db, &runner, a.jobs, a.max_memory)?;
        if code != 0 {
            return Ok(code);
        }
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

/// The simulated stripe study's stability check (`Analysis::attach_check`): the stripes
/// within 5 % of the best of each workload whose pick is not a tie of every stripe, run again
/// at twice the time per point with another seed, into the same store as the sweep
/// `MAIN-check`; the report folds it into the study's picks. Nothing runs when every pick is a
/// tie of all stripes.
fn run_check(
    sweep: &ssdlab_sweep::SweepFile,
    spec: &ssdlab_sweep::SweepSpec,
    db: &Path,
    runner: &ssdlab_sweep::PointRunner,
    jobs: Option<usize>,
    max_memory: Option<u64>,
) -> Result<u8, Failure> {
    let store = ssdlab_store::Store::open_existing(db, true).map_err(crate::exit::store_failure)?;
    let Some(s) = store
        .sweeps()
        .map_err(crate::exit::store_failure)?
        .into_iter()
        .find(|s| s.name == spec.name)
    else {
        return Ok(0);
    };
    let points = store.points(s.id).map_err(crate::exit::store_failure)?;
    drop(store);
    let analysis = ssdlab_sweep::Analysis::new(&spec.name, &points);
    let mut workloads = Vec::new();
    let mut stripes: Vec<u64> = Vec::new();
    for t in analysis.array_targets() {
        for w in &analysis.workloads {
            let c = analysis.contenders(&t, w);
            if c.is_empty() {
                continue;
            }
            if !workloads.contains(w) {
                workloads.push(w.clone());
            }
            for x in c {
                if !stripes.contains(&x) {
                    stripes.push(x);
                }
            }
        }
    }
    if workloads.is_empty() {
        return Ok(0);
    }
    // in the study's order of stripes
    let order = analysis
        .array_targets()
        .first()
        .map(|t| analysis.stripes(t));
    if let Some(order) = order {
        stripes.sort_by_key(|x| order.iter().position(|o| o == x));
    }
    let (check, _) = ssdlab_sweep::study::stripe_check_sweep(sweep, &workloads, &stripes)
        .map_err(|e| anyhow!(e))?;
    let cspec = check
        .spec_from_flags(Path::new("."))
        .map_err(|e| anyhow!("stability check of {}: {e}", spec.name))?;
    check_db(db, &cspec, None)?;
    let checked = check_sweep(&cspec, runner, jobs, max_memory).map_err(check_failure)?;
    run_spec(
        &cspec,
        db,
        checked.jobs,
        false,
        &|p| runner.run(p),
        signals::stop_flag(),
        None,
    )
}

/// Checks for the parsers and the options they give the studies' sweeps (unit tests; the sweeps
/// themselves are checked in `ssdlab_sweep::study`).
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

    #[test]
    fn study_options() {
        assert_eq!(
            args_of(&["stripe"]).study_options(),
            StudyOptions::default()
        );
        let o = args_of(&[
            "stripe",
            "--target",
            "a.img,b.img",
            "--stripes",
            "4k,128k",
            "--qd",
            "1,32",
            "--time",
            " 3s",
            "--repeats",
            "2",
        ])
        .study_options();
        assert_eq!(
            o,
            StudyOptions {
                preset: None,
                targets: vec!["a.img".into(), "b.img".into()],
                stripes: Some(vec![4096, 131072]),
                qds: Some(vec![1, 32]),
                time: Some("3s".into()),
                repeats: Some(2),
            }
        );
    }

    /// The report's view of the alignment study's drives: their unaligned-write policies.
    #[test]
    fn alignment_study_targets() {
        let s = alignment_sweep(&args_of(&["alignment"]).study_options())
            .unwrap()
            .spec_from_flags(Path::new("."))
            .unwrap();
        let infos = target_infos(&s);
        let c300 = infos.iter().find(|i| i.label == "C300").unwrap();
        assert_eq!(c300.unaligned.as_deref(), Some("rmw"));
        let x25m = infos.iter().find(|i| i.label == "X25-M G2").unwrap();
        assert_eq!(x25m.unaligned.as_deref(), Some("remap"));
    }
}
