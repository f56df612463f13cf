//! `watermark_engine::json` reads and writes JSON without serde's machinery, to keep it out
//! of the shipped wasm; `watermark_engine::scenario_json` writes scenarios with it. These
//! tests hold them to serde_json as the reference: the same `Value` and the same error
//! message (line and column included) for valid, truncated and mutated texts, and the same
//! bytes for every scenario written compact and pretty.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use watermark_engine::json;
use watermark_engine::presets::{preset, PRESETS};
use watermark_engine::rng::Rng;
use watermark_engine::scenario_json;
use watermark_engine::share;
use watermark_engine::Scenario;

fn same_parse(text: &str) {
    let reference = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
    let ours = json::parse(text);
    // The engine's own value, as serde_json's (through its `Serialize`), and its text.
    let hand = ours
        .as_ref()
        .map(|v| serde_json::to_value(v).expect("converts"))
        .map_err(String::clone);
    match (&hand, &reference) {
        // Compared as text too: `Value`'s `==` takes 0.0 and -0.0 for the same number.
        (Ok(a), Ok(b)) => assert!(
            a == b
                && serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
                && ours.as_ref().map(json::value_text).ok() == Some(b.to_string()),
            "{text:?}: {a} != {b}"
        ),
        _ => assert_eq!(hand, reference, "on {text:?}"),
    }
}

const CASES: &[&str] = &[
    "",
    " ",
    "n",
    "nul",
    "nulx",
    "null",
    "true",
    "tru",
    "trux",
    "false",
    "fals",
    "nullx",
    "null null",
    "[",
    "]",
    "[]",
    "[ ]",
    "[1",
    "[1,",
    "[1,]",
    "[1 2]",
    "[1,2]",
    "[[[]]]",
    "{",
    "}",
    "{}",
    "{ }",
    "{\"a\"",
    "{\"a\":",
    "{\"a\":1",
    "{\"a\":1,",
    "{\"a\":1,}",
    "{\"a\" 1}",
    "{1:2}",
    "{\"a\":1 \"b\":2}",
    "{\"a\":1,\"a\":2}",
    "{\"b\":1,\"a\":[{}]}",
    "{\"a\":1,2}",
    "\"",
    "\"abc",
    "\"abc\"",
    "\"a\\",
    "\"a\\x\"",
    "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
    "\"\\u\"",
    "\"\\u12\"",
    "\"\\u12",
    "\"\\u0041\"",
    "\"\\u00e9\"",
    "\"\\uzzzz\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud83d\"",
    "\"\\ud83dx\"",
    "\"\\ud83d\\x\"",
    "\"\\ud83d\\u0041\"",
    "\"\\ude00\"",
    "\"\\ud83d",
    "\"\\ud83d\\",
    "\"a\u{1}b\"",
    "\"tab\there\"",
    "\"é€😀\"",
    "0",
    "-0",
    "-",
    "-x",
    "00",
    "01",
    "0.",
    "0.x",
    "0.5",
    "-0.5",
    "1e",
    "1e+",
    "1e-",
    "1ex",
    "1e5",
    "1E5",
    "1e-5",
    "1.5e3",
    "1.5E-3",
    "123456789012345678901234567890",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616.1",
    "1.8446744073709551616e3",
    "0.18446744073709551616",
    "1e308",
    "1e309",
    "-1e309",
    "1e-400",
    "0e99999999999",
    "1e99999999999",
    "1e-99999999999",
    "-0e5",
    "4.9e-324",
    "2.2250738585072014e-308",
    "0.1",
    "0.30000000000000004",
    "123.456e-7",
    "1.7976931348623157e308",
    "[1.5,-2,3e2]",
    "\n\n  x",
    "[\n1,\n]",
    "{\n\"a\": tru }",
    "\t\r\n null \t\r\n",
    "nan",
    "Infinity",
    "+1",
    ".5",
    "[,]",
    "[1,,2]",
    "{,}",
    "{\"a\":1,,}",
    "\u{feff}null",
];

#[test]
fn parses_as_serde_json_does() {
    for case in CASES {
        same_parse(case);
    }
    let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
    for n in [126, 127, 128, 129, 200] {
        same_parse(&deep(n));
        same_parse(&"{\"a\":".repeat(n));
    }
}

#[test]
fn parses_presets_and_their_damaged_copies_as_serde_json_does() {
    let mut rng = Rng::new(12);
    let bytes: &[u8] = b"{}[]\",:\\ 0123456789.eE+-ntfu\n\x01ax";
    for p in PRESETS {
        let text = preset(p.name).unwrap().to_json_pretty();
        same_parse(&text);
        let step = (text.len() / 300).max(1);
        for cut in (0..text.len()).step_by(step) {
            if text.is_char_boundary(cut) {
                same_parse(&text[..cut]);
            }
        }
        for _ in 0..600 {
            let mut t = text.clone().into_bytes();
            let at = (rng.next_u64() % t.len() as u64) as usize;
            let b = bytes[(rng.next_u64() % bytes.len() as u64) as usize];
            match rng.next_u64() % 3 {
                0 => t[at] = b,
                1 => t.insert(at, b),
                _ => {
                    t.remove(at);
                }
            }
            if let Ok(t) = String::from_utf8(t) {
                same_parse(&t);
            }
        }
    }
}

/// Random numbers of every shape (signs, long significands, fractions, exponents up to
/// ±700), as serde_json reads them: the reader computes powers of ten instead of keeping
/// serde_json's table.
#[test]
fn parses_numbers_as_serde_json_does() {
    let mut rng = Rng::new(0x10E5);
    let digit = |rng: &mut Rng| char::from(b'0' + rng.below_or_equal(9) as u8);
    for _ in 0..50_000 {
        let mut s = String::new();
        if rng.below_or_equal(1) == 0 {
            s.push('-');
        }
        s.push(char::from(b'1' + rng.below_or_equal(8) as u8));
        for _ in 0..rng.below_or_equal(24) {
            s.push(digit(&mut rng));
        }
        if rng.below_or_equal(1) == 0 {
            s.push('.');
            for _ in 0..=rng.below_or_equal(20) {
                s.push(digit(&mut rng));
            }
        }
        if rng.below_or_equal(2) != 0 {
            s.push(if rng.below_or_equal(1) == 0 { 'e' } else { 'E' });
            s.push_str(["", "-", "+"][rng.below_or_equal(2) as usize]);
            s.push_str(&rng.below_or_equal(700).to_string());
        }
        same_parse(&s);
    }
}

/// The writer's bytes are the derive's; for version 2, the derive's without version 1's
/// topic fields (see `writes_version_2_as_serde_json_does_without_version_1s_topic`).
fn same_text(s: &Scenario) {
    let (mut compact, mut pretty) = (
        serde_json::to_string(s).unwrap(),
        serde_json::to_string_pretty(s).unwrap(),
    );
    if s.version >= 2 {
        compact = compact
            .replace(r#""topic":"rep","#, "")
            .replace(r#""assignment":[],"replication_factor":null,"#, "");
        pretty = pretty.replace("\n  \"topic\": \"rep\",", "").replace(
            "\n  \"assignment\": [],\n  \"replication_factor\": null,",
            "",
        );
    }
    assert_eq!(scenario_json::scenario(s, false), compact);
    assert_eq!(scenario_json::scenario(s, true), pretty);
}

/// Every action, every expectation field, every optional config, odd strings and values, of
/// version 1.
fn every_v1_field() -> Value {
    json!({
        "version": 1, "title": "q\"uote \\ back\nline\ttab\u{1}\u{1f} é€😀 \u{7f}",
        "topic": "t", "brokers": 4, "assignment": [2, 1, 3], "replication_factor": 3,
        "seed": 18446744073709551615u64,
        "config": {"enable.idempotence": false, "max.in.flight.requests.per.connection": 1},
        "links": [{"a": 1, "b": "controller", "latency_ms": 40}, {"a": "controller", "b": 2, "latency_ms": 0}],
        "timeline": [
            {"at": 0, "action": "produce", "acks": "1", "values": ["a", "b"], "prefix": "p", "count": 3, "start": 7, "one_by_one": true, "retries": 2, "to": 2},
            {"at": 1, "action": "produce", "acks": "0", "values": ["x"]},
            {"at": 2, "action": "produce"},
            {"at": 3, "action": "consume", "max_records": 5, "from_beginning": true},
            {"at": 4, "action": "consume"},
            {"at": 5, "action": "freeze", "broker": 1}, {"at": 6, "action": "thaw", "broker": 1},
            {"at": 7, "action": "kill", "broker": 2}, {"at": 8, "action": "stop", "broker": 3},
            {"at": 9, "action": "start", "broker": 2}, {"at": 10, "action": "slow", "broker": 1, "ms": 300},
            {"at": 11, "action": "cut", "a": 1, "b": "controller"}, {"at": 12, "action": "heal", "a": "controller", "b": 1},
            {"at": 13, "action": "lose_disk", "broker": 3},
            {"at": 14, "action": "set_config", "name": "min.insync.replicas", "value": 2},
            {"at": 15, "action": "set_config", "name": "min.insync.replicas", "value": "2"},
            {"at": 16, "action": "set_config", "name": "unclean.leader.election.enable", "value": true},
            {"at": 17, "action": "elect_preferred"}, {"at": 18, "action": "elect_unclean"},
            {"at": 19, "action": "describe"}, {"at": 20, "action": "offsets"},
            {"at": 21, "action": "epochs"}, {"at": 22, "action": "checkpoints"},
            {"at": 23, "action": "dump_log", "broker": 4}, {"at": 24, "action": "note", "text": "a \"note\"\n"},
            {"at": 25, "action": "cancel_produce"}
        ],
        "end_ms": 60000,
        "expect": [
            {"at": 5, "label": "l", "since": 1, "describe": "d", "leader": 2, "isr": [1, 2], "elr": [], "broker": 1,
             "leo": 3, "hw": 2, "offsets": "rep:0:2", "produce": "p", "error": "E", "loss": true, "lost": [1, 2],
             "caption": "c", "line": "x"},
            {"at": 6, "leader": "none"}
        ],
        "off_script_ms": 16000
    })
}

#[test]
fn writes_scenarios_as_serde_json_does() {
    // The derived `Serialize` writes version 1's fields; a version-2 preset is written only
    // by hand (its reading back is checked in tests/scenario_json.rs).
    for p in PRESETS {
        // Version 2 is written without version 1's topic fields, which the derived
        // Serialize writes (docs/scenario-format.md, "Writing"): version 1 only here.
        let s = preset(p.name).unwrap();
        if s.version < 2 {
            same_text(&s);
        }
    }
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/links")).unwrap() {
        // A title line, then the link.
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let link = text.lines().nth(1).unwrap();
        let s = share::decode(link).unwrap();
        same_text(&s);
    }
    let every = every_v1_field();
    // Read by serde (no validation: the writer must write what it is given).
    let s: Scenario = serde_json::from_value(every).unwrap();
    same_text(&s);
    // The follower-fetching and zone checks, after every other field of an expectation.
    let mut with_zones = s.clone();
    with_zones.expect.extend(
        serde_json::from_value::<Vec<watermark_engine::expect::Expectation>>(json!([
            {"at": 7, "caption": "c", "preferred_read_replica": 3, "read_from": 2, "client_rack": "r",
             "fenced": [2, 1], "zone": "z", "zone_state": "lost"},
            {"at": 8, "preferred_read_replica": "none", "client_rack": "", "fenced": []},
            {"at": 9, "topic": "a", "zone": "z", "under_replicated_partitions": 2,
             "under_min_isr_partitions": ["a-0", "b-1"], "at_min_isr_partitions": [],
             "unavailable_partitions": 0}
        ]))
        .unwrap(),
    );
    same_text(&with_zones);
    // Side by side (`compare`) and the expectations of a run, after the others.
    let mut compared = s.clone();
    compared.compare = serde_json::from_value(json!([
        {"label": "l\"1", "protocol": "no-elr", "acks": "1",
         "config": {"min.insync.replicas": 1, "unclean.leader.election.enable": true, "replica.selector.class": null}},
        {"acks": "-1"}, {"protocol": "kafka-4"}, {"config": {"retries": 0, "batch.size": "x"}}
    ]))
    .unwrap();
    compared.expect[0].run = Some(1);
    compared.expect[1].run = Some(2);
    same_text(&compared);
    let mut s2 = s.clone();
    s2.expect.clear();
    s2.end_ms = None;
    s2.replication_factor = None;
    s2.assignment.clear();
    same_text(&s2);
    same_text(&Scenario::default());
}

#[test]
fn writes_values_as_display_does() {
    for v in [
        json!(null),
        json!(true),
        json!(0),
        json!(-5),
        json!(1.5),
        json!(-0.0),
        json!(1e300),
        json!("a\"b\\c\u{0}\u{1f}\u{7f}é"),
        json!([]),
        json!({}),
        json!([1, [2, {"b": 1, "a": [null]}]]),
    ] {
        let ours: json::Value = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(json::value_text(&ours), v.to_string());
        assert_eq!(serde_json::to_value(&ours).unwrap(), v);
    }
    // Set-config actions hold any value; the scenario writes it as serde_json would.
    let mut s = Scenario::default();
    s.timeline.push(watermark_engine::scenario::TimedAction {
        at: 0,
        action: watermark_engine::Action::SetConfig {
            name: "x".into(),
            value: serde_json::from_value(json!({"z": [1.25, -3, "s"], "a": {"b": null}})).unwrap(),
        },
    });
    same_text(&s);
}

/// A version-2 scenario with every field of version 2 set.
const VERSION_2: &str = r#"{"version":2,"title":"clusters","brokers":6,
    "racks":{"1":"a","2":"a","3":"b","4":"b","5":"c","6":"c"},
    "topics":[
        {"name":"orders","partitions":6,"replication_factor":3,
         "configs":{"min.insync.replicas":2,"unclean.leader.election.enable":false}},
        {"name":"move","assignment":[[1,2],[2,3]]},
        {"name":"plain"}],
    "timeline":[
        {"at":0,"action":"produce","topic":"orders","partition":2,"prefix":"v","count":10},
        {"at":900,"action":"consume","topic":"orders","partition":2},
        {"at":901,"action":"consume"}]}"#;

/// Version 2 is written as the derived `Serialize` writes it, but for version 1's topic
/// fields (`topic`, `assignment`, `replication_factor`), which version 2 refuses and the
/// derive cannot leave out by version.
#[test]
fn writes_version_2_as_serde_json_does_without_version_1s_topic() {
    let s = Scenario::from_json(VERSION_2).unwrap();
    let compact = serde_json::to_string(&s).unwrap();
    let left_out = compact
        .replace(r#""topic":"rep","#, "")
        .replace(r#""assignment":[],"replication_factor":null,"#, "");
    assert_ne!(left_out, compact);
    assert_eq!(scenario_json::scenario(&s, false), left_out);
    let pretty = serde_json::to_string_pretty(&s).unwrap();
    let left_out = pretty.replace("\n  \"topic\": \"rep\",", "").replace(
        "\n  \"assignment\": [],\n  \"replication_factor\": null,",
        "",
    );
    assert_ne!(left_out, pretty);
    assert_eq!(scenario_json::scenario(&s, true), left_out);
}

/// The bytes of a version-2 scenario: version 1's topic fields left out, `racks` after
/// `brokers`, `topics` after them; a topic's fields as given, in the order of
/// `NewTopic`; a produce's and a consume's target last.
#[test]
fn writes_version_2_in_this_order() {
    let s = Scenario::from_json(VERSION_2).unwrap();
    let text = scenario_json::scenario(&s, false);
    assert!(
        text.starts_with(concat!(
            r#"{"version":2,"title":"clusters","description":"","source":"","brokers":6,"#,
            r#""racks":{"1":"a","2":"a","3":"b","4":"b","5":"c","6":"c"},"topics":["#,
            r#"{"name":"orders","partitions":6,"replication_factor":3,"#,
            r#""configs":{"min.insync.replicas":2,"unclean.leader.election.enable":false}},"#,
            r#"{"name":"move","assignment":[[1,2],[2,3]]},{"name":"plain"}],"#,
            r#""seed":0,"config":{"#,
        )),
        "{text}"
    );
    let timeline = &text[text.find(r#""timeline""#).unwrap()..];
    assert_eq!(
        timeline,
        concat!(
            r#""timeline":[{"at":0,"action":"produce","acks":"all","values":[],"prefix":"v","#,
            r#""count":10,"start":null,"one_by_one":false,"retries":null,"to":null,"#,
            r#""topic":"orders","partition":2},"#,
            r#"{"at":900,"action":"consume","max_records":null,"from_beginning":false,"#,
            r#""topic":"orders","partition":2},"#,
            r#"{"at":901,"action":"consume","max_records":null,"from_beginning":false}],"#,
            r#""end_ms":null}"#
        )
    );
    // Read back: the same scenario, and written again, the same bytes.
    let back = Scenario::from_json(&text).unwrap();
    assert_eq!(back, s);
    assert_eq!(scenario_json::scenario(&back, false), text);
    assert_eq!(
        Scenario::from_json(&s.to_json_pretty())
            .unwrap()
            .to_json_pretty(),
        s.to_json_pretty()
    );
}

/// Version 1 is written as before version 2, byte for byte: the files in `tests/format/`
/// were written by the build before it (commit 4c66d03), compact and pretty.
#[test]
fn version_1_is_written_byte_for_byte_as_before_version_2() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/format");
    let every: Scenario = serde_json::from_value(every_v1_field()).unwrap();
    let frozen = preset("frozen-follower").unwrap();
    for (file, text) in [
        (
            "v1-every-field.json",
            scenario_json::scenario(&every, false),
        ),
        (
            "v1-every-field.pretty.json",
            scenario_json::scenario(&every, true),
        ),
        ("v1-frozen-follower.pretty.json", frozen.to_json_pretty()),
        (
            "v1-default.json",
            scenario_json::scenario(&Scenario::default(), false),
        ),
    ] {
        let before = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(text, before, "{file}");
    }
    // Read and written again: the same bytes.
    for file in ["v1-frozen-follower.pretty.json", "v1-default.json"] {
        let before = std::fs::read_to_string(dir.join(file)).unwrap();
        let s = Scenario::from_json(&before).unwrap();
        let pretty = file.contains("pretty");
        assert_eq!(scenario_json::scenario(&s, pretty), before, "{file}");
    }
}
