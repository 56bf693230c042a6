//! How much memory this process may still use, so a command can refuse a run whose estimate does
//! not fit instead of dying with "memory allocation failed" half way.
//!
//! The limit is the smallest of: the kernel's estimate of memory available without swapping
//! (`MemAvailable` in `/proc/meminfo`), the room left under this process's cgroup v2 limit
//! (`memory.max − memory.current`), and the room left under `ulimit -v` (`RLIMIT_AS` minus the
//! address space already mapped, `VmSize`).

use std::fmt;

/// A limit on the memory this process may still allocate, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    pub source: LimitSource,
}

/// Where a [`MemoryLimit`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// `MemAvailable` in `/proc/meminfo`.
    Available,
    /// The process's cgroup (v2) `memory.max`.
    Cgroup,
    /// `ulimit -v` (`RLIMIT_AS`).
    AddressSpace,
    /// The user's `--max-memory`.
    User,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitSource::Available => "available memory",
            LimitSource::Cgroup => "the cgroup's memory limit",
            LimitSource::AddressSpace => "the address-space limit (ulimit -v)",
            LimitSource::User => "--max-memory",
        })
    }
}

fn meminfo_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_kib(&text, "MemAvailable").map(|k| k * 1024)
}

fn cgroup_room() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cg.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let max = std::fs::read_to_string(dir.join("memory.max")).ok()?;
    let max: u64 = max.trim().parse().ok()?; // "max" = no limit
    let cur: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(cur))
}

fn address_space_room() -> Option<u64> {
    // SAFETY: getrlimit writes into the struct we pass.
    let lim = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_AS, &mut r) != 0 {
            return None;
        }
        r.rlim_cur
    };
    if lim == libc::RLIM_INFINITY {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = meminfo_kib(&status, "VmSize").unwrap_or(0) * 1024;
    Some((lim as u64).saturating_sub(used))
}

/// Keeps glibc from reserving a 64 MiB malloc arena per thread (up to eight per core): under an
/// address-space limit (`ulimit -v`) those reservations, not real use, would exhaust it. Four
/// arenas are plenty for ssdlab's few allocating threads.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes an allocator tunable; called before threads allocate.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 4);
    }
}

/// How long a reading of the system's memory is reused (checking a million sweep points must
/// not read `/proc` a million times).
const REUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// The memory this process may still allocate (see the module docs), capped by `user` when
/// given; `None` when nothing is known (no `/proc`). Readings are reused for a quarter second.
pub fn limit(user: Option<u64>) -> Option<MemoryLimit> {
    use std::sync::Mutex;
    use std::time::Instant;
    static LAST: Mutex<Option<(Instant, Option<MemoryLimit>)>> = Mutex::new(None);
    let system = {
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        match *last {
            Some((at, v)) if at.elapsed() < REUSE => v,
            _ => {
                let v = system_limit();
                *last = Some((Instant::now(), v));
                v
            }
        }
    };
    match (system, user) {
        (Some(s), Some(u)) if u < s.bytes => Some(MemoryLimit {
            bytes: u,
            source: LimitSource::User,
        }),
        (None, Some(u)) => Some(MemoryLimit {
            bytes: u,
            source: LimitSource::User,
        }),
        (s, _) => s,
    }
}

/// The system's limit, read now.
fn system_limit() -> Option<MemoryLimit> {
    let mut best: Option<MemoryLimit> = None;
    let mut consider = |bytes: Option<u64>, source| {
        if let Some(bytes) = bytes {
            if best.is_none_or(|b| bytes < b.bytes) {
                best = Some(MemoryLimit { bytes, source });
            }
        }
    };
    consider(mem_available(), LimitSource::Available);
    consider(cgroup_room(), LimitSource::Cgroup);
    consider(address_space_room(), LimitSource::AddressSpace);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo() {
        let t = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(meminfo_kib(t, "MemAvailable"), Some(20_000_000));
        assert_eq!(meminfo_kib(t, "MemFree"), None);
    }

    #[test]
    fn user_limit_caps() {
        let l = limit(Some(4096)).unwrap();
        assert_eq!(
            l,
            MemoryLimit {
                bytes: 4096,
                source: LimitSource::User
            }
        );
        assert!(limit(None).is_some_and(|l| l.bytes > 4096));
    }
}
