//! The point runner of a sweep: simulated points start from a cached, preconditioned drive
//! state (built once per distinct state, frozen, copied per point), or with carried history run
//! on one drive chain by chain; real points run with the sweep's safety options. The binary
//! gives it how to build a point's simulated target ([`SimTargetFn`]) and where notes go.

use crate::runner::PointError;
use crate::spec::{History, PointTarget, SweepSpec};
use crate::Point;
use ssdlab_engine::{Member, RealOptions, RealTarget, SimJob, SimOptions, SimSession, SimTarget};
use ssdlab_stats::RunResult;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

type SimCell = Arc<OnceLock<Result<ssdlab_ssdsim::Simulator, String>>>;

/// Runs the points of a sweep: simulated ones from a cached, preconditioned drive state (built
/// once per distinct state, cloned per point), real ones with the sweep's safety options.
///
/// The cache keeps at most `capacity` states (least recently used go first, never one a running
/// point still holds); the sweep runs simulated points grouped by state ([`PointRunner::state_key`]),
/// so a few states at a time suffice and an evicted state is rarely needed again (it is rebuilt,
/// identically, if it is).
pub struct PointRunner {
    cache: Mutex<StateCache>,
    /// With carried history: each chain's points in order (for replaying a chain's start).
    chains: OnceLock<HashMap<String, Vec<Point>>>,
    /// With carried history: the drive each chain has reached, after the point at the position
    /// given (taken out while a point runs on it).
    sessions: Mutex<HashMap<String, (usize, SimSession)>>,
    /// Real points may write to block devices (`--allow-destroy`).
    pub allow_destroy: bool,
    /// The memory limit every point is checked against (`--max-memory`).
    pub max_memory: Option<u64>,
    stop: &'static AtomicBool,
    note: fn(&str),
    note_once: fn(&str),
    sim_target: Box<SimTargetFn>,
}

/// Builds the simulated target of a point (presets, overrides, drive state, adapter): the
/// binary's, so one preset lookup serves every command. `None` for a real point.
pub type SimTargetFn = dyn Fn(&Point) -> Result<Option<SimTarget>, String> + Send + Sync;

/// How a [`PointRunner`] runs: the safety and memory options of every point, the stop flag,
/// and where notes go.
pub struct PointRunnerOptions {
    pub allow_destroy: bool,
    pub max_memory: Option<u64>,
    /// Raised from outside (a signal): running points end at once.
    pub stop: &'static AtomicBool,
    /// A diagnostic line for stderr (real runs' notes as they happen).
    pub note: fn(&str),
    /// A diagnostic said once per process however often it is given.
    pub note_once: fn(&str),
}

#[derive(Default)]
struct StateCache {
    cells: HashMap<String, (SimCell, u64)>,
    clock: u64,
    capacity: usize,
}

impl StateCache {
    fn get(&mut self, key: String) -> SimCell {
        self.clock += 1;
        let now = self.clock;
        let cell = {
            let e = self.cells.entry(key).or_default();
            e.1 = now;
            Arc::clone(&e.0)
        };
        // Evict the least recently used states no running point holds.
        while self.cells.len() > self.capacity.max(1) {
            let victim = self
                .cells
                .iter()
                .filter(|(_, (c, _))| Arc::strong_count(c) == 1)
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    self.cells.remove(&k);
                }
                None => break,
            }
        }
        cell
    }
}

impl PointRunner {
    pub fn new(opts: PointRunnerOptions, sim_target: Box<SimTargetFn>) -> PointRunner {
        PointRunner {
            cache: Mutex::new(StateCache {
                capacity: 1,
                ..Default::default()
            }),
            chains: OnceLock::new(),
            sessions: Mutex::new(HashMap::new()),
            allow_destroy: opts.allow_destroy,
            max_memory: opts.max_memory,
            stop: opts.stop,
            note: opts.note,
            note_once: opts.note_once,
            sim_target,
        }
    }

    /// Takes note of how the sweep's simulated points start: with `history = "carry"` each
    /// chain's points run on one drive, in order (see [`Point::carry_from`]).
    pub fn set_history(&self, spec: &SweepSpec) {
        if spec.history != History::Carry {
            return;
        }
        let mut chains: HashMap<String, Vec<Point>> = HashMap::new();
        for p in spec.points_iter().filter(Point::is_sim) {
            chains.entry(p.chain()).or_default().push(p);
        }
        let _ = self.chains.set(chains);
    }

    /// The drive a simulated point starts from: a copy of the cached preconditioned state.
    fn fresh_sim(&self, p: &Point, t: &SimTarget) -> Result<ssdlab_ssdsim::Simulator, String> {
        let key = Self::state_key(p).ok_or("not a simulated point")?;
        let cell = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key);
        // frozen: every point's copy shares the template's tables and copies only what it writes
        let template = cell.get_or_init(|| {
            ssdlab_engine::build_sim(t, p.spec.seed, self.max_memory)
                .map(|mut s| {
                    s.freeze();
                    s
                })
                .map_err(|e| e.to_string())
        });
        template.as_ref().map_err(|e| e.clone()).cloned()
    }

    /// The options every simulated point runs with.
    pub fn sim_options(&self) -> SimOptions<'static> {
        SimOptions {
            stop: Some(self.stop),
            max_memory: self.max_memory,
            ..Default::default()
        }
    }

    /// Runs a point of a chain on the drive the chain has reached: the one the previous point
    /// left when this process just ran it, else a fresh drive on which the chain's earlier
    /// points are replayed first (simulation is deterministic, so the drive is the same).
    fn run_carried(
        &self,
        p: &Point,
        t: &SimTarget,
        chain: &[Point],
    ) -> Result<RunResult, PointError> {
        let id = p.chain();
        let opts = self.sim_options();
        let kept = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
            .filter(|(last, _)| Some(*last) == p.carry_from);
        let mut session = match kept {
            Some((_, s)) => s,
            None => {
                let mut s = SimSession::from_prepared(t, self.fresh_sim(p, t)?);
                for q in chain.iter().take_while(|q| q.seq < p.seq) {
                    let out = s.run(&[SimJob::new(&q.spec)], &opts)?;
                    if out.first().is_none_or(|o| o.result.interrupted) {
                        let mut r = out.into_iter().next().map(|o| o.result).unwrap_or_default();
                        r.interrupted = true;
                        return Ok(r);
                    }
                }
                s
            }
        };
        let out = session
            .run(&[SimJob::new(&p.spec)], &opts)?
            .into_iter()
            .next()
            .ok_or("the simulated run gave no result")?;
        let last = chain.last().is_none_or(|q| q.seq == p.seq);
        if !out.result.interrupted && !last {
            self.sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, (p.seq, session));
        }
        Ok(out.result)
    }

    /// How many drive states the cache may keep (one per parallel point, plus one).
    pub fn set_capacity(&self, states: usize) {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .capacity = states.max(1);
    }

    /// What simulated points are grouped by when they are handed out: the drive of a chain with
    /// carried history (its points then go to one worker in order), else the drive state.
    pub fn group_key(p: &Point) -> String {
        if p.carried {
            return p.chain();
        }
        Self::state_key(p).unwrap_or_default()
    }

    /// The drive state a simulated point starts from (preset, overrides, drives, state, seed);
    /// `None` for real points.
    pub fn state_key(p: &Point) -> Option<String> {
        match &p.target {
            PointTarget::Sim {
                preset,
                drives,
                state,
                overrides,
                adapter,
                ..
            } => Some(format!(
                "{preset}|{overrides:?}|{drives}|{adapter:?}|{}|{}",
                state.as_str(),
                p.spec.seed
            )),
            PointTarget::Real { .. } => None,
        }
    }

    /// The options every real point runs with.
    pub fn real_options(&self) -> RealOptions<'static> {
        RealOptions {
            on_note: self.note,
            allow_destroy: self.allow_destroy,
            max_memory: self.max_memory,
            stop: Some(self.stop),
            ..Default::default()
        }
    }

    /// The real target of a point.
    pub fn real_target(p: &Point, paths: &[PathBuf]) -> Result<RealTarget, String> {
        Ok(if paths.len() == 1 {
            RealTarget::Path(paths[0].clone())
        } else {
            RealTarget::Raid0 {
                members: paths.iter().cloned().map(Member::Path).collect(),
                stripe: p.stripe.ok_or("a RAID 0 point needs a stripe size")?,
            }
        })
    }

    /// The simulated target of a point (`None` for real points), as the binary builds it.
    pub fn sim_target(&self, p: &Point) -> Result<Option<SimTarget>, String> {
        (self.sim_target)(p)
    }

    /// Runs one point.
    pub fn run(&self, p: &Point) -> Result<RunResult, PointError> {
        let r = self.run_point(p)?;
        // A note about how a point was measured (reads of never-written data on a simulated
        // drive, say) is said once per sweep, with the first point it applies to.
        if let Some(n) = r.notes.first() {
            static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
                (self.note_once)(&format!("{}: {n}", p.describe()));
            }
        }
        Ok(r)
    }

    fn run_point(&self, p: &Point) -> Result<RunResult, PointError> {
        match &p.target {
            PointTarget::Sim { .. } => {
                let t = self.sim_target(p)?.ok_or("not a simulated point")?;
                if p.carried {
                    let chain = self
                        .chains
                        .get()
                        .and_then(|c| c.get(&p.chain()))
                        .ok_or("the sweep's chains were not set up before its points ran")?;
                    return self.run_carried(p, &t, chain);
                }
                let sim = self.fresh_sim(p, &t)?;
                ssdlab_engine::run_sim_prepared(&p.spec, &t, Some(sim), &self.sim_options())
                    .map_err(Into::into)
            }
            PointTarget::Real { paths } => {
                let target = Self::real_target(p, paths)?;
                ssdlab_engine::run_real(&p.spec, &target, &self.real_options())
                    .map(|o| o.result)
                    .map_err(Into::into)
            }
        }
    }
}
