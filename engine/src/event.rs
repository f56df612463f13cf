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
    /// A produce result: the batch's final outcome as the application's callback sees it
    /// (Sender.completeBatch / failBatch; the expiry message of Sender.sendProducerData; the
    /// KafkaProducer constructor's ConfigException; RecordAccumulator.abortIncompleteBatches
    /// on a forced close).
    ProduceResult {
        acks: crate::types::Acks,
        outcome: ProduceOutcome,
    },
    /// Sender.completeBatch's warning for a retriable error: the batch is sent again after
    /// retry.backoff.ms.
    ProduceRetry {
        acks: crate::types::Acks,
        tp: crate::types::TopicPartition,
        attempts_left: u32,
        error: crate::types::ErrorCode,
    },
    /// ProducerBatch.done's warning: a batch that had expired (TimeoutException) got its
    /// successful response later, so its records are in the log after all.
    ProduceSucceededAfterExpiry {
        tp: crate::types::TopicPartition,
        /// The response's base offset (-1 in the line when it had none).
        base_offset: Option<u64>,
    },
    /// TransactionManager.setProducerIdAndEpoch's line (after an epoch bump or a new id).
    ProducerIdSet { producer_id: i64, epoch: i16 },
    /// The consumer read records (KafkaConsumer.poll returned them).
    ConsumerRead {
        first_offset: u64,
        last_offset: u64,
        values: Vec<String>,
        /// The position after the read (`last_offset + 1`).
        position: u64,
    },
    /// The consumer's fetch returned nothing: the leader has no records for it below the
    /// high watermark.
    ConsumerNoRecords { high_watermark: u64, position: u64 },
    /// The consumer's fetch failed with OFFSET_OUT_OF_RANGE (Fetcher's
    /// handleOffsetOutOfRange) and auto.offset.reset=latest moved it to the log end.
    ConsumerOffsetOutOfRange {
        position: u64,
        log_end_offset: u64,
        /// The first and last offsets it had read that are past the log end now.
        gone: Option<(u64, u64)>,
    },
    /// The consumer's fetch failed with another error.
    ConsumerError { error: crate::types::ErrorCode },
    /// The consumer has no leader to fetch from (the metadata's LEADER_NOT_AVAILABLE).
    ConsumerLeaderNotAvailable { tp: crate::types::TopicPartition },
    /// NetworkClient: the consumer's connection to the broker it fetched from was reset.
    ConsumerConnectionReset { target: BrokerId },
    /// The engine's own check (no Kafka line): offsets the consumer read now hold other
    /// records on the leader, after an unclean election rewrote them.
    ConsumerReadRewritten {
        first_offset: u64,
        last_offset: u64,
        /// The leader's records at those offsets now.
        now: Vec<String>,
        /// What the consumer read there.
        read: Vec<String>,
    },
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
            Event::ProduceResult { .. }
            | Event::ProduceRetry { .. }
            | Event::ProduceSucceededAfterExpiry { .. }
            | Event::ProducerIdSet { .. } => TraceKind::Produce,
            Event::ConsumerRead { .. }
            | Event::ConsumerNoRecords { .. }
            | Event::ConsumerOffsetOutOfRange { .. }
            | Event::ConsumerError { .. }
            | Event::ConsumerLeaderNotAvailable { .. }
            | Event::ConsumerConnectionReset { .. } => TraceKind::Consume,
            Event::ConsumerReadRewritten { .. } => TraceKind::Loss,
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
            Event::ProduceResult { outcome, .. } => outcome.level(),
            Event::ProducerIdSet { .. }
            | Event::ConsumerRead { .. }
            | Event::ConsumerNoRecords { .. } => Level::Info,
            Event::ProduceRetry { .. }
            | Event::ProduceSucceededAfterExpiry { .. }
            | Event::ConsumerOffsetOutOfRange { .. }
            | Event::ConsumerError { .. }
            | Event::ConsumerLeaderNotAvailable { .. }
            | Event::ConsumerConnectionReset { .. }
            | Event::ConsumerReadRewritten { .. } => Level::Warn,
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
            Event::ProduceResult { .. }
            | Event::ProduceRetry { .. }
            | Event::ProduceSucceededAfterExpiry { .. }
            | Event::ProducerIdSet { .. }
            | Event::ConsumerRead { .. }
            | Event::ConsumerNoRecords { .. }
            | Event::ConsumerOffsetOutOfRange { .. }
            | Event::ConsumerError { .. }
            | Event::ConsumerLeaderNotAvailable { .. }
            | Event::ConsumerConnectionReset { .. }
            | Event::ConsumerReadRewritten { .. } => None,
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
            Event::ProduceResult { acks, outcome } => {
                write!(f, "acks={acks} -> ")?;
                outcome.write(*acks, f)
            }
            Event::ProduceRetry {
                tp,
                attempts_left,
                error,
                ..
            } => write!(
                f,
                "[Producer clientId=producer-1] Got error produce response on topic-partition {tp}, retrying ({attempts_left} attempts left). Error: {error}"
            ),
            Event::ProduceSucceededAfterExpiry { tp, base_offset } => {
                write!(f, "ProduceResponse returned SUCCEEDED for {tp} after batch with base offset ")?;
                match base_offset {
                    Some(b) => write!(f, "{b}")?,
                    None => f.write_str("-1")?,
                }
                f.write_str(" had already been FAILED (the records are in the log, although the producer reported a TimeoutException)")
            }
            Event::ProducerIdSet { producer_id, epoch } => write!(
                f,
                "[Producer clientId=producer-1] ProducerId set to {producer_id} with epoch {epoch}"
            ),
            Event::ConsumerRead {
                first_offset,
                last_offset,
                values,
                position,
            } => {
                f.write_str("consumer: ")?;
                write_words(f, values)?;
                write!(f, " (offsets {first_offset}..{last_offset}, position {position})")
            }
            Event::ConsumerNoRecords {
                high_watermark,
                position,
            } => write!(
                f,
                "consumer: no records below the high watermark {high_watermark} (position {position})"
            ),
            Event::ConsumerOffsetOutOfRange {
                position,
                log_end_offset: leo,
                gone,
            } => {
                write!(f, "consumer: OFFSET_OUT_OF_RANGE: position {position} is past the log end offset {leo}; auto.offset.reset=latest moves it to {leo}")?;
                match gone {
                    Some((a, z)) => write!(f, ". Offsets {a}..{z} that it read no longer exist"),
                    None => Ok(()),
                }
            }
            Event::ConsumerError { error } => write!(f, "consumer: {error}"),
            Event::ConsumerLeaderNotAvailable { tp } => {
                write!(f, "consumer: LEADER_NOT_AVAILABLE for {tp}")
            }
            Event::ConsumerConnectionReset { target } => write!(
                f,
                "consumer: NETWORK_EXCEPTION: the connection to broker {target} was reset (its process is gone)"
            ),
            Event::ConsumerReadRewritten {
                first_offset,
                last_offset,
                now,
                read,
            } => {
                write!(f, "consumer: offsets {first_offset}..{last_offset} now hold different records (")?;
                write_words(f, now)?;
                f.write_str(") than it read there (")?;
                write_words(f, read)?;
                f.write_str(")")
            }
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

// ---- the clients' readers ----

/// How a produce ended (the words after `acks=... -> `).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ProduceOutcome {
    /// acks=0: sent, no response awaited, so no offsets.
    Sent { records: usize },
    /// Written: the offsets of the response (None when it had none), and how long the batch
    /// waited since it was created (the line shows it for acks=all).
    Ok {
        offsets: Option<(u64, u64)>,
        waited_ms: crate::types::TimeMs,
    },
    /// Failed with the broker's (or the client's) error code. `written_at`: the offset a
    /// NOT_ENOUGH_REPLICAS_AFTER_APPEND batch was written at on the leader.
    Error {
        error: crate::types::ErrorCode,
        written_at: Option<u64>,
    },
    /// Sender.sendProducerData's expiry: a TimeoutException after delivery.timeout.ms.
    Expired {
        records: usize,
        tp: crate::types::TopicPartition,
        elapsed_ms: crate::types::TimeMs,
    },
    /// KafkaProducer's constructor threw a ConfigException: nothing was sent.
    ConfigException { message: String },
    /// KafkaProducer.close(Duration.ZERO) failed the batch (a KafkaException).
    ClosedForcefully { records: usize },
}

impl ProduceOutcome {
    /// The exception the producer threw, as the line names it, if it threw one.
    pub fn exception(&self) -> Option<&'static str> {
        match self {
            ProduceOutcome::Expired { .. } => Some("TimeoutException"),
            ProduceOutcome::ConfigException { .. } => Some("ConfigException"),
            ProduceOutcome::ClosedForcefully { .. } => Some("KafkaException"),
            ProduceOutcome::Sent { .. }
            | ProduceOutcome::Ok { .. }
            | ProduceOutcome::Error { .. } => None,
        }
    }

    fn level(&self) -> Level {
        match self {
            ProduceOutcome::Sent { .. } | ProduceOutcome::Ok { .. } => Level::Info,
            _ => Level::Error,
        }
    }

    /// The words after `acks=... -> `.
    fn write(&self, acks: crate::types::Acks, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.exception() {
            write!(f, "{name}: ")?;
        }
        match self {
            ProduceOutcome::Sent { records } => write!(
                f,
                "sent ({records} record(s); no response, so no offset)"
            ),
            ProduceOutcome::Ok { offsets, waited_ms } => {
                match offsets {
                    Some((b, l)) if b == l => write!(f, "ok, offset={b}")?,
                    Some((b, l)) => write!(f, "ok, offsets={b}..{l}")?,
                    None => f.write_str("ok")?,
                }
                if acks == crate::types::Acks::All {
                    write!(f, " (waited {waited_ms} ms)")?;
                }
                Ok(())
            }
            ProduceOutcome::Error {
                error,
                written_at: Some(b),
            } => write!(f, "{error} (written at offset {b}, but the ISR shrank below min.insync.replicas)"),
            ProduceOutcome::Error { error, .. } => write!(f, "{error}"),
            ProduceOutcome::Expired {
                records,
                tp,
                elapsed_ms,
            } => write!(
                f,
                "Expiring {records} record(s) for {tp}:{elapsed_ms} ms has passed since batch creation"
            ),
            ProduceOutcome::ConfigException { message } => f.write_str(message),
            ProduceOutcome::ClosedForcefully { records } => write!(
                f,
                "Producer is closed forcefully. ({records} record(s) not delivered)"
            ),
        }
    }
}

/// Values joined by spaces, written in place.
fn write_words(f: &mut fmt::Formatter<'_>, words: &[String]) -> fmt::Result {
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        f.write_str(w)?;
    }
    Ok(())
}

impl Event {
    /// The error code of a failed produce result (`DELIVERY_TIMEOUT` for a batch that
    /// expired); None for a success, a produce that threw another exception, and every other
    /// event (a retry is not a result).
    pub fn produce_error(&self) -> Option<crate::types::ErrorCode> {
        match self {
            Event::ProduceResult {
                outcome: ProduceOutcome::Error { error, .. },
                ..
            } => Some(*error),
            Event::ProduceResult {
                outcome: ProduceOutcome::Expired { .. },
                ..
            } => Some(crate::types::ErrorCode::DELIVERY_TIMEOUT),
            _ => None,
        }
    }

    /// Whether this is a produce result that failed with `name`, as its line names the
    /// failure: the error code (`NOT_ENOUGH_REPLICAS`) or the exception the producer threw
    /// (`TimeoutException`, `ConfigException`, `KafkaException`). What an expectation's
    /// `error` matches.
    pub fn produce_failed_with(&self, name: &str) -> bool {
        let Event::ProduceResult { outcome, .. } = self else {
            return false;
        };
        match (outcome.exception(), outcome) {
            (Some(exception), _) => exception == name,
            (None, ProduceOutcome::Error { error, .. }) => error.to_string() == name,
            (None, _) => false,
        }
    }
}
