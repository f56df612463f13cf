//! Scenario files: a versioned JSON format holding configs, brokers, the topics and their
//! replica assignments, the seed and a timeline of timed actions. Documented in
//! `docs/scenario-format.md`. Version 1 has one topic of one partition (`topic`,
//! `assignment`, `replication_factor`); version 2 lists topics with partitions, replication
//! factors or manual assignments and topic configs (`topics`), and brokers' racks (`racks`).
//! [`Scenario::topic_specs`] gives the topics the same way for both.
//!
//! This module holds the scenario's types and their validation; `scenario_json.rs` reads
//! and writes their JSON (`Scenario::from_json`, `Scenario::to_json_pretty`).

use serde::{Deserialize, Serialize};

use crate::config::{Config, MAX_BROKERS};
use crate::error::{check_broker, indexed, member, quoted, ScenarioError, MAX_TEXT_LEN};
use crate::expect::{Expectation, PartitionsExpect, MAX_EXPECTATIONS};
use crate::protocol::Protocol;
use crate::sort::stable_order;
use crate::types::{Acks, BrokerId};
use crate::vec_map::VecMap;

/// The version a new scenario gets (`Scenario::default`): version 1, one topic of one
/// partition.
pub const FORMAT_VERSION: u32 = 1;
/// The scenario format versions this build reads and writes.
pub const FORMAT_VERSIONS: [u32; 2] = [1, 2];
/// Most topics a version-2 scenario may list.
pub const MAX_TOPICS: usize = 200;
/// Most partitions a version-2 scenario may create, over all its topics.
pub const MAX_PARTITIONS: usize = 200;
/// Kafka's `num.partitions` default: the partition count of a topic created without one.
pub const DEFAULT_NUM_PARTITIONS: u32 = 1;
/// Kafka's `default.replication.factor` default: the replication factor of a topic created
/// without one (or an assignment).
pub const DEFAULT_REPLICATION_FACTOR: u32 = 1;
/// Longest rack name (`broker.rack`).
pub const MAX_RACK_LEN: usize = 64;
/// Limits enforced while validating, so no scenario can hang or exhaust the engine.
pub const MAX_TIMELINE_ACTIONS: usize = 10_000;
pub const MAX_VALUES_PER_PRODUCE: usize = 10_000;
pub const MAX_VALUE_LEN: usize = 64;
/// A version-2 record's value size when neither the produce (`size`) nor the scenario
/// (`record_size_bytes`) gives one.
pub const DEFAULT_RECORD_SIZE_BYTES: u32 = 1024;
/// The largest value size: a record of it stays below the producer's `max.request.size`
/// (1048576) with its batch's overhead (KafkaProducer.ensureValidRecordSize).
pub const MAX_RECORD_SIZE_BYTES: u32 = 1_000_000;
pub const MAX_TIME_MS: u64 = 24 * 3600 * 1000;
pub const MAX_TOPIC_LEN: usize = 64;

fn default_version() -> u32 {
    FORMAT_VERSION
}
fn default_topic() -> String {
    "rep".to_string()
}
fn default_brokers() -> u32 {
    3
}

/// A whole scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default = "default_version")]
    pub version: u32,
    /// A title for people (shown by the UI and `watermark presets`).
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Where the scenario comes from (an article and section).
    #[serde(default)]
    pub source: String,
    /// The topic (version 1). In version 2 it keeps its default, `rep`, and is not written:
    /// `topics` names the topics.
    #[serde(default = "default_topic")]
    pub topic: String,
    /// Number of brokers, ids 1..=brokers.
    #[serde(default = "default_brokers")]
    pub brokers: u32,
    /// `broker.rack` of each broker that has one (version 2); a broker not listed has none.
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub racks: VecMap<BrokerId, String>,
    /// The consumer's `client.rack` (version 2): with `replica.selector.class` set to the
    /// rack-aware selector, a leader sends it to a follower in this rack (KIP-392).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_rack: Option<String>,
    /// The replica assignment (`--replica-assignment 1:2:3`); the first is the preferred
    /// leader. Empty means 1..=replication_factor. Version 1 only.
    #[serde(default)]
    pub assignment: Vec<BrokerId>,
    /// Used when `assignment` is empty. Version 1 only.
    #[serde(default)]
    pub replication_factor: Option<u32>,
    /// The topics created at time 0, in this order (version 2; version 1 has `topic`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<NewTopic>,
    /// The value size in bytes of a version-2 record whose produce gives no `size`
    /// ([`DEFAULT_RECORD_SIZE_BYTES`] when absent); version 1's records are their values'
    /// bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_size_bytes: Option<u32>,
    #[serde(default)]
    pub seed: u64,
    /// The replication protocol of a Kafka era (docs/history.md): `kafka-4`, the default,
    /// is left out of the JSON, so links to scenarios without it are unchanged.
    #[serde(default, skip_serializing_if = "Protocol::is_default")]
    pub protocol: Protocol,
    #[serde(default)]
    pub config: Config,
    /// Per-link latency overrides.
    #[serde(default)]
    pub links: Vec<LinkLatency>,
    #[serde(default)]
    pub timeline: Vec<TimedAction>,
    /// Where the run stops (ms); default: 5 s after the last action.
    #[serde(default)]
    pub end_ms: Option<u64>,
    /// Runs beside this one under the same timeline (at most
    /// [`MAX_VARIANTS`]): each with another protocol, configs or acks
    /// ([`Scenario::variant`]). Left out of the JSON when empty, so scenarios and links
    /// without it are unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<Variant>,
    /// What must hold, and when (`watermark check`); not part of the run itself. Left out
    /// of the JSON when empty, so links to scenarios without expectations are unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    /// When a session left the scenario's script: the time of the person's first action,
    /// written by the playground into the scenario it shares or saves. Notes from then on
    /// describe the script's own run, not this one (the playground marks them off script).
    /// Not part of the run; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_script_ms: Option<u64>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            version: FORMAT_VERSION,
            title: String::new(),
            description: String::new(),
            source: String::new(),
            topic: default_topic(),
            brokers: 3,
            racks: VecMap::new(),
            client_rack: None,
            assignment: vec![],
            replication_factor: None,
            topics: vec![],
            record_size_bytes: None,
            seed: 0,
            protocol: Protocol::Kafka4,
            config: Config::default(),
            links: vec![],
            timeline: vec![],
            end_ms: None,
            compare: vec![],
            expect: vec![],
            off_script_ms: None,
        }
    }
}

/// A topic a version-2 scenario creates at time 0, as written (`kafka-topics.sh --create`,
/// Admin's `NewTopic`): a name, then either a partition count and a replication factor (the
/// controller places the replicas) or a manual assignment, and topic configs. What is left
/// out stays out, so a written scenario says what its author said;
/// [`Scenario::topic_specs`] applies the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTopic {
    pub name: String,
    /// `--partitions`; default `num.partitions`, [`DEFAULT_NUM_PARTITIONS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    /// `--replication-factor`; default `default.replication.factor`,
    /// [`DEFAULT_REPLICATION_FACTOR`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_factor: Option<u32>,
    /// `--replica-assignment`: a replica list per partition, in partition order, each list's
    /// first broker the preferred leader. Instead of `partitions` and `replication_factor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignment: Option<Vec<Vec<BrokerId>>>,
    /// `--config name=value`: the topic's overrides of the broker configs.
    #[serde(default, skip_serializing_if = "TopicConfigs::is_empty")]
    pub configs: TopicConfigs,
}

impl NewTopic {
    /// The topic with the defaults applied.
    pub fn spec(&self) -> TopicSpec {
        TopicSpec {
            name: self.name.clone(),
            partitions: self.partition_count(),
            assignment: self.assignment.clone(),
            replication_factor: self.replication_factor(),
            configs: self.configs,
        }
    }

    /// The topic's replication factor: its first replica list's length, or
    /// `replication_factor` (default 3).
    pub fn replication_factor(&self) -> u32 {
        match &self.assignment {
            Some(lists) => lists.first().map_or(0, |l| l.len() as u32),
            None => self
                .replication_factor
                .unwrap_or(DEFAULT_REPLICATION_FACTOR),
        }
    }

    /// How many partitions the topic has: its assignment's, or `partitions` (default 1).
    pub fn partition_count(&self) -> u32 {
        match &self.assignment {
            Some(lists) => lists.len() as u32,
            None => self.partitions.unwrap_or(DEFAULT_NUM_PARTITIONS),
        }
    }
}

/// A topic's configs (`kafka-topics.sh --create --config`), each overriding the broker's
/// config of that name for this topic; `None`: not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicConfigs {
    #[serde(
        rename = "min.insync.replicas",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub min_insync_replicas: Option<u32>,
    #[serde(
        rename = "unclean.leader.election.enable",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub unclean_leader_election_enable: Option<bool>,
    /// `flush.messages` (LogConfig: LONG, atLeast(1)): the topic's
    /// `log.flush.interval.messages`.
    #[serde(
        rename = "flush.messages",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub flush_messages: Option<u64>,
    /// `flush.ms` (LogConfig: LONG, atLeast(0)): the topic's `log.flush.interval.ms`.
    #[serde(rename = "flush.ms", default, skip_serializing_if = "Option::is_none")]
    pub flush_ms: Option<u64>,
}

/// The ranges of a topic's numeric configs (LogConfig): `min.insync.replicas` an INT,
/// atLeast(1) (Kafka creates a topic whose value is above its replication factor: acks=all
/// writes then fail with NOT_ENOUGH_REPLICAS); `flush.messages` a LONG, atLeast(1);
/// `flush.ms` a LONG, atLeast(0).
pub const TOPIC_CONFIG_RANGES: [crate::config::Range; 3] = [
    crate::config::Range {
        name: "min.insync.replicas",
        min: 1,
        max: i32::MAX as u64,
    },
    crate::config::Range {
        name: "flush.messages",
        min: 1,
        max: crate::config::LOG_FLUSH_NEVER,
    },
    crate::config::Range {
        name: "flush.ms",
        min: 0,
        max: crate::config::LOG_FLUSH_NEVER,
    },
];

impl TopicConfigs {
    pub fn is_empty(&self) -> bool {
        self.min_insync_replicas.is_none()
            && self.unclean_leader_election_enable.is_none()
            && self.flush_messages.is_none()
            && self.flush_ms.is_none()
    }

    /// These configs with each one `over` sets replacing this one's (a variant's topic
    /// configs over the scenario's, [`Variant::topics`]).
    pub fn overridden_by(self, over: &TopicConfigs) -> TopicConfigs {
        TopicConfigs {
            min_insync_replicas: over.min_insync_replicas.or(self.min_insync_replicas),
            unclean_leader_election_enable: over
                .unclean_leader_election_enable
                .or(self.unclean_leader_election_enable),
            flush_messages: over.flush_messages.or(self.flush_messages),
            flush_ms: over.flush_ms.or(self.flush_ms),
        }
    }

    /// Each value against LogConfig's range ([`TOPIC_CONFIG_RANGES`]); `field` is the
    /// configs' path (`topics[0].configs`, `compare[0].topics.orders`), the error's the
    /// config's below it.
    pub(crate) fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        let values = [
            self.min_insync_replicas.map(u64::from),
            self.flush_messages,
            self.flush_ms,
        ];
        for (range, value) in TOPIC_CONFIG_RANGES.iter().zip(values) {
            if let Some(v) = value.filter(|&v| v < range.min || v > range.max) {
                return Err(ScenarioError::new(
                    member(field, range.name),
                    range.error(&v.to_string()).message,
                ));
            }
        }
        Ok(())
    }

    /// The configs set, each with its value as Kafka prints it, in the format's order
    /// (min.insync.replicas, unclean.leader.election.enable, flush.messages, flush.ms).
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = Vec::new();
        if let Some(m) = self.min_insync_replicas {
            out.push(("min.insync.replicas", m.to_string()));
        }
        if let Some(b) = self.unclean_leader_election_enable {
            out.push(("unclean.leader.election.enable", b.to_string()));
        }
        if let Some(n) = self.flush_messages {
            out.push(("flush.messages", n.to_string()));
        }
        if let Some(n) = self.flush_ms {
            out.push(("flush.ms", n.to_string()));
        }
        out
    }

    /// Kafka's `Configs:` form (`min.insync.replicas=1,flush.ms=0`): [`Self::entries`]
    /// joined by commas.
    pub fn text(&self) -> String {
        let parts: Vec<String> = self
            .entries()
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        parts.join(",")
    }
}

/// A topic as the simulation creates it, whichever version the scenario is
/// ([`Scenario::topic_specs`]): the defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    pub name: String,
    pub partitions: u32,
    /// Each partition's replica list, when the scenario gives them (version 2's
    /// `assignment`; version 1's one list); `None`: the controller places the replicas.
    pub assignment: Option<Vec<Vec<BrokerId>>>,
    pub replication_factor: u32,
    pub configs: TopicConfigs,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkLatency {
    pub a: Endpoint,
    pub b: Endpoint,
    pub latency_ms: u64,
}

/// A link endpoint: a broker id, or the string "controller".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Endpoint {
    Broker(BrokerId),
    Controller(ControllerName),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ControllerName {
    #[serde(rename = "controller")]
    Controller,
}

/// One action at a time on the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedAction {
    /// Simulated time in ms.
    pub at: u64,
    #[serde(flatten)]
    pub action: Action,
}

/// Sorts timeline actions by time, actions at one time in their listed order.
pub fn sort_timeline(actions: &mut [TimedAction]) {
    let keys: Vec<u64> = actions.iter().map(|a| a.at).collect();
    let mut order = stable_order(&keys);
    // Put the action `order[k]` at `k`, one cycle of the permutation at a time; a done
    // place is marked by `order[k] == k`.
    for k in 0..order.len() {
        let mut j = k;
        while order[j] != k {
            let next = order[j];
            actions.swap(j, next);
            order[j] = j;
            j = next;
        }
        order[j] = j;
    }
}

/// What a producer sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ProduceSpec {
    /// Default: `all`, the producer's default.
    #[serde(default)]
    pub acks: AcksOrDefault,
    /// The values, in order.
    #[serde(default)]
    pub values: Vec<String>,
    /// Or: `count` values named `prefix1`, `prefix2`, ... (e.g. `ok-1`..`ok-10`).
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub count: Option<u32>,
    /// The first number for `prefix` (default 1).
    #[serde(default)]
    pub start: Option<u32>,
    /// Send each value as its own batch, waiting for each answer (`send().get()`), instead
    /// of one batch.
    #[serde(default)]
    pub one_by_one: bool,
    /// Producer `retries` for this send (default: the config's `retries`).
    #[serde(default)]
    pub retries: Option<u32>,
    /// Send to this broker instead of the leader (to see NOT_LEADER_OR_FOLLOWER).
    #[serde(default)]
    pub to: Option<BrokerId>,
    /// The topic to write to (version 2); default: the first topic ([`ProduceSpec::target`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// The partition to write to (version 2); default: the key's, or the sticky
    /// partitioner's for keyless records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u32>,
    /// The records' key (version 2): its UTF-8 bytes are hashed to the partition
    /// (BuiltInPartitioner.partitionForKey) when `partition` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The records' value size in bytes (version 2); default the scenario's
    /// `record_size_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
}

/// `acks`, defaulting to Kafka's producer default, `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AcksOrDefault(pub Acks);

impl Default for AcksOrDefault {
    fn default() -> Self {
        AcksOrDefault(Acks::All)
    }
}

impl ProduceSpec {
    pub fn values(&self) -> Vec<String> {
        let mut v = self.values.clone();
        if let Some(prefix) = &self.prefix {
            let start = self.start.unwrap_or(1);
            for i in 0..self.count.unwrap_or(0) {
                v.push(format!("{prefix}{}", start.saturating_add(i)));
            }
        }
        v
    }

    /// The partition this produce names: `(topic, partition)`, its `topic` or else
    /// `first_topic` (the scenario's first, [`Scenario::first_topic`]), its `partition` or
    /// else 0. (Without a `partition` the simulator sends the records to their key's
    /// partition or the topic's sticky one, as Kafka's producer does: `Sim::client_produce`.)
    pub fn target<'a>(&'a self, first_topic: &'a str) -> (&'a str, u32) {
        target(self.topic.as_deref(), self.partition, first_topic)
    }
}

fn target<'a>(topic: Option<&'a str>, partition: Option<u32>, first: &'a str) -> (&'a str, u32) {
    (topic.unwrap_or(first), partition.unwrap_or(0))
}

/// Everything a scenario or a person can do.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Produce(ProduceSpecAcks),
    /// The consumer reads what it may (below the HW).
    Consume {
        #[serde(default)]
        max_records: Option<u32>,
        #[serde(default)]
        from_beginning: bool,
        /// The topic to read (version 2); default: the first topic ([`Action::target`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
        /// The partition to read (version 2); default 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
    },
    /// SIGSTOP.
    Freeze {
        broker: BrokerId,
    },
    /// SIGCONT.
    Thaw {
        broker: BrokerId,
    },
    /// kill -9.
    Kill {
        broker: BrokerId,
    },
    /// SIGTERM: controlled shutdown.
    Stop {
        broker: BrokerId,
    },
    Start {
        broker: BrokerId,
    },
    /// Each fetch on this broker takes `ms` longer (0: normal again).
    Slow {
        broker: BrokerId,
        ms: u64,
    },
    Cut {
        a: Endpoint,
        b: Endpoint,
    },
    Heal {
        a: Endpoint,
        b: Endpoint,
    },
    LoseDisk {
        broker: BrokerId,
    },
    /// The broker's machine loses power: the process dies as with kill -9, and the records
    /// the OS had not written back yet (appended less than `sim.writeback.delay.ms` ago) are
    /// gone from its logs. The checkpoint files survive (Kafka fsyncs them).
    PowerLoss {
        broker: BrokerId,
    },
    /// `kafka-configs.sh --alter --add-config name=value`.
    SetConfig {
        name: String,
        value: crate::json::Value,
    },
    /// `kafka-leader-election.sh --election-type preferred`.
    ElectPreferred,
    /// `kafka-leader-election.sh --election-type unclean`.
    ElectUnclean,
    /// `kafka-topics.sh --describe`, with `--topic` and the partition filters (version 2).
    Describe(DescribeSpec),
    /// `kafka-get-offsets.sh` (the HW).
    Offsets,
    /// Each replica's leader-epoch-checkpoint on one line: of the partition named (version
    /// 2's `topic` and `partition`), of every partition of `topic`, or of every partition.
    Epochs {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
    },
    /// Every broker's replication-offset-checkpoint.
    Checkpoints,
    /// Each broker's replica fetcher threads, as `jstack <pid> | grep ReplicaFetcherThread`
    /// lists them (article 000, example 1-1).
    FetcherThreads,
    /// `kafka-dump-log.sh --print-data-log` for one broker: its log of the partition named
    /// (version 2's `topic` and `partition`), of every partition of `topic` it holds, or of
    /// every partition it holds.
    DumpLog {
        broker: BrokerId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
    },
    /// A comment in the transcript.
    Note {
        text: String,
    },
    /// The application gives up on every send not yet done: `KafkaProducer.close(Duration.ZERO)`
    /// aborts the incomplete batches (each fails with `KafkaException`), and the next
    /// produce comes from a new producer (the next producer id).
    CancelProduce,
    /// Kafka's metrics by their MBeans, per broker and cluster-wide (`KafkaMetrics::lines`);
    /// `name` keeps one metric's lines.
    Metrics {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    // ---- zones (version 2): a rack's brokers at once ----------------------------------
    /// kill -9 of every broker whose `broker.rack` is `zone`, as `kill` does each.
    LoseZone {
        zone: String,
    },
    /// Start every broker of `zone` again, as `start` does each.
    StartZone {
        zone: String,
    },
    /// Cut every link between `zone`'s brokers and the brokers outside it, and their links
    /// to the controller (the KRaft quorum's majority is outside the zone).
    CutZone {
        zone: String,
    },
    /// Heal what `cut_zone` cut.
    HealZone {
        zone: String,
    },
    /// `kafka-reassign-partitions.sh --execute --reassignment-json-file F [--throttle B]
    /// [--additional]` (version 2).
    ReassignExecute {
        reassignment: Reassignment,
        /// `--throttle`: the inter-broker replication throttle, bytes/s.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        throttle: Option<u64>,
        /// `--additional`: start it while other reassignments are in progress.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        additional: bool,
    },
    /// `kafka-reassign-partitions.sh --verify --reassignment-json-file F
    /// [--preserve-throttles]` (version 2).
    ReassignVerify {
        reassignment: Reassignment,
        /// `--preserve-throttles`: the throttles are not cleared.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        preserve_throttles: bool,
    },
    /// `kafka-reassign-partitions.sh --cancel --reassignment-json-file F
    /// [--preserve-throttles]` (version 2).
    ReassignCancel {
        reassignment: Reassignment,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        preserve_throttles: bool,
    },
}

/// `kafka-topics.sh --describe`'s options (TopicCommand): `--topic` (one topic; default
/// every topic) and the partition filters, which print the partitions any of them selects
/// and no topic line. Version 2 only; version 1's `describe` has none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescribeSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// `--under-replicated-partitions`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub under_replicated_partitions: bool,
    /// `--under-min-isr-partitions`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub under_min_isr_partitions: bool,
    /// `--at-min-isr-partitions`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_min_isr_partitions: bool,
    /// `--unavailable-partitions`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unavailable_partitions: bool,
}

/// The describe action's filter fields, in [`DescribeSpec::filters`] order.
pub const DESCRIBE_FILTERS: [&str; 4] = [
    "under_replicated_partitions",
    "under_min_isr_partitions",
    "at_min_isr_partitions",
    "unavailable_partitions",
];

impl DescribeSpec {
    /// The filters, in [`DESCRIBE_FILTERS`] order.
    pub fn filters(&self) -> [bool; 4] {
        [
            self.under_replicated_partitions,
            self.under_min_isr_partitions,
            self.at_min_isr_partitions,
            self.unavailable_partitions,
        ]
    }
}

/// A reassignment JSON file (`--reassignment-json-file`), as
/// ReassignPartitionsCommand.parsePartitionReassignmentData reads it (version 1; no
/// `log_dirs`: the simulation has one log directory per broker).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reassignment {
    #[serde(default = "reassignment_version")]
    pub version: u32,
    pub partitions: Vec<PartitionReassignment>,
}

fn reassignment_version() -> u32 {
    1
}

/// One entry of a reassignment file: the partition and its target replicas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionReassignment {
    pub topic: String,
    pub partition: u32,
    pub replicas: Vec<BrokerId>,
}

/// Written out, not derived: a derived `clone` is `#[inline]`, so the engine and the web
/// crate each compiled a copy of their own (0.7 kB of wasm each).
impl Clone for Action {
    fn clone(&self) -> Self {
        match self {
            Action::Produce(p) => Action::Produce(p.clone()),
            Action::SetConfig { name, value } => Action::SetConfig {
                name: name.clone(),
                value: value.clone(),
            },
            Action::Note { text } => Action::Note { text: text.clone() },
            Action::LoseZone { zone } => Action::LoseZone { zone: zone.clone() },
            Action::StartZone { zone } => Action::StartZone { zone: zone.clone() },
            Action::CutZone { zone } => Action::CutZone { zone: zone.clone() },
            Action::HealZone { zone } => Action::HealZone { zone: zone.clone() },
            Action::Consume {
                max_records,
                from_beginning,
                topic,
                partition,
            } => Action::Consume {
                max_records: *max_records,
                from_beginning: *from_beginning,
                topic: topic.clone(),
                partition: *partition,
            },
            &Action::Freeze { broker } => Action::Freeze { broker },
            &Action::Thaw { broker } => Action::Thaw { broker },
            &Action::Kill { broker } => Action::Kill { broker },
            &Action::Stop { broker } => Action::Stop { broker },
            &Action::Start { broker } => Action::Start { broker },
            &Action::Slow { broker, ms } => Action::Slow { broker, ms },
            &Action::Cut { a, b } => Action::Cut { a, b },
            &Action::Heal { a, b } => Action::Heal { a, b },
            &Action::LoseDisk { broker } => Action::LoseDisk { broker },
            &Action::PowerLoss { broker } => Action::PowerLoss { broker },
            Action::DumpLog {
                broker,
                topic,
                partition,
            } => Action::DumpLog {
                broker: *broker,
                topic: topic.clone(),
                partition: *partition,
            },
            Action::ElectPreferred => Action::ElectPreferred,
            Action::ElectUnclean => Action::ElectUnclean,
            Action::Describe(d) => Action::Describe(d.clone()),
            Action::Metrics { name } => Action::Metrics { name: name.clone() },
            Action::Offsets => Action::Offsets,
            Action::Epochs { topic, partition } => Action::Epochs {
                topic: topic.clone(),
                partition: *partition,
            },
            Action::Checkpoints => Action::Checkpoints,
            Action::FetcherThreads => Action::FetcherThreads,
            Action::CancelProduce => Action::CancelProduce,
            Action::ReassignExecute {
                reassignment,
                throttle,
                additional,
            } => Action::ReassignExecute {
                reassignment: reassignment.clone(),
                throttle: *throttle,
                additional: *additional,
            },
            Action::ReassignVerify {
                reassignment,
                preserve_throttles,
            } => Action::ReassignVerify {
                reassignment: reassignment.clone(),
                preserve_throttles: *preserve_throttles,
            },
            Action::ReassignCancel {
                reassignment,
                preserve_throttles,
            } => Action::ReassignCancel {
                reassignment: reassignment.clone(),
                preserve_throttles: *preserve_throttles,
            },
        }
    }
}

/// ProduceSpec under the `produce` action (serde needs a named struct inside the tag).
pub type ProduceSpecAcks = ProduceSpec;

impl Action {
    /// The partition a produce or consume acts on: `(topic, partition)`, its `topic` or else
    /// `first_topic` (the scenario's first, [`Scenario::first_topic`]), its `partition` or
    /// else 0. `None` for the other actions.
    pub fn target<'a>(&'a self, first_topic: &'a str) -> Option<(&'a str, u32)> {
        match self {
            Action::Produce(p) => Some(p.target(first_topic)),
            Action::Consume {
                topic, partition, ..
            } => Some(target(topic.as_deref(), *partition, first_topic)),
            _ => None,
        }
    }

    /// The zone (a rack) a zone action names.
    pub fn zone(&self) -> Option<&str> {
        match self {
            Action::LoseZone { zone }
            | Action::StartZone { zone }
            | Action::CutZone { zone }
            | Action::HealZone { zone } => Some(zone),
            _ => None,
        }
    }

    /// The `topic` and `partition` a produce or consume names (not defaulted).
    fn named_target(&self) -> (Option<&str>, Option<u32>) {
        match self {
            Action::Produce(p) => (p.topic.as_deref(), p.partition),
            Action::Consume {
                topic, partition, ..
            } => (topic.as_deref(), *partition),
            Action::Describe(d) => (d.topic.as_deref(), None),
            Action::Epochs { topic, partition }
            | Action::DumpLog {
                topic, partition, ..
            } => (topic.as_deref(), *partition),
            _ => (None, None),
        }
    }

    /// Checks the action against the cluster: broker ids in range, sizes within limits.
    pub fn validate(&self, field: &str, brokers: u32) -> Result<(), ScenarioError> {
        let broker_ok = |b: BrokerId, name: &str| check_broker(b, brokers, field, name);
        match self {
            Action::Produce(spec) => {
                let n = spec.values.len() as u64 + u64::from(spec.count.unwrap_or(0));
                if n == 0 {
                    return Err(ScenarioError::new(
                        member(field, "values"),
                        "produce needs at least one value (values, or prefix and count)",
                    ));
                }
                if n > MAX_VALUES_PER_PRODUCE as u64 {
                    return Err(ScenarioError::new(
                        member(field, "count"),
                        format!("at most {MAX_VALUES_PER_PRODUCE} records per produce, got {n}"),
                    ));
                }
                if spec.count.is_some() != spec.prefix.is_some() {
                    return Err(ScenarioError::new(
                        member(field, "prefix"),
                        "prefix and count go together",
                    ));
                }
                let long = spec
                    .values
                    .iter()
                    .chain(spec.prefix.iter())
                    .find(|v| v.chars().count() > MAX_VALUE_LEN);
                if let Some(v) = long {
                    return Err(ScenarioError::new(
                        member(field, "values"),
                        format!(
                            "a value may be at most {MAX_VALUE_LEN} characters, got {}",
                            v.chars().count()
                        ),
                    ));
                }
                if let Some(b) = spec.to {
                    broker_ok(b, "to")?;
                }
                if let Some(size) = spec.size {
                    check_record_size(&member(field, "size"), size)?;
                }
                if let Some(k) = spec
                    .key
                    .as_ref()
                    .filter(|k| k.chars().count() > MAX_VALUE_LEN)
                {
                    return Err(ScenarioError::new(
                        member(field, "key"),
                        format!(
                            "a key may be at most {MAX_VALUE_LEN} characters, got {}",
                            k.chars().count()
                        ),
                    ));
                }
            }
            Action::Freeze { broker }
            | Action::Thaw { broker }
            | Action::Kill { broker }
            | Action::Stop { broker }
            | Action::Start { broker }
            | Action::LoseDisk { broker }
            | Action::PowerLoss { broker }
            | Action::DumpLog { broker, .. } => broker_ok(*broker, "broker")?,
            Action::Slow { broker, ms } => {
                broker_ok(*broker, "broker")?;
                if *ms > 600_000 {
                    return Err(ScenarioError::new(
                        member(field, "ms"),
                        format!("slow ms must be in 0..=600000, got {ms}"),
                    ));
                }
            }
            Action::Cut { a, b } | Action::Heal { a, b } => {
                for (e, name) in [(a, "a"), (b, "b")] {
                    if let Endpoint::Broker(id) = e {
                        broker_ok(*id, name)?;
                    }
                }
                if a == b {
                    return Err(ScenarioError::new(
                        member(field, "b"),
                        "a link needs two different endpoints",
                    ));
                }
            }
            Action::SetConfig { name, value } if name == CLIENT_RACK => {
                client_rack_value(value)
                    .map_err(|m| ScenarioError::new(member(field, "value"), m))?;
            }
            Action::SetConfig { name, value } if name == RECORD_SIZE_BYTES => {
                record_size_value(value)
                    .map_err(|m| ScenarioError::new(member(field, "value"), m))?;
            }
            Action::SetConfig { name, value } => {
                let mut c = Config::default();
                c.set(name, value)
                    .map_err(|e| ScenarioError::new(member(field, "value"), e.message))?;
            }
            Action::Note { text } => {
                if text.chars().count() > MAX_TEXT_LEN {
                    return Err(ScenarioError::new(
                        member(field, "text"),
                        format!("a note may be at most {MAX_TEXT_LEN} characters"),
                    ));
                }
            }
            Action::Consume { max_records, .. } => {
                if max_records.is_some_and(|m| m == 0 || m > 100_000) {
                    return Err(ScenarioError::new(
                        member(field, "max_records"),
                        "max_records must be in 1..=100000",
                    ));
                }
            }
            Action::Metrics { name: Some(name) } => {
                if !crate::snapshot::KAFKA_METRICS.iter().any(|m| m.0 == name) {
                    let mut names = String::new();
                    for (i, m) in crate::snapshot::KAFKA_METRICS.iter().enumerate() {
                        names.push_str(if i == 0 { "" } else { ", " });
                        names.push_str(m.0);
                    }
                    return Err(ScenarioError::new(
                        member(field, "name"),
                        format!(
                            "name must be one of {names}, got {}",
                            crate::error::quoted(name)
                        ),
                    ));
                }
            }
            Action::ElectPreferred
            | Action::ElectUnclean
            | Action::Describe(_)
            | Action::Metrics { name: None }
            | Action::Offsets
            | Action::Epochs { .. }
            | Action::Checkpoints
            | Action::FetcherThreads
            | Action::CancelProduce
            | Action::LoseZone { .. }
            | Action::StartZone { .. }
            | Action::CutZone { .. }
            | Action::HealZone { .. } => {}
            // Checked with the scenario's topics (`Scenario::check_reassignment`).
            Action::ReassignExecute { .. }
            | Action::ReassignVerify { .. }
            | Action::ReassignCancel { .. } => {}
        }
        Ok(())
    }

    /// A reassignment action's file and whether it is `--execute`.
    pub fn reassignment(&self) -> Option<(&Reassignment, bool)> {
        match self {
            Action::ReassignExecute { reassignment, .. } => Some((reassignment, true)),
            Action::ReassignVerify { reassignment, .. }
            | Action::ReassignCancel { reassignment, .. } => Some((reassignment, false)),
            _ => None,
        }
    }
}

impl Scenario {
    /// The replica list of version 1's one partition: `assignment`, or
    /// 1..=replication_factor (default: all brokers).
    pub fn replicas(&self) -> Vec<BrokerId> {
        if !self.assignment.is_empty() {
            self.assignment.clone()
        } else {
            (1..=self
                .replication_factor
                .unwrap_or(self.brokers)
                .min(self.brokers))
                .collect()
        }
    }

    /// The topics to create, the same way for every version, defaults applied. Version 1
    /// gives its one topic of one partition, `topic` with [`Scenario::replicas`] as its
    /// assignment (what the simulation has always created) and no topic configs; version 2
    /// gives `topics`, each by [`NewTopic::spec`].
    pub fn topic_specs(&self) -> Vec<TopicSpec> {
        if self.version < 2 {
            let replicas = self.replicas();
            return vec![TopicSpec {
                name: self.topic.clone(),
                partitions: 1,
                replication_factor: replicas.len() as u32,
                assignment: Some(vec![replicas]),
                configs: TopicConfigs::default(),
            }];
        }
        let mut specs = Vec::with_capacity(self.topics.len());
        for t in &self.topics {
            specs.push(t.spec());
        }
        specs
    }

    /// The first topic's name, where a produce or consume that names no topic goes:
    /// version 1's `topic`, or the first of version 2's `topics`.
    pub fn first_topic(&self) -> &str {
        match self.topics.first() {
            Some(t) if self.version >= 2 => &t.name,
            _ => &self.topic,
        }
    }

    /// `broker.rack` of a broker, if it has one.
    pub fn rack_of(&self, broker: BrokerId) -> Option<&str> {
        self.racks.get(&broker).map(String::as_str)
    }

    pub fn end_ms(&self) -> u64 {
        self.end_ms
            .unwrap_or_else(|| self.timeline.iter().map(|a| a.at).max().unwrap_or(0) + 5_000)
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        if !FORMAT_VERSIONS.contains(&self.version) {
            return Err(ScenarioError::new(
                "version",
                format!(
                    "this build reads scenario format versions 1 and 2, got {}",
                    self.version
                ),
            ));
        }
        if self.brokers == 0 || self.brokers > MAX_BROKERS {
            return Err(ScenarioError::new(
                "brokers",
                format!("brokers must be in 1..={MAX_BROKERS}, got {}", self.brokers),
            ));
        }
        if self.version == 1 {
            self.validate_version_1_topic()?;
        } else {
            self.validate_racks()?;
            self.validate_topics()?;
        }
        self.config.validate()?;
        if self.timeline.len() > MAX_TIMELINE_ACTIONS {
            return Err(ScenarioError::new(
                "timeline",
                format!(
                    "at most {MAX_TIMELINE_ACTIONS} actions, got {}",
                    self.timeline.len()
                ),
            ));
        }
        let mut total_values = 0u64;
        for (i, a) in self.timeline.iter().enumerate() {
            if a.at > MAX_TIME_MS {
                return Err(ScenarioError::new(
                    member(&indexed("timeline", i), "at"),
                    format!("at must be in 0..={MAX_TIME_MS} ms, got {}", a.at),
                ));
            }
            a.action.validate(&indexed("timeline", i), self.brokers)?;
            if let Some(zone) = a.action.zone() {
                let field = member(&indexed("timeline", i), "zone");
                if self.version < 2 {
                    return Err(needs_version_2(&field));
                }
                zone_brokers(&self.racks, zone).map_err(|m| ScenarioError::new(field, m))?;
            }
            let (topic, partition) = a.action.named_target();
            if topic.is_some() || partition.is_some() {
                self.check_target(&indexed("timeline", i), topic, partition)?;
            }
            if let (Action::Describe(d), true) = (&a.action, self.version < 2) {
                if let Some(k) = d.filters().iter().position(|f| *f) {
                    return Err(needs_version_2(&member(
                        &indexed("timeline", i),
                        DESCRIBE_FILTERS[k],
                    )));
                }
            }
            if let Some((r, execute)) = a.action.reassignment() {
                self.check_reassignment(&indexed("timeline", i), r, execute)?;
            }
            if let Action::ReassignExecute {
                throttle: Some(t), ..
            } = a.action
            {
                if t > i64::MAX as u64 {
                    return Err(ScenarioError::new(
                        member(&indexed("timeline", i), "throttle"),
                        format!("throttle must be in 0..={} bytes/s, got {t}", i64::MAX),
                    ));
                }
            }
            if let (Action::SetConfig { name, .. }, true) = (&a.action, self.version < 2) {
                if name == CLIENT_RACK || name == RECORD_SIZE_BYTES {
                    return Err(ScenarioError::new(
                        member(&indexed("timeline", i), "name"),
                        format!("`{name}` needs version 2 (\"version\": 2)"),
                    ));
                }
            }
            if let Action::Produce(p) = &a.action {
                if self.version < 2 {
                    let named = [("key", p.key.is_some()), ("size", p.size.is_some())];
                    if let Some((name, _)) = named.iter().find(|(_, given)| *given) {
                        return Err(needs_version_2(&member(&indexed("timeline", i), name)));
                    }
                }
                total_values += p.values.len() as u64 + u64::from(p.count.unwrap_or(0));
                // enable.idempotence=true set explicitly: a produce that conflicts with it is
                // a ConfigException (ProducerConfig.postProcessAndValidateIdempotenceConfigs).
                let retries = p.retries.unwrap_or(self.config.retries);
                if let Err(message) = self.config.idempotence_for(p.acks.0, retries) {
                    let field = match (retries, p.retries) {
                        (0, Some(_)) => member(&indexed("timeline", i), "retries"),
                        (0, None) => "config.retries".to_string(),
                        _ => member(&indexed("timeline", i), "acks"),
                    };
                    return Err(ScenarioError::new(field, message));
                }
            }
        }
        if total_values > 1_000_000 {
            return Err(ScenarioError::new(
                "timeline",
                format!("at most 1000000 records in a scenario, got {total_values}"),
            ));
        }
        if self.off_script_ms.is_some_and(|t| t > MAX_TIME_MS) {
            return Err(ScenarioError::new(
                "off_script_ms",
                format!("off_script_ms must be in 0..={MAX_TIME_MS}"),
            ));
        }
        if let Some(end) = self.end_ms {
            if end > MAX_TIME_MS {
                return Err(ScenarioError::new(
                    "end_ms",
                    format!("end_ms must be in 0..={MAX_TIME_MS}, got {end}"),
                ));
            }
        }
        if self.title.chars().count() > MAX_TEXT_LEN
            || self.description.chars().count() > 4 * MAX_TEXT_LEN
        {
            return Err(ScenarioError::new("title", "title or description too long"));
        }
        if self.expect.len() > MAX_EXPECTATIONS {
            return Err(ScenarioError::new(
                "expect",
                format!(
                    "at most {MAX_EXPECTATIONS} expectations, got {}",
                    self.expect.len()
                ),
            ));
        }
        let end = self.end_ms();
        for (i, e) in self.expect.iter().enumerate() {
            let field = indexed("expect", i);
            e.validate(&field, self.brokers, end)?;
            if let Some(run) = e.run {
                self.check_run(&member(&field, "run"), run)?;
            }
            if e.topic.is_some() || e.partition.is_some() {
                self.check_target(&field, e.topic.as_deref(), e.partition)?;
            }
            // The consumer's rack and the zones are version 2's (racks).
            for (given, name) in [
                (e.client_rack.is_some(), "client_rack"),
                (e.zone.is_some(), "zone"),
            ] {
                if given && self.version < 2 {
                    return Err(needs_version_2(&member(&field, name)));
                }
            }
            if let Some(rack) = e.client_rack.as_deref().filter(|r| !r.is_empty()) {
                if !legal_name(rack, MAX_RACK_LEN) {
                    return Err(ScenarioError::new(
                        member(&field, "client_rack"),
                        format!(
                            "client_rack is a rack name of 1..={MAX_RACK_LEN} characters of ASCII letters, digits, '.', '_' and '-', or \"\" for none, got {}",
                            quoted(rack)
                        ),
                    ));
                }
            }
            if let Some(zone) = &e.zone {
                zone_brokers(&self.racks, zone)
                    .map_err(|m| ScenarioError::new(member(&field, "zone"), m))?;
            }
            self.check_partition_filters(&field, e)?;
        }
        self.validate_compare()?;
        Ok(())
    }

    /// An expectation's `run`: 1 for `compare[0]`, 2 for `compare[1]`.
    fn check_run(&self, field: &str, run: u32) -> Result<(), ScenarioError> {
        let n = self.compare.len();
        if n == 0 {
            return Err(ScenarioError::new(
                field,
                format!("run names one of compare's runs, but the scenario has no compare (leave run out for the scenario's own run), got {run}"),
            ));
        }
        if run == 0 || run as usize > n {
            return Err(ScenarioError::new(
                field,
                format!("run must be one of 1..={n} (compare's variants; leave it out for the scenario's own run), got {run}"),
            ));
        }
        Ok(())
    }
}

impl Scenario {
    /// Version 1's topic: `topic`, `replication_factor`, `assignment`; and none of version
    /// 2's fields.
    fn validate_version_1_topic(&self) -> Result<(), ScenarioError> {
        if !self.racks.is_empty() {
            return Err(needs_version_2("racks"));
        }
        if self.client_rack.is_some() {
            return Err(needs_version_2("client_rack"));
        }
        if !self.topics.is_empty() {
            return Err(needs_version_2("topics"));
        }
        if self.record_size_bytes.is_some() {
            return Err(needs_version_2("record_size_bytes"));
        }
        if !legal_name(&self.topic, MAX_TOPIC_LEN) {
            return Err(ScenarioError::new(
                "topic",
                format!("a topic name is 1..={MAX_TOPIC_LEN} characters of ASCII letters, digits, '.', '_' and '-'"),
            ));
        }
        if let Some(rf) = self.replication_factor {
            self.check_replication_factor("replication_factor", rf)?;
        }
        for (i, &b) in self.assignment.iter().enumerate() {
            check_broker(b, self.brokers, &indexed("assignment", i), "")?;
            if self.assignment[..i].contains(&b) {
                return Err(ScenarioError::new(
                    indexed("assignment", i),
                    format!("broker {b} appears twice"),
                ));
            }
        }
        Ok(())
    }

    fn check_replication_factor(&self, field: &str, rf: u32) -> Result<(), ScenarioError> {
        if rf == 0 || rf > self.brokers {
            return Err(ScenarioError::new(
                field,
                format!(
                    "replication_factor must be in 1..={} (the broker count), got {rf}",
                    self.brokers
                ),
            ));
        }
        Ok(())
    }

    /// `racks`: broker ids of the cluster, rack names of Kafka's topic-name characters.
    fn validate_racks(&self) -> Result<(), ScenarioError> {
        if let Some(rack) = &self.client_rack {
            if !legal_name(rack, MAX_RACK_LEN) {
                return Err(ScenarioError::new(
                    "client_rack",
                    format!(
                        "a rack name is 1..={MAX_RACK_LEN} characters of ASCII letters, digits, '.', '_' and '-', got {}",
                        quoted(rack)
                    ),
                ));
            }
        }
        for (&b, rack) in self.racks.iter() {
            let field = member("racks", &b.to_string());
            check_broker(b, self.brokers, &field, "")?;
            if !legal_name(rack, MAX_RACK_LEN) {
                return Err(ScenarioError::new(
                    field,
                    format!(
                        "a rack name is 1..={MAX_RACK_LEN} characters of ASCII letters, digits, '.', '_' and '-', got {}",
                        quoted(rack)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Version 2's topics, as the KRaft controller checks a CreateTopics request
    /// (`ReplicationControlManager.createTopics`, `createTopic`,
    /// `validateManualPartitionAssignment`); and none of version 1's topic fields.
    fn validate_topics(&self) -> Result<(), ScenarioError> {
        if let Some(size) = self.record_size_bytes {
            check_record_size("record_size_bytes", size)?;
        }
        if self.topic != default_topic() {
            return Err(version_1_field("topic"));
        }
        if !self.assignment.is_empty() {
            return Err(version_1_field("assignment"));
        }
        if self.replication_factor.is_some() {
            return Err(version_1_field("replication_factor"));
        }
        if self.topics.is_empty() || self.topics.len() > MAX_TOPICS {
            return Err(ScenarioError::new(
                "topics",
                format!(
                    "a version-2 scenario lists 1..={MAX_TOPICS} topics, got {}",
                    self.topics.len()
                ),
            ));
        }
        let mut total = 0usize;
        for (i, t) in self.topics.iter().enumerate() {
            let field = indexed("topics", i);
            self.validate_topic_name(i)?;
            let count_field = if let Some(lists) = &t.assignment {
                // createTopic: "A manual partition assignment was specified, but
                // replication factor (numPartitions) was not set to -1."
                for (name, given) in [
                    ("partitions", t.partitions.is_some()),
                    ("replication_factor", t.replication_factor.is_some()),
                ] {
                    if given {
                        return Err(ScenarioError::new(
                            member(&field, name),
                            "a topic has either an assignment or partitions and replication_factor, not both (a manual assignment sets them: one replica list per partition)",
                        ));
                    }
                }
                self.validate_assignment(&member(&field, "assignment"), lists)?;
                "assignment"
            } else {
                if let Some(p) = t.partitions {
                    if p == 0 || p as usize > MAX_PARTITIONS {
                        return Err(ScenarioError::new(
                            member(&field, "partitions"),
                            format!("partitions must be in 1..={MAX_PARTITIONS}, got {p}"),
                        ));
                    }
                }
                if let Some(rf) = t.replication_factor {
                    self.check_replication_factor(&member(&field, "replication_factor"), rf)?;
                }
                "partitions"
            };
            total += t.partition_count() as usize;
            if total > MAX_PARTITIONS {
                return Err(ScenarioError::new(
                    member(&field, count_field),
                    format!("at most {MAX_PARTITIONS} partitions over all topics, got {total} with this topic's"),
                ));
            }
            t.configs.validate(&member(&field, "configs"))?;
        }
        Ok(())
    }

    /// Topic.validate (Kafka's legal characters, not `.` or `..`; at most [`MAX_TOPIC_LEN`]
    /// characters here), and no name twice or colliding with another's.
    fn validate_topic_name(&self, i: usize) -> Result<(), ScenarioError> {
        let name = &self.topics[i].name;
        let field = member(&indexed("topics", i), "name");
        if !legal_name(name, MAX_TOPIC_LEN) {
            return Err(ScenarioError::new(
                field,
                format!("a topic name is 1..={MAX_TOPIC_LEN} characters of ASCII letters, digits, '.', '_' and '-', got {}", quoted(name)),
            ));
        }
        if name == "." || name == ".." {
            return Err(ScenarioError::new(
                field,
                format!("a topic name cannot be '.' or '..', got {}", quoted(name)),
            ));
        }
        for (j, other) in self.topics[..i].iter().enumerate() {
            if other.name == *name {
                return Err(ScenarioError::new(
                    field,
                    format!("topic {} is already topics[{j}]", quoted(name)),
                ));
            }
            // Topic.hasCollision: '.' and '_' are one character in metric names, so
            // ReplicationControlManager.validateNewTopicNames refuses such a pair.
            if collides(&other.name, name) {
                return Err(ScenarioError::new(
                    field,
                    format!(
                        "Topic '{name}' collides with existing topic: {} (topics[{j}]): '.' and '_' collide in metric names",
                        other.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A manual assignment, as `validateManualPartitionAssignment` checks each partition's
    /// replicas (in their listed order here, to name the entry at fault), with its messages.
    fn validate_assignment(
        &self,
        field: &str,
        lists: &[Vec<BrokerId>],
    ) -> Result<(), ScenarioError> {
        if lists.is_empty() || lists.len() > MAX_PARTITIONS {
            return Err(ScenarioError::new(
                field,
                format!(
                    "a manual assignment lists 1..={MAX_PARTITIONS} partitions (a replica list each), got {}",
                    lists.len()
                ),
            ));
        }
        for (p, replicas) in lists.iter().enumerate() {
            let list_field = indexed(field, p);
            if replicas.is_empty() {
                return Err(ScenarioError::new(
                    list_field,
                    "The manual partition assignment includes an empty replica list.",
                ));
            }
            for (k, &b) in replicas.iter().enumerate() {
                if b == 0 || b > self.brokers {
                    return Err(ScenarioError::new(
                        indexed(&list_field, k),
                        format!(
                            "The manual partition assignment includes broker {b}, but no such broker is registered (brokers are 1..={}).",
                            self.brokers
                        ),
                    ));
                }
                if replicas[..k].contains(&b) {
                    return Err(ScenarioError::new(
                        indexed(&list_field, k),
                        format!("The manual partition assignment includes the broker {b} more than once."),
                    ));
                }
            }
            let first = lists[0].len();
            if replicas.len() != first {
                return Err(ScenarioError::new(
                    list_field,
                    format!(
                        "The manual partition assignment includes a partition with {} replica(s), but this is not consistent with previous partitions, which have {first} replica(s).",
                        replicas.len()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A produce's or consume's `topic` and `partition`: version 2's, naming a topic of the
    /// scenario and one of its partitions.
    fn check_target(
        &self,
        field: &str,
        topic: Option<&str>,
        partition: Option<u32>,
    ) -> Result<(), ScenarioError> {
        if self.version < 2 {
            return Err(needs_version_2(&member(
                field,
                if topic.is_some() {
                    "topic"
                } else {
                    "partition"
                },
            )));
        }
        let name = topic.unwrap_or(self.first_topic());
        let Some(t) = self.topics.iter().find(|t| t.name == name) else {
            return Err(ScenarioError::new(
                member(field, "topic"),
                format!(
                    "topic must be one of the scenario's topics, got {}",
                    quoted(name)
                ),
            ));
        };
        let count = t.partition_count();
        if let Some(p) = partition.filter(|&p| p >= count) {
            return Err(ScenarioError::new(
                member(field, "partition"),
                format!(
                    "partition must be one of 0..={} (topic {name} has {count}), got {p}",
                    count - 1
                ),
            ));
        }
        Ok(())
    }
}

impl Scenario {
    /// An expectation's describe filters (`under_replicated_partitions`, …): version 2's; a
    /// count at most the partitions of the cluster, a list of its `topic-partition`s (of
    /// `topic`'s when the expectation names one), each once.
    fn check_partition_filters(&self, field: &str, e: &Expectation) -> Result<(), ScenarioError> {
        let total: u32 = self.topics.iter().map(NewTopic::partition_count).sum();
        for (want, name) in e.partition_filters().into_iter().zip(DESCRIBE_FILTERS) {
            let Some(want) = want else { continue };
            let at = member(field, name);
            if self.version < 2 {
                return Err(needs_version_2(&at));
            }
            match want {
                PartitionsExpect::Count(n) if *n > total => {
                    return Err(ScenarioError::new(
                        at,
                        format!(
                        "{name} must be a count in 0..={total} (the cluster's partitions), got {n}"
                    ),
                    ))
                }
                PartitionsExpect::Count(_) => {}
                PartitionsExpect::List(names) => {
                    for (i, tp) in names.iter().enumerate() {
                        let known = tp.rsplit_once('-').is_some_and(|(topic, p)| {
                            e.topic.as_deref().is_none_or(|t| t == topic)
                                && self.topics.iter().any(|t| {
                                    t.name == topic
                                        && p.parse::<u32>().is_ok_and(|n| {
                                            n < t.partition_count() && n.to_string() == p
                                        })
                                })
                        });
                        let item = indexed(&at, i);
                        if !known {
                            return Err(ScenarioError::new(
                                item,
                                format!(
                                    "{name} lists topic-partitions of {} such as {}-0, got {}",
                                    match &e.topic {
                                        Some(t) => format!("topic {t}"),
                                        None => "the scenario's topics".to_string(),
                                    },
                                    e.topic.as_deref().unwrap_or(self.first_topic()),
                                    quoted(tp)
                                ),
                            ));
                        }
                        if names[..i].contains(tp) {
                            return Err(ScenarioError::new(item, format!("{tp} appears twice")));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A reassignment file, as kafka-reassign-partitions.sh checks it before it asks the
    /// cluster anything (parsePartitionReassignmentData, and for `--execute`
    /// parseExecuteAssignmentArgs and verifyBrokerIds, with their messages), and each
    /// partition one of the scenario's.
    fn check_reassignment(
        &self,
        field: &str,
        r: &Reassignment,
        execute: bool,
    ) -> Result<(), ScenarioError> {
        let field = member(field, "reassignment");
        if self.version < 2 {
            return Err(needs_version_2(&field));
        }
        if r.version != 1 {
            return Err(ScenarioError::new(
                member(&field, "version"),
                format!(
                    "Not supported version field value {} (the tool reads version 1)",
                    r.version
                ),
            ));
        }
        let list = member(&field, "partitions");
        if r.partitions.len() > MAX_PARTITIONS {
            return Err(ScenarioError::new(
                list,
                format!(
                    "a reassignment lists at most {MAX_PARTITIONS} partitions, got {}",
                    r.partitions.len()
                ),
            ));
        }
        if execute && r.partitions.is_empty() {
            return Err(ScenarioError::new(
                list,
                "Partition reassignment list cannot be empty",
            ));
        }
        for (k, p) in r.partitions.iter().enumerate() {
            let entry = indexed(&list, k);
            self.check_target(&entry, Some(&p.topic), Some(p.partition))?;
            let replicas = member(&entry, "replicas");
            if execute && p.replicas.is_empty() {
                return Err(ScenarioError::new(
                    replicas,
                    "Partition replica list cannot be empty",
                ));
            }
            if execute {
                if let Some(j) = r.partitions[..k]
                    .iter()
                    .position(|q| q.topic == p.topic && q.partition == p.partition)
                {
                    return Err(ScenarioError::new(
                        entry,
                        format!("Partition reassignment contains duplicate topic partitions: {}-{} (partitions[{j}])", p.topic, p.partition),
                    ));
                }
            }
            for (j, &b) in p.replicas.iter().enumerate() {
                if b == 0 || b > self.brokers {
                    return Err(ScenarioError::new(
                        indexed(&replicas, j),
                        format!("Unknown broker id {b} (brokers are 1..={})", self.brokers),
                    ));
                }
                if execute && p.replicas[..j].contains(&b) {
                    return Err(ScenarioError::new(
                        indexed(&replicas, j),
                        format!("Partition replica lists may not contain duplicate entries: {}-{} contains multiple entries for {b}", p.topic, p.partition),
                    ));
                }
            }
        }
        Ok(())
    }
}

// ---- side by side (`compare`) -------------------------------------------------------

/// Most variants a scenario compares with its own run.
pub const MAX_VARIANTS: usize = 2;
/// Longest label of a variant.
pub const MAX_LABEL_LEN: usize = 64;

/// One run beside the scenario's own: what it changes. Each field left out keeps the
/// scenario's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// What the playground calls it (≤ [`MAX_LABEL_LEN`] characters); empty: [`Variant::title`]
    /// derives one from the changes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The protocol mode it runs (as the scenario's `protocol`), `kafka-4` included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Overrides of the scenario's `config`: Kafka's names, each value as `set_config`
    /// takes it (a number, a boolean, or a text holding either), checked against the same
    /// ranges. In name order, as every JSON object here.
    #[serde(default, skip_serializing_if = "crate::json::Map::is_empty")]
    pub config: crate::json::Map,
    /// Version 2: overrides of topics' own `configs`, by topic name: each config given
    /// replaces the topic's (or, where the topic sets none, the broker's for that topic),
    /// with the names and ranges of `topics[].configs`. In name order.
    #[serde(default, skip_serializing_if = "VecMap::is_empty")]
    pub topics: VecMap<String, TopicConfigs>,
    /// Every `produce` of the timeline runs with this `acks` instead of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acks: Option<Acks>,
}

impl Variant {
    /// What the UI calls it: the label, else its changes in a fixed order, `acks` first,
    /// then each config by name, then each topic's configs by topic name (in the order of
    /// `topics[].configs`' table, Kafka's `Configs:` form), then the protocol: `acks=1`,
    /// `min.insync.replicas=1`, `orders: min.insync.replicas=1,flush.ms=0`,
    /// `protocol no-elr`, joined by ", ".
    pub fn title(&self) -> String {
        if !self.label.is_empty() {
            return self.label.clone();
        }
        let mut parts: Vec<String> = Vec::new();
        if let Some(a) = self.acks {
            parts.push(format!("acks={a}"));
        }
        for (name, value) in self.config.iter() {
            let text = match value {
                crate::json::Value::String(s) => s.clone(),
                v => crate::json::value_text(v),
            };
            parts.push(format!("{name}={text}"));
        }
        for (topic, configs) in self.topics.iter() {
            parts.push(format!("{topic}: {}", configs.text()));
        }
        if let Some(p) = self.protocol {
            parts.push(format!("protocol {}", p.name()));
        }
        parts.join(", ")
    }

    /// The scenario this variant runs, from `top` (see [`Scenario::variant`]); `field` is
    /// the variant's path (`compare[0]`) for the errors of its configs.
    fn apply(&self, top: &Scenario, field: &str, run: u32) -> Result<Scenario, ScenarioError> {
        let mut s = Scenario {
            compare: Vec::new(),
            expect: Vec::new(),
            ..top.clone()
        };
        if let Some(p) = self.protocol {
            s.protocol = p;
        }
        // Each as `set_config` takes it (Config::set: a number, a boolean, or a text holding
        // either), checked against its range and the rules between configs.
        let config = member(field, "config");
        for (name, value) in self.config.iter() {
            s.config
                .set(name, value)
                .map_err(|e| ScenarioError::new(member(&config, &e.field), e.message))?;
        }
        // Each topic's own configs, as `topics[].configs` takes them, over the topic's.
        let topics = member(field, "topics");
        if !self.topics.is_empty() && s.version < 2 {
            return Err(needs_version_2(&topics));
        }
        for (name, over) in self.topics.iter() {
            let path = member(&topics, name);
            let Some(t) = s.topics.iter_mut().find(|t| t.name == *name) else {
                let names: Vec<&str> = top.topics.iter().map(|t| t.name.as_str()).collect();
                return Err(ScenarioError::new(
                    path,
                    format!(
                        "unknown topic {}; the topics are: {}",
                        quoted(name),
                        names.join(", ")
                    ),
                ));
            };
            if over.is_empty() {
                return Err(ScenarioError::new(
                    path,
                    "a variant's topic sets at least one of its configs: min.insync.replicas, unclean.leader.election.enable, flush.messages, flush.ms",
                ));
            }
            over.validate(&path)?;
            t.configs = t.configs.overridden_by(over);
        }
        // Every action as the variant's run takes it (`Variant::adapt`): a produce with its
        // acks, and no change of a config it sets, so that a session's inputs, once in the
        // timeline (a saved or shared session), run as they ran live.
        s.timeline.retain_mut(|t| match self.adapt(&t.action) {
            Some(a) => {
                t.action = a;
                true
            }
            None => false,
        });
        for e in &top.expect {
            if e.run == Some(run) {
                let mut e = e.clone();
                e.run = None;
                s.expect.push(e);
            }
        }
        Ok(s)
    }
}

impl Scenario {
    /// The scenario that `compare[i]` runs: this one with the variant's protocol, config
    /// overrides and acks applied, without `compare`, with the expectations of run `i + 1`
    /// (their `run` cleared). The same cluster, seed, timeline (notes included) and end.
    /// Errors name the variant's field (`compare[0].config.min.insync.replicas: ...`).
    pub fn variant(&self, i: usize) -> Result<Scenario, ScenarioError> {
        let field = indexed("compare", i);
        let v = self.compare.get(i).ok_or_else(|| {
            ScenarioError::new(
                field.clone(),
                format!(
                    "no such variant: the scenario compares {} (compare[0..{}])",
                    self.compare.len(),
                    self.compare.len()
                ),
            )
        })?;
        let s = v.apply(self, &field, i as u32 + 1)?;
        s.validate().map_err(|e| {
            // A produce that conflicts with enable.idempotence=true because of the
            // variant's acks: the variant's `acks` is at fault.
            let name = if v.acks.is_some()
                && e.field.starts_with("timeline[")
                && e.field.ends_with(".acks")
            {
                member(&field, "acks")
            } else {
                member(&field, &e.field)
            };
            ScenarioError::new(name, e.message)
        })?;
        Ok(s)
    }

    /// The top run's scenario for checking: this one without the expectations that name
    /// another run (`compare` kept). [`crate::check::check`] does not clone: it skips them.
    pub fn top_run(&self) -> Scenario {
        let mut s = self.clone();
        s.expect.retain(|e| e.run.is_none());
        s
    }

    /// `compare`: at most [`MAX_VARIANTS`], each labelled within [`MAX_LABEL_LEN`], each
    /// changing something, each a valid scenario. Called by [`Scenario::validate`].
    pub(crate) fn validate_compare(&self) -> Result<(), ScenarioError> {
        if self.compare.len() > MAX_VARIANTS {
            return Err(ScenarioError::new(
                "compare",
                format!(
                    "at most {MAX_VARIANTS} variants, got {}",
                    self.compare.len()
                ),
            ));
        }
        for (i, v) in self.compare.iter().enumerate() {
            let field = indexed("compare", i);
            let n = v.label.chars().count();
            if n > MAX_LABEL_LEN {
                return Err(ScenarioError::new(
                    member(&field, "label"),
                    format!("a label may be at most {MAX_LABEL_LEN} characters, got {n}"),
                ));
            }
            // A variant that sets something is kept even where it equals the top run now
            // (acks with no produce yet, a config the top run has too): the playground's
            // person may produce or change the top run's setting later, and a session it
            // saved must open again.
            if v.protocol.is_none()
                && v.config.is_empty()
                && v.topics.is_empty()
                && v.acks.is_none()
            {
                return Err(ScenarioError::new(
                    field,
                    "a variant must change protocol, config, topics or acks",
                ));
            }
            self.variant(i)?;
        }
        Ok(())
    }
}

/// 1..=`max` characters, each an ASCII letter or digit, `.`, `_` or `-` (Kafka's
/// `Topic.LEGAL_CHARS`).
fn legal_name(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'-')
}

/// `Topic.hasCollision`: the names are the same once every '.' is a '_'.
fn collides(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .all(|(x, y)| x == y || ((x == b'.' || x == b'_') && (y == b'.' || y == b'_')))
}

/// A record value size: `0..=MAX_RECORD_SIZE_BYTES`.
fn check_record_size(field: &str, size: u32) -> Result<(), ScenarioError> {
    if size > MAX_RECORD_SIZE_BYTES {
        let name = field.rsplit('.').next().unwrap_or(field);
        return Err(ScenarioError::new(
            field,
            format!(
                "{name} must be a value size in bytes in 0..={MAX_RECORD_SIZE_BYTES}, got {size}"
            ),
        ));
    }
    Ok(())
}

/// The consumer's config `client.rack` (KIP-392), as `set_config` names it (version 2).
pub const CLIENT_RACK: &str = "client.rack";

/// The scenario's `record_size_bytes`, as `set_config` names it (version 2): the value size
/// of each record whose produce gives none, from then on.
pub const RECORD_SIZE_BYTES: &str = "record_size_bytes";

/// A `set_config` of `record_size_bytes`'s value: a whole number of bytes in
/// `0..=MAX_RECORD_SIZE_BYTES` (as a number or a text, as the configs take theirs).
pub fn record_size_value(value: &crate::json::Value) -> Result<u32, String> {
    let text = match value {
        crate::json::Value::String(s) => s.clone(),
        v => crate::json::value_text(v),
    };
    match text.trim().parse::<u32>() {
        Ok(n) if n <= MAX_RECORD_SIZE_BYTES => Ok(n),
        _ => Err(format!(
            "record_size_bytes must be a value size in bytes in 0..={MAX_RECORD_SIZE_BYTES}, got {text}"
        )),
    }
}

/// A `set_config` of `client.rack`'s value: a rack name (as `client_rack` takes it), or
/// none (`null` or `""`: ConsumerConfig's default, the empty string).
pub fn client_rack_value(value: &crate::json::Value) -> Result<Option<String>, String> {
    match value {
        crate::json::Value::Null => Ok(None),
        crate::json::Value::String(s) if s.is_empty() => Ok(None),
        crate::json::Value::String(s) if legal_name(s, MAX_RACK_LEN) => Ok(Some(s.clone())),
        v => Err(format!(
            "client.rack is a rack name of 1..={MAX_RACK_LEN} characters of ASCII letters, digits, '.', '_' and '-', or \"\" for none, got {}",
            crate::json::value_text(v)
        )),
    }
}

/// The error for a version-2 field in a version-1 scenario.
/// The brokers of `zone`, those whose `broker.rack` it is, in id order; or the error for a
/// zone that is no rack of the cluster, naming the racks there are.
pub(crate) fn zone_brokers(
    racks: &VecMap<BrokerId, String>,
    zone: &str,
) -> Result<Vec<BrokerId>, String> {
    let mut brokers = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (&b, rack) in racks.iter() {
        if rack == zone {
            brokers.push(b);
        }
        // Sorted by insertion (no sort code for a handful of names).
        let at = names.partition_point(|n| *n < rack.as_str());
        if names.get(at) != Some(&rack.as_str()) {
            names.insert(at, rack);
        }
    }
    if brokers.is_empty() {
        return Err(if names.is_empty() {
            format!(
                "zone must be a rack, but no broker has one (`racks`), got {}",
                quoted(zone)
            )
        } else {
            format!(
                "zone must be one of the racks {}, got {}",
                names.join(", "),
                quoted(zone)
            )
        });
    }
    Ok(brokers)
}

pub(crate) fn needs_version_2(field: &str) -> ScenarioError {
    let name = field.rsplit('.').next().unwrap_or(field);
    ScenarioError::new(field, format!("`{name}` needs version 2 (\"version\": 2)"))
}

/// The error for version 1's `topic`, `assignment` or `replication_factor` in a version-2
/// scenario.
pub(crate) fn version_1_field(field: &str) -> ScenarioError {
    ScenarioError::new(
        field,
        format!("version 2 lists topics under `topics`, each with its name and its partitions and replication_factor or assignment; `{field}` is version 1's"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_small_scenario() {
        let s = Scenario::from_json(
            r#"{"version":1,"topic":"div","brokers":3,"assignment":[1,2,3],
                "config":{"replica.lag.time.max.ms":10000},
                "timeline":[{"at":0,"action":"produce","acks":"all","prefix":"ok-","count":10},
                            {"at":100,"action":"freeze","broker":2},
                            {"at":200,"action":"cut","a":1,"b":"controller"},
                            {"at":300,"action":"describe"}]}"#,
        )
        .unwrap();
        assert_eq!(s.config.replica_lag_time_max_ms, 10_000);
        assert_eq!(s.replicas(), vec![1, 2, 3]);
        match &s.timeline[0].action {
            Action::Produce(p) => assert_eq!(p.values()[9], "ok-10"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            s.timeline[2].action,
            Action::Cut {
                a: Endpoint::Broker(1),
                b: Endpoint::Controller(ControllerName::Controller)
            }
        );
        let back = Scenario::from_json(&s.to_json_pretty()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn sorts_timelines_stably() {
        let mut rng = crate::rng::Rng::new(4);
        for n in 0..40 {
            let mut timeline: Vec<TimedAction> = (0..n)
                .map(|i| TimedAction {
                    at: rng.below_or_equal(5),
                    action: Action::Note {
                        text: i.to_string(),
                    },
                })
                .collect();
            let mut expected = timeline.clone();
            expected.sort_by_key(|a| a.at);
            sort_timeline(&mut timeline);
            assert_eq!(timeline, expected);
        }
    }

    #[test]
    fn errors_name_the_field_and_range() {
        let e = Scenario::from_json(r#"{"brokers":13}"#).unwrap_err();
        assert_eq!(e.field, "brokers");
        assert!(e.message.contains("1..=12"));
        let e = Scenario::from_json(r#"{"timeline":[{"at":5,"action":"kill","broker":4}]}"#)
            .unwrap_err();
        assert_eq!(e.field, "timeline[0].broker");
        let e = Scenario::from_json(r#"{"config":{"min.insync.replicas":0}}"#).unwrap_err();
        assert_eq!(e.field, "config.min.insync.replicas");
        let e = Scenario::from_json(r#"{"assignment":[1,1]}"#).unwrap_err();
        assert_eq!(e.field, "assignment[1]");
        let e = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"set_config","name":"retries","value":-1}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.field, "timeline[0].value");
        assert!(Scenario::from_json("{").is_err());
        assert!(Scenario::from_json(r#"{"nonsense":1}"#).is_err());
        let e = Scenario::from_json(r#"{"version":3}"#).unwrap_err();
        assert_eq!(e.field, "version");
        assert_eq!(
            e.message,
            "this build reads scenario format versions 1 and 2, got 3"
        );
        // Version 2 reads, and needs its topics.
        let e = Scenario::from_json(r#"{"version":2}"#).unwrap_err();
        assert_eq!(e.field, "topics");
        assert!(e.message.contains("1..=200"), "{e}");
    }

    #[test]
    fn topic_specs_are_the_same_view_of_both_versions() {
        // Version 1: one topic of one partition, replicas as the simulation has always
        // created them (`replicas`).
        let v1 =
            Scenario::from_json(r#"{"topic":"div","brokers":4,"replication_factor":2}"#).unwrap();
        assert_eq!(
            v1.topic_specs(),
            vec![TopicSpec {
                name: "div".into(),
                partitions: 1,
                assignment: Some(vec![vec![1, 2]]),
                replication_factor: 2,
                configs: TopicConfigs::default(),
            }]
        );
        let v1 = Scenario::from_json(r#"{"assignment":[3,1]}"#).unwrap();
        assert_eq!(v1.topic_specs()[0].assignment, Some(vec![vec![3, 1]]));
        assert_eq!(v1.topic_specs()[0].replication_factor, 2);
        assert_eq!(v1.first_topic(), "rep");
        assert_eq!(v1.rack_of(1), None);
        // Version 2: Kafka's defaults (num.partitions=1, default.replication.factor=1) for
        // what a topic leaves out; an assignment gives the count and the factor.
        let v2 = Scenario::from_json(
            r#"{"version":2,"brokers":4,"racks":{"2":"b","1":"a"},"topics":[
                {"name":"orders","partitions":6,"replication_factor":3,
                 "configs":{"min.insync.replicas":2,"unclean.leader.election.enable":true}},
                {"name":"plain"},
                {"name":"move","assignment":[[1,2],[2,3],[4,1]]}]}"#,
        )
        .unwrap();
        let specs = v2.topic_specs();
        assert_eq!(
            specs[0],
            TopicSpec {
                name: "orders".into(),
                partitions: 6,
                assignment: None,
                replication_factor: 3,
                configs: TopicConfigs {
                    min_insync_replicas: Some(2),
                    unclean_leader_election_enable: Some(true),
                    ..Default::default()
                },
            }
        );
        assert_eq!((specs[1].partitions, specs[1].replication_factor), (1, 1));
        assert_eq!(specs[1].assignment, None);
        assert_eq!((specs[2].partitions, specs[2].replication_factor), (3, 2));
        assert_eq!(
            specs[2].assignment,
            Some(vec![vec![1, 2], vec![2, 3], vec![4, 1]])
        );
        assert_eq!(v2.first_topic(), "orders");
        assert_eq!(
            (v2.rack_of(1), v2.rack_of(2), v2.rack_of(3)),
            (Some("a"), Some("b"), None)
        );
    }

    #[test]
    fn produce_and_consume_targets_default_to_the_first_topic_partition_0() {
        let s = Scenario::from_json(
            r#"{"version":2,"topics":[{"name":"a"},{"name":"b","partitions":3}],"timeline":[
                {"at":0,"action":"produce","values":["x"]},
                {"at":0,"action":"produce","values":["x"],"topic":"b","partition":2},
                {"at":0,"action":"produce","values":["x"],"topic":"b"},
                {"at":0,"action":"consume"},
                {"at":0,"action":"consume","topic":"b","partition":1},
                {"at":0,"action":"describe"}]}"#,
        )
        .unwrap();
        let first = s.first_topic();
        let targets: Vec<_> = s.timeline.iter().map(|a| a.action.target(first)).collect();
        assert_eq!(
            targets,
            vec![
                Some(("a", 0)),
                Some(("b", 2)),
                Some(("b", 0)),
                Some(("a", 0)),
                Some(("b", 1)),
                None
            ]
        );
        let Action::Produce(p) = &s.timeline[1].action else {
            panic!("a produce")
        };
        assert_eq!(p.target(first), ("b", 2));
    }
}
