//! The steps of a simulated run around its measurement (`ssdlab run --sim`): workload
//! preconditioning (`--precondition`, on the FTL or on the clock), SNIA PTS steady-state rounds
//! (`--steady-state`), checked together with the memory they need before any drive is built,
//! then run on a session (new or loaded from a state file) with the measurement.

use crate::precondition::{
    check_precondition, measure_on_session, parse_precondition, precondition_noted, PreClock,
    PreStep,
};
use crate::sim::{
    check_sim_run_touch, sim_memory_need, sim_touch_with, SimMemoryNeed, SimOptions, SimSession,
    SimTarget,
};
use crate::{EngineError, Progress, StateFileError};
use ssdlab_stats::RunResult;
use ssdlab_workload::WorkloadSpec;
use std::path::Path;

/// What a simulated run does besides one measurement.
#[derive(Debug, Clone, Default)]
pub struct SimSteps {
    /// Preconditioning steps, run before the measurement.
    pub precondition: Vec<PreStep>,
    /// Where the steps' writes are placed.
    pub clock: PreClock,
    /// Measure in rounds until SNIA PTS's steady state.
    pub steady_state: bool,
}

impl SimSteps {
    /// The steps of the flags: `precondition` (`--precondition`, parse errors without the
    /// flag's name), on the clock with `timed`, and `steady_state` rounds.
    pub fn parse(
        precondition: Option<&str>,
        timed: bool,
        steady_state: bool,
    ) -> Result<SimSteps, String> {
        Ok(SimSteps {
            precondition: match precondition {
                Some(p) => parse_precondition(p)?,
                None => Vec::new(),
            },
            clock: if timed {
                PreClock::Simulated
            } else {
                PreClock::Untimed
            },
            steady_state,
        })
    }

    /// No steps: one measurement of a fresh session (which [`crate::run_sim`] does).
    pub fn plain(&self) -> bool {
        self.precondition.is_empty() && !self.steady_state
    }

    /// Checks the steps against the run and the target, and the memory the drives' tables
    /// take with what the steps and the run write (refused above `max_memory` or what the
    /// system has); the memory needed, to be said when it is a lot.
    pub fn check(
        &self,
        spec: &WorkloadSpec,
        target: &SimTarget,
        max_memory: Option<u64>,
    ) -> Result<SimMemoryNeed, EngineError> {
        check_precondition(&self.precondition, spec, target)?;
        let touch = sim_touch_with(spec, target, &self.precondition, self.steady_state);
        check_sim_run_touch(spec, target, touch, max_memory)?;
        Ok(sim_memory_need(target, spec.total_qd(), touch))
    }

    /// Runs the preconditioning steps on `session` with `opts`: the note that says what they
    /// did (`None` without steps), for the front of the result's notes.
    pub fn precondition(
        &self,
        session: &mut SimSession,
        target: &SimTarget,
        spec: &WorkloadSpec,
        opts: &SimOptions<'_>,
    ) -> Result<Option<String>, EngineError> {
        precondition_noted(session, target, spec, &self.precondition, opts, self.clock)
    }

    /// The measurement on `session`: one run of `spec`, or steady-state rounds.
    pub fn measure(
        &self,
        session: &mut SimSession,
        spec: &WorkloadSpec,
        opts: &SimOptions<'_>,
    ) -> Result<RunResult, EngineError> {
        measure_on_session(session, spec, self.steady_state, opts)
    }

    /// The whole simulated run of `spec` on `target`: without steps, `load` or `keep`, one run
    /// of a fresh session ([`crate::run_sim`]); else a session loaded from the state file `load`
    /// (`--load-state`) or built (announced through [`SimOptions::building`]), preconditioned
    /// (the steps' note at the front of the result's notes) and measured, and returned for
    /// `--save-state`. `status` runs the measurement (the closure) with a status line or
    /// without one.
    #[allow(clippy::type_complexity)]
    pub fn run(
        &self,
        spec: &WorkloadSpec,
        target: &SimTarget,
        load: Option<&Path>,
        keep: bool,
        opts: &SimOptions<'_>,
        status: &dyn Fn(&mut dyn FnMut(Option<&Progress>)),
    ) -> Result<(RunResult, Option<SimSession>), StateFileError> {
        let mut out = None;
        if self.plain() && load.is_none() && !keep {
            status(&mut |progress| {
                out = Some(crate::run_sim(
                    spec,
                    target,
                    &SimOptions { progress, ..*opts },
                ));
            });
            let r = out.expect("the status line runs the measurement");
            return Ok((r.map_err(StateFileError::Engine)?, None));
        }
        let mut session = match load {
            Some(path) => SimSession::load_state_file(path, target, opts.max_memory)?,
            None => {
                let building = opts.building.unwrap_or(|_| {});
                building(true);
                let s = SimSession::new(target, spec.seed, opts.max_memory);
                building(false);
                s.map_err(StateFileError::Engine)?
            }
        };
        let pre = self
            .precondition(&mut session, target, spec, opts)
            .map_err(StateFileError::Engine)?;
        status(&mut |progress| {
            out = Some(self.measure(&mut session, spec, &SimOptions { progress, ..*opts }));
        });
        let mut result = out
            .expect("the status line runs the measurement")
            .map_err(StateFileError::Engine)?;
        result.notes.splice(0..0, pre);
        Ok((result, Some(session)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_make_steps() {
        let s = SimSteps::parse(None, false, false).unwrap();
        assert!(s.plain());
        assert_eq!(s.clock, PreClock::Untimed);
        let s = SimSteps::parse(None, false, true).unwrap();
        assert!(!s.plain());
        let s = SimSteps::parse(Some("seqwrite 2x"), true, false).unwrap();
        assert!(!s.plain());
        assert_eq!(s.precondition.len(), 1);
        assert_eq!(s.clock, PreClock::Simulated);
        assert!(SimSteps::parse(Some("fly 2x"), false, false).is_err());
    }
}
