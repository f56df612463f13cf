//! Safety properties checked after every event (when `Sim::check_invariants` is on):
//!
//! - every replica: log start ≤ HW ≤ LEO;
//! - the leader is in the ISR; ISR and ELR are within the assignment and disjoint;
//! - leader and partition epochs only rise; every epoch cache is ordered;
//! - the leader's HW never falls during its leadership, and is never above the LEO of a
//!   member of its ISR;
//! - no committed record (one that a leader's HW covered) disappears unless an unclean
//!   election (or a lost disk) happened — and then the loss is reported, not hidden;
//! - an idempotent producer's record (producer id, epoch, sequence) is in a leader's log at
//!   most once: a retried batch is never appended again (checked when a leader appends).
//!
//! A violation is an engine bug: it is recorded with the seed and time that reproduce it.

use crate::vec_map::VecMap;

use crate::broker::Broker;
use crate::controller::Controller;
use crate::log::ReplicaLog;
use crate::metadata::{PartitionRegistration, Topics};
use crate::partition::Role;
use crate::process::Process;
use crate::types::{BrokerId, TopicPartition, Tp};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvariantState {
    /// Each partition's (leader epoch, partition epoch) at the last check.
    pub last_epochs: VecMap<Tp, (i32, i32)>,
    /// (partition, broker, leader epoch) → highest HW seen in that leadership.
    pub leader_hw: VecMap<(Tp, BrokerId, i32), u64>,
}

/// Most violations recorded (the first ones matter).
pub(crate) const MAX_VIOLATIONS: usize = 100;

/// Broker ids as `{:?}` writes a `Vec<u32>` (`[1, 2]`), without core's `Debug` machinery
/// for lists in the wasm.
struct List<'a>(&'a [BrokerId]);

impl std::fmt::Display for List<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}]", crate::types::Joined(self.0, ", "))
    }
}

impl InvariantState {
    /// Checks every invariant of the simulation after an event, partition by partition, and
    /// returns what does not hold, each line starting with the partition's name. It reads
    /// the nodes and processes and changes nothing of them: only this checker's memory of
    /// what it saw (the epochs and each leadership's highest HW), to tell a fall.
    pub(crate) fn check(
        &mut self,
        topics: &Topics,
        controller: &Controller,
        brokers: &VecMap<BrokerId, Broker>,
        processes: &VecMap<BrokerId, Process>,
    ) -> Vec<String> {
        let mut found: Vec<String> = vec![];
        // Every replica's log, broker by broker (a walk of each broker's partitions, not a
        // lookup per partition: at 100 partitions on 12 brokers this runs after every event).
        for b in brokers.values() {
            for (&tp, part) in &b.partitions {
                check_log(topics.name(tp), b.id, &part.log, &mut found);
            }
        }
        for (&tp, p) in &controller.partitions {
            let name = topics.name(tp);
            self.check_partition(tp, name, p, brokers, processes, &mut found);
        }
        found
    }

    fn check_partition(
        &mut self,
        tp: Tp,
        name: &TopicPartition,
        p: &PartitionRegistration,
        brokers: &VecMap<BrokerId, Broker>,
        processes: &VecMap<BrokerId, Process>,
        found: &mut Vec<String>,
    ) {
        if let Some(l) = p.leader {
            if !p.isr.contains(&l) {
                found.push(format!(
                    "{name}: leader {l} is not in the ISR {}",
                    List(&p.isr)
                ));
            }
        }
        if p.isr
            .iter()
            .chain(p.elr.iter())
            .any(|r| !p.replicas.contains(r))
        {
            found.push(format!(
                "{name}: ISR {} or ELR {} outside the replicas {}",
                List(&p.isr),
                List(&p.elr),
                List(&p.replicas)
            ));
        }
        if p.isr.iter().any(|r| p.elr.contains(r)) {
            found.push(format!(
                "{name}: ISR {} and ELR {} overlap",
                List(&p.isr),
                List(&p.elr)
            ));
        }
        let (last_le, last_pe) = self.last_epochs.get(&tp).copied().unwrap_or((0, 0));
        if p.leader_epoch < last_le {
            found.push(format!(
                "{name}: leader epoch fell from {last_le} to {}",
                p.leader_epoch
            ));
        }
        if p.partition_epoch < last_pe {
            found.push(format!(
                "{name}: partition epoch fell from {last_pe} to {}",
                p.partition_epoch
            ));
        }
        if (last_le, last_pe) != (p.leader_epoch, p.partition_epoch) {
            self.last_epochs
                .insert(tp, (p.leader_epoch, p.partition_epoch));
        }

        // Only the leader the controller recognises: a zombie (cut off, not yet told it was
        // replaced) keeps a stale view, and its followers have moved on.
        let Some(leader) = p.leader else { return };
        let Some(b) = brokers.get(&leader) else {
            return;
        };
        let Some(part) = b.partitions.get(&tp) else {
            return;
        };
        let Role::Leader(l) = &part.role else { return };
        if l.leader_epoch != p.leader_epoch || !processes[&leader].is_up() {
            return;
        }
        let hw = part.log.high_watermark;
        let key = (tp, leader, l.leader_epoch);
        if let Some(&prev) = self.leader_hw.get(&key) {
            if hw < prev {
                found.push(format!(
                    "{name}: leader {leader} HW fell from {prev} to {hw} in leader epoch {}",
                    l.leader_epoch
                ));
            }
        }
        for &m in l.isr_state.isr() {
            let Some(mb) = brokers.get(&m) else {
                continue;
            };
            if processes[&m].disk_lost {
                continue;
            }
            let member_leo = mb.partitions.get(&tp).map_or(0, |x| x.log.log_end_offset());
            if member_leo < hw {
                found.push(format!(
                    "{name}: leader {leader} HW {hw} is above ISR member {m}'s LEO {member_leo}"
                ));
            }
        }
        self.leader_hw.insert(key, hw);
    }
}

/// One replica's log: log start ≤ HW ≤ LEO, and its leader-epoch-checkpoint ordered.
fn check_log(name: &TopicPartition, broker: BrokerId, log: &ReplicaLog, found: &mut Vec<String>) {
    let leo = log.log_end_offset();
    if !(log.log_start_offset <= log.high_watermark && log.high_watermark <= leo) {
        found.push(format!(
            "{name}: broker {broker}: log start {} ≤ HW {} ≤ LEO {} does not hold",
            log.log_start_offset, log.high_watermark, leo
        ));
    }
    let entries = &log.epoch_cache.entries;
    if entries
        .windows(2)
        .any(|w| w[0].epoch >= w[1].epoch || w[0].start_offset > w[1].start_offset)
    {
        found.push(format!(
            "{name}: broker {broker}: leader-epoch-checkpoint is not ordered: {}",
            log.epoch_cache.checkpoint_line()
        ));
    }
}

/// A leader appended offsets `first..=last` of `log` as one batch: none of an idempotent
/// batch's (producerId, producerEpoch, sequence) may be in the log before it. Returns what
/// does not hold.
pub(crate) fn duplicate_append(
    log: &ReplicaLog,
    b: BrokerId,
    first: u64,
    last: u64,
) -> Option<String> {
    let head = log.record_at(first)?;
    let (pid, epoch) = (head.producer_id, i32::from(head.producer_epoch));
    if pid == crate::record::NO_PRODUCER_ID {
        return None;
    }
    // A batch's sequences are consecutive (a wrap past Integer.MAX_VALUE is not reached in a
    // scenario).
    let lowest = head.sequence;
    let highest = log.record_at(last).map_or(lowest, |r| r.sequence);
    // Backwards from the batch; the earlier appends passed this check, so the scan may stop
    // at the producer's previous epoch or at a lower sequence of this epoch.
    for o in (log.log_start_offset..first).rev() {
        let Some(r) = log.record_at(o) else { break };
        if r.producer_id != pid {
            continue;
        }
        let e = i32::from(r.producer_epoch);
        if e < epoch || (e == epoch && r.sequence < lowest) {
            break;
        }
        if e == epoch && r.sequence <= highest {
            return Some(format!(
                "broker {b} appended producerId {pid} epoch {epoch} sequence {} again at offsets {first}..{last}: it is already at offset {o}",
                r.sequence
            ));
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::scenario::Scenario;
    use crate::sim::Sim;
    use crate::types::TP0;

    /// Broker 1 leads at epoch 0 with two committed records, "a" and "b" (the observers'
    /// tests start here too).
    pub(crate) fn sim() -> Sim {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b"]}]}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(2_000);
        sim
    }

    fn check(checker: &mut super::InvariantState, sim: &Sim) -> Vec<String> {
        checker.check(&sim.topics, &sim.controller, &sim.brokers, &sim.processes)
    }

    #[test]
    fn the_checker_reads_the_simulation_and_reports_what_does_not_hold() {
        let mut sim = sim();
        let mut checker = super::InvariantState::default();
        assert_eq!(check(&mut checker, &sim), Vec::<String>::new());
        // The leader's HW above an ISR member's LEO, and a leader outside the ISR.
        sim.brokers[&1].partitions[&TP0].log.high_watermark = 2;
        sim.brokers[&3].partitions[&TP0].log.truncate_to(1);
        sim.controller.partitions[&TP0].isr = vec![2, 3];
        let before = format!("{sim:?}");
        let found = check(&mut checker, &sim);
        assert_eq!(
            found,
            [
                "rep-0: leader 1 is not in the ISR [2, 3]",
                "rep-0: leader 1 HW 2 is above ISR member 3's LEO 1",
            ]
        );
        assert_eq!(format!("{sim:?}"), before, "the check changed nothing");
        // A member whose disk was lost is not held to the HW.
        sim.controller.partitions[&TP0].isr = vec![1, 2, 3];
        sim.processes[&3].disk_lost = true;
        assert_eq!(check(&mut checker, &sim), Vec::<String>::new());
        sim.processes[&3].disk_lost = false;
        // The checker remembers the epochs it saw: a fall is reported.
        sim.brokers[&3].partitions[&TP0].log.high_watermark = 0;
        let mut checker = super::InvariantState::default();
        sim.controller.partitions[&TP0].leader_epoch = 4;
        let _ = check(&mut checker, &sim);
        sim.controller.partitions[&TP0].leader_epoch = 3;
        assert!(
            check(&mut checker, &sim).contains(&"rep-0: leader epoch fell from 4 to 3".to_string())
        );
    }

    #[test]
    fn an_idempotent_batch_appended_twice_is_found() {
        // ProducerStateManager keeps a retried batch from being appended again; this checks
        // the check: the same (producerId, epoch, sequence) written at two offsets.
        use crate::log::BatchProducer;
        let mut log = crate::log::ReplicaLog::default();
        let producer = BatchProducer {
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: 0,
        };
        let values = ["a".to_string(), "b".to_string()];
        let (first, last) = log.append_batch_as_leader(0, &values, producer, &Default::default());
        assert_eq!(super::duplicate_append(&log, 1, first, last), None);
        let next = BatchProducer {
            base_sequence: 2,
            ..producer
        };
        let (f2, l2) = log.append_batch_as_leader(0, &values, next, &Default::default());
        assert_eq!(
            super::duplicate_append(&log, 1, f2, l2),
            None,
            "the next batch"
        );
        // The first batch again (a retry the producer state let through).
        log.producers = Default::default();
        let (f3, l3) = log.append_batch_as_leader(0, &values, producer, &Default::default());
        assert_eq!(
            super::duplicate_append(&log, 1, f3, l3).as_deref(),
            Some("broker 1 appended producerId 7 epoch 0 sequence 1 again at offsets 4..5: it is already at offset 1")
        );
        // Records without a producer id are never duplicates.
        let (f4, l4) = log.append_as_leader(0, &values);
        assert_eq!(super::duplicate_append(&log, 1, f4, l4), None);
    }

    #[test]
    fn id_lists_are_written_as_debug_writes_them() {
        for ids in [vec![], vec![3], vec![1, 2, 9], vec![u32::MAX, 0]] {
            assert_eq!(super::List(&ids).to_string(), format!("{ids:?}"));
        }
    }
}
