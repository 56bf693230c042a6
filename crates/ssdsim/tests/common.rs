#![allow(dead_code)]
use ssdlab_ssdsim::loadgen::{run, Access, LoadResult, Workload};
use ssdlab_ssdsim::*;

pub fn preset(name: &str, scale: u32) -> DriveConfig {
    load_preset(name).unwrap().scaled(scale).unwrap()
}

pub fn sim(cfg: &DriveConfig, pre: Precondition) -> Simulator {
    Simulator::new(cfg, 1, &AdapterConfig::passthrough(), pre, 7).unwrap()
}

#[allow(clippy::too_many_arguments)]
pub fn measure(
    s: &mut Simulator,
    kind: OpKind,
    pattern: Access,
    bs: u64,
    shift: u64,
    span: u64,
    qd: usize,
    frac: f32,
    secs: f64,
) -> LoadResult {
    let mut w = Workload::new(kind, pattern, bs, span, qd);
    w.align = 4096;
    if pattern == Access::Sequential {
        w.align = bs;
    }
    w.shift = shift;
    w.nand_fraction = frac;
    w.warmup_ns = 100_000_000;
    w.duration_ns = (secs * 1e9) as u64;
    run(s, 0, &w, 0)
}

/// A tiny drive for functional tests: 2 channels × 1 die × 2 planes × 16 blocks × 8 pages of
/// 4 KiB = 2 MiB raw.
pub fn tiny(unit: u64, rmw: bool, cache: u64, compression: bool) -> DriveConfig {
    let text = format!(
        r#"
name = "tiny"
[host]
interface = "sata6g"
link_bytes_per_sec = 500000000
cmd_overhead_ns = 1000
queue_depth = 8
[controller]
fw_read_ns = 5000
fw_write_ns = 5000
fw_trim_ns = 2000
cache_bytes = {cache}
compression = {compression}
remap_cost_ns = 1000
coalesce_ns = 50000
[ftl]
user_capacity_bytes = 1048576
mapping_unit = {unit}
unaligned = "{pol}"
pack_factor = 2
gc_bg_free_blocks = 4
gc_fg_free_blocks = 2
copyback = true
pslc_bytes = 65536
pslc_t_prog_ns = 200000
pslc_t_r_ns = 30000
[nand]
channels = 2
dies_per_channel = 1
planes_per_die = 2
blocks_per_plane = 16
pages_per_block = 8
page_bytes = 4096
bus_mt_s = 200
t_r_ns = 50000
t_prog_ns = 500000
t_prog_upper_ns = 900000
t_bers_ns = 2000000
"#,
        pol = if rmw { "rmw" } else { "remap" }
    );
    DriveConfig::from_toml_str(&text).unwrap()
}

/// The tiny drive under the hybrid log-block scheme: 4 KiB pages mapped whole, 12 logical
/// blocks of 16 pages (6 per die) in 768 KiB, `log_blocks` random log blocks per die, a write
/// buffer of `cache` bytes (0: write-through).
pub fn tiny_hybrid(log_blocks: u32, cache: u64) -> DriveConfig {
    let mut c = tiny(4096, true, cache, false);
    c.set_all(&[
        ("ftl.pack_factor".into(), "1".into()),
        ("ftl.pslc_bytes".into(), "0".into()),
        ("ftl.user_capacity_bytes".into(), "786432".into()),
        ("ftl.scheme".into(), "hybrid".into()),
        ("ftl.log_blocks".into(), log_blocks.to_string()),
    ])
    .unwrap();
    c
}
