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
        // And: version 2 refuses version 1's `topic`, `assignment` and `replication_factor`
        // when they are there at all; serde's reader gives them their defaults when absent,
        // so `Scenario::validate` can refuse them only when they are not the defaults
        // (`"topic": "rep"`, `"assignment": []`, `"replication_factor": null`).
        (Err(e), Ok(s)) if s.version == 2 && e.message.starts_with("version 2 lists topics") => {}
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
        | Action::PowerLoss { .. }
        | Action::SetConfig { .. }
        | Action::ElectPreferred
        | Action::ElectUnclean
        | Action::Describe(_)
        | Action::Metrics { .. }
        | Action::Offsets
        | Action::Epochs { .. }
        | Action::Checkpoints
        | Action::FetcherThreads
        | Action::CancelProduce
        | Action::DumpLog { .. }
        | Action::Note { .. }
        | Action::LoseZone { .. }
        | Action::StartZone { .. }
        | Action::CutZone { .. }
        | Action::HealZone { .. } => {}
        Action::ReassignExecute { .. }
        | Action::ReassignVerify { .. }
        | Action::ReassignCancel { .. } => {}
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
        {"at": 22, "action": "cancel_produce"},
        {"at": 23, "action": "fetcher_threads"}
    ])
}

fn full_scenario() -> Value {
    let mut timeline = every_action();
    let items = timeline.as_array_mut().unwrap();
    items.push(json!({"at": 24, "action": "power_loss", "broker": 2}));
    json!({
        "version": 1, "title": "t", "description": "d", "source": "s", "topic": "top.ic-1",
        "brokers": 3, "assignment": [2, 1, 3], "replication_factor": 3, "seed": 99,
        "protocol": "pre-kip-101",
        "config": {"min.insync.replicas": 2, "sim.writeback.delay.ms": 5000},
        "links": [{"a": 1, "b": "controller", "latency_ms": 40}, {"a": 2, "b": 3, "latency_ms": 5}],
        "timeline": timeline,
        "end_ms": 60000,
        "off_script_ms": 12,
        "compare": [
            {"label": "acks 1", "protocol": "kafka-4", "config": {"min.insync.replicas": 1, "sim.writeback.delay.ms": 0}, "acks": "1"},
            {"acks": "0", "protocol": null, "config": {"unclean.leader.election.enable": true}}
        ],
        "expect": [
            {"at": 100, "run": 2, "label": "l", "since": 50, "describe": "d", "leader": 2, "isr": [1, 2],
             "elr": [3], "broker": 1, "leo": 5, "hw": 4, "offsets": "o", "produce": "p",
             "error": "NOT_ENOUGH_REPLICAS", "loss": false, "lost": [1, 2], "caption": "c", "line": "x"},
            {"at": 0, "leader": "none", "isr": [], "since": null}
        ]
    })
}

/// Every field of version 2, and every action (with and without a target).
fn full_scenario_v2() -> Value {
    let mut timeline = every_action();
    let targeted = json!([
        {"at": 30, "action": "produce", "topic": "orders", "partition": 2, "prefix": "v", "count": 10},
        {"at": 31, "action": "produce", "values": ["x"], "topic": "move", "key": "k-ü", "size": 0},
        {"at": 32, "action": "produce", "values": ["y"], "partition": 5, "acks": "1", "size": 1000000},
        {"at": 900, "action": "consume", "topic": "orders", "partition": 2},
        {"at": 901, "action": "consume", "topic": "move", "partition": 1, "max_records": 3, "from_beginning": true},
        {"at": 902, "action": "consume", "partition": 0},
        {"at": 903, "action": "lose_zone", "zone": "a"},
        {"at": 904, "action": "start_zone", "zone": "a"},
        {"at": 905, "action": "cut_zone", "zone": "zone-c.1_x"},
        {"at": 906, "action": "heal_zone", "zone": "zone-c.1_x"},
        {"at": 907, "action": "reassign_execute", "throttle": 1000,
         "reassignment": {"version": 1, "partitions": [{"topic": "move", "partition": 1, "replicas": [4, 3]}]}},
        {"at": 908, "action": "reassign_verify",
         "reassignment": {"partitions": [{"topic": "move", "partition": 1, "replicas": [4, 3]}, {"topic": "orders", "partition": 5, "replicas": []}]}},
        {"at": 909, "action": "reassign_cancel", "reassignment": {"version": 1, "partitions": []}},
        {"at": 910, "action": "epochs", "topic": "move"},
        {"at": 911, "action": "epochs", "topic": "orders", "partition": 5},
        {"at": 912, "action": "dump_log", "broker": 2, "partition": 1},
        {"at": 913, "action": "dump_log", "broker": 3, "topic": "p.q"},
        {"at": 914, "action": "reassign_execute", "additional": true,
         "reassignment": {"version": 1, "partitions": [{"topic": "move", "partition": 0, "replicas": [2, 3]}]}},
        {"at": 915, "action": "reassign_verify", "preserve_throttles": true,
         "reassignment": {"version": 1, "partitions": [{"topic": "move", "partition": 0, "replicas": [2, 3]}]}},
        {"at": 916, "action": "reassign_cancel", "preserve_throttles": true,
         "reassignment": {"version": 1, "partitions": [{"topic": "move", "partition": 0, "replicas": [2, 3]}]}},
        {"at": 917, "action": "reassign_verify", "preserve_throttles": false,
         "reassignment": {"version": 1, "partitions": [{"topic": "move", "partition": 0, "replicas": [2, 3]}]}}
    ]);
    let items = timeline.as_array_mut().unwrap();
    items.extend(targeted.as_array().unwrap().iter().cloned());
    json!({
        "version": 2, "title": "t", "description": "d", "source": "s",
        "brokers": 6,
        "racks": {"1": "a", "2": "a", "3": "b", "4": "b", "10": "x", "5": "zone-c.1_x"},
        "client_rack": "b",
        "topics": [
            {"name": "orders", "partitions": 6, "replication_factor": 3,
             "configs": {"min.insync.replicas": 2, "unclean.leader.election.enable": false}},
            {"name": "move", "assignment": [[1, 2], [2, 3]]},
            {"name": "plain", "configs": {"min.insync.replicas": 9}},
            {"name": "p.q", "partitions": 2},
            {"name": "rf", "replication_factor": 6, "configs": {}}
        ],
        "record_size_bytes": 100,
        "seed": 7,
        "config": {"min.insync.replicas": 2, "replica.fetch.max.bytes": 0,
                   "replica.fetch.response.max.bytes": 2147483647, "batch.size": 1,
                   "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
                   "leader.imbalance.check.interval.seconds": 60,
                   "partitioner.ignore.keys": true, "partitioner.adaptive.partitioning.enable": false},
        "links": [{"a": 1, "b": "controller", "latency_ms": 40}],
        "timeline": timeline,
        "end_ms": 60000,
        "off_script_ms": 12,
        "compare": [{"topics": {"p.q": {"unclean.leader.election.enable": true, "flush.ms": 5},
                                "orders": {"min.insync.replicas": 1, "flush.messages": 1}},
                     "acks": "1"}],
        "expect": [{"at": 100, "leader": 1},
                   {"at": 100, "topic": "orders", "partition": 3, "hw": 0, "produce": "acks=all -> ok"},
                   {"at": 100, "partition": 1, "loss": false},
                   {"at": 100, "since": 50, "preferred_read_replica": 2, "read_from": 1, "client_rack": "b",
                    "fenced": [3, 1], "zone": "a", "zone_state": "cut"},
                   {"at": 100, "preferred_read_replica": "none", "client_rack": "", "fenced": [],
                    "zone": "zone-c.1_x", "zone_state": "up"},
                   {"at": 100, "zone": "a", "under_replicated_partitions": 3,
                    "unavailable_partitions": ["orders-0", "p.q-1"]},
                   {"at": 100, "topic": "orders", "under_replicated_partitions": [],
                    "unavailable_partitions": 0}]
    })
}

/// `full_scenario_v2` without the rack of broker 10, which a 6-broker cluster has not.
fn valid_v2() -> Value {
    let mut v = full_scenario_v2();
    v["racks"].as_object_mut().unwrap().remove("10");
    v
}

#[test]
fn every_version_2_field_reads_as_serde_reads_it() {
    let e = same(&full_scenario_v2().to_string()).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("racks.10", "broker must be one of 1..=6, got 10")
    );
    let s = same(&valid_v2().to_string()).expect("valid");
    assert_eq!(s.version, 2);
    assert_eq!(s.topics.len(), 5);
    assert_eq!(s.topics[1].assignment, Some(vec![vec![1, 2], vec![2, 3]]));
    assert_eq!(s.topics[2].configs.min_insync_replicas, Some(9));
    assert_eq!(s.rack_of(5), Some("zone-c.1_x"));
    assert_eq!(s.racks.len(), 5);
    // Version 1's topic fields keep their defaults.
    assert_eq!(
        (s.topic.as_str(), s.assignment.len(), s.replication_factor),
        ("rep", 0, None)
    );
    assert_eq!(
        s.compare[0].title(),
        "acks=1, orders: min.insync.replicas=1,flush.messages=1, p.q: unclean.leader.election.enable=true,flush.ms=5"
    );
    let first = s.first_topic();
    assert_eq!(s.client_rack.as_deref(), Some("b"));
    assert!(s.config.rack_aware_replica_selector);
    assert_eq!(s.config.leader_imbalance_check_interval_seconds, 60);
    let zones: Vec<_> = s.timeline[30..34].iter().map(|a| a.action.zone()).collect();
    assert_eq!(
        zones,
        [Some("a"), Some("a"), Some("zone-c.1_x"), Some("zone-c.1_x")]
    );
    let targets: Vec<_> = s.timeline[24..30]
        .iter()
        .map(|a| a.action.target(first))
        .collect();
    assert_eq!(
        targets,
        [
            ("orders", 2),
            ("move", 0),
            ("orders", 5),
            ("orders", 2),
            ("move", 1),
            ("orders", 0)
        ]
        .map(Some)
    );
    let Action::ReassignExecute {
        reassignment,
        throttle: Some(1000),
        additional: false,
    } = &s.timeline[34].action
    else {
        panic!("{:?}", s.timeline[34])
    };
    assert_eq!(
        (
            reassignment.version,
            reassignment.partitions[0].replicas.as_slice()
        ),
        (1, &[4, 3][..])
    );
    // --additional and --preserve-throttles, given or not (false, as when absent).
    let flags: Vec<(bool, bool)> = s.timeline[34..]
        .iter()
        .filter_map(|a| match &a.action {
            Action::ReassignExecute { additional, .. } => Some((true, *additional)),
            Action::ReassignVerify {
                preserve_throttles, ..
            }
            | Action::ReassignCancel {
                preserve_throttles, ..
            } => Some((false, *preserve_throttles)),
            _ => None,
        })
        .collect();
    assert_eq!(
        flags,
        [
            (true, false),
            (false, false),
            (false, false),
            (true, true),
            (false, true),
            (false, true),
            (false, false)
        ]
    );
    // Written back and read again, by hand.
    assert_eq!(Scenario::from_json(&s.to_json_pretty()).unwrap(), s);
    assert_eq!(
        Scenario::from_json(&watermark_engine::scenario_json::scenario(&s, false)).unwrap(),
        s
    );
}

#[test]
fn every_action_and_field_reads_as_serde_reads_it() {
    let s = same(&full_scenario().to_string()).expect("valid");
    assert_eq!(s.timeline.len(), 25);
    assert_eq!(s.protocol, watermark_engine::Protocol::PreKip101);
    assert_eq!(s.config.writeback_delay_ms, 5000);
    for a in &s.timeline {
        covered(&a.action);
    }
    let kinds: std::collections::BTreeSet<String> = s
        .timeline
        .iter()
        .map(|a| serde_json::to_value(&a.action).unwrap()["action"].to_string())
        .collect();
    assert_eq!(kinds.len(), 23, "one of each action: {kinds:?}");
    assert_eq!(s.expect.len(), 2);
    assert_eq!(s.expect[0].lost, Some([1, 2]));
    assert_eq!((s.expect[0].run, s.expect[1].run), (Some(2), None));
    assert_eq!(s.compare.len(), 2);
    assert_eq!(s.compare[0].title(), "acks 1");
    assert_eq!(
        s.compare[1].title(),
        "acks=0, unclean.leader.election.enable=true"
    );
    assert_eq!(s.compare[0].config.len(), 2);
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
        // serde's derived writer writes version 1's `topic`, which version 2 refuses: a
        // version-2 preset is written by hand, as `Scenario::to_json_pretty` does.
        let text = if s.version < 2 {
            serde_json::to_string(&s).unwrap()
        } else {
            watermark_engine::scenario_json::scenario(&s, false)
        };
        same(&text).unwrap();
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
        "at",
        "action",
        "broker",
        "a",
        "b",
        "ms",
        "values",
        "acks",
        "text",
        "zzz",
        "count",
        "prefix",
        "topic",
        "partition",
        "name",
        "partitions",
        "assignment",
        "3",
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
    bases.push(valid_v2());
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

/// A version-2 scenario with one change (a JSON pointer set to a value, `None` to remove it):
/// the error both readers give, as the reader by hand words it.
fn v2_error(changes: &[(&str, Option<Value>)]) -> (String, String) {
    let mut v = valid_v2();
    for (pointer, value) in changes {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let parent = v.pointer_mut(parent).unwrap_or_else(|| panic!("{pointer}"));
        match (parent, value) {
            (Value::Object(map), Some(value)) => {
                map.insert(key.to_string(), value.clone());
            }
            (Value::Object(map), None) => {
                map.remove(key);
            }
            (Value::Array(items), Some(value)) => {
                items[key.parse::<usize>().unwrap()] = value.clone()
            }
            (other, _) => panic!("{pointer}: {other}"),
        }
    }
    let e = same(&v.to_string()).expect_err("rejected");
    (e.field, e.message)
}

fn is(field: &str, message: &str) -> (String, String) {
    (field.to_string(), message.to_string())
}

const TOPIC_NAME: &str =
    "a topic name is 1..=64 characters of ASCII letters, digits, '.', '_' and '-', got";

/// kafka-reassign-partitions.sh's own checks of a reassignment file (and the scenario's
/// topics and brokers), each naming the entry at fault.
#[test]
fn reassignment_errors_name_the_field_and_range() {
    let set = |p: &str, v: Value| v2_error(&[(p, Some(v))]);
    let r = "timeline[34].reassignment";
    let entry = |v: Value| set("/timeline/34/reassignment/partitions/0", v);
    assert_eq!(
        set("/timeline/34/reassignment/version", json!(2)),
        is(
            &format!("{r}.version"),
            "Not supported version field value 2 (the tool reads version 1)"
        )
    );
    assert_eq!(
        set("/timeline/34/reassignment/partitions", json!([])),
        is(
            &format!("{r}.partitions"),
            "Partition reassignment list cannot be empty"
        )
    );
    assert_eq!(
        entry(json!({"topic": "nope", "partition": 0, "replicas": [1]})),
        is(
            &format!("{r}.partitions[0].topic"),
            "topic must be one of the scenario's topics, got \"nope\""
        )
    );
    assert_eq!(
        entry(json!({"topic": "move", "partition": 2, "replicas": [1]})),
        is(
            &format!("{r}.partitions[0].partition"),
            "partition must be one of 0..=1 (topic move has 2), got 2"
        )
    );
    assert_eq!(
        entry(json!({"topic": "move", "partition": 0, "replicas": []})),
        is(
            &format!("{r}.partitions[0].replicas"),
            "Partition replica list cannot be empty"
        )
    );
    assert_eq!(
        entry(json!({"topic": "move", "partition": 0, "replicas": [1, 7]})),
        is(
            &format!("{r}.partitions[0].replicas[1]"),
            "Unknown broker id 7 (brokers are 1..=6)"
        )
    );
    assert_eq!(
        entry(json!({"topic": "move", "partition": 0, "replicas": [1, 2, 1]})),
        is(
            &format!("{r}.partitions[0].replicas[2]"),
            "Partition replica lists may not contain duplicate entries: move-0 contains multiple entries for 1"
        )
    );
    let twice = json!([{"topic": "move", "partition": 1, "replicas": [1]}, {"topic": "move", "partition": 1, "replicas": [2]}]);
    assert_eq!(
        set("/timeline/34/reassignment/partitions", twice),
        is(
            &format!("{r}.partitions[1]"),
            "Partition reassignment contains duplicate topic partitions: move-1 (partitions[0])"
        )
    );
    assert_eq!(
        set("/timeline/34/throttle", json!(u64::MAX)),
        is(
            "timeline[34].throttle",
            "throttle must be in 0..=9223372036854775807 bytes/s, got 18446744073709551615"
        )
    );
    assert_eq!(
        entry(json!({"topic": "move", "partition": 0, "replicas": [1], "log_dirs": ["any"]})),
        is(
            &format!("{r}.partitions[0]"),
            "unknown field `log_dirs`, expected one of `topic`, `partition`, `replicas`"
        )
    );
    // Version 1 has no reassignment: its one partition stays where it was created.
    let e = Scenario::from_json(
        r#"{"timeline":[{"at":0,"action":"reassign_verify","reassignment":{"partitions":[]}}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        (
            "timeline[0].reassignment",
            "`reassignment` needs version 2 (\"version\": 2)"
        )
    );
}

#[test]
fn version_2_errors_name_the_field_and_range() {
    let set = |p: &str, v: Value| v2_error(&[(p, Some(v))]);
    // Versions.
    assert_eq!(
        set("/version", json!(3)),
        is(
            "version",
            "this build reads scenario format versions 1 and 2, got 3"
        )
    );
    // Version 1's topic fields, in version 2.
    let v1_field = |f: &str| {
        is(
            f,
            &format!("version 2 lists topics under `topics`, each with its name and its partitions and replication_factor or assignment; `{f}` is version 1's"),
        )
    };
    assert_eq!(set("/topic", json!("rep")), v1_field("topic"));
    assert_eq!(set("/topic", json!("orders")), v1_field("topic"));
    assert_eq!(set("/assignment", json!([1, 2])), v1_field("assignment"));
    assert_eq!(
        set("/replication_factor", json!(3)),
        v1_field("replication_factor")
    );
    // Topics: how many.
    assert_eq!(
        v2_error(&[("/topics", None)]),
        is("topics", "a version-2 scenario lists 1..=200 topics, got 0")
    );
    assert_eq!(
        set("/topics", json!([])),
        is("topics", "a version-2 scenario lists 1..=200 topics, got 0")
    );
    let many: Vec<Value> = (0..201).map(|i| json!({"name": format!("t{i}")})).collect();
    assert_eq!(
        v2_error(&[
            ("/topics", Some(json!(many))),
            ("/timeline", Some(json!([])))
        ]),
        is(
            "topics",
            "a version-2 scenario lists 1..=200 topics, got 201"
        )
    );
    // Names: Topic.validate, duplicates and collisions.
    for bad in ["", "a b", "é", &"x".repeat(65)] {
        assert_eq!(
            set("/topics/1/name", json!(bad)),
            is("topics[1].name", &format!("{TOPIC_NAME} {bad:?}"))
        );
    }
    for bad in [".", ".."] {
        assert_eq!(
            set("/topics/1/name", json!(bad)),
            is(
                "topics[1].name",
                &format!("a topic name cannot be '.' or '..', got {bad:?}")
            )
        );
    }
    assert_eq!(
        set("/topics/2/name", json!("orders")),
        is("topics[2].name", "topic \"orders\" is already topics[0]")
    );
    assert_eq!(
        set("/topics/4/name", json!("p_q")),
        is(
            "topics[4].name",
            "Topic 'p_q' collides with existing topic: p.q (topics[3]): '.' and '_' collide in metric names"
        )
    );
    assert!(Scenario::from_json(
        &{
            let mut v = valid_v2();
            v["topics"][4]["name"] = json!("p-q");
            v
        }
        .to_string()
    )
    .is_ok());
    // Partitions and replication factor.
    for p in [0, 201] {
        assert_eq!(
            set("/topics/0/partitions", json!(p)),
            is(
                "topics[0].partitions",
                &format!("partitions must be in 1..=200, got {p}")
            )
        );
    }
    for rf in [0, 7] {
        assert_eq!(
            set("/topics/0/replication_factor", json!(rf)),
            is(
                "topics[0].replication_factor",
                &format!("replication_factor must be in 1..=6 (the broker count), got {rf}")
            )
        );
    }
    assert_eq!(
        set("/topics/0/partitions", json!(-1)),
        is(
            "topics[0].partitions",
            "invalid value: integer `-1`, expected u32"
        )
    );
    // An assignment, or partitions and a replication factor.
    let not_both = "a topic has either an assignment or partitions and replication_factor, not both (a manual assignment sets them: one replica list per partition)";
    assert_eq!(
        set("/topics/1/partitions", json!(2)),
        is("topics[1].partitions", not_both)
    );
    assert_eq!(
        set("/topics/1/replication_factor", json!(2)),
        is("topics[1].replication_factor", not_both)
    );
    // validateManualPartitionAssignment, with Kafka's words.
    assert_eq!(
        set("/topics/1/assignment", json!([])),
        is(
            "topics[1].assignment",
            "a manual assignment lists 1..=200 partitions (a replica list each), got 0"
        )
    );
    assert_eq!(
        set("/topics/1/assignment", json!([[1, 2], []])),
        is(
            "topics[1].assignment[1]",
            "The manual partition assignment includes an empty replica list."
        )
    );
    for b in [0, 7] {
        assert_eq!(
            set("/topics/1/assignment", json!([[1, 2], [3, b]])),
            is(
                "topics[1].assignment[1][1]",
                &format!("The manual partition assignment includes broker {b}, but no such broker is registered (brokers are 1..=6).")
            )
        );
    }
    assert_eq!(
        set("/topics/1/assignment", json!([[1, 2], [3, 3]])),
        is(
            "topics[1].assignment[1][1]",
            "The manual partition assignment includes the broker 3 more than once."
        )
    );
    assert_eq!(
        set("/topics/1/assignment", json!([[1, 2], [3, 4], [5]])),
        is(
            "topics[1].assignment[2]",
            "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."
        )
    );
    assert_eq!(
        set("/topics/1/assignment", json!([[1, 2, 3]])),
        is(
            "timeline[28].partition",
            "partition must be one of 0..=0 (topic move has 1), got 1"
        )
    );
    // At most 200 partitions over all topics: the topic that passes the limit is named.
    assert_eq!(
        set("/topics/3/partitions", json!(192)),
        is(
            "topics[3].partitions",
            "at most 200 partitions over all topics, got 201 with this topic's"
        )
    );
    let lists: Vec<Value> = (0..195).map(|_| json!([1])).collect();
    assert_eq!(
        set("/topics/1/assignment", json!(lists)),
        is(
            "topics[1].assignment",
            "at most 200 partitions over all topics, got 201 with this topic's"
        )
    );
    // Topic configs: Kafka's names and ranges; above the replication factor is allowed.
    for m in [0u64, 2_147_483_648] {
        assert_eq!(
            set("/topics/0/configs/min.insync.replicas", json!(m)),
            is(
                "topics[0].configs.min.insync.replicas",
                &format!("min.insync.replicas must be a whole number in 1..=2147483647, got {m}")
            )
        );
    }
    assert_eq!(
        set("/topics/0/configs/retention.ms", json!(1000)),
        is(
            "topics[0].configs",
            "unknown field `retention.ms`, expected one of `min.insync.replicas`, `unclean.leader.election.enable`, `flush.messages`, `flush.ms`"
        )
    );
    assert_eq!(
        set(
            "/topics/0/configs/unclean.leader.election.enable",
            json!("true")
        ),
        is(
            "topics[0].configs.unclean.leader.election.enable",
            "invalid type: string \"true\", expected a boolean"
        )
    );
    // A topic's own fields.
    assert_eq!(
        set("/topics/0/replicas", json!([1])),
        is(
            "topics[0]",
            "unknown field `replicas`, expected one of `name`, `partitions`, `replication_factor`, `assignment`, `configs`"
        )
    );
    assert_eq!(
        v2_error(&[("/topics/2/name", None)]),
        is("topics[2]", "missing field `name`")
    );
    // Racks.
    assert_eq!(
        set("/racks/7", json!("a")),
        is("racks.7", "broker must be one of 1..=6, got 7")
    );
    assert_eq!(
        set("/racks/0", json!("a")),
        is("racks.0", "broker must be one of 1..=6, got 0")
    );
    for key in ["x", "01", "-1", "+1", " 1", "1.0"] {
        assert_eq!(
            set(&format!("/racks/{key}"), json!("a")),
            is(
                &format!("racks.{key}"),
                &format!("a key of racks is a broker id, such as \"1\", got {key:?}")
            )
        );
    }
    for bad in ["", "a b", "ü", &"r".repeat(65)] {
        assert_eq!(
            set("/racks/1", json!(bad)),
            is(
                "racks.1",
                &format!("a rack name is 1..=64 characters of ASCII letters, digits, '.', '_' and '-', got {bad:?}")
            )
        );
    }
    assert_eq!(
        set("/racks/1", json!(3)),
        is("racks.1", "invalid type: integer `3`, expected a string")
    );
    // Zones: a rack of the cluster, named in the error with the racks there are.
    for i in 30..34 {
        assert_eq!(
            set(&format!("/timeline/{i}/zone"), json!("d")),
            is(
                &format!("timeline[{i}].zone"),
                "zone must be one of the racks a, b, zone-c.1_x, got \"d\""
            )
        );
    }
    assert_eq!(
        v2_error(&[("/racks", Some(json!({})))]),
        is(
            "timeline[30].zone",
            "zone must be a rack, but no broker has one (`racks`), got \"a\""
        )
    );
    assert_eq!(
        set("/timeline/30/broker", json!(1)),
        is("timeline[30]", "unknown field `broker`, expected `zone`")
    );
    // The consumer's client.rack.
    assert_eq!(
        set("/client_rack", json!("a b")),
        is(
            "client_rack",
            "a rack name is 1..=64 characters of ASCII letters, digits, '.', '_' and '-', got \"a b\""
        )
    );
    // replica.selector.class: the rack-aware selector or null, nothing else.
    assert_eq!(
        set("/config/replica.selector.class", json!("org.apache.kafka.common.replica.LeaderSelector")),
        is(
            "config.replica.selector.class",
            "replica.selector.class must be org.apache.kafka.common.replica.RackAwareReplicaSelector or null (the default: consumers read from the leader), got \"org.apache.kafka.common.replica.LeaderSelector\""
        )
    );
    // Sizes and keys.
    assert_eq!(
        set("/record_size_bytes", json!(1_000_001)),
        is(
            "record_size_bytes",
            "record_size_bytes must be a value size in bytes in 0..=1000000, got 1000001"
        )
    );
    assert_eq!(
        set("/timeline/25/size", json!(1_000_001)),
        is(
            "timeline[25].size",
            "size must be a value size in bytes in 0..=1000000, got 1000001"
        )
    );
    assert_eq!(
        set("/timeline/25/size", json!(-1)),
        is(
            "timeline[25].size",
            "invalid value: integer `-1`, expected u32"
        )
    );
    assert_eq!(
        set("/timeline/25/key", json!("k".repeat(65))),
        is(
            "timeline[25].key",
            "a key may be at most 64 characters, got 65"
        )
    );
    assert_eq!(
        set("/config/batch.size", json!(2_147_483_648u64)),
        is(
            "config.batch.size",
            "batch.size must be a whole number in 0..=2147483647, got 2147483648"
        )
    );
    // leader.imbalance.check.interval.seconds: ReplicationConfigs' LONG, atLeast(1).
    assert_eq!(
        set("/config/leader.imbalance.check.interval.seconds", json!(0)),
        is(
            "config.leader.imbalance.check.interval.seconds",
            "leader.imbalance.check.interval.seconds must be a whole number in 1..=9223372036854775807, got 0"
        )
    );
    assert_eq!(
        set(
            "/config/leader.imbalance.check.interval.seconds",
            json!(9_223_372_036_854_775_808u64)
        ),
        is(
            "config.leader.imbalance.check.interval.seconds",
            "leader.imbalance.check.interval.seconds must be a whole number in 1..=9223372036854775807, got 9223372036854775808"
        )
    );
    assert_eq!(
        set(
            "/config/leader.imbalance.check.interval.seconds",
            json!("60")
        ),
        is(
            "config.leader.imbalance.check.interval.seconds",
            "invalid type: string \"60\", expected u64"
        )
    );
    // Produce and consume targets: a topic of the scenario, one of its partitions.
    assert_eq!(
        set("/timeline/24/topic", json!("nope")),
        is(
            "timeline[24].topic",
            "topic must be one of the scenario's topics, got \"nope\""
        )
    );
    assert_eq!(
        set("/timeline/24/partition", json!(6)),
        is(
            "timeline[24].partition",
            "partition must be one of 0..=5 (topic orders has 6), got 6"
        )
    );
    assert_eq!(
        set("/timeline/28/partition", json!(2)),
        is(
            "timeline[28].partition",
            "partition must be one of 0..=1 (topic move has 2), got 2"
        )
    );
    // Without a topic, the first topic's partitions.
    assert_eq!(
        set("/timeline/26/partition", json!(6)),
        is(
            "timeline[26].partition",
            "partition must be one of 0..=5 (topic orders has 6), got 6"
        )
    );
    assert_eq!(
        set("/timeline/25/partition", json!(-1)),
        is(
            "timeline[25].partition",
            "invalid value: integer `-1`, expected u32"
        )
    );
    // The read-outs' targets (epochs, dump_log) and an expectation's, the same way.
    assert_eq!(
        set("/timeline/38/partition", json!(6)),
        is(
            "timeline[38].partition",
            "partition must be one of 0..=5 (topic orders has 6), got 6"
        )
    );
    assert_eq!(
        set("/timeline/40/topic", json!("nope")),
        is(
            "timeline[40].topic",
            "topic must be one of the scenario's topics, got \"nope\""
        )
    );
    assert_eq!(
        set("/expect/1/partition", json!(6)),
        is(
            "expect[1].partition",
            "partition must be one of 0..=5 (topic orders has 6), got 6"
        )
    );
    assert_eq!(
        set("/expect/2/topic", json!("plain")),
        is(
            "expect[2].partition",
            "partition must be one of 0..=0 (topic plain has 1), got 1"
        )
    );
    assert_eq!(
        set("/expect/1/topic", json!(7)),
        is(
            "expect[1].topic",
            "invalid type: integer `7`, expected a string"
        )
    );
}

#[test]
fn version_1_refuses_version_2_fields() {
    let v1 = |change: &dyn Fn(&mut Value)| {
        let mut v = full_scenario();
        change(&mut v);
        let e = same(&v.to_string()).expect_err("rejected");
        (e.field, e.message)
    };
    let needs = |f: &str, name: &str| is(f, &format!("`{name}` needs version 2 (\"version\": 2)"));
    assert_eq!(
        v1(&|v| v["topics"] = json!([{"name": "orders"}])),
        needs("topics", "topics")
    );
    assert_eq!(
        v1(&|v| v["racks"] = json!({"1": "a"})),
        needs("racks", "racks")
    );
    assert_eq!(
        v1(&|v| v["client_rack"] = json!("a")),
        needs("client_rack", "client_rack")
    );
    assert_eq!(
        v1(&|v| v["timeline"][0] = json!({"at": 0, "action": "lose_zone", "zone": "a"})),
        needs("timeline[0].zone", "zone")
    );
    assert_eq!(
        v1(&|v| v["timeline"][0]["topic"] = json!("top.ic-1")),
        needs("timeline[0].topic", "topic")
    );
    assert_eq!(
        v1(&|v| v["timeline"][0]["partition"] = json!(0)),
        needs("timeline[0].partition", "partition")
    );
    assert_eq!(
        v1(&|v| v["timeline"][3]["partition"] = json!(0)),
        needs("timeline[3].partition", "partition")
    );
    assert_eq!(
        v1(&|v| v["timeline"][0]["key"] = json!("k")),
        needs("timeline[0].key", "key")
    );
    assert_eq!(
        v1(&|v| v["timeline"][0]["size"] = json!(10)),
        needs("timeline[0].size", "size")
    );
    assert_eq!(
        v1(&|v| v["record_size_bytes"] = json!(10)),
        needs("record_size_bytes", "record_size_bytes")
    );
    // Without a version, a scenario is version 1.
    assert_eq!(
        v1(&|v| {
            v.as_object_mut().unwrap().remove("version");
            v["racks"] = json!({"1": "a"});
        }),
        needs("racks", "racks")
    );
}

/// The read-outs of issue 14's step 9: `describe` with `--topic` and the filters (version 2
/// only), `metrics` with an optional metric name. Read as serde reads them, written back
/// with only the fields given, and refused with the field named.
#[test]
fn describe_and_metrics_fields_read_as_serde_reads_them() {
    let with = |base: Value, actions: Value| {
        let mut v = base;
        v["timeline"] = actions;
        v
    };
    let actions = json!([
        {"at": 1, "action": "describe", "topic": "orders"},
        {"at": 2, "action": "describe", "under_replicated_partitions": true, "under_min_isr_partitions": true,
         "at_min_isr_partitions": true, "unavailable_partitions": true},
        {"at": 3, "action": "describe", "topic": "move", "at_min_isr_partitions": false},
        {"at": 4, "action": "metrics"},
        {"at": 5, "action": "metrics", "name": "MaxLag"}
    ]);
    let s = same(&with(valid_v2(), actions.clone()).to_string()).expect("valid");
    let Action::Describe(d) = &s.timeline[1].action else {
        panic!("{:?}", s.timeline[1])
    };
    assert_eq!(d.filters(), [true; 4]);
    assert_eq!(
        Scenario::from_json(&watermark_engine::scenario_json::scenario(&s, false)).unwrap(),
        s
    );
    assert_eq!(Scenario::from_json(&s.to_json_pretty()).unwrap(), s);
    // A false filter is not written; a version-1 describe writes no field, as before.
    assert!(
        s.to_json_pretty().matches("at_min_isr_partitions").count() == 1,
        "{}",
        s.to_json_pretty()
    );
    let v1 = same(&with(full_scenario(), json!([{"at": 1, "action": "describe"}])).to_string())
        .expect("valid");
    assert!(v1.to_json_pretty().contains("\"action\": \"describe\"\n"));

    let err = |base: Value, action: Value| {
        let e = same(&with(base, json!([action])).to_string()).expect_err("rejected");
        (e.field, e.message)
    };
    assert_eq!(
        err(
            valid_v2(),
            json!({"at": 1, "action": "describe", "topic": "nope"})
        ),
        is(
            "timeline[0].topic",
            "topic must be one of the scenario's topics, got \"nope\""
        )
    );
    assert_eq!(
        err(
            full_scenario(),
            json!({"at": 1, "action": "describe", "topic": "top.ic-1"})
        ),
        is(
            "timeline[0].topic",
            "`topic` needs version 2 (\"version\": 2)"
        )
    );
    assert_eq!(
        err(
            full_scenario(),
            json!({"at": 1, "action": "describe", "unavailable_partitions": true})
        ),
        is(
            "timeline[0].unavailable_partitions",
            "`unavailable_partitions` needs version 2 (\"version\": 2)"
        )
    );
    assert_eq!(
        err(
            valid_v2(),
            json!({"at": 1, "action": "describe", "partition": 0})
        )
        .0,
        "timeline[0]"
    );
    let (field, message) = err(
        valid_v2(),
        json!({"at": 1, "action": "metrics", "name": "Nope"}),
    );
    assert_eq!(field, "timeline[0].name");
    assert!(
        message.starts_with("name must be one of UnderReplicatedPartitions, ")
            && message.ends_with(", record-retry-total, got \"Nope\""),
        "{message}"
    );
}
