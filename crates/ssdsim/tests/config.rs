#![allow(clippy::manual_is_multiple_of)]
use ssdlab_ssdsim::*;

#[test]
fn presets_load_and_have_sources() {
    let names = preset_names();
    for n in [
        "vertex450-128g",
        "vertex-le-100g",
        "c300-256g",
        "x25m-g2-160g",
        "x25e-64g",
        "vertex-barefoot-120g",
        "ssdnow-vplus-128g",
    ] {
        assert!(names.contains(&n));
        let c = load_preset(n).unwrap();
        assert_eq!(c.name, n);
        assert!(!c.sources.is_empty());
        let info = preset_summary(n).unwrap();
        assert!(!info.description.is_empty());
        assert!(c.raw_capacity() > c.user_capacity());
        assert_eq!(c.logical_block_size(), 512);
    }
}

#[test]
fn unknown_preset_lists_known() {
    let e = load_preset("nope").unwrap_err();
    assert_eq!(e.field, "preset");
    assert!(e.message.contains("vertex450-128g") && e.message.contains("c300-256g"));
    assert!(e.to_string().starts_with("invalid drive config: preset:"));
}

fn bad(key: &str, value: &str, field: &str) {
    let mut c = load_preset("c300-256g").unwrap();
    let before = c.clone();
    let e = c.set(key, value).unwrap_err();
    assert_eq!(e.field, field, "{key}={value}: {e}");
    assert_eq!(c, before, "config must be unchanged on error");
}

#[test]
fn bad_configs_name_the_field() {
    bad("nand.channels", "0", "nand.channels");
    bad("nand.page_bytes", "1000", "nand.page_bytes");
    bad("ftl.mapping_unit", "3072", "ftl.mapping_unit");
    bad("ftl.mapping_unit", "8192", "ftl.mapping_unit"); // bigger than the 4 KiB page
    bad(
        "ftl.user_capacity_bytes",
        "300000000000",
        "ftl.user_capacity_bytes",
    );
    bad(
        "ftl.user_capacity_bytes",
        "274877906944",
        "ftl.user_capacity_bytes",
    ); // 0 % OP
    bad(
        "ftl.user_capacity_bytes",
        "273000000000",
        "ftl.user_capacity_bytes",
    ); // too small OP
    bad("host.queue_depth", "64", "host.queue_depth");
    bad("nand.bogus", "1", "nand.bogus");
    bad("nand.channels", "abc", "nand.channels");
}

#[test]
fn set_overrides() {
    let mut c = load_preset("vertex450-128g").unwrap();
    c.set("nand.channels", "16").unwrap();
    assert_eq!(c.nand.channels, 16);
    c.set("ftl.mapping_unit", "512").unwrap();
    assert_eq!(c.ftl.mapping_unit, 512);
    c.set("controller.cache_bytes", "32m").unwrap();
    assert_eq!(c.controller.cache_bytes, 32 << 20);
    c.set("ftl.unaligned", "remap").unwrap();
    assert_eq!(c.ftl.unaligned, UnalignedPolicy::Remap);
    c.set("controller.compression", "true").unwrap();
    assert!(c.controller.compression);
    assert!(c.set("ftl.unaligned", "sometimes").is_err());
    // round trip through TOML
    let text = toml::to_string(&c).unwrap();
    assert_eq!(DriveConfig::from_toml_str(&text).unwrap(), c);
}

#[test]
fn precondition_parses() {
    assert_eq!(
        "steady".parse::<Precondition>().unwrap(),
        Precondition::Steady
    );
    assert_eq!("Full".parse::<Precondition>().unwrap(), Precondition::Full);
    assert!("x".parse::<Precondition>().is_err());
    let v: Precondition = serde_json::from_str("\"fresh\"").unwrap();
    assert_eq!(v, Precondition::Fresh);
}

#[test]
fn bad_simulator_args() {
    let c = load_preset("x25e-64g").unwrap().scaled(64).unwrap();
    match Simulator::new(&c, 0, &AdapterConfig::passthrough(), Precondition::Fresh, 1) {
        Err(SimError::Config(e)) => assert_eq!(e.field, "n_drives"),
        other => panic!("expected a config error, got {:?}", other.err()),
    }
}

mod fuzz {
    use proptest::prelude::*;
    use ssdlab_ssdsim::{load_preset, DriveConfig};

    fn base() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../presets/c300-256g.toml"
        ))
        .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Arbitrary text as a preset file: a clean error or a config that validates or says
        /// why not; never a panic.
        #[test]
        fn arbitrary_preset_text(s in "\\PC{0,300}") {
            if let Ok(c) = DriveConfig::from_toml_str(&s) {
                let _ = c.validate();
                let _ = c.memory_estimate();
            }
        }

        /// A real preset with a few bytes changed (the likely hand edits).
        #[test]
        fn mutated_presets(pos in 0usize..4000, cut in 0usize..6, ins in "[0-9a-z_.=\" \\n-]{0,6}") {
            let mut s = base();
            let mut p = pos.min(s.len());
            while !s.is_char_boundary(p) { p -= 1; }
            let mut end = (p + cut).min(s.len());
            while !s.is_char_boundary(end) { end -= 1; }
            s.replace_range(p..end, &ins);
            if let Ok(c) = DriveConfig::from_toml_str(&s) {
                if c.validate().is_ok() {
                    let _ = c.memory_estimate();
                }
            }
        }

        /// `--set` with arbitrary keys and values on a real preset.
        #[test]
        fn arbitrary_overrides(key in "[a-z_.]{0,30}", value in "\\PC{0,20}") {
            let mut c = load_preset("x25e-64g").unwrap();
            if c.set(&key, &value).is_ok() {
                let _ = c.validate();
            }
        }
    }
}

/// `--set` overrides apply together: a geometry change scales the user capacity with the raw
/// capacity (keeping the preset's over-provisioning) unless the user capacity is set too, in
/// any order; a bad combination is refused naming the field and leaves the config unchanged.
#[test]
fn overrides_apply_together_and_keep_the_over_provisioning() {
    let s = |k: &str, v: &str| (k.to_string(), v.to_string());
    for n in preset_names() {
        let base = load_preset(n).unwrap();
        let op = |c: &DriveConfig| c.raw_capacity() as f64 / c.user_capacity() as f64;
        let mut c = base.clone();
        let notes = c.set_all(&[s("nand.channels", "4")]).unwrap();
        assert_eq!(c.nand.channels, 4);
        if base.nand.channels != 4 {
            assert_eq!(notes.len(), 1, "{n}: {notes:?}");
            assert!(notes[0].contains("ftl.user_capacity_bytes"), "{}", notes[0]);
            assert!((op(&c) / op(&base) - 1.0).abs() < 1e-3, "{n}");
            assert_eq!(c.user_capacity() % 4096, 0);
        }
        // Both orders give the same drive; a user capacity that is set is kept as set.
        let user = c.raw_capacity() / 2 / 4096 * 4096;
        let (mut a, mut b) = (base.clone(), base.clone());
        let na = a
            .set_all(&[
                s("nand.channels", "4"),
                s("ftl.user_capacity_bytes", &user.to_string()),
            ])
            .unwrap();
        b.set_all(&[
            s("ftl.user_capacity_bytes", &user.to_string()),
            s("nand.channels", "4"),
        ])
        .unwrap();
        assert_eq!(a, b, "{n}");
        // the user capacity is kept as set; only an SLC cache scales with the NAND
        assert!(
            na.iter()
                .all(|n| !n.contains("ftl.user_capacity_bytes scaled")),
            "{na:?}"
        );
        if base.ftl.pslc_bytes > 0 {
            let ratio = a.ftl.pslc_bytes as f64 / base.ftl.pslc_bytes as f64;
            let raw = a.raw_capacity() as f64 / base.raw_capacity() as f64;
            assert!(
                (ratio / raw - 1.0).abs() < 1e-3,
                "{n}: pSLC {ratio} raw {raw}"
            );
        } else {
            assert!(na.is_empty());
        }
        assert_eq!(a.user_capacity(), user);
        // Too large a user capacity for the geometry: refused, nothing changed.
        let mut d = base.clone();
        let e = d
            .set_all(&[
                s("nand.channels", "4"),
                s("ftl.user_capacity_bytes", "100t"),
            ])
            .unwrap_err();
        assert_eq!(e.field, "ftl.user_capacity_bytes", "{e}");
        assert_eq!(d, base);
    }
}

#[test]
fn sata_arrays_default_to_chipset_raid_and_the_rest_to_no_adapter() {
    let sata = load_preset("vertex450-128g").unwrap();
    let nvme = load_preset("samsung-980pro-1t").unwrap();
    assert_eq!(AdapterModel::default_for(&sata, 2), AdapterModel::Chipset);
    assert_eq!(AdapterModel::default_for(&sata, 1), AdapterModel::None);
    assert_eq!(AdapterModel::default_for(&nvme, 4), AdapterModel::None);
    let chipset = AdapterModel::Chipset.config();
    assert_eq!(chipset.uplink_bytes_per_sec, Some(2_000_000_000));
    assert!(chipset.trim_passthrough && chipset.write_cache.is_none());
    assert_eq!(AdapterModel::None.config(), AdapterConfig::passthrough());
    for m in [AdapterModel::None, AdapterModel::Chipset] {
        assert_eq!(m.as_str().parse::<AdapterModel>(), Ok(m));
    }
    assert!("hba".parse::<AdapterModel>().is_err());
    // a choice changes single settings of the model it resolves to
    let c = AdapterChoice {
        per_request_overhead_ns: Some(5000),
        cache_bytes: Some(1 << 20),
        ..Default::default()
    };
    let r = c.resolve(&sata, 2);
    assert_eq!(r.uplink_bytes_per_sec, Some(2_000_000_000));
    assert_eq!(r.per_request_overhead_ns, 5000);
    assert_eq!(r.write_cache.map(|w| w.bytes), Some(1 << 20));
    assert_eq!(c.resolve(&nvme, 2).uplink_bytes_per_sec, None);
}

#[test]
fn hybrid_scheme_settings_name_the_field() {
    bad("ftl.scheme", "blocks", "ftl.scheme");
    bad("ftl.log_blocks", "4", "ftl.log_blocks"); // a page-mapped drive has none
    let hybrid = |key: &str, value: &str, field: &str| {
        let mut c = load_preset("vertex-barefoot-120g").unwrap();
        assert_eq!(c.ftl.scheme, FtlScheme::Hybrid);
        let before = c.clone();
        let e = c.set(key, value).unwrap_err();
        assert_eq!(e.field, field, "{key}={value}: {e}");
        assert_eq!(c, before);
    };
    hybrid("ftl.log_blocks", "0", "ftl.log_blocks");
    hybrid("ftl.log_blocks", "100000", "ftl.log_blocks");
    hybrid("ftl.mapping_unit", "512", "ftl.mapping_unit");
    hybrid("ftl.pack_factor", "2", "ftl.pack_factor");
    hybrid("ftl.unaligned", "remap", "ftl.unaligned");
    hybrid("controller.compression", "true", "controller.compression");
    hybrid(
        "controller.map_cache_bytes",
        "1m",
        "controller.map_cache_bytes",
    );
    hybrid(
        "ftl.user_capacity_bytes",
        "137300000000",
        "ftl.user_capacity_bytes",
    );
    // the largest count that fits is accepted, one more is not
    let mut c = load_preset("vertex-barefoot-120g").unwrap();
    c.set("ftl.log_blocks", "253").unwrap();
    let e = c.set("ftl.log_blocks", "254").unwrap_err();
    assert!(e.message.contains("at most 253"), "{e}");
    // the page scheme serialises as before: the new keys are left out at their defaults
    let page = load_preset("c300-256g").unwrap();
    let text = toml::to_string(&page).unwrap();
    assert!(
        !text.contains("scheme") && !text.contains("log_blocks"),
        "{text}"
    );
    // and a scaled hybrid preset still validates, its log blocks kept
    let s = load_preset("vertex-barefoot-120g")
        .unwrap()
        .scaled(64)
        .unwrap();
    assert_eq!((s.ftl.scheme, s.ftl.log_blocks), (FtlScheme::Hybrid, 8));
}
