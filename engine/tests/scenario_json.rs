//! `Scenario::from_json` reads scenarios by hand (`engine/src/scenario_json.rs`), to keep
//! serde's derived reader out of the shipped wasm. These tests hold it to the derived
//! `Deserialize` as the reference: on the presets, on every config and action, and on
//! thousands of mutated scenarios, both readers accept the same scenarios, with the same
//! result, and reject the same ones.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use watermark_engine::config::RANGES;
use watermark_engine::presets::{preset, PRESETS};
use watermark_engine::rng::Rng;
use watermark_engine::{Action, Config, Scenario, ScenarioError};

/// The reference: serde's derived reader, then the same validation.
fn by_serde(text: &str) -> Result<Scenario, String> {
    let s: Scenario = serde_json::from_str(text).map_err(|e| e.to_string())?;
    s.validate().map_err(|e| e.to_string())?;
    Ok(s)
}

fn same(text: &str) -> Result<Scenario, ScenarioError> {
    let hand = Scenario::from_json(text);
    let reference = by_serde(text);
    match (&hand, &reference) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "both read {text}, differently"),
        (Err(e), Err(_)) => assert!(!e.field.is_empty() && !e.message.is_empty()),
        // The one difference, on purpose: serde's derived structs also read a JSON array as
        // their fields in order (`[1, "title"]`); nothing writes scenarios that way, and the
        // reader by hand wants objects.
        (Err(e), Ok(_)) if written_as_array(e) => {}
        _ => {
            panic!("the readers disagree on {text}:\n by hand: {hand:?}\n by serde: {reference:?}")
        }
    }
    hand
}

fn written_as_array(e: &ScenarioError) -> bool {
    e.message
        .starts_with("invalid type: sequence, expected struct ")
        || e.message == "invalid type: sequence, expected a map"
}

/// Fails to compile when an action is added, until it is added to [`every_action`] (and, if
/// it has fields, to the reader in `scenario_json.rs`).
fn covered(a: &Action) {
    match a {
        Action::Produce(_)
        | Action::Consume { .. }
        | Action::Freeze { .. }
        | Action::Thaw { .. }
        | Action::Kill { .. }
        | Action::Stop { .. }
        | Action::Start { .. }
        | Action::Slow { .. }
        | Action::Cut { .. }
        | Action::Heal { .. }
        | Action::LoseDisk { .. }
        | Action::SetConfig { .. }
        | Action::ElectPreferred
        | Action::ElectUnclean
        | Action::Describe
        | Action::Offsets
        | Action::Epochs
        | Action::Checkpoints
        | Action::CancelProduce
        | Action::DumpLog { .. }
        | Action::Note { .. } => {}
    }
}

fn every_action() -> Value {
    json!([
        {"at": 0, "action": "produce", "acks": "1", "values": ["a", "b"], "prefix": "p-", "count": 2, "start": 5, "one_by_one": true, "retries": 3, "to": 2},
        {"at": 1, "action": "produce", "acks": "-1", "values": ["x"]},
        {"at": 2, "action": "consume", "max_records": 7, "from_beginning": true},
        {"at": 3, "action": "consume"},
        {"at": 4, "action": "freeze", "broker": 1},
        {"at": 5, "action": "thaw", "broker": 1},
        {"at": 6, "action": "kill", "broker": 2},
        {"at": 7, "action": "stop", "broker": 3},
        {"at": 8, "action": "start", "broker": 2},
        {"at": 9, "action": "slow", "broker": 1, "ms": 250},
        {"at": 10, "action": "cut", "a": 1, "b": "controller"},
        {"at": 11, "action": "heal", "a": "controller", "b": 3},
        {"at": 12, "action": "lose_disk", "broker": 3},
        {"at": 13, "action": "set_config", "name": "min.insync.replicas", "value": "2"},
        {"at": 14, "action": "elect_preferred"},
        {"at": 15, "action": "elect_unclean"},
        {"at": 16, "action": "describe"},
        {"at": 17, "action": "offsets"},
        {"at": 18, "action": "epochs"},
        {"at": 19, "action": "checkpoints"},
        {"at": 20, "action": "dump_log", "broker": 1},
        {"at": 21, "action": "note", "text": "# a caption"},
        {"at": 22, "action": "cancel_produce"}
    ])
}

fn full_scenario() -> Value {
    json!({
        "version": 1, "title": "t", "description": "d", "source": "s", "topic": "top.ic-1",
        "brokers": 3, "assignment": [2, 1, 3], "replication_factor": 3, "seed": 99,
        "config": {"min.insync.replicas": 2},
        "links": [{"a": 1, "b": "controller", "latency_ms": 40}, {"a": 2, "b": 3, "latency_ms": 5}],
        "timeline": every_action(),
        "end_ms": 60000,
        "off_script_ms": 12,
        "expect": [
            {"at": 100, "label": "l", "since": 50, "describe": "d", "leader": 2, "isr": [1, 2],
             "elr": [3], "broker": 1, "leo": 5, "hw": 4, "offsets": "o", "produce": "p",
             "error": "NOT_ENOUGH_REPLICAS", "loss": false, "lost": [1, 2], "caption": "c", "line": "x"},
            {"at": 0, "leader": "none", "isr": [], "since": null}
        ]
    })
}

#[test]
fn every_action_and_field_reads_as_serde_reads_it() {
    let s = same(&full_scenario().to_string()).expect("valid");
    assert_eq!(s.timeline.len(), 23);
    for a in &s.timeline {
        covered(&a.action);
    }
    let kinds: std::collections::BTreeSet<String> = s
        .timeline
        .iter()
        .map(|a| serde_json::to_value(&a.action).unwrap()["action"].to_string())
        .collect();
    assert_eq!(kinds.len(), 21, "one of each action: {kinds:?}");
    assert_eq!(s.expect.len(), 2);
    assert_eq!(s.expect[0].lost, Some([1, 2]));
    // Written back and read again.
    same(&serde_json::to_string(&s).unwrap()).expect("round trip");
    same(&s.to_json_pretty()).expect("round trip, pretty");
    same("{}").expect("all defaults");
}

#[test]
fn every_config_reads_into_its_own_field() {
    // Each config set away from its default (to an end of its range, or flipped).
    let mut config = serde_json::to_value(Config::default()).unwrap();
    let map = config.as_object_mut().unwrap();
    for (name, v) in map.iter_mut() {
        *v = match v {
            Value::Bool(b) => json!(!*b),
            Value::Number(n) => {
                let r = RANGES
                    .iter()
                    .find(|r| r.name == name)
                    .unwrap_or_else(|| panic!("{name} has a range"));
                json!(if n.as_u64() == Some(r.max) {
                    r.min
                } else {
                    r.max
                })
            }
            other => panic!("{name}: {other}"),
        };
    }
    let s = same(&json!({ "config": config }).to_string()).expect("valid");
    assert_eq!(serde_json::to_value(&s.config).unwrap(), config);
}

#[test]
fn the_presets_read_as_serde_reads_them() {
    for p in PRESETS {
        same(p.json).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let s = preset(p.name).unwrap();
        same(&serde_json::to_string(&s).unwrap()).unwrap();
    }
}

#[test]
fn bad_scenarios_name_the_field() {
    let e = Scenario::from_json(r#"{"timeline":[{"at":0,"action":"dance"}]}"#).unwrap_err();
    assert_eq!(e.field, "timeline[0].action");
    assert!(e
        .message
        .starts_with("unknown variant `dance`, expected one of `produce`"));
    let e = Scenario::from_json(r#"{"timeline":[{"at":0,"action":"kill"}]}"#).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("timeline[0]", "missing field `broker`")
    );
    let e =
        Scenario::from_json(r#"{"timeline":[{"at":0,"action":"kill","broker":"2"}]}"#).unwrap_err();
    assert_eq!(e.field, "timeline[0].broker");
    assert_eq!(e.message, r#"invalid type: string "2", expected u32"#);
    let e = Scenario::from_json(r#"{"config":{"min.insync.replica":2}}"#).unwrap_err();
    assert_eq!(e.field, "config");
    assert!(e.message.starts_with("unknown field `min.insync.replica`"));
    let e = Scenario::from_json(r#"{"brokers":-1}"#).unwrap_err();
    assert_eq!(e.message, "invalid value: integer `-1`, expected u32");
    let e = Scenario::from_json("not json").unwrap_err();
    assert_eq!(e.field, "scenario");
    assert!(e.message.starts_with("not a valid scenario: expected"));
}

/// Values a mutation puts in place of another.
fn odd_value(rng: &mut Rng) -> Value {
    let names = [
        "produce",
        "kill",
        "slow",
        "cut",
        "describe",
        "note",
        "set_config",
        "consume",
    ];
    match rng.below_or_equal(13) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(1.5),
        4 => json!(5_000_000_000u64),
        5 => json!("x"),
        6 => json!("controller"),
        7 => json!([]),
        8 => json!({}),
        9 => json!("all"),
        10 => json!(names[rng.below_or_equal(names.len() as u64 - 1) as usize]),
        11 => json!(["a", 1]),
        _ => json!(rng.below_or_equal(4)),
    }
}

/// Changes one node of `v`: replaces it, or (in an object) removes a key or adds one.
fn mutate(rng: &mut Rng, v: &mut Value) {
    let keys = [
        "at", "action", "broker", "a", "b", "ms", "values", "acks", "text", "zzz", "count",
        "prefix",
    ];
    let descend = rng.below_or_equal(3) != 0;
    match v {
        Value::Object(map) if !map.is_empty() && descend => {
            let i = rng.below_or_equal(map.len() as u64 - 1) as usize;
            let key = map.keys().nth(i).cloned().unwrap();
            match rng.below_or_equal(5) {
                0 => {
                    map.remove(&key);
                }
                1 => {
                    let k = keys[rng.below_or_equal(keys.len() as u64 - 1) as usize];
                    map.insert(k.to_string(), odd_value(rng));
                }
                _ => mutate(rng, map.get_mut(&key).unwrap()),
            }
        }
        Value::Array(items) if !items.is_empty() && descend => {
            let i = rng.below_or_equal(items.len() as u64 - 1) as usize;
            mutate(rng, &mut items[i]);
        }
        _ => *v = odd_value(rng),
    }
}

#[test]
fn mutated_scenarios_read_as_serde_reads_them() {
    let cases: u64 = std::env::var("WATERMARK_READER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut bases: Vec<Value> = PRESETS
        .iter()
        .map(|p| serde_json::from_str(p.json).unwrap())
        .collect();
    bases.push(full_scenario());
    let mut rng = Rng::new(0x5E7DE);
    let (mut ok, mut rejected) = (0, 0);
    for _ in 0..cases {
        let mut v = bases[rng.below_or_equal(bases.len() as u64 - 1) as usize].clone();
        for _ in 0..=rng.below_or_equal(2) {
            mutate(&mut rng, &mut v);
        }
        match same(&v.to_string()) {
            Ok(_) => ok += 1,
            Err(_) => rejected += 1,
        }
    }
    assert!(
        ok > cases / 20 && rejected > cases / 4,
        "{ok} read, {rejected} rejected"
    );
}
