//! `mpirun -n N ssdlab run …`: one rank of a job. Each rank plans its own target (placeholders
//! expanded, its segment) and checks it before the first byte; the ranks agree, start and stop
//! together, and rank 0 prints the aggregate and the per-rank table.

use super::*;

use ssdlab_cluster::{JobOptions, LocalRun, RankCheck, RankFailure, RankInfo, Transport};
use ssdlab_workload::WorkloadSpec;
use std::sync::atomic::AtomicBool;

/// Most ranks listed in the per-rank table (the slowest ones when there are more).
const RANK_ROWS: usize = 64;

/// What one rank runs, checked.
struct RankPlan {
    spec: WorkloadSpec,
    target: RankTarget,
    /// The target's identity (for ranks of one host writing the same target).
    identity: Option<String>,
    /// The --ios/--bytes budget in I/Os.
    budget: Option<u64>,
    /// `--segment-per-rank` on a real target: the whole region, laid out by rank 0 first.
    whole: Option<WorkloadSpec>,
    max_memory: Option<u64>,
}

enum RankTarget {
    Sim(Box<SimTarget>),
    Real(RealTarget),
}

/// Options of a real run from the command line (the hook and the flags are the job's).
fn rank_real_options<'a>(
    a: &'a RunArgs,
    me: &RankInfo,
    max_memory: Option<u64>,
) -> RealOptions<'a> {
    fn quiet(_: &str) {}
    RealOptions {
        on_note: if me.rank == 0 { output::note } else { quiet },
        fault: a
            .inject_fault
            .filter(|_| fault_rank().is_none_or(|r| r == me.rank)),
        stop: Some(signals::stop_flag()),
        max_memory,
        ..flags(a).real_options()
    }
}

/// Tests inject a fault on one rank only: `SSDLAB_FAULT_RANK=R` with the hidden --inject-fault.
fn fault_rank() -> Option<usize> {
    std::env::var("SSDLAB_FAULT_RANK").ok()?.parse().ok()
}

fn failure_of(f: Failure) -> RankFailure {
    RankFailure {
        code: f.code,
        message: crate::cli::one_line(&format!("{:#}", f.err)),
        because_of_others: false,
    }
}

/// Who a path is, to compare ranks' targets: the canonical path (of the parent directory for a
/// path not created yet).
fn path_identity(p: &Path) -> String {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c.display().to_string();
    }
    let parent = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match std::fs::canonicalize(parent) {
        Ok(d) => d
            .join(p.file_name().unwrap_or_default())
            .display()
            .to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// Everything this rank checks before the first byte: flags, its own target (placeholders
/// expanded, its segment), outputs (rank 0), the engine's checks and its share of the memory.
fn plan_rank(a: &RunArgs, me: &RankInfo) -> Result<RankPlan, Failure> {
    check_flags(a)?;
    let mut spec = a.workload.to_spec()?;
    // Rank r draws its own offsets and data: seed + r (rank 0 runs what one process would).
    spec.seed = spec.seed.wrapping_add(me.rank as u64);
    let named: Vec<String> = a
        .target
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .chain(a.raid0.iter().cloned())
        .collect();
    let templated = named
        .iter()
        .any(|p| ssdlab_cluster::rank::has_placeholder(p));
    if a.segment_per_rank && templated {
        return Err(anyhow!("--segment-per-rank shares one target among the ranks; drop {{rank}}, {{host}} and {{local_rank}} from its path").into());
    }
    // The ranks of a host share its memory.
    let share =
        ssdlab_io::memory::limit(a.max_memory).map(|l| l.bytes / me.local_size.max(1) as u64);
    let budget = crate::cli::budget_ios(&spec);
    let dest = a.out.dest();
    if a.logs.request()?.is_some() {
        return Err(anyhow!(
            "--write-bw-log, --write-iops-log and --write-lat-log log the jobs of one process; they do not apply to runs on several ranks"
        )
        .into());
    }
    // --table-style with another format is refused on every rank alike.
    a.out.exporter()?;
    let mut outputs: Vec<Named<'_>> = Vec::new();
    if me.rank == 0 {
        if let Some(path) = &a.html {
            check_writable_path("--html", path).map_err(|e| anyhow!(e))?;
            outputs.push(Named {
                role: "--html",
                path,
            });
        }
        if let Some(p) = dest.file() {
            check_writable_path("--output", p).map_err(|e| anyhow!(e))?;
            outputs.push(Named {
                role: "--output",
                path: p,
            });
        }
        if let Some(path) = &a.store {
            if !path.exists() {
                check_writable_path("--store", path).map_err(|e| anyhow!(e))?;
            } else {
                let st = ssdlab_store::Store::open(path).map_err(crate::exit::store_failure)?;
                st.require_writable("the run must be stored")
                    .map_err(crate::exit::store_failure)?;
            }
            outputs.push(Named {
                role: "--store",
                path,
            });
        }
        if let Some(path) = &a.verify_map {
            check_writable_path("--verify-map", path).map_err(|e| anyhow!(e))?;
            outputs.push(Named {
                role: "--verify-map",
                path,
            });
        }
    }
    let segment = |spec: &mut WorkloadSpec, total: u64| -> Result<()> {
        let (off, span) =
            ssdlab_cluster::rank::segment(spec.offset, total, me.size, me.rank, spec.align)
                .map_err(|e| anyhow!(e))?;
        spec.offset = off;
        spec.span = Some(span);
        Ok(())
    };
    if a.sim.is_some() {
        if a.load_state.is_some() || a.save_state.is_some() {
            return Err(anyhow!(
                "--load-state and --save-state apply to runs in one process, not to the ranks of an MPI job"
            )
            .into());
        }
        if a.precondition.is_some() || a.steady_state {
            return Err(anyhow!(
                "--precondition and --steady-state apply to runs in one process, not to the ranks of an MPI job"
            )
            .into());
        }
        let t = run_sim_target(a, &outputs)?;
        if a.segment_per_rank {
            let per = spec.span.ok_or_else(|| {
                anyhow!("--segment-per-rank on a simulated drive needs --span (each rank's slice)")
            })?;
            segment(&mut spec, per.saturating_mul(me.size as u64))?;
        }
        ssdlab_engine::check_sim_run(&spec, &t, share).map_err(engine_failure)?;
        return Ok(RankPlan {
            spec,
            target: RankTarget::Sim(Box::new(t)),
            identity: None,
            budget,
            whole: None,
            max_memory: share,
        });
    }
    let mut target = real_target(a)?;
    let expand = |p: &Path| -> Result<PathBuf> {
        ssdlab_cluster::rank::expand(&p.to_string_lossy(), me)
            .map(PathBuf::from)
            .map_err(|e| anyhow!(e))
    };
    match &mut target {
        RealTarget::Path(p) => *p = expand(p)?,
        RealTarget::Raid0 { members, .. } => {
            for m in members.iter_mut() {
                if let Member::Path(p) = m {
                    *p = expand(p)?;
                }
            }
        }
        RealTarget::Files(ps) => {
            for p in ps.iter_mut() {
                *p = expand(p)?;
            }
        }
        RealTarget::Null => {}
    }
    check_target_inputs(&outputs, &target)?;
    let opts = rank_real_options(a, me, share);
    let mut whole = None;
    if a.segment_per_rank {
        let total = match spec.span {
            Some(per) => per.saturating_mul(me.size as u64),
            None => {
                // The region from --offset to the end of the target, split in equal slices.
                ssdlab_target::plan(
                    &spec,
                    &target,
                    &ssdlab_target::PlanOptions {
                        direct: opts.direct,
                        allow_destroy: opts.allow_destroy,
                        null_size: opts.null_size,
                        create_dirs: false,
                    },
                )
                .map_err(|e| engine_failure(e.into()))?
                .span
            }
        };
        let mut w = spec.clone();
        w.span = Some(total);
        segment(&mut spec, total)?;
        ssdlab_engine::check_real(&w, &target, &opts).map_err(engine_failure)?;
        whole = Some(w);
    }
    ssdlab_engine::check_real(&spec, &target, &opts).map_err(engine_failure)?;
    let identity = (!target.paths().is_empty()).then(|| {
        target
            .paths()
            .iter()
            .map(|p| path_identity(p))
            .collect::<Vec<_>>()
            .join(",")
    });
    Ok(RankPlan {
        spec,
        target: RankTarget::Real(target),
        identity,
        budget,
        whole,
        max_memory: share,
    })
}

/// `ssdlab run` as one rank of a job: every rank checks its own target, they start together and
/// stop together, and rank 0 prints the aggregate and the per-rank table. Returns this rank's
/// exit code (the job's is rank 0's: see `ssdlab_cluster::finish`).
pub fn run_on_ranks<T: Transport>(a: RunArgs, t: &T, me: &RankInfo) -> Result<u8, Failure> {
    let stop = signals::stop_flag();
    let halt = AtomicBool::new(false);
    let planned = plan_rank(&a, me);
    let checked = RankCheck {
        host: me.host.clone(),
        identity: planned.as_ref().ok().and_then(|p| p.identity.clone()),
        result: planned.as_ref().map(|_| ()).map_err(|_| RankFailure {
            code: 0,
            message: String::new(),
            because_of_others: false,
        }),
    };
    let (plan, checked) = match planned {
        Ok(p) => (Some(p), checked),
        Err(f) => (
            None,
            RankCheck {
                result: Err(failure_of(f)),
                ..checked
            },
        ),
    };
    let spec = plan.as_ref().map(|p| p.spec.clone()).unwrap_or_default();
    let writes = spec.writes();
    let target_name = match (&a.sim, &a.target) {
        (Some(s), _) => s.clone(),
        (None, Some(p)) => p.display().to_string(),
        _ if !a.raid0.is_empty() => a.raid0.join(","),
        _ => "null".into(),
    };
    let opts = JobOptions {
        stonewall: a.stonewall,
        stop,
        halt: &halt,
        unique_targets: writes && !a.segment_per_rank,
        target_name,
        segments: a.segment_per_rank,
    };
    let prepare = || -> Result<(), RankFailure> {
        let Some(p) = &plan else { return Ok(()) };
        let (Some(whole), RankTarget::Real(target)) = (&p.whole, &p.target) else {
            return Ok(());
        };
        let po = ssdlab_target::PlanOptions {
            direct: !a.buffered,
            allow_destroy: a.allow_destroy,
            null_size: 1 << 40,
            create_dirs: false,
        };
        let fail = |e: EngineError| failure_of(engine_failure(e));
        let planned = ssdlab_target::plan(whole, target, &po).map_err(|e| fail(e.into()))?;
        if planned.layout_bytes() > 0 {
            let laid = planned
                .lay_out(Some(stop), &|n: &str| output::note(n))
                .map_err(|e| fail(EngineError::Layout(e)))?;
            laid.commit();
        }
        Ok(())
    };
    let run = |hook: &(dyn Fn(bool) -> Result<(), String> + Sync)| -> LocalRun {
        let Some(p) = &plan else {
            return LocalRun::Failed(RankFailure {
                code: EXIT_BAD_INPUT,
                message: "not checked".into(),
                because_of_others: true,
            });
        };
        let hook = ssdlab_engine::StartHook(hook);
        let out = match &p.target {
            RankTarget::Sim(t) => ssdlab_engine::run_sim_recorded(
                &p.spec,
                t,
                None,
                &SimOptions {
                    stop: Some(stop),
                    max_memory: p.max_memory,
                    start_hook: Some(hook),
                    stonewall: Some(&halt),
                    ..Default::default()
                },
            ),
            RankTarget::Real(t) => {
                let mut o = rank_real_options(&a, me, p.max_memory);
                o.start_hook = Some(hook);
                o.stonewall = Some(&halt);
                ssdlab_engine::run_real(&p.spec, t, &o).map(|o| (o.result, o.recorder))
            }
        };
        match out {
            Ok((result, recorder)) => LocalRun::Ran {
                result: Box::new(result),
                recorder: Box::new(recorder),
                budget_ios: p.budget,
            },
            Err(e) => LocalRun::Failed(failure_of(engine_failure(e))),
        }
    };
    let Some(end) = ssdlab_cluster::run_job(t, me, &spec, &opts, checked, prepare, run) else {
        return Ok(0);
    };
    let Some(job) = &end.result else {
        let (code, msg) = end
            .failures
            .first()
            .cloned()
            .unwrap_or((EXIT_FAILED, "the job ended without results".into()));
        return Err(Failure::new(code, anyhow!(msg)));
    };
    let mut store = None;
    keep(
        &mut store,
        a.store.as_deref(),
        a.label.as_deref(),
        &job.aggregate,
    )?;
    let sim = plan.as_ref().and_then(|p| match &p.target {
        RankTarget::Sim(t) => Some(t.as_ref()),
        RankTarget::Real(_) => None,
    });
    let results = std::slice::from_ref(&job.aggregate);
    let serialized = match a.out.format() {
        // The aggregate, then the table of ranks (and hosts).
        Format::Table => a.out.exporter()?.serialize(results).map(|mut b| {
            b.extend_from_slice(job.render(RANK_ROWS).as_bytes());
            b
        }),
        // fio's JSON of the aggregate, the ranks under its "ssdlab" object.
        Format::Json => Ok(job.fio_json_string().into_bytes()),
        Format::Html => html_exporter(sim).serialize(results),
        _ => a.out.exporter()?.serialize(results),
    };
    let bytes = serialized.map_err(|e| Failure::new(EXIT_FAILED, e))?;
    a.out
        .dest()
        .write_bytes(&bytes)
        .map_err(|e| Failure::new(EXIT_FAILED, anyhow!("cannot write the results: {e}")))?;
    write_html(a.html.as_deref(), sim, &job.aggregate)?;
    for (_, f) in end.failures.iter().take(8) {
        output::note(&format!("error: {f}"));
    }
    if end.failures.len() > 8 {
        output::note(&format!(
            "error: … and {} more ranks failed",
            end.failures.len() - 8
        ));
    }
    Ok(if !end.failures.is_empty() {
        EXIT_FAILED
    } else {
        exit_code_for(&job.aggregate)
    })
}
