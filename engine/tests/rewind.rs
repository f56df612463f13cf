//! Rewind over a long, busy session recorded the way the playground records it
//! (web/src/model.rs): a frame moves the live simulation, then `Rewind::observe` may take a
//! checkpoint; inputs go through `Rewind::apply`. The number of checkpoints stays bounded,
//! and every rebuilt moment is exactly the state of a fresh simulation driven the same way
//! up to that moment: the whole `Sim` (its `Debug` form: every field, trace and logs
//! included; JSON cannot hold its maps with tuple keys).
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/workloads.rs"]
#[allow(dead_code)] // the benchmarks' other workloads
mod workloads;

use watermark_engine::rewind::{Rewind, MAX_CHECKPOINTS};
use watermark_engine::scenario::{ControllerName, Endpoint};
use watermark_engine::trace::MAX_TRACE_EVENTS;
use watermark_engine::types::TimeMs;
use watermark_engine::{Action, Scenario, Sim};

/// The playground's checkpoint spacing (web/src/model.rs CHECKPOINT_MS).
const CHECKPOINT_MS: u64 = 2_000;
/// One frame at 100×: 16.67 ms of wall time.
const FRAME_MS: u64 = 1_667;

/// A live run recorded as the playground records it, plus what was done to it, so a fresh
/// simulation can be driven the same way.
struct Session {
    scenario: Scenario,
    live: Sim,
    rewind: Rewind,
    /// Each frame's target time, and the inputs applied after it.
    history: Vec<(TimeMs, Vec<Action>)>,
}

impl Session {
    fn new(scenario: Scenario) -> Session {
        let live = fresh(&scenario);
        let rewind = Rewind::new(&live, CHECKPOINT_MS);
        Session {
            scenario,
            live,
            rewind,
            history: vec![(0, vec![])],
        }
    }

    /// `Playground::tick` following the live run.
    fn frame(&mut self, to: TimeMs) {
        self.live.advance_to(to);
        self.rewind.observe(&self.live);
        self.history.push((to, vec![]));
    }

    /// `Playground::act` following the live run.
    fn act(&mut self, action: Action) {
        let now = self.live.now();
        self.live.advance_to(now);
        self.rewind.apply(&mut self.live, &action).unwrap();
        self.history.last_mut().unwrap().1.push(action);
    }

    /// `Playground::act` while scrubbed back to `t`: the future after `t` is discarded.
    fn act_in_the_past(&mut self, t: TimeMs, action: Action) {
        let view = self.rewind.state_at(t);
        self.rewind.discard_after(t);
        self.live = view;
        self.history.retain(|(at, _)| *at <= t);
        self.history.push((t, vec![]));
        self.act(action);
    }

    /// Plays frames until the live clock reaches `until`, applying `inputs` (by time) at
    /// the first frame at or after their time.
    fn play(&mut self, until: TimeMs, inputs: &[(TimeMs, Action)]) {
        let mut next = 0;
        while next < inputs.len() && inputs[next].0 <= self.live.now() {
            next += 1;
        }
        while self.live.now() < until {
            let to = (self.live.now() + FRAME_MS).min(until);
            self.frame(to);
            while next < inputs.len() && inputs[next].0 <= to {
                self.act(inputs[next].1.clone());
                next += 1;
            }
            assert!(
                self.rewind.checkpoint_count() <= MAX_CHECKPOINTS,
                "{} checkpoints at {to} ms",
                self.rewind.checkpoint_count()
            );
        }
    }

    /// A fresh simulation driven through the same frames and inputs up to `t`.
    fn reference_at(&self, t: TimeMs) -> Sim {
        let mut sim = fresh(&self.scenario);
        for (to, actions) in self.history.iter().take_while(|(to, _)| *to <= t) {
            sim.advance_to(*to);
            for a in actions {
                sim.apply_now(a).unwrap();
            }
        }
        sim.advance_to(t);
        sim
    }

    fn assert_exact_at(&self, t: TimeMs) {
        let rebuilt = self.rewind.state_at(t);
        let expected = self.reference_at(t);
        assert_eq!(rebuilt.now(), t);
        assert_eq!(
            rebuilt.transcript(),
            expected.transcript(),
            "transcript at {t}"
        );
        assert_eq!(rebuilt.trace_next_seq(), expected.trace_next_seq());
        assert!(
            format!("{rebuilt:?}") == format!("{expected:?}"),
            "the whole state at {t} differs from a fresh run's"
        );
    }
}

fn fresh(scenario: &Scenario) -> Sim {
    let mut sim = Sim::new(scenario).unwrap();
    sim.check_invariants = true; // as the playground runs it
    sim
}

fn faults() -> Vec<(TimeMs, Action)> {
    let produce = |v: &str| {
        Action::Produce(
            serde_json::from_str(&format!(r#"{{"acks":"all","values":["{v}"]}}"#)).unwrap(),
        )
    };
    let controller = |b| Action::Cut {
        a: Endpoint::Broker(b),
        b: Endpoint::Controller(ControllerName::Controller),
    };
    let heal = |b| Action::Heal {
        a: Endpoint::Broker(b),
        b: Endpoint::Controller(ControllerName::Controller),
    };
    vec![
        (60_000, Action::Freeze { broker: 3 }),
        (61_000, produce("while-3-frozen")),
        (200_000, Action::Thaw { broker: 3 }),
        (300_000, Action::Kill { broker: 1 }),
        (300_000, produce("after-kill")),
        (360_000, Action::Start { broker: 1 }),
        (500_000, controller(5)),
        (560_000, heal(5)),
        (
            700_000,
            Action::Slow {
                broker: 6,
                ms: 3_000,
            },
        ),
        (800_000, Action::Describe(Default::default())),
    ]
}

#[test]
fn a_long_fast_session_keeps_a_bounded_number_of_exact_checkpoints() {
    let mut s = Session::new(workloads::busy_seven_brokers());
    s.play(900_000, &faults());
    assert!(s.live.violations().is_empty(), "{:?}", s.live.violations());
    let first = s.live.trace_events().next().unwrap().seq;
    assert!(
        s.live.trace_next_seq() - first >= MAX_TRACE_EVENTS as u64 && first > 0,
        "the trace filled up and turned over"
    );
    assert!(s.rewind.checkpoint_count() <= MAX_CHECKPOINTS);
    // The spacing doubled as checkpoints were thinned out, and no stretch between two
    // checkpoints (what a rebuild replays at most) is longer than twice the spacing.
    assert!(s.rewind.interval_ms() > CHECKPOINT_MS);
    let times: Vec<TimeMs> = s.rewind.checkpoint_times().collect();
    assert_eq!(times[0], 0, "the first checkpoint is kept");
    let widest = times.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(
        widest <= 2 * s.rewind.interval_ms(),
        "widest gap {widest} ms with spacing {}",
        s.rewind.interval_ms()
    );
    assert!(900_000 - times.last().unwrap() <= 2 * s.rewind.interval_ms());
    // Early, between checkpoints, on a checkpoint, around inputs, and late.
    for t in [
        1_000,
        59_999,
        60_012,
        times[times.len() / 2],
        300_000,
        450_001,
        times[times.len() - 1] - 1,
        899_999,
        900_000,
    ] {
        s.assert_exact_at(t);
    }
}

#[test]
fn acting_in_the_past_of_a_thinned_session_discards_the_future_exactly() {
    let mut s = Session::new(workloads::busy_seven_brokers());
    s.play(600_000, &faults());
    let spacing = s.rewind.interval_ms();
    assert!(spacing > CHECKPOINT_MS, "thinned out before acting");
    // Scrubbed back to 250 s, a kill of broker 2 there replaces everything after it.
    s.act_in_the_past(250_000, Action::Kill { broker: 2 });
    assert!(s.rewind.checkpoint_times().all(|t| t <= 250_000));
    assert_eq!(s.live.now(), 250_000);
    s.play(
        700_000,
        &[
            (400_000, Action::Start { broker: 2 }),
            (
                650_000,
                Action::Epochs {
                    topic: None,
                    partition: None,
                },
            ),
        ],
    );
    assert!(s.rewind.checkpoint_count() <= MAX_CHECKPOINTS);
    let later = s.rewind.state_at(260_000);
    assert_eq!(
        later.snapshot().broker(2).unwrap().process,
        watermark_engine::types::ProcessState::Killed,
        "the new input is in the new future"
    );
    let future: Vec<&Action> = s
        .rewind
        .inputs()
        .filter(|(at, _)| *at > 250_000)
        .map(|(_, a)| a)
        .collect();
    assert_eq!(
        future,
        [
            &Action::Start { broker: 2 },
            &Action::Epochs {
                topic: None,
                partition: None,
            },
        ],
        "the old future's inputs are gone"
    );
    for t in [
        100_000, 249_999, 250_000, 250_001, 420_000, 699_999, 700_000,
    ] {
        s.assert_exact_at(t);
    }
}

#[test]
fn playing_forward_from_a_view_matches_a_rebuild_at_every_frame() {
    // The playground plays while scrubbed back by moving its view forward a frame at a
    // time (Rewind::advance); each frame must be exactly what state_at rebuilds, across
    // inputs (the faults) and thinned checkpoints.
    let mut s = Session::new(workloads::busy_seven_brokers());
    s.play(600_000, &faults());
    assert!(s.rewind.interval_ms() > CHECKPOINT_MS, "thinned out");
    let mut view = s.rewind.state_at(55_000);
    let mut t = 55_000;
    while t < 420_000 {
        // Uneven steps, as frames are: some land exactly on an input's time.
        t = match t {
            59_000..=60_999 => 60_000.max(t + 1),
            299_000..=299_999 => 300_000,
            _ => t + FRAME_MS + (t % 7),
        }
        .min(420_000);
        s.rewind.advance(&mut view, t);
        if t % 10 == 0 || (59_000..=62_000).contains(&t) || (299_000..=301_000).contains(&t) {
            let rebuilt = s.rewind.state_at(t);
            assert!(
                format!("{view:?}") == format!("{rebuilt:?}"),
                "the advanced view at {t} differs from a rebuild"
            );
        }
    }
    assert!(format!("{view:?}") == format!("{:?}", s.rewind.state_at(420_000)));
    // Advancing to the past or the present does nothing.
    let before = format!("{view:?}");
    s.rewind.advance(&mut view, 100_000);
    assert_eq!(format!("{view:?}"), before);
}

/// Heap bytes allocated and not yet freed by the current thread, and their peak: each test
/// runs on its own thread, so what the other tests of this file allocate meanwhile does not
/// count. The session measured below allocates and frees on its own thread only.
mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    pub struct Counting;

    thread_local! {
        // `const` and without `Drop`: reading them never allocates, as an allocator requires.
        static LIVE: Cell<isize> = const { Cell::new(0) };
        static PEAK: Cell<isize> = const { Cell::new(0) };
    }

    fn add(bytes: isize) {
        let _ = LIVE.try_with(|live| {
            let now = live.get() + bytes;
            live.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        });
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                add(layout.size() as isize);
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                add(layout.size() as isize);
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            add(-(layout.size() as isize));
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                add(new_size as isize - layout.size() as isize);
            }
            p
        }
    }

    /// Live bytes now.
    pub fn live() -> isize {
        LIVE.with(Cell::get)
    }

    /// Forgets the peak so far: the next [`peak`] is the highest from now on.
    pub fn reset_peak() {
        PEAK.with(|p| p.set(live()));
    }

    pub fn peak() -> isize {
        PEAK.with(Cell::get)
    }
}

#[global_allocator]
static HEAP: heap::Counting = heap::Counting;

#[test]
fn a_long_seven_broker_session_keeps_its_checkpoints_within_a_memory_bound() {
    let before = heap::live();
    heap::reset_peak();
    let mut s = Session::new(workloads::seven_brokers_six_thousand_records());
    s.play(900_000, &[]);
    let peak = heap::peak() - before;
    let held = heap::live() - before;
    let leo = s.live.snapshot_tail(0).brokers[0].log_end_offset;
    assert!(leo >= 5_990, "the logs grew to 6 000 records: {leo}");
    let checkpoints = s.rewind.checkpoint_count();
    println!(
        "7 brokers, {leo} records, {checkpoints} checkpoints: peak {:.1} MB, held at the end {:.1} MB",
        peak as f64 / 1e6,
        held as f64 / 1e6
    );
    // When every checkpoint held its own copy of the 7 logs and the committed history (8
    // copies of up to 6 000 records each), this measured a peak of 174 MB (136 MB held at
    // the end) in the release build. Sharing their sealed chunks leaves one copy of each
    // chunk plus, per checkpoint, 8 tails of under 256 records: 35 MB (25 MB held).
    const BOUND: isize = 48_000_000;
    assert!(
        peak < BOUND,
        "peak {peak} bytes over the bound {BOUND} ({checkpoints} checkpoints)"
    );
}
