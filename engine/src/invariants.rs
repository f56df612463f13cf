//! Safety properties checked after every event (when `Sim::check_invariants` is on):
//!
//! - every replica: log start ≤ HW ≤ LEO;
//! - the leader is in the ISR; ISR and ELR are within the assignment and disjoint;
//! - a reassignment's adding and removing replicas are distinct replicas, and not all of
//!   them are removed; a running broker holds no replica (role or log) of a partition its
//!   metadata no longer gives it;
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
use crate::types::{BrokerId, Tp};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InvariantState {
    /// Each partition's (leader epoch, partition epoch) at its last check, by the
    /// partition's position among the controller's (partitions are only ever added, in key
    /// order, so a position keeps its partition).
    pub last_epochs: Vec<(i32, i32)>,
    /// Each partition's current leadership as last checked: (leader, leader epoch, the
    /// highest HW seen in it). Epochs only rise (checked), so an earlier leadership never
    /// comes back and the current one is all there is to remember.
    pub leader_hw: Vec<Option<(BrokerId, i32, u64)>>,
    /// Each replica's [`fingerprint`] at its last check, by broker position and partition
    /// position: after a broker's event, a replica whose fingerprint did not change is not
    /// looked at again (its checks read nothing else that event could have changed).
    pub fingerprints: Vec<Vec<u64>>,
    /// The replicas the last check looked at, for `Digest::outside`.
    pub checked: Vec<(BrokerId, Tp)>,
    /// The run's protocol mode: an older era's rules make some states legal (docs/history.md).
    pub protocol: crate::protocol::Protocol,
}

/// What an event may have changed, and so what the checker must look at again after it.
/// A node's handler changes only its own state (docs/engine.md, "Shape"): a broker's
/// partitions, or the controller's registrations; the simulator's own operations (the
/// timeline's actions and faults) may change anything. What an event did not change was
/// checked when it last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// A timeline action or fault: everything.
    All,
    /// The controller ran: every registration, no log.
    Controller,
    /// This broker ran: its logs, and the partitions it is a replica of or holds data for.
    Broker(BrokerId),
    /// A client ran: nothing the checker reads.
    Nothing,
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
        scope: Scope,
        topics: &Topics,
        controller: &Controller,
        brokers: &VecMap<BrokerId, Broker>,
        processes: &VecMap<BrokerId, Process>,
    ) -> Vec<String> {
        let mut found: Vec<String> = vec![];
        let n = controller.partitions.len();
        if self.last_epochs.len() < n {
            self.last_epochs.resize(n, (0, 0));
            self.leader_hw.resize(n, None);
        }
        if self.fingerprints.len() < brokers.len() {
            self.fingerprints.resize(brokers.len(), vec![]);
        }
        self.checked.clear();
        match scope {
            Scope::Nothing => {}
            Scope::All | Scope::Controller => {
                // Every replica's log, broker by broker (a walk of each broker's
                // partitions, not a lookup per partition).
                if scope == Scope::All {
                    for b in brokers.values() {
                        check_holdings(topics, b, processes, &mut found);
                    }
                    for (at, b) in brokers.values().enumerate() {
                        let prints = &mut self.fingerprints[at];
                        prints.resize(b.partitions.len(), 0);
                        for (i, (&tp, part)) in b.partitions.iter().enumerate() {
                            check_log(topics, tp, b.id, &part.log, &mut found);
                            prints[i] = fingerprint(part);
                            self.checked.push((b.id, tp));
                        }
                    }
                }
                for (i, (&tp, p)) in controller.partitions.iter().enumerate() {
                    self.check_partition(i, tp, topics, p, brokers, processes, &mut found);
                }
            }
            Scope::Broker(id) => {
                let Some(b) = brokers.get(&id) else {
                    return found;
                };
                // A broker holds every partition, as the controller does: the same keys in
                // the same order, so the i-th of one is the i-th of the other (looked up
                // otherwise).
                check_holdings(topics, b, processes, &mut found);
                let at = brokers.keys().position(|k| *k == id).unwrap_or(0);
                let mut prints = std::mem::take(&mut self.fingerprints[at]);
                prints.resize(b.partitions.len(), 0);
                for (i, (&tp, part)) in b.partitions.iter().enumerate() {
                    // Not looked at again: a replica whose state this event left as it was
                    // when last checked (nothing else its checks read can have changed in a
                    // broker's event).
                    let print = fingerprint(part);
                    if print == prints[i] {
                        continue;
                    }
                    prints[i] = print;
                    self.checked.push((id, tp));
                    check_log(topics, tp, id, &part.log, &mut found);
                    let Some(i) = controller.partitions.position_near(i, &tp) else {
                        continue;
                    };
                    let Some(p) = controller.partitions.values().nth(i) else {
                        continue;
                    };
                    self.check_partition(i, tp, topics, p, brokers, processes, &mut found);
                }
                self.fingerprints[at] = prints;
            }
        }
        found
    }

    #[allow(clippy::too_many_arguments)]
    fn check_partition(
        &mut self,
        i: usize,
        tp: Tp,
        topics: &Topics,
        p: &PartitionRegistration,
        brokers: &VecMap<BrokerId, Broker>,
        processes: &VecMap<BrokerId, Process>,
        found: &mut Vec<String>,
    ) {
        // Named only when something is wrong (a lookup per partition after every event).
        let name = || topics.name(tp);
        if let Some(l) = p.leader {
            if !p.isr.contains(&l) {
                found.push(format!(
                    "{}: leader {l} is not in the ISR {}",
                    name(),
                    List(&p.isr)
                ));
            }
        }
        // The ISR within the replicas. Not the ELR: Kafka's PartitionChangeBuilder keeps a
        // replica that a reassignment removed in the ELR when the ISR left is below
        // min.insync.replicas (maybePopulateTargetElr; nothing filters it).
        if p.isr.iter().any(|r| !p.replicas.contains(r)) {
            found.push(format!(
                "{}: ISR {} outside the replicas {}",
                name(),
                List(&p.isr),
                List(&p.replicas)
            ));
        }
        // A reassignment's lists (PartitionReassignmentReplicas): adding and removing are
        // replicas, and some replica stays. Not "never both": a reassignment over one in
        // progress (`--additional`) whose own adding or removing list is empty keeps the
        // partition's (ReplicationControlManager.changePartitionReassignment sets only the
        // non-empty ones, and the PartitionChangeBuilder constructor starts from the
        // partition's), so a replica may be in both until the reassignment completes.
        let (adding, removing) = (&p.adding_replicas, &p.removing_replicas);
        if adding
            .iter()
            .chain(removing)
            .any(|r| !p.replicas.contains(r))
            || removing.len() >= p.replicas.len()
        {
            found.push(format!(
                "{}: adding {} and removing {} do not fit the replicas {}",
                name(),
                List(adding),
                List(removing),
                List(&p.replicas)
            ));
        }
        if p.isr.iter().any(|r| p.elr.contains(r)) {
            found.push(format!(
                "{}: ISR {} and ELR {} overlap",
                name(),
                List(&p.isr),
                List(&p.elr)
            ));
        }
        let (last_le, last_pe) = self.last_epochs[i];
        if p.leader_epoch < last_le {
            found.push(format!(
                "{}: leader epoch fell from {last_le} to {}",
                name(),
                p.leader_epoch
            ));
        }
        if p.partition_epoch < last_pe {
            found.push(format!(
                "{}: partition epoch fell from {last_pe} to {}",
                name(),
                p.partition_epoch
            ));
        }
        self.last_epochs[i] = (p.leader_epoch, p.partition_epoch);

        // Only the leader the controller recognises: a zombie (cut off, not yet told it was
        // replaced) keeps a stale view, and its followers have moved on.
        let Some(leader) = p.leader else { return };
        // Brokers are numbered 1..: broker b is the (b-1)-th.
        let Some(b) = brokers.get_near(leader as usize - 1, &leader) else {
            return;
        };
        let Some(part) = b.partitions.get_near(i, &tp) else {
            return;
        };
        let Role::Leader(l) = &part.role else { return };
        let up = processes
            .get_near(leader as usize - 1, &leader)
            .is_some_and(Process::is_up);
        if l.leader_epoch != p.leader_epoch || !up {
            return;
        }
        let hw = part.log.high_watermark;
        let current = (leader, l.leader_epoch);
        if let Some((b, e, prev)) = self.leader_hw[i] {
            if (b, e) == current && hw < prev {
                found.push(format!(
                    "{}: leader {leader} HW fell from {prev} to {hw} in leader epoch {}",
                    name(),
                    l.leader_epoch
                ));
            }
        }
        for &m in l.isr_state.isr() {
            let Some(mb) = brokers.get_near(m as usize - 1, &m) else {
                continue;
            };
            // A lost disk or a power loss took records the leader counted; before KIP-101
            // (protocol `pre-kip-101`) a follower truncated to its own HW, below the
            // leader's, and stayed in the ISR: the anomaly that mode shows, reported as a
            // loss when a leader lacks them (history.rs), not as a broken rule.
            if processes
                .get_near(m as usize - 1, &m)
                .is_some_and(|p| p.disk_lost || p.power_lost)
                || !self.protocol.has_leader_epoch_truncation()
            {
                continue;
            }
            let member_leo = mb
                .partitions
                .get_near(i, &tp)
                .map_or(0, |x| x.log.log_end_offset());
            if member_leo < hw {
                found.push(format!(
                    "{}: leader {leader} HW {hw} is above ISR member {m}'s LEO {member_leo}",
                    name(),
                ));
            }
        }
        self.leader_hw[i] = Some((current.0, current.1, hw));
    }
}

/// A running broker holds nothing of a partition its own metadata does not give it
/// (ReplicaManager.applyDelta deletes it; a stray log goes at the start). The image and the
/// broker's partitions list the same keys, so they are walked side by side. Only the
/// broker's own state: looked at after its events (and the simulator's).
fn check_holdings(
    topics: &Topics,
    b: &Broker,
    processes: &VecMap<BrokerId, Process>,
    found: &mut Vec<String>,
) {
    let Some(m) = b.metadata.as_deref().filter(|_| processes[&b.id].is_up()) else {
        return;
    };
    for ((&tp, reg), part) in m.partitions.iter().zip(b.partitions.values()) {
        debug_assert_eq!(tp, part.tp);
        let holds = !matches!(part.role, Role::None) || part.log.log_end_offset() > 0;
        if holds && !reg.replicas.contains(&b.id) {
            found.push(format!(
                "{}: broker {} still holds a replica its metadata does not give it (replicas {})",
                topics.name(tp),
                b.id,
                List(&reg.replicas)
            ));
        }
    }
}

/// What the checks read of one replica, as one number: its log's start, HW and end, its
/// epochs, its role with the leader's epoch and ISR. Zero for a replica with no role and an
/// empty log (what a broker holds for the partitions it is not a replica of), which is what
/// a replica not checked yet is taken to be.
fn fingerprint(part: &crate::partition::Partition) -> u64 {
    let log = &part.log;
    let leo = log.log_end_offset();
    let role = match &part.role {
        Role::None => 0,
        Role::Follower(_) => 1,
        Role::Leader(_) => 2,
    };
    if role == 0 && leo == 0 && log.high_watermark == 0 && log.epoch_cache.entries.is_empty() {
        return 0;
    }
    let mut h = mix(
        mix(
            mix(mix(FNV_OFFSET, role), log.log_start_offset),
            log.high_watermark,
        ),
        leo,
    );
    for e in &log.epoch_cache.entries {
        h = mix(mix(h, e.epoch as u64), e.start_offset);
    }
    if let Role::Leader(l) = &part.role {
        h = mix(h, l.leader_epoch as u64);
        for &m in l.isr_state.isr() {
            h = mix(h, u64::from(m));
        }
    }
    // Never 0: that is the idle replica's.
    h | 1
}

/// What the checker reads, as numbers to compare before and after an event: each
/// registration, each replica (its log's offsets and epochs, its role), each process.
/// `Sim::verify_invariant_scope` uses it to check that an event changed nothing outside
/// the [`Scope`] the checker looked at again.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Digest {
    registrations: Vec<u64>,
    replicas: Vec<(BrokerId, Tp, u64)>,
    processes: Vec<(BrokerId, u64)>,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// One step of FNV-1a over words: enough to tell a change.
#[inline]
fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(0x0000_0100_0000_01b3)
}

/// FNV-1a over words.
#[cfg(not(target_arch = "wasm32"))]
fn fnv(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = FNV_OFFSET;
    for w in words {
        h = mix(h, w);
    }
    h
}

#[cfg(not(target_arch = "wasm32"))]
impl Digest {
    pub(crate) fn of(
        controller: &Controller,
        brokers: &VecMap<BrokerId, Broker>,
        processes: &VecMap<BrokerId, Process>,
    ) -> Digest {
        let ids = |l: &[BrokerId]| l.iter().map(|&b| u64::from(b)).collect::<Vec<_>>();
        let mut registrations = vec![];
        for p in controller.partitions.values() {
            let mut w = vec![
                u64::from(p.leader.unwrap_or(0)),
                p.leader_epoch as u64,
                p.partition_epoch as u64,
            ];
            for l in [&p.replicas, &p.isr, &p.elr] {
                w.push(l.len() as u64);
                w.extend(ids(l));
            }
            registrations.push(fnv(w));
        }
        let mut replicas = vec![];
        for b in brokers.values() {
            for (&tp, part) in &b.partitions {
                let log = &part.log;
                let mut w = vec![
                    log.log_start_offset,
                    log.high_watermark,
                    log.log_end_offset(),
                ];
                for e in &log.epoch_cache.entries {
                    w.extend([e.epoch as u64, e.start_offset]);
                }
                match &part.role {
                    Role::None => w.push(0),
                    Role::Follower(_) => w.push(1),
                    Role::Leader(l) => {
                        w.extend([2, l.leader_epoch as u64]);
                        w.extend(ids(l.isr_state.isr()));
                    }
                }
                replicas.push((b.id, tp, fnv(w)));
            }
        }
        let mut procs = vec![];
        for (&id, p) in processes {
            procs.push((id, fnv([u64::from(p.is_up()), u64::from(p.disk_lost)])));
        }
        Digest {
            registrations,
            replicas,
            processes: procs,
        }
    }

    /// What changed from `self` to `after` that the checker did not look at again after an
    /// event of `scope` (`checked`: the replicas it looked at): each a line naming the
    /// partition or broker. A broker's own process may change in its event (it exits): that
    /// only makes checks skip its replicas.
    pub(crate) fn outside(
        &self,
        after: &Digest,
        scope: Scope,
        topics: &Topics,
        controller: &Controller,
        checked: &[(BrokerId, Tp)],
    ) -> Vec<String> {
        let mut out = vec![];
        if scope == Scope::All {
            return out;
        }
        if scope != Scope::Controller {
            for (i, (tp, _)) in controller.partitions.iter().enumerate() {
                if self.registrations.get(i) != after.registrations.get(i) {
                    out.push(format!(
                        "{}: registration changed after a {scope:?} event",
                        topics.name(*tp)
                    ));
                }
            }
        }
        for (i, &(b, tp, d)) in self.replicas.iter().enumerate() {
            if after.replicas.get(i) == Some(&(b, tp, d)) {
                continue;
            }
            if !checked.contains(&(b, tp)) {
                out.push(format!(
                    "{}: broker {b}'s replica changed after a {scope:?} event",
                    topics.name(tp)
                ));
            }
        }
        for (i, &(b, d)) in self.processes.iter().enumerate() {
            if after.processes.get(i) != Some(&(b, d)) && scope != Scope::Broker(b) {
                out.push(format!(
                    "broker {b}'s process changed after a {scope:?} event"
                ));
            }
        }
        out
    }
}

/// One replica's log: log start ≤ HW ≤ LEO, and its leader-epoch-checkpoint ordered.
fn check_log(topics: &Topics, tp: Tp, broker: BrokerId, log: &ReplicaLog, found: &mut Vec<String>) {
    let leo = log.log_end_offset();
    if !(log.log_start_offset <= log.high_watermark && log.high_watermark <= leo) {
        found.push(format!(
            "{}: broker {broker}: log start {} ≤ HW {} ≤ LEO {} does not hold",
            topics.name(tp),
            log.log_start_offset,
            log.high_watermark,
            leo
        ));
    }
    let entries = &log.epoch_cache.entries;
    if entries
        .windows(2)
        .any(|w| w[0].epoch >= w[1].epoch || w[0].start_offset > w[1].start_offset)
    {
        found.push(format!(
            "{}: broker {broker}: leader-epoch-checkpoint is not ordered: {}",
            topics.name(tp),
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
        checker.check(
            super::Scope::All,
            &sim.topics,
            &sim.controller,
            &sim.brokers,
            &sim.processes,
        )
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
    fn a_reassignments_lists_and_a_replica_left_behind_are_found() {
        let mut sim = sim();
        let mut checker = super::InvariantState::default();
        assert_eq!(check(&mut checker, &sim), Vec::<String>::new());
        // Adding a broker that is not a replica, and removing every replica.
        let p = &mut sim.controller.partitions[&TP0];
        p.adding_replicas = vec![4];
        p.removing_replicas = vec![1, 2, 3];
        assert_eq!(
            check(&mut checker, &sim),
            ["rep-0: adding [4] and removing [1, 2, 3] do not fit the replicas [1, 2, 3]"]
        );
        let p = &mut sim.controller.partitions[&TP0];
        p.adding_replicas = vec![];
        assert_eq!(
            check(&mut checker, &sim),
            ["rep-0: adding [] and removing [1, 2, 3] do not fit the replicas [1, 2, 3]"],
            "some replica stays"
        );
        sim.controller.partitions[&TP0].removing_replicas = vec![];
        // Broker 3's metadata no longer lists it, but it still follows with its log.
        let mut image = (**sim.brokers[&3].metadata.as_ref().unwrap()).clone();
        image.partitions[&TP0].replicas = vec![1, 2];
        sim.brokers[&3].metadata = Some(std::sync::Arc::new(image));
        assert_eq!(
            check(&mut checker, &sim),
            ["rep-0: broker 3 still holds a replica its metadata does not give it (replicas [1, 2])"]
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
