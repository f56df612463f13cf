//! Messages between brokers, the controller and clients, and the links they travel on.
//!
//! A message is sent with a delivery time (latency of its link, plus jitter from the seeded
//! generator). A message on a cut link, or to a broker whose process is down, is lost; its
//! sender finds out by its own timeout, as a real TCP client would. Messages on one directed
//! link arrive in the order they were sent (FIFO, as on one TCP connection): jitter delays a
//! message, it never overtakes the one before it.

use std::sync::Arc;

use crate::vec_map::{VecMap, VecSet};

use crate::metadata::MetadataImage;
use crate::record::Record;
use crate::types::link;
use crate::types::{Acks, BrokerId, ErrorCode, MessageKind, Node, TimeMs, Tp};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// A follower's Fetch (FetchRequest.Builder.forReplica): one fetcher thread's request,
    /// with every partition it fetches from this leader.
    Fetch {
        fetch_id: u64,
        /// Not on Kafka's wire: the fetcher thread that sent it. Each ReplicaFetcherThread
        /// has its own connection to the leader, so this names the connection.
        fetcher_id: u32,
        replica_id: BrokerId,
        broker_epoch: i64,
        partitions: Vec<FetchPartition>,
    },
    FetchResponse {
        fetch_id: u64,
        /// A result per partition of the request, in its order.
        partitions: Vec<FetchPartitionData>,
    },
    Produce {
        request_id: u64,
        tp: Tp,
        acks: Acks,
        values: Vec<String>,
        /// The records' key and value size.
        shape: crate::record::RecordShape,
        timeout_ms: u64,
        /// The batch's producerId, producerEpoch and baseSequence (-1 without idempotence).
        producer: crate::log::BatchProducer,
    },
    ProduceResponse {
        request_id: u64,
        tp: Tp,
        error: ErrorCode,
        base_offset: Option<u64>,
        last_offset: Option<u64>,
    },
    /// A consumer's Fetch (read up to the HW).
    ConsumerFetch {
        request_id: u64,
        tp: Tp,
        offset: u64,
        max_records: u32,
        /// ClientMetadata's rack: the consumer's `client.rack` (KIP-392).
        client_rack: Option<String>,
    },
    ConsumerFetchResponse {
        request_id: u64,
        tp: Tp,
        error: ErrorCode,
        records: Vec<Record>,
        high_watermark: u64,
        log_start_offset: u64,
        log_end_offset: u64,
        /// The leader's preferred read replica for the consumer (KIP-392), with no records.
        preferred_read_replica: Option<BrokerId>,
    },
    BrokerRegistration {
        previous_broker_epoch: i64,
        incarnation: u32,
    },
    BrokerRegistrationResponse {
        broker_epoch: i64,
    },
    BrokerHeartbeat {
        broker_epoch: i64,
        want_shut_down: bool,
        metadata_offset: u64,
    },
    BrokerHeartbeatResponse {
        fenced: bool,
        in_controlled_shutdown: bool,
        should_shut_down: bool,
    },
    /// DefaultAlterPartitionManager's request: every unsent ISR change of the broker's
    /// partitions, in one request.
    AlterPartition {
        /// The request's correlation id.
        request_id: u64,
        broker_epoch: i64,
        partitions: Vec<AlterPartitionData>,
    },
    AlterPartitionResponse {
        request_id: u64,
        /// The response's top-level error (STALE_BROKER_EPOCH from checkBrokerEpoch).
        top_error: ErrorCode,
        /// A result per partition of the request, in its order.
        partitions: Vec<AlterPartitionResult>,
    },
    /// The controller's metadata log, as a broker's metadata fetch would deliver it.
    Metadata {
        /// One image, shared by every broker it is sent to.
        image: Arc<MetadataImage>,
    },
    /// Not a Kafka message: the peer's operating system resets the connection (RST) because
    /// the process behind it is gone (kill -9, a lost disk, a finished shutdown, or nothing
    /// listening). The requester learns that its outstanding request failed.
    ConnectionReset {
        request: Outstanding,
    },
}

/// FetchRequestData.FetchPartition: where a follower fetches one partition from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartition {
    pub tp: Tp,
    pub fetch_offset: u64,
    pub log_start_offset: u64,
    pub current_leader_epoch: i32,
    pub last_fetched_epoch: Option<i32>,
}

/// FetchResponseData.PartitionData: one partition's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPartitionData {
    pub tp: Tp,
    pub error: ErrorCode,
    pub high_watermark: u64,
    pub leader_log_start_offset: u64,
    pub records: Vec<Record>,
    /// FetchResponseData.EpochEndOffset (epoch, end offset) when the logs diverged.
    pub diverging_epoch: Option<(i32, i64)>,
    /// The leader's LEO, used for OFFSET_OUT_OF_RANGE handling.
    pub leader_log_end_offset: u64,
}

/// A request that waits for its response on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outstanding {
    /// A fetcher thread's Fetch (the thread: its fetcher id; the leader is the peer).
    Fetch {
        fetcher_id: u32,
        fetch_id: u64,
    },
    Produce {
        request_id: u64,
    },
    ConsumerFetch {
        request_id: u64,
    },
}

impl Payload {
    /// The request this message is, if it is one that waits for a response on its
    /// connection.
    pub fn outstanding(&self) -> Option<Outstanding> {
        match self {
            Payload::Fetch {
                fetch_id,
                fetcher_id,
                ..
            } => Some(Outstanding::Fetch {
                fetcher_id: *fetcher_id,
                fetch_id: *fetch_id,
            }),
            Payload::Produce {
                request_id, acks, ..
            } if *acks != Acks::Zero => Some(Outstanding::Produce {
                request_id: *request_id,
            }),
            Payload::ConsumerFetch { request_id, .. } => Some(Outstanding::ConsumerFetch {
                request_id: *request_id,
            }),
            _ => None,
        }
    }
}

impl Payload {
    /// A short kind name for drawing and filtering.
    pub fn kind(&self) -> MessageKind {
        match self {
            Payload::Fetch { .. } => MessageKind::Fetch,
            Payload::FetchResponse { .. } => MessageKind::FetchResponse,
            Payload::Produce { .. } => MessageKind::Produce,
            Payload::ProduceResponse { .. } => MessageKind::ProduceResponse,
            Payload::ConsumerFetch { .. } => MessageKind::ConsumerFetch,
            Payload::ConsumerFetchResponse { .. } => MessageKind::ConsumerFetchResponse,
            Payload::BrokerRegistration { .. } => MessageKind::BrokerRegistration,
            Payload::BrokerRegistrationResponse { .. } => MessageKind::BrokerRegistrationResponse,
            Payload::BrokerHeartbeat { .. } => MessageKind::BrokerHeartbeat,
            Payload::BrokerHeartbeatResponse { .. } => MessageKind::BrokerHeartbeatResponse,
            Payload::AlterPartition { .. } => MessageKind::AlterPartition,
            Payload::AlterPartitionResponse { .. } => MessageKind::AlterPartitionResponse,
            Payload::Metadata { .. } => MessageKind::Metadata,
            Payload::ConnectionReset { .. } => MessageKind::ConnectionReset,
        }
    }

    /// A one-line summary in Kafka's field names, for labels on the animation.
    pub fn summary(&self) -> String {
        match self {
            Payload::Fetch { partitions, replica_id, .. } => match partitions.as_slice() {
                [p] => format!(
                    "Fetch replicaId={replica_id} fetchOffset={} lastFetchedEpoch={} currentLeaderEpoch={}",
                    p.fetch_offset,
                    crate::types::OrNone(p.last_fetched_epoch),
                    p.current_leader_epoch
                ),
                many => format!("Fetch replicaId={replica_id} partitions={}", many.len()),
            },
            Payload::FetchResponse { partitions, .. } => match partitions.as_slice() {
                [p] => {
                    let high_watermark = p.high_watermark;
                    if let Some((e, o)) = p.diverging_epoch {
                        format!("FetchResponse divergingEpoch=(epoch={e}, endOffset={o}) highWatermark={high_watermark}")
                    } else if p.error != ErrorCode::NONE {
                        format!("FetchResponse error={}", p.error)
                    } else if p.records.is_empty() {
                        format!("FetchResponse records=0 highWatermark={high_watermark}")
                    } else {
                        format!(
                            "FetchResponse records={}..{} highWatermark={high_watermark}",
                            p.records[0].offset,
                            p.records[p.records.len() - 1].offset
                        )
                    }
                }
                many => {
                    let records: usize = many.iter().map(|p| p.records.len()).sum();
                    format!("FetchResponse partitions={} records={records}", many.len())
                }
            },
            Payload::Produce { acks, values, producer, .. } => {
                if producer.producer_id == crate::record::NO_PRODUCER_ID {
                    format!("Produce acks={acks} records={}", values.len())
                } else {
                    format!(
                        "Produce acks={acks} records={} producerId={} producerEpoch={} baseSequence={}",
                        values.len(),
                        producer.producer_id,
                        i32::from(producer.producer_epoch),
                        producer.base_sequence
                    )
                }
            }
            Payload::ProduceResponse { error, base_offset, .. } => match base_offset {
                Some(o) if *error == ErrorCode::NONE => format!("ProduceResponse offset={o}"),
                _ => format!("ProduceResponse error={error}"),
            },
            Payload::ConsumerFetch { offset, .. } => format!("Fetch (consumer) fetchOffset={offset}"),
            Payload::ConsumerFetchResponse { error, records, high_watermark, preferred_read_replica, .. } => {
                let mut s = format!("FetchResponse (consumer) error={error} records={} highWatermark={high_watermark}", records.len());
                if let Some(r) = preferred_read_replica {
                    s.push_str(&format!(" preferredReadReplica={r}"));
                }
                s
            }
            Payload::BrokerRegistration { previous_broker_epoch, .. } => {
                format!("BrokerRegistration previousBrokerEpoch={previous_broker_epoch}")
            }
            Payload::BrokerRegistrationResponse { broker_epoch } => {
                format!("BrokerRegistrationResponse brokerEpoch={broker_epoch}")
            }
            Payload::BrokerHeartbeat { want_shut_down, .. } => {
                if *want_shut_down {
                    "BrokerHeartbeat wantShutDown=true".to_string()
                } else {
                    "BrokerHeartbeat".to_string()
                }
            }
            Payload::BrokerHeartbeatResponse { fenced, should_shut_down, .. } => {
                format!("BrokerHeartbeatResponse isFenced={fenced} shouldShutDown={should_shut_down}")
            }
            Payload::AlterPartition { partitions, .. } => match partitions.as_slice() {
                [one] => format!(
                    "AlterPartition newIsr={} partitionEpoch={}",
                    crate::types::Ids(&one.new_isr.iter().map(|(b, _)| *b).collect::<Vec<_>>()),
                    one.partition_epoch
                ),
                many => format!("AlterPartition for {} partitions", many.len()),
            },
            Payload::AlterPartitionResponse { top_error, partitions, .. } => match partitions.as_slice() {
                [result] => {
                    let error = if *top_error != ErrorCode::NONE { top_error } else { &result.error };
                    format!(
                        "AlterPartitionResponse error={error} isr={} partitionEpoch={}",
                        crate::types::Ids(&result.isr),
                        result.partition_epoch
                    )
                }
                many => format!("AlterPartitionResponse error={top_error} for {} partitions", many.len()),
            },
            Payload::Metadata { image } => format!("metadata up to offset {}", image.offset),
            Payload::ConnectionReset { .. } => "connection reset (RST): the process is gone".to_string(),
        }
    }
}

/// AlterPartitionRequestData.PartitionData: one partition's proposed ISR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterPartitionData {
    pub tp: Tp,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// New ISR with each member's broker epoch (BrokerState).
    pub new_isr: Vec<(BrokerId, i64)>,
}

/// AlterPartitionResponseData.PartitionData: the partition's error, and on success the state
/// the controller now holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterPartitionResult {
    pub tp: Tp,
    pub error: ErrorCode,
    pub leader: Option<BrokerId>,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub isr: Vec<BrokerId>,
}

/// A message in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: u64,
    pub from: Node,
    pub to: Node,
    pub sent_at: TimeMs,
    pub deliver_at: TimeMs,
    pub payload: Payload,
    /// For a message to a broker: the incarnation of the process it was sent to. A TCP
    /// connection belongs to one process, so a message is never delivered to a process
    /// started after it was sent.
    pub to_incarnation: u32,
}

impl Message {
    /// The message as the view draws it; `buffered`: it waits in a frozen broker's socket
    /// buffer.
    pub(crate) fn snapshot(&self, buffered: bool) -> crate::snapshot::MessageSnapshot {
        crate::snapshot::MessageSnapshot {
            id: self.id,
            from: self.from,
            to: self.to,
            kind: self.payload.kind(),
            summary: self.payload.summary(),
            sent_ms: self.sent_at,
            deliver_ms: self.deliver_at,
            buffered,
        }
    }
}

/// Links and their state: latency overrides and cuts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Network {
    /// Cut links, each stored with its endpoints in order.
    pub cut: VecSet<(Node, Node)>,
    /// Per-link one-way latency overrides.
    pub latency_overrides: VecMap<(Node, Node), u64>,
}

impl Network {
    pub fn is_cut(&self, a: Node, b: Node) -> bool {
        self.cut.contains(&link(a, b))
    }
}
