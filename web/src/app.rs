//! The playground page: composes the cluster view, time controls, settings, actions and
//! read-outs over one [`Ctx`], runs the frame loop, and handles the keyboard.

// `attr=move || f()` rather than `attr=f`: with `erase_components` only a closure written in
// the view is boxed (one monomorphization per output type); a named one is its own
// (BENCHMARKS.md, "Shipped size").
#![allow(clippy::redundant_closure)]

use leptos::prelude::*;

use crate::beside::{BesideRuns, BesideTop};
use crate::cluster::{ClusterView, Waiting};
use crate::geometry;
use crate::lane_menu::LaneMenus;
use crate::legend::Legend;
use crate::model::{default_scenario, Playground};
use crate::overview::ClusterOverview;
use crate::panels::{narration, Actions, Alarms, Readouts, Settings, Simplifications, TimeBar};
use crate::session;
use crate::share_ui::{self, SessionPanel};
use crate::state::Ctx;
use crate::undo::{Undo, UndoBar};
use crate::walkthrough::Walkthrough;

/// The version label shown in the header, e.g. `engine v0.1.0`.
pub fn engine_version_label(version: &str) -> String {
    format!("engine v{version}")
}

/// Width available to the cluster view, in whole pixels.
fn stage_width(embed: bool) -> u64 {
    // The document's client width leaves out a vertical scrollbar.
    let w = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .map(|e| f64::from(e.client_width()))
        .filter(|w| *w > 0.0)
        .unwrap_or(1024.0);
    if embed {
        return (w - 16.0).clamp(300.0, geometry::MAX_STAGE_W) as u64;
    }
    // Wide screens put the side panel beside the stage (see style/main.css). The least is
    // a 320 px phone's room (296 px), so the page never scrolls sideways there.
    let stage = if w >= 1100.0 { w - 400.0 } else { w - 24.0 };
    stage.clamp(280.0, geometry::MAX_STAGE_W) as u64
}

fn typing_in_a_field(ev: &web_sys::KeyboardEvent) -> bool {
    use wasm_bindgen::JsCast;
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            matches!(
                el.tag_name().as_str(),
                "INPUT" | "SELECT" | "TEXTAREA" | "BUTTON"
            )
        })
}

#[component]
pub fn App() -> impl IntoView {
    let (search, hash) = share_ui::page_search_and_hash();
    let options = session::parse_url(&search, &hash);
    let opening = session::choose_opening(
        &options,
        share_ui::stored_session().as_deref(),
        default_scenario(),
    );
    let Some(info) = opening.fetch else {
        return playground(&options, opening);
    };
    // `?preset=NAME`: the preset's file is fetched first (docs/ui.md, "Presets load on
    // demand"). Until it is here the page says so, and shows no scenario: not the default,
    // not a stored session, nothing that could pass for the preset.
    let opened = RwSignal::new(None::<session::Opening>);
    leptos::task::spawn_local(async move {
        let fetched = share_ui::fetch_preset(info).await;
        opened.set(Some(session::preset_opening(
            info,
            fetched,
            default_scenario(),
        )));
    });
    let class = if options.embed { "app embed" } else { "app" };
    view! {
        {move || match opened.get() {
            Some(opening) => playground(&options, opening),
            None => view! {
                <div class=class data-wasm="loading" aria-busy="true">
                    <p class="notice" role="status">{session::preset_loading(info)}</p>
                </div>
            }
            .into_any(),
        }}
    }
    .into_any()
}

/// The playground on `opening`, as the URL's options ask.
fn playground(options: &session::UrlOptions, opening: session::Opening) -> AnyView {
    let embed = options.embed;
    let pg = match Playground::new(opening.scenario.clone())
        .or_else(|_| Playground::new(default_scenario()))
    {
        Ok(pg) => pg,
        // The default scenario is a constant of this build; it always validates (a test says so).
        Err(e) => panic!("default scenario: {e}"),
    };
    let ctx = Ctx::new(pg, stage_width(embed), embed);
    // Open at the link's time; a restored session reopens where it was left.
    let start = options.start_ms.or_else(|| {
        opening.restored.then(|| {
            session::restored_time(opening.scenario.end_ms, share_ui::stored_time().as_deref())
        })
    });
    ctx.set_stored_is_current(opening.restored);
    if let Some(t) = start {
        ctx.pg.update_value(|pg| pg.run_to(t));
    }
    ctx.pg.update_value(|pg| {
        pg.playing = options.autoplay;
        // An embed plays through (a documentation page's reader did not ask for steps).
        pg.pause_at_captions = !embed;
    });
    ctx.notice.set(opening.notice.clone());
    if embed {
        // The link did not open: tell the host (the embed loader shows it in place).
        if let Some(n) = &opening.notice {
            share_ui::post_error(n, true);
        }
    }
    ctx.publish();
    let width = ctx.width;
    let lag_time_max_ms = Memo::new(move |_| ctx.status.with(|s| s.config.replica_lag_time_max_ms));
    let help = RwSignal::new(false);
    let show_controls = !embed || options.controls;

    // The frame loop runs while something moves (see `frames`); this starts it if so.
    crate::frames::wake(ctx);
    // An embed without time controls can still be paused by its reader: a Pause button
    // while it plays (and Space), then Play to go on from there. One that was never playing
    // stays a still picture, as its author asked.
    let reader_paused = RwSignal::new(false);
    let playing = Memo::new(move |_| ctx.status.with(|s| s.playing));
    // Messages and trails are labelled paused and up to 4× (geometry::labels_drawn).
    let labels = crate::panels::flag(Box::new(move || {
        ctx.status
            .with(|s| crate::geometry::labels_drawn(s.playing, s.speed))
    }));
    let toggle_by_reader = move || {
        let was_playing = playing.get_untracked();
        ctx.with_pg(|pg| pg.playing = !was_playing);
        reader_paused.set(was_playing);
    };
    let on_key = move |e: &web_sys::KeyboardEvent| {
        if embed && !show_controls {
            if e.key() == " " && (playing.get_untracked() || reader_paused.get_untracked()) {
                e.prevent_default();
                toggle_by_reader();
            }
            return;
        }
        let key = e.key();
        if key == "?" {
            help.update(|h| *h = !*h);
            e.prevent_default();
            return;
        }
        if key == "Escape" {
            help.set(false);
            return;
        }
        if typing_in_a_field(e) {
            // Space and arrows belong to the focused control (buttons, sliders, fields).
            return;
        }
        match key.as_str() {
            " " => {
                e.prevent_default();
                ctx.with_pg(|pg| pg.playing = !pg.playing);
            }
            "ArrowRight" => {
                e.prevent_default();
                ctx.with_pg(|pg| {
                    pg.playing = false;
                    pg.step();
                });
            }
            "ArrowLeft" => {
                e.prevent_default();
                ctx.with_pg(|pg| {
                    pg.playing = false;
                    let t = pg.current().now().saturating_sub(100);
                    pg.seek(t);
                });
            }
            _ => {}
        }
    };
    // One handler for the window's events, by their name: one listener's code instead of
    // one per event type (docs/ui.md, "Controls as markup").
    let on_window = move |e: web_sys::Event| {
        use wasm_bindgen::JsCast;
        match e.type_().as_str() {
            "pagehide" => share_ui::save_if_dirty(ctx),
            "resize" => {
                width.set(stage_width(embed));
                ctx.publish();
            }
            "message" => {
                if embed {
                    let data = e.unchecked_ref::<web_sys::MessageEvent>().data();
                    share_ui::handle_host_message(ctx, &data);
                }
            }
            _ => on_key(e.unchecked_ref()),
        }
    };
    let listeners = ["pagehide", "resize", "message", "keydown"]
        .map(|name| window_event_listener_untyped(name, on_window));
    on_cleanup(move || listeners.into_iter().for_each(|l| l.remove()));

    // The scenario's title names the page (and an embed shows it above the picture).
    let title = ctx.title;
    // One effect for what the page sets outside its view (each effect is code of its own):
    // the document's title, and, once the app is mounted, the frame loop's watchers.
    let watchers = StoredValue::new_local(None::<crate::frames::Watchers>);
    Effect::new(move |_| {
        if watchers.with_value(Option::is_none) {
            if let Some(el) = crate::panels::page_element(".app") {
                watchers.set_value(crate::frames::watch(ctx, &el));
            }
        }
        let t = title.get();
        if let Some(d) = web_sys::window().and_then(|w| w.document()) {
            d.set_title(&if t.is_empty() || t == crate::model::DEFAULT_TITLE {
                "Watermark".to_string()
            } else {
                format!("{t} · Watermark")
            });
        }
    });

    if embed {
        let base = share_ui::page_base();
        let open_full = move || {
            let t = ctx.clock.with(|c| c.now);
            ctx.pg
                .with_value(|pg| session::share_link(&base, &pg.to_scenario(), t))
        };
        let reader_can_pause = crate::panels::flag(Box::new(move || {
            !show_controls && (playing.get() || reader_paused.get())
        }));
        return view! {
            <div class="app embed" data-wasm="ready">
                <p class="embed-title" prop:hidden=move || title.with(String::is_empty)>{move || title.get()}</p>
                <Alarms ctx=ctx />
                <Walkthrough ctx=ctx />
                {show_controls.then(|| view! { <TimeBar ctx=ctx /> }.into_any())}
                <BesideTop ctx=ctx />
                <ClusterView snap=ctx.snap clock=ctx.clock tick=ctx.tick lag_time_max_ms=lag_time_max_ms width=width broker_ids=ctx.broker_ids labels=labels />
                <BesideRuns ctx=ctx labels=labels />
                <p class="embed-foot">
                    // Built and removed, not a `<Show>` (less code, BENCHMARKS.md "Shipped size").
                    {move || reader_can_pause.get().then(|| view! {
                        <button class="reader-pause" on:click=move |_| toggle_by_reader()>{move || crate::panels::pick(playing.get(), "Pause", "Play")}</button>
                        " "
                    }.into_any())}
                    <span class="describe-mini" aria-label="kafka-topics --describe">{move || ctx.snap.with(|s| s.describe.clone())}</span>
                    " "
                    <a href=move || open_full() target="_blank" rel="noopener">"Open in Watermark"</a>
                </p>
                // Compact: one line, closed, until the reader opens it (the embed then
                // reports its new height, and the host's iframe follows).
                <Legend />
            </div>
        }
        .into_any();
    }
    let undo = Undo::new();
    view! {
        // The help's two buttons name their action in `data-act`: one click handler.
        <div class="app" data-wasm="ready" on:click=move |ev| match crate::panels::clicked_act(&ev).as_deref() {
            Some("help") => help.update(|h| *h = !*h),
            Some("close-help") => help.set(false),
            _ => {}
        }>
            <header class="masthead">
                <h1>"Watermark"</h1>
                <span class="version" id="engine-version">{engine_version_label(watermark_engine::VERSION)}</span>
                <p class="lede">
                    "Apache Kafka partition replication, simulated: the ISR, the high watermark, "
                    "acks and leader epochs, one message at a time."
                </p>
                <button class="help-button" aria-label="Keyboard shortcuts" data-act="help">"?"</button>
            </header>
            <Alarms ctx=ctx />
            <UndoBar ctx=ctx undo=undo />
            <main class="layout">
                <section class="stage" aria-label="Simulation">
                    <Walkthrough ctx=ctx />
                    <TimeBar ctx=ctx />
                    <ClusterOverview ctx=ctx />
                    // Each lane's faults are in its menu; produce and consume sit right under
                    // the picture, so acting never scrolls it away.
                    <BesideTop ctx=ctx />
                    <LaneMenus ctx=ctx>
                        <ClusterView snap=ctx.snap clock=ctx.clock tick=ctx.tick lag_time_max_ms=lag_time_max_ms width=width broker_ids=ctx.broker_ids labels=labels />
                    </LaneMenus>
                    // The runs beside this one (the scenario's `compare`), on the same clock.
                    <BesideRuns ctx=ctx labels=labels />
                    <Actions ctx=ctx />
                    <Legend />
                    <Waiting snap=ctx.snap tick=ctx.tick />
                    <Simplifications />
                </section>
                <aside class="side">
                    <SessionPanel ctx=ctx />
                    <Settings ctx=ctx undo=undo />
                    <crate::finder::Finder ctx=ctx undo=undo />
                </aside>
                <Readouts ctx=ctx />
            </main>
            <div class="sr-only" aria-live="polite" aria-atomic="true">{move || narration(ctx)}</div>
            // Static: the view macro builds its children from markup (a view's top element
            // is always built as an element of its own).
            {move || help.get().then(|| view! {
                <div class="help" role="dialog" aria-modal="false" aria-label="Keyboard shortcuts">
                    <h2>"Keyboard"</h2>
                    <dl>
                        <dt><kbd>"Space"</kbd></dt><dd>"Play or pause"</dd>
                        <dt><kbd>"→"</kbd></dt><dd>"Step one event"</dd>
                        <dt><kbd>"←"</kbd></dt><dd>"Go back 100 ms"</dd>
                        <dt><kbd>"?"</kbd></dt><dd>"Show or hide this help"</dd>
                        <dt><kbd>"Tab"</kbd></dt><dd>"Move between controls; every action is a button"</dd>
                        <dt><kbd>"Enter"</kbd>" on ⋮"</dt><dd>"Open a broker's faults (or right-click its lane); ↑ ↓ choose, Esc closes"</dd>
                    </dl>
                    <button data-act="close-help">"Close"</button>
                </div>
            }.into_any())}
        </div>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_label_prefixes_engine_and_v() {
        assert_eq!(engine_version_label("1.2.3"), "engine v1.2.3");
    }

    #[test]
    fn the_default_scenario_builds() {
        assert!(Playground::new(default_scenario()).is_ok());
    }
}
