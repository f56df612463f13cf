//! The data-loss finder (issue 15, docs/history.md "The data-loss finder"): `watermark
//! explore` keeps a scenario's cluster, configs, protocol mode and writes, drops its faults,
//! and searches seeded schedules of faults for a run that breaks a property a user cares
//! about:
//!
//! 1. [`Property::AcknowledgedLoss`]: a record whose produce result said it succeeded (under
//!    the producer's `acks`: the leader's append for `acks=1`, the ISR's for `acks=all`;
//!    `acks=0` acknowledges nothing) is not in the partition's leader's log at the end (the
//!    same value and leader epoch at its offset), or a committed record left the committed
//!    history (the engine's losses).
//! 2. [`Property::ReadRewritten`]: a consumer read a record that the leader at the end does
//!    not hold at that offset (or the engine's own check saw the offsets rewritten). Checked
//!    only when the scenario has `consume` actions: the finder adds no reads of its own, so
//!    a scenario's writes and reads are the user's.
//! 3. [`Property::Divergence`]: after every fault is healed and the quiet phase has passed,
//!    a replica holds a record the leader does not have at that offset, or records past the
//!    leader's log end.
//!
//! A partition without a leader at the end is unavailable, not lost: properties 1 to 3 are
//! not checked on it (the quiet phase restarts every broker, so this is rare).
//!
//! A schedule is a list of faults, each with its time and its duration; every fault is
//! undone after its duration, and the run ends with a quiet phase of
//! `replica.lag.time.max.ms` + `broker.session.timeout.ms` + 10 s. Schedule `i` is drawn
//! from the one seeded generator seeded with (seed, i) alone, so it is the same whatever
//! else runs; a search tries schedules in index order and reports the first that breaks a
//! property, and how many it tried (that index + 1, or the budget). Natively,
//! [`search_parallel`] splits the budget into fixed chunks by index across threads and
//! keeps the lowest index found, so the answer and the count do not depend on the thread
//! count.
//!
//! The fault model: at most one broker loses data (its disk, or what the OS had not written
//! back at a power loss) per schedule. Kafka's replication guards against one machine losing
//! its data at a time; two machines losing theirs at once loses acknowledged records in any
//! configuration, which is not a finding about the configuration.

use std::fmt::Write as _;

use crate::error::{ScenarioError, MAX_TEXT_LEN};
use crate::event::{Event, ProduceOutcome};
use crate::expect::Expectation;
use crate::record::Record;
use crate::rng::Rng;
use crate::scenario::{sort_timeline, Action, ControllerName, Endpoint, Scenario, TimedAction};
use crate::sim::Sim;
use crate::snapshot::{ReplicaRole, Snapshot};
use crate::types::{Acks, BrokerId, ProcessState, TimeMs, TopicPartition};

/// The grid fault times are drawn on, ms.
pub const TIME_STEP_MS: TimeMs = 50;
/// The durations a fault is drawn with, ms: shorter than, around and longer than the
/// default `broker.session.timeout.ms` (9 s) and `replica.lag.time.max.ms` (30 s).
pub const DURATIONS_MS: [TimeMs; 6] = [200, 1_000, 3_000, 10_000, 20_000, 40_000];
/// The most faults a schedule may hold (`--faults`).
pub const MAX_FAULTS_LIMIT: usize = 8;
/// The largest budget (`--budget`).
pub const MAX_BUDGET: u64 = 10_000_000;
/// Schedules per chunk of a parallel search.
pub const CHUNK: u64 = 8;
/// How much slower a `slow` fault makes each fetch, ms.
pub const SLOW_MS: u64 = 2_000;

/// The kinds of fault a search draws from (`--faults`), by their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Freeze,
    Kill,
    Stop,
    PowerLoss,
    LoseDisk,
    Slow,
    Cut,
    CutController,
    LoseZone,
}

/// Every kind with its name, in the order the generator lists them.
pub const FAULT_KINDS: &[(FaultKind, &str)] = &[
    (FaultKind::Freeze, "freeze"),
    (FaultKind::Kill, "kill"),
    (FaultKind::Stop, "stop"),
    (FaultKind::PowerLoss, "power_loss"),
    (FaultKind::LoseDisk, "lose_disk"),
    (FaultKind::Slow, "slow"),
    (FaultKind::Cut, "cut"),
    (FaultKind::CutController, "cut_controller"),
    (FaultKind::LoseZone, "lose_zone"),
];

/// The kinds named in a comma-separated list; an unknown name is refused with the field
/// (`faults`) and the names.
pub fn parse_fault_kinds(list: &str) -> Result<Vec<FaultKind>, ScenarioError> {
    let mut out = vec![];
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match FAULT_KINDS.iter().find(|(_, n)| *n == name) {
            Some((k, _)) if !out.contains(k) => out.push(*k),
            Some(_) => {}
            None => {
                let names: Vec<&str> = FAULT_KINDS.iter().map(|(_, n)| *n).collect();
                return Err(ScenarioError::new(
                    "faults",
                    format!(
                        "unknown fault kind {}; the kinds are: {}",
                        crate::error::quoted(name),
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    if out.is_empty() {
        return Err(ScenarioError::new("faults", "no fault kind named"));
    }
    Ok(out)
}

/// One fault of a schedule (its undo is implied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// SIGSTOP, then SIGCONT.
    Freeze(BrokerId),
    /// kill -9, then start.
    Kill(BrokerId),
    /// SIGTERM (controlled shutdown), then start.
    Stop(BrokerId),
    /// The machine loses power, then the broker starts.
    PowerLoss(BrokerId),
    /// The broker's disk is lost (the process dies), then it starts empty.
    LoseDisk(BrokerId),
    /// Each fetch on the broker is [`SLOW_MS`] slower, then normal.
    Slow(BrokerId),
    /// The link between two brokers is cut, then healed.
    Cut(BrokerId, BrokerId),
    /// The link between a broker and the controller is cut, then healed.
    CutController(BrokerId),
    /// Every broker of a rack is killed, then started.
    LoseZone(String),
}

impl Fault {
    /// The brokers it touches (two faults on one broker never overlap in time).
    fn brokers(&self, scenario: &Scenario) -> Vec<BrokerId> {
        match self {
            Fault::Freeze(b)
            | Fault::Kill(b)
            | Fault::Stop(b)
            | Fault::PowerLoss(b)
            | Fault::LoseDisk(b)
            | Fault::Slow(b)
            | Fault::CutController(b) => vec![*b],
            Fault::Cut(a, b) => vec![*a, *b],
            Fault::LoseZone(z) => (1..=scenario.brokers)
                .filter(|b| scenario.rack_of(*b) == Some(z.as_str()))
                .collect(),
        }
    }

    /// Whether it takes its brokers down (a process or machine fault, not a link's).
    fn takes_down(&self) -> bool {
        !matches!(
            self,
            Fault::Slow(_) | Fault::Cut(..) | Fault::CutController(_)
        )
    }

    /// Whether its brokers' processes die without a controlled shutdown.
    fn dies(&self) -> bool {
        matches!(
            self,
            Fault::Kill(_) | Fault::PowerLoss(_) | Fault::LoseDisk(_) | Fault::LoseZone(_)
        )
    }

    /// Whether the broker loses data (its disk, or its unwritten pages).
    fn loses_data(&self) -> bool {
        matches!(self, Fault::PowerLoss(_) | Fault::LoseDisk(_))
    }

    /// The action that starts it and the one that undoes it.
    fn actions(&self) -> (Action, Action) {
        let ctl = Endpoint::Controller(ControllerName::Controller);
        match self {
            Fault::Freeze(b) => (Action::Freeze { broker: *b }, Action::Thaw { broker: *b }),
            Fault::Kill(b) => (Action::Kill { broker: *b }, Action::Start { broker: *b }),
            Fault::Stop(b) => (Action::Stop { broker: *b }, Action::Start { broker: *b }),
            Fault::PowerLoss(b) => (
                Action::PowerLoss { broker: *b },
                Action::Start { broker: *b },
            ),
            Fault::LoseDisk(b) => (
                Action::LoseDisk { broker: *b },
                Action::Start { broker: *b },
            ),
            Fault::Slow(b) => (
                Action::Slow {
                    broker: *b,
                    ms: SLOW_MS,
                },
                Action::Slow { broker: *b, ms: 0 },
            ),
            Fault::Cut(a, b) => (
                Action::Cut {
                    a: Endpoint::Broker(*a),
                    b: Endpoint::Broker(*b),
                },
                Action::Heal {
                    a: Endpoint::Broker(*a),
                    b: Endpoint::Broker(*b),
                },
            ),
            Fault::CutController(b) => (
                Action::Cut {
                    a: Endpoint::Broker(*b),
                    b: ctl,
                },
                Action::Heal {
                    a: Endpoint::Broker(*b),
                    b: ctl,
                },
            ),
            Fault::LoseZone(z) => (
                Action::LoseZone { zone: z.clone() },
                Action::StartZone { zone: z.clone() },
            ),
        }
    }

    /// Plain words for the fault and for its undo.
    fn words(&self) -> (String, String) {
        match self {
            Fault::Freeze(b) => (
                format!("broker {b} is frozen (SIGSTOP): it holds its connections but answers nothing"),
                format!("broker {b} is thawed (SIGCONT)"),
            ),
            Fault::Kill(b) => (
                format!("broker {b} is killed (kill -9); its disk stays"),
                format!("broker {b} starts again"),
            ),
            Fault::Stop(b) => (
                format!("broker {b} is stopped (SIGTERM, a controlled shutdown)"),
                format!("broker {b} starts again"),
            ),
            Fault::PowerLoss(b) => (
                format!("broker {b}'s machine loses power: what the OS had not written back to disk is gone"),
                format!("broker {b} starts again"),
            ),
            Fault::LoseDisk(b) => (
                format!("broker {b} loses its disk (the process dies with it)"),
                format!("broker {b} starts again with an empty disk"),
            ),
            Fault::Slow(b) => (
                format!("broker {b} becomes slow: each fetch takes {SLOW_MS} ms longer"),
                format!("broker {b} is fast again"),
            ),
            Fault::Cut(a, b) => (
                format!("the link between brokers {a} and {b} is cut"),
                format!("the link between brokers {a} and {b} is healed"),
            ),
            Fault::CutController(b) => (
                format!("the link between broker {b} and the controller is cut"),
                format!("the link between broker {b} and the controller is healed"),
            ),
            Fault::LoseZone(z) => (
                format!("zone {z} is lost: every broker in it is killed"),
                format!("zone {z} comes back: its brokers start"),
            ),
        }
    }
}

/// A fault at a time, undone `duration_ms` later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledFault {
    pub at: TimeMs,
    pub duration_ms: TimeMs,
    pub fault: Fault,
}

impl ScheduledFault {
    fn until(&self) -> TimeMs {
        self.at + self.duration_ms
    }
}

/// The property a run broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Property {
    AcknowledgedLoss,
    ReadRewritten,
    Divergence,
}

impl Property {
    pub fn name(self) -> &'static str {
        match self {
            Property::AcknowledgedLoss => "acknowledged-loss",
            Property::ReadRewritten => "read-rewritten",
            Property::Divergence => "divergence",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Property::AcknowledgedLoss => "an acknowledged record disappeared",
            Property::ReadRewritten => "a consumer read a record that a later leader does not have",
            Property::Divergence => {
                "replicas still differ after every fault healed and the cluster converged"
            }
        }
    }
}

/// What broke, and the facts the written scenario states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub property: Property,
    /// When it was seen (the end of the run for the final checks).
    pub time_ms: TimeMs,
    /// What happened, in plain words.
    pub detail: String,
    /// The produce result line that acknowledged the lost record, if property 1.
    pub ack_line: Option<String>,
    /// A committed loss the engine reported (offsets), if any.
    pub lost: Option<[u64; 2]>,
    /// The transcript line of the engine's own read check, if property 2 came from it.
    pub line: Option<String>,
}

/// A search's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Schedules tried: the found one's index + 1, or the budget.
    pub tried: u64,
    pub found: Option<Found>,
}

/// A schedule that broke a property, as found and shrunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub index: u64,
    pub schedule: Vec<ScheduledFault>,
    pub violation: Violation,
    pub shrunk: Vec<ScheduledFault>,
    pub shrunk_violation: Violation,
}

/// The search's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub budget: u64,
    pub seed: u64,
    /// The most faults in a schedule (1..=[`MAX_FAULTS_LIMIT`]).
    pub max_faults: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: 200,
            seed: 0,
            max_faults: 4,
        }
    }
}

/// A scenario made ready for the search: its faults dropped, its time span and quiet phase
/// known.
#[derive(Debug, Clone)]
pub struct Explorer {
    base: Scenario,
    /// Faults start within `0..=span_ms`.
    span_ms: TimeMs,
    quiet_ms: TimeMs,
    zones: Vec<String>,
    max_faults: usize,
    kinds: Vec<FaultKind>,
    session_timeout_ms: TimeMs,
    /// The most brokers down at once: the smallest replication factor less one.
    tolerance: usize,
}

/// Whether an action is a fault or its undo (the finder replaces these), or a note that
/// explains the original run.
fn dropped(a: &Action) -> bool {
    matches!(
        a,
        Action::Freeze { .. }
            | Action::Thaw { .. }
            | Action::Kill { .. }
            | Action::Stop { .. }
            | Action::Start { .. }
            | Action::Slow { .. }
            | Action::Cut { .. }
            | Action::Heal { .. }
            | Action::LoseDisk { .. }
            | Action::PowerLoss { .. }
            | Action::LoseZone { .. }
            | Action::StartZone { .. }
            | Action::CutZone { .. }
            | Action::HealZone { .. }
            | Action::Note { .. }
    )
}

impl Explorer {
    /// A search over `scenario` with schedules of at most `max_faults` faults of `kinds`
    /// (`None`: every kind the cluster has: zone loss only where brokers have racks).
    pub fn new(
        scenario: &Scenario,
        max_faults: usize,
        kinds: Option<&[FaultKind]>,
    ) -> Result<Explorer, ScenarioError> {
        scenario.validate()?;
        if !(1..=MAX_FAULTS_LIMIT).contains(&max_faults) {
            return Err(ScenarioError::new(
                "faults",
                format!("{max_faults} faults per schedule: allowed 1 to {MAX_FAULTS_LIMIT}"),
            ));
        }
        let span_ms = scenario.end_ms();
        let mut base = scenario.clone();
        base.timeline.retain(|a| !dropped(&a.action));
        base.expect.clear();
        base.off_script_ms = None;
        let c = &scenario.config;
        let quiet_ms = c.replica_lag_time_max_ms + c.broker_session_timeout_ms + 10_000;
        let mut zones: Vec<String> = vec![];
        for b in 1..=scenario.brokers {
            if let Some(z) = scenario.rack_of(b) {
                if !zones.iter().any(|x| x == z) {
                    zones.push(z.to_string());
                }
            }
        }
        let kinds: Vec<FaultKind> = match kinds {
            Some(k) => {
                if k.contains(&FaultKind::LoseZone) && zones.is_empty() {
                    return Err(ScenarioError::new(
                        "faults",
                        "lose_zone needs brokers with racks (the scenario's `racks`)",
                    ));
                }
                if k.is_empty() {
                    return Err(ScenarioError::new("faults", "no fault kind named"));
                }
                k.to_vec()
            }
            None => FAULT_KINDS
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| *k != FaultKind::LoseZone || !zones.is_empty())
                .collect(),
        };
        let rf = scenario
            .topic_specs()
            .iter()
            .map(|t| t.replication_factor)
            .min()
            .unwrap_or(1);
        Ok(Explorer {
            base,
            span_ms,
            quiet_ms,
            zones,
            max_faults,
            kinds,
            session_timeout_ms: scenario.config.broker_session_timeout_ms,
            tolerance: rf.saturating_sub(1) as usize,
        })
    }

    /// The scenario without its faults.
    pub fn base(&self) -> &Scenario {
        &self.base
    }

    /// Schedule `index` of the search seeded with `seed`: a function of these two alone.
    pub fn schedule(&self, seed: u64, index: u64) -> Vec<ScheduledFault> {
        let mut rng = Rng::new(schedule_seed(seed, index));
        let n = 1 + rng.below_or_equal(self.max_faults as u64 - 1) as usize;
        let brokers = self.base.brokers;
        let mut out: Vec<ScheduledFault> = vec![];
        for _ in 0..n {
            // A few draws for a fault that fits (no overlap on a broker, one data loss).
            for _ in 0..8 {
                let b = 1 + rng.below_or_equal(u64::from(brokers) - 1) as BrokerId;
                let kind = self.kinds[rng.below_or_equal(self.kinds.len() as u64 - 1) as usize];
                let fault = match kind {
                    FaultKind::Freeze => Fault::Freeze(b),
                    FaultKind::Kill => Fault::Kill(b),
                    FaultKind::Stop => Fault::Stop(b),
                    FaultKind::PowerLoss => Fault::PowerLoss(b),
                    FaultKind::LoseDisk => Fault::LoseDisk(b),
                    FaultKind::Slow => Fault::Slow(b),
                    FaultKind::Cut if brokers > 1 => {
                        let mut o = 1 + rng.below_or_equal(u64::from(brokers) - 2) as BrokerId;
                        if o >= b {
                            o += 1;
                        }
                        Fault::Cut(b.min(o), b.max(o))
                    }
                    FaultKind::Cut | FaultKind::CutController => Fault::CutController(b),
                    FaultKind::LoseZone => {
                        let z = rng.below_or_equal(self.zones.len() as u64 - 1) as usize;
                        Fault::LoseZone(self.zones[z].clone())
                    }
                };
                let at = rng.below_or_equal(self.span_ms / TIME_STEP_MS) * TIME_STEP_MS;
                let d = DURATIONS_MS[rng.below_or_equal(DURATIONS_MS.len() as u64 - 1) as usize];
                let f = ScheduledFault {
                    at,
                    duration_ms: d,
                    fault,
                };
                let mut candidate = out.clone();
                candidate.push(f);
                if self.fits(&candidate) {
                    out = candidate;
                    break;
                }
            }
        }
        by_time(out, |f| f.at)
    }

    /// Whether a schedule keeps the fault model: faults on one broker never overlap, at
    /// most one data-losing fault.
    pub fn fits(&self, s: &[ScheduledFault]) -> bool {
        if s.iter().filter(|f| f.fault.loses_data()).count() > 1 {
            return false;
        }
        // Kafka's promise: with replication factor N, up to N-1 server failures lose no
        // committed record (the documentation's design chapter, "Replicated Logs"). A
        // schedule takes at most that many brokers down at once.
        for f in s.iter().filter(|f| f.fault.takes_down()) {
            let mut down: Vec<BrokerId> = vec![];
            for g in s.iter().filter(|g| g.fault.takes_down()) {
                // A broker that lost data holds an incomplete replica until it has caught
                // up again: it counts as failed from its fault on.
                // A broker whose process died without a controlled shutdown stays out after
                // its start until the controller fences its old registration: the session
                // timeout (ClusterControlManager.registerBroker refuses the new one with
                // DuplicateBrokerRegistrationException while the old session lives).
                let until = if g.fault.loses_data() {
                    TimeMs::MAX
                } else if g.fault.dies() {
                    g.until() + self.session_timeout_ms
                } else {
                    g.until()
                };
                if g.at <= f.at && f.at <= until {
                    for b in g.fault.brokers(&self.base) {
                        if !down.contains(&b) {
                            down.push(b);
                        }
                    }
                }
            }
            if down.len() > self.tolerance {
                return false;
            }
        }
        for (i, f) in s.iter().enumerate() {
            let fb = f.fault.brokers(&self.base);
            for g in &s[i + 1..] {
                let overlap = f.at <= g.until() && g.at <= f.until();
                if overlap && g.fault.brokers(&self.base).iter().any(|b| fb.contains(b)) {
                    return false;
                }
            }
        }
        true
    }

    /// The scenario a schedule runs: the base, the faults and their undos in its timeline,
    /// and the quiet phase's end as its end. With `notes`, a `note` explains each step.
    pub fn scenario(&self, s: &[ScheduledFault], notes: bool) -> Scenario {
        let mut scn = self.base.clone();
        let mut steps: Vec<(TimeMs, bool, &ScheduledFault)> = vec![];
        for f in s {
            steps.push((f.at, true, f));
            steps.push((f.until(), false, f));
        }
        let steps = by_time(steps, |(t, _, _)| *t);
        for (n, (t, start, f)) in steps.iter().enumerate() {
            let (begin, undo) = f.fault.actions();
            let (wb, wu) = f.fault.words();
            if notes {
                let text = clip(
                    &format!("Step {}. {}.", n + 1, if *start { wb } else { wu }),
                    MAX_TEXT_LEN,
                );
                scn.timeline.push(TimedAction {
                    at: *t,
                    action: Action::Note { text },
                });
            }
            scn.timeline.push(TimedAction {
                at: *t,
                action: if *start { begin } else { undo },
            });
        }
        sort_timeline(&mut scn.timeline);
        scn.end_ms = Some(self.quiet_start(s) + self.quiet_ms);
        scn
    }

    fn quiet_start(&self, s: &[ScheduledFault]) -> TimeMs {
        s.iter()
            .map(ScheduledFault::until)
            .fold(self.span_ms, TimeMs::max)
    }

    /// Runs a schedule and checks the properties.
    pub fn check(&self, s: &[ScheduledFault]) -> Result<Option<Violation>, ScenarioError> {
        let scn = self.scenario(s, false);
        check_run(&scn)
    }

    /// Schedules `range` in order: how many were tried and the first that broke a
    /// property (its index, schedule and violation).
    pub fn search_range(
        &self,
        seed: u64,
        range: std::ops::Range<u64>,
    ) -> Result<Option<(u64, Vec<ScheduledFault>, Violation)>, ScenarioError> {
        for i in range {
            let s = self.schedule(seed, i);
            if let Some(v) = self.check(&s)? {
                return Ok(Some((i, s, v)));
            }
        }
        Ok(None)
    }

    /// Shrinks a schedule that breaks `property`, in rounds until a round changes nothing:
    /// removes faults one at a time while it still breaks it, moves each fault earlier by
    /// halving steps while it still does, then shortens each fault's duration to the
    /// shortest of [`DURATIONS_MS`] below its own that still breaks it. Deterministic: the
    /// same schedule shrinks to the same one.
    pub fn shrink(
        &self,
        s: &[ScheduledFault],
        property: Property,
    ) -> Result<(Vec<ScheduledFault>, Violation), ScenarioError> {
        let breaks = |c: &[ScheduledFault]| -> Result<Option<Violation>, ScenarioError> {
            if !self.fits(c) {
                return Ok(None);
            }
            Ok(self.check(c)?.filter(|v| v.property == property))
        };
        let mut cur = s.to_vec();
        let mut last = breaks(&cur)?.ok_or_else(|| {
            ScenarioError::new(
                "schedule",
                "the schedule to shrink does not break the property",
            )
        })?;
        loop {
            let before = cur.clone();
            let mut i = 0;
            while i < cur.len() {
                let mut c = cur.clone();
                c.remove(i);
                if let Some(v) = breaks(&c)? {
                    cur = c;
                    last = v;
                } else {
                    i += 1;
                }
            }
            for i in 0..cur.len() {
                let mut step = cur[i].at / 2;
                while step >= TIME_STEP_MS {
                    let mut c = cur.clone();
                    c[i].at = c[i].at.saturating_sub(step);
                    c[i].at -= c[i].at % TIME_STEP_MS;
                    if let Some(v) = breaks(&c)? {
                        cur = c;
                        last = v;
                        step = step.min(cur[i].at / 2);
                    } else {
                        step /= 2;
                    }
                }
            }
            for i in 0..cur.len() {
                // The shortest first: the first that still breaks it is the one kept.
                for d in DURATIONS_MS {
                    if d >= cur[i].duration_ms {
                        break;
                    }
                    let mut c = cur.clone();
                    c[i].duration_ms = d;
                    if let Some(v) = breaks(&c)? {
                        cur = c;
                        last = v;
                        break;
                    }
                }
            }
            cur = by_time(cur, |f| f.at);
            if cur == before {
                break;
            }
        }
        Ok((cur, last))
    }

    /// The written scenario of a found schedule: the original with the faults in its
    /// timeline, notes that explain each step and the break, and an `expect` of the loss.
    pub fn found_scenario(&self, s: &[ScheduledFault], v: &Violation) -> Scenario {
        let mut scn = self.scenario(s, true);
        let title = if scn.title.is_empty() {
            "Found by watermark explore".to_string()
        } else {
            format!("{} (found by watermark explore)", scn.title)
        };
        scn.title = clip(&title, MAX_TEXT_LEN);
        // The search runs the scenario's own run; a scenario that compares runs keeps its
        // `compare`, whose variants take the same faults beside it, so the words say whose
        // run broke the property.
        let (whose, at) = if scn.compare.is_empty() {
            ("", "Here")
        } else {
            (
                ", in its own run (the top one; the runs beside take the same faults),",
                "Here, in the top run,",
            )
        };
        let mut d = format!(
            "watermark explore found a schedule of {} fault{} under which{whose} {}: {}",
            s.len(),
            if s.len() == 1 { "" } else { "s" },
            v.property.words(),
            v.detail
        );
        if !self.base.description.is_empty() {
            let _ = write!(d, "\n\nThe original scenario: {}", self.base.description);
        }
        scn.description = clip(&d, 4 * MAX_TEXT_LEN);
        let qs = self.quiet_start(s);
        scn.timeline.push(TimedAction {
            at: qs,
            action: Action::Note {
                text: "Every fault is healed: the cluster has until the end to converge.".into(),
            },
        });
        let end = scn.end_ms();
        scn.timeline.push(TimedAction {
            at: v.time_ms.min(end),
            action: Action::Note {
                text: clip(
                    &format!("{at} {}: {}", v.property.words(), v.detail),
                    MAX_TEXT_LEN,
                ),
            },
        });
        sort_timeline(&mut scn.timeline);
        let label = format!("{}: {}", v.property.name(), v.detail);
        let mut e = Expectation {
            at: end,
            label: clip(&label, MAX_TEXT_LEN),
            ..Default::default()
        };
        if let Some(l) = &v.ack_line {
            e.produce = Some(l.chars().take(MAX_TEXT_LEN).collect());
        }
        if let Some(l) = v.lost {
            e.loss = Some(true);
            e.lost = Some(l);
        }
        if let Some(l) = &v.line {
            e.line = Some(l.chars().take(MAX_TEXT_LEN).collect());
        }
        if e.produce.is_some() || e.loss.is_some() || e.line.is_some() {
            scn.expect.push(e);
        }
        scn
    }

    /// A whole search over `0..budget`, one schedule after another, then the shrink.
    pub fn search(&self, opts: Options) -> Result<Report, ScenarioError> {
        validate(&opts)?;
        let first = self.search_range(opts.seed, 0..opts.budget)?;
        self.report(opts, first)
    }

    fn report(
        &self,
        opts: Options,
        first: Option<(u64, Vec<ScheduledFault>, Violation)>,
    ) -> Result<Report, ScenarioError> {
        match first {
            None => Ok(Report {
                tried: opts.budget,
                found: None,
            }),
            Some((index, schedule, violation)) => {
                let (shrunk, shrunk_violation) = self.shrink(&schedule, violation.property)?;
                Ok(Report {
                    tried: index + 1,
                    found: Some(Found {
                        index,
                        schedule,
                        violation,
                        shrunk,
                        shrunk_violation,
                    }),
                })
            }
        }
    }
}

/// `v` in the order of its times, equal times in their order (a stable sort): the engine's
/// merge sort (`crate::sort`), not `sort_by_key`, whose sort is kilobytes of wasm per
/// element type (the playground's finder runs this module in the page's wasm).
fn by_time<T>(v: Vec<T>, at: fn(&T) -> TimeMs) -> Vec<T> {
    let keys: Vec<u64> = v.iter().map(at).collect();
    let mut slots: Vec<Option<T>> = v.into_iter().map(Some).collect();
    crate::sort::stable_order(&keys)
        .into_iter()
        .filter_map(|i| slots[i].take())
        .collect()
}

/// The seed of schedule `index`: the generator seeded with `seed`, stepped by the index
/// (SplitMix64 is a counter, so this is its `index`-th output after mixing the seed).
pub fn schedule_seed(seed: u64, index: u64) -> u64 {
    let mut r = Rng::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    r.next_u64()
}

/// Validates the options against their ranges.
pub fn validate(opts: &Options) -> Result<(), ScenarioError> {
    if !(1..=MAX_BUDGET).contains(&opts.budget) {
        return Err(ScenarioError::new(
            "budget",
            format!("{} schedules: allowed 1 to {MAX_BUDGET}", opts.budget),
        ));
    }
    Ok(())
}

/// Parallel search natively: the budget in chunks of [`CHUNK`] indices, taken in order by
/// `threads` threads; the lowest index found wins, so the answer and the count are those of
/// the one-thread search.
#[cfg(not(target_arch = "wasm32"))]
pub fn search_parallel(
    ex: &Explorer,
    opts: Options,
    threads: usize,
) -> Result<Report, ScenarioError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;
    validate(&opts)?;
    let threads = threads.max(1);
    if threads == 1 {
        return ex.search(opts);
    }
    let next_chunk = AtomicU64::new(0);
    let lowest = AtomicU64::new(u64::MAX);
    let results: Mutex<Vec<(u64, Vec<ScheduledFault>, Violation)>> = Mutex::new(vec![]);
    let error: Mutex<Option<ScenarioError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let c = next_chunk.fetch_add(1, Ordering::SeqCst);
                let start = c.saturating_mul(CHUNK);
                if start >= opts.budget || start > lowest.load(Ordering::SeqCst) {
                    return;
                }
                let end = (start + CHUNK).min(opts.budget);
                match ex.search_range(opts.seed, start..end) {
                    Ok(Some(r)) => {
                        lowest.fetch_min(r.0, Ordering::SeqCst);
                        if let Ok(mut v) = results.lock() {
                            v.push(r);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        if let Ok(mut slot) = error.lock() {
                            slot.get_or_insert(e);
                        }
                        lowest.store(0, Ordering::SeqCst);
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().ok().flatten() {
        return Err(e);
    }
    let found = lowest_index(results.into_inner().unwrap_or_default());
    ex.report(opts, found)
}

/// Of the schedules that threads found, in the order they found them, the one with the
/// lowest index: the one a one-thread search finds. (Native only, as the threads are.)
#[cfg(not(target_arch = "wasm32"))]
fn lowest_index<T>(found: Vec<(u64, T, Violation)>) -> Option<(u64, T, Violation)> {
    found.into_iter().min_by_key(|r| r.0)
}

/// A record a produce result acknowledged, as the log held it then.
#[derive(Debug, Clone)]
struct Acked {
    tp: TopicPartition,
    record: Record,
    line: String,
}

/// Runs a scenario to its end and checks the three properties.
pub fn check_run(scn: &Scenario) -> Result<Option<Violation>, ScenarioError> {
    let mut sim = Sim::new(scn)?;
    sim.check_invariants = false;
    let end = scn.end_ms();
    let first_tp = sim.view_partition().clone();
    let mut acked: Vec<Acked> = vec![];
    let mut reads: Vec<(TopicPartition, u64, String)> = vec![];
    let mut cursor = 0;
    while let Some(t) = sim.next_event_time() {
        if t > end {
            break;
        }
        sim.step();
        if sim.trace_next_seq() == cursor {
            continue;
        }
        let (events, next) = sim.trace_since(cursor, usize::MAX);
        cursor = next;
        for te in events {
            match te.event() {
                Event::ProduceResult {
                    acks,
                    tp,
                    outcome:
                        ProduceOutcome::Ok {
                            offsets: Some((a, b)),
                            ..
                        },
                } if *acks != Acks::Zero => {
                    let tp = tp.clone().unwrap_or_else(|| first_tp.clone());
                    let snap = snapshot_of(&mut sim, &tp)?;
                    for o in *a..=*b {
                        if let Some(record) = record_at_leader(&snap, o) {
                            acked.push(Acked {
                                tp: tp.clone(),
                                record,
                                line: te.text(),
                            });
                        }
                    }
                }
                Event::ConsumerRead {
                    tp,
                    first_offset,
                    values,
                    ..
                } => {
                    let tp = tp.clone().unwrap_or_else(|| first_tp.clone());
                    for (k, v) in values.iter().enumerate() {
                        reads.push((tp.clone(), first_offset + k as u64, v.clone()));
                    }
                }
                Event::ConsumerReadRewritten {
                    first_offset,
                    read,
                    now,
                    ..
                } => {
                    return Ok(Some(Violation {
                        property: Property::ReadRewritten,
                        time_ms: te.time_ms,
                        detail: format!(
                            "the consumer read {} at offset {first_offset}, and the leader now has {} there",
                            read.join(","),
                            now.join(",")
                        ),
                        ack_line: None,
                        lost: None,
                        line: Some(te.text()),
                    }))
                }
                _ => {}
            }
        }
    }
    sim.advance_to(end);
    let now = sim.now();
    if let Some(l) = sim.losses().first() {
        return Ok(Some(Violation {
            property: Property::AcknowledgedLoss,
            time_ms: l.time_ms,
            detail: format!(
                "committed records at offsets {}..{} ({}) left the committed history: {}",
                l.first_offset,
                l.last_offset,
                some_values(&l.values),
                l.cause
            ),
            ack_line: None,
            lost: Some([l.first_offset, l.last_offset]),
            line: None,
        }));
    }
    for tp in sim.partitions() {
        let snap = snapshot_of(&mut sim, &tp)?;
        let Some(leader) = snap.controller.leader else {
            continue;
        };
        let Some(lb) = snap.brokers.iter().find(|b| b.id == leader) else {
            continue;
        };
        let at = |o: u64| lb.records.iter().find(|r| r.offset == o);
        for a in acked.iter().filter(|a| a.tp == tp) {
            let r = &a.record;
            // The same value at the same offset: a producer's retry may have written it
            // again under a later epoch (an idempotent resend), which loses nothing.
            let kept = at(r.offset).is_some_and(|x| x.value == r.value);
            if !kept {
                let there = at(r.offset).map_or("nothing".to_string(), |x| {
                    format!("{} (epoch {})", x.value, x.epoch)
                });
                return Ok(Some(Violation {
                    property: Property::AcknowledgedLoss,
                    time_ms: now,
                    detail: format!(
                        "{} at offset {} (epoch {}) of {tp} was acknowledged, and the leader at the end, broker {leader}, has {there} there",
                        r.value, r.offset, r.epoch
                    ),
                    ack_line: Some(a.line.clone()),
                    lost: None,
                    line: None,
                }));
            }
        }
        for (_, o, v) in reads.iter().filter(|r| r.0 == tp) {
            if at(*o).is_none_or(|x| &x.value != v) {
                return Ok(Some(Violation {
                    property: Property::ReadRewritten,
                    time_ms: now,
                    detail: format!(
                        "the consumer read {v} at offset {o} of {tp}, and the leader at the end, broker {leader}, does not have it there"
                    ),
                    ack_line: None,
                    lost: None,
                    line: None,
                }));
            }
        }
        let leo = lb.log_end_offset;
        for b in &snap.brokers {
            if b.id == leader || !b.hosts_replica || b.process != ProcessState::Running {
                continue;
            }
            let differs = b.records.iter().find(|r| {
                r.offset < leo
                    && !at(r.offset).is_some_and(|x| x.value == r.value && x.epoch == r.epoch)
            });
            let past_end = b.log_end_offset > leo;
            if differs.is_some() || past_end {
                let what = match differs {
                    Some(r) => format!(
                        "broker {} has {} (epoch {}) at offset {} where the leader, broker {leader}, has {}",
                        b.id,
                        r.value,
                        r.epoch,
                        r.offset,
                        at(r.offset).map_or("nothing".to_string(), |x| format!("{} (epoch {})", x.value, x.epoch))
                    ),
                    None => format!(
                        "broker {}'s log of {tp} ends at {} past the leader's (broker {leader}, {leo})",
                        b.id, b.log_end_offset
                    ),
                };
                return Ok(Some(Violation {
                    property: Property::Divergence,
                    time_ms: now,
                    detail: what,
                    ack_line: None,
                    lost: None,
                    line: None,
                }));
            }
        }
    }
    Ok(None)
}

fn snapshot_of(sim: &mut Sim, tp: &TopicPartition) -> Result<Snapshot, ScenarioError> {
    sim.set_view_partition(&tp.topic, tp.partition)?;
    Ok(sim.snapshot())
}

/// The record at `offset` as the leader holds it: the controller's leader, else a broker
/// that thinks it leads, else the replica with the newest epoch there.
fn record_at_leader(snap: &Snapshot, offset: u64) -> Option<Record> {
    let find = |b: &crate::snapshot::BrokerSnapshot| {
        b.records.iter().find(|r| r.offset == offset).cloned()
    };
    let controller_leader = snap.controller.leader;
    snap.brokers
        .iter()
        .filter(|b| Some(b.id) == controller_leader)
        .find_map(find)
        .or_else(|| {
            snap.brokers
                .iter()
                .filter(|b| b.role == ReplicaRole::Leader)
                .find_map(find)
        })
        .or_else(|| snap.brokers.iter().filter_map(find).max_by_key(|r| r.epoch))
}

/// Values for a sentence: all of up to 8, else the first three, `…` and the last.
fn some_values(values: &[String]) -> String {
    if values.len() <= 8 {
        return values.join(",");
    }
    format!(
        "{},…,{}: {} records",
        values[..3].join(","),
        values[values.len() - 1],
        values.len()
    )
}

/// `text` cut to at most `max` characters (the format's limits: [`MAX_TEXT_LEN`] for a
/// note, a title, an expectation's strings; four times that for a description), ending
/// in `…` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The words of a schedule, one fault a line: `at 1.250s for 10000 ms: broker 2 is killed`.
pub fn describe_schedule(s: &[ScheduledFault]) -> Vec<String> {
    s.iter()
        .map(|f| {
            format!(
                "at {} for {} ms: {}",
                crate::trace::format_time(f.at).trim(),
                f.duration_ms,
                f.fault.words().0
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(target_arch = "wasm32"))]
    fn v(t: TimeMs) -> Violation {
        Violation {
            property: Property::Divergence,
            time_ms: t,
            detail: String::new(),
            ack_line: None,
            lost: None,
            line: None,
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn threads_results_merge_to_the_lowest_index() {
        // Found out of order (a later chunk's thread finished first).
        let found = vec![(17, "b", v(2)), (3, "a", v(1)), (9, "c", v(3))];
        assert_eq!(lowest_index(found).map(|r| (r.0, r.1)), Some((3, "a")));
        assert_eq!(lowest_index::<()>(vec![]), None);
    }

    #[test]
    fn long_texts_are_cut_to_the_formats_limit() {
        let long = "x".repeat(MAX_TEXT_LEN + 20);
        let cut = clip(&long, MAX_TEXT_LEN);
        assert_eq!(cut.chars().count(), MAX_TEXT_LEN);
        assert!(cut.ends_with('…'));
        assert_eq!(clip("short", MAX_TEXT_LEN), "short");
    }

    #[test]
    fn many_values_are_summed_up() {
        let v: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        assert_eq!(some_values(&v), "1,2,3,…,20: 20 records");
        assert_eq!(some_values(&v[..2]), "1,2");
    }

    #[test]
    fn by_time_keeps_equal_times_in_their_order() {
        let v = vec![(30, 'a'), (10, 'b'), (30, 'c'), (10, 'd'), (20, 'e')];
        assert_eq!(
            by_time(v, |x| x.0),
            [(10, 'b'), (10, 'd'), (20, 'e'), (30, 'a'), (30, 'c')]
        );
    }

    #[test]
    fn schedule_seeds_differ_by_index_and_seed() {
        assert_ne!(schedule_seed(1, 0), schedule_seed(1, 1));
        assert_ne!(schedule_seed(1, 0), schedule_seed(2, 0));
        assert_eq!(schedule_seed(7, 3), schedule_seed(7, 3));
    }
}
