//! What happened, as typed events. Each [`Event`] has the fields a reader needs (the UI
//! matches on them, never on text), a [`TraceKind`] and a [`Level`], and renders as the line
//! Kafka would write for it ([`std::fmt::Display`]): the transcript, the command-line runner
//! and the golden files print that rendering, byte for byte what the engine always wrote.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::{BrokerId, Ids, OrNone};

/// What kind of event a trace line records (the UI filters on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// An input: a fault, a config change, an election request.
    Action,
    /// A read-out: describe, offsets, epochs, checkpoints, log dumps.
    Readout,
    Produce,
    Consume,
    /// ISR shrink/expand and AlterPartition results.
    Isr,
    Election,
    Truncation,
    /// Registration, fencing, controlled shutdown.
    Controller,
    /// Broker lifecycle and replica state changes (becoming leader or follower).
    Broker,
    /// Committed records lost (after an unclean election or a lost disk).
    Loss,
    /// An invariant was broken: an engine bug.
    Violation,
    /// A free-text note from the scenario.
    Note,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// What happened. Rendered (`to_string()`) it is the transcript's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A line not yet given its own variant (being converted, issue 13 step 2).
    Line {
        kind: TraceKind,
        level: Level,
        broker: Option<BrokerId>,
        text: String,
    },

    // ---- the leader (partition.rs) ---------------------------------------------------
    // (end of the leader's events)

    // ---- the follower (fetcher.rs) --------------------------------------------------
    // (end of the follower's events)

    // ---- the clients (client.rs) ----------------------------------------------------
    // (end of the clients' events)

    // ---- the controller (controller.rs) ---------------------------------------------
    // (end of the controller's events)

    // ---- the scenario --------------------------------------------------------------
    /// The scenario's caption (`note` action): the walkthrough shows it.
    Caption { text: String },
    /// The cluster the scenario starts with.
    TopicCreated {
        topic: String,
        replicas: Vec<BrokerId>,
        brokers: u32,
        min_insync_replicas: u32,
    },
}

impl Event {
    /// What kind of line it is (the UI filters on it).
    pub fn kind(&self) -> TraceKind {
        match self {
            Event::Line { kind, .. } => *kind,
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { .. } | Event::TopicCreated { .. } => TraceKind::Note,
        }
    }

    pub fn level(&self) -> Level {
        match self {
            Event::Line { level, .. } => *level,
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { .. } | Event::TopicCreated { .. } => Level::Info,
        }
    }

    /// The broker whose log the line is from, if one.
    pub fn broker(&self) -> Option<BrokerId> {
        match self {
            Event::Line { broker, .. } => *broker,
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { .. } | Event::TopicCreated { .. } => None,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Line { text, .. } => f.write_str(text),
            // the leader (partition.rs)
            // (end of the leader's)
            // the follower (fetcher.rs)
            // (end of the follower's)
            // the clients (client.rs)
            // (end of the clients')
            // the controller (controller.rs)
            // (end of the controller's)
            Event::Caption { text } => write!(f, "# {text}"),
            Event::TopicCreated {
                topic,
                replicas,
                brokers,
                min_insync_replicas,
            } => write!(
                f,
                "Created topic {topic} with replicas {} (leader {}), {brokers} broker(s), min.insync.replicas={min_insync_replicas}",
                Ids(replicas),
                OrNone(replicas.first().copied()),
            ),
        }
    }
}
