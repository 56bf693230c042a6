//! The job-file parser on arbitrary input: bytes, near-valid job files, command lines and
//! values. Never a panic; whatever resolves gives workloads that validate or fail cleanly.
//! (CI runs these with the default case counts; `PROPTEST_CASES=100000` for a longer run.)

use proptest::prelude::*;
use ssdlab_fiojob::{argv_sections, job, resolve, value, Env, Parser};
use std::path::Path;

/// No environment variables, no include files.
struct Empty;

impl Env for Empty {
    fn var(&self, name: &str) -> Option<String> {
        (name == "SET").then(|| "4k".to_string())
    }
    fn keyword(&self, _: &str) -> Option<String> {
        Some("8".into())
    }
    fn read(&self, _: &Path) -> std::io::Result<Vec<u8>> {
        Ok(b"bs=8k\n[nope]\n".to_vec())
    }
    fn exists(&self, _: &Path) -> bool {
        true
    }
}

fn run(data: &[u8]) {
    if let Ok(sections) = Parser::new(&Empty).text(data, Path::new("fuzz.fio"), 0) {
        if let Ok(js) = resolve(&sections) {
            for j in &js.jobs {
                let s = &j.settings;
                // Any region the caller could give.
                for span in [s.block_size(), 1 << 20, 10 << 30] {
                    let w = s.workload(0, span, s.numjobs, job::FIO_RANDSEED);
                    let _ = w.validate();
                }
            }
        }
    }
}

const KEYS: &[&str] = &[
    "rw",
    "bs",
    "ba",
    "bsrange",
    "size",
    "offset",
    "iodepth",
    "numjobs",
    "runtime",
    "time_based",
    "ramp_time",
    "rwmixread",
    "rwmixwrite",
    "direct",
    "buffered",
    "ioengine",
    "filename",
    "directory",
    "stonewall",
    "wait_for",
    "new_group",
    "group_reporting",
    "kb_base",
    "name",
    "percentage_random",
    "number_ios",
    "io_size",
    "loops",
    "hipri",
    "sqthread_poll",
    "fixedbufs",
    "registerfiles",
    "read_iolog",
    "replay_no_stall",
    "replay_time_scale",
    "replay_skip",
    "buffer_compress_percentage",
    "zero_buffers",
    "buffer_pattern",
    "verify",
    "randseed",
    "include",
    "bssplit",
    "rate_iops",
    "iodeph",
    "norandommap",
    "filesize",
];
const VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "4k",
    "4KiB",
    "1.5k",
    "10%",
    "randread:8",
    "write:4k",
    "randrw",
    "io_uring",
    "libaio",
    "psync",
    "null",
    "10sec",
    "500ms",
    "0x10",
    "a:b",
    "${SET}",
    "${UNSET}",
    "$ncpus",
    "read,trim",
    "4k,8k",
    "4k-16k",
    "-1",
    "99999999999999999999",
    "1000",
    "crc32c",
    "x",
    "[",
    "global",
    "a\\:b",
];

fn job_file() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        (prop::sample::select(KEYS), prop::sample::select(VALUES)).prop_map(|(k, v)| {
            if v.is_empty() {
                k.to_string()
            } else {
                format!("{k}={v}")
            }
        }),
        prop::sample::select(vec![
            "[global]",
            "[a]",
            "[b]",
            "[global-x]",
            "; c",
            "# c",
            "",
            "[",
            "]"
        ])
        .prop_map(String::from),
        "\\PC{0,30}",
    ];
    prop::collection::vec(line, 0..40).prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..512)) {
        run(&data);
    }

    #[test]
    fn near_valid_job_files_never_panic(text in job_file()) {
        run(text.as_bytes());
    }

    #[test]
    fn command_lines_never_panic(
        args in prop::collection::vec(
            (prop::sample::select(KEYS), prop::option::of(prop::sample::select(VALUES))),
            0..20,
        )
    ) {
        let a: Vec<(String, Option<String>, u32)> = args
            .iter()
            .enumerate()
            .map(|(i, (k, v))| (k.to_string(), v.map(String::from), i as u32 + 1))
            .collect();
        if let Ok(s) = argv_sections(&a, &Empty, &[]) {
            let _ = resolve(&s);
        }
    }

    #[test]
    fn values_never_panic(s in "\\PC{0,24}", base in prop::sample::select(vec![1000u64, 1024])) {
        let _ = value::size(&s, base);
        let _ = value::time_ns(&s, false);
        let _ = value::time_ns(&s, true);
        let _ = value::range(&s, base);
        let _ = value::int(&s);
        let _ = value::boolean(Some(&s));
        let _ = value::per_ddir(&s, |x| value::bytes(x, base));
    }

    #[test]
    fn sizes_with_units_are_exact(n in 0u64..1 << 30, unit in prop::sample::select(vec![("", 1u64), ("k", 1024), ("K", 1024), ("kb", 1024), ("m", 1 << 20), ("kib", 1000), ("MiB", 1_000_000), ("b", 1)])) {
        let v = value::bytes(&format!("{n}{}", unit.0), 1024).unwrap();
        prop_assert_eq!(v, n * unit.1);
    }
}
