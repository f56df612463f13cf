//! Reading a scenario from parsed JSON (`serde_json::Value`) by hand.
//!
//! `Scenario::from_json` reads through here instead of serde's derived `Deserialize`: the
//! derived code for the timeline (an internally tagged `Action` flattened into
//! `TimedAction`, and the untagged `Endpoint`) buffers every value into serde's `Content`
//! and is monomorphized for each deserializer in play; in the shipped wasm the `Action`
//! deserializer alone was 32 kB. This reader walks one `Value` tree with plain functions.
//!
//! It accepts exactly what the derived `Deserialize` accepts and gives the same scenario
//! (`tests/scenario_json.rs` checks both readers against each other on the presets, the
//! saved links and mutated JSON); its messages are serde's, prefixed by the path of the
//! field at fault. The derives stay for Rust callers (and as the reference).

use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::{quoted, ScenarioError};
use crate::expect::{Expectation, LeaderExpect, NoLeader};
use crate::scenario::{
    AcksOrDefault, Action, ControllerName, Endpoint, LinkLatency, ProduceSpec, Scenario,
    TimedAction, FORMAT_VERSION,
};
use crate::types::Acks;

type Obj = Map<String, Value>;
type R<T> = Result<T, ScenarioError>;

fn at(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn fail(path: &str, message: String) -> ScenarioError {
    ScenarioError::new(if path.is_empty() { "scenario" } else { path }, message)
}

/// How serde names a value it did not expect (`serde::de::Unexpected`).
fn unexpected(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {}", quoted(s)),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

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
        _ => format!(
            "expected one of {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn object<'a>(path: &str, v: &'a Value, what: &str) -> R<&'a Obj> {
    v.as_object().ok_or_else(|| invalid_type(path, v, what))
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

fn required<'a>(path: &str, obj: &'a Obj, name: &str) -> R<&'a Value> {
    obj.get(name)
        .ok_or_else(|| fail(path, format!("missing field `{name}`")))
}

fn u64_of(path: &str, v: &Value) -> R<u64> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| match n.as_i64() {
            Some(i) => fail(path, format!("invalid value: integer `{i}`, expected u64")),
            None => invalid_type(path, v, "u64"),
        }),
        _ => Err(invalid_type(path, v, "u64")),
    }
}

fn u32_of(path: &str, v: &Value) -> R<u32> {
    match v {
        Value::Number(n) if n.is_u64() || n.is_i64() => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| fail(path, format!("invalid value: integer `{n}`, expected u32"))),
        _ => Err(invalid_type(path, v, "u32")),
    }
}

fn bool_of(path: &str, v: &Value) -> R<bool> {
    v.as_bool()
        .ok_or_else(|| invalid_type(path, v, "a boolean"))
}

fn string_of(path: &str, v: &Value) -> R<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| invalid_type(path, v, "a string"))
}

fn list_of<T>(path: &str, v: &Value, item: impl Fn(&str, &Value) -> R<T>) -> R<Vec<T>> {
    let items = v
        .as_array()
        .ok_or_else(|| invalid_type(path, v, "a sequence"))?;
    // A loop, not `collect::<Result<Vec<_>, _>>()`: that brings a `GenericShunt` iterator
    // for each item type into the wasm, with the item's reader inlined into it.
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        out.push(item(&format!("{path}[{i}]"), x)?);
    }
    Ok(out)
}

/// An optional field: absent or `null` is `None`.
fn optional<T>(path: &str, obj: &Obj, name: &str, read: fn(&str, &Value) -> R<T>) -> R<Option<T>> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(&at(path, name), v).map(Some),
    }
}

/// A field with a default when absent.
fn or_default<T>(
    path: &str,
    obj: &Obj,
    name: &str,
    default: T,
    read: fn(&str, &Value) -> R<T>,
) -> R<T> {
    match obj.get(name) {
        None => Ok(default),
        Some(v) => read(&at(path, name), v),
    }
}

const SCENARIO_FIELDS: &[&str] = &[
    "version",
    "title",
    "description",
    "source",
    "topic",
    "brokers",
    "assignment",
    "replication_factor",
    "seed",
    "config",
    "links",
    "timeline",
    "end_ms",
    "expect",
    "off_script_ms",
];

/// Reads a scenario (not yet validated: `Scenario::validate` checks ranges and limits).
pub(crate) fn scenario(v: &Value) -> R<Scenario> {
    let obj = object("", v, "struct Scenario")?;
    known_fields("", obj, SCENARIO_FIELDS)?;
    let d = Scenario::default();
    Ok(Scenario {
        version: or_default("", obj, "version", FORMAT_VERSION, u32_of)?,
        title: or_default("", obj, "title", d.title, string_of)?,
        description: or_default("", obj, "description", d.description, string_of)?,
        source: or_default("", obj, "source", d.source, string_of)?,
        topic: or_default("", obj, "topic", d.topic, string_of)?,
        brokers: or_default("", obj, "brokers", d.brokers, u32_of)?,
        assignment: match obj.get("assignment") {
            None => vec![],
            Some(v) => list_of("assignment", v, u32_of)?,
        },
        replication_factor: optional("", obj, "replication_factor", u32_of)?,
        seed: or_default("", obj, "seed", 0, u64_of)?,
        config: or_default("", obj, "config", d.config, config)?,
        links: match obj.get("links") {
            None => vec![],
            Some(v) => list_of("links", v, link)?,
        },
        timeline: match obj.get("timeline") {
            None => vec![],
            Some(v) => list_of("timeline", v, timed_action)?,
        },
        end_ms: optional("", obj, "end_ms", u64_of)?,
        expect: match obj.get("expect") {
            None => vec![],
            Some(v) => list_of("expect", v, expectation)?,
        },
        off_script_ms: optional("", obj, "off_script_ms", u64_of)?,
    })
}

const EXPECTATION_FIELDS: &[&str] = &[
    "at", "label", "since", "describe", "leader", "isr", "elr", "broker", "leo", "hw", "offsets",
    "produce", "error", "loss", "lost", "caption", "line",
];

/// One entry of `expect` (`crate::expect::Expectation`).
fn expectation(path: &str, v: &Value) -> R<Expectation> {
    let obj = object(path, v, "struct Expectation")?;
    known_fields(path, obj, EXPECTATION_FIELDS)?;
    let text = |name: &str| optional(path, obj, name, string_of);
    let number = |name: &str| optional(path, obj, name, u64_of);
    let ids = |name: &str| optional(path, obj, name, |p, v| list_of(p, v, u32_of));
    Ok(Expectation {
        at: u64_of(&at(path, "at"), required(path, obj, "at")?)?,
        label: or_default(path, obj, "label", String::new(), string_of)?,
        since: number("since")?,
        describe: text("describe")?,
        leader: optional(path, obj, "leader", leader)?,
        isr: ids("isr")?,
        elr: ids("elr")?,
        broker: optional(path, obj, "broker", u32_of)?,
        leo: number("leo")?,
        hw: number("hw")?,
        offsets: text("offsets")?,
        produce: text("produce")?,
        error: text("error")?,
        loss: optional(path, obj, "loss", bool_of)?,
        lost: optional(path, obj, "lost", |p, v| {
            let items = v
                .as_array()
                .ok_or_else(|| invalid_type(p, v, "an array of length 2"))?;
            match items.as_slice() {
                [a, b] => Ok([
                    u64_of(&format!("{p}[0]"), a)?,
                    u64_of(&format!("{p}[1]"), b)?,
                ]),
                _ => Err(fail(
                    p,
                    format!(
                        "invalid length {}, expected an array of length 2",
                        items.len()
                    ),
                )),
            }
        })?,
        caption: text("caption")?,
        line: text("line")?,
    })
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
    "replica.socket.timeout.ms",
    "controller.socket.timeout.ms",
    "replica.high.watermark.checkpoint.interval.ms",
    "broker.heartbeat.interval.ms",
    "broker.session.timeout.ms",
    "request.timeout.ms",
    "delivery.timeout.ms",
    "retries",
    "retry.backoff.ms",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "sim.network.latency.ms",
    "sim.controller.latency.ms",
    "sim.network.jitter.ms",
    "sim.unclean.election.interval.ms",
];

fn config(path: &str, v: &Value) -> R<Config> {
    let obj = object(path, v, "struct Config")?;
    let mut c = Config::default();
    for (name, v) in obj {
        let p = at(path, name);
        let p = p.as_str();
        match name.as_str() {
            "min.insync.replicas" => c.min_insync_replicas = u32_of(p, v)?,
            "unclean.leader.election.enable" => c.unclean_leader_election_enable = bool_of(p, v)?,
            "eligible.leader.replicas.version" => {
                c.eligible_leader_replicas_version = u32_of(p, v)?
            }
            "replica.lag.time.max.ms" => c.replica_lag_time_max_ms = u64_of(p, v)?,
            "replica.fetch.wait.max.ms" => c.replica_fetch_wait_max_ms = u64_of(p, v)?,
            "replica.fetch.backoff.ms" => c.replica_fetch_backoff_ms = u64_of(p, v)?,
            "replica.socket.timeout.ms" => c.replica_socket_timeout_ms = u64_of(p, v)?,
            "controller.socket.timeout.ms" => c.controller_socket_timeout_ms = u64_of(p, v)?,
            "replica.high.watermark.checkpoint.interval.ms" => {
                c.replica_high_watermark_checkpoint_interval_ms = u64_of(p, v)?
            }
            "broker.heartbeat.interval.ms" => c.broker_heartbeat_interval_ms = u64_of(p, v)?,
            "broker.session.timeout.ms" => c.broker_session_timeout_ms = u64_of(p, v)?,
            "request.timeout.ms" => c.request_timeout_ms = u64_of(p, v)?,
            "delivery.timeout.ms" => c.delivery_timeout_ms = u64_of(p, v)?,
            "retries" => c.retries = u32_of(p, v)?,
            "retry.backoff.ms" => c.retry_backoff_ms = u64_of(p, v)?,
            "enable.idempotence" => c.enable_idempotence = Some(bool_of(p, v)?),
            "max.in.flight.requests.per.connection" => {
                c.max_in_flight_requests_per_connection = u32_of(p, v)?
            }
            "sim.network.latency.ms" => c.network_latency_ms = u64_of(p, v)?,
            "sim.controller.latency.ms" => c.controller_latency_ms = u64_of(p, v)?,
            "sim.network.jitter.ms" => c.network_jitter_ms = u64_of(p, v)?,
            "sim.unclean.election.interval.ms" => c.unclean_election_interval_ms = u64_of(p, v)?,
            _ => {
                return Err(fail(
                    path,
                    format!("unknown field `{name}`, {}", one_of(CONFIG_FIELDS)),
                ))
            }
        }
    }
    Ok(c)
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
        a: endpoint(&at(path, "a"), required(path, obj, "a")?)?,
        b: endpoint(&at(path, "b"), required(path, obj, "b")?)?,
        latency_ms: u64_of(&at(path, "latency_ms"), required(path, obj, "latency_ms")?)?,
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
    "set_config",
    "elect_preferred",
    "elect_unclean",
    "describe",
    "offsets",
    "epochs",
    "checkpoints",
    "dump_log",
    "note",
    "cancel_produce",
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
];

/// A variant's name; serde also takes its index in declaration order (`"action": 1`) for
/// the action's tag (not for `acks`, which it reads from its buffered `Content`).
fn variant<'a>(path: &str, v: &'a Value, names: &[&'a str]) -> R<&'a str> {
    match v {
        Value::String(s) => Ok(s),
        Value::Number(n) if n.is_u64() => n
            .as_u64()
            .and_then(|i| names.get(usize::try_from(i).ok()?).copied())
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
    let at_ms = u64_of(&at(path, "at"), required(path, obj, "at")?)?;
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
        u32_of(&at(path, "broker"), required(path, obj, "broker")?)
    };
    let ends = || -> R<(Endpoint, Endpoint)> {
        fields(&["a", "b"])?;
        Ok((
            endpoint(&at(path, "a"), required(path, obj, "a")?)?,
            endpoint(&at(path, "b"), required(path, obj, "b")?)?,
        ))
    };
    let action = match name {
        "produce" => {
            fields(PRODUCE_FIELDS)?;
            Action::Produce(ProduceSpec {
                acks: or_default(path, obj, "acks", AcksOrDefault::default(), acks)?,
                values: match obj.get("values") {
                    None => vec![],
                    Some(v) => list_of(&at(path, "values"), v, string_of)?,
                },
                prefix: optional(path, obj, "prefix", string_of)?,
                count: optional(path, obj, "count", u32_of)?,
                start: optional(path, obj, "start", u32_of)?,
                one_by_one: or_default(path, obj, "one_by_one", false, bool_of)?,
                retries: optional(path, obj, "retries", u32_of)?,
                to: optional(path, obj, "to", u32_of)?,
            })
        }
        "consume" => {
            fields(&["max_records", "from_beginning"])?;
            Action::Consume {
                max_records: optional(path, obj, "max_records", u32_of)?,
                from_beginning: or_default(path, obj, "from_beginning", false, bool_of)?,
            }
        }
        "freeze" => Action::Freeze { broker: broker()? },
        "thaw" => Action::Thaw { broker: broker()? },
        "kill" => Action::Kill { broker: broker()? },
        "stop" => Action::Stop { broker: broker()? },
        "start" => Action::Start { broker: broker()? },
        "lose_disk" => Action::LoseDisk { broker: broker()? },
        "dump_log" => Action::DumpLog { broker: broker()? },
        "slow" => {
            fields(&["broker", "ms"])?;
            Action::Slow {
                broker: u32_of(&at(path, "broker"), required(path, obj, "broker")?)?,
                ms: u64_of(&at(path, "ms"), required(path, obj, "ms")?)?,
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
                name: string_of(&at(path, "name"), required(path, obj, "name")?)?,
                value: required(path, obj, "value")?.clone(),
            }
        }
        "note" => {
            fields(&["text"])?;
            Action::Note {
                text: string_of(&at(path, "text"), required(path, obj, "text")?)?,
            }
        }
        // Unit variants ignore other fields, as serde's internally tagged unit variants do.
        "elect_preferred" => Action::ElectPreferred,
        "elect_unclean" => Action::ElectUnclean,
        "describe" => Action::Describe,
        "offsets" => Action::Offsets,
        "epochs" => Action::Epochs,
        "checkpoints" => Action::Checkpoints,
        "cancel_produce" => Action::CancelProduce,
        other => {
            return Err(fail(
                &tag_path,
                format!("unknown variant `{other}`, {}", one_of(ACTIONS)),
            ))
        }
    };
    Ok(TimedAction { at: at_ms, action })
}
