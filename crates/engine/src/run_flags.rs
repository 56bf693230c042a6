//! The flags of `ssdlab run` as plain values ([`RunFlags`]): which combinations are refused
//! before anything is planned (a flag that does not apply to the chosen target is an error, not
//! ignored), and the engine options the real-target flags give; and the files it writes
//! ([`RunOutputs`]), checked against each other before they are checked against its inputs.

use crate::real::{EngineChoice, RealOptions, RealTarget};
use crate::sim::SimTarget;
use crate::sim_steps::SimSteps;
use crate::target_spec::{SimSpec, TargetFlags, TargetSpec};
use ssdlab_io::{FixedBufs, RingOptions};
use ssdlab_target::{check_file_or_new, check_outputs, check_writable, Named};
use std::path::Path;

/// `ssdlab run`'s flags, as given: the target flags, the simulated drives' own and the real
/// targets' own.
#[derive(Debug, Clone, Default)]
pub struct RunFlags<'a> {
    /// The target flags (`--target`, `--null`, `--raid0`, `--sim`, `--drives`, `--stripe`,
    /// `--state`, `--set` and the adapter's).
    pub target: TargetFlags<'a>,
    /// `--load-state` given.
    pub load_state: bool,
    /// `--save-state` given.
    pub save_state: bool,
    /// `--precondition STEPS`.
    pub precondition: Option<&'a str>,
    /// `--precondition-timed`.
    pub precondition_timed: bool,
    /// `--steady-state`.
    pub steady_state: bool,
    /// `--stonewall`.
    pub stonewall: bool,
    /// `--segment-per-rank`.
    pub segment_per_rank: bool,
    /// The workload stops on `--ios` or `--bytes`.
    pub stop_budget: bool,
    /// `--engine auto|io_uring|sync`.
    pub engine: Option<&'a str>,
    /// `--buffered`.
    pub buffered: bool,
    /// `--submit-batch N`.
    pub submit_batch: Option<u32>,
    /// `--hipri`.
    pub hipri: bool,
    /// `--sqthread-poll`.
    pub sqthread_poll: bool,
    /// `--fixedbufs auto|on|off`.
    pub fixedbufs: Option<&'a str>,
    /// `--registerfiles on|off`.
    pub registerfiles: Option<&'a str>,
    /// `--allow-destroy`.
    pub allow_destroy: bool,
    /// `--continue-on-error`.
    pub continue_on_error: bool,
    /// `--verify-map FILE`.
    pub verify_map: Option<&'a Path>,
}

impl<'a> RunFlags<'a> {
    /// Refuses flags that do not apply to the chosen target, instead of ignoring them: the
    /// message names the flag (exit 2 for the caller).
    pub fn check(&self) -> Result<(), String> {
        let t = &self.target;
        if t.target.is_none() && !t.null && t.raid0.is_empty() && t.sim.is_none() {
            return Err(
                "no target: give --target FILE|DEVICE, --raid0 A,B[,…], --null or --sim PRESET"
                    .into(),
            );
        }
        if self.stonewall && !self.stop_budget {
            return Err("--stonewall stops every rank when the first has done its --ios or --bytes; give one of them".into());
        }
        let ad = &t.adapter;
        let no_trim_passthrough = ad.trim_passthrough == Some(false);
        let sim_only = [
            ("--drives", t.drives.is_some()),
            ("--state", t.state.is_some()),
            ("--load-state", self.load_state),
            ("--save-state", self.save_state),
            ("--set", !t.sets.is_empty()),
            ("--adapter", ad.model.is_some()),
            ("--uplink", ad.uplink_bytes_per_sec.is_some()),
            ("--adapter-overhead", ad.per_request_overhead_ns.is_some()),
            ("--no-trim-passthrough", no_trim_passthrough),
            ("--adapter-cache", ad.cache_bytes.is_some()),
            ("--precondition", self.precondition.is_some()),
            ("--steady-state", self.steady_state),
            ("--precondition-timed", self.precondition_timed),
        ];
        let real_only = [
            ("--engine", self.engine.is_some()),
            ("--buffered", self.buffered),
            ("--submit-batch", self.submit_batch.is_some()),
            ("--hipri", self.hipri),
            ("--sqthread-poll", self.sqthread_poll),
            ("--fixedbufs", self.fixedbufs.is_some()),
            ("--registerfiles", self.registerfiles.is_some()),
            ("--allow-destroy", self.allow_destroy),
            ("--continue-on-error", self.continue_on_error),
            ("--verify-map", self.verify_map.is_some()),
        ];
        if t.sim.is_some() {
            if let Some((f, _)) = real_only.iter().find(|(_, on)| *on) {
                return Err(format!(
                    "{f} applies to real targets, not to simulated drives (--sim)"
                ));
            }
            let array = t.drives.unwrap_or(1) > 1;
            if t.stripe.is_some() && !array {
                return Err(
                    "--stripe applies to arrays: give --drives N (N > 1) with --sim".into(),
                );
            }
            if no_trim_passthrough && !array {
                return Err(
                    "--no-trim-passthrough applies to simulated arrays (--drives N, N > 1)".into(),
                );
            }
            if ad.cache_bytes.is_some() && !array {
                return Err("--adapter-cache is the RAID driver's cache: it applies to simulated arrays (--drives N, N > 1)".into());
            }
            if let Some(p) = self.precondition {
                crate::parse_precondition(p).map_err(|e| format!("--precondition {e}"))?;
            }
            if self.load_state && t.state.is_some() {
                return Err("--state and --load-state both give the drives' state before the run; give one of them".into());
            }
            return Ok(());
        }
        if let Some((f, _)) = sim_only.iter().find(|(_, on)| *on) {
            return Err(format!(
                "{f} applies to simulated drives (--sim PRESET), not to real or null targets"
            ));
        }
        if t.raid0.is_empty() && t.stripe.is_some() {
            return Err(
                "--stripe applies to arrays: give --raid0 A,B[,…] (or --sim PRESET --drives N)"
                    .into(),
            );
        }
        let null_members = !t.raid0.is_empty() && t.raid0.iter().all(|m| m.starts_with("null:"));
        if t.null || null_members {
            let what = if t.null {
                "the null target"
            } else {
                "null members"
            };
            // (all but --continue-on-error and --verify-map)
            if let Some((f, _)) = real_only[..8].iter().find(|(_, on)| *on) {
                return Err(format!("{f} has no effect on {what}: it does no I/O"));
            }
        }
        if self.engine == Some("sync") {
            // (--submit-batch to --registerfiles)
            if let Some((f, _)) = real_only[2..7].iter().find(|(_, on)| *on) {
                return Err(format!(
                    "{f} applies to the io_uring engine, not to --engine sync"
                ));
            }
        }
        if self.hipri && self.buffered {
            return Err(
                "--hipri (polled completions) needs O_DIRECT: it cannot be used with --buffered"
                    .into(),
            );
        }
        Ok(())
    }

    /// Refuses the flags of runs on several ranks (`--stonewall`, `--segment-per-rank`) in a
    /// run of one process.
    pub fn check_one_process(&self) -> Result<(), String> {
        let f = if self.stonewall {
            "--stonewall"
        } else if self.segment_per_rank {
            "--segment-per-rank"
        } else {
            return Ok(());
        };
        Err(format!(
            "{f} applies to runs on several ranks (mpirun -n N ssdlab run …, built with --features mpi)"
        ))
    }

    /// The steps of a simulated run around its measurement (`--precondition`,
    /// `--precondition-timed`, `--steady-state`).
    pub fn sim_steps(&self) -> Result<SimSteps, String> {
        SimSteps::parse(
            self.precondition,
            self.precondition_timed,
            self.steady_state,
        )
        .map_err(|e| format!("--precondition {e}"))
    }

    /// Refuses `--submit-batch` above the queue depth `qd` of each worker.
    pub fn check_submit_batch(&self, qd: u32) -> Result<(), String> {
        match self.submit_batch.filter(|&b| b > qd) {
            Some(b) => Err(format!(
                "--submit-batch {b} is above --qd {qd}: a batch holds at most the I/Os a worker keeps in flight"
            )),
            None => Ok(()),
        }
    }

    /// The target the flags name, parsed once.
    pub fn target_spec(&self) -> Result<TargetSpec, String> {
        TargetSpec::from_flags(&self.target)
    }

    /// The simulated target of `--sim` (drives, stripe, state, adapter and overrides from the
    /// flags), after checking that no output names its preset file (before the overrides are
    /// parsed: the order the errors have always come in). `note_once` as for
    /// [`SimSpec::build`](crate::SimSpec::build).
    pub fn sim_target(
        &self,
        outputs: &[Named<'_>],
        note_once: fn(&str),
    ) -> Result<SimTarget, String> {
        let name = self.target.sim.expect("--sim names a simulated target");
        TargetSpec::Sim(SimSpec::preset(name)).check_inputs(outputs)?;
        match self.target_spec()? {
            TargetSpec::Sim(s) => s.build(note_once),
            TargetSpec::Real(_) => unreachable!("--sim {name} names a simulated target"),
        }
    }

    /// The real target of `--raid0`, `--target` or `--null` (no `--sim`).
    pub fn real_target(&self) -> Result<RealTarget, String> {
        match self.target_spec()? {
            TargetSpec::Real(t) => Ok(t),
            TargetSpec::Sim(_) => unreachable!("a real target is planned without --sim"),
        }
    }

    /// The engine `--engine` names (`auto` when it names none).
    pub fn engine_choice(&self) -> EngineChoice {
        match self.engine {
            Some("io_uring") => EngineChoice::IoUring,
            Some("sync") => EngineChoice::Sync,
            _ => EngineChoice::Auto,
        }
    }

    /// The io_uring settings of `--hipri`, `--sqthread-poll`, `--fixedbufs` and
    /// `--registerfiles`.
    pub fn ring_options(&self) -> RingOptions {
        RingOptions {
            iopoll: self.hipri,
            sqpoll: self.sqthread_poll,
            fixed_bufs: match self.fixedbufs {
                Some("on") => FixedBufs::On,
                Some("off") => FixedBufs::Off,
                _ => FixedBufs::Auto,
            },
            register_files: self.registerfiles != Some("off"),
        }
    }

    /// The options of a run on a real target that the flags give (engine, O_DIRECT, device
    /// writes, errors, batches, the ring, the verify map); the rest are the defaults.
    pub fn real_options(&self) -> RealOptions<'a> {
        RealOptions {
            engine: self.engine_choice(),
            direct: !self.buffered,
            allow_destroy: self.allow_destroy,
            continue_on_error: self.continue_on_error,
            submit_batch: self.submit_batch.unwrap_or(1),
            ring: self.ring_options(),
            verify_map: self.verify_map,
            ..Default::default()
        }
    }
}

/// The files `ssdlab run` writes besides its target, as given (`--output` already checked by
/// the caller, before the logs were asked for).
#[derive(Debug, Clone, Default)]
pub struct RunOutputs<'a> {
    /// `--output FILE`.
    pub output: Option<&'a Path>,
    /// The log files (`--write-bw-log` …), each with the flag that asked for it.
    pub logs: Vec<Named<'a>>,
    /// `--html FILE`.
    pub html: Option<&'a Path>,
    /// `--store DB`.
    pub store: Option<&'a Path>,
    /// `--verify-map FILE`.
    pub verify_map: Option<&'a Path>,
}

impl<'a> RunOutputs<'a> {
    /// Checks that each output can be written (a store: created, or a regular file) and that
    /// none names another (`--output` and `--store` no log file, `--html` none of them); the
    /// outputs, for the check against the inputs.
    pub fn check(self) -> Result<Vec<Named<'a>>, String> {
        for n in &self.logs {
            check_writable(n.role, n.path)?;
        }
        if let Some(p) = self.html {
            check_writable("--html", p)?;
        }
        let mut outputs: Vec<Named<'a>> = self
            .output
            .map(|path| Named {
                role: "--output",
                path,
            })
            .into_iter()
            .collect();
        if let Some(path) = self.store {
            check_file_or_new("--store", path)?;
            outputs.push(Named {
                role: "--store",
                path,
            });
        }
        let same = |e: ssdlab_target::SameFile| e.to_string();
        check_outputs(&outputs, &self.logs).map_err(same)?;
        let html: Vec<Named<'a>> = self
            .html
            .map(|path| Named {
                role: "--html",
                path,
            })
            .into_iter()
            .collect();
        check_outputs(&html, &outputs).map_err(same)?;
        check_outputs(&html, &self.logs).map_err(same)?;
        outputs.extend(self.logs);
        outputs.extend(html);
        if let Some(path) = self.verify_map {
            check_writable("--verify-map", path)?;
            outputs.push(Named {
                role: "--verify-map",
                path,
            });
        }
        Ok(outputs)
    }
}

/// The state files of a simulated run: `--load-state` must be none of the `outputs`
/// (`--save-state` may be it: it replaces the file whole, after the run, when the old state has
/// long been read), `--save-state` must be writable and joins the outputs.
pub fn check_state_files<'a>(
    outputs: &mut Vec<Named<'a>>,
    load: Option<&'a Path>,
    save: Option<&'a Path>,
) -> Result<(), String> {
    if let Some(path) = load {
        let input = [Named {
            role: "--load-state",
            path,
        }];
        check_outputs(outputs, &input).map_err(|e| e.to_string())?;
    }
    if let Some(path) = save {
        check_writable("--save-state", path)?;
        outputs.push(Named {
            role: "--save-state",
            path,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> RunFlags<'static> {
        RunFlags {
            target: TargetFlags {
                sim: Some("p"),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn flags_of_the_other_kind_of_target_are_refused() {
        assert!(RunFlags::default()
            .check()
            .unwrap_err()
            .starts_with("no target"));
        let mut f = sim();
        assert_eq!(f.check(), Ok(()));
        f.buffered = true;
        assert_eq!(
            f.check().unwrap_err(),
            "--buffered applies to real targets, not to simulated drives (--sim)"
        );
        let mut f = RunFlags {
            target: TargetFlags {
                null: true,
                ..Default::default()
            },
            ..Default::default()
        };
        f.continue_on_error = true;
        assert_eq!(f.check(), Ok(()));
        f.steady_state = true;
        assert!(f.check().unwrap_err().starts_with("--steady-state applies"));
        f.steady_state = false;
        f.allow_destroy = true;
        assert_eq!(
            f.check().unwrap_err(),
            "--allow-destroy has no effect on the null target: it does no I/O"
        );
    }

    #[test]
    fn sync_refuses_ring_flags_and_batches_fit_the_queue() {
        let raid0 = ["a".to_string(), "b".to_string()];
        let mut f = RunFlags {
            target: TargetFlags {
                raid0: &raid0,
                ..Default::default()
            },
            engine: Some("sync"),
            ..Default::default()
        };
        assert_eq!(f.check(), Ok(()));
        assert_eq!(f.engine_choice(), EngineChoice::Sync);
        f.continue_on_error = true;
        assert_eq!(f.check(), Ok(()));
        f.registerfiles = Some("off");
        assert_eq!(
            f.check().unwrap_err(),
            "--registerfiles applies to the io_uring engine, not to --engine sync"
        );
        assert!(!f.ring_options().register_files);
        f.submit_batch = Some(8);
        assert_eq!(f.check_submit_batch(8), Ok(()));
        assert!(f
            .check_submit_batch(4)
            .unwrap_err()
            .starts_with("--submit-batch 8 is above --qd 4"));
    }

    #[test]
    fn outputs_may_not_name_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o.json");
        let log = dir.path().join("l_bw.1.log");
        let html = dir.path().join("r.html");
        let outputs = RunOutputs {
            output: Some(&out),
            logs: vec![Named {
                role: "--write-bw-log",
                path: &log,
            }],
            html: Some(&html),
            ..Default::default()
        };
        let roles: Vec<&str> = outputs.check().unwrap().iter().map(|n| n.role).collect();
        assert_eq!(roles, ["--output", "--write-bw-log", "--html"]);
        let clash = RunOutputs {
            output: Some(&out),
            html: Some(&out),
            ..Default::default()
        };
        assert!(clash.check().unwrap_err().starts_with("--html "));
        let mut outs = vec![Named {
            role: "--output",
            path: &out,
        }];
        assert!(check_state_files(&mut outs, Some(&out), None).is_err());
        check_state_files(&mut outs, Some(&log), Some(&log)).unwrap();
        assert_eq!(outs.len(), 2);
    }
}
