//! The cluster view: one SVG lane per broker with its log cells, LEO and HW markers, role,
//! state, ISR/ELR membership and lag bar; the controller; and the messages in flight.
//! Thin: every position comes from `geometry`, every fact from the snapshot.

// `attr=move || f()` rather than `attr=f`: with `erase_components` only a closure written in
// the view is boxed (one monomorphization per output type); a named one is its own
// (BENCHMARKS.md, "Shipped size").
#![allow(clippy::redundant_closure)]

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use watermark_engine::snapshot::{
    ArrivalOutcome, BrokerSnapshot, BrokerState, IsrChange, MessageSnapshot, ReplicaRole, Snapshot,
};
use watermark_engine::types::{join_ids, BrokerId, MessageKind, Node, ProcessState};

use crate::geometry::{self, num, OffsetWindow, CELL_H, CELL_W, LABEL_W};
use crate::state::Clock;

/// One drawn cell: everything that decides how it looks, so it is its own key. Its x is
/// fixed by its offset inside the sliding log group (`geometry::log_x`), so a cell keeps
/// its DOM nodes while the window slides; only a change of what it shows replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CellData {
    broker: BrokerId,
    lane: usize,
    offset: u64,
    epoch: i32,
    value: String,
    kind: &'static str,
    label: &'static str,
    /// The first cell of a run of one leader epoch in the window: it carries the epoch's
    /// label (`e3`), and the cells after it in that epoch do not repeat it. The labels are
    /// where the log's epochs start, as in its leader-epoch-checkpoint; drawing one per cell
    /// doubled the text the lanes lay out and raster (BENCHMARKS.md, "UI").
    epoch_start: bool,
    /// The record's producerId, producerEpoch and sequence (-1 without idempotence).
    producer: (i64, i32, i32),
}

fn leader_of(snap: &Snapshot) -> Option<&BrokerSnapshot> {
    snap.controller
        .leader
        .and_then(|l| snap.brokers.iter().find(|b| b.id == l))
}

fn window_of(snap: &Snapshot, width: f64) -> OffsetWindow {
    let max = snap
        .brokers
        .iter()
        .map(|b| b.log_end_offset)
        .max()
        .unwrap_or(0);
    geometry::offset_window(max, geometry::cell_capacity(width))
}

fn cells(snap: &Snapshot, window: OffsetWindow) -> Vec<CellData> {
    let leader = leader_of(snap);
    // The committed history runs from offset `from` with one record per offset.
    let from = snap.committed.first().map_or(0, |r| r.offset);
    let committed_at = |offset: u64| {
        offset
            .checked_sub(from)
            .and_then(|i| snap.committed.get(usize::try_from(i).ok()?))
            .filter(|r| r.offset == offset)
    };
    let lost = |r: &watermark_engine::record::Record| {
        snap.losses.iter().any(|l| {
            // A loss of another partition (the lanes show one) is not this log's.
            l.tp.as_ref()
                .is_none_or(|t| t.partition == snap.partition && t.topic == snap.topic)
                && (l.first_offset..=l.last_offset).contains(&r.offset)
                && usize::try_from(r.offset - l.first_offset)
                    .ok()
                    .is_some_and(|i| {
                        l.values.get(i) == Some(&r.value) && l.epochs.get(i) == Some(&r.epoch)
                    })
        })
    };
    let mut out = vec![];
    for (i, b) in snap
        .brokers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.hosts_replica)
    {
        let mut previous_epoch = None;
        for r in b.records.iter().filter(|r| r.offset >= window.first) {
            if geometry::cell_x(r.offset, window).is_none() {
                continue;
            }
            let epoch_start = previous_epoch != Some(r.epoch);
            previous_epoch = Some(r.epoch);
            let leader_record = leader.and_then(|l| {
                l.records
                    .binary_search_by_key(&r.offset, |x| x.offset)
                    .ok()
                    .map(|i| &l.records[i])
            });
            let kind = geometry::cell_kind(r, leader_record, committed_at(r.offset), lost(r));
            out.push(CellData {
                broker: b.id,
                lane: i,
                offset: r.offset,
                epoch: r.epoch,
                value: r.value.clone(),
                kind: kind.class(),
                label: kind.label(),
                epoch_start,
                producer: (r.producer_id, i32::from(r.producer_epoch), r.sequence),
            });
        }
    }
    out
}

/// Where a marker for `offset` stands in the window (offsets left of it pin to its edge).
fn marker_x(offset: u64, w: OffsetWindow) -> Option<f64> {
    let x = geometry::cell_x(offset, w).or_else(|| (offset < w.first).then_some(LABEL_W))?;
    Some(x - 1.5)
}

/// What a lane draws besides its cells: its place, its label, its markers and the window's
/// shift.
#[derive(Debug, Clone, PartialEq, Default)]
struct LaneHead {
    index: usize,
    info: Option<LaneInfo>,
    hw_x: Option<f64>,
    leo_x: Option<f64>,
    shift: f64,
}

/// Every lane's head and cells for a snapshot and window. The cluster view computes them
/// once per change and sets each lane's signals only where they changed: a Leptos effect
/// downstream of a changed signal wakes even when the memos between them turn out equal,
/// so lanes that read the snapshot through memos all woke on every snapshot.
fn lane_views(snap: &Snapshot, window: OffsetWindow) -> Vec<(BrokerId, LaneHead, Vec<CellData>)> {
    let mut all = cells(snap, window);
    snap.brokers
        .iter()
        .enumerate()
        .map(|(index, b)| {
            let mine: Vec<CellData> = all.iter().filter(|c| c.broker == b.id).cloned().collect();
            all.retain(|c| c.broker != b.id);
            let head = LaneHead {
                index,
                info: Some(lane_info(b, snap.time_ms, snap.controller.leader)),
                hw_x: marker_x(b.high_watermark, window),
                leo_x: marker_x(b.log_end_offset, window),
                shift: geometry::window_shift(window),
            };
            (b.id, head, mine)
        })
        .collect()
}

/// How a slot draws its message: in flight (where it is by the shown time), or just off the
/// wire (`Sim::record_arrivals`): at its destination, hollow, with the path it took, fading
/// over [`TRAIL_MS`]. A 40 ms flight is two or three frames at 1×; its trail is what a person
/// can follow, and it only ever says what did happen: arrived, or dropped and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drawn {
    Flying,
    Arrived { at: u64, outcome: ArrivalOutcome },
}

/// How long (simulated ms) a message's trail stays after it left the wire: 0.6 s at 1×.
pub const TRAIL_MS: u64 = 600;

/// The most trail labels stacked at one destination.
const STACKED_LABELS: u32 = 3;

/// One drawn message slot: its elements, which the next new message reuses once this one has
/// arrived. At 10× and faster a message lives a frame or two, so creating and removing its
/// elements (and a component) each time was most of a frame (docs/ui.md, "Rules that
/// keep frames cheap"); a pooled slot only has its class, texts and transform set.
struct Flight {
    /// The message drawn, or `None`: the slot is free and hidden (class `free`).
    id: Option<u64>,
    drawn: Drawn,
    g: web_sys::Element,
    /// The texts of the circle's `<title>` and of the label: their data is set in place.
    title: web_sys::Text,
    label: web_sys::Text,
    /// The path a trail shows, from the sender to the destination (where the slot is).
    path: web_sys::Element,
    from: (f64, f64),
    to: (f64, f64),
    sent_ms: u64,
    deliver_ms: u64,
    buffered: bool,
    /// The `transform` and the trail's fade last set.
    placed: String,
    faded: u32,
    /// How many label lines the label is lifted ([`Flight::stack_label`]).
    stack: u32,
    /// The route last drawn (kept when the slot is freed: [`assign_slots`] gives the slot
    /// to the next message on it), and what `show` last set, each set again only when it
    /// changed: a slot's next message on the same route changes few of them.
    route: (Node, Node),
    set: [String; 8],
    /// Whether the label was kept current when this slot was last shown: while labels are
    /// not drawn (`geometry::labels_drawn`, hidden by the `unlabelled` class) its text and
    /// place are left as they were, and set again once labels are drawn.
    labelled: bool,
}

const SVG_NS: &str = "http://www.w3.org/2000/svg";

impl Flight {
    /// A new hidden slot: `<g><line class=trail-path/><circle r=8><title/></circle>
    /// <text class=packet-label/></g>`, appended to `parent`.
    fn new(parent: &web_sys::Element) -> Option<Flight> {
        let doc = parent.owner_document()?;
        let make = |tag: &str, attrs: &[(&str, &str)]| {
            let el = doc.create_element_ns(Some(SVG_NS), tag).ok()?;
            for (k, v) in attrs {
                el.set_attribute(k, v).ok()?;
            }
            Some(el)
        };
        let g = make("g", &[("class", "free")])?;
        let path = make("line", &[("class", "trail-path")])?;
        let circle = make("circle", &[("cx", "0"), ("cy", "0"), ("r", "8")])?;
        let title = make("title", &[])?;
        let label = make(
            "text",
            &[("class", "packet-label"), ("x", "11"), ("y", "-10")],
        )?;
        let (title_text, label_text) = (doc.create_text_node(""), doc.create_text_node(""));
        title.append_child(&title_text).ok()?;
        label.append_child(&label_text).ok()?;
        circle.append_child(&title).ok()?;
        g.append_child(&path).ok()?;
        g.append_child(&circle).ok()?;
        g.append_child(&label).ok()?;
        parent.append_child(&g).ok()?;
        Some(Flight {
            id: None,
            drawn: Drawn::Flying,
            g,
            title: title_text,
            label: label_text,
            path,
            from: (0.0, 0.0),
            to: (0.0, 0.0),
            sent_ms: 0,
            deliver_ms: 0,
            buffered: false,
            placed: String::new(),
            faded: 100,
            stack: 0,
            route: (Node::Controller, Node::Controller),
            set: Default::default(),
            labelled: true,
        })
    }

    fn transform(&self, now: f64) -> String {
        let (x, y) = match self.drawn {
            Drawn::Arrived { .. } => self.to,
            Drawn::Flying => geometry::message_position(
                self.from,
                self.to,
                self.sent_ms,
                self.deliver_ms,
                now,
                self.buffered,
            ),
        };
        geometry::translate(x, y)
    }

    /// Draws `m` in this slot as `drawn`, between `ends`, placed for `now`, in a picture
    /// `width` wide; its label only `with_label`.
    fn show(
        &mut self,
        m: &MessageSnapshot,
        drawn: Drawn,
        ends: ((f64, f64), (f64, f64)),
        now: f64,
        width: f64,
        with_label: bool,
    ) {
        self.labelled = with_label;
        self.id = Some(m.id);
        self.drawn = drawn;
        (self.from, self.to) = ends;
        self.sent_ms = m.sent_ms;
        self.deliver_ms = m.deliver_ms;
        self.buffered = m.buffered;
        let kind = m.kind.name().to_ascii_lowercase();
        let route = format!("{} → {}", node_label(m.from), node_label(m.to));
        let (class, title, short) = match drawn {
            Drawn::Flying => (
                format!("packet {kind}{}", if m.buffered { " buffered" } else { "" }),
                format!("{route}: {}", m.summary),
                labelled(m.kind).then_some(m.summary.clone()),
            ),
            Drawn::Arrived { at, outcome } => {
                let (class, said) = arrival_words(outcome, m.to);
                (
                    format!("trail {kind}{class}"),
                    format!("{route}: {}; {said} at {at} ms", m.summary),
                    match outcome {
                        ArrivalOutcome::Received => labelled(m.kind).then_some(m.summary.clone()),
                        _ => Some(format!("{} {said}", m.kind)),
                    },
                )
            }
        };
        // The label goes to the left of a message in the right half of the picture, so that
        // it is not cut off at the picture's edge. The trail's path runs from the sender to
        // the slot, which sits at the destination.
        let left = label_on_left(ends, width);
        let (from, to) = ends;
        let (dx, dy) = (from.0 - to.0, from.1 - to.1);
        let now_set = [
            class,
            m.id.to_string(),
            title,
            short.unwrap_or_default(),
            format!("{}", dx.round() as i64),
            format!("{}", dy.round() as i64),
            (if left { "-11" } else { "11" }).into(),
            (if left { "end" } else { "start" }).into(),
        ];
        let label = self.label.parent_element();
        for (k, v) in now_set.into_iter().enumerate() {
            // The label's text and place (3, 6, 7) wait while labels are not drawn.
            if self.set[k] == v || (!with_label && (k == 3 || k >= 6)) {
                continue;
            }
            let _ = match k {
                0 => self.g.set_attribute("class", &v),
                1 => self.g.set_attribute("data-id", &v),
                2 | 3 => {
                    [&self.title, &self.label][k - 2].set_data(&v);
                    Ok(())
                }
                4 => self.path.set_attribute("x1", &v),
                5 => self.path.set_attribute("y1", &v),
                _ => match &label {
                    Some(l) => l.set_attribute(["x", "text-anchor"][k - 6], &v),
                    None => Ok(()),
                },
            };
            self.set[k] = v;
        }
        self.route = (m.from, m.to);
        self.faded = u32::MAX;
        self.move_to(now);
    }

    /// Lifts the label `k` lines up: trails that arrived at one place label one above the
    /// other, newest lowest, instead of over each other; beyond [`STACKED_LABELS`] lines
    /// the older ones keep their ring and path, and their tooltip, but no label.
    fn stack_label(&mut self, k: u32) {
        if k != self.stack && self.labelled {
            if let Some(label) = self.label.parent_element() {
                let y = 10 + 13 * k.min(STACKED_LABELS);
                let _ = label.set_attribute("y", &format!("-{y}"));
                let _ = if k < STACKED_LABELS {
                    label.remove_attribute("visibility")
                } else {
                    label.set_attribute("visibility", "hidden")
                };
            }
            self.stack = k;
        }
    }

    fn hide(&mut self) {
        self.id = None;
        let _ = self.g.set_attribute("class", "free");
        self.set[0] = "free".into();
    }

    fn move_to(&mut self, now: f64) {
        let t = self.transform(now);
        if t != self.placed {
            let _ = self.g.set_attribute("transform", &t);
            self.placed = t;
        }
        if let Drawn::Arrived { at, .. } = self.drawn {
            let fade = geometry::trail_opacity_percent(now - at as f64, TRAIL_MS as f64);
            if fade != self.faded {
                // A fraction for stroke-opacity: 90% is "0.9" (always a whole tenth).
                let _ = self
                    .g
                    .set_attribute("style", &format!("--fade:0.{}", fade / 10));
                self.faded = fade;
            }
        } else if self.faded != 100 {
            let _ = self.g.remove_attribute("style");
            self.faded = 100;
        }
    }
}

/// The kinds of message labelled with their fields in the picture (the others are named in
/// their tooltip and the legend).
fn labelled(kind: MessageKind) -> bool {
    matches!(
        kind,
        MessageKind::Fetch
            | MessageKind::FetchResponse
            | MessageKind::Produce
            | MessageKind::ProduceResponse
            | MessageKind::AlterPartition
    )
}

/// A trail's extra class and what it says became of the message, sent to `to`.
fn arrival_words(outcome: ArrivalOutcome, to: Node) -> (&'static str, String) {
    match outcome {
        ArrivalOutcome::Received => ("", "arrived".into()),
        ArrivalOutcome::LinkCut => (" dropped", "dropped: the link is cut".into()),
        ArrivalOutcome::ProcessGone => (
            " dropped",
            format!(
                "dropped: {}'s process it was sent to is gone",
                node_label(to)
            ),
        ),
    }
}

/// For each labelled trail, how many newer labelled trails arrived at the same place (its
/// label goes that many lines up); messages in flight keep their label's place.
fn label_stacks(drawn: &[(&MessageSnapshot, Drawn)]) -> Vec<(u64, u32)> {
    let mut seen: Vec<(Node, u32)> = vec![];
    let mut out = vec![];
    for (m, d) in drawn.iter().rev() {
        let Drawn::Arrived { outcome, .. } = d else {
            continue;
        };
        if *outcome == ArrivalOutcome::Received && !labelled(m.kind) {
            continue;
        }
        let k = match seen.iter_mut().find(|x| x.0 == m.to) {
            Some(x) => {
                x.1 += 1;
                x.1
            }
            None => {
                seen.push((m.to, 0));
                0
            }
        };
        out.push((m.id, k));
    }
    out
}

/// The messages the flow layer draws at `now`: those in flight, then those that left the
/// wire less than [`TRAIL_MS`] ago (oldest first), each once, and on each route (from one
/// node to another) only the newest trail. While records flow a follower fetches every
/// round trip, and a trail per message meant dozens of paths drawn at once, most of them
/// over each other, and twice the page's paint cost (BENCHMARKS.md, "UI").
fn drawn_messages(s: &Snapshot, now: f64) -> Vec<(&MessageSnapshot, Drawn)> {
    let mut routes: Vec<(Node, Node)> = vec![];
    let mut trails: Vec<(&MessageSnapshot, Drawn)> = vec![];
    for a in s.arrivals.iter().rev() {
        let age = now - a.at as f64;
        let route = (a.message.from, a.message.to);
        if !(0.0..TRAIL_MS as f64).contains(&age) || routes.contains(&route) {
            continue;
        }
        routes.push(route);
        trails.push((
            &a.message,
            Drawn::Arrived {
                at: a.at,
                outcome: a.outcome,
            },
        ));
    }
    trails.reverse();
    s.in_flight
        .iter()
        .map(|m| (m, Drawn::Flying))
        .chain(trails)
        .collect()
}

/// A message's label goes to its left when the message travels in the right half of the
/// picture.
fn label_on_left(ends: ((f64, f64), (f64, f64)), width: f64) -> bool {
    (ends.0 .0 + ends.1 .0) / 2.0 > width / 2.0
}

/// Which message each pooled slot draws next: a message still in flight keeps its slot, a
/// new one takes a free slot that last drew the same route (from one node to the same other:
/// its path, label side and place are already right, so fewer of its attributes change),
/// else the first free slot, and the pool grows only when none is free. At 10× a route's
/// newest trail is another message each frame (BENCHMARKS.md, "Issue 14's third session").
fn assign_slots<R: PartialEq>(slots: &[(Option<u64>, R)], wanted: &[(u64, R)]) -> Vec<Option<u64>> {
    let mut out: Vec<Option<u64>> = slots
        .iter()
        .map(|s| s.0.filter(|id| wanted.iter().any(|w| w.0 == *id)))
        .collect();
    for (id, route) in wanted {
        if out.contains(&Some(*id)) {
            continue;
        }
        let free = |i: &usize| out[*i].is_none();
        match (0..out.len())
            .filter(free)
            .find(|i| slots[*i].1 == *route)
            .or_else(|| (0..out.len()).find(free))
        {
            Some(i) => out[i] = Some(*id),
            None => out.push(Some(*id)),
        }
    }
    out
}

/// Where a message's ends are drawn. Broker ends sit at the broker's log end as it is when
/// the message is first drawn: a fetch leaves from the follower's LEO and lands at the
/// leader's.
fn message_ends(s: &Snapshot, m: &MessageSnapshot, width: f64) -> ((f64, f64), (f64, f64)) {
    let window = window_of(s, width);
    let index_of = |id: BrokerId| s.brokers.iter().position(|x| x.id == id);
    let anchor = |n: Node| match n {
        Node::Broker(b) => {
            let leo = s
                .brokers
                .iter()
                .find(|x| x.id == b)
                .map_or(0, |x| x.log_end_offset);
            let (_, y) = geometry::node_anchor(n, index_of);
            let x = geometry::cell_x(leo, window).unwrap_or(LABEL_W) + CELL_W / 2.0;
            (x, y - CELL_H / 2.0 - 4.0)
        }
        other => geometry::node_anchor(other, index_of),
    };
    (anchor(m.from), anchor(m.to))
}

/// One lane's signals, as the cluster view keeps them.
type LaneSignals = (BrokerId, RwSignal<LaneHead>, RwSignal<Vec<CellData>>);

/// A record a truncation threw away, drawn falling out of its lane for a few seconds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Ghost {
    broker: BrokerId,
    time_ms: u64,
    lane: usize,
    offset: u64,
    epoch: i32,
    value: String,
}

/// How long (simulated ms) truncated records stay visible as they fall away.
pub const GHOST_MS: f64 = 3_000.0;

fn ghosts(snap: &Snapshot, window: OffsetWindow, now: f64) -> Vec<Ghost> {
    let mut out = vec![];
    for t in &snap.truncations {
        let age = now - t.time_ms as f64;
        if !(0.0..GHOST_MS).contains(&age) {
            continue;
        }
        let Some(lane) = snap.brokers.iter().position(|b| b.id == t.broker) else {
            continue;
        };
        for r in &t.removed {
            if geometry::cell_x(r.offset, window).is_none() {
                continue;
            }
            out.push(Ghost {
                broker: t.broker,
                time_ms: t.time_ms,
                lane,
                offset: r.offset,
                epoch: r.epoch,
                value: r.value.clone(),
            });
        }
    }
    out
}

/// A value as its cell shows it: whole when it fits (five characters), else its first
/// character and its tail, which tells records named `prefix-N` apart (`shared-12` is
/// `s…-12`).
fn short(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() <= 5 {
        return value.to_string();
    }
    let head: String = chars[..1].iter().collect();
    let tail: String = chars[chars.len() - 3..].iter().collect();
    format!("{head}…{tail}")
}

/// The shown simulated time as a float, for motion.
fn now_of(clock: RwSignal<Clock>) -> f64 {
    clock.with(|c| c.now as f64)
}

fn now_of_untracked(clock: RwSignal<Clock>) -> f64 {
    clock.with_untracked(|c| c.now as f64)
}

/// The cluster view is a stack of SVGs in one box: a head (the controller and the offset
/// ruler), one SVG per broker lane, and an overlay for what moves (messages in flight and
/// truncated records falling away). Every part draws in the same coordinates (a lane's
/// viewBox is its slice of them), and each is its own paint layer (`contain: content` in
/// style/main.css), so a frame repaints the parts that changed: the overlay, and the lanes
/// whose broker changed, instead of the whole picture.
#[component]
pub fn ClusterView(
    snap: RwSignal<Arc<Snapshot>>,
    clock: RwSignal<Clock>,
    tick: RwSignal<u64>,
    lag_time_max_ms: Memo<u64>,
    width: RwSignal<u64>,
    broker_ids: Memo<Vec<BrokerId>>,
    /// Whether messages and trails carry labels (`geometry::labels_drawn`).
    labels: Memo<bool>,
) -> impl IntoView {
    let width_px = move || width.get() as f64;
    let window = Memo::new(move |_| snap.with(|s| window_of(s, width_px())));
    let shift = move || geometry::translate(geometry::window_shift(window.get()), 0.0);
    // Each lane's signals, set from one effect only where they changed (see `lane_views`).
    let lanes = StoredValue::new(Vec::<LaneSignals>::new());
    // Messages in flight: a pool of slots (see `Flight`). The snapshot's effect (below) also
    // assigns its messages to slots; another effect moves the drawn ones each frame.
    let flow = NodeRef::<leptos::svg::G>::new();
    let flights = StoredValue::new_local(Vec::<Flight>::new());
    // One effect for what follows the snapshot (each effect is code of its own): the lanes'
    // signals, then the messages' slots.
    Effect::new(move |_| {
        let w = window.get();
        let views = snap.with(|s| lane_views(s, w));
        lanes.with_value(|lanes| {
            for (id, head, cells) in lanes {
                let Some((_, h, c)) = views.iter().find(|v| v.0 == *id) else {
                    continue;
                };
                if head.try_with_untracked(|x| x != h) == Some(true) {
                    head.try_set(h.clone());
                }
                if cells.try_with_untracked(|x| x != c) == Some(true) {
                    cells.try_set(c.clone());
                }
            }
        });
        let Some(parent) = flow.get() else {
            return;
        };
        let parent: &web_sys::Element = &parent;
        let now = now_of_untracked(clock);
        let width = width.get_untracked() as f64;
        let labelled = labels.get();
        snap.with(|s| {
            let drawn = drawn_messages(s, now);
            let stacks = label_stacks(&drawn);
            flights.update_value(|flights| {
                let wanted: Vec<_> = drawn.iter().map(|(m, _)| (m.id, (m.from, m.to))).collect();
                let slots: Vec<_> = flights.iter().map(|f| (f.id, f.route)).collect();
                for (i, id) in assign_slots(&slots, &wanted).into_iter().enumerate() {
                    if i == flights.len() {
                        match Flight::new(parent) {
                            Some(f) => flights.push(f),
                            None => return,
                        }
                    }
                    let f = &mut flights[i];
                    match id.and_then(|id| drawn.iter().find(|(m, _)| m.id == id)) {
                        None if f.id.is_some() => f.hide(),
                        // A new message for this slot, or its message just reached a
                        // frozen broker's socket buffer or left the wire (or, scrubbed back,
                        // is in flight again).
                        // Or labels were just turned on or off.
                        Some((m, d))
                            if f.id != Some(m.id)
                                || f.drawn != *d
                                || f.buffered != m.buffered
                                || f.labelled != labelled =>
                        {
                            // A message that just arrived stays on the path it flew; one
                            // first drawn as a trail (a link opened at that moment) is
                            // placed by the shown state.
                            let ends = if f.id == Some(m.id) {
                                (f.from, f.to)
                            } else {
                                message_ends(s, m, width)
                            };
                            f.show(m, *d, ends, now, width, labelled);
                        }
                        _ => {}
                    }
                    // After `show`, so that the label's attributes come in one order
                    // whatever the slot drew before (a reopened link draws the same markup).
                    if let Some(id) = id {
                        f.stack_label(stacks.iter().find(|x| x.0 == id).map_or(0, |x| x.1));
                    }
                }
            });
        });
    });
    Effect::new(move |_| {
        let now = now_of(clock);
        flights.update_value(|flights| {
            for f in flights.iter_mut().filter(|f| f.id.is_some()) {
                f.move_to(now);
            }
        });
    });
    let height = move || geometry::svg_height(broker_ids.with(|b| b.len()));
    let falling_g = NodeRef::<leptos::svg::G>::new();
    set_markup(
        falling_g,
        Box::new(move || {
            let now = now_of(clock);
            snap.with(|s| ghosts_markup(&ghosts(s, window.get(), now), now))
        }),
    );
    // The ruler's numbers as one piece of markup: they change only when the window slides.
    let ruler = move || {
        let w = window.get();
        (w.first..w.first + w.count)
            .filter(|o| o % 5 == 0)
            .map(|o| {
                format!(
                    r#"<text x="{}" y="{}">{o}</text>"#,
                    num(geometry::log_x(o) + 2.0),
                    num(geometry::TOP - 6.0)
                )
            })
            .collect::<String>()
    };
    let ruler_g = NodeRef::<leptos::svg::G>::new();
    set_markup(ruler_g, Box::new(ruler));
    // Texts are closures, not memos: a text node is set only when its text changed, and a
    // memo is code of its own for each (BENCHMARKS.md, "Shipped size").
    let epoch = move |f: fn(&Snapshot) -> String| snap.with(|s| f(s));
    let px = |v: f64| format!("width:{}px", num(v));

    view! {
        // One line of fixed height above the picture, so that it never moves the lanes. Not
        // a live region: its countdown changes ten times a second (the narration says what
        // happens).
        <p class="cluster-status" data-testid="cluster-status" style=move || px(width_px())>{move || snap.with(|s| cluster_status(s, tick.get()))}</p>
        <div
            class="cluster"
            role="img"
            aria-label="Cluster view: one lane per broker with its log, and the messages between them"
            style=move || px(width_px())
        >
            <svg
                class="cluster-head"
                aria-hidden="true"
                viewBox=move || format!("0 0 {} {}", num(width_px()), num(geometry::TOP))
                width=move || num(width_px())
                height=num(geometry::TOP)
            >
                <g class="controller">
                    <rect x="8" y="12" width=num(LABEL_W - 40.0) height="36" rx="6"></rect>
                    <text x="18" y="35">"KRaft controller"</text>
                    <text class="small" x=num(LABEL_W - 22.0) y="24">
                        {move || epoch(|s| format!("leader epoch {}", s.controller.leader_epoch))}
                    </text>
                    <text class="small" x=num(LABEL_W - 22.0) y="40">
                        {move || epoch(|s| format!("partition epoch {}", s.controller.partition_epoch))}
                    </text>
                </g>
                <g class="ruler" transform=move || shift() node_ref=ruler_g></g>
            </svg>
            // Drawn again only when the brokers change (a new cluster), so not a keyed list. An
            // `Option<AnyView>`, the type of the page's other parts that are built again (each
            // type of a reactive part is a family of functions of its own).
            {move || Some(broker_ids.get().into_iter().map(|id| view! {
                <Lane
                    id=id
                    snap=snap
                    window=window
                    lanes=lanes
                    tick=tick
                    lag_time_max_ms=lag_time_max_ms
                    width=width
                />
            }.into_any()).collect_view().into_any())}
            <svg
                class="cluster-flow"
                aria-hidden="true"
                viewBox=move || format!("0 0 {} {}", num(width_px()), num(height()))
                width=move || num(width_px())
                height=move || num(height())
            >
                <g class="log-window" transform=move || shift() node_ref=falling_g></g>
                // Without labels, the slots' labels are hidden (style/main.css) and left as
                // they were until labels are drawn again (`Flight::show`).
                <g class=move || crate::panels::pick(labels.get(), "flights", "flights unlabelled") node_ref=flow></g>
            </svg>
        </div>
    }
}

/// A cell's tooltip: offset, leader epoch, value and state, then the idempotent producer's
/// id, epoch and sequence when the record has them.
fn cell_title(c: &CellData) -> String {
    let mut t = format!(
        "offset {} epoch {}: {} ({})",
        c.offset, c.epoch, c.value, c.label
    );
    let (pid, pe, seq) = c.producer;
    if pid >= 0 {
        t.push_str(&format!(
            ", producerId {pid} producerEpoch {pe} sequence {seq}"
        ));
    }
    t
}

/// A cell's markup: its box with its tooltip, its value and (where its epoch starts) the
/// epoch's label, `g_attrs` on its group. Every text in it is escaped. A lane's cells, and
/// the falling ones, are one piece of markup each, not a keyed `<For>` of views (BENCHMARKS.md,
/// "Shipped size").
fn cell_markup(
    out: &mut String,
    g_attrs: &str,
    offset: u64,
    lane: usize,
    title: &str,
    value: &str,
    epoch: Option<i32>,
) {
    use crate::session::escape_attr as esc;
    let x = geometry::log_x(offset);
    let y = geometry::lane_y(lane) - CELL_H / 2.0;
    let (tx, rx) = (num(x + 3.0), num(x));
    out.push_str(&format!(
        r#"<g {g_attrs}><rect x="{rx}" y="{}" width="{}" height="{}" rx="3"><title>{}</title></rect><text class="value" x="{tx}" y="{}">{}</text>"#,
        num(y),
        num(CELL_W - 3.0),
        num(CELL_H),
        esc(title),
        num(y + 14.0),
        esc(&short(value)),
    ));
    if let Some(e) = epoch {
        out.push_str(&format!(
            r#"<text class="epoch" x="{tx}" y="{}">e{e}</text>"#,
            num(y + 28.0)
        ));
    }
    out.push_str("</g>");
}

/// Each cell's markup, in order.
fn cells_markup(cells: &[CellData]) -> Vec<String> {
    cells
        .iter()
        .map(|c| {
            let mut out = String::new();
            cell_markup(
                &mut out,
                &format!(r#"class="{}""#, c.kind),
                c.offset,
                c.lane,
                &cell_title(c),
                &c.value,
                c.epoch_start.then_some(c.epoch),
            );
            out
        })
        .collect()
}

/// Keeps `el`'s children equal to `cells`, one element per cell's markup, patched in place:
/// a cell whose markup did not change keeps its element, so a new record or a window that
/// slid by one rewrites one cell, not the lane (rewriting the lane's markup on every change
/// cost a third more renderer time per frame; BENCHMARKS.md, "UI"). Each element is parsed
/// from its own markup, so the lane's markup is the same however it got there.
fn patch_cells(el: NodeRef<leptos::svg::G>, cells: Box<dyn Fn() -> Vec<String>>) {
    let drawn = StoredValue::new_local(Vec::<(String, web_sys::Element)>::new());
    Effect::new(move |_| {
        let want = cells();
        let Some(g) = el.get() else { return };
        let g: &web_sys::Element = &g;
        drawn.update_value(|drawn| {
            // What was drawn must be exactly `g`'s children (a lane drawn again, e.g. by
            // Undo, is a new element): otherwise start from nothing.
            let parent: &web_sys::Node = g.as_ref();
            let ours = drawn.len() == g.child_element_count() as usize
                && drawn
                    .iter()
                    .all(|(_, e)| e.parent_node().as_ref() == Some(parent));
            if !ours {
                drawn.clear();
                g.set_inner_html("");
            }
            // Drop the cells no longer drawn, keep the others (in their order).
            let mut kept: Vec<(String, web_sys::Element)> = vec![];
            for (m, e) in drawn.drain(..) {
                if want.contains(&m) {
                    kept.push((m, e));
                } else {
                    e.remove();
                }
            }
            // Then walk the wanted cells with a cursor on the kept ones (in the lane's
            // order): the kept one at the cursor stays; any other is moved, or made, before
            // the cursor.
            let mut used = vec![false; kept.len()];
            let mut next = 0;
            for m in &want {
                while used.get(next) == Some(&true) {
                    next += 1;
                }
                let element = match kept.iter().position(|(k, _)| k == m) {
                    Some(i) if i == next => {
                        used[i] = true;
                        drawn.push(kept[i].clone());
                        continue;
                    }
                    Some(i) => {
                        used[i] = true;
                        Some(kept[i].1.clone())
                    }
                    None => parse_svg(g, m),
                };
                let Some(element) = element else { continue };
                let before = kept.get(next).map(|(_, e)| e.clone());
                let _ = g.insert_before(&element, before.as_ref().map(|e| e.as_ref()));
                drawn.push((m.clone(), element));
            }
        });
    });
}

/// One SVG element made from `markup`, inside `parent`'s namespace (not attached).
fn parse_svg(parent: &web_sys::Element, markup: &str) -> Option<web_sys::Element> {
    let doc = parent.owner_document()?;
    let holder = doc.create_element_ns(Some(SVG_NS), "g").ok()?;
    holder.set_inner_html(markup);
    holder.first_element_child()
}

/// The records truncations threw away, falling out of their lanes at `now`.
fn ghosts_markup(ghosts: &[Ghost], now: f64) -> String {
    let mut out = String::new();
    for g in ghosts {
        let (dy, opacity) = geometry::falling(now - g.time_ms as f64, GHOST_MS);
        cell_markup(
            &mut out,
            &format!(
                r#"class="cell truncated" transform="{}" opacity="{}""#,
                geometry::translate(0.0, dy),
                geometry::fixed(opacity, 2)
            ),
            g.offset,
            g.lane,
            &format!(
                "truncated: offset {} epoch {}: {}",
                g.offset, g.epoch, g.value
            ),
            &g.value,
            None,
        );
    }
    out
}

/// Keeps `el`'s markup equal to `markup`, set by hand (not by `inner_html`: with it, a page
/// opened at a moment and one that played to it differed by a marker comment, and
/// tests/e2e/sharing compares the picture's markup).
fn set_markup(el: NodeRef<leptos::svg::G>, markup: Box<dyn Fn() -> String>) {
    crate::patch::patch_effect(
        Box::new(move || el.get().map(|g| g.unchecked_into())),
        markup,
    );
}

/// What a lane's label shows about its broker: everything but the log itself.
#[derive(Debug, Clone, PartialEq)]
struct LaneInfo {
    class: String,
    title: String,
    state: String,
    offsets: String,
    hw: u64,
    leo: u64,
    /// When the replica last caught up (the snapshot's time less `since_caught_up_ms`): it
    /// stays the same from one snapshot to the next while the replica does not catch up.
    caught_up_at_ms: Option<u64>,
}

/// A lane's role: what the broker does for the partition, and for a broker that is down
/// what it was (the controller still names a dead leader until it fences it).
fn role_text(b: &BrokerSnapshot, leader: Option<BrokerId>) -> &'static str {
    match (b.hosts_replica, b.process.is_up(), b.role) {
        (false, _, _) => "no replica",
        (true, false, _) if leader == Some(b.id) => "leader (down)",
        (true, false, _) => "replica (down)",
        (true, true, ReplicaRole::Leader) => "leader",
        (true, true, ReplicaRole::Follower) => "follower",
        (true, true, ReplicaRole::None) => "replica",
    }
}

fn lane_info(b: &BrokerSnapshot, snap_time_ms: u64, leader: Option<BrokerId>) -> LaneInfo {
    let membership = if b.in_isr {
        "in ISR"
    } else if b.in_elr {
        "in ELR"
    } else if b.hosts_replica {
        "out of sync"
    } else {
        "no replica"
    };
    let slow = if b.slow_ms > 0 { " · slow" } else { "" };
    LaneInfo {
        class: format!(
            "lane {} {}",
            b.role.label(),
            b.state.label().replace(' ', "-")
        ),
        title: format!("broker {} · {}", b.id, role_text(b, leader)),
        state: format!("{} · {membership}{slow}", b.state.label()),
        offsets: format!("LEO {}  HW {}", b.log_end_offset, b.high_watermark),
        hw: b.high_watermark,
        leo: b.log_end_offset,
        caught_up_at_ms: b
            .since_caught_up_ms
            .map(|since| snap_time_ms.saturating_sub(since)),
    }
}

#[component]
fn Lane(
    id: BrokerId,
    snap: RwSignal<Arc<Snapshot>>,
    window: Memo<OffsetWindow>,
    lanes: StoredValue<Vec<LaneSignals>>,
    tick: RwSignal<u64>,
    lag_time_max_ms: Memo<u64>,
    width: RwSignal<u64>,
) -> impl IntoView {
    // This lane's signals, registered with the cluster view, which keeps them up to date.
    let (h, c) = snap
        .with_untracked(|s| lane_views(s, window.get_untracked()))
        .into_iter()
        .find(|v| v.0 == id)
        .map(|v| (v.1, v.2))
        .unwrap_or_default();
    let head = RwSignal::new(h);
    let mine = RwSignal::new(c);
    lanes.update_value(|l| l.push((id, head, mine)));
    // By its signal, not its id: a new cluster's lane of the same id may be registered first.
    on_cleanup(move || lanes.update_value(|l| l.retain(|x| x.1 != head)));

    let cells_g = NodeRef::<leptos::svg::G>::new();
    patch_cells(cells_g, Box::new(move || mine.with(|c| cells_markup(c))));
    let shift = move || head.with(|h| geometry::translate(h.shift, 0.0));
    let y = move || head.with(|h| geometry::lane_y(h.index));
    let class = move || {
        head.with(|h| {
            h.info
                .as_ref()
                .map_or_else(|| "lane".to_string(), |i| i.class.clone())
        })
    };
    // The label, the lag bar and the markers as markup (two pieces: under the cells and over
    // them), not a view with a reactive attribute each (BENCHMARKS.md, "Shipped size").
    // The lag bar drains with the clock (to a tenth of a second) between snapshots.
    let (under, over) = (NodeRef::new(), NodeRef::new());
    set_markup(
        under,
        Box::new(move || {
            let now = tick.get();
            let max = lag_time_max_ms.get();
            let w = width.get() as f64;
            head.with(|h| lane_label_markup(h, now, max, w))
        }),
    );
    set_markup(over, Box::new(move || head.with(lane_markers_markup)));
    let half = geometry::LANE_H / 2.0;
    // The lane's slice of the cluster's coordinates.
    let view_box = move || {
        format!(
            "0 {} {} {}",
            num(y() - half),
            num(width.get() as f64),
            num(geometry::LANE_H)
        )
    };
    view! {
        <svg class="lane-view" aria-hidden="true" viewBox=move || view_box() width=move || num(width.get() as f64) height=num(geometry::LANE_H)>
        <g class=move || class()>
            <g node_ref=under></g>
            <g class="log-window" transform=move || shift() node_ref=cells_g></g>
            <g node_ref=over></g>
        </g>
        </svg>
    }
}

/// A lane's background, label (title, state, offsets) and lag bar at `now`.
fn lane_label_markup(h: &LaneHead, now: u64, lag_time_max_ms: u64, width: f64) -> String {
    use crate::session::escape_attr as esc;
    let half = geometry::LANE_H / 2.0;
    let at = |dy: f64| num(geometry::lane_y(h.index) + dy);
    let text = |f: fn(&LaneInfo) -> &String| h.info.as_ref().map(|i| esc(f(i))).unwrap_or_default();
    let lag = h
        .info
        .as_ref()
        .and_then(|i| {
            let since = now.saturating_sub(i.caught_up_at_ms?);
            Some(geometry::lag_fraction(since, lag_time_max_ms))
        })
        // Whole pixels: a follower that keeps up does not repaint its lane every frame.
        .map_or(0.0, |f| (120.0 * (1.0 - f)).round());
    format!(
        r#"<rect class="lane-bg" x="4" y="{}" width="{}" height="{}" rx="6"></rect><text class="lane-title" x="12" y="{}">{}</text><text class="lane-state" x="12" y="{}">{}</text><text class="lane-offsets" x="12" y="{}">{}</text><g class="lag" aria-hidden="true"><rect class="lag-track" x="12" y="{bar}" width="120" height="6" rx="3"></rect><rect class="lag-fill" x="12" y="{bar}" width="{}" height="6" rx="3"></rect></g>"#,
        at(3.0 - half),
        num((width - 8.0).max(0.0)),
        num(geometry::LANE_H - 6.0),
        at(-20.0),
        text(|i| &i.title),
        at(-6.0),
        text(|i| &i.state),
        at(8.0),
        text(|i| &i.offsets),
        num(lag),
        bar = at(16.0),
    )
}

/// A lane's HW and LEO markers (hidden when the window does not show them).
fn lane_markers_markup(h: &LaneHead) -> String {
    let half = geometry::LANE_H / 2.0;
    let marker = |class: &str, x: Option<f64>, y2: f64, text_y: f64, text: &str| {
        format!(
            r#"<g class="{class}" transform="{}" display="{}"><line x1="0" x2="0" y1="{}" y2="{}"></line><text x="2" y="{}">{text}</text></g>"#,
            geometry::translate(x.unwrap_or(0.0), geometry::lane_y(h.index)),
            if x.is_some() { "inline" } else { "none" },
            num(6.0 - half),
            num(y2),
            num(text_y),
        )
    };
    marker("hw-marker", h.hw_x, half - 6.0, half - 8.0, "HW")
        + &marker(
            "leo-marker",
            h.leo_x,
            -CELL_H / 2.0 - 2.0,
            14.0 - half,
            "LEO",
        )
}

/// The partition's state in a few words, for the line above the lanes: offline (no
/// leader), a dead leader the controller has not fenced yet (and when it will), or writes
/// with acks=all refused for want of in-sync replicas. Empty when all is well.
fn cluster_status(s: &Snapshot, now: u64) -> String {
    let Some(leader) = s.controller.leader else {
        return "Partition offline: no leader. Writes and reads fail until the controller elects one.".into();
    };
    let mut parts = vec![];
    let dead = s
        .brokers
        .iter()
        .find(|b| b.id == leader)
        .filter(|b| !b.process.is_up() || b.state == BrokerState::Fenced);
    if let Some(b) = dead {
        let fence = s
            .session_deadlines
            .iter()
            .find(|(id, _)| *id == leader)
            .map(|&(_, at)| {
                format!(
                    "; the controller fences it in {} s (broker.session.timeout.ms) and elects another",
                    seconds_left(at, now)
                )
            })
            .unwrap_or_default();
        parts.push(format!(
            "Leader broker {leader} is {}: writes and reads to it get no answer{fence}.",
            b.state.label()
        ));
    }
    parts.extend(client_status(s, now));
    // An AlterPartition the leader sent and has no answer to yet (Partition's
    // PendingShrinkIsr / PendingExpandIsr).
    for b in &s.brokers {
        let Some(pending) = &b.isr_change else {
            continue;
        };
        let (change, who, hw) = match pending {
            IsrChange::Shrink { out_of_sync, .. } => {
                ("drop", join_ids(out_of_sync), ("from", "still"))
            }
            IsrChange::Expand { new_in_sync, .. } => {
                ("add", new_in_sync.to_string(), ("to", "already"))
            }
        };
        parts.push(format!(
            "ISR change pending until the controller answers: broker {}'s AlterPartition to {change} {who} {} the ISR {}; the HW {} counts {who}.",
            b.id,
            hw.0,
            join_ids(pending.isr()),
            hw.1
        ));
    }
    // What a truncation threw away, for as long as its records fall away (GHOST_MS).
    for t in s
        .truncations
        .iter()
        .filter(|t| t.time_ms <= now && ((now - t.time_ms) as f64) < GHOST_MS)
    {
        let (Some(first), Some(last)) = (t.removed.first(), t.removed.last()) else {
            continue;
        };
        let what = match t.below_high_watermark {
            Some(hw) => format!("below its HW {hw}: records it held as committed"),
            None => "above its HW: records never committed".to_string(),
        };
        parts.push(format!(
            "Broker {} truncated offsets {}..{} ({what}).",
            t.broker, first.offset, last.offset
        ));
    }
    if s.metrics.under_min_isr {
        parts.push(
            "ISR below min.insync.replicas: acks=all writes fail with NOT_ENOUGH_REPLICAS.".into(),
        );
    }
    parts.join(" ")
}

/// The producer's side: a batch being retried (its last error, how often, when
/// `delivery.timeout.ms` ends it) and requests that wait at a broker that cannot answer.
fn client_status(s: &Snapshot, now: u64) -> Vec<String> {
    let mut parts = vec![];
    // The oldest batch being retried (the others wait behind it).
    if let Some((b, (error, _))) = s
        .sends
        .iter()
        .find_map(|b| Some((b, b.last_error.filter(|_| b.retries > 0)?)))
    {
        parts.push(format!(
            "Writes fail with {error}, retry {}: the producer gives up at delivery.timeout.ms, within {} s.",
            b.retries,
            seconds_left(b.delivery_deadline_ms, now)
        ));
    }
    for b in &s.brokers {
        // The producer gives up on a request at its request.timeout.ms, or sooner when its
        // batch reaches delivery.timeout.ms in flight (Sender.getExpiredInflightBatches).
        let waiting: Vec<(u64, &str)> = s
            .sends
            .iter()
            .filter_map(|x| {
                let (_, at) = x.in_flight.filter(|r| r.0 == b.id)?;
                Some(if x.delivery_deadline_ms < at {
                    (x.delivery_deadline_ms, "delivery.timeout.ms")
                } else {
                    (at, "request.timeout.ms")
                })
            })
            .collect();
        let Some(&(deadline, config)) = waiting.iter().min() else {
            continue;
        };
        let frozen = match b.process {
            ProcessState::Running => continue,
            ProcessState::Frozen => true,
            // Killed or stopped, its machine still up: the kernel resets a connection the
            // dead process had and refuses a new one, so the answer is NETWORK_EXCEPTION
            // one round trip later (Sim::send, Sim::reset_connections).
            _ => false,
        };
        let role = if s.controller.leader == Some(b.id) {
            "leader, "
        } else {
            ""
        };
        let what = if frozen {
            format!(
                "it keeps its sockets open, so no answer comes; the producer gives up at {config}, within {} s.",
                seconds_left(deadline, now)
            )
        } else {
            "nothing listens there, so the connection is reset and the producer retries after retry.backoff.ms.".to_string()
        };
        parts.push(format!(
            "{} produce request(s) pending at broker {} ({role}{}): {what}",
            waiting.len(),
            b.id,
            b.state.label(),
        ));
    }
    parts
}

/// What waits: acks=all requests in the purgatory and follower fetches the leader holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WaitItem {
    Purgatory {
        broker: BrokerId,
        request_id: u64,
        first_offset: u64,
        required_offset: u64,
        deadline_ms: u64,
    },
    HeldFetch {
        leader: BrokerId,
        replica: BrokerId,
        fetch_offset: u64,
        deadline_ms: u64,
    },
}

/// The seconds from `now` to `deadline_ms`, to a tenth (half a tenth rounds up).
pub(crate) fn seconds_left(deadline_ms: u64, now: u64) -> String {
    let tenths = (deadline_ms.saturating_sub(now) + 50) / 100;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// The line above the waiting list: how many of each kind wait.
fn waiting_summary(items: &[WaitItem]) -> String {
    let produces = items
        .iter()
        .filter(|i| matches!(i, WaitItem::Purgatory { .. }))
        .count();
    let fetches = items.len() - produces;
    if items.is_empty() {
        return "Nothing waits: no acks=all request in the purgatory, no fetch held by a leader."
            .into();
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "Waiting: {} in the purgatory, {} held by a leader",
        plural(produces, "acks=all request", "acks=all requests"),
        plural(fetches, "follower fetch", "follower fetches"),
    )
}

/// What waits, under the cluster view. The list is a box of fixed height that scrolls: it
/// grows and shrinks with every request, and a box that changed height would move (and so
/// repaint) everything below it on each change. The countdowns follow the clock to a tenth
/// of a second (`Ctx::tick`), not every frame.
#[component]
pub fn Waiting(snap: RwSignal<Arc<Snapshot>>, tick: RwSignal<u64>) -> impl IntoView {
    // `set_lines` sets a line's text only where it changed. The items are read from the
    // snapshot where they are needed, not kept in a memo (a memo of another type is
    // kilobytes of wasm of its own).
    Effect::new(move |_| {
        let now = tick.get();
        let texts: Vec<String> = snap.with(|s| {
            let hw = leader_of(s).map(|l| l.high_watermark);
            wait_items(s)
                .iter()
                .map(|i| wait_text(i, hw, now))
                .collect()
        });
        if let Some(ul) = crate::panels::page_element(".waiting") {
            set_lines(&ul, &texts);
        }
    });
    view! {
        <div class="waiting-box">
            <p class="waiting-summary">{move || snap.with(|s| waiting_summary(&wait_items(s)))}</p>
            // Lines are kept by position and rewritten in place (`set_lines`): at 10× and
            // faster requests come and go every frame or two, and a line per request was
            // created and removed each time (docs/ui.md, "Rules that keep frames cheap").
            <ul class="waiting" aria-label="Waiting requests"></ul>
        </div>
    }
}

/// What waits in `s`: the produce requests in purgatory, then the held fetches.
fn wait_items(s: &Snapshot) -> Vec<WaitItem> {
    let mut out: Vec<WaitItem> = s
        .purgatory
        .iter()
        .map(|p| WaitItem::Purgatory {
            broker: p.broker,
            request_id: p.request_id,
            first_offset: p.first_offset,
            required_offset: p.required_offset,
            deadline_ms: p.deadline_ms,
        })
        .collect();
    out.extend(s.held_fetches.iter().map(|h| WaitItem::HeldFetch {
        leader: h.leader,
        replica: h.replica,
        fetch_offset: h.fetch_offset,
        deadline_ms: h.deadline_ms,
    }));
    out
}

/// Makes `list`'s children one `<li>` per line with that text, keeping the lines it has by
/// position and setting a text only where it changed. By hand, not a `<For>` of views, for
/// the size of the shipped code (BENCHMARKS.md, "Shipped size").
pub(crate) fn set_lines(list: &web_sys::Element, lines: &[String]) {
    while list.child_element_count() as usize > lines.len() {
        match list.last_element_child() {
            Some(last) => last.remove(),
            None => break,
        }
    }
    let mut li = list.first_element_child();
    for line in lines {
        let el = match li {
            Some(el) => el,
            None => {
                let Some(el) = list
                    .owner_document()
                    .and_then(|d| d.create_element("li").ok())
                else {
                    return;
                };
                if list.append_child(&el).is_err() {
                    return;
                }
                el
            }
        };
        if el.text_content().as_deref() != Some(line.as_str()) {
            el.set_text_content(Some(line));
        }
        li = el.next_element_sibling();
    }
}

/// A waiting line's text: what waits, for what, and the seconds left at `now`.
fn wait_text(item: &WaitItem, hw: Option<u64>, now: u64) -> String {
    match *item {
        WaitItem::Purgatory { broker, first_offset, required_offset, deadline_ms, .. } => format!(
            "Purgatory on broker {broker}: acks=all offsets {first_offset}..{} waits for HW ≥ {required_offset} (HW now {}); REQUEST_TIMED_OUT in {} s",
            required_offset - 1,
            hw.map_or("?".to_string(), |h| h.to_string()),
            seconds_left(deadline_ms, now),
        ),
        WaitItem::HeldFetch { leader, replica, fetch_offset, deadline_ms } => format!(
            "Broker {leader} holds broker {replica}'s fetch (fetchOffset {fetch_offset}): answers when records arrive, or in {} s (replica.fetch.wait.max.ms)",
            seconds_left(deadline_ms, now),
        ),
    }
}

fn node_label(n: Node) -> String {
    match n {
        Node::Broker(b) => format!("broker {b}"),
        Node::Controller => "controller".into(),
        Node::Client(1) => "producer".into(),
        Node::Client(_) => "consumer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::CellKind;
    use watermark_engine::Scenario;

    #[test]
    fn cells_compare_each_replica_with_the_leader() {
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"c-","count":3},
                             {"at":1000,"action":"freeze","broker":2},{"at":1000,"action":"freeze","broker":3},
                             {"at":2000,"action":"produce","acks":"1","values":["tail"]}],"end_ms":2100}"#,
        )
        .unwrap();
        let sim = watermark_engine::run(&s, true).unwrap();
        let snap = sim.snapshot();
        let w = window_of(&snap, 1200.0);
        let cs = cells(&snap, w);
        let leader_cells: Vec<_> = cs.iter().filter(|c| c.broker == 1).collect();
        assert_eq!(leader_cells.len(), 4);
        assert_eq!(leader_cells[0].kind, CellKind::Committed.class());
        assert_eq!(
            leader_cells[3].kind,
            CellKind::Uncommitted.class(),
            "the acks=1 tail is above the HW"
        );
        assert_eq!(cs.iter().filter(|c| c.broker == 2).count(), 3);
    }

    #[test]
    fn committed_records_stay_committed_when_their_leader_dies_and_lost_ones_say_so() {
        // Five acks=all records on all three replicas; then the leader is killed. Until the
        // controller fences it (and after), every replica's copy is still committed.
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"c-","count":5},
                             {"at":1000,"action":"kill","broker":1}],"end_ms":1100}"#,
        )
        .unwrap();
        let snap = watermark_engine::run(&s, true).unwrap().snapshot();
        assert_eq!(
            snap.controller.leader,
            Some(1),
            "the dead leader is not fenced yet"
        );
        let cs = cells(&snap, window_of(&snap, 1200.0));
        assert_eq!(cs.len(), 15);
        assert!(
            cs.iter().all(|c| c.kind == CellKind::Committed.class()),
            "{cs:?}"
        );
        assert_eq!(
            lane_info(&snap.brokers[0], snap.time_ms, Some(1)).title,
            "broker 1 · leader (down)"
        );
        assert_eq!(
            lane_info(&snap.brokers[1], snap.time_ms, Some(1)).title,
            "broker 2 · follower"
        );
        assert!(cluster_status(&snap, snap.time_ms).starts_with(
            "Leader broker 1 is killed: writes and reads to it get no answer; the controller fences it in "
        ));
        // The unclean election: the old leader's committed records that the new leader does
        // not have are drawn as lost, not as never committed.
        let s = watermark_engine::presets::preset("unclean-election").unwrap();
        let sim = watermark_engine::run(&s, true).unwrap();
        let loss = sim.snapshot().losses[0].clone();
        let at = loss.time_ms + 1;
        let mut part = s.clone();
        part.end_ms = Some(at);
        // The preset's expectations reach past the shortened run.
        part.expect.clear();
        let snap = watermark_engine::run(&part, true).unwrap().snapshot();
        let cs = cells(&snap, window_of(&snap, 1200.0));
        let lost: Vec<u64> = cs
            .iter()
            .filter(|c| c.kind == CellKind::Lost.class())
            .map(|c| c.offset)
            .collect();
        assert!(!lost.is_empty(), "{cs:?}");
        assert!(lost
            .iter()
            .all(|o| (loss.first_offset..=loss.last_offset).contains(o)));
        // Broker 2 comes back and truncates them: the status says what went, for as long as
        // the records fall away.
        let t = sim.snapshot().truncations[0].clone();
        let mut part = s.clone();
        part.end_ms = Some(t.time_ms + 1);
        part.expect.clear();
        let snap = watermark_engine::run(&part, true).unwrap().snapshot();
        let line =
            "Broker 2 truncated offsets 10..19 (below its HW 20: records it held as committed).";
        assert!(cluster_status(&snap, t.time_ms + 2_900).contains(line));
        assert!(!cluster_status(&snap, t.time_ms + 3_000).contains("truncated"));
    }

    /// The status line at each event of `json`'s run, until `until` holds of it.
    fn status_until(json: &str, until: impl Fn(&str) -> bool) -> (Snapshot, String) {
        let mut sim = watermark_engine::Sim::new(&Scenario::from_json(json).unwrap()).unwrap();
        loop {
            let snap = sim.snapshot();
            let line = cluster_status(&snap, snap.time_ms);
            if until(&line) {
                return (snap, line);
            }
            assert!(sim.step() && sim.now() < 60_000, "never: {line}");
        }
    }

    #[test]
    fn the_status_says_when_writes_are_retried_and_where_a_request_waits() {
        // Broker 2 stopped: the ISR is 1, below min.insync.replicas=2.
        let (snap, line) = status_until(
            r#"{"brokers":2,"config":{"min.insync.replicas":2,"delivery.timeout.ms":30000},
                "timeline":[{"at":0,"action":"stop","broker":2},
                            {"at":5000,"action":"produce","acks":"all","values":["a"]}]}"#,
            |l| l.contains("retry 3:"),
        );
        assert!(snap.time_ms > 5_000);
        assert!(
            line.starts_with("Writes fail with NOT_ENOUGH_REPLICAS, retry 3: the producer gives up at delivery.timeout.ms, within 29."),
            "{line}"
        );
        // A frozen leader: the request waits there until request.timeout.ms.
        let (snap, line) = status_until(
            r#"{"config":{"request.timeout.ms":5000},
                "timeline":[{"at":1000,"action":"freeze","broker":1},
                            {"at":1000,"action":"produce","acks":"all","values":["x"]}]}"#,
            |l| l.contains("pending"),
        );
        assert_eq!(snap.time_ms, 1_000, "from the moment it is sent");
        assert!(line.contains("1 produce request(s) pending at broker 1 (leader, frozen): it keeps its sockets open, so no answer comes; the producer gives up at request.timeout.ms, within 5.1 s."), "{line}");
        let (snap, _) = status_until(
            r#"{"config":{"request.timeout.ms":5000},
                "timeline":[{"at":1000,"action":"freeze","broker":1},
                            {"at":1000,"action":"produce","acks":"all","values":["x"]}]}"#,
            |l| l.contains("Writes fail with REQUEST_TIMED_OUT"),
        );
        assert!(snap.time_ms >= 6_000, "{}", snap.time_ms);
        // Sent to a killed leader the controller still names: no process reads it.
        let (_, line) = status_until(
            r#"{"timeline":[{"at":1000,"action":"kill","broker":1},
                            {"at":1000,"action":"produce","acks":"all","values":["x"]}]}"#,
            |l| l.contains("pending"),
        );
        assert!(line.contains("1 produce request(s) pending at broker 1 (leader, killed): nothing listens there, so the connection is reset and the producer retries after retry.backoff.ms."), "{line}");
    }

    #[test]
    fn the_status_says_when_an_isr_change_awaits_the_controller() {
        let json = r#"{"config":{"replica.lag.time.max.ms":2000,"sim.controller.latency.ms":300},
                "timeline":[{"at":3000,"action":"freeze","broker":3},
                            {"at":3500,"action":"produce","acks":"1","values":["a"]}]}"#;
        let (snap, line) = status_until(json, |l| l.contains("ISR change pending"));
        assert!(line.contains("ISR change pending until the controller answers: broker 1's AlterPartition to drop 3 from the ISR 1,2,3; the HW still counts 3."), "{line}");
        assert_eq!(snap.controller.isr, vec![1, 2, 3]);
        let mut sim = watermark_engine::Sim::new(&Scenario::from_json(json).unwrap()).unwrap();
        let mut was_pending = false;
        while sim.now() < 10_000 && sim.step() {
            let snap = sim.snapshot();
            let pending = cluster_status(&snap, snap.time_ms).contains("ISR change pending");
            let leader_pending = snap.brokers[0].isr_change.is_some();
            assert_eq!(pending, leader_pending, "at {}", snap.time_ms);
            was_pending |= pending;
        }
        assert!(was_pending);
        assert_eq!(sim.snapshot().controller.isr, vec![1, 2]);
    }

    #[test]
    fn a_lane_whose_broker_did_not_change_keeps_an_equal_view() {
        // Brokers 2 and 3 are frozen; the leader takes an acks=1 record in between the two
        // snapshots. Only the leader's lane view changes, so only its signals are set.
        let run = |end_ms| {
            let s = Scenario::from_json(&format!(
                r#"{{"timeline":[{{"at":0,"action":"produce","acks":"all","prefix":"a-","count":3}},
                                 {{"at":1000,"action":"freeze","broker":2}},{{"at":1000,"action":"freeze","broker":3}},
                                 {{"at":1500,"action":"produce","acks":"1","values":["late"]}}],"end_ms":{end_ms}}}"#
            ))
            .unwrap();
            watermark_engine::run(&s, true).unwrap().snapshot()
        };
        let (before, after) = (run(1_400), run(1_700));
        let views = |s: &Snapshot| lane_views(s, window_of(s, 1200.0));
        let (a, b) = (views(&before), views(&after));
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].0, 1);
        assert_ne!(a[0], b[0], "the leader's lane took a record");
        assert_eq!(b[0].2.len(), 4);
        assert_eq!(b[0].1.leo_x, marker_x(4, window_of(&after, 1200.0)));
        assert_eq!(
            a[1..],
            b[1..],
            "the frozen followers' lanes are as they were"
        );
        // The lanes' cells are the snapshot's cells, each in its broker's lane.
        let all: Vec<CellData> = b.iter().flat_map(|v| v.2.clone()).collect();
        assert_eq!(all, cells(&after, window_of(&after, 1200.0)));
        assert!(b
            .iter()
            .all(|(id, head, cs)| cs.iter().all(|c| c.broker == *id && c.lane == head.index)));
    }

    #[test]
    fn a_value_is_shown_whole_or_by_its_head_and_tail_and_labels_stay_inside() {
        assert_eq!(short("v-1"), "v-1");
        assert_eq!(short("ok-10"), "ok-10");
        assert_eq!(short("shared-12"), "s…-12");
        assert_eq!(short("kept-3"), "k…t-3");
        assert_eq!(short("ééééééé"), "é…ééé");
        assert!(!label_on_left(((100.0, 0.0), (400.0, 0.0)), 1000.0));
        assert!(label_on_left(((700.0, 0.0), (900.0, 0.0)), 1000.0));
    }

    #[test]
    fn a_message_keeps_its_slot_and_new_ones_reuse_free_slots_first() {
        // 1 and 3 are still in flight and stay put; 2 arrived, so 4 takes its slot; 5 finds
        // no free slot and grows the pool.
        assert_eq!(
            assign_slots(
                &[(Some(1), 'a'), (Some(2), 'a'), (Some(3), 'a')],
                &[(3, 'a'), (4, 'a'), (1, 'a'), (5, 'a')]
            ),
            vec![Some(1), Some(4), Some(3), Some(5)]
        );
        // Nothing in flight: every slot is freed, none removed.
        assert_eq!(
            assign_slots(&[(Some(1), 'a'), (None, 'a')], &[]),
            vec![None, None]
        );
        assert_eq!(
            assign_slots(&[], &[(7, 'a'), (8, 'a')]),
            vec![Some(7), Some(8)]
        );
        // A new message takes the free slot that last drew its route, whichever it is; one
        // on a route no free slot drew takes the first free slot. 1 and 2 are no longer
        // drawn, so their slots are free too.
        assert_eq!(
            assign_slots(
                &[(Some(1), 'a'), (None, 'b'), (Some(2), 'c'), (None, 'd')],
                &[(3, 'd'), (4, 'c'), (5, 'x')]
            ),
            vec![Some(5), None, Some(4), Some(3)]
        );
    }

    #[test]
    fn a_message_that_left_the_wire_is_drawn_once_as_a_trail_for_trail_ms() {
        let json =
            r#"{"brokers":3,"timeline":[{"at":0,"action":"produce","acks":"all","values":["a"]}]}"#;
        let mut sim = watermark_engine::Sim::new(&Scenario::from_json(json).unwrap()).unwrap();
        sim.record_arrivals = true;
        sim.advance_to(1_500);
        let snap = sim.snapshot();
        let now = snap.time_ms as f64;
        let drawn = drawn_messages(&snap, now);
        let mut ids: Vec<u64> = drawn.iter().map(|(m, _)| m.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), drawn.len(), "each message once");
        for m in &snap.in_flight {
            assert!(drawn.contains(&(m, Drawn::Flying)));
        }
        for (i, a) in snap.arrivals.iter().enumerate() {
            let age = snap.time_ms - a.at;
            let expected = Drawn::Arrived {
                at: a.at,
                outcome: a.outcome,
            };
            // The newest on its route, within TRAIL_MS.
            let route = (a.message.from, a.message.to);
            let newest = snap.arrivals[i + 1..]
                .iter()
                .all(|b| (b.message.from, b.message.to) != route);
            assert_eq!(
                drawn.contains(&(&a.message, expected)),
                age < TRAIL_MS && newest,
                "age {age}"
            );
        }
        assert!(
            drawn.iter().any(|(_, d)| *d != Drawn::Flying),
            "something just arrived"
        );
        // Fading in three steps.
        let pct = |age| geometry::trail_opacity_percent(age, TRAIL_MS as f64);
        assert_eq!(
            [
                pct(0.0),
                pct(299.0),
                pct(300.0),
                pct(449.0),
                pct(450.0),
                pct(599.0)
            ],
            [90, 90, 60, 60, 30, 30]
        );
    }

    #[test]
    fn trail_labels_at_one_place_stack_newest_lowest() {
        let m = |id, to, kind: MessageKind| MessageSnapshot {
            id,
            from: Node::Broker(2),
            to: Node::Broker(to),
            kind,
            summary: String::new(),
            sent_ms: 0,
            deliver_ms: 10,
            buffered: false,
        };
        let (a, b, c, d, e) = (
            m(1, 1, MessageKind::Fetch),
            m(2, 1, MessageKind::Fetch),
            m(3, 3, MessageKind::Fetch),
            m(4, 1, MessageKind::BrokerHeartbeat),
            m(5, 1, MessageKind::Fetch),
        );
        let arrived = Drawn::Arrived {
            at: 10,
            outcome: ArrivalOutcome::Received,
        };
        let dropped = Drawn::Arrived {
            at: 10,
            outcome: ArrivalOutcome::LinkCut,
        };
        let drawn = [
            (&e, Drawn::Flying),
            (&a, arrived),
            (&b, arrived),
            (&c, arrived),
            (&d, arrived),
            (&d, dropped),
        ];
        // Oldest first in `drawn`: the newest at broker 1 (a dropped heartbeat, labelled
        // for saying why) is lowest; an unlabelled heartbeat and a message in flight do not
        // take a line.
        assert_eq!(label_stacks(&drawn), vec![(4, 0), (3, 0), (2, 1), (1, 2)]);
    }

    #[test]
    fn the_waiting_summary_counts_each_kind() {
        let produce = |id| WaitItem::Purgatory {
            broker: 1,
            request_id: id,
            first_offset: 0,
            required_offset: 1,
            deadline_ms: 30_000,
        };
        let fetch = |replica| WaitItem::HeldFetch {
            leader: 1,
            replica,
            fetch_offset: 1,
            deadline_ms: 500,
        };
        assert!(waiting_summary(&[]).starts_with("Nothing waits"));
        assert_eq!(
            waiting_summary(&[produce(1), fetch(2)]),
            "Waiting: 1 acks=all request in the purgatory, 1 follower fetch held by a leader"
        );
        assert_eq!(
            waiting_summary(&[produce(1), produce(2), fetch(2), fetch(3), fetch(4)]),
            "Waiting: 2 acks=all requests in the purgatory, 3 follower fetches held by a leader"
        );
        assert_eq!(seconds_left(30_000, 1_234), "28.8");
        assert_eq!(
            seconds_left(500, 900),
            "0.0",
            "an overdue deadline reads zero"
        );
    }

    #[test]
    fn the_epoch_is_labelled_where_it_starts_in_each_lane() {
        // Epoch 0 writes a-0..a-2; broker 1 is killed and broker 2 leads epoch 1, writing
        // b-3, b-4. Each lane labels the first cell of each epoch in the window.
        let s = Scenario::from_json(
            r#"{"timeline":[{"at":0,"action":"produce","acks":"all","prefix":"a-","count":3},
                             {"at":1000,"action":"kill","broker":1},
                             {"at":12000,"action":"produce","acks":"all","prefix":"b-","start":3,"count":2}],
                "end_ms":14000}"#,
        )
        .unwrap();
        let sim = watermark_engine::run(&s, true).unwrap();
        let snap = sim.snapshot();
        let starts = |cs: &[CellData], broker| {
            cs.iter()
                .filter(|c| c.broker == broker && c.epoch_start)
                .map(|c| (c.offset, c.epoch))
                .collect::<Vec<_>>()
        };
        let cs = cells(&snap, window_of(&snap, 1200.0));
        assert_eq!(cs.iter().filter(|c| c.broker == 2).count(), 5);
        assert_eq!(starts(&cs, 2), [(0, 0), (3, 1)]);
        assert_eq!(
            starts(&cs, 1),
            [(0, 0)],
            "the killed leader's log is all epoch 0"
        );
        // In a window that begins mid-epoch, its first cell carries the label.
        let w = OffsetWindow { first: 1, count: 4 };
        assert_eq!(starts(&cells(&snap, w), 2), [(1, 0), (3, 1)]);
    }

    #[test]
    fn the_snapshot_tail_draws_the_same_cells_as_the_whole_log() {
        // 300 records, a follower frozen half-way (its log ends 150 behind) and a leader
        // change that leaves divergent records: the newest window looks the same whether
        // the snapshot carries every record or only the tail.
        let s = Scenario::from_json(
            r#"{"brokers":3,"timeline":[
                {"at":0,"action":"produce","acks":"1","prefix":"a-","count":150},
                {"at":2000,"action":"freeze","broker":3},
                {"at":2100,"action":"produce","acks":"1","prefix":"b-","count":150},
                {"at":4000,"action":"freeze","broker":2},
                {"at":4100,"action":"produce","acks":"1","prefix":"c-","count":5},
                {"at":4200,"action":"kill","broker":1},
                {"at":4300,"action":"thaw","broker":2}],"end_ms":30000}"#,
        )
        .unwrap();
        let sim = watermark_engine::run(&s, true).unwrap();
        let full = sim.snapshot();
        let tail = sim.snapshot_tail(geometry::SNAPSHOT_TAIL);
        for width in [375.0, 1024.0, geometry::MAX_STAGE_W] {
            let w = window_of(&full, width);
            assert_eq!(w, window_of(&tail, width));
            let cs = cells(&full, w);
            assert!(!cs.is_empty());
            assert_eq!(cells(&tail, w), cs, "width {width}");
        }
    }
}
