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

/// The CPUs this machine has configured (`sysconf(_SC_NPROCESSORS_CONF)`), at least 1.
pub fn cpus_configured() -> u32 {
    // SAFETY: sysconf reads a system constant; it has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    n.max(1) as u32
}

/// Confines the calling thread to `cpus` (fio's `cpus_allowed`: `sched_setaffinity`). An
/// empty list, a CPU the machine lacks, or the kernel's refusal is an error.
pub fn pin_thread(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is a plain bit array, valid when zeroed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let max = (std::mem::size_of::<libc::cpu_set_t>() * 8) as u32;
    if cpus.is_empty() {
        return Err(std::io::Error::other("no CPU to run on"));
    }
    for &c in cpus {
        if c >= max || c >= cpus_configured() {
            return Err(std::io::Error::other(format!(
                "CPU {c} too large (max={})",
                cpus_configured() - 1
            )));
        }
        // SAFETY: `c` is below the set's size in bits, checked above.
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on (`sched_getaffinity`).
pub fn thread_cpus() -> std::io::Result<Vec<u32>> {
    // SAFETY: cpu_set_t is a plain bit array, valid when zeroed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is the calling thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let max = (std::mem::size_of::<libc::cpu_set_t>() * 8) as u32;
    // SAFETY: every index is below the set's size in bits.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect())
}

/// Adds `inc` to the calling thread's nice value (fio's `nice`: `nice(2)`, which on Linux
/// changes the calling thread only); threads it starts afterwards inherit it.
pub fn nice_thread(inc: i32) -> std::io::Result<()> {
    // SAFETY: nice takes a plain integer; -1 is also a valid result, so errno decides.
    unsafe {
        *libc::__errno_location() = 0;
        if libc::nice(inc) == -1 && *libc::__errno_location() != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The calling thread's nice value.
pub fn thread_nice() -> std::io::Result<i32> {
    // SAFETY: getpriority takes plain integers; -1 is also a valid result, so errno decides.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, 0);
        if n == -1 && *libc::__errno_location() != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(n)
    }
}

const IOPRIO_WHO_PROCESS: libc::c_int = 1;
const IOPRIO_CLASS_SHIFT: u32 = 13;

/// Sets the calling thread's I/O priority (fio's `prioclass` and `prio`: `ioprio_set` with
/// `IOPRIO_WHO_PROCESS` and 0, the calling thread): class 0 (none) is taken as best effort, as
/// fio's `ioprio_value` takes it. Its I/Os — io_uring's too, which take the submitter's
/// priority — carry it to the device's scheduler.
pub fn set_io_priority(class: u32, level: u32) -> std::io::Result<()> {
    let class = if class == 0 { 2 } else { class };
    let value = (class << IOPRIO_CLASS_SHIFT) | level;
    // SAFETY: ioprio_set takes plain integers and changes only this thread's priority.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, value) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The calling thread's I/O priority: (class, level).
pub fn io_priority() -> std::io::Result<(u32, u32)> {
    // SAFETY: ioprio_get takes plain integers and reads only this thread's priority.
    let r = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let v = r as u32;
    Ok((v >> IOPRIO_CLASS_SHIFT, v & ((1 << IOPRIO_CLASS_SHIFT) - 1)))
}

#[cfg(test)]
mod priority_tests {
    use super::*;

    /// A thread's nice value and I/O priority are its own, and read back as set.
    #[test]
    fn a_thread_takes_a_nice_value_and_an_io_priority() {
        let before = thread_nice().unwrap();
        std::thread::spawn(move || {
            nice_thread(3).unwrap();
            assert_eq!(thread_nice().unwrap(), (before + 3).min(19));
            set_io_priority(2, 4).unwrap();
            assert_eq!(io_priority().unwrap(), (2, 4));
            set_io_priority(0, 7).unwrap();
            assert_eq!(io_priority().unwrap(), (2, 7), "class 0 is best effort");
            set_io_priority(3, 0).unwrap();
            assert_eq!(io_priority().unwrap().0, 3);
        })
        .join()
        .unwrap();
        assert_eq!(
            thread_nice().unwrap(),
            before,
            "the spawning thread keeps its own"
        );
    }
}

#[cfg(test)]
mod affinity_tests {
    use super::*;

    /// A thread pinned to CPU 0 reads back CPU 0 only; a CPU the machine lacks is refused.
    #[test]
    fn a_thread_pins_to_its_cpus() {
        std::thread::spawn(|| {
            pin_thread(&[0]).unwrap();
            assert_eq!(thread_cpus().unwrap(), vec![0]);
            let e = pin_thread(&[cpus_configured()]).unwrap_err();
            assert!(e.to_string().contains("too large"), "{e}");
            assert!(pin_thread(&[]).is_err());
        })
        .join()
        .unwrap();
    }
}
