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
pub fn describe_line(tp: &TopicPartition, p: &PartitionRegistration) -> String {
    let mut out = format!("Topic: {} Partition: {} Leader: ", tp.topic, tp.partition);
    match p.leader {
        Some(l) => {
            let _ = write!(out, "{l}");
        }
        None => out.push_str("none"),
    }
    for (name, ids) in [
        (" Replicas:", &p.replicas),
        (" Isr:", &p.isr),
        (" Elr:", &p.elr),
        (" LastKnownElr:", &p.last_known_elr),
    ] {
        out.push_str(name);
        if !ids.is_empty() {
            let _ = write!(out, " {}", Ids(ids));
        }
    }
    out
}

/// `kafka-topics.sh --describe` as TopicCommand.describeTopic prints it for a version-2
/// scenario: for every topic (or `--topic`'s), sorted by name as the tool lists them
/// (`getTopics`: `allTopics.stream().sorted()`), the topic line, then its partition lines.
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
    let mut order: Vec<usize> = (0..topics.topics.len()).collect();
    order.sort_by(|a, b| topics.topics[*a].name.cmp(&topics.topics[*b].name));
    let mut out = Vec::new();
    for t in order {
        let info = &topics.topics[t];
        if spec.topic.as_ref().is_some_and(|name| *name != info.name) {
            continue;
        }
        let first = controller.partition(Tp {
            topic: t as u16,
            partition: 0,
        });
        if !filtered {
            out.push(topic_line(
                info,
                first.replicas.len(),
                controller,
                config,
                t,
            ));
        }
        // PartitionDescription.minIsrCount: the topic's configured min.insync.replicas
        // (DescribeConfigs' value, not capped at the replication factor).
        let min_isr = controller.min_insync_replicas[t] as usize;
        for p in 0..info.partitions.len() {
            let tp = Tp {
                topic: t as u16,
                partition: p as u16,
            };
            let reg = controller.partition(tp);
            // Admin.describeCluster's nodes: the live brokers (registered, unfenced).
            let live = |b: BrokerId| controller.brokers.get(&b).is_some_and(|r| !r.fenced);
            if !filtered || selected(spec, reg, min_isr, live) {
                out.push(describe_line(&info.partitions[p], reg));
            }
        }
    }
    out
}

/// TopicDescription.printDescription: `Topic: X TopicId: ID PartitionCount: N
/// ReplicationFactor: R Configs: k=v,...`. The replication factor is the first partition's
/// (getReplicationFactor). Configs lists the entries that are not `isDefault()`: a config
/// whose source is the topic's own or the broker's (static or dynamic) is not a default
/// (ConfigHelper.createTopicConfigEntry). Of the engine's two topic configs,
/// `min.insync.replicas` is listed when the topic sets it or its value is not Kafka's
/// default 1, and `unclean.leader.election.enable` when the topic sets it or the broker's
/// is true; in the client `Config`'s HashMap order (min.insync.replicas hashes first).
pub(crate) fn topic_line(
    info: &TopicInfo,
    replication_factor: usize,
    controller: &Controller,
    config: &Config,
    t: usize,
) -> String {
    let mut configs = Vec::new();
    let min_isr = controller.min_insync_replicas[t];
    if controller.topic_min_isr_set[t] || min_isr != 1 {
        configs.push(format!("min.insync.replicas={min_isr}"));
    }
    match controller.topic_unclean[t] {
        Some(v) => configs.push(format!("unclean.leader.election.enable={v}")),
        None if config.unclean_leader_election_enable => {
            configs.push("unclean.leader.election.enable=true".into())
        }
        None => {}
    }
    // An empty value leaves its name alone, as describe_line's empty lists do.
    let mut line = format!(
        "Topic: {} TopicId: {} PartitionCount: {} ReplicationFactor: {replication_factor} Configs:",
        info.name,
        info.id,
        info.partitions.len(),
    );
    if !configs.is_empty() {
        line.push(' ');
        line.push_str(&configs.join(","));
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
    (spec.under_replicated_partitions && p.replicas.len() > isr)
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

/// Each replica's leader-epoch-checkpoint joined on one line: `broker 2: 0 2 0 0 1 10`.
pub(crate) fn epoch_lines(
    tp: Tp,
    replicas: &[BrokerId],
    brokers: &VecMap<BrokerId, Broker>,
) -> Vec<String> {
    let mut out = vec![];
    for b in crate::sort::sorted_ids(replicas) {
        out.push(format!(
            "broker {b}: {}",
            brokers[&b].log(tp).epoch_cache.checkpoint_line()
        ));
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
/// and sequences) and their records, of broker `broker`'s `log` (none: no such broker).
pub(crate) fn dump_log_lines(
    tp: &TopicPartition,
    broker: BrokerId,
    log: Option<&ReplicaLog>,
) -> Vec<String> {
    let Some(log) = log else {
        return vec![];
    };
    let mut out = vec![format!(
        "broker {broker} log ({tp}, log end offset {}):",
        log.log_end_offset()
    )];
    let records = &log.records;
    let mut i = 0;
    while i < records.len() {
        let base = records[i].batch_base;
        let epoch = records[i].epoch;
        let mut j = i;
        while j < records.len() && records[j].batch_base == base && records[j].epoch == epoch {
            j += 1;
        }
        // DumpLogSegments.printBatchLevel's words, up to partitionLeaderEpoch.
        let (first, last) = (&records[i], &records[j - 1]);
        out.push(format!(
            "  baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {}",
            first.offset,
            last.offset,
            j - i,
            first.sequence,
            last.sequence,
            first.producer_id,
            i32::from(first.producer_epoch),
            epoch
        ));
        // By index: an iterator over part of a `RecordChunks` would be more code in the wasm.
        for r in (i..j).map(|k| &records[k]) {
            out.push(format!("    offset {}: {}", r.offset, r.value));
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::partition::Role;
    use crate::scenario::Scenario;
    use crate::sim::Sim;
    use crate::types::TP0;

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
}
