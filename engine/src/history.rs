//! The committed history: the simulator's record of every record that a leader the
//! controller recognised covered with its high watermark, and of the committed records a
//! later leader did not have (a loss, with its cause).
//!
//! An observer of the brokers' effects (`Observation::HighWatermark`, `NewLeader`): it reads
//! the nodes and changes none of them. The view draws a replica's record as committed when
//! it equals the history's record at its offset, which stays true after the leader that
//! committed it dies.

use crate::controller::Controller;
use crate::event::{Event, HistoricalAnomaly, LossCause, OwnDataLoss};
use crate::log::ReplicaLog;
use crate::process::Process;
use crate::protocol::Protocol;
use crate::record_chunks::RecordChunks;
use crate::snapshot::Loss;
use crate::types::{BrokerId, ElectionKind, TimeMs, TopicPartition, Tp};
use crate::vec_map::VecMap;

/// `broker`, leading at `leader_epoch`, raised its HW to `high_watermark`: the records of
/// `log` below it join the history, if this is the leadership the controller recognises. A
/// zombie (a leader already replaced, thawed or cut off, that still thinks its ISR is what
/// it last knew) can raise its own HW, but what it "commits" is not the partition's
/// committed history: letting it in would blame a later clean election for records no real
/// leader ever committed.
pub(crate) fn on_high_watermark(
    committed: &mut RecordChunks,
    controller: &Controller,
    tp: Tp,
    broker: BrokerId,
    leader_epoch: i32,
    log: &ReplicaLog,
    high_watermark: u64,
) {
    let p = controller.partition(tp);
    if p.leader != Some(broker) || p.leader_epoch != leader_epoch {
        return;
    }
    let from = committed.len() as u64;
    if high_watermark <= from {
        return;
    }
    for r in log.read(from, high_watermark) {
        committed.push(r);
    }
}

/// What [`on_new_leader`] found: committed records the new leader does not hold.
pub(crate) struct LossFound {
    /// Set when nothing explains the loss (a clean election lost committed records): an
    /// engine bug, recorded as a broken invariant before the loss itself.
    pub violation: Option<String>,
    pub event: Event,
    pub loss: Loss,
}

/// `broker` became leader at `leader_epoch` with `log`: does it hold every committed record?
/// The records from the first it lacks (or holds with another epoch or value) leave the
/// history, and the loss names its cause: the last known leader elected (KIP-966), an
/// unclean election (or a registration still RECOVERING from one), a lost disk; otherwise
/// it is an engine bug.
#[allow(clippy::too_many_arguments)]
pub(crate) fn on_new_leader(
    committed: &mut RecordChunks,
    controller: &Controller,
    processes: &VecMap<BrokerId, Process>,
    tp: Tp,
    broker: BrokerId,
    leader_epoch: i32,
    recovering: bool,
    log: &ReplicaLog,
    now: TimeMs,
    label: Option<TopicPartition>,
    protocol: Protocol,
) -> Option<LossFound> {
    if leader_epoch != controller.partition(tp).leader_epoch {
        // A stale image (a broker catching up on metadata after a freeze or a cut): this
        // leadership is already over; the leader that counts is checked when it starts.
        return None;
    }
    let first_missing = committed.iter().position(|r| {
        log.record_at(r.offset)
            .is_none_or(|mine| mine.epoch != r.epoch || mine.value != r.value)
    })?;
    let lost = committed.split_off(first_missing);
    let (first, last) = (lost.first()?, lost.last()?);
    let kind = controller
        .elections
        .iter()
        .rev()
        .find(|(t, epoch, _)| *t == tp && *epoch == leader_epoch)
        .map(|(_, _, k)| *k);
    let mut lost_disks = Vec::new();
    let mut power_lost = Vec::new();
    for (id, p) in processes {
        if p.disk_lost {
            lost_disks.push(*id);
        }
        if p.power_lost {
            power_lost.push(*id);
        }
    }
    // Before KIP-903 (protocol pre-kip-903 and older): the new leader lost its log (a disk
    // or power) and was added to the ISR, in its current process, by an AlterPartition
    // without broker epochs, which may carry the fetch state of the process before. With
    // KIP-903 the controller refuses that (INELIGIBLE_REPLICA), and a replica rejoins only
    // by fetches of its own process, so the same loss stays a lost disk's or an engine bug.
    let stale_join = !protocol.has_broker_epoch_in_fetch()
        && processes
            .get(&broker)
            .is_some_and(|p| p.disk_lost || p.power_lost)
        && controller.brokers.get(&broker).is_some_and(|r| {
            controller
                .isr_joins_without_epoch
                .iter()
                .any(|&(t, id, epoch)| t == tp && id == broker && epoch == r.epoch)
        });
    let mut violation = None;
    let cause = if kind == Some(ElectionKind::LastKnownLeader) {
        // Kafka elects the last known leader whether or not it lost its own data: the
        // controller does not know (a power loss and a replaced disk are both an unclean
        // shutdown, which takes a replica out of the ELR but not out of lastKnownElr).
        let lost_own_data = processes.get(&broker).and_then(|p| {
            if p.disk_lost {
                Some(OwnDataLoss::LostDisk)
            } else if p.power_lost {
                Some(OwnDataLoss::PowerLoss)
            } else {
                None
            }
        });
        LossCause::LastKnownLeader {
            broker,
            lost_own_data,
        }
    } else if recovering || kind == Some(ElectionKind::Unclean) {
        LossCause::UncleanElection { broker }
    } else if stale_join {
        // The era's rule, not a bug: a mode with KIP-903 never reaches here.
        LossCause::HistoricalProtocol {
            broker,
            protocol,
            anomaly: HistoricalAnomaly::StaleIsrJoin,
        }
    } else if !lost_disks.is_empty() {
        LossCause::LostDisk { broker, lost_disks }
    } else if !power_lost.is_empty() {
        LossCause::PowerLoss { broker, power_lost }
    } else if !protocol.has_leader_epoch_truncation() {
        // The era's rule, not a bug: the invariant stays strict in every mode that has
        // KIP-101 and KIP-320 (kafka-4, no-elr, pre-kip-903).
        LossCause::HistoricalProtocol {
            broker,
            protocol,
            anomaly: HistoricalAnomaly::HwTruncation,
        }
    } else if !protocol.has_current_leader_epoch_in_fetch() {
        // Before KIP-320 (protocol pre-kip-320 and older): a follower that missed leader
        // epochs fetched from a replica leading at a later one, which counted the offset of
        // a log it did not have toward its HW.
        LossCause::HistoricalProtocol {
            broker,
            protocol,
            anomaly: HistoricalAnomaly::UnfencedFetch,
        }
    } else {
        violation = Some(format!(
            "committed offsets {}..{} lost by a clean election of broker {broker}",
            first.offset, last.offset
        ));
        LossCause::CleanElection
    };
    let loss = Loss {
        time_ms: now,
        first_offset: first.offset,
        last_offset: last.offset,
        values: lost.iter().map(|r| r.value.clone()).collect(),
        epochs: lost.iter().map(|r| r.epoch).collect(),
        cause: cause.to_string(),
        tp: label.clone(),
    };
    let event = Event::CommittedRecordsLost {
        broker,
        tp: label,
        records: lost,
        cause,
    };
    Some(LossFound {
        violation,
        event,
        loss,
    })
}

#[cfg(test)]
mod tests {
    use crate::invariants::tests::sim;
    use crate::protocol::Protocol;
    use crate::sim::Sim;
    use crate::types::ElectionKind;
    use crate::types::TP0;

    #[test]
    fn a_zombie_leader_cannot_add_to_the_committed_history() {
        // Seeds 52220 and 52893 (and the others of issue 11's list): a thawed leader that the
        // controller had replaced raised its own HW; recording it made a later clean
        // election look like a loss of committed records.
        let mut sim = sim();
        assert_eq!(sim.committed[&TP0].len(), 2);
        // The controller has moved on to broker 2 at epoch 1; broker 1 has not heard.
        sim.controller.partitions[&TP0].leader = Some(2);
        sim.controller.partitions[&TP0].leader_epoch = 1;
        let log = &mut sim.brokers[&1].partitions[&TP0].log;
        log.append_as_leader(0, &["zombie".to_string()]);
        log.high_watermark = 3;
        let b1 = sim.brokers[&1].log(TP0);
        super::on_high_watermark(&mut sim.committed[&TP0], &sim.controller, TP0, 1, 0, b1, 3);
        assert_eq!(
            sim.committed[&TP0].len(),
            2,
            "nothing the zombie 'commits' counts"
        );
        // The recognised leader's HW does count, and only up to the HW.
        sim.controller.partitions[&TP0].leader = Some(1);
        sim.controller.partitions[&TP0].leader_epoch = 0;
        let b1 = sim.brokers[&1].log(TP0);
        super::on_high_watermark(&mut sim.committed[&TP0], &sim.controller, TP0, 1, 0, b1, 3);
        assert_eq!(sim.committed[&TP0].len(), 3);
        assert_eq!(
            sim.committed[&TP0].last().map(|r| r.value.as_str()),
            Some("zombie")
        );
    }

    #[test]
    fn a_loss_names_its_cause() {
        // Broker 2's log is emptied and it is made leader of a new epoch: the two committed
        // records are gone. What the loss says depends on how the controller chose it, what
        // happened to the machines, and the protocol of the run.
        let lose_in = |kind: Option<ElectionKind>,
                       recovering: bool,
                       disk: bool,
                       power: bool,
                       protocol: Protocol| {
            let mut sim = sim();
            sim.brokers[&2].partitions[&TP0].log.wipe();
            if disk {
                sim.processes[&3].disk_lost = true;
            }
            if power {
                sim.processes[&2].power_lost = true;
            }
            let p = &mut sim.controller.partitions[&TP0];
            p.leader = Some(2);
            p.leader_epoch += 1;
            let epoch = p.leader_epoch;
            if let Some(k) = kind {
                sim.controller.elections.push((TP0, epoch, k));
            }
            let found = super::on_new_leader(
                &mut sim.committed[&TP0],
                &sim.controller,
                &sim.processes,
                TP0,
                2,
                epoch,
                recovering,
                sim.brokers[&2].log(TP0),
                5_000,
                None,
                protocol,
            )
            .expect("a loss");
            assert_eq!(sim.committed[&TP0].len(), 0, "both left the history");
            assert_eq!((found.loss.first_offset, found.loss.last_offset), (0, 1));
            assert_eq!(found.loss.values, ["a", "b"]);
            (found.loss.cause, found.violation)
        };
        let lose =
            |kind, recovering, disk| lose_in(kind, recovering, disk, false, Protocol::Kafka4);
        let (cause, violation) = lose(Some(ElectionKind::LastKnownLeader), false, false);
        assert!(
            cause.contains("last known leader") && violation.is_none(),
            "{cause}"
        );
        assert!(!cause.contains("lost them"), "{cause}");
        // The last known leader lost them itself, in a power loss: the loss says so.
        let (cause, violation) = lose_in(
            Some(ElectionKind::LastKnownLeader),
            false,
            false,
            true,
            Protocol::Kafka4,
        );
        assert!(violation.is_none());
        assert!(
            cause.starts_with("broker 2 was elected as the last known leader (ISR and ELR were empty; Kafka counts this as an unclean election) and does not have them: it lost them when its machine lost power")
                && cause.contains("even with unclean.leader.election.enable=false"),
            "{cause}"
        );
        let (cause, _) = lose(Some(ElectionKind::Unclean), false, false);
        assert!(cause.contains("unclean election"), "{cause}");
        let (cause, _) = lose(Some(ElectionKind::Clean), true, false);
        assert!(cause.contains("unclean election"), "RECOVERING: {cause}");
        let (cause, _) = lose(Some(ElectionKind::Clean), false, true);
        assert!(cause.contains("broker 3 lost its disk"), "{cause}");
        let (cause, violation) = lose(Some(ElectionKind::Clean), false, false);
        assert!(cause.contains("engine bug"), "{cause}");
        assert_eq!(
            violation.as_deref(),
            Some("committed offsets 0..1 lost by a clean election of broker 2"),
            "a clean election that loses committed records is a violation"
        );
        // A power loss explains it in any mode; an era without KIP-101 explains a clean
        // election's loss, and no other era does.
        let clean = Some(ElectionKind::Clean);
        let (cause, violation) = lose_in(clean, false, false, true, Protocol::Kafka4);
        assert!(cause.contains("broker 2 lost power"), "{cause}");
        assert!(violation.is_none());
        let (cause, violation) = lose_in(clean, false, false, false, Protocol::PreKip101);
        assert!(
            cause.contains("protocol pre-kip-101") && violation.is_none(),
            "{cause}"
        );
        assert!(cause.contains("the loss KIP-101 fixed"), "{cause}");
        let (cause, violation) = lose_in(clean, false, false, false, Protocol::NoElr);
        assert!(
            cause.contains("engine bug") && violation.is_some(),
            "no-elr has KIP-101: {cause}"
        );
        // Without KIP-320 (and with KIP-101) a clean election's loss is the unfenced
        // fetch's; Kafka 3.4 has KIP-320, and stays strict.
        let (cause, violation) = lose_in(clean, false, false, false, Protocol::PreKip320);
        assert!(
            cause.contains("protocol pre-kip-320") && cause.contains("the loss KIP-320 fixed"),
            "{cause}"
        );
        assert!(violation.is_none());
        let (cause, violation) = lose_in(clean, false, false, false, Protocol::PreKip903);
        assert!(
            cause.contains("engine bug") && violation.is_some(),
            "pre-kip-903 has KIP-320: {cause}"
        );
    }

    #[test]
    fn a_loss_by_a_replica_that_rejoined_without_a_broker_epoch_is_kip_903s_only_before_it() {
        // Broker 2 lost its disk and is elected cleanly with an empty log. The loss is
        // KIP-903's anomaly only when the controller added broker 2 to the ISR without a
        // broker epoch in its current process, and the mode lacks KIP-903.
        let lose = |joined: Option<i64>, protocol: Protocol| {
            let mut sim = sim();
            sim.brokers[&2].partitions[&TP0].log.wipe();
            sim.processes[&2].disk_lost = true;
            let registered = sim.controller.brokers[&2].epoch;
            if let Some(back) = joined {
                sim.controller
                    .isr_joins_without_epoch
                    .push((TP0, 2, registered - back));
            }
            let p = &mut sim.controller.partitions[&TP0];
            p.leader = Some(2);
            p.leader_epoch += 1;
            let epoch = p.leader_epoch;
            sim.controller
                .elections
                .push((TP0, epoch, ElectionKind::Clean));
            let found = super::on_new_leader(
                &mut sim.committed[&TP0],
                &sim.controller,
                &sim.processes,
                TP0,
                2,
                epoch,
                false,
                sim.brokers[&2].log(TP0),
                5_000,
                None,
                protocol,
            )
            .expect("a loss");
            assert!(found.violation.is_none());
            found.loss.cause
        };
        let stale = "protocol pre-kip-903 (it lost its log and rejoined the ISR on a fetch of its process before the restart, the loss KIP-903 fixed)";
        assert!(lose(Some(0), Protocol::PreKip903).ends_with(stale));
        // Cumulative: an older era lacks KIP-903 too.
        assert!(lose(Some(0), Protocol::PreKip101).contains("the loss KIP-903 fixed"));
        // No join, or a join in an earlier process: the lost disk explains it.
        for cause in [
            lose(None, Protocol::PreKip903),
            lose(Some(3), Protocol::PreKip903),
            lose(Some(0), Protocol::Kafka4),
            lose(Some(0), Protocol::NoElr),
        ] {
            assert!(cause.contains("broker 2 lost its disk"), "{cause}");
        }
    }

    #[test]
    fn a_leader_of_a_stale_epoch_or_holding_everything_loses_nothing() {
        let mut sim = sim();
        let epoch = sim.controller.partitions[&TP0].leader_epoch;
        let check = |sim: &mut Sim, broker, epoch| {
            super::on_new_leader(
                &mut sim.committed[&TP0],
                &sim.controller,
                &sim.processes,
                TP0,
                broker,
                epoch,
                false,
                sim.brokers[&broker].log(TP0),
                0,
                None,
                Protocol::Kafka4,
            )
            .is_some()
        };
        assert!(!check(&mut sim, 2, epoch), "broker 2 holds both records");
        sim.brokers[&3].partitions[&TP0].log.wipe();
        assert!(!check(&mut sim, 3, epoch - 1), "an epoch already over");
        assert_eq!(sim.committed[&TP0].len(), 2);
    }
}
