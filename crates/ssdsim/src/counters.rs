//! Device counters: what the drive did inside the measurement window, and how busy each
//! resource was (so a user can see what binds). Counters are written by the model and only read
//! to build [`DriveCounters`] (whose type lives in `ssdlab_stats::device`, where results carry it).

pub use ssdlab_stats::device::{DriveCounters, MergeCounters, Utilisation};

/// Raw event counts of one drive since the window started.
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct RawCounters {
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    pub nand_reads: u64,
    pub nand_read_cmds: u64,
    pub nand_programs: u64,
    pub nand_program_cmds: u64,
    pub nand_program_bytes: u64,
    pub nand_erases: u64,
    pub nand_erase_cmds: u64,
    pub rmw_reads: u64,
    pub fragment_reads: u64,
    /// Translation pages of the cached mapping table read, written back, and translation blocks
    /// erased.
    pub map_reads: u64,
    pub map_writes: u64,
    pub map_erases: u64,
    pub cache_hits: u64,
    pub unwritten_read_bytes: u64,
    pub pslc_programs: u64,
    pub cache_wait_ns: u64,
    pub program_suspends: u64,
    pub erase_suspends: u64,
}

/// Busy times of a drive's resources over a window, ns.
pub(crate) struct Busy<'a> {
    pub dies: &'a [u64],
    pub channels: &'a [u64],
    pub fw: &'a [u64],
    pub fw_roles: &'a [String],
    pub ecc: &'a [u64],
    pub link: u64,
    pub link_to_host: u64,
    pub host_cpu: &'a [u64],
}

/// The busy fractions of a drive's resources over a window of `window` ns, and the busiest.
pub(crate) fn utilisation(window: u64, b: Busy<'_>) -> Utilisation {
    let Busy {
        dies,
        channels,
        fw,
        fw_roles,
        ecc,
        link,
        link_to_host,
        host_cpu,
    } = b;
    let w = window.max(1) as f64;
    let frac = |v: &[u64]| v.iter().map(|&b| b as f64 / w).collect::<Vec<f64>>();
    let dies = frac(dies);
    let channels = frac(channels);
    let fw_cores = frac(fw);
    let ecc_engines = frac(ecc);
    let host_cpus = frac(host_cpu);
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let (link, link_to_host) = (link as f64 / w, link_to_host as f64 / w);
    let mut busiest = (String::new(), -1.0);
    let mut consider = |name: String, u: f64| {
        if u > busiest.1 {
            busiest = (name, u);
        }
    };
    for (i, &u) in dies.iter().enumerate() {
        consider(format!("die {i}"), u);
    }
    for (i, &u) in channels.iter().enumerate() {
        consider(format!("channel {i}"), u);
    }
    for (i, &u) in fw_cores.iter().enumerate() {
        match fw_roles.get(i).map(String::as_str) {
            None | Some("all") => consider(format!("fw core {i}"), u),
            Some(r) => consider(format!("fw core {i} ({r})"), u),
        }
    }
    for (i, &u) in ecc_engines.iter().enumerate() {
        consider(format!("ecc engine {i}"), u);
    }
    consider("link".into(), link);
    consider("link to host".into(), link_to_host);
    for (i, &u) in host_cpus.iter().enumerate() {
        consider(format!("host cpu {i}"), u);
    }
    Utilisation {
        die_mean: dies.iter().sum::<f64>() / dies.len().max(1) as f64,
        die_max: max(&dies),
        channel_max: max(&channels),
        fw_max: max(&fw_cores),
        ecc_max: max(&ecc_engines),
        dies,
        channels,
        fw_cores,
        fw_roles: fw_roles.to_vec(),
        host_cpus,
        ecc_engines,
        link,
        link_to_host,
        busiest: busiest.0,
        busiest_utilisation: busiest.1.max(0.0),
    }
}

/// What the invariant audit found ([`crate::Simulator::enable_audit`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditReport {
    /// Checks made.
    pub checks: u64,
    /// Checks that failed.
    pub violations: u64,
    /// The first failures, described.
    pub messages: Vec<String>,
}

/// Invariant checks run while the model executes (tests): transactions start no earlier than
/// their dependencies, dies never idle while a transaction could start, operations on a die do
/// not overlap.
#[derive(Debug, Clone, Default)]
pub(crate) struct Audit {
    pub r: AuditReport,
    /// Per die: end of the last operation started (operations must not overlap).
    pub die_end: Vec<u64>,
}

impl Audit {
    #[inline]
    pub(crate) fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.r.checks += 1;
        if !ok {
            self.r.violations += 1;
            if self.r.messages.len() < 20 {
                self.r.messages.push(what());
            }
        }
    }
}
