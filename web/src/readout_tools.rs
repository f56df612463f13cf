//! The read-out tools of "In Kafka's words" that run on the partition the lanes show:
//! `kafka-dump-log.sh` of one broker's segment of it (the `dump_log` action) and each
//! replica's `leader-epoch-checkpoint` of it printed to the transcript (`epochs`). Both are
//! timeline actions, so the event log has their lines and a share link replays them; the
//! newest dump at the shown moment is shown under the buttons, as the tool printed it then.

// `attr=move || f()`: see panels.rs.
#![allow(clippy::redundant_closure)]

use leptos::prelude::*;
use watermark_engine::event::{Event, Tool};
use watermark_engine::Action;

use crate::panels::{clicked_act, control_value, target};
use crate::state::Ctx;

/// Whether `e` is a line of `kafka-dump-log.sh`.
fn is_dump(e: &Event) -> bool {
    matches!(
        e,
        Event::ToolOutput {
            tool: Tool::DumpLog,
            ..
        }
    )
}

/// The newest `kafka-dump-log.sh` output up to the shown moment: the lines of the dump (or
/// the dumps, run at one moment) whose last line is the newest in the event log's lines.
/// They are read from the whole trace, so a dump longer than the event log keeps is whole;
/// the walk back from the trace's end passes only the lines after it, fewer than the event
/// log keeps.
fn last_dump(ctx: Ctx) -> String {
    let last = ctx.log.with(|l| {
        l.iter()
            .rev()
            .find(|e| is_dump(e.event()))
            .map(|e| (e.seq, e.time_ms))
    });
    let Some((seq, at)) = last else {
        return String::new();
    };
    ctx.pg.with_value(|pg| {
        let mut lines: Vec<String> = Vec::new();
        for e in pg.current().trace_events().rev() {
            if e.seq > seq {
                continue;
            }
            match e.event() {
                Event::ToolOutput {
                    tool: Tool::DumpLog,
                    line,
                    ..
                } if e.time_ms == at => lines.push(line.clone()),
                _ => break,
            }
        }
        lines.reverse();
        lines.join("\n")
    })
}

/// The tools' row and the newest dump, for the read-outs section (a function, not a
/// component: a component is code of its own).
pub fn log_tools(ctx: Ctx) -> AnyView {
    // The broker whose segment is dumped: any broker (one without a replica says so, as
    // DumpLogSegments does of a file that is not there).
    let options = move || {
        ctx.broker_ids.with(|ids| {
            let mut m = String::new();
            for b in ids {
                m.push_str(&format!("<option value=\"{b}\">broker {b}</option>"));
            }
            m
        })
    };
    let on_click = move |ev: leptos::ev::MouseEvent| {
        use leptos::wasm_bindgen::JsCast;
        let root = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let (topic, partition) = target(ctx);
        match (clicked_act(&ev).as_deref(), root) {
            (Some("dump-log"), Some(root)) => {
                let broker = control_value(&root, "[aria-label='Broker to dump']")
                    .parse()
                    .unwrap_or(1);
                ctx.act(Action::DumpLog {
                    broker,
                    topic,
                    partition,
                });
            }
            (Some("epochs"), _) => ctx.act(Action::Epochs { topic, partition }),
            _ => {}
        }
    };
    view! {
        <div class="tools" role="group" aria-label="Tools on the shown partition" on:click=on_click>
            <label>"kafka-dump-log.sh --files "
                <code>{move || ctx.snap.with(|s| format!("/var/lib/kafka/data/{}-{}/00000000000000000000.log", s.topic, s.partition))}</code>
                " on "
                <select aria-label="Broker to dump" inner_html=move || options()></select>
            </label>
            <button data-act="dump-log" aria-label="Dump the log">"Dump the log"</button>
            <button data-act="epochs" aria-label="Print the leader-epoch-checkpoints" title="Each replica's leader-epoch-checkpoint of the shown partition, as it is now, into the event log">"Print the leader-epoch-checkpoints"</button>
        </div>
        // Hidden while empty (`:empty` in the stylesheet): one text that follows the log, no
        // memo and no second closure.
        <pre class="dump-log" aria-label="kafka-dump-log">{move || last_dump(ctx)}</pre>
    }
    .into_any()
}
