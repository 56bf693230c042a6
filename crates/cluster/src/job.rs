//! One workload on every rank (`mpirun … ssdlab run`): every rank checks its target, they agree,
//! rank 0 may prepare a shared target, every rank sets up its engine, a barrier opens the
//! measured phase on all of them at once, a stop on one rank (a signal, an I/O error, the first
//! to finish its `--ios` when stonewalling) stops all of them, and rank 0 gets the merged
//! recorders (a tree reduction) and every rank's report (a gather).
//!
//! The engine runs on its own thread; the rank's main thread is the only one that talks to the
//! other ranks (MPI's "funneled" threading).

use crate::aggregate::{aggregate, JobResult, RankFailure, RankReport, RankRun};
use crate::rank::{who, RankInfo};
use crate::transport::{broadcast, gather, reduce, Tag, Transport};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use ssdlab_stats::{Recorder, RunResult, TargetDesc};
use ssdlab_workload::WorkloadSpec;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const TAG_CHECK: Tag = 10;
const TAG_CHECK_VERDICT: Tag = 11;
const TAG_PREPARE: Tag = 12;
const TAG_START: Tag = 13;
const TAG_START_VERDICT: Tag = 14;
const TAG_DONE: Tag = 15;
const TAG_CTRL: Tag = 16;
const TAG_REDUCE: Tag = 17;
const TAG_REPORT: Tag = 18;
const TAG_CODE: Tag = 19;

/// How often the main thread looks at the engine, the signal flag and the other ranks during
/// the measured phase.
const POLL: Duration = Duration::from_millis(2);

fn to_json<M: Serialize>(m: &M) -> Vec<u8> {
    serde_json::to_vec(m).expect("protocol messages serialise")
}

fn from_json<M: DeserializeOwned>(b: &[u8]) -> M {
    serde_json::from_slice(b).expect("protocol messages come from the same ssdlab")
}

/// Everyone's small message at rank 0, `decide` there, the verdict on every rank.
fn agree<T: Transport, M: Serialize + DeserializeOwned>(
    t: &T,
    tags: (Tag, Tag),
    mine: &M,
    decide: impl FnOnce(Vec<M>) -> Result<(), RankFailure>,
) -> Result<(), RankFailure> {
    let verdict = gather(t, tags.0, to_json(mine)).map(|all| {
        let all: Vec<M> = all.iter().map(|b| from_json(b)).collect();
        to_json(&decide(all))
    });
    from_json(&broadcast(t, tags.1, verdict))
}

/// What a rank says after checking its target (before anything is written).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankCheck {
    pub host: String,
    /// What the target is, to find ranks of one host on the same target (`None`: nothing to
    /// compare, e.g. the null target or a simulated drive).
    pub identity: Option<String>,
    pub result: Result<(), RankFailure>,
}

/// How a rank's own run ended.
pub enum LocalRun {
    Ran {
        result: Box<RunResult>,
        recorder: Box<Recorder>,
        /// The `--ios`/`--bytes` budget in I/Os, when the workload has one.
        budget_ios: Option<u64>,
    },
    Failed(RankFailure),
}

/// What the engine thread tells the main thread.
enum Event {
    /// The start hook was called: every worker set up (`true`) or not.
    Ready(bool),
    Finished(LocalRun),
}

/// Why a rank's run ended, as rank 0 hears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Ended {
    /// Its own deadline (or nothing special).
    Normal,
    /// Its `--ios`/`--bytes` budget.
    Budget,
    /// An I/O error (or the run failed).
    Error,
    /// A signal.
    Interrupted,
    /// Stopped by rank 0.
    Stopped,
}

/// What rank 0 tells the others during the measured phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Ctrl {
    /// Stop now: interrupted (as if the signal had come here) or not (stonewalling, another
    /// rank's error).
    Stop { interrupt: bool },
    /// Every rank has ended; go on to the results.
    End,
}

/// The options of a job.
pub struct JobOptions<'a> {
    /// Stop every rank when the first one ends its `--ios`/`--bytes` budget.
    pub stonewall: bool,
    /// Raised by this rank's signal handler (the run ends interrupted).
    pub stop: &'a AtomicBool,
    /// The engine's stonewall flag (the run ends early, not interrupted).
    pub halt: &'a AtomicBool,
    /// Two ranks of one host may not use the same target (when the workload writes and the
    /// ranks do not each have a segment of it).
    pub unique_targets: bool,
    /// The target as the user named it (the template), for the aggregate.
    pub target_name: String,
    /// `--segment-per-rank`: the aggregate's region is the union of the ranks' segments.
    pub segments: bool,
}

/// How a job ended, on rank 0 (`None` on the others).
pub struct JobEnd {
    /// The results; `None` when the job stopped before anything ran (`error` says why).
    pub result: Option<JobResult>,
    /// The failures that stopped the job before it started, or that ranks met: one line each,
    /// `rank 2 (node7): …`, and the exit code of the first cause.
    pub failures: Vec<(u8, String)>,
}

/// Runs one workload on every rank. `checked` is this rank's check (nothing written);
/// `prepare` runs on rank 0 alone once every check passed (laying out a shared target);
/// `run` runs the engine with the start hook it is given. Returns on rank 0 what to print.
pub fn run_job<T: Transport>(
    t: &T,
    me: &RankInfo,
    spec: &WorkloadSpec,
    opts: &JobOptions<'_>,
    checked: RankCheck,
    prepare: impl FnOnce() -> Result<(), RankFailure>,
    run: impl FnOnce(&(dyn Fn(bool) -> Result<(), String> + Sync)) -> LocalRun + Send,
) -> Option<JobEnd> {
    // 1. Every rank checked its target; rank 0 also compares them.
    let mut hosts: Vec<String> = Vec::new();
    let verdict = agree(t, (TAG_CHECK, TAG_CHECK_VERDICT), &checked, |all| {
        hosts = all.iter().map(|c| c.host.clone()).collect();
        first_failure(&all)?;
        if opts.unique_targets {
            let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
            for (r, c) in all.iter().enumerate() {
                let Some(id) = &c.identity else { continue };
                if let Some(first) = seen.insert((c.host.as_str(), id.as_str()), r) {
                    return Err(RankFailure {
                        code: 2,
                        message: format!(
                            "ranks {first} and {r} on {} would both write {id}; give each rank its own target ({{rank}} in the path) or a segment of it (--segment-per-rank)",
                            c.host
                        ),
                        because_of_others: false,
                    });
                }
            }
        }
        Ok(())
    });
    if let Err(f) = verdict {
        return (t.rank() == 0).then(|| JobEnd {
            result: None,
            failures: vec![(f.code, f.message)],
        });
    }
    // 2. Rank 0 prepares what the ranks share.
    let prepared = agree(t, (TAG_PREPARE, TAG_PREPARE + 100), &(), |_| {
        prepare().map_err(|f| RankFailure {
            message: format!("{}: {}", who(0, &hosts[0]), f.message),
            ..f
        })
    });
    if let Err(f) = prepared {
        return (t.rank() == 0).then(|| JobEnd {
            result: None,
            failures: vec![(f.code, f.message)],
        });
    }

    // 3. The engine on its own thread; this thread talks to the other ranks.
    let (ev_tx, ev_rx) = channel::<Event>();
    let (verdict_tx, verdict_rx) = channel::<Result<(), String>>();
    let verdict_rx = Mutex::new(verdict_rx);
    let ready_tx = Mutex::new(ev_tx.clone());
    let hook = move |ok: bool| -> Result<(), String> {
        let _ = ready_tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Event::Ready(ok));
        verdict_rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .recv()
            .unwrap_or_else(|_| Err("the job ended before the run started".into()))
    };
    let mut stopped_by: Option<String> = None;
    let local: LocalRun = std::thread::scope(|s| {
        let hook = &hook;
        let ev_tx2 = ev_tx.clone();
        s.spawn(move || {
            let out = catch_unwind(AssertUnwindSafe(|| run(hook))).unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                LocalRun::Failed(RankFailure {
                    code: 1,
                    message: format!("the run panicked: {msg}"),
                    because_of_others: false,
                })
            });
            let _ = ev_tx2.send(Event::Finished(out));
        });
        drop(ev_tx);
        // 3a. The start barrier: every rank is ready, or the job is off.
        let first = ev_rx.recv().expect("the engine thread reports");
        let (ready, mut finished) = match first {
            Event::Ready(ok) => (ok, None),
            Event::Finished(l) => (false, Some(l)),
        };
        #[derive(Serialize, Deserialize)]
        struct StartNote {
            ready: bool,
            why: Option<String>,
        }
        let why = match &finished {
            Some(LocalRun::Failed(f)) => Some(f.message.clone()),
            _ if !ready => Some("its workers could not be set up".into()),
            _ => None,
        };
        let start = agree(
            t,
            (TAG_START, TAG_START_VERDICT),
            &StartNote { ready, why },
            |all| match all.iter().enumerate().find(|(_, n)| !n.ready) {
                Some((r, n)) => Err(RankFailure {
                    code: 2,
                    message: format!(
                        "{}: {}",
                        who(r, &hosts[r]),
                        n.why.clone().unwrap_or_default()
                    ),
                    because_of_others: false,
                }),
                None => Ok(()),
            },
        );
        if finished.is_none() {
            let _ = verdict_tx.send(
                start
                    .clone()
                    .map_err(|f| format!("not started, because {}", f.message)),
            );
        }
        let started = start.is_ok();
        // 3b. The measured phase: a stop anywhere stops everyone.
        let mut ended_here: Option<Ended> = None;
        let mut done = vec![false; t.size()];
        let mut stop_sent = false;
        let apply = |interrupt: bool| {
            if interrupt {
                opts.stop.store(true, Ordering::SeqCst);
            } else {
                opts.halt.store(true, Ordering::SeqCst);
            }
        };
        loop {
            if finished.is_none() {
                match ev_rx.recv_timeout(POLL) {
                    Ok(Event::Finished(l)) => finished = Some(l),
                    Ok(Event::Ready(_)) => {}
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        finished = Some(LocalRun::Failed(RankFailure {
                            code: 1,
                            message: "the run ended without a result".into(),
                            because_of_others: false,
                        }))
                    }
                }
            }
            if !started {
                if finished.is_some() {
                    break;
                }
                continue;
            }
            if ended_here.is_none() {
                if let Some(l) = &finished {
                    let why = ended(l, opts);
                    ended_here = Some(why);
                    done[t.rank()] = true;
                    if t.rank() != 0 {
                        t.send(0, TAG_DONE, &to_json(&why));
                    }
                }
            }
            if finished.is_some() {
                // Only the other ranks are left to hear from.
                std::thread::sleep(POLL);
            }
            if t.rank() == 0 {
                // Who ended, and why; the first reason to stop everyone stops everyone.
                let mut reasons: Vec<(usize, Ended)> = Vec::new();
                if let (Some(why), false) = (ended_here, stop_sent) {
                    reasons.push((0, why));
                }
                while let Some((r, b)) = t.try_recv_any(TAG_DONE) {
                    done[r] = true;
                    reasons.push((r, from_json(&b)));
                }
                if !stop_sent && opts.stop.load(Ordering::SeqCst) {
                    reasons.push((0, Ended::Interrupted));
                }
                for (r, why) in reasons {
                    if stop_sent {
                        break;
                    }
                    let (interrupt, text) = match why {
                        Ended::Interrupted => (true, "was interrupted"),
                        Ended::Error => (false, "stopped on an error"),
                        Ended::Budget if opts.stonewall => {
                            (false, "finished its --ios/--bytes first (stonewall)")
                        }
                        _ => continue,
                    };
                    stop_sent = true;
                    stopped_by = Some(format!("{} {text}", who(r, &hosts[r])));
                    apply(interrupt);
                    for (peer, _) in done.iter().enumerate().skip(1).filter(|(_, &d)| !d) {
                        t.send(peer, TAG_CTRL, &to_json(&Ctrl::Stop { interrupt }));
                    }
                }
                if done.iter().all(|&d| d) {
                    for peer in 1..t.size() {
                        t.send(peer, TAG_CTRL, &to_json(&Ctrl::End));
                    }
                    break;
                }
            } else {
                while let Some(b) = t.try_recv(0, TAG_CTRL) {
                    match from_json::<Ctrl>(&b) {
                        Ctrl::Stop { interrupt } => apply(interrupt),
                        Ctrl::End => {
                            return finished.take().expect("End comes after this rank's Done");
                        }
                    }
                }
            }
        }
        let mut out = finished
            .take()
            .expect("the loop ends with the run finished");
        if let (false, true, LocalRun::Failed(f)) = (started, ready, &mut out) {
            // This rank was ready; another one was not.
            f.because_of_others = true;
        }
        out
    });
    let t_end = Some(Instant::now());

    // 4. Results: histograms merged up the tree, the ranks' reports gathered.
    let (recorder, outcome) = match local {
        LocalRun::Ran {
            result,
            mut recorder,
            budget_ios,
        } => {
            recorder.prefix_errors(&format!("{}: ", me.who()));
            (*recorder, Ok(RankRun::of(&result, budget_ios)))
        }
        LocalRun::Failed(f) => (Recorder::default(), Err(f)),
    };
    let merged = reduce(
        t,
        TAG_REDUCE,
        recorder,
        |acc, b| {
            // Recorders come from the same ssdlab; a damaged one would be a bug in transport.
            acc.merge_bytes(&b).expect("a rank's recorder reads back");
        },
        |acc| acc.to_bytes(),
    );
    let report = RankReport {
        rank: me.rank,
        host: me.host.clone(),
        local_rank: me.local_rank,
        outcome,
    };
    let reports = gather(t, TAG_REPORT, to_json(&report))?;
    let merged = merged.expect("rank 0 holds the merged recorder");
    let ranks: Vec<RankReport> = reports.iter().map(|b| from_json(b)).collect();
    let mut failures: Vec<(u8, String)> = ranks
        .iter()
        .filter_map(|r| match &r.outcome {
            Err(f) if !f.because_of_others => Some((f.code, format!("{}: {}", r.who(), f.message))),
            _ => None,
        })
        .collect();
    if failures.is_empty() {
        if let Some(f) = ranks.iter().find_map(|r| r.outcome.as_ref().err()) {
            failures.push((f.code, f.message.clone()));
        }
    }
    let result = ranks
        .iter()
        .find_map(|r| r.outcome.as_ref().ok())
        .map(|first| {
            let mut target: TargetDesc = first.target.clone();
            target.name = opts.target_name.clone();
            if opts.segments {
                let runs = ranks.iter().filter_map(|r| r.outcome.as_ref().ok());
                target.offset = runs.clone().map(|r| r.target.offset).min().unwrap_or(0);
                target.span = runs.map(|r| r.target.span).sum();
                target
                    .details
                    .push(("segment per rank".into(), first.target.span.to_string()));
            }
            let aggregate = aggregate(spec, target, &merged, &ranks);
            JobResult {
                aggregate,
                ranks: ranks.clone(),
                aggregation_ns: t_end.map_or(0, |e| e.elapsed().as_nanos() as u64),
                stopped_by: stopped_by.clone(),
                stonewall: opts.stonewall,
            }
        });
    Some(JobEnd { result, failures })
}

/// Why the local run ended (for rank 0's decisions).
fn ended(l: &LocalRun, opts: &JobOptions<'_>) -> Ended {
    match l {
        LocalRun::Failed(_) => Ended::Error,
        LocalRun::Ran {
            result, budget_ios, ..
        } => {
            let r = result;
            let ios = r.read.ios + r.write.ios + r.trim.ios;
            let errs = r.read.errors + r.write.errors + r.trim.errors;
            if r.interrupted {
                if opts.stop.load(Ordering::SeqCst) {
                    Ended::Interrupted
                } else {
                    Ended::Stopped
                }
            } else if r.stopped_on_error {
                Ended::Error
            } else if r.stonewalled {
                Ended::Stopped
            } else if budget_ios.is_some_and(|b| ios + errs >= b) {
                Ended::Budget
            } else {
                Ended::Normal
            }
        }
    }
}

/// Every rank's check at rank 0 and the verdict on every rank: the first failure, naming its
/// rank and host (and how many other ranks failed).
pub fn check_together<T: Transport>(
    t: &T,
    host: &str,
    result: Result<(), RankFailure>,
) -> Result<(), RankFailure> {
    let mine = RankCheck {
        host: host.to_string(),
        identity: None,
        result,
    };
    agree(t, (TAG_CHECK, TAG_CHECK_VERDICT), &mine, |all| {
        first_failure(&all)
    })
}

fn first_failure(all: &[RankCheck]) -> Result<(), RankFailure> {
    for (r, c) in all.iter().enumerate() {
        if let Err(f) = &c.result {
            let others = all.iter().filter(|c| c.result.is_err()).count() - 1;
            let more = if others > 0 {
                format!(
                    " ({others} other rank{} failed too)",
                    if others == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            };
            return Err(RankFailure {
                code: f.code,
                message: format!("{}: {}{more}", who(r, &c.host), f.message),
                because_of_others: false,
            });
        }
    }
    Ok(())
}

/// Rank 0's exit code on every rank (each rank gives its own; rank 0's wins).
pub fn finish<T: Transport>(t: &T, code: u8) -> u8 {
    broadcast(t, TAG_CODE, (t.rank() == 0).then(|| vec![code]))[0]
}
