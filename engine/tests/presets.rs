//! Every preset reproduces the numbers its article reports. Expectations are the articles'
//! own figures (quoted beside each check), with windows where a figure depends on scheduling.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::TraceKind;
use watermark_engine::presets::preset;
use watermark_engine::{Scenario, Sim};

struct Run {
    sim: Sim,
    lines: Vec<(u64, String)>,
}

fn run(name: &str) -> Run {
    let scenario = preset(name).expect("preset parses");
    let sim = watermark_engine::run(&scenario, true).expect("preset runs");
    assert!(
        sim.violations().is_empty(),
        "{name}: invariants broken: {:?}",
        sim.violations()
    );
    let lines = sim
        .trace_events()
        .map(|e| (e.time_ms, e.text().clone()))
        .collect();
    Run { sim, lines }
}

impl Run {
    /// A line equal to `text` in the time window [from, to] (ms).
    fn has(&self, from: u64, to: u64, text: &str) -> bool {
        self.lines
            .iter()
            .any(|(t, l)| *t >= from && *t <= to && l == text)
    }

    fn assert_line(&self, from: u64, to: u64, text: &str) {
        assert!(
            self.has(from, to, text),
            "expected {text:?} between {from} and {to} ms; transcript:\n{}",
            self.dump()
        );
    }

    fn first_containing(&self, needle: &str) -> Option<&(u64, String)> {
        self.lines.iter().find(|(_, l)| l.contains(needle))
    }

    fn dump(&self) -> String {
        self.lines
            .iter()
            .map(|(t, l)| format!("{t:>7} {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn waited_ms(line: &str) -> u64 {
    let start = line.find("(waited ").expect("waited") + "(waited ".len();
    line[start..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a number")
}

#[test]
fn fetcher_threads_match_article_000_example_1_1() {
    let r = run("fetcher-threads");
    // "broker 2: "ReplicaFetcherThread-0-1" / broker 3: "ReplicaFetcherThread-0-1" /
    // broker 1: (none: leader of rep-0)": one thread per leader and fetcher id on each
    // follower, none on the leader.
    r.assert_line(1000, 1000, "broker 2: \"ReplicaFetcherThread-0-1\"");
    r.assert_line(1000, 1000, "broker 3: \"ReplicaFetcherThread-0-1\"");
    r.assert_line(1000, 1000, "broker 1: (none: leader of rep-0)");
    // After the leader moves to broker 2, the follower's thread is named for its new leader
    // (ReplicaFetcherManager.createFetcherThread: ReplicaFetcherThread-{fetcherId}-{leader}).
    r.assert_line(
        6000,
        6000,
        "Topic: rep Partition: 0 Leader: 2 Replicas: 1,2,3 Isr: 2,3 Elr: LastKnownElr:",
    );
    r.assert_line(6000, 6000, "broker 3: \"ReplicaFetcherThread-0-2\"");
    r.assert_line(6000, 6000, "broker 2: (none: leader of rep-0)");
    r.assert_line(6000, 6000, "broker 1: (no process)");
}

#[test]
fn frozen_follower_matches_article_000_example_1_2() {
    let r = run("frozen-follower");
    // "=== 3. write 10 records with acks=all / rep:0:10"
    r.assert_line(1000, 1000, "rep:0:10");
    // "=== 4. SIGSTOP broker 3, no new records, wait 12s / Isr: 1,2,3": an idle frozen
    // follower stays in the ISR.
    r.assert_line(
        14000,
        14000,
        "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    // "before SIGSTOP: high watermark = 12"
    r.assert_line(16000, 16000, "rep:0:12");
    for (i, offset) in (12..=16).enumerate() {
        let _ = i;
        assert!(
            r.lines
                .iter()
                .any(|(_, l)| l == &format!("acks=1 -> ok, offset={offset}")),
            "acks=1 offset {offset}"
        );
    }
    // "high watermark = 12 (t+160 ms)": acks=1 writes leave the HW at 12.
    r.assert_line(16150, 16150, "rep:0:12");
    // "acks=all offset=17 waited 4964 ms": released only when broker 3 leaves the ISR, which
    // happens at the first isr-expiration run more than replica.lag.time.max.ms (5000) after
    // broker 3 last caught up (just before it froze), so the wait is between about
    // 5000 - (time between its last fetch and the send) and 5000 + 2500.
    let (t, line) = r
        .first_containing("acks=all -> ok, offset=17")
        .expect("the acks=all write completes");
    let waited = waited_ms(line);
    assert!((4000..=7600).contains(&waited), "waited {waited} ms at {t}");
    let (shrink_t, shrink) = r
        .first_containing("Shrinking ISR from 1,2,3 to 1,2")
        .expect("broker 3 is dropped");
    assert!(
        shrink.contains("Leader: (highWatermark: 12, endOffset: 18)"),
        "{shrink}"
    );
    assert!(
        shrink.contains("(brokerId: 3, endOffset: 12, lastCaughtUpTimeMs:"),
        "{shrink}"
    );
    assert!(shrink_t < t, "the write completes after the shrink");
    r.assert_line(
        *shrink_t,
        *t,
        "[Partition rep-0 broker=1] ISR updated to 1,2  and version updated to 1",
    );
    // "high watermark = 18 / Isr: 1,2"
    r.assert_line(24000, 24000, "rep:0:18");
    r.assert_line(
        24000,
        24000,
        "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:",
    );
    // "=== 6. SIGCONT broker 3, wait 5s / Isr: 1,2,3 ... version updated to 2"
    r.assert_line(
        29000,
        29000,
        "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    r.assert_line(
        24000,
        29000,
        "[Partition rep-0 broker=1] ISR updated to 1,2,3  and version updated to 2",
    );
    // "=== 7. replication-offset-checkpoint: rep 0 18 on all three brokers"
    for b in 1..=3 {
        r.assert_line(35000, 35000, &format!("broker {b}: rep 0 18"));
    }
}

#[test]
fn min_isr_3_matches_article_000_example_2() {
    let r = run("min-isr-3");
    r.assert_line(
        0,
        0,
        "Topic: strict Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    r.assert_line(100, 1000, "acks=all -> ok, offset=0 (waited 4 ms)");
    r.assert_line(200, 1000, "acks=1 -> ok, offset=1");
    // "stop broker 3 (SIGTERM, controlled shutdown) / Isr: 1,2 Elr: 3"
    r.assert_line(
        3000,
        3000,
        "Topic: strict Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: 3 LastKnownElr:",
    );
    r.assert_line(3100, 3200, "acks=all -> NOT_ENOUGH_REPLICAS");
    r.assert_line(3200, 4000, "acks=1 -> ok, offset=2");
    r.assert_line(4100, 4200, "acks=all -> ok, offset=3 (waited 4 ms)");
    r.assert_line(4200, 5000, "acks=1 -> ok, offset=4");
    // "offsets on the leader's disk (broker 1)": 0 acks-all, 1 acks-1, 2 acks-1, 3 acks-all,
    // 4 acks-1 — the rejected write left nothing behind.
    let snap = r.sim.snapshot();
    let values: Vec<&str> = snap
        .broker(1)
        .unwrap()
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(
        values,
        ["acks-all", "acks-1", "acks-1", "acks-all", "acks-1"]
    );
}

#[test]
fn diverged_truncation_matches_article_000_example_3() {
    let r = run("diverged-truncation");
    for b in 1..=3 {
        r.assert_line(1000, 1000, &format!("broker {b}: 0 1 0 0"));
    }
    // The dead leader's log still holds lost-1..lost-5 at offsets 10..14, epoch 0.
    r.assert_line(3200, 3200, "    offset 10: lost-1");
    r.assert_line(3200, 3200, "    offset 14: lost-5");
    r.assert_line(
        15000,
        15000,
        "Topic: div Partition: 0 Leader: 2 Replicas: 1,2,3 Isr: 2,3 Elr: LastKnownElr:",
    );
    r.assert_line(
        16000,
        16000,
        "  baseOffset: 10 lastOffset: 12 count: 3 baseSequence: 10 lastSequence: 12 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 1",
    );
    r.assert_line(16000, 16000, "broker 1: 0 1 0 0");
    r.assert_line(16000, 16000, "broker 2: 0 2 0 0 1 10");
    r.assert_line(16000, 16000, "broker 3: 0 2 0 0 1 10");
    r.assert_line(
        17000,
        27000,
        "[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition div-0 to offset 10 due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=10)",
    );
    r.assert_line(
        17000,
        27000,
        "[UnifiedLog partition=div-0, dir=/tmp/kafka/1/data] Truncating to offset 10",
    );
    r.assert_line(
        27000,
        27000,
        "Topic: div Partition: 0 Leader: 2 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    for b in 1..=3 {
        r.assert_line(27000, 27000, &format!("broker {b}: 0 2 0 0 1 10"));
    }
    // "console consumer from the beginning: ok-1 .. ok-10 new-1 new-2 new-3"
    r.assert_line(
        27000,
        27100,
        "consumer: ok-1 ok-2 ok-3 ok-4 ok-5 ok-6 ok-7 ok-8 ok-9 ok-10 new-1 new-2 new-3 (offsets 0..12, position 13)",
    );
    assert!(
        r.sim.losses().is_empty(),
        "acks=1 records above the HW were never committed: no loss"
    );
}

#[test]
fn leader_failover_matches_article_004_lab_steps_1_to_3() {
    let r = run("leader-failover");
    r.assert_line(
        1000,
        1000,
        "Topic: ha2 Partition: 0 Leader: 3 Replicas: 3,1,2 Isr: 3,1,2 Elr: LastKnownElr:",
    );
    // "0 0 ← epoch 0 started at offset 0"
    r.assert_line(1000, 1000, "broker 1: 0 1 0 0");
    r.assert_line(
        3000,
        3000,
        "Topic: ha2 Partition: 0 Leader: 1 Replicas: 3,1,2 Isr: 1,2 Elr: LastKnownElr:",
    );
    // "1 100 ← epoch 1 started at offset 100"
    r.assert_line(5000, 5000, "broker 1: 0 2 0 0 1 100");
    // "Broker 3 copied the 50 records it missed, rejoined the in-sync set"
    r.assert_line(
        20000,
        20000,
        "Topic: ha2 Partition: 0 Leader: 1 Replicas: 3,1,2 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    r.assert_line(
        20000,
        20000,
        "kafka-leader-election.sh --election-type preferred: Successfully completed leader election (PREFERRED) for partitions ha2-0",
    );
    r.assert_line(
        20100,
        20100,
        "Topic: ha2 Partition: 0 Leader: 3 Replicas: 3,1,2 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    // "All 150 records are there."
    r.assert_line(20100, 20100, "ha2:0:150");
    assert_eq!(r.sim.snapshot().broker(3).unwrap().log_end_offset, 150);
}

#[test]
fn unclean_election_matches_article_004_lab_step_4() {
    let r = run("unclean-election");
    r.assert_line(10000, 10000, "risky2:0:20");
    // "Leader: none Replicas: 2,3 Isr: Elr: 2 LastKnownElr: 2"
    r.assert_line(
        30000,
        30000,
        "Topic: risky2 Partition: 0 Leader: none Replicas: 2,3 Isr: Elr: 2 LastKnownElr: 2",
    );
    r.assert_line(
        30000,
        30000,
        "kafka-leader-election.sh --election-type unclean: Successfully completed leader election (UNCLEAN) for partitions risky2-0",
    );
    r.assert_line(
        30100,
        30100,
        "Topic: risky2 Partition: 0 Leader: 3 Replicas: 2,3 Isr: 3 Elr: LastKnownElr:",
    );
    // "The end offset went from 20 back to 10."
    r.assert_line(30100, 30100, "risky2:0:10");
    // "Truncating risky2-0 to offset 10 below high watermark 20"
    let (_, warn) = r
        .first_containing("below high watermark")
        .expect("broker 2 truncates below its HW");
    assert!(
        warn.ends_with("Truncating risky2-0 to offset 10 below high watermark 20"),
        "{warn}"
    );
    // "values on broker 2: 1 2 3 4 5 6 7 8 9 10 21 22 23 24 25"
    let snap = r.sim.snapshot();
    let values: Vec<&str> = snap
        .broker(2)
        .unwrap()
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(
        values,
        ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "21", "22", "23", "24", "25"]
    );
    // The loss is reported, naming the offsets.
    let losses = r.sim.losses();
    assert_eq!(losses.len(), 1);
    assert_eq!((losses[0].first_offset, losses[0].last_offset), (10, 19));
    // "A consumer that had committed offset 20 would now be past the end of the log."
    assert!(r
        .first_containing(
            "consumer: OFFSET_OUT_OF_RANGE: position 20 is past the log end offset 15"
        )
        .is_some());
    assert!(r
        .first_containing("consumer: offsets 10..14 now hold different records (21 22 23 24 25)")
        .is_some());
}

#[test]
fn move_replica_matches_article_004_lab_step_5() {
    let r = run("move-replica");
    // Article 004, lab step 5 ("Move a replica"), its three lines:
    //   Successfully started partition reassignment for move-0
    //   Reassignment of partition move-0 is completed.
    //   Topic: move  Partition: 0  Leader: 1  Replicas: 1,3  Isr: 1,3
    r.assert_line(
        2000,
        2000,
        "Successfully started partition reassignment for move-0",
    );
    r.assert_line(4000, 4000, "Reassignment of partition move-0 is completed.");
    // The describe line as every preset prints it (one space between fields, with Elr and
    // LastKnownElr); the article's is the same fields, two spaces apart, Elr left out.
    let describe = "Topic: move Partition: 0 Leader: 1 Replicas: 1,3 Isr: 1,3 Elr: LastKnownElr:";
    r.assert_line(4000, 4000, describe);
    let article = "Topic: move  Partition: 0  Leader: 1  Replicas: 1,3  Isr: 1,3";
    assert!(
        describe.starts_with(&article.replace("  ", " ")),
        "the article's fields, in its order"
    );
    // During the move the registration is target ∪ current, 3 adding and 2 removing
    // (TopicCommand.PartitionDescription's Adding Replicas / Removing Replicas).
    r.assert_line(
        2000,
        2000,
        "Topic: move Partition: 0 Leader: 1 Replicas: 1,3,2 Isr: 1,2 Adding Replicas: 3 Removing Replicas: 2 Elr: LastKnownElr:",
    );
    // Every committed record reached broker 3; broker 2 holds nothing any more.
    let snap = r.sim.snapshot();
    let broker = |id: u32| snap.brokers.iter().find(|b| b.id == id).expect("broker");
    assert_eq!(broker(3).log_end_offset, 10);
    assert_eq!(broker(3).records, broker(1).records);
    assert!(broker(3).hosts_replica && broker(3).in_isr);
    assert_eq!(
        (broker(2).log_end_offset, broker(2).hosts_replica),
        (0, false)
    );
    assert!(r.sim.losses().is_empty());
    assert!(r
        .first_containing("[ReplicaManager broker=2] Deleting partition move-0")
        .is_some());
}

#[test]
fn last_replica_standing_matches_article_003() {
    let r = run("last-replica-standing");
    // 1. C leaves the ISR while the ISR is still at the minimum: not in the ELR.
    r.assert_line(
        14000,
        14000,
        "Topic: elr Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:",
    );
    // 2. B leaves: the ISR is below min.insync.replicas, so B is kept in the ELR.
    r.assert_line(
        35000,
        35000,
        "Topic: elr Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1 Elr: 2 LastKnownElr:",
    );
    // 3. New acks=all writes fail.
    r.assert_line(36000, 36100, "acks=all -> NOT_ENOUGH_REPLICAS");
    // 5. A fails: B is elected from the ELR; C, alive, is not.
    let (_, election) = r.first_containing("using ELR").expect("an ELR election");
    assert!(
        election.contains("partition 0 to 2 using ELR"),
        "{election}"
    );
    assert!(
        r.first_containing("partition 0 to 3").is_none(),
        "C is never elected"
    );
    // Nothing committed is lost: every acknowledged record is readable.
    assert!(r.sim.losses().is_empty());
    r.assert_line(
        52000,
        52100,
        "consumer: a-1 a-2 a-3 a-4 a-5 b-1 (offsets 0..5, position 6)",
    );
}

#[test]
fn acks_walkthrough_follows_the_eight_steps() {
    let scenario: Scenario = preset("acks-walkthrough").unwrap();
    let latency = scenario.config.network_latency_ms;
    let r = run("acks-walkthrough");
    // acks=0: no response, so no offset.
    assert!(r.first_containing("acks=0 -> sent").is_some());
    // acks=1: answered after the leader's append: one round trip.
    r.assert_line(
        3000 + 2 * latency,
        3000 + 2 * latency,
        "acks=1 -> ok, offset=11",
    );
    // acks=all: produce, fetch response carrying the record, the followers' next fetch (the
    // acknowledgement), produce response: four one-way trips.
    let (t, line) = r.first_containing("acks=all -> ok, offset=12").unwrap();
    assert_eq!(waited_ms(line), 4 * latency, "{line}");
    assert_eq!(*t, 4000 + 4 * latency);

    // The followers' HW trails the leader's by one fetch: step the run and look.
    let mut sim = Sim::new(&scenario).unwrap();
    sim.advance_to(4000 + 3 * latency);
    let snap = sim.snapshot();
    let leader_hw = snap.broker(1).unwrap().high_watermark;
    let follower_hw = snap.broker(2).unwrap().high_watermark;
    assert_eq!(
        leader_hw, 13,
        "the leader's HW passed the record when the second fetch arrived"
    );
    assert_eq!(follower_hw, 12, "the follower still has the old HW");
    assert_eq!(
        snap.broker(2).unwrap().log_end_offset,
        13,
        "though it has the record"
    );
    // Its next fetch has no new data: the leader holds it up to replica.fetch.wait.max.ms;
    // only then does the follower learn HW 13.
    let wait = scenario.config.replica_fetch_wait_max_ms;
    sim.advance_to(4000 + 3 * latency + wait - 1);
    assert_eq!(sim.snapshot().broker(2).unwrap().high_watermark, 12);
    sim.advance_to(4000 + 4 * latency + wait + 1);
    assert_eq!(sim.snapshot().broker(2).unwrap().high_watermark, 13);
    r.assert_line(5000, 5100, "consumer: r-1 r-2 r-3 r-4 r-5 r-6 r-7 r-8 r-9 r-10 zero one all (offsets 0..12, position 13)");
}

#[test]
fn slow_follower_matches_article_004_first_demo() {
    let r = run("slow-follower");
    r.assert_line(2000, 2000, "rep:0:3");
    // The green area stops: records keep arriving, the HW stays where broker 3 left it.
    r.assert_line(20000, 20000, "rep:0:3");
    r.assert_line(
        20000,
        20000,
        "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:",
    );
    // After replica.lag.time.max.ms (30 s) since broker 3 last caught up (about 3 s), broker 3
    // is removed at the next isr-expiration run (every 15 s).
    let (t, _) = r
        .first_containing("Shrinking ISR from 1,2,3 to 1,2")
        .expect("broker 3 leaves the ISR");
    assert!((33_000..=48_000).contains(t), "shrink at {t}");
    // ... and the green area jumps forward to the leader's end.
    r.assert_line(46500, 46500, "rep:0:25");
    r.assert_line(
        46500,
        46500,
        "Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:",
    );
    // Broker 3, no longer slow, catches up and rejoins.
    assert!(r
        .lines
        .iter()
        .any(|(t, l)| *t > 47000 && l.ends_with("ISR updated to 1,2,3  and version updated to 2")));
    assert!(r.sim.trace_events().any(|e| e.kind() == TraceKind::Isr));
}

/// Article 004, "One slow follower makes every write slow": while the slow broker is still
/// in the ISRs, an acks=all write to a partition it follows waits until its leader drops it
/// (Partition.maybeShrinkIsr after replica.lag.time.max.ms), and a write to a partition it
/// does not follow does not wait; the metrics show the shrinks and the lag.
#[test]
fn slow_broker_matches_article_004_one_slow_follower() {
    let r = run("slow-broker");
    let lag_time_ms = 10_000;
    // The round of writes at 4 s: one record to each of the 8 partitions, offset 1 each.
    let waits: Vec<(u64, u64)> = r
        .lines
        .iter()
        .filter(|(t, l)| {
            (4000..26000).contains(t)
                && l.starts_with("acks=all -> orders-")
                && l.contains(": ok, offset=1 ")
        })
        .map(|(t, l)| (*t, waited_ms(l)))
        .collect();
    assert_eq!(waits.len(), 8, "{waits:?}");
    // Broker 3 last caught up at about 2.5 s (its last fetch before it was slowed), so it
    // leaves an ISR no earlier than 12.5 s: the writes that wait for it waited at least
    // 12.5 s - 4 s; the writes to partitions 2, 3, 5 and 7 (it leads 2 and holds none of
    // the others) a round trip.
    let slow: Vec<u64> = waits.iter().map(|w| w.1).filter(|w| *w >= 8_000).collect();
    let fast: Vec<u64> = waits.iter().map(|w| w.1).filter(|w| *w < 10).collect();
    assert_eq!((slow.len(), fast.len()), (4, 4), "{waits:?}");
    assert!(
        slow.iter().all(|w| *w <= lag_time_ms + lag_time_ms / 2),
        "answered once the isr-expiration task (every lag/2) dropped broker 3: {waits:?}"
    );
    for p in [0, 1, 4, 6] {
        let shrink = format!("[Partition orders-{p} broker=");
        assert!(
            r.lines.iter().any(|(t, l)| (12_000..=18_000).contains(t)
                && l.starts_with(&shrink)
                && l.contains("Out of sync replicas: (brokerId: 3,")),
            "orders-{p}\n{}",
            r.dump()
        );
    }
    r.assert_line(
        20000,
        20000,
        "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec cluster Count=4",
    );
    // MaxLag, FetcherLagMetrics' rule: orders-1's HW (3002: two records, then 3000) minus
    // broker 3's next fetch offset after one fetch of replica.fetch.max.bytes (1048576) from
    // offset 1. Worked by hand with DefaultRecord/DefaultRecordBatch.sizeInBytes: offset 1 is
    // a batch of one 1 KiB record (61 + 1033 bytes); the burst's batches hold 15 records
    // each at batch.size 16384 (61 + 15 x 1033 = 15556 bytes), and 67 of them fit in what is
    // left (1094 + 67 x 15556 = 1043346; a 68th would pass 1048576): 1 + 1005 records, so
    // the next fetch offset is 1007 and the lag 3002 - 1007 = 1995.
    r.assert_line(
        25000,
        25000,
        "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica broker=3 Value=1995",
    );
    r.assert_line(
        50000,
        50000,
        "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions cluster Value=0",
    );
}

/// Article 004, "You must restart every broker for an upgrade": one broker at a time, each
/// stopped cleanly only when no partition is under-replicated, and the next only when it is
/// back in every ISR; with 3 replicas and a minimum of 2 no acks=all write is refused.
#[test]
fn rolling_restart_matches_article_004_staff_question() {
    let r = run("rolling-restart");
    let produced: Vec<&String> = r
        .lines
        .iter()
        .filter(|(_, l)| l.starts_with("acks=all -> "))
        .map(|(_, l)| l)
        .collect();
    assert!(produced.len() > 60, "steady writes: {}", produced.len());
    assert!(
        produced.iter().all(|l| acknowledged(l)),
        "{:?}",
        produced.iter().find(|l| !acknowledged(l))
    );
    for (i, b) in [1u64, 2, 3].iter().enumerate() {
        let t0 = 2000 + 12000 * i as u64;
        // Before the stop: UnderReplicatedPartitions 0 everywhere, and the filtered
        // describe prints no line at all.
        r.assert_line(
            t0,
            t0,
            "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions cluster Value=0",
        );
        assert!(
            !r.lines
                .iter()
                .any(|(t, l)| *t == t0 && l.starts_with("Topic: ")),
            "--under-replicated-partitions printed something at {t0}"
        );
        r.assert_line(
            t0 + 100,
            t0 + 100,
            &format!("kill -TERM broker {b} (controlled shutdown)"),
        );
        // While it is down, each of the 6 partitions (all hold a replica on it) is
        // under-replicated on its leader.
        r.assert_line(
            t0 + 5000,
            t0 + 5000,
            "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions cluster Value=6",
        );
        // Back in every ISR before the next one goes: the 6 partitions' describe lines.
        let isrs: Vec<&String> = r
            .lines
            .iter()
            .filter(|(t, l)| *t == t0 + 10000 && l.contains(" Partition: "))
            .map(|(_, l)| l)
            .collect();
        assert_eq!(isrs.len(), 6);
        assert!(isrs.iter().all(|l| l.contains(" Isr: 1,2,3 ")), "{isrs:?}");
    }
    r.assert_line(
        40000,
        40000,
        "kafka.producer:type=producer-metrics,client-id=producer-1 record-error-total=0",
    );
    r.assert_line(
        40000,
        40000,
        "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec controller Count=0",
    );
}

#[test]
fn zone_outage_keeps_every_acks_all_write_through_a_lost_zone() {
    // Module 04, "How do you spread a cluster over three zones?": "With three replicas, each
    // partition gets one replica in each zone. With a minimum of 2, losing a whole zone
    // leaves two in-sync replicas, and writes continue."
    let r = run("zone-outage");
    let zone_b = ["3", "4"];
    let at = |t: u64| -> Vec<&String> {
        r.lines
            .iter()
            .filter(|(time, l)| {
                *time == t && l.starts_with("Topic: ") && l.contains(" Partition: ")
            })
            .map(|(_, l)| l)
            .collect()
    };
    let isr = |line: &str| -> Vec<String> {
        let start = line.find("Isr: ").expect("Isr") + "Isr: ".len();
        line[start..]
            .split(' ')
            .next()
            .unwrap_or("")
            .split(',')
            .map(str::to_string)
            .collect()
    };
    // One replica per zone: racks a (1, 2), b (3, 4), c (5, 6).
    for line in at(4_000) {
        assert_eq!(isr(line).len(), 3, "{line}");
        assert!(
            isr(line).iter().any(|b| zone_b.contains(&b.as_str())),
            "{line}"
        );
    }
    // Zone b lost: `--under-replicated-partitions` lists all nine partitions (and, under a
    // filter, no topic line), each with two in-sync replicas outside zone b.
    let after = at(20_000);
    assert_eq!(after.len(), 9);
    assert!(!r
        .lines
        .iter()
        .any(|(t, l)| *t == 20_000 && l.contains(" TopicId: ")));
    for line in after {
        let isr = isr(line);
        assert_eq!(isr.len(), 2, "{line}");
        assert!(isr.iter().all(|b| !zone_b.contains(&b.as_str())), "{line}");
        assert!(
            !line.contains("Leader: 3 ") && !line.contains("Leader: 4 "),
            "{line}"
        );
    }
    // Every acks=all write acknowledged: 60 writes, 60 results, all ok, none lost.
    let results: Vec<&String> = r
        .lines
        .iter()
        .filter(|(_, l)| l.starts_with("acks="))
        .map(|(_, l)| l)
        .collect();
    assert_eq!(results.len(), 60);
    assert!(results.iter().all(|l| acknowledged(l)), "{results:?}");
    assert!(r.sim.losses().is_empty());
    // Each fence of a zone-b broker goes out in one image with its ISR changes
    // (ReplicationControlManager.handleBrokerFenced: one batch), so the writes waiting on
    // that broker as a follower are acknowledged as soon as their leaders apply it, a few
    // milliseconds after the fence (not at a follower's next fetch, up to 500 ms later).
    for b in zone_b {
        let fence = format!("[QuorumController] Fencing broker {b} because");
        let (at, _) = r
            .lines
            .iter()
            .find(|(_, l)| l.starts_with(&fence))
            .expect("fenced");
        assert!(
            r.lines.iter().any(|(t, l)| *t > *at
                && *t <= at + 10
                && l.starts_with("acks=all -> ")
                && acknowledged(l)),
            "writes acknowledged within 10 ms of broker {b}'s fence"
        );
    }
    // The consumer in zone a reads orders-0 (led by broker 6, zone c) from broker 1.
    r.assert_line(
        21_000,
        21_010,
        "consumer: orders-0: o0-1 o0-2 o0-3 o0-4 o0-5 (offsets 0..4, position 5, from follower 1, its preferred read replica)",
    );
    // Zone b back in every ISR.
    for line in at(60_000) {
        assert_eq!(isr(line).len(), 3, "{line}");
    }
}

/// Each preset's `expect` list holds its article's figures; all must hold, and every preset
/// has some (the preset files say what they prove; `watermark check --presets` runs the
/// same check).
#[test]
fn every_preset_meets_the_expectations_it_carries() {
    for p in watermark_engine::presets::PRESETS {
        let scenario = preset(p.name).expect("preset parses");
        assert!(
            scenario.expect.len() >= 5,
            "{}: the article's figures are expectations",
            p.name
        );
        let (outcomes, violations) =
            watermark_engine::check::check_with_violations(&scenario).expect("runs");
        assert!(violations.is_empty(), "{}: {violations:?}", p.name);
        let failed: Vec<String> = outcomes
            .iter()
            .filter(|o| !o.met())
            .map(|o| o.account())
            .collect();
        assert!(failed.is_empty(), "{}:\n{}", p.name, failed.join("\n"));
        // Each expectation says, for people, which figure of the article it is.
        assert!(outcomes.iter().all(|o| !o.label.is_empty()), "{}", p.name);
    }
}

/// An acks=all produce result that succeeded, in a cluster of many partitions: its line names
/// the partition after the arrow (`acks=all -> orders-3: ok, offset=0 (waited 4 ms)`).
fn acknowledged(line: &str) -> bool {
    line.strip_prefix("acks=all -> ")
        .and_then(|rest| rest.split_once(": "))
        .is_some_and(|(tp, rest)| tp.contains('-') && rest.starts_with("ok, "))
}

/// The replication throttle (KIP-73, ReplicationQuotaManager) as `throttled-move` shows it:
/// the tool's lines for `--execute --throttle 30000` and `--verify`, byte for byte
/// (ReassignPartitionsCommand); the copy taking the log's bytes ÷ the rate (within 10%), where
/// the same move without `--throttle` takes a few fetches; and the LeaderReplication and
/// FollowerReplication `byte-rate` metrics reading about the rate during the copy (at most
/// one fetch of `replica.fetch.max.bytes` over it in an 11 s window, not far under it).
#[test]
fn throttled_move_copies_at_the_throttles_rate() {
    let r = run("throttled-move");
    for line in [
        "Current partition replica assignment",
        r#"{"version":1,"partitions":[{"topic":"move","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}"#,
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.",
        "The inter-broker throttle limit was set to 30000 B/s",
        "Successfully started partition reassignment for move-0",
    ] {
        r.assert_line(2000, 2000, line);
    }
    r.assert_line(14000, 14000, "Status of partition reassignment:");
    r.assert_line(
        14000,
        14000,
        "Reassignment of partition move-0 is still in progress.",
    );
    r.assert_line(
        26000,
        26000,
        "Reassignment of partition move-0 is completed.",
    );
    r.assert_line(
        26000,
        26000,
        "Clearing broker-level throttles on brokers 1,2,3",
    );
    r.assert_line(26000, 26000, "Clearing topic-level throttles on topic move");

    // The captions' figures: 600 records, 622 KB in whole batches.
    let snap = r.sim.snapshot();
    let log = &snap.brokers[0].records;
    assert_eq!(log.len(), 600);
    let bytes = watermark_engine::record::records_size_in_bytes(log);
    assert_eq!(bytes / 1000, 622, "{bytes}");
    let rate = 30_000;
    let expected_ms = bytes * 1000 / rate;
    let joined = |r: &Run| {
        r.first_containing("Expanding ISR from 1,2 to 1,2,3")
            .map(|(t, _)| *t)
            .expect("broker 3 joined the ISR")
    };
    let took = joined(&r) - 2000;
    assert!(
        took.abs_diff(expected_ms) <= expected_ms / 10,
        "{took} ms for {bytes} bytes at {rate} B/s (bytes / rate = {expected_ms} ms)"
    );
    assert!(took > 18_000, "still copying at 20 s, as the caption says");

    // Without --throttle the same move is a few fetches.
    // The file as written (the crate carries it without white space: engine/build.rs).
    let json = include_str!("../presets/throttled-move.json").replace(r#""throttle": 30000, "#, "");
    assert!(!json.contains("throttle\": "), "the throttle is gone");
    let free =
        watermark_engine::run(&Scenario::from_json(&json).expect("parses"), true).expect("runs");
    let free = Run {
        lines: free
            .trace_events()
            .map(|e| (e.time_ms, e.text().clone()))
            .collect(),
        sim: free,
    };
    assert!(!free.has(
        2000,
        2000,
        "The inter-broker throttle limit was set to 30000 B/s"
    ));
    assert!(joined(&free) - 2000 < 1000, "{}", joined(&free));

    // byte-rate at 14 s: broker 1's leader quota and broker 3's follower quota measure about
    // the rate; broker 2 (an in-sync follower, not throttled as one) records nothing.
    let byte_rate = |mbean: &str, broker: u32| -> u64 {
        let prefix = format!("{mbean} broker={broker} byte-rate=");
        let (_, line) = r
            .lines
            .iter()
            .find(|(t, l)| *t == 14000 && l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{prefix}"));
        line[prefix.len()..].parse().expect("a whole number")
    };
    let at_most = rate + 16_384 * 1000 / 11_000;
    for (mbean, broker) in [
        ("kafka.server:type=LeaderReplication", 1),
        ("kafka.server:type=FollowerReplication", 3),
    ] {
        let v = byte_rate(mbean, broker);
        assert!(
            v * 10 >= rate * 8 && v <= at_most,
            "{mbean} broker={broker}: {v}"
        );
    }
    assert_eq!(byte_rate("kafka.server:type=FollowerReplication", 2), 0);
    assert_eq!(byte_rate("kafka.server:type=LeaderReplication", 3), 0);
}
