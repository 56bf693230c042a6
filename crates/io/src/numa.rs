//! NUMA nodes as Linux shows them (`/sys/devices/system/node`), and the calling thread's
//! memory policy (`set_mempolicy(2)`), for fio's `numa_cpu_nodes` and `numa_mem_policy`.

use std::io;

const NODES: &str = "/sys/devices/system/node";

/// A memory policy of `set_mempolicy(2)` (what fio sets through libnuma).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemPolicy {
    /// The system's default (allocate on the node the thread runs on).
    Default,
    /// Allocate on this node first (`MPOL_PREFERRED`, libnuma's `numa_set_preferred`).
    Prefer(u32),
    /// Allocate only on these nodes (`MPOL_BIND`, `numa_set_membind`).
    Bind(Vec<u32>),
    /// Spread page by page over these nodes (`MPOL_INTERLEAVE`, `numa_set_interleave_mask`).
    Interleave(Vec<u32>),
    /// Allocate on the node the thread runs on (`MPOL_LOCAL`, `numa_set_localalloc`).
    Local,
}

/// Parses a Linux list (`0`, `0,2`, `0-3,8`) as the kernel prints it in sysfs.
fn parse_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if a > b {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// The nodes that are online (`/sys/devices/system/node/online`; a kernel without NUMA has
/// node 0 only).
pub fn online_nodes() -> Vec<u32> {
    std::fs::read_to_string(format!("{NODES}/online"))
        .ok()
        .and_then(|s| parse_list(&s))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| vec![0])
}

/// The CPUs of node `node` (`nodeN/cpulist`); every configured CPU on a kernel without NUMA.
pub fn node_cpus(node: u32) -> io::Result<Vec<u32>> {
    match std::fs::read_to_string(format!("{NODES}/node{node}/cpulist")) {
        Ok(s) => parse_list(&s).ok_or_else(|| io::Error::other(format!("node{node}/cpulist: {s}"))),
        Err(_) if node == 0 && !std::path::Path::new(NODES).exists() => {
            Ok((0..crate::cpu::cpus_configured()).collect())
        }
        Err(e) => Err(io::Error::other(format!("node {node}: {e}"))),
    }
}

/// Sets the calling thread's memory policy: the memory it touches first from now on (its
/// I/O buffers) comes from the nodes the policy names.
pub fn set_mem_policy(p: &MemPolicy) -> io::Result<()> {
    const MPOL_DEFAULT: libc::c_int = 0;
    const MPOL_PREFERRED: libc::c_int = 1;
    const MPOL_BIND: libc::c_int = 2;
    const MPOL_INTERLEAVE: libc::c_int = 3;
    const MPOL_LOCAL: libc::c_int = 4;
    let (mode, nodes): (libc::c_int, &[u32]) = match p {
        MemPolicy::Default => (MPOL_DEFAULT, &[]),
        MemPolicy::Prefer(n) => (MPOL_PREFERRED, std::slice::from_ref(n)),
        MemPolicy::Bind(v) => (MPOL_BIND, v),
        MemPolicy::Interleave(v) => (MPOL_INTERLEAVE, v),
        MemPolicy::Local => (MPOL_LOCAL, &[]),
    };
    const BITS: usize = libc::c_ulong::BITS as usize;
    let words = nodes.iter().max().map_or(1, |&m| m as usize / BITS + 1);
    let mut mask = vec![0 as libc::c_ulong; words];
    for &n in nodes {
        mask[n as usize / BITS] |= 1 << (n as usize % BITS);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        // (the kernel reads maxnode - 1 bits, as libnuma passes them)
        (mask.as_ptr(), (words * BITS + 1) as libc::c_ulong)
    };
    // SAFETY: set_mempolicy reads `maxnode - 1` bits from `ptr`, which points to `words`
    // c_ulongs we own (or is null with maxnode 0); it changes only this thread's policy.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's policy mode (`get_mempolicy(2)`).
    fn mode() -> libc::c_int {
        let mut m: libc::c_int = -1;
        // SAFETY: get_mempolicy writes the mode into `m`; no node mask is asked for.
        let r = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &mut m as *mut libc::c_int,
                std::ptr::null_mut::<libc::c_ulong>(),
                0 as libc::c_ulong,
                std::ptr::null_mut::<libc::c_void>(),
                0 as libc::c_ulong,
            )
        };
        assert_eq!(r, 0, "{}", io::Error::last_os_error());
        m
    }

    #[test]
    fn lists_parse_as_sysfs_prints_them() {
        assert_eq!(parse_list("0\n"), Some(vec![0]));
        assert_eq!(parse_list("0-2,8"), Some(vec![0, 1, 2, 8]));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn this_machine_has_a_node_with_cpus() {
        let nodes = online_nodes();
        assert!(!nodes.is_empty());
        assert!(!node_cpus(nodes[0]).unwrap().is_empty());
    }

    #[test]
    fn a_thread_takes_each_policy() {
        let node = online_nodes()[0];
        std::thread::spawn(move || {
            for (p, want) in [
                (MemPolicy::Bind(vec![node]), 2),
                (MemPolicy::Interleave(vec![node]), 3),
                (MemPolicy::Prefer(node), 1),
                (MemPolicy::Local, 4),
                (MemPolicy::Default, 0),
            ] {
                set_mem_policy(&p).unwrap();
                assert_eq!(mode(), want, "{p:?}");
            }
            // a node the machine lacks is the kernel's error
            assert!(set_mem_policy(&MemPolicy::Bind(vec![1000])).is_err());
        })
        .join()
        .unwrap();
    }
}
