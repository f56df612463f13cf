//! A scenario's JSON by hand: `Scenario::from_json` (JSON text parsed into a `json::Value`,
//! read from it, then validated) and `Scenario::to_json_pretty` and [`scenario`] (written
//! with `json`'s writer). `scenario.rs` holds the scenario's types and their validation.
//!
//! `Scenario::from_json` reads through here instead of serde's derived `Deserialize`: the
//! derived code for the timeline (an internally tagged `Action` flattened into
//! `TimedAction`, and the untagged `Endpoint`) buffers every value into serde's `Content`
//! and is monomorphized for each deserializer in play; in the shipped wasm the `Action`
//! deserializer alone was 32 kB. This reader walks one `Value` tree with plain functions.
//!
//! It accepts exactly what the derived `Deserialize` accepts and gives the same scenario
//! (`tests/scenario_json.rs` checks both readers against each other on the presets, the
//! saved links and mutated JSON), but for one thing: a version-2 scenario that has version
//! 1's `topic`, `assignment` or `replication_factor` at all is refused here, where the
//! derive cannot tell them at their defaults from absent. Its messages are serde's,
//! prefixed by the path of the field at fault. The derives stay for Rust callers (and as
//! the reference).
//!
//! [`scenario`] (and `Scenario::to_json_pretty`) writes a scenario as
//! `serde_json::to_string` (compact) or `to_string_pretty` would with the derived
//! `Serialize`: the same fields in the same order, so share links keep their bytes
//! (`tests/json.rs` checks it against serde_json). A version-2 scenario leaves out version
//! 1's topic fields, which the derive writes whatever the version.

use crate::config::{Config, Slot};
use crate::error::{indexed, quoted, ScenarioError};
use crate::expect::{Expectation, LeaderExpect, NoLeader, PartitionsExpect};
use crate::json::{Map, Number, Value, Writer};
use crate::scenario::{
    version_1_field, AcksOrDefault, Action, ControllerName, DescribeSpec, Endpoint, LinkLatency,
    NewTopic, PartitionReassignment, ProduceSpec, Reassignment, Scenario, TimedAction,
    TopicConfigs, Variant,
};
use crate::types::Acks;
use crate::vec_map::VecMap;

type Obj = Map;
type R<T> = Result<T, ScenarioError>;

impl Scenario {
    /// Parses and validates a scenario from JSON.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        if text.len() > 4 * 1024 * 1024 {
            return Err(ScenarioError::new(
                "scenario",
                "a scenario may be at most 4 MiB of JSON",
            ));
        }
        // Parsed into a `Value` (`json::parse`, as serde_json would), then read by hand
        // (`scenario_json`): serde's derived reader for the timeline was the largest
        // function in the shipped wasm.
        let v = crate::json::parse(text)
            .map_err(|e| ScenarioError::new("scenario", format!("not a valid scenario: {e}")))?;
        let s = read_scenario(&v)?;
        s.validate()?;
        Ok(s)
    }

    pub fn to_json_pretty(&self) -> String {
        scenario(self, true)
    }
}

// The small helpers below that are marked `#[inline(never)]` are called from dozens of
// field reads; inlined, each call carried its own copy of a map lookup or of the path's
// formatting, and `Scenario::from_json` was 18 kB of the shipped wasm.

/// The member `name` of `obj`.
#[inline(never)]
fn get<'a>(obj: &'a Obj, name: &str) -> Option<&'a Value> {
    obj.get(name)
}

#[inline(never)]
fn at(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[inline(never)]
fn fail(path: &str, message: String) -> ScenarioError {
    ScenarioError::new(if path.is_empty() { "scenario" } else { path }, message)
}

/// How serde names a value it did not expect (`serde::de::Unexpected`).
fn unexpected(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n @ Number::Float(_)) => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {}", quoted(s)),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

#[inline(never)]
fn invalid_type(path: &str, v: &Value, expected: &str) -> ScenarioError {
    fail(
        path,
        format!("invalid type: {}, expected {expected}", unexpected(v)),
    )
}

fn one_of(names: &[&str]) -> String {
    match names {
        [] => "there are no fields".into(),
        [one] => format!("expected `{one}`"),
        _ => {
            // Written in place, not a `String` per name collected and joined.
            let mut out = String::from("expected one of ");
            for (i, n) in names.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('`');
                out.push_str(n);
                out.push('`');
            }
            out
        }
    }
}

#[inline(never)]
fn object<'a>(path: &str, v: &'a Value, what: &str) -> R<&'a Obj> {
    match v {
        Value::Object(obj) => Ok(obj),
        _ => Err(invalid_type(path, v, what)),
    }
}

/// Rejects a key that is not in `fields` (serde's `deny_unknown_fields`).
fn known_fields(path: &str, obj: &Obj, fields: &[&str]) -> R<()> {
    match obj.keys().find(|k| !fields.contains(&k.as_str())) {
        Some(k) => Err(fail(
            path,
            format!("unknown field `{k}`, {}", one_of(fields)),
        )),
        None => Ok(()),
    }
}

#[inline(never)]
fn required<'a>(path: &str, obj: &'a Obj, name: &str) -> R<&'a Value> {
    get(obj, name).ok_or_else(|| fail(path, format!("missing field `{name}`")))
}

fn u64_of(path: &str, v: &Value) -> R<u64> {
    match v {
        Value::Number(Number::PosInt(n)) => Ok(*n),
        Value::Number(Number::NegInt(i)) => Err(fail(
            path,
            format!("invalid value: integer `{i}`, expected u64"),
        )),
        _ => Err(invalid_type(path, v, "u64")),
    }
}

fn u32_of(path: &str, v: &Value) -> R<u32> {
    match v {
        Value::Number(n @ (Number::PosInt(_) | Number::NegInt(_))) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| fail(path, format!("invalid value: integer `{n}`, expected u32"))),
        _ => Err(invalid_type(path, v, "u32")),
    }
}

#[inline(never)]
fn bool_of(path: &str, v: &Value) -> R<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(invalid_type(path, v, "a boolean")),
    }
}

#[inline(never)]
fn string_of(path: &str, v: &Value) -> R<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| invalid_type(path, v, "a string"))
}

fn list_of<T>(path: &str, v: &Value, item: impl Fn(&str, &Value) -> R<T>) -> R<Vec<T>> {
    let Value::Array(items) = v else {
        return Err(invalid_type(path, v, "a sequence"));
    };
    // A loop, not `collect::<Result<Vec<_>, _>>()`: that brings a `GenericShunt` iterator
    // for each item type into the wasm, with the item's reader inlined into it.
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        out.push(item(&indexed(path, i), x)?);
    }
    Ok(out)
}

// Structs are read by setting the fields of a default value one at a time, not by a
// struct literal of `field: read(..)?` expressions: after each `?` in a literal, the
// fields read so far are dropped one by one, and that cleanup code, repeated for every
// field, was most of `Scenario::from_json` in the wasm.

/// Reads the member `name`, which must be there.
fn req<T>(path: &str, obj: &Obj, name: &str, read: fn(&str, &Value) -> R<T>) -> R<T> {
    read(&at(path, name), required(path, obj, name)?)
}

/// A struct's field that a member is read into, and how: the structs list their fields as
/// data for one reader ([`read_fields`]), instead of a generic reader per field, which
/// inlined (about 300 bytes each) made `Scenario::from_json` 15 kB of the wasm.
enum Field<'a> {
    U32(&'a mut u32),
    U64(&'a mut u64),
    Bool(&'a mut bool),
    Str(&'a mut String),
    Strs(&'a mut Vec<String>),
    Ids(&'a mut Vec<u32>),
    Acks(&'a mut AcksOrDefault),
    Config(&'a mut Config),
    Protocol(&'a mut crate::protocol::Protocol),
    Links(&'a mut Vec<LinkLatency>),
    Timeline(&'a mut Vec<TimedAction>),
    Expect(&'a mut Vec<Expectation>),
    Compare(&'a mut Vec<Variant>),
    Racks(&'a mut VecMap<u32, String>),
    Topics(&'a mut Vec<NewTopic>),
    TopicConfigs(&'a mut TopicConfigs),
    // Absent or `null`: `None`.
    OptU32(&'a mut Option<u32>),
    OptU64(&'a mut Option<u64>),
    OptBool(&'a mut Option<bool>),
    OptStr(&'a mut Option<String>),
    OptIds(&'a mut Option<Vec<u32>>),
    OptIdLists(&'a mut Option<Vec<Vec<u32>>>),
    OptLeader(&'a mut Option<LeaderExpect>),
    OptLost(&'a mut Option<[u64; 2]>),
    OptPartitions(&'a mut Option<PartitionsExpect>),
}

/// Reads each member that is present into its field, in the order given (which decides
/// which error is reported first); absent members leave their field's default.
#[inline(never)]
fn read_fields(path: &str, obj: &Obj, fields: &mut [(&str, Field)]) -> R<()> {
    for (name, field) in fields {
        let Some(v) = get(obj, name) else {
            continue;
        };
        if matches!(v, Value::Null)
            && matches!(
                field,
                Field::OptU32(_)
                    | Field::OptU64(_)
                    | Field::OptBool(_)
                    | Field::OptStr(_)
                    | Field::OptIds(_)
                    | Field::OptIdLists(_)
                    | Field::OptLeader(_)
                    | Field::OptLost(_)
                    | Field::OptPartitions(_)
            )
        {
            continue;
        }
        let p = &at(path, name);
        match field {
            Field::U32(x) => **x = u32_of(p, v)?,
            Field::U64(x) => **x = u64_of(p, v)?,
            Field::Bool(x) => **x = bool_of(p, v)?,
            Field::Str(x) => **x = string_of(p, v)?,
            Field::Strs(x) => **x = list_of(p, v, string_of)?,
            Field::Ids(x) => **x = list_of(p, v, u32_of)?,
            Field::Acks(x) => **x = acks(p, v)?,
            Field::Config(x) => **x = config(p, v)?,
            Field::Protocol(x) => **x = crate::protocol::Protocol::parse(p, &string_of(p, v)?)?,
            Field::Links(x) => **x = list_of(p, v, link)?,
            Field::Timeline(x) => **x = list_of(p, v, timed_action)?,
            Field::Expect(x) => **x = list_of(p, v, expectation)?,
            Field::Compare(x) => **x = list_of(p, v, compare_variant)?,
            Field::Racks(x) => **x = racks(p, v)?,
            Field::Topics(x) => **x = list_of(p, v, new_topic)?,
            Field::TopicConfigs(x) => **x = topic_configs(p, v)?,
            Field::OptU32(x) => **x = Some(u32_of(p, v)?),
            Field::OptU64(x) => **x = Some(u64_of(p, v)?),
            Field::OptBool(x) => **x = Some(bool_of(p, v)?),
            Field::OptStr(x) => **x = Some(string_of(p, v)?),
            Field::OptIds(x) => **x = Some(list_of(p, v, u32_of)?),
            Field::OptIdLists(x) => **x = Some(list_of(p, v, |p, v| list_of(p, v, u32_of))?),
            Field::OptLeader(x) => **x = Some(leader(p, v)?),
            Field::OptLost(x) => **x = Some(offset_pair(p, v)?),
            Field::OptPartitions(x) => **x = Some(partitions(p, v)?),
        }
    }
    Ok(())
}

const SCENARIO_FIELDS: &[&str] = &[
    "version",
    "title",
    "description",
    "source",
    "topic",
    "brokers",
    "racks",
    "client_rack",
    "assignment",
    "replication_factor",
    "topics",
    "record_size_bytes",
    "seed",
    "protocol",
    "config",
    "links",
    "timeline",
    "end_ms",
    "compare",
    "expect",
    "off_script_ms",
];

/// Reads a scenario (not yet validated: `Scenario::validate` checks ranges and limits).
fn read_scenario(v: &Value) -> R<Scenario> {
    let obj = object("", v, "struct Scenario")?;
    known_fields("", obj, SCENARIO_FIELDS)?;
    let mut s = Scenario::default();
    read_fields(
        "",
        obj,
        &mut [
            ("version", Field::U32(&mut s.version)),
            ("title", Field::Str(&mut s.title)),
            ("description", Field::Str(&mut s.description)),
            ("source", Field::Str(&mut s.source)),
            ("topic", Field::Str(&mut s.topic)),
            ("brokers", Field::U32(&mut s.brokers)),
            ("racks", Field::Racks(&mut s.racks)),
            ("client_rack", Field::OptStr(&mut s.client_rack)),
            ("assignment", Field::Ids(&mut s.assignment)),
            (
                "replication_factor",
                Field::OptU32(&mut s.replication_factor),
            ),
            ("topics", Field::Topics(&mut s.topics)),
            ("record_size_bytes", Field::OptU32(&mut s.record_size_bytes)),
            ("seed", Field::U64(&mut s.seed)),
            ("protocol", Field::Protocol(&mut s.protocol)),
            ("config", Field::Config(&mut s.config)),
            ("links", Field::Links(&mut s.links)),
            ("timeline", Field::Timeline(&mut s.timeline)),
            ("end_ms", Field::OptU64(&mut s.end_ms)),
            ("compare", Field::Compare(&mut s.compare)),
            ("expect", Field::Expect(&mut s.expect)),
            ("off_script_ms", Field::OptU64(&mut s.off_script_ms)),
        ],
    )?;
    // Version 2 names its topics under `topics`: version 1's topic fields are refused there
    // when present at all (`Scenario::validate` refuses them when not at their defaults).
    if s.version == 2 {
        for name in ["topic", "assignment", "replication_factor"] {
            if get(obj, name).is_some() {
                return Err(version_1_field(name));
            }
        }
    }
    Ok(s)
}

/// `racks`: broker ids (as serde_json reads a `u32` map key: decimal digits, no leading
/// zero) to rack names.
fn racks(path: &str, v: &Value) -> R<VecMap<u32, String>> {
    let obj = object(path, v, "a map")?;
    let mut out = VecMap::new();
    for (key, v) in obj.iter() {
        let p = at(path, key);
        let digits = key.bytes().all(|b| b.is_ascii_digit());
        let id = (digits && (key == "0" || !key.starts_with('0')))
            .then(|| key.parse::<u32>().ok())
            .flatten()
            .ok_or_else(|| {
                fail(
                    &p,
                    format!(
                        "a key of racks is a broker id, such as \"1\", got {}",
                        quoted(key)
                    ),
                )
            })?;
        out.insert(id, string_of(&p, v)?);
    }
    Ok(out)
}

const TOPIC_FIELDS: &[&str] = &[
    "name",
    "partitions",
    "replication_factor",
    "assignment",
    "configs",
];

/// One entry of `topics`.
fn new_topic(path: &str, v: &Value) -> R<NewTopic> {
    let obj = object(path, v, "struct NewTopic")?;
    known_fields(path, obj, TOPIC_FIELDS)?;
    let mut t = NewTopic {
        name: req(path, obj, "name", string_of)?,
        ..NewTopic::default()
    };
    read_fields(
        path,
        obj,
        &mut [
            ("partitions", Field::OptU32(&mut t.partitions)),
            (
                "replication_factor",
                Field::OptU32(&mut t.replication_factor),
            ),
            ("assignment", Field::OptIdLists(&mut t.assignment)),
            ("configs", Field::TopicConfigs(&mut t.configs)),
        ],
    )?;
    Ok(t)
}

/// The topic configs a scenario may set, as `TopicConfigs` serializes them.
pub(crate) const TOPIC_CONFIG_FIELDS: &[&str] = &[
    "min.insync.replicas",
    "unclean.leader.election.enable",
    "flush.messages",
    "flush.ms",
];

impl TopicConfigs {
    /// A topic's configs from a JSON object, read as `topics[].configs` is and each value
    /// checked against its range; an error names `path` or the config below it (the
    /// playground's choices of a topic's own configs are read so).
    pub fn from_json(path: &str, v: &Value) -> Result<TopicConfigs, ScenarioError> {
        let c = topic_configs(path, v)?;
        c.validate(path)?;
        Ok(c)
    }
}

fn topic_configs(path: &str, v: &Value) -> R<TopicConfigs> {
    let obj = object(path, v, "struct TopicConfigs")?;
    known_fields(path, obj, TOPIC_CONFIG_FIELDS)?;
    let mut c = TopicConfigs::default();
    read_fields(
        path,
        obj,
        &mut [
            (
                "min.insync.replicas",
                Field::OptU32(&mut c.min_insync_replicas),
            ),
            (
                "unclean.leader.election.enable",
                Field::OptBool(&mut c.unclean_leader_election_enable),
            ),
            ("flush.messages", Field::OptU64(&mut c.flush_messages)),
            ("flush.ms", Field::OptU64(&mut c.flush_ms)),
        ],
    )?;
    Ok(c)
}

const EXPECTATION_FIELDS: &[&str] = &[
    "at",
    "run",
    "label",
    "since",
    "topic",
    "partition",
    "describe",
    "leader",
    "isr",
    "elr",
    "broker",
    "leo",
    "hw",
    "offsets",
    "produce",
    "error",
    "loss",
    "lost",
    "caption",
    "line",
    "preferred_read_replica",
    "read_from",
    "client_rack",
    "fenced",
    "zone",
    "zone_state",
    "under_replicated_partitions",
    "under_min_isr_partitions",
    "at_min_isr_partitions",
    "unavailable_partitions",
];

/// `lost`: two offsets.
fn offset_pair(p: &str, v: &Value) -> R<[u64; 2]> {
    let Value::Array(items) = v else {
        return Err(invalid_type(p, v, "an array of length 2"));
    };
    match items.as_slice() {
        [a, b] => Ok([u64_of(&indexed(p, 0), a)?, u64_of(&indexed(p, 1), b)?]),
        _ => Err(fail(
            p,
            format!(
                "invalid length {}, expected an array of length 2",
                items.len()
            ),
        )),
    }
}

/// One entry of `expect` (`crate::expect::Expectation`).
fn expectation(path: &str, v: &Value) -> R<Expectation> {
    let obj = object(path, v, "struct Expectation")?;
    known_fields(path, obj, EXPECTATION_FIELDS)?;
    let mut e = Expectation {
        at: req(path, obj, "at", u64_of)?,
        ..Expectation::default()
    };
    read_fields(
        path,
        obj,
        &mut [
            ("run", Field::OptU32(&mut e.run)),
            ("label", Field::Str(&mut e.label)),
            ("since", Field::OptU64(&mut e.since)),
            ("topic", Field::OptStr(&mut e.topic)),
            ("partition", Field::OptU32(&mut e.partition)),
            ("describe", Field::OptStr(&mut e.describe)),
            ("leader", Field::OptLeader(&mut e.leader)),
            ("isr", Field::OptIds(&mut e.isr)),
            ("elr", Field::OptIds(&mut e.elr)),
            ("broker", Field::OptU32(&mut e.broker)),
            ("leo", Field::OptU64(&mut e.leo)),
            ("hw", Field::OptU64(&mut e.hw)),
            ("offsets", Field::OptStr(&mut e.offsets)),
            ("produce", Field::OptStr(&mut e.produce)),
            ("error", Field::OptStr(&mut e.error)),
            ("loss", Field::OptBool(&mut e.loss)),
            ("lost", Field::OptLost(&mut e.lost)),
            ("caption", Field::OptStr(&mut e.caption)),
            ("line", Field::OptStr(&mut e.line)),
            (
                "preferred_read_replica",
                Field::OptLeader(&mut e.preferred_read_replica),
            ),
            ("read_from", Field::OptU32(&mut e.read_from)),
            ("client_rack", Field::OptStr(&mut e.client_rack)),
            ("fenced", Field::OptIds(&mut e.fenced)),
            ("zone", Field::OptStr(&mut e.zone)),
            ("zone_state", Field::OptStr(&mut e.zone_state)),
            (
                "under_replicated_partitions",
                Field::OptPartitions(&mut e.under_replicated_partitions),
            ),
            (
                "under_min_isr_partitions",
                Field::OptPartitions(&mut e.under_min_isr_partitions),
            ),
            (
                "at_min_isr_partitions",
                Field::OptPartitions(&mut e.at_min_isr_partitions),
            ),
            (
                "unavailable_partitions",
                Field::OptPartitions(&mut e.unavailable_partitions),
            ),
        ],
    )?;
    Ok(e)
}

/// A describe filter's expectation: a count, or a list of `topic-partition`s.
fn partitions(path: &str, v: &Value) -> R<PartitionsExpect> {
    match v {
        Value::Number(Number::PosInt(n)) => {
            u32::try_from(*n).map(PartitionsExpect::Count).map_err(|_| {
                fail(
                    path,
                    format!(
                        "invalid value: integer `{n}`, expected {}",
                        crate::expect::PARTITIONS_EXPECTED
                    ),
                )
            })
        }
        Value::Array(_) => list_of(path, v, string_of).map(PartitionsExpect::List),
        _ => Err(invalid_type(path, v, crate::expect::PARTITIONS_EXPECTED)),
    }
}

/// `leader`: a broker id, or `"none"`.
fn leader(path: &str, v: &Value) -> R<LeaderExpect> {
    match v {
        Value::String(s) if s == "none" => Ok(LeaderExpect::None(NoLeader::None)),
        Value::Number(_) => u32_of(path, v).map(LeaderExpect::Broker),
        _ => Err(fail(
            path,
            format!(
                "invalid value: {}, expected a broker id or \"none\"",
                unexpected(v)
            ),
        )),
    }
}

/// Every config name a scenario may set, as `Config` serializes them.
pub(crate) const CONFIG_FIELDS: &[&str] = &[
    "min.insync.replicas",
    "unclean.leader.election.enable",
    "eligible.leader.replicas.version",
    "replica.lag.time.max.ms",
    "replica.fetch.wait.max.ms",
    "replica.fetch.backoff.ms",
    "num.replica.fetchers",
    "replica.fetch.max.bytes",
    "replica.fetch.response.max.bytes",
    "replica.socket.timeout.ms",
    "controller.socket.timeout.ms",
    "replica.high.watermark.checkpoint.interval.ms",
    "broker.heartbeat.interval.ms",
    "broker.session.timeout.ms",
    "request.timeout.ms",
    "delivery.timeout.ms",
    "retries",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "batch.size",
    "partitioner.ignore.keys",
    "partitioner.adaptive.partitioning.enable",
    "max.partition.fetch.bytes",
    "fetch.max.bytes",
    "sim.network.latency.ms",
    "sim.controller.latency.ms",
    "sim.network.jitter.ms",
    "sim.unclean.election.interval.ms",
    "replica.selector.class",
    "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds",
    "sim.writeback.delay.ms",
    "log.flush.interval.messages",
    "log.flush.interval.ms",
    "log.flush.scheduler.interval.ms",
];

fn config(path: &str, v: &Value) -> R<Config> {
    let obj = object(path, v, "struct Config")?;
    let mut c = Config::default();
    for (name, v) in obj.iter() {
        let p = at(path, name);
        match c.slot(name) {
            Some(Slot::U32(n)) => *n = u32_of(&p, v)?,
            Some(Slot::U64(n)) => *n = u64_of(&p, v)?,
            Some(Slot::Bool(b)) => *b = bool_of(&p, v)?,
            // `null` is "not set", as serde reads an `Option`.
            Some(Slot::OptBool(b)) => {
                *b = match v {
                    Value::Null => None,
                    v => Some(bool_of(&p, v)?),
                }
            }
            Some(Slot::Selector(on)) => {
                *on = crate::config::selector_class_of(match v {
                    Value::Null => None,
                    v => Some(v.as_str().ok_or_else(|| invalid_type(&p, v, "a string"))?),
                })
                .map_err(|m| fail(&p, m))?
            }
            None => {
                return Err(fail(
                    path,
                    format!("unknown field `{name}`, {}", one_of(CONFIG_FIELDS)),
                ))
            }
        }
    }
    Ok(c)
}

const VARIANT_FIELDS: &[&str] = &["label", "protocol", "config", "topics", "acks"];

/// One entry of `compare` (`scenario::Variant`). Its `config` is kept as written (a map of
/// names to values); `Scenario::validate` sets each as `set_config` does, with its path.
fn compare_variant(path: &str, v: &Value) -> R<Variant> {
    let obj = object(path, v, "struct Variant")?;
    known_fields(path, obj, VARIANT_FIELDS)?;
    let mut out = Variant::default();
    read_fields(path, obj, &mut [("label", Field::Str(&mut out.label))])?;
    if let Some(p) = get(obj, "protocol").filter(|p| !matches!(p, Value::Null)) {
        let field = at(path, "protocol");
        out.protocol = Some(crate::protocol::Protocol::parse(
            &field,
            &string_of(&field, p)?,
        )?);
    }
    if let Some(c) = get(obj, "config") {
        out.config = object(&at(path, "config"), c, "a map")?.clone();
    }
    // Each topic's configs as `topics[].configs` reads them; which topics the scenario has
    // is `Scenario::validate`'s to check.
    if let Some(t) = get(obj, "topics") {
        let path = at(path, "topics");
        for (name, c) in object(&path, t, "a map")?.iter() {
            out.topics
                .insert(name.clone(), topic_configs(&at(&path, name), c)?);
        }
    }
    if let Some(a) = get(obj, "acks").filter(|a| !matches!(a, Value::Null)) {
        out.acks = Some(acks(&at(path, "acks"), a)?.0);
    }
    Ok(out)
}

fn endpoint(path: &str, v: &Value) -> R<Endpoint> {
    if let Some(id) = v.as_u64().and_then(|n| u32::try_from(n).ok()) {
        return Ok(Endpoint::Broker(id));
    }
    if v.as_str() == Some("controller") {
        return Ok(Endpoint::Controller(ControllerName::Controller));
    }
    Err(fail(
        path,
        "data did not match any variant of untagged enum Endpoint".into(),
    ))
}

fn link(path: &str, v: &Value) -> R<LinkLatency> {
    let obj = object(path, v, "struct LinkLatency")?;
    known_fields(path, obj, &["a", "b", "latency_ms"])?;
    Ok(LinkLatency {
        a: req(path, obj, "a", endpoint)?,
        b: req(path, obj, "b", endpoint)?,
        latency_ms: req(path, obj, "latency_ms", u64_of)?,
    })
}

/// Every action's name, as the timeline writes it.
pub(crate) const ACTIONS: &[&str] = &[
    "produce",
    "consume",
    "freeze",
    "thaw",
    "kill",
    "stop",
    "start",
    "slow",
    "cut",
    "heal",
    "lose_disk",
    "power_loss",
    "set_config",
    "elect_preferred",
    "elect_unclean",
    "describe",
    "offsets",
    "epochs",
    "checkpoints",
    "fetcher_threads",
    "dump_log",
    "note",
    "cancel_produce",
    "metrics",
    "lose_zone",
    "start_zone",
    "cut_zone",
    "heal_zone",
    "reassign_execute",
    "reassign_verify",
    "reassign_cancel",
];

const PRODUCE_FIELDS: &[&str] = &[
    "acks",
    "values",
    "prefix",
    "count",
    "start",
    "one_by_one",
    "retries",
    "to",
    "topic",
    "partition",
    "key",
    "size",
];

/// A variant's name; serde also takes its index in declaration order (`"action": 1`) for
/// the action's tag (not for `acks`, which it reads from its buffered `Content`).
fn variant<'a>(path: &str, v: &'a Value, names: &[&'a str]) -> R<&'a str> {
    match v {
        Value::String(s) => Ok(s),
        Value::Number(Number::PosInt(n)) => usize::try_from(*n)
            .ok()
            .and_then(|i| names.get(i).copied())
            .ok_or_else(|| {
                fail(
                    path,
                    format!(
                        "invalid value: integer `{n}`, expected variant index 0 <= i < {}",
                        names.len()
                    ),
                )
            }),
        _ => Err(invalid_type(path, v, "variant identifier")),
    }
}

fn acks(path: &str, v: &Value) -> R<AcksOrDefault> {
    let s = v
        .as_str()
        .ok_or_else(|| invalid_type(path, v, "string or map"))?;
    Ok(AcksOrDefault(match s {
        "0" => Acks::Zero,
        "1" => Acks::One,
        "all" | "-1" => Acks::All,
        other => {
            return Err(fail(
                path,
                format!("unknown variant `{other}`, expected one of `0`, `1`, `all`, `-1`"),
            ))
        }
    }))
}

fn timed_action(path: &str, v: &Value) -> R<TimedAction> {
    let obj = object(path, v, "a map")?;
    let at_ms = req(path, obj, "at", u64_of)?;
    let tag = required(path, obj, "action")?;
    let tag_path = at(path, "action");
    let name = variant(&tag_path, tag, ACTIONS)?;
    // The action's own fields: all but `at` and the tag.
    let fields = |allowed: &[&str]| -> R<()> {
        match obj
            .keys()
            .find(|k| *k != "at" && *k != "action" && !allowed.contains(&k.as_str()))
        {
            Some(k) => Err(fail(
                path,
                format!("unknown field `{k}`, {}", one_of(allowed)),
            )),
            None => Ok(()),
        }
    };
    let broker = || -> R<u32> {
        fields(&["broker"])?;
        req(path, obj, "broker", u32_of)
    };
    let zone = || -> R<String> {
        fields(&["zone"])?;
        req(path, obj, "zone", string_of)
    };
    // A read-out's `topic` and `partition` (version 2), each optional.
    let target = || -> R<(Option<String>, Option<u32>)> {
        let (mut topic, mut partition) = (None, None);
        read_fields(
            path,
            obj,
            &mut [
                ("topic", Field::OptStr(&mut topic)),
                ("partition", Field::OptU32(&mut partition)),
            ],
        )?;
        Ok((topic, partition))
    };
    let ends = || -> R<(Endpoint, Endpoint)> {
        fields(&["a", "b"])?;
        Ok((
            req(path, obj, "a", endpoint)?,
            req(path, obj, "b", endpoint)?,
        ))
    };
    let action = match name {
        "produce" => {
            fields(PRODUCE_FIELDS)?;
            let mut p = ProduceSpec::default();
            read_fields(
                path,
                obj,
                &mut [
                    ("acks", Field::Acks(&mut p.acks)),
                    ("values", Field::Strs(&mut p.values)),
                    ("prefix", Field::OptStr(&mut p.prefix)),
                    ("count", Field::OptU32(&mut p.count)),
                    ("start", Field::OptU32(&mut p.start)),
                    ("one_by_one", Field::Bool(&mut p.one_by_one)),
                    ("retries", Field::OptU32(&mut p.retries)),
                    ("to", Field::OptU32(&mut p.to)),
                    ("topic", Field::OptStr(&mut p.topic)),
                    ("partition", Field::OptU32(&mut p.partition)),
                    ("key", Field::OptStr(&mut p.key)),
                    ("size", Field::OptU32(&mut p.size)),
                ],
            )?;
            Action::Produce(p)
        }
        "consume" => {
            fields(&["max_records", "from_beginning", "topic", "partition"])?;
            let (mut max_records, mut from_beginning) = (None, false);
            let (mut topic, mut partition) = (None, None);
            read_fields(
                path,
                obj,
                &mut [
                    ("max_records", Field::OptU32(&mut max_records)),
                    ("from_beginning", Field::Bool(&mut from_beginning)),
                    ("topic", Field::OptStr(&mut topic)),
                    ("partition", Field::OptU32(&mut partition)),
                ],
            )?;
            Action::Consume {
                max_records,
                from_beginning,
                topic,
                partition,
            }
        }
        "freeze" => Action::Freeze { broker: broker()? },
        "thaw" => Action::Thaw { broker: broker()? },
        "kill" => Action::Kill { broker: broker()? },
        "stop" => Action::Stop { broker: broker()? },
        "start" => Action::Start { broker: broker()? },
        "lose_disk" => Action::LoseDisk { broker: broker()? },
        "power_loss" => Action::PowerLoss { broker: broker()? },
        "dump_log" => {
            fields(&["broker", "topic", "partition"])?;
            let (topic, partition) = target()?;
            Action::DumpLog {
                broker: req(path, obj, "broker", u32_of)?,
                topic,
                partition,
            }
        }
        "slow" => {
            fields(&["broker", "ms"])?;
            Action::Slow {
                broker: req(path, obj, "broker", u32_of)?,
                ms: req(path, obj, "ms", u64_of)?,
            }
        }
        "cut" => {
            let (a, b) = ends()?;
            Action::Cut { a, b }
        }
        "heal" => {
            let (a, b) = ends()?;
            Action::Heal { a, b }
        }
        "set_config" => {
            fields(&["name", "value"])?;
            Action::SetConfig {
                name: req(path, obj, "name", string_of)?,
                value: required(path, obj, "value")?.clone(),
            }
        }
        "note" => {
            fields(&["text"])?;
            Action::Note {
                text: req(path, obj, "text", string_of)?,
            }
        }
        // Unit variants ignore other fields, as serde's internally tagged unit variants do.
        "elect_preferred" => Action::ElectPreferred,
        "elect_unclean" => Action::ElectUnclean,
        "describe" => {
            let mut d = DescribeSpec::default();
            let [a, b, c, e] = crate::scenario::DESCRIBE_FILTERS;
            fields(&["topic", a, b, c, e])?;
            read_fields(
                path,
                obj,
                &mut [
                    ("topic", Field::OptStr(&mut d.topic)),
                    (a, Field::Bool(&mut d.under_replicated_partitions)),
                    (b, Field::Bool(&mut d.under_min_isr_partitions)),
                    (c, Field::Bool(&mut d.at_min_isr_partitions)),
                    (e, Field::Bool(&mut d.unavailable_partitions)),
                ],
            )?;
            Action::Describe(d)
        }
        "metrics" => {
            fields(&["name"])?;
            let mut name = None;
            read_fields(path, obj, &mut [("name", Field::OptStr(&mut name))])?;
            Action::Metrics { name }
        }
        "offsets" => Action::Offsets,
        "epochs" => {
            fields(&["topic", "partition"])?;
            let (topic, partition) = target()?;
            Action::Epochs { topic, partition }
        }
        "checkpoints" => Action::Checkpoints,
        "fetcher_threads" => Action::FetcherThreads,
        "cancel_produce" => Action::CancelProduce,
        "lose_zone" => Action::LoseZone { zone: zone()? },
        "start_zone" => Action::StartZone { zone: zone()? },
        "cut_zone" => Action::CutZone { zone: zone()? },
        "heal_zone" => Action::HealZone { zone: zone()? },
        "reassign_execute" => {
            fields(&["reassignment", "throttle", "additional"])?;
            let reassignment = reassignment(path, obj)?;
            let (mut throttle, mut additional) = (None, false);
            read_fields(
                path,
                obj,
                &mut [
                    ("throttle", Field::OptU64(&mut throttle)),
                    ("additional", Field::Bool(&mut additional)),
                ],
            )?;
            Action::ReassignExecute {
                reassignment,
                throttle,
                additional,
            }
        }
        "reassign_verify" | "reassign_cancel" => {
            fields(&["reassignment", "preserve_throttles"])?;
            let reassignment = reassignment(path, obj)?;
            let mut preserve_throttles = false;
            read_fields(
                path,
                obj,
                &mut [("preserve_throttles", Field::Bool(&mut preserve_throttles))],
            )?;
            if name == "reassign_verify" {
                Action::ReassignVerify {
                    reassignment,
                    preserve_throttles,
                }
            } else {
                Action::ReassignCancel {
                    reassignment,
                    preserve_throttles,
                }
            }
        }
        other => {
            return Err(fail(
                &tag_path,
                format!("unknown variant `{other}`, {}", one_of(ACTIONS)),
            ))
        }
    };
    Ok(TimedAction { at: at_ms, action })
}

/// An action's `reassignment`: a reassignment file (`--reassignment-json-file`). Its
/// members are read by `read_fields` after `required` (no reader generic over their types).
fn reassignment(action: &str, action_obj: &Obj) -> R<Reassignment> {
    reassignment_file(
        &at(action, "reassignment"),
        required(action, action_obj, "reassignment")?,
    )
}

/// A reassignment file at `path`.
fn reassignment_file(path: &str, file: &Value) -> R<Reassignment> {
    let obj = object(path, file, "struct Reassignment")?;
    known_fields(path, obj, &["version", "partitions"])?;
    let partitions_path = &at(path, "partitions");
    let list = required(path, obj, "partitions")?;
    let Value::Array(items) = list else {
        return Err(invalid_type(partitions_path, list, "a sequence"));
    };
    let mut r = Reassignment {
        version: 1,
        partitions: Vec::with_capacity(items.len()),
    };
    read_fields(path, obj, &mut [("version", Field::U32(&mut r.version))])?;
    for (i, item) in items.iter().enumerate() {
        let p = &indexed(partitions_path, i);
        let obj = object(p, item, "struct PartitionReassignment")?;
        known_fields(p, obj, &["topic", "partition", "replicas"])?;
        let mut entry = PartitionReassignment {
            topic: String::new(),
            partition: 0,
            replicas: Vec::new(),
        };
        for name in ["topic", "partition", "replicas"] {
            required(p, obj, name)?;
        }
        read_fields(
            p,
            obj,
            &mut [
                ("topic", Field::Str(&mut entry.topic)),
                ("partition", Field::U32(&mut entry.partition)),
                ("replicas", Field::Ids(&mut entry.replicas)),
            ],
        )?;
        r.partitions.push(entry);
    }
    Ok(r)
}

impl Reassignment {
    /// A reassignment file's text (`--reassignment-json-file`), read as a timeline action's
    /// `reassignment` is, each error naming its field (the playground's reassignment form).
    pub fn from_json(text: &str) -> Result<Reassignment, ScenarioError> {
        let v = crate::json::parse(text).map_err(|e| {
            ScenarioError::new("reassignment", format!("not a reassignment file: {e}"))
        })?;
        reassignment_file("reassignment", &v)
    }
}

// ---------------------------------------------------------------------------------------
// Writing

/// A scenario's JSON text: as `serde_json::to_string_pretty` (`pretty`) or `to_string`
/// writes it with the derived `Serialize`.
pub fn scenario(s: &Scenario, pretty: bool) -> String {
    let mut w = Writer::new(pretty);
    w.scenario(s);
    w.out
}

impl Writer {
    fn endpoint(&mut self, e: Endpoint) {
        match e {
            Endpoint::Broker(id) => self.u64(id.into()),
            Endpoint::Controller(_) => self.str("controller"),
        }
    }

    /// Version 1's fields as the derived `Serialize` writes them; version 2 leaves out
    /// version 1's topic fields (`topic`, `assignment`, `replication_factor`), which it
    /// refuses, and writes `racks` and `topics` (left out when empty, as the derive does).
    fn scenario(&mut self, s: &Scenario) {
        let version_1 = s.version < 2;
        self.open('{');
        self.key("version").u64(s.version.into());
        self.key("title").str(&s.title);
        self.key("description").str(&s.description);
        self.key("source").str(&s.source);
        if version_1 {
            self.key("topic").str(&s.topic);
        }
        self.key("brokers").u64(s.brokers.into());
        if !s.racks.is_empty() {
            self.key("racks").open('{');
            for (id, rack) in s.racks.iter() {
                self.key(&id.to_string()).str(rack);
            }
            self.close('}');
        }
        if let Some(rack) = &s.client_rack {
            self.key("client_rack").str(rack);
        }
        if version_1 {
            self.key("assignment").ids(&s.assignment);
            self.key("replication_factor")
                .opt_u64(s.replication_factor.map(u64::from));
        }
        if !s.topics.is_empty() {
            self.key("topics").open('[');
            for t in &s.topics {
                self.item();
                self.new_topic(t);
            }
            self.close(']');
        }
        if let Some(n) = s.record_size_bytes {
            self.key("record_size_bytes").u64(n.into());
        }
        self.key("seed").u64(s.seed);
        if !s.protocol.is_default() {
            self.key("protocol").str(s.protocol.name());
        }
        self.key("config").config(&s.config);
        self.key("links").open('[');
        for l in &s.links {
            self.item();
            self.open('{');
            self.key("a").endpoint(l.a);
            self.key("b").endpoint(l.b);
            self.key("latency_ms").u64(l.latency_ms);
            self.close('}');
        }
        self.close(']');
        self.key("timeline").open('[');
        for t in &s.timeline {
            self.item();
            self.timed_action(t);
        }
        self.close(']');
        self.key("end_ms").opt_u64(s.end_ms);
        if !s.compare.is_empty() {
            self.key("compare").open('[');
            for v in &s.compare {
                self.item();
                self.compare_variant(v);
            }
            self.close(']');
        }
        if !s.expect.is_empty() {
            self.key("expect").open('[');
            for e in &s.expect {
                self.item();
                self.expectation(e);
            }
            self.close(']');
        }
        if let Some(t) = s.off_script_ms {
            self.key("off_script_ms").u64(t);
        }
        self.close('}');
    }

    /// A variant as the derived `Serialize` writes it: the fields it sets.
    fn compare_variant(&mut self, v: &Variant) {
        self.open('{');
        if !v.label.is_empty() {
            self.key("label").str(&v.label);
        }
        if let Some(p) = v.protocol {
            self.key("protocol").str(p.name());
        }
        if !v.config.is_empty() {
            self.key("config").value(&Value::Object(v.config.clone()));
        }
        if !v.topics.is_empty() {
            self.key("topics").open('{');
            for (name, c) in v.topics.iter() {
                self.key(name);
                self.topic_configs(c);
            }
            self.close('}');
        }
        if let Some(a) = v.acks {
            self.key("acks").str(match a {
                Acks::Zero => "0",
                Acks::One => "1",
                Acks::All => "all",
            });
        }
        self.close('}');
    }

    fn new_topic(&mut self, t: &NewTopic) {
        self.open('{');
        self.key("name").str(&t.name);
        if let Some(n) = t.partitions {
            self.key("partitions").u64(n.into());
        }
        if let Some(n) = t.replication_factor {
            self.key("replication_factor").u64(n.into());
        }
        if let Some(lists) = &t.assignment {
            self.key("assignment").open('[');
            for replicas in lists {
                self.item();
                self.ids(replicas);
            }
            self.close(']');
        }
        if !t.configs.is_empty() {
            self.key("configs");
            self.topic_configs(&t.configs);
        }
        self.close('}');
    }

    /// A topic's configs (`topics[].configs`, a variant's `topics`): the ones set.
    fn topic_configs(&mut self, c: &TopicConfigs) {
        self.open('{');
        if let Some(n) = c.min_insync_replicas {
            self.key(TOPIC_CONFIG_FIELDS[0]).u64(n.into());
        }
        if let Some(b) = c.unclean_leader_election_enable {
            self.key(TOPIC_CONFIG_FIELDS[1]).bool(b);
        }
        if let Some(n) = c.flush_messages {
            self.key(TOPIC_CONFIG_FIELDS[2]).u64(n);
        }
        if let Some(n) = c.flush_ms {
            self.key(TOPIC_CONFIG_FIELDS[3]).u64(n);
        }
        self.close('}');
    }

    /// A produce's or consume's `topic` and `partition`, when given.
    fn target(&mut self, topic: Option<&str>, partition: Option<u32>) {
        if let Some(t) = topic {
            self.key("topic").str(t);
        }
        if let Some(p) = partition {
            self.key("partition").u64(p.into());
        }
    }

    /// In [`CONFIG_FIELDS`] order, which is `Config`'s; `enable.idempotence` only when
    /// set, and `max.in.flight.requests.per.connection`, `num.replica.fetchers`,
    /// `retry.backoff.max.ms` and the others below only when not the default, as the derived
    /// `Serialize` skips them.
    fn config(&mut self, c: &Config) {
        self.open('{');
        let mut c = c.clone();
        for &name in CONFIG_FIELDS {
            match c.slot(name) {
                Some(Slot::U32(&mut n)) => {
                    let default = (name == "max.in.flight.requests.per.connection"
                        && n == crate::config::DEFAULT_MAX_IN_FLIGHT)
                        || (name == "num.replica.fetchers" && n == 1)
                        || (name == "replica.fetch.max.bytes"
                            && n == crate::config::REPLICA_FETCH_MAX_BYTES_DEFAULT)
                        || (name == "replica.fetch.response.max.bytes"
                            && n == crate::config::REPLICA_FETCH_RESPONSE_MAX_BYTES_DEFAULT)
                        || (name == "batch.size" && n == crate::config::BATCH_SIZE_DEFAULT)
                        || (name == "max.partition.fetch.bytes"
                            && n == crate::config::MAX_PARTITION_FETCH_BYTES_DEFAULT)
                        || (name == "fetch.max.bytes"
                            && n == crate::config::FETCH_MAX_BYTES_DEFAULT);
                    if !default {
                        self.key(name).u64(n.into());
                    }
                }
                Some(Slot::U64(&mut n)) => {
                    let default = (name == "leader.imbalance.check.interval.seconds"
                        && n == crate::config::LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS_DEFAULT)
                        || (name == "retry.backoff.max.ms"
                            && n == crate::config::RETRY_BACKOFF_MAX_MS_DEFAULT)
                        || (name == "sim.writeback.delay.ms"
                            && n == crate::config::WRITEBACK_DELAY_MS_DEFAULT)
                        || (name.starts_with("log.flush.") && n == crate::config::LOG_FLUSH_NEVER);
                    if !default {
                        self.key(name).u64(n);
                    }
                }
                Some(Slot::Bool(&mut b) | Slot::OptBool(&mut Some(b))) => self.key(name).bool(b),
                Some(Slot::Selector(&mut true)) => self
                    .key(name)
                    .str(crate::config::RACK_AWARE_REPLICA_SELECTOR),
                Some(Slot::OptBool(&mut None) | Slot::Selector(&mut false)) | None => {}
            }
        }
        self.close('}');
    }

    fn timed_action(&mut self, t: &TimedAction) {
        self.open('{');
        self.key("at").u64(t.at);
        let (tag, broker) = match &t.action {
            Action::Produce(_) => ("produce", None),
            Action::Consume { .. } => ("consume", None),
            Action::Freeze { broker } => ("freeze", Some(*broker)),
            Action::Thaw { broker } => ("thaw", Some(*broker)),
            Action::Kill { broker } => ("kill", Some(*broker)),
            Action::Stop { broker } => ("stop", Some(*broker)),
            Action::Start { broker } => ("start", Some(*broker)),
            Action::Slow { broker, .. } => ("slow", Some(*broker)),
            Action::Cut { .. } => ("cut", None),
            Action::Heal { .. } => ("heal", None),
            Action::LoseDisk { broker } => ("lose_disk", Some(*broker)),
            Action::PowerLoss { broker } => ("power_loss", Some(*broker)),
            Action::SetConfig { .. } => ("set_config", None),
            Action::ElectPreferred => ("elect_preferred", None),
            Action::ElectUnclean => ("elect_unclean", None),
            Action::Describe(_) => ("describe", None),
            Action::Metrics { .. } => ("metrics", None),
            Action::Offsets => ("offsets", None),
            Action::Epochs { .. } => ("epochs", None),
            Action::Checkpoints => ("checkpoints", None),
            Action::FetcherThreads => ("fetcher_threads", None),
            Action::DumpLog { broker, .. } => ("dump_log", Some(*broker)),
            Action::Note { .. } => ("note", None),
            Action::CancelProduce => ("cancel_produce", None),
            Action::LoseZone { .. } => ("lose_zone", None),
            Action::StartZone { .. } => ("start_zone", None),
            Action::CutZone { .. } => ("cut_zone", None),
            Action::HealZone { .. } => ("heal_zone", None),
            Action::ReassignExecute { .. } => ("reassign_execute", None),
            Action::ReassignVerify { .. } => ("reassign_verify", None),
            Action::ReassignCancel { .. } => ("reassign_cancel", None),
        };
        self.key("action").str(tag);
        if let Some(b) = broker {
            self.key("broker").u64(b.into());
        }
        match &t.action {
            Action::Produce(p) => self.produce(p),
            Action::Consume {
                max_records,
                from_beginning,
                topic,
                partition,
            } => {
                self.key("max_records").opt_u64(max_records.map(u64::from));
                self.key("from_beginning").bool(*from_beginning);
                self.target(topic.as_deref(), *partition);
            }
            Action::Epochs { topic, partition }
            | Action::DumpLog {
                topic, partition, ..
            } => self.target(topic.as_deref(), *partition),
            Action::Slow { ms, .. } => self.key("ms").u64(*ms),
            Action::Cut { a, b } | Action::Heal { a, b } => {
                self.key("a").endpoint(*a);
                self.key("b").endpoint(*b);
            }
            Action::SetConfig { name, value } => {
                self.key("name").str(name);
                self.key("value").value(value);
            }
            Action::Note { text } => self.key("text").str(text),
            // Only what was given: a version-1 describe writes no field, as before.
            Action::Describe(d) => {
                self.target(d.topic.as_deref(), None);
                for (name, on) in crate::scenario::DESCRIBE_FILTERS.iter().zip(d.filters()) {
                    if on {
                        self.key(name).bool(true);
                    }
                }
            }
            Action::Metrics { name: Some(n) } => self.key("name").str(n),
            Action::LoseZone { zone }
            | Action::StartZone { zone }
            | Action::CutZone { zone }
            | Action::HealZone { zone } => self.key("zone").str(zone),
            Action::ReassignExecute {
                reassignment,
                throttle,
                additional,
            } => {
                self.reassignment(reassignment);
                if let Some(t) = throttle {
                    self.key("throttle").u64(*t);
                }
                // Only when given, as serde's skip_serializing_if writes it.
                if *additional {
                    self.key("additional").bool(true);
                }
            }
            Action::ReassignVerify {
                reassignment,
                preserve_throttles,
            }
            | Action::ReassignCancel {
                reassignment,
                preserve_throttles,
            } => {
                self.reassignment(reassignment);
                if *preserve_throttles {
                    self.key("preserve_throttles").bool(true);
                }
            }
            _ => {}
        }
        self.close('}');
    }

    /// A reassignment file, as the tool writes one (`version`, then `partitions`).
    fn reassignment(&mut self, r: &Reassignment) {
        self.key("reassignment").open('{');
        self.key("version").u64(r.version.into());
        self.key("partitions").open('[');
        for p in &r.partitions {
            self.item();
            self.open('{');
            self.key("topic").str(&p.topic);
            self.key("partition").u64(p.partition.into());
            self.key("replicas").ids(&p.replicas);
            self.close('}');
        }
        self.close(']');
        self.close('}');
    }

    fn produce(&mut self, p: &ProduceSpec) {
        self.key("acks").str(match p.acks.0 {
            Acks::Zero => "0",
            Acks::One => "1",
            Acks::All => "all",
        });
        self.key("values").open('[');
        for v in &p.values {
            self.item();
            self.str(v);
        }
        self.close(']');
        self.key("prefix").opt_str(p.prefix.as_deref());
        self.key("count").opt_u64(p.count.map(u64::from));
        self.key("start").opt_u64(p.start.map(u64::from));
        self.key("one_by_one").bool(p.one_by_one);
        self.key("retries").opt_u64(p.retries.map(u64::from));
        self.key("to").opt_u64(p.to.map(u64::from));
        self.target(p.topic.as_deref(), p.partition);
        if let Some(k) = &p.key {
            self.key("key").str(k);
        }
        if let Some(n) = p.size {
            self.key("size").u64(n.into());
        }
    }

    fn expectation(&mut self, e: &Expectation) {
        self.open('{');
        self.key("at").u64(e.at);
        if let Some(r) = e.run {
            self.key("run").u64(r.into());
        }
        if !e.label.is_empty() {
            self.key("label").str(&e.label);
        }
        if let Some(v) = e.since {
            self.key("since").u64(v);
        }
        self.target(e.topic.as_deref(), e.partition);
        if let Some(v) = &e.describe {
            self.key("describe").str(v);
        }
        if let Some(v) = e.leader {
            let w = self.key("leader");
            match v {
                LeaderExpect::Broker(id) => w.u64(id.into()),
                LeaderExpect::None(_) => w.str("none"),
            }
        }
        if let Some(v) = &e.isr {
            self.key("isr").ids(v);
        }
        if let Some(v) = &e.elr {
            self.key("elr").ids(v);
        }
        if let Some(v) = e.broker {
            self.key("broker").u64(v.into());
        }
        if let Some(v) = e.leo {
            self.key("leo").u64(v);
        }
        if let Some(v) = e.hw {
            self.key("hw").u64(v);
        }
        for (k, v) in [
            ("offsets", &e.offsets),
            ("produce", &e.produce),
            ("error", &e.error),
        ] {
            if let Some(v) = v {
                self.key(k).str(v);
            }
        }
        if let Some(v) = e.loss {
            self.key("loss").bool(v);
        }
        if let Some([a, b]) = e.lost {
            self.key("lost").open('[');
            self.item();
            self.u64(a);
            self.item();
            self.u64(b);
            self.close(']');
        }
        for (k, v) in [("caption", &e.caption), ("line", &e.line)] {
            if let Some(v) = v {
                self.key(k).str(v);
            }
        }
        if let Some(v) = e.preferred_read_replica {
            let w = self.key("preferred_read_replica");
            match v {
                LeaderExpect::Broker(id) => w.u64(id.into()),
                LeaderExpect::None(_) => w.str("none"),
            }
        }
        if let Some(v) = e.read_from {
            self.key("read_from").u64(v.into());
        }
        if let Some(v) = &e.client_rack {
            self.key("client_rack").str(v);
        }
        if let Some(v) = &e.fenced {
            self.key("fenced").ids(v);
        }
        for (k, v) in [("zone", &e.zone), ("zone_state", &e.zone_state)] {
            if let Some(v) = v {
                self.key(k).str(v);
            }
        }
        for (want, k) in e
            .partition_filters()
            .into_iter()
            .zip(crate::scenario::DESCRIBE_FILTERS)
        {
            match want {
                Some(PartitionsExpect::Count(n)) => self.key(k).u64((*n).into()),
                Some(PartitionsExpect::List(names)) => {
                    self.key(k).open('[');
                    for name in names {
                        self.item();
                        self.str(name);
                    }
                    self.close(']');
                }
                None => {}
            }
        }
        self.close('}');
    }
}
