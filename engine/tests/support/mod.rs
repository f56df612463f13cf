//! Shared by the typed-event tests (`events_leader.rs`, `events_clients.rs`).

use watermark_engine::types::TopicPartition;
use watermark_engine::{Scenario, Sim};

/// Runs a scenario to its end with the invariants checked after every event; none may break.
pub fn run(json: &str) -> Sim {
    let scenario = Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    let sim = watermark_engine::run(&scenario, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    sim
}

/// Partition 0 of `topic`.
pub fn tp(topic: &str) -> TopicPartition {
    TopicPartition {
        topic: topic.into(),
        partition: 0,
    }
}
