//! The `watermark` binary run as a user runs it: on the preset files in `engine/presets/`,
//! on scenario files written here, and on damaged links.

mod common;

use common::{stderr, stdout, watermark};
use std::path::{Path, PathBuf};
use watermark_engine::Scenario;

fn preset_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/presets");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("engine/presets exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "every preset file is found");
    files
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("watermark-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("written");
    path
}

#[test]
fn link_then_decode_gives_back_every_preset_file() {
    for file in preset_files() {
        let path = file.to_str().expect("a UTF-8 path");
        let o = watermark(&["link", path]);
        assert!(o.status.success(), "{path}: {}", stderr(&o));
        let link = stdout(&o);
        let link = link.trim();
        assert!(link.starts_with("w1."), "{link}");
        let o = watermark(&["decode", link]);
        assert!(o.status.success(), "{path}: {}", stderr(&o));
        let decoded = Scenario::from_json(&stdout(&o)).expect("decode prints a scenario");
        let original = Scenario::from_json(&std::fs::read_to_string(&file).expect("readable"))
            .expect("parses");
        assert_eq!(decoded, original, "{path}");
    }
}

#[test]
fn link_with_a_base_is_a_whole_url_that_decode_reads() {
    let file = temp_file(
        "small.json",
        r#"{"title":"Small","brokers":2,"end_ms":1000}"#,
    );
    let o = watermark(&[
        "link",
        "--base",
        "https://example.org/docs/watermark/",
        file.to_str().expect("UTF-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let url = stdout(&o).trim().to_string();
    assert!(
        url.starts_with("https://example.org/docs/watermark/#s=w1."),
        "{url}"
    );
    // The whole URL, with a query, and its fragment alone all decode.
    let with_query = url.replace("/#s=", "/?t=500&autoplay=1#s=");
    let fragment = url[url.find('#').expect("a fragment")..].to_string();
    for link in [&url, &with_query, &fragment] {
        let o = watermark(&["decode", link]);
        assert!(o.status.success(), "{link}: {}", stderr(&o));
        let s = Scenario::from_json(&stdout(&o)).expect("a scenario");
        assert_eq!((s.title.as_str(), s.brokers), ("Small", 2));
    }
    let o = watermark(&["link", "--preset", "min-isr-3"]);
    assert!(o.status.success());
    let o = watermark(&["decode", stdout(&o).trim()]);
    assert!(
        stdout(&o).contains("\"topic\": \"strict\""),
        "{}",
        stdout(&o)
    );
}

#[test]
fn damaged_links_fail_with_the_decoders_error() {
    let o = watermark(&["link", "--preset", "frozen-follower"]);
    let good = stdout(&o).trim().to_string();
    let cases: Vec<(String, &str)> = vec![
        (good[..good.len() - 7].to_string(), "cut short"),
        (
            format!("w1.!{}", &good[4..]),
            "character 1 of the link is not base64url",
        ),
        (good.replacen("w1.", "w7.", 1), "not one this build reads"),
        (
            "https://example.org/#s=".to_string(),
            "the link holds no scenario",
        ),
        ("nonsense".to_string(), "format tag"),
    ];
    for (link, says) in cases {
        let o = watermark(&["decode", &link]);
        assert!(!o.status.success(), "{link} must fail");
        let err = stderr(&o);
        assert!(err.contains("the link cannot be opened"), "{err}");
        assert!(err.contains(says), "{link}: {err} should say {says:?}");
        assert!(stdout(&o).is_empty(), "nothing on stdout: {}", stdout(&o));
    }
    // A link whose scenario is out of range names the field and the range.
    let bad = Scenario {
        brokers: 50,
        ..Scenario::default()
    };
    let o = watermark(&["decode", &watermark_engine::share::encode(&bad)]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("brokers: brokers must be in 1..=12, got 50"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_files_and_arguments_are_clear_errors() {
    let o = watermark(&["link", "/no/such/file.json"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot read /no/such/file.json"),
        "{}",
        stderr(&o)
    );
    let file = temp_file("bad.json", r#"{"brokers":13}"#);
    let o = watermark(&["link", file.to_str().expect("UTF-8")]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("brokers must be in 1..=12, got 13"),
        "{}",
        stderr(&o)
    );
    let o = watermark(&["link", "--base"]);
    assert!(
        stderr(&o).contains("--base needs a value"),
        "{}",
        stderr(&o)
    );
    let o = watermark(&["decode"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("usage"));
}

#[test]
fn check_passes_on_every_preset_file_and_explains_a_failure() {
    let files = preset_files();
    let mut args = vec!["check"];
    args.extend(files.iter().map(|f| f.to_str().expect("UTF-8")));
    let o = watermark(&args);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), files.len(), "{out}");
    assert!(out.lines().all(|l| l.ends_with(", all met")), "{out}");
    let o = watermark(&["check", "--presets"]);
    assert!(o.status.success(), "{}", stdout(&o));

    // The same preset with two figures changed: each failure says what was expected,
    // what was found and when.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/presets/frozen-follower.json"),
    )
    .expect("readable");
    let wrong = text
        .replace(r#""offsets": "rep:0:18""#, r#""offsets": "rep:0:17""#)
        .replace(r#""broker": 3, "hw": 18"#, r#""broker": 3, "hw": 12"#);
    assert_ne!(
        wrong, text,
        "the preset file has the figures this test changes"
    );
    let file = temp_file("frozen-wrong.json", &wrong);
    let ok = temp_file(
        "ok.json",
        r#"{"end_ms":1000,"expect":[{"at":1000,"leader":1}]}"#,
    );
    let o = watermark(&[
        "check",
        file.to_str().expect("UTF-8"),
        ok.to_str().expect("UTF-8"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("frozen-wrong.json: 9 expectations, 2 NOT MET"),
        "{out}"
    );
    assert!(
        out.contains("expect[6] at 24.000s (\"high watermark = 18, Isr: 1,2\"): NOT MET"),
        "{out}"
    );
    assert!(
        out.contains("offsets: expected rep:0:17, got rep:0:18"),
        "{out}"
    );
    assert!(out.contains("hw of broker 3: expected 12, got 18"), "{out}");
    assert!(out.contains("ok.json: 1 expectation, all met"), "{out}");

    // A file that cannot be read or is invalid: exit 2, the others still checked.
    let bad = temp_file("bad-expect.json", r#"{"expect":[{"at":5,"isr":[4]}]}"#);
    let o = watermark(&[
        "check",
        "/no/such.json",
        bad.to_str().expect("UTF-8"),
        ok.to_str().expect("UTF-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(
        out.contains("/no/such.json: cannot be checked: cannot read"),
        "{out}"
    );
    assert!(
        out.contains("expect[0].isr[0]: broker must be one of 1..=3, got 4"),
        "{out}"
    );
    assert!(out.contains("ok.json: 1 expectation, all met"), "{out}");
}

#[test]
fn describe_filters_and_metrics_print_as_the_tools_do() {
    // A version-2 cluster with one broker stopped: the describe action's topic line and its
    // filters, the metrics action, and `run --metrics` in text and JSON.
    let file = temp_file(
        "readouts.json",
        r#"{"version": 2, "brokers": 3, "seed": 3,
          "topics": [{"name": "orders", "assignment": [[1, 2, 3], [2, 3, 1]],
                      "configs": {"min.insync.replicas": 2}}],
          "timeline": [
            {"at": 1000, "action": "describe", "topic": "orders"},
            {"at": 1000, "action": "stop", "broker": 3},
            {"at": 15000, "action": "describe", "under_replicated_partitions": true},
            {"at": 15000, "action": "describe", "at_min_isr_partitions": true, "topic": "orders"},
            {"at": 15000, "action": "describe", "unavailable_partitions": true},
            {"at": 15000, "action": "metrics", "name": "UnderReplicatedPartitions"}],
          "end_ms": 15000}"#,
    );
    let path = file.to_str().expect("UTF-8");
    let o = watermark(&["run", path, "--metrics"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let at = |t: &str| -> Vec<&str> {
        out.lines()
            .filter_map(|l| l.strip_prefix(t))
            .map(str::trim_start)
            .collect()
    };
    let first = at("[   1.000s]");
    assert!(
        first[0].starts_with("Topic: orders TopicId: ")
            && first[0].ends_with(
                " PartitionCount: 2 ReplicationFactor: 3 Configs: min.insync.replicas=2"
            ),
        "{first:?}"
    );
    assert_eq!(
        &first[1..3],
        [
            "Topic: orders Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:",
            "Topic: orders Partition: 1 Leader: 2 Replicas: 2,3,1 Isr: 2,3,1 Elr: LastKnownElr:"
        ]
    );
    // Broker 3 left both ISRs (controlled shutdown): both partitions are under-replicated
    // and at min ISR (2 of min 2), none unavailable; no topic line under a filter.
    let later: Vec<&str> = at("[  15.000s]");
    assert_eq!(
        &later[..7],
        [
            "Topic: orders Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:",
            "Topic: orders Partition: 1 Leader: 2 Replicas: 2,3,1 Isr: 2,1 Elr: LastKnownElr:",
            "Topic: orders Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:",
            "Topic: orders Partition: 1 Leader: 2 Replicas: 2,3,1 Isr: 2,1 Elr: LastKnownElr:",
            "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions broker=1 Value=1",
            "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions broker=2 Value=1",
            "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions broker=3 (not running)",
        ],
        "{out}"
    );
    // --metrics: every metric after the transcript, at the end time.
    assert!(out.ends_with(
        "[  15.000s] kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs controller Count=0\n\
         [  15.000s] kafka.producer:type=producer-metrics,client-id=producer-1 record-error-total=0\n\
         [  15.000s] kafka.producer:type=producer-metrics,client-id=producer-1 record-retry-total=0\n"
    ), "{out}");
    assert!(out.contains(
        "[  15.000s] kafka.server:type=ReplicaManager,name=LeaderCount cluster Value=2\n"
    ));

    let o = watermark(&["run", path, "--json", "--metrics"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    let last: serde_json::Value =
        serde_json::from_str(json.lines().last().expect("lines")).expect("JSON");
    assert_eq!(last["time_ms"], 15000);
    assert_eq!(last["metrics"]["cluster"]["under_replicated_partitions"], 2);
    assert_eq!(last["metrics"]["brokers"][2]["running"], false);
    // The metrics action's lines are read-outs in the JSON transcript too.
    assert!(
        json.lines().any(|l| l.contains(r#""tool":"metrics""#)),
        "{json}"
    );
}

/// `watermark run` of a scenario that compares runs: the top run's transcript exactly as
/// without `compare`, then each variant's under its header, then the differences at the end.
#[test]
fn run_prints_each_compared_run_and_the_differences() {
    let o = watermark(&["run", "--preset", "acks-steps"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("===")).collect();
    assert_eq!(
        headers,
        [
            "=== compare[0]: acks=1 ===",
            "=== compare[1]: acks=0 ===",
            "=== differences at 2.500s ==="
        ]
    );
    // The top run is printed as the same scenario without `compare` prints it.
    let mut plain = watermark_engine::presets::preset("acks-steps").unwrap();
    plain.compare.clear();
    plain.expect.retain(|e| e.run.is_none());
    let file = temp_file("acks-steps-top.json", &plain.to_json_pretty());
    let o = watermark(&["run", file.to_str().expect("UTF-8")]);
    let top = stdout(&o);
    assert!(!top.contains("==="), "{top}");
    assert!(out.starts_with(&top), "{out}");
    let sections: Vec<&str> = out.split("=== ").collect();
    assert!(
        sections[1].contains("[   1.040s] acks=1 -> ok, offset=0\n"),
        "{out}"
    );
    assert!(!sections[1].contains("acks=all -> ok"), "{out}");
    assert!(
        sections[2]
            .contains("[   1.000s] acks=0 -> sent (1 record(s); no response, so no offset)\n"),
        "{out}"
    );
    assert!(top.contains("[   1.080s] acks=all -> ok, offset=0 (waited 80 ms)\n"));
    // At the end the three runs agree.
    assert!(out.ends_with(
        "=== differences at 2.500s ===\ncompare[0]: no difference\ncompare[1]: no difference\n"
    ));
    // Where they end apart, one line per difference.
    let o = watermark(&["run", "--preset", "kip-101-side-by-side"]);
    let out = stdout(&o);
    let diffs = out
        .split("=== differences at 20.000s ===\n")
        .nth(1)
        .expect("a differences section");
    assert_eq!(
        diffs,
        "compare[0]: leader: Leader: 1 (leader epoch 1) (top), Leader: 1 (leader epoch 3) (compare[0])\n\
         compare[0]: high watermark: high watermark 1 (top), high watermark 2 (compare[0])\n\
         compare[0]: log end offset of broker 1: log end offset 1 (top), log end offset 2 (compare[0])\n\
         compare[0]: committed records lost: offsets 1..1 (m2) (top), none (compare[0])\n"
    );
}

/// `watermark check` says which run an unmet expectation is of.
#[test]
fn check_names_the_run_of_an_unmet_expectation() {
    let file = temp_file(
        "compare-check.json",
        r#"{"brokers":3,"timeline":[{"at":0,"action":"produce","values":["a"]}],"end_ms":1000,
            "compare":[{"acks":"0"}],
            "expect":[{"at":500,"produce":"acks=all -> ok, offset=0"},
                      {"at":500,"run":1,"label":"acks=0's result","produce":"acks=all -> ok, offset=0"}]}"#,
    );
    let o = watermark(&["check", file.to_str().expect("UTF-8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains(": 2 expectations, 1 NOT MET\n"), "{out}");
    assert!(
        out.contains("  compare[0]: expect[1] at 0.500s (\"acks=0's result\"): NOT MET\n"),
        "{out}"
    );
    // --json: an object per scenario, each expectation naming its run.
    let o = watermark(&[
        "check",
        "--json",
        file.to_str().expect("UTF-8"),
        "nope.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let out = stdout(&o);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["met"], false);
    assert_eq!(lines[0]["violations"], serde_json::json!([]));
    let e = &lines[0]["expectations"];
    assert_eq!(e[0]["met"], true);
    assert!(e[0].get("run").is_none(), "{out}");
    assert_eq!(e[1]["met"], false);
    assert_eq!(e[1]["run"], 1);
    assert_eq!(e[1]["compare"], 0);
    assert_eq!(e[1]["run_title"], "acks=0");
    assert_eq!(e[1]["label"], "acks=0's result");
    assert_eq!(e[1]["at_ms"], 500);
    assert_eq!(e[1]["mismatches"][0]["what"], "produce");
    assert_eq!(lines[1]["scenario"], "nope.json");
    assert!(
        lines[1]["error"]
            .as_str()
            .is_some_and(|m| m.starts_with("cannot read nope.json")),
        "{out}"
    );
    let o = watermark(&["check", "--json", "--presets"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).lines().all(|l| l.contains(r#""met":true"#)));
    let o = watermark(&["presets"]);
    assert!(
        stdout(&o).contains("compare[0]: min.insync.replicas=1\n"),
        "{}",
        stdout(&o)
    );
}

/// A version-2 scenario of two topics with their own `min.insync.replicas=3`, compared with
/// `orders` at 2 (a variant's `topics`): `run` prints the variant's header with its title
/// and what differs, `check` checks each run's expectations, a bad topic is named.
#[test]
fn run_and_check_compare_a_topics_own_configs() {
    let scenario = |compare: &str| {
        format!(
            r#"{{"version":2,"brokers":3,
            "topics":[{{"name":"orders","assignment":[[1,2,3]],"configs":{{"min.insync.replicas":3}}}},
                      {{"name":"payments","assignment":[[1,2,3]],"configs":{{"min.insync.replicas":3}}}}],
            "timeline":[{{"at":100,"action":"kill","broker":3}},
                        {{"at":40000,"action":"produce","topic":"orders","values":["o"],"retries":0}},
                        {{"at":40000,"action":"produce","topic":"payments","values":["p"],"retries":0}}],
            "compare":{compare},
            "expect":[{{"at":41000,"topic":"orders","error":"NOT_ENOUGH_REPLICAS"}},
                      {{"at":41000,"run":1,"topic":"orders","produce":"acks=all -> ok, offset=0"}},
                      {{"at":41000,"run":1,"topic":"payments","error":"NOT_ENOUGH_REPLICAS"}}]}}"#
        )
    };
    let file = temp_file(
        "topic-variant.json",
        &scenario(r#"[{"topics":{"orders":{"min.insync.replicas":2}}}]"#),
    );
    let path = file.to_str().expect("UTF-8");
    let o = watermark(&["run", path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("===")).collect();
    assert_eq!(
        headers,
        [
            "=== compare[0]: orders: min.insync.replicas=2 ===",
            "=== differences at 45.000s ==="
        ]
    );
    let beside = out.split("=== ").nth(1).expect("the variant's section");
    assert!(
        beside.contains("[  40.004s] acks=all -> orders-0: ok, offset=0 (waited 4 ms)\n"),
        "{out}"
    );
    assert!(
        beside.contains("[  40.002s] acks=all -> payments-0: NOT_ENOUGH_REPLICAS\n"),
        "{out}"
    );
    let diffs = out
        .split("=== differences at 45.000s ===\n")
        .nth(1)
        .expect("a differences section");
    assert_eq!(
        diffs,
        "compare[0]: elr: Elr: [3] (top), Elr: [] (compare[0])\n\
         compare[0]: high watermark: high watermark 0 (top), high watermark 1 (compare[0])\n\
         compare[0]: log end offset of broker 1: log end offset 0 (top), log end offset 1 (compare[0])\n\
         compare[0]: log end offset of broker 2: log end offset 0 (top), log end offset 1 (compare[0])\n\
         compare[0]: produce results: 0 acknowledged, 2 failed, 0 pending (top), 1 acknowledged, 1 failed, 0 pending (compare[0])\n"
    );
    let o = watermark(&["check", path]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(": 3 expectations, all met\n"),
        "{}",
        stdout(&o)
    );
    // A topic the scenario does not have is named with the topics it has.
    let bad = temp_file(
        "topic-variant-bad.json",
        &scenario(r#"[{"topics":{"nope":{"min.insync.replicas":2}}}]"#),
    );
    let o = watermark(&["check", bad.to_str().expect("UTF-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(
            ".json: compare[0].topics.nope: unknown topic \"nope\"; the topics are: orders, payments\n"
        ),
        "{}",
        stdout(&o)
    );
}
