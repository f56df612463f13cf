//! Kafka's configs (with Kafka's names and defaults) and the simulation's own knobs.
//!
//! Every field is validated by [`Config::validate`], which names the field and its allowed
//! range, so a bad scenario or a bad shared link gets a message a person can act on.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// Most brokers a cluster may have (ids 1..=12; issue 14 sizes clusters up to 12).
pub const MAX_BROKERS: u32 = 12;

/// CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MAX_MS: the default of the producer's
/// `retry.backoff.max.ms`, the ceiling of its exponential retry backoff (KIP-580).
pub const RETRY_BACKOFF_MAX_MS_DEFAULT: u64 = 1_000;

fn is_default_retry_backoff_max(v: &u64) -> bool {
    *v == RETRY_BACKOFF_MAX_MS_DEFAULT
}

/// ReplicationConfigs.LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS_DEFAULT (300).
pub const LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS_DEFAULT: u64 = 300;

fn is_default_imbalance_interval(v: &u64) -> bool {
    *v == LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS_DEFAULT
}

/// Kafka schedules the isr-expiration task every `replica.lag.time.max.ms / 2`; a scheduler
/// cannot run a task every 0 ms, so the simulation never runs it more often than this.
pub const MIN_ISR_EXPIRATION_PERIOD_MS: u64 = 10;

/// ReplicationConfigs.REPLICA_FETCH_MAX_BYTES_DEFAULT (1 MiB) and
/// REPLICA_FETCH_RESPONSE_MAX_BYTES_DEFAULT (10 MiB); ProducerConfig's `batch.size` (16 KiB).
pub const REPLICA_FETCH_MAX_BYTES_DEFAULT: u32 = 1024 * 1024;
pub const REPLICA_FETCH_RESPONSE_MAX_BYTES_DEFAULT: u32 = 10 * 1024 * 1024;
pub const BATCH_SIZE_DEFAULT: u32 = 16_384;
/// ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES (1 MiB) and DEFAULT_FETCH_MAX_BYTES
/// (50 MiB).
pub const MAX_PARTITION_FETCH_BYTES_DEFAULT: u32 = 1024 * 1024;
pub const FETCH_MAX_BYTES_DEFAULT: u32 = 50 * 1024 * 1024;

/// `max.in.flight.requests.per.connection`'s default, which is also the most the idempotent
/// producer allows (ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION_FOR_IDEMPOTENCE: the
/// broker keeps the last five batches per producer, so at most five can be retried).
pub const DEFAULT_MAX_IN_FLIGHT: u32 = 5;
pub const MAX_IN_FLIGHT_FOR_IDEMPOTENCE: u32 = 5;

const IN_FLIGHT_AT_MOST_5: &str = "max.in.flight.requests.per.connection to at most 5";

/// ProducerConfig's ConfigException, shortened: "Must set acks to all in order to use the
/// idempotent producer", "Must set retries to non-zero when using the idempotent producer".
fn must_set(what: &str) -> String {
    format!("Must set {what} to use the idempotent producer (enable.idempotence=true)")
}

/// ServerLogConfigs.LOG_FLUSH_INTERVAL_MESSAGES_DEFAULT and
/// LOG_FLUSH_SCHEDULER_INTERVAL_MS_DEFAULT: Long.MAX_VALUE, no forced flush. Also what
/// `log.flush.interval.ms` holds when not set (Kafka's default is null: the scheduler's
/// interval is used, KafkaConfig.logFlushIntervalMs).
pub const LOG_FLUSH_NEVER: u64 = i64::MAX as u64;

/// ServerLogConfigs.LOG_INITIAL_TASK_DELAY_MS_DEFAULT (an internal config, 30 s): LogManager
/// runs its first log-flusher pass this long after its start.
pub const LOG_INITIAL_TASK_DELAY_MS: u64 = 30_000;

fn is_log_flush_never(v: &u64) -> bool {
    *v == LOG_FLUSH_NEVER
}

/// Linux's `vm.dirty_expire_centisecs` default (3000), in ms.
pub const WRITEBACK_DELAY_MS_DEFAULT: u64 = 30_000;

fn is_default_writeback_delay(v: &u64) -> bool {
    *v == WRITEBACK_DELAY_MS_DEFAULT
}

fn is_default_fetchers(v: &u32) -> bool {
    *v == 1
}

fn is_default_fetch_max_bytes(v: &u32) -> bool {
    *v == REPLICA_FETCH_MAX_BYTES_DEFAULT
}

fn is_default_response_max_bytes(v: &u32) -> bool {
    *v == REPLICA_FETCH_RESPONSE_MAX_BYTES_DEFAULT
}

fn is_default_batch_size(v: &u32) -> bool {
    *v == BATCH_SIZE_DEFAULT
}

fn is_default_partition_fetch_bytes(v: &u32) -> bool {
    *v == MAX_PARTITION_FETCH_BYTES_DEFAULT
}

fn is_default_fetch_max_bytes_consumer(v: &u32) -> bool {
    *v == FETCH_MAX_BYTES_DEFAULT
}

fn is_default_in_flight(v: &u32) -> bool {
    *v == DEFAULT_MAX_IN_FLIGHT
}

/// Kafka configs and simulation knobs for one cluster and its one topic.
///
/// Serialized with Kafka's own config names (`min.insync.replicas`, ...). Knobs that are not
/// Kafka configs are prefixed `sim.`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Topic config `min.insync.replicas` (ServerLogConfigs: default 1).
    #[serde(rename = "min.insync.replicas")]
    pub min_insync_replicas: u32,
    /// Topic config `unclean.leader.election.enable` (default false).
    #[serde(rename = "unclean.leader.election.enable")]
    pub unclean_leader_election_enable: bool,
    /// Feature `eligible.leader.replicas.version` (KIP-966): 1 is the default for 4.1 and later.
    #[serde(rename = "eligible.leader.replicas.version")]
    pub eligible_leader_replicas_version: u32,
    /// Broker config `replica.lag.time.max.ms` (ReplicationConfigs: default 30000).
    #[serde(rename = "replica.lag.time.max.ms")]
    pub replica_lag_time_max_ms: u64,
    /// Broker config `replica.fetch.wait.max.ms` (default 500).
    #[serde(rename = "replica.fetch.wait.max.ms")]
    pub replica_fetch_wait_max_ms: u64,
    /// Broker config `replica.fetch.backoff.ms` (default 1000).
    #[serde(rename = "replica.fetch.backoff.ms")]
    pub replica_fetch_backoff_ms: u64,
    /// `num.replica.fetchers` (default 1): fetcher threads per source broker; a partition
    /// goes to thread `AbstractFetcherManager.getFetcherId`.
    #[serde(
        rename = "num.replica.fetchers",
        skip_serializing_if = "is_default_fetchers"
    )]
    pub num_replica_fetchers: u32,
    /// Broker config `replica.fetch.max.bytes` (default 1 MiB): the bytes a follower's Fetch
    /// asks of each partition (PartitionData.maxBytes); whole batches, but a first batch larger
    /// than this still comes (KIP-74). Written only when not the default.
    #[serde(
        rename = "replica.fetch.max.bytes",
        skip_serializing_if = "is_default_fetch_max_bytes"
    )]
    pub replica_fetch_max_bytes: u32,
    /// Broker config `replica.fetch.response.max.bytes` (default 10 MiB): the bytes a
    /// follower's Fetch asks for over all its partitions (FetchRequest.maxBytes). Written only
    /// when not the default.
    #[serde(
        rename = "replica.fetch.response.max.bytes",
        skip_serializing_if = "is_default_response_max_bytes"
    )]
    pub replica_fetch_response_max_bytes: u32,
    /// Broker config `replica.socket.timeout.ms` (default 30000): a follower's fetch that gets
    /// no answer within this time fails and is retried after the backoff.
    #[serde(rename = "replica.socket.timeout.ms")]
    pub replica_socket_timeout_ms: u64,
    /// Broker config `controller.socket.timeout.ms` (ReplicationConfigs: default 30000): how
    /// long a broker's request to the controller (AlterPartition) waits for an answer before
    /// the channel manager sends it again.
    #[serde(rename = "controller.socket.timeout.ms")]
    pub controller_socket_timeout_ms: u64,
    /// Broker config `replica.high.watermark.checkpoint.interval.ms` (default 5000).
    #[serde(rename = "replica.high.watermark.checkpoint.interval.ms")]
    pub replica_high_watermark_checkpoint_interval_ms: u64,
    /// Broker config `broker.heartbeat.interval.ms` (KRaftConfigs: default 2000).
    #[serde(rename = "broker.heartbeat.interval.ms")]
    pub broker_heartbeat_interval_ms: u64,
    /// Controller config `broker.session.timeout.ms` (KRaftConfigs: default 9000).
    #[serde(rename = "broker.session.timeout.ms")]
    pub broker_session_timeout_ms: u64,
    /// Producer config `request.timeout.ms` (default 30000). It is also the TimeoutMs of the
    /// Produce request, so it bounds how long `acks=all` waits in the purgatory.
    #[serde(rename = "request.timeout.ms")]
    pub request_timeout_ms: u64,
    /// Producer config `delivery.timeout.ms` (default 120000).
    #[serde(rename = "delivery.timeout.ms")]
    pub delivery_timeout_ms: u64,
    /// Producer config `retries` (default 2147483647).
    pub retries: u32,
    /// Producer config `retry.backoff.ms` (default 100).
    #[serde(rename = "retry.backoff.ms")]
    pub retry_backoff_ms: u64,
    /// Producer config `retry.backoff.max.ms` (CommonClientConfigs: default 1000): the
    /// ceiling of the exponential backoff of its retries (KIP-580) and of its metadata
    /// refreshes. At or below `retry.backoff.ms` the backoff is a static
    /// `retry.backoff.max.ms` (CommonClientConfigs.warnDisablingExponentialBackoff: a warning,
    /// not an error). Written only when not the default.
    #[serde(
        rename = "retry.backoff.max.ms",
        skip_serializing_if = "is_default_retry_backoff_max"
    )]
    pub retry_backoff_max_ms: u64,
    /// Producer config `enable.idempotence` (default true since Kafka 3.0). `None` is "not
    /// set": idempotence is on unless a produce conflicts with it (acks other than all,
    /// retries 0, or more than 5 requests in flight), which silently turns it off for that
    /// produce; `Some(true)` set explicitly makes such a conflict a config error
    /// (ProducerConfig.postProcessAndValidateIdempotenceConfigs).
    #[serde(rename = "enable.idempotence", skip_serializing_if = "Option::is_none")]
    pub enable_idempotence: Option<bool>,
    /// Producer config `max.in.flight.requests.per.connection` (default 5): how many produce
    /// requests the producer has outstanding to one broker at once.
    #[serde(
        rename = "max.in.flight.requests.per.connection",
        skip_serializing_if = "is_default_in_flight"
    )]
    pub max_in_flight_requests_per_connection: u32,
    /// Producer config `batch.size` (default 16384): a batch takes records while they fit
    /// (MemoryRecordsBuilder.hasRoomFor), and the sticky partitioner switches after this many
    /// bytes (KIP-794). Written only when not the default.
    #[serde(rename = "batch.size", skip_serializing_if = "is_default_batch_size")]
    pub batch_size: u32,
    /// Producer config `partitioner.ignore.keys` (default false): when true a keyed record
    /// that names no partition goes to the topic's sticky partition like a keyless one
    /// (KafkaProducer.partition: `if (serializedKey != null && !partitionerIgnoreKeys)`).
    /// `None`: the default. Written only when set.
    #[serde(
        rename = "partitioner.ignore.keys",
        skip_serializing_if = "Option::is_none"
    )]
    pub partitioner_ignore_keys: Option<bool>,
    /// Producer config `partitioner.adaptive.partitioning.enable` (default true): the sticky
    /// partitioner weighs the next partition by its queue's size (BuiltInPartitioner.
    /// updatePartitionLoadStats). The engine's producer finds its queues empty whenever it
    /// looks (docs/engine.md simplification 21), so on and off draw the same partitions.
    /// `None`: the default. Written only when set.
    #[serde(
        rename = "partitioner.adaptive.partitioning.enable",
        skip_serializing_if = "Option::is_none"
    )]
    pub partitioner_adaptive_partitioning_enable: Option<bool>,
    /// Consumer config `max.partition.fetch.bytes` (default 1 MiB): the bytes its Fetch asks
    /// of a partition (whole batches; a first batch larger still comes). Written only when
    /// not the default.
    #[serde(
        rename = "max.partition.fetch.bytes",
        skip_serializing_if = "is_default_partition_fetch_bytes"
    )]
    pub max_partition_fetch_bytes: u32,
    /// Consumer config `fetch.max.bytes` (default 50 MiB): the bytes of its Fetch response.
    /// Written only when not the default.
    #[serde(
        rename = "fetch.max.bytes",
        skip_serializing_if = "is_default_fetch_max_bytes_consumer"
    )]
    pub fetch_max_bytes: u32,
    /// Simulation knob: one-way latency of every link between two brokers or a broker and a
    /// client, in ms.
    #[serde(rename = "sim.network.latency.ms")]
    pub network_latency_ms: u64,
    /// Simulation knob: one-way latency between a broker and the KRaft controller quorum,
    /// including the time to commit a record to the metadata log, in ms.
    #[serde(rename = "sim.controller.latency.ms")]
    pub controller_latency_ms: u64,
    /// Simulation knob: extra random delay added to each message, 0..=jitter ms, drawn from the
    /// seeded generator.
    #[serde(rename = "sim.network.jitter.ms")]
    pub network_jitter_ms: u64,
    /// Simulation knob: how often the controller looks for leaderless partitions to elect
    /// uncleanly when `unclean.leader.election.enable` is true (the periodic unclean election
    /// task of the KRaft controller).
    #[serde(rename = "sim.unclean.election.interval.ms")]
    pub unclean_election_interval_ms: u64,
    /// Broker config `replica.selector.class` (ReplicationConfigs: default null, no
    /// selector: consumers read from the leader). `true` is
    /// `org.apache.kafka.common.replica.RackAwareReplicaSelector` (KIP-392): a leader names a
    /// follower in the consumer's `client.rack` as its preferred read replica. Written only
    /// when set.
    #[serde(
        rename = "replica.selector.class",
        skip_serializing_if = "std::ops::Not::not",
        with = "selector_class"
    )]
    pub rack_aware_replica_selector: bool,
    /// Controller config `auto.leader.rebalance.enable` (default true): the controller moves
    /// each partition's leadership back to its preferred replica, checking
    /// `leader.imbalance.check.interval.seconds` (300) after an imbalance appears
    /// (QuorumController.maybeScheduleNextBalancePartitionLeaders). `None`: the default.
    /// Written only when set.
    #[serde(
        rename = "auto.leader.rebalance.enable",
        skip_serializing_if = "Option::is_none"
    )]
    pub auto_leader_rebalance_enable: Option<bool>,
    /// Controller config `leader.imbalance.check.interval.seconds` (ReplicationConfigs: LONG,
    /// default 300, atLeast(1)): how long after it sees an imbalanced partition the
    /// controller runs its balancing task (ControllerServer passes it to QuorumController as
    /// leaderImbalanceCheckIntervalNs). Written only when not the default.
    #[serde(
        rename = "leader.imbalance.check.interval.seconds",
        skip_serializing_if = "is_default_imbalance_interval"
    )]
    pub leader_imbalance_check_interval_seconds: u64,
    /// Simulation knob: how long an appended record stays only in the OS page cache before
    /// the kernel writes it back to disk (Linux `vm.dirty_expire_centisecs`, 3000 by default:
    /// 30 s). A power loss (`power_loss`) loses what was appended less than this long ago;
    /// a kill -9 loses nothing (the OS keeps running). Written only when not the default.
    #[serde(
        rename = "sim.writeback.delay.ms",
        skip_serializing_if = "is_default_writeback_delay"
    )]
    pub writeback_delay_ms: u64,
    /// Broker config `log.flush.interval.messages` (LONG, default Long.MAX_VALUE,
    /// atLeast(1)): a log whose unflushed messages (log end − recovery point) reach this
    /// after an append is flushed at once (UnifiedLog.append). Written only when set.
    #[serde(
        rename = "log.flush.interval.messages",
        skip_serializing_if = "is_log_flush_never"
    )]
    pub log_flush_interval_messages: u64,
    /// Broker config `log.flush.interval.ms` (LONG, default null: then
    /// `log.flush.scheduler.interval.ms`): the log flusher flushes a log last flushed at
    /// least this long ago. [`LOG_FLUSH_NEVER`] stands for "not set". Written only when set.
    #[serde(
        rename = "log.flush.interval.ms",
        skip_serializing_if = "is_log_flush_never"
    )]
    pub log_flush_interval_ms: u64,
    /// Broker config `log.flush.scheduler.interval.ms` (LONG, default Long.MAX_VALUE): how
    /// often LogManager's log flusher runs (its first run is 30 s after the broker's start,
    /// `log.initial.task.delay.ms`). Written only when set.
    #[serde(
        rename = "log.flush.scheduler.interval.ms",
        skip_serializing_if = "is_log_flush_never"
    )]
    pub log_flush_scheduler_interval_ms: u64,
    /// Whether the logs keep the times of their appends for a power loss: set by the
    /// simulator when the scenario's timeline has one (so other runs keep no such list).
    /// Not a config.
    #[serde(skip)]
    pub track_writeback: bool,
    /// The run's protocol mode (the scenario's `protocol`, docs/history.md), which the
    /// handlers read with the configs. Not a config: never in the `config` JSON.
    #[serde(skip)]
    pub protocol: crate::protocol::Protocol,
}

/// `replica.selector.class`'s one accepted class (ReplicationConfigs.REPLICA_SELECTOR_CLASS_CONFIG).
pub const RACK_AWARE_REPLICA_SELECTOR: &str =
    "org.apache.kafka.common.replica.RackAwareReplicaSelector";

/// `replica.selector.class` as its class name (serde's view of the bool field).
mod selector_class {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(on: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if *on {
            super::RACK_AWARE_REPLICA_SELECTOR
        } else {
            ""
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        let name = Option::<String>::deserialize(d)?;
        super::selector_class_of(name.as_deref()).map_err(serde::de::Error::custom)
    }
}

/// `replica.selector.class` from its value: the rack-aware selector, or null (also written
/// as an empty string or `null`) for none. Kafka would load any class on its classpath; the
/// simulation knows only this one, so any other name is refused.
pub(crate) fn selector_class_of(name: Option<&str>) -> Result<bool, String> {
    match name.map(str::trim) {
        None | Some("" | "null") => Ok(false),
        Some(RACK_AWARE_REPLICA_SELECTOR) => Ok(true),
        // `quoted`, not `{:?}`: str's Debug brings char's escape tables into the wasm.
        Some(other) => Err(format!(
            "replica.selector.class must be {RACK_AWARE_REPLICA_SELECTOR} or null (the default: consumers read from the leader), got {}",
            crate::error::quoted(other)
        )),
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
            eligible_leader_replicas_version: 1,
            replica_lag_time_max_ms: 30_000,
            replica_fetch_wait_max_ms: 500,
            replica_fetch_backoff_ms: 1_000,
            num_replica_fetchers: 1,
            replica_fetch_max_bytes: REPLICA_FETCH_MAX_BYTES_DEFAULT,
            replica_fetch_response_max_bytes: REPLICA_FETCH_RESPONSE_MAX_BYTES_DEFAULT,
            replica_socket_timeout_ms: 30_000,
            controller_socket_timeout_ms: 30_000,
            replica_high_watermark_checkpoint_interval_ms: 5_000,
            broker_heartbeat_interval_ms: 2_000,
            broker_session_timeout_ms: 9_000,
            request_timeout_ms: 30_000,
            delivery_timeout_ms: 120_000,
            retries: 2_147_483_647,
            retry_backoff_ms: 100,
            retry_backoff_max_ms: RETRY_BACKOFF_MAX_MS_DEFAULT,
            enable_idempotence: None,
            max_in_flight_requests_per_connection: DEFAULT_MAX_IN_FLIGHT,
            batch_size: BATCH_SIZE_DEFAULT,
            partitioner_ignore_keys: None,
            partitioner_adaptive_partitioning_enable: None,
            max_partition_fetch_bytes: MAX_PARTITION_FETCH_BYTES_DEFAULT,
            fetch_max_bytes: FETCH_MAX_BYTES_DEFAULT,
            network_latency_ms: 1,
            controller_latency_ms: 5,
            network_jitter_ms: 0,
            unclean_election_interval_ms: 300_000,
            rack_aware_replica_selector: false,
            auto_leader_rebalance_enable: None,
            leader_imbalance_check_interval_seconds:
                LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS_DEFAULT,
            writeback_delay_ms: WRITEBACK_DELAY_MS_DEFAULT,
            log_flush_interval_messages: LOG_FLUSH_NEVER,
            log_flush_interval_ms: LOG_FLUSH_NEVER,
            log_flush_scheduler_interval_ms: LOG_FLUSH_NEVER,
            track_writeback: false,
            protocol: crate::protocol::Protocol::Kafka4,
        }
    }
}

/// A config's field, as [`Config::slot`] finds it by name.
pub(crate) enum Slot<'a> {
    U32(&'a mut u32),
    U64(&'a mut u64),
    Bool(&'a mut bool),
    /// `enable.idempotence`: not set, or set to true or false.
    OptBool(&'a mut Option<bool>),
    /// `replica.selector.class`: the rack-aware selector or none ([`selector_class_of`]).
    Selector(&'a mut bool),
}

/// One config's name and allowed range, used for validation and shown by the UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Range {
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
}

impl Range {
    /// The error for a value outside this range, naming the config and the range.
    pub(crate) fn error(&self, got: &str) -> ConfigError {
        ConfigError {
            field: self.name.to_string(),
            message: format!(
                "{} must be a whole number in {}..={}, got {}",
                self.name, self.min, self.max, got
            ),
        }
    }
}

/// The allowed range of every numeric config, in one place.
pub const RANGES: &[Range] = &[
    Range {
        name: "min.insync.replicas",
        min: 1,
        max: MAX_BROKERS as u64,
    },
    Range {
        name: "eligible.leader.replicas.version",
        min: 0,
        max: 1,
    },
    Range {
        name: "replica.lag.time.max.ms",
        min: 0,
        max: 600_000,
    },
    Range {
        name: "replica.fetch.wait.max.ms",
        min: 0,
        max: 60_000,
    },
    Range {
        name: "replica.fetch.backoff.ms",
        min: 1,
        max: 60_000,
    },
    Range {
        name: "num.replica.fetchers",
        min: 1,
        max: 16,
    },
    // ReplicationConfigs: INT, atLeast(0).
    Range {
        name: "replica.fetch.max.bytes",
        min: 0,
        max: 2_147_483_647,
    },
    Range {
        name: "replica.fetch.response.max.bytes",
        min: 0,
        max: 2_147_483_647,
    },
    Range {
        name: "replica.socket.timeout.ms",
        min: 1,
        max: 600_000,
    },
    Range {
        name: "controller.socket.timeout.ms",
        min: 1,
        max: 600_000,
    },
    Range {
        name: "replica.high.watermark.checkpoint.interval.ms",
        min: 1,
        max: 600_000,
    },
    Range {
        name: "broker.heartbeat.interval.ms",
        min: 1,
        max: 60_000,
    },
    Range {
        name: "broker.session.timeout.ms",
        min: 1,
        max: 600_000,
    },
    Range {
        name: "request.timeout.ms",
        min: 1,
        max: 600_000,
    },
    Range {
        name: "delivery.timeout.ms",
        min: 1,
        max: 3_600_000,
    },
    Range {
        name: "retries",
        min: 0,
        max: 2_147_483_647,
    },
    Range {
        name: "retry.backoff.ms",
        min: 1,
        max: 60_000,
    },
    // ProducerConfig: LONG, atLeast(0); at least 1 here, as retry.backoff.ms (a backoff of 0
    // would retry at the same virtual time forever).
    Range {
        name: "retry.backoff.max.ms",
        min: 1,
        max: 60_000,
    },
    Range {
        name: "max.in.flight.requests.per.connection",
        min: 1,
        max: 2_147_483_647,
    },
    // ProducerConfig and ConsumerConfig: INT, atLeast(0).
    Range {
        name: "batch.size",
        min: 0,
        max: 2_147_483_647,
    },
    Range {
        name: "max.partition.fetch.bytes",
        min: 0,
        max: 2_147_483_647,
    },
    Range {
        name: "fetch.max.bytes",
        min: 0,
        max: 2_147_483_647,
    },
    Range {
        name: "sim.network.latency.ms",
        min: 0,
        max: 10_000,
    },
    Range {
        name: "sim.controller.latency.ms",
        min: 0,
        max: 10_000,
    },
    Range {
        name: "sim.network.jitter.ms",
        min: 0,
        max: 10_000,
    },
    Range {
        name: "sim.unclean.election.interval.ms",
        min: 1_000,
        max: 3_600_000,
    },
    // ReplicationConfigs: LONG, atLeast(1) (to Long.MAX_VALUE).
    Range {
        name: "leader.imbalance.check.interval.seconds",
        min: 1,
        max: i64::MAX as u64,
    },
    Range {
        name: "sim.writeback.delay.ms",
        min: 0,
        max: 3_600_000,
    },
    // LogConfig: LONG, atLeast(1), to Long.MAX_VALUE.
    Range {
        name: "log.flush.interval.messages",
        min: 1,
        max: LOG_FLUSH_NEVER,
    },
    // LogConfig: LONG (no validator; the topic's flush.ms is atLeast(0)).
    Range {
        name: "log.flush.interval.ms",
        min: 0,
        max: LOG_FLUSH_NEVER,
    },
    // LogConfig: LONG; KafkaScheduler.schedule runs the flusher at this fixed rate, which
    // must be positive (ScheduledThreadPoolExecutor.scheduleAtFixedRate).
    Range {
        name: "log.flush.scheduler.interval.ms",
        min: 1,
        max: LOG_FLUSH_NEVER,
    },
];

impl Config {
    /// The field a config name (as a scenario writes it) stands for. The one place that
    /// maps names to fields: reading and writing scenarios, [`Config::set`] and
    /// [`Config::numeric`] all go through it, instead of a `match` on the names each
    /// (four copies of 21 string comparisons in the wasm).
    pub(crate) fn slot(&mut self, name: &str) -> Option<Slot<'_>> {
        use Slot::{Bool, U32, U64};
        Some(match name {
            "min.insync.replicas" => U32(&mut self.min_insync_replicas),
            "unclean.leader.election.enable" => Bool(&mut self.unclean_leader_election_enable),
            "eligible.leader.replicas.version" => U32(&mut self.eligible_leader_replicas_version),
            "replica.lag.time.max.ms" => U64(&mut self.replica_lag_time_max_ms),
            "replica.fetch.wait.max.ms" => U64(&mut self.replica_fetch_wait_max_ms),
            "replica.fetch.backoff.ms" => U64(&mut self.replica_fetch_backoff_ms),
            "num.replica.fetchers" => U32(&mut self.num_replica_fetchers),
            "replica.fetch.max.bytes" => U32(&mut self.replica_fetch_max_bytes),
            "replica.fetch.response.max.bytes" => U32(&mut self.replica_fetch_response_max_bytes),
            "replica.socket.timeout.ms" => U64(&mut self.replica_socket_timeout_ms),
            "controller.socket.timeout.ms" => U64(&mut self.controller_socket_timeout_ms),
            "replica.high.watermark.checkpoint.interval.ms" => {
                U64(&mut self.replica_high_watermark_checkpoint_interval_ms)
            }
            "broker.heartbeat.interval.ms" => U64(&mut self.broker_heartbeat_interval_ms),
            "broker.session.timeout.ms" => U64(&mut self.broker_session_timeout_ms),
            "request.timeout.ms" => U64(&mut self.request_timeout_ms),
            "delivery.timeout.ms" => U64(&mut self.delivery_timeout_ms),
            "retries" => U32(&mut self.retries),
            "retry.backoff.ms" => U64(&mut self.retry_backoff_ms),
            "retry.backoff.max.ms" => U64(&mut self.retry_backoff_max_ms),
            "enable.idempotence" => Slot::OptBool(&mut self.enable_idempotence),
            "max.in.flight.requests.per.connection" => {
                U32(&mut self.max_in_flight_requests_per_connection)
            }
            "batch.size" => U32(&mut self.batch_size),
            "partitioner.ignore.keys" => Slot::OptBool(&mut self.partitioner_ignore_keys),
            "partitioner.adaptive.partitioning.enable" => {
                Slot::OptBool(&mut self.partitioner_adaptive_partitioning_enable)
            }
            "max.partition.fetch.bytes" => U32(&mut self.max_partition_fetch_bytes),
            "fetch.max.bytes" => U32(&mut self.fetch_max_bytes),
            "sim.network.latency.ms" => U64(&mut self.network_latency_ms),
            "sim.controller.latency.ms" => U64(&mut self.controller_latency_ms),
            "sim.network.jitter.ms" => U64(&mut self.network_jitter_ms),
            "sim.unclean.election.interval.ms" => U64(&mut self.unclean_election_interval_ms),
            "replica.selector.class" => Slot::Selector(&mut self.rack_aware_replica_selector),
            "auto.leader.rebalance.enable" => Slot::OptBool(&mut self.auto_leader_rebalance_enable),
            "leader.imbalance.check.interval.seconds" => {
                U64(&mut self.leader_imbalance_check_interval_seconds)
            }
            "sim.writeback.delay.ms" => U64(&mut self.writeback_delay_ms),
            "log.flush.interval.messages" => U64(&mut self.log_flush_interval_messages),
            "log.flush.interval.ms" => U64(&mut self.log_flush_interval_ms),
            "log.flush.scheduler.interval.ms" => U64(&mut self.log_flush_scheduler_interval_ms),
            _ => return None,
        })
    }

    /// `auto.leader.rebalance.enable`, its default (true) when not set.
    pub fn auto_leader_rebalance(&self) -> bool {
        self.auto_leader_rebalance_enable != Some(false)
    }

    /// The producer's partitioner configs (`batch.size`, `partitioner.*`), their defaults
    /// where not set.
    pub(crate) fn partitioner(&self) -> crate::partitioner::PartitionerConfig {
        crate::partitioner::PartitionerConfig {
            batch_size: u64::from(self.batch_size),
            adaptive_partitioning_enable: self.partitioner_adaptive_partitioning_enable
                != Some(false),
            ignore_keys: self.partitioner_ignore_keys == Some(true),
            ..Default::default()
        }
    }

    /// The log's `flush.ms` as the broker derives it: `log.flush.interval.ms`, or when not
    /// set `log.flush.scheduler.interval.ms` (KafkaConfig.logFlushIntervalMs, copied into
    /// each LogConfig's `flush.ms`).
    pub fn log_flush_ms(&self) -> u64 {
        if self.log_flush_interval_ms == LOG_FLUSH_NEVER {
            self.log_flush_scheduler_interval_ms
        } else {
            self.log_flush_interval_ms
        }
    }

    /// `leader.imbalance.check.interval.seconds` in ms (TimeUnit.convert saturates, as here).
    pub fn leader_imbalance_check_interval_ms(&self) -> u64 {
        self.leader_imbalance_check_interval_seconds
            .saturating_mul(1_000)
    }

    /// The value of a numeric config by its Kafka name.
    pub fn numeric(&self, name: &str) -> Option<u64> {
        match self.clone().slot(name)? {
            Slot::U32(v) => Some(u64::from(*v)),
            Slot::U64(v) => Some(*v),
            Slot::Bool(_) | Slot::OptBool(_) | Slot::Selector(_) => None,
        }
    }

    /// Sets a config from its Kafka name and a JSON value (a number, a boolean, or a string
    /// holding either, as `kafka-configs.sh --add-config` takes them). The new value is
    /// validated; on error nothing changes.
    pub fn set(&mut self, name: &str, value: &crate::json::Value) -> Result<(), ConfigError> {
        let mut next = self.clone();
        let as_text = match value {
            crate::json::Value::String(s) => s.clone(),
            other => crate::json::value_text(other),
        };
        let unknown = || ConfigError {
            field: name.to_string(),
            message: format!("unknown config {name}"),
        };
        let slot = next.slot(name).ok_or_else(unknown)?;
        let flag = match as_text.trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        let not_flag = || ConfigError {
            field: name.to_string(),
            message: format!("{name} must be true or false, got {as_text}"),
        };
        match slot {
            Slot::Selector(on) => {
                let name = match value {
                    crate::json::Value::Null => None,
                    _ => Some(as_text.as_str()),
                };
                *on = selector_class_of(name).map_err(|message| ConfigError {
                    field: "replica.selector.class".to_string(),
                    message,
                })?;
            }
            Slot::Bool(b) => *b = flag.ok_or_else(not_flag)?,
            Slot::OptBool(b) => *b = Some(flag.ok_or_else(not_flag)?),
            Slot::U32(_) | Slot::U64(_) => {
                let range = RANGES.iter().find(|r| r.name == name).ok_or_else(unknown)?;
                let bad = || range.error(&as_text);
                let v = as_text.trim().parse::<u64>().map_err(|_| bad())?;
                if v < range.min || v > range.max {
                    return Err(bad());
                }
                match slot {
                    Slot::U32(n) => *n = u32::try_from(v).map_err(|_| bad())?,
                    Slot::U64(n) => *n = v,
                    Slot::Bool(_) | Slot::OptBool(_) | Slot::Selector(_) => {}
                }
            }
        }
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// Checks every numeric config against [`RANGES`], then the rules between configs that
    /// Kafka's own validation enforces (KafkaConfig.validateValues):
    /// `replica.fetch.wait.max.ms` ≤ `replica.socket.timeout.ms` and
    /// `replica.fetch.wait.max.ms` ≤ `replica.lag.time.max.ms`; and `enable.idempotence=true`
    /// set explicitly against `max.in.flight.requests.per.connection`
    /// (ProducerConfig.postProcessAndValidateIdempotenceConfigs); `delivery.timeout.ms` ≥
    /// `request.timeout.ms` (KafkaProducer.configureDeliveryTimeout).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for range in RANGES {
            let v = self.numeric(range.name).unwrap_or_default();
            if v < range.min || v > range.max {
                return Err(range.error(&v.to_string()));
            }
        }
        if self.enable_idempotence == Some(true)
            && self.max_in_flight_requests_per_connection > MAX_IN_FLIGHT_FOR_IDEMPOTENCE
        {
            return Err(ConfigError {
                field: "max.in.flight.requests.per.connection".to_string(),
                message: format!(
                    "{}, got {}",
                    must_set(IN_FLIGHT_AT_MOST_5),
                    self.max_in_flight_requests_per_connection
                ),
            });
        }
        // KafkaProducer.configureDeliveryTimeout: "delivery.timeout.ms should be equal to or
        // larger than linger.ms + request.timeout.ms" (a ConfigException when set; linger.ms
        // is 0 here: the producer sends at once).
        if self.delivery_timeout_ms < self.request_timeout_ms {
            return Err(ConfigError {
                field: "delivery.timeout.ms".to_string(),
                message: format!(
                    "delivery.timeout.ms ({}) should be equal to or larger than linger.ms + request.timeout.ms (0 + {})",
                    self.delivery_timeout_ms, self.request_timeout_ms
                ),
            });
        }
        let wait = self.replica_fetch_wait_max_ms;
        // KafkaConfig.validateValues: "replica.socket.timeout.ms should always be at least
        // replica.fetch.wait.max.ms to prevent unnecessary socket timeouts".
        if self.replica_socket_timeout_ms < wait {
            return Err(ConfigError {
                field: "replica.socket.timeout.ms".to_string(),
                message: format!(
                    "replica.socket.timeout.ms ({}) must be at least replica.fetch.wait.max.ms ({wait}), to prevent unnecessary socket timeouts",
                    self.replica_socket_timeout_ms
                ),
            });
        }
        // KafkaConfig.validateValues: "replica.fetch.wait.max.ms should always be less than or
        // equal to replica.lag.time.max.ms to prevent frequent changes in ISR".
        if self.replica_lag_time_max_ms < wait {
            return Err(ConfigError {
                field: "replica.lag.time.max.ms".to_string(),
                message: format!(
                    "replica.lag.time.max.ms ({}) must be at least replica.fetch.wait.max.ms ({wait}), to prevent frequent changes in the ISR",
                    self.replica_lag_time_max_ms
                ),
            });
        }
        Ok(())
    }

    /// ProducerConfig.postProcessAndValidateIdempotenceConfigs for one produce with these
    /// `acks` and `retries`: Ok(true) when its batches are idempotent, Ok(false) when
    /// idempotence is off (set false, or not set and in conflict: Kafka logs "Idempotence will
    /// be disabled because ..." and goes on), Err naming both fields when `enable.idempotence`
    /// was set to true explicitly and a value conflicts.
    pub fn idempotence_for(&self, acks: crate::types::Acks, retries: u32) -> Result<bool, String> {
        let explicit = match self.enable_idempotence {
            Some(false) => return Ok(false),
            Some(true) => true,
            None => false,
        };
        let conflict = if retries == 0 {
            Some(must_set("retries to non-zero"))
        } else if acks != crate::types::Acks::All {
            Some(must_set(&format!("acks to all (got {acks})")))
        } else if self.max_in_flight_requests_per_connection > MAX_IN_FLIGHT_FOR_IDEMPOTENCE {
            Some(must_set(IN_FLIGHT_AT_MOST_5))
        } else {
            None
        };
        match conflict {
            None => Ok(true),
            Some(m) if explicit => Err(m),
            Some(_) => Ok(false),
        }
    }

    /// Whether KIP-966 eligible leader replicas are on.
    /// Before KIP-966 (protocol `no-elr` and older) the feature did not exist: the mode
    /// runs as `eligible.leader.replicas.version=0` whatever the config says.
    pub fn elr_enabled(&self) -> bool {
        self.eligible_leader_replicas_version >= 1 && self.protocol.has_elr()
    }

    /// Partition.effectiveMinIsr: min.insync.replicas, but never more than the replica count.
    pub fn effective_min_isr(&self, replication_factor: usize) -> usize {
        (self.min_insync_replicas as usize).min(replication_factor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Value;

    #[test]
    fn defaults_are_kafkas() {
        let c = Config::default();
        assert_eq!(c.min_insync_replicas, 1);
        assert_eq!(c.replica_lag_time_max_ms, 30_000);
        assert_eq!(c.replica_fetch_wait_max_ms, 500);
        assert_eq!(c.broker_session_timeout_ms, 9_000);
        assert_eq!(c.broker_heartbeat_interval_ms, 2_000);
        assert_eq!(c.replica_high_watermark_checkpoint_interval_ms, 5_000);
        assert_eq!(c.request_timeout_ms, 30_000);
        assert_eq!(c.delivery_timeout_ms, 120_000);
        assert!(!c.unclean_leader_election_enable);
        assert!(c.elr_enabled());
        c.validate().unwrap();
    }

    #[test]
    fn set_names_the_field_and_range() {
        let mut c = Config::default();
        let e = c
            .set("replica.lag.time.max.ms", &Value::from(700_000u64))
            .unwrap_err();
        assert_eq!(e.field, "replica.lag.time.max.ms");
        assert!(e.message.contains("0..=600000"), "{}", e.message);
        assert_eq!(
            c.replica_lag_time_max_ms, 30_000,
            "a rejected value changes nothing"
        );
        c.set("min.insync.replicas", &Value::from("2")).unwrap();
        assert_eq!(c.min_insync_replicas, 2);
        assert!(c.set("no.such.config", &Value::from(1u64)).is_err());
        assert!(c
            .set("unclean.leader.election.enable", &Value::from("yes"))
            .is_err());
        c.set("unclean.leader.election.enable", &Value::from(true))
            .unwrap();
        assert!(c.unclean_leader_election_enable);
    }

    #[test]
    fn retry_backoff_max_ms_is_a_config_and_below_retry_backoff_ms_is_no_error() {
        // ProducerConfig: retry.backoff.max.ms, LONG, atLeast(0), default
        // CommonClientConfigs.DEFAULT_RETRY_BACKOFF_MAX_MS (1000); at least 1 here.
        let mut c = Config::default();
        assert_eq!(c.retry_backoff_max_ms, 1_000);
        let e = c
            .set("retry.backoff.max.ms", &Value::from(0u64))
            .unwrap_err();
        assert_eq!(e.field, "retry.backoff.max.ms");
        assert_eq!(
            e.message,
            "retry.backoff.max.ms must be a whole number in 1..=60000, got 0"
        );
        c.set("retry.backoff.max.ms", &Value::from("250")).unwrap();
        assert_eq!(c.numeric("retry.backoff.max.ms"), Some(250));
        // CommonClientConfigs.warnDisablingExponentialBackoff only warns: retry.backoff.ms
        // above the maximum is allowed, and the backoff is a static retry.backoff.max.ms.
        c.set("retry.backoff.ms", &Value::from(500u64)).unwrap();
        c.validate().unwrap();
    }

    #[test]
    fn kafka_config_validate_values_rules_between_configs_are_refused() {
        // KafkaConfig.validateValues requires replicaFetchWaitMaxMs <= replicaSocketTimeoutMs
        // and replicaFetchWaitMaxMs <= replicaLagTimeMaxMs; each message names both configs.
        let mut c = Config::default();
        let e = c
            .set("replica.socket.timeout.ms", &Value::from(400u64))
            .unwrap_err();
        assert_eq!(e.field, "replica.socket.timeout.ms");
        assert!(
            e.message.contains("replica.socket.timeout.ms (400)")
                && e.message.contains("replica.fetch.wait.max.ms (500)"),
            "{}",
            e.message
        );
        assert_eq!(c.replica_socket_timeout_ms, 30_000, "nothing changed");
        let e = c
            .set("replica.fetch.wait.max.ms", &Value::from(40_000u64))
            .unwrap_err();
        assert_eq!(e.field, "replica.socket.timeout.ms");
        let e = c
            .set("replica.lag.time.max.ms", &Value::from(499u64))
            .unwrap_err();
        assert_eq!(e.field, "replica.lag.time.max.ms");
        assert!(
            e.message.contains("replica.fetch.wait.max.ms (500)"),
            "{}",
            e.message
        );
        // At the boundary both are allowed.
        c.set("replica.lag.time.max.ms", &Value::from(500u64))
            .unwrap();
        c.set("replica.socket.timeout.ms", &Value::from(500u64))
            .unwrap();
    }

    #[test]
    fn effective_min_isr_is_capped_by_replicas() {
        let c = Config {
            min_insync_replicas: 3,
            ..Config::default()
        };
        assert_eq!(c.effective_min_isr(2), 2);
        assert_eq!(c.effective_min_isr(3), 3);
    }
}
