//! What happened, as typed events. Each [`Event`] has the fields a reader needs (the UI
//! matches on them, never on text), a [`TraceKind`] and a [`Level`], and renders as the line
//! Kafka would write for it ([`std::fmt::Display`]): the transcript, the command-line runner
//! and the golden files print that rendering, byte for byte what the engine always wrote.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::types::{BrokerId, ElectionKind, Ids, OrNone, TopicPartition};

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
    /// ReplicationControlManager: the partition has no leader after a change
    /// (PartitionChangeBuilder found no eligible replica).
    PartitionHasNoLeader {
        tp: TopicPartition,
        isr: Vec<BrokerId>,
        elr: Vec<BrokerId>,
        leader_epoch: i32,
    },
    /// PartitionChangeBuilder's election: "Setting new leader for topic T, partition P to L
    /// using ..." (one line for every kind, which it names).
    NewLeader {
        tp: TopicPartition,
        leader: BrokerId,
        election: Option<ElectionKind>,
        leader_epoch: i32,
    },
    /// ClusterControlManager.registerBroker: a live broker holds the id
    /// (DuplicateBrokerRegistrationException).
    RegistrationRejected { broker: BrokerId },
    /// ClusterControlManager.registerBroker: registered, fenced until it catches up.
    BrokerRegistered { broker: BrokerId, broker_epoch: i64 },
    /// ClusterControlManager.registerBroker: the previous broker epoch does not match its
    /// clean shutdown (KIP-966); with ELR on, it leaves the ISR and ELR.
    RegisteredAfterUncleanShutdown {
        broker: BrokerId,
        removed_from_isr_and_elr: bool,
    },
    /// ReplicationControlManager.alterPartition: the new ISR names replicas that may not
    /// join it (ineligibleReplicasForIsr), so the request is rejected with
    /// INELIGIBLE_REPLICA.
    AlterPartitionIneligible {
        broker: BrokerId,
        tp: TopicPartition,
        ineligible: Vec<(BrokerId, Ineligible)>,
        isr: Vec<BrokerId>,
    },
    /// BrokerHeartbeatManager and ReplicationControlManager: fencing, unfencing and
    /// shutdown decisions for one broker.
    BrokerControl {
        broker: BrokerId,
        what: BrokerControl,
    },
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
            Event::PartitionHasNoLeader { .. } | Event::NewLeader { .. } => TraceKind::Election,
            Event::RegistrationRejected { .. }
            | Event::BrokerRegistered { .. }
            | Event::RegisteredAfterUncleanShutdown { .. }
            | Event::AlterPartitionIneligible { .. }
            | Event::BrokerControl { .. } => TraceKind::Controller,
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
            Event::PartitionHasNoLeader { .. }
            | Event::NewLeader {
                election: Some(ElectionKind::Unclean | ElectionKind::LastKnownLeader),
                ..
            } => Level::Warn,
            Event::NewLeader { .. }
            | Event::RegistrationRejected { .. }
            | Event::BrokerRegistered { .. }
            | Event::RegisteredAfterUncleanShutdown { .. }
            | Event::AlterPartitionIneligible { .. }
            | Event::BrokerControl { .. } => Level::Info,
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
            Event::PartitionHasNoLeader { .. } | Event::NewLeader { .. } => None,
            Event::RegistrationRejected { broker }
            | Event::BrokerRegistered { broker, .. }
            | Event::RegisteredAfterUncleanShutdown { broker, .. }
            | Event::AlterPartitionIneligible { broker, .. }
            | Event::BrokerControl { broker, .. } => Some(*broker),
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
            Event::PartitionHasNoLeader {
                tp,
                isr,
                elr,
                leader_epoch,
            } => write!(
                f,
                "[QuorumController] Partition {tp} has no leader: no eligible replica (Isr: [{}] Elr: [{}]) leader epoch {leader_epoch}",
                Ids(isr),
                Ids(elr)
            ),
            Event::NewLeader {
                tp,
                leader,
                election,
                leader_epoch,
            } => {
                let how = match election {
                    Some(ElectionKind::Unclean) => "an unclean election",
                    Some(ElectionKind::LastKnownLeader) => {
                        "an unclean election of the last known leader"
                    }
                    Some(ElectionKind::Elr) => "ELR",
                    Some(ElectionKind::Clean) | None => "a clean election",
                };
                write!(
                    f,
                    "[QuorumController] Setting new leader for topic {}, partition {} to {leader} using {how} (leader epoch {leader_epoch})",
                    tp.topic, tp.partition
                )
            }
            Event::RegistrationRejected { broker } => write!(
                f,
                "[QuorumController] Rejected registration of broker {broker}: DuplicateBrokerRegistrationException: Another broker is registered with that broker id."
            ),
            Event::BrokerRegistered {
                broker,
                broker_epoch,
            } => write!(
                f,
                "[QuorumController] Registered broker {broker} with broker epoch {broker_epoch} (fenced until it catches up)"
            ),
            Event::RegisteredAfterUncleanShutdown {
                broker,
                removed_from_isr_and_elr,
            } => {
                write!(
                    f,
                    "[QuorumController] Broker {broker} registered after an unclean shutdown"
                )?;
                if *removed_from_isr_and_elr {
                    f.write_str(": removing it from the ISR and ELR")?;
                }
                Ok(())
            }
            Event::AlterPartitionIneligible {
                broker,
                tp,
                ineligible,
                isr,
            } => {
                write!(
                    f,
                    "[QuorumController] Rejecting AlterPartition request from node {broker} for {tp} because it specified ineligible replicas "
                )?;
                for (i, (id, why)) in ineligible.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{id} ({why})")?;
                }
                write!(f, " in the new ISR {}", Ids(isr))
            }
            Event::BrokerControl { broker, what } => {
                f.write_str("[QuorumController] ")?;
                match what {
                    BrokerControl::FencedShutdownGranted => write!(
                        f,
                        "Fenced broker {broker} has requested and been granted an immediate shutdown."
                    ),
                    BrokerControl::UnfencedShutdownGranted => write!(
                        f,
                        "Unfenced broker {broker} has requested and been granted an immediate shutdown."
                    ),
                    BrokerControl::Unfenced => write!(f, "Unfenced broker {broker}"),
                    BrokerControl::ControlledShutdownGranted => write!(
                        f,
                        "Unfenced broker {broker} has requested and been granted a controlled shutdown."
                    ),
                    BrokerControl::ShutdownGranted {
                        lowest_active_offset,
                        controlled_shutdown_offset,
                    } => write!(
                        f,
                        "The request from broker {broker} to shut down has been granted since the lowest active offset {lowest_active_offset} is now greater than the broker's controlled shutdown offset {controlled_shutdown_offset}."
                    ),
                    BrokerControl::SessionTimedOut => write!(
                        f,
                        "Fencing broker {broker} because its session has timed out."
                    ),
                }
            }
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

/// Why ReplicationControlManager.ineligibleReplicasForIsr refuses a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Ineligible {
    NotRegistered,
    ShuttingDown,
    Fenced,
    BrokerEpochMismatch { requested: i64, expected: i64 },
}

impl fmt::Display for Ineligible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ineligible::NotRegistered => f.write_str("not registered"),
            Ineligible::ShuttingDown => f.write_str("shutting down"),
            Ineligible::Fenced => f.write_str("fenced"),
            Ineligible::BrokerEpochMismatch {
                requested,
                expected,
            } => write!(
                f,
                "broker epoch mismatch: requested={requested} VS expected={expected}"
            ),
        }
    }
}

/// What the controller decided for one broker (QuorumController's lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum BrokerControl {
    /// BrokerHeartbeatManager: a fenced broker asked to shut down.
    FencedShutdownGranted,
    /// An unfenced broker that leads nothing asked to shut down.
    UnfencedShutdownGranted,
    /// It caught up with its registration record.
    Unfenced,
    /// It leads partitions: they move first (controlled shutdown).
    ControlledShutdownGranted,
    /// Every active broker reached its controlled shutdown offset.
    ShutdownGranted {
        lowest_active_offset: u64,
        controlled_shutdown_offset: u64,
    },
    /// No heartbeat within broker.session.timeout.ms.
    SessionTimedOut,
}
