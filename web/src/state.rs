//! The app's shared state: the playground controller (not a signal) and the signals that
//! carry its state to the components.
//!
//! What changes how often decides which signal carries it, so that a playing page touches
//! as little of the DOM as it can (BENCHMARKS.md, "UI"):
//! - `clock`: the shown simulated time, every frame (packets, countdowns, lag bars);
//! - `snap`: the shown state, replaced only when it changed (an event ran, an action, a
//!   seek, a new scenario);
//! - `status`: the controls' state (playing, speed, config, markers), when it changed;
//! - `log`: the trace lines, at most a few times a second while playing.

use std::sync::Arc;

use leptos::prelude::*;
use watermark_engine::snapshot::Snapshot;
use watermark_engine::trace::TraceEvent;
use watermark_engine::types::BrokerId;
use watermark_engine::{Action, Config, Scenario};

use crate::model::{ExpectMark, Marker, Playground};

/// The shown simulated time and the furthest time simulated so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Clock {
    pub now: u64,
    pub max_time: u64,
}

/// How finely [`Ctx::tick`] follows the clock.
pub const TICK_MS: u64 = 100;

/// The clock rounded down to [`TICK_MS`].
pub fn tick_of(now: u64) -> u64 {
    now - now % TICK_MS
}

/// Everything besides the snapshot and the clock that the controls show.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub playing: bool,
    pub speed: f64,
    pub scrubbed: bool,
    pub markers: Vec<Marker>,
    /// The scenario's expectations and their outcomes on the live run.
    pub expect: Vec<ExpectMark>,
    pub config: Config,
    pub brokers: u32,
    /// The replication factor of the topic the lanes show.
    pub replication_factor: u32,
    /// A version-2 cluster: the topic the lanes show (the settings speak of it), and its
    /// own `min.insync.replicas` when it overrides the broker's. Empty for version 1.
    pub topic: String,
    pub topic_min_isr: Option<u32>,
    /// The cluster's shape, when the settings' sliders could have built it.
    pub shape: Option<crate::model::Shape>,
    /// The consume row's client.rack choice, as the options' markup (empty without racks):
    /// none (Kafka's default, the empty string), then the cluster's racks in name order, the
    /// consumer's `client.rack` now selected.
    pub rack_options: String,
    /// Version 2: the value size of a record whose produce gives none (`record_size_bytes`
    /// now); 0 in version 1, where a record is its value's bytes.
    pub record_size: u32,
}

impl Status {
    /// `min.insync.replicas` as the shown topic has it: its own, else the broker's.
    pub fn min_isr(&self) -> u32 {
        self.topic_min_isr
            .unwrap_or(self.config.min_insync_replicas)
    }
}

/// What identifies the shown state apart from the clock: it changes when an event runs, a
/// trace line or an action is recorded, or the view moves between the live run and the past.
/// (events run, trace length, timeline actions pending, scrubbed back, expectations passed)
pub(crate) type SnapKey = (u64, u64, usize, bool, usize);

#[derive(Clone, Copy)]
pub struct Ctx {
    pub pg: StoredValue<Playground>,
    pub snap: RwSignal<Arc<Snapshot>>,
    pub clock: RwSignal<Clock>,
    /// The shown time rounded down to [`TICK_MS`], set only when that changes: for what
    /// moves slower than the frames (countdowns, lag bars), so that their effects do not
    /// wake on every frame as the clock's do.
    pub tick: RwSignal<u64>,
    pub status: RwSignal<Status>,
    /// The trace up to the shown moment (newest last, bounded).
    pub log: RwSignal<Arc<Vec<TraceEvent>>>,
    /// The kinds of line the event logs hide (the filters under "Event log", a set of
    /// `panels::kind_bit`s): the session's own and each run beside's.
    pub log_hidden: RwSignal<u64>,
    /// A message for the person: what an action did or why it was refused.
    pub notice: RwSignal<Option<String>>,
    /// Width available to the cluster view, in whole pixels (it is always whole: the
    /// document's width less whole margins): a u64, the type of another signal (each signal
    /// type is code of its own).
    pub width: RwSignal<u64>,
    /// The brokers of the shown cluster, in order: for the lanes and their menus (one memo
    /// for both).
    pub broker_ids: Memo<Vec<BrokerId>>,
    /// The scenario's title: for the page's title, an embed's heading and the Share panel's
    /// field (one memo for all three).
    pub title: Memo<String>,
    /// Embedded in another page: never touches storage or the URL.
    pub embed: bool,
    /// The runs beside the session's own (the scenario's `compare`, web/src/beside.rs):
    /// the same timeline under another configuration or protocol, on the same clock.
    pub beside_runs: StoredValue<Vec<crate::beside::Beside>>,
    /// What the page shows of each run beside: its title, describe line and differences.
    pub beside: RwSignal<Vec<crate::beside::BesideView>>,
    /// Each run beside's shown state, for its cluster view (one signal a run).
    pub beside_snaps: [RwSignal<Arc<Snapshot>>; watermark_engine::compare::MAX_VARIANTS],
    /// Counts the refreshes of the runs beside's event logs and read-outs: at the event
    /// log's pace (at most every [`LOG_REFRESH_MS`] while playing; at once on a pause, an
    /// action or a seek), when a run's state changed.
    pub beside_logs: RwSignal<u64>,
    /// What publishing and saving remember between calls: one stored value, not one per
    /// field (each stored value's type is code of its own).
    book: StoredValue<Book>,
}

/// What [`Ctx`] remembers between publishing and saving.
#[derive(Clone, Copy)]
struct Book {
    /// The session moved (played) since it was last saved.
    dirty: bool,
    /// Local storage holds this playground's scenario and inputs (saved after each action, or
    /// restored from there): a save while playing need only write how far it has run.
    stored_is_current: bool,
    snap_key: Option<SnapKey>,
    /// (trace sequence, shown time) the log was last built at; and the real time (ms) of it.
    log_seq: (u64, u64),
    log_at: f64,
    /// The log has lines not shown yet (it was refreshed too recently), or a run beside
    /// changed since its log and read-outs were last refreshed (`beside_pending`).
    log_pending: bool,
    beside_pending: bool,
}

/// Most trace lines the event log keeps on screen.
pub const LOG_LINES: usize = 400;

/// While playing, the event log and what reads it (captions, results, narration) are
/// refreshed at most this often (real ms); a pause, an action or a seek refreshes them at
/// once.
pub const LOG_REFRESH_MS: f64 = 250.0;

pub(crate) fn snap_key(pg: &Playground) -> SnapKey {
    let sim = pg.current();
    (
        sim.events_processed(),
        sim.trace_next_seq(),
        sim.pending_timeline().count(),
        pg.is_scrubbed_back(),
        pg.expectations_passed(),
    )
}

/// The newest [`LOG_LINES`] trace lines of `pg`'s shown state, oldest first: the event log's
/// lines, of the session's own run and of each run beside.
pub(crate) fn newest_trace(pg: &Playground) -> Vec<TraceEvent> {
    let mut newest: Vec<TraceEvent> = pg
        .current()
        .trace_events()
        .rev()
        .take(LOG_LINES)
        .cloned()
        .collect();
    newest.reverse();
    newest
}

fn clock_of(pg: &Playground) -> Clock {
    Clock {
        now: pg.current().now(),
        max_time: pg.max_time(),
    }
}

fn status_of(pg: &Playground) -> Status {
    let sim = pg.current();
    let scenario = pg.scenario();
    let (mut replication_factor, mut topic, mut topic_min_isr) =
        (scenario.replicas().len() as u32, String::new(), None);
    if scenario.version >= 2 {
        let shown = &sim.view_partition().topic;
        if let Some(t) = scenario.topics.iter().find(|t| t.name == *shown) {
            replication_factor = t.replication_factor();
            topic = t.name.clone();
            topic_min_isr = t.configs.min_insync_replicas;
        }
    }
    // Sorted by insertion (no sort code for a handful of names).
    let mut racks: Vec<&String> = Vec::new();
    for r in scenario.racks.values() {
        let at = racks.partition_point(|n| *n < r);
        if racks.get(at) != Some(&r) {
            racks.insert(at, r);
        }
    }
    // Rack names need no escaping (Kafka's legal characters).
    let now = sim.client_rack().unwrap_or_default();
    let mut rack_options = String::new();
    for r in racks {
        if rack_options.is_empty() {
            rack_options.push_str("<option value=\"\">none</option>");
        }
        let sel = if r == now { " selected" } else { "" };
        rack_options.push_str(&format!("<option{sel}>{r}</option>"));
    }
    Status {
        playing: pg.playing,
        speed: pg.speed(),
        scrubbed: pg.is_scrubbed_back(),
        markers: pg.markers().to_vec(),
        expect: pg.expect_marks(),
        config: sim.config().clone(),
        brokers: scenario.brokers,
        replication_factor,
        topic,
        topic_min_isr,
        shape: crate::model::shape_of(scenario),
        rack_options,
        record_size: sim.record_size_bytes().unwrap_or(0),
    }
}

impl Ctx {
    pub fn new(pg: Playground, width: u64, embed: bool) -> Self {
        let snap = RwSignal::new(Arc::new(
            pg.current().snapshot_tail(crate::geometry::SNAPSHOT_TAIL),
        ));
        let clock = clock_of(&pg);
        let status = RwSignal::new(status_of(&pg));
        let (runs, note) = crate::beside::build(&pg);
        let pg = StoredValue::new(pg);
        let ctx = Ctx {
            pg,
            snap,
            clock: RwSignal::new(clock),
            tick: RwSignal::new(tick_of(clock.now)),
            status,
            log: RwSignal::new(Arc::new(vec![])),
            log_hidden: RwSignal::new(crate::panels::kind_bit(
                watermark_engine::event::TraceKind::Broker,
            )),
            notice: RwSignal::new(None),
            width: RwSignal::new(width),
            broker_ids: Memo::new(move |_| {
                snap.with(|s| s.brokers.iter().map(|b| b.id).collect::<Vec<_>>())
            }),
            // Every publish sets the snapshot, so a title set by the person shows at once.
            title: Memo::new(move |_| {
                status.track();
                snap.track();
                pg.with_value(|pg| pg.scenario().title.clone())
            }),
            embed,
            beside_runs: StoredValue::new(runs),
            beside: RwSignal::new(vec![]),
            beside_snaps: std::array::from_fn(|_| RwSignal::new(snap.get_untracked())),
            beside_logs: RwSignal::new(0),
            book: StoredValue::new(Book {
                dirty: false,
                stored_is_current: false,
                snap_key: None,
                log_seq: (u64::MAX, u64::MAX),
                log_at: f64::NEG_INFINITY,
                log_pending: false,
                beside_pending: false,
            }),
        };
        ctx.notice.set(note);
        ctx
    }

    fn book(&self) -> Book {
        self.book.get_value()
    }

    fn note(&self, f: impl FnOnce(&mut Book)) {
        self.book.update_value(f);
    }

    /// The session moved (played) since it was last saved.
    pub fn dirty(&self) -> bool {
        self.book().dirty
    }

    pub fn set_dirty(&self, dirty: bool) {
        self.note(|b| b.dirty = dirty);
    }

    /// Local storage holds this playground's scenario and inputs (saved after each action,
    /// or restored from there): a save while playing need only write how far it has run.
    pub fn stored_is_current(&self) -> bool {
        self.book().stored_is_current
    }

    pub fn set_stored_is_current(&self, current: bool) {
        self.note(|b| b.stored_is_current = current);
    }

    /// Publishes the controller's current state to the signals, all of it at once.
    pub fn publish(&self) {
        self.publish_at(None);
        // What changed is drawn (and the event log scrolled) in the next frame.
        crate::frames::wake(*self);
    }

    /// Publishes one animation frame (`real_ms`: the page's clock): the clock always, the
    /// snapshot when the state changed, the log when it grew and was last refreshed at
    /// least [`LOG_REFRESH_MS`] ago.
    pub fn publish_frame(&self, real_ms: f64) {
        self.publish_at(Some(real_ms));
    }

    /// The log has lines it has not shown yet.
    pub fn log_pending(&self) -> bool {
        self.book().log_pending
    }

    fn publish_at(&self, frame_at: Option<f64>) {
        let (key, clock) = self.pg.with_value(|pg| (snap_key(pg), clock_of(pg)));
        let beside_changed = self.publish_beside(
            frame_at.is_none(),
            frame_at.is_none() || self.book().snap_key != Some(key),
        );
        // Between events only the clock moves: what else a frame could change (markers,
        // leaving the past for the live run) comes with a new key, and the controls
        // (play, speed, config) publish in full.
        if frame_at.is_none() || self.book().snap_key != Some(key) {
            self.note(|b| b.snap_key = Some(key));
            let (snap, mut status) = self.pg.with_value(|pg| {
                (
                    pg.current().snapshot_tail(crate::geometry::SNAPSHOT_TAIL),
                    status_of(pg),
                )
            });
            self.beside_runs
                .with_value(|runs| crate::beside::add_marks(runs, &mut status));
            self.snap.set(Arc::new(snap));
            if self.status.with_untracked(|s| *s != status) {
                self.status.set(status);
            }
        }
        if self.clock.get_untracked() != clock {
            self.clock.set(clock);
        }
        if self.tick.get_untracked() != tick_of(clock.now) {
            self.tick.set(tick_of(clock.now));
        }
        // The log only changes when the trace grows or, in the past, the shown moment moves.
        let book = self.book();
        let (seq, shown_at) = book.log_seq;
        let stale = key.1 != seq || (key.3 && clock.now != shown_at);
        // The runs beside's logs and read-outs follow the same pace (`beside_logs`).
        let beside = book.beside_pending || beside_changed;
        let due = match frame_at {
            None => true,
            Some(at) => at - book.log_at >= LOG_REFRESH_MS,
        };
        self.note(|b| {
            b.log_pending = (stale || beside) && !due;
            b.beside_pending = beside && !due;
            if (stale || beside) && due {
                b.log_at = frame_at.unwrap_or(f64::NEG_INFINITY);
            }
        });
        if beside && due {
            self.beside_logs.update(|n| *n = n.wrapping_add(1));
        }
        if stale && due {
            self.note(|b| b.log_seq = (key.1, clock.now));
            let lines = self.pg.with_value(newest_trace);
            self.log.set(Arc::new(lines));
        }
    }

    /// Brings the runs beside to the shown moment (web/src/beside.rs) and publishes what
    /// changed: each one's snapshot when its state changed (`all`: every one), and their
    /// titles and differences from the session's own run when a run's or the session's own
    /// state (`main_changed`) did. Between events only the clock moves, as for the session's
    /// own snapshot. Returns whether a run's state changed.
    fn publish_beside(&self, all: bool, main_changed: bool) -> bool {
        if self.beside_runs.with_value(Vec::is_empty) {
            if self.beside.with_untracked(|b| !b.is_empty()) {
                self.beside.set(vec![]);
            }
            return false;
        }
        let changed = self.pg.with_value(|pg| {
            self.beside_runs
                .try_update_value(|runs| crate::beside::follow_all(runs, pg, all))
                .unwrap_or_default()
        });
        if changed.is_empty() && !main_changed {
            return false;
        }
        for &i in &changed {
            let snap = self.beside_runs.with_value(|runs| {
                runs.get(i)
                    .map(|r| r.pg.current().snapshot_tail(crate::geometry::SNAPSHOT_TAIL))
            });
            if let (Some(snap), Some(signal)) = (snap, self.beside_snaps.get(i)) {
                signal.set(Arc::new(snap));
            }
        }
        let views = self.pg.with_value(|pg| {
            self.beside_runs.with_value(|runs| {
                crate::beside::views(runs, pg, |i| {
                    self.beside_snaps
                        .get(i)
                        .map(|s| s.with_untracked(|s| s.describe.clone()))
                        .unwrap_or_default()
                })
            })
        });
        if self.beside.with_untracked(|b| *b != views) {
            self.beside.set(views);
        }
        !changed.is_empty()
    }

    /// Sets the runs beside the session's own (the scenario's `compare`) and builds them
    /// up to the shown moment; the session's own run goes on unchanged.
    pub fn set_beside(&self, compare: Vec<watermark_engine::compare::Variant>) {
        let result = self.pg.try_update_value(|pg| pg.set_compare(compare));
        if let Some(Err(e)) = result {
            self.notice.set(Some(format!("Not done: {e}")));
            return;
        }
        let (runs, note) = self.pg.with_value(crate::beside::build);
        self.beside_runs.set_value(runs);
        self.notice.set(note);
        self.publish();
        crate::share_ui::save_session(*self);
    }

    /// Runs an action now; shows the error (naming the field) or the note it produced. The
    /// runs beside take it too, as each one's variant has it (`Variant::adapt`).
    pub fn act(&self, action: Action) {
        let result = self.pg.try_update_value(|pg| pg.act(&action));
        match result {
            Some(Ok(note)) => {
                let beside = self
                    .beside_runs
                    .try_update_value(|runs| crate::beside::act(runs, &action))
                    .flatten();
                self.notice.set(note.or(beside));
            }
            Some(Err(e)) => self.notice.set(Some(format!("Not done: {e}"))),
            None => {}
        }
        // The log is built again: an action may replace the last one (a setting changed
        // again at the same moment) and leave the trace as long as it was.
        self.note(|b| b.log_seq = (u64::MAX, u64::MAX));
        self.publish();
        crate::share_ui::save_session(*self);
    }

    /// Starts over with a new scenario (a new cluster).
    pub fn restart(&self, scenario: Scenario, note: String) {
        match Playground::new(scenario) {
            Ok(pg) => self.replace(pg, note),
            Err(e) => {
                self.notice.set(Some(format!("Not done: {e}")));
                self.publish();
                crate::share_ui::save_session(*self);
            }
        }
    }

    /// Puts `pg` in place of the session (its event log drawn afresh), says `note` if it
    /// says anything, and saves it. "Pause at each step" is the reader's choice, not the
    /// scenario's: the new session keeps it (an embed never pauses at captions; the page's
    /// checkbox keeps saying what the new run does).
    pub fn replace(&self, mut pg: Playground, note: String) {
        pg.pause_at_captions = self.pg.with_value(|old| old.pause_at_captions);
        let (runs, beside_note) = crate::beside::build(&pg);
        self.pg.set_value(pg);
        self.beside_runs.set_value(runs);
        let note = match beside_note {
            Some(b) if note.is_empty() => b,
            Some(b) => format!("{note} {b}"),
            None => note,
        };
        self.note(|b| b.log_seq = (u64::MAX, u64::MAX));
        self.notice.set((!note.is_empty()).then_some(note));
        self.publish();
        crate::share_ui::save_session(*self);
    }

    pub fn with_pg<R>(&self, f: impl FnOnce(&mut Playground) -> R) -> Option<R> {
        let r = self.pg.try_update_value(f);
        self.publish();
        r
    }
}

/// The controls' state of `pg`, for other modules' tests.
#[cfg(test)]
pub fn tests_status(pg: &Playground) -> Status {
    status_of(pg)
}
