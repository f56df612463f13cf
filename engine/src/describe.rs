//! Read-outs in the words of Kafka's own tools.

use std::fmt::Write;

use crate::broker::Broker;
use crate::config::Config;
use crate::controller::Controller;
use crate::log::ReplicaLog;
use crate::metadata::{PartitionRegistration, TopicInfo, Topics};
use crate::process::Process;
use crate::scenario::DescribeSpec;
use crate::types::{BrokerId, Ids, TopicPartition, Tp};
use crate::vec_map::VecMap;

/// `kafka-topics.sh --describe`, one partition line, as the controller's metadata says.
/// Written into one String (not a String per field joined after): the snapshot builds it
/// every frame, and the joined form was twice the code.
/// Before Kafka 3.8 (`protocol`'s [`Protocol::has_describe_topic_partitions`]) the tool has
/// no ELR to print: `Elr: N/A LastKnownElr: N/A`.
pub fn describe_line(
    tp: &TopicPartition,
    p: &PartitionRegistration,
    protocol: crate::protocol::Protocol,
) -> String {
    let mut out = format!("Topic: {} Partition: {} Leader: ", tp.topic, tp.partition);
    match p.leader {
        Some(l) => {
            let _ = write!(out, "{l}");
        }
        None => out.push_str("none"),
    }
    // TopicCommand.PartitionDescription: `Adding Replicas:` and `Removing Replicas:` after
    // the ISR while a reassignment is in progress (ListPartitionReassignments lists it).
    let reassigning = p.is_reassigning();
    for (name, ids) in [
        (" Replicas:", &p.replicas),
        (" Isr:", &p.isr),
        (" Adding Replicas:", &p.adding_replicas),
        (" Removing Replicas:", &p.removing_replicas),
        (" Elr:", &p.elr),
        (" LastKnownElr:", &p.last_known_elr),
    ] {
        if !reassigning && name.ends_with("ing Replicas:") {
            continue;
        }
        out.push_str(name);
        if name.ends_with("Elr:") && !protocol.has_describe_topic_partitions() {
            out.push_str(" N/A");
            continue;
        }
        if !ids.is_empty() {
            let _ = write!(out, " {}", Ids(ids));
        }
    }
    out
}

/// `kafka-topics.sh --describe` as TopicCommand.describeTopic prints it for a version-2
/// scenario: for every topic (or `--topic`'s), in the tool's order ([`topic_order`]), the
/// topic line, then its partition lines.
/// With a filter, only the partitions one of the filters selects and no topic line
/// (DescribeOptions: `describeConfigs` is false when any filter is given). Fields are
/// joined with spaces, not the tool's tabs, and a partition line has no leading tab
/// (docs/engine.md, "Describe lines").
pub(crate) fn describe_lines(
    spec: &DescribeSpec,
    topics: &Topics,
    controller: &Controller,
    config: &Config,
) -> Vec<String> {
    let filtered = spec.filters().contains(&true);
    let listed = listed_partitions(spec, topics, controller);
    let mut next = listed.iter().peekable();
    let mut out = Vec::new();
    for t in topic_order(topics) {
        let info = &topics.topics[t];
        if spec.topic.as_ref().is_some_and(|name| *name != info.name) {
            continue;
        }
        if !filtered {
            let first = controller.partition(Tp {
                topic: t as u16,
                partition: 0,
            });
            let flush = topics.flush.get(t).copied().unwrap_or_default();
            out.push(topic_line(
                info,
                first.replication_factor(),
                controller,
                config,
                t,
                flush,
            ));
        }
        while let Some(tp) = next.next_if(|tp| usize::from(tp.topic) == t) {
            out.push(describe_line(
                &info.partitions[usize::from(tp.partition)],
                controller.partition(*tp),
                config.protocol,
            ));
        }
    }
    out
}

/// The partitions whose lines `kafka-topics.sh --describe` prints with `spec`, in its order
/// (topic by topic in [`topic_order`], partitions in index order): every partition of every
/// topic (or of `--topic`'s), or with a filter those it selects ([`selected`]).
pub(crate) fn listed_partitions(
    spec: &DescribeSpec,
    topics: &Topics,
    controller: &Controller,
) -> Vec<Tp> {
    let filtered = spec.filters().contains(&true);
    // Admin.describeCluster's nodes: the live brokers (registered, unfenced).
    let live = |b: BrokerId| controller.brokers.get(&b).is_some_and(|r| !r.fenced);
    let mut out = Vec::new();
    for t in topic_order(topics) {
        let info = &topics.topics[t];
        if spec.topic.as_ref().is_some_and(|name| *name != info.name) {
            continue;
        }
        // PartitionDescription.minIsrCount: the topic's configured min.insync.replicas
        // (DescribeConfigs' value, not capped at the replication factor).
        let min_isr = controller.min_insync_replicas[t] as usize;
        for p in 0..info.partitions.len() {
            let tp = Tp {
                topic: t as u16,
                partition: p as u16,
            };
            if !filtered || selected(spec, controller.partition(tp), min_isr, live) {
                out.push(tp);
            }
        }
    }
    out
}

/// The order TopicCommand prints the topics in. It asks for them sorted by name
/// (`getTopics`), but `describeTopics(...).allTopicNames()` hands them back in a
/// `new HashMap<>(n)` (DescribeTopicsResult.all), which the tool iterates: by bucket,
/// `(h ^ (h >>> 16)) & (capacity - 1)` of the name's String.hashCode, the capacity
/// `tableSizeFor(n)` doubled while `n` passes three quarters of it (HashMap.resize); names
/// in one bucket stay in the order they were put, sorted.
pub(crate) fn topic_order(topics: &Topics) -> Vec<usize> {
    let n = topics.topics.len();
    let mut capacity = n.max(1).next_power_of_two();
    while n > capacity * 3 / 4 {
        capacity *= 2;
    }
    // The key: the bucket, then the name's rank among the names (counted, not sorted: at
    // most 200 topics, and no string sort in the wasm; `sort::stable_order` sorts keys).
    let mut keys = Vec::with_capacity(n);
    for info in &topics.topics {
        let h = crate::hashing::java_string_hash(&info.name) as u32;
        let bucket = u64::from(h ^ (h >> 16)) & (capacity as u64 - 1);
        let mut rank = 0;
        for other in &topics.topics {
            if other.name < info.name {
                rank += 1;
            }
        }
        keys.push(bucket << 16 | rank);
    }
    crate::sort::stable_order(&keys)
}

/// TopicDescription.printDescription: `Topic: X TopicId: ID PartitionCount: N
/// ReplicationFactor: R Configs: k=v,...`. The replication factor is the first partition's
/// (getReplicationFactor). Configs lists the entries that are not `isDefault()`: a config
/// whose source is the topic's own or the broker's (static or dynamic) is not a default
/// (ConfigHelper.createTopicConfigEntry). Of the engine's two topic configs,
/// `min.insync.replicas` is listed when the topic sets it or its value is not Kafka's
/// default 1, `unclean.leader.election.enable` when the topic sets it or the broker's
/// is true, `flush.messages` and `flush.ms` when the topic or the broker sets them; in the
/// client `Config`'s HashMap order (min.insync.replicas hashes first).
pub(crate) fn topic_line(
    info: &TopicInfo,
    replication_factor: usize,
    controller: &Controller,
    config: &Config,
    t: usize,
    flush: (Option<u64>, Option<u64>),
) -> String {
    let mut line = format!(
        "Topic: {} TopicId: {} PartitionCount: {} ReplicationFactor: {replication_factor} Configs:",
        info.name,
        info.id,
        info.partitions.len(),
    );
    // An empty value leaves its name alone, as describe_line's empty lists do; entries are
    // joined by commas. The order is the HashMap's of the topic's ~45 configs (capacity 64
    // or more: buckets 4, 10, 22 and 45 of String.hashCode spread for these four names):
    // leader.replication.throttled.replicas, min.insync.replicas,
    // follower.replication.throttled.replicas, unclean.leader.election.enable.
    let mut entries: Vec<String> = Vec::new();
    let throttled = controller.throttled_replicas.get(&(t as u16));
    if let Some((leader, _)) = throttled.filter(|(l, _)| !l.is_empty()) {
        entries.push(format!("leader.replication.throttled.replicas={leader}"));
    }
    let min_isr = controller.min_insync_replicas[t];
    if controller.topic_min_isr_set[t] || min_isr != 1 {
        entries.push(format!("min.insync.replicas={min_isr}"));
    }
    // flush.ms (bucket 20) and flush.messages (bucket 30): set on the topic, or on the broker
    // (their synonyms log.flush.interval.ms and log.flush.scheduler.interval.ms, and
    // log.flush.interval.messages: a STATIC_BROKER_CONFIG source is not a default).
    let broker_ms_set = config.log_flush_ms() != crate::config::LOG_FLUSH_NEVER;
    if flush.1.is_some() || broker_ms_set {
        let v = flush.1.unwrap_or(config.log_flush_ms());
        entries.push(format!("flush.ms={v}"));
    }
    let flush_messages = if flush.0.is_some()
        || config.log_flush_interval_messages != crate::config::LOG_FLUSH_NEVER
    {
        Some(flush.0.unwrap_or(config.log_flush_interval_messages))
    } else {
        None
    };
    if let Some((_, follower)) = throttled.filter(|(_, f)| !f.is_empty()) {
        entries.push(format!(
            "follower.replication.throttled.replicas={follower}"
        ));
    }
    if let Some(v) = flush_messages {
        entries.push(format!("flush.messages={v}"));
    }
    let unclean = controller.topic_unclean[t];
    if unclean.is_some() || config.unclean_leader_election_enable {
        let v = unclean.unwrap_or(true);
        entries.push(format!("unclean.leader.election.enable={v}"));
    }
    if !entries.is_empty() {
        let _ = write!(line, " {}", entries.join(","));
    }
    line
}

/// Whether any filter of `spec` selects partition `p` (DescribeOptions.shouldPrintTopicPartition),
/// with `min_isr` its topic's configured `min.insync.replicas` and `live` the brokers
/// Admin.describeCluster lists.
pub(crate) fn selected(
    spec: &DescribeSpec,
    p: &PartitionRegistration,
    min_isr: usize,
    live: impl Fn(BrokerId) -> bool,
) -> bool {
    let isr = p.isr.len();
    // PartitionDescription.isUnderReplicated: getReplicationFactor - isr.size > 0;
    // isUnderMinIsr: !hasLeader || isr.size < minIsrCount; isAtMinIsrPartitions:
    // minIsrCount == isr.size; hasUnavailablePartitions: !hasLeader || the leader is not
    // a live broker.
    (spec.under_replicated_partitions && p.replication_factor() > isr)
        || (spec.under_min_isr_partitions && (p.leader.is_none() || isr < min_isr))
        || (spec.at_min_isr_partitions && isr == min_isr)
        || (spec.unavailable_partitions && !p.leader.is_some_and(live))
}

/// `kafka-get-offsets.sh`: ListOffsets(LATEST), read-uncommitted, answers the leader's HW.
///
/// Partition.fetchOffsetForTimestamp (KIP-207): while the leader's HW is below the start
/// offset of its leader epoch (a new leader whose HW has not caught up yet), a client's
/// ListOffsets gets OFFSET_NOT_AVAILABLE, so the end offset a tool prints never goes
/// backwards across a leader change. A broker that does not know yet that it leads answers
/// NOT_LEADER_OR_FOLLOWER. Both are retriable: the tool retries until it gets an offset.
pub(crate) fn offsets_line(
    tp_key: Tp,
    tp: &TopicPartition,
    p: &PartitionRegistration,
    brokers: &VecMap<BrokerId, Broker>,
    processes: &VecMap<BrokerId, Process>,
) -> String {
    let Some(b) = p
        .leader
        .and_then(|l| brokers.get(&l))
        .filter(|b| processes[&b.id].is_up())
    else {
        return format!("kafka-get-offsets.sh: LEADER_NOT_AVAILABLE for {tp}");
    };
    let partition = b.partition(tp_key);
    let hw = partition.log.high_watermark;
    match partition.leader_state() {
        Some(l) if l.epoch_start_offset > hw => format!(
            "kafka-get-offsets.sh: OFFSET_NOT_AVAILABLE for {}: the high watermark ({hw}) of leader {} at leader epoch {} is lagging behind the start offset from the beginning of this epoch ({}); the tool retries",
            tp, b.id, l.leader_epoch, l.epoch_start_offset
        ),
        Some(_) => format!("{}:{}:{}", tp.topic, tp.partition, hw),
        None => format!(
            "kafka-get-offsets.sh: NOT_LEADER_OR_FOLLOWER for {}: broker {} has not applied its leadership yet; the tool retries",
            tp, b.id
        ),
    }
}

/// Each replica's leader-epoch-checkpoint joined on one line: `broker 2: 0 2 0 0 1 10`, or
/// with the partition's `label` where the cluster has more than one (each partition's
/// directory holds its own file, `/var/lib/kafka/data/orders-3/leader-epoch-checkpoint`):
/// `broker 2: orders-3: 0 2 0 0 1 10`.
pub(crate) fn epoch_lines(
    tp: Tp,
    label: Option<&TopicPartition>,
    replicas: &[BrokerId],
    brokers: &VecMap<BrokerId, Broker>,
) -> Vec<String> {
    let mut out = vec![];
    for b in crate::sort::sorted_ids(replicas) {
        let mut line = format!("broker {b}: ");
        if let Some(tp) = label {
            line.push_str(&format!("{tp}: "));
        }
        // A replica that has no log of it yet (one a reassignment adds, before its broker
        // applied the change) has no file.
        match brokers[&b].partitions.get(&tp) {
            Some(p) => line.push_str(&p.log.epoch_cache.checkpoint_line()),
            None => line.push_str("(no leader-epoch-checkpoint)"),
        }
        out.push(line);
    }
    out
}

/// Each replica's replication-offset-checkpoint entry: `broker 1: rep 0 18`.
pub(crate) fn hw_checkpoint_lines(
    tp_key: Tp,
    tp: &TopicPartition,
    replicas: &[BrokerId],
    brokers: &VecMap<BrokerId, Broker>,
) -> Vec<String> {
    let mut out = vec![];
    for b in crate::sort::sorted_ids(replicas) {
        out.push(match brokers[&b].log(tp_key).hw_checkpoint {
            Some(hw) => format!("broker {b}: {} {} {hw}", tp.topic, tp.partition),
            None => format!("broker {b}: (no replication-offset-checkpoint)"),
        });
    }
    out
}

/// `kafka-dump-log.sh --print-data-log`, shortened: batches (with their producer id, epoch
/// and sequences) and their records, of broker `broker`'s `log` of partition `tp`.
/// With `sizes` (version 2) each batch line goes on with its `position` in the log and its
/// `size` (DefaultRecordBatch.sizeInBytes), and each record is DumpLogSegments' record line
/// with `keySize`, `valueSize`, `key` and `payload`; version 1's lines stay as they were.
pub(crate) fn dump_log_lines(
    tp: &TopicPartition,
    broker: BrokerId,
    log: &ReplicaLog,
    sizes: bool,
) -> Vec<String> {
    let mut out = vec![format!(
        "broker {broker} log ({tp}, log end offset {}):",
        log.log_end_offset()
    )];
    let records = &log.records;
    let mut i = 0;
    let mut position = 0;
    while i < records.len() {
        let base = records[i].batch_base;
        let epoch = records[i].epoch;
        let mut j = i;
        while j < records.len() && records[j].batch_base == base && records[j].epoch == epoch {
            j += 1;
        }
        // DumpLogSegments.printBatchLevel's words, up to partitionLeaderEpoch.
        let (first, last) = (&records[i], &records[j - 1]);
        let mut line = format!(
            "  baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {}",
            first.offset,
            last.offset,
            j - i,
            first.sequence,
            last.sequence,
            first.producer_id,
            i32::from(first.producer_epoch),
            epoch
        );
        if sizes {
            let mut size = crate::record::RECORD_BATCH_OVERHEAD;
            for k in i..j {
                size += records[k].size_in_bytes();
            }
            line.push_str(&format!(" position: {position} size: {size}"));
            position += size;
        }
        out.push(line);
        // By index: an iterator over part of a `RecordChunks` would be more code in the wasm.
        for r in (i..j).map(|k| &records[k]) {
            out.push(if sizes {
                // DumpLogSegments' record line (no timestamps here): `| offset: … keySize: …
                // valueSize: … sequence: … headerKeys: []`, then `key: …` when there is one
                // and `payload: …` (--print-data-log).
                let key_size = r.key.as_ref().map_or(-1, |k| k.len() as i64);
                let key = r.key.as_ref().map(|k| format!(" key: {k}")).unwrap_or_default();
                format!(
                    "    | offset: {} keySize: {key_size} valueSize: {} sequence: {} headerKeys: []{key} payload: {}",
                    r.offset,
                    r.value_bytes(),
                    r.sequence,
                    r.value
                )
            } else {
                format!("    offset {}: {}", r.offset, r.value)
            });
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{selected, topic_order};
    use crate::event::Tool;
    use crate::metadata::{PartitionRegistration, Topics};
    use crate::partition::Role;
    use crate::scenario::{DescribeSpec, Scenario};
    use crate::sim::Sim;
    use crate::types::TP0;

    fn registration(leader: Option<u32>, replicas: &[u32], isr: &[u32]) -> PartitionRegistration {
        let mut p = PartitionRegistration::new(replicas.to_vec(), leader);
        p.isr = isr.to_vec();
        p
    }

    fn spec(filters: [bool; 4]) -> DescribeSpec {
        DescribeSpec {
            topic: None,
            under_replicated_partitions: filters[0],
            under_min_isr_partitions: filters[1],
            at_min_isr_partitions: filters[2],
            unavailable_partitions: filters[3],
        }
    }

    #[test]
    fn each_filter_selects_as_topic_command_does() {
        const UNDER_REPLICATED: [bool; 4] = [true, false, false, false];
        const UNDER_MIN_ISR: [bool; 4] = [false, true, false, false];
        const AT_MIN_ISR: [bool; 4] = [false, false, true, false];
        const UNAVAILABLE: [bool; 4] = [false, false, false, true];
        let live = |b: u32| b != 9;
        // Every broker in sync: no filter selects it (min.insync.replicas 2 of 3).
        let full = registration(Some(1), &[1, 2, 3], &[1, 2, 3]);
        for f in [UNDER_REPLICATED, UNDER_MIN_ISR, AT_MIN_ISR, UNAVAILABLE] {
            assert!(!selected(&spec(f), &full, 2, live), "{f:?}");
        }
        // testDescribeUnderReplicatedPartitions: RF 6 with one broker down, ISR 5.
        let five_of_six = registration(Some(2), &[1, 2, 3, 4, 5, 6], &[2, 3, 4, 5, 6]);
        assert!(selected(&spec(UNDER_REPLICATED), &five_of_six, 1, live));
        // testDescribeUnderMinIsrPartitionsMixed: min 6 selects it, the default 1 not.
        assert!(selected(&spec(UNDER_MIN_ISR), &five_of_six, 6, live));
        assert!(!selected(&spec(UNDER_MIN_ISR), &five_of_six, 1, live));
        // ... and an offline partition is under min ISR whatever its ISR (!hasLeader).
        let offline = registration(None, &[1], &[1]);
        assert!(selected(&spec(UNDER_MIN_ISR), &offline, 1, live));
        // testDescribeAtMinIsrPartitions: min 4, two of six down: ISR 4 == 4.
        let four_of_six = registration(Some(3), &[1, 2, 3, 4, 5, 6], &[3, 4, 5, 6]);
        assert!(selected(&spec(AT_MIN_ISR), &four_of_six, 4, live));
        assert!(!selected(&spec(AT_MIN_ISR), &four_of_six, 3, live));
        // minIsrCount is the configured value, not capped at the replication factor: a
        // topic with min 4 over three replicas is never "at" it, always under it.
        assert!(!selected(&spec(AT_MIN_ISR), &full, 4, live));
        assert!(selected(&spec(UNDER_MIN_ISR), &full, 4, live));
        // testDescribeUnavailablePartitions: no leader, or a leader not among the live
        // brokers.
        assert!(selected(&spec(UNAVAILABLE), &offline, 1, live));
        let dead_leader = registration(Some(9), &[9, 1], &[9, 1]);
        assert!(selected(&spec(UNAVAILABLE), &dead_leader, 1, live));
        assert!(!selected(&spec(UNAVAILABLE), &full, 1, live));
        // Several filters: a partition any of them selects (shouldPrintTopicPartition ORs).
        assert!(
            selected(&spec([true, false, false, true]), &offline, 1, live) && {
                let p = registration(Some(1), &[1, 2], &[1]);
                selected(&spec([true, false, false, true]), &p, 1, live)
            }
        );
    }

    #[test]
    fn topics_come_in_the_order_of_the_tools_hash_map() {
        // testDescribeUnderMinIsrPartitionsMixed expects under-min-isr-topic before
        // offline-topic though the tool sorts the names: HashMap(4) has 8 buckets,
        // not-under-min-isr-topic hashes to 0, under-min-isr-topic to 1, offline-topic to 6,
        // fully-replicated-topic to 7 (String.hashCode, spread by h ^ h >>> 16).
        let topics = Topics::new(
            0,
            &[
                ("under-min-isr-topic".into(), 1),
                ("not-under-min-isr-topic".into(), 1),
                ("offline-topic".into(), 1),
                ("fully-replicated-topic".into(), 1),
            ],
        );
        assert_eq!(topic_order(&topics), [1, 0, 2, 3]);
        // Names in one bucket keep the tool's sorted order: one topic (1 bucket), and "b"
        // (98) and "a" (97) in 2 buckets (HashMap(2): tableSizeFor 2, doubled to 4 as 2 > 1).
        let two = Topics::new(0, &[("b".into(), 1), ("a".into(), 1)]);
        assert_eq!(topic_order(&two), [1, 0]);
    }

    /// The describe lines at `t`.
    fn describe_at(sim: &Sim, t: u64) -> Vec<String> {
        sim.trace_events()
            .filter(|e| e.time_ms == t)
            .filter(|e| {
                matches!(
                    e.event(),
                    crate::event::Event::ToolOutput {
                        tool: Tool::Describe,
                        ..
                    }
                )
            })
            .map(|e| e.text().clone())
            .collect()
    }

    #[test]
    fn the_tools_output_with_and_without_filters() {
        // testDescribeUnderMinIsrPartitionsMixed, its brokers 0..5 as 1..6: broker 1 shuts
        // down; --under-min-isr-partitions prints under-min-isr-topic's partition, then
        // offline-topic's, and no topic line. Without a filter each topic has its line.
        let s = Scenario::from_json(
            r#"{"version": 2, "brokers": 6, "topics": [
                {"name": "under-min-isr-topic", "replication_factor": 6, "configs": {"min.insync.replicas": 6}},
                {"name": "not-under-min-isr-topic", "replication_factor": 6},
                {"name": "offline-topic", "assignment": [[1]]},
                {"name": "fully-replicated-topic", "assignment": [[2, 3, 4]]}],
              "timeline": [
                {"at": 1000, "action": "stop", "broker": 1},
                {"at": 20000, "action": "describe", "under_min_isr_partitions": true},
                {"at": 20001, "action": "describe", "topic": "offline-topic"},
                {"at": 20002, "action": "describe", "under_replicated_partitions": true},
                {"at": 20003, "action": "describe", "unavailable_partitions": true},
                {"at": 20004, "action": "describe", "at_min_isr_partitions": true},
                {"at": 20005, "action": "describe", "topic": "fully-replicated-topic",
                 "under_replicated_partitions": true}],
              "end_ms": 20010}"#,
        )
        .expect("scenario");
        let sim = crate::run(&s, true).expect("runs");
        let under_min = describe_at(&sim, 20000);
        assert_eq!(under_min.len(), 2, "{under_min:?}");
        assert!(under_min[0].starts_with("Topic: under-min-isr-topic Partition: 0 Leader: "));
        assert!(under_min[1].starts_with("Topic: offline-topic Partition: 0 Leader: none "));
        // --topic: the topic line (TopicId, PartitionCount, ReplicationFactor, no Configs
        // of its own), then its partition.
        let offline = describe_at(&sim, 20001);
        let id = &sim.topics.topics[2].id;
        assert_eq!(
            offline,
            [
                format!("Topic: offline-topic TopicId: {id} PartitionCount: 1 ReplicationFactor: 1 Configs:"),
                // testDescribeUnavailablePartitions checks "Leader: none\tReplicas: 0\tIsr:";
                // with ELR (KIP-966) the fenced last member moves to the ELR, as article
                // 004's lab shows ("Isr:   Elr: 2  LastKnownElr: 2").
                "Topic: offline-topic Partition: 0 Leader: none Replicas: 1 Isr: Elr: 1 LastKnownElr: 1".into()
            ]
        );
        // Under-replicated: both RF-6 topics (5 of 6 in sync) and the offline one (an empty
        // ISR of one replica), in the tool's order.
        let under = describe_at(&sim, 20002);
        assert_eq!(under.len(), 3, "{under:?}");
        assert!(under[0].starts_with("Topic: not-under-min-isr-topic Partition: 0"));
        assert!(under[1].starts_with("Topic: under-min-isr-topic Partition: 0"));
        assert!(under[2].starts_with("Topic: offline-topic Partition: 0"));
        // Unavailable: the offline one. At min ISR: none (5 in sync of min 6, or of min 1).
        assert_eq!(describe_at(&sim, 20003).len(), 1);
        assert!(describe_at(&sim, 20003)[0].starts_with("Topic: offline-topic Partition: 0"));
        assert_eq!(describe_at(&sim, 20004), Vec::<String>::new());
        // A filter with --topic: that topic's selected partitions only (none here).
        assert_eq!(describe_at(&sim, 20005), Vec::<String>::new());
    }

    #[test]
    fn the_topic_line_lists_the_configs_that_are_not_defaults() {
        // ConfigHelper.createTopicConfigEntry: the topic's own config and the broker's
        // (server.properties) are both "not default"; the client's HashMap lists
        // min.insync.replicas before unclean.leader.election.enable.
        let s = Scenario::from_json(
            r#"{"version": 2, "brokers": 3, "config": {"min.insync.replicas": 2},
              "topics": [
                {"name": "own", "replication_factor": 3,
                 "configs": {"min.insync.replicas": 1, "unclean.leader.election.enable": true}},
                {"name": "broker", "partitions": 2, "replication_factor": 2}],
              "timeline": [{"at": 10, "action": "describe"}], "end_ms": 20}"#,
        )
        .expect("scenario");
        let sim = crate::run(&s, true).expect("runs");
        let lines = describe_at(&sim, 10);
        let topic_lines: Vec<&String> = lines.iter().filter(|l| l.contains("TopicId: ")).collect();
        assert_eq!(topic_lines.len(), 2, "{lines:?}");
        let own = topic_lines
            .iter()
            .find(|l| l.starts_with("Topic: own "))
            .expect("own");
        assert!(
            own.ends_with(
                " PartitionCount: 1 ReplicationFactor: 3 Configs: min.insync.replicas=1,unclean.leader.election.enable=true"
            ),
            "{own}"
        );
        let broker = topic_lines
            .iter()
            .find(|l| l.starts_with("Topic: broker "))
            .expect("broker");
        assert!(
            broker.ends_with(
                " PartitionCount: 2 ReplicationFactor: 2 Configs: min.insync.replicas=2"
            ),
            "{broker}"
        );
        assert_eq!(
            lines.len(),
            5,
            "two topic lines, three partition lines: {lines:?}"
        );
    }

    #[test]
    fn a_new_leader_whose_hw_is_behind_its_epoch_start_answers_offset_not_available() {
        // Partition.fetchOffsetForTimestamp (KIP-207): "Failed to fetch offsets ... as this
        // partition's high watermark (HW) is lagging behind the start offset from the
        // beginning of this epoch (start)" → OFFSET_NOT_AVAILABLE for LATEST_TIMESTAMP.
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b","c","d","e"]}]}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(2_000);
        assert_eq!(sim.offsets_line(), "rep:0:5");
        let b = &mut sim.brokers.get_mut(&1).expect("b1").partitions[&TP0];
        b.log.high_watermark = 2;
        if let Role::Leader(l) = &mut b.role {
            l.epoch_start_offset = 5;
        }
        let line = sim.offsets_line();
        assert!(
            line.starts_with("kafka-get-offsets.sh: OFFSET_NOT_AVAILABLE for rep-0")
                && line.contains("high watermark (2)")
                && line.contains("(5)"),
            "{line}"
        );
        sim.brokers.get_mut(&1).expect("b1").partitions[&TP0]
            .log
            .high_watermark = 5;
        assert_eq!(
            sim.offsets_line(),
            "rep:0:5",
            "at the epoch start it answers"
        );
    }

    #[test]
    fn the_eras_before_kafka_3_8_print_no_elr() {
        // One broker of two stopped under each mode; a version-1 and a version-2 describe.
        // KIP-966's DescribeTopicPartitions (3.8) carries the ELR: with it, the lists
        // (empty under `no-elr`, as Kafka 4.0 with the feature at 0); without it, the tool's
        // Metadata fallback has none, and it prints N/A.
        let run = |version: u8, protocol: &str| {
            let topics = if version == 2 {
                r#""topics": [{"name": "rep", "replication_factor": 2}],"#
            } else {
                ""
            };
            let s = Scenario::from_json(&format!(
                r#"{{"version": {version}, "protocol": "{protocol}", "brokers": 2, {topics}
                    "config": {{"min.insync.replicas": 2}},
                    "timeline": [{{"at": 1000, "action": "stop", "broker": 2}},
                                 {{"at": 20000, "action": "describe"}}],
                    "end_ms": 20001}}"#
            ))
            .expect("scenario");
            let sim = crate::run(&s, true).expect("runs");
            let mut lines = describe_at(&sim, 20000);
            lines.retain(|l| l.contains("Partition:"));
            lines
        };
        for version in [1, 2] {
            let ends = |protocol: &str| {
                let lines = run(version, protocol);
                assert_eq!(lines.len(), 1, "{lines:?}");
                let l = &lines[0];
                l[l.find(" Isr:").expect("Isr")..].to_string()
            };
            assert_eq!(ends("kafka-4"), " Isr: 1 Elr: 2 LastKnownElr:");
            assert_eq!(ends("no-elr"), " Isr: 1 Elr: LastKnownElr:");
            for old in [
                "pre-kip-903",
                "pre-kip-320",
                "kip-101-without-kip-279",
                "pre-kip-101",
            ] {
                assert_eq!(ends(old), " Isr: 1 Elr: N/A LastKnownElr: N/A", "{old}");
            }
        }
    }
}
