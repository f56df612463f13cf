//! The playground's controller: owns the simulation, its rewind checkpoints and the playback
//! clock. Plain Rust (no signals, no DOM), so it is tested natively; the app publishes its
//! state to signals (web/src/state.rs).

use watermark_engine::check::{evaluate, Outcome};
use watermark_engine::event::{Event, ProduceOutcome};
use watermark_engine::rewind::Rewind;
use watermark_engine::types::TimeMs;
use watermark_engine::{Action, Config, Scenario, ScenarioError, Sim, TimedAction};

/// Checkpoint interval for scrubbing (simulated ms).
pub const CHECKPOINT_MS: u64 = 2_000;
/// How far one real frame may move the clock at most (ms of simulated time), so a stalled
/// tab does not jump minutes ahead when it comes back.
pub const MAX_FRAME_MS: f64 = 250.0;

/// A mark on the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Marker {
    pub time_ms: TimeMs,
    pub kind: MarkerKind,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkerKind {
    Isr,
    Election,
    Truncation,
    Error,
}

impl MarkerKind {
    pub fn class(self) -> &'static str {
        match self {
            MarkerKind::Isr => "marker isr",
            MarkerKind::Election => "marker election",
            MarkerKind::Truncation => "marker truncation",
            MarkerKind::Error => "marker error",
        }
    }
}

/// An expectation on the timeline: its time, its outcome on the live run (None: not
/// reached yet) and its account (the label, and what did not hold).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExpectMark {
    pub at: TimeMs,
    pub met: Option<bool>,
    pub text: String,
}

/// A cluster the settings' sliders build: brokers, how many racks they are spread over
/// (broker b in rack `RACKS[(b - 1) % racks]`; 0: no `broker.rack`), topics of the same
/// partition count and replication factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub brokers: u32,
    pub racks: u32,
    pub topics: u32,
    pub partitions: u32,
    pub replication_factor: u32,
}

/// The racks' names, in the order brokers are spread over them.
pub const RACKS: [&str; 3] = ["a", "b", "c"];
/// The names of the topics after the first (which keeps the scenario's).
const TOPIC_NAMES: [&str; 10] = [
    "orders", "payments", "clicks", "events", "logs", "metrics", "users", "carts", "views", "audit",
];
/// Most topics and partitions per topic the sliders offer (at most 200 partitions in all,
/// the engine's limit).
pub const MAX_SHAPE_TOPICS: u32 = 10;
pub const MAX_SHAPE_PARTITIONS: u32 = 20;

/// The shape of `s` when the sliders could have built it: a version-1 scenario (one topic
/// of one partition), or a version-2 one whose topics all have the same partition count and
/// replication factor and no manual assignment, with the sliders' racks. None for any
/// other (a preset's or a link's own topics), whose facts the settings state instead.
pub fn shape_of(s: &Scenario) -> Option<Shape> {
    if s.version < 2 {
        return Some(Shape {
            brokers: s.brokers,
            racks: 0,
            topics: 1,
            partitions: 1,
            replication_factor: s.replicas().len() as u32,
        });
    }
    // Read from the topics, not their specs: this runs at every publish, and a spec clones
    // the topic's assignment.
    let first = s.topics.first()?;
    let (partitions, replication_factor) = (first.partition_count(), first.replication_factor());
    // How many of the sliders' racks the brokers use (b-1 mod racks picks each).
    let racks = RACKS
        .iter()
        .filter(|r| s.racks.values().any(|v| v == *r))
        .count() as u32;
    let racks_fit = if s.racks.is_empty() {
        true
    } else {
        s.racks.len() as u32 == s.brokers
            && (1..=s.brokers)
                .all(|b| s.rack_of(b) == Some(RACKS[((b - 1) % racks.max(1)) as usize]))
    };
    let uniform = s.topics.iter().all(|t| {
        t.assignment.is_none()
            && t.partition_count() == partitions
            && t.replication_factor() == replication_factor
    });
    (racks_fit
        && uniform
        && s.topics.len() as u32 <= MAX_SHAPE_TOPICS
        && partitions <= MAX_SHAPE_PARTITIONS)
        .then_some(Shape {
            brokers: s.brokers,
            racks: if s.racks.is_empty() { 0 } else { racks },
            topics: s.topics.len() as u32,
            partitions,
            replication_factor,
        })
}

/// A new cluster of `shape`, keeping `base`'s title, configs and seed (its timeline and
/// expectations belong to the old cluster). One topic of one partition without racks is a
/// version-1 scenario, as before; anything else is version 2. The first topic keeps
/// `base`'s first topic's name (and its topic configs).
pub fn scenario_for(shape: Shape, base: &Scenario) -> Scenario {
    let brokers = shape
        .brokers
        .clamp(1, watermark_engine::config::MAX_BROKERS);
    let rf = shape.replication_factor.clamp(1, brokers);
    let mut s = base.clone();
    s.brokers = brokers;
    s.timeline = vec![];
    s.expect = vec![];
    s.assignment = vec![];
    s.off_script_ms = None;
    let first =
        base.topics
            .first()
            .cloned()
            .unwrap_or_else(|| watermark_engine::scenario::NewTopic {
                name: base.topic.clone(),
                ..Default::default()
            });
    let topics = shape.topics.clamp(1, MAX_SHAPE_TOPICS);
    let partitions = shape.partitions.clamp(1, MAX_SHAPE_PARTITIONS);
    let racks = shape.racks.min(RACKS.len() as u32);
    if topics == 1 && partitions == 1 && racks == 0 {
        s.version = 1;
        s.topic = first.name;
        s.topics = vec![];
        s.racks = Default::default();
        s.replication_factor = Some(rf);
        return s;
    }
    s.version = 2;
    s.topic = watermark_engine::Scenario::default().topic;
    s.replication_factor = None;
    s.racks = Default::default();
    if racks > 0 {
        for b in 1..=brokers {
            s.racks
                .insert(b, RACKS[((b - 1) % racks) as usize].to_string());
        }
    }
    let mut names = vec![first.name.clone()];
    for n in TOPIC_NAMES {
        if names.len() as u32 == topics {
            break;
        }
        if n != first.name {
            names.push(n.to_string());
        }
    }
    s.topics = names
        .into_iter()
        .enumerate()
        .map(|(i, name)| watermark_engine::scenario::NewTopic {
            name,
            partitions: Some(partitions),
            replication_factor: Some(rf),
            assignment: None,
            configs: if i == 0 {
                first.configs
            } else {
                Default::default()
            },
        })
        .collect();
    s
}

/// The scenario a fresh playground starts with: three brokers, replication factor 3,
/// min.insync.replicas=2, with latencies large enough to watch messages travel.
/// The default scenario's title: the page keeps its own name ("Watermark") for it.
pub const DEFAULT_TITLE: &str = "Playground";

pub fn default_scenario() -> Scenario {
    let config = Config {
        min_insync_replicas: 2,
        network_latency_ms: 40,
        controller_latency_ms: 40,
        ..Config::default()
    };
    Scenario {
        title: DEFAULT_TITLE.into(),
        topic: "rep".into(),
        brokers: 3,
        replication_factor: Some(3),
        seed: 1,
        config,
        ..Scenario::default()
    }
}

#[derive(Clone)]
pub struct Playground {
    scenario: Scenario,
    live: Sim,
    rewind: Rewind,
    /// The state shown while scrubbed back; None when following the live run.
    view: Option<Sim>,
    pub playing: bool,
    /// Playing stops at each caption of a walkthrough and at its end (web/src/walkthrough.rs).
    pub pause_at_captions: bool,
    speed: f64,
    /// Fractional simulated ms carried between frames.
    carry_ms: f64,
    markers: Vec<Marker>,
    marker_cursor: u64,
    /// The scenario's expectations by time (indices into `scenario.expect`), and how many
    /// of them the live run has passed.
    expect_order: Vec<usize>,
    expect_passed: usize,
    /// Each expectation's outcome on the live run, once the run passed its time.
    outcomes: Vec<Option<Outcome>>,
    /// When the last action was a config change: its name, and the live run's time and
    /// events processed right after it. Another change of that setting before anything else
    /// happened replaces it (a slider moved step by step by the keyboard is one change, to
    /// the value it settles on).
    last_config: Option<(String, TimeMs, u64)>,
    /// The partition the lanes show, when the person chose one (the cluster overview):
    /// kept on every state the playground shows, the past rebuilt from checkpoints included.
    viewed: Option<(String, u32)>,
}

impl Playground {
    pub fn new(scenario: Scenario) -> Result<Self, ScenarioError> {
        let mut live = Sim::new(&scenario)?;
        live.check_invariants = true;
        // The cluster view draws each message's trail for a moment after it arrived.
        live.record_arrivals = true;
        // A person may cut a broker's power from its lane's menu at any moment.
        live.track_writeback();
        let rewind = Rewind::new(&live, CHECKPOINT_MS);
        let times: Vec<u64> = scenario.expect.iter().map(|e| e.at).collect();
        // The expectations of the runs beside (`run`) are theirs (web/src/beside.rs).
        let mut expect_order = watermark_engine::sort::stable_order(&times);
        expect_order.retain(|&i| scenario.expect[i].run.is_none());
        let outcomes = vec![None; scenario.expect.len()];
        let pg = Playground {
            scenario,
            live,
            rewind,
            view: None,
            playing: false,
            pause_at_captions: true,
            speed: 1.0,
            carry_ms: 0.0,
            markers: vec![],
            marker_cursor: 0,
            expect_order,
            expect_passed: 0,
            outcomes,
            last_config: None,
            viewed: None,
        };
        // Nothing runs yet, not even the events at 0 (the page shows the moment before them);
        // an expectation at 0 is checked when the run first moves.
        Ok(pg)
    }

    /// The scenario's expectations with their outcomes on the live run (None: not reached).
    pub fn outcomes(&self) -> &[Option<Outcome>] {
        &self.outcomes
    }

    /// How many expectations the live run has passed.
    pub fn expectations_passed(&self) -> usize {
        self.expect_passed
    }

    /// The expectations for the timeline, in the scenario's order.
    pub fn expect_marks(&self) -> Vec<ExpectMark> {
        self.scenario
            .expect
            .iter()
            .zip(self.outcomes())
            .enumerate()
            .filter(|(_, (e, _))| e.run.is_none())
            .map(|(i, (e, o))| ExpectMark {
                at: e.at,
                met: o.as_ref().map(Outcome::met),
                text: o.as_ref().map_or_else(
                    || {
                        without_met(
                            &Outcome {
                                index: i,
                                at: e.at,
                                label: e.label.clone(),
                                mismatches: vec![],
                            }
                            .account(),
                        )
                    },
                    Outcome::account,
                ),
            })
            .collect()
    }

    /// Runs the live simulation to `target`, stopping at each expectation on the way to
    /// check it at its own time (the run is the same as one straight advance).
    fn advance_live(&mut self, target: TimeMs) {
        while let Some(&i) = self.expect_order.get(self.expect_passed) {
            let e = &self.scenario.expect[i];
            if e.at > target {
                break;
            }
            self.live.advance_to(e.at);
            self.outcomes[i] = Some(Outcome {
                index: i,
                at: e.at,
                label: e.label.clone(),
                mismatches: evaluate(&self.live, e),
            });
            self.expect_passed += 1;
        }
        self.live.advance_to(target);
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The simulation shown: the scrubbed-back view, or the live run.
    pub fn current(&self) -> &Sim {
        self.view.as_ref().unwrap_or(&self.live)
    }

    /// The furthest time simulated so far (the live run's clock).
    pub fn max_time(&self) -> TimeMs {
        self.live.now()
    }

    pub fn is_scrubbed_back(&self) -> bool {
        self.view.is_some()
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    pub fn set_speed(&mut self, speed: f64) {
        self.speed = speed.clamp(0.1, 100.0);
    }

    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// One animation frame: `real_ms` of wall time passed. Moves the clock by
    /// real_ms × speed when playing (from the view when scrubbed back, replaying the
    /// recorded past until it reaches the live run). Returns true when anything moved.
    pub fn tick(&mut self, real_ms: f64) -> bool {
        if !self.playing {
            return false;
        }
        self.carry_ms += (real_ms * self.speed).min(MAX_FRAME_MS * self.speed.max(1.0));
        let whole = self.carry_ms.floor();
        if whole < 1.0 {
            return false;
        }
        self.carry_ms -= whole;
        let mut target = self.current().now() + whole as u64;
        if let Some(stop) = self.next_stop().filter(|t| *t <= target) {
            target = stop;
            self.playing = false;
            self.carry_ms = 0.0;
        }
        self.seek_or_advance(target);
        true
    }

    /// The scenario's captions (its notes), in timeline order: each a step of its walkthrough.
    pub fn captions(&self) -> Vec<(TimeMs, &str)> {
        self.scenario
            .timeline
            .iter()
            .filter_map(|a| match &a.action {
                Action::Note { text } => Some((a.at, text.as_str())),
                _ => None,
            })
            .collect()
    }

    /// This session with its scenario replaced by `s`, which must replay the same run
    /// (its words changed, not its actions): run to the same live moment, showing the same
    /// moment, at the same speed and pausing as before.
    fn rebuilt(&self, s: Scenario) -> Result<Playground, ScenarioError> {
        let mut pg = Playground::new(s)?;
        pg.pause_at_captions = self.pause_at_captions;
        pg.speed = self.speed;
        pg.playing = self.playing;
        // A session that has not moved yet shows the moment before the events at 0.
        if self.live.events_processed() > 0 {
            pg.run_to(self.live.now());
        }
        if let Some(view) = &self.view {
            pg.seek(view.now());
        }
        Ok(pg)
    }

    /// The session with the person's own caption `text` at `at`, and how many captions it
    /// dropped. A caption is written for a run, so the run shown becomes the scenario's own:
    /// the person's inputs join its timeline and it is no longer off script. The scenario's
    /// captions from the moment the person first acted described a run that no longer
    /// happens; they are dropped, and the count says how many.
    pub fn with_caption(
        &self,
        at: TimeMs,
        text: &str,
    ) -> Result<(Playground, usize), ScenarioError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ScenarioError::new("caption", "a caption needs some text"));
        }
        let action = Action::Note { text: text.into() };
        action.validate("caption", self.scenario.brokers)?;
        let mut s = self.to_scenario();
        let before = s.timeline.len();
        if let Some(off) = s.off_script_ms.take() {
            s.timeline
                .retain(|a| a.at < off || !matches!(a.action, Action::Note { .. }));
        }
        let dropped = before - s.timeline.len();
        // After every other action at that moment (the timeline is in time order), as a
        // caption that describes the moment is read after what happened in it.
        let place = s.timeline.partition_point(|a| a.at <= at);
        s.timeline.insert(place, TimedAction { at, action });
        Ok((self.rebuilt(s)?, dropped))
    }

    /// The session without its `index`-th caption (in time order, as [`Self::captions`]).
    pub fn without_caption(&self, index: usize) -> Result<Playground, ScenarioError> {
        let Some((at, text)) = self.captions().get(index).map(|(a, t)| (*a, t.to_string())) else {
            return Err(ScenarioError::new(
                "caption",
                format!("no caption {index}: there are {}", self.captions().len()),
            ));
        };
        let mut s = self.to_scenario();
        let found = s.timeline.iter().position(|a| {
            a.at == at && matches!(&a.action, Action::Note { text: t } if *t == text)
        });
        if let Some(i) = found {
            s.timeline.remove(i);
        }
        self.rebuilt(s)
    }

    /// Whether the live run has begun (a new session shows the moment before the events at 0).
    pub fn started(&self) -> bool {
        self.live.events_processed() > 0
    }

    /// Sets the runs shown beside this one (the scenario's `compare`): they take no part in
    /// this run, so it goes on as it was. Expectations of runs that are no longer there
    /// are dropped with them.
    pub fn set_compare(
        &mut self,
        compare: Vec<watermark_engine::compare::Variant>,
    ) -> Result<(), ScenarioError> {
        let mut s = self.scenario.clone();
        s.compare = compare;
        s.validate()?;
        self.scenario.compare = s.compare;
        Ok(())
    }

    /// Sets the scenario's title (what the page's title, a share link and an embed show).
    pub fn set_title(&mut self, title: &str) -> Result<(), ScenarioError> {
        let title = title.trim();
        let max = watermark_engine::error::MAX_TEXT_LEN;
        if title.chars().count() > max {
            return Err(ScenarioError::new(
                "title",
                format!("a title may be at most {max} characters"),
            ));
        }
        self.scenario.title = title.into();
        Ok(())
    }

    /// How many of the captions the shown state has run (the step it shows; 0: none yet).
    pub fn captions_run(&self) -> usize {
        let pending = self
            .current()
            .pending_timeline()
            .filter(|a| matches!(a.action, Action::Note { .. }))
            .count();
        self.captions().len().saturating_sub(pending)
    }

    /// Where playing stops next in a walkthrough: the next caption still to run, then the
    /// scenario's end. None when not pausing at captions or the scenario has none.
    pub fn next_stop(&self) -> Option<TimeMs> {
        if !self.pause_at_captions || self.captions().is_empty() {
            return None;
        }
        let end = self.scenario.end_ms();
        self.next_note_time()
            .or_else(|| (self.current().now() < end).then_some(end))
    }

    /// Runs the live simulation forward to `t` (or shows `t` if it is in the past).
    pub fn run_to(&mut self, t: TimeMs) {
        self.seek_or_advance(t);
    }

    fn seek_or_advance(&mut self, target: TimeMs) {
        if target < self.live.now() {
            if let Some(view) = self.view.as_mut() {
                // Playing in the past: move the view on by this frame's events, rather than
                // rebuilding it from a checkpoint every frame.
                if target >= view.now() {
                    self.rewind.advance(view, target);
                } else {
                    self.view = Some(self.past(target));
                }
                return;
            }
        }
        self.view = None;
        self.advance_live(target);
        self.rewind.observe(&self.live);
        self.collect_markers();
    }

    /// Runs the next event (from the shown state).
    pub fn step(&mut self) {
        match &self.view {
            Some(v) => {
                let next = v.next_event_time().unwrap_or(v.now());
                self.seek(next.max(v.now() + 1).min(self.live.now()));
            }
            None => {
                // Every event of the next millisecond: a step never stops between events
                // that happen at the same time, so a moment is always a whole millisecond
                // and a shared link (?t=MS) shows exactly it.
                if let Some(t) = self.live.next_event_time() {
                    self.advance_live(t);
                }
                self.rewind.observe(&self.live);
                self.collect_markers();
            }
        }
    }

    /// When the person first acted in this run (an input recorded on top of the scenario's
    /// timeline): from then on the run is no longer the scenario's own.
    /// A scenario saved or shared from a session that had left its script says since when
    /// (`off_script_ms`), so that a reload still knows.
    pub fn first_input_ms(&self) -> Option<TimeMs> {
        let input = self.rewind.inputs().map(|(at, _)| at).min();
        match (input, self.scenario.off_script_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The time of the next note (caption) still to run on the shown state's timeline.
    pub fn next_note_time(&self) -> Option<TimeMs> {
        self.current()
            .pending_timeline()
            .find(|a| matches!(a.action, Action::Note { .. }))
            .map(|a| a.at)
    }

    /// The state at `t` rebuilt from the checkpoints, showing the chosen partition.
    fn past(&self, t: TimeMs) -> Sim {
        let mut sim = self.rewind.state_at(t);
        self.keep_view(&mut sim);
        sim
    }

    /// Makes `sim` show the partition the person chose (a checkpoint shows the one chosen
    /// when it was taken).
    fn keep_view(&self, sim: &mut Sim) {
        if let Some((topic, partition)) = &self.viewed {
            // The same cluster: the partition is there.
            let _ = sim.set_view_partition(topic, *partition);
        }
    }

    /// Shows partition `topic`-`partition` in the lanes, now and at every moment scrubbed to.
    pub fn set_view_partition(&mut self, topic: &str, partition: u32) -> Result<(), ScenarioError> {
        self.live.set_view_partition(topic, partition)?;
        self.viewed = Some((topic.to_string(), partition));
        if let Some(mut v) = self.view.take() {
            self.keep_view(&mut v);
            self.view = Some(v);
        }
        Ok(())
    }

    /// Shows the state at time `t` (clamped to what has been simulated).
    pub fn seek(&mut self, t: TimeMs) {
        if t >= self.live.now() {
            self.view = None;
        } else {
            self.view = Some(self.past(t));
        }
    }

    /// Applies an action now. When scrubbed back, the future after the shown moment is
    /// discarded first; the returned note says so.
    pub fn act(&mut self, action: &Action) -> Result<Option<String>, ScenarioError> {
        let mut note = None;
        let last = self.last_config.take();
        if let (Action::SetConfig { name, .. }, Some((last, at, events)), None) =
            (action, last, &self.view)
        {
            let untouched = at == self.live.now() && events == self.live.events_processed();
            if *name == last && untouched {
                // The same setting again at the same moment: undo the previous change first.
                action.validate("action", self.scenario.brokers)?;
                if let Some(mut sim) = self.rewind.undo_last_input() {
                    self.keep_view(&mut sim);
                    self.live = sim;
                    self.marker_cursor = self.marker_cursor.min(self.live.trace_next_seq());
                }
            }
        }
        if let Some(view) = self.view.take() {
            let t = view.now();
            let lost = self.live.now() - t;
            // Check the action against the view before discarding anything.
            action.validate("action", self.scenario.brokers)?;
            self.rewind.discard_after(t);
            self.live = view;
            self.markers.retain(|m| m.time_ms <= t);
            self.marker_cursor = self.live.trace_next_seq();
            // Expectations after the moment are to be checked again on the new future.
            self.expect_passed = self
                .expect_order
                .partition_point(|&i| self.scenario.expect[i].at <= t);
            for &i in &self.expect_order[self.expect_passed..] {
                self.outcomes[i] = None;
            }
            note = Some(format!(
                "Acting at {} discarded the {} ms that had been simulated after it.",
                crate::geometry::format_clock(t),
                lost
            ));
        }
        // An input at time t comes after every event at t (as timeline actions do), so the
        // session replays the same from its scenario.
        let now = self.live.now();
        self.advance_live(now);
        self.rewind.apply(&mut self.live, action)?;
        if let Action::SetConfig { name, .. } = action {
            self.last_config = Some((name.clone(), now, self.live.events_processed()));
        }
        self.collect_markers();
        Ok(note)
    }

    /// The session as a scenario: the starting scenario, its own timeline, and every input
    /// applied since, at its time. Running it gives the same state at every moment.
    pub fn to_scenario(&self) -> Scenario {
        let mut s = self.scenario.clone();
        s.timeline
            .extend(self.rewind.inputs().map(|(at, a)| TimedAction {
                at,
                action: a.clone(),
            }));
        watermark_engine::scenario::sort_timeline(&mut s.timeline);
        s.end_ms = Some(self.live.now().max(s.end_ms.unwrap_or(0)));
        s.off_script_ms = self.first_input_ms();
        s
    }

    fn collect_markers(&mut self) {
        let (events, next) = self.live.trace_since(self.marker_cursor, usize::MAX);
        self.marker_cursor = next;
        for e in events {
            // By the event, never its text: a reworded line cannot move a marker.
            let kind = match e.event() {
                Event::IsrUpdated { .. } => Some(MarkerKind::Isr),
                Event::NewLeader { .. } | Event::PartitionHasNoLeader { .. } => {
                    Some(MarkerKind::Election)
                }
                Event::TruncatingToEpochEndOffset { .. }
                | Event::LogTruncated {
                    below_high_watermark: Some(_),
                    ..
                } => Some(MarkerKind::Truncation),
                Event::CommittedRecordsLost { .. }
                | Event::ConsumerReadRewritten { .. }
                | Event::InvariantBroken { .. } => Some(MarkerKind::Error),
                // A write that failed (not a retry: the producer tries again).
                Event::ProduceResult { outcome, .. }
                    if !matches!(
                        outcome,
                        ProduceOutcome::Sent { .. } | ProduceOutcome::Ok { .. }
                    ) =>
                {
                    Some(MarkerKind::Error)
                }
                _ => None,
            };
            if let Some(kind) = kind {
                self.markers.push(Marker {
                    time_ms: e.time_ms,
                    kind,
                    text: e.text(),
                });
            }
        }
        if self.markers.len() > 2_000 {
            let excess = self.markers.len() - 2_000;
            self.markers.drain(..excess);
        }
    }
}

/// `text` without its ": met"s: what `text.replace(": met", "")` gives, found byte by byte
/// (core's substring searcher and its string-slicing panic were about 5 kB of the wasm; the
/// engine's `check::holds` says why). The pattern is ASCII, so a match starts and ends
/// between characters.
fn without_met(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skip = 0;
    for (i, c) in text.char_indices() {
        if skip > 0 {
            skip -= 1;
        } else if text.as_bytes()[i..].starts_with(b": met") {
            skip = 4;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod shape_tests {
    use super::*;

    #[test]
    fn the_sliders_cluster_of_one_partition_is_a_version_1_scenario() {
        let base = default_scenario();
        assert_eq!(
            shape_of(&base),
            Some(Shape {
                brokers: 3,
                racks: 0,
                topics: 1,
                partitions: 1,
                replication_factor: 3
            })
        );
        let s = scenario_for(
            Shape {
                brokers: 5,
                racks: 0,
                topics: 1,
                partitions: 1,
                replication_factor: 2,
            },
            &base,
        );
        assert_eq!(s.version, 1);
        assert_eq!(
            (s.brokers, s.replication_factor, s.topic.as_str()),
            (5, Some(2), "rep")
        );
        assert_eq!(
            shape_of(&s),
            Some(Shape {
                brokers: 5,
                racks: 0,
                topics: 1,
                partitions: 1,
                replication_factor: 2
            })
        );
    }

    #[test]
    fn more_topics_partitions_or_racks_make_a_version_2_cluster_that_reads_back() {
        let base = default_scenario();
        let shape = Shape {
            brokers: 12,
            racks: 3,
            topics: 4,
            partitions: 6,
            replication_factor: 3,
        };
        let s = scenario_for(shape, &base);
        assert_eq!(s.version, 2);
        let names: Vec<&str> = s.topics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["rep", "orders", "payments", "clicks"]);
        assert_eq!(s.rack_of(1), Some("a"));
        assert_eq!(s.rack_of(2), Some("b"));
        assert_eq!(s.rack_of(3), Some("c"));
        assert_eq!(s.rack_of(4), Some("a"));
        assert_eq!(shape_of(&s), Some(shape));
        // It is a valid scenario, with 24 partitions, three replicas each over three racks.
        let sim = watermark_engine::run(&s, true).expect("runs");
        let o = sim.overview();
        assert_eq!(o.partitions.len(), 24);
        for row in &o.partitions {
            let mut racks: Vec<Option<&str>> =
                row.replicas.iter().map(|c| s.rack_of(c.broker)).collect();
            racks.sort();
            racks.dedup();
            assert_eq!(
                racks.len(),
                3,
                "{} spans every rack (StripedReplicaPlacer)",
                row.name()
            );
        }
        // Back to one partition: version 1 again.
        let one = scenario_for(
            Shape {
                brokers: 3,
                racks: 0,
                topics: 1,
                partitions: 1,
                replication_factor: 3,
            },
            &s,
        );
        assert_eq!(one.version, 1);
        assert!(one.topics.is_empty() && one.racks.is_empty());
        assert!(watermark_engine::run(&one, true).is_ok());
    }

    #[test]
    fn a_cluster_the_sliders_could_not_build_has_no_shape() {
        let shape = Shape {
            brokers: 4,
            racks: 2,
            topics: 2,
            partitions: 3,
            replication_factor: 2,
        };
        let mut s = scenario_for(shape, &default_scenario());
        assert_eq!(shape_of(&s), Some(shape), "two racks read back");
        s.topics[1].partitions = Some(4);
        assert_eq!(shape_of(&s), None, "topics of different partition counts");
        let p = watermark_engine::presets::preset("fetcher-threads").unwrap();
        assert_eq!(
            shape_of(&p).is_some(),
            p.version < 2 || p.topics.iter().all(|t| t.assignment.is_none())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use watermark_engine::scenario::ProduceSpec;

    fn produce(values: &[&str]) -> Action {
        Action::Produce(ProduceSpec {
            values: values.iter().map(|s| s.to_string()).collect(),
            ..ProduceSpec::default()
        })
    }

    #[test]
    fn nothing_moves_while_paused_and_time_scales_with_speed() {
        let mut p = Playground::new(default_scenario()).unwrap();
        assert!(!p.tick(100.0));
        assert_eq!(p.max_time(), 0);
        p.playing = true;
        p.set_speed(2.0);
        assert!(p.tick(100.0));
        assert_eq!(p.max_time(), 200);
        p.set_speed(0.1);
        p.tick(5.0); // 0.5 ms: carried, not lost
        p.tick(5.0);
        assert_eq!(p.max_time(), 201);
        p.set_speed(1000.0);
        assert_eq!(p.speed(), 100.0, "speed is clamped to 100×");
        p.tick(10_000.0);
        assert_eq!(p.max_time(), 201 + 25_000, "a long frame is capped");
    }

    #[test]
    fn scrubbing_back_and_acting_discards_the_future() {
        let mut p = Playground::new(default_scenario()).unwrap();
        p.act(&produce(&["a"])).unwrap();
        p.playing = true;
        for _ in 0..100 {
            p.tick(100.0);
        }
        assert_eq!(p.max_time(), 10_000);
        p.act(&produce(&["b"])).unwrap();
        p.seek(3_000);
        assert!(p.is_scrubbed_back());
        assert_eq!(p.current().now(), 3_000);
        assert_eq!(p.max_time(), 10_000, "the live run is kept while scrubbing");
        let note = p
            .act(&Action::Freeze { broker: 2 })
            .unwrap()
            .expect("a note");
        assert!(note.contains("discarded the 7000 ms"), "{note}");
        assert!(!p.is_scrubbed_back());
        assert_eq!(p.max_time(), 3_000);
        let snap = p.current().snapshot();
        assert!(
            snap.broker(1)
                .unwrap()
                .records
                .iter()
                .all(|r| r.value != "b"),
            "the later write is gone"
        );
        assert_eq!(
            snap.broker(2).unwrap().process,
            watermark_engine::types::ProcessState::Frozen
        );
    }

    #[test]
    fn step_runs_one_moment_and_playing_from_the_past_catches_up() {
        let mut p = Playground::new(default_scenario()).unwrap();
        let before = p.current().events_processed();
        let t = p.current().next_event_time().unwrap();
        p.step();
        assert!(p.current().events_processed() > before);
        assert_eq!(p.current().now(), t);
        assert!(
            p.current().next_event_time().unwrap() > t,
            "every event at that millisecond ran"
        );
        p.playing = true;
        for _ in 0..50 {
            p.tick(100.0);
        }
        p.seek(1_000);
        for _ in 0..100 {
            p.tick(100.0);
            if p.is_scrubbed_back() {
                // The view moves on frame by frame; each frame is what a rebuild gives.
                let rebuilt = p.rewind.state_at(p.current().now());
                assert_eq!(format!("{:?}", p.current()), format!("{rebuilt:?}"));
            }
        }
        assert!(
            !p.is_scrubbed_back(),
            "playing past the live clock returns to the live run"
        );
        assert_eq!(p.max_time(), 11_000);
    }

    #[test]
    fn a_caption_of_ones_own_makes_the_run_the_scenarios_and_drops_the_stale_ones() {
        let preset = watermark_engine::presets::preset("frozen-follower").unwrap();
        let script: Vec<(u64, String)> = preset
            .timeline
            .iter()
            .filter_map(|a| match &a.action {
                Action::Note { text } => Some((a.at, text.clone())),
                _ => None,
            })
            .collect();
        let mut p = Playground::new(preset).unwrap();
        p.run_to(10_000);
        p.act(&Action::Kill { broker: 1 }).unwrap();
        p.run_to(14_000);
        p.seek(12_500);
        assert_eq!(p.first_input_ms(), Some(10_000));
        let before = p.current().snapshot();
        let lines = p.live.transcript();

        let (q, dropped) = p
            .with_caption(12_500, "  Broker 1 is gone; 2 leads.  ")
            .unwrap();
        let kept: Vec<(u64, String)> = script
            .iter()
            .filter(|(at, _)| *at < 10_000)
            .cloned()
            .collect();
        assert_eq!(dropped, script.len() - kept.len());
        assert!(dropped > 0, "the preset has captions after 10 s");
        let mut expected = kept.clone();
        expected.push((12_500, "Broker 1 is gone; 2 leads.".into()));
        let owned = |pg: &Playground| -> Vec<(u64, String)> {
            pg.captions()
                .iter()
                .map(|(a, t)| (*a, t.to_string()))
                .collect()
        };
        assert_eq!(owned(&q), expected);
        // The same run, at the same moments; now the scenario's own, so no caption is stale.
        assert_eq!(q.first_input_ms(), None);
        assert_eq!((q.live.now(), q.current().now()), (14_000, 12_500));
        assert_eq!(q.current().snapshot(), before);
        let mut with_note = q.live.transcript();
        let note = with_note
            .iter()
            .position(|l| l.ends_with("# Broker 1 is gone; 2 leads."))
            .expect("the caption is in the transcript");
        with_note.remove(note);
        let stale: Vec<String> = script
            .iter()
            .filter(|(at, _)| *at >= 10_000 && *at <= 14_000)
            .map(|(_, t)| format!("# {t}"))
            .collect();
        let old: Vec<String> = lines
            .into_iter()
            .filter(|l| !stale.iter().any(|n| l.ends_with(n.as_str())))
            .collect();
        assert_eq!(with_note, old);

        // Removing it gives the same run without it; a caption needs text, within limits.
        let r = q.without_caption(kept.len()).unwrap();
        assert_eq!(owned(&r), kept);
        assert_eq!(r.current().snapshot(), before);
        assert!(q.without_caption(99).is_err());
        let field = |r: Result<(Playground, usize), ScenarioError>| r.err().map(|e| e.field);
        assert_eq!(field(p.with_caption(0, "  ")).as_deref(), Some("caption"));
        let long = "x".repeat(watermark_engine::error::MAX_TEXT_LEN + 1);
        assert_eq!(
            field(p.with_caption(0, &long)).as_deref(),
            Some("caption.text")
        );
        let mut t = Playground::new(default_scenario()).unwrap();
        assert_eq!(t.set_title(&long).unwrap_err().field, "title");
        t.set_title(" Mine ").unwrap();
        assert_eq!(t.to_scenario().title, "Mine");
    }

    #[test]
    fn a_session_replays_exactly_from_its_scenario() {
        let mut p = Playground::new(default_scenario()).unwrap();
        p.playing = true;
        let inputs = [
            (300, produce(&["a", "b"])),
            (1200, Action::Freeze { broker: 3 }),
            (1700, produce(&["c"])),
            (9000, Action::Thaw { broker: 3 }),
            (9000, Action::Kill { broker: 1 }),
            (15000, produce(&["d"])),
        ];
        let mut i = 0;
        while p.max_time() < 30_000 {
            p.tick(50.0);
            while i < inputs.len() && inputs[i].0 <= p.max_time() {
                p.act(&inputs[i].1).unwrap();
                i += 1;
            }
            if p.max_time() == 5_000 {
                p.step(); // a step into the middle of a millisecond, then an input
                p.act(&Action::Consume {
                    max_records: None,
                    from_beginning: true,
                    topic: None,
                    partition: None,
                })
                .unwrap();
            }
        }
        let scenario = p.to_scenario();
        let mut replay =
            Sim::new(&Scenario::from_json(&scenario.to_json_pretty()).unwrap()).unwrap();
        replay.advance_to(p.max_time());
        assert_eq!(
            serde_json::to_string(&replay.snapshot()).unwrap(),
            serde_json::to_string(&p.current().snapshot()).unwrap()
        );
        assert_eq!(replay.transcript(), p.current().transcript());
    }

    #[test]
    fn expectations_are_checked_when_the_live_run_passes_them() {
        let scenario = watermark_engine::presets::preset("frozen-follower").unwrap();
        let n = scenario.expect.len();
        let mut p = Playground::new(scenario.clone()).unwrap();
        assert!(
            p.outcomes().iter().all(Option::is_none),
            "none reached at 0"
        );
        p.run_to(16_000);
        let reached: Vec<bool> = p.outcomes().iter().map(Option::is_some).collect();
        let due: Vec<bool> = scenario.expect.iter().map(|e| e.at <= 16_000).collect();
        assert_eq!(reached, due);
        // Played frame by frame to the end (through its captions), each is met, as
        // `watermark check` finds.
        p.pause_at_captions = false;
        p.playing = true;
        p.set_speed(100.0);
        while p.max_time() < scenario.end_ms() {
            p.tick(16.0);
        }
        assert_eq!(p.outcomes().len(), n);
        for o in p.outcomes() {
            let o = o.as_ref().expect("reached");
            assert!(o.met(), "{}", o.account());
        }
        assert_eq!(
            p.outcomes().iter().flatten().cloned().collect::<Vec<_>>(),
            watermark_engine::check::check(&scenario).unwrap(),
            "the same outcomes as a straight run"
        );
        // Acting in the past forgets what came after; the new future is checked anew.
        p.seek(15_000);
        p.act(&Action::Kill { broker: 1 }).unwrap();
        let after: Vec<bool> = p.outcomes().iter().map(Option::is_some).collect();
        let kept: Vec<bool> = scenario.expect.iter().map(|e| e.at <= 15_000).collect();
        assert_eq!(after, kept);
        p.run_to(30_000);
        let unmet = p.outcomes().iter().flatten().filter(|o| !o.met()).count();
        assert!(
            unmet > 0,
            "killing the leader breaks what the article showed"
        );
    }

    #[test]
    fn stepping_checks_an_expectation_at_its_own_time() {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":100,"action":"produce","values":["a"]}],
                "end_ms":2000,"expect":[{"at":50,"leo":0},{"at":103,"leo":1}]}"#,
        )
        .unwrap();
        let mut p = Playground::new(s).unwrap();
        while p.max_time() < 2_000 {
            p.step();
        }
        for o in p.outcomes() {
            let o = o.as_ref().expect("reached");
            assert!(o.met(), "{}", o.account());
        }
    }

    fn set(name: &str, v: u64) -> Action {
        Action::SetConfig {
            name: name.into(),
            value: v.into(),
        }
    }

    #[test]
    fn a_setting_changed_again_at_the_same_moment_is_one_change() {
        let mut p = Playground::new(default_scenario()).unwrap();
        p.run_to(1_000);
        let lines = p.current().transcript().len();
        for v in [3, 1, 2, 3] {
            p.act(&set("min.insync.replicas", v)).unwrap();
        }
        let t = p.current().transcript();
        assert_eq!(t.len(), lines + 1, "one line: {:?}", &t[lines..]);
        assert!(
            t[lines].ends_with("--add-config min.insync.replicas=3"),
            "{}",
            t[lines]
        );
        assert_eq!(p.current().config().min_insync_replicas, 3);
        assert_eq!(p.to_scenario().timeline.len(), 1);
        // Another setting, or the same one once time moved on, is a change of its own.
        p.act(&set("replica.lag.time.max.ms", 5_000)).unwrap();
        p.act(&set("min.insync.replicas", 2)).unwrap();
        p.run_to(1_200);
        p.act(&set("min.insync.replicas", 1)).unwrap();
        assert_eq!(p.to_scenario().timeline.len(), 4);
        // The session replays to the same state.
        let mut replay = Sim::new(&p.to_scenario()).unwrap();
        replay.advance_to(p.max_time());
        assert_eq!(replay.transcript(), p.current().transcript());
    }

    #[test]
    fn a_saved_session_that_left_the_script_still_says_when() {
        let preset = watermark_engine::presets::preset("frozen-follower").unwrap();
        let mut p = Playground::new(preset.clone()).unwrap();
        p.run_to(16_000);
        assert_eq!(p.first_input_ms(), None);
        assert_eq!(p.to_scenario().off_script_ms, None, "on script");
        p.act(&Action::Kill { broker: 1 }).unwrap();
        p.run_to(20_000);
        let saved = Scenario::from_json(&p.to_scenario().to_json_pretty()).unwrap();
        assert_eq!(saved.off_script_ms, Some(16_000));
        let reloaded = Playground::new(saved).unwrap();
        assert_eq!(reloaded.first_input_ms(), Some(16_000));
        // Acting earlier in the reloaded session moves it back.
        let mut r = reloaded;
        r.run_to(20_000);
        r.seek(9_000);
        r.act(&Action::Freeze { broker: 2 }).unwrap();
        assert_eq!(r.first_input_ms(), Some(9_000));
    }

    #[test]
    fn markers_record_isr_changes_and_elections() {
        let mut p = Playground::new(default_scenario()).unwrap();
        p.act(&Action::Kill { broker: 1 }).unwrap();
        p.playing = true;
        p.set_speed(100.0);
        for _ in 0..40 {
            p.tick(50.0);
        }
        assert!(
            p.markers().iter().any(|m| m.kind == MarkerKind::Election),
            "{:?}",
            p.markers()
        );
    }

    /// `without_met` is `replace(": met", "")`, also with the text inside a label and beside
    /// characters of several bytes.
    #[test]
    fn without_met_is_replace() {
        for text in [
            "",
            ": met",
            "expect[0] at 1.000s: met",
            "expect[2] at 16.150s (\"a: met\u{e9}: me: met: met\"): met",
            "\u{e9}: met\u{1f600}:: met: mett",
            ": me",
        ] {
            assert_eq!(without_met(text), text.replace(": met", ""), "{text:?}");
        }
    }

    /// The markers come from typed events: on every preset they are exactly where the old
    /// rule, which read the lines' text, put them (the rule is kept here as the oracle),
    /// and every kind of marker occurs.
    #[test]
    fn markers_are_placed_by_event_as_the_text_rule_placed_them() {
        use watermark_engine::event::{Level, TraceKind};
        let old_rule = |e: &watermark_engine::TraceEvent| {
            let text = e.text();
            match e.kind() {
                TraceKind::Isr if text.contains("ISR updated") => Some(MarkerKind::Isr),
                TraceKind::Election => Some(MarkerKind::Election),
                TraceKind::Truncation
                    if text.contains("Truncating partition")
                        || text.contains("below high watermark") =>
                {
                    Some(MarkerKind::Truncation)
                }
                TraceKind::Loss | TraceKind::Violation => Some(MarkerKind::Error),
                TraceKind::Produce if e.level() == Level::Error => Some(MarkerKind::Error),
                _ => None,
            }
        };
        let mut kinds = std::collections::BTreeSet::new();
        for preset in watermark_engine::presets::PRESETS {
            let scenario = Scenario::from_json(preset.json).unwrap();
            let end = scenario.end_ms();
            let mut p = Playground::new(scenario).unwrap();
            p.run_to(end);
            let mut expected = vec![];
            for e in p.live.trace_events() {
                if let Some(kind) = old_rule(e) {
                    expected.push((e.time_ms, kind, e.text()));
                }
            }
            let got: Vec<_> = p
                .markers()
                .iter()
                .map(|m| (m.time_ms, m.kind, m.text.clone()))
                .collect();
            assert_eq!(got, expected, "{}", preset.name);
            for (_, kind, _) in got {
                kinds.insert(format!("{kind:?}"));
            }
        }
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            ["Election", "Error", "Isr", "Truncation"]
        );
    }
}
