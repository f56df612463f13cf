//! The producer's backoffs as Kafka 4.x's client times them, seen in the transcript: KIP-951's
//! retry without a backoff after a leader change, and the metadata refresh's exponential
//! backoff (KIP-580, up to `retry.backoff.max.ms`) while a partition has no leader.
#![cfg(not(target_arch = "wasm32"))]

#[allow(dead_code)] // `tp` is for the other test files
mod support;

fn transcript(json: &str) -> Vec<String> {
    support::run(json).transcript()
}

/// The lines of `lines` that contain `what`.
fn lines_with<'a>(lines: &'a [String], what: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|l| l.contains(what))
        .map(String::as_str)
        .collect()
}

/// The time of a transcript line, in ms (`[  20.479s] …`).
fn time_ms(line: &str) -> u64 {
    let seconds = line[1..line.find('s').expect("a time")].trim();
    let (s, ms) = seconds.split_once('.').expect("seconds.millis");
    s.parse::<u64>().expect("seconds") * 1_000 + ms.parse::<u64>().expect("millis")
}

#[test]
fn a_retry_to_a_new_leader_goes_without_a_backoff() {
    // KIP-951: the acks=all write waits at broker 1 (broker 3, in the ISR, cannot reach it);
    // broker 1's controlled shutdown moves the leadership to broker 2 (epoch 1), and broker 1
    // answers NOT_LEADER_OR_FOLLOWER. The producer's metadata has the new leader epoch, newer
    // than the one the batch was drained at (ProducerBatch.maybeUpdateLeaderEpoch), so the
    // retry does not back off (RecordAccumulator.shouldBackoff: hasLeaderChangedForTheOngoingRetry):
    // it reaches broker 2 one latency later and is acknowledged 3 ms after the error, where
    // retry.backoff.ms alone (80 to 119 ms with its jitter) would have waited longer.
    let lines = transcript(
        r#"{"config":{"min.insync.replicas":2},
            "timeline":[{"at":0,"action":"cut","a":1,"b":3},
                        {"at":1000,"action":"produce","acks":"all","values":["x"]},
                        {"at":1500,"action":"stop","broker":1}],
            "end_ms":4000}"#,
    );
    let retry = "[   1.511s] [Producer clientId=producer-1] Got error produce response on \
                 topic-partition rep-0, retrying (2147483646 attempts left). Error: \
                 NOT_LEADER_OR_FOLLOWER";
    assert_eq!(lines_with(&lines, "Got error produce response"), [retry]);
    assert_eq!(
        lines_with(&lines, "acks=all ->"),
        ["[   1.514s] acks=all -> ok, offset=0 (waited 514 ms)"]
    );
}

/// One replica, on broker 1, killed at 0 and fenced at 9 s: the partition has no leader
/// (epoch 1) until broker 1 starts again at 20 s and is elected at 20.015 s (epoch 2). A
/// record produced at 12 s waits for a metadata refresh that shows the leader.
fn leaderless_until_20_s(config: &str, timeline: &str) -> Vec<String> {
    transcript(&format!(
        r#"{{"brokers":1,"config":{{{config}}},
            "timeline":[{{"at":0,"action":"kill","broker":1}},
                        {{"at":12000,"action":"produce","acks":"all","values":["x"]}},
                        {{"at":20000,"action":"start","broker":1}}{timeline}],
            "end_ms":25000}}"#
    ))
}

/// When the new leader was elected, and when the waiting record was acknowledged.
fn elected_and_acknowledged(lines: &[String]) -> (u64, u64) {
    let elected = lines_with(lines, "Setting new leader for topic rep, partition 0 to 1");
    let ok = lines_with(lines, "acks=all -> ok");
    assert_eq!((elected.len(), ok.len()), (1, 1), "{lines:?}");
    (time_ms(elected[0]), time_ms(ok[0]))
}

#[test]
fn without_a_leader_the_producer_refreshes_its_metadata_less_and_less_often() {
    // Metadata.timeToAllowUpdate: each refresh that brings no newer leader epoch counts one
    // more equivalent response, and the next waits backoff(count - 1): 100, 100, 200, 400,
    // 800, then 1000 ms (retry.backoff.max.ms), each ±20%. By 20 s the refreshes come about a
    // second apart, so the leader elected at 20.015 s is seen hundreds of ms later (the
    // write is then acknowledged one round trip after the refresh), not within the 80 to 119
    // ms of a fixed retry.backoff.ms.
    let lines = leaderless_until_20_s("", "");
    let (elected, ok) = elected_and_acknowledged(&lines);
    assert_eq!(elected, 20_015);
    assert!(
        (elected + 120..=elected + 1_002).contains(&ok),
        "{elected} {ok}"
    );
    assert_eq!(
        lines_with(&lines, "acks=all -> ok"),
        ["[  20.479s] acks=all -> ok, offset=0 (waited 8479 ms)"]
    );
}

#[test]
fn retry_backoff_max_ms_bounds_the_metadata_refresh_backoff() {
    // retry.backoff.max.ms 200, set during the run (kafka-configs.sh's part): the refreshes
    // come at most 200 ms apart, so the leader is seen within 200 ms and the write
    // acknowledged one round trip later.
    let lines = leaderless_until_20_s(
        "",
        r#",{"at":5000,"action":"set_config","name":"retry.backoff.max.ms","value":200}"#,
    );
    let (elected, ok) = elected_and_acknowledged(&lines);
    assert!((elected..=elected + 202).contains(&ok), "{elected} {ok}");
    // The same from the scenario's config.
    let lines = leaderless_until_20_s(r#""retry.backoff.max.ms":200"#, "");
    let (elected, ok) = elected_and_acknowledged(&lines);
    assert!((elected..=elected + 202).contains(&ok), "{elected} {ok}");
}

#[test]
fn retry_backoff_max_ms_is_read_written_and_checked_in_the_scenario_format() {
    use watermark_engine::Scenario;
    let set = Scenario::from_json(r#"{"config":{"retry.backoff.max.ms":250}}"#).unwrap();
    assert_eq!(set.config.retry_backoff_max_ms, 250);
    let written = set.to_json_pretty();
    assert!(
        written.contains(r#""retry.backoff.max.ms": 250"#),
        "{written}"
    );
    let default = Scenario::from_json("{}").unwrap().to_json_pretty();
    assert!(
        !default.contains("retry.backoff.max.ms"),
        "the default is left out"
    );
    let e = Scenario::from_json(r#"{"config":{"retry.backoff.max.ms":0}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("retry.backoff.max.ms must be a whole number in 1..=60000, got 0"),
        "{e}"
    );
    // A set_config outside the range is refused with the same words, before the run.
    let e = Scenario::from_json(
        r#"{"timeline":[{"at":0,"action":"set_config","name":"retry.backoff.max.ms","value":70000}]}"#,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "timeline[0].value: retry.backoff.max.ms must be a whole number in 1..=60000, got 70000"
    );
}
