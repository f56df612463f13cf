//! What became of each message that left the wire (`Sim::record_arrivals`, which the
//! playground turns on to draw a message's path for a moment after it arrived): read by its
//! destination, dropped at a cut link, or dropped because the process it was sent to is gone.
#![cfg(not(target_arch = "wasm32"))]

use watermark_engine::snapshot::ArrivalOutcome;
use watermark_engine::types::{MessageKind, Node};
use watermark_engine::ARRIVALS_KEPT_MS;
use watermark_engine::{Scenario, Sim};

fn sim(json: &str, record: bool) -> Sim {
    let scenario = Scenario::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::new(&scenario).unwrap();
    sim.check_invariants = true;
    sim.record_arrivals = record;
    sim
}

const THREE: &str =
    r#"{"brokers":3,"timeline":[{"at":0,"action":"produce","acks":"all","values":["a"]}]}"#;

#[test]
fn off_by_default_and_the_run_is_the_same_either_way() {
    let mut off = sim(THREE, false);
    let mut on = sim(THREE, true);
    off.advance_to(5_000);
    on.advance_to(5_000);
    assert!(off.snapshot().arrivals.is_empty());
    assert!(!on.snapshot().arrivals.is_empty());
    let lines = |s: &Sim| {
        s.trace_events()
            .map(|e| e.text().clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(&off), lines(&on));
    let mut a = on.snapshot();
    a.arrivals.clear();
    assert_eq!(off.snapshot(), a);
}

#[test]
fn a_fetch_that_arrived_is_received_at_its_delivery_time_and_kept_a_second() {
    let mut s = sim(THREE, true);
    s.advance_to(200);
    let snap = s.snapshot();
    let fetch = snap
        .arrivals
        .iter()
        .find(|a| a.message.kind == MessageKind::Fetch)
        .expect("a follower's fetch reached the leader");
    assert_eq!(fetch.outcome, ArrivalOutcome::Received);
    assert_eq!(fetch.at, fetch.message.deliver_ms);
    assert_eq!(fetch.message.to, Node::Broker(1));
    assert!(fetch.message.summary.starts_with("Fetch replicaId="));
    // Neither in flight any more nor kept past ARRIVALS_KEPT_MS.
    assert!(snap.in_flight.iter().all(|m| m.id != fetch.message.id));
    let (id, at) = (fetch.message.id, fetch.at);
    s.advance_to(at + ARRIVALS_KEPT_MS);
    assert!(s.snapshot().arrivals.iter().any(|a| a.message.id == id));
    s.advance_to(at + ARRIVALS_KEPT_MS + 1);
    let later = s.snapshot();
    assert!(later.arrivals.iter().all(|a| a.message.id != id));
    assert!(later
        .arrivals
        .iter()
        .all(|a| a.at + ARRIVALS_KEPT_MS >= later.time_ms));
    assert!(
        later.arrivals.windows(2).all(|w| w[0].at <= w[1].at),
        "oldest first"
    );
}

#[test]
fn a_message_on_a_link_cut_while_it_flew_is_dropped_there() {
    // 300 ms of latency: the cut at 100 ms falls while the first fetches fly.
    let mut s = sim(
        r#"{"brokers":2,"config":{"sim.network.latency.ms":300},
            "timeline":[{"at":100,"action":"cut","a":1,"b":2}]}"#,
        true,
    );
    s.advance_to(400);
    let cut: Vec<_> = s
        .snapshot()
        .arrivals
        .into_iter()
        .filter(|a| a.outcome == ArrivalOutcome::LinkCut)
        .collect();
    assert!(
        cut.iter()
            .any(|a| a.message.kind == MessageKind::Fetch && a.message.from == Node::Broker(2)),
        "{cut:?}"
    );
    assert!(cut.iter().all(|a| a.at >= 100));
}

#[test]
fn messages_to_a_killed_broker_are_dropped_whether_flying_or_buffered() {
    // Broker 2 frozen at 0 takes nothing in: what reaches it waits in its socket buffer,
    // which its kill at 2 000 ms throws away with the process.
    let mut s = sim(
        r#"{"brokers":2,"timeline":[{"at":0,"action":"freeze","broker":2},
            {"at":2000,"action":"kill","broker":2}]}"#,
        true,
    );
    s.advance_to(1_999);
    let waiting: Vec<u64> = s
        .snapshot()
        .in_flight
        .iter()
        .filter(|m| m.buffered)
        .map(|m| m.id)
        .collect();
    assert!(
        !waiting.is_empty(),
        "heartbeat answers wait at the frozen broker"
    );
    s.advance_to(2_000);
    let snap = s.snapshot();
    for id in &waiting {
        let a = snap
            .arrivals
            .iter()
            .find(|a| a.message.id == *id)
            .expect("a buffered message is dropped with the process");
        assert_eq!((a.outcome, a.at), (ArrivalOutcome::ProcessGone, 2_000));
        assert!(a.message.buffered);
    }
    assert!(snap.in_flight.iter().all(|m| !waiting.contains(&m.id)));
}
