//! Criterion benchmarks: events per second for a steady and a fault-heavy workload, and the
//! time to rebuild the state at any moment of a 10-minute, 10 000-record scenario (what the
//! UI's scrubbing needs: under 16 ms).
//!
//! Run: `cargo bench -p watermark-engine --bench engine`. Figures go in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use watermark_engine::rewind::Rewind;
use watermark_engine::scenario::{ControllerName, Endpoint, ProduceSpec, TimedAction};
use watermark_engine::{Action, Scenario, Sim};

fn produce(at: u64, acks: &str, n: u32) -> TimedAction {
    let spec: ProduceSpec = serde_json::from_value(
        serde_json::json!({"acks": acks, "prefix": format!("r{at}-"), "count": n}),
    )
    .expect("spec");
    TimedAction {
        at,
        action: Action::Produce(spec),
    }
}

/// 3 brokers, RF 3, acks=all: one 10-record batch every 100 ms for 60 s.
fn steady() -> Scenario {
    Scenario {
        brokers: 3,
        timeline: (0..600).map(|i| produce(i * 100, "all", 10)).collect(),
        end_ms: Some(60_000),
        ..Scenario::default()
    }
}

/// Same writes, plus a fault every 2 s: freezes, kills, restarts, cuts and heals.
fn fault_heavy() -> Scenario {
    let mut s = steady();
    s.config.replica_lag_time_max_ms = 5_000;
    for i in 0..30u64 {
        let b = (i % 3) as u32 + 1;
        let at = i * 2_000 + 50;
        let action = match i % 6 {
            0 => Action::Freeze { broker: b },
            1 => Action::Thaw {
                broker: (i as u32 + 2) % 3 + 1,
            },
            2 => Action::Kill { broker: b },
            3 => Action::Start {
                broker: (i as u32 + 2) % 3 + 1,
            },
            4 => Action::Cut {
                a: Endpoint::Broker(b),
                b: Endpoint::Controller(ControllerName::Controller),
            },
            _ => Action::Heal {
                a: Endpoint::Broker((i as u32 + 2) % 3 + 1),
                b: Endpoint::Controller(ControllerName::Controller),
            },
        };
        s.timeline.push(TimedAction { at, action });
    }
    for b in 1..=3 {
        s.timeline.push(TimedAction {
            at: 59_000,
            action: Action::Thaw { broker: b },
        });
        s.timeline.push(TimedAction {
            at: 59_000,
            action: Action::Start { broker: b },
        });
    }
    s
}

/// 10 minutes, 10 000 records: one acks=all record every 60 ms.
fn ten_minutes() -> Scenario {
    Scenario {
        brokers: 3,
        timeline: (0..10_000).map(|i| produce(i * 60, "all", 1)).collect(),
        end_ms: Some(600_000),
        ..Scenario::default()
    }
}

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
