//! Scrubbing through time: periodic checkpoints of the whole simulation plus the inputs a
//! person applied, so the state at any moment is rebuilt by cloning the nearest earlier
//! checkpoint and replaying forward. Replay is exact: each input is re-applied after the same
//! number of processed events as the first time.

use crate::error::ScenarioError;
use crate::scenario::Action;
use crate::sim::Sim;
use crate::types::TimeMs;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Input {
    events_processed: u64,
    at: TimeMs,
    action: Action,
}

#[derive(Debug, Clone)]
pub struct Rewind {
    /// Checkpoints in time order, each with how many inputs it already includes.
    checkpoints: Vec<(Sim, usize)>,
    inputs: Vec<Input>,
    interval_ms: u64,
}

impl Rewind {
    /// Starts recording from `sim` (usually at time 0), with a checkpoint every `interval_ms`
    /// of simulated time.
    pub fn new(sim: &Sim, interval_ms: u64) -> Self {
        Rewind {
            checkpoints: vec![(sim.clone(), 0)],
            inputs: vec![],
            interval_ms: interval_ms.max(1),
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

    /// Call after the live simulation moved: takes a checkpoint when one is due.
    pub fn observe(&mut self, live: &Sim) {
        let last = self.checkpoints.last().map_or(0, |(s, _)| s.now);
        if live.now >= last + self.interval_ms {
            self.checkpoints.push((live.clone(), self.inputs.len()));
        }
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
        for input in &self.inputs[*applied..] {
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
        sim
    }

    /// Acting while scrubbed back discards the future from `t`.
    pub fn discard_after(&mut self, t: TimeMs) {
        self.checkpoints.retain(|(s, _)| s.now <= t);
        if self.checkpoints.is_empty() {
            // Never happens: the first checkpoint is at the start.
            return;
        }
        self.inputs.retain(|i| i.at <= t);
        let n = self.inputs.len();
        for (_, applied) in &mut self.checkpoints {
            *applied = (*applied).min(n);
        }
    }

    pub fn checkpoint_count(&self) -> usize {
        self.checkpoints.len()
    }

    /// The recorded inputs with their times, to save the session as a scenario.
    pub fn inputs(&self) -> impl Iterator<Item = (TimeMs, &Action)> {
        self.inputs.iter().map(|i| (i.at, &i.action))
    }
}
