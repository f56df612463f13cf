//! Watermark's engine: a deterministic, sans-IO simulation of Apache Kafka 4.x partition
//! replication: follower fetches, log end offsets, the high watermark, the ISR and
//! `replica.lag.time.max.ms`, `acks=0/1/all` and the purgatory, `min.insync.replicas`, leader
//! epochs, divergence and truncation, clean, ELR and unclean elections, and the faults that
//! cause them.
//!
//! The API is small: build a [`Sim`] from a [`Scenario`], [`Sim::apply_now`] an [`Action`],
//! [`Sim::step`] one event or [`Sim::advance_to`] a time, take a [`Snapshot`], and read the
//! trace with [`Sim::trace_since`].

pub mod broker;
pub mod check;
pub mod client;
pub mod config;
pub mod controller;
pub mod deflate;
pub mod describe;
mod effect;
pub mod error;
pub mod event;
pub mod expect;
pub mod fetcher;
mod history;
pub mod inflate;
pub mod invariants;
pub mod json;
pub mod log;
pub mod metadata;
pub mod network;
pub mod partition;
pub mod presets;
mod process;
pub mod producer_state;
pub mod record;
pub mod record_chunks;
pub mod rewind;
pub mod rng;
pub mod scenario;
pub mod scenario_json;
pub mod share;
pub mod sim;
pub mod snapshot;
mod snapshot_build;
pub mod sort;
pub mod trace;
pub mod types;
pub mod vec_map;

pub use config::Config;
pub use error::{ConfigError, ScenarioError};
pub use event::Event;
pub use scenario::{Action, Scenario, TimedAction};
pub use sim::Sim;
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
