//! Builds the view model ([`crate::snapshot::Snapshot`]) from the simulation: the one
//! function that reads the nodes' state for drawing.

use crate::partition::{IsrState, Role};
use crate::sim::Sim;
use crate::snapshot::{
    BrokerSnapshot, BrokerState, ControllerSnapshot, HeldFetchSnapshot, IsrChange, MessageSnapshot,
    MetricsSnapshot, PurgatoryEntry, ReplicaRole, SendSnapshot, Snapshot,
};
use crate::types::{BrokerId, ProcessState};

impl Sim {
    /// Broker `id`'s process, what its lane says of it, and whether the controller has it
    /// fenced (or not registered).
    pub(crate) fn broker_state(&self, id: BrokerId) -> (ProcessState, BrokerState, bool) {
        let fenced = self.controller.brokers.get(&id).is_none_or(|r| r.fenced);
        let process = self.processes[&id].state;
        let shutting_down = self.brokers.get(&id).is_some_and(|b| b.shutting_down);
        let state = match process {
            ProcessState::Frozen => BrokerState::Frozen,
            ProcessState::Killed => BrokerState::Killed,
            ProcessState::Stopped => BrokerState::Stopped,
            ProcessState::Running if shutting_down => BrokerState::ShuttingDown,
            ProcessState::Running if fenced => BrokerState::Fenced,
            ProcessState::Running => BrokerState::Running,
        };
        (process, state, fenced)
    }

    /// Kafka's metrics now, per broker and cluster-wide (`metrics.rs`).
    pub fn kafka_metrics(&self) -> crate::snapshot::KafkaMetrics {
        crate::metrics::kafka_metrics(
            self.now,
            &self.config,
            &self.brokers,
            &self.processes,
            &self.controller,
            &self.metrics,
        )
    }

    /// Everything needed to draw this moment.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_tail(u64::MAX)
    }

    /// [`Sim::snapshot`] with each broker's `records` cut to those at offsets within
    /// `max_records` of the longest log's end (everything else is whole). A view that draws
    /// only the newest offsets takes this every frame at a cost that does not grow with the
    /// log (a full snapshot of 10 000-record logs takes milliseconds; BENCHMARKS.md).
    pub fn snapshot_tail(&self, max_records: u64) -> Snapshot {
        let tp = self.view_tp;
        let longest = self
            .brokers
            .values()
            .map(|b| b.log(tp).log_end_offset())
            .max()
            .unwrap_or(0);
        let from = longest.saturating_sub(max_records);
        let p = self.controller.partition(tp);
        let now = self.now;
        let leader_broker = p.leader.and_then(|l| self.brokers.get(&l));
        // Loops, not mapped iterators collected (a collect over a map's values peels the
        // first item: its code twice).
        let mut brokers = Vec::new();
        for b in self.brokers.values() {
            let (process, state, fenced) = self.broker_state(b.id);
            let (role, isr_change) = match b.role(tp) {
                Role::Leader(l) => (
                    ReplicaRole::Leader,
                    match &l.isr_state {
                        IsrState::Committed { .. } => None,
                        IsrState::PendingShrink {
                            isr, out_of_sync, ..
                        } => Some(IsrChange::Shrink {
                            isr: isr.clone(),
                            out_of_sync: out_of_sync.clone(),
                        }),
                        IsrState::PendingExpand {
                            isr, new_in_sync, ..
                        } => Some(IsrChange::Expand {
                            isr: isr.clone(),
                            new_in_sync: *new_in_sync,
                        }),
                    },
                ),
                Role::Follower(_) => (ReplicaRole::Follower, None),
                Role::None => (ReplicaRole::None, None),
            };
            let since_caught_up_ms = leader_broker
                .and_then(|lb| lb.partition(tp).leader_state())
                .and_then(|l| l.remote.get(&b.id))
                .map(|s| now.saturating_sub(s.last_caught_up_time_ms));
            let log = b.log(tp);
            brokers.push(BrokerSnapshot {
                id: b.id,
                process,
                state,
                fenced,
                slow_ms: b.fetcher.slow_ms,
                hosts_replica: p.replicas.contains(&b.id),
                role,
                in_isr: p.isr.contains(&b.id),
                in_elr: p.elr.contains(&b.id),
                adding: p.adding_replicas.contains(&b.id),
                removing: p.removing_replicas.contains(&b.id),
                log_end_offset: log.log_end_offset(),
                high_watermark: log.high_watermark,
                records: {
                    let skip = from.saturating_sub(log.log_start_offset) as usize;
                    log.records.copy_range(skip..log.records.len())
                },
                leader_epoch_checkpoint: log.epoch_cache.checkpoint_line(),
                isr_change,
                since_caught_up_ms,
            });
        }
        let mut in_flight: Vec<MessageSnapshot> = Vec::new();
        for m in self.in_flight.values() {
            in_flight.push(m.snapshot(false));
        }
        // In id order: both maps are by id, so each buffered message goes in among the
        // others where its id falls (a few dozen each; no sort in the wasm).
        for m in self.buffered.values() {
            let at = in_flight.partition_point(|s| s.id < m.id);
            in_flight.insert(at, m.snapshot(true));
        }
        // Loops, not flat-mapped iterators collected: the same entries in the same order in
        // less wasm.
        let mut purgatory = vec![];
        let mut held_fetches = vec![];
        for b in self.brokers.values() {
            let Some(l) = b.partition(tp).leader_state() else {
                continue;
            };
            for d in &l.purgatory {
                purgatory.push(PurgatoryEntry {
                    broker: b.id,
                    request_id: d.request_id,
                    first_offset: d.first_offset,
                    required_offset: d.required_offset,
                    created_ms: d.created_ms,
                    deadline_ms: d.deadline_ms,
                });
            }
        }
        for b in self.brokers.values() {
            for d in &b.delayed_fetches {
                if let Some(&(_, fetch_offset, _)) = d.partitions.iter().find(|(t, _, _)| *t == tp)
                {
                    held_fetches.push(HeldFetchSnapshot {
                        leader: b.id,
                        replica: d.replica_id,
                        fetch_offset,
                        since_ms: d.since_ms,
                        deadline_ms: d.deadline_ms,
                    });
                }
            }
        }
        let mut session_deadlines = vec![];
        for (id, r) in self.controller.brokers.iter() {
            if let (false, Some(last)) = (r.fenced, self.controller.last_heartbeat_ms.get(id)) {
                session_deadlines.push((*id, last + self.config.broker_session_timeout_ms));
            }
        }
        let mut sends = vec![];
        for j in self.producer.jobs.values() {
            let Some(a) = j.current.as_ref() else {
                continue;
            };
            sends.push(SendSnapshot {
                acks: j.acks,
                records: a.values.len(),
                delivery_deadline_ms: a.created_ms + self.config.delivery_timeout_ms,
                retries: a.retries_done,
                last_error: a.last_error,
                in_flight: a.request_id.and(a.target).map(|t| {
                    (
                        t,
                        a.sent_ms + crate::client::request_deadline_ms(&self.config),
                    )
                }),
            });
        }
        let lat = &self.metrics.acks_all_latencies_ms;
        Snapshot {
            time_ms: now,
            topic: self.topics.name(tp).topic.clone(),
            partition: self.topics.name(tp).partition,
            brokers,
            controller: ControllerSnapshot {
                leader: p.leader,
                leader_epoch: p.leader_epoch,
                partition_epoch: p.partition_epoch,
                replicas: p.replicas.clone(),
                isr: p.isr.clone(),
                elr: p.elr.clone(),
            },
            in_flight,
            purgatory,
            held_fetches,
            metrics: MetricsSnapshot {
                under_replicated: p.isr.len() < p.replicas.len(),
                under_min_isr: p.isr.len() < self.controller.min_isr(tp, p.replicas.len()),
                offline: p.leader.is_none(),
                counters: self.metrics.clone(),
                acks_all_latency_avg_ms: (!lat.is_empty())
                    .then(|| lat.iter().sum::<u64>() / lat.len() as u64),
                acks_all_latency_max_ms: lat.iter().max().copied(),
                kafka: self.kafka_metrics(),
            },
            describe: crate::describe::describe_line(self.topics.name(tp), p, self.config.protocol),
            offsets: self.offsets_line(),
            losses: self.losses.clone(),
            violations: self.violations.clone(),
            truncations: {
                let mut out = Vec::new();
                for (t, record) in &self.truncations {
                    if *t == tp {
                        out.push(record.clone());
                    }
                }
                out
            },
            consumer_position: self.consumer.position(tp),
            cut_links: self.network.cut.iter().as_slice().to_vec(),
            // Kept in time order: the recent ones are a suffix.
            arrivals: self.arrivals[self
                .arrivals
                .partition_point(|a| a.at + crate::sim::ARRIVALS_KEPT_MS < now)..]
                .to_vec(),
            session_deadlines,
            sends,
            committed: {
                // The history starts at offset 0 (the log start offset stays 0).
                let committed = &self.committed[&tp];
                let len = committed.len();
                committed.copy_range(usize::try_from(from).unwrap_or(len).min(len)..len)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    #[test]
    fn a_tail_snapshot_keeps_the_newest_records_and_everything_else() {
        // Broker 3 is frozen after 20 records and misses the next 30: its log ends at 20
        // while the others end at 50.
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"1","prefix":"a-","count":20},
                             {"at":1000,"action":"freeze","broker":3},
                             {"at":1100,"action":"produce","acks":"1","prefix":"b-","count":30}],
                "end_ms":3000}"#,
        )
        .unwrap();
        let sim = crate::run(&s, true).unwrap();
        let full = sim.snapshot();
        let tail = sim.snapshot_tail(8);
        for (f, t) in full.brokers.iter().zip(&tail.brokers) {
            let kept: Vec<_> = f
                .records
                .iter()
                .filter(|r| r.offset >= 42)
                .cloned()
                .collect();
            assert_eq!(t.records, kept, "broker {}", f.id);
            let mut f = f.clone();
            f.records = t.records.clone();
            assert_eq!(&f, t, "only the records differ");
        }
        assert_eq!(full.brokers[0].log_end_offset, 50);
        assert!(
            tail.brokers[2].records.is_empty(),
            "broker 3's log ends below the tail"
        );
        assert_eq!(tail.brokers[0].records.len(), 8);
        assert_eq!(
            sim.snapshot_tail(1_000),
            full,
            "a tail longer than the logs is whole"
        );
        assert_eq!(sim.snapshot_tail(0).brokers[0].records, vec![]);
        assert_eq!(
            full.committed.len(),
            20,
            "broker 3 is frozen in the ISR: the HW stays at 20"
        );
        assert_eq!(
            sim.snapshot_tail(40).committed,
            full.committed[10..].to_vec()
        );
        assert!(tail.committed.is_empty());
    }

    #[test]
    fn committed_records_stay_committed_in_the_snapshot_after_their_leader_dies() {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"c-","count":5},
                             {"at":1000,"action":"kill","broker":1}],
                "end_ms":1001}"#,
        )
        .unwrap();
        let sim = crate::run(&s, true).unwrap();
        let snap = sim.snapshot();
        assert_eq!(snap.controller.leader, Some(1), "not yet fenced");
        assert!(!snap.brokers[0].process.is_up());
        // Its last heartbeat was at most broker.heartbeat.interval.ms before the kill.
        let (id, deadline) = snap.session_deadlines[0];
        assert_eq!(id, 1);
        assert!((8_000..=10_000).contains(&deadline), "{deadline}");
        assert_eq!(snap.committed.len(), 5);
        for b in &snap.brokers[1..] {
            assert_eq!(b.records, snap.committed, "broker {} holds them all", b.id);
        }
        // An unclean election that loses them takes them out of the history.
        let s = crate::presets::preset("unclean-election").unwrap();
        let sim = crate::run(&s, true).unwrap();
        let snap = sim.snapshot();
        let lost = &snap.losses[0];
        let gone = lost.first_offset..=lost.last_offset;
        assert!(snap
            .committed
            .iter()
            .filter(|r| gone.contains(&r.offset))
            .all(|r| !lost.values.contains(&r.value)));
    }
}
