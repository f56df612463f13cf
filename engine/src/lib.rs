//! Watermark's engine: a deterministic, sans-IO simulation of Apache Kafka 4.x partition
//! replication: follower fetches, log end offsets, the high watermark, the ISR and
//! `replica.lag.time.max.ms`, `acks=0/1/all` and the purgatory, `min.insync.replicas`, leader
//! epochs, divergence and truncation, clean, ELR and unclean elections, and the faults that
//! cause them.
//!
//! The API is small: build a [`Sim`] from a [`Scenario`], [`Sim::apply_now`] an [`Action`],
//! [`Sim::step`] one event or [`Sim::advance_to`] a time, take a [`Snapshot`] (the view
//! model: plain data, what the playground draws), read the trace of typed [`Event`]s with
//! [`Sim::trace_since`], and go back in time with [`rewind::Rewind`]. The scenario format
//! and its tools (configs, expectations and [`check`], presets, share links) are public
//! too; the nodes and the simulator's parts are not (docs/engine.md, "Shape").

// The simulation's inside: the nodes, what passes between them, and the simulator's own
// parts. Nothing outside the crate reaches them; the view model and the trace are how a
// caller sees what they do.
mod broker;
mod client;
mod controller;
mod describe;
mod effect;
mod fetcher;
mod hashing;
mod history;
mod invariants;
mod log;
mod metadata;
mod metrics;
mod network;
mod partition;
mod partitioner;
mod placement;
mod process;
mod producer_state;
mod quota;
mod reassign;
mod record_chunks;
mod sim;
mod snapshot_build;
mod vec_map;

// The simulation, built from a scenario; its inputs and what it shows.
pub mod event;
pub mod overview;
pub mod record;
pub mod rewind;
pub mod snapshot;
pub mod trace;
pub mod types;

// Scenarios: the format, its configs and expectations, the presets, share links.
pub mod check;
pub mod compare;
pub mod config;
pub mod error;
pub mod expect;
pub mod explore;
pub mod presets;
pub mod protocol;
pub mod scenario;
pub mod scenario_json;
pub mod share;

// Small tools the format and its callers share: JSON without serde's machinery, the share
// links' DEFLATE, the seeded generator, sorting without core's sort in the wasm.
pub mod deflate;
pub mod inflate;
pub mod json;
pub mod rng;
pub mod sort;

pub use compare::Difference;
pub use config::Config;
pub use error::{ConfigError, ScenarioError};
pub use event::Event;
/// The partition of a keyed record (the playground shows where a key's records go).
pub use hashing::partition_for_key;
pub use protocol::Protocol;
pub use scenario::{Action, Scenario, TimedAction, Variant};
pub use sim::{Sim, ARRIVALS_KEPT_MS, MAX_EVENTS_PER_ADVANCE};
pub use snapshot::Snapshot;
pub use trace::TraceEvent;

/// The engine's version, shown by the UI and the command-line runner.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs a scenario from start to its end time and returns the finished simulation.
pub fn run(scenario: &Scenario, check_invariants: bool) -> Result<Sim, ScenarioError> {
    let mut sim = Sim::new(scenario)?;
    sim.check_invariants = check_invariants;
    sim.advance_to(scenario.end_ms());
    Ok(sim)
}
