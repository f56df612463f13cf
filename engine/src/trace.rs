//! The bounded trace of what happened: server-log lines, produce results, consumer reads,
//! faults and read-outs, each with its simulated time. The transcript is this trace,
//! formatted one line per event.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::types::{BrokerId, TimeMs};

/// What kind of event a trace line records (the UI filters on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// An input: a fault, a config change, an election request.
    Action,
    /// A read-out: describe, offsets, epochs, checkpoints, log dumps.
    Readout,
    Produce,
    Consume,
    /// ISR shrink/expand and AlterPartition results.
    Isr,
    Election,
    Truncation,
    /// Registration, fencing, controlled shutdown.
    Controller,
    /// Broker lifecycle and replica state changes (becoming leader or follower).
    Broker,
    /// Committed records lost (after an unclean election or a lost disk).
    Loss,
    /// An invariant was broken: an engine bug.
    Violation,
    /// A free-text note from the scenario.
    Note,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Position in the whole run (cursor), counting events dropped from the bounded buffer.
    pub seq: u64,
    pub time_ms: TimeMs,
    pub kind: TraceKind,
    pub level: Level,
    pub broker: Option<BrokerId>,
    pub text: String,
}

impl TraceEvent {
    /// One transcript line: the simulated time, then the text.
    pub fn line(&self) -> String {
        format!("[{}] {}", format_time(self.time_ms), self.text)
    }
}

/// `12.345s`-style time for transcripts: seconds with milliseconds, padded to line up.
pub fn format_time(ms: TimeMs) -> String {
    format!("{:>4}.{:03}s", ms / 1000, ms % 1000)
}

/// Most trace events kept in memory.
pub const MAX_TRACE_EVENTS: usize = 20_000;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    events: VecDeque<TraceEvent>,
    next_seq: u64,
}

impl Trace {
    pub fn push(
        &mut self,
        time_ms: TimeMs,
        kind: TraceKind,
        level: Level,
        broker: Option<BrokerId>,
        text: String,
    ) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.events.push_back(TraceEvent {
            seq,
            time_ms,
            kind,
            level,
            broker,
            text,
        });
        if self.events.len() > MAX_TRACE_EVENTS {
            self.events.pop_front();
        }
    }

    /// Events with `seq >= cursor`, at most `limit`, and the cursor to pass next time.
    pub fn since(&self, cursor: u64, limit: usize) -> (Vec<TraceEvent>, u64) {
        let out: Vec<TraceEvent> = self
            .events
            .iter()
            .filter(|e| e.seq >= cursor)
            .take(limit)
            .cloned()
            .collect();
        let next = out
            .last()
            .map_or(cursor.max(self.first_seq()), |e| e.seq + 1);
        (out, next)
    }

    pub fn first_seq(&self) -> u64 {
        self.events.front().map_or(self.next_seq, |e| e.seq)
    }

    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    pub fn iter(&self) -> impl Iterator<Item = &TraceEvent> {
        self.events.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_reads_are_bounded_and_resume() {
        let mut t = Trace::default();
        for i in 0..5 {
            t.push(i * 10, TraceKind::Note, Level::Info, None, format!("e{i}"));
        }
        let (a, c) = t.since(0, 2);
        assert_eq!(
            a.iter().map(|e| e.text.as_str()).collect::<Vec<_>>(),
            ["e0", "e1"]
        );
        let (b, c2) = t.since(c, 10);
        assert_eq!(b.len(), 3);
        assert_eq!(c2, 5);
        assert!(t.since(c2, 10).0.is_empty());
        assert_eq!(format_time(5126), "   5.126s");
    }
}
