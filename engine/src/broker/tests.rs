//! The broker node's rules, driven through its entry points.
//!
//! `driven_alone` gives one node one input over local values (`effect::Locals`) and asserts
//! the exact effects and the state left, as openraft's engine tests do; each names the
//! Kafka test or rule it mirrors. `alter_partition` and `fetch` drive one broker of a
//! running simulation into a situation first (a shrink proposed, a follower fenced), then
//! give that broker's node one input through the same entry points.

use super::*;
use crate::effect::node_ctx;
use crate::network::{FetchPartition, FetchPartitionData};
use crate::partition::{AlterPartitionItem, IsrState, LeaderState};
use crate::scenario::{Action, ControllerName, Endpoint, Scenario};
use crate::sim::Sim;
use crate::types::TP0;

/// Gives broker `b`'s node one input, with a Ctx over the simulator's fields, and applies
/// its effects (what the simulator's router does).
fn on_broker<R>(sim: &mut Sim, b: BrokerId, f: impl FnOnce(&mut Broker, &mut Ctx) -> R) -> R {
    let node = &mut sim.brokers[&b];
    let r = f(node, &mut node_ctx!(sim));
    sim.flush_effects();
    r
}

/// Runs one of broker `b`'s partition handlers with its host, as the node does.
fn on_partition<R>(
    sim: &mut Sim,
    b: BrokerId,
    f: impl FnOnce(&mut Partition, &mut Ctx, &mut Host) -> R,
) -> R {
    on_broker(sim, b, |broker, ctx| {
        let mut host = host!(broker);
        f(&mut broker.partitions[&TP0], ctx, &mut host)
    })
}

/// Broker 2's fetcher handles OFFSET_OUT_OF_RANGE from leader 1 with the leader's end and
/// start offsets.
fn out_of_range(sim: &mut Sim, leader_end: u64, leader_start: u64) {
    on_broker(sim, 2, |b, ctx| {
        let host = host!(b);
        b.fetcher.on_out_of_range(
            ctx,
            &host,
            &mut b.partitions[&TP0],
            1,
            leader_end,
            leader_start,
        )
    });
}

/// AlterPartition bookkeeping, driven on one leader: Partition.submitAlterPartition,
/// handleAlterPartitionUpdate and handleAlterPartitionError, and DefaultAlterPartitionManager.
/// Expectations from Kafka's rules as the code states them, and from PartitionTest /
/// AlterPartitionManagerTest where they check the same thing (named per test).
mod alter_partition {
    use super::*;

    /// Three brokers, broker 1 leading; broker 3 is frozen, so the leader shrinks the ISR
    /// once replica.lag.time.max.ms passes. Brokers are never fenced (a long session).
    fn sim() -> Sim {
        let s = Scenario::from_json(
            r#"{"config":{"replica.lag.time.max.ms":2000,"broker.session.timeout.ms":600000,
                          "sim.controller.latency.ms":500},
                "timeline":[{"at":0,"action":"freeze","broker":3},
                            {"at":100,"action":"produce","acks":"1","values":["a"]}],
                "end_ms":600000}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.check_invariants = true;
        sim
    }

    fn leader(sim: &Sim) -> &LeaderState {
        sim.brokers[&1].partitions[&TP0]
            .leader_state()
            .expect("broker 1 leads")
    }

    /// Steps until broker 1 has proposed the shrink of broker 3 (its AlterPartition is in
    /// flight) and returns the proposal.
    fn until_shrink_proposed(sim: &mut Sim) -> u64 {
        while leader(sim).isr_state.proposal().is_none() {
            assert!(sim.step(), "the leader proposes a shrink");
        }
        let proposal = leader(sim).isr_state.proposal().expect("pending");
        assert!(matches!(
            &leader(sim).isr_state,
            IsrState::PendingShrink { out_of_sync, .. } if out_of_sync == &vec![3]
        ));
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent.get(&TP0).map(|i| i.proposal), Some(proposal));
        assert!(apm.in_flight.is_some(), "one request in flight");
        proposal
    }

    fn cut_controller(sim: &mut Sim) {
        sim.apply_now(&Action::Cut {
            a: Endpoint::Broker(1),
            b: Endpoint::Controller(ControllerName::Controller),
        })
        .expect("cut");
    }

    #[test]
    fn a_lost_request_is_sent_again_until_it_is_answered() {
        // NodeToControllerChannelManager (retryTimeoutMs = Long.MaxValue for AlterPartition):
        // a request with no answer within controller.socket.timeout.ms (30000) is put back
        // at the head of the queue and sent again, for as long as it takes.
        let mut sim = sim();
        until_shrink_proposed(&mut sim);
        let sent_at = sim.now();
        cut_controller(&mut sim); // the request is on the wire: it is lost
        sim.advance_to(sent_at + 29_000);
        assert!(
            leader(&sim).isr_state.is_inflight(),
            "no answer yet: still PendingShrink"
        );
        assert_eq!(leader(&sim).isr_state.isr(), &[1, 2, 3]);
        sim.advance_to(sent_at + 45_000); // the first resend, at +30 s, is lost too
        assert!(leader(&sim).isr_state.is_inflight());
        sim.apply_now(&Action::Heal {
            a: Endpoint::Broker(1),
            b: Endpoint::Controller(ControllerName::Controller),
        })
        .expect("heal");
        sim.advance_to(sent_at + 59_000);
        assert!(
            leader(&sim).isr_state.is_inflight(),
            "until the next resend"
        );
        sim.advance_to(sent_at + 62_000); // resent at +60 s, answered 1 s later
        assert_eq!(
            leader(&sim).isr_state,
            IsrState::Committed { isr: vec![1, 2] }
        );
        assert_eq!(sim.controller.partitions[&TP0].isr, vec![1, 2]);
        let resends = sim
            .trace_events()
            .filter(|e| e.text().contains("AlterPartition request got no answer"))
            .count();
        assert_eq!(resends, 2, "resent at +30 s and +60 s");
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    }

    fn item(proposal: u64, sim: &Sim) -> AlterPartitionItem {
        let l = leader(sim);
        AlterPartitionItem {
            tp: TP0,
            proposal,
            leader_epoch: l.leader_epoch,
            partition_epoch: l.partition_epoch,
            new_isr: vec![(1, 0), (2, 1)],
        }
    }

    /// Broker 1 with its shrink proposed, its request forgotten by the manager (as when the
    /// answer for it has just been taken), then the partition given `error` for that
    /// proposal. Returns the simulation, the state before the answer, and the proposal.
    fn answered_with(error: ErrorCode) -> (Sim, IsrState, AlterPartitionItem) {
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let before = leader(&sim).isr_state.clone();
        sim.brokers[&1].alter_partition = Default::default();
        let it = item(p, &sim);
        let answered = it.clone();
        on_partition(&mut sim, 1, |p, ctx, host| {
            p.handle_alter_partition_result(ctx, host, answered, error, None)
        });
        (sim, before, it)
    }

    #[test]
    fn an_answer_applies_only_to_the_proposal_it_answers() {
        // Partition.submitAlterPartition: "if (partitionState != proposedIsrState) ...
        // Ignoring failed ISR update to $proposedIsrState since we have already updated state".
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let before = leader(&sim).isr_state.clone();
        let stale = item(p - 1, &sim);
        on_partition(&mut sim, 1, |p, ctx, host| {
            p.handle_alter_partition_result(
                ctx,
                host,
                stale,
                ErrorCode::INVALID_UPDATE_VERSION,
                None,
            )
        });
        assert_eq!(
            leader(&sim).isr_state,
            before,
            "a stale answer changes nothing"
        );
        let stale = item(p - 1, &sim);
        on_partition(&mut sim, 1, |p, ctx, host| {
            p.handle_alter_partition_result(ctx, host, stale, ErrorCode::INELIGIBLE_REPLICA, None)
        });
        assert_eq!(leader(&sim).isr_state, before);
    }

    #[test]
    fn errors_that_await_metadata_keep_the_pending_state_and_send_nothing() {
        // Partition.handleAlterPartitionError: FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
        // INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION and NEW_LEADER_ELECTED return false
        // (no retry) and leave partitionState pending, "awaiting new the latest metadata"
        // (PartitionTest testIsrNotExpandedIfUpdateFails: after INVALID_UPDATE_VERSION the
        // maximal ISR stays the proposed one and no further update is sent).
        for error in [
            ErrorCode::FENCED_LEADER_EPOCH,
            ErrorCode::INVALID_UPDATE_VERSION,
            ErrorCode::INVALID_REQUEST,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            ErrorCode::NEW_LEADER_ELECTED,
        ] {
            let (mut sim, before, _) = answered_with(error);
            assert_eq!(leader(&sim).isr_state, before, "{error}: stays pending");
            assert_eq!(
                sim.brokers[&1].alter_partition,
                AlterPartitionManager::default(),
                "{error}: not re-proposed"
            );
            // Pending, the leader proposes no other ISR change.
            on_partition(&mut sim, 1, |p, ctx, host| p.maybe_shrink_isr(ctx, host));
            assert_eq!(leader(&sim).isr_state, before, "{error}");
        }
    }

    #[test]
    fn refusals_revert_to_the_committed_state_and_unexpected_errors_retry() {
        // handleAlterPartitionError: OPERATION_NOT_ATTEMPTED and INELIGIBLE_REPLICA reset
        // partitionState to proposedIsrState.lastCommittedState (PartitionTest
        // testIsrNotExpandedIfReplicaIsFencedOrShutdown expects the ISR back at the committed
        // one after INELIGIBLE_REPLICA); any other error is "unexpected ... Retrying":
        // the same proposal is submitted again (PartitionTest
        // testPartitionShouldRetryAlterPartitionRequest, with UNKNOWN_SERVER_ERROR).
        for error in [
            ErrorCode::OPERATION_NOT_ATTEMPTED,
            ErrorCode::INELIGIBLE_REPLICA,
        ] {
            let (sim, _, _) = answered_with(error);
            assert_eq!(
                leader(&sim).isr_state,
                IsrState::Committed { isr: vec![1, 2, 3] },
                "{error}"
            );
        }
        let (sim, before, it) = answered_with(ErrorCode::NOT_CONTROLLER);
        assert_eq!(leader(&sim).isr_state, before, "still the same proposal");
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(
            apm.unsent.get(&TP0),
            Some(&it),
            "submitted again, unchanged"
        );
        assert!(apm.in_flight.is_some(), "and sent");
    }

    #[test]
    fn a_second_proposal_while_one_waits_is_not_attempted() {
        // DefaultAlterPartitionManager.submit: unsentIsrUpdates.putIfAbsent fails while an
        // earlier proposal for the partition waits for its answer, and the new one completes
        // with OperationNotAttemptedException (AlterPartitionManagerTest
        // testOverwriteWithinBatch: "Should get a failed future" for the second submit).
        let mut sim = sim();
        let first = until_shrink_proposed(&mut sim);
        // New metadata resets the partition to a committed state (makeLeader with a newer
        // partition epoch) while the first request is still unanswered.
        if let Role::Leader(l) = &mut sim.brokers[&1].partitions[&TP0].role {
            l.isr_state = IsrState::Committed { isr: vec![1, 2, 3] };
        }
        on_partition(&mut sim, 1, |p, ctx, host| p.maybe_shrink_isr(ctx, host));
        assert_eq!(
            leader(&sim).isr_state,
            IsrState::Committed { isr: vec![1, 2, 3] },
            "the second proposal was refused at once and reverted"
        );
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(
            apm.unsent.get(&TP0).map(|i| i.proposal),
            Some(first),
            "the first still waits"
        );
    }

    #[test]
    fn a_top_level_stale_broker_epoch_keeps_the_proposal_and_retries_it() {
        // DefaultAlterPartitionManager.handleAlterPartitionResponse: STALE_BROKER_EPOCH
        // "retrying" leaves the item in unsentIsrUpdates; the request goes again 50 ms later.
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let request = sim.brokers[&1]
            .alter_partition
            .in_flight
            .expect("in flight");
        let result = crate::network::AlterPartitionResult {
            tp: TP0,
            error: ErrorCode::NONE,
            leader: Some(1),
            leader_epoch: 0,
            partition_epoch: 0,
            isr: vec![],
        };
        on_broker(&mut sim, 1, |b, ctx| {
            b.on_alter_partition_response(ctx, request, ErrorCode::STALE_BROKER_EPOCH, vec![result])
        });
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent.get(&TP0).map(|i| i.proposal), Some(p));
        assert_eq!(apm.in_flight, None);
        let at = sim.now();
        sim.advance_to(at + ALTER_PARTITION_RETRY_MS);
        assert!(
            sim.brokers[&1].alter_partition.in_flight.is_some(),
            "sent again"
        );
    }
}

/// The leader's view of its followers and the fetch-error rules, one situation each.
mod fetch {
    use super::*;
    use crate::partition::ReplicaState;

    fn sim(json: &str) -> Sim {
        let mut sim = Sim::new(&Scenario::from_json(json).expect("scenario")).expect("sim");
        sim.check_invariants = true;
        sim
    }

    fn replicated() -> Sim {
        let mut s = sim(
            r#"{"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b","c"]}],
                "end_ms":600000}"#,
        );
        s.advance_to(2_000);
        s
    }

    /// What leader `leader` knows of follower `follower`.
    fn remote(sim: &Sim, leader: BrokerId, follower: BrokerId) -> ReplicaState {
        let l = sim.brokers[&leader].partitions[&TP0].leader_state();
        l.expect("leads").remote[&follower].clone()
    }

    #[test]
    fn the_same_leader_at_a_new_epoch_keeps_what_it_knows_of_its_followers() {
        // Partition.makeLeader: isNewLeader = !isLeader; a re-elected leader calls
        // resetReplicaState(isNewLeader = false), keeping LEO, log start and broker epoch.
        let mut sim = replicated();
        let before = remote(&sim, 1, 2);
        assert_eq!(before.log_end_offset, Some(3));
        let mut p = sim.controller.partitions[&TP0].clone();
        p.leader_epoch += 1;
        p.partition_epoch += 1;
        on_partition(&mut sim, 1, |part, ctx, host| {
            part.make_leader(ctx, host, &p)
        });
        let after = remote(&sim, 1, 2);
        assert_eq!(after.log_end_offset, Some(3));
        assert_eq!(after.broker_epoch, before.broker_epoch);
        assert_eq!(after.last_fetch_leader_log_end_offset, Some(3));
        // A broker that was following becomes a new leader: it knows nothing yet.
        let mut p = sim.controller.partitions[&TP0].clone();
        p.leader = Some(2);
        p.leader_epoch += 2;
        on_partition(&mut sim, 2, |part, ctx, host| {
            part.make_leader(ctx, host, &p)
        });
        let fresh = remote(&sim, 2, 3);
        assert_eq!(fresh.log_end_offset, None);
        assert_eq!(fresh.broker_epoch, None);
    }

    /// Sends a Fetch to broker `to` as broker `from` would, and returns the error of the
    /// FetchResponse it put on the wire.
    fn fetch(
        sim: &mut Sim,
        to: BrokerId,
        from: BrokerId,
        f: impl FnOnce(&mut Payload),
    ) -> ErrorCode {
        let broker = &sim.brokers[&from];
        let mut payload = Payload::Fetch {
            fetch_id: 999_999,
            fetcher_id: 0,
            replica_id: from,
            broker_epoch: broker.broker_epoch,
            partitions: vec![FetchPartition {
                tp: TP0,
                fetch_offset: broker.log(TP0).log_end_offset(),
                log_start_offset: 0,
                current_leader_epoch: sim.controller.partitions[&TP0].leader_epoch,
                last_fetched_epoch: broker.log(TP0).epoch_cache.latest_epoch(),
            }],
        };
        f(&mut payload);
        on_broker(sim, to, |b, ctx| {
            b.on_message(ctx, Node::Broker(from), payload)
        });
        sim.in_flight
            .values()
            .rev()
            .find_map(|m| match &m.payload {
                Payload::FetchResponse {
                    fetch_id: 999_999,
                    partitions,
                } => partitions.first().map(|p| p.error),
                _ => None,
            })
            .expect("answered")
    }

    /// The one partition of a Fetch.
    fn partition_of(p: &mut Payload) -> &mut FetchPartition {
        match p {
            Payload::Fetch { partitions, .. } => &mut partitions[0],
            _ => unreachable!("a Fetch"),
        }
    }

    fn set_epoch(p: &mut Payload, e: i32) {
        partition_of(p).current_leader_epoch = e;
    }

    #[test]
    fn the_leader_epoch_is_checked_first_on_a_follower_too() {
        // Partition.getLocalLog → checkCurrentLeaderEpoch before the leader check
        // (PartitionTest.testLeaderEpochValidationOnFollower: FENCED for epoch - 1,
        // UNKNOWN for epoch + 1, NOT_LEADER_OR_FOLLOWER for the current epoch).
        let mut sim = replicated();
        if let Role::Follower(f) = &mut sim.brokers[&2].partitions[&TP0].role {
            f.leader_epoch = 5;
        }
        assert_eq!(
            fetch(&mut sim, 2, 3, |p| set_epoch(p, 4)),
            ErrorCode::FENCED_LEADER_EPOCH
        );
        assert_eq!(
            fetch(&mut sim, 2, 3, |p| set_epoch(p, 6)),
            ErrorCode::UNKNOWN_LEADER_EPOCH
        );
        assert_eq!(
            fetch(&mut sim, 2, 3, |p| set_epoch(p, 5)),
            ErrorCode::NOT_LEADER_OR_FOLLOWER
        );
    }

    #[test]
    fn a_fetch_with_a_stale_broker_epoch_changes_nothing() {
        // Replica.updateFetchStateOrThrow (KIP-903), PartitionTest
        // testFenceFollowerFetchWithStaleBrokerEpoch: NotLeaderOrFollowerException, and the
        // replica state stays as the previous fetch left it.
        let mut sim = replicated();
        let before = remote(&sim, 1, 2);
        let stale = sim.brokers[&2].broker_epoch - 1;
        let e = fetch(&mut sim, 1, 2, |p| {
            if let Payload::Fetch { broker_epoch, .. } = p {
                *broker_epoch = stale;
            }
        });
        assert_eq!(e, ErrorCode::NOT_LEADER_OR_FOLLOWER);
        assert_eq!(remote(&sim, 1, 2), before);
        // The right epoch is accepted (a fetch from offset 2 is answered with data at once).
        let ok = fetch(&mut sim, 1, 2, |p| partition_of(p).fetch_offset = 2);
        assert_eq!(ok, ErrorCode::NONE);
    }

    #[test]
    fn an_undefined_end_offset_is_out_of_range_and_the_follower_keeps_its_log() {
        // Partition.readRecords: "Could not determine the end offset of the last fetched
        // epoch" → OFFSET_OUT_OF_RANGE; AbstractFetcherThread.fetchOffsetAndTruncate with the
        // leader's LEO at or past ours truncates nothing (it fetches from max(leader start,
        // our LEO)). A follower whose last fetched epoch is above the leader's must not lose
        // its log.
        let mut sim = replicated();
        let e = fetch(&mut sim, 1, 2, |p| {
            partition_of(p).last_fetched_epoch = Some(9)
        });
        assert_eq!(e, ErrorCode::OFFSET_OUT_OF_RANGE);
        out_of_range(&mut sim, 3, 0);
        assert_eq!(
            sim.brokers[&2].log(TP0).log_end_offset(),
            3,
            "nothing truncated"
        );
        // The leader's log ends below ours: truncate to it (the unclean-election case).
        out_of_range(&mut sim, 1, 0);
        assert_eq!(sim.brokers[&2].log(TP0).log_end_offset(), 1);
        // The leader's log starts past our end: start over at its log start.
        out_of_range(&mut sim, 9, 5);
        let log = sim.brokers[&2].log(TP0);
        assert_eq!((log.log_start_offset, log.log_end_offset()), (5, 5));
    }

    #[test]
    fn a_fenced_follower_stops_fetching_until_a_new_leader_epoch() {
        // AbstractFetcherThread.onPartitionFenced → markPartitionFailed
        // (AbstractFetcherThreadTest.testFencedFetch: the partition leaves the fetcher's
        // partitionStates instead of being retried after the backoff).
        let mut sim = replicated();
        // Broker 2's next fetch is answered FENCED_LEADER_EPOCH.
        while !matches!(sim.brokers[&2].role(TP0), Role::Follower(f) if f.in_flight_fetch.is_some())
        {
            assert!(sim.step());
        }
        let fetch_id = match sim.brokers[&2].role(TP0) {
            Role::Follower(f) => f.in_flight_fetch.expect("in flight"),
            _ => unreachable!("checked above"),
        };
        let response = (
            Node::Broker(1),
            Payload::FetchResponse {
                fetch_id,
                partitions: vec![FetchPartitionData {
                    tp: TP0,
                    error: ErrorCode::FENCED_LEADER_EPOCH,
                    high_watermark: 3,
                    leader_log_start_offset: 0,
                    records: vec![],
                    diverging_epoch: None,
                    leader_log_end_offset: 3,
                }],
            },
        );
        on_broker(&mut sim, 2, |b, ctx| {
            b.on_message(ctx, response.0, response.1)
        });
        let now = sim.now();
        sim.advance_to(now + 10 * sim.config.replica_fetch_backoff_ms);
        assert!(
            !sim.in_flight().any(|m| m.from == Node::Broker(2)
                && m.payload.kind() == crate::types::MessageKind::Fetch),
            "no fetch from broker 2 while its partition is failed"
        );
        assert!(matches!(sim.brokers[&2].role(TP0), Role::Follower(f) if f.failed));
        // Metadata with a new leader epoch re-creates the fetcher.
        let mut image = sim.controller.image();
        image.offset += 1_000;
        image.partitions[&TP0].leader_epoch += 1;
        on_broker(&mut sim, 2, |b, ctx| b.apply_metadata(ctx, Arc::new(image)));
        assert!(matches!(sim.brokers[&2].role(TP0), Role::Follower(f) if !f.failed));
    }
}

/// One broker node alone, over local values: one input, the exact effects in order, and
/// the state after (openraft's engine tests; Kafka's PartitionTest, ReplicaManagerTest,
/// AbstractFetcherThreadTest and BrokerLifecycleManagerTest check the same rules with a
/// mocked log, scheduler and channel). Timings are Kafka's defaults: replica.lag.time.max.ms
/// 30000, replica.fetch.wait.max.ms 500, replica.socket.timeout.ms 30000,
/// controller.socket.timeout.ms 30000, the HW checkpoint every 5000 ms, a heartbeat every
/// 2000 ms, broker.session.timeout.ms 9000.
mod driven_alone {
    use super::*;
    use crate::client::PRODUCER;
    use crate::controller::Controller;
    use crate::effect::{Effect, Locals, Observation, Scheduled};
    use crate::event::OutOfSyncReplica;
    use crate::log::BatchProducer;
    use crate::network::{AlterPartitionData, AlterPartitionResult};
    use crate::record::{Record, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE};
    use crate::snapshot::TruncationRecord;
    use crate::types::{Acks, TimeMs, TopicPartition};
    use crate::Config;

    /// Broker `id` and what a Ctx borrows, at time `now`.
    struct Node1 {
        broker: Broker,
        now: TimeMs,
        locals: Locals,
    }

    /// The controller's first image of a cluster of brokers 1..=3 (epochs 0, 1, 2), the
    /// topic "t" with replicas [1, 2, 3], leader 1, ISR `isr`, as `Sim::new` builds it.
    fn image(isr: &[BrokerId], min_isr: u32) -> MetadataImage {
        let partition = PartitionRegistration::new(vec![1, 2, 3], Some(1));
        let mut c = Controller::new([(TP0, partition)].into_iter().collect(), vec![min_isr]);
        for id in 1..=3 {
            c.register_at_start(id);
        }
        c.partitions[&TP0].isr = isr.to_vec();
        c.append(0, "TopicRecord", String::new());
        c.image()
    }

    use crate::metadata::PartitionRegistration;

    impl Node1 {
        /// Broker `id` formed at time 0 from `image` (its effects taken).
        fn formed(id: BrokerId, image: MetadataImage) -> Node1 {
            let mut n = Node1 {
                broker: Broker::new(id, i64::from(id - 1), std::iter::once(TP0)),
                now: 0,
                locals: Locals::new(Config::default(), "t", 100),
            };
            n.run(|b, ctx| b.form(ctx, Arc::new(image)));
            n
        }

        fn run(&mut self, f: impl FnOnce(&mut Broker, &mut Ctx<'_>)) -> Vec<Effect> {
            let mut ctx = self.locals.ctx(self.now);
            f(&mut self.broker, &mut ctx);
            self.locals.take()
        }

        fn message(&mut self, from: Node, payload: Payload) -> Vec<Effect> {
            self.run(|b, ctx| b.on_message(ctx, from, payload))
        }

        fn timer(&mut self, timer: BrokerTimer) -> Vec<Effect> {
            self.run(|b, ctx| b.on_timer(ctx, timer))
        }

        fn leader(&self) -> &LeaderState {
            self.broker.partitions[&TP0].leader_state().expect("leads")
        }
    }

    fn tp() -> TopicPartition {
        TopicPartition {
            topic: "t".into(),
            partition: 0,
        }
    }

    fn timer(b: BrokerId, at: TimeMs, timer: BrokerTimer) -> Effect {
        Effect::SetTimer {
            at,
            scheduled: Scheduled::Broker {
                broker: b,
                incarnation: 0,
                timer,
            },
        }
    }

    fn phased(b: BrokerId, at: TimeMs, max_phase: TimeMs, timer: BrokerTimer) -> Effect {
        Effect::SetTimerWithPhase {
            at,
            max_phase,
            scheduled: Scheduled::Broker {
                broker: b,
                incarnation: 0,
                timer,
            },
        }
    }

    fn send(from: BrokerId, to: Node, payload: Payload) -> Effect {
        Effect::Send {
            from: Node::Broker(from),
            to,
            payload,
        }
    }

    /// A follower's Fetch as RemoteLeaderEndPoint.buildFetch writes it.
    fn fetch(fetch_id: u64, replica: BrokerId, offset: u64) -> Payload {
        Payload::Fetch {
            fetch_id,
            fetcher_id: 0,
            replica_id: replica,
            broker_epoch: i64::from(replica - 1),
            partitions: vec![FetchPartition {
                tp: TP0,
                fetch_offset: offset,
                log_start_offset: 0,
                current_leader_epoch: 0,
                last_fetched_epoch: (offset > 0).then_some(0),
            }],
        }
    }

    fn record(offset: u64, value: &str) -> Record {
        Record {
            offset,
            epoch: 0,
            batch_base: 0,
            value: value.into(),
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            sequence: NO_SEQUENCE,
            key: None,
            size: None,
        }
    }

    /// ReplicaManager.applyDelta → Partition.makeLeader, then ReplicaManager.startup's
    /// isr-expiration (every replica.lag.time.max.ms / 2) and highwatermark-checkpoint
    /// tasks and BrokerLifecycleManager's heartbeat, each first run at a drawn phase within
    /// its period.
    #[test]
    fn a_broker_formed_as_leader_becomes_leader_and_starts_its_tasks() {
        let mut n = Node1 {
            broker: Broker::new(1, 0, std::iter::once(TP0)),
            now: 0,
            locals: Locals::new(Config::default(), "t", 100),
        };
        let effects = n.run(|b, ctx| b.form(ctx, Arc::new(image(&[1, 2, 3], 1))));
        assert_eq!(
            effects,
            [
                Effect::Emit(Event::BecameLeader {
                    broker: 1,
                    tp: tp(),
                    leader_epoch: 0,
                    start_offset: 0,
                    partition_epoch: 0,
                    high_watermark: 0,
                    isr: vec![1, 2, 3],
                    under_min_isr: false,
                    previous_leader: None,
                    previous_leader_epoch: -1,
                }),
                Effect::Observe(Observation::NewLeader {
                    tp: TP0,
                    broker: 1,
                    leader_epoch: 0,
                    recovering: false,
                }),
                phased(1, 0, 14_999, BrokerTimer::IsrExpiration { generation: 0 }),
                phased(1, 0, 4_999, BrokerTimer::HwCheckpoint),
                phased(1, 0, 1_999, BrokerTimer::Heartbeat),
            ]
        );
        // Partition.makeLeader: the followers' LEOs are unknown until they fetch.
        let l = n.leader();
        assert_eq!(l.isr_state, IsrState::Committed { isr: vec![1, 2, 3] });
        assert!(l.remote.values().all(|r| r.log_end_offset.is_none()));
        assert_eq!(n.broker.log(TP0).epoch_cache.checkpoint_line(), "0 1 0 0");
    }

    /// An acks=all produce waits in the purgatory (DelayedProduce) until the HW reaches its
    /// requiredOffset; the HW is the smallest LEO over the ISR, learned from the followers'
    /// fetch offsets (Partition.maybeIncrementLeaderHW); a fetch at the log end is held
    /// (DelayedFetch) up to replica.fetch.wait.max.ms.
    #[test]
    fn an_acks_all_write_is_answered_when_the_last_isr_member_fetches_past_it() {
        let mut n = Node1::formed(1, image(&[1, 2, 3], 1));
        n.now = 1_000;
        let produce = Payload::Produce {
            shape: Default::default(),
            tp: TP0,
            request_id: 7,
            acks: Acks::All,
            values: vec!["a".into(), "b".into()],
            timeout_ms: 30_000,
            producer: BatchProducer::default(),
        };
        assert_eq!(
            n.message(PRODUCER, produce),
            [
                Effect::Observe(Observation::LeaderAppend {
                    tp: TP0,
                    broker: 1,
                    first: 0,
                    last: 1
                }),
                timer(
                    1,
                    31_000,
                    BrokerTimer::ProduceExpire {
                        tp: TP0,
                        request_id: 7
                    }
                ),
            ],
            "the followers' LEOs are unknown: the HW cannot move"
        );
        // Broker 2 fetches from 0: it gets both records; the HW stays at 0.
        n.now = 1_010;
        assert_eq!(
            n.message(Node::Broker(2), fetch(20, 2, 0)),
            [send(
                1,
                Node::Broker(2),
                Payload::FetchResponse {
                    fetch_id: 20,
                    partitions: vec![FetchPartitionData {
                        tp: TP0,
                        error: ErrorCode::NONE,
                        high_watermark: 0,
                        leader_log_start_offset: 0,
                        records: n.broker.log(TP0).read(0, 2),
                        diverging_epoch: None,
                        leader_log_end_offset: 2,
                    }],
                }
            )]
        );
        // Broker 3 already has both (it fetches from 2): nothing new for it, so the fetch
        // is held; broker 2's LEO is still 0, so the HW stays.
        n.now = 1_020;
        assert_eq!(
            n.message(Node::Broker(3), fetch(30, 3, 2)),
            [timer(
                1,
                1_520,
                BrokerTimer::HeldFetchExpire { fetch_id: 30 }
            )]
        );
        assert_eq!(n.broker.log(TP0).high_watermark, 0);
        // Broker 2 fetches from 2: every ISR member has both records. The HW moves to 2, the
        // write is answered, and this fetch is held too.
        n.now = 1_030;
        assert_eq!(
            n.message(Node::Broker(2), fetch(21, 2, 2)),
            [
                Effect::Observe(Observation::HighWatermark {
                    tp: TP0,
                    broker: 1,
                    leader_epoch: 0,
                    high_watermark: 2
                }),
                send(
                    1,
                    PRODUCER,
                    Payload::ProduceResponse {
                        tp: TP0,
                        request_id: 7,
                        error: ErrorCode::NONE,
                        base_offset: Some(0),
                        last_offset: Some(1)
                    }
                ),
                timer(1, 1_530, BrokerTimer::HeldFetchExpire { fetch_id: 21 }),
            ]
        );
        assert!(n.leader().purgatory.is_empty());
        assert_eq!(n.broker.delayed_fetches.len(), 2);
        // The held fetch expires with what there is: nothing, and the new HW.
        n.now = 1_520;
        assert_eq!(
            n.timer(BrokerTimer::HeldFetchExpire { fetch_id: 30 }),
            [send(
                1,
                Node::Broker(3),
                Payload::FetchResponse {
                    fetch_id: 30,
                    partitions: vec![FetchPartitionData {
                        tp: TP0,
                        error: ErrorCode::NONE,
                        high_watermark: 2,
                        leader_log_start_offset: 0,
                        records: vec![],
                        diverging_epoch: None,
                        leader_log_end_offset: 2,
                    }],
                }
            )]
        );
    }

    /// ReplicationControlManager.handleBrokerFenced writes the PartitionChangeRecords and
    /// the BrokerRegistrationChangeRecord in one batch, which a broker applies as one delta:
    /// the controller alone fences follower 3 (its session ran out) and pushes one image with
    /// the shrunk ISR and the fenced registration together. The leader alone applies it and
    /// answers the acks=all write that waited on 3 at once (Partition.maybeIncrementLeaderHW:
    /// 3 is outside the ISR and, fenced, not isReplicaIsrEligible, so no longer waited on).
    /// Given the ISR change without the fence, the leader would still wait on the caught-up
    /// 3 (shouldWaitToJoinIsr), until a later fetch of another follower.
    #[test]
    fn a_fenced_followers_isr_change_and_fence_arrive_together_and_release_the_write() {
        // The controller: brokers 1..=3, ISR [1, 2, 3], min.insync.replicas 2; 1 and 2
        // heartbeat at 8 s, 3 last at 0, so its session (9 s) runs out at 9 s.
        let partition = PartitionRegistration::new(vec![1, 2, 3], Some(1));
        let mut c = Controller::new([(TP0, partition)].into_iter().collect(), vec![2]);
        for id in 1..=3 {
            c.register_at_start(id);
        }
        c.append(0, "TopicRecord", String::new());
        c.last_heartbeat_ms.insert(1, 8_000);
        c.last_heartbeat_ms.insert(2, 8_000);
        let mut cl = Locals::new(Config::default(), "t", 0);
        c.on_timer(
            &mut cl.ctx(9_000),
            crate::effect::ControllerTimer::SessionCheck { broker: 3 },
            &[1, 2],
        );
        let pushed: Vec<Arc<MetadataImage>> = cl
            .take()
            .into_iter()
            .filter_map(|e| match e {
                Effect::Send {
                    to: Node::Broker(1),
                    payload: Payload::Metadata { image },
                    ..
                } => Some(image),
                _ => None,
            })
            .collect();
        assert_eq!(pushed.len(), 1, "one image for the fence's batch");
        let fenced = pushed[0].clone();
        assert_eq!(
            fenced.offset, 5,
            "the PartitionChangeRecord (4), then the fence (5)"
        );
        assert_eq!(fenced.partitions[&TP0].isr, vec![1, 2]);
        assert!(fenced.brokers[&3].fenced);

        // The leader, formed from the cluster's first image; 3 fetches at the log end (0),
        // caught up at 1 s; a write of two records at 1.01 s; 2 fetches them and then past
        // them. 3, caught up and eligible, holds the HW at its LEO (0).
        let leader = || {
            let mut n = Node1::formed(1, image(&[1, 2, 3], 2));
            n.now = 1_000;
            n.message(Node::Broker(3), fetch(30, 3, 0));
            n.now = 1_010;
            n.message(
                PRODUCER,
                Payload::Produce {
                    shape: Default::default(),
                    tp: TP0,
                    request_id: 7,
                    acks: Acks::All,
                    values: vec!["a".into(), "b".into()],
                    timeout_ms: 30_000,
                    producer: BatchProducer::default(),
                },
            );
            n.now = 1_020;
            n.message(Node::Broker(2), fetch(20, 2, 0));
            n.now = 1_030;
            n.message(Node::Broker(2), fetch(21, 2, 2));
            assert_eq!(n.broker.log(TP0).high_watermark, 0);
            n.now = 9_005;
            n
        };
        let answered = Effect::Send {
            from: Node::Broker(1),
            to: PRODUCER,
            payload: Payload::ProduceResponse {
                tp: TP0,
                request_id: 7,
                error: ErrorCode::NONE,
                base_offset: Some(0),
                last_offset: Some(1),
            },
        };
        let mut n = leader();
        let effects = n.run(|b, ctx| b.apply_metadata(ctx, fenced.clone()));
        assert!(effects.contains(&answered), "{effects:?}");
        assert_eq!(n.broker.log(TP0).high_watermark, 2);
        assert!(n.leader().purgatory.is_empty());

        // The ISR change alone (the fence not yet applied): 3 is still waited on.
        let mut split = (*fenced).clone();
        split.offset = 4;
        split.brokers.get_mut(&3).unwrap().fenced = false;
        let mut n = leader();
        let effects = n.run(|b, ctx| b.apply_metadata(ctx, Arc::new(split)));
        assert!(!effects.contains(&answered), "{effects:?}");
        assert_eq!(n.broker.log(TP0).high_watermark, 0);
    }

    /// Partition.appendRecordsToLeader: "Avoid writing to leader if there are not enough
    /// insync replicas to make it safe": acks=all with the ISR below min.insync.replicas is
    /// refused with NOT_ENOUGH_REPLICAS and nothing is written; acks=1 is written and
    /// answered at once, though the HW cannot move while the ISR is under the minimum.
    #[test]
    fn under_min_isr_acks_all_is_refused_and_acks_1_is_written() {
        let mut n = Node1::formed(1, image(&[1], 2));
        let produce = |acks| Payload::Produce {
            shape: Default::default(),
            tp: TP0,
            request_id: 9,
            acks,
            values: vec!["x".into()],
            timeout_ms: 30_000,
            producer: BatchProducer::default(),
        };
        assert_eq!(
            n.message(PRODUCER, produce(Acks::All)),
            [send(
                1,
                PRODUCER,
                Payload::ProduceResponse {
                    tp: TP0,
                    request_id: 9,
                    error: ErrorCode::NOT_ENOUGH_REPLICAS,
                    base_offset: None,
                    last_offset: None
                }
            )]
        );
        assert_eq!(n.broker.log(TP0).log_end_offset(), 0, "nothing written");
        assert_eq!(
            n.message(PRODUCER, produce(Acks::One)),
            [
                Effect::Observe(Observation::LeaderAppend {
                    tp: TP0,
                    broker: 1,
                    first: 0,
                    last: 0
                }),
                send(
                    1,
                    PRODUCER,
                    Payload::ProduceResponse {
                        tp: TP0,
                        request_id: 9,
                        error: ErrorCode::NONE,
                        base_offset: Some(0),
                        last_offset: Some(0)
                    }
                ),
            ]
        );
        assert_eq!(
            n.broker.log(TP0).high_watermark,
            0,
            "isUnderMinIsr: the HW stays"
        );
    }

    /// The isr-expiration task (Partition.maybeShrinkIsr): a follower that has not caught up
    /// within replica.lag.time.max.ms leaves the ISR through an AlterPartition request
    /// (PendingShrinkIsr until the controller answers, the request sent again after
    /// controller.socket.timeout.ms); the answer commits the new ISR.
    #[test]
    fn the_isr_expiration_task_shrinks_a_silent_follower_out_through_alter_partition() {
        let mut n = Node1::formed(1, image(&[1, 2, 3], 1));
        // Broker 2 fetches at the log end at 20 s (caught up then); broker 3 never fetches.
        n.now = 20_000;
        n.message(Node::Broker(2), fetch(20, 2, 0));
        n.now = 30_000;
        assert_eq!(
            n.timer(BrokerTimer::IsrExpiration { generation: 0 }),
            [timer(
                1,
                45_000,
                BrokerTimer::IsrExpiration { generation: 0 }
            )],
            "30 000 ms since broker 3 was last caught up (the election): not more"
        );
        n.now = 30_001;
        assert_eq!(
            n.timer(BrokerTimer::IsrExpiration { generation: 0 }),
            [
                Effect::Emit(Event::IsrShrinking {
                    broker: 1,
                    tp: tp(),
                    isr: vec![1, 2, 3],
                    new_isr: vec![1, 2],
                    high_watermark: 0,
                    log_end_offset: 0,
                    out_of_sync: vec![OutOfSyncReplica {
                        broker: 3,
                        log_end_offset: None,
                        last_caught_up_time_ms: 0,
                    }],
                }),
                send(
                    1,
                    Node::Controller,
                    Payload::AlterPartition {
                        request_id: 101,
                        broker_epoch: 0,
                        partitions: vec![AlterPartitionData {
                            tp: TP0,
                            leader_epoch: 0,
                            partition_epoch: 0,
                            new_isr: vec![(1, 0), (2, 1)],
                        }],
                    }
                ),
                timer(
                    1,
                    60_001,
                    BrokerTimer::AlterPartitionTimeout { request_id: 101 }
                ),
                timer(1, 45_001, BrokerTimer::IsrExpiration { generation: 0 }),
            ]
        );
        assert_eq!(
            n.leader().isr_state,
            IsrState::PendingShrink {
                isr: vec![1, 2, 3],
                out_of_sync: vec![3],
                proposal: 100
            }
        );
        // A task of an earlier replica.lag.time.max.ms does nothing.
        n.broker.isr_expiration_generation = 1;
        assert_eq!(n.timer(BrokerTimer::IsrExpiration { generation: 0 }), []);
        // The controller's answer commits [1, 2] at partition epoch 1.
        n.now = 30_050;
        let answer = Payload::AlterPartitionResponse {
            request_id: 101,
            top_error: ErrorCode::NONE,
            partitions: vec![AlterPartitionResult {
                tp: TP0,
                error: ErrorCode::NONE,
                leader: Some(1),
                leader_epoch: 0,
                partition_epoch: 1,
                isr: vec![1, 2],
            }],
        };
        assert_eq!(
            n.message(Node::Controller, answer.clone()),
            [Effect::Emit(Event::IsrUpdated {
                broker: 1,
                tp: tp(),
                isr: vec![1, 2],
                under_min_isr: false,
                partition_epoch: 1,
            })]
        );
        assert_eq!(
            n.leader().isr_state,
            IsrState::Committed { isr: vec![1, 2] }
        );
        assert_eq!(n.broker.alter_partition, AlterPartitionManager::default());
        assert_eq!(
            n.message(Node::Controller, answer),
            [],
            "an answer to no request in flight is dropped"
        );
    }

    /// ReplicaManager.applyDelta → makeFollower, then the fetcher (ReplicaFetcherThread)
    /// sends one Fetch at a time, as RemoteLeaderEndPoint.buildFetch writes it, appends what
    /// comes back and takes min(leader HW, own LEO) as its HW; on a slow machine the next
    /// fetch waits.
    #[test]
    fn a_follower_fetches_appends_and_follows_the_leaders_high_watermark() {
        let mut n = Node1::formed(2, image(&[1, 2, 3], 1));
        assert!(matches!(
            n.broker.role(TP0),
            Role::Follower(f) if f.leader == Some(1)
        ));
        assert_eq!(
            n.broker.fetcher.threads[&(1, 0)].generation,
            1,
            "ReplicaFetcherThread-0-1"
        );
        assert_eq!(
            n.timer(BrokerTimer::SendFetch {
                leader: 1,
                fetcher_id: 0,
                generation: 1
            }),
            [
                send(2, Node::Broker(1), fetch(2, 2, 0)),
                timer(
                    2,
                    30_000,
                    BrokerTimer::FetchTimeout {
                        leader: 1,
                        fetcher_id: 0,
                        fetch_id: 2
                    }
                ),
            ]
        );
        assert_eq!(
            n.timer(BrokerTimer::SendFetch {
                leader: 1,
                fetcher_id: 0,
                generation: 1
            }),
            [],
            "one fetch in flight"
        );
        n.now = 40;
        n.run(|b, _| b.set_slow(250));
        let response = Payload::FetchResponse {
            fetch_id: 2,
            partitions: vec![FetchPartitionData {
                tp: TP0,
                error: ErrorCode::NONE,
                high_watermark: 1,
                leader_log_start_offset: 0,
                records: vec![record(0, "a"), record(1, "b")],
                diverging_epoch: None,
                leader_log_end_offset: 2,
            }],
        };
        assert_eq!(
            n.message(Node::Broker(3), response.clone()),
            [],
            "not from the leader: dropped"
        );
        assert_eq!(
            n.message(Node::Broker(1), response),
            [timer(
                2,
                290,
                BrokerTimer::SendFetch {
                    leader: 1,
                    fetcher_id: 0,
                    generation: 3
                }
            )]
        );
        let log = n.broker.log(TP0);
        assert_eq!((log.log_end_offset(), log.high_watermark), (2, 1));
        // No answer within replica.socket.timeout.ms: back off replica.fetch.backoff.ms.
        n.now = 290;
        n.timer(BrokerTimer::SendFetch {
            leader: 1,
            fetcher_id: 0,
            generation: 3,
        });
        n.now = 30_290;
        assert_eq!(
            n.timer(BrokerTimer::FetchTimeout {
                leader: 1,
                fetcher_id: 0,
                fetch_id: 4
            }),
            [
                Effect::Emit(Event::FetchTimedOut {
                    broker: 2,
                    leader: Some(1),
                    fetcher_id: 0,
                    partitions: vec![],
                    replica_socket_timeout_ms: 30_000,
                }),
                timer(
                    2,
                    31_290,
                    BrokerTimer::SendFetch {
                        leader: 1,
                        fetcher_id: 0,
                        generation: 5
                    }
                ),
            ]
        );
    }

    /// The metrics a broker keeps as it works (metrics.rs): FetcherLagMetrics.lag, set by
    /// AbstractFetcherThread.processFetchRequest to `Math.max(0L,
    /// partitionData.highWatermark - nextOffset)`, which MaxLag reports; and
    /// failedProduceRequestRate, marked by
    /// ReplicaManager.appendToLocalLog for an OutOfOrderSequenceException (not one of the
    /// errors it calls known, as NOT_LEADER_OR_FOLLOWER is).
    #[test]
    fn the_fetcher_lag_and_the_failed_produce_meter() {
        let mut n = Node1::formed(2, image(&[1, 2, 3], 1));
        n.timer(BrokerTimer::SendFetch {
            leader: 1,
            fetcher_id: 0,
            generation: 1,
        });
        let lag = |n: &Node1| {
            crate::metrics::broker_metrics(&Config::default(), &n.broker, 0).replica_fetcher_max_lag
        };
        assert_eq!(lag(&n), 0, "no response yet");
        n.now = 10;
        n.message(
            Node::Broker(1),
            Payload::FetchResponse {
                fetch_id: 2,
                partitions: vec![FetchPartitionData {
                    tp: TP0,
                    error: ErrorCode::NONE,
                    high_watermark: 5,
                    leader_log_start_offset: 0,
                    records: vec![record(0, "a"), record(1, "b")],
                    diverging_epoch: None,
                    leader_log_end_offset: 6,
                }],
            },
        );
        assert_eq!(lag(&n), 3, "HW 5, next fetch offset 2");

        let mut n = Node1::formed(1, image(&[1, 2, 3], 1));
        let produce = |base_sequence| Payload::Produce {
            tp: TP0,
            request_id: 9,
            acks: Acks::One,
            values: vec!["x".into()],
            shape: Default::default(),
            timeout_ms: 30_000,
            producer: BatchProducer {
                producer_id: 0,
                producer_epoch: 0,
                base_sequence,
            },
        };
        n.message(PRODUCER, produce(0));
        assert_eq!(n.broker.meters.failed_produce_requests, 0);
        let out_of_order = n.message(PRODUCER, produce(5));
        assert!(
            matches!(
                &out_of_order[..],
                [Effect::Send {
                    payload: Payload::ProduceResponse {
                        error: ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
                        ..
                    },
                    ..
                }]
            ),
            "{out_of_order:?}"
        );
        assert_eq!(n.broker.meters.failed_produce_requests, 1);
        // A new process's meters start at 0.
        n.broker.lose_memory();
        assert_eq!(n.broker.meters, crate::partition::BrokerMeters::default());
    }

    /// AbstractFetcherThread.truncateToEpochEndOffsets with the leader's divergingEpoch
    /// (article 000, example 3: the follower's epoch-0 records past the leader's end of
    /// epoch 0 are thrown away, truncationOffset = min(leader end, follower end, LEO)).
    #[test]
    fn a_diverging_epoch_truncates_the_followers_log_and_fetches_again() {
        let mut n = Node1::formed(2, image(&[1, 2, 3], 1));
        n.timer(BrokerTimer::SendFetch {
            leader: 1,
            fetcher_id: 0,
            generation: 1,
        });
        let records: Vec<Record> = (0..4).map(|o| record(o, &format!("r{o}"))).collect();
        n.broker.partitions[&TP0].log.append_as_follower(&records);
        n.now = 50;
        let response = Payload::FetchResponse {
            fetch_id: 2,
            partitions: vec![FetchPartitionData {
                tp: TP0,
                error: ErrorCode::NONE,
                high_watermark: 2,
                leader_log_start_offset: 0,
                records: vec![],
                diverging_epoch: Some((0, 2)),
                leader_log_end_offset: 2,
            }],
        };
        assert_eq!(
            n.message(Node::Broker(1), response),
            [
                Effect::Emit(Event::TruncatingToEpochEndOffset {
                    broker: 2,
                    leader: 1,
                    fetcher_id: 0,
                    tp: tp(),
                    offset: 2,
                    leader_epoch: 0,
                    end_offset: 2,
                }),
                Effect::Emit(Event::LogTruncated {
                    broker: 2,
                    tp: tp(),
                    to_offset: 2,
                    below_high_watermark: None,
                }),
                Effect::Emit(Event::RecordsThrownAway {
                    broker: 2,
                    first_offset: 2,
                    last_offset: 3,
                    records: records[2..].to_vec(),
                    below_high_watermark: false,
                }),
                Effect::Observe(Observation::Truncated(
                    TP0,
                    TruncationRecord {
                        time_ms: 50,
                        broker: 2,
                        to_offset: 2,
                        removed: records[2..].to_vec(),
                        below_high_watermark: None,
                    },
                )),
                timer(
                    2,
                    50,
                    BrokerTimer::SendFetch {
                        leader: 1,
                        fetcher_id: 0,
                        generation: 3
                    }
                ),
            ]
        );
        assert_eq!(n.broker.log(TP0).log_end_offset(), 2);
        assert_eq!(n.locals.metrics.truncations, 1);
    }

    /// Controlled shutdown (BrokerLifecycleManager.beginControlledShutdown): the next
    /// heartbeat asks to shut down; when the controller says SHUTDOWN_NOW the broker answers
    /// what waits with NOT_LEADER_OR_FOLLOWER, checkpoints its HW, writes its broker epoch
    /// as the clean-shutdown marker (KIP-966: the next registration is then a clean one)
    /// and exits.
    #[test]
    fn a_controlled_shutdown_answers_what_waits_writes_its_epoch_and_exits() {
        let mut n = Node1::formed(1, image(&[1, 2, 3], 1));
        let produce = Payload::Produce {
            shape: Default::default(),
            tp: TP0,
            request_id: 7,
            acks: Acks::All,
            values: vec!["a".into()],
            timeout_ms: 30_000,
            producer: BatchProducer::default(),
        };
        n.message(PRODUCER, produce);
        n.now = 1_000;
        assert_eq!(
            n.run(|b, ctx| b.on_sigterm(ctx)),
            [
                send(
                    1,
                    Node::Controller,
                    Payload::BrokerHeartbeat {
                        broker_epoch: 0,
                        want_shut_down: true,
                        metadata_offset: 3,
                    }
                ),
                timer(1, 10_000, BrokerTimer::ShutdownTimeout),
            ]
        );
        n.now = 1_100;
        let shut_down_now = Payload::BrokerHeartbeatResponse {
            fenced: false,
            in_controlled_shutdown: true,
            should_shut_down: true,
        };
        assert_eq!(
            n.message(Node::Controller, shut_down_now),
            [
                send(
                    1,
                    PRODUCER,
                    Payload::ProduceResponse {
                        tp: TP0,
                        request_id: 7,
                        error: ErrorCode::NOT_LEADER_OR_FOLLOWER,
                        base_offset: None,
                        last_offset: None,
                    }
                ),
                Effect::Emit(Event::BrokerShutDown { broker: 1 }),
                Effect::Exit { broker: 1 },
            ]
        );
        assert_eq!(n.broker.clean_shutdown_epoch, n.broker.broker_epoch);
        assert_eq!(n.broker.log(TP0).hw_checkpoint, Some(0));
    }

    /// A new process recovers from the files (the HW from replication-offset-checkpoint),
    /// starts its tasks, and registers with the broker epoch its last process left
    /// (BrokerLifecycleManagerTest.testSuccessfulRegistration: the request is sent again
    /// until answered; the answer's broker epoch is kept and heartbeats begin).
    #[test]
    fn a_restarted_process_recovers_its_hw_and_registers_with_its_previous_epoch() {
        let mut n = Node1::formed(2, image(&[1, 2, 3], 1));
        let records: Vec<Record> = (0..4).map(|o| record(o, &format!("r{o}"))).collect();
        let log = &mut n.broker.partitions[&TP0].log;
        log.append_as_follower(&records);
        log.update_high_watermark(4);
        log.hw_checkpoint = Some(3);
        n.broker.clean_shutdown_epoch = 5;
        n.run(|b, _| b.lose_memory());
        assert_eq!(*n.broker.role(TP0), Role::None);
        assert!(!n.broker.registered && n.broker.metadata.is_none());
        n.now = 7_000;
        let start = n.run(|b, ctx| b.start(ctx, 2));
        let timer2 = |at, t| Effect::SetTimer {
            at,
            scheduled: Scheduled::Broker {
                broker: 2,
                incarnation: 2,
                timer: t,
            },
        };
        let phased2 = |max_phase, t| Effect::SetTimerWithPhase {
            at: 7_000,
            max_phase,
            scheduled: Scheduled::Broker {
                broker: 2,
                incarnation: 2,
                timer: t,
            },
        };
        assert_eq!(
            start,
            [
                phased2(14_999, BrokerTimer::IsrExpiration { generation: 0 }),
                phased2(4_999, BrokerTimer::HwCheckpoint),
                timer2(7_000, BrokerTimer::Register),
                Effect::Emit(Event::BrokerStarted {
                    broker: 2,
                    tp: tp(),
                    log_end_offset: 4,
                    high_watermark: 3,
                }),
            ]
        );
        assert_eq!(n.broker.clean_shutdown_epoch, -1, "read once");
        assert_eq!(
            n.timer(BrokerTimer::Register),
            [
                send(
                    2,
                    Node::Controller,
                    Payload::BrokerRegistration {
                        previous_broker_epoch: 5,
                        incarnation: 2,
                    }
                ),
                timer2(9_000, BrokerTimer::Register),
            ]
        );
        assert_eq!(
            n.message(
                Node::Controller,
                Payload::BrokerRegistrationResponse { broker_epoch: -1 }
            ),
            [],
            "refused: the Register timer tries again"
        );
        assert_eq!(
            n.message(
                Node::Controller,
                Payload::BrokerRegistrationResponse { broker_epoch: 42 }
            ),
            [timer2(7_000, BrokerTimer::Heartbeat)]
        );
        assert_eq!((n.broker.registered, n.broker.broker_epoch), (true, 42));
        assert_eq!(n.timer(BrokerTimer::Register), [], "registered: no more");
    }

    /// Follower fetching (KIP-392), driven on one broker: the leader's preferred read
    /// replica (ReplicaManager.findPreferredReadReplica with RackAwareReplicaSelector) and a
    /// follower serving a consumer up to its own HW. Brokers 1, 2, 3 in racks a, b, c.
    mod follower_fetching {
        use super::*;
        use crate::client::CONSUMER;

        /// Broker `id` of the image with ISR `isr`, `replica.selector.class` on or off, the
        /// racks a, b, c.
        fn racked(id: BrokerId, isr: &[BrokerId], selector: bool) -> Node1 {
            let mut n = Node1::formed(id, image(isr, 1));
            n.locals.config.rack_aware_replica_selector = selector;
            for (b, rack) in [(1, "a"), (2, "b"), (3, "c")] {
                n.locals.topics.racks.insert(b, rack.to_string());
            }
            n
        }

        /// Leader 1 with records 0..=3 (acks=1); broker 2 has fetched all four (LEO 4),
        /// broker 3 one (LEO 1), so the HW is 1.
        fn leader_with_followers(isr: &[BrokerId], selector: bool) -> Node1 {
            let mut n = racked(1, isr, selector);
            n.now = 1_000;
            n.message(
                PRODUCER,
                Payload::Produce {
                    tp: TP0,
                    request_id: 7,
                    acks: Acks::One,
                    values: vec!["a".into(), "b".into(), "c".into(), "d".into()],
                    shape: Default::default(),
                    timeout_ms: 30_000,
                    producer: BatchProducer::default(),
                },
            );
            n.now = 1_100;
            n.message(Node::Broker(2), fetch(1, 2, 4));
            n.message(Node::Broker(3), fetch(2, 3, 1));
            n.now = 1_200;
            n
        }

        fn consumer_fetch(offset: u64, rack: Option<&str>) -> Payload {
            Payload::ConsumerFetch {
                request_id: 50,
                tp: TP0,
                offset,
                max_records: 500,
                client_rack: rack.map(str::to_string),
            }
        }

        /// The answer broker `from` sends the consumer.
        fn answer(
            from: BrokerId,
            error: ErrorCode,
            records: Vec<Record>,
            (high_watermark, log_end_offset): (u64, u64),
            preferred_read_replica: Option<BrokerId>,
        ) -> Vec<Effect> {
            vec![send(
                from,
                CONSUMER,
                Payload::ConsumerFetchResponse {
                    request_id: 50,
                    tp: TP0,
                    error,
                    records,
                    high_watermark,
                    log_start_offset: 0,
                    log_end_offset,
                    preferred_read_replica,
                },
            )]
        }

        #[test]
        fn the_leader_names_a_caught_up_follower_in_the_consumers_rack() {
            // ReplicaManager.readFromLocalLog: with a preferred read replica "skip the read":
            // no records, the leader's HW and log end offset; the fetch answers at once
            // (testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined).
            let mut n = leader_with_followers(&[1, 2, 3], true);
            assert_eq!(n.leader().isr_state.isr(), &[1, 2, 3]);
            assert_eq!(n.broker.log(TP0).high_watermark, 1);
            let to_2 = answer(1, ErrorCode::NONE, vec![], (1, 4), Some(2));
            assert_eq!(n.message(CONSUMER, consumer_fetch(0, Some("b"))), to_2);
            assert_eq!(n.message(CONSUMER, consumer_fetch(4, Some("b"))), to_2);
            // Broker 3 holds offset 0 (LEO 1 >= 0) but not offset 2: "the follower may lag
            // behind", so at 2 there is no candidate in rack c and the leader reads.
            let to_3 = answer(1, ErrorCode::NONE, vec![], (1, 4), Some(3));
            assert_eq!(n.message(CONSUMER, consumer_fetch(0, Some("c"))), to_3);
            assert_eq!(
                n.message(CONSUMER, consumer_fetch(2, Some("c"))),
                answer(1, ErrorCode::NONE, vec![], (1, 4), None)
            );
        }

        #[test]
        fn the_leader_reads_itself_in_its_own_rack_an_unknown_rack_or_without_a_selector() {
            // ReplicaManagerTest.testPreferredReplicaAsLeader: the leader's own rack gives
            // the leader, which is not sent back (no preferred read replica).
            let mut n = leader_with_followers(&[1, 2, 3], true);
            let leader_reads = answer(1, ErrorCode::NONE, vec![record(0, "a")], (1, 4), None);
            assert_eq!(
                n.message(CONSUMER, consumer_fetch(0, Some("a"))),
                leader_reads
            );
            // ReplicaSelectorTest: "Expect leader when we can't find any nodes in given rack".
            assert_eq!(
                n.message(CONSUMER, consumer_fetch(0, Some("z"))),
                leader_reads
            );
            // No client.rack: the leader.
            assert_eq!(n.message(CONSUMER, consumer_fetch(0, None)), leader_reads);
            // replica.selector.class null (the default): ReplicaManager has no selector.
            let mut n = leader_with_followers(&[1, 2, 3], false);
            assert_eq!(
                n.message(CONSUMER, consumer_fetch(0, Some("b"))),
                leader_reads
            );
        }

        #[test]
        fn a_same_rack_follower_out_of_the_isr_is_no_candidate() {
            // ReplicaManagerTest.testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr:
            // "PartitionView passed to ReplicaSelector should not contain the follower as
            // it's not in the ISR", so the leader reads.
            let mut n = leader_with_followers(&[1, 3], true);
            assert_eq!(n.leader().isr_state.isr(), &[1, 3]);
            assert_eq!(
                n.message(CONSUMER, consumer_fetch(0, Some("b"))),
                answer(1, ErrorCode::NONE, vec![record(0, "a")], (1, 4), None)
            );
        }

        #[test]
        fn a_follower_serves_a_consumer_up_to_its_own_high_watermark() {
            // ReplicaManagerTest.testPreferredReplicaAsFollower: a fetch from a follower
            // succeeds, and "only leader will compute preferred replica". Partition
            // .fetchRecords with FetchIsolation.HIGH_WATERMARK: the follower's HW bounds the
            // read; LocalLog.read: an offset between the HW and the log end reads nothing,
            // one past the log end is OFFSET_OUT_OF_RANGE.
            let mut n = racked(2, &[1, 2, 3], true);
            let log = &mut n.broker.partitions[&TP0].log;
            log.append_as_leader(0, &["a".into(), "b".into(), "c".into(), "d".into()]);
            log.high_watermark = 2;
            let read = n.message(CONSUMER, consumer_fetch(0, Some("b")));
            assert_eq!(
                read,
                answer(
                    2,
                    ErrorCode::NONE,
                    vec![record(0, "a"), record(1, "b")],
                    (2, 4),
                    None
                )
            );
            for offset in [2, 3, 4] {
                assert_eq!(
                    n.message(CONSUMER, consumer_fetch(offset, Some("b"))),
                    answer(2, ErrorCode::NONE, vec![], (2, 4), None),
                    "offset {offset}: at or past the HW, within the log"
                );
            }
            assert_eq!(
                n.message(CONSUMER, consumer_fetch(5, Some("b"))),
                answer(2, ErrorCode::OFFSET_OUT_OF_RANGE, vec![], (2, 4), None)
            );
        }
    }
}

/// A broker with several partitions, driven alone: the fetcher threads (one Fetch per thread
/// with every partition it fetches, partitions spread over `num.replica.fetchers` threads
/// by AbstractFetcherManager.getFetcherId), the leader's DelayedFetch over the partitions
/// of a request, and DefaultAlterPartitionManager batching the ISR changes of several
/// partitions into one request. Expectations from Kafka's rules as the code states them.
mod many_partitions {
    use std::sync::Arc;

    use super::*;
    use crate::controller::Controller;
    use crate::effect::{Effect, Locals, Scheduled};
    use crate::log::BatchProducer;
    use crate::metadata::{MetadataImage, PartitionRegistration};
    use crate::types::{Acks, TimeMs};
    use crate::Config;

    const T0: Tp = Tp {
        topic: 0,
        partition: 0,
    };
    const T1: Tp = Tp {
        topic: 0,
        partition: 1,
    };

    /// Topic "t" with partitions 0 and 1, both with replicas [1, 2, 3] led by broker 1, on
    /// brokers 1..=3 (epochs 0, 1, 2).
    fn image() -> MetadataImage {
        let partitions = [T0, T1]
            .into_iter()
            .map(|tp| (tp, PartitionRegistration::new(vec![1, 2, 3], Some(1))))
            .collect();
        let mut c = Controller::new(partitions, vec![1]);
        for id in 1..=3 {
            c.register_at_start(id);
        }
        c.append(0, "TopicRecord", String::new());
        c.image()
    }

    struct Node {
        broker: Broker,
        now: TimeMs,
        locals: Locals,
    }

    impl Node {
        /// Broker `id` with `fetchers` fetcher threads per leader, before the cluster forms.
        fn unformed(id: BrokerId, fetchers: u32) -> Node {
            let config = Config {
                num_replica_fetchers: fetchers,
                ..Config::default()
            };
            Node {
                broker: Broker::new(id, i64::from(id - 1), [T0, T1].into_iter()),
                now: 0,
                locals: Locals::with_topics(config, &[("t", 2)], 100),
            }
        }

        /// Broker `id` formed at time 0 from `image()` (its effects taken).
        fn formed(id: BrokerId, fetchers: u32) -> Node {
            let mut n = Node::unformed(id, fetchers);
            n.run(|b, ctx| b.form(ctx, Arc::new(image())));
            n
        }

        fn run(&mut self, f: impl FnOnce(&mut Broker, &mut Ctx<'_>)) -> Vec<Effect> {
            let mut ctx = self.locals.ctx(self.now);
            f(&mut self.broker, &mut ctx);
            self.locals.take()
        }

        /// The Fetch requests among `effects`: (leader, fetcher id, partitions).
        fn fetches(effects: &[Effect]) -> Vec<(BrokerId, u32, Vec<Tp>)> {
            let mut out = vec![];
            for e in effects {
                if let Effect::Send {
                    to: crate::types::Node::Broker(to),
                    payload:
                        Payload::Fetch {
                            fetcher_id,
                            partitions,
                            ..
                        },
                    ..
                } = e
                {
                    out.push((*to, *fetcher_id, partitions.iter().map(|p| p.tp).collect()));
                }
            }
            out
        }

        /// Fires every SendFetch timer among `effects`, in order; returns what they asked.
        fn send_fetches(&mut self, effects: &[Effect]) -> Vec<Effect> {
            let mut out = vec![];
            for e in effects {
                if let Effect::SetTimer {
                    scheduled:
                        Scheduled::Broker {
                            timer: t @ BrokerTimer::SendFetch { .. },
                            ..
                        },
                    ..
                } = e
                {
                    let t = t.clone();
                    out.extend(self.run(|b, ctx| b.on_timer(ctx, t)));
                }
            }
            out
        }
    }

    /// AbstractFetcherThread.doWork builds the next fetch from every partition the thread
    /// holds: t-1 joins thread 0 of leader 3 while its request for t-0 is out (so it waits
    /// for that answer), then t-0 moves back to leader 1; the answer for t-0 (no longer the
    /// thread's) still leads to a fetch of t-1 from leader 3 (seed 1000160 of the simulation).
    #[test]
    fn a_partition_that_joined_a_thread_is_fetched_after_the_answer_of_partitions_that_left() {
        let mut n = Node::formed(2, 1);
        let image_with = |offset: u64, moves: &[(Tp, BrokerId, i32)]| {
            let mut image = image();
            image.offset += offset;
            for &(tp, leader, epoch) in moves {
                let p = &mut image.partitions[&tp];
                (p.leader, p.leader_epoch, p.partition_epoch) = (Some(leader), epoch, epoch);
            }
            Arc::new(image)
        };
        n.now = 100;
        let a = n.run(|b, ctx| b.apply_metadata(ctx, image_with(1, &[(T0, 3, 1)])));
        let sent = n.send_fetches(&a);
        assert_eq!(Node::fetches(&sent), [(3, 0, vec![T0])]);
        let Some(Effect::Send {
            payload: Payload::Fetch { fetch_id, .. },
            ..
        }) = sent.iter().find(|e| matches!(e, Effect::Send { .. }))
        else {
            panic!("{sent:?}")
        };
        let fetch_id = *fetch_id;
        let b = n.run(|b, ctx| b.apply_metadata(ctx, image_with(2, &[(T0, 3, 1), (T1, 3, 1)])));
        assert!(
            Node::fetches(&n.send_fetches(&b)).is_empty(),
            "t-1 waits for the answer of thread 0's request"
        );
        let c = n.run(|b, ctx| b.apply_metadata(ctx, image_with(3, &[(T0, 1, 2), (T1, 3, 1)])));
        n.send_fetches(&c);
        let answer = Payload::FetchResponse {
            fetch_id,
            partitions: vec![n.broker.partition(T0).fetch_error(ErrorCode::NONE)],
        };
        let after = n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Broker(3), answer));
        assert_eq!(Node::fetches(&n.send_fetches(&after)), [(3, 0, vec![T1])]);
    }

    /// AbstractFetcherThread.buildFetch: one thread (num.replica.fetchers=1) fetches both
    /// partitions from leader 1 in one request.
    #[test]
    fn one_thread_fetches_every_partition_in_one_request() {
        let mut n = Node::unformed(2, 1);
        let formed = n.run(|b, ctx| b.form(ctx, Arc::new(image())));
        let sent = n.send_fetches(&formed);
        assert_eq!(
            Node::fetches(&sent),
            [(1, 0, vec![T0, T1])],
            "ReplicaFetcherThread-0-1 carries t-0 and t-1 in one Fetch"
        );
        let threads: Vec<_> = n.broker.fetcher.threads.keys().copied().collect();
        assert_eq!(threads, [(1, 0)]);
    }

    /// AbstractFetcherManager.getFetcherId: `Utils.abs(31 * "t".hashCode() + partition) %
    /// 2`; "t".hashCode() is 116, so t-0 → 3596 % 2 = 0 and t-1 → 3597 % 2 = 1: two threads,
    /// ReplicaFetcherThread-0-1 and ReplicaFetcherThread-1-1, each with one partition.
    #[test]
    fn two_fetcher_threads_split_the_partitions_by_fetcher_id() {
        let mut n = Node::unformed(2, 2);
        let formed = n.run(|b, ctx| b.form(ctx, Arc::new(image())));
        let sent = n.send_fetches(&formed);
        assert_eq!(Node::fetches(&sent), [(1, 0, vec![T0]), (1, 1, vec![T1])]);
        let threads: Vec<_> = n.broker.fetcher.threads.keys().copied().collect();
        assert_eq!(threads, [(1, 0), (1, 1)]);
    }

    /// ReplicaManager.fetchMessages → DelayedFetch: a fetch of both partitions with nothing
    /// new waits in the purgatory as one request; records appended to t-1 complete it after
    /// the produce is handled (addCompletePurgatoryAction), with t-1's records and t-0's
    /// empty answer in one response.
    #[test]
    fn a_held_fetch_of_two_partitions_completes_when_either_gets_records() {
        let mut n = Node::formed(1, 1);
        n.now = 1_000;
        let fetch = Payload::Fetch {
            fetch_id: 7,
            fetcher_id: 0,
            replica_id: 2,
            broker_epoch: 1,
            partitions: [T0, T1]
                .into_iter()
                .map(|tp| FetchPartition {
                    tp,
                    fetch_offset: 0,
                    log_start_offset: 0,
                    current_leader_epoch: 0,
                    last_fetched_epoch: None,
                })
                .collect(),
        };
        let held = n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Broker(2), fetch));
        assert!(
            Node::fetches(&held).is_empty()
                && !held.iter().any(|e| matches!(e, Effect::Send { .. })),
            "nothing to answer yet: {held:?}"
        );
        assert_eq!(n.broker.delayed_fetches.len(), 1);
        assert_eq!(n.broker.delayed_fetches[0].partitions.len(), 2);
        n.now = 1_100;
        let produce = Payload::Produce {
            shape: Default::default(),
            request_id: 9,
            tp: T1,
            acks: Acks::One,
            values: vec!["x".into()],
            timeout_ms: 30_000,
            producer: BatchProducer::default(),
        };
        let effects = n.run(|b, ctx| b.on_message(ctx, crate::client::PRODUCER, produce));
        let sends: Vec<&Payload> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { payload, .. } => Some(payload),
                _ => None,
            })
            .collect();
        assert!(
            matches!(sends[0], Payload::ProduceResponse { request_id: 9, .. }),
            "the produce is answered first: {sends:?}"
        );
        match sends[1] {
            Payload::FetchResponse {
                fetch_id: 7,
                partitions,
            } => {
                assert_eq!(partitions.len(), 2);
                assert_eq!((partitions[0].tp, partitions[0].records.len()), (T0, 0));
                assert_eq!((partitions[1].tp, partitions[1].records.len()), (T1, 1));
            }
            other => panic!("expected the held fetch's answer, got {other:?}"),
        }
        assert!(n.broker.delayed_fetches.is_empty());
    }

    /// ReplicaManager.completeDelayedOperationsWhenNotPartitionLeader: a fetch held for t-0
    /// and t-1 completes as soon as this broker stops leading t-0 (DelayedFetch.tryComplete,
    /// Case E: the fetch's leader epoch 0 is fenced by the new epoch 1; Case A or B: the
    /// replica is gone), answered with every partition read again: t-0 with its error, t-1
    /// with nothing new. (The engine used to drop it, and the follower waited for its
    /// request's timeout: docs/engine.md, simplification 16 before.)
    #[test]
    fn a_held_fetch_is_answered_when_this_broker_stops_leading_one_of_its_partitions() {
        let held_then = |change: &dyn Fn(&mut MetadataImage)| {
            let mut n = Node::formed(1, 1);
            n.now = 1_000;
            let fetch = Payload::Fetch {
                fetch_id: 7,
                fetcher_id: 0,
                replica_id: 2,
                broker_epoch: 1,
                partitions: [T0, T1]
                    .into_iter()
                    .map(|tp| FetchPartition {
                        tp,
                        fetch_offset: 0,
                        log_start_offset: 0,
                        current_leader_epoch: 0,
                        last_fetched_epoch: None,
                    })
                    .collect(),
            };
            n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Broker(2), fetch));
            assert_eq!(n.broker.delayed_fetches.len(), 1);
            let mut image = image();
            image.offset += 1;
            change(&mut image);
            n.now = 1_100;
            let effects = n.run(|b, ctx| b.apply_metadata(ctx, Arc::new(image)));
            assert!(n.broker.delayed_fetches.is_empty());
            effects
                .iter()
                .find_map(|e| match e {
                    Effect::Send {
                        to: crate::types::Node::Broker(2),
                        payload:
                            Payload::FetchResponse {
                                fetch_id: 7,
                                partitions,
                            },
                        ..
                    } => Some(
                        partitions
                            .iter()
                            .map(|p| (p.tp, p.error, p.records.len()))
                            .collect::<Vec<_>>(),
                    ),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("the held fetch is answered: {effects:?}"))
        };
        // Broker 2 becomes t-0's leader at epoch 1: broker 1 follows it.
        let moved = held_then(&|image| {
            let p = &mut image.partitions[&T0];
            (p.leader, p.leader_epoch, p.partition_epoch) = (Some(2), 1, 1);
        });
        assert_eq!(
            moved,
            [
                (T0, ErrorCode::FENCED_LEADER_EPOCH, 0),
                (T1, ErrorCode::NONE, 0)
            ]
        );
        // A reassignment drops broker 1 from t-0 (broker 2 leads it at epoch 1): the replica is
        // deleted (stopPartitions), then the fetch completes.
        let deleted = held_then(&|image| {
            let p = &mut image.partitions[&T0];
            (p.replicas, p.isr) = (vec![2, 3], vec![2, 3]);
            (p.leader, p.leader_epoch, p.partition_epoch) = (Some(2), 1, 1);
        });
        assert_eq!(
            deleted,
            [
                (T0, ErrorCode::NOT_LEADER_OR_FOLLOWER, 0),
                (T1, ErrorCode::NONE, 0)
            ]
        );
    }

    /// DefaultAlterPartitionManager.maybePropagateIsrChanges: the ISR shrinks of both
    /// partitions (follower 3 silent past replica.lag.time.max.ms) go in one AlterPartition
    /// request; the second partition's proposal is not refused because the first's waits.
    #[test]
    fn the_isr_changes_of_two_partitions_go_in_one_request() {
        let mut n = Node::formed(1, 1);
        n.now = 40_000;
        let effects = n.run(|b, ctx| b.on_timer(ctx, BrokerTimer::IsrExpiration { generation: 0 }));
        let requests = alter_partition_requests(&effects);
        // The first proposal goes at once; the second waits for the request in flight.
        assert_eq!(requests, [vec![T0]]);
        assert_eq!(
            n.broker.alter_partition.unsent.len(),
            2,
            "both proposals wait"
        );
        // The answer to the first sends the second in the next request.
        let request_id = n.broker.alter_partition.in_flight.expect("in flight");
        let answer = Payload::AlterPartitionResponse {
            request_id,
            top_error: ErrorCode::NONE,
            partitions: vec![crate::network::AlterPartitionResult {
                tp: T0,
                error: ErrorCode::NONE,
                leader: Some(1),
                leader_epoch: 0,
                partition_epoch: 1,
                isr: vec![1],
            }],
        };
        let effects = n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Controller, answer));
        assert_eq!(alter_partition_requests(&effects), [vec![T1]]);
    }

    /// The partitions of each AlterPartition request among `effects`.
    fn alter_partition_requests(effects: &[Effect]) -> Vec<Vec<Tp>> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send {
                    payload: Payload::AlterPartition { partitions, .. },
                    ..
                } => Some(partitions.iter().map(|p| p.tp).collect()),
                _ => None,
            })
            .collect()
    }

    /// Leader 1 of t-0 and t-1 (formed), with `config`, and each partition's log holding
    /// batches of records with values of the given sizes: `batches[p]` lists partition p's
    /// batches as (records, value size).
    fn leader_with(config: Config, batches: [&[(usize, u32)]; 2]) -> Node {
        let mut n = Node::unformed(1, 1);
        n.locals.config = config;
        n.run(|b, ctx| b.form(ctx, Arc::new(image())));
        for (tp, list) in [T0, T1].into_iter().zip(batches) {
            let log = &mut n.broker.partitions.get_mut(&tp).expect("hosted").log;
            for &(count, size) in list {
                let values: Vec<String> = (0..count).map(|i| format!("v{i}")).collect();
                let shape = crate::record::RecordShape {
                    key: None,
                    size: Some(size),
                };
                log.append_batch_as_leader(0, &values, BatchProducer::NONE, &shape);
            }
        }
        n
    }

    /// Follower 2's Fetch of t-0 and t-1 from offset 0, in that order; the answer's records
    /// per partition (their offsets), or None when the leader held the fetch.
    fn fetch_both(n: &mut Node) -> Option<Vec<(Tp, Vec<u64>)>> {
        let fetch = Payload::Fetch {
            fetch_id: 7,
            fetcher_id: 0,
            replica_id: 2,
            broker_epoch: 1,
            partitions: [T0, T1]
                .into_iter()
                .map(|tp| FetchPartition {
                    tp,
                    fetch_offset: 0,
                    log_start_offset: 0,
                    current_leader_epoch: 0,
                    last_fetched_epoch: None,
                })
                .collect(),
        };
        let effects = n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Broker(2), fetch));
        effects.iter().find_map(|e| match e {
            Effect::Send {
                payload: Payload::FetchResponse { partitions, .. },
                ..
            } => Some(
                partitions
                    .iter()
                    .map(|p| (p.tp, p.records.iter().map(|r| r.offset).collect()))
                    .collect(),
            ),
            _ => None,
        })
    }

    /// A 1024-byte value's record is DefaultRecord.sizeInBytes: attributes 1, offset delta 1,
    /// timestamp delta 1, null key 1, varint(1024) 2, 1024, headers 1 = 1031, plus its varint
    /// length 2: 1033 bytes; a batch of three is 61 + 3 × 1033 = 3160 bytes.
    const KIB_BATCH: (usize, u32) = (3, 1024);

    /// ReplicaManager.readFromLog with `replica.fetch.max.bytes` 7000: t-0's first two
    /// batches (6320 bytes; a third would make 9480) and t-1's two (the partition limit is
    /// per partition; the response's 10 MiB are far off).
    #[test]
    fn a_follower_fetch_takes_whole_batches_up_to_replica_fetch_max_bytes() {
        let config = Config {
            replica_fetch_max_bytes: 7_000,
            ..Config::default()
        };
        let mut n = leader_with(config, [&[KIB_BATCH; 4], &[KIB_BATCH; 2]]);
        assert_eq!(
            fetch_both(&mut n),
            Some(vec![
                (T0, vec![0, 1, 2, 3, 4, 5]),
                (T1, vec![0, 1, 2, 3, 4, 5])
            ])
        );
    }

    /// KIP-74: `replica.fetch.max.bytes` 1000, below one batch (3160): t-0, the first
    /// partition with data, still returns its first batch alone (minOneMessage); then
    /// minOneMessage is off ("Once we read from a non-empty partition, we stop ignoring
    /// request and partition level size limits"), so t-1 returns no whole batch.
    #[test]
    fn a_first_batch_larger_than_the_limit_is_returned_alone() {
        let config = Config {
            replica_fetch_max_bytes: 1_000,
            ..Config::default()
        };
        let mut n = leader_with(config, [&[KIB_BATCH; 2], &[KIB_BATCH; 2]]);
        assert_eq!(
            fetch_both(&mut n),
            Some(vec![(T0, vec![0, 1, 2]), (T1, vec![])])
        );
    }

    /// `replica.fetch.response.max.bytes` 3400 over the Fetch's partitions in its order:
    /// t-0 reads its one batch (3160 bytes, all it has), leaving `limitBytes` 240; t-1's
    /// batches of one 100-byte value are 61 + (1 + 1 + 1 + 1 + 2 + 100 + 1 = 107, + 1) = 169
    /// bytes each: the first fits in 240, the second (338) does not.
    #[test]
    fn the_response_limit_spans_the_partitions_of_one_fetch() {
        let config = Config {
            replica_fetch_response_max_bytes: 3_400,
            ..Config::default()
        };
        let small = (1, 100);
        let mut n = leader_with(config, [&[KIB_BATCH], &[small, small]]);
        assert_eq!(
            fetch_both(&mut n),
            Some(vec![(T0, vec![0, 1, 2]), (T1, vec![0])])
        );
        // With 3500, 340 are left for t-1: both of its batches.
        let config = Config {
            replica_fetch_response_max_bytes: 3_500,
            ..Config::default()
        };
        let mut n = leader_with(config, [&[KIB_BATCH], &[small, small]]);
        assert_eq!(
            fetch_both(&mut n),
            Some(vec![(T0, vec![0, 1, 2]), (T1, vec![0, 1])])
        );
    }

    /// The consumer's Fetch of t-0 from offset 0 for `max_records`, the log's HW at 9 (three
    /// of its four 3160-byte batches): the offsets it gets.
    fn consume(config: Config, max_records: u32) -> Vec<u64> {
        let mut n = leader_with(config, [&[KIB_BATCH; 4], &[]]);
        n.broker
            .partitions
            .get_mut(&T0)
            .expect("hosted")
            .log
            .high_watermark = 9;
        let fetch = Payload::ConsumerFetch {
            request_id: 5,
            tp: T0,
            offset: 0,
            max_records,
            client_rack: None,
        };
        let effects = n.run(|b, ctx| b.on_message(ctx, crate::client::CONSUMER, fetch));
        effects
            .iter()
            .find_map(|e| match e {
                Effect::Send {
                    payload: Payload::ConsumerFetchResponse { records, .. },
                    ..
                } => Some(records.iter().map(|r| r.offset).collect()),
                _ => None,
            })
            .expect("answered")
    }

    /// A consumer reads below the HW (FetchIsolation.HIGH_WATERMARK), whole batches up to
    /// `max.partition.fetch.bytes` (and `fetch.max.bytes`), a first batch larger than that
    /// alone (minOneMessage), and hands out at most max.poll.records of them.
    #[test]
    fn a_consumer_fetch_is_bounded_by_the_hw_its_bytes_and_its_records() {
        let c = |partition: u32, all: u32| Config {
            max_partition_fetch_bytes: partition,
            fetch_max_bytes: all,
            ..Config::default()
        };
        let defaults = c(1_048_576, 52_428_800);
        assert_eq!(consume(defaults.clone(), 500), (0..9).collect::<Vec<_>>());
        assert_eq!(consume(defaults, 4), [0, 1, 2, 3]);
        assert_eq!(consume(c(7_000, 52_428_800), 500), [0, 1, 2, 3, 4, 5]);
        assert_eq!(consume(c(1_048_576, 7_000), 500), [0, 1, 2, 3, 4, 5]);
        assert_eq!(consume(c(1_000, 52_428_800), 500), [0, 1, 2]);
    }

    // ---- the replication throttle (quota.rs) ----------------------------------------

    /// `image()` one record later, as kafka-reassign-partitions.sh --throttle 1000 leaves it
    /// for a move of t-0 to broker 2: both rates 1000 B/s on brokers 1..=3, t-0 throttled on
    /// its leader 1 (`0:1`) and on follower 2 (`0:2`), t-1 not; both ISRs `isr`.
    fn throttled_image(isr: &[BrokerId]) -> Arc<MetadataImage> {
        let mut image = image();
        image.offset += 1;
        for p in image.partitions.values_mut() {
            p.isr = isr.to_vec();
            p.partition_epoch = 1;
        }
        for b in 1..=3 {
            image.throttle_rates.insert(b, (1_000, 1_000));
        }
        image
            .throttled_replicas
            .insert(0, ("0:1,0:3".to_string(), "0:2".to_string()));
        Arc::new(image)
    }

    /// Replica `replica`'s Fetch of t-0 and t-1 from offset 0 at `now`: the records answered
    /// per partition, or None when the leader held the fetch.
    fn fetch_at(n: &mut Node, now: TimeMs, replica: BrokerId) -> Option<Vec<(Tp, usize)>> {
        n.now = now;
        let fetch = Payload::Fetch {
            fetch_id: now,
            fetcher_id: 0,
            replica_id: replica,
            broker_epoch: i64::from(replica - 1),
            partitions: [T0, T1]
                .into_iter()
                .map(|tp| FetchPartition {
                    tp,
                    fetch_offset: 0,
                    log_start_offset: 0,
                    current_leader_epoch: 0,
                    last_fetched_epoch: None,
                })
                .collect(),
        };
        let from = crate::types::Node::Broker(replica);
        let effects = n.run(|b, ctx| b.on_message(ctx, from, fetch));
        effects.iter().find_map(|e| match e {
            Effect::Send {
                payload: Payload::FetchResponse { partitions, .. },
                ..
            } => Some(partitions.iter().map(|p| (p.tp, p.records.len())).collect()),
            _ => None,
        })
    }

    /// Leader 1 with two batches of three 1 KiB records on each partition (6320 bytes each),
    /// the throttle applied with ISR `isr`.
    fn throttled_leader(isr: &[BrokerId]) -> Node {
        let mut n = leader_with(Config::default(), [&[KIB_BATCH; 2], &[KIB_BATCH; 2]]);
        n.run(|b, ctx| b.apply_metadata(ctx, throttled_image(isr)));
        n
    }

    /// ReplicaManager.readFromLog's checkFetchDataInfo with shouldLeaderThrottle, and
    /// KafkaApis recording sizeOfThrottledPartitions into the leader quota (1000 B/s). At 1 s
    /// the quota is not exceeded: follower 2 (not in the ISR) gets t-0's 6320 bytes, which are
    /// recorded (t-1's are not: not throttled). From then on the rate is 6320 bytes over
    /// max(elapsed since the first sample at 1 s, 1 s): above 1000 B/s until 6.32 s have
    /// passed, so t-0 is left out (t-1 still answered) up to 7.319 s, and sent at 7.320 s,
    /// where 6320 / 6.32 s is exactly the bound (Quota.acceptable: `value <= bound`).
    #[test]
    fn a_leader_over_its_quota_leaves_a_throttled_partition_out_of_a_lagging_followers_fetch() {
        let mut n = throttled_leader(&[1, 3]);
        assert_eq!(fetch_at(&mut n, 1_000, 2), Some(vec![(T0, 6), (T1, 6)]));
        assert_eq!(
            n.broker.leader_quota.rate.clone().measure(1_000),
            (6_320, 1_000)
        );
        assert_eq!(fetch_at(&mut n, 1_500, 2), Some(vec![(T0, 0), (T1, 6)]));
        assert_eq!(fetch_at(&mut n, 7_319, 2), Some(vec![(T0, 0), (T1, 6)]));
        assert_eq!(fetch_at(&mut n, 7_320, 2), Some(vec![(T0, 6), (T1, 6)]));
        // And again over the quota: 12640 bytes over 6.32 s.
        assert_eq!(fetch_at(&mut n, 7_320, 2), Some(vec![(T0, 0), (T1, 6)]));
    }

    /// shouldLeaderThrottle: "To avoid ISR thrashing, we only throttle a replica on the leader
    /// if ... the replica is not in sync": follower 3, in the ISR, gets t-0 though the quota
    /// is exceeded, and its bytes still count (sizeOfThrottledPartitions: "Traffic from both
    /// in-sync and out of sync replicas"); follower 2, out of it, does not.
    #[test]
    fn an_isr_member_is_never_throttled_by_the_leader_but_its_bytes_count() {
        let mut n = throttled_leader(&[1, 3]);
        assert_eq!(fetch_at(&mut n, 1_000, 3), Some(vec![(T0, 6), (T1, 6)]));
        assert_eq!(fetch_at(&mut n, 1_500, 3), Some(vec![(T0, 6), (T1, 6)]));
        assert_eq!(
            n.broker.leader_quota.rate.clone().measure(1_500),
            (12_640, 1_000)
        );
        assert_eq!(fetch_at(&mut n, 1_500, 2), Some(vec![(T0, 0), (T1, 6)]));
    }

    /// DelayedFetch.tryComplete: a throttled partition's new bytes do not count ("skip if a
    /// throttled partition"), so records appended to t-0 do not complete lagging follower 2's
    /// held fetch of t-0 while the quota is exceeded; they complete ISR member 3's.
    #[test]
    fn records_for_a_throttled_partition_do_not_complete_a_held_fetch() {
        let hold_and_produce = |replica: BrokerId| {
            let mut n = throttled_leader(&[1, 3]);
            // Over the quota: 6320 bytes recorded at 1 s.
            assert_eq!(fetch_at(&mut n, 1_000, 3), Some(vec![(T0, 6), (T1, 6)]));
            n.now = 1_100;
            let fetch = Payload::Fetch {
                fetch_id: 50,
                fetcher_id: 0,
                replica_id: replica,
                broker_epoch: i64::from(replica - 1),
                partitions: vec![FetchPartition {
                    tp: T0,
                    fetch_offset: 6,
                    log_start_offset: 0,
                    current_leader_epoch: 0,
                    last_fetched_epoch: None,
                }],
            };
            let from = crate::types::Node::Broker(replica);
            let held = n.run(|b, ctx| b.on_message(ctx, from, fetch));
            let answers = |effects: &[Effect]| {
                effects.iter().any(|e| {
                    matches!(
                        e,
                        Effect::Send {
                            payload: Payload::FetchResponse { fetch_id: 50, .. },
                            ..
                        }
                    )
                })
            };
            assert!(!answers(&held), "{held:?}");
            let produce = Payload::Produce {
                shape: Default::default(),
                request_id: 9,
                tp: T0,
                acks: Acks::One,
                values: vec!["x".into()],
                timeout_ms: 30_000,
                producer: BatchProducer::default(),
            };
            n.now = 1_200;
            let effects = n.run(|b, ctx| b.on_message(ctx, crate::client::PRODUCER, produce));
            (answers(&effects), n.broker.delayed_fetches.len())
        };
        assert_eq!(
            hold_and_produce(2),
            (false, 1),
            "follower 2 waits for its expiry"
        );
        assert_eq!(
            hold_and_produce(3),
            (true, 0),
            "ISR member 3 gets the record"
        );
    }

    /// RemoteLeaderEndPoint.buildFetch with shouldFollowerThrottle: follower 2's quota (1000
    /// B/s, t-0 throttled on it by `0:2`) is exceeded after it appended t-0's 6320 bytes, so
    /// its next Fetch leaves t-0 out while t-0 lags (t-1 still goes); with t-1 left alone too
    /// (backing off), the thread waits replica.fetch.backoff.ms. A t-0 in sync (lag 0) is
    /// fetched whatever the quota.
    #[test]
    fn a_follower_over_its_quota_leaves_a_lagging_throttled_partition_out_of_its_fetch() {
        let mut n = Node::unformed(2, 1);
        n.now = 1_000;
        let applied = n.run(|b, ctx| b.form(ctx, throttled_image(&[1, 3])));
        let sent = n.send_fetches(&applied);
        let Some(Effect::Send {
            payload: Payload::Fetch { fetch_id, .. },
            ..
        }) = sent.iter().find(|e| matches!(e, Effect::Send { .. }))
        else {
            panic!("{sent:?}")
        };
        assert_eq!(Node::fetches(&sent), [(1, 0, vec![T0, T1])]);
        // The leader's answer: t-0's two batches (HW 12: still lagging), t-1 nothing.
        let leader = leader_with(Config::default(), [&[KIB_BATCH; 4], &[]]);
        let t0 = leader.broker.partition(T0);
        let (records, bytes) = FetchLimits::new(&Config {
            replica_fetch_max_bytes: 6_320,
            ..Config::default()
        })
        .read(&t0.log, 0);
        assert_eq!((records.len(), bytes), (6, 6_320));
        let mut d0 = t0.fetch_error(ErrorCode::NONE);
        d0.records = records;
        d0.high_watermark = 12;
        let d1 = leader.broker.partition(T1).fetch_error(ErrorCode::NONE);
        let answer = Payload::FetchResponse {
            fetch_id: *fetch_id,
            partitions: vec![d0, d1],
        };
        n.now = 1_010;
        let after = n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Broker(1), answer));
        assert_eq!(
            n.broker.fetcher.quota.rate.clone().measure(1_010),
            (6_320, 1_000)
        );
        assert_eq!(Node::fetches(&n.send_fetches(&after)), [(1, 0, vec![T1])]);
        // Now t-1 backs off (as after an error): nothing to fetch, the thread waits 1 s.
        if let Role::Follower(f) = &mut n.broker.partitions.get_mut(&T1).expect("t-1").role {
            (f.in_flight_fetch, f.backing_off_until) = (None, Some(5_000));
        }
        n.broker
            .fetcher
            .threads
            .get_mut(&(1, 0))
            .expect("thread")
            .in_flight = None;
        let generation = n.broker.fetcher.threads[&(1, 0)].generation;
        let waited = n.run(|b, ctx| {
            b.on_timer(
                ctx,
                BrokerTimer::SendFetch {
                    leader: 1,
                    fetcher_id: 0,
                    generation,
                },
            )
        });
        assert!(Node::fetches(&waited).is_empty(), "{waited:?}");
        assert!(
            waited
                .iter()
                .any(|e| matches!(e, Effect::SetTimer { at: 2_010, .. })),
            "replica.fetch.backoff.ms: {waited:?}"
        );
        // In sync (PartitionFetchState.isReplicaInSync: lag 0): fetched despite the quota.
        if let Role::Follower(f) = &mut n.broker.partitions.get_mut(&T0).expect("t-0").role {
            f.fetch_state_lag = Some(0);
        }
        let generation = n.broker.fetcher.threads[&(1, 0)].generation;
        let in_sync = n.run(|b, ctx| {
            b.on_timer(
                ctx,
                BrokerTimer::SendFetch {
                    leader: 1,
                    fetcher_id: 0,
                    generation,
                },
            )
        });
        assert_eq!(Node::fetches(&in_sync), [(1, 0, vec![T0])]);
    }

    /// AbstractFetcherThread.processFetchRequest keeps two lags: FetcherLagMetrics (MaxLag) takes
    /// every answer's `highWatermark - nextOffset`; the PartitionFetchState takes it only when
    /// the answer appended records or no lag was known ("validBytes > 0 ||
    /// currentFetchState.lag.isEmpty"), and isReplicaInSync reads that one.
    mod fetch_state_lag {
        use super::*;
        use crate::partition::FollowerState;
        use crate::record::Record;

        fn follower(n: &Node, tp: Tp) -> FollowerState {
            match &n.broker.partition(tp).role {
                Role::Follower(f) => f.clone(),
                r => panic!("{r:?}"),
            }
        }

        /// The Fetch the node sends next, answered with `records` of t-0 at the leader's HW `hw`
        /// (t-1 empty at HW 0).
        fn answer(n: &mut Node, effects: &[Effect], records: Vec<Record>, hw: u64) -> Vec<Effect> {
            let sent = n.send_fetches(effects);
            let Some(Effect::Send {
                payload: Payload::Fetch { fetch_id, .. },
                ..
            }) = sent.iter().find(|e| matches!(e, Effect::Send { .. }))
            else {
                panic!("{sent:?}")
            };
            let leader = leader_with(Config::default(), [&[KIB_BATCH; 4], &[]]);
            let mut d0 = leader.broker.partition(T0).fetch_error(ErrorCode::NONE);
            (d0.records, d0.high_watermark) = (records, hw);
            let d1 = leader.broker.partition(T1).fetch_error(ErrorCode::NONE);
            let answer = Payload::FetchResponse {
                fetch_id: *fetch_id,
                partitions: vec![d0, d1],
            };
            n.now += 10;
            n.run(|b, ctx| b.on_message(ctx, crate::types::Node::Broker(1), answer))
        }

        #[test]
        fn an_answer_that_appends_nothing_moves_the_metric_not_the_fetch_state() {
            let mut n = Node::unformed(2, 1);
            n.now = 1_000;
            // No throttle: every fetch carries both partitions.
            let mut image = image();
            image.offset += 1;
            let formed = n.run(|b, ctx| b.form(ctx, Arc::new(image)));
            let leader = leader_with(Config::default(), [&[KIB_BATCH; 4], &[]]);
            let (records, _) =
                FetchLimits::new(&Config::default()).read(&leader.broker.partition(T0).log, 0);
            let six: Vec<Record> = records.into_iter().take(6).collect();
            // Six records at HW 12: both lags 12 - 6.
            let after = answer(&mut n, &formed, six, 12);
            let f = follower(&n, T0);
            assert_eq!((f.lag, f.fetch_state_lag), (Some(6), Some(6)));
            // t-1: nothing appended, but no lag was known yet, so the fetch state takes it.
            let f = follower(&n, T1);
            assert_eq!((f.lag, f.fetch_state_lag), (Some(0), Some(0)));
            // Nothing appended at HW 20: the metric says 14, the fetch state still 6.
            let after = answer(&mut n, &after, vec![], 20);
            let f = follower(&n, T0);
            assert_eq!((f.lag, f.fetch_state_lag), (Some(14), Some(6)));
            // Records again: both follow.
            let rest: Vec<Record> = FetchLimits::new(&Config::default())
                .read(&leader.broker.partition(T0).log, 6)
                .0;
            let n_rest = rest.len() as u64;
            answer(&mut n, &after, rest, 20);
            let f = follower(&n, T0);
            let lag = 20 - (6 + n_rest);
            assert_eq!((f.lag, f.fetch_state_lag), (Some(lag), Some(lag)));
        }
    }
}

/// Reassignment on the broker: ReplicaManager.applyDelta with a replica set that drops or
/// adds this broker, and Partition.updateAssignmentAndIsr on the leader. Broker 1 leads
/// replicas 1,2 with three committed records; each test gives one broker one metadata image.
mod reassignment {
    use super::*;
    use crate::event::Event;

    fn sim() -> Sim {
        let s = Scenario::from_json(
            r#"{"assignment":[1,2],"timeline":[{"at":100,"action":"produce","acks":"all","values":["a","b","c"]}]}"#,
        )
        .expect("scenario");
        let mut sim = Sim::new(&s).expect("sim");
        sim.advance_to(2_000);
        sim
    }

    /// Broker `b`'s image with the partition changed by `f` (and a newer offset).
    fn image(
        sim: &Sim,
        b: BrokerId,
        f: impl FnOnce(&mut PartitionRegistration),
    ) -> Arc<MetadataImage> {
        let mut image = (**sim.brokers[&b].metadata.as_ref().expect("metadata")).clone();
        image.offset += 1;
        f(&mut image.partitions[&TP0]);
        Arc::new(image)
    }

    fn deleted(sim: &Sim) -> Vec<(BrokerId, bool)> {
        sim.trace_events()
            .filter_map(|e| match e.event() {
                Event::ReplicaDeleted { broker, stray, .. } => Some((*broker, *stray)),
                _ => None,
            })
            .collect()
    }

    /// ReplicaManagerTest.testDeltaFollowerToNotReplica: the follower's partition is in the
    /// delta's deletes; its fetcher stops, the partition and its log are gone.
    #[test]
    fn a_follower_dropped_from_the_replicas_deletes_its_replica() {
        let mut sim = sim();
        assert_eq!(sim.brokers[&2].log(TP0).log_end_offset(), 3);
        let image = image(&sim, 2, |p| {
            (p.replicas, p.isr, p.leader_epoch, p.partition_epoch) = (vec![1, 3], vec![1, 3], 1, 2);
        });
        on_broker(&mut sim, 2, |b, ctx| b.apply_metadata(ctx, image));
        let p = sim.brokers[&2].partition(TP0);
        assert_eq!(p.role, Role::None);
        assert_eq!(p.log, ReplicaLog::default(), "the log is deleted");
        assert_eq!(deleted(&sim), [(2, false)]);
        assert!(
            crate::fetcher::ReplicaFetcher::live_threads(
                &sim.topics,
                &sim.config,
                &sim.brokers[&2].partitions
            )
            .is_empty(),
            "no fetcher thread is left"
        );
    }

    /// ReplicaManagerTest.testDeltaLeaderToNotReplica: the leader dropped from the replicas
    /// (a reassignment that moved the leadership to 2) removes its partition too.
    #[test]
    fn a_leader_dropped_from_the_replicas_deletes_its_replica() {
        let mut sim = sim();
        let image = image(&sim, 1, |p| {
            (
                p.replicas,
                p.isr,
                p.leader,
                p.leader_epoch,
                p.partition_epoch,
            ) = (vec![2, 3], vec![2, 3], Some(2), 1, 2);
        });
        on_broker(&mut sim, 1, |b, ctx| b.apply_metadata(ctx, image));
        let p = sim.brokers[&1].partition(TP0);
        assert_eq!((&p.role, p.log.log_end_offset()), (&Role::None, 0));
        assert_eq!(deleted(&sim), [(1, false)]);
    }

    /// LogManager.isStrayKraftReplica: a broker that restarts with a log of a partition the
    /// first image it reads does not give it treats the log as stray.
    #[test]
    fn a_log_found_at_a_start_for_a_partition_moved_away_is_stray() {
        let mut sim = sim();
        let image = image(&sim, 2, |p| {
            (p.replicas, p.isr, p.leader_epoch, p.partition_epoch) = (vec![1, 3], vec![1, 3], 1, 2);
        });
        on_broker(&mut sim, 2, |b, _| b.lose_memory());
        assert_eq!(
            sim.brokers[&2].log(TP0).log_end_offset(),
            3,
            "the files stay"
        );
        on_broker(&mut sim, 2, |b, ctx| b.apply_metadata(ctx, image));
        assert_eq!(sim.brokers[&2].log(TP0).log_end_offset(), 0);
        assert_eq!(deleted(&sim), [(2, true)]);
    }

    /// Partition.makeLeader at the same leader epoch → updateAssignmentAndIsr: a new replica
    /// (reassignment's adding 3) joins the leader's followers with ReplicaState.EMPTY (LEO
    /// unknown, never caught up), so its fetch from offset 0 is served; the others keep
    /// their state.
    #[test]
    fn the_leader_takes_an_adding_replica_into_its_followers() {
        let mut sim = sim();
        let follower_2 = sim.brokers[&1]
            .partition(TP0)
            .leader_state()
            .expect("leads")
            .remote[&2]
            .clone();
        let image = image(&sim, 1, |p| {
            (p.replicas, p.adding_replicas, p.partition_epoch) = (vec![1, 2, 3], vec![3], 1);
        });
        on_broker(&mut sim, 1, |b, ctx| b.apply_metadata(ctx, image));
        let l = sim.brokers[&1]
            .partition(TP0)
            .leader_state()
            .expect("still leads");
        assert_eq!((l.leader_epoch, l.partition_epoch), (0, 1));
        assert_eq!(l.replicas, vec![1, 2, 3]);
        assert_eq!(l.remote[&2], follower_2);
        let added = &l.remote[&3];
        assert_eq!(
            (
                added.log_end_offset,
                added.last_caught_up_time_ms,
                added.broker_epoch
            ),
            (None, 0, None)
        );
        assert_eq!(deleted(&sim), []);
    }
}
