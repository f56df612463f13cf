//! Side-by-side runs (issue 15, docs/history.md "Side by side"): a scenario's `compare`
//! lists up to [`MAX_VARIANTS`] variants, each run beside the scenario itself (the top run)
//! under the same timeline: the same cluster, seed, actions and end, with another protocol
//! mode, other configs or another `acks` for every produce. [`Scenario::variant`] gives the
//! scenario a variant runs; [`differences`] says what differs between two runs at one
//! moment, in Kafka's words.
//!
//! Nothing here runs during a simulation: a run that does not compare pays nothing, and a
//! compared run is an ordinary `Sim` of its own scenario.

use serde::{Deserialize, Serialize};

use crate::error::{indexed, member, ScenarioError};
use crate::json::Map;
use crate::protocol::Protocol;
use crate::scenario::{AcksOrDefault, Action, Scenario};
use crate::sim::Sim;
use crate::types::{Acks, BrokerId};

/// Most variants a scenario compares with its own run.
pub const MAX_VARIANTS: usize = 2;
/// Longest label of a variant.
pub const MAX_LABEL_LEN: usize = 64;

/// One run beside the scenario's own: what it changes. Each field left out keeps the
/// scenario's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// What the playground calls it (≤ [`MAX_LABEL_LEN`] characters); empty: [`Variant::title`]
    /// derives one from the changes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The protocol mode it runs (as the scenario's `protocol`), `kafka-4` included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Overrides of the scenario's `config`: Kafka's names, each value as `config` takes it
    /// (checked with the same types and ranges). In name order, as every JSON object here.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub config: Map,
    /// Every `produce` of the timeline runs with this `acks` instead of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acks: Option<Acks>,
}

impl Variant {
    /// What the UI calls it: the label, else its changes in a fixed order, `acks` first,
    /// then each config by name, then the protocol: `acks=1`, `min.insync.replicas=1`,
    /// `protocol no-elr`, joined by ", ".
    pub fn title(&self) -> String {
        if !self.label.is_empty() {
            return self.label.clone();
        }
        let mut parts: Vec<String> = Vec::new();
        if let Some(a) = self.acks {
            parts.push(format!("acks={a}"));
        }
        for (name, value) in self.config.iter() {
            let text = match value {
                crate::json::Value::String(s) => s.clone(),
                v => crate::json::value_text(v),
            };
            parts.push(format!("{name}={text}"));
        }
        if let Some(p) = self.protocol {
            parts.push(format!("protocol {}", p.name()));
        }
        parts.join(", ")
    }

    /// A person's action during a session, as this variant's run takes it: a `produce`'s
    /// `acks` replaced when the variant sets `acks`; a `set_config` of a config the variant
    /// overrides gives None (the comparison keeps its difference); anything else unchanged.
    pub fn adapt(&self, action: &Action) -> Option<Action> {
        match action {
            Action::Produce(p) => {
                let mut p = p.clone();
                if let Some(a) = self.acks {
                    p.acks = AcksOrDefault(a);
                }
                Some(Action::Produce(p))
            }
            Action::SetConfig { name, .. } if self.config.get(name).is_some() => None,
            other => Some(other.clone()),
        }
    }

    /// The scenario this variant runs, from `top` (see [`Scenario::variant`]); `field` is
    /// the variant's path (`compare[0]`) for the errors of its configs.
    fn apply(&self, top: &Scenario, field: &str, run: u32) -> Result<Scenario, ScenarioError> {
        let mut s = Scenario {
            compare: Vec::new(),
            expect: Vec::new(),
            ..top.clone()
        };
        if let Some(p) = self.protocol {
            s.protocol = p;
        }
        let config = member(field, "config");
        for (name, value) in self.config.iter() {
            crate::scenario_json::config_member(&config, &mut s.config, name, value)?;
        }
        if let Some(a) = self.acks {
            for t in &mut s.timeline {
                if let Action::Produce(p) = &mut t.action {
                    p.acks = AcksOrDefault(a);
                }
            }
        }
        for e in &top.expect {
            if e.run == Some(run) {
                let mut e = e.clone();
                e.run = None;
                s.expect.push(e);
            }
        }
        Ok(s)
    }
}

impl Scenario {
    /// The scenario that `compare[i]` runs: this one with the variant's protocol, config
    /// overrides and acks applied, without `compare`, with the expectations of run `i + 1`
    /// (their `run` cleared). The same cluster, seed, timeline (notes included) and end.
    /// Errors name the variant's field (`compare[0].config.min.insync.replicas: ...`).
    pub fn variant(&self, i: usize) -> Result<Scenario, ScenarioError> {
        let field = indexed("compare", i);
        let v = self.compare.get(i).ok_or_else(|| {
            ScenarioError::new(
                field.clone(),
                format!(
                    "no such variant: the scenario compares {} (compare[0..{}])",
                    self.compare.len(),
                    self.compare.len()
                ),
            )
        })?;
        let s = v.apply(self, &field, i as u32 + 1)?;
        s.validate().map_err(|e| {
            // A produce that conflicts with enable.idempotence=true because of the
            // variant's acks: the variant's `acks` is at fault.
            let name = if v.acks.is_some()
                && e.field.starts_with("timeline[")
                && e.field.ends_with(".acks")
            {
                member(&field, "acks")
            } else {
                member(&field, &e.field)
            };
            ScenarioError::new(name, e.message)
        })?;
        Ok(s)
    }

    /// The top run's scenario for checking: this one without the expectations that name
    /// another run (`compare` kept). [`crate::check::check`] does not clone: it skips them.
    pub fn top_run(&self) -> Scenario {
        let mut s = self.clone();
        s.expect.retain(|e| e.run.is_none());
        s
    }

    /// `compare`: at most [`MAX_VARIANTS`], each labelled within [`MAX_LABEL_LEN`], each
    /// changing something, each a valid scenario. Called by [`Scenario::validate`].
    pub(crate) fn validate_compare(&self) -> Result<(), ScenarioError> {
        if self.compare.len() > MAX_VARIANTS {
            return Err(ScenarioError::new(
                "compare",
                format!(
                    "at most {MAX_VARIANTS} variants, got {}",
                    self.compare.len()
                ),
            ));
        }
        for (i, v) in self.compare.iter().enumerate() {
            let field = indexed("compare", i);
            let n = v.label.chars().count();
            if n > MAX_LABEL_LEN {
                return Err(ScenarioError::new(
                    member(&field, "label"),
                    format!("a label may be at most {MAX_LABEL_LEN} characters, got {n}"),
                ));
            }
            let s = self.variant(i)?;
            if s.protocol == self.protocol && s.config == self.config && s.timeline == self.timeline
            {
                return Err(ScenarioError::new(
                    field,
                    "a variant must change protocol, config or acks",
                ));
            }
        }
        Ok(())
    }
}

/// One thing that differs between two runs at the same moment, for the partition each
/// shows (the snapshot's partition, [`Sim::view_partition`]; the same one in both).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// What differs: `leader`, `isr`, `elr`, `high watermark`, `log end offset`,
    /// `process`, `log`, `produce results`, `committed records lost`.
    pub what: String,
    /// The broker it is of, for a replica's log end offset, a broker's process and a log.
    pub broker: Option<BrokerId>,
    /// How it is in the top run, and in the other, in Kafka's words (`Isr: [1,2]`).
    pub top: String,
    pub other: String,
}

impl Difference {
    /// One line for a transcript, `other` naming the other run (`compare[0]`):
    /// `log end offset of broker 1: log end offset 3 (top), log end offset 6 (compare[0])`.
    pub fn line(&self, other: &str) -> String {
        let broker = self
            .broker
            .map_or(String::new(), |b| format!(" of broker {b}"));
        format!(
            "{}{broker}: {} (top), {} ({other})",
            self.what, self.top, self.other
        )
    }
}

fn ids(v: &[BrokerId]) -> String {
    format!("[{}]", crate::types::Ids(v))
}

/// What differs between `top` and `other`, two simulations of the same cluster at the same
/// time: the leader and its epoch, the ISR, the ELR, the leader's high watermark, each
/// replica's log end offset, each broker's process state, the first offset where a
/// replica's log holds another record (value or epoch) than the same replica in the other
/// run, the produce results so far (acknowledged, failed, pending), and the losses of
/// committed records reported. In that order, brokers by id; empty when the runs agree.
pub fn differences(top: &Sim, other: &Sim) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut differ = |what: &str, broker: Option<BrokerId>, a: String, b: String| {
        if a != b {
            out.push(Difference {
                what: what.to_string(),
                broker,
                top: a,
                other: b,
            });
        }
    };
    let (ta, tb) = (top.view_tp, other.view_tp);
    let (pa, pb) = (top.controller.partition(ta), other.controller.partition(tb));
    let leader = |p: &crate::metadata::PartitionRegistration| match p.leader {
        Some(l) => format!("Leader: {l} (leader epoch {})", p.leader_epoch),
        None => format!("Leader: none (leader epoch {})", p.leader_epoch),
    };
    differ("leader", None, leader(pa), leader(pb));
    differ(
        "isr",
        None,
        format!("Isr: {}", ids(&crate::sort::sorted_ids(&pa.isr))),
        format!("Isr: {}", ids(&crate::sort::sorted_ids(&pb.isr))),
    );
    differ(
        "elr",
        None,
        format!("Elr: {}", ids(&crate::sort::sorted_ids(&pa.elr))),
        format!("Elr: {}", ids(&crate::sort::sorted_ids(&pb.elr))),
    );
    let hw = |sim: &Sim, p: &crate::metadata::PartitionRegistration, tp| match p
        .leader
        .and_then(|l| sim.brokers.get(&l))
    {
        Some(b) => format!("high watermark {}", b.log(tp).high_watermark),
        None => "no leader".to_string(),
    };
    differ("high watermark", None, hw(top, pa, ta), hw(other, pb, tb));
    let mut replicas = pa.replicas.clone();
    for &r in &pb.replicas {
        if !replicas.contains(&r) {
            replicas.push(r);
        }
    }
    let replicas = crate::sort::sorted_ids(&replicas);
    let log_end = |sim: &Sim, tp, b: BrokerId| {
        sim.brokers
            .get(&b)
            .map_or("no such broker".to_string(), |br| {
                format!("log end offset {}", br.log(tp).log_end_offset())
            })
    };
    for &b in &replicas {
        differ(
            "log end offset",
            Some(b),
            log_end(top, ta, b),
            log_end(other, tb, b),
        );
    }
    for &b in top.brokers.keys() {
        let state = |sim: &Sim| {
            if sim.brokers.get(&b).is_none() {
                return "no such broker".to_string();
            }
            sim.broker_state(b).1.label().to_string()
        };
        differ("process", Some(b), state(top), state(other));
    }
    for &b in &replicas {
        let (Some(x), Some(y)) = (top.brokers.get(&b), other.brokers.get(&b)) else {
            continue;
        };
        let (lx, ly) = (x.log(ta), y.log(tb));
        let from = lx.log_start_offset.max(ly.log_start_offset);
        let to = lx.log_end_offset().min(ly.log_end_offset());
        let mut offset = from;
        while offset < to {
            let (rx, ry) = (
                lx.records.get((offset - lx.log_start_offset) as usize),
                ly.records.get((offset - ly.log_start_offset) as usize),
            );
            if let (Some(rx), Some(ry)) = (rx, ry) {
                if rx.value != ry.value || rx.epoch != ry.epoch {
                    let show = |r: &crate::record::Record| {
                        format!("offset {offset}: {} (leader epoch {})", r.value, r.epoch)
                    };
                    differ("log", Some(b), show(rx), show(ry));
                    break;
                }
            }
            offset += 1;
        }
    }
    let results = |sim: &Sim| {
        let mut pending = 0usize;
        for j in sim.producer.jobs.values() {
            pending += usize::from(j.current.is_some()) + j.pending.len();
        }
        format!(
            "{} acknowledged, {} failed, {pending} pending",
            sim.metrics.produce_ok, sim.metrics.produce_errors
        )
    };
    differ("produce results", None, results(top), results(other));
    let losses = |sim: &Sim| {
        let mut text = String::new();
        for l in sim.losses() {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(&format!(
                "offsets {}..{} ({})",
                l.first_offset,
                l.last_offset,
                l.values.join(",")
            ));
        }
        if text.is_empty() {
            "none".to_string()
        } else {
            text
        }
    };
    differ("committed records lost", None, losses(top), losses(other));
    out
}
