//! The cluster view: one SVG lane per broker with its log cells, LEO and HW markers, role,
//! state, ISR/ELR membership and lag bar; the controller; and the messages in flight.
//! Thin: every position comes from `geometry`, every fact from the snapshot.

use std::sync::Arc;

use leptos::prelude::*;
use watermark_engine::snapshot::{BrokerSnapshot, MessageSnapshot, Snapshot};
use watermark_engine::types::{BrokerId, Node};

use crate::geometry::{self, OffsetWindow, CELL_H, CELL_W, LABEL_W};

/// What one frame shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub snap: Snapshot,
    /// Simulated time with a fraction, for smooth motion between whole milliseconds.
    pub now: f64,
    pub lag_time_max_ms: u64,
    /// The width the cluster view was laid out for (so packets use the same window).
    pub snap_width: f64,
}

/// One drawn cell: everything that decides how it looks, so it is its own key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CellData {
    broker: BrokerId,
    offset: u64,
    epoch: i32,
    value: String,
    kind: &'static str,
    label: &'static str,
    x: i64,
    y: i64,
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
    let hw = leader
        .filter(|l| l.process.is_up())
        .map(|l| l.high_watermark);
    let mut out = vec![];
    for (i, b) in snap
        .brokers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.hosts_replica)
    {
        let y = geometry::lane_y(i) - CELL_H / 2.0;
        for r in b.records.iter().filter(|r| r.offset >= window.first) {
            let Some(x) = geometry::cell_x(r.offset, window) else {
                continue;
            };
            let leader_record = leader.and_then(|l| {
                r.offset
                    .checked_sub(l.log_start_offset)
                    .and_then(|i| l.records.get(i as usize))
            });
            let kind = geometry::cell_kind(r, leader_record, hw);
            out.push(CellData {
                broker: b.id,
                offset: r.offset,
                epoch: r.epoch,
                value: r.value.clone(),
                kind: kind.class(),
                label: kind.label(),
                x: x as i64,
                y: y as i64,
            });
        }
    }
    out
}

/// A record a truncation threw away, drawn falling out of its lane for a few seconds.
#[derive(Debug, Clone, PartialEq)]
struct Ghost {
    key: (BrokerId, u64, u64, i32),
    value: String,
    x: f64,
    y: f64,
    opacity: f64,
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
        let Some(i) = snap.brokers.iter().position(|b| b.id == t.broker) else {
            continue;
        };
        let (dy, opacity) = geometry::falling(age, GHOST_MS);
        for r in &t.removed {
            let Some(x) = geometry::cell_x(r.offset, window) else {
                continue;
            };
            out.push(Ghost {
                key: (t.broker, t.time_ms, r.offset, r.epoch),
                value: r.value.clone(),
                x,
                y: geometry::lane_y(i) - CELL_H / 2.0 + dy,
                opacity,
            });
        }
    }
    out
}

fn short(value: &str) -> String {
    let v: String = value.chars().take(5).collect();
    if value.chars().count() > 5 {
        format!("{v}…")
    } else {
        v
    }
}

#[component]
pub fn ClusterView(frame: RwSignal<Arc<Frame>>, width: RwSignal<f64>) -> impl IntoView {
    let window = Memo::new(move |_| frame.with(|f| window_of(&f.snap, width.get())));
    let cell_list = Memo::new(move |_| frame.with(|f| cells(&f.snap, window.get())));
    let broker_ids =
        Memo::new(move |_| frame.with(|f| f.snap.brokers.iter().map(|b| b.id).collect::<Vec<_>>()));
    let height = move || geometry::svg_height(broker_ids.with(|b| b.len()));
    let messages = Memo::new(move |_| frame.with(|f| f.snap.in_flight.clone()));
    let falling = move || frame.with(|f| ghosts(&f.snap, window.get(), f.now));
    let index_of = move |id: BrokerId| broker_ids.with(|b| b.iter().position(|x| *x == id));

    view! {
        <svg
            class="cluster"
            role="img"
            aria-label="Cluster view: one lane per broker with its log"
            viewBox=move || format!("0 0 {} {}", width.get(), height())
            width=move || width.get()
            height=height
        >
            <title>"Brokers, their logs, and the messages between them"</title>
            // The controller.
            <g class="controller">
                <rect x="8" y="12" width=LABEL_W - 40.0 height="36" rx="6"></rect>
                <text x="18" y="35">"KRaft controller"</text>
                <text class="small" x=LABEL_W - 22.0 y="24">
                    {move || frame.with(|f| format!("leader epoch {}", f.snap.controller.leader_epoch))}
                </text>
                <text class="small" x=LABEL_W - 22.0 y="40">
                    {move || frame.with(|f| format!("partition epoch {}", f.snap.controller.partition_epoch))}
                </text>
            </g>
            // Offset ruler.
            <g class="ruler">
                {move || {
                    let w = window.get();
                    (w.first..w.first + w.count)
                        .filter(|o| o % 5 == 0)
                        .filter_map(|o| geometry::cell_x(o, w).map(|x| (o, x)))
                        .map(|(o, x)| view! { <text x=x + 2.0 y=geometry::TOP - 6.0>{o.to_string()}</text> })
                        .collect_view()
                }}
            </g>
            <For each=move || broker_ids.get() key=|id| *id let:id>
                <Lane id=id frame=frame window=window index_of=index_of />
            </For>
            <For
                each=move || cell_list.get()
                key=|c| c.clone()
                let:c
            >
                <g class=c.kind>
                    <rect x=c.x y=c.y width=CELL_W - 3.0 height=CELL_H rx="3">
                        <title>{format!("offset {} epoch {}: {} ({})", c.offset, c.epoch, c.value, c.label)}</title>
                    </rect>
                    <text class="value" x=c.x + 3 y=c.y + 14>{short(&c.value)}</text>
                    <text class="epoch" x=c.x + 3 y=c.y + 28>{format!("e{}", c.epoch)}</text>
                </g>
            </For>
            {move || {
                falling()
                    .into_iter()
                    .map(|g| {
                        view! {
                            <g class="cell truncated" opacity=g.opacity>
                                <rect x=g.x y=g.y width=CELL_W - 3.0 height=CELL_H rx="3">
                                    <title>{format!("truncated: {}", g.value)}</title>
                                </rect>
                                <text class="value" x=g.x + 3.0 y=g.y + 14.0>{short(&g.value)}</text>
                            </g>
                        }
                    })
                    .collect_view()
            }}
            <For each=move || messages.get() key=|m| m.id let:m>
                <Packet message=m frame=frame index_of=index_of />
            </For>
        </svg>
    }
}

#[component]
fn Lane(
    id: BrokerId,
    frame: RwSignal<Arc<Frame>>,
    window: Memo<OffsetWindow>,
    index_of: impl Fn(BrokerId) -> Option<usize> + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let broker =
        Memo::new(move |_| frame.with(|f| f.snap.brokers.iter().find(|b| b.id == id).cloned()));
    let y = move || geometry::lane_y(index_of(id).unwrap_or(0));
    let class = move || {
        broker.with(|b| match b {
            Some(b) => format!("lane {} {}", b.role, b.state.replace(' ', "-")),
            None => "lane".into(),
        })
    };
    let title = move || {
        broker.with(|b| {
            b.as_ref()
                .map(|b| {
                    format!(
                        "broker {} · {}",
                        b.id,
                        if b.hosts_replica {
                            b.role.as_str()
                        } else {
                            "no replica"
                        }
                    )
                })
                .unwrap_or_default()
        })
    };
    let state = move || {
        broker.with(|b| {
            b.as_ref()
                .map(|b| {
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
                    format!("{} · {membership}{slow}", b.state)
                })
                .unwrap_or_default()
        })
    };
    let offsets = move || {
        broker.with(|b| {
            b.as_ref()
                .map(|b| format!("LEO {}  HW {}", b.log_end_offset, b.high_watermark))
                .unwrap_or_default()
        })
    };
    let marker = move |which: &'static str| {
        move || {
            let w = window.get();
            broker.with(|b| {
                let b = b.as_ref()?;
                let offset = if which == "hw" {
                    b.high_watermark
                } else {
                    b.log_end_offset
                };
                let x = geometry::cell_x(offset, w)
                    .or_else(|| (offset < w.first).then_some(LABEL_W))?;
                Some(x - 1.5)
            })
        }
    };
    let lag = move || {
        frame.with(|f| {
            let b = f.snap.brokers.iter().find(|b| b.id == id)?;
            let since = b.since_caught_up_ms?;
            Some(geometry::lag_fraction(since, f.lag_time_max_ms))
        })
    };
    view! {
        <g class=class>
            <rect class="lane-bg" x="4" y=move || y() - geometry::LANE_H / 2.0 + 3.0 width="100%" height=geometry::LANE_H - 6.0 rx="6"></rect>
            <text class="lane-title" x="12" y=move || y() - 20.0>{title}</text>
            <text class="lane-state" x="12" y=move || y() - 6.0>{state}</text>
            <text class="lane-offsets" x="12" y=move || y() + 8.0>{offsets}</text>
            <g class="lag" aria-hidden="true">
                <rect class="lag-track" x="12" y=move || y() + 16.0 width="120" height="6" rx="3"></rect>
                <rect
                    class="lag-fill"
                    x="12"
                    y=move || y() + 16.0
                    width=move || lag().map_or(0.0, |f| 120.0 * (1.0 - f))
                    height="6"
                    rx="3"
                ></rect>
            </g>
            {move || {
                let x = marker("hw")()?;
                Some(view! {
                    <g class="hw-marker">
                        <line x1=x x2=x y1=y() - geometry::LANE_H / 2.0 + 6.0 y2=y() + geometry::LANE_H / 2.0 - 6.0></line>
                        <text x=x + 2.0 y=y() + geometry::LANE_H / 2.0 - 8.0>"HW"</text>
                    </g>
                })
            }}
            {move || {
                let x = marker("leo")()?;
                Some(view! {
                    <g class="leo-marker">
                        <line x1=x x2=x y1=y() - geometry::LANE_H / 2.0 + 6.0 y2=y() - CELL_H / 2.0 - 2.0></line>
                        <text x=x + 2.0 y=y() - geometry::LANE_H / 2.0 + 14.0>"LEO"</text>
                    </g>
                })
            }}
        </g>
    }
}

/// What waits: acks=all requests in the purgatory and follower fetches the leader holds.
#[component]
pub fn Waiting(frame: RwSignal<Arc<Frame>>) -> impl IntoView {
    let items = move || {
        frame.with(|f| {
            let now = f.now;
            let hw = leader_of(&f.snap).map(|l| l.high_watermark);
            let mut out: Vec<String> = f
                .snap
                .purgatory
                .iter()
                .map(|p| {
                    format!(
                        "Purgatory on broker {}: acks=all offsets {}..{} waits for HW ≥ {} (HW now {}); REQUEST_TIMED_OUT in {:.1} s",
                        p.broker,
                        p.first_offset,
                        p.required_offset - 1,
                        p.required_offset,
                        hw.map_or("?".to_string(), |h| h.to_string()),
                        ((p.deadline_ms as f64 - now) / 1000.0).max(0.0)
                    )
                })
                .collect();
            out.extend(f.snap.held_fetches.iter().map(|h| {
                format!(
                    "Broker {} holds broker {}'s fetch (fetchOffset {}): answers when records arrive, or in {:.1} s (replica.fetch.wait.max.ms)",
                    h.leader,
                    h.replica,
                    h.fetch_offset,
                    ((h.deadline_ms as f64 - now) / 1000.0).max(0.0)
                )
            }));
            out
        })
    };
    view! {
        <ul class="waiting" aria-label="Waiting requests">
            {move || items().into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}
        </ul>
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

#[component]
fn Packet(
    message: MessageSnapshot,
    frame: RwSignal<Arc<Frame>>,
    index_of: impl Fn(BrokerId) -> Option<usize> + Copy + Send + Sync + 'static,
) -> impl IntoView {
    // Broker ends sit at the broker's log end as it was when the message was drawn first:
    // a fetch leaves from the follower's LEO and lands at the leader's.
    let (from, to) = frame.with_untracked(|f| {
        let window = window_of(&f.snap, f.snap_width);
        let anchor = |n: Node| match n {
            Node::Broker(b) => {
                let leo = f
                    .snap
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
        (anchor(message.from), anchor(message.to))
    });
    let pos = move || {
        frame.with(|f| {
            geometry::message_position(
                from,
                to,
                message.sent_ms,
                message.deliver_ms,
                f.now,
                message.buffered,
            )
        })
    };
    let kind = message.kind.to_lowercase();
    let label = format!(
        "{} → {}: {}",
        node_label(message.from),
        node_label(message.to),
        message.summary
    );
    let short_label = match message.kind.as_str() {
        "Fetch" | "FetchResponse" | "Produce" | "ProduceResponse" | "AlterPartition" => {
            message.summary.clone()
        }
        _ => String::new(),
    };
    view! {
        <g class=format!("packet {kind}{}", if message.buffered { " buffered" } else { "" })>
            <circle cx=move || pos().0 cy=move || pos().1 r="6">
                <title>{label}</title>
            </circle>
            <text class="packet-label" x=move || pos().0 + 9.0 y=move || pos().1 - 8.0>{short_label}</text>
        </g>
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
}
