//! The app's shared state: the playground controller (not a signal) and the signals that
//! carry one fresh snapshot per frame to the components.

use std::sync::Arc;

use leptos::prelude::*;
use watermark_engine::trace::TraceEvent;
use watermark_engine::{Action, Config, Scenario};

use crate::cluster::Frame;
use crate::model::{Marker, Playground};

/// Everything besides the snapshot that the controls show.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub playing: bool,
    pub speed: f64,
    pub now: u64,
    pub max_time: u64,
    pub scrubbed: bool,
    pub markers: Vec<Marker>,
    pub config: Config,
    pub brokers: u32,
    pub replication_factor: u32,
}

#[derive(Clone, Copy)]
pub struct Ctx {
    pub pg: StoredValue<Playground>,
    pub frame: RwSignal<Arc<Frame>>,
    pub status: RwSignal<Status>,
    /// The trace up to the shown moment (newest last, bounded).
    pub log: RwSignal<Arc<Vec<TraceEvent>>>,
    /// A message for the person: what an action did or why it was refused.
    pub notice: RwSignal<Option<String>>,
    /// Width available to the cluster view.
    pub width: RwSignal<f64>,
    /// Embedded in another page: never touches storage or the URL.
    pub embed: bool,
    /// The session moved (played) since it was last saved.
    pub dirty: StoredValue<bool>,
    log_seq: StoredValue<(u64, u64)>,
}

/// Most trace lines the event log keeps on screen.
pub const LOG_LINES: usize = 400;

impl Ctx {
    pub fn new(pg: Playground, width: f64, embed: bool) -> Self {
        let (mut frame, status) = Self::views(&pg);
        frame.snap_width = width;
        Ctx {
            pg: StoredValue::new(pg),
            frame: RwSignal::new(Arc::new(frame)),
            status: RwSignal::new(status),
            log: RwSignal::new(Arc::new(vec![])),
            notice: RwSignal::new(None),
            width: RwSignal::new(width),
            embed,
            dirty: StoredValue::new(false),
            log_seq: StoredValue::new((u64::MAX, u64::MAX)),
        }
    }

    fn views(pg: &Playground) -> (Frame, Status) {
        let sim = pg.current();
        let frame = Frame {
            snap: sim.snapshot(),
            now: sim.now() as f64,
            lag_time_max_ms: sim.config().replica_lag_time_max_ms,
            snap_width: 0.0,
        };
        let status = Status {
            playing: pg.playing,
            speed: pg.speed(),
            now: sim.now(),
            max_time: pg.max_time(),
            scrubbed: pg.is_scrubbed_back(),
            markers: pg.markers().to_vec(),
            config: sim.config().clone(),
            brokers: pg.scenario().brokers,
            replication_factor: pg.scenario().replicas().len() as u32,
        };
        (frame, status)
    }

    /// Publishes the controller's current state to the signals.
    pub fn publish(&self) {
        let (mut frame, status) = self.pg.with_value(Self::views);
        frame.snap_width = self.width.get_untracked();
        self.frame.set(Arc::new(frame));
        if self.status.with_untracked(|s| *s != status) {
            self.status.set(status);
        }
        // The log only changes when the trace grows or the shown moment moves back.
        let key = self
            .pg
            .with_value(|pg| (pg.current().trace_next_seq(), pg.current().now()));
        let (seq, _) = self.log_seq.get_value();
        if key.0 != seq || self.pg.with_value(|pg| pg.is_scrubbed_back()) {
            self.log_seq.set_value(key);
            let lines: Vec<TraceEvent> = self.pg.with_value(|pg| {
                let events: Vec<&TraceEvent> = pg.current().trace_events().collect();
                let start = events.len().saturating_sub(LOG_LINES);
                events[start..].iter().map(|e| (*e).clone()).collect()
            });
            self.log.set(Arc::new(lines));
        }
    }

    /// Runs an action now; shows the error (naming the field) or the note it produced.
    pub fn act(&self, action: Action) {
        let result = self.pg.try_update_value(|pg| pg.act(&action));
        match result {
            Some(Ok(note)) => self.notice.set(note),
            Some(Err(e)) => self.notice.set(Some(format!("Not done: {e}"))),
            None => {}
        }
        self.publish();
        crate::share_ui::save_session(*self);
    }

    /// Starts over with a new scenario (a new cluster).
    pub fn restart(&self, scenario: Scenario, note: String) {
        match Playground::new(scenario) {
            Ok(pg) => {
                self.pg.set_value(pg);
                self.log_seq.set_value((u64::MAX, u64::MAX));
                self.notice.set((!note.is_empty()).then_some(note));
            }
            Err(e) => self.notice.set(Some(format!("Not done: {e}"))),
        }
        self.publish();
        crate::share_ui::save_session(*self);
    }

    pub fn with_pg<R>(&self, f: impl FnOnce(&mut Playground) -> R) -> Option<R> {
        let r = self.pg.try_update_value(f);
        self.publish();
        r
    }
}
