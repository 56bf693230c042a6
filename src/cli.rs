//! Command-line parsing and dispatch.

use anyhow::{anyhow, Context, Result};
use clap::{Args, Parser, Subcommand};
use ssdlab_engine::{EngineChoice, Member, RealOptions, RealTarget, SimTarget};
use ssdlab_stats::RunResult;
use ssdlab_workload::{parse_duration, parse_size, Pattern, RwMode, StopCondition, WorkloadSpec};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Raised by the signal handler: runs drain and report, sweeps stop starting points.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Exit code for bad input (usage errors, unusable targets).
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code when the run finished but I/O errors happened.
const EXIT_IO_ERRORS: u8 = 1;
/// Exit code when the run was interrupted with Ctrl-C (results are still printed).
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser, Debug)]
#[command(
    name = "ssdlab",
    version,
    about = "Measure drives and files like fio/Iometer, simulate SSDs and RAID 0 arrays",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run one workload against a file, a block device, a RAID 0 stripe set, the null target, or a
    /// simulated drive or array (--sim).
    Run(Box<RunArgs>),
    /// List the simulated drive presets with their sources.
    Drives(DrivesArgs),
    /// Show where a logical range of a RAID 0 array lands on its members (md raid0 layout).
    Layout(LayoutArgs),
    /// Run a sweep file (targets × stripes × workloads × queue depths) into a results store.
    Sweep(crate::cmd_sweep::SweepArgs),
    /// Print gains, best stripes and recommendations from a results store.
    Report(crate::cmd_sweep::ReportArgs),
    /// Run a built-in simulated study (a classic review test) and print its report.
    Study(StudyArgs),
}

/// The built-in studies: name, description, sweep template (`@PRESET@` = the drive).
const STUDIES: [(&str, &str, &str); 2] = [
    (
        "stripe",
        "single drive vs RAID 0 of two, stripes 4k–128k, 4 workloads × QD 1–32 (144 points)",
        include_str!("studies/stripe.toml"),
    ),
    (
        "alignment",
        "4 KiB random writes at 4 KiB vs 512 B alignment on rmw and remap controllers",
        include_str!("studies/alignment.toml"),
    ),
];

#[derive(Args, Debug)]
struct StudyArgs {
    /// Which study: stripe or alignment.
    #[arg(default_value = "stripe")]
    name: String,
    /// Drive preset for studies of one drive model (the stripe study).
    #[arg(long, default_value = "vertex450-128g")]
    preset: String,
    /// Results store; default ssdlab-<study>.sqlite in the current directory (resumes if present).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Parallel workers (default: all cores).
    #[arg(long, value_parser = positive_u32)]
    jobs: Option<u32>,
    /// Recommend a stripe for this workload mix, e.g. 4k-randread=0.7,128k-seqwrite=0.3.
    #[arg(long)]
    mix: Option<String>,
}

#[derive(Args, Debug)]
struct DrivesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct LayoutArgs {
    /// Member sizes, in order (e.g. 1t,1t or 120g,120g,250g).
    #[arg(long, value_delimiter = ',', required = true, value_parser = positive_size_arg)]
    members: Vec<u64>,
    /// Stripe (chunk) size.
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    stripe: u64,
    /// Block size the stripe must be a multiple of.
    #[arg(long, default_value = "512", value_parser = positive_size_arg)]
    block_size: u64,
    /// Logical offset of the range.
    #[arg(value_parser = size_arg, allow_hyphen_values = true)]
    offset: u64,
    /// Length of the range.
    #[arg(value_parser = positive_size_arg, allow_hyphen_values = true)]
    len: u64,
    /// Print JSON instead of lines.
    #[arg(long)]
    json: bool,
}

fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

fn positive_size_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

fn duration_arg(s: &str) -> Result<u64, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

fn pct_arg(s: &str) -> Result<u8, String> {
    match s.trim().trim_end_matches('%').parse::<u32>() {
        Ok(v) if v <= 100 => Ok(v as u8),
        _ => Err(format!("'{s}' is not a percentage (0..100)")),
    }
}

fn positive_u32(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

fn positive_u64(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err(format!("'{s}' must be greater than 0")),
        Ok(v) => Ok(v),
        Err(_) => Err(format!("'{s}' is not a positive whole number")),
    }
}

fn rw_arg(s: &str) -> Result<RwMode, String> {
    s.parse::<RwMode>().map_err(|e| e.to_string())
}

fn pattern_arg(s: &str) -> Result<Pattern, String> {
    s.parse::<Pattern>()
}

/// The workload options shared by every command that runs I/O.
#[derive(Args, Debug, Clone)]
struct WorkloadArgs {
    /// I/O pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, default_value = "randread", value_parser = rw_arg)]
    rw: RwMode,
    /// Percentage of reads in a mixed workload (rw/randrw); default 50.
    #[arg(long, value_parser = pct_arg, allow_hyphen_values = true)]
    read_pct: Option<u8>,
    /// Percentage of random offsets (fio's percentage_random); default from --rw.
    #[arg(long, value_parser = pct_arg, allow_hyphen_values = true)]
    random_pct: Option<u8>,
    /// Transfer size (512, 4k, 128KiB, 1m).
    #[arg(long, default_value = "4k", value_parser = positive_size_arg, allow_hyphen_values = true)]
    bs: u64,
    /// Offset alignment (fio's blockalign); default = --bs. 512 gives sector-aligned I/O.
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    align: Option<u64>,
    /// Start of the region on the target.
    #[arg(long, default_value = "0", value_parser = size_arg, allow_hyphen_values = true)]
    offset: u64,
    /// Length of the region; default from --offset to the end of the target.
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    span: Option<u64>,
    /// Outstanding I/Os per worker (queue depth).
    #[arg(long, default_value = "1", value_parser = positive_u32, allow_hyphen_values = true)]
    qd: u32,
    /// Number of workers.
    #[arg(long, default_value = "1", value_parser = positive_u32, allow_hyphen_values = true)]
    jobs: u32,
    /// Stop after this much measured time (500ms, 30s, 3m). Default 10s when no stop is given.
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true)]
    time: Option<u64>,
    /// Stop after this many I/Os (all workers together).
    #[arg(long, value_parser = positive_u64, allow_hyphen_values = true)]
    ios: Option<u64>,
    /// Stop after this many bytes (all workers together).
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    bytes: Option<u64>,
    /// Warm-up time excluded from the results.
    #[arg(long, default_value = "0", value_parser = duration_arg, allow_hyphen_values = true)]
    ramp: u64,
    /// Data written: random (refilled per write), zeros, repeat[:BYTE], compress:N.
    #[arg(long, default_value = "random", value_parser = pattern_arg)]
    pattern: Pattern,
    /// Seed of the offset and data streams (same seed → same offsets).
    #[arg(long, default_value_t = 0x5eed_1ab5)]
    seed: u64,
    /// Writes carry per-sector headers (offset, generation, seed, CRC32C); reads check them.
    #[arg(long)]
    verify: bool,
}

impl WorkloadArgs {
    fn to_spec(&self) -> Result<WorkloadSpec> {
        let read_pct = match (self.rw.fixed_read_pct(), self.read_pct) {
            (Some(_), Some(_)) => {
                return Err(anyhow!(ssdlab_workload::SpecError::ReadPctFixed(self.rw)))
            }
            (Some(fixed), None) => fixed,
            (None, given) => given.unwrap_or(50),
        };
        let mut stop = StopCondition {
            time_ns: self.time,
            ios: self.ios,
            bytes: self.bytes,
        };
        if stop.is_unbounded() {
            stop.time_ns = Some(ssdlab_workload::spec::DEFAULT_TIME_NS);
        }
        let spec = WorkloadSpec {
            rw: self.rw,
            read_pct,
            random_pct: self.random_pct.unwrap_or(self.rw.default_random_pct()),
            bs: self.bs,
            align: self.align.unwrap_or(self.bs),
            offset: self.offset,
            span: self.span,
            qd: self.qd,
            jobs: self.jobs,
            stop,
            ramp_ns: self.ramp,
            pattern: self.pattern,
            seed: self.seed,
            verify: self.verify,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// How results are printed.
#[derive(Args, Debug, Clone)]
struct OutputArgs {
    /// Print one JSON document in fio's shape (ssdlab's extras under "ssdlab").
    #[arg(long)]
    json: bool,
    /// Write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// File or block device to test. A missing file is created (needs --span); a short one is
    /// extended with data; nothing is ever truncated.
    #[arg(long, value_name = "PATH", required_unless_present_any = ["null", "raid0", "sim"], conflicts_with_all = ["null", "raid0", "sim"])]
    target: Option<PathBuf>,
    /// Use the null target: I/O completes at once; measures ssdlab's own overhead.
    #[arg(long, conflicts_with_all = ["raid0", "sim"])]
    null: bool,
    /// Simulate a drive: a preset name (see `ssdlab drives`) or a preset TOML file.
    #[arg(long, value_name = "PRESET", conflicts_with = "raid0")]
    sim: Option<String>,
    /// Number of simulated drives; more than one builds a RAID 0 array with --stripe.
    #[arg(long, default_value = "1", value_parser = positive_u32, requires = "sim")]
    drives: u32,
    /// State of the simulated drive before the run: fresh (trimmed), full, steady (random-written).
    #[arg(long, default_value = "fresh", requires = "sim")]
    state: String,
    /// Override a preset parameter, e.g. --set ftl.mapping_unit=512 --set nand.channels=4.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "sim")]
    sets: Vec<String>,
    /// Shared uplink bandwidth of the simulated host adapter in bytes/s (e.g. 1600m for DMI 1.0).
    #[arg(long, value_parser = positive_size_arg, requires = "sim")]
    uplink: Option<u64>,
    /// Per-request driver/adapter overhead of the simulated host adapter.
    #[arg(long, default_value = "0", value_parser = duration_arg, requires = "sim")]
    adapter_overhead: u64,
    /// TRIM does not reach the simulated array's members (old chipset RAID).
    #[arg(long, requires = "sim")]
    no_trim_passthrough: bool,
    /// A userspace RAID 0 stripe set over these members (files, block devices, or null:SIZE),
    /// laid out like Linux md raid0.
    #[arg(long, value_name = "A,B[,C…]", value_delimiter = ',')]
    raid0: Vec<String>,
    /// Stripe (chunk) size of --raid0 or of a simulated array (mdadm's default is 512k).
    #[arg(long, default_value = "512k", value_parser = size_arg, allow_hyphen_values = true)]
    stripe: u64,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// I/O engine: auto (io_uring, else sync), io_uring, sync.
    #[arg(long, default_value = "auto", value_parser = ["auto", "io_uring", "sync"])]
    engine: String,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    buffered: bool,
    /// io_uring: submit as soon as N I/Os are queued (fio's iodepth_batch_submit); 0 = one system
    /// call per batch of refills.
    #[arg(long, default_value = "1", value_name = "N")]
    submit_batch: u32,
    /// Allow writes to a block device (devices with a filesystem, partitions or users are still refused).
    #[arg(long)]
    allow_destroy: bool,
    /// Keep going after I/O errors (they are counted and reported).
    #[arg(long)]
    continue_on_error: bool,
    /// Inject a fault for testing error handling: eio@N, enospc@N, short@N (N-th I/O; +EVERY repeats).
    #[arg(long, hide = true, value_parser = |s: &str| s.parse::<ssdlab_engine::FaultPlan>())]
    inject_fault: Option<ssdlab_engine::FaultPlan>,
    #[command(flatten)]
    out: OutputArgs,
}

/// A failure with the exit code it maps to.
struct Failure {
    code: u8,
    err: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            code: EXIT_BAD_INPUT,
            err: e.into(),
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    install_interrupt_handler();
    let res = match cli.cmd {
        Cmd::Run(a) => cmd_run(*a),
        Cmd::Drives(a) => cmd_drives(a),
        Cmd::Layout(a) => cmd_layout(a),
        Cmd::Sweep(a) => crate::cmd_sweep::cmd_sweep_checked(a, &run_point, &STOP, &|s| {
            s.check_presets(&ssdlab_ssdsim::preset_names())
                .map_err(Into::into)
        })
        .map_err(Failure::from),
        Cmd::Report(a) => crate::cmd_sweep::cmd_report(a).map_err(Failure::from),
        Cmd::Study(a) => cmd_study(a),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("ssdlab: error: {:#}", f.err);
            ExitCode::from(f.code)
        }
    }
}

fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if STOP.load(std::sync::atomic::Ordering::SeqCst) {
            // A second Ctrl-C: give up at once.
            std::process::exit(EXIT_INTERRUPTED as i32);
        }
        eprintln!("ssdlab: interrupted; draining in-flight I/O and printing results so far (Ctrl-C again to quit at once)");
        STOP.store(true, std::sync::atomic::Ordering::SeqCst);
    });
}

/// Checks that an output path is creatable as a regular file before any work starts.
fn check_output_path(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(anyhow!(
            "--output {}: exists and is not a regular file",
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if parent.is_dir() {
                Ok(())
            } else {
                Err(anyhow!(
                    "--output {}: directory {} does not exist",
                    path.display(),
                    parent.display()
                ))
            }
        }
    }
}

fn emit(out: &OutputArgs, results: &[RunResult]) -> Result<()> {
    let text = if out.json {
        ssdlab_report::fio_json_string(results)
    } else {
        results
            .iter()
            .map(ssdlab_report::render_table)
            .collect::<Vec<_>>()
            .join("\n")
    };
    match &out.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            let mut so = std::io::stdout().lock();
            so.write_all(text.as_bytes())
                .and_then(|_| so.flush())
                .context("cannot write to stdout")
        }
    }
}

fn exit_code_for(r: &RunResult) -> u8 {
    if r.interrupted {
        EXIT_INTERRUPTED
    } else if !r.errors.is_empty() {
        EXIT_IO_ERRORS
    } else {
        0
    }
}

/// Loads a preset by name, or a preset TOML file when the argument is a path to one.
fn load_drive(name: &str) -> Result<ssdlab_ssdsim::DriveConfig> {
    let p = Path::new(name);
    if (name.ends_with(".toml") || name.contains('/')) && p.exists() {
        ssdlab_ssdsim::load_config_file(p).map_err(|e| anyhow!("{e}"))
    } else {
        ssdlab_ssdsim::load_preset(name).map_err(|e| anyhow!("{e}"))
    }
}

fn sim_target(
    name: &str,
    sets: &[(String, String)],
    drives: u32,
    stripe: Option<u64>,
    state: &str,
    adapter: ssdlab_ssdsim::AdapterConfig,
) -> Result<SimTarget> {
    let mut drive = load_drive(name)?;
    for (k, v) in sets {
        drive.set(k, v).map_err(|e| anyhow!("--set {k}={v}: {e}"))?;
    }
    let state: ssdlab_ssdsim::Precondition = state.parse().map_err(|e| anyhow!("--state: {e}"))?;
    Ok(SimTarget {
        name: name.to_string(),
        drive,
        drives: drives as usize,
        stripe: if drives > 1 { stripe } else { None },
        adapter,
        state,
    })
}

type SimCell = std::sync::Arc<std::sync::OnceLock<Result<ssdlab_ssdsim::Simulator, String>>>;

/// Preconditioned simulators by drive state, shared by the sweep's worker threads.
fn sim_cache() -> &'static std::sync::Mutex<std::collections::HashMap<String, SimCell>> {
    static CACHE: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, SimCell>>,
    > = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Runs one sweep point, simulated or real.
fn run_point(p: &ssdlab_sweep::Point) -> Result<RunResult, String> {
    use ssdlab_sweep::spec::PointTarget;
    match &p.target {
        PointTarget::Sim {
            preset,
            drives,
            state,
            overrides,
        } => {
            let sets: Vec<(String, String)> = overrides
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let t = sim_target(
                preset,
                &sets,
                *drives,
                p.stripe,
                state.as_str(),
                ssdlab_ssdsim::AdapterConfig::passthrough(),
            )
            .map_err(|e| format!("{e:#}"))?;
            // Build and precondition each distinct drive state once per process; every point
            // starts from a clone of it (the same state a fresh build would give).
            let key = format!(
                "{preset}|{overrides:?}|{drives}|{}|{}",
                state.as_str(),
                p.spec.seed
            );
            let cell = {
                let mut cache = sim_cache().lock().unwrap_or_else(|e| e.into_inner());
                std::sync::Arc::clone(cache.entry(key).or_default())
            };
            let template = cell.get_or_init(|| {
                ssdlab_engine::build_sim(&t, p.spec.seed, None).map_err(|e| e.to_string())
            });
            let sim = template.as_ref().map_err(|e| e.clone())?.clone();
            ssdlab_engine::run_sim_prepared(
                &p.spec,
                &t,
                Some(sim),
                &ssdlab_engine::SimOptions {
                    stop: Some(&STOP),
                    max_memory: None,
                },
            )
            .map_err(|e| e.to_string())
        }
        PointTarget::Real { paths } => {
            let target = if paths.len() == 1 {
                RealTarget::Path(paths[0].clone())
            } else {
                RealTarget::Raid0 {
                    members: paths.iter().cloned().map(Member::Path).collect(),
                    stripe: p.stripe.ok_or("a RAID 0 point needs a stripe size")?,
                }
            };
            let opts = RealOptions {
                on_note: |n| eprintln!("ssdlab: {n}"),
                ..Default::default()
            };
            ssdlab_engine::run_real(&p.spec, &target, &opts)
                .map(|o| o.result)
                .map_err(|e| e.to_string())
        }
    }
}

fn cmd_study(a: StudyArgs) -> Result<u8, Failure> {
    let Some((name, _, template)) = STUDIES.iter().find(|s| s.0 == a.name) else {
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
    ssdlab_ssdsim::load_preset(&a.preset).map_err(|e| anyhow!("--preset: {e}"))?;
    let text = template.replace("@PRESET@", &a.preset);
    let spec = ssdlab_sweep::SweepSpec::parse(&text, Path::new("."))
        .map_err(|e| anyhow!("built-in study {name}: {e}"))?;
    let db =
        a.db.clone()
            .unwrap_or_else(|| PathBuf::from(format!("ssdlab-{}.sqlite", spec.name)));
    let code = crate::cmd_sweep::run_spec(
        &spec,
        &db,
        a.jobs.map(|j| j as usize),
        false,
        &run_point,
        &STOP,
    )?;
    if code != 0 {
        return Ok(code);
    }
    let report = crate::cmd_sweep::ReportArgs {
        db,
        csv: None,
        mix: a.mix,
        qd: None,
        sweep: Some(spec.name.clone()),
        json: false,
    };
    Ok(crate::cmd_sweep::cmd_report(report)?)
}

fn cmd_drives(a: DrivesArgs) -> Result<u8, Failure> {
    let infos: Vec<_> = ssdlab_ssdsim::preset_names()
        .into_iter()
        .filter_map(ssdlab_ssdsim::preset_summary)
        .collect();
    let text = if a.json {
        let v: Vec<serde_json::Value> = infos
            .iter()
            .map(|i| serde_json::json!({"name": i.name, "description": i.description, "sources": i.sources}))
            .collect();
        serde_json::to_string_pretty(&v)? + "\n"
    } else {
        let mut s = String::new();
        for i in &infos {
            s.push_str(&format!("{:<22} {}\n", i.name, i.description));
            for src in &i.sources {
                s.push_str(&format!("{:<22}   source: {src}\n", ""));
            }
        }
        s
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(0)
}

fn cmd_layout(a: LayoutArgs) -> Result<u8, Failure> {
    let map = ssdlab_layout::StripeMap::new(&a.members, a.stripe, a.block_size)
        .map_err(|e| anyhow!("--stripe: {e}"))?;
    let pieces: Vec<_> = map
        .try_split(a.offset, a.len)
        .map_err(|e| anyhow!("{e}"))?
        .collect();
    let text = if a.json {
        serde_json::to_string_pretty(&serde_json::json!({
            "size": map.size(),
            "stripe": map.chunk(),
            "zones": map.zones(),
            "pieces": pieces,
        }))? + "\n"
    } else {
        pieces
            .iter()
            .map(|p| format!("{} {} {}\n", p.member, p.member_offset, p.len))
            .collect()
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(0)
}

fn cmd_run(a: RunArgs) -> Result<u8, Failure> {
    let spec = a.workload.to_spec()?;
    if let Some(p) = &a.out.output {
        check_output_path(p)?;
    }
    if let Some(name) = &a.sim {
        let sets = a
            .sets
            .iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| anyhow!("--set {kv}: expected KEY=VALUE"))
            })
            .collect::<Result<Vec<_>>>()?;
        let stripe = Some(a.stripe);
        let adapter = ssdlab_ssdsim::AdapterConfig {
            uplink_bytes_per_sec: a.uplink,
            per_request_overhead_ns: a.adapter_overhead,
            trim_passthrough: !a.no_trim_passthrough,
        };
        let t = sim_target(name, &sets, a.drives, stripe, &a.state, adapter)?;
        let result = ssdlab_engine::run_sim(
            &spec,
            &t,
            &ssdlab_engine::SimOptions {
                stop: Some(&STOP),
                max_memory: None,
            },
        )?;
        emit(&a.out, std::slice::from_ref(&result))?;
        return Ok(exit_code_for(&result));
    }
    let target = if !a.raid0.is_empty() {
        let members = a
            .raid0
            .iter()
            .map(|m| match m.strip_prefix("null:") {
                Some(size) => parse_size(size)
                    .map(Member::Null)
                    .map_err(|e| anyhow!("--raid0 member {m}: {e}")),
                None if m.is_empty() => Err(anyhow!("--raid0: empty member name")),
                None => Ok(Member::Path(PathBuf::from(m))),
            })
            .collect::<Result<Vec<_>>>()?;
        RealTarget::Raid0 {
            members,
            stripe: a.stripe,
        }
    } else {
        match &a.target {
            Some(p) => RealTarget::Path(p.clone()),
            None => RealTarget::Null,
        }
    };
    let opts = RealOptions {
        engine: match a.engine.as_str() {
            "io_uring" => EngineChoice::IoUring,
            "sync" => EngineChoice::Sync,
            _ => EngineChoice::Auto,
        },
        direct: !a.buffered,
        allow_destroy: a.allow_destroy,
        continue_on_error: a.continue_on_error,
        on_note: |n| eprintln!("ssdlab: {n}"),
        fault: a.inject_fault,
        submit_batch: a.submit_batch,
        stop: Some(&STOP),
        ..Default::default()
    };
    let out = ssdlab_engine::run_real(&spec, &target, &opts)?;
    emit(&a.out, std::slice::from_ref(&out.result))?;
    Ok(exit_code_for(&out.result))
}
