//! What the engine needs from a place to send I/O.

use ssdlab_stats::MemberStats;
use ssdlab_workload::Op;
use std::io;

/// One completed operation.
#[derive(Debug, Clone, Copy)]
pub struct Cqe {
    pub slot: u32,
    /// Bytes transferred, or a negative errno.
    pub res: i64,
    /// Completion time on the backend's clock, ns.
    pub t_ns: u64,
    /// When the backend itself did the I/O while it was pushed (a trim's `BLKDISCARD`, done
    /// synchronously as fio does it): when it began, so that its completion latency is the
    /// call's. [`Cqe::WITH_BATCH`]: the I/O was submitted with the others of its batch. (A
    /// plain number rather than an `Option`, which would make every completion 8 bytes
    /// larger on the engine's hot path.)
    pub started_ns: u64,
}

impl Cqe {
    /// [`Cqe::started_ns`] of an I/O submitted with its batch.
    pub const WITH_BATCH: u64 = u64::MAX;
}

/// A place that accepts operations into numbered slots and reports their completions.
///
/// The engine pushes at most one operation per idle slot, then calls [`Backend::submit_wait`] and
/// [`Backend::reap`]. Implementations must not allocate per operation.
///
/// No method has a default body: a wrapper (a recorder, a fault injector) must say what it
/// does with each, so that forwarding one cannot be forgotten (a wrapper that did not forward
/// `submit_batch` once changed fio's `iodepth_submit` whenever `write_iolog` was set).
pub trait Backend {
    /// The backend's clock in ns (wall clock for real targets, virtual time for simulated ones).
    fn now(&mut self) -> u64;
    /// The data buffer of an idle slot, when the backend carries data (`None` for backends
    /// without data, and for a slot whose I/O is in flight).
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]>;
    /// Queues `op` on `slot`. An error means the backend refused the operation (not an I/O error
    /// of the target, which comes back as a negative completion): the run stops and drains.
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()>;
    /// Submits what was queued and waits until at least `min` completions are ready or
    /// `timeout_ns` of wall time passed.
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()>;
    /// Submits what was queued and waits until a completion is ready or the backend's clock
    /// reaches `deadline_ns`, whichever comes first; `inflight` is how many I/Os are in flight
    /// (with none it only waits for the deadline). Backends on virtual time move their clock to
    /// the deadline when nothing completes before it; wall-clock backends use
    /// `wall_clock_wait_until`.
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()>;
    /// Appends ready completions to `out`.
    fn reap(&mut self, out: &mut Vec<Cqe>);
    /// Called once when the measured part of the run starts (after the ramp), so backends that
    /// keep their own counters can reset them.
    fn mark_measurement_start(&mut self);
    /// How pushed operations reach the kernel, for fio's `iodepth_submit`: in batches of this
    /// many as they are pushed (the rest with the next wait); 0 = all with the next wait.
    fn submit_batch(&self) -> u32;
    /// Per-member statistics of a stripe set (empty for single targets).
    fn member_stats(&mut self) -> Vec<MemberStats>;
}

/// [`Backend::wait_until`] on the wall clock: with nothing in flight it waits out the time left
/// as fio's `usec_sleep` does (think time, rate limits), and otherwise calls
/// [`Backend::submit_wait`] with the time left (which must then honour its timeout).
pub fn wall_clock_wait_until<B: Backend + ?Sized>(
    b: &mut B,
    deadline_ns: u64,
    inflight: u32,
) -> io::Result<()> {
    let left = deadline_ns.saturating_sub(b.now());
    if inflight > 0 {
        return b.submit_wait(usize::from(left > 0), left);
    }
    if left > 0 {
        wait_out(|| b.now(), deadline_ns);
    }
    Ok(())
}

/// Waits until `deadline_ns` on the clock `now` reads, with nothing in flight, as fio's
/// `usec_sleep` waits (think time, rate limits): sleeps all but the sleep's granularity, then
/// spins to the deadline. A plain sleep overshoots by the timer slack (50 µs by default), which
/// made a 100 µs think time cost about 150 µs where fio's costs about 100.
pub fn wait_out(mut now: impl FnMut() -> u64, deadline_ns: u64) {
    // (measured once, before the time left is read: the first wait does not pay for it)
    let g = sleep_granularity_ns();
    let left = deadline_ns.saturating_sub(now());
    if left > g {
        std::thread::sleep(std::time::Duration::from_nanos(left - g));
    }
    while now() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// How late a short sleep wakes on this machine, measured once as fio measures it at start
/// (`fio_time_init`: the longest of ten 1 µs `nanosleep`s); waits shorter than this spin.
pub fn sleep_granularity_ns() -> u64 {
    static G: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *G.get_or_init(|| {
        (0..10)
            .map(|_| {
                let t = std::time::Instant::now();
                std::thread::sleep(std::time::Duration::from_micros(1));
                t.elapsed().as_nanos() as u64
            })
            .max()
            .unwrap_or(0)
            // a loaded machine can stall one sample for milliseconds: never spin longer
            .min(1_000_000)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn wait_out_returns_at_the_deadline_not_before() {
        let t0 = Instant::now();
        let now = || t0.elapsed().as_nanos() as u64;
        for left in [0u64, 20_000, 150_000, 2_000_000] {
            let deadline = now() + left;
            wait_out(now, deadline);
            assert!(now() >= deadline, "returned before a {left} ns deadline");
        }
    }

    #[test]
    fn wait_out_spins_on_the_clock_it_is_given() {
        // a clock that moves 1 µs per reading: the deadline is met by reading it, whatever
        // the sleep's granularity
        let mut t = 0u64;
        let clock = std::cell::Cell::new(0u64);
        wait_out(
            || {
                t += 1_000;
                clock.set(t);
                t
            },
            50_000,
        );
        assert!(clock.get() >= 50_000);
    }
}
