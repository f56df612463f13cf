//! Expectations: what a scenario says must hold at a time (the describe line or its fields,
//! a replica's LEO and HW, the offsets read-out, a produce result or error code, a loss, a
//! caption reached, a transcript line). `watermark check` runs them, and the playground
//! marks them on its timeline. Documented in `docs/scenario-format.md`.
//!
//! This module holds an expectation's data and its validation against the scenario (times,
//! broker ids, sizes); `check.rs` evaluates expectations against a simulation.

use serde::{Deserialize, Serialize};

use crate::error::{ScenarioError, MAX_TEXT_LEN};
use crate::types::{BrokerId, TimeMs};

/// At most this many expectations in a scenario.
pub const MAX_EXPECTATIONS: usize = 1_000;
/// Longest error code an expectation may name.
pub const MAX_ERROR_CODE_LEN: usize = 64;

/// What must hold at `at`. Every check given must hold; at least one must be given.
///
/// State checks (`describe`, `leader`, `isr`, `elr`, `leo`, `hw`, `offsets`, `loss`,
/// `lost`) look at the cluster after every event at or before `at`. Event checks
/// (`produce`, `error`, `caption`, `line`) look for a transcript line between `since`
/// (default 0) and `at`, both included.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Simulated time in ms.
    pub at: TimeMs,
    /// The run it checks, when the scenario compares runs (`compare`): 1 for `compare[0]`,
    /// 2 for `compare[1]`; absent for the scenario's own run (the top run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// For people: what the text this scenario illustrates says (shown when it fails).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// Start of the window the event checks search (ms, default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<TimeMs>,
    /// The partition the checks speak of (version 2): a topic of the scenario, default the
    /// first. With neither `topic` nor `partition` the state checks read the first topic's
    /// partition 0 and the event and loss checks look at every partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// The partition of `topic` (version 2), default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u32>,
    /// The whole `kafka-topics.sh --describe` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub describe: Option<String>,
    /// The partition's leader: a broker id, or `"none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<LeaderExpect>,
    /// The ISR, in any order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr: Option<Vec<BrokerId>>,
    /// The ELR (KIP-966), in any order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elr: Option<Vec<BrokerId>>,
    /// Whose `leo` and `hw` are meant; default: the current leader's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker: Option<BrokerId>,
    /// The replica's log end offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leo: Option<u64>,
    /// The replica's high watermark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw: Option<u64>,
    /// The `kafka-get-offsets.sh` read-out, e.g. `rep:0:18`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets: Option<String>,
    /// A produce result that begins with this text, e.g. `acks=all -> ok, offset=17`
    /// (matches `acks=all -> ok, offset=17 (waited 4929 ms)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produce: Option<String>,
    /// A produce result failing with this error, e.g. `NOT_ENOUGH_REPLICAS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether committed records have been lost (an unclean election, a lost disk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<bool>,
    /// A loss of exactly these offsets, first and last: `[10, 19]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<[u64; 2]>,
    /// A caption (a timeline `note`) that begins with this text has been reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// A transcript line that contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// The consumer's preferred read replica of the partition (KIP-392: the FetchResponse's
    /// `PreferredReadReplica`, which SubscriptionState keeps until it expires): a broker id,
    /// or `"none"` (it fetches from the leader). Version 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_read_replica: Option<LeaderExpect>,
    /// A read of the partition (a poll that returned records) between `since` and `at`
    /// answered by this broker: the leader, or a follower that was the consumer's preferred
    /// read replica. Version 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_from: Option<BrokerId>,
    /// The consumer's `client.rack`: a rack name, or `""` for none (ConsumerConfig's
    /// default). Version 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_rack: Option<String>,
    /// The brokers the controller has fenced (BrokerRegistration.fenced), in any order; `[]`
    /// for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fenced: Option<Vec<BrokerId>>,
    /// The zone (a rack of the scenario) `zone_state` speaks of. Version 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// What the zone actions left of `zone`: `lost` (none of its brokers' processes runs:
    /// `lose_zone`), `cut` (every link `cut_zone` cuts is cut) or `up` (every broker of it
    /// runs, none frozen, and none of those links is cut: `start_zone`, `heal_zone`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_state: Option<String>,
    /// The partitions `kafka-topics.sh --describe --under-replicated-partitions` lists (its
    /// ISR smaller than its replication factor): how many, or which. Of `topic`'s partitions
    /// when given (`--topic`), of `zone`'s (those with a replica on a broker of that rack)
    /// when given, else of the whole cluster. Version 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_replicated_partitions: Option<PartitionsExpect>,
    /// As `under_replicated_partitions`, for `--under-min-isr-partitions` (no leader, or an
    /// ISR smaller than the topic's `min.insync.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_min_isr_partitions: Option<PartitionsExpect>,
    /// As `under_replicated_partitions`, for `--at-min-isr-partitions` (an ISR exactly the
    /// topic's `min.insync.replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_min_isr_partitions: Option<PartitionsExpect>,
    /// As `under_replicated_partitions`, for `--unavailable-partitions` (no leader, or a
    /// leader that is not a live broker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_partitions: Option<PartitionsExpect>,
}

/// The words `zone_state` takes.
pub const ZONE_STATES: [&str; 3] = ["lost", "cut", "up"];

/// What a describe filter's expectation says it lists: how many partitions, or exactly
/// which (`topic-partition`s, in any order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PartitionsExpect {
    Count(u32),
    List(Vec<String>),
}

/// By hand rather than `untagged`, as [`LeaderExpect`]: a number or a list of names.
impl<'de> Deserialize<'de> for PartitionsExpect {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Partitions;
        impl<'de> serde::de::Visitor<'de> for Partitions {
            type Value = PartitionsExpect;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(PARTITIONS_EXPECTED)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PartitionsExpect, E> {
                u32::try_from(v)
                    .map(PartitionsExpect::Count)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<PartitionsExpect, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(PartitionsExpect::List(names))
            }
        }
        d.deserialize_any(Partitions)
    }
}

/// What a describe filter's expectation takes, for its errors.
pub const PARTITIONS_EXPECTED: &str = "a count of partitions or a list of topic-partitions";

impl Expectation {
    /// The describe filters' expectations, in `DESCRIBE_FILTERS` order.
    pub fn partition_filters(&self) -> [&Option<PartitionsExpect>; 4] {
        [
            &self.under_replicated_partitions,
            &self.under_min_isr_partitions,
            &self.at_min_isr_partitions,
            &self.unavailable_partitions,
        ]
    }
}

impl Expectation {
    /// The partition the expectation names, `(topic, partition)` with `first_topic` and 0 for
    /// what it leaves out; None when it names neither (the checks' defaults above).
    pub fn target<'a>(&'a self, first_topic: &'a str) -> Option<(&'a str, u32)> {
        (self.topic.is_some() || self.partition.is_some()).then(|| {
            (
                self.topic.as_deref().unwrap_or(first_topic),
                self.partition.unwrap_or(0),
            )
        })
    }
}

/// An expected leader: a broker, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum LeaderExpect {
    Broker(BrokerId),
    None(NoLeader),
}

/// By hand rather than `untagged`: a number or `"none"`, read without buffering the value
/// first (much less code in the wasm).
impl<'de> Deserialize<'de> for LeaderExpect {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Leader;
        impl serde::de::Visitor<'_> for Leader {
            type Value = LeaderExpect;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a broker id or \"none\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<LeaderExpect, E> {
                u32::try_from(v)
                    .map(LeaderExpect::Broker)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<LeaderExpect, E> {
                if v == "none" {
                    Ok(LeaderExpect::None(NoLeader::None))
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(Leader)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoLeader {
    #[serde(rename = "none")]
    None,
}

impl Expectation {
    /// Checks the expectation against the scenario: times inside the run, broker ids in
    /// range, at least one check, sizes within limits.
    pub fn validate(&self, field: &str, brokers: u32, end_ms: TimeMs) -> Result<(), ScenarioError> {
        let at_field = |name: &str| crate::error::member(field, name);
        let broker_ok =
            |b: BrokerId, name: &str| crate::error::check_broker(b, brokers, field, name);
        if self.at > end_ms {
            return Err(ScenarioError::new(
                at_field("at"),
                format!(
                    "at must be in 0..={end_ms} ms (the scenario's end_ms), got {}",
                    self.at
                ),
            ));
        }
        if let Some(since) = self.since {
            if since > self.at {
                return Err(ScenarioError::new(
                    at_field("since"),
                    format!("since must be in 0..={} (at most at), got {since}", self.at),
                ));
            }
        }
        if let Some(b) = self.broker {
            broker_ok(b, "broker")?;
            if self.leo.is_none() && self.hw.is_none() {
                return Err(ScenarioError::new(
                    at_field("broker"),
                    "broker names whose leo or hw is expected: give leo or hw with it",
                ));
            }
        }
        let filtered = self.partition_filters().iter().any(|f| f.is_some());
        match (&self.zone, &self.zone_state) {
            (Some(_), None) if !filtered => {
                return Err(ScenarioError::new(
                    at_field("zone"),
                    "zone names the rack whose zone_state or partitions are expected: give zone_state, under_replicated_partitions, under_min_isr_partitions, at_min_isr_partitions or unavailable_partitions with it",
                ))
            }
            (None, Some(_)) => {
                return Err(ScenarioError::new(
                    at_field("zone_state"),
                    "zone_state needs zone, the rack it speaks of",
                ))
            }
            (_, Some(state)) if !ZONE_STATES.contains(&state.as_str()) => {
                return Err(ScenarioError::new(
                    at_field("zone_state"),
                    format!(
                        "zone_state must be one of lost, cut, up, got {}",
                        crate::error::quoted(state)
                    ),
                ))
            }
            _ => {}
        }
        let checks = [
            self.describe.is_some(),
            self.leader.is_some(),
            self.isr.is_some(),
            self.elr.is_some(),
            self.leo.is_some(),
            self.hw.is_some(),
            self.offsets.is_some(),
            self.produce.is_some(),
            self.error.is_some(),
            self.loss.is_some(),
            self.lost.is_some(),
            self.caption.is_some(),
            self.line.is_some(),
            self.preferred_read_replica.is_some(),
            self.read_from.is_some(),
            self.client_rack.is_some(),
            self.fenced.is_some(),
            self.zone_state.is_some(),
            filtered,
        ];
        if !checks.contains(&true) {
            return Err(ScenarioError::new(
                field.to_string(),
                "an expectation needs at least one check: describe, leader, isr, elr, leo, hw, offsets, produce, error, loss, lost, caption, line, preferred_read_replica, read_from, client_rack, fenced, zone_state, under_replicated_partitions, under_min_isr_partitions, at_min_isr_partitions or unavailable_partitions",
            ));
        }
        for (b, name) in [
            (self.leader, "leader"),
            (self.preferred_read_replica, "preferred_read_replica"),
            (self.read_from.map(LeaderExpect::Broker), "read_from"),
        ] {
            if let Some(LeaderExpect::Broker(b)) = b {
                broker_ok(b, name)?;
            }
        }
        for (list, name) in [
            (&self.isr, "isr"),
            (&self.elr, "elr"),
            (&self.fenced, "fenced"),
        ] {
            for (i, &b) in list.iter().flatten().enumerate() {
                broker_ok(b, &crate::error::indexed(name, i))?;
                if list.iter().flatten().take(i).any(|&x| x == b) {
                    return Err(ScenarioError::new(
                        at_field(&crate::error::indexed(name, i)),
                        format!("broker {b} appears twice"),
                    ));
                }
            }
        }
        if let Some([first, last]) = self.lost {
            if first > last {
                return Err(ScenarioError::new(
                    at_field("lost"),
                    format!(
                        "lost is [first, last] offsets with first <= last, got [{first}, {last}]"
                    ),
                ));
            }
        }
        if let Some(code) = &self.error {
            if code.is_empty()
                || code.len() > MAX_ERROR_CODE_LEN
                || !code.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return Err(ScenarioError::new(
                    at_field("error"),
                    format!("error is a code of 1..={MAX_ERROR_CODE_LEN} ASCII letters, digits and '_', such as NOT_ENOUGH_REPLICAS"),
                ));
            }
        }
        let texts = [
            (Some(&self.label), "label"),
            (self.topic.as_ref(), "topic"),
            (self.describe.as_ref(), "describe"),
            (self.offsets.as_ref(), "offsets"),
            (self.produce.as_ref(), "produce"),
            (self.caption.as_ref(), "caption"),
            (self.line.as_ref(), "line"),
        ];
        for (text, name) in texts {
            let n = text.map_or(0, |t| t.chars().count());
            if n > MAX_TEXT_LEN {
                return Err(ScenarioError::new(
                    at_field(name),
                    format!("{name} may be at most {MAX_TEXT_LEN} characters, got {n}"),
                ));
            }
        }
        for (text, name) in [
            (&self.produce, "produce"),
            (&self.caption, "caption"),
            (&self.line, "line"),
        ] {
            if text.as_ref().is_some_and(|t| t.is_empty()) {
                return Err(ScenarioError::new(
                    at_field(name),
                    format!("{name} may not be empty (an empty text matches anything)"),
                ));
            }
        }
        Ok(())
    }
}
