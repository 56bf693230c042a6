//! Every option fio 3.x knows — taken from fio's own sources (`options.c`, the option tables of
//! the I/O engines, the profiles' options) by `tools/gen_fio_table.py` into the `table` module —
//! with fio's aliases, which options are flags, which belong to an engine or a profile, and
//! which are deprecated; the options ssdlab accepts without them changing anything; and why
//! ssdlab does not implement the others.
//!
//! A key fio does not know is an error with the nearest name suggested; a fio option ssdlab
//! does not implement is *unsupported*: the job is refused, naming the key and its line, unless
//! `--ignore-unsupported` is given (and then the output lists it).

pub use crate::table::{ENGINES, TABLE};

/// A flag: fio's `FIO_OPT_STR_SET` (on the command line its value is optional).
pub const FLAG: bool = true;
/// An option that takes a value.
pub const VALUE: bool = false;
/// Deprecated in fio: accepted and ignored.
pub const DEPRECATED: bool = true;
/// Not deprecated.
pub const CURRENT: bool = false;

/// Where an option belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// fio's core options (`options.c`).
    Core,
    /// Options of these I/O engines (fio reads them only for a job of one of them).
    Engine(&'static [&'static str]),
    /// Options of this fio profile (`profile=`); fio registers them with the core options, and
    /// they change nothing in a job without the profile.
    Profile(&'static str),
}

/// One option fio knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FioOption {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// A flag (`time_based`): a bare key means 1, and on the command line it takes no argument.
    pub flag: bool,
    /// fio accepts it and ignores it.
    pub deprecated: bool,
    pub scope: Scope,
}

impl FioOption {
    pub const fn new(
        name: &'static str,
        aliases: &'static [&'static str],
        flag: bool,
        deprecated: bool,
        scope: Scope,
    ) -> Self {
        FioOption {
            name,
            aliases,
            flag,
            deprecated,
            scope,
        }
    }
}

/// The option a key (a name or an alias) stands for. An alias wins over an option of the same
/// name from an older fio (`allrandrepeat` is `randrepeat`'s alias now).
pub fn lookup(key: &str) -> Option<&'static FioOption> {
    static ALIASES: std::sync::OnceLock<
        std::collections::HashMap<&'static str, &'static FioOption>,
    > = std::sync::OnceLock::new();
    let aliases = ALIASES.get_or_init(|| {
        let mut m = std::collections::HashMap::new();
        for o in TABLE {
            for a in o.aliases {
                // the first option naming an alias wins, as a scan of the table would find it
                m.entry(*a).or_insert(o);
            }
        }
        m
    });
    aliases.get(key).copied().or_else(|| {
        TABLE
            .binary_search_by(|o| o.name.cmp(key))
            .ok()
            .map(|i| &TABLE[i])
    })
}

/// The option an alias stands for (the key itself when it is not an alias).
pub fn canonical(key: &str) -> &str {
    lookup(key).map(|o| o.name).unwrap_or(key)
}

/// True for every option (or alias) fio knows.
pub fn is_fio_option(key: &str) -> bool {
    lookup(key).is_some()
}

/// True for fio's flags (`FIO_OPT_STR_SET`: no separate value on the command line).
pub fn is_flag(key: &str) -> bool {
    lookup(key).is_some_and(|o| o.flag)
}

/// True for the name of an I/O engine fio has built in (or one of its aliases, `aio*` and
/// `linuxaio*` for libaio).
pub fn is_fio_engine(name: &str) -> bool {
    ENGINES.contains(&name) || name.starts_with("aio") || name.starts_with("linuxaio")
}

/// Options ssdlab accepts that change nothing in its runs, with the reason (listed in
/// `docs/FIO-JOBS.md`). Only fio's default (or an equivalent) value is accepted where another
/// value would change the run; that check is in the job module.
pub const NO_EFFECT: &[(&str, &str)] = &[
    ("description", "text only"),
    ("thread", "ssdlab always runs jobs as threads"),
    ("create_fsync", "ssdlab syncs files it lays out"),
    ("log_entries", "ssdlab sizes the memory of its logs itself"),
    (
        "log_compression",
        "fio compresses its logs in memory only (the files are the same text); ssdlab keeps them as they are",
    ),
    (
        "log_compression_cpus",
        "fio compresses its logs in memory only (the files are the same text); ssdlab keeps them as they are",
    ),
    (
        "clocksource",
        "ssdlab times every I/O with the monotonic clock",
    ),
];

/// fio's parse priority of an option (`prio` of fio's `options.c`): options of a job-file
/// section are applied highest first, in the order written among equals.
pub fn parse_priority(key: &str) -> i32 {
    match canonical(key) {
        "kb_base" | "unit_base" | "cpus_allowed_policy" | "lockfile" => 1,
        "filename" | "filename_format" => -1,
        _ => 0,
    }
}

/// Why an accepted option changes nothing, if it is one of those.
pub fn no_effect(key: &str) -> Option<&'static str> {
    NO_EFFECT
        .iter()
        .find(|(k, _)| *k == canonical(key))
        .map(|(_, why)| *why)
}

/// Why ssdlab does not implement a core option fio knows, by feature.
pub(crate) const NOT_IMPLEMENTED: &[(&[&str], &str)] = &[
    (
        &[
            "zonecapacity",
            "max_open_zones",
            "job_max_open_zones",
            "ignore_zone_limits",
            "zone_reset_threshold",
            "zone_reset_frequency",
            "read_beyond_wp",
            "write_zone_remainder",
            "recover_zbd_write_error",
        ],
        "zoned block devices (fio's zonemode) are not modelled by ssdlab",
    ),
    (
        &[
            "priohint",
            "cgroup",
            "cgroup_weight",
            "cgroup_nodelete",
            "uid",
            "gid",
            "gtod_cpu",
            "ioscheduler",
        ],
        "ssdlab does not confine its threads beyond their CPUs, memory nodes, nice value and I/O priority (cgroups, users, I/O schedulers, priority hints)",
    ),
    (
        &["fdp", "dataplacement", "plids", "plid_select", "dp_scheme", "write_hint"],
        "NVMe data placement and write-lifetime hints are not issued by ssdlab",
    ),
    (
        &["log_store_compressed"],
        "compressed log files (ssdlab writes fio's logs as text)",
    ),
    (
        &[
            "log_alternate_epoch",
            "log_alternate_epoch_clock_id",
            "log_issue_time",
            "job_start_clock_id",
        ],
        "log columns and clocks other than fio 3.33's defaults (ssdlab's logs give ms since the job's start)",
    ),
    (
        &["exec_prerun", "exec_postrun"],
        "ssdlab runs no commands before or after a job",
    ),
    (&["thinkcycles"], "think time in CPU cycles"),
    (
        &[
            "trim_percentage",
            "trim_backlog",
            "trim_backlog_batch",
            "trim_verify_zero",
        ],
        "trims after writes",
    ),
    (
        &[
            "verify_offset",
            "verify_pattern_interval",
            "verify_async",
            "verify_async_cpus",
            "verify_dump",
            "verify_only",
            "verify_state_save",
            "verify_state_load",
            "verify_write_sequence",
            "verify_header_seed",
            "experimental_verify",
        ],
        "ssdlab verifies with its own per-sector headers, read back in the verify phase after the writes or between them (verify_backlog)",
    ),
    (
        &[
            "unique_filename",
            "opendir",
            "file_append",
            "create_only",
            "lockfile",
            "filetype",
        ],
        "ssdlab names, opens and creates a job's files as fio does by default only",
    ),
    (
        &[
            "merge_blktrace_file",
            "merge_blktrace_scalars",
            "merge_blktrace_iters",
        ],
        "merging blktrace traces",
    ),
    (
        &[
            "sprandom",
            "spr_num_regions",
            "spr_op",
            "spr_cs",
            "random_sequence_stride",
            "num_range",
        ],
        "fio's SPRandom preconditioning and sequence offsets",
    ),
    (
        &["atomic", "serialize_overlap"],
        "ssdlab submits I/O inline, without atomic writes or overlap serialisation",
    ),
    (
        &[
            "ramp_size",
            "bwavgtime",
            "iopsavgtime",
            "percentile_list",
            "significant_figures",
            "block_error_percentiles",
            "unit_base",
            "end_syncfs",
            "sync_file_range",
            "lockmem",
            "hugepage-size",
            "iomem_align",
            "gpu_dev_id",
            "offset_align",
            "profile",
        ],
        "an fio option ssdlab does not implement",
    ),
];

/// Why ssdlab does not implement `key` (a canonical core option name).
pub fn why_not_implemented(key: &str) -> &'static str {
    NOT_IMPLEMENTED
        .iter()
        .find(|(keys, _)| keys.contains(&key))
        .map(|(_, why)| *why)
        .unwrap_or("an fio option ssdlab does not implement")
}

pub use ssdlab_workload::edit_distance;

/// The fio option nearest to a mistyped `key`, if one is near enough to be a plausible typo.
pub fn suggest(key: &str) -> Option<&'static str> {
    let k = key.to_ascii_lowercase().replace('-', "_");
    let names = || {
        TABLE
            .iter()
            .flat_map(|o| std::iter::once(&o.name).chain(o.aliases.iter()))
    };
    if k != key {
        if let Some(n) = names().find(|n| **n == k) {
            return Some(n);
        }
    }
    // (the distance is at least the difference in length: most names need no comparing)
    names()
        .filter(|o| k.len().abs_diff(o.len()) <= 2.max(o.len() / 4))
        .map(|o| (edit_distance(&k, o), *o))
        .filter(|(d, o)| *d <= 2.max(o.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, o)| o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_complete() {
        for w in TABLE.windows(2) {
            assert!(w[0].name < w[1].name, "{} {}", w[0].name, w[1].name);
        }
        assert!(TABLE.len() >= 380, "{}", TABLE.len());
        for (k, _) in NO_EFFECT {
            assert!(is_fio_option(k), "{k}");
        }
        for (keys, _) in NOT_IMPLEMENTED {
            for k in *keys {
                let o = lookup(k).unwrap_or_else(|| panic!("{k}"));
                assert_eq!(o.scope, Scope::Core, "{k}");
            }
        }
        // Options the issue found refused as unknown: core, engine and profile options.
        for k in [
            "bs",
            "rw",
            "hipri",
            "sqthread_poll",
            "fixedbufs",
            "registerfiles",
            "read_iolog",
            "threads",
            "cpuload",
            "donorname",
            "program",
            "port",
            "hostname",
            "sg_write_mode",
            "pool",
            "clientname",
            "skip_bad",
            "nfs_url",
            "cmdprio_hint",
            "hugepage-size",
        ] {
            assert!(is_fio_option(k), "{k}");
        }
        assert_eq!(lookup("threads").unwrap().scope, Scope::Profile("tiobench"));
        assert!(matches!(lookup("cpuload").unwrap().scope, Scope::Engine(e) if e == ["cpuio"]));
        assert!(is_fio_engine("io_uring_cmd") && is_fio_engine("aio") && !is_fio_engine("zz"));
    }

    #[test]
    fn aliases_flags_and_suggestions() {
        assert_eq!(canonical("readwrite"), "rw");
        assert_eq!(canonical("blocksize"), "bs");
        assert_eq!(canonical("bs"), "bs");
        assert_eq!(canonical("allrandrepeat"), "randrepeat");
        assert_eq!(canonical("ss_dur"), "steadystate_duration");
        assert!(is_flag("time_based") && is_flag("hipri") && !is_flag("direct"));
        assert_eq!(suggest("iodeph"), Some("iodepth"));
        assert_eq!(suggest("blocksise"), Some("blocksize"));
        assert_eq!(suggest("ramp-time"), Some("ramp_time"));
        assert_eq!(suggest("rwmixreed"), Some("rwmixread"));
        assert_eq!(suggest("zzzzzzzzzzzz"), None);
    }
}
