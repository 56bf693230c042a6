//! SIGINT, SIGTERM and SIGHUP: the first one raises the stop flag that runs, layouts and sweeps
//! poll (they drain, keep what finished, and report it marked interrupted); a second one exits at
//! once. The exit code of an interrupted command is 128 + the signal number (130, 143, 129).

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Sections with nothing to keep that cannot stop part way (building a simulated drive in its
/// state): a signal during one ends ssdlab at once.
static BUILDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Temporary files being written: removed if a second signal ends ssdlab at once.
static TEMP_FILES: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Registers a temporary file while it is written; removed from the list when dropped.
pub struct TempFileGuard(std::path::PathBuf);

/// Keeps `path` (a temporary file) on the list removed before an exit at once.
pub fn remove_on_exit(path: &std::path::Path) -> TempFileGuard {
    if let Ok(mut v) = TEMP_FILES.lock() {
        v.push(path.to_path_buf());
    }
    TempFileGuard(path.to_path_buf())
}

impl Drop for TempFileGuard {
    fn drop(&mut self) {
        if let Ok(mut v) = TEMP_FILES.lock() {
            v.retain(|p| p != &self.0);
        }
    }
}

/// Ends ssdlab at once after a signal, removing the temporary files being written.
fn exit_now(sig: i32) -> ! {
    if let Ok(v) = TEMP_FILES.lock() {
        for p in v.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
    std::process::exit(128 + sig)
}

/// Runs `f`, a step with nothing to keep that does not poll the stop flag (building and
/// preconditioning simulated drives): a signal meanwhile ends ssdlab at once, saying so,
/// instead of after the step.
pub fn while_building<T>(f: impl FnOnce() -> T) -> T {
    building(true);
    let out = f();
    building(false);
    out
}

/// Enters (`true`) or leaves (`false`) a step [`while_building`] describes (for the engine's
/// `SimOptions::building`).
pub fn building(on: bool) {
    if on {
        BUILDING.fetch_add(1, Ordering::SeqCst);
    } else {
        BUILDING.fetch_sub(1, Ordering::SeqCst);
    }
}

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
                    exit_now(sig);
                }
                if BUILDING.load(Ordering::SeqCst) > 0 {
                    if !quiet {
                        crate::output::note(&format!(
                            "{} while the simulated drives were being built; nothing was run",
                            name(sig)
                        ));
                    }
                    exit_now(sig);
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
