//! Arbitrary text as a sweep file: always a clean error or a valid sweep, never a panic; and
//! sweep files mutated from a real one (the likely typos) likewise.

use proptest::prelude::*;
use ssdlab_sweep::SweepSpec;
use std::path::Path;

const BASE: &str = r#"name = "s"
time = "1s"
repeats = 2
qd = [1, 4]
workloads = ["4k-randread", "128k-seqwrite"]
span = "1g"

[[workload]]
name = "mix"
rw = "randrw"
bs = "8k"
read_pct = 70

[[target]]
sim = "x25e-64g"

[[target]]
sim = "x25e-64g"
drives = 2
stripes = ["16k", "64k"]
overrides = { "nand.channels" = 4 }
"#;

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text(s in "\\PC{0,300}") {
        let _ = SweepSpec::parse(&s, Path::new("."));
    }

    #[test]
    fn arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = SweepSpec::parse(&String::from_utf8_lossy(&b), Path::new("."));
    }

    #[test]
    fn mutated_sweep_files(pos in 0usize..BASE.len(), cut in 0usize..8, ins in "\\PC{0,6}") {
        let mut s = BASE.to_string();
        let mut p = pos.min(s.len());
        while !s.is_char_boundary(p) { p -= 1; }
        let mut end = (p + cut).min(s.len());
        while !s.is_char_boundary(end) { end -= 1; }
        s.replace_range(p..end, &ins);
        if let Ok(spec) = SweepSpec::parse(&s, Path::new(".")) {
            // Whatever parses expands consistently.
            if let Some(n) = spec.point_count() {
                if n <= 10_000 {
                    prop_assert_eq!(spec.points().len() as u64, n);
                }
            }
        }
    }
}
