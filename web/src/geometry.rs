//! Layout and projection as pure functions, tested natively: where a lane, a log cell or a
//! message in flight is drawn, which cells are committed, how the speed slider maps to a
//! speed, and the replication calculator of article 004.

use watermark_engine::record::Record;
use watermark_engine::types::{BrokerId, Node};

/// SVG geometry, in user units.
pub const LABEL_W: f64 = 170.0;
pub const CELL_W: f64 = 38.0;
pub const CELL_H: f64 = 34.0;
pub const LANE_H: f64 = 78.0;
pub const TOP: f64 = 86.0;
pub const CONTROLLER_Y: f64 = 30.0;
pub const CLIENT_X: f64 = 24.0;

/// The y of the centre of a broker's lane, by its position in the broker list.
pub fn lane_y(index: usize) -> f64 {
    TOP + index as f64 * LANE_H + LANE_H / 2.0
}

/// Total SVG height for `brokers` lanes.
pub fn svg_height(brokers: usize) -> f64 {
    TOP + brokers as f64 * LANE_H + 10.0
}

/// The range of offsets shown: up to `capacity` offsets ending at the longest log, plus
/// one free slot where the next record will go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetWindow {
    pub first: u64,
    pub count: u64,
}

/// How far the window moves at a time: up to five offsets (a ruler mark), and never more
/// than a quarter of the window, so the logs slide (and repaint whole) once every few
/// records rather than on every record, while a narrow view still shows most of its slots.
pub fn window_step(capacity: u64) -> u64 {
    (capacity / 4).clamp(1, 5)
}

pub fn offset_window(max_log_end: u64, capacity: u64) -> OffsetWindow {
    let capacity = capacity.max(1);
    let end = max_log_end + 1;
    let step = window_step(capacity);
    // The smallest multiple of the step that still shows offset `end - 1` and the free slot.
    let first = end.saturating_sub(capacity).div_ceil(step) * step;
    OffsetWindow {
        first,
        count: (end - first).min(capacity),
    }
}

/// The widest cluster view (web/src/app.rs clamps the stage to it).
pub const MAX_STAGE_W: f64 = 1400.0;

/// How many of the newest offsets the UI takes in each snapshot: enough for the widest
/// window and its step, with room to spare.
pub const SNAPSHOT_TAIL: u64 = 64;

/// How many cells fit in `width` units beside the labels.
pub fn cell_capacity(width: f64) -> u64 {
    (((width - LABEL_W - 12.0) / CELL_W).floor().max(4.0)) as u64
}

/// The x of an offset's cell, if it is inside the window.
pub fn cell_x(offset: u64, window: OffsetWindow) -> Option<f64> {
    (offset >= window.first && offset < window.first + window.count)
        .then(|| LABEL_W + (offset - window.first) as f64 * CELL_W)
}

/// The x of an offset's cell inside the sliding log group, whose origin moves left by
/// [`window_shift`] as the window slides: cells keep their coordinates (and their DOM
/// nodes) while the window moves, and only the group's transform changes.
pub fn log_x(offset: u64) -> f64 {
    LABEL_W + offset as f64 * CELL_W
}

/// The horizontal translation of the sliding log group for `window`, so that
/// `log_x(o) + window_shift(w) == cell_x(o, w)` for every offset in the window.
pub fn window_shift(window: OffsetWindow) -> f64 {
    -(window.first as f64) * CELL_W
}

/// An SVG `transform` value that moves by (x, y), rounded to a hundredth of a unit so equal
/// positions give equal strings.
pub fn translate(x: f64, y: f64) -> String {
    format!("translate({} {})", fixed(x, 2), fixed(y, 2))
}

/// `v` with `places` decimals (at most 6), rounded half away from zero: `{:.N}` without
/// core's float formatting, which is about 11 kB of the shipped wasm (BENCHMARKS.md,
/// "Shipped size"). Every number the UI writes as text goes through this or [`num`], so
/// that no f64 reaches `Display`.
pub fn fixed(v: f64, places: u32) -> String {
    let places = places.min(6);
    let scale = 10u64.pow(places);
    // Saturating: NaN is 0, and no coordinate comes near the limits.
    let n = (v * scale as f64).round() as i64;
    let (sign, a) = (if n < 0 { "-" } else { "" }, n.unsigned_abs());
    if places == 0 {
        return format!("{sign}{a}");
    }
    format!("{sign}{}.{:0w$}", a / scale, a % scale, w = places as usize)
}

/// `v` as an SVG or CSS number: to a hundredth of a unit, without trailing zeros (`170`,
/// `168.5`, `-1.25`), as `Display` writes the coordinates the geometry makes.
pub fn num(v: f64) -> String {
    let mut s = fixed(v, 2);
    let trimmed = s.trim_end_matches('0').trim_end_matches('.').len();
    s.truncate(trimmed);
    if s == "-0" {
        s.remove(0);
    }
    s
}

/// How a cell is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    /// Committed: a leader's HW covered this very record (offset, epoch and value). It stays
    /// committed when that leader dies: what a replica holds was committed or not, whoever
    /// leads now.
    Committed,
    /// Not (yet) covered by a leader's HW: only some replicas have it so far.
    Uncommitted,
    /// This replica holds a different record than the leader at the same offset.
    Divergent,
    /// It was committed, and the committed records at its offsets were lost (an unclean
    /// election, or a lost disk, chose a leader without them).
    Lost,
}

impl CellKind {
    pub fn class(self) -> &'static str {
        match self {
            CellKind::Committed => "cell committed",
            CellKind::Uncommitted => "cell uncommitted",
            CellKind::Divergent => "cell divergent",
            CellKind::Lost => "cell lost",
        }
    }

    /// Text that says the same as the colour, for people who do not see colour.
    pub fn label(self) -> &'static str {
        match self {
            CellKind::Committed => "committed",
            CellKind::Uncommitted => "not yet committed",
            CellKind::Divergent => "diverged from the leader",
            CellKind::Lost => "committed, then lost",
        }
    }
}

/// A replica's record against the committed history and the leader's log: `committed` is
/// the history's record at its offset (the snapshot's `committed`), `lost` whether it is
/// one of the committed records a loss took (the snapshot's `losses`).
pub fn cell_kind(
    record: &Record,
    leader_record: Option<&Record>,
    committed: Option<&Record>,
    lost: bool,
) -> CellKind {
    let same = |other: &Record| other.epoch == record.epoch && other.value == record.value;
    if lost {
        return CellKind::Lost;
    }
    match leader_record {
        Some(l) if !same(l) => CellKind::Divergent,
        _ if committed.is_some_and(same) => CellKind::Committed,
        _ => CellKind::Uncommitted,
    }
}

/// Where a node is drawn: brokers at the left end of their lane, the controller on top,
/// clients at the far left.
pub fn node_anchor(node: Node, broker_index: impl Fn(BrokerId) -> Option<usize>) -> (f64, f64) {
    match node {
        Node::Broker(b) => (LABEL_W - 24.0, lane_y(broker_index(b).unwrap_or(0))),
        Node::Controller => (LABEL_W / 2.0, CONTROLLER_Y),
        Node::Client(_) => (CLIENT_X, TOP - 16.0),
    }
}

/// Where a message in flight is at `now`: linear between its ends by elapsed time. A
/// message waiting in a frozen broker's socket buffer sits at its destination.
pub fn message_position(
    from: (f64, f64),
    to: (f64, f64),
    sent_ms: u64,
    deliver_ms: u64,
    now_ms: f64,
    buffered: bool,
) -> (f64, f64) {
    if buffered {
        return to;
    }
    let span = (deliver_ms.saturating_sub(sent_ms)) as f64;
    let p = if span <= 0.0 {
        1.0
    } else {
        ((now_ms - sent_ms as f64) / span).clamp(0.0, 1.0)
    };
    (from.0 + (to.0 - from.0) * p, from.1 + (to.1 - from.1) * p)
}

/// A message's trail `age_ms` after it left the wire, of `total_ms`, as a whole percentage of
/// opacity: 90% for the first half, 60% for the next quarter, 30% for the last. Three steps,
/// not a smooth fade: each change repaints the trail's whole box (a path across lanes), and
/// a fade set every frame tripled the page's paint cost (BENCHMARKS.md, "UI").
pub fn trail_opacity_percent(age_ms: f64, total_ms: f64) -> u32 {
    let p = age_ms / total_ms;
    if p < 0.5 {
        90
    } else if p < 0.75 {
        60
    } else {
        30
    }
}

/// The fastest speed at which messages and trails carry their labels while playing. A trail
/// stays 600 ms of simulated time (`cluster::TRAIL_MS`): at 4× its label is on screen for
/// 150 ms, about the least in which its few words can be read; at 10× it would be 60 ms, four
/// frames, and on a 12-broker cluster some forty labels changed every frame, a quarter of
/// the frame's rendering (BENCHMARKS.md, "Issue 14's fifth session"). Paused, scrubbed or
/// stepped, every label is drawn.
pub const LABELLED_MAX_SPEED: f64 = 4.0;

/// Whether messages and trails are drawn with their labels: always when paused, and while
/// playing up to [`LABELLED_MAX_SPEED`].
pub fn labels_drawn(playing: bool, speed: f64) -> bool {
    !playing || speed <= LABELLED_MAX_SPEED
}

/// A truncated record falling out of its lane: (downward offset, opacity) after `age_ms`
/// of a `total_ms` fall.
pub fn falling(age_ms: f64, total_ms: f64) -> (f64, f64) {
    let p = (age_ms / total_ms).clamp(0.0, 1.0);
    (p * p * LANE_H * 0.6, 1.0 - p)
}

/// Fraction of replica.lag.time.max.ms used up since the follower last caught up (0..=1).
pub fn lag_fraction(since_caught_up_ms: u64, lag_time_max_ms: u64) -> f64 {
    if lag_time_max_ms == 0 {
        return if since_caught_up_ms == 0 { 0.0 } else { 1.0 };
    }
    (since_caught_up_ms as f64 / lag_time_max_ms as f64).clamp(0.0, 1.0)
}

/// Speed slider: positions 0..=1000 map to 0.1×..=100× on a log scale.
pub fn speed_from_slider(pos: u32) -> f64 {
    let p = f64::from(pos.min(1000)) / 1000.0;
    10f64.powf(-1.0 + 3.0 * p)
}

pub fn slider_from_speed(speed: f64) -> u32 {
    let s = speed.clamp(0.1, 100.0);
    (((s.log10() + 1.0) / 3.0) * 1000.0).round() as u32
}

/// Speed as people read it: `0.25×`, `1×`, `12×`.
pub fn format_speed(speed: f64) -> String {
    let places = if speed < 1.0 {
        2
    } else if speed < 10.0 {
        1
    } else {
        0
    };
    format!("{}×", fixed(speed, places))
}

/// Article 004's calculator, with Kafka's effective minimum (never above the replica count).
/// Returns (brokers that can fail with acks=all writes continuing, brokers that can be lost
/// for ever without losing a committed record).
pub fn replication_calculator(replication_factor: u32, min_insync_replicas: u32) -> (u32, u32) {
    let effective = min_insync_replicas.min(replication_factor).max(1);
    (replication_factor - effective, effective - 1)
}

/// The warnings an operator would give for this pair.
pub fn config_warnings(replication_factor: u32, min_insync_replicas: u32) -> Vec<String> {
    let mut w = vec![];
    if min_insync_replicas > replication_factor {
        w.push(format!(
            "min.insync.replicas={min_insync_replicas} is above the replication factor {replication_factor}: Kafka uses {replication_factor} instead, so any stopped replica blocks acks=all writes."
        ));
    } else if min_insync_replicas == replication_factor && replication_factor > 1 {
        w.push(format!(
            "min.insync.replicas equals the replication factor ({replication_factor}): one stopped broker blocks all acks=all writes, even during a routine restart."
        ));
    }
    if min_insync_replicas == 1 && replication_factor >= 3 {
        w.push(format!(
            "min.insync.replicas=1 with replication factor {replication_factor}: acks=all can mean one broker, which may hold the only copy of an acknowledged record."
        ));
    }
    w
}

/// Simulated time as `m:ss.mmm`.
pub fn format_clock(ms: u64) -> String {
    format!("{}:{:02}.{:03}", ms / 60_000, (ms / 1000) % 60, ms % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(offset: u64, epoch: i32, value: &str) -> Record {
        Record {
            offset,
            epoch,
            batch_base: offset,
            value: value.to_string(),
            producer_id: -1,
            producer_epoch: -1,
            sequence: -1,
            key: None,
            size: None,
        }
    }

    #[test]
    fn a_record_is_committed_when_the_committed_history_holds_it() {
        let leader = rec(3, 0, "a");
        let history = rec(3, 0, "a");
        assert_eq!(
            cell_kind(&rec(3, 0, "a"), Some(&leader), Some(&history), false),
            CellKind::Committed
        );
        assert_eq!(
            cell_kind(&rec(3, 0, "a"), Some(&leader), None, false),
            CellKind::Uncommitted,
            "no leader's HW covered offset 3 yet"
        );
        assert_eq!(
            cell_kind(&rec(3, 0, "lost-1"), Some(&leader), Some(&history), false),
            CellKind::Divergent
        );
        assert_eq!(
            cell_kind(&rec(3, 1, "a"), Some(&leader), Some(&history), false),
            CellKind::Divergent,
            "same value, other epoch"
        );
        assert_eq!(
            cell_kind(&rec(3, 0, "a"), None, Some(&history), false),
            CellKind::Committed,
            "no leader (it died): still committed"
        );
        assert_eq!(
            cell_kind(&rec(3, 1, "b"), None, Some(&history), false),
            CellKind::Uncommitted,
            "another record at a committed offset is not that one"
        );
        assert_eq!(
            cell_kind(&rec(3, 0, "a"), Some(&rec(3, 2, "new")), None, true),
            CellKind::Lost
        );
    }

    #[test]
    fn the_window_ends_one_past_the_longest_log() {
        assert_eq!(offset_window(5, 20), OffsetWindow { first: 0, count: 6 });
        // 101 slots needed (0..=100), 20 fit: the window starts at the next multiple of 5
        // above 81 and shows 85..=100, with room to grow before it moves again.
        assert_eq!(
            offset_window(100, 20),
            OffsetWindow {
                first: 85,
                count: 16
            }
        );
        let w = offset_window(100, 20);
        assert_eq!(cell_x(85, w), Some(LABEL_W));
        assert_eq!(cell_x(84, w), None);
        assert_eq!(cell_x(100, w), Some(LABEL_W + 15.0 * CELL_W));
        assert_eq!(cell_x(101, w), None);
        // Small windows move one offset at a time.
        assert_eq!(
            offset_window(100, 6),
            OffsetWindow {
                first: 95,
                count: 6
            }
        );
        // The log end and the free slot are always inside, and the window only moves
        // forward, in whole steps, as the log grows.
        for cap in [4, 9, 10, 17, 40] {
            let mut last = 0;
            for max in 0..300 {
                let w = offset_window(max, cap);
                assert!(w.first <= max && max < w.first + w.count, "{max} in {w:?}");
                assert!(w.count <= cap && w.first >= last);
                assert_eq!(w.first % window_step(cap), 0);
                last = w.first;
            }
        }
        assert!(cell_capacity(1200.0) > cell_capacity(375.0));
        assert_eq!(cell_capacity(10.0), 4, "never fewer than four cells");
    }

    #[test]
    fn the_snapshot_tail_covers_the_widest_window() {
        let cap = cell_capacity(MAX_STAGE_W);
        assert!(cap + window_step(cap) <= SNAPSHOT_TAIL, "{cap} cells");
    }

    #[test]
    fn the_sliding_group_puts_cells_where_the_window_does() {
        for (max, cap) in [(5, 20), (100, 20), (10_000, 7)] {
            let w = offset_window(max, cap);
            for o in w.first..w.first + w.count {
                let x = log_x(o) + window_shift(w);
                assert_eq!(Some(x), cell_x(o, w), "offset {o} of {w:?}");
            }
        }
        assert_eq!(translate(-3.0, 0.004), "translate(-3.00 0.00)");
    }

    #[test]
    fn messages_move_linearly_and_wait_in_buffers() {
        let (from, to) = ((0.0, 0.0), (100.0, 50.0));
        assert_eq!(
            message_position(from, to, 1000, 1100, 1000.0, false),
            (0.0, 0.0)
        );
        assert_eq!(
            message_position(from, to, 1000, 1100, 1050.0, false),
            (50.0, 25.0)
        );
        assert_eq!(
            message_position(from, to, 1000, 1100, 2000.0, false),
            (100.0, 50.0)
        );
        assert_eq!(message_position(from, to, 1000, 1100, 1050.0, true), to);
        assert_eq!(
            message_position(from, to, 1000, 1000, 1000.0, false),
            to,
            "zero latency: arrived"
        );
    }

    #[test]
    fn labels_are_drawn_paused_and_up_to_four_times_while_playing() {
        // Paused (or stepped, or scrubbed), at any speed.
        assert!(labels_drawn(false, 100.0));
        assert!(labels_drawn(true, 1.0));
        assert!(labels_drawn(true, LABELLED_MAX_SPEED));
        // The slider's 4x position rounds to just under or over 4: the last labelled
        // position is the one at or below 4x.
        assert!(labels_drawn(true, speed_from_slider(534)));
        assert!(!labels_drawn(true, speed_from_slider(535)));
        // 10x, the cluster's frame-rate goal, plays without labels.
        assert!(!labels_drawn(true, speed_from_slider(667)));
    }

    #[test]
    fn speed_slider_is_logarithmic_from_a_tenth_to_a_hundred() {
        assert!((speed_from_slider(0) - 0.1).abs() < 1e-9);
        assert!((speed_from_slider(1000) - 100.0).abs() < 1e-6);
        assert!((speed_from_slider(333) - 1.0).abs() < 0.01);
        for s in [0.1, 0.5, 1.0, 7.0, 100.0] {
            assert!(
                (speed_from_slider(slider_from_speed(s)) - s).abs() / s < 0.01,
                "{s}"
            );
        }
        assert_eq!(format_speed(0.25), "0.25×");
        assert_eq!(format_speed(12.4), "12×");
        assert_eq!(format_speed(1.0), "1.0×");
        assert_eq!(format_speed(100.0), "100×");
    }

    #[test]
    fn numbers_are_written_as_core_writes_them() {
        for v in [
            0.0, 1.0, -1.5, 168.5, 170.0, 1234.25, 0.07, -0.5, 86.0, 12.75, 99.99, 1400.0,
        ] {
            assert_eq!(num(v), format!("{v}"), "{v}");
            for places in 0..4 {
                // Equal to core's `{:.N}` wherever the value is not a tie at that place.
                if (v * 10f64.powi(places as i32)).fract().abs() != 0.5 {
                    assert_eq!(
                        fixed(v, places),
                        format!("{v:.*}", places as usize),
                        "{v} {places}"
                    );
                }
            }
        }
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(0.004), "0");
        assert_eq!(num(2.0 / 3.0), "0.67");
        assert_eq!(fixed(0.25, 1), "0.3", "ties go away from zero");
        assert_eq!(fixed(-3.0, 2), "-3.00");
        assert_eq!(fixed(f64::NAN, 2), "0.00");
        assert_eq!(fixed(28.766, 1), "28.8");
    }

    #[test]
    fn calculator_matches_article_004() {
        // "Why is 3 replicas, minimum 2 the standard? It survives one broker failure with
        // writes still accepted ... one permanent loss cannot remove it."
        assert_eq!(replication_calculator(3, 2), (1, 1));
        // "A minimum of 1 gives up the durability."
        assert_eq!(replication_calculator(3, 1), (2, 0));
        // "A minimum of 3 gives up availability during any restart."
        assert_eq!(replication_calculator(3, 3), (0, 2));
        // "Two replicas with a minimum of 2 also stops writes on any single failure."
        assert_eq!(replication_calculator(2, 2), (0, 1));
        // Above the replica count, Kafka uses the replica count.
        assert_eq!(replication_calculator(2, 5), (0, 1));
    }

    #[test]
    fn warnings_for_risky_minimums() {
        assert_eq!(config_warnings(3, 2), Vec::<String>::new());
        assert!(config_warnings(3, 1)[0].contains("acks=all can mean one broker"));
        assert!(config_warnings(3, 3)[0].contains("one stopped broker blocks"));
        assert!(config_warnings(2, 3)[0].contains("above the replication factor"));
    }

    #[test]
    fn truncated_records_fall_and_fade() {
        assert_eq!(falling(0.0, 3000.0), (0.0, 1.0));
        let (dy, o) = falling(1500.0, 3000.0);
        assert!(dy > 0.0 && o == 0.5);
        let (dy_end, o_end) = falling(4000.0, 3000.0);
        assert_eq!(o_end, 0.0);
        assert!(dy_end > dy);
    }

    #[test]
    fn lag_bar_fills_toward_the_limit() {
        assert_eq!(lag_fraction(0, 30_000), 0.0);
        assert_eq!(lag_fraction(15_000, 30_000), 0.5);
        assert_eq!(lag_fraction(90_000, 30_000), 1.0);
        assert_eq!(lag_fraction(5, 0), 1.0);
        assert_eq!(format_clock(83_456), "1:23.456");
    }
}
