//! 3 minutes of virtual time of 4 KiB random writes, QD 3, 8 GiB span on vertex450-128g.
use criterion::{criterion_group, criterion_main, Criterion};
use ssdlab_ssdsim::loadgen::{run, Access, Workload};
use ssdlab_ssdsim::*;

fn randwrite_qd3(c: &mut Criterion) {
    let cfg = load_preset("vertex450-128g").unwrap();
    let mut w = Workload::new(OpKind::Write, Access::Random, 4096, 8 << 30, 3);
    w.duration_ns = 180_000_000_000;
    let mut g = c.benchmark_group("vertex450");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(40));
    g.bench_function("randwrite_4k_qd3_8g_180s", |b| {
        b.iter_batched(
            || {
                Simulator::new(
                    &cfg,
                    1,
                    &AdapterConfig::passthrough(),
                    Precondition::Fresh,
                    1,
                )
                .unwrap()
            },
            |mut sim| run(&mut sim, 0, &w, 0).total_ios,
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, randwrite_qd3);
criterion_main!(benches);
