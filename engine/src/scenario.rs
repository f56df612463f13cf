//! Scenario files: a versioned JSON format holding configs, brokers, the replica assignment,
//! the seed and a timeline of timed actions. Documented in `docs/scenario-format.md`.
//!
//! This module holds the scenario's types and their validation; `scenario_json.rs` reads
//! and writes their JSON (`Scenario::from_json`, `Scenario::to_json_pretty`).

use serde::{Deserialize, Serialize};

use crate::config::{Config, MAX_BROKERS};
use crate::error::{check_broker, indexed, member, ScenarioError, MAX_TEXT_LEN};
use crate::expect::{Expectation, MAX_EXPECTATIONS};
use crate::sort::stable_order;
use crate::types::{Acks, BrokerId};

/// The current scenario format version.
pub const FORMAT_VERSION: u32 = 1;
/// Limits enforced while validating, so no scenario can hang or exhaust the engine.
pub const MAX_TIMELINE_ACTIONS: usize = 10_000;
pub const MAX_VALUES_PER_PRODUCE: usize = 10_000;
pub const MAX_VALUE_LEN: usize = 64;
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
    #[serde(default = "default_topic")]
    pub topic: String,
    /// Number of brokers, ids 1..=brokers.
    #[serde(default = "default_brokers")]
    pub brokers: u32,
    /// The replica assignment (`--replica-assignment 1:2:3`); the first is the preferred
    /// leader. Empty means 1..=replication_factor.
    #[serde(default)]
    pub assignment: Vec<BrokerId>,
    /// Used when `assignment` is empty.
    #[serde(default)]
    pub replication_factor: Option<u32>,
    #[serde(default)]
    pub seed: u64,
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
            assignment: vec![],
            replication_factor: None,
            seed: 0,
            config: Config::default(),
            links: vec![],
            timeline: vec![],
            end_ms: None,
            expect: vec![],
            off_script_ms: None,
        }
    }
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
    /// `kafka-configs.sh --alter --add-config name=value`.
    SetConfig {
        name: String,
        value: crate::json::Value,
    },
    /// `kafka-leader-election.sh --election-type preferred`.
    ElectPreferred,
    /// `kafka-leader-election.sh --election-type unclean`.
    ElectUnclean,
    /// `kafka-topics.sh --describe`.
    Describe,
    /// `kafka-get-offsets.sh` (the HW).
    Offsets,
    /// Every broker's leader-epoch-checkpoint on one line.
    Epochs,
    /// Every broker's replication-offset-checkpoint.
    Checkpoints,
    /// `kafka-dump-log.sh --print-data-log` for one broker.
    DumpLog {
        broker: BrokerId,
    },
    /// A comment in the transcript.
    Note {
        text: String,
    },
    /// The application gives up on every send not yet done: `KafkaProducer.close(Duration.ZERO)`
    /// aborts the incomplete batches (each fails with `KafkaException`), and the next
    /// produce comes from a new producer (the next producer id).
    CancelProduce,
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
            &Action::Consume {
                max_records,
                from_beginning,
            } => Action::Consume {
                max_records,
                from_beginning,
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
            &Action::DumpLog { broker } => Action::DumpLog { broker },
            Action::ElectPreferred => Action::ElectPreferred,
            Action::ElectUnclean => Action::ElectUnclean,
            Action::Describe => Action::Describe,
            Action::Offsets => Action::Offsets,
            Action::Epochs => Action::Epochs,
            Action::Checkpoints => Action::Checkpoints,
            Action::CancelProduce => Action::CancelProduce,
        }
    }
}

/// ProduceSpec under the `produce` action (serde needs a named struct inside the tag).
pub type ProduceSpecAcks = ProduceSpec;

impl Action {
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
            }
            Action::Freeze { broker }
            | Action::Thaw { broker }
            | Action::Kill { broker }
            | Action::Stop { broker }
            | Action::Start { broker }
            | Action::LoseDisk { broker }
            | Action::DumpLog { broker } => broker_ok(*broker, "broker")?,
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
            Action::ElectPreferred
            | Action::ElectUnclean
            | Action::Describe
            | Action::Offsets
            | Action::Epochs
            | Action::Checkpoints
            | Action::CancelProduce => {}
        }
        Ok(())
    }
}

impl Scenario {
    /// The replica list: `assignment`, or 1..=replication_factor (default: all brokers).
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

    pub fn end_ms(&self) -> u64 {
        self.end_ms
            .unwrap_or_else(|| self.timeline.iter().map(|a| a.at).max().unwrap_or(0) + 5_000)
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.version != FORMAT_VERSION {
            return Err(ScenarioError::new(
                "version",
                format!(
                    "this build reads scenario format version {FORMAT_VERSION}, got {}",
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
        if self.topic.is_empty()
            || self.topic.len() > MAX_TOPIC_LEN
            || !self
                .topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
        {
            return Err(ScenarioError::new(
                "topic",
                format!("a topic name is 1..={MAX_TOPIC_LEN} characters of ASCII letters, digits, '.', '_' and '-'"),
            ));
        }
        if let Some(rf) = self.replication_factor {
            if rf == 0 || rf > self.brokers {
                return Err(ScenarioError::new(
                    "replication_factor",
                    format!(
                        "replication_factor must be in 1..={} (the broker count), got {rf}",
                        self.brokers
                    ),
                ));
            }
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
            if let Action::Produce(p) = &a.action {
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
            e.validate(&indexed("expect", i), self.brokers, end)?;
        }
        Ok(())
    }
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
        let e = Scenario::from_json(r#"{"brokers":12}"#).unwrap_err();
        assert_eq!(e.field, "brokers");
        assert!(e.message.contains("1..=9"));
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
        assert_eq!(
            Scenario::from_json(r#"{"version":2}"#).unwrap_err().field,
            "version"
        );
    }
}
