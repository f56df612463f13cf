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

use crate::event::{Event, LossCause};
use crate::metadata::{LeaderRecoveryState, PartitionRegistration};
use crate::sim::{Role, Sim};
use crate::snapshot::Loss;
use crate::types::BrokerId;
use crate::types::ElectionKind;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvariantState {
    pub last_leader_epoch: i32,
    pub last_partition_epoch: i32,
    /// (broker, leader epoch) → highest HW seen in that leadership.
    pub leader_hw: VecMap<(BrokerId, i32), u64>,
}

/// Most violations recorded (the first ones matter).
const MAX_VIOLATIONS: usize = 100;

/// Broker ids as `{:?}` writes a `Vec<u32>` (`[1, 2]`), without core's `Debug` machinery
/// for lists in the wasm.
struct List<'a>(&'a [BrokerId]);

impl std::fmt::Display for List<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}]", crate::types::Joined(self.0, ", "))
    }
}

/// Records a broken invariant (at most [`MAX_VIOLATIONS`], each once): the simulator's
/// record of what its observers found, in `violations` and the trace.
pub(crate) fn violation(sim: &mut Sim, what: String) {
    if sim.violations.len() >= MAX_VIOLATIONS
        || sim
            .violations
            .iter()
            .any(|v| v.starts_with(&format!("invariant broken: {what} (")))
    {
        return;
    }
    let event = Event::InvariantBroken {
        what,
        seed: sim.seed,
        at_ms: sim.now,
    };
    sim.violations.push(event.to_string());
    sim.emit(event);
}

impl InvariantState {
    /// Checks every invariant of the simulation after an event and returns what does not
    /// hold. It reads the simulation and changes nothing of it: only this checker's memory
    /// of what it saw (the epochs and each leadership's highest HW), to tell a fall.
    pub fn check(&mut self, sim: &Sim) -> Vec<String> {
        let mut found: Vec<String> = vec![];
        for b in sim.brokers.values() {
            let log = &b.log;
            let leo = log.log_end_offset();
            if !(log.log_start_offset <= log.high_watermark && log.high_watermark <= leo) {
                found.push(format!(
                    "broker {}: log start {} ≤ HW {} ≤ LEO {} does not hold",
                    b.id, log.log_start_offset, log.high_watermark, leo
                ));
            }
            let entries = &log.epoch_cache.entries;
            if entries
                .windows(2)
                .any(|w| w[0].epoch >= w[1].epoch || w[0].start_offset > w[1].start_offset)
            {
                found.push(format!(
                    "broker {}: leader-epoch-checkpoint is not ordered: {}",
                    b.id,
                    log.epoch_cache.checkpoint_line()
                ));
            }
        }
        let p = &sim.controller.partition;
        if let Some(l) = p.leader {
            if !p.isr.contains(&l) {
                found.push(format!("leader {l} is not in the ISR {}", List(&p.isr)));
            }
        }
        if p.isr
            .iter()
            .chain(p.elr.iter())
            .any(|r| !p.replicas.contains(r))
        {
            found.push(format!(
                "ISR {} or ELR {} outside the replicas {}",
                List(&p.isr),
                List(&p.elr),
                List(&p.replicas)
            ));
        }
        if p.isr.iter().any(|r| p.elr.contains(r)) {
            found.push(format!(
                "ISR {} and ELR {} overlap",
                List(&p.isr),
                List(&p.elr)
            ));
        }
        if p.leader_epoch < self.last_leader_epoch {
            found.push(format!(
                "leader epoch fell from {} to {}",
                self.last_leader_epoch, p.leader_epoch
            ));
        }
        if p.partition_epoch < self.last_partition_epoch {
            found.push(format!(
                "partition epoch fell from {} to {}",
                self.last_partition_epoch, p.partition_epoch
            ));
        }
        let (le, pe) = (p.leader_epoch, p.partition_epoch);
        self.last_leader_epoch = le;
        self.last_partition_epoch = pe;

        let mut hw_updates = vec![];
        let current = (p.leader, p.leader_epoch);
        for b in sim.brokers.values() {
            let Role::Leader(l) = &b.role else { continue };
            // Only the leader the controller recognises: a zombie (cut off, not yet told it was
            // replaced) keeps a stale view, and its followers have moved on.
            if !b.process.is_up() || current != (Some(b.id), l.leader_epoch) {
                continue;
            }
            let hw = b.log.high_watermark;
            let key = (b.id, l.leader_epoch);
            if let Some(&prev) = self.leader_hw.get(&key) {
                if hw < prev {
                    found.push(format!(
                        "leader {} HW fell from {prev} to {hw} in leader epoch {}",
                        b.id, l.leader_epoch
                    ));
                }
            }
            hw_updates.push((key, hw));
            for &m in l.isr_state.isr() {
                let Some(mb) = sim.brokers.get(&m) else {
                    continue;
                };
                if mb.disk_lost {
                    continue;
                }
                let member_leo = mb.log.log_end_offset();
                if member_leo < hw {
                    found.push(format!(
                        "leader {} HW {hw} is above ISR member {m}'s LEO {member_leo}",
                        b.id
                    ));
                }
            }
        }
        for (k, v) in hw_updates {
            self.leader_hw.insert(k, v);
        }
        found
    }
}

/// A leader appended offsets `first..=last` of an idempotent batch: none of its
/// (producerId, producerEpoch, sequence) may be in the log before it.
pub fn on_leader_append(sim: &mut Sim, b: BrokerId, first: u64, last: u64) {
    if !sim.check_invariants {
        return;
    }
    let log = &sim.brokers[&b].log;
    let Some(head) = log.record_at(first) else {
        return;
    };
    let (pid, epoch) = (head.producer_id, i32::from(head.producer_epoch));
    if pid == crate::record::NO_PRODUCER_ID {
        return;
    }
    // A batch's sequences are consecutive (a wrap past Integer.MAX_VALUE is not reached in a
    // scenario).
    let lowest = head.sequence;
    let highest = log.record_at(last).map_or(lowest, |r| r.sequence);
    // Backwards from the batch; the earlier appends passed this check, so the scan may stop
    // at the producer's previous epoch or at a lower sequence of this epoch.
    let mut dup = None;
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
            dup = Some((o, r.sequence));
            break;
        }
    }
    if let Some((o, seq)) = dup {
        violation(
            sim,
            format!(
                "broker {b} appended producerId {pid} epoch {epoch} sequence {seq} again at offsets {first}..{last}: it is already at offset {o}"
            ),
        );
    }
}

/// A leader's HW rose: the records below it are committed, if this is the leader the
/// controller recognises. A zombie (a leader already replaced, thawed or cut off, that still
/// thinks its ISR is what it last knew) can raise its own HW, but what it "commits" is not
/// the partition's committed history: letting it in would blame a later clean election for
/// records no real leader ever committed.
pub fn on_leader_hw(sim: &mut Sim, b: BrokerId, _old: u64, new: u64) {
    let recognised = sim.brokers[&b].leader_state().is_some_and(|l| {
        sim.controller.partition.leader == Some(b)
            && sim.controller.partition.leader_epoch == l.leader_epoch
    });
    if !recognised {
        return;
    }
    let from = sim.committed.len() as u64;
    if new <= from {
        return;
    }
    let records = sim.brokers[&b].log.read(from, new);
    for r in records {
        sim.committed.push(r);
    }
}

/// A broker became leader: does its log hold every committed record?
pub fn on_new_leader(sim: &mut Sim, b: BrokerId, p: &PartitionRegistration) {
    if p.leader_epoch != sim.controller.partition.leader_epoch {
        // A stale image (a broker catching up on metadata after a freeze or a cut): this
        // leadership is already over; the leader that counts is checked when it starts.
        return;
    }
    let log = &sim.brokers[&b].log;
    let first_missing = sim.committed.iter().position(|r| {
        log.record_at(r.offset)
            .is_none_or(|mine| mine.epoch != r.epoch || mine.value != r.value)
    });
    let Some(idx) = first_missing else { return };
    let lost = sim.committed.split_off(idx);
    let (Some(first), Some(last)) = (lost.first(), lost.last()) else {
        return;
    };
    let kind = sim
        .controller
        .elections
        .iter()
        .rev()
        .find(|(epoch, _)| *epoch == p.leader_epoch)
        .map(|(_, k)| *k);
    let lost_disks = sim.broker_ids_where(&|x| x.disk_lost);
    let cause = if kind == Some(ElectionKind::LastKnownLeader) {
        LossCause::LastKnownLeader { broker: b }
    } else if p.leader_recovery_state == LeaderRecoveryState::Recovering
        || kind == Some(ElectionKind::Unclean)
    {
        LossCause::UncleanElection { broker: b }
    } else if !lost_disks.is_empty() {
        LossCause::LostDisk {
            broker: b,
            lost_disks,
        }
    } else {
        violation(
            sim,
            format!(
                "committed offsets {}..{} lost by a clean election of broker {b}",
                first.offset, last.offset
            ),
        );
        LossCause::CleanElection
    };
    let values: Vec<String> = lost.iter().map(|r| r.value.clone()).collect();
    let event = Event::CommittedRecordsLost {
        broker: b,
        records: lost.clone(),
        cause: cause.clone(),
    };
    sim.emit(event);
    let cause = cause.to_string();
    sim.losses.push(Loss {
        time_ms: sim.now,
        first_offset: first.offset,
        last_offset: last.offset,
        values,
        epochs: lost.iter().map(|r| r.epoch).collect(),
        cause,
    });
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Action, Scenario};
    use crate::sim::Sim;

    fn sim() -> Sim {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b"]}]}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(2_000);
        sim
    }

    #[test]
    fn the_checker_reads_the_simulation_and_reports_what_does_not_hold() {
        let mut sim = sim();
        let mut checker = super::InvariantState::default();
        assert_eq!(checker.check(&sim), Vec::<String>::new());
        // The leader's HW above an ISR member's LEO, and a leader outside the ISR.
        sim.brokers.get_mut(&1).expect("b1").log.high_watermark = 2;
        sim.brokers.get_mut(&3).expect("b3").log.truncate_to(1);
        sim.controller.partition.isr = vec![2, 3];
        let before = format!("{sim:?}");
        let found = checker.check(&sim);
        assert_eq!(
            found,
            [
                "leader 1 is not in the ISR [2, 3]",
                "leader 1 HW 2 is above ISR member 3's LEO 1",
            ]
        );
        assert_eq!(format!("{sim:?}"), before, "the check changed nothing");
        // The checker remembers the epochs it saw: a fall is reported.
        sim.controller.partition.isr = vec![1, 2, 3];
        sim.brokers.get_mut(&3).expect("b3").log.high_watermark = 0;
        let mut checker = super::InvariantState::default();
        sim.controller.partition.leader_epoch = 4;
        let _ = checker.check(&sim);
        sim.controller.partition.leader_epoch = 3;
        assert!(checker
            .check(&sim)
            .contains(&"leader epoch fell from 4 to 3".to_string()));
    }

    #[test]
    fn a_zombie_leader_cannot_add_to_the_committed_history() {
        // Seeds 52220 and 52893 (and the others of issue 11's list): a thawed leader that the
        // controller had replaced raised its own HW; recording it made a later clean
        // election look like a loss of committed records.
        let mut sim = sim();
        assert_eq!(sim.committed.len(), 2);
        // The controller has moved on to broker 2 at epoch 1; broker 1 has not heard.
        sim.controller.partition.leader = Some(2);
        sim.controller.partition.leader_epoch = 1;
        let b1 = sim.brokers.get_mut(&1).expect("b1");
        b1.log.append_as_leader(0, &["zombie".to_string()]);
        b1.log.high_watermark = 3;
        super::on_leader_hw(&mut sim, 1, 2, 3);
        assert_eq!(
            sim.committed.len(),
            2,
            "nothing the zombie 'commits' counts"
        );
        // The recognised leader's HW does count.
        sim.controller.partition.leader = Some(1);
        sim.controller.partition.leader_epoch = 0;
        super::on_leader_hw(&mut sim, 1, 2, 3);
        assert_eq!(sim.committed.len(), 3);
    }

    #[test]
    fn a_frozen_broker_learns_a_topic_config_change_when_it_runs_again() {
        // min.insync.replicas is a dynamic topic config: the controller writes a ConfigRecord
        // and each broker applies it from the metadata log. A SIGSTOPped broker reads nothing
        // until SIGCONT, so until then its leader keeps the old minimum.
        let mut sim = sim();
        sim.apply_now(&Action::Freeze { broker: 1 })
            .expect("freeze");
        sim.apply_now(&Action::SetConfig {
            name: "min.insync.replicas".into(),
            value: 3u64.into(),
        })
        .expect("set");
        sim.advance_to(3_000);
        assert_eq!(sim.broker_min_isr(1, 3), 1, "frozen: not read yet");
        assert_eq!(sim.broker_min_isr(2, 3), 3, "running: read at once");
        sim.apply_now(&Action::Thaw { broker: 1 }).expect("thaw");
        sim.advance_to(3_100);
        assert_eq!(sim.broker_min_isr(1, 3), 3, "read on thaw");
    }

    #[test]
    fn a_loss_names_its_cause() {
        use crate::types::ElectionKind;
        // Broker 2's log is emptied and it is made leader of a new epoch: the two committed
        // records are gone. What the loss says depends on how the controller chose it.
        let lose = |kind: Option<ElectionKind>, disk: bool| -> String {
            let mut sim = sim();
            sim.brokers.get_mut(&2).expect("b2").log.wipe();
            if disk {
                sim.brokers.get_mut(&3).expect("b3").disk_lost = true;
            }
            let mut p = sim.controller.partition.clone();
            p.leader = Some(2);
            p.leader_epoch += 1;
            sim.controller.partition = p.clone();
            if let Some(k) = kind {
                sim.controller.elections.push((p.leader_epoch, k));
            }
            super::on_new_leader(&mut sim, 2, &p);
            assert_eq!(sim.losses().len(), 1);
            sim.losses()[0].cause.clone()
        };
        assert!(lose(Some(ElectionKind::LastKnownLeader), false).contains("last known leader"));
        assert!(lose(Some(ElectionKind::Unclean), false).contains("unclean election"));
        let disk = lose(Some(ElectionKind::Clean), true);
        assert!(disk.contains("broker 3 lost its disk"), "{disk}");
        assert!(
            lose(Some(ElectionKind::Clean), false).contains("engine bug"),
            "a clean election that loses committed records is a violation"
        );
    }

    #[test]
    fn id_lists_are_written_as_debug_writes_them() {
        for ids in [vec![], vec![3], vec![1, 2, 9], vec![u32::MAX, 0]] {
            assert_eq!(super::List(&ids).to_string(), format!("{ids:?}"));
        }
    }
}
