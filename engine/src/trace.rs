//! The bounded trace of what happened: server-log lines, produce results, consumer reads,
//! faults and read-outs, each with its simulated time. The transcript is this trace,
//! formatted one line per event.
//!
//! The trace is copied with every rewind checkpoint (`Sim::clone`), so its storage is
//! shared: events live in sealed, immutable chunks of [`TRACE_CHUNK_EVENTS`] behind an `Arc`,
//! plus one small mutable tail. A clone copies the chunk pointers and the tail (fewer than
//! [`TRACE_CHUNK_EVENTS`] events), never the whole history.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::Serialize;

use crate::event::{Event, Level, TraceKind};
use crate::types::{BrokerId, TimeMs};

/// One event of the trace: what happened ([`Event`]), when, and its place in the run.
///
/// The event is shared, not copied, by clones (each rewind checkpoint copies the trace's
/// tail, and the view copies the events it shows): a derived clone of [`Event`]'s fifty-odd
/// variants was 5 kB of the shipped wasm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEvent {
    /// Position in the whole run (cursor), counting events dropped from the bounded buffer.
    pub seq: u64,
    pub time_ms: TimeMs,
    event: Arc<Event>,
}

impl TraceEvent {
    pub fn new(seq: u64, time_ms: TimeMs, event: Event) -> TraceEvent {
        TraceEvent {
            seq,
            time_ms,
            event: Arc::new(event),
        }
    }

    /// What happened.
    pub fn event(&self) -> &Event {
        &self.event
    }

    pub fn kind(&self) -> TraceKind {
        self.event.kind()
    }

    pub fn level(&self) -> Level {
        self.event.level()
    }

    /// The broker whose log the line is from, if one.
    pub fn broker(&self) -> Option<BrokerId> {
        self.event.broker()
    }

    /// The event's rendering: the Kafka log line or tool output it stands for.
    pub fn text(&self) -> String {
        self.event.to_string()
    }

    /// One transcript line: the simulated time, then the text.
    pub fn line(&self) -> String {
        format!("[{}] {}", format_time(self.time_ms), self.event)
    }
}

/// As the command-line runner's `--json` prints it: the rendered line's parts, and the
/// typed event.
impl Serialize for TraceEvent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("TraceEvent", 7)?;
        st.serialize_field("seq", &self.seq)?;
        st.serialize_field("time_ms", &self.time_ms)?;
        st.serialize_field("kind", &self.kind())?;
        st.serialize_field("level", &self.level())?;
        st.serialize_field("broker", &self.broker())?;
        st.serialize_field("text", &self.text())?;
        st.serialize_field("event", &*self.event)?;
        st.end()
    }
}

/// `12.345s`-style time for transcripts: seconds with milliseconds, padded to line up.
pub fn format_time(ms: TimeMs) -> String {
    format!("{:>4}.{:03}s", ms / 1000, ms % 1000)
}

/// Fewest trace events kept in memory: the newest ones (see [`Trace`] for the exact rule).
pub const MAX_TRACE_EVENTS: usize = 20_000;

/// Events per sealed, shared chunk of the trace.
pub const TRACE_CHUNK_EVENTS: usize = 256;

/// The bounded trace: the newest events of the run, in order.
///
/// Events are stored in chunks aligned on their `seq`: chunk k holds the events with
/// `seq` in `k * TRACE_CHUNK_EVENTS .. (k + 1) * TRACE_CHUNK_EVENTS`. A chunk is sealed
/// (moved behind an `Arc`, never changed again) when its last event is pushed; the newest,
/// unfinished chunk is the mutable tail. Cloning shares every sealed chunk.
///
/// The bound drops whole chunks, oldest first: after every push the trace holds exactly the
/// events with `seq >= first`, where `first` is the largest multiple of
/// [`TRACE_CHUNK_EVENTS`] at or below `next_seq - MAX_TRACE_EVENTS` (0 while
/// `next_seq <= MAX_TRACE_EVENTS`). So it keeps at least [`MAX_TRACE_EVENTS`] events once
/// that many happened, and fewer than `MAX_TRACE_EVENTS + TRACE_CHUNK_EVENTS`; what it keeps
/// depends only on how many events were pushed.
///
/// It serializes as it always did, `{"events": [...], "next_seq": n}`, and compares by
/// content.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Sealed chunks, oldest first; each ends on a chunk boundary.
    chunks: VecDeque<Arc<[TraceEvent]>>,
    /// The newest events, after the last sealed chunk; never a whole chunk.
    tail: Vec<TraceEvent>,
    /// Events held: in `chunks` and `tail` together.
    len: usize,
    next_seq: u64,
}

impl Trace {
    pub fn push(&mut self, time_ms: TimeMs, event: Event) {
        let seq = self.next_seq;
        self.append(TraceEvent::new(seq, time_ms, event));
    }

    /// Adds an event whose `seq` is `next_seq`, seals the tail on a chunk boundary, and
    /// drops the oldest chunks the bound no longer needs.
    fn append(&mut self, event: TraceEvent) {
        self.next_seq = event.seq + 1;
        self.tail.push(event);
        self.len += 1;
        if self.next_seq.is_multiple_of(TRACE_CHUNK_EVENTS as u64) {
            // Moves the events into one new allocation, and gives the tail a new buffer of a
            // chunk's size (`Arc::from` a `Vec`, not `drain(..).collect()`: less wasm).
            let full = std::mem::replace(&mut self.tail, Vec::with_capacity(TRACE_CHUNK_EVENTS));
            self.chunks.push_back(Arc::from(full));
        }
        while let Some(oldest) = self.chunks.front() {
            if self.len - oldest.len() < MAX_TRACE_EVENTS {
                break;
            }
            self.len -= oldest.len();
            self.chunks.pop_front();
        }
    }

    /// Events with `seq >= cursor`, at most `limit`, and the cursor to pass next time.
    pub fn since(&self, cursor: u64, limit: usize) -> (Vec<TraceEvent>, u64) {
        // Loops, not `iter().skip(..).take(..).cloned().collect()`: a collect over a flattened
        // iterator compiles its body twice (and the web inlines this).
        let mut out = Vec::new();
        'chunks: for k in 0..self.slice_count() {
            let s = self.slice(k);
            for e in &s[s.partition_point(|e| e.seq < cursor)..] {
                if out.len() == limit {
                    break 'chunks;
                }
                out.push(e.clone());
            }
        }
        let next = out
            .last()
            .map_or(cursor.max(self.first_seq()), |e| e.seq + 1);
        (out, next)
    }

    pub fn first_seq(&self) -> u64 {
        self.next_seq - self.len as u64
    }

    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// How many events are kept.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The kept events, oldest first.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            trace: self,
            front: self.first_seq(),
            back: self.next_seq,
        }
    }

    /// The kept event numbered `seq` (which must be kept). Sealed chunks are aligned on
    /// multiples of [`TRACE_CHUNK_EVENTS`], so its chunk is found by division.
    fn by_seq(&self, seq: u64) -> &TraceEvent {
        let size = TRACE_CHUNK_EVENTS as u64;
        if let Some(first) = self.chunks.front() {
            let k = (seq / size - first[0].seq / size) as usize;
            if let Some(c) = self.chunks.get(k) {
                return &c[(seq - c[0].seq) as usize];
            }
        }
        &self.tail[(seq - self.tail[0].seq) as usize]
    }

    /// The kept events with `from <= time_ms <= to`, oldest first. A loop over the chunks,
    /// so that callers search a slice: each filtered walk over the flattened chunks was its
    /// own code in the wasm.
    pub(crate) fn between(&self, from: TimeMs, to: TimeMs) -> Vec<&TraceEvent> {
        let mut out = Vec::new();
        for k in 0..self.slice_count() {
            for e in self.slice(k) {
                if e.time_ms >= from && e.time_ms <= to {
                    out.push(e);
                }
            }
        }
        out
    }

    /// The `k`th sealed chunk, or the tail for `k == chunks.len()`: the loops over the
    /// kept events go by index, without a chained iterator's code.
    pub(crate) fn slice(&self, k: usize) -> &[TraceEvent] {
        match self.chunks.get(k) {
            Some(c) => c,
            None => &self.tail,
        }
    }

    /// The number of slices [`Trace::slice`] gives: the sealed chunks and the tail.
    pub(crate) fn slice_count(&self) -> usize {
        self.chunks.len() + 1
    }
}

/// The kept events in order, by sequence number: one small iterator instead of the chunks
/// flattened (whose folds and `size_hint` were compiled for each use in the wasm).
pub struct Iter<'a> {
    trace: &'a Trace,
    /// The next event from the front, and one past the next from the back.
    front: u64,
    back: u64,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a TraceEvent;

    fn next(&mut self) -> Option<&'a TraceEvent> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        Some(self.trace.by_seq(self.front - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.back - self.front) as usize;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.trace.by_seq(self.back))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl PartialEq for Trace {
    fn eq(&self, other: &Trace) -> bool {
        self.next_seq == other.next_seq && self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Trace {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_reads_are_bounded_and_resume() {
        let mut t = Trace::default();
        for i in 0..5 {
            t.push(i * 10, caption(format!("e{i}")));
        }
        let (a, c) = t.since(0, 2);
        assert_eq!(
            a.iter().map(|e| e.text()).collect::<Vec<_>>(),
            ["# e0", "# e1"]
        );
        let (b, c2) = t.since(c, 10);
        assert_eq!(b.len(), 3);
        assert_eq!(c2, 5);
        assert!(t.since(c2, 10).0.is_empty());
        assert_eq!(format_time(5126), "   5.126s");
    }

    /// The documented rule, on a plain deque: push, then keep the events from the largest
    /// multiple of TRACE_CHUNK_EVENTS at or below next_seq - MAX_TRACE_EVENTS.
    #[derive(Default)]
    struct Reference {
        events: VecDeque<TraceEvent>,
        next_seq: u64,
    }

    impl Reference {
        fn push(&mut self, e: TraceEvent) {
            self.events.push_back(e);
            self.next_seq += 1;
            let chunk = TRACE_CHUNK_EVENTS as u64;
            let first = self.next_seq.saturating_sub(MAX_TRACE_EVENTS as u64) / chunk * chunk;
            while self.events.front().is_some_and(|e| e.seq < first) {
                self.events.pop_front();
            }
        }
    }

    fn caption(text: String) -> Event {
        Event::Caption { text }
    }

    fn event(i: u64) -> TraceEvent {
        TraceEvent::new(
            i,
            i / 3,
            caption(format!("event {i} {}", "x".repeat((i % 13) as usize))),
        )
    }

    fn push(t: &mut Trace, r: &mut Reference, i: u64) {
        let e = event(i);
        t.push(e.time_ms, e.event().clone());
        r.push(e);
    }

    fn assert_same(t: &Trace, r: &Reference) {
        assert_eq!(t.next_seq(), r.next_seq);
        assert_eq!(t.len(), r.events.len());
        assert!(t.iter().eq(r.events.iter()), "at next_seq {}", r.next_seq);
        assert!(t.iter().rev().eq(r.events.iter().rev()));
        assert_eq!(
            t.first_seq(),
            r.events.front().map_or(r.next_seq, |e| e.seq)
        );
        for cursor in [
            0,
            t.first_seq() + 1,
            r.next_seq.saturating_sub(300),
            r.next_seq,
        ] {
            for limit in [0, 1, 400, usize::MAX] {
                let expected: Vec<TraceEvent> = r
                    .events
                    .iter()
                    .filter(|e| e.seq >= cursor)
                    .take(limit)
                    .cloned()
                    .collect();
                let next = expected
                    .last()
                    .map_or(cursor.max(t.first_seq()), |e| e.seq + 1);
                assert_eq!(
                    t.since(cursor, limit),
                    (expected, next),
                    "since({cursor}, {limit})"
                );
            }
        }
    }

    #[test]
    fn keeps_what_the_documented_rule_keeps() {
        let mut t = Trace::default();
        let mut r = Reference::default();
        assert_same(&t, &r);
        let mut i = 0;
        // Across the first seal, the bound, and several turnovers of the whole buffer.
        for until in [
            1, 255, 256, 257, 19_999, 20_000, 20_001, 20_255, 20_480, 20_481, 65_537,
        ] {
            while i < until {
                push(&mut t, &mut r, i);
                i += 1;
            }
            assert_same(&t, &r);
        }
        assert!(t.len() >= MAX_TRACE_EVENTS && t.len() < MAX_TRACE_EVENTS + TRACE_CHUNK_EVENTS);
        assert_eq!(t.first_seq() % TRACE_CHUNK_EVENTS as u64, 0);
    }

    #[test]
    fn a_clone_shares_every_sealed_chunk_and_copies_only_the_tail() {
        let mut t = Trace::default();
        let mut r = Reference::default();
        for i in 0..30_100 {
            push(&mut t, &mut r, i);
        }
        let copy = t.clone();
        assert_eq!(copy, t);
        assert!(copy.chunks.len() >= MAX_TRACE_EVENTS / TRACE_CHUNK_EVENTS);
        assert_eq!(copy.chunks.len(), t.chunks.len());
        for (a, b) in copy.chunks.iter().zip(&t.chunks) {
            assert!(Arc::ptr_eq(a, b), "chunk at seq {} copied", a[0].seq);
        }
        assert!(copy.tail.len() < TRACE_CHUNK_EVENTS);
        assert_eq!(
            copy.chunks.iter().map(|c| c.len()).sum::<usize>() + copy.tail.len(),
            copy.len()
        );
        // The original moves on; the copy does not see it and the chunks stay shared.
        let before: Vec<TraceEvent> = copy.iter().cloned().collect();
        for i in 30_100..31_000 {
            push(&mut t, &mut r, i);
        }
        assert_same(&t, &r);
        assert!(copy.iter().eq(before.iter()));
        assert!(t
            .chunks
            .iter()
            .any(|c| copy.chunks.iter().any(|d| Arc::ptr_eq(c, d))));
    }

    #[test]
    fn a_simulation_clone_shares_its_trace() {
        let mut s = crate::Scenario {
            brokers: 5,
            end_ms: Some(120_000),
            ..crate::Scenario::default()
        };
        s.timeline = (0..4_000)
            .map(|i| crate::TimedAction {
                at: i * 30,
                action: crate::Action::Epochs {
                    topic: None,
                    partition: None,
                },
            })
            .collect();
        let sim = crate::run(&s, true).unwrap();
        assert!(sim.trace.len() >= MAX_TRACE_EVENTS, "the trace is full");
        let copy = sim.clone();
        assert!(copy
            .trace
            .chunks
            .iter()
            .zip(&sim.trace.chunks)
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        assert_eq!(copy.transcript(), sim.transcript());
    }
}
