//! Scrubbing through time: periodic checkpoints of the whole simulation plus the inputs a
//! person applied, so the state at any moment is rebuilt by cloning the nearest earlier
//! checkpoint and replaying forward. Replay is exact: each input is re-applied after the same
//! number of processed events as the first time.
//!
//! The checkpoints are bounded: at most [`MAX_CHECKPOINTS`] are kept. When one more is due,
//! every other checkpoint is dropped (the first is always kept) and the spacing doubles, so
//! however long a session runs, memory stays bounded and the checkpoints stay spread evenly
//! over the whole run. The cost is replay: a rebuild replays at most the stretch between two
//! checkpoints, which is the starting interval until `MAX_CHECKPOINTS` intervals have been
//! recorded, and after that about 1/64 to 1/128 of the time simulated so far (at most twice
//! the current spacing, [`Rewind::interval_ms`]).

use crate::error::ScenarioError;
use crate::scenario::Action;
use crate::sim::Sim;
use crate::types::TimeMs;

/// Most checkpoints a [`Rewind`] keeps. Each is a whole [`Sim`], but its trace, timeline,
/// replica logs and committed history share their storage with the other checkpoints (see
/// [`crate::trace::Trace`] and the replica logs' `RecordChunks`): taking one copies at
/// most 255 records per log and of the committed history and 255 trace events, plus the
/// rest of the state. It also keeps alive the chunks no other checkpoint holds: trace events
/// that have since turned over (up to 20 255) and records a truncation replaced.
/// docs/engine.md has the worst case.
pub const MAX_CHECKPOINTS: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Input {
    events_processed: u64,
    at: TimeMs,
    action: Action,
}

#[derive(Debug, Clone)]
pub struct Rewind {
    /// Checkpoints in time order, each with how many inputs it already includes. The first is
    /// the start and is never dropped.
    checkpoints: Vec<(Sim, usize)>,
    inputs: Vec<Input>,
    /// Simulated time between checkpoints: the starting interval, doubled at each thinning.
    interval_ms: u64,
    /// Where the live run found invariants broken: (time of the observation before, time of
    /// the one that saw it). A replay over one of these checks every event again, so that
    /// the rebuilt state finds and traces the same; any other replays history the live run
    /// checked already, unchecked (`Rewind::replay`).
    broken: Vec<(TimeMs, TimeMs)>,
    /// The live run's violations and time at the last observation.
    seen: (usize, TimeMs),
}

impl Rewind {
    /// Starts recording from `sim` (usually at time 0), with a checkpoint every `interval_ms`
    /// of simulated time, at first (see [`MAX_CHECKPOINTS`]).
    pub fn new(sim: &Sim, interval_ms: u64) -> Self {
        Rewind {
            checkpoints: vec![(sim.clone(), 0)],
            inputs: vec![],
            interval_ms: interval_ms.max(1),
            broken: vec![],
            seen: (sim.violations.len(), sim.now),
        }
    }

    /// Applies an input to the live simulation and records it.
    pub fn apply(&mut self, live: &mut Sim, action: &Action) -> Result<(), ScenarioError> {
        let events_processed = live.events_processed;
        let at = live.now;
        live.apply_now(action)?;
        self.inputs.push(Input {
            events_processed,
            at,
            action: action.clone(),
        });
        Ok(())
    }

    /// Call after the live simulation moved: takes a checkpoint when one is due. When that
    /// makes more than [`MAX_CHECKPOINTS`], thins them out first: keeps the first, the newest
    /// and every other one between, and doubles the interval.
    pub fn observe(&mut self, live: &Sim) {
        if live.violations.len() != self.seen.0 {
            self.broken.push((self.seen.1, live.now));
        }
        self.seen = (live.violations.len(), live.now);
        let last = self.checkpoints.last().map_or(0, |(s, _)| s.now);
        if live.now >= last + self.interval_ms {
            self.checkpoints.push((live.clone(), self.inputs.len()));
            if self.checkpoints.len() > MAX_CHECKPOINTS {
                self.thin_out();
            }
        }
    }

    /// Drops every checkpoint at an odd position except the newest, and doubles the interval.
    fn thin_out(&mut self) {
        let newest = self.checkpoints.len() - 1;
        let mut i = 0;
        self.checkpoints.retain(|_| {
            let keep = i % 2 == 0 || i == newest;
            i += 1;
            keep
        });
        self.interval_ms = self.interval_ms.saturating_mul(2);
    }

    /// The simulation as it was at time `t` (events at `t` processed).
    pub fn state_at(&self, t: TimeMs) -> Sim {
        let idx = self
            .checkpoints
            .iter()
            .rposition(|(s, _)| s.now <= t)
            .unwrap_or(0);
        let (base, applied) = &self.checkpoints[idx];
        let mut sim = base.clone();
        self.replay(&mut sim, &self.inputs[*applied..], t);
        sim
    }

    /// Replays `inputs` (in order, each after the events that preceded it in the live run)
    /// onto `sim` up to time `t`, then runs it to `t`.
    ///
    /// The live run checked every one of these events (the playground runs with
    /// `check_invariants`); checking them again found nothing new and was most of a
    /// rebuild's time (BENCHMARKS.md, "Issue 14's third session"). So a replay checks
    /// nothing, then everything once at the end ([`Sim::check_invariants_now`]), unless the
    /// live run found something in this stretch: then it checks every event, and finds and
    /// traces the same.
    fn replay(&self, sim: &mut Sim, inputs: &[Input], t: TimeMs) {
        let check = sim.check_invariants;
        let from = sim.now;
        let quiet = !self.broken.iter().any(|&(a, b)| a <= t && b >= from);
        sim.check_invariants = check && !quiet;
        for input in inputs {
            if input.at > t {
                break;
            }
            while sim.events_processed < input.events_processed && sim.step() {}
            if sim.now < input.at {
                sim.now = input.at;
            }
            // The input was valid the first time; replay cannot make it invalid.
            let _ = sim.apply_now(&input.action);
        }
        sim.advance_to(t);
        sim.check_invariants = check;
        if check && quiet {
            sim.check_invariants_now();
        }
    }

    /// Moves `sim`, a state this rewind built (by [`Rewind::state_at`] or by this), forward
    /// to `t`, replaying the recorded inputs after its time: the result is exactly
    /// `state_at(t)`, without going back to a checkpoint. Playing while scrubbed back calls
    /// this every frame, so a frame costs the events of that frame, not a replay of up to a
    /// whole (possibly thinned, long) checkpoint interval.
    pub fn advance(&self, sim: &mut Sim, t: TimeMs) {
        if t <= sim.now {
            return;
        }
        // `sim` holds every input at or before its time (state_at applies those at <= t).
        let first = self.inputs.partition_point(|i| i.at <= sim.now);
        self.replay(sim, &self.inputs[first..], t);
    }

    /// Acting while scrubbed back discards the future from `t`: the checkpoints and inputs
    /// after it. The interval stays what thinning made it.
    pub fn discard_after(&mut self, t: TimeMs) {
        self.checkpoints.retain(|(s, _)| s.now <= t);
        if self.checkpoints.is_empty() {
            // Never happens: the first checkpoint is at the start.
            return;
        }
        self.inputs.retain(|i| i.at <= t);
        self.broken.retain(|(a, _)| *a <= t);
        let n = self.inputs.len();
        for (_, applied) in &mut self.checkpoints {
            *applied = (*applied).min(n);
        }
    }

    /// Forgets the newest input, with any checkpoint that included it, and returns the state
    /// just before it (every event at its time run, the inputs before it applied). A
    /// slider's steps at one moment replace each other this way, so the session records the
    /// value it settled on.
    pub fn undo_last_input(&mut self) -> Option<Sim> {
        let last = self.inputs.pop()?;
        let n = self.inputs.len();
        self.checkpoints.retain(|(_, applied)| *applied <= n);
        Some(self.state_at(last.at))
    }

    /// How many checkpoints are kept (at most [`MAX_CHECKPOINTS`]).
    pub fn checkpoint_count(&self) -> usize {
        self.checkpoints.len()
    }

    /// The current spacing of checkpoints: the starting interval times 2 for each thinning.
    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// The simulated time of each checkpoint, oldest first.
    pub fn checkpoint_times(&self) -> impl Iterator<Item = TimeMs> + '_ {
        self.checkpoints.iter().map(|(s, _)| s.now)
    }

    /// The recorded inputs with their times, to save the session as a scenario.
    pub fn inputs(&self) -> impl Iterator<Item = (TimeMs, &Action)> {
        self.inputs.iter().map(|i| (i.at, &i.action))
    }
}

#[cfg(test)]
mod tests {
    use crate::types::TP0;
    use std::sync::Arc;

    use super::*;
    use crate::scenario::{AcksOrDefault, ProduceSpec, TimedAction};
    use crate::types::Acks;

    /// `n` one-record `acks=all` writes, `v0`, `v1`, …, one every `every_ms`.
    fn writes(n: u64, every_ms: u64) -> Vec<TimedAction> {
        (0..n)
            .map(|i| TimedAction {
                at: i * every_ms,
                action: Action::Produce(ProduceSpec {
                    acks: AcksOrDefault(Acks::All),
                    values: vec![format!("v{i}")],
                    ..ProduceSpec::default()
                }),
            })
            .collect()
    }

    #[test]
    fn a_replay_checks_every_event_again_only_where_the_live_run_found_something() {
        let scenario = crate::Scenario {
            brokers: 3,
            timeline: writes(50, 100),
            ..crate::Scenario::default()
        };
        let mut live = Sim::new(&scenario).expect("sim");
        live.check_invariants = true;
        let mut rewind = Rewind::new(&live, 1_000);
        let play = |live: &mut Sim, rewind: &mut Rewind, to: TimeMs| {
            while live.now() < to {
                live.advance_to(live.now() + 100);
                rewind.observe(live);
            }
        };
        play(&mut live, &mut rewind, 1_900);
        live.advance_to(2_000);
        // A planted fault in the checker's memory, taken into the checkpoint at 2 s: it
        // remembers the leadership's HW far above any reached, so the next check of the
        // partition says the HW fell (a stand-in for an engine bug the live run finds).
        if let Some(Some((_, _, hw))) = live.invariant_state.leader_hw.get_mut(0) {
            *hw = 1_000_000;
        }
        rewind.observe(&live);
        assert_eq!(rewind.checkpoint_times().last(), Some(2_000));
        play(&mut live, &mut rewind, 3_500);
        assert_eq!(live.violations().len(), 1, "{:?}", live.violations());
        // Replayed from the checkpoint at 2 s over that stretch, every event is checked
        // again: the same violation, at the same moment (unchecked, the check at the end
        // would find it at 2.9 s instead).
        assert_eq!(rewind.state_at(2_900).violations(), live.violations());
        // Before the checkpoint the stretch was quiet: the rebuild checks once at its end,
        // and its state is the live run's at that moment (checker's memory included).
        let early = rewind.state_at(1_500);
        let mut fresh = Sim::new(&scenario).expect("sim");
        fresh.check_invariants = true;
        fresh.advance_to(1_500);
        assert!(early.violations().is_empty());
        assert_eq!(early.invariant_state, fresh.invariant_state);
    }

    #[test]
    fn checkpoints_share_the_sealed_chunks_of_every_log() {
        // 7 brokers, RF 7, the playground's 40 ms latency, a one-record acks=all write every
        // 150 ms; the playground's checkpoint spacing (2 s) and frames (1 667 ms, 100×).
        let timeline = writes(2_000, 150);
        let scenario = crate::Scenario {
            brokers: 7,
            replication_factor: Some(7),
            config: crate::Config {
                network_latency_ms: 40,
                controller_latency_ms: 40,
                ..crate::Config::default()
            },
            timeline,
            end_ms: Some(900_000),
            ..crate::Scenario::default()
        };
        let mut live = Sim::new(&scenario).expect("sim");
        let mut rewind = Rewind::new(&live, 2_000);
        while live.now() < 300_000 {
            live.advance_to((live.now() + 1_667).min(300_000));
            rewind.observe(&live);
        }
        // A rebuild clones the nearest checkpoint: every chunk that checkpoint held is the
        // live log's own allocation; only chunks sealed during the replay after it are new.
        let rebuilt = rewind.state_at(250_000);
        let late_checkpoints = rewind.checkpoint_times().filter(|t| *t >= 45_000).count();
        for id in 1..=7 {
            let live = live.brokers[&id].log(TP0).records.sealed_chunks();
            let past = rebuilt.brokers[&id].log(TP0).records.sealed_chunks();
            assert!(
                past.len() >= 6,
                "broker {id}: {} chunks at 250 s",
                past.len()
            );
            let shared = past
                .iter()
                .zip(live)
                .take_while(|(a, b)| Arc::ptr_eq(a, b))
                .count();
            assert!(
                shared + 1 >= past.len(),
                "broker {id}: {shared} of {} chunks shared with the live log",
                past.len()
            );
            // The first chunk (sealed at about 38 s) is one allocation held by the live log,
            // the rebuild and every checkpoint taken after it was sealed.
            assert!(
                Arc::strong_count(&live[0]) >= 2 + late_checkpoints,
                "broker {id}: the first chunk has {} holders, {late_checkpoints} checkpoints after it",
                Arc::strong_count(&live[0])
            );
        }
    }
}
