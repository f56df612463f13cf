//! Workloads shared by the criterion benchmarks and the wasm timing run.

use watermark_engine::scenario::{ControllerName, Endpoint, ProduceSpec, TimedAction};
use watermark_engine::{Action, Scenario};

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
pub fn steady() -> Scenario {
    Scenario {
        brokers: 3,
        timeline: (0..600).map(|i| produce(i * 100, "all", 10)).collect(),
        end_ms: Some(60_000),
        ..Scenario::default()
    }
}

/// Same writes, plus a fault every 2 s: freezes, kills, restarts, cuts and heals.
pub fn fault_heavy() -> Scenario {
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
pub fn ten_minutes() -> Scenario {
    Scenario {
        brokers: 3,
        timeline: (0..10_000).map(|i| produce(i * 60, "all", 1)).collect(),
        end_ms: Some(600_000),
        ..Scenario::default()
    }
}

/// 15 minutes of a 7-broker cluster, RF 7, with the playground's 40 ms latency: one
/// single-record write every 500 ms (acks=all and acks=1 in turn) and an epochs read-out
/// (7 trace lines) every 250 ms, so the trace passes its cap of 20 000 events after about
/// 10 minutes and keeps turning over.
pub fn busy_seven_brokers() -> Scenario {
    let mut timeline = vec![];
    for i in 0..3_600u64 {
        let at = i * 250;
        if i % 2 == 0 {
            let acks = if i % 4 == 0 { "all" } else { "1" };
            timeline.push(produce(at, acks, 1));
        }
        timeline.push(TimedAction {
            at,
            action: Action::Epochs {
                topic: None,
                partition: None,
            },
        });
    }
    seven_brokers_for_15_minutes(timeline)
}

/// 7 brokers, RF 7, acks=all: one single-record write every 150 ms for 15 minutes, so each
/// of the 7 logs and the committed history reach 6 000 records (the rewind tests' memory
/// bound; the benchmarks do not use it).
#[allow(dead_code)]
pub fn seven_brokers_six_thousand_records() -> Scenario {
    seven_brokers_for_15_minutes((0..6_000).map(|i| produce(i * 150, "all", 1)).collect())
}

/// A 7-broker cluster, RF 7, with the playground's 40 ms latency, running `timeline` for 15
/// minutes.
fn seven_brokers_for_15_minutes(timeline: Vec<TimedAction>) -> Scenario {
    Scenario {
        brokers: 7,
        replication_factor: Some(7),
        config: watermark_engine::Config {
            network_latency_ms: 40,
            controller_latency_ms: 40,
            ..watermark_engine::Config::default()
        },
        timeline,
        end_ms: Some(900_000),
        ..Scenario::default()
    }
}

/// Issue 14's cluster (docs/clusters.md, step 12): 12 brokers in racks z0, z1, z2 (broker b
/// in `z{b % 3}`), 10 topics of 10 partitions at RF 3 and `min.insync.replicas` 2, placed by
/// StripedReplicaPlacer; a 10-record `acks=all` batch every 100 ms to the next partition in
/// turn, for `minutes` simulated minutes.
pub fn cluster(minutes: u64) -> Scenario {
    let racks: serde_json::Map<String, serde_json::Value> = (1..=12)
        .map(|b| (b.to_string(), serde_json::json!(format!("z{}", b % 3))))
        .collect();
    let topics: Vec<serde_json::Value> = (0..10)
        .map(|t| {
            serde_json::json!({"name": format!("t{t}"), "partitions": 10, "replication_factor": 3,
                               "configs": {"min.insync.replicas": 2}})
        })
        .collect();
    let end = minutes * 60_000;
    let timeline: Vec<serde_json::Value> = (0..end / 100)
        .map(|n| {
            serde_json::json!({"at": n * 100, "action": "produce", "acks": "all", "prefix": "v",
                               "count": 10, "topic": format!("t{}", (n / 10) % 10), "partition": n % 10})
        })
        .collect();
    let json = serde_json::json!({"version": 2, "brokers": 12, "racks": racks, "topics": topics,
                                  "timeline": timeline, "end_ms": end});
    Scenario::from_json(&json.to_string()).expect("the cluster workload reads")
}
