//! The broker node's rules, driven through its entry points.
//!
//! `driven_alone` gives one node one input over local values (`effect::Locals`) and asserts
//! the exact effects and the state left, as openraft's engine tests do; each names the
//! Kafka test or rule it mirrors. `alter_partition` and `fetch` drive one broker of a
//! running simulation into a situation first (a shrink proposed, a follower fenced), then
//! give that broker's node one input through the same entry points.

use super::*;
use crate::effect::node_ctx;
use crate::partition::{AlterPartitionItem, IsrState, LeaderState};
use crate::scenario::{Action, ControllerName, Endpoint, Scenario};
use crate::sim::Sim;

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
        f(&mut broker.partition, ctx, &mut host)
    })
}

/// Broker 2's fetcher handles OFFSET_OUT_OF_RANGE from leader 1 with the leader's end and
/// start offsets.
fn out_of_range(sim: &mut Sim, leader_end: u64, leader_start: u64) {
    on_broker(sim, 2, |b, ctx| {
        let host = host!(b);
        b.fetcher
            .on_out_of_range(ctx, &host, &mut b.partition, 1, leader_end, leader_start)
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
        sim.brokers[&1]
            .partition
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
        assert_eq!(apm.unsent.as_ref().map(|i| i.proposal), Some(proposal));
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
        assert_eq!(sim.controller.partition.isr, vec![1, 2]);
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
            proposal,
            leader_epoch: l.leader_epoch,
            partition_epoch: l.partition_epoch,
            new_isr: vec![(1, 0), (2, 1)],
        }
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
            let mut sim = sim();
            let p = until_shrink_proposed(&mut sim);
            let before = leader(&sim).isr_state.clone();
            sim.brokers[&1].alter_partition = Default::default();
            let it = item(p, &sim);
            on_partition(&mut sim, 1, |p, ctx, host| {
                p.handle_alter_partition_result(ctx, host, it, error, None)
            });
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
            let mut sim = sim();
            let p = until_shrink_proposed(&mut sim);
            sim.brokers[&1].alter_partition = Default::default();
            let it = item(p, &sim);
            on_partition(&mut sim, 1, |p, ctx, host| {
                p.handle_alter_partition_result(ctx, host, it, error, None)
            });
            assert_eq!(
                leader(&sim).isr_state,
                IsrState::Committed { isr: vec![1, 2, 3] },
                "{error}"
            );
        }
        let mut sim = sim();
        let p = until_shrink_proposed(&mut sim);
        let before = leader(&sim).isr_state.clone();
        sim.brokers[&1].alter_partition = Default::default();
        let it = item(p, &sim);
        on_partition(&mut sim, 1, |p, ctx, host| {
            p.handle_alter_partition_result(ctx, host, it.clone(), ErrorCode::NOT_CONTROLLER, None)
        });
        assert_eq!(leader(&sim).isr_state, before, "still the same proposal");
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent, Some(it), "submitted again, unchanged");
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
        if let Role::Leader(l) = &mut sim.brokers[&1].partition.role {
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
            apm.unsent.as_ref().map(|i| i.proposal),
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
            error: ErrorCode::NONE,
            leader: Some(1),
            leader_epoch: 0,
            partition_epoch: 0,
            isr: vec![],
        };
        on_broker(&mut sim, 1, |b, ctx| {
            b.on_alter_partition_response(ctx, request, ErrorCode::STALE_BROKER_EPOCH, result)
        });
        let apm = &sim.brokers[&1].alter_partition;
        assert_eq!(apm.unsent.as_ref().map(|i| i.proposal), Some(p));
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

    #[test]
    fn the_same_leader_at_a_new_epoch_keeps_what_it_knows_of_its_followers() {
        // Partition.makeLeader: isNewLeader = !isLeader; a re-elected leader calls
        // resetReplicaState(isNewLeader = false), keeping LEO, log start and broker epoch.
        let mut sim = replicated();
        let before = sim.brokers[&1]
            .partition
            .leader_state()
            .expect("leads")
            .remote[&2]
            .clone();
        assert_eq!(before.log_end_offset, Some(3));
        let mut p = sim.controller.partition.clone();
        p.leader_epoch += 1;
        p.partition_epoch += 1;
        on_partition(&mut sim, 1, |part, ctx, host| {
            part.make_leader(ctx, host, &p)
        });
        let after = &sim.brokers[&1]
            .partition
            .leader_state()
            .expect("leads")
            .remote[&2];
        assert_eq!(after.log_end_offset, Some(3));
        assert_eq!(after.broker_epoch, before.broker_epoch);
        assert_eq!(after.last_fetch_leader_log_end_offset, Some(3));
        // A broker that was following becomes a new leader: it knows nothing yet.
        let mut p = sim.controller.partition.clone();
        p.leader = Some(2);
        p.leader_epoch += 2;
        on_partition(&mut sim, 2, |part, ctx, host| {
            part.make_leader(ctx, host, &p)
        });
        let fresh = &sim.brokers[&2]
            .partition
            .leader_state()
            .expect("leads")
            .remote[&3];
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
            replica_id: from,
            broker_epoch: broker.broker_epoch,
            fetch_offset: broker.log().log_end_offset(),
            log_start_offset: 0,
            current_leader_epoch: sim.controller.partition.leader_epoch,
            last_fetched_epoch: broker.log().epoch_cache.latest_epoch(),
        };
        f(&mut payload);
        on_partition(sim, to, |p, ctx, host| {
            p.handle_fetch(ctx, host, Node::Broker(from), payload)
        });
        sim.in_flight
            .values()
            .rev()
            .find_map(|m| match &m.payload {
                Payload::FetchResponse {
                    fetch_id: 999_999,
                    error,
                    ..
                } => Some(*error),
                _ => None,
            })
            .expect("answered")
    }

    fn set_epoch(p: &mut Payload, e: i32) {
        if let Payload::Fetch {
            current_leader_epoch,
            ..
        } = p
        {
            *current_leader_epoch = e;
        }
    }

    #[test]
    fn the_leader_epoch_is_checked_first_on_a_follower_too() {
        // Partition.getLocalLog → checkCurrentLeaderEpoch before the leader check
        // (PartitionTest.testLeaderEpochValidationOnFollower: FENCED for epoch - 1,
        // UNKNOWN for epoch + 1, NOT_LEADER_OR_FOLLOWER for the current epoch).
        let mut sim = replicated();
        if let Role::Follower(f) = &mut sim.brokers[&2].partition.role {
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
        let before = sim.brokers[&1]
            .partition
            .leader_state()
            .expect("leads")
            .remote[&2]
            .clone();
        let stale = sim.brokers[&2].broker_epoch - 1;
        let e = fetch(&mut sim, 1, 2, |p| {
            if let Payload::Fetch { broker_epoch, .. } = p {
                *broker_epoch = stale;
            }
        });
        assert_eq!(e, ErrorCode::NOT_LEADER_OR_FOLLOWER);
        assert_eq!(
            sim.brokers[&1]
                .partition
                .leader_state()
                .expect("leads")
                .remote[&2],
            before
        );
        // The right epoch is accepted (a fetch from offset 2 is answered with data at once).
        let ok = fetch(&mut sim, 1, 2, |p| {
            if let Payload::Fetch { fetch_offset, .. } = p {
                *fetch_offset = 2;
            }
        });
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
            if let Payload::Fetch {
                last_fetched_epoch, ..
            } = p
            {
                *last_fetched_epoch = Some(9);
            }
        });
        assert_eq!(e, ErrorCode::OFFSET_OUT_OF_RANGE);
        out_of_range(&mut sim, 3, 0);
        assert_eq!(
            sim.brokers[&2].log().log_end_offset(),
            3,
            "nothing truncated"
        );
        // The leader's log ends below ours: truncate to it (the unclean-election case).
        out_of_range(&mut sim, 1, 0);
        assert_eq!(sim.brokers[&2].log().log_end_offset(), 1);
        // The leader's log starts past our end: start over at its log start.
        out_of_range(&mut sim, 9, 5);
        let log = sim.brokers[&2].log();
        assert_eq!((log.log_start_offset, log.log_end_offset()), (5, 5));
    }

    #[test]
    fn a_fenced_follower_stops_fetching_until_a_new_leader_epoch() {
        // AbstractFetcherThread.onPartitionFenced → markPartitionFailed
        // (AbstractFetcherThreadTest.testFencedFetch: the partition leaves the fetcher's
        // partitionStates instead of being retried after the backoff).
        let mut sim = replicated();
        // Broker 2's next fetch is answered FENCED_LEADER_EPOCH.
        while !matches!(sim.brokers[&2].role(), Role::Follower(f) if f.in_flight_fetch.is_some()) {
            assert!(sim.step());
        }
        let fetch_id = match sim.brokers[&2].role() {
            Role::Follower(f) => f.in_flight_fetch.expect("in flight"),
            _ => unreachable!("checked above"),
        };
        let response = (
            Node::Broker(1),
            Payload::FetchResponse {
                fetch_id,
                error: ErrorCode::FENCED_LEADER_EPOCH,
                high_watermark: 3,
                leader_log_start_offset: 0,
                records: vec![],
                diverging_epoch: None,
                leader_log_end_offset: 3,
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
        assert!(matches!(sim.brokers[&2].role(), Role::Follower(f) if f.failed));
        // Metadata with a new leader epoch re-creates the fetcher.
        let mut image = sim.controller.image();
        image.offset += 1_000;
        image.partition.leader_epoch += 1;
        on_broker(&mut sim, 2, |b, ctx| b.apply_metadata(ctx, image));
        assert!(matches!(sim.brokers[&2].role(), Role::Follower(f) if !f.failed));
    }
}
