//! The leader's and the follower's lines as typed events (issue 13, step 2): small scenarios
//! whose trace must hold the variants with the fields the scenario implies, not only the
//! right text. The web app matches on these variants and fields.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::{FetcherRemovedReason, TruncationReason};
use watermark_engine::event::{Level, TraceKind};
use watermark_engine::types::ErrorCode;
use watermark_engine::{Event, Sim};

mod support;
use support::{run, tp};

fn events(sim: &Sim) -> Vec<Event> {
    sim.trace_events().map(|e| e.event().clone()).collect()
}

#[test]
fn isr_shrinks_to_the_leader_alone_and_is_then_under_min_isr() {
    // Partition.maybeShrinkIsr: a frozen follower stops fetching; after a write it is no
    // longer caught up, and after replica.lag.time.max.ms the leader drops it. With
    // min.insync.replicas=2 the first shrink (to 1,2) is not under min ISR, the second
    // (to 1) is.
    let sim = run(
        r#"{"config":{"replica.lag.time.max.ms":2000,"broker.session.timeout.ms":60000,"min.insync.replicas":2},
            "timeline":[{"at":1000,"action":"freeze","broker":3},
                        {"at":1500,"action":"produce","acks":"1","values":["a"]},
                        {"at":6000,"action":"freeze","broker":2},
                        {"at":6500,"action":"produce","acks":"1","values":["b"]}],
            "end_ms":12000}"#,
    );
    let all = events(&sim);

    let shrinks: Vec<&Event> = all
        .iter()
        .filter(|e| matches!(e, Event::IsrShrinking { .. }))
        .collect();
    assert_eq!(shrinks.len(), 2, "{shrinks:?}");
    let Event::IsrShrinking {
        broker,
        tp: shrunk_tp,
        isr,
        new_isr,
        high_watermark,
        log_end_offset,
        out_of_sync,
    } = shrinks[0]
    else {
        unreachable!()
    };
    assert_eq!(*broker, 1);
    assert_eq!(*shrunk_tp, tp("rep"));
    assert_eq!(isr, &[1, 2, 3]);
    assert_eq!(new_isr, &[1, 2]);
    // "a" (offset 0) waits for broker 3, which never fetched it: the HW stays at 0.
    assert_eq!((*high_watermark, *log_end_offset), (0, 1));
    assert_eq!(out_of_sync.len(), 1);
    assert_eq!(out_of_sync[0].broker, 3);
    assert_eq!(out_of_sync[0].log_end_offset, Some(0));
    assert!(
        out_of_sync[0].last_caught_up_time_ms < 1000,
        "caught up last before it was frozen: {out_of_sync:?}"
    );
    let Event::IsrShrinking {
        isr,
        new_isr,
        high_watermark,
        log_end_offset,
        out_of_sync,
        ..
    } = shrinks[1]
    else {
        unreachable!()
    };
    assert_eq!(
        (isr.as_slice(), new_isr.as_slice()),
        (&[1, 2][..], &[1][..])
    );
    assert_eq!((*high_watermark, *log_end_offset), (1, 2));
    assert_eq!(out_of_sync.len(), 1);
    assert_eq!(
        (out_of_sync[0].broker, out_of_sync[0].log_end_offset),
        (2, Some(1))
    );

    let updates: Vec<&Event> = all
        .iter()
        .filter(|e| matches!(e, Event::IsrUpdated { .. }))
        .collect();
    assert_eq!(
        updates,
        [
            &Event::IsrUpdated {
                broker: 1,
                tp: tp("rep"),
                isr: vec![1, 2],
                under_min_isr: false,
                partition_epoch: 1,
            },
            &Event::IsrUpdated {
                broker: 1,
                tp: tp("rep"),
                isr: vec![1],
                under_min_isr: true,
                partition_epoch: 2,
            },
        ]
    );
    let under = updates[1];
    assert_eq!(under.kind(), TraceKind::Isr);
    assert_eq!(under.level(), Level::Info);
    assert_eq!(under.broker(), Some(1));
    assert_eq!(
        under.to_string(),
        "[Partition rep-0 broker=1] ISR updated to 1 (under-min-isr) and version updated to 2"
    );
    assert_eq!(
        updates[0].to_string(),
        "[Partition rep-0 broker=1] ISR updated to 1,2  and version updated to 1"
    );
    // The web app reads the typed event from JSON.
    let json = serde_json::to_value(under).unwrap();
    assert_eq!(json["type"], "isr_updated");
    assert_eq!(json["under_min_isr"], true);
    assert_eq!(json["isr"], serde_json::json!([1]));
}

#[test]
fn a_frozen_leader_rejoins_as_follower_and_truncates_its_uncommitted_record() {
    // The leader is frozen right after an acks=1 write only it has; broker 2 is elected;
    // after SIGCONT broker 1 follows, the leader's diverging epoch makes it truncate to 3
    // (not below its HW of 3), and it throws away "only-on-1", then rejoins the ISR.
    let sim = run(r#"{"config":{"replica.lag.time.max.ms":60000},
            "timeline":[{"at":1000,"action":"produce","acks":"all","prefix":"c-","count":3},
                        {"at":2000,"action":"freeze","broker":2},{"at":2000,"action":"freeze","broker":3},
                        {"at":3000,"action":"produce","acks":"1","values":["only-on-1"]},
                        {"at":3100,"action":"freeze","broker":1},
                        {"at":3100,"action":"thaw","broker":2},{"at":3100,"action":"thaw","broker":3},
                        {"at":20000,"action":"thaw","broker":1}],
            "end_ms":25000}"#);
    let all = events(&sim);

    let leader = all
        .iter()
        .find(|e| matches!(e, Event::BecameLeader { broker: 2, .. }))
        .expect("broker 2 leads");
    assert_eq!(
        leader,
        &Event::BecameLeader {
            broker: 2,
            tp: tp("rep"),
            leader_epoch: 1,
            start_offset: 3,
            partition_epoch: 1,
            high_watermark: 3,
            isr: vec![2, 3],
            under_min_isr: false,
            previous_leader: Some(1),
            previous_leader_epoch: 0,
        }
    );
    assert_eq!(leader.kind(), TraceKind::Broker);
    assert!(all.iter().any(|e| matches!(
        e,
        Event::BecameFollower {
            broker: 1,
            leader: 2,
            leader_epoch: 1,
            start_offset: 4,
            was_leader: true,
            ..
        }
    )));

    let at = all
        .iter()
        .position(|e| matches!(e, Event::TruncatingToEpochEndOffset { .. }))
        .expect("the diverging epoch truncates");
    assert_eq!(
        all[at..at + 2],
        [
            Event::TruncatingToEpochEndOffset {
                broker: 1,
                leader: 2,
                fetcher_id: 0,
                tp: tp("rep"),
                offset: 3,
                leader_epoch: 0,
                end_offset: 3,
            },
            Event::LogTruncated {
                broker: 1,
                tp: tp("rep"),
                to_offset: 3,
                below_high_watermark: None,
            },
        ]
    );
    let Event::RecordsThrownAway {
        broker: 1,
        first_offset: 3,
        last_offset: 3,
        records,
        below_high_watermark: false,
    } = &all[at + 2]
    else {
        panic!("{:?}", all[at + 2])
    };
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].offset, records[0].value.as_str()),
        (3, "only-on-1")
    );
    for e in &all[at..at + 3] {
        assert_eq!(e.kind(), TraceKind::Truncation, "{e:?}");
        assert_eq!(e.level(), Level::Info, "{e:?}");
        assert_eq!(e.broker(), Some(1), "{e:?}");
    }
    assert_eq!(
        all[at + 1].to_string(),
        "[UnifiedLog partition=rep-0, dir=/tmp/kafka/1/data] Truncating to offset 3"
    );

    let expand = all
        .iter()
        .find(|e| matches!(e, Event::IsrExpanding { .. }))
        .expect("broker 1 rejoins");
    assert_eq!(
        expand,
        &Event::IsrExpanding {
            broker: 2,
            tp: tp("rep"),
            isr: vec![2, 3],
            new_isr: vec![1, 2, 3],
        }
    );
}

#[test]
fn a_truncation_below_the_high_watermark_is_a_warning_with_the_hw() {
    // The unclean-election preset: broker 2 held offsets up to 20 as committed, then follows
    // an unclean leader whose log ends at 10.
    let scenario = watermark_engine::presets::preset("unclean-election").expect("preset");
    let sim = watermark_engine::run(&scenario, true).expect("runs");
    let all = events(&sim);
    let at = all
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::LogTruncated {
                    below_high_watermark: Some(_),
                    ..
                }
            )
        })
        .expect("a truncation below the HW");
    assert_eq!(
        all[at],
        Event::LogTruncated {
            broker: 2,
            tp: tp("risky2"),
            to_offset: 10,
            below_high_watermark: Some(20),
        }
    );
    assert_eq!(all[at].level(), Level::Warn);
    assert_eq!(
        all[at].to_string(),
        "[UnifiedLog partition=risky2-0, dir=/tmp/kafka/2/data] Truncating risky2-0 to offset 10 below high watermark 20"
    );
    let Event::RecordsThrownAway {
        broker,
        first_offset,
        last_offset,
        records,
        below_high_watermark,
    } = &all[at + 1]
    else {
        panic!("{:?}", all[at + 1])
    };
    assert_eq!((*broker, *first_offset, *last_offset), (2, 10, 19));
    assert_eq!(records.len(), 10);
    assert!(*below_high_watermark);
    assert_eq!(all[at + 1].level(), Level::Warn);
    let json = serde_json::to_value(&all[at]).unwrap();
    assert_eq!(json["type"], "log_truncated");
    assert_eq!(json["below_high_watermark"], 20);
}

/// Lines no preset or scenario above reaches: each variant renders the exact text the
/// engine wrote before it was typed, with its kind, level and broker.
#[test]
fn the_rarer_lines_render_as_kafka_writes_them() {
    let cases: Vec<(Event, TraceKind, Level, &str)> = vec![
        (
            Event::AlterPartitionTimedOut {
                broker: 1,
                controller_socket_timeout_ms: 30_000,
            },
            TraceKind::Isr,
            Level::Warn,
            "[NodeToControllerChannelManager id=1 name=alter-partition] AlterPartition request got no answer within controller.socket.timeout.ms=30000 ms: sending it again",
        ),
        (
            Event::AlterPartitionStaleBrokerEpoch {
                broker: 2,
                broker_epoch: 7,
            },
            TraceKind::Isr,
            Level::Warn,
            "[DefaultAlterPartitionManager id=2] Broker had a stale broker epoch (7), retrying.",
        ),
        (
            Event::AlterPartitionRejected {
                broker: 1,
                tp: tp("t"),
                error: ErrorCode::INELIGIBLE_REPLICA,
                committed_isr: vec![1, 2],
            },
            TraceKind::Isr,
            Level::Info,
            "[Partition t-0 broker=1] Failed to alter partition since the controller rejected the request with INELIGIBLE_REPLICA. Partition state has been reset to the latest committed state (ISR 1,2).",
        ),
        (
            Event::AlterPartitionFailed {
                broker: 1,
                tp: tp("t"),
                error: ErrorCode::FENCED_LEADER_EPOCH,
            },
            TraceKind::Isr,
            Level::Info,
            "[Partition t-0 broker=1] Failed to alter partition: FENCED_LEADER_EPOCH. Partition state may be out of sync, awaiting new the latest metadata.",
        ),
        (
            Event::IsrUpdateFailed {
                broker: 3,
                tp: tp("t"),
                error: ErrorCode::NOT_CONTROLLER,
            },
            TraceKind::Isr,
            Level::Warn,
            "[Partition t-0 broker=3] Failed to update ISR due to unexpected NOT_CONTROLLER. Retrying.",
        ),
        (
            Event::FollowerWithoutLeader {
                broker: 2,
                tp: tp("t"),
                leader_epoch: 4,
            },
            TraceKind::Broker,
            Level::Info,
            "[Partition t-0 broker=2] No leader for t-0 at leader epoch 4: not fetching",
        ),
        (
            Event::BecameLeader {
                broker: 3,
                tp: tp("t"),
                leader_epoch: 2,
                start_offset: 5,
                partition_epoch: 6,
                high_watermark: 4,
                isr: vec![3],
                under_min_isr: true,
                previous_leader: None,
                previous_leader_epoch: -1,
            },
            TraceKind::Broker,
            Level::Info,
            "[Partition t-0 broker=3] Leader t-0 starts at leader epoch 2 from offset 5 with partition epoch 6, high watermark 4, ISR [3] (under-min-isr). Previous leader None and previous leader epoch was -1.",
        ),
        (
            Event::FetchTimedOut { fetcher_id: 0, partitions: vec![],
                broker: 2,
                leader: None,
                replica_socket_timeout_ms: 30_000,
            },
            TraceKind::Broker,
            Level::Warn,
            "[ReplicaFetcher replicaId=2, leaderId=none, fetcherId=0] Error sending fetch request: no response within replica.socket.timeout.ms=30000 ms",
        ),
        (
            Event::FetcherRemoved {
                broker: 3,
                tp: tp("t"),
                reason: FetcherRemovedReason::ControlledShutdownNotInIsr,
            },
            TraceKind::Broker,
            Level::Info,
            "[ReplicaFetcherManager on broker 3] Removed fetcher for partitions t-0: this broker is in controlled shutdown and not in the ISR",
        ),
        (
            Event::FencedLeaderEpoch {
                broker: 2,
                leader: 1,
                fetcher_id: 0,
                tp: tp("t"),
                leader_epoch: 3,
            },
            TraceKind::Broker,
            Level::Warn,
            "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Partition t-0 has an older epoch (3) than the current leader. Will await the new LeaderAndIsr state before resuming fetching.",
        ),
        (
            Event::FetcherTruncating {
                broker: 2,
                reason: TruncationReason::OffsetOutOfRange { leader: 3 },
            },
            TraceKind::Truncation,
            Level::Info,
            "[ReplicaFetcher replicaId=2] OFFSET_OUT_OF_RANGE from leader 3",
        ),
    ];
    for (event, kind, level, text) in cases {
        assert_eq!(event.to_string(), text);
        assert_eq!((event.kind(), event.level()), (kind, level), "{text}");
        assert!(event.broker().is_some(), "{text}");
    }
}
