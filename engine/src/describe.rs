//! Read-outs in the words of Kafka's own tools.

use crate::sim::Sim;
use crate::types::{join_ids, BrokerId};

/// `kafka-topics.sh --describe`, one partition line, as the controller's metadata says.
pub fn describe_line(sim: &Sim) -> String {
    let p = &sim.controller.partition;
    let field = |name: &str, ids: &[BrokerId]| {
        if ids.is_empty() {
            format!("{name}:")
        } else {
            format!("{name}: {}", join_ids(ids))
        }
    };
    [
        format!("Topic: {}", sim.tp.topic),
        format!("Partition: {}", sim.tp.partition),
        format!(
            "Leader: {}",
            p.leader.map_or("none".to_string(), |l| l.to_string())
        ),
        field("Replicas", &p.replicas),
        field("Isr", &p.isr),
        field("Elr", &p.elr),
        field("LastKnownElr", &p.last_known_elr),
    ]
    .join(" ")
}

/// `kafka-get-offsets.sh`: ListOffsets(LATEST) without an isolation level answers the HW.
pub fn offsets_line(sim: &Sim) -> String {
    match high_watermark(sim) {
        Some(hw) => format!("{}:{}:{}", sim.tp.topic, sim.tp.partition, hw),
        None => format!("kafka-get-offsets.sh: LEADER_NOT_AVAILABLE for {}", sim.tp),
    }
}

/// The HW as the current leader broker holds it, if there is a leader and it is up.
pub fn high_watermark(sim: &Sim) -> Option<u64> {
    let leader = sim.controller.partition.leader?;
    let b = sim.brokers.get(&leader)?;
    b.process.is_up().then_some(b.log.high_watermark)
}

fn replica_brokers(sim: &Sim) -> Vec<BrokerId> {
    let mut r = sim.controller.partition.replicas.clone();
    r.sort_unstable();
    r
}

/// Each replica's leader-epoch-checkpoint joined on one line: `broker 2: 0 2 0 0 1 10`.
pub fn epoch_lines(sim: &Sim) -> Vec<String> {
    replica_brokers(sim)
        .into_iter()
        .map(|b| {
            format!(
                "broker {b}: {}",
                sim.brokers[&b].log.epoch_cache.checkpoint_line()
            )
        })
        .collect()
}

/// Each replica's replication-offset-checkpoint entry: `broker 1: rep 0 18`.
pub fn hw_checkpoint_lines(sim: &Sim) -> Vec<String> {
    replica_brokers(sim)
        .into_iter()
        .map(|b| match sim.brokers[&b].log.hw_checkpoint {
            Some(hw) => format!("broker {b}: {} {} {hw}", sim.tp.topic, sim.tp.partition),
            None => format!("broker {b}: (no replication-offset-checkpoint)"),
        })
        .collect()
}

/// `kafka-dump-log.sh --print-data-log`, shortened: batches (with their producer id, epoch
/// and sequences) and their records.
pub fn dump_log_lines(sim: &Sim, broker: BrokerId) -> Vec<String> {
    let Some(b) = sim.brokers.get(&broker) else {
        return vec![];
    };
    let mut out = vec![format!(
        "broker {broker} log ({}, log end offset {}):",
        sim.tp,
        b.log.log_end_offset()
    )];
    let records = &b.log.records;
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
            first.producer_epoch,
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
