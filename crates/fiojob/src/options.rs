//! Every option name fio 3.x knows (the core options of `options.c` and the io_uring, libaio,
//! sync-engine and cmdprio engine options), fio's aliases, and the options ssdlab accepts
//! without them changing anything (see `docs/FIO-JOBS.md` for why each is harmless).
//!
//! A key fio does not know is an error with the nearest name suggested; a fio option ssdlab
//! does not implement is *unsupported*: the job is refused, naming the key and its line, unless
//! `--ignore-unsupported` is given.

/// Every fio option name and alias (fio 3.x, core and engine options).
pub const FIO_OPTIONS: &[&str] = &[
    "allow_file_create",
    "allow_mounted_write",
    "allrandrepeat",
    "apptag",
    "apptag_mask",
    "atomic",
    "ba",
    "block_error_percentiles",
    "blockalign",
    "blocksize",
    "blocksize_range",
    "blocksize_unaligned",
    "bs",
    "bs_is_seq_rand",
    "bs_unaligned",
    "bsrange",
    "bssplit",
    "buffer_compress_chunk",
    "buffer_compress_percentage",
    "buffer_pattern",
    "buffered",
    "bwavgtime",
    "cdb_len",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "clat_percentiles",
    "clocksource",
    "cmd_type",
    "cmdprio",
    "cmdprio_bssplit",
    "cmdprio_class",
    "cmdprio_hint",
    "cmdprio_percentage",
    "comm",
    "continue_on_error",
    "cpumask",
    "cpus_allowed",
    "cpus_allowed_policy",
    "create_fsync",
    "create_on_open",
    "create_only",
    "create_serialize",
    "data_placement",
    "dataplacement",
    "deac",
    "dedupe_global",
    "dedupe_mode",
    "dedupe_percentage",
    "dedupe_working_set_percentage",
    "description",
    "direct",
    "directory",
    "disable_bw",
    "disable_bw_measurement",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "disk_util",
    "do_verify",
    "dp_scheme",
    "end_fsync",
    "end_syncfs",
    "error_dump",
    "exec_postrun",
    "exec_prerun",
    "exit_what",
    "exitall",
    "exitall_on_error",
    "experimental_verify",
    "fadvise_hint",
    "fallocate",
    "fdatasync",
    "fdp",
    "fdp_pli",
    "fdp_pli_select",
    "file_append",
    "file_service_type",
    "filename",
    "filename_format",
    "fileoffset",
    "filesize",
    "filetype",
    "fill_device",
    "fill_fs",
    "fixedbufs",
    "flow",
    "flow_id",
    "flow_sleep",
    "flow_watermark",
    "force_async",
    "fsync",
    "fsync_on_close",
    "gid",
    "gpu_dev_id",
    "group_reporting",
    "gtod_cpu",
    "gtod_reduce",
    "hipri",
    "hipri_percentage",
    "hugepage-size",
    "ignore_error",
    "ignore_zone_limits",
    "invalidate",
    "io_limit",
    "io_size",
    "io_submit_mode",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "iodepth_batch_complete_min",
    "iodepth_batch_submit",
    "iodepth_low",
    "ioengine",
    "iomem",
    "iomem_align",
    "iopsavgtime",
    "ioscheduler",
    "job_max_open_zones",
    "job_start_clock_id",
    "kb_base",
    "lat_percentiles",
    "latency_percentile",
    "latency_run",
    "latency_target",
    "latency_window",
    "libaio_vectored",
    "lockfile",
    "lockmem",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "log_avg_msec",
    "log_compression",
    "log_compression_cpus",
    "log_entries",
    "log_hist_coarseness",
    "log_hist_msec",
    "log_issue_time",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_store_compressed",
    "log_unix_epoch",
    "log_window_value",
    "loops",
    "max_latency",
    "max_open_zones",
    "md_per_io_size",
    "mem",
    "mem_align",
    "merge_blktrace_file",
    "merge_blktrace_iters",
    "merge_blktrace_scalars",
    "name",
    "new_group",
    "nice",
    "nonvectored",
    "norandommap",
    "nowait",
    "nr_files",
    "nrfiles",
    "num_range",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "number_ios",
    "numjobs",
    "offset",
    "offset_align",
    "offset_increment",
    "opendir",
    "openfiles",
    "overwrite",
    "per_job_logs",
    "percentage_random",
    "percentage_sequential",
    "percentile_list",
    "pi_act",
    "pi_chk",
    "plid_select",
    "plids",
    "pre_read",
    "prio",
    "prioclass",
    "priohint",
    "profile",
    "ramp_size",
    "ramp_time",
    "random_distribution",
    "random_generator",
    "random_sequence_stride",
    "randrepeat",
    "randseed",
    "rate",
    "rate_cycle",
    "rate_ignore_thinktime",
    "rate_iops",
    "rate_iops_min",
    "rate_min",
    "rate_process",
    "ratecycle",
    "ratemin",
    "read_beyond_wp",
    "read_iolog",
    "read_iolog_chunked",
    "read_mode",
    "readfua",
    "readwrite",
    "recover_zbd_write_error",
    "refill_buffers",
    "registerfiles",
    "replay_align",
    "replay_no_stall",
    "replay_redirect",
    "replay_scale",
    "replay_skip",
    "replay_time_scale",
    "runtime",
    "rw",
    "rw_sequencer",
    "rwmixcycle",
    "rwmixread",
    "rwmixwrite",
    "scramble_buffers",
    "serialize_overlap",
    "significant_figures",
    "size",
    "slat_percentiles",
    "softrandommap",
    "spr_cs",
    "spr_num_regions",
    "spr_op",
    "sprandom",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "ss",
    "ss_dur",
    "ss_interval",
    "ss_ramp",
    "startdelay",
    "stats",
    "steadystate",
    "steadystate_check_interval",
    "steadystate_duration",
    "steadystate_ramp_time",
    "stonewall",
    "sync",
    "sync_file_range",
    "thinkcycles",
    "thinktime",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "thinktime_spin",
    "thread",
    "time_based",
    "timeout",
    "trim_backlog",
    "trim_backlog_batch",
    "trim_percentage",
    "trim_verify_zero",
    "uid",
    "uncached",
    "unified_rw_reporting",
    "unique_filename",
    "unit_base",
    "unlink",
    "unlink_each_loop",
    "userspace_reap",
    "verify",
    "verify_async",
    "verify_async_cpus",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_bytchk",
    "verify_dump",
    "verify_fatal",
    "verify_header_seed",
    "verify_interval",
    "verify_mode",
    "verify_offset",
    "verify_only",
    "verify_pattern",
    "verify_pattern_interval",
    "verify_policy",
    "verify_state_load",
    "verify_state_save",
    "verify_write_sequence",
    "verifysort",
    "verifysort_nr",
    "wait_for",
    "wait_for_previous",
    "write_barrier",
    "write_bw_log",
    "write_hint",
    "write_hist_log",
    "write_iolog",
    "write_iops_log",
    "write_lat_log",
    "write_mode",
    "write_zone_remainder",
    "writefua",
    "zero_buffers",
    "zone_reset_frequency",
    "zone_reset_threshold",
    "zonecapacity",
    "zonemode",
    "zonerange",
    "zonesize",
    "zoneskip",
];

/// fio's aliases: (alias, option).
pub const ALIASES: &[(&str, &str)] = &[
    ("allrandrepeat", "randrepeat"),
    ("blockalign", "ba"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("data_placement", "dataplacement"),
    ("disable_bw", "disable_bw_measurement"),
    ("fdp_pli", "plids"),
    ("fdp_pli_select", "plid_select"),
    ("fileoffset", "offset"),
    ("fill_fs", "fill_device"),
    ("io_limit", "io_size"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("iodepth_batch_submit", "iodepth_batch"),
    ("iomem", "mem"),
    ("log_max_value", "log_window_value"),
    ("log_unix_epoch", "log_alternate_epoch"),
    ("mem_align", "iomem_align"),
    ("nr_files", "nrfiles"),
    ("ratecycle", "rate_cycle"),
    ("ratemin", "rate_min"),
    ("readwrite", "rw"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_interval", "steadystate_check_interval"),
    ("ss_ramp", "steadystate_ramp_time"),
    ("timeout", "runtime"),
    ("wait_for_previous", "stonewall"),
];

/// Options that are flags in fio (a bare key means 1; on the command line they take no
/// separate argument).
pub const FLAGS: &[&str] = &[
    "time_based",
    "norandommap",
    "stonewall",
    "new_group",
    "thread",
    "group_reporting",
    "zero_buffers",
    "refill_buffers",
    "exitall",
    "exitall_on_error",
    "bs_unaligned",
    "verify_only",
    "per_job_logs",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "nonvectored",
    "nowait",
    "force_async",
    "uncached",
    "userspace_reap",
    "libaio_vectored",
    "direct",
    "buffered",
    "randrepeat",
    "replay_no_stall",
    "scramble_buffers",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "stats",
    "invalidate",
    "create_serialize",
    "create_fsync",
    "create_on_open",
    "overwrite",
    "unlink",
    "end_fsync",
    "fsync_on_close",
    "do_verify",
    "verify_fatal",
    "pre_read",
];

/// Options ssdlab accepts that change nothing in its runs, with the reason (listed in
/// `docs/FIO-JOBS.md`). Only fio's default (or an equivalent) value is accepted where another
/// value would change the run; the check is in the job module.
pub const NO_EFFECT: &[(&str, &str)] = &[
    ("description", "text only"),
    ("thread", "ssdlab always runs jobs as threads"),
    ("stats", "ssdlab always keeps statistics"),
    ("gtod_reduce", "ssdlab always measures every latency"),
    ("disable_lat", "ssdlab always measures every latency"),
    ("disable_clat", "ssdlab always measures every latency"),
    ("disable_slat", "ssdlab always measures every latency"),
    ("disable_bw_measurement", "ssdlab always measures bandwidth"),
    (
        "clat_percentiles",
        "ssdlab always reports completion-latency percentiles",
    ),
    (
        "lat_percentiles",
        "ssdlab always reports total-latency percentiles",
    ),
    (
        "slat_percentiles",
        "ssdlab always reports submission-latency statistics",
    ),
    (
        "scramble_buffers",
        "ssdlab's written data is random unless a pattern is asked for",
    ),
    (
        "random_generator",
        "ssdlab has its own generator (a seed gives the same offsets in ssdlab, not fio's)",
    ),
    (
        "create_serialize",
        "ssdlab lays files out one at a time, before any job runs",
    ),
    ("create_fsync", "ssdlab syncs files it lays out"),
    (
        "create_on_open",
        "ssdlab lays files out before the jobs run",
    ),
    (
        "allow_file_create",
        "ssdlab creates missing files (never truncating any)",
    ),
    (
        "overwrite",
        "ssdlab lays out missing files with data before writing",
    ),
    (
        "fadvise_hint",
        "page-cache advice; O_DIRECT runs bypass the cache",
    ),
    (
        "disk_util",
        "ssdlab reports member statistics of arrays only",
    ),
    (
        "unified_rw_reporting",
        "reports keep reads and writes apart",
    ),
    ("kb_base", "used while reading sizes"),
    ("per_job_logs", "no logs are written"),
];

/// The option an alias stands for (the key itself when it is not an alias).
pub fn canonical(key: &str) -> &str {
    ALIASES
        .iter()
        .find(|(a, _)| *a == key)
        .map(|(_, o)| *o)
        .unwrap_or(key)
}

/// True for every option (or alias) fio knows.
pub fn is_fio_option(key: &str) -> bool {
    FIO_OPTIONS.binary_search(&key).is_ok() || ALIASES.iter().any(|(a, _)| *a == key)
}

/// True for options that are flags (no separate value on the command line).
pub fn is_flag(key: &str) -> bool {
    FLAGS.contains(&canonical(key))
}

/// Why an accepted option changes nothing, if it is one of those.
pub fn no_effect(key: &str) -> Option<&'static str> {
    NO_EFFECT
        .iter()
        .find(|(k, _)| *k == canonical(key))
        .map(|(_, why)| *why)
}

pub use ssdlab_workload::edit_distance;

/// The fio option nearest to a mistyped `key`, if one is near enough to be a plausible typo.
pub fn suggest(key: &str) -> Option<&'static str> {
    let k = key.to_ascii_lowercase().replace('-', "_");
    if k != key && is_fio_option(&k) {
        return FIO_OPTIONS
            .iter()
            .copied()
            .find(|o| *o == k)
            .or_else(|| ALIASES.iter().map(|(a, _)| *a).find(|a| *a == k));
    }
    FIO_OPTIONS
        .iter()
        .chain(ALIASES.iter().map(|(a, _)| a))
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
        let mut sorted = FIO_OPTIONS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, FIO_OPTIONS, "FIO_OPTIONS must be sorted and unique");
        for (a, o) in ALIASES {
            assert!(is_fio_option(a) && is_fio_option(o), "{a} {o}");
        }
        for f in FLAGS.iter().chain(NO_EFFECT.iter().map(|(k, _)| k)) {
            assert!(is_fio_option(f), "{f}");
        }
        for k in [
            "bs",
            "rw",
            "hipri",
            "sqthread_poll",
            "fixedbufs",
            "registerfiles",
            "read_iolog",
        ] {
            assert!(is_fio_option(k), "{k}");
        }
    }

    #[test]
    fn aliases_and_suggestions() {
        assert_eq!(canonical("readwrite"), "rw");
        assert_eq!(canonical("blocksize"), "bs");
        assert_eq!(canonical("bs"), "bs");
        assert_eq!(suggest("iodeph"), Some("iodepth"));
        assert_eq!(suggest("blocksise"), Some("blocksize"));
        assert_eq!(suggest("ramp-time"), Some("ramp_time"));
        assert_eq!(suggest("rwmixreed"), Some("rwmixread"));
        assert_eq!(suggest("zzzzzzzzzzzz"), None);
    }
}
