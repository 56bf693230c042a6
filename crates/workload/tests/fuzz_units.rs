//! Arbitrary input to the size and duration parsers: never a panic, and whatever parses
//! round-trips through the formatter's meaning.

use proptest::prelude::*;
use ssdlab_workload::{parse_duration, parse_size};

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_string_parses_or_errors(s in "\\PC{0,40}") {
        let _ = parse_size(&s);
        let _ = parse_duration(&s);
    }

    #[test]
    fn any_bytes_parse_or_error(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        let s = String::from_utf8_lossy(&b);
        let _ = parse_size(&s);
        let _ = parse_duration(&s);
    }

    #[test]
    fn numbers_with_units(n in 0u64..1u64 << 40, unit in prop::sample::select(vec!["", "k", "K", "KiB", "kb", "m", "MiB", "g", "GiB", "t"])) {
        let s = format!("{n}{unit}");
        if let Ok(v) = parse_size(&s) {
            prop_assert!(v >= n);
        }
        let _ = parse_duration(&format!("{n}ms"));
    }

    #[test]
    fn near_misses(s in "[0-9._ ]{0,12}[a-zA-Z%]{0,4}[0-9]{0,3}") {
        let _ = parse_size(&s);
        let _ = parse_duration(&s);
    }
}
