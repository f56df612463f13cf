//! The clients' typed events (issue 13, step 2): small scenarios whose produce results,
//! retries and consumer reads are checked by variant and field, not by text. Where a
//! rendering is not covered by a golden file, it is checked against the text the engine
//! wrote before the line was typed.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::{Level, ProduceOutcome, TraceKind};
use watermark_engine::scenario::{AcksOrDefault, ProduceSpec};
use watermark_engine::types::{Acks, ErrorCode};
use watermark_engine::{Action, Config, Event, Scenario, Sim};

mod support;
use support::{run, tp};

/// The events of the run with their times, in order.
fn events(sim: &Sim) -> Vec<(u64, Event)> {
    sim.trace_events()
        .map(|t| (t.time_ms, t.event().clone()))
        .collect()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn acks_all_with_too_few_in_sync_replicas_is_retried_then_fails_not_enough_replicas() {
    // Partition.appendRecordsToLeader: the ISR (1) is below min.insync.replicas (2), so the
    // leader refuses with NOT_ENOUGH_REPLICAS, a retriable error: one retry, then the result.
    let sim = run(r#"{"brokers":2,"config":{"min.insync.replicas":2},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":1}],
            "end_ms":5000}"#);
    let produce: Vec<Event> = events(&sim)
        .into_iter()
        .map(|(_, e)| e)
        .filter(|e| e.kind() == TraceKind::Produce)
        .collect();
    assert_eq!(
        produce,
        vec![
            Event::ProduceRetry {
                acks: Acks::All,
                tp: tp("rep"),
                attempts_left: 0,
                error: ErrorCode::NOT_ENOUGH_REPLICAS,
            },
            Event::ProduceResult {
                tp: None,
                acks: Acks::All,
                outcome: ProduceOutcome::Error {
                    error: ErrorCode::NOT_ENOUGH_REPLICAS,
                    written_at: None,
                },
            },
        ]
    );
    assert_eq!(produce[0].level(), Level::Warn);
    assert_eq!(produce[0].produce_error(), None, "a retry is not a result");
    assert_eq!(produce[1].level(), Level::Error);
    assert_eq!(
        produce[1].produce_error(),
        Some(ErrorCode::NOT_ENOUGH_REPLICAS)
    );
    assert!(produce[1].produce_failed_with("NOT_ENOUGH_REPLICAS"));
    assert_eq!(produce[1].broker(), None);
}

#[test]
fn successful_writes_give_their_offsets_and_the_consumer_reads_them() {
    let sim = run(r#"{"brokers":3,
            "timeline":[{"at":1000,"action":"produce","acks":"all","values":["a","b","c"]},
                        {"at":2000,"action":"produce","acks":"1","values":["d"]},
                        {"at":3000,"action":"produce","acks":"0","values":["e"]},
                        {"at":5000,"action":"consume"},
                        {"at":6000,"action":"consume"}],
            "end_ms":7000}"#);
    let all = events(&sim);
    let results: Vec<(u64, Event)> = all
        .iter()
        .filter(|(_, e)| matches!(e, Event::ProduceResult { .. }))
        .cloned()
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    // acks=all: offsets 0..2, and the wait since the batch was created at 1000 ms.
    let (t, e) = &results[0];
    assert_eq!(
        e,
        &Event::ProduceResult {
            tp: None,
            acks: Acks::All,
            outcome: ProduceOutcome::Ok {
                offsets: Some((0, 2)),
                waited_ms: t - 1000,
            },
        }
    );
    assert!(*t > 1000);
    assert_eq!(
        e.to_string(),
        format!("acks=all -> ok, offsets=0..2 (waited {} ms)", t - 1000)
    );
    // acks=1: one offset.
    let (t, e) = &results[1];
    assert_eq!(
        e,
        &Event::ProduceResult {
            tp: None,
            acks: Acks::One,
            outcome: ProduceOutcome::Ok {
                offsets: Some((3, 3)),
                waited_ms: t - 2000,
            },
        }
    );
    assert_eq!(e.to_string(), "acks=1 -> ok, offset=3");
    // acks=0: sent at once, no offsets.
    assert_eq!(
        results[2],
        (
            3000,
            Event::ProduceResult {
                tp: None,
                acks: Acks::Zero,
                outcome: ProduceOutcome::Sent { records: 1 },
            }
        )
    );
    for (_, e) in &results {
        assert_eq!(
            (e.kind(), e.level(), e.produce_error()),
            (TraceKind::Produce, Level::Info, None)
        );
    }
    // The consumer reads all five, then finds nothing new.
    let consumer: Vec<&Event> = all
        .iter()
        .map(|(_, e)| e)
        .filter(|e| e.kind() == TraceKind::Consume)
        .collect();
    assert_eq!(
        consumer,
        vec![
            &Event::ConsumerRead {
                tp: None,
                first_offset: 0,
                last_offset: 4,
                values: strings(&["a", "b", "c", "d", "e"]),
                position: 5,
                from: None,
                broker: 1,
            },
            &Event::ConsumerNoRecords {
                tp: None,
                high_watermark: 5,
                position: 5,
                from: None,
            },
        ]
    );
    assert_eq!(
        consumer[0].to_string(),
        "consumer: a b c d e (offsets 0..4, position 5)"
    );
    assert_eq!(
        consumer[1].to_string(),
        "consumer: no records below the high watermark 5 (position 5)"
    );
}

#[test]
fn an_expired_batch_is_a_timeout_result_with_its_age() {
    // Sender.sendProducerData: the batch retrying NOT_ENOUGH_REPLICAS expires at
    // delivery.timeout.ms (3000) after its creation at 1000 ms.
    let sim = run(
        r#"{"brokers":2,"config":{"min.insync.replicas":2,"delivery.timeout.ms":3000,"request.timeout.ms":2000},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["late"]}],
            "end_ms":8000}"#,
    );
    let all = events(&sim);
    let results: Vec<&(u64, Event)> = all
        .iter()
        .filter(|(_, e)| matches!(e, Event::ProduceResult { .. }))
        .collect();
    assert_eq!(
        results,
        vec![&(
            4000,
            Event::ProduceResult {
                tp: None,
                acks: Acks::All,
                outcome: ProduceOutcome::Expired {
                    records: 1,
                    tp: tp("rep"),
                    elapsed_ms: 3000,
                },
            }
        )]
    );
    let e = &results[0].1;
    assert_eq!(e.produce_error(), Some(ErrorCode::DELIVERY_TIMEOUT));
    assert!(e.produce_failed_with("TimeoutException"));
    assert!(
        !e.produce_failed_with("DELIVERY_TIMEOUT"),
        "the line names the exception"
    );
    assert_eq!(e.level(), Level::Error);
    // Every retry before it was NOT_ENOUGH_REPLICAS, counting down.
    let retries = support::retries_left(all.iter().map(|(_, e)| e));
    assert!(!retries.is_empty());
    for (i, (left, error)) in retries.iter().enumerate() {
        assert_eq!(*error, ErrorCode::NOT_ENOUGH_REPLICAS);
        assert_eq!(
            *left,
            Config::default().retries - 1 - i as u32,
            "attempts left count down"
        );
    }
}

/// A sim of the default scenario with `config`, for actions the scenario parser refuses.
fn sim_with(config: Config) -> Sim {
    Sim::new(&Scenario {
        config,
        ..Scenario::default()
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

fn produce(acks: Acks, values: &[&str]) -> Action {
    Action::Produce(ProduceSpec {
        acks: AcksOrDefault(acks),
        values: strings(values),
        ..ProduceSpec::default()
    })
}

#[test]
fn a_config_exception_and_a_forced_close_are_produce_results() {
    // KafkaProducer's constructor: enable.idempotence=true with acks=1 throws.
    let mut sim = sim_with(Config {
        enable_idempotence: Some(true),
        ..Config::default()
    });
    sim.advance_to(100);
    sim.apply_now(&produce(Acks::One, &["x"])).expect("applies");
    let last = sim
        .trace_events()
        .last()
        .map(|t| t.event().clone())
        .expect("an event");
    let Event::ProduceResult {
        tp: None,
        acks: Acks::One,
        outcome: ProduceOutcome::ConfigException { message },
    } = &last
    else {
        panic!("{last:?}");
    };
    assert!(message.contains("enable.idempotence"), "{message}");
    assert!(last.produce_failed_with("ConfigException"));
    assert_eq!(last.produce_error(), None);
    assert_eq!(
        last.to_string(),
        format!("acks=1 -> ConfigException: {message}")
    );

    // KafkaProducer.close(Duration.ZERO) while a batch waits for its acks=all answer: the
    // only replica is frozen, so it never comes.
    let mut sim = sim_with(Config::default());
    sim.apply_now(&Action::Freeze { broker: 2 })
        .expect("applies");
    sim.apply_now(&Action::Freeze { broker: 3 })
        .expect("applies");
    sim.advance_to(100);
    sim.apply_now(&produce(Acks::All, &["p", "q"]))
        .expect("applies");
    sim.advance_to(200);
    sim.apply_now(&Action::CancelProduce).expect("applies");
    let last = sim.trace_events().last().map(|t| t.event().clone());
    assert_eq!(
        last,
        Some(Event::ProduceResult {
            tp: None,
            acks: Acks::All,
            outcome: ProduceOutcome::ClosedForcefully { records: 2 },
        })
    );
    let last = last.expect("an event");
    assert!(last.produce_failed_with("KafkaException"));
    assert_eq!(
        last.to_string(),
        "acks=all -> KafkaException: Producer is closed forcefully. (2 record(s) not delivered)"
    );
}

#[test]
fn the_consumer_without_a_leader() {
    // One broker: stopped, the partition has no leader.
    let sim = run(r#"{"brokers":1,
            "timeline":[{"at":1000,"action":"stop","broker":1},
                        {"at":2000,"action":"consume"}],
            "end_ms":3000}"#);
    let consumer: Vec<(u64, Event)> = events(&sim)
        .into_iter()
        .filter(|(_, e)| e.kind() == TraceKind::Consume)
        .collect();
    assert_eq!(
        consumer,
        vec![(2000, Event::ConsumerLeaderNotAvailable { tp: tp("rep") })]
    );
    let e = &consumer[0].1;
    assert_eq!((e.kind(), e.level()), (TraceKind::Consume, Level::Warn));
    assert_eq!(e.to_string(), "consumer: LEADER_NOT_AVAILABLE for rep-0");
}

#[test]
fn the_consumer_sees_records_rewritten_by_an_unclean_election() {
    // The unclean-election preset (its golden has these lines at 48.002 s).
    let scenario = watermark_engine::presets::preset("unclean-election").expect("preset");
    let sim = watermark_engine::run(&scenario, true).expect("runs");
    let all = events(&sim);
    let rewritten = all
        .iter()
        .position(|(_, e)| matches!(e, Event::ConsumerReadRewritten { .. }))
        .expect("a rewrite is seen");
    assert_eq!(
        all[rewritten],
        (
            48_002,
            Event::ConsumerReadRewritten {
                tp: None,
                first_offset: 10,
                last_offset: 14,
                now: strings(&["21", "22", "23", "24", "25"]),
                read: strings(&["11", "12", "13", "14", "15"]),
            }
        )
    );
    assert_eq!(
        (all[rewritten].1.kind(), all[rewritten].1.level()),
        (TraceKind::Loss, Level::Warn)
    );
    assert_eq!(
        all[rewritten + 1],
        (
            48_002,
            Event::ConsumerOffsetOutOfRange {
                tp: None,
                position: 20,
                log_end_offset: 15,
                gone: Some((15, 19)),
            }
        )
    );
}

#[test]
fn renderings_the_goldens_do_not_show_are_the_old_lines() {
    // Each expected text is the old `format!` of client.rs with these values.
    let result = |acks, outcome| Event::ProduceResult {
        tp: None,
        acks,
        outcome,
    };
    let cases = [
        (
            result(
                Acks::All,
                ProduceOutcome::Error {
                    error: ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                    written_at: Some(7),
                },
            ),
            "acks=all -> NOT_ENOUGH_REPLICAS_AFTER_APPEND (written at offset 7, but the ISR shrank below min.insync.replicas)",
        ),
        (
            result(
                Acks::One,
                ProduceOutcome::Error {
                    error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                    written_at: None,
                },
            ),
            "acks=1 -> NOT_LEADER_OR_FOLLOWER",
        ),
        (
            result(
                Acks::One,
                ProduceOutcome::Ok {
                    offsets: None,
                    waited_ms: 3,
                },
            ),
            "acks=1 -> ok",
        ),
        (
            result(
                Acks::All,
                ProduceOutcome::Ok {
                    offsets: None,
                    waited_ms: 3,
                },
            ),
            "acks=all -> ok (waited 3 ms)",
        ),
        (
            Event::ProduceSucceededAfterExpiry {
                tp: tp("rep"),
                base_offset: None,
            },
            "ProduceResponse returned SUCCEEDED for rep-0 after batch with base offset -1 had already been FAILED (the records are in the log, although the producer reported a TimeoutException)",
        ),
        (
            Event::ProduceSucceededAfterExpiry {
                tp: tp("rep"),
                base_offset: Some(12),
            },
            "ProduceResponse returned SUCCEEDED for rep-0 after batch with base offset 12 had already been FAILED (the records are in the log, although the producer reported a TimeoutException)",
        ),
        (
            Event::ProducerIdSet {
                producer_id: 1,
                epoch: 3,
            },
            "[Producer clientId=producer-1] ProducerId set to 1 with epoch 3",
        ),
        (
            Event::ConsumerConnectionReset { tp: None, target: 2 },
            "consumer: NETWORK_EXCEPTION: the connection to broker 2 was reset (its process is gone)",
        ),
        (
            Event::ConsumerError { tp: None,
                error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
            },
            "consumer: NOT_LEADER_OR_FOLLOWER",
        ),
        (
            Event::ConsumerOffsetOutOfRange { tp: None,
                position: 9,
                log_end_offset: 4,
                gone: None,
            },
            "consumer: OFFSET_OUT_OF_RANGE: position 9 is past the log end offset 4; auto.offset.reset=latest moves it to 4",
        ),
    ];
    for (event, text) in cases {
        assert_eq!(event.to_string(), text);
        assert_eq!(event.broker(), None);
    }
}

/// Where the cluster has more than one partition, a line about one names it after its
/// subject, as TopicPartition.toString prints it (docs/engine.md, "Lines that name their
/// partition"); a ConfigException, thrown before the record is partitioned, names none.
#[test]
fn lines_of_one_partition_among_many_name_it() {
    use watermark_engine::event::LossCause;
    use watermark_engine::record::Record;
    let p = |topic: &str, partition| {
        Some(watermark_engine::types::TopicPartition {
            topic: topic.into(),
            partition,
        })
    };
    let lost = Record {
        offset: 4,
        epoch: 1,
        batch_base: 4,
        value: "v".into(),
        producer_id: -1,
        producer_epoch: -1,
        sequence: -1,
        key: None,
        size: None,
    };
    let cases = [
        (
            Event::ProduceResult {
                acks: Acks::All,
                tp: p("orders", 3),
                outcome: ProduceOutcome::Error {
                    error: ErrorCode::NOT_ENOUGH_REPLICAS,
                    written_at: None,
                },
            },
            "acks=all -> orders-3: NOT_ENOUGH_REPLICAS",
        ),
        (
            Event::ProduceResult {
                acks: Acks::One,
                tp: p("orders", 3),
                outcome: ProduceOutcome::Ok {
                    offsets: Some((7, 9)),
                    waited_ms: 2,
                },
            },
            "acks=1 -> orders-3: ok, offsets=7..9",
        ),
        (
            Event::ConsumerNoRecords {
                tp: p("move", 0),
                high_watermark: 5,
                position: 5,
                from: Some(2),
            },
            "consumer: move-0: no records below the high watermark 5 (position 5, from follower 2, its preferred read replica)",
        ),
        (
            Event::ConsumerOffsetOutOfRange {
                tp: p("move", 1),
                position: 20,
                log_end_offset: 15,
                gone: Some((15, 19)),
            },
            "consumer: move-1: OFFSET_OUT_OF_RANGE: position 20 is past the log end offset 15; auto.offset.reset=latest moves it to 15. Offsets 15..19 that it read no longer exist",
        ),
        (
            Event::ConsumerError {
                tp: p("move", 1),
                error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
            },
            "consumer: move-1: NOT_LEADER_OR_FOLLOWER",
        ),
        (
            Event::ConsumerConnectionReset {
                tp: p("move", 1),
                target: 2,
            },
            "consumer: move-1: NETWORK_EXCEPTION: the connection to broker 2 was reset (its process is gone)",
        ),
        (
            Event::ConsumerReadRewritten {
                tp: p("orders", 0),
                first_offset: 1,
                last_offset: 1,
                now: strings(&["b"]),
                read: strings(&["a"]),
            },
            "consumer: orders-0: offsets 1..1 now hold different records (b) than it read there (a)",
        ),
        (
            Event::CommittedRecordsLost {
                broker: 2,
                tp: p("orders", 0),
                records: vec![lost],
                cause: LossCause::UncleanElection { broker: 2 },
            },
            "Committed records lost: orders-0: offsets 4..4 (v) are gone: ",
        ),
    ];
    for (event, line) in cases {
        let text = event.to_string();
        assert!(text.starts_with(line), "{text}\n  expected {line}");
        assert!(event.partition_label().is_some(), "{text}");
    }
}
