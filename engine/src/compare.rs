//! Side-by-side runs (issue 15, docs/history.md "Side by side"): a scenario's `compare`
//! lists up to [`MAX_VARIANTS`] variants ([`Variant`], a type of the scenario format in
//! `scenario.rs`, with [`Scenario::variant`], the scenario a variant runs), each run beside
//! the scenario itself (the top run) under the same timeline. Here: how a variant's run
//! takes a person's action ([`Variant::adapt`]), and what differs between two runs at one
//! moment ([`differences`]), in Kafka's words.
//!
//! Nothing here runs during a simulation: a run that does not compare pays nothing, and a
//! compared run is an ordinary `Sim` of its own scenario.

use serde::Serialize;

#[cfg(doc)]
use crate::scenario::Scenario;
use crate::scenario::{AcksOrDefault, Action};
pub use crate::scenario::{Variant, MAX_LABEL_LEN, MAX_VARIANTS};
use crate::sim::Sim;
use crate::types::BrokerId;

impl Variant {
    /// A person's action during a session, as this variant's run takes it: a `produce`'s
    /// `acks` replaced when the variant sets `acks`; a `set_config` of a config the variant
    /// overrides gives None (the comparison keeps its difference); anything else unchanged.
    /// No action changes a topic's own configs (`set_config` is `kafka-configs.sh
    /// --entity-type brokers`), so a variant's `topics` leave every action as it is.
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
