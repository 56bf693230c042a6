//! SIGINT, SIGTERM and SIGHUP: the first one raises the stop flag that runs, layouts and sweeps
//! poll (they drain, keep what finished, and report it marked interrupted); a second one exits at
//! once. The exit code of an interrupted command is 128 + the signal number (130, 143, 129).

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The flag the first signal raises.
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// True once a signal asked the command to stop.
pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The exit code for a command that was interrupted: 128 + the signal (130 when the stop came
/// from elsewhere).
pub fn exit_code() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 130,
        s => (128 + s).clamp(0, 255) as u8,
    }
}

fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "interrupted (SIGINT)",
        SIGTERM => "terminated (SIGTERM)",
        SIGHUP => "hung up (SIGHUP)",
        _ => "signalled",
    }
}

/// Installs the handlers; a thread waits for the signals (nothing runs in signal context but
/// signal-hook's own safe forwarding). `quiet`: say nothing on stderr (ranks other than 0 of an
/// MPI job, where every rank gets mpirun's signal).
pub fn install(quiet: bool) {
    // A file-size limit (`ulimit -f`) must make writes fail with EFBIG — so a layout is given
    // back — instead of killing ssdlab half way through one: handle SIGXFSZ (by noting it).
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(AtomicBool::new(false)),
    );
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        crate::output::note("cannot install signal handlers; Ctrl-C will end ssdlab at once");
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("ssdlab-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if STOP.swap(true, Ordering::SeqCst) {
                    // A second signal: give up at once.
                    std::process::exit(128 + sig);
                }
                SIGNAL.store(sig, Ordering::SeqCst);
                if quiet {
                    continue;
                }
                crate::output::note(&format!(
                    "{}; stopping: in-flight I/O drains, results so far are kept (again to quit at once)",
                    name(sig)
                ));
            }
        });
    if spawned.is_err() {
        crate::output::note("cannot start the signal thread; Ctrl-C will end ssdlab at once");
    }
}
