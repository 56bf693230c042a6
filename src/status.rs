//! The one-line status `ssdlab run` shows on stderr while it runs, when stderr is a terminal
//! (like fio's `Jobs: 1 … [eta 00m:06s]` line): progress, elapsed time and ETA, and the IOPS
//! and MB/s of the last second. Simulated runs show virtual time and simulated rates. The engine
//! publishes its counts every 100 ms of its clock (never per I/O); this thread reads them.

use ssdlab_engine::Progress;
use ssdlab_workload::WorkloadSpec;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Runs `f` with a status line on stderr when stderr is a terminal (`f` gets the progress to
/// report to), without one otherwise.
pub fn with_status_line<T>(
    spec: &WorkloadSpec,
    simulated: bool,
    f: impl FnOnce(Option<&Progress>) -> T,
) -> T {
    if !std::io::stderr().is_terminal() || std::env::var_os("SSDLAB_NO_STATUS").is_some() {
        return f(None);
    }
    let progress = Progress::default();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (p, d) = (&progress, &done);
        s.spawn(move || status_loop(spec, simulated, p, d));
        let out = f(Some(&progress));
        done.store(true, Ordering::Relaxed);
        out
    })
}

fn status_loop(spec: &WorkloadSpec, simulated: bool, p: &Progress, done: &AtomicBool) {
    let started = Instant::now();
    let mut last = (0u64, 0u64, 0u64); // ios, bytes, t_ns at the last refresh
    let mut shown = false;
    let mut next = started + Duration::from_secs(1);
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if Instant::now() < next {
            continue;
        }
        next += Duration::from_secs(1);
        let now = (
            p.ios.load(Ordering::Relaxed),
            p.bytes.load(Ordering::Relaxed),
            p.t_ns.load(Ordering::Relaxed),
        );
        let line = status_text(spec, simulated, started.elapsed(), last, now);
        last = now;
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K{line}");
        let _ = e.flush();
        shown = true;
    }
    if shown {
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K");
        let _ = e.flush();
    }
}

/// The status text from two readings of the progress (`before`, `now`: ios, bytes, measured ns).
pub fn status_text(
    spec: &WorkloadSpec,
    simulated: bool,
    wall: Duration,
    before: (u64, u64, u64),
    now: (u64, u64, u64),
) -> String {
    let dt = now.2.saturating_sub(before.2);
    let (iops, bps) = if dt > 0 {
        let s = dt as f64 / 1e9;
        (
            (now.0 - before.0.min(now.0)) as f64 / s,
            (now.1 - before.1.min(now.1)) as f64 / s,
        )
    } else {
        (0.0, 0.0)
    };
    // How far along: by time, else by the I/O or byte budget.
    let fraction = match (spec.stop.time_ns, spec.stop.ios, spec.stop.bytes) {
        (Some(t), _, _) if t > 0 => now.2 as f64 / t as f64,
        (_, Some(n), _) if n > 0 => now.0 as f64 / n as f64,
        (_, _, Some(b)) if b > 0 => now.1 as f64 / b as f64,
        _ => 0.0,
    }
    .clamp(0.0, 1.0);
    let eta = if fraction > 0.0 {
        let secs = wall.as_secs_f64() * (1.0 - fraction) / fraction;
        format_secs(secs)
    } else {
        "-".to_string()
    };
    let clock = if simulated {
        format!("sim {} ", format_secs(now.2 as f64 / 1e9))
    } else {
        String::new()
    };
    format!(
        "[{:>3.0}%] {clock}elapsed {} eta {}  {} IOPS  {:.1} MB/s",
        fraction * 100.0,
        format_secs(wall.as_secs_f64()),
        eta,
        ssdlab_report::table::fmt_count(iops),
        bps / 1e6
    )
}

fn format_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:02}m:{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text() {
        let spec = WorkloadSpec {
            stop: ssdlab_workload::StopCondition {
                time_ns: Some(10_000_000_000),
                ios: None,
                bytes: None,
            },
            ..Default::default()
        };
        let t = status_text(
            &spec,
            false,
            Duration::from_secs(4),
            (0, 0, 3_000_000_000),
            (15_000, 61_440_000, 4_000_000_000),
        );
        assert_eq!(
            t,
            "[ 40%] elapsed 00m:04s eta 00m:06s  15,000 IOPS  61.4 MB/s"
        );
        let t = status_text(
            &spec,
            true,
            Duration::from_secs(1),
            (0, 0, 0),
            (10, 0, 5_000_000_000),
        );
        assert!(
            t.starts_with("[ 50%] sim 00m:05s elapsed 00m:01s eta 00m:01s"),
            "{t}"
        );
    }
}
