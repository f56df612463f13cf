//! Checking a scenario's expectations (`expect.rs`) against its simulation: [`check`] runs
//! a scenario and evaluates each of its expectations at its time (`watermark check`, the
//! preset tests), and the playground calls [`evaluate`] on the simulation it shows.
//!
//! Evaluating one is a pure function of the simulation at its time ([`evaluate`]); nothing
//! is traced, so a scenario's transcript is the same with or without expectations.

use std::fmt::Write;

use serde::Serialize;

use crate::error::{quoted, ScenarioError};
use crate::event::{Event, TraceKind};
use crate::expect::{Expectation, LeaderExpect, PartitionsExpect};
use crate::scenario::Scenario;
use crate::sim::Sim;
use crate::sort::{sorted_ids, stable_order};
use crate::trace::format_time;
use crate::types::{join_ids, BrokerId, TimeMs};

/// One check that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// What was checked, e.g. `hw of broker 1` or `describe`.
    pub what: String,
    pub expected: String,
    pub got: String,
}

/// An expectation and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Its position in the scenario's `expect` list.
    pub index: usize,
    pub at: TimeMs,
    pub label: String,
    /// Empty when it was met.
    pub mismatches: Vec<Mismatch>,
}

impl Outcome {
    pub fn met(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// A readable account: `expect[3] at 16.150s ("HW 12"): hw of broker 1: expected 12,
    /// got 17`, one mismatch per line.
    pub fn account(&self) -> String {
        let label = if self.label.is_empty() {
            String::new()
        } else {
            format!(" ({})", quoted(&self.label))
        };
        let head = format!(
            "expect[{}] at {}{label}",
            self.index,
            format_time(self.at).trim_start()
        );
        if self.met() {
            return format!("{head}: met");
        }
        let mut out = format!("{head}: NOT MET");
        for m in &self.mismatches {
            let _ = write!(
                out,
                "\n    {}: expected {}, got {}",
                m.what, m.expected, m.got
            );
        }
        out
    }
}

fn ids(v: &[BrokerId]) -> String {
    if v.is_empty() {
        "(empty)".to_string()
    } else {
        join_ids(v)
    }
}

/// Whether `text` begins with `prefix` as whole words (the next character, if any, is a
/// space).
fn starts_with_words(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

/// Whether `text` holds `part` (what `str::contains` says), compared byte by byte. Core's
/// substring searcher (two-way) and the string-slicing panic it brings (with `char`'s
/// `Debug` and the Unicode printable tables) were about 5 kB of the wasm for the two calls
/// the playground made, this and one in the web.
pub fn holds(text: &str, part: &str) -> bool {
    let (text, part) = (text.as_bytes(), part.as_bytes());
    let mut i = 0;
    while i + part.len() <= text.len() {
        if text[i..].starts_with(part) {
            return true;
        }
        i += 1;
    }
    false
}

/// Checks `e` against the simulation, which must have run to `e.at` (every event at or
/// before it processed, none after). Returns what did not hold; empty means met.
pub fn evaluate(sim: &Sim, e: &Expectation) -> Vec<Mismatch> {
    let mut out = vec![];
    let mut check = |what: String, expected: String, got: String| {
        if expected != got {
            out.push(Mismatch {
                what,
                expected,
                got,
            });
        }
    };
    // The partition the expectation speaks of: the one it names, else the first (version 1
    // has one). The event and loss checks look only at the named one's lines; where the
    // cluster has one partition, no line names it (`Topics::label`) and every line is its.
    let target = e.target(&sim.topics.topics[0].name);
    let tp = match target {
        Some((topic, partition)) => match sim.topics.find(topic, partition) {
            Some(tp) => tp,
            None => {
                check(
                    "partition".into(),
                    format!("{topic}-{partition}"),
                    "no such partition".into(),
                );
                return out;
            }
        },
        None => Default::default(),
    };
    let named = target.is_some().then(|| sim.topics.name(tp));
    let many = sim.topics.has_many_partitions();
    // Whether a line or loss labelled `label` concerns the expectation's partition.
    let concerns =
        |label: Option<&crate::types::TopicPartition>| named.is_none() || !many || label == named;
    let p = sim.controller.partition(tp);
    if let Some(d) = &e.describe {
        check(
            "describe".into(),
            d.clone(),
            crate::describe::describe_line(sim.topics.name(tp), p, sim.config.protocol),
        );
    }
    if let Some(l) = e.leader {
        let show = |l: Option<BrokerId>| l.map_or("none".to_string(), |b| b.to_string());
        let expected = match l {
            LeaderExpect::Broker(b) => Some(b),
            LeaderExpect::None(_) => None,
        };
        check("leader".into(), show(expected), show(p.leader));
    }
    if let Some(isr) = &e.isr {
        check(
            "isr".into(),
            ids(&sorted_ids(isr)),
            ids(&sorted_ids(&p.isr)),
        );
    }
    if let Some(elr) = &e.elr {
        check(
            "elr".into(),
            ids(&sorted_ids(elr)),
            ids(&sorted_ids(&p.elr)),
        );
    }
    if e.leo.is_some() || e.hw.is_some() {
        let who = e.broker.or(p.leader);
        let name = match e.broker {
            Some(b) => format!("broker {b}"),
            None => "the leader".to_string(),
        };
        let log = who.and_then(|b| sim.brokers.get(&b)).map(|b| b.log(tp));
        let missing = || match who {
            None => "no leader".to_string(),
            Some(b) => format!("no broker {b}"),
        };
        if let Some(leo) = e.leo {
            let got = log.map_or_else(missing, |l| l.log_end_offset().to_string());
            check(format!("leo of {name}"), leo.to_string(), got);
        }
        if let Some(hw) = e.hw {
            let got = log.map_or_else(missing, |l| l.high_watermark.to_string());
            check(format!("hw of {name}"), hw.to_string(), got);
        }
    }
    if let Some(o) = &e.offsets {
        check("offsets".into(), o.clone(), sim.offsets_line_of(tp));
    }
    let mut losses = vec![];
    for l in sim.losses() {
        if concerns(l.tp.as_ref()) {
            losses.push(l);
        }
    }
    if let Some(loss) = e.loss {
        let show = |l: bool| if l { "a loss" } else { "no loss" }.to_string();
        check("loss".into(), show(loss), show(!losses.is_empty()));
    }
    if let Some([first, last]) = e.lost {
        let found = losses
            .iter()
            .any(|l| l.first_offset == first && l.last_offset == last);
        if !found {
            let got = if losses.is_empty() {
                "no loss".to_string()
            } else {
                // Written in place, not a `String` per loss collected and joined.
                let mut got = String::new();
                for (i, l) in losses.iter().enumerate() {
                    if i > 0 {
                        got.push_str("; ");
                    }
                    let _ = write!(got, "offsets {}..={}", l.first_offset, l.last_offset);
                }
                got
            };
            check("lost".into(), format!("offsets {first}..={last}"), got);
        }
    }
    let since = e.since.unwrap_or(0);
    let window = sim.trace.between(since, e.at);
    let window = || window.iter().copied();
    // The produce results of the expectation's partition.
    let results = || {
        window().filter(|t| t.kind() == TraceKind::Produce && concerns(t.event().partition_label()))
    };
    let span = format!("{}..={} ms", since, e.at);
    // What the window held of a kind, newest last, for the account of a failure.
    let seen = |lines: Vec<String>, none: &str| -> String {
        if lines.is_empty() {
            return format!("{none} in {span}");
        }
        let n = lines.len();
        let mut out = if n > 3 {
            format!("{} more, then ", n - 3)
        } else {
            String::new()
        };
        // The last three, written in place (not collected and joined).
        for (i, line) in lines[n.saturating_sub(3)..].iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            out.push_str(line);
        }
        out
    };
    // Loops, not filtered iterators collected (each collect's body compiled twice).
    let produced = || {
        let mut lines = vec![];
        for t in results() {
            lines.push(format!("{} at {} ms", quoted(&t.text()), t.time_ms));
        }
        lines
    };
    if let Some(want) = &e.produce {
        // The line as printed, or without its partition (`acks=all -> orders-3: ok` matches
        // `acks=all -> ok` too: the partition is the expectation's to name).
        // By prefixes, not a substring search (`holds` says why).
        let hit = results().any(|t| {
            let text = t.text();
            starts_with_words(&text, want)
                || match t.event() {
                    Event::ProduceResult {
                        acks, tp: Some(tp), ..
                    } => {
                        let head = format!("acks={acks} -> ");
                        text.strip_prefix(&format!("{head}{tp}: "))
                            .zip(want.strip_prefix(&head))
                            .is_some_and(|(rest, want)| starts_with_words(rest, want))
                    }
                    _ => false,
                }
        });
        if !hit {
            check(
                "produce".into(),
                format!("{} in {span}", quoted(want)),
                seen(produced(), "no produce result"),
            );
        }
    }
    if let Some(code) = &e.error {
        let hit = results().any(|t| t.event().produce_failed_with(code));
        if !hit {
            check(
                "error".into(),
                format!("{code} in {span}"),
                seen(produced(), "no produce result"),
            );
        }
    }
    if let Some(want) = &e.caption {
        let notes = || {
            window().filter_map(|t| match t.event() {
                Event::Caption { text } => Some(text.as_str()),
                _ => None,
            })
        };
        if !notes().any(|n| n.starts_with(want.as_str())) {
            let mut got = vec![];
            for n in notes() {
                got.push(quoted(&n.chars().take(40).collect::<String>()));
            }
            check(
                "caption".into(),
                format!("one beginning {} by {} ms", quoted(want), e.at),
                seen(got, "no caption"),
            );
        }
    }
    if let Some(want) = &e.line {
        if !window().any(|t| holds(&t.text(), want)) {
            check(
                "line".into(),
                format!("a line containing {} in {span}", quoted(want)),
                "none".to_string(),
            );
        }
    }
    let show = |b: Option<BrokerId>| b.map_or("none".to_string(), |b| b.to_string());
    if let Some(want) = e.preferred_read_replica {
        // SubscriptionState.preferredReadReplica(tp, timeMs): the replica the leader named,
        // until it expires ("timeMs > expireTimeMs" clears it).
        let got = match sim.consumer.preferred_read_replicas.get(&tp) {
            Some(&(replica, expires_ms)) if sim.now <= expires_ms => Some(replica),
            _ => None,
        };
        let want = match want {
            LeaderExpect::Broker(b) => Some(b),
            LeaderExpect::None(_) => None,
        };
        check("preferred_read_replica".into(), show(want), show(got));
    }
    if let Some(want) = e.read_from {
        let mut reads = vec![];
        let mut hit = false;
        for t in window() {
            if let Event::ConsumerRead { tp, broker, .. } = t.event() {
                if concerns(tp.as_ref()) {
                    hit |= *broker == want;
                    reads.push(format!("broker {broker} at {} ms", t.time_ms));
                }
            }
        }
        if !hit {
            check(
                "read_from".into(),
                format!("a read from broker {want} in {span}"),
                seen(reads, "no read"),
            );
        }
    }
    if let Some(want) = &e.client_rack {
        let show = |r: &str| {
            if r.is_empty() {
                "none".to_string()
            } else {
                quoted(r)
            }
        };
        let got = sim.consumer.client_rack.as_deref().unwrap_or_default();
        check("client_rack".into(), show(want), show(got));
    }
    if let Some(want) = &e.fenced {
        let mut fenced = vec![];
        for (&b, r) in sim.controller.brokers.iter() {
            if r.fenced {
                fenced.push(b);
            }
        }
        check(
            "fenced".into(),
            ids(&sorted_ids(want)),
            ids(&sorted_ids(&fenced)),
        );
    }
    for ((want, name), k) in e
        .partition_filters()
        .into_iter()
        .zip(crate::scenario::DESCRIBE_FILTERS)
        .zip(0..)
    {
        if let Some(want) = want {
            let (what, expected, got) = partitions_listed(sim, e, name, k, want);
            check(what, expected, got);
        }
    }
    if let (Some(zone), Some(want)) = (&e.zone, &e.zone_state) {
        let (holds, got) = zone_state(sim, zone);
        let met = holds.iter().any(|h| h == want);
        check(
            format!("zone {zone}"),
            want.clone(),
            if met { want.clone() } else { got },
        );
    }
    out
}

/// A describe filter's expectation (`under_replicated_partitions`, …, the `k`th of
/// `DESCRIBE_FILTERS`): the partitions `kafka-topics.sh --describe` with that filter (and
/// `--topic` when the expectation names a topic) lists now ([`crate::describe::listed_partitions`]),
/// those of `zone` alone when it names one (a replica on a broker of that rack). Returns what
/// was checked, what was expected and what holds, in words that are equal when it is met: a
/// count, or the `topic-partition`s in any order.
fn partitions_listed(
    sim: &Sim,
    e: &Expectation,
    name: &str,
    k: usize,
    want: &PartitionsExpect,
) -> (String, String, String) {
    let mut spec = crate::scenario::DescribeSpec {
        topic: e.topic.clone(),
        ..Default::default()
    };
    *[
        &mut spec.under_replicated_partitions,
        &mut spec.under_min_isr_partitions,
        &mut spec.at_min_isr_partitions,
        &mut spec.unavailable_partitions,
    ][k] = true;
    let zone = e
        .zone
        .as_deref()
        .map(|z| crate::scenario::zone_brokers(&sim.topics.racks, z).unwrap_or_default());
    let mut listed = vec![];
    for tp in crate::describe::listed_partitions(&spec, &sim.topics, &sim.controller) {
        let replicas = &sim.controller.partition(tp).replicas;
        if zone
            .as_ref()
            .is_none_or(|z| replicas.iter().any(|r| z.contains(r)))
        {
            listed.push(sim.topics.name(tp).to_string());
        }
    }
    let mut what = name.to_string();
    if let Some(z) = &e.zone {
        let _ = write!(what, " of zone {z}");
    }
    if let Some(t) = &e.topic {
        let _ = write!(what, " of topic {t}");
    }
    let names = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    match want {
        PartitionsExpect::Count(n) => {
            let got = if listed.len() == *n as usize {
                n.to_string()
            } else {
                format!("{} ({})", listed.len(), names(&listed))
            };
            (what, n.to_string(), got)
        }
        PartitionsExpect::List(want) => {
            let same = want.len() == listed.len() && want.iter().all(|w| listed.contains(w));
            let got = if same { names(want) } else { names(&listed) };
            (what, names(want), got)
        }
    }
}

/// What the zone actions left of `zone` (docs/scenario-format.md, `zone_state`): the words
/// that hold of it (`lost` when none of its brokers' processes runs, `cut` when every link
/// `cut_zone` cuts is cut, `up` when its brokers all run and none of those links is cut), and
/// what it is in words, for an account: those words, or each broker's state and how many of
/// the links are cut.
fn zone_state(sim: &Sim, zone: &str) -> (Vec<&'static str>, String) {
    use crate::types::{link, Node, ProcessState};
    let brokers = crate::scenario::zone_brokers(&sim.topics.racks, zone).unwrap_or_default();
    let (mut links, mut cut) = (0, 0);
    let (mut up, mut running) = (0, 0);
    let mut states = String::new();
    for &b in &brokers {
        let state = sim.processes[&b].state;
        up += usize::from(state.is_up());
        running += usize::from(state == ProcessState::Running);
        if !states.is_empty() {
            states.push_str(", ");
        }
        let word = match state {
            ProcessState::Running => "running",
            ProcessState::Frozen => "frozen",
            ProcessState::Killed => "killed",
            ProcessState::Stopped => "stopped",
        };
        let _ = write!(states, "broker {b} {word}");
        for &o in sim.brokers.keys() {
            if !brokers.contains(&o) {
                links += 1;
                cut += usize::from(
                    sim.network
                        .cut
                        .contains(&link(Node::Broker(b), Node::Broker(o))),
                );
            }
        }
        links += 1;
        cut += usize::from(
            sim.network
                .cut
                .contains(&link(Node::Broker(b), Node::Controller)),
        );
    }
    let mut holds = vec![];
    if up == 0 {
        holds.push("lost");
    }
    if cut == links {
        holds.push("cut");
    }
    if running == brokers.len() && cut == 0 {
        holds.push("up");
    }
    let got = if holds.is_empty() {
        format!("{states}; {cut} of its {links} links cut")
    } else {
        holds.join(" and ")
    };
    (holds, got)
}

/// Runs the scenario and checks each of its expectations at its time, each on its run: the
/// scenario's own, or the variant of `compare` its `run` names ([`Scenario::variant`]). The
/// outcomes come in the order of the `expect` list.
pub fn check(scenario: &Scenario) -> Result<Vec<Outcome>, ScenarioError> {
    check_with_violations(scenario).map(|(o, _)| o)
}

/// [`check`], and the invariant violations of the runs (to their end), which should be
/// none; a variant's are prefixed with its path (`compare[0]: `).
pub fn check_with_violations(
    scenario: &Scenario,
) -> Result<(Vec<Outcome>, Vec<String>), ScenarioError> {
    let mut mismatches = vec![Vec::new(); scenario.expect.len()];
    // The top run: the scenario itself (`Sim` ignores `compare`), without the expectations
    // of another run.
    let mine: Vec<usize> = (0..scenario.expect.len())
        .filter(|&i| scenario.expect[i].run.is_none())
        .collect();
    let mut violations = run_checks(scenario, &mine, &scenario.expect, &mut mismatches)?;
    for v in 0..scenario.compare.len() {
        let variant = scenario.variant(v)?;
        let run = Some(v as u32 + 1);
        let theirs: Vec<usize> = (0..scenario.expect.len())
            .filter(|&i| scenario.expect[i].run == run)
            .collect();
        // The variant carries the same expectations in the same order, `run` cleared.
        debug_assert_eq!(variant.expect.len(), theirs.len());
        let mut found = vec![Vec::new(); theirs.len()];
        let all: Vec<usize> = (0..theirs.len()).collect();
        for line in run_checks(&variant, &all, &variant.expect, &mut found)? {
            violations.push(format!("compare[{v}]: {line}"));
        }
        for (k, m) in found.into_iter().enumerate() {
            mismatches[theirs[k]] = m;
        }
    }
    let outcomes = scenario
        .expect
        .iter()
        .zip(mismatches)
        .enumerate()
        .map(|(index, (e, mismatches))| Outcome {
            index,
            at: e.at,
            label: e.label.clone(),
            mismatches,
        })
        .collect();
    Ok((outcomes, violations))
}

/// Runs `scenario` to its end, evaluating `expect[i]` for each `i` of `which` at its time
/// into `mismatches[i]`; returns the run's invariant violations.
fn run_checks(
    scenario: &Scenario,
    which: &[usize],
    expect: &[Expectation],
    mismatches: &mut [Vec<Mismatch>],
) -> Result<Vec<String>, ScenarioError> {
    let mut sim = Sim::new(scenario)?;
    sim.check_invariants = true;
    // Evaluated in time order (stable: expectations at the same time keep their order),
    // reported in list order.
    let times: Vec<u64> = which.iter().map(|&i| expect[i].at).collect();
    for k in stable_order(&times) {
        let i = which[k];
        let e = &expect[i];
        sim.advance_to(e.at);
        mismatches[i] = evaluate(&sim, e);
    }
    sim.advance_to(scenario.end_ms());
    Ok(sim.violations().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MAX_TEXT_LEN;
    use crate::expect::MAX_EXPECTATIONS;

    fn scenario(expect: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_json(&format!(
            r#"{{"brokers":3,"config":{{"replica.lag.time.max.ms":2000,"min.insync.replicas":2,
                          "broker.session.timeout.ms":4000,"broker.heartbeat.interval.ms":1000}},
                "timeline":[
                  {{"at":0,"action":"produce","acks":"all","prefix":"a-","count":4}},
                  {{"at":1000,"action":"note","text":"Step 1. Four records."}},
                  {{"at":1000,"action":"freeze","broker":3}},
                  {{"at":1500,"action":"produce","acks":"1","values":["b"]}},
                  {{"at":6000,"action":"stop","broker":2}},
                  {{"at":6500,"action":"produce","acks":"all","values":["c"],"retries":0}},
                  {{"at":9000,"action":"kill","broker":1}}],
                "end_ms":14000,
                "expect":{expect}}}"#
        ))
    }

    fn outcomes(expect: &str) -> Vec<Outcome> {
        check(&scenario(expect).expect("valid")).expect("runs")
    }

    #[test]
    fn met_expectations_have_no_mismatches() {
        let o = outcomes(
            r#"[{"at":500,"describe":"Topic: rep Partition: 0 Leader: 1 Replicas: 1,2,3 Isr: 1,2,3 Elr: LastKnownElr:"},
                {"at":500,"leader":1,"isr":[3,2,1],"elr":[],"leo":4,"hw":4,"offsets":"rep:0:4"},
                {"at":500,"produce":"acks=all -> ok, offsets=0..3"},
                {"at":1000,"caption":"Step 1."},
                {"at":1600,"broker":3,"leo":4,"hw":4},
                {"at":1600,"broker":1,"leo":5,"hw":4,"loss":false},
                {"at":4000,"isr":[1,2],"hw":5},
                {"at":7000,"since":6000,"error":"NOT_ENOUGH_REPLICAS"},
                {"at":14000,"leader":"none","since":9000,"line":"Fencing broker 1"},
                {"at":1000,"broker":1,"leo":4}]"#,
        );
        for o in &o {
            assert!(o.met(), "{}", o.account());
        }
        assert_eq!(o.len(), 10);
        // Out of order in the list, checked at its own time, reported in list order.
        assert_eq!((o[9].index, o[9].at), (9, 1000));
    }

    #[test]
    fn unmet_expectations_say_expected_got_and_when() {
        let o = outcomes(
            r#"[{"at":500,"label":"all in sync","leader":2,"isr":[1,2],"hw":3},
                {"at":1600,"broker":3,"leo":5},
                {"at":1000,"since":600,"produce":"acks=all -> ok"},
                {"at":1000,"caption":"Step 2."},
                {"at":14000,"error":"REQUEST_TIMED_OUT","loss":true,"lost":[0,3]},
                {"at":14000,"describe":"nope","offsets":"rep:0:4","line":"no such line"}]"#,
        );
        assert!(o.iter().all(|o| !o.met()));
        let a = o[0].account();
        assert!(
            a.starts_with("expect[0] at 0.500s (\"all in sync\"): NOT MET"),
            "{a}"
        );
        assert!(a.contains("leader: expected 2, got 1"), "{a}");
        assert!(a.contains("isr: expected 1,2, got 1,2,3"), "{a}");
        assert!(a.contains("hw of the leader: expected 3, got 4"), "{a}");
        assert!(o[1]
            .account()
            .contains("leo of broker 3: expected 5, got 4"));
        assert!(
            o[2].account()
                .contains("no produce result in 600..=1000 ms"),
            "{}",
            o[2].account()
        );
        assert!(
            o[3].account().contains("\"Step 1. Four records.\""),
            "{}",
            o[3].account()
        );
        let a = o[4].account();
        assert!(
            a.contains("error: expected REQUEST_TIMED_OUT in 0..=14000 ms, got \"acks=all -> ok"),
            "{a}"
        );
        assert!(
            a.contains("\"acks=all -> NOT_ENOUGH_REPLICAS\" at 6502 ms"),
            "{a}"
        );
        assert!(a.contains("loss: expected a loss, got no loss"), "{a}");
        assert!(
            a.contains("lost: expected offsets 0..=3, got no loss"),
            "{a}"
        );
        let a = o[5].account();
        assert!(a.contains("describe: expected nope, got Topic: rep"), "{a}");
        assert!(
            a.contains("offsets: expected rep:0:4, got kafka-get-offsets.sh: LEADER_NOT_AVAILABLE"),
            "{a}"
        );
        assert!(
            a.contains("line: expected a line containing \"no such line\""),
            "{a}"
        );
    }

    /// `holds` says what `str::contains` says: every substring of some lines (every start and
    /// length, so empty parts, whole lines and multi-byte characters), and texts that are not
    /// in them.
    #[test]
    fn holds_is_str_contains() {
        let lines = [
            "",
            "a",
            "Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 12, endOffset: 17).",
            "consumer: r-1 r-2 \u{e9}t\u{e9} \u{1f600} r-3",
            "aaaab",
        ];
        let others = ["x", "ISR  from", "aab ", "\u{e9}\u{e9}", "r-4", "aaaaa"];
        for text in lines {
            for (i, _) in text.char_indices().chain([(text.len(), ' ')]) {
                for (j, _) in text[i..].char_indices().chain([(text.len() - i, ' ')]) {
                    let part = &text[i..i + j];
                    assert!(holds(text, part), "{text:?} holds {part:?}");
                }
            }
            for part in lines.iter().chain(&others) {
                assert_eq!(holds(text, part), text.contains(part), "{text:?}, {part:?}");
            }
        }
    }

    #[test]
    fn produce_matches_whole_words_and_error_codes_exactly() {
        assert!(starts_with_words(
            "acks=1 -> ok, offset=4",
            "acks=1 -> ok, offset=4"
        ));
        assert!(starts_with_words(
            "acks=all -> ok, offset=17 (waited 9 ms)",
            "acks=all -> ok, offset=17"
        ));
        assert!(!starts_with_words(
            "acks=1 -> ok, offset=42",
            "acks=1 -> ok, offset=4"
        ));
        use crate::event::ProduceOutcome;
        use crate::types::{Acks, ErrorCode, TopicPartition};
        let result = |acks, outcome| Event::ProduceResult {
            acks,
            tp: None,
            outcome,
        };
        let error = |error, written_at| ProduceOutcome::Error { error, written_at };
        let nerr = result(Acks::All, error(ErrorCode::NOT_ENOUGH_REPLICAS, None));
        assert!(nerr.produce_failed_with("NOT_ENOUGH_REPLICAS"));
        assert!(!nerr.produce_failed_with("NOT_ENOUGH_REPLICAS_AFTER_APPEND"));
        let after = result(
            Acks::All,
            error(ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND, Some(3)),
        );
        assert!(after.produce_failed_with("NOT_ENOUGH_REPLICAS_AFTER_APPEND"));
        assert!(!after.produce_failed_with("NOT_ENOUGH_REPLICAS"));
        let expired = result(
            Acks::One,
            ProduceOutcome::Expired {
                records: 1,
                tp: TopicPartition {
                    topic: "t".into(),
                    partition: 0,
                },
                elapsed_ms: 120_000,
            },
        );
        assert!(expired.produce_failed_with("TimeoutException"));
        assert_eq!(expired.produce_error(), Some(ErrorCode::DELIVERY_TIMEOUT));
        let ok = result(
            Acks::One,
            ProduceOutcome::Ok {
                offsets: Some((3, 3)),
                waited_ms: 4,
            },
        );
        assert_eq!(ok.to_string(), "acks=1 -> ok, offset=3");
        assert!(!ok.produce_failed_with("ok"));
        assert_eq!(ok.produce_error(), None);
        let sent = result(Acks::Zero, ProduceOutcome::Sent { records: 1 });
        assert!(!sent.produce_failed_with("sent"));
        assert_eq!(sent.produce_error(), None);
    }

    #[test]
    fn checking_does_not_change_the_run() {
        let s = scenario(r#"[{"at":700,"hw":4},{"at":3000,"isr":[1,2]},{"at":9400,"leo":5}]"#)
            .expect("valid");
        let mut stepped = Sim::new(&s).expect("sim");
        for at in [700, 3000, 9400, 14000] {
            stepped.advance_to(at);
        }
        let straight = crate::run(&s, true).expect("runs");
        assert_eq!(stepped.transcript(), straight.transcript());
        assert_eq!(stepped.snapshot(), straight.snapshot());
    }

    #[test]
    fn bad_expectations_name_the_field_and_range() {
        let field = |expect: &str| scenario(expect).expect_err("invalid").field;
        assert_eq!(field(r#"[{"at":14001,"hw":1}]"#), "expect[0].at");
        assert!(scenario(r#"[{"at":14001,"hw":1}]"#)
            .unwrap_err()
            .message
            .contains("0..=14000"));
        assert_eq!(field(r#"[{"at":5}]"#), "expect[0]");
        assert_eq!(
            field(r#"[{"at":5,"hw":1},{"at":5,"leader":4}]"#),
            "expect[1].leader"
        );
        assert_eq!(field(r#"[{"at":5,"isr":[1,9]}]"#), "expect[0].isr[1]");
        assert_eq!(field(r#"[{"at":5,"elr":[2,2]}]"#), "expect[0].elr[1]");
        assert_eq!(field(r#"[{"at":5,"broker":2}]"#), "expect[0].broker");
        assert_eq!(field(r#"[{"at":5,"broker":0,"hw":1}]"#), "expect[0].broker");
        assert_eq!(
            field(r#"[{"at":5,"since":6,"line":"x"}]"#),
            "expect[0].since"
        );
        assert_eq!(field(r#"[{"at":5,"lost":[3,2]}]"#), "expect[0].lost");
        assert_eq!(
            field(r#"[{"at":5,"error":"not a code"}]"#),
            "expect[0].error"
        );
        assert_eq!(field(r#"[{"at":5,"caption":""}]"#), "expect[0].caption");
        let long = "x".repeat(MAX_TEXT_LEN + 1);
        assert_eq!(
            field(&format!(r#"[{{"at":5,"line":"{long}"}}]"#)),
            "expect[0].line"
        );
        // Unknown checks and wrong types are rejected by the parser, naming the field.
        let e = scenario(r#"[{"at":5,"hwm":1}]"#).unwrap_err();
        assert_eq!(e.field, "expect[0]");
        assert!(e.message.starts_with("unknown field `hwm`"), "{e}");
        let e = scenario(r#"[{"at":5,"leader":"nobody"}]"#).unwrap_err();
        assert_eq!(e.field, "expect[0].leader");
        assert!(
            e.message.contains(r#"expected a broker id or "none""#),
            "{e}"
        );
        let e = scenario(r#"[{"at":5,"lost":[1]}]"#).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (
                "expect[0].lost",
                "invalid length 1, expected an array of length 2"
            )
        );
        let many: Vec<String> = (0..=MAX_EXPECTATIONS)
            .map(|_| r#"{"at":1,"hw":0}"#.to_string())
            .collect();
        let e = scenario(&format!("[{}]", many.join(","))).unwrap_err();
        assert_eq!(e.field, "expect");
    }
}
