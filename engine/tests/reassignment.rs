//! Partition reassignment end to end (kafka-reassign-partitions.sh against the KRaft
//! controller, scenario format version 2): the data copied to the new replica from offset 0,
//! the reassignment completed once every target replica is in the ISR, the removed replica
//! deleted, every committed record kept; a reassignment that moves the leader; a cancel.
//! Behaviour is asserted on typed events and the view model; the tool's own lines, which are
//! Kafka's output, by their text.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::{Event, Tool};
use watermark_engine::types::ErrorCode;
use watermark_engine::{Scenario, Sim};

fn run(json: &str) -> Sim {
    let scenario = Scenario::from_json(json).expect("a valid version-2 scenario");
    let sim = watermark_engine::run(&scenario, true).expect("runs");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    assert!(sim.losses().is_empty(), "{:?}", sim.losses());
    sim
}

/// The lines kafka-reassign-partitions.sh printed at `t`.
fn tool_lines(sim: &Sim, t: u64) -> Vec<String> {
    lines_of(sim, t, Tool::ReassignPartitions)
}

/// The lines kafka-topics.sh --describe printed at `t`.
fn describe_lines(sim: &Sim, t: u64) -> Vec<String> {
    lines_of(sim, t, Tool::Describe)
}

/// The lines `tool` printed at `t`.
fn lines_of(sim: &Sim, t: u64, tool: Tool) -> Vec<String> {
    sim.trace_events()
        .filter(|e| e.time_ms == t)
        .filter(|e| matches!(e.event(), Event::ToolOutput { tool: x, .. } if *x == tool))
        .map(|e| e.text())
        .collect()
}

fn file(topic: &str, replicas: &[u32]) -> String {
    format!(
        r#"{{"version":1,"partitions":[{{"topic":"{topic}","partition":0,"replicas":{replicas:?}}}]}}"#
    )
}

/// Brokers 1..=4; topic `moving` on 1,2,3 gets 40 records, then is moved to 1,2,4 while 40
/// more arrive; verified at 10 s.
fn moving_scenario() -> String {
    let to = file("moving", &[1, 2, 4]);
    format!(
        r#"{{"version": 2, "brokers": 4, "seed": 3,
        "topics": [{{"name": "moving", "assignment": [[1, 2, 3]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "a", "count": 40}},
          {{"at": 1000, "action": "reassign_execute", "reassignment": {to}}},
          {{"at": 1000, "action": "produce", "acks": "all", "prefix": "b", "count": 40, "one_by_one": true}},
          {{"at": 1002, "action": "reassign_verify", "reassignment": {to}}},
          {{"at": 10000, "action": "reassign_verify", "reassignment": {to}}},
          {{"at": 10000, "action": "describe"}}
        ],
        "end_ms": 12000}}"#
    )
}

#[test]
fn a_reassignment_copies_the_log_completes_and_deletes_the_old_replica() {
    let sim = run(&moving_scenario());
    assert_eq!(
        tool_lines(&sim, 1000).last().map(String::as_str),
        Some("Successfully started partition reassignment for moving-0")
    );
    assert_eq!(
        tool_lines(&sim, 1002)[1],
        "Reassignment of partition moving-0 is still in progress."
    );
    assert_eq!(
        tool_lines(&sim, 10000)[..2],
        [
            "Status of partition reassignment:",
            "Reassignment of partition moving-0 is completed."
        ]
    );
    // Broker 4 started from nothing and fetched from offset 0: it holds every record the
    // leader holds, all 80 committed; broker 3 deleted its replica when the metadata dropped
    // it (ReplicaManager.applyDelta), and nothing committed was lost.
    let snap = sim.snapshot();
    let b = |id: u32| snap.brokers.iter().find(|b| b.id == id).expect("broker");
    assert_eq!(b(1).log_end_offset, 80);
    assert_eq!(b(4).records, b(1).records);
    assert_eq!(b(4).high_watermark, 80);
    assert!(b(4).in_isr && b(4).hosts_replica);
    assert!(!b(3).hosts_replica && b(3).records.is_empty() && b(3).log_end_offset == 0);
    assert_eq!(snap.controller.isr, vec![1, 2, 4]);
    let deleted: Vec<(u32, bool)> = sim
        .trace_events()
        .filter_map(|e| match e.event() {
            Event::ReplicaDeleted { broker, stray, .. } => Some((*broker, *stray)),
            _ => None,
        })
        .collect();
    assert_eq!(deleted, [(3, false)]);
    // Every acks=all write was acknowledged.
    let failed = sim
        .trace_events()
        .filter(|e| {
            matches!(e.event(), Event::ProduceResult { .. })
                && e.text().contains("->")
                && !e.text().contains("-> ok")
        })
        .count();
    assert_eq!(failed, 0);
}

/// 1,2 → 3,2: broker 1 led and is removed. The AlterPartition that puts 3 in the ISR
/// completes the reassignment and elects 3 (the first target replica in the ISR), so the
/// controller answers broker 1 NEW_LEADER_ELECTED; broker 1 deletes its replica.
#[test]
fn a_reassignment_that_removes_the_leader_moves_the_leadership() {
    let to = file("lead", &[3, 2]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3, "seed": 11,
        "topics": [{{"name": "lead", "assignment": [[1, 2]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "x", "count": 25}},
          {{"at": 1000, "action": "reassign_execute", "reassignment": {to}}},
          {{"at": 5000, "action": "produce", "acks": "all", "prefix": "y", "count": 5}},
          {{"at": 8000, "action": "reassign_verify", "reassignment": {to}}}
        ],
        "end_ms": 9000}}"#
    ));
    assert_eq!(
        tool_lines(&sim, 8000)[1],
        "Reassignment of partition lead-0 is completed."
    );
    let answered_new_leader = sim.trace_events().any(|e| {
        matches!(
            e.event(),
            Event::AlterPartitionFailed {
                broker: 1,
                error: ErrorCode::NEW_LEADER_ELECTED,
                ..
            }
        )
    });
    assert!(answered_new_leader);
    let elected: Vec<u32> = sim
        .trace_events()
        .filter_map(|e| match e.event() {
            Event::NewLeader { leader, .. } => Some(*leader),
            _ => None,
        })
        .collect();
    assert_eq!(elected, [3]);
    let snap = sim.snapshot();
    assert_eq!(snap.controller.leader, Some(3));
    let b = |id: u32| snap.brokers.iter().find(|b| b.id == id).expect("broker");
    assert_eq!(
        b(3).log_end_offset,
        30,
        "the writes after the move went to broker 3"
    );
    assert_eq!(b(2).records, b(3).records);
    assert!(!b(1).hosts_replica && b(1).log_end_offset == 0);
}

/// 1,2 → 1,3 with broker 3 frozen, so it cannot catch up; `--cancel` reverts to 1,2
/// (cancelPartitionReassignment), and once thawed broker 3 deletes the replica it was
/// given and taken back. The tool prints the partition moves line without a line break,
/// so the broker throttles line follows it on the same line.
#[test]
fn a_cancel_reverts_to_the_original_replicas() {
    let to = file("move", &[1, 3]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3, "seed": 2,
        "topics": [{{"name": "move", "assignment": [[1, 2]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "m", "count": 10}},
          {{"at": 1000, "action": "freeze", "broker": 3}},
          {{"at": 1500, "action": "reassign_execute", "reassignment": {to}, "throttle": 5000}},
          {{"at": 3000, "action": "describe"}},
          {{"at": 3000, "action": "reassign_cancel", "reassignment": {to}}},
          {{"at": 3000, "action": "describe"}},
          {{"at": 3500, "action": "thaw", "broker": 3}},
          {{"at": 6000, "action": "reassign_verify", "reassignment": {to}}},
          {{"at": 6000, "action": "reassign_cancel", "reassignment": {to}}}
        ],
        "end_ms": 7000}}"#
    ));
    let describe: Vec<String> = sim
        .trace_events()
        .filter(|e| {
            e.time_ms == 3000
                && e.text().starts_with("Topic: ")
                && e.text().contains(" Partition: ")
        })
        .map(|e| e.text())
        .collect();
    assert_eq!(
        describe,
        [
            "Topic: move Partition: 0 Leader: 1 Replicas: 1,3,2 Isr: 1,2 Adding Replicas: 3 Removing Replicas: 2 Elr: LastKnownElr:",
            "Topic: move Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1,2 Elr: LastKnownElr:",
        ]
    );
    assert_eq!(
        tool_lines(&sim, 3000),
        [
            "Successfully cancelled partition reassignment for: move-0",
            "None of the specified partition moves are active.Clearing broker-level throttles on brokers 1,2,3",
            "Clearing topic-level throttles on topic move",
        ]
    );
    assert_eq!(
        tool_lines(&sim, 6000),
        [
            "Status of partition reassignment:",
            "There is no active reassignment of partition move-0, but replica set is 1,2 rather than 1,3.",
            "Clearing broker-level throttles on brokers 1,2,3",
            "Clearing topic-level throttles on topic move",
            "None of the specified partition reassignments are active.",
            "None of the specified partition moves are active.Clearing broker-level throttles on brokers 1,2,3",
            "Clearing topic-level throttles on topic move",
        ]
    );
    // Broker 3 applied the reassignment's metadata on thaw, then the cancel's: it holds
    // nothing of move-0.
    let snap = sim.snapshot();
    let b3 = snap.brokers.iter().find(|b| b.id == 3).expect("broker 3");
    assert!(!b3.hosts_replica && b3.log_end_offset == 0);
    assert!(sim
        .trace_events()
        .any(|e| matches!(e.event(), Event::ReplicaDeleted { broker: 3, .. })));
}

/// `--execute` while a reassignment is in progress is refused with the tool's message (no
/// `--additional`), and a target broker that is not alive is an unknown broker id.
#[test]
fn execute_refuses_beside_another_reassignment_and_a_dead_target() {
    let to = file("move", &[1, 3]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3, "seed": 2,
        "topics": [{{"name": "move", "assignment": [[1, 2]]}}],
        "timeline": [
          {{"at": 0, "action": "kill", "broker": 3}},
          {{"at": 12000, "action": "reassign_execute", "reassignment": {to}}},
          {{"at": 12000, "action": "start", "broker": 3}},
          {{"at": 13000, "action": "freeze", "broker": 3}},
          {{"at": 13001, "action": "reassign_execute", "reassignment": {to}}},
          {{"at": 13002, "action": "reassign_execute", "reassignment": {to}}}
        ],
        "end_ms": 14000}}"#
    ));
    assert_eq!(tool_lines(&sim, 12000), ["Error: Unknown broker id 3"]);
    assert_eq!(
        tool_lines(&sim, 13001).last().map(String::as_str),
        Some("Successfully started partition reassignment for move-0")
    );
    assert_eq!(
        tool_lines(&sim, 13002),
        ["Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment."]
    );
}

/// `watermark run --json` carries the tool's lines as ToolOutput events of tool
/// `reassign_partitions`.
#[test]
fn the_tools_lines_are_tool_output_events_in_json() {
    let sim = run(&moving_scenario());
    let e = sim
        .trace_events()
        .find(|e| e.text() == "Successfully started partition reassignment for moving-0")
        .expect("the line");
    let v = serde_json::to_value(e).expect("json");
    let text = v.to_string();
    assert!(text.contains("\"reassign_partitions\""), "{text}");
}

/// TopicCommand during a reassignment (TopicCommandTest.testDescribeUnderReplicatedPartitions
/// WhenReassignmentIsInProgress, `getReplicationFactor`): the replication factor is the
/// replicas less the adding ones, so a partition whose old replicas are all in sync is not
/// under-replicated while its new replica copies; the throttled replicas are topic configs
/// until --verify clears them, listed in the Config HashMap's order.
#[test]
fn describe_counts_the_replication_factor_without_the_adding_replicas() {
    let to = file("move", &[1, 3]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3,
        "topics": [{{"name": "move", "assignment": [[1, 2]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "v", "count": 2000}},
          {{"at": 1000, "action": "reassign_execute", "throttle": 10000000, "reassignment": {to}}},
          {{"at": 1000, "action": "describe"}},
          {{"at": 1000, "action": "describe", "under_replicated_partitions": true}},
          {{"at": 9000, "action": "reassign_verify", "reassignment": {to}}},
          {{"at": 9000, "action": "describe"}}
        ],
        "end_ms": 9500}}"#
    ));
    let during = describe_lines(&sim, 1000);
    assert_eq!(
        during.len(),
        2,
        "the topic line and one partition line, the filter none: {during:?}"
    );
    assert!(
        during[0].ends_with(
            " PartitionCount: 1 ReplicationFactor: 2 Configs: leader.replication.throttled.replicas=0:1,0:2,follower.replication.throttled.replicas=0:3"
        ),
        "{}",
        during[0]
    );
    assert!(
        during[1].starts_with("Topic: move Partition: 0 Leader: 1 Replicas: 1,3,2 Isr: 1,2 Adding Replicas: 3 Removing Replicas: 2 "),
        "{}",
        during[1]
    );
    let after = describe_lines(&sim, 9000);
    assert!(
        after[0].ends_with(" PartitionCount: 1 ReplicationFactor: 2 Configs:"),
        "--verify cleared the throttles: {}",
        after[0]
    );
    assert!(
        after[1].starts_with("Topic: move Partition: 0 Leader: 1 Replicas: 1,3 Isr: 1,3 "),
        "{}",
        after[1]
    );
}

/// A reassignment that leaves fewer replicas than `min.insync.replicas` (3): completed at
/// once (its target replicas are in the ISR), it leaves the ISR [1, 2] below the minimum,
/// so PartitionChangeBuilder.maybePopulateTargetElr puts the rest of the old ISR, the
/// removed broker 3, in the ELR, and nothing filters it out: kafka-topics.sh shows it. The
/// describe after the run of a leader that stays.
#[test]
fn a_reassignment_below_min_isr_leaves_the_removed_replica_in_the_elr() {
    let to = file("shrink", &[1, 2]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3, "seed": 3,
        "topics": [{{"name": "shrink", "assignment": [[1, 2, 3]],
                     "configs": {{"min.insync.replicas": 3}}}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "a", "count": 5}},
          {{"at": 1000, "action": "reassign_execute", "reassignment": {to}}},
          {{"at": 2000, "action": "describe"}}
        ],
        "end_ms": 3000}}"#
    ));
    assert_eq!(
        describe_lines(&sim, 2000)[1],
        "Topic: shrink Partition: 0 Leader: 1 Replicas: 1,2 Isr: 1,2 Elr: 3 LastKnownElr:"
    );
}

/// Brokers 1..=3; topic `move` on 1,2 gets 2000 records of 1 KiB (about 2 MB) at 0 s, then
/// is moved to 1,3 at 1 s with `--throttle` `rate` (none: no throttle), verified at `verify_ms`,
/// and moved back to 1,2 (no throttle) at `verify_ms`. `replica.fetch.max.bytes` 64 KiB keeps
/// each fetch small beside the rate. Returns the run, the log's bytes (whole batches), and
/// when broker 3 joined the ISR and when broker 2 joined it again, in ms.
fn throttled_move(rate: Option<u64>, verify_ms: u64) -> (Sim, u64, u64, u64) {
    let to = file("move", &[1, 3]);
    let back = file("move", &[1, 2]);
    let throttle = rate.map_or(String::new(), |r| format!(r#", "throttle": {r}"#));
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3,
        "config": {{"replica.fetch.max.bytes": 65536}},
        "topics": [{{"name": "move", "assignment": [[1, 2]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "v", "count": 2000}},
          {{"at": 1000, "action": "reassign_execute", "reassignment": {to}{throttle}}},
          {{"at": {verify_ms}, "action": "reassign_verify", "reassignment": {to}}},
          {{"at": {verify_ms}, "action": "reassign_execute", "reassignment": {back}}}
        ],
        "end_ms": {end}}}"#,
        end = verify_ms + 5_000
    ));
    let log = &sim.snapshot().brokers[0].records;
    assert_eq!(log.len(), 2000, "broker 1 holds the topic's records");
    let bytes = watermark_engine::record::records_size_in_bytes(log);
    let joined = |b: u32, after: u64| {
        sim.trace_events()
            .find(|e| matches!(e.event(), Event::IsrExpanding { new_isr, .. } if new_isr.contains(&b) && e.time_ms >= after))
            .map(|e| e.time_ms)
            .expect("joined the ISR")
    };
    let (three, two) = (joined(3, 1_000), joined(2, verify_ms));
    (sim, bytes, three, two)
}

/// The replication throttle (ReplicationQuotaManager, KIP-73): the new replica copies the
/// backlog at about the throttle's rate on both sides (the leader leaves the partition out of
/// its answers, the follower out of its requests, while their quotas are exceeded), so its
/// catch-up takes about bytes / rate (within 10%): twice as long at half the rate. (2 074 174
/// bytes took 22.07 s at 100 000 B/s and 11.07 s at 200 000 B/s: a fetch goes once the rate
/// over the window, 11 samples of 1 s, is back at the bound, and takes up to 64 KiB above it;
/// a follower that left the partition out checks again after replica.fetch.backoff.ms.)
/// Without a throttle it takes a few fetches. Once `--verify` cleared the throttle (the move
/// is done), moving the partition back copies as fast as an unthrottled move.
#[test]
fn a_throttled_move_copies_the_backlog_at_about_the_rate() {
    let (_, bytes, free, _) = throttled_move(None, 40_000);
    assert!(bytes > 2_000 * 1_024, "{bytes}");
    assert!(
        free - 1_000 < 500,
        "unthrottled, the copy took {} ms",
        free - 1_000
    );
    let mut took = Vec::new();
    for rate in [100_000u64, 200_000] {
        let (sim, b, joined, back) = throttled_move(Some(rate), 40_000);
        assert_eq!(b, bytes);
        let expected = bytes * 1_000 / rate;
        let ms = joined - 1_000;
        assert!(
            ms.abs_diff(expected) <= expected / 10,
            "rate {rate}: {ms} ms for {bytes} bytes (bytes / rate = {expected} ms)"
        );
        assert!(
            back - 40_000 < 500,
            "rate {rate}: the throttle cleared, the move back took {} ms",
            back - 40_000
        );
        assert!(sim
            .trace_events()
            .any(|e| e.time_ms == 40_000
                && e.text() == "Clearing topic-level throttles on topic move"));
        took.push(ms);
    }
    // Half the rate, about twice the time (within the first second's allowance).
    assert!(took[0].abs_diff(2 * took[1]) < 1_500, "{took:?}");
}

/// `--additional` (ReassignPartitionsCommand.executeAssignment): beside a reassignment in
/// progress the tool refuses without it and starts the new one with it; its throttles are
/// calculateProposedMoveMap's, which keeps every move in progress (calculateCurrentMoveMap:
/// the replicas less the adding ones are the sources). Resubmitting the move in progress
/// with `--additional` changes the throttle and keeps its sources 1,2 (not its current
/// replicas 1,3,2, which the rollback file lists). `--preserve-throttles` on `--verify`
/// leaves every throttle in place once both moves are done; a later `--verify` clears them.
#[test]
fn additional_starts_a_reassignment_beside_another_and_preserve_throttles_keeps_them() {
    let first = file("move", &[1, 3]);
    let second = r#"{"version":1,"partitions":[{"topic":"move","partition":1,"replicas":[2,4]}]}"#;
    let both = r#"{"version":1,"partitions":[{"topic":"move","partition":0,"replicas":[1,3]},{"topic":"move","partition":1,"replicas":[2,4]}]}"#;
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 4, "seed": 2,
        "topics": [{{"name": "move", "assignment": [[1, 2], [2, 1]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "m", "count": 10, "partition": 0}},
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "n", "count": 10, "partition": 1}},
          {{"at": 1000, "action": "freeze", "broker": 3}},
          {{"at": 1500, "action": "reassign_execute", "reassignment": {first}, "throttle": 5000}},
          {{"at": 2000, "action": "reassign_execute", "reassignment": {second}, "throttle": 6000}},
          {{"at": 2001, "action": "reassign_execute", "reassignment": {second}, "throttle": 6000, "additional": true}},
          {{"at": 2002, "action": "reassign_execute", "reassignment": {first}, "throttle": 8000, "additional": true}},
          {{"at": 2002, "action": "describe"}},
          {{"at": 3000, "action": "thaw", "broker": 3}},
          {{"at": 6000, "action": "reassign_verify", "reassignment": {both}, "preserve_throttles": true}},
          {{"at": 6000, "action": "describe"}},
          {{"at": 6500, "action": "reassign_verify", "reassignment": {both}}},
          {{"at": 6500, "action": "describe"}}
        ],
        "end_ms": 7000}}"#
    ));
    assert_eq!(
        tool_lines(&sim, 2000),
        ["Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment."]
    );
    assert_eq!(
        tool_lines(&sim, 2001),
        [
            "Current partition replica assignment",
            r#"{"version":1,"partitions":[{"topic":"move","partition":1,"replicas":[2,1],"log_dirs":["any","any"]}]}"#,
            "Save this to use as the --reassignment-json-file option during rollback",
            "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
            "The inter-broker throttle limit was set to 6000 B/s",
            "Successfully started partition reassignment for move-1",
        ]
    );
    assert_eq!(
        tool_lines(&sim, 2002),
        [
            "Current partition replica assignment",
            r#"{"version":1,"partitions":[{"topic":"move","partition":0,"replicas":[1,3,2],"log_dirs":["any","any","any"]}]}"#,
            "Save this to use as the --reassignment-json-file option during rollback",
            "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
            "The inter-broker throttle limit was set to 8000 B/s",
            "Successfully started partition reassignment for move-0",
        ]
    );
    // Both moves throttled: partition 0 from 1,2 to 3 (its sources are not 1,3,2), 1 from
    // 2,1 to 4; a TreeSet<String> per topic.
    assert!(
        describe_lines(&sim, 2002)[0].ends_with(
            " Configs: leader.replication.throttled.replicas=0:1,0:2,1:1,1:2,follower.replication.throttled.replicas=0:3,1:4"
        ),
        "{:?}",
        describe_lines(&sim, 2002)
    );
    assert_eq!(
        tool_lines(&sim, 6000),
        [
            "Status of partition reassignment:",
            "Reassignment of partition move-0 is completed.",
            "Reassignment of partition move-1 is completed.",
        ],
        "--preserve-throttles: nothing cleared"
    );
    assert!(
        describe_lines(&sim, 6000)[0].contains("follower.replication.throttled.replicas=0:3,1:4")
    );
    assert_eq!(
        tool_lines(&sim, 6500)[3..],
        [
            "Clearing broker-level throttles on brokers 1,2,3,4",
            "Clearing topic-level throttles on topic move",
        ]
    );
    assert!(describe_lines(&sim, 6500)[0].ends_with(" Configs:"));
}

/// `--cancel --preserve-throttles` (cancelAssignment: "if (!preserveThrottles)
/// clearAllThrottles"): the move is reverted and the throttles stay; the moves line, which
/// the tool prints without a line break, ends the output alone.
#[test]
fn a_cancel_with_preserve_throttles_keeps_the_throttles() {
    let to = file("move", &[1, 3]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 3, "seed": 2,
        "topics": [{{"name": "move", "assignment": [[1, 2]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "m", "count": 10}},
          {{"at": 1000, "action": "freeze", "broker": 3}},
          {{"at": 1500, "action": "reassign_execute", "reassignment": {to}, "throttle": 5000}},
          {{"at": 3000, "action": "reassign_cancel", "reassignment": {to}, "preserve_throttles": true}},
          {{"at": 3000, "action": "describe"}}
        ],
        "end_ms": 4000}}"#
    ));
    assert_eq!(
        tool_lines(&sim, 3000),
        [
            "Successfully cancelled partition reassignment for: move-0",
            "None of the specified partition moves are active.",
        ]
    );
    let describe = describe_lines(&sim, 3000);
    assert!(
        describe[0].ends_with(" Configs: leader.replication.throttled.replicas=0:1,0:2,follower.replication.throttled.replicas=0:3"),
        "{describe:?}"
    );
    assert!(
        describe[1].contains(" Replicas: 1,2 Isr: 1,2 "),
        "{describe:?}"
    );
}

/// Kafka's override of a reassignment in progress (`--additional`) whose own adding list is
/// empty: ReplicationControlManager.changePartitionReassignment sets on the builder only the
/// lists that are not empty, and PartitionChangeBuilder starts from the partition's, so the
/// old adding list stays beside the new removing one. 1 → 2,4 with broker 4 frozen (2
/// catches up, 4 cannot), then → 4: replicas 4,1,2 (the target, then the removing 1,2
/// ascending), adding still 2,4. Once broker 4 thaws and joins the ISR, the reassignment
/// completes on 4 alone.
#[test]
fn an_override_with_nothing_to_add_keeps_the_old_adding_list_as_kafka_does() {
    let first = file("move", &[2, 4]);
    let second = file("move", &[4]);
    let sim = run(&format!(
        r#"{{"version": 2, "brokers": 4, "seed": 2,
        "topics": [{{"name": "move", "assignment": [[1]]}}],
        "timeline": [
          {{"at": 0, "action": "produce", "acks": "all", "prefix": "m", "count": 10}},
          {{"at": 1000, "action": "freeze", "broker": 4}},
          {{"at": 1500, "action": "reassign_execute", "reassignment": {first}}},
          {{"at": 3000, "action": "describe"}},
          {{"at": 3000, "action": "reassign_execute", "reassignment": {second}, "additional": true}},
          {{"at": 3000, "action": "describe"}},
          {{"at": 4000, "action": "thaw", "broker": 4}},
          {{"at": 9000, "action": "describe"}}
        ],
        "end_ms": 10000}}"#
    ));
    let describe = describe_lines(&sim, 3000);
    assert_eq!(
        describe[1],
        "Topic: move Partition: 0 Leader: 1 Replicas: 2,4,1 Isr: 1,2 Adding Replicas: 2,4 Removing Replicas: 1 Elr: LastKnownElr:",
        "{describe:?}"
    );
    assert_eq!(
        describe[3],
        "Topic: move Partition: 0 Leader: 1 Replicas: 4,1,2 Isr: 1,2 Adding Replicas: 2,4 Removing Replicas: 1,2 Elr: LastKnownElr:",
        "{describe:?}"
    );
    assert!(
        describe_lines(&sim, 9000)[1]
            .starts_with("Topic: move Partition: 0 Leader: 4 Replicas: 4 Isr: 4 "),
        "{:?}",
        describe_lines(&sim, 9000)
    );
}
