//! Read-outs in the words of Kafka's own tools.

use std::fmt::Write;

use crate::broker::Broker;
use crate::log::ReplicaLog;
use crate::metadata::PartitionRegistration;
use crate::process::Process;
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
/// With `sizes` (version 2) each batch line goes on with its `position` in the log and its
/// `size` (DefaultRecordBatch.sizeInBytes), and each record is DumpLogSegments' record line
/// with `keySize`, `valueSize`, `key` and `payload`; version 1's lines stay as they were.
pub(crate) fn dump_log_lines(
    tp: &TopicPartition,
    broker: BrokerId,
    log: Option<&ReplicaLog>,
    sizes: bool,
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
