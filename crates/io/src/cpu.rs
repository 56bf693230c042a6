//! Process CPU usage (getrusage), to report CPU time per I/O.

/// Snapshot of the process's resource usage.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rusage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub majflt: u64,
    pub minflt: u64,
}

fn tv_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}

/// Makes the calling thread's timed sleeps and waits end within about a microsecond of their
/// deadline (`PR_SET_TIMERSLACK` of 1 ns instead of the default 50 µs), for replays that issue
/// I/O at recorded times. Best effort: an error leaves the default slack.
pub fn precise_timers() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes plain integers and only changes this thread's
    // timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Resource usage of the whole process (all threads) so far.
pub fn rusage_self() -> Rusage {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    Rusage {
        user_ns: tv_ns(ru.ru_utime),
        sys_ns: tv_ns(ru.ru_stime),
        nvcsw: ru.ru_nvcsw as u64,
        nivcsw: ru.ru_nivcsw as u64,
        majflt: ru.ru_majflt as u64,
        minflt: ru.ru_minflt as u64,
    }
}

impl Rusage {
    /// Usage between `earlier` and `self`.
    pub fn since(&self, earlier: &Rusage) -> Rusage {
        Rusage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            nvcsw: self.nvcsw.saturating_sub(earlier.nvcsw),
            nivcsw: self.nivcsw.saturating_sub(earlier.nivcsw),
            majflt: self.majflt.saturating_sub(earlier.majflt),
            minflt: self.minflt.saturating_sub(earlier.minflt),
        }
    }
}
