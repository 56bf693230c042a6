//! Preconditioning a simulated drive by workload, and the steady-state test of SNIA's
//! Performance Test Specification (PTS): the drive is written the way a tester writes a real one
//! (sequential fills, random overwrites), then the measured workload runs in rounds until the
//! last five rounds agree — their range within 20 % of their average and their best-fit line's
//! excursion within 10 % — and the last round is the result.
//!
//! The writes of preconditioning are the workload's own ops (same offsets, same order), placed
//! either through the drives' FTLs without timing ([`PreClock::Untimed`], the default: the
//! mapping, allocation and GC a timed run would do, at the FTL's speed) or on the simulator's
//! clock ([`PreClock::Simulated`]: every request through the host interface, write buffer and
//! flash scheduler, so the passes report their own speed and the SLC cache and background GC
//! act between them as they would in time). A PTS test reports only the rounds, so the two
//! differ only in wall time and in what the passes report about themselves.

use crate::sim::{sim_geometry, SimJob, SimOptions, SimSession, SimTarget};
use crate::{EngineError, Invalid};
use ssdlab_stats::{RunResult, SteadyState};
use ssdlab_workload::{
    format_duration, format_size, parse_size, RwMode, StopCondition, WorkloadSpec,
};

/// Rounds of the steady-state test at most (as in the PTS).
pub const MAX_ROUNDS: usize = 25;
/// Rounds in the measurement window.
pub const WINDOW: usize = 5;

/// One step of preconditioning: `passes` times the region's size written, sequentially or at
/// random offsets, in `bs` blocks, at queue depth 32.
#[derive(Debug, Clone, PartialEq)]
pub struct PreStep {
    pub random: bool,
    pub bs: u64,
    pub passes: f64,
    /// The step's own region length from the measured region's start (`over SIZE`); `None`:
    /// the measured region.
    pub span: Option<u64>,
}

impl std::fmt::Display for PreStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.random { "randwrite" } else { "seqwrite" };
        write!(f, "{kind} {} {}x", format_size(self.bs), self.passes)?;
        if let Some(s) = self.span {
            write!(f, " over {}", format_size(s))?;
        }
        Ok(())
    }
}

/// Parses `seqwrite [BS] Nx [over SIZE], randwrite [BS] Nx [over SIZE], …` (BS defaults: 128 KiB
/// sequential, 4 KiB random).
pub fn parse_precondition(text: &str) -> Result<Vec<PreStep>, String> {
    let mut steps = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!(
                "'{text}': an empty step; give steps such as \"seqwrite 2x, randwrite 4k 1x\""
            ));
        }
        let words: Vec<&str> = part.split_whitespace().collect();
        let random = match words[0].to_ascii_lowercase().as_str() {
            "seqwrite" | "write" => false,
            "randwrite" => true,
            w => {
                return Err(format!(
                    "'{part}': unknown step '{w}'; steps are seqwrite or randwrite, e.g. \"seqwrite 2x, randwrite 4k 1x over 8GiB\""
                ))
            }
        };
        let mut bs = if random { 4096 } else { 128 << 10 };
        let mut passes = None;
        let mut span = None;
        let mut i = 1;
        while i < words.len() {
            let w = words[i];
            if w.eq_ignore_ascii_case("over") {
                let s = words
                    .get(i + 1)
                    .ok_or_else(|| format!("'{part}': 'over' needs a size, e.g. over 8GiB"))?;
                let v = parse_size(s).map_err(|e| format!("'{part}': {e}"))?;
                if v == 0 {
                    return Err(format!("'{part}': the region must be larger than 0"));
                }
                span = Some(v);
                i += 2;
                continue;
            }
            if let Some(n) = w.strip_suffix(['x', 'X']) {
                let n: f64 = n
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite() && *n > 0.0 && *n <= 100.0)
                    .ok_or_else(|| {
                        format!("'{part}': '{w}' is not a number of passes above 0 and at most 100, e.g. 2x")
                    })?;
                passes = Some(n);
            } else {
                bs = parse_size(w).map_err(|e| format!("'{part}': {e}"))?;
                if bs == 0 || bs % 512 != 0 {
                    return Err(format!(
                        "'{part}': the block size must be a multiple of 512 bytes"
                    ));
                }
            }
            i += 1;
        }
        let passes = passes.ok_or_else(|| {
            format!(
                "'{part}': how many times to write the region? e.g. \"{} 2x\"",
                words[0]
            )
        })?;
        steps.push(PreStep {
            random,
            bs,
            passes,
            span,
        });
    }
    Ok(steps)
}

/// How preconditioning writes are placed (see the module's overview).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreClock {
    /// Through the FTLs without timing, where the drives have not run yet (a session built,
    /// not loaded); on the clock otherwise.
    #[default]
    Untimed,
    /// On the simulator's clock, request by request.
    Simulated,
}

/// What preconditioning did: per step, bytes written and, when it ran on the clock, the
/// simulated time taken and its IOPS.
#[derive(Debug, Clone, PartialEq)]
pub struct PreDone {
    pub step: PreStep,
    pub bytes: u64,
    /// `None`: written through the FTL without timing.
    pub timed: Option<PreTimed>,
}

/// A preconditioning step's figures on the simulator's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreTimed {
    pub sim_ns: u64,
    pub iops: f64,
}

impl std::fmt::Display for PreDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.timed {
            Some(t) => write!(
                f,
                "{} ({} written in {} simulated, {:.0} IOPS)",
                self.step,
                format_size(self.bytes),
                format_duration(t.sim_ns),
                t.iops
            ),
            None => write!(
                f,
                "{} ({} written through the FTL, untimed)",
                self.step,
                format_size(self.bytes)
            ),
        }
    }
}

/// Checks `steps` against the target before anything is built: a step's region (`over SIZE`,
/// from the measured region's start) must lie on the drive or array.
pub fn check_precondition(
    steps: &[PreStep],
    measured: &WorkloadSpec,
    target: &SimTarget,
) -> Result<(), EngineError> {
    let (_, start, _, size) = sim_geometry(measured, target)?;
    for step in steps {
        if let Some(s) = step.span.filter(|&s| s > size - start) {
            return Err(Invalid::Precondition(format!(
                "'{step}': over {} from offset {} goes beyond the end of the simulated {} ({})",
                format_size(s),
                format_size(start),
                if target.drives > 1 { "array" } else { "drive" },
                format_size(size)
            ))
            .into());
        }
    }
    Ok(())
}

/// Runs `steps` on the session's drives over the region of `measured` (its offset and span),
/// placing the writes as `clock` says.
pub fn precondition(
    session: &mut SimSession,
    target: &SimTarget,
    measured: &WorkloadSpec,
    steps: &[PreStep],
    opts: &SimOptions<'_>,
    clock: PreClock,
) -> Result<Vec<PreDone>, EngineError> {
    check_precondition(steps, measured, target)?;
    let (_, start, span, size) = sim_geometry(measured, target)?;
    let mut done = Vec::new();
    for step in steps {
        let span = step.span.unwrap_or(span).min(size - start);
        let spec = WorkloadSpec {
            rw: if step.random {
                RwMode::Randwrite
            } else {
                RwMode::Write
            },
            read_pct: 0,
            random_pct: if step.random { 100 } else { 0 },
            bs: step.bs.min(span),
            align: step.bs.min(span),
            offset: start,
            span: Some(span),
            qd: 32,
            jobs: 1,
            stop: StopCondition {
                bytes: Some(((span as f64 * step.passes) as u64).max(step.bs)),
                ..Default::default()
            },
            ramp_ns: 0,
            seed: measured.seed ^ 0x9e37_79b9,
            ..Default::default()
        };
        if clock == PreClock::Untimed {
            if let Some(w) = session.write_untimed(&spec, opts)? {
                done.push(PreDone {
                    step: step.clone(),
                    bytes: w.bytes,
                    timed: None,
                });
                if w.interrupted {
                    break;
                }
                continue;
            }
        }
        let t0 = session.now();
        let out = session.run(&[SimJob::new(&spec)], opts)?;
        let r = &out[0].result;
        done.push(PreDone {
            step: step.clone(),
            bytes: r.write.bytes,
            timed: Some(PreTimed {
                sim_ns: session.now() - t0,
                iops: r.write.iops,
            }),
        });
        if r.interrupted {
            break;
        }
    }
    Ok(done)
}

/// The PTS criteria over the last [`WINDOW`] values: (average, range %, fit excursion %).
pub fn window_check(y: &[f64]) -> Option<(f64, f64, f64)> {
    if y.len() < WINDOW {
        return None;
    }
    let w = &y[y.len() - WINDOW..];
    let n = WINDOW as f64;
    let avg = w.iter().sum::<f64>() / n;
    if avg <= 0.0 {
        return None;
    }
    let (min, max) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in w.iter().enumerate() {
        sxy += (i as f64 - xm) * (v - avg);
        sxx += (i as f64 - xm) * (i as f64 - xm);
    }
    let slope = sxy / sxx;
    let excursion = (slope * (n - 1.0)).abs();
    Some((avg, 100.0 * (max - min) / avg, 100.0 * excursion / avg))
}

/// Whether a window's figures meet the PTS criteria (range ≤ 20 %, excursion ≤ 10 %).
pub fn is_steady(range_pct: f64, slope_pct: f64) -> bool {
    range_pct <= 20.0 && slope_pct <= 10.0
}

/// The seed of steady-state round `k` (0-based): the workload's own for the first round.
pub fn round_seed(seed: u64, k: usize) -> u64 {
    if k == 0 {
        seed
    } else {
        seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// [`precondition`], said as a note for the result (`preconditioned by workload: …`); `None`
/// without steps.
pub fn precondition_noted(
    session: &mut SimSession,
    target: &SimTarget,
    measured: &WorkloadSpec,
    steps: &[PreStep],
    opts: &SimOptions<'_>,
    clock: PreClock,
) -> Result<Option<String>, EngineError> {
    if steps.is_empty() {
        return Ok(None);
    }
    let done = precondition(session, target, measured, steps, opts, clock)?;
    let said: Vec<String> = done.iter().map(|d| d.to_string()).collect();
    Ok(Some(format!(
        "preconditioned by workload: {}",
        said.join("; ")
    )))
}

/// The measured part of a simulated run on `session`: with `steady_state`, SNIA PTS rounds
/// until steady state ([`run_to_steady_state`]; the result's first note says whether and at
/// which round it was reached, and its `steady_state` holds the rounds), else one run of
/// `spec`.
pub fn measure_on_session(
    session: &mut SimSession,
    spec: &WorkloadSpec,
    steady_state: bool,
    opts: &SimOptions<'_>,
) -> Result<RunResult, EngineError> {
    if !steady_state {
        let job = SimJob::new(spec);
        let mut out = session.run(std::slice::from_ref(&job), opts)?;
        return Ok(out.remove(0).result);
    }
    let (mut r, ss) = run_to_steady_state(session, spec, opts)?;
    let note = match ss.reached_at {
        Some(k) => format!(
            "SNIA PTS steady state reached at round {k} (window of 5 rounds: average {:.0} IOPS, range {:.1} %, best-fit excursion {:.1} %); the result is round {k}",
            ss.window_avg, ss.range_pct, ss.slope_pct
        ),
        None => format!(
            "SNIA PTS steady state not reached in {} rounds (last window: range {:.1} %, best-fit excursion {:.1} %); the result is the last round",
            ss.rounds.len(),
            ss.range_pct,
            ss.slope_pct
        ),
    };
    r.notes.insert(0, note);
    r.steady_state = Some(ss);
    Ok(r)
}

/// Runs `spec` in rounds (each its full length) until the last `WINDOW` (5) rounds are steady or
/// `MAX_ROUNDS` (25) have run; returns the last round's result and the verdict.
pub fn run_to_steady_state(
    session: &mut SimSession,
    spec: &WorkloadSpec,
    opts: &SimOptions<'_>,
) -> Result<(RunResult, SteadyState), EngineError> {
    let mut rounds = Vec::new();
    let mut last = None;
    let mut verdict = (0.0, 0.0, 0.0);
    let mut reached_at = None;
    for k in 0..MAX_ROUNDS {
        // Each round continues the workload with fresh random offsets, as one long run would:
        // with the same seed every round would rewrite the same offsets as the one before, and
        // the drive would see a small hot set instead of the workload (its GC would find whole
        // blocks invalid and its write amplification would fall towards 1).
        let round = WorkloadSpec {
            seed: round_seed(spec.seed, k),
            ..spec.clone()
        };
        let mut out = session.run(&[SimJob::new(&round)], opts)?;
        let r = out.remove(0).result;
        let interrupted = r.interrupted;
        rounds.push(r.read.iops + r.write.iops + r.trim.iops);
        last = Some(r);
        if interrupted {
            break;
        }
        if let Some(v) = window_check(&rounds) {
            verdict = v;
            if is_steady(v.1, v.2) {
                reached_at = Some(rounds.len());
                break;
            }
        }
    }
    let (window_avg, range_pct, slope_pct) = verdict;
    Ok((
        last.expect("at least one round ran"),
        SteadyState {
            rounds,
            reached_at,
            window_avg,
            range_pct,
            slope_pct,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_with_defaults_and_errors_name_the_step() {
        let s = parse_precondition("seqwrite 2x, randwrite 4k 1.5x over 8GiB").unwrap();
        assert_eq!(
            s,
            vec![
                PreStep {
                    random: false,
                    bs: 128 << 10,
                    passes: 2.0,
                    span: None
                },
                PreStep {
                    random: true,
                    bs: 4096,
                    passes: 1.5,
                    span: Some(8 << 30)
                },
            ]
        );
        assert_eq!(s[1].to_string(), "randwrite 4 KiB 1.5x over 8 GiB");
        for (bad, says) in [
            ("", "empty step"),
            ("seqwrite", "how many times"),
            ("readall 1x", "unknown step"),
            ("randwrite 4k 0x", "number of passes"),
            ("randwrite 4k 1x over", "needs a size"),
            ("randwrite 100 1x", "multiple of 512"),
            ("seqwrite 1x,", "empty step"),
        ] {
            let e = parse_precondition(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_window_criteria_are_snia_s() {
        // flat: steady
        let (avg, range, slope) = window_check(&[9.0, 100.0, 100.0, 100.0, 100.0, 100.0]).unwrap();
        assert_eq!((avg, range, slope), (100.0, 0.0, 0.0));
        // a steady fall of 5 % per round: range 20 % (at the line), fit excursion 20 %: not steady
        let y = [100.0, 95.0, 90.0, 85.0, 80.0];
        let (avg, range, slope) = window_check(&y).unwrap();
        assert_eq!(avg, 90.0);
        assert!((range - 22.22).abs() < 0.01 && (slope - 22.22).abs() < 0.01);
        assert!(!is_steady(range, slope));
        // noise without a trend: range within 20 %, excursion small
        let (_, range, slope) = window_check(&[100.0, 110.0, 95.0, 108.0, 99.0]).unwrap();
        assert!(is_steady(range, slope), "{range} {slope}");
        assert!(window_check(&[1.0, 2.0, 3.0, 4.0]).is_none());
    }
}
