//! Shared by the typed-event tests (`events_leader.rs`, `events_clients.rs`, `behaviour.rs`).

use watermark_engine::types::{ErrorCode, TopicPartition};
use watermark_engine::{Event, Scenario, Sim};

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

/// The producer's retries in `events`, in order: the attempts left after each and its error.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn retries_left<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<(u32, ErrorCode)> {
    let mut out = Vec::new();
    for e in events {
        if let Event::ProduceRetry {
            attempts_left,
            error,
            ..
        } = e
        {
            out.push((*attempts_left, *error));
        }
    }
    out
}
