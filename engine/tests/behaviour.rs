//! Behaviour of single rules, each driven through a small scenario and checked against what
//! Kafka does (the class and method are named beside each test). The checks match the trace's
//! typed events and their fields (issue 13), not the text of the lines they render as.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::event::{BrokerControl, ProduceOutcome, Tool};
use watermark_engine::rewind::Rewind;
use watermark_engine::scenario::{ControllerName, Endpoint};
use watermark_engine::types::{Acks, ElectionKind, ErrorCode};
use watermark_engine::{Action, Event, Scenario, Sim};

mod support;
use support::tp;

fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}"))
}

/// An event of the trace with its simulated time.
type Timed = (u64, Event);

/// The events of the run with their times, in order.
fn events(sim: &Sim) -> Vec<Timed> {
    sim.trace_events()
        .map(|t| (t.time_ms, t.event().clone()))
        .collect()
}

/// Runs a scenario to its end with the invariants checked (none may break): the simulation
/// and its events.
fn run(json: &str) -> (Sim, Vec<Timed>) {
    let sim = support::run(json);
    let events = events(&sim);
    (sim, events)
}

/// The events `pick` selects, with their times, in order.
fn select(events: &[Timed], pick: impl Fn(&Event) -> bool) -> Vec<Timed> {
    events.iter().filter(|(_, e)| pick(e)).cloned().collect()
}

/// The events without their times.
fn untimed(events: &[Timed]) -> Vec<Event> {
    events.iter().map(|(_, e)| e.clone()).collect()
}

/// The produce results (what the application's callback sees), with their times.
fn produce_results(events: &[Timed]) -> Vec<Timed> {
    select(events, |e| matches!(e, Event::ProduceResult { .. }))
}

/// The producer's retries (Sender.completeBatch's warning), with their times.
fn produce_retries(events: &[Timed]) -> Vec<Timed> {
    select(events, |e| matches!(e, Event::ProduceRetry { .. }))
}

/// The error of each produce retry and failed produce result, with its time.
fn produce_errors(events: &[Timed]) -> Vec<(u64, ErrorCode)> {
    events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::ProduceRetry { error, .. } => Some((*t, *error)),
            e => e.produce_error().map(|error| (*t, error)),
        })
        .collect()
}

/// A produce result that failed with the broker's `error`.
fn failed(acks: Acks, error: ErrorCode) -> Event {
    Event::ProduceResult {
        tp: None,
        acks,
        outcome: ProduceOutcome::Error {
            error,
            written_at: None,
        },
    }
}

/// The acks and offsets of a successful produce result (how long it waited aside).
type Written = (Acks, Option<(u64, u64)>);

/// [`Written`] of a successful produce result; None for any other event.
fn written(e: &Event) -> Option<Written> {
    match e {
        Event::ProduceResult {
            tp: None,
            acks,
            outcome: ProduceOutcome::Ok { offsets, .. },
        } => Some((*acks, *offsets)),
        _ => None,
    }
}

/// Each produce result, as [`written`] sees it (None for a failure), in order.
fn written_results(events: &[Timed]) -> Vec<Option<Written>> {
    produce_results(events)
        .iter()
        .map(|(_, e)| written(e))
        .collect()
}

/// The lines of `tool`'s output, whole, in order.
fn tool_lines(events: &[Timed], tool: Tool) -> Vec<String> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ToolOutput { tool: t, line, .. } if *t == tool => Some(line.clone()),
            _ => None,
        })
        .collect()
}

/// The controller's decisions for `broker` (fencing, unfencing, shutdown), with their times.
fn broker_control(events: &[Timed], broker: u32) -> Vec<(u64, BrokerControl)> {
    events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::BrokerControl { broker: b, what } if *b == broker => Some((*t, *what)),
            _ => None,
        })
        .collect()
}

#[test]
fn acks_all_times_out_with_request_timed_out() {
    // DelayedProduce.onExpiration: the pre-written REQUEST_TIMED_OUT goes out after TimeoutMs
    // (the producer's request.timeout.ms) when the HW never reaches the record.
    let (_, events) = run(
        r#"{"brokers":2,"config":{"request.timeout.ms":5000,"replica.lag.time.max.ms":60000,"broker.session.timeout.ms":60000},
            "timeline":[{"at":0,"action":"freeze","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":0}],
            "end_ms":10000}"#,
    );
    let results = produce_results(&events);
    let [(t, result)] = results.as_slice() else {
        panic!("one result: {results:?}")
    };
    assert_eq!(result, &failed(Acks::All, ErrorCode::REQUEST_TIMED_OUT));
    assert!(
        (6000..=6100).contains(t),
        "at {t}: sent at 1000 + latency, expired 5000 ms later"
    );
}

#[test]
fn a_write_to_a_follower_is_not_leader_or_follower() {
    let (_, events) = run(
        r#"{"timeline":[{"at":100,"action":"produce","acks":"1","values":["x"],"to":2,"retries":0}]}"#,
    );
    assert_eq!(
        untimed(&produce_results(&events)),
        [failed(Acks::One, ErrorCode::NOT_LEADER_OR_FOLLOWER)]
    );
}

#[test]
fn retriable_errors_are_retried_until_the_isr_recovers() {
    // NotEnoughReplicasException is retriable: with the default retries the producer resends
    // every retry.backoff.ms until broker 2 is back in the ISR.
    let (sim, events) = run(r#"{"brokers":2,"config":{"min.insync.replicas":2},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["patient"]},
                        {"at":3000,"action":"start","broker":2}],
            "end_ms":20000}"#);
    let retries = untimed(&produce_retries(&events));
    assert!(!retries.is_empty(), "it retried");
    let default_retries = watermark_engine::Config::default().retries;
    for (i, retry) in retries.iter().enumerate() {
        assert_eq!(
            retry,
            &Event::ProduceRetry {
                acks: Acks::All,
                tp: tp("rep"),
                attempts_left: default_retries - 1 - i as u32,
                error: ErrorCode::NOT_ENOUGH_REPLICAS,
            }
        );
    }
    let results = produce_results(&events);
    let [(t, result)] = results.as_slice() else {
        panic!("eventually written once: {results:?}")
    };
    assert_eq!(
        written(result),
        Some((Acks::All, Some((0, 0)))),
        "{result:?}"
    );
    assert!(*t > 3000, "at {t}: {result:?}");
    assert_eq!(
        sim.snapshot().broker(1).unwrap().log_end_offset,
        1,
        "a rejected attempt writes nothing"
    );
}

#[test]
fn delivery_timeout_must_cover_the_request_timeout() {
    // KafkaProducer.configureDeliveryTimeout refuses delivery.timeout.ms below linger.ms +
    // request.timeout.ms (linger.ms is 0 here).
    let e = Scenario::from_json(r#"{"config":{"delivery.timeout.ms":3000}}"#).unwrap_err();
    assert_eq!(e.field, "config.delivery.timeout.ms");
    assert!(
        e.message.contains("delivery.timeout.ms (3000)") && e.message.contains("0 + 30000"),
        "{}",
        e.message
    );
}

#[test]
fn a_batch_held_back_by_the_in_flight_limit_expires_on_time_and_its_late_success_is_logged() {
    // max.in.flight.requests.per.connection=1: "b" waits in the accumulator behind "a", which
    // waits in the purgatory for frozen broker 2 until REQUEST_TIMED_OUT at 6002. "b" goes
    // out then; its delivery.timeout.ms (5500 from 1500) ends at 7000 while it is in flight:
    // Sender.getExpiredInflightBatches fails it with a TimeoutException at 7000. Its request
    // stays in flight on the connection (InFlightRequests), so "c" waits for it. Broker 2
    // thaws at 8000, the HW covers "b", and the purgatory answers: the batch the producer
    // reported failed is in the log (ProducerBatch.done: "ProduceResponse returned SUCCEEDED
    // ... after batch ... had already been FAILED"); then "c" goes out.
    let (sim, events) = run(
        r#"{"brokers":2,"config":{"request.timeout.ms":5000,"delivery.timeout.ms":5500,
                "max.in.flight.requests.per.connection":1,"replica.lag.time.max.ms":60000,
                "broker.session.timeout.ms":60000},
            "timeline":[{"at":0,"action":"freeze","broker":2},
                        {"at":1000,"action":"produce","values":["a"],"retries":0},
                        {"at":1500,"action":"produce","values":["b"]},
                        {"at":6600,"action":"produce","values":["c"]},
                        {"at":8000,"action":"thaw","broker":2}],
            "end_ms":12000}"#,
    );
    let produce = select(&events, |e| {
        matches!(
            e,
            Event::ProduceResult { .. } | Event::ProduceSucceededAfterExpiry { .. }
        )
    });
    assert_eq!(produce.len(), 4, "{produce:?}");
    assert_eq!(
        produce[..2],
        [
            (6002, failed(Acks::All, ErrorCode::REQUEST_TIMED_OUT)),
            (
                7000,
                Event::ProduceResult {
                    tp: None,
                    acks: Acks::All,
                    outcome: ProduceOutcome::Expired {
                        records: 1,
                        tp: tp("rep"),
                        elapsed_ms: 5500,
                    },
                }
            ),
        ]
    );
    let (t_late, late) = &produce[2];
    assert_eq!(
        late,
        &Event::ProduceSucceededAfterExpiry {
            tp: tp("rep"),
            base_offset: Some(1),
        }
    );
    assert!(*t_late > 8000, "{produce:?}");
    let (t_c, c) = &produce[3];
    assert_eq!(written(c), Some((Acks::All, Some((2, 2)))), "{produce:?}");
    assert!(t_c > t_late, "c waited for b's request: {produce:?}");
    let snap = sim.snapshot();
    let values: Vec<&str> = snap.brokers[0]
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(values, ["a", "b", "c"]);
}

#[test]
fn a_frozen_broker_is_fenced_after_the_session_timeout() {
    // broker.session.timeout.ms (9000): heartbeats stop, the controller fences the broker
    // and removes it from the ISR itself (handleBrokerFenced), without the leader's help.
    let (sim, events) = run(r#"{"config":{"replica.lag.time.max.ms":600000},
            "timeline":[{"at":1000,"action":"freeze","broker":3},{"at":15000,"action":"describe"}],
            "end_ms":15000}"#);
    let fenced = broker_control(&events, 3);
    let [(t, BrokerControl::SessionTimedOut)] = fenced.as_slice() else {
        panic!("fenced once, for its session: {fenced:?}")
    };
    assert!(
        (9000..=11000).contains(t),
        "fenced at {t}: last heartbeat before 1000 + 9000"
    );
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:"]
    );
    assert_eq!(
        select(&events, |e| matches!(e, Event::IsrShrinking { .. })),
        [],
        "the leader did not shrink it: lag is 600 s"
    );
    assert_eq!(
        sim.snapshot().brokers[2].state,
        watermark_engine::snapshot::BrokerState::Frozen
    );
}

#[test]
fn controlled_shutdown_moves_leadership_first() {
    // BrokerHeartbeatManager.calculateNextBrokerState: an unfenced broker that leads and
    // wants to shut down is granted CONTROLLED_SHUTDOWN (handleBrokerInControlledShutdown
    // moves its leaderships and takes it out of the ISR); SHUTDOWN_NOW comes at a later
    // heartbeat, once it leads nothing and every unfenced broker's metadata offset has
    // reached its controlled-shutdown offset (lowestActiveOffset): within a couple of
    // broker.heartbeat.interval.ms (2000), not in the same heartbeat.
    let (_, events) = run(
        r#"{"timeline":[{"at":1000,"action":"stop","broker":1},{"at":2000,"action":"describe"},
                        {"at":9000,"action":"start","broker":1}],"end_ms":12000}"#,
    );
    let control = broker_control(&events, 1);
    let Some((t_controlled, _)) = control
        .iter()
        .find(|(_, c)| *c == BrokerControl::ControlledShutdownGranted)
    else {
        panic!("granted a controlled shutdown: {control:?}")
    };
    let Some((
        granted,
        BrokerControl::ShutdownGranted {
            lowest_active_offset,
            controlled_shutdown_offset,
        },
    )) = control
        .iter()
        .find(|(_, c)| matches!(c, BrokerControl::ShutdownGranted { .. }))
    else {
        panic!("granted later: {control:?}")
    };
    assert!(
        (1_050..=5_100).contains(granted) && granted > t_controlled,
        "at a later heartbeat: {granted}"
    );
    assert!(
        lowest_active_offset >= controlled_shutdown_offset,
        "{control:?}"
    );
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: 2 Replicas: 1,2,3 Isr: 2,3 Elr: LastKnownElr:"]
    );
    let stopped = select(&events, |e| matches!(e, Event::BrokerShutDown { .. }));
    let [(t, Event::BrokerShutDown { broker: 1 })] = stopped.as_slice() else {
        panic!("broker 1 stops: {stopped:?}")
    };
    let elected = select(&events, |e| matches!(e, Event::NewLeader { .. }));
    let [(e, leader)] = elected.as_slice() else {
        panic!("one election: {elected:?}")
    };
    assert_eq!(
        leader,
        &Event::NewLeader {
            tp: tp("rep"),
            leader: 2,
            election: Some(ElectionKind::Clean),
            leader_epoch: 1,
        }
    );
    assert!(e <= t, "elected first: {e} > {t}");
    // It wrote its broker epoch on the way out, so its next registration is a clean one
    // (ClusterControlManager.registerBroker compares previousBrokerEpoch with it).
    assert_eq!(
        select(&events, |e| matches!(
            e,
            Event::RegisteredAfterUncleanShutdown { .. }
        )),
        []
    );
    let registered: Vec<u32> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::BrokerRegistered { broker, .. } => Some(*broker),
            _ => None,
        })
        .collect();
    assert_eq!(registered, [1], "{events:?}");
}

#[test]
fn a_follower_that_leads_nothing_is_granted_an_immediate_shutdown() {
    // BrokerHeartbeatManager.calculateNextBrokerState, UNFENCED with wantShutDown and no
    // leaderships: "has requested and been granted an immediate shutdown" → SHUTDOWN_NOW,
    // which processBrokerHeartbeat handles with handleBrokerFenced: out of the ISR and
    // fenced in that one heartbeat, with no controlled-shutdown state in between.
    let (_, events) = run(
        r#"{"timeline":[{"at":1000,"action":"stop","broker":3},{"at":1100,"action":"describe"}],"end_ms":3000}"#,
    );
    // The heartbeat sent at the SIGTERM, one controller latency later; no controlled
    // shutdown before it.
    assert_eq!(
        broker_control(&events, 3),
        [(1_005, BrokerControl::UnfencedShutdownGranted)]
    );
    assert_eq!(
        select(&events, |e| matches!(e, Event::BrokerShutDown { .. })),
        [(1_010, Event::BrokerShutDown { broker: 3 })],
        "stops when the heartbeat response arrives"
    );
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2 Elr: LastKnownElr:"]
    );
}

#[test]
fn a_frozen_leader_comes_back_as_a_follower_and_truncates_its_uncommitted_tail() {
    // SIGSTOP the leader right after an acks=1 write only it has: the controller fences it
    // and elects broker 2; after SIGCONT the old leader processes what waited in its socket
    // buffer, learns it is a follower, and truncates the record nobody else has.
    let (sim, events) = run(r#"{"config":{"replica.lag.time.max.ms":60000},
            "timeline":[{"at":1000,"action":"produce","acks":"all","prefix":"c-","count":3},
                        {"at":2000,"action":"freeze","broker":2},{"at":2000,"action":"freeze","broker":3},
                        {"at":3000,"action":"produce","acks":"1","values":["only-on-1"]},
                        {"at":3100,"action":"freeze","broker":1},
                        {"at":3100,"action":"thaw","broker":2},{"at":3100,"action":"thaw","broker":3},
                        {"at":20000,"action":"thaw","broker":1},
                        {"at":25000,"action":"describe"}],
            "end_ms":25000}"#);
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: 2 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:"],
        "broker 1 rejoined"
    );
    let thrown: Vec<_> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::RecordsThrownAway {
                broker,
                first_offset,
                last_offset,
                records,
                below_high_watermark,
            } => Some((
                *broker,
                *first_offset,
                *last_offset,
                records.iter().map(|r| r.value.as_str()).collect::<Vec<_>>(),
                *below_high_watermark,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(thrown, [(1, 3, 3, vec!["only-on-1"], false)]);
    let snap = sim.snapshot();
    let values: Vec<&str> = snap
        .broker(1)
        .unwrap()
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(values, ["c-1", "c-2", "c-3"]);
    assert!(
        sim.losses().is_empty(),
        "the acks=1 record was never committed"
    );
}

#[test]
fn a_leader_cut_off_from_the_controller_cannot_shrink_the_isr() {
    // The leader's AlterPartition never reaches the controller: the ISR change stays a
    // proposal and acks=all keeps waiting, until the controller fences the leader.
    let (_, events) = run(
        r#"{"config":{"replica.lag.time.max.ms":2000,"broker.session.timeout.ms":20000,"request.timeout.ms":60000},
            "timeline":[{"at":500,"action":"cut","a":1,"b":"controller"},
                        {"at":600,"action":"freeze","broker":3},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":0},
                        {"at":12000,"action":"describe"}],
            "end_ms":30000}"#,
    );
    let shrinks: Vec<_> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::IsrShrinking {
                broker,
                isr,
                new_isr,
                ..
            } => Some((*broker, isr.clone(), new_isr.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        shrinks.first(),
        Some(&(1, vec![1, 2, 3], vec![1, 2])),
        "the leader tries: {shrinks:?}"
    );
    assert_eq!(
        select(&events, |e| matches!(e, Event::IsrUpdated { .. })),
        [],
        "but is never confirmed"
    );
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:"]
    );
    let fenced = broker_control(&events, 1);
    let Some((t, _)) = fenced
        .iter()
        .find(|(_, c)| *c == BrokerControl::SessionTimedOut)
    else {
        panic!("the controller fences the leader: {fenced:?}")
    };
    assert!(*t >= 20000);
}

#[test]
fn without_elr_the_last_isr_member_stays_in_the_isr() {
    let (_, events) = run(
        r#"{"brokers":2,"config":{"eligible.leader.replicas.version":0},
            "timeline":[{"at":0,"action":"stop","broker":2},{"at":1000,"action":"stop","broker":1},
                        {"at":2000,"action":"describe"}],
            "end_ms":3000}"#,
    );
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: none Replicas: 1,2 Isr: 1 Elr: LastKnownElr:"]
    );
}

#[test]
fn a_lost_disk_is_refilled_from_the_leader() {
    let (sim, events) = run(
        r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"d-","count":20},
                        {"at":1000,"action":"lose_disk","broker":3},
                        {"at":12000,"action":"start","broker":3},
                        {"at":20000,"action":"describe"}],
            "end_ms":20000}"#,
    );
    assert_eq!(
        select(&events, |e| matches!(e, Event::DiskLost { .. })),
        [(1000, Event::DiskLost { broker: 3 })]
    );
    assert_eq!(
        untimed(&select(&events, |e| matches!(
            e,
            Event::RegisteredAfterUncleanShutdown { .. }
        ))),
        [Event::RegisteredAfterUncleanShutdown {
            broker: 3,
            // Fenced at its session timeout, it had left the ISR already.
            removed_from_isr_and_elr: false,
        }]
    );
    assert_eq!(
        tool_lines(&events, Tool::Describe),
        ["Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:"]
    );
    let snap = sim.snapshot();
    assert_eq!(snap.broker(3).unwrap().log_end_offset, 20);
    assert_eq!(snap.broker(3).unwrap().leader_epoch_checkpoint, "0 1 0 0");
}

#[test]
fn an_idle_partition_releases_follower_fetches_after_fetch_wait_max() {
    // DelayedFetch: with nothing new the leader holds a follower's fetch for
    // replica.fetch.wait.max.ms before answering.
    let s = scenario(
        r#"{"config":{"replica.fetch.wait.max.ms":500,"sim.network.latency.ms":10},"end_ms":5000}"#,
    );
    let mut sim = Sim::new(&s).unwrap();
    sim.advance_to(3000);
    // Count fetch round trips from broker 2 in 2 s: each takes 10 + 500 + 10 ms.
    let mut count = 0;
    let mut held_seen = false;
    let mut t = 3000;
    let mut seen = std::collections::BTreeSet::new();
    while t < 5000 {
        t += 5;
        sim.advance_to(t);
        let snap = sim.snapshot();
        for m in snap.in_flight.iter().filter(|m| {
            m.kind == watermark_engine::types::MessageKind::Fetch
                && m.from == watermark_engine::types::Node::Broker(2)
        }) {
            assert_eq!(
                m.deliver_ms - m.sent_ms,
                10,
                "in-flight messages carry send and delivery times"
            );
            if seen.insert(m.id) {
                count += 1;
            }
        }
        held_seen |= snap
            .held_fetches
            .iter()
            .any(|h| h.replica == 2 && h.deadline_ms - h.since_ms == 500);
    }
    assert!(
        held_seen,
        "the leader's held fetch is visible with its deadline"
    );
    assert!(
        (3..=4).contains(&count),
        "{count} fetches from broker 2 in 2 s"
    );
}

#[test]
fn snapshot_shows_the_purgatory_with_deadlines() {
    let s = scenario(
        r#"{"config":{"replica.lag.time.max.ms":60000,"broker.session.timeout.ms":60000},
            "timeline":[{"at":0,"action":"freeze","broker":3},
                        {"at":100,"action":"produce","acks":"all","values":["w"],"retries":0}],
            "end_ms":2000}"#,
    );
    let mut sim = Sim::new(&s).unwrap();
    sim.advance_to(1000);
    let snap = sim.snapshot();
    assert_eq!(snap.purgatory.len(), 1);
    let p = &snap.purgatory[0];
    assert_eq!(p.broker, 1);
    assert_eq!(p.required_offset, 1);
    assert_eq!(p.deadline_ms - p.created_ms, 30_000);
    assert!(
        !snap.metrics.under_replicated,
        "broker 3 is still in the ISR"
    );
    let b3 = &snap.brokers[2];
    assert!(b3.since_caught_up_ms.is_some());
}

#[test]
fn rewind_rebuilds_any_moment_exactly_including_inputs() {
    let s = scenario(
        r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"r-","count":5}],"end_ms":60000}"#,
    );
    let mut live = Sim::new(&s).unwrap();
    let mut rewind = Rewind::new(&live, 1_000);
    let mut snapshots = vec![];
    let mut t = 0;
    while t < 20_000 {
        t += 333;
        live.advance_to(t);
        rewind.observe(&live);
        if t == 3330 {
            rewind
                .apply(&mut live, &Action::Freeze { broker: 2 })
                .unwrap();
        }
        if t == 6660 {
            rewind
                .apply(
                    &mut live,
                    &Action::Produce(
                        serde_json::from_str(r#"{"acks":"1","values":["late"]}"#).unwrap(),
                    ),
                )
                .unwrap();
        }
        if t == 9990 {
            rewind
                .apply(
                    &mut live,
                    &Action::Cut {
                        a: Endpoint::Broker(3),
                        b: Endpoint::Controller(ControllerName::Controller),
                    },
                )
                .unwrap();
        }
        // state_at(t) means "every event at t processed", inputs' own included.
        live.advance_to(t);
        snapshots.push((t, serde_json::to_string(&live.snapshot()).unwrap()));
    }
    assert!(rewind.checkpoint_count() > 10);
    for (t, expected) in &snapshots {
        let rebuilt = rewind.state_at(*t);
        assert_eq!(
            &serde_json::to_string(&rebuilt.snapshot()).unwrap(),
            expected,
            "state at {t}"
        );
    }
    // Acting while scrubbed back discards the future from that point.
    rewind.discard_after(5_000);
    let at_8000 = rewind.state_at(8_000).snapshot();
    assert!(
        at_8000
            .broker(1)
            .unwrap()
            .records
            .iter()
            .all(|r| r.value != "late"),
        "the later input is gone"
    );
    assert_eq!(
        at_8000.broker(2).unwrap().process,
        watermark_engine::types::ProcessState::Frozen,
        "the earlier one stays"
    );
}

#[test]
fn bad_inputs_name_the_field_and_change_nothing() {
    let mut sim = Sim::new(&Scenario::default()).unwrap();
    let before = serde_json::to_string(&sim.snapshot()).unwrap();
    let e = sim.apply_now(&Action::Kill { broker: 7 }).unwrap_err();
    assert_eq!(e.field, "action.broker");
    assert!(e.message.contains("1..=3"));
    let e = sim
        .apply_now(&Action::SetConfig {
            name: "replica.lag.time.max.ms".into(),
            value: (-5i64).into(),
        })
        .unwrap_err();
    assert!(e.message.contains("replica.lag.time.max.ms"), "{e}");
    assert_eq!(serde_json::to_string(&sim.snapshot()).unwrap(), before);
}

#[test]
fn trace_is_read_by_cursor() {
    let (sim, _) = run(
        r#"{"timeline":[{"at":0,"action":"describe"},{"at":1,"action":"offsets"},{"at":2,"action":"epochs"}]}"#,
    );
    let (first, cursor) = sim.trace_since(0, 2);
    assert_eq!(first.len(), 2);
    let (rest, end) = sim.trace_since(cursor, 1000);
    assert!(rest.iter().all(|e| e.seq >= cursor));
    assert!(sim.trace_since(end, 1000).0.is_empty());
}

#[test]
fn lowering_replica_lag_time_max_ms_reschedules_isr_expiration_at_once() {
    // Kafka schedules isr-expiration once, at startup, every replica.lag.time.max.ms / 2
    // (ReplicaManager.startup), and the config is not dynamically reconfigurable. The
    // playground applies a change at once on every broker, as if each had been restarted with
    // the new value: the isr-expiration task then runs on the new period straight away, not
    // after the one queued at the old period (here up to 15 s later).
    for seed in 1..=8 {
        let json = format!(
            r#"{{"seed":{seed},"config":{{"replica.lag.time.max.ms":30000,"broker.session.timeout.ms":60000}},
                "timeline":[{{"at":2000,"action":"freeze","broker":3}},
                            {{"at":3000,"action":"produce","acks":"1","values":["behind"]}},
                            {{"at":5000,"action":"set_config","name":"replica.lag.time.max.ms","value":1000}}],
                "end_ms":25000}}"#
        );
        let (sim, events) = run(&json);
        let shrinks = select(&events, |e| matches!(e, Event::IsrShrinking { .. }));
        let Some((
            t,
            Event::IsrShrinking {
                broker,
                isr,
                new_isr,
                out_of_sync,
                ..
            },
        )) = shrinks.first()
        else {
            panic!("seed {seed}: broker 3 never left the ISR")
        };
        assert_eq!(
            (*broker, isr.as_slice(), new_isr.as_slice()),
            (1, &[1, 2, 3][..], &[1, 2][..]),
            "seed {seed}"
        );
        let out: Vec<u32> = out_of_sync.iter().map(|r| r.broker).collect();
        assert_eq!(out, [3], "seed {seed}");
        // Broker 3 last caught up before 2000, so it is out of sync as soon as the lag is
        // 1000 ms; the new task (period 500 ms) runs within 500 ms of the change.
        assert!(
            (5000..5500).contains(t),
            "seed {seed}: shrunk at {t}, want within 500 ms of the change at 5000: {:?}",
            shrinks[0]
        );
        assert_eq!(
            run(&json).1,
            events,
            "seed {seed}: the same scenario gives the same events"
        );
        assert!(sim.losses().is_empty());
    }
}

/// The records holding `value` in broker `b`'s log.
fn copies(sim: &Sim, b: u32, value: &str) -> Vec<u64> {
    let snap = sim.snapshot();
    let broker = snap.brokers.iter().find(|x| x.id == b).expect("broker");
    broker
        .records
        .iter()
        .filter(|r| r.value == value)
        .map(|r| r.offset)
        .collect()
}

/// Both followers frozen, request.timeout.ms 2000: the first two attempts of one acks=all
/// record time out in the purgatory (REQUEST_TIMED_OUT) after the leader appended it, and the
/// producer retries the same batch (issue 11).
const RETRIED_AFTER_TIMEOUTS: &str = r#"{"brokers":3,
    "config":{"replica.lag.time.max.ms":30000,"request.timeout.ms":2000 IDEMPOTENCE},
    "timeline":[{"at":0,"action":"freeze","broker":2},{"at":0,"action":"freeze","broker":3},
                {"at":1000,"action":"produce","values":["once"]},
                {"at":6000,"action":"thaw","broker":2},{"at":6000,"action":"thaw","broker":3},
                {"at":8000,"action":"consume","from_beginning":true}],
    "end_ms":9000}"#;

/// The retries of RETRIED_AFTER_TIMEOUTS: its first two attempts timed out in the purgatory.
fn assert_two_attempts_timed_out(events: &[Timed]) {
    let retries = watermark_engine::Config::default().retries;
    let retry = |attempts_left| Event::ProduceRetry {
        acks: Acks::All,
        tp: tp("rep"),
        attempts_left,
        error: ErrorCode::REQUEST_TIMED_OUT,
    };
    assert_eq!(
        untimed(&produce_retries(events)),
        [retry(retries - 1), retry(retries - 2)],
        "two attempts timed out"
    );
}

/// The consumer's reads, with their times.
fn consumer_reads(events: &[Timed]) -> Vec<Timed> {
    select(events, |e| matches!(e, Event::ConsumerRead { .. }))
}

#[test]
fn the_idempotent_producer_stores_a_retried_batch_once() {
    // UnifiedLog.analyzeAndValidateProducerState: a client batch equal to one of the
    // producer's last five (ProducerStateEntry.findDuplicateBatch) is not appended; the
    // response carries the original offsets (UnifiedLogTest.testDuplicateAppends). With
    // enable.idempotence at its default (true) the retries are duplicates of offset 0.
    let (sim, events) = run(&RETRIED_AFTER_TIMEOUTS.replace(" IDEMPOTENCE", ""));
    assert_two_attempts_timed_out(&events);
    assert_eq!(
        written_results(&events),
        [Some((Acks::All, Some((0, 0))))],
        "the producer gets offset 0"
    );
    for b in 1..=3 {
        assert_eq!(copies(&sim, b, "once"), vec![0], "broker {b}");
    }
    assert_eq!(
        untimed(&consumer_reads(&events)),
        [Event::ConsumerRead {
            tp: None,
            first_offset: 0,
            last_offset: 0,
            values: vec!["once".into()],
            position: 1,
            from: None,
            broker: 1,
        }]
    );
}

#[test]
fn without_idempotence_a_retried_batch_is_stored_again() {
    // enable.idempotence=false: the batch has producerId -1 and no sequence (RecordBatch
    // .NO_PRODUCER_ID), the broker cannot tell a retry, and each attempt is a new append
    // (ENABLE_IDEMPOTENCE_DOC: "producer retries ... may write duplicates").
    let (sim, events) =
        run(&RETRIED_AFTER_TIMEOUTS.replace(" IDEMPOTENCE", r#","enable.idempotence":false"#));
    assert_two_attempts_timed_out(&events);
    assert_eq!(
        copies(&sim, 1, "once"),
        vec![0, 1, 2],
        "three attempts, three copies"
    );
    assert_eq!(
        written_results(&events),
        [Some((Acks::All, Some((2, 2))))],
        "the producer gets the third copy's offset"
    );
    assert_eq!(
        untimed(&consumer_reads(&events)),
        [Event::ConsumerRead {
            tp: None,
            first_offset: 0,
            last_offset: 2,
            values: vec!["once".into(); 3],
            position: 3,
            from: None,
            broker: 1,
        }]
    );
}

#[test]
fn a_new_leader_recognises_a_batch_it_replicated() {
    // Followers append the leader's batches with their producer fields and update the same
    // producer state (UnifiedLog.appendAsFollower → updateProducers with origin
    // REPLICATION), so a retry to the next leader is a duplicate too. The leader dies with
    // the record in the purgatory (broker 3 frozen keeps the HW at 0); broker 2 becomes leader
    // and answers the retry with offset 0.
    let json = r#"{"brokers":3,"config":{"request.timeout.ms":3000,"broker.session.timeout.ms":4000 IDEMPOTENCE},
        "timeline":[{"at":0,"action":"freeze","broker":3},
                    {"at":1000,"action":"produce","values":["x"]},
                    {"at":1500,"action":"kill","broker":1}],
        "end_ms":12000}"#;
    let (sim, events) = run(&json.replace(" IDEMPOTENCE", ""));
    assert_eq!(
        untimed(&select(&events, |e| matches!(e, Event::NewLeader { .. }))),
        [Event::NewLeader {
            tp: tp("rep"),
            leader: 2,
            election: Some(ElectionKind::Clean),
            leader_epoch: 1,
        }]
    );
    assert_eq!(written_results(&events), [Some((Acks::All, Some((0, 0))))]);
    assert_eq!(copies(&sim, 2, "x"), vec![0]);
    let (sim, events) = run(&json.replace(" IDEMPOTENCE", r#","enable.idempotence":false"#));
    assert_eq!(written_results(&events), [Some((Acks::All, Some((1, 1))))]);
    assert_eq!(copies(&sim, 2, "x"), vec![0, 1]);
}

#[test]
fn batches_carry_the_producer_id_epoch_and_sequences() {
    // RecordAccumulator.drain assigns each new batch the next sequence of the partition
    // (TransactionManager.sequenceNumber, incrementSequenceNumber by the record count);
    // DumpLogSegments prints them on the batch line.
    let (sim, events) = run(
        r#"{"timeline":[{"at":0,"action":"produce","prefix":"a","count":3},
                        {"at":100,"action":"produce","values":["b1","b2"]},
                        {"at":200,"action":"produce","acks":"1","values":["c1"]},
                        {"at":300,"action":"dump_log","broker":1}]}"#,
    );
    let dump: Vec<(Option<u32>, String)> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ToolOutput {
                tool: Tool::DumpLog,
                broker,
                line,
            } => Some((*broker, line.clone())),
            _ => None,
        })
        .collect();
    let expected = [
        "broker 1 log (rep-0, log end offset 6):",
        "  baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0",
        "    offset 0: a1",
        "    offset 1: a2",
        "    offset 2: a3",
        "  baseOffset: 3 lastOffset: 4 count: 2 baseSequence: 3 lastSequence: 4 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0",
        "    offset 3: b1",
        "    offset 4: b2",
        // acks=1 with enable.idempotence not set: idempotence is off for that produce.
        "  baseOffset: 5 lastOffset: 5 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0",
        "    offset 5: c1",
    ];
    assert_eq!(
        dump,
        expected.map(|l| (Some(1), l.to_string())),
        "kafka-dump-log.sh of broker 1"
    );
    let snap = sim.snapshot();
    let r = &snap.brokers[1].records[4];
    assert_eq!(
        (r.producer_id, r.producer_epoch, r.sequence),
        (0, 0, 4),
        "replicated as written"
    );
}

#[test]
fn enable_idempotence_set_true_conflicting_with_acks_or_retries_is_a_config_error() {
    // ProducerConfig.postProcessAndValidateIdempotenceConfigs (ProducerConfigTest /
    // KafkaProducerTest.testInflightRequestsAndIdempotenceForIdempotentProducers): explicitly
    // enabled, acks other than all, retries 0 or more than 5 requests in flight throw a
    // ConfigException; left at the default, idempotence is silently disabled instead.
    let e = Scenario::from_json(
        r#"{"config":{"enable.idempotence":true},"timeline":[{"at":0,"action":"produce","acks":"1","values":["x"]}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.field, "timeline[0].acks");
    assert!(
        e.message.contains("acks to all") && e.message.contains("enable.idempotence"),
        "{}",
        e.message
    );
    let e = Scenario::from_json(
        r#"{"config":{"enable.idempotence":true},"timeline":[{"at":0,"action":"produce","retries":0,"values":["x"]}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.field, "timeline[0].retries");
    let e = Scenario::from_json(r#"{"config":{"enable.idempotence":true,"retries":0},"timeline":[{"at":0,"action":"produce","values":["x"]}]}"#).unwrap_err();
    assert_eq!(e.field, "config.retries");
    let e = Scenario::from_json(
        r#"{"config":{"enable.idempotence":true,"max.in.flight.requests.per.connection":6}}"#,
    )
    .unwrap_err();
    assert_eq!(e.field, "config.max.in.flight.requests.per.connection");
    assert!(
        e.message.contains("at most 5") && e.message.contains("enable.idempotence"),
        "{}",
        e.message
    );
    // Not set: the same produces run, without idempotence.
    let (sim, _) = run(r#"{"config":{"max.in.flight.requests.per.connection":6},
            "timeline":[{"at":0,"action":"produce","values":["x"]},{"at":0,"action":"produce","acks":"1","retries":0,"values":["y"]}]}"#);
    let snap = sim.snapshot();
    assert!(snap.brokers[0].records.iter().all(|r| r.producer_id == -1));
    // Set true at run time while an acks=1 produce comes: the producer refuses it.
    let mut sim = Sim::new(&scenario(r#"{"timeline":[]}"#)).unwrap();
    sim.apply_now(&Action::SetConfig {
        name: "enable.idempotence".into(),
        value: true.into(),
    })
    .unwrap();
    sim.apply_now(
        &serde_json::from_str::<Action>(r#"{"action":"produce","acks":"1","values":["z"]}"#)
            .unwrap(),
    )
    .unwrap();
    sim.advance_to(1000);
    assert_eq!(
        untimed(&produce_results(&events(&sim))),
        [Event::ProduceResult { tp: None,
            acks: Acks::One,
            outcome: ProduceOutcome::ConfigException {
                message: "Must set acks to all (got 1) to use the idempotent producer (enable.idempotence=true)".into(),
            },
        }]
    );
    assert_eq!(sim.snapshot().brokers[0].records.len(), 0);
}

#[test]
fn after_an_unclean_election_the_producer_bumps_its_epoch_and_restarts_at_sequence_0() {
    // The unclean leader lacks the producer's last batches: its next sequence does not follow
    // what that leader holds, OUT_OF_ORDER_SEQUENCE_NUMBER. The batch is the next after the
    // last acknowledged one, so the gap is real: TransactionManager.canRetry requests an
    // epoch bump, bumpIdempotentProducerEpoch takes epoch 1 and rewrites the batch from
    // sequence 0 (startSequencesAtBeginning), and the broker takes a new epoch at 0
    // (ProducerAppendInfo.checkSequence).
    let mut sim =
        Sim::new(&watermark_engine::presets::preset("unclean-election").unwrap()).unwrap();
    sim.check_invariants = true;
    sim.advance_to(49_000);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let events = events(&sim);
    let retries = produce_retries(&events);
    let Some((t_ooo, _)) = retries.iter().find(|(_, e)| {
        matches!(
            e,
            Event::ProduceRetry {
                error: ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
                ..
            }
        )
    }) else {
        panic!("out of order: {retries:?}")
    };
    let bumps = select(&events, |e| matches!(e, Event::ProducerIdSet { .. }));
    let [(t_bump, bump)] = bumps.as_slice() else {
        panic!("one bump: {bumps:?}")
    };
    assert_eq!(
        bump,
        &Event::ProducerIdSet {
            producer_id: 0,
            epoch: 1,
        }
    );
    assert!(t_bump > t_ooo);
    let dump = tool_lines(&events, Tool::DumpLog);
    assert!(
        dump.iter().any(|l| l
            == "  baseOffset: 10 lastOffset: 14 count: 5 baseSequence: 0 lastSequence: 4 producerId: 0 producerEpoch: 1 partitionLeaderEpoch: 2"),
        "{dump:#?}"
    );
}

#[test]
fn a_link_delivers_in_order_whatever_the_jitter() {
    // One TCP connection never reorders: twenty one-record produces sent at once with up to
    // 50 ms of jitter each reach the leader, and its log, in the order they were sent.
    let mut timeline = vec![];
    for i in 1..=20 {
        timeline.push(format!(
            r#"{{"at":0,"action":"produce","acks":"1","values":["v{i}"]}}"#
        ));
    }
    let json = format!(
        r#"{{"seed":7,"config":{{"sim.network.jitter.ms":50,"max.in.flight.requests.per.connection":20}},"timeline":[{}],"end_ms":3000}}"#,
        timeline.join(",")
    );
    let (sim, _) = run(&json);
    let snap = sim.snapshot();
    let values: Vec<&str> = snap.brokers[0]
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    let sent: Vec<String> = (1..=20).map(|i| format!("v{i}")).collect();
    assert_eq!(values, sent);
}

#[test]
fn max_in_flight_requests_per_connection_holds_the_next_request_back() {
    // NetworkClient.canSendMoreRequests (InFlightRequests.canSendMore): with
    // max.in.flight.requests.per.connection=1 the second batch goes out only after the first
    // one's response; with the default 5 both are in flight at once.
    let json = r#"{"brokers":2,"config":{"request.timeout.ms":2000,"replica.lag.time.max.ms":60000,"broker.session.timeout.ms":60000 IN_FLIGHT},
        "timeline":[{"at":0,"action":"freeze","broker":2},
                    {"at":1000,"action":"produce","values":["a"],"retries":0},
                    {"at":1000,"action":"produce","values":["b"],"retries":0}],
        "end_ms":8000}"#;
    let timed_out = || failed(Acks::All, ErrorCode::REQUEST_TIMED_OUT);
    let (_, events) = run(&json.replace(" IN_FLIGHT", ""));
    assert_eq!(
        produce_results(&events),
        [(3002, timed_out()), (3002, timed_out())]
    );
    let (_, events) = run(&json.replace(
        " IN_FLIGHT",
        r#","max.in.flight.requests.per.connection":1"#,
    ));
    assert_eq!(
        produce_results(&events),
        [(3002, timed_out()), (5004, timed_out())]
    );
}

#[test]
fn the_end_offset_never_goes_backwards_across_a_leader_change() {
    // KIP-207, Partition.fetchOffsetForTimestamp: a new leader whose HW is still below the
    // start offset of its epoch answers ListOffsets LATEST with OFFSET_NOT_AVAILABLE, so
    // kafka-get-offsets.sh never prints an end offset below one it printed before.
    let scenario = scenario(
        r#"{"config":{"sim.network.latency.ms":20},
            "timeline":[{"at":100,"action":"produce","acks":"1","prefix":"v","count":40,"one_by_one":true},
                        {"at":400,"action":"kill","broker":1}],
            "end_ms":20000}"#,
    );
    let mut sim = Sim::new(&scenario).unwrap();
    sim.check_invariants = true;
    let mut printed: Vec<u64> = vec![];
    let mut refused = 0;
    while sim.now() < 20_000 && sim.step() {
        let line = sim.snapshot().offsets;
        if let Some(n) = line.strip_prefix("rep:0:") {
            let n: u64 = n.parse().unwrap();
            if printed.last() != Some(&n) {
                printed.push(n);
            }
        } else if line.contains("OFFSET_NOT_AVAILABLE") {
            refused += 1;
        }
    }
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    assert!(
        printed.windows(2).all(|w| w[0] <= w[1]),
        "the end offset went backwards: {printed:?}"
    );
    assert!(
        refused > 0,
        "the new leader answered OFFSET_NOT_AVAILABLE for a while: {printed:?}"
    );
    assert!(printed.len() > 3, "{printed:?}");
}

#[test]
fn a_killed_leader_resets_its_connections_so_the_producer_retries_at_once() {
    // kill -9 leaves the machine's kernel running: it resets the process's connections, so
    // the producer's in-flight batch fails with a disconnect (Sender.handleProduceResponse:
    // NETWORK_EXCEPTION, retriable) and is retried after retry.backoff.ms, instead of
    // waiting request.timeout.ms (30000) for an answer that cannot come.
    let (_, events) = run(
        r#"{"config":{"min.insync.replicas":2,"sim.network.latency.ms":10},
            "timeline":[{"at":0,"action":"freeze","broker":2},{"at":0,"action":"freeze","broker":3},
                        {"at":1000,"action":"produce","acks":"all","values":["x"]},
                        {"at":2000,"action":"kill","broker":1}],
            "end_ms":5000}"#,
    );
    assert_eq!(
        produce_retries(&events).first(),
        Some(&(
            2_010,
            Event::ProduceRetry {
                acks: Acks::All,
                tp: tp("rep"),
                attempts_left: watermark_engine::Config::default().retries - 1,
                error: ErrorCode::NETWORK_EXCEPTION,
            }
        )),
        "a disconnect, one latency after the kill"
    );
    let errors = produce_errors(&events);
    assert!(
        errors
            .iter()
            .all(|(_, e)| *e != ErrorCode::REQUEST_TIMED_OUT),
        "no request timeout: {errors:?}"
    );
    // The retry goes to the dead broker again (it is still the leader until the controller
    // fences it): nothing listens, so the connection is refused after a round trip.
    let retries: Vec<u64> = produce_retries(&events)
        .iter()
        .filter(|(_, e)| {
            matches!(
                e,
                Event::ProduceRetry {
                    error: ErrorCode::NETWORK_EXCEPTION,
                    ..
                }
            )
        })
        .map(|(t, _)| *t)
        .collect();
    assert!(retries.len() > 3, "{retries:?}");
    // The backoffs, then a round trip each: retry.backoff.ms (100) jittered by ±20%, then
    // doubled (KIP-580: ExponentialBackoff.backoff(attempts), ⌊r·100·2^n⌋, r in [0.8, 1.2)).
    for (n, (lowest, highest)) in [(80, 119), (160, 239), (320, 479)].into_iter().enumerate() {
        let gap = retries[n + 1] - retries[n] - 2 * 10;
        assert!(
            (lowest..=highest).contains(&gap),
            "{n}: {gap} in {retries:?}"
        );
    }
}

#[test]
fn a_frozen_leader_keeps_its_connections_open_so_the_producer_times_out() {
    // SIGSTOP: the process still holds its sockets; nothing resets them, so the producer
    // waits for request.timeout.ms.
    let (_, events) = run(
        r#"{"config":{"request.timeout.ms":3000,"broker.session.timeout.ms":60000},
            "timeline":[{"at":1000,"action":"freeze","broker":1},
                        {"at":1000,"action":"produce","acks":"all","values":["x"],"retries":0}],
            "end_ms":6000}"#,
    );
    // No disconnect: the one error is the request timeout.
    let errors = produce_errors(&events);
    let [(t, ErrorCode::REQUEST_TIMED_OUT)] = errors.as_slice() else {
        panic!("times out, without a NETWORK_EXCEPTION: {errors:?}")
    };
    assert_eq!(
        untimed(&produce_results(&events)),
        [failed(Acks::All, ErrorCode::REQUEST_TIMED_OUT)]
    );
    assert!(*t >= 4_000, "after request.timeout.ms: {t}");
}

#[test]
fn a_follower_whose_leader_was_killed_learns_it_at_once() {
    // ReplicaFetcherThread: the fetch fails with "Connection to 1 was disconnected before
    // the response was read" as soon as the reset arrives, then backs off
    // replica.fetch.backoff.ms, rather than waiting replica.socket.timeout.ms (30000).
    let (_, events) = run(r#"{"config":{"sim.network.latency.ms":10},
            "timeline":[{"at":2000,"action":"kill","broker":1}],"end_ms":4000}"#);
    let disconnected = select(&events, |e| {
        matches!(e, Event::FetchDisconnected { broker: 2, .. })
    });
    assert_eq!(
        disconnected.first(),
        Some(&(
            2_010,
            Event::FetchDisconnected {
                broker: 2,
                leader: 1,
                fetcher_id: 0,
            }
        )),
        "{disconnected:?}"
    );
    assert_eq!(
        select(&events, |e| matches!(e, Event::FetchTimedOut { .. })),
        []
    );
}

#[test]
fn a_retried_batch_keeps_its_place_ahead_of_later_batches() {
    // RecordAccumulator: a retried batch goes back to the head of the partition's deque
    // (reenqueue), and drainBatchesForOneNode takes only the head, skipping the partition
    // while the head backs off. So with max.in.flight.requests.per.connection=1 a later
    // batch never overtakes a retrying one, even without idempotence: "a" and "b" both get
    // NOT_ENOUGH_REPLICAS until broker 2 is back, and are written in the order sent.
    let (sim, events) = run(
        r#"{"brokers":2,"config":{"min.insync.replicas":2,"enable.idempotence":false,
                "max.in.flight.requests.per.connection":1},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","values":["a"]},
                        {"at":1010,"action":"produce","values":["b"]},
                        {"at":3000,"action":"start","broker":2}],
            "end_ms":12000}"#,
    );
    // Every retry is "a"'s: "b" is not sent before "a" is written, so the attempts left
    // only go down.
    let retries = produce_retries(&events);
    let left = support::retries_left(retries.iter().map(|(_, e)| e));
    // Retries from 1 s until broker 2 is back at 3 s, each backing off twice as long as the
    // one before (80..=119 ms, then 160..=239, 320..=479, 640..=959: KIP-580).
    assert!(left.len() > 3, "{retries:?}");
    assert!(
        left.iter()
            .all(|(_, e)| *e == ErrorCode::NOT_ENOUGH_REPLICAS),
        "{left:?}"
    );
    assert!(left.windows(2).all(|w| w[1].0 < w[0].0), "{left:?}");
    let snap = sim.snapshot();
    let values: Vec<&str> = snap.brokers[0]
        .records
        .iter()
        .map(|r| r.value.as_str())
        .collect();
    assert_eq!(values, ["a", "b"]);
}

#[test]
fn a_retried_batch_shows_in_the_snapshot_and_the_retry_and_error_totals() {
    // Sender.completeBatch → reenqueueBatch counts record-retry-total per retried record;
    // failBatch counts record-error-total.
    let s = scenario(
        r#"{"brokers":2,"config":{"min.insync.replicas":2,"delivery.timeout.ms":30000},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["a","b"]}],
            "end_ms":40000}"#,
    );
    let mut sim = Sim::new(&s).unwrap();
    sim.check_invariants = true;
    sim.advance_to(3_000);
    let snap = sim.snapshot();
    let [send] = snap.sends.as_slice() else {
        panic!("one batch pending: {:?}", snap.sends)
    };
    assert_eq!(send.records, 2);
    assert_eq!(send.delivery_deadline_ms, 31_000);
    let (error, at) = send.last_error.expect("retried");
    assert_eq!(error, ErrorCode::NOT_ENOUGH_REPLICAS);
    assert!(at <= 3_000);
    let retries = produce_retries(&events(&sim));
    assert!(
        retries.iter().all(|(_, e)| matches!(
            e,
            Event::ProduceRetry {
                error: ErrorCode::NOT_ENOUGH_REPLICAS,
                ..
            }
        )),
        "{retries:?}"
    );
    let retries = retries.len();
    assert_eq!(send.retries as usize, retries, "one retry per retry event");
    let m = &snap.metrics.counters;
    assert_eq!(
        m.record_retries,
        2 * retries as u64,
        "two records per retry"
    );
    assert_eq!(
        (m.produce_errors, m.record_errors),
        (0, 0),
        "nothing failed yet"
    );
    sim.advance_to(40_000);
    let snap = sim.snapshot();
    assert!(snap.sends.is_empty(), "expired");
    let m = &snap.metrics.counters;
    assert_eq!((m.produce_errors, m.record_errors), (1, 2));
}

#[test]
fn a_request_to_a_frozen_leader_is_pending_until_request_timeout() {
    // A frozen leader keeps its sockets open: the request waits there until the producer's
    // request.timeout.ms runs out (NetworkClient: "Disconnecting from node 1 due to request
    // timeout").
    let s = scenario(
        r#"{"brokers":3,"config":{"request.timeout.ms":5000,"sim.network.latency.ms":10},
            "timeline":[{"at":1000,"action":"freeze","broker":1},
                        {"at":1000,"action":"produce","acks":"all","values":["x"]}],
            "end_ms":20000}"#,
    );
    let mut sim = Sim::new(&s).unwrap();
    sim.advance_to(2_000);
    let snap = sim.snapshot();
    assert_eq!(snap.sends.len(), 1);
    assert_eq!(snap.sends[0].in_flight, Some((1, 1_000 + 5_000 + 20 + 50)));
    sim.advance_to(6_069);
    assert!(sim.snapshot().sends[0].in_flight.is_some());
    sim.advance_to(6_070);
    let snap = sim.snapshot();
    assert_eq!(
        snap.sends[0].last_error.map(|e| e.0),
        Some(ErrorCode::REQUEST_TIMED_OUT)
    );
}

#[test]
fn cancel_produce_aborts_the_pending_batches_and_a_new_producer_sends_next() {
    // KafkaProducer.close(Duration.ZERO) → RecordAccumulator.abortIncompleteBatches.
    let (sim, events) = run(r#"{"brokers":2,"config":{"min.insync.replicas":2},
            "timeline":[{"at":0,"action":"stop","broker":2},
                        {"at":1000,"action":"produce","acks":"all","values":["a","b"]},
                        {"at":2000,"action":"cancel_produce"},
                        {"at":3000,"action":"start","broker":2},
                        {"at":9000,"action":"produce","acks":"all","values":["c"]}],
            "end_ms":15000}"#);
    let results = produce_results(&events);
    assert_eq!(
        results.first(),
        Some(&(
            2_000,
            Event::ProduceResult {
                tp: None,
                acks: Acks::All,
                outcome: ProduceOutcome::ClosedForcefully { records: 2 },
            }
        )),
        "aborted"
    );
    let retries = produce_retries(&events);
    assert!(
        retries.iter().all(|(t, _)| *t <= 2_000),
        "no retry after the close: {retries:?}"
    );
    let snap = sim.snapshot();
    assert!(snap.sends.is_empty());
    assert_eq!(snap.metrics.counters.record_errors, 2);
    assert_eq!(
        written_results(&events),
        [None, Some((Acks::All, Some((0, 0))))],
        "{results:?}"
    );
    let c = snap
        .broker(1)
        .unwrap()
        .records
        .first()
        .expect("c is written");
    assert_eq!(c.value, "c");
    assert_eq!(
        (c.producer_id, c.producer_epoch, c.sequence),
        (1, 0, 0),
        "the new producer has the next id"
    );
}
