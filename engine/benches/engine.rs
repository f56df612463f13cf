//! Criterion benchmarks: events per second for a steady and a fault-heavy workload, and the
//! time to rebuild the state at any moment of a 10-minute, 10 000-record scenario (what the
//! UI's scrubbing needs: under 16 ms).
//!
//! Run: `cargo bench -p watermark-engine --bench engine`. Figures go in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use watermark_engine::rewind::Rewind;
use watermark_engine::Sim;

#[path = "../tests/common/workloads.rs"]
mod workloads;
use workloads::{fault_heavy, steady, ten_minutes};

fn events_per_second(c: &mut Criterion) {
    let mut g = c.benchmark_group("events");
    for (name, scenario) in [("steady", steady()), ("fault-heavy", fault_heavy())] {
        let events = watermark_engine::run(&scenario, false)
            .expect("runs")
            .events_processed();
        g.throughput(Throughput::Elements(events));
        g.bench_with_input(BenchmarkId::new("run_60s", name), &scenario, |b, s| {
            b.iter(|| {
                watermark_engine::run(s, false)
                    .expect("runs")
                    .events_processed()
            })
        });
    }
    g.finish();
}

fn rebuild_at_any_moment(c: &mut Criterion) {
    let scenario = ten_minutes();
    let mut live = Sim::new(&scenario).expect("builds");
    // The UI keeps a checkpoint every 5 s of simulated time.
    let mut rewind = Rewind::new(&live, 5_000);
    let mut t = 0;
    while t < 600_000 {
        t += 250;
        live.advance_to(t);
        rewind.observe(&live);
    }
    let mut g = c.benchmark_group("rewind");
    for at in [59_999u64, 304_999, 599_999] {
        g.bench_with_input(
            BenchmarkId::new("state_at_10min_10k_records", at),
            &at,
            |b, &at| b.iter(|| rewind.state_at(at).now()),
        );
    }
    g.bench_function("snapshot_10k_records", |b| {
        b.iter(|| live.snapshot().brokers.len())
    });
    g.finish();
}

criterion_group!(benches, events_per_second, rebuild_at_any_moment);
criterion_main!(benches);
