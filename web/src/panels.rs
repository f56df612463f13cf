//! Controls and read-outs: time, settings, actions, per-broker faults, Kafka-tool read-outs,
//! metrics and the event log. Each control has an accessible name; all work from the
//! keyboard (they are native buttons, inputs and selects).

// `attr=move || f()` rather than `attr=f`: with `erase_components` only a closure written in
// the view is boxed (one monomorphization per output type); a named one is its own
// (BENCHMARKS.md, "Shipped size").
#![allow(clippy::redundant_closure)]

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use watermark_engine::event::{Event, Level, TraceKind};
use watermark_engine::json::Value;
use watermark_engine::scenario::{AcksOrDefault, ProduceSpec};
use watermark_engine::types::Acks;
use watermark_engine::Action;

use crate::geometry;
use crate::model::Shape;
use crate::state::Ctx;

fn set_config(ctx: Ctx, name: &str, value: Value) {
    ctx.act(Action::SetConfig {
        name: name.to_string(),
        value,
    });
}

#[component]
pub fn TimeBar(ctx: Ctx) -> impl IntoView {
    let status = ctx.status;
    let playing = move || status.with(|s| s.playing);
    let toggle = move |_| {
        ctx.with_pg(|pg| pg.playing = !pg.playing);
    };
    let step = move || {
        ctx.with_pg(|pg| {
            pg.playing = false;
            pg.step();
        });
    };
    let on_speed = move |ev| {
        let pos: u32 = event_target_value(&ev).parse().unwrap_or(333);
        ctx.with_pg(|pg| pg.set_speed(geometry::speed_from_slider(pos)));
    };
    let on_scrub = move |ev| {
        let t: u64 = event_target_value(&ev).parse().unwrap_or(0);
        ctx.with_pg(|pg| {
            pg.playing = false;
            pg.seek(t);
        });
    };
    let to_live = move || {
        ctx.with_pg(|pg| {
            let t = pg.max_time();
            pg.seek(t);
        });
    };
    let clock = ctx.clock;
    let scrubbed = flag(Box::new(move || status.with(|s| s.scrubbed)));
    // The markers sit at their own times on an axis that stretches with the run (the
    // viewBox), so a playing run changes one attribute, not every marker.
    // The markers and the expectations are read from `status` itself, not a memo each: it
    // changes only when the controls' state does (a memo of another type is kilobytes of
    // wasm of its own).
    let axis = move || format!("0 0 {} 12", clock.with(|c| c.max_time.max(1)));
    // How many expectations the shown moment has reached: which ones follows from it (all
    // those at or before the moment), so the marks and the summary change only with it. A
    // u64, the type of another memo of the page.
    let reached = Memo::new(move |_| {
        let now = clock.with(|c| c.now);
        status.with(|s| s.expect.iter().filter(|x| x.at <= now).count() as u64)
    });
    // The run's markers as one piece of SVG markup, as the expectations' marks are: they
    // change only when a marker is added, and a keyed list of them was its own
    // monomorphization of `<For>` (BENCHMARKS.md, "Shipped size").
    let markers_svg = move || {
        status.with(|s| {
            s.markers
                .iter()
                .map(|m| {
                    format!(
                        r#"<line class="{}" x1="{t}" x2="{t}" y1="0" y2="12" vector-effect="non-scaling-stroke"><title>{} {}</title></line>"#,
                        m.kind.class(),
                        geometry::format_clock(m.time_ms),
                        crate::session::escape_attr(&m.text),
                        t = m.time_ms
                    )
                })
                .collect::<String>()
        })
    };
    // The marks as one piece of SVG markup (far less code than a view per mark); every
    // text in it is escaped.
    let expect_svg = move || {
        reached.track();
        let now = clock.with_untracked(|c| c.now);
        status.with(|s| {
            s.expect
                .iter()
                .map(|x| {
                    let class = match x.met {
                        Some(true) if x.at <= now => "met",
                        Some(false) if x.at <= now => "unmet",
                        _ => "pending",
                    };
                    format!(
                        r#"<line class="expect {class}" x1="{at}" x2="{at}" y1="0" y2="12" vector-effect="non-scaling-stroke"><title>{}</title></line>"#,
                        crate::session::escape_attr(&x.text),
                        at = x.at
                    )
                })
                .collect::<String>()
        })
    };
    let expect_summary = move || {
        reached.track();
        let now = clock.with_untracked(|c| c.now);
        status.with(|s| {
            let e = &s.expect;
            let passed = || e.iter().filter(|x| x.at <= now);
            let met = passed().filter(|x| x.met == Some(true)).count();
            let unmet: Vec<_> = passed().filter(|x| x.met == Some(false)).collect();
            let last = unmet
                .iter()
                .max_by_key(|x| x.at)
                .map(|x| format!(" · {}", x.text.replace('\n', " ")))
                .unwrap_or_default();
            format!(
                "Expectations: {met} met, {} not met, {} ahead{last}",
                unmet.len(),
                e.len() - met - unmet.len()
            )
        })
    };
    view! {
        // Step and Back to live name their action in `data-act`: one click handler, and the
        // buttons are markup.
        <div class="timebar" role="group" aria-label="Time" on:click=move |ev| match clicked_act(&ev).as_deref() {
            Some("step") => step(),
            Some("live") => to_live(),
            _ => {}
        }>
            <button class="play" on:click=toggle aria-label=move || pick(playing(), "Pause", "Play")>
                {move || pick(playing(), "❚❚ Pause", "▶ Play")}
            </button>
            <button data-act="step" aria-label="Step one event" title="Run the next event (→); Next step goes to a walkthrough's next caption">"Step one event ▸"</button>
            <label class="speed">
                <span>"Speed "</span>
                <input
                    type="range"
                    min="0"
                    max="1000"
                    aria-label="Speed"
                    prop:value=move || status.with(|s| geometry::slider_from_speed(s.speed).to_string())
                    on:input=on_speed
                />
                <output>{move || status.with(|s| geometry::format_speed(s.speed))}</output>
            </label>
            <span class="clock" aria-label="Simulated time">
                {move || clock.with(|c| format!("t = {}", geometry::format_clock(c.now)))}
            </span>
            <div class="timeline">
                <input
                    type="range"
                    min="0"
                    aria-label="Timeline"
                    prop:max=move || clock.with(|c| c.max_time.to_string())
                    prop:value=move || clock.with(|c| c.now.to_string())
                    on:input=on_scrub
                />
                <svg class="markers" aria-hidden="true" preserveAspectRatio="none" viewBox=move || axis() width="100%" height="12">
                    <g inner_html=move || markers_svg()></g>
                    <g inner_html=move || expect_svg()></g>
                </svg>
            </div>
            <p class="expect-summary" data-testid="expectations" aria-live="polite" prop:hidden=move || status.with(|s| s.expect.is_empty())>{move || expect_summary()}</p>
            // Built and removed, not a `<Show>` (less code, BENCHMARKS.md "Shipped size").
            {move || scrubbed.get().then(|| view! {
                <button data-act="live" aria-label="Back to the live run">"Back to live"</button>
                <span class="scrub-note">"Viewing the past. Acting now discards what came after."</span>
            }.into_any())}
        </div>
    }
}

#[component]
pub fn Settings(ctx: Ctx, undo: crate::undo::Undo) -> impl IntoView {
    let status = ctx.status;
    // A slider of the cluster's shape: a new cluster of the shape with its value (Undo
    // brings the old session back). Shown only where the sliders could have built the
    // cluster (`model::shape_of`).
    // A new session from `s`, saying `note`; one with actions can be brought back (the
    // Undo bar). One closure for the sliders and the protocol choice (each closure given to
    // `discarding` is a copy of it in the wasm).
    let again = move |s: watermark_engine::Scenario, note: String| {
        undo.discarding(ctx, move || ctx.restart(s, note))
    };
    let restart = move |set: fn(&mut Shape, u32), v: String| {
        let Some(mut shape) = status.with_untracked(|s| s.shape) else {
            return;
        };
        set(&mut shape, v.parse().unwrap_or(1));
        let mut s = ctx
            .pg
            .with_value(|pg| crate::model::scenario_for(shape, pg.scenario()));
        s.config = status.with_untracked(|st| st.config.clone());
        let rf = s.topic_specs().first().map_or(1, |t| t.replication_factor);
        let note = if s.version < 2 {
            format!(
                "Started a new cluster: {} broker(s), replication factor {rf}.",
                s.brokers
            )
        } else {
            let racks = crate::model::shape_of(&s).map_or(0, |sh| sh.racks);
            format!(
                "Started a new cluster: {} broker(s) in {} rack(s), {} topic(s) of {} partition(s), replication factor {rf}.",
                s.brokers,
                racks,
                s.topics.len(),
                s.topic_specs().first().map_or(1, |t| t.partitions)
            )
        };
        again(s, note);
    };
    let shaped = move |set: fn(&mut Shape, u32)| Callback::new(move |v: String| restart(set, v));
    let number = move |name: &'static str| {
        Callback::new(move |v: String| {
            let v: u64 = v.parse().unwrap_or(0);
            set_config(ctx, name, Value::from(v));
        })
    };
    let of = move |f: fn(&crate::state::Status) -> u64| Signal::derive(move || status.with(f));
    // For the topic the lanes show: its replication factor, and its own min.insync.replicas
    // where it overrides the broker's (version 2).
    let warnings =
        move || status.with(|s| geometry::config_warnings(s.replication_factor, s.min_isr()));
    let calc = move || {
        status.with(|s| geometry::replication_calculator(s.replication_factor, s.min_isr()))
    };
    let v2 = crate::panels::flag(Box::new(move || status.with(|s| !s.topic.is_empty())));
    view! {
        <section class="settings" aria-labelledby="settings-h">
            <h2 id="settings-h">"Cluster"</h2>
            // A version-2 cluster's topics have their own replica lists: the two sliders that
            // build a one-topic cluster would not change them, so they give way to its facts.
            // Hidden, not removed (a view built and removed is code of its own).
            <p class="topic-facts" prop:hidden=move || !v2.get()>{move || status.with(|s| topic_facts(s))}</p>
            <div class="cluster-sliders" prop:hidden=move || status.with(|s| s.shape.is_none())>
                {slider("Brokers ", "Brokers", (1, 1), Signal::stored(u64::from(watermark_engine::config::MAX_BROKERS)),
                    of(|s| s.brokers.into()), shaped(|sh, v| sh.brokers = v))}
                {slider("Racks (<code>broker.rack</code>) ", "Racks", (0, 1), Signal::stored(crate::model::RACKS.len() as u64),
                    of(|s| s.shape.map_or(0, |sh| sh.racks).into()), shaped(|sh, v| sh.racks = v))}
                {slider("Topics ", "Topics", (1, 1), Signal::stored(u64::from(crate::model::MAX_SHAPE_TOPICS)),
                    of(|s| s.shape.map_or(1, |sh| sh.topics).into()), shaped(|sh, v| sh.topics = v))}
                {slider("Partitions per topic ", "Partitions per topic", (1, 1), Signal::stored(u64::from(crate::model::MAX_SHAPE_PARTITIONS)),
                    of(|s| s.shape.map_or(1, |sh| sh.partitions).into()), shaped(|sh, v| sh.partitions = v))}
                {slider("Replication factor ", "Replication factor", (1, 1), of(|s| s.brokers.into()),
                    of(|s| s.replication_factor.into()), shaped(|sh, v| sh.replication_factor = v))}
                <p class="hint">"Changing any of these starts a new cluster (Undo brings the session back). More than one partition, or racks, shows the cluster overview."</p>
            </div>
            // Above the replication factor no acks=all write can ever succeed: the slider
            // stops there (or at the value a scenario set, so it never shows a false one).
            {slider("<code>min.insync.replicas</code> ", "min.insync.replicas", (1, 1),
                of(|s| s.replication_factor.max(s.config.min_insync_replicas).into()),
                of(|s| s.config.min_insync_replicas.into()), number("min.insync.replicas"))}
            {slider("<code>replica.lag.time.max.ms</code> ", "replica.lag.time.max.ms", (500, 500), Signal::stored(60000),
                of(|s| s.config.replica_lag_time_max_ms), number("replica.lag.time.max.ms"))}
            // Markup, not a view per line (a list of views is code of its own).
            <ul class="warnings" aria-label="Configuration warnings" inner_html=move || lines_markup("<li>", "</li>", &warnings())></ul>
            <dl class="calculator">
                <dt>"Brokers that can fail with acks=all writes continuing"</dt>
                <dd data-testid="can-fail">{move || calc().0.to_string()}</dd>
                <dt>"Brokers that can be lost for ever without losing a committed record"</dt>
                <dd data-testid="can-lose">{move || calc().1.to_string()}</dd>
            </dl>
            // The scenario's `compare`: the same timeline under another configuration or
            // protocol, drawn under this run on the same clock (web/src/beside.rs). This run
            // goes on unchanged; the runs beside are built up to the shown moment.
            <label class="beside-choice">"Side by side with "
                <select aria-label="Side by side with"
                    inner_html=move || {
                        // The shown topic (version 2): its own configs are what a choice changes.
                        let topic = status.with(|s| s.topic.clone());
                        ctx.beside.track();
                        ctx.pg.with_value(|pg| crate::beside::options_markup(pg.scenario(), &topic))
                    }
                    on:change=move |ev| match crate::beside::variants_of(&event_target_value(&ev)) {
                        Ok(v) => ctx.set_beside(v),
                        Err(e) => ctx.notice.set(Some(format!("Not done: {e}"))),
                    }></select>
            </label>
            <details class="advanced">
                <summary>"Advanced"</summary>
                // The replication rules of a Kafka era (the scenario's `protocol`,
                // docs/history.md): another runs the session again from 0 s under that era's
                // rules, its actions included (Undo brings the old run back).
                <label class="protocol-choice">"Replication protocol "
                    <select aria-label="Replication protocol"
                        inner_html=move || status.with(|s| protocol_options(s.config.protocol))
                        on:change=move |ev| {
                            let Ok(p) = watermark_engine::Protocol::parse("protocol", &event_target_value(&ev)) else {
                                return;
                            };
                            let mut s = ctx.pg.with_value(|pg| pg.to_scenario());
                            if s.protocol != p {
                                s.protocol = p;
                                let note = format!("Started again from 0 s under protocol {}: {}.", p.name(), p.era());
                                again(s, note);
                            }
                        }></select>
                </label>
                {check(ctx, "<code>unclean.leader.election.enable</code>", "unclean.leader.election.enable",
                    |c| c.unclean_leader_election_enable, |on| ("unclean.leader.election.enable", on.into()))}
                // Before KIP-966 the feature did not exist: an older protocol runs without it,
                // whatever the box says, so the box is off and cannot be changed there.
                {check(ctx, "Eligible leader replicas (KIP-966)", ELR_BOX,
                    |c| c.elr_enabled(), |on| ("eligible.leader.replicas.version", u64::from(on).into()))}
                {check(ctx, "<code>enable.idempotence</code>", "enable.idempotence",
                    |c| c.enable_idempotence != Some(false), |on| ("enable.idempotence", on.into()))}
                // The producer's partitioner (the produce row's "to" chooses by partition, key
                // or sticky): a key that does not choose, and the adaptive sticky choice.
                {check(ctx, "<code>partitioner.ignore.keys</code> (a keyed record goes to the sticky partition)", "partitioner.ignore.keys",
                    |c| c.partitioner_ignore_keys == Some(true), |on| ("partitioner.ignore.keys", on.into()))}
                {check(ctx, "<code>partitioner.adaptive.partitioning.enable</code>", "partitioner.adaptive.partitioning.enable",
                    |c| c.partitioner_adaptive_partitioning_enable != Some(false), |on| ("partitioner.adaptive.partitioning.enable", on.into()))}
                // KIP-392: leaders send a consumer with a client.rack to a follower there.
                {check(ctx, "<code>replica.selector.class</code> RackAwareReplicaSelector (follower fetching, KIP-392)", "replica.selector.class",
                    |c| c.rack_aware_replica_selector, |on| ("replica.selector.class", if on {
                        Value::String(watermark_engine::config::RACK_AWARE_REPLICA_SELECTOR.into())
                    } else {
                        Value::Null
                    }))}
                // Version 2: the scenario's record size, for every later produce that gives
                // none (set_config record_size_bytes, so a share link replays it). The
                // engine checks the value and its error names the range.
                <label class="v2" prop:hidden=move || !v2.get()
                    title="The value size in bytes of each record whose produce gives no size (as kafka-producer-perf-test.sh --record-size); from now on">
                    <code>"record_size_bytes"</code>" "
                    <input type="number" min="0" max="1000000" aria-label="record_size_bytes"
                        prop:value=move || status.with(|s| s.record_size.to_string())
                        on:change=move |ev| {
                            let text = event_target_value(&ev);
                            let value = match text.trim().parse::<u64>() {
                                Ok(n) => Value::from(n),
                                Err(_) => Value::String(text),
                            };
                            set_config(ctx, watermark_engine::scenario::RECORD_SIZE_BYTES, value);
                            // The field says what holds now (a refused value is not kept).
                            if let Some(input) = event_input(&ev) {
                                input.set_value(&status.with_untracked(|s| s.record_size.to_string()));
                            }
                        } />
                    " bytes"
                </label>
                {number_setting(ctx, "replica.fetch.wait.max.ms", (0, 50), 5000, |c| c.replica_fetch_wait_max_ms)}
                {number_setting(ctx, "broker.session.timeout.ms", (1000, 500), 60000, |c| c.broker_session_timeout_ms)}
                {number_setting(ctx, "request.timeout.ms", (1000, 1000), 120000, |c| c.request_timeout_ms)}
                {number_setting(ctx, "sim.network.latency.ms", (0, 5), 1000, |c| c.network_latency_ms)}
                {number_setting(ctx, "sim.controller.latency.ms", (0, 5), 1000, |c| c.controller_latency_ms)}
            </details>
        </section>
    }
}

/// The ELR's box's accessible name.
const ELR_BOX: &str = "Eligible leader replicas (KIP-966)";

/// The protocol choice's options, `now` selected: each mode's name and era.
fn protocol_options(now: watermark_engine::Protocol) -> String {
    let mut out = String::new();
    for &(p, n) in watermark_engine::protocol::PROTOCOLS {
        let sel = if p == now { " selected" } else { "" };
        out.push_str(&format!(
            r#"<option value="{n}"{sel}>{n}: {}</option>"#,
            p.era()
        ));
    }
    out
}

/// What the settings say of a version-2 cluster and the topic the lanes show.
fn topic_facts(s: &crate::state::Status) -> String {
    let min = match s.topic_min_isr {
        Some(m) => format!("its own min.insync.replicas={m} (a topic config: the slider below sets the brokers', which it overrides)"),
        None => format!("the brokers' min.insync.replicas={}", s.config.min_insync_replicas),
    };
    let own = if s.shape.is_none() {
        " Its topics are this scenario's own, so the sliders that build a cluster are hidden; Reset brings them back."
    } else {
        ""
    };
    format!(
        "{} brokers. Topic {} (shown below): replication factor {}, {min}. The calculator speaks of this topic; choose another partition in the cluster overview to see its topic.{own}",
        s.brokers, s.topic, s.replication_factor
    )
}

/// A slider for a millisecond setting of the config: `range` is (min, step). A function,
/// not a component (a component is code of its own).
fn number_setting(
    ctx: Ctx,
    name: &'static str,
    (min, step): (u64, u64),
    max: u64,
    get: fn(&watermark_engine::Config) -> u64,
) -> AnyView {
    let status = ctx.status;
    slider(
        &format!("<code>{name}</code> "),
        name,
        (min, step),
        Signal::stored(max),
        Signal::derive(move || status.with(|s| get(&s.config))),
        Callback::new(move |v: String| {
            let v: u64 = v.parse().unwrap_or(min);
            set_config(ctx, name, Value::from(v));
        }),
    )
}

/// A labelled range input and its value: every slider of the settings has this one shape,
/// built by one function (one monomorphization, not a view type per slider). `label` is
/// markup (static text of this file); `range` is (min, step), the step written even where it
/// is 1, the default (one attribute type, not an optional one); the maximum may follow the
/// state (it is set as the input's property, which its `max` attribute reflects).
fn slider(
    label: &str,
    aria: &'static str,
    range: (u64, u64),
    max: Signal<u64>,
    value: Signal<u64>,
    on_change: Callback<String>,
) -> AnyView {
    let (min, step) = range;
    view! {
        <label>
            <span inner_html=label.to_string()></span>
            <input type="range" min=min.to_string() step=step.to_string() aria-label=aria
                prop:max=move || max.get().to_string()
                prop:value=move || value.get().to_string()
                on:change=move |ev| on_change.run(event_target_value(&ev)) />
            <output>{move || value.get().to_string()}</output>
        </label>
    }
    .into_any()
}

/// A labelled checkbox of the settings: shown as `get` reads the config; a change sets the
/// config that `set` names. One function for all of them, as [`slider`] is for the sliders.
fn check(
    ctx: Ctx,
    label: &str,
    aria: &'static str,
    get: fn(&watermark_engine::Config) -> bool,
    set: fn(bool) -> (&'static str, Value),
) -> AnyView {
    let status = ctx.status;
    // The ELR's box cannot be changed under a protocol from before KIP-966 (the feature
    // did not exist; the run goes without it whatever the config says).
    let fixed = aria == ELR_BOX;
    view! {
        <label class="check">
            <input type="checkbox" aria-label=aria
                prop:checked=move || status.with(|s| get(&s.config))
                prop:disabled=move || fixed && status.with(|s| !s.config.protocol.has_elr())
                on:change=move |ev| {
                    let (name, value) = set(event_target_checked(&ev));
                    set_config(ctx, name, value);
                } />
            <span inner_html=label.to_string()></span>
        </label>
    }
    .into_any()
}

/// The value of the form control `selector` names inside `root` (an input or a select).
pub(crate) fn control_value(root: &web_sys::Element, selector: &str) -> String {
    use leptos::wasm_bindgen::JsCast;
    root.query_selector(selector)
        .ok()
        .flatten()
        // `value` is read by name, so a select reads as an input does.
        .map(|e| e.unchecked_into::<web_sys::HtmlInputElement>().value())
        .unwrap_or_default()
}

/// The page's element that `selector` names, looked up when it is needed instead of held by
/// a `NodeRef`: a `NodeRef` of each element type (`Div`, `Ul`, `Ol`) was a family of
/// functions of its own. Effects first run after the view is mounted, so the element is
/// there when they ask.
pub(crate) fn page_element(selector: &str) -> Option<web_sys::Element> {
    web_sys::window()?
        .document()?
        .query_selector(selector)
        .ok()
        .flatten()
}

/// The input element an event (a change, an input) happened on, if it was one.
pub(crate) fn event_input(ev: &web_sys::Event) -> Option<web_sys::HtmlInputElement> {
    use leptos::wasm_bindgen::JsCast;
    ev.target().and_then(|t| t.dyn_into().ok())
}

/// The button under a click that names its action in `data-act`, and that action.
pub(crate) fn clicked_act(ev: &leptos::ev::MouseEvent) -> Option<String> {
    use leptos::wasm_bindgen::JsCast;
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|t| t.closest("[data-act]").ok().flatten())
        .and_then(|b| b.get_attribute("data-act"))
}

/// Where Produce and Consume go: in a version-2 cluster, the partition the lanes show (the
/// one the reader watches); a version-1 scenario has one, and its actions name none (so
/// its links stay as they were).
pub(crate) fn target(ctx: Ctx) -> (Option<String>, Option<u32>) {
    if ctx.status.with_untracked(|s| s.topic.is_empty()) {
        return (None, None);
    }
    ctx.snap
        .with_untracked(|s| (Some(s.topic.clone()), Some(s.partition)))
}

#[component]
pub fn Actions(ctx: Ctx) -> impl IntoView {
    let next = StoredValue::new(1u32);
    // `root`: the section, where the click was handled.
    let produce = move |root: &web_sys::Element| {
        let acks = match control_value(root, "[aria-label=acks]").as_str() {
            "0" => Acks::Zero,
            "1" => Acks::One,
            _ => Acks::All,
        };
        let n = control_value(root, "[aria-label=Records]")
            .parse::<u32>()
            .unwrap_or(1)
            .clamp(1, 1000);
        let prefix = control_value(root, "[aria-label=Value]");
        let prefix: String = if prefix.trim().is_empty() {
            "v".into()
        } else {
            prefix.trim().chars().take(40).collect()
        };
        let (topic, mut partition) = target(ctx);
        // Version 2: the records' key and value size, and where they go
        // (KafkaProducer.partition): the partition named (the shown one; a key goes with
        // the records but does not choose), the key's (BuiltInPartitioner.partitionForKey:
        // murmur2 of its bytes modulo the partition count), or, with neither, the sticky
        // partitioner's (KIP-794). The lanes follow the records to where they went.
        let key = control_value(root, "[aria-label=Key]").trim().to_string();
        let size = control_value(root, "[aria-label='Record size']");
        let size = match size.trim() {
            "" => None,
            t => match t.parse::<u32>() {
                Ok(v) => Some(v),
                Err(_) => {
                    ctx.notice.set(Some(format!(
                        "Not done: size must be a value size in bytes in 0..={}, got \"{t}\"",
                        watermark_engine::scenario::MAX_RECORD_SIZE_BYTES
                    )));
                    return;
                }
            },
        };
        let v2 = topic.is_some();
        let mode = if v2 {
            control_value(root, "[aria-label=Partitioner]")
        } else {
            String::new()
        };
        let refuse = |why: &str| ctx.notice.set(Some(format!("Not done: {why}")));
        // partitioner.ignore.keys: a key goes with the records but never chooses.
        let ignore_keys = ctx
            .status
            .with_untracked(|s| s.config.partitioner_ignore_keys == Some(true));
        match (mode.as_str(), key.is_empty()) {
            ("key", true) => {
                return refuse("by key needs a Key: murmur2 of its bytes chooses the partition")
            }
            ("sticky", false) if !ignore_keys => {
                return refuse("a record with a key goes to its key's partition (KafkaProducer.partition): clear the Key for the sticky partitioner, or choose by key")
            }
            ("key" | "sticky", _) => partition = None,
            _ => {}
        }
        let start = next.get_value();
        next.set_value(start.saturating_add(n));
        let first_job = ctx.pg.with_value(|pg| pg.current().next_produce_job());
        ctx.act(Action::Produce(ProduceSpec {
            acks: AcksOrDefault(acks),
            prefix: Some(format!("{prefix}-")),
            start: Some(start),
            count: Some(n),
            topic: topic.clone(),
            partition,
            key: (v2 && !key.is_empty()).then(|| key.clone()),
            size: size.filter(|_| v2),
            ..ProduceSpec::default()
        }));
        let failed = ctx
            .notice
            .with_untracked(|n| n.as_deref().is_some_and(|n| n.starts_with("Not done")));
        let Some(t) = topic.filter(|_| !failed) else {
            return;
        };
        // Where the records went, as the producer appended them.
        let went = ctx
            .pg
            .with_value(|pg| pg.current().produce_partitions_from(first_job));
        let Some((shown, _)) = went.first() else {
            return;
        };
        let mut to = String::new();
        for (i, (tp, records)) in went.iter().enumerate() {
            if i > 0 {
                to.push_str(if i + 1 == went.len() { " and " } else { ", " });
            }
            to.push_str(&tp.to_string());
            if went.len() > 1 {
                to.push_str(&format!(" ({records})"));
            }
        }
        let note = match mode.as_str() {
            "key" | "sticky" if ignore_keys && !key.is_empty() => format!("partitioner.ignore.keys is true: key \"{key}\" goes with the records but does not choose; the sticky partitioner (KIP-794) sent the {n} record(s) to {to}; the lanes show {shown}."),
            "key" => {
                let n = ctx.pg.with_value(|pg| {
                    pg.scenario()
                        .topics
                        .iter()
                        .find(|s| s.name == t)
                        .map_or(1, |s| s.partition_count())
                });
                format!("Key \"{key}\" goes to partition {to} (murmur2 of its bytes modulo {n} partitions), shown in the lanes.")
            }
            "sticky" => format!("The sticky partitioner (KIP-794) sent the {n} record(s) to {to}; the lanes show {shown}."),
            _ if !key.is_empty() => format!("Key \"{key}\" sent with the records to {to}, the partition named: a named partition wins over the key (KafkaProducer.partition); choose by key to let murmur2 choose."),
            _ => return,
        };
        ctx.with_pg(|pg| pg.set_view_partition(&shown.topic, shown.partition));
        ctx.notice.set(Some(note));
    };
    // One click handler for the section's buttons (each names its action in `data-act`),
    // and the fields read when Produce is pressed: the controls are then static markup,
    // which costs far less wasm than a view with a handler each (docs/ui.md, "Controls as
    // markup").
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let consume = |from_beginning| {
            let (topic, partition) = target(ctx);
            Action::Consume {
                max_records: None,
                from_beginning,
                topic,
                partition,
            }
        };
        use leptos::wasm_bindgen::JsCast;
        let root = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        match (clicked_act(&ev).as_deref(), root) {
            (Some("produce"), Some(root)) => produce(&root),
            (Some("consume"), _) => ctx.act(consume(false)),
            (Some("consume-all"), _) => ctx.act(consume(true)),
            (Some("elect-preferred"), _) => ctx.act(Action::ElectPreferred),
            (Some("elect-unclean"), _) => ctx.act(Action::ElectUnclean),
            _ => {}
        }
    };
    let position = move || {
        ctx.snap.with(|s| match s.consumer_position {
            Some(p) => format!("consumer position {p}"),
            None => "the consumer has not read yet".to_string(),
        })
    };
    let v2 = flag(Box::new(move || ctx.status.with(|s| !s.topic.is_empty())));
    view! {
        <section class="actions" aria-labelledby="actions-h" on:click=on_click>
            <h2 id="actions-h">"Produce and consume"{move || if ctx.status.with(|st| st.topic.is_empty()) {
                String::new()
            } else {
                ctx.snap.with(|s| format!(" to {}-{}", s.topic, s.partition))
            }}</h2>
            <div class="produce">
                <label>"Value " <input type="text" aria-label="Value" maxlength="40" value="v" /></label>
                <label>"Records " <input type="number" min="1" max="1000" aria-label="Records" value="1" /></label>
                <label>"acks "
                    <select aria-label="acks">
                        <option value="all" selected="">"all"</option>
                        <option value="1">"1"</option>
                        <option value="0">"0"</option>
                    </select>
                </label>
                // Version 2's key and value size (markup, read when Produce is pressed).
                <span class="v2" prop:hidden=move || !v2.get() inner_html=PRODUCE_V2></span>
                <button data-act="produce" aria-label="Produce">"Produce"</button>
            </div>
            <div class="consume">
                <button aria-label="Consume" data-act="consume">"Consume"</button>
                <button aria-label="Consume from the beginning" data-act="consume-all">"From the beginning"</button>
                // KIP-392: the consumer's rack (set_config client.rack, a new consumer in it),
                // where the cluster has racks; its options are the racks.
                <label class="v2" prop:hidden=move || ctx.status.with(|s| s.rack_options.is_empty())
                    title="The consumer's rack: with the brokers' replica.selector.class RackAwareReplicaSelector (Advanced), a leader sends it to a follower in this rack">
                    "client.rack "
                    <select aria-label="client.rack" on:change=move |ev| {
                        set_config(ctx, watermark_engine::scenario::CLIENT_RACK, Value::String(event_target_value(&ev)))
                    } inner_html=move || ctx.status.with(|s| s.rack_options.clone())></select>
                </label>
                <span class="position">{move || position()}</span>
            </div>
            <div class="elections">
                <button aria-label="Elect the preferred leader" data-act="elect-preferred">"Elect the preferred leader"</button>
                <button aria-label="Force an unclean election" class="danger" data-act="elect-unclean">"Force an unclean election"</button>
            </div>
        </section>
    }
}

/// The produce row's version-2 fields: where the records go (KafkaProducer.partition), their
/// key and their value size.
const PRODUCE_V2: &str = "<label title=\"Where the records go, as KafkaProducer.partition decides: the partition named (the one the lanes show), the key's (murmur2), or with neither the sticky partitioner's (KIP-794); with partitioner.ignore.keys (Advanced) a key never chooses\">to \
    <select aria-label=\"Partitioner\"><option value=\"shown\" selected>the shown partition</option>\
    <option value=\"key\">by key (murmur2)</option><option value=\"sticky\">sticky (no key, no partition)</option></select></label> \
    <label title=\"Each record's key (by key: murmur2 of its bytes modulo the partition count chooses the partition)\">Key \
    <input type=\"text\" aria-label=\"Key\" maxlength=\"64\" size=\"8\" placeholder=\"none\"></label> \
    <label title=\"Each record's value size in bytes (empty: the scenario's record_size_bytes, 1024 unless it says)\">size \
    <input type=\"number\" min=\"0\" max=\"1000000\" aria-label=\"Record size\" placeholder=\"record_size_bytes\"> bytes</label>";

pub(crate) fn kind_name(k: TraceKind) -> &'static str {
    match k {
        TraceKind::Action => "actions",
        TraceKind::Readout => "read-outs",
        TraceKind::Produce => "produce",
        TraceKind::Consume => "consume",
        TraceKind::Isr => "ISR",
        TraceKind::Election => "elections",
        TraceKind::Truncation => "truncations",
        TraceKind::Controller => "controller",
        TraceKind::Broker => "brokers",
        TraceKind::Loss => "losses",
        TraceKind::Violation => "invariants",
        TraceKind::Note => "notes",
    }
}

/// A kind's bit in a set of kinds.
pub(crate) fn kind_bit(k: TraceKind) -> u64 {
    1 << (k as u64)
}

const FILTERS: &[TraceKind] = &[
    TraceKind::Isr,
    TraceKind::Election,
    TraceKind::Truncation,
    TraceKind::Produce,
    TraceKind::Consume,
    TraceKind::Controller,
    TraceKind::Broker,
    TraceKind::Action,
    TraceKind::Loss,
];

/// The event log's filters as markup: a checkbox per kind of [`FILTERS`], checked unless
/// the kind is in `hidden` (a set of [`kind_bit`]s).
fn filters_markup(hidden: u64) -> String {
    let boxes: String = FILTERS
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let checked = if hidden & kind_bit(*k) != 0 { "" } else { " checked" };
            format!(
                r#"<label class="check"><input type="checkbox" aria-label="Show {name}" data-k="{i}"{checked}>{name}</label>"#,
                name = kind_name(*k)
            )
        })
        .collect();
    format!("<legend>Show</legend>{boxes}")
}

/// The metrics shown, in order ([`metric_values`] gives their values). "Produce ok / failed"
/// counts batches (a produce action's batch, or each of its records one by one): a batch
/// fails once, when it is given up (an error not retried, delivery.timeout.ms, a cancel),
/// however often it was retried before. The producer's own metrics count records.
pub(crate) const METRICS: [&str; 11] = [
    "Under-replicated",
    "Under min ISR",
    "Offline (no leader)",
    "ISR shrinks",
    "ISR expands",
    "Elections",
    "Truncations",
    "acks=all latency (avg / max)",
    "Produce ok / failed",
    "record-retry-total",
    "record-error-total",
];

/// Kafka's metrics as a table: a row per metric (its short name, the MBean in its title),
/// the cluster's value, then each broker's (`—` for a broker whose process is not running:
/// it answers no JMX query). The controller's and the producer's metrics have the cluster's
/// column only.
pub fn kafka_metrics_markup(k: &watermark_engine::snapshot::KafkaMetrics) -> String {
    use watermark_engine::snapshot::{BROKER_METRICS, KAFKA_METRICS};
    let mut m = String::from(
        "<table><thead><tr><th scope=\"col\">metric</th><th scope=\"col\">cluster</th>",
    );
    for b in &k.brokers {
        m.push_str(&format!("<th scope=\"col\">broker {}</th>", b.broker));
    }
    m.push_str("</tr></thead><tbody>");
    let cluster = k.cluster.values();
    let controller = k.controller_values();
    for (i, (short, mbean, _)) in KAFKA_METRICS.iter().enumerate() {
        m.push_str(&format!(
            "<tr><th scope=\"row\" title=\"{mbean}\">{short}</th>"
        ));
        if i < BROKER_METRICS {
            m.push_str(&format!("<td>{}</td>", cluster[i]));
            for b in &k.brokers {
                if b.running {
                    m.push_str(&format!("<td>{}</td>", b.values()[i]));
                } else {
                    m.push_str("<td title=\"not running\">—</td>");
                }
            }
        } else {
            m.push_str(&format!(
                "<td>{}</td><td colspan=\"{}\"></td>",
                controller[i - BROKER_METRICS],
                k.brokers.len()
            ));
        }
        m.push_str("</tr>");
    }
    m.push_str("</tbody></table>");
    m
}

pub(crate) fn metric_values(m: &watermark_engine::snapshot::MetricsSnapshot) -> [String; 11] {
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    [
        yes(m.under_replicated),
        yes(m.under_min_isr),
        yes(m.offline),
        m.counters.isr_shrinks.to_string(),
        m.counters.isr_expands.to_string(),
        m.counters.elections.to_string(),
        m.counters.truncations.to_string(),
        match (m.acks_all_latency_avg_ms, m.acks_all_latency_max_ms) {
            (Some(a), Some(x)) => format!("{a} ms / {x} ms"),
            _ => "—".into(),
        },
        format!("{} / {}", m.counters.produce_ok, m.counters.produce_errors),
        m.counters.record_retries.to_string(),
        m.counters.record_errors.to_string(),
    ]
}

/// A line of the event log or the produce results: (sequence number, text, level, kind,
/// time). A run of retries is one line, the newest, saying how many it stands for.
pub(crate) type Row = (u64, String, Level, TraceKind, u64);

/// The producer's retry warnings come every retry.backoff.ms or so while an error lasts
/// ("Got error produce response ... retrying"): each run of them, with no other produce
/// line between, is shown as one row (the newest, at its place).
pub(crate) fn rows<'a>(lines: impl Iterator<Item = &'a watermark_engine::TraceEvent>) -> Vec<Row> {
    let mut out: Vec<Row> = vec![];
    // The open run: its row's index in `out` and how many retries it holds.
    let mut run: Option<(usize, u32)> = None;
    for e in lines {
        let retry = matches!(e.event(), Event::ProduceRetry { .. });
        let mut line = e.line();
        if retry {
            if let Some((i, n)) = run {
                out.remove(i);
                line = format!("{line} (×{})", n + 1);
                run = Some((out.len(), n + 1));
            } else {
                run = Some((out.len(), 1));
            }
        } else if e.kind() == TraceKind::Produce {
            run = None;
        }
        out.push((e.seq, line, e.level(), e.kind(), e.time_ms));
    }
    out
}

/// For the row of the newest retry (a produce warning), at `at`: what the producer does now
/// (retries so far, the time left before delivery.timeout.ms), or `None` once the batch is
/// done. Its row has a button that gives up on the send ([`RowList`]).
fn retry_left(ctx: Ctx, at: u64) -> Option<String> {
    let now = ctx.tick.get();
    ctx.snap.with(|s| {
        s.sends
            .iter()
            .find(|b| b.last_error.is_some_and(|e| e.1 == at))
            .map(|b| {
                format!(
                    " · retry {}: the producer gives up at delivery.timeout.ms, within {} s ",
                    b.retries,
                    crate::cluster::seconds_left(b.delivery_deadline_ms, now)
                )
            })
    })
}

/// The newest 200 of `all` whose kind `hidden` (a set of [`kind_bit`]s) does not hide,
/// newest first.
pub(crate) fn newest_rows(all: &[Row], hidden: u64) -> Vec<Row> {
    all.iter()
        .rev()
        .filter(|e| hidden & kind_bit(e.3) == 0)
        .take(200)
        .cloned()
        .collect()
}

/// The produce and consume results: the newest 8 produce or consume lines of `all`, newest
/// first.
pub(crate) fn results_of(all: &[Row]) -> Vec<Row> {
    all.iter()
        .rev()
        .filter(|e| e.3 == TraceKind::Produce || e.3 == TraceKind::Consume)
        .take(8)
        .cloned()
        .collect()
}

/// A result's class: its level (`info`, `warn`, `error`).
pub(crate) fn level_class(r: &Row) -> String {
    format!("{:?}", r.2).to_ascii_lowercase()
}

/// An event log line's class: its level and kind (`warn produce`, `error losses`).
pub(crate) fn log_class(r: &Row) -> String {
    format!("{} {}", level_class(r), kind_name(r.3).replace(' ', "-"))
}

/// Whether the scenario's cluster has more than one partition: the read-outs then name the
/// partition in each line.
pub(crate) fn many_partitions(s: &watermark_engine::Scenario) -> bool {
    s.version >= 2 && s.topics.iter().map(|t| t.partition_count()).sum::<u32>() > 1
}

/// The shown partition's leader-epoch-checkpoint files, one line per broker with a replica;
/// each line names it where the cluster has more than one (`many`), as the engine's
/// `epochs` read-out does (`broker 2: orders-3: 0 1 0 0`).
pub(crate) fn epochs_text(sn: &watermark_engine::snapshot::Snapshot, many: bool) -> String {
    let label = if many {
        format!("{}-{}: ", sn.topic, sn.partition)
    } else {
        String::new()
    };
    sn.brokers
        .iter()
        .filter(|b| b.hosts_replica)
        .map(|b| format!("broker {}: {label}{}", b.id, b.leader_epoch_checkpoint))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_retry(r: &Row) -> bool {
    r.3 == TraceKind::Produce && r.2 == Level::Warn
}

/// A retry row's time and the span (with its text) that says what the producer does now.
type RetrySpan = (u64, web_sys::Element, web_sys::Text);

/// A list of rows (the produce results, the event log), drawn by hand instead of a keyed
/// `<For>` of views, which was far more code (BENCHMARKS.md, "Shipped size"). A row keeps
/// its element while its key (sequence number and text) stays: new lines are added and old
/// ones removed around it, which keeps a reader's place in the log (scroll anchoring). A
/// retry row's span (what the producer does now, and Cancel) is updated with the clock.
#[derive(Default)]
pub(crate) struct RowList {
    /// The key of each drawn row, in order, and a retry row's time, span and text.
    drawn: Vec<((u64, String), Option<RetrySpan>)>,
    /// Rows without a retry span: a run beside's log (its retries are not the session's,
    /// which Cancel and the countdown speak of).
    plain: bool,
}

impl RowList {
    /// A list whose rows have no retry span (a run beside's log).
    pub(crate) fn plain() -> Self {
        RowList {
            drawn: vec![],
            plain: true,
        }
    }

    pub(crate) fn sync(
        &mut self,
        list: &web_sys::Element,
        rows: &[Row],
        class: fn(&Row) -> String,
    ) {
        let key = |r: &Row| (r.0, r.1.clone());
        let keys: Vec<(u64, String)> = rows.iter().map(key).collect();
        // The rows kept must keep their order; otherwise (never seen) everything is redrawn.
        let kept: Vec<&(u64, String)> = self
            .drawn
            .iter()
            .map(|d| &d.0)
            .filter(|k| keys.contains(k))
            .collect();
        let same_order = keys
            .iter()
            .filter(|k| self.drawn.iter().any(|d| &d.0 == *k))
            .eq(kept.iter().copied());
        let mut old: Vec<Option<web_sys::Element>> = vec![];
        let mut child = list.first_element_child();
        while let Some(el) = child {
            child = el.next_element_sibling();
            old.push(Some(el));
        }
        if !same_order || old.len() != self.drawn.len() {
            list.set_inner_html("");
            self.drawn.clear();
            old.clear();
        }
        // Remove the rows that went.
        let mut drawn = vec![];
        let mut els = vec![];
        for (d, el) in std::mem::take(&mut self.drawn).into_iter().zip(old) {
            match el {
                Some(el) if keys.contains(&d.0) => {
                    drawn.push(d);
                    els.push(el);
                }
                Some(el) => el.remove(),
                None => {}
            }
        }
        let Some(doc) = list.owner_document() else {
            return;
        };
        // Walk the new rows: a kept one is the next drawn element; a new one goes before it.
        let mut kept = drawn.into_iter().zip(els).peekable();
        for (r, k) in rows.iter().zip(keys) {
            if kept.peek().is_some_and(|(d, _)| d.0 == k) {
                if let Some((d, _)) = kept.next() {
                    self.drawn.push(d);
                }
                continue;
            }
            let Ok(li) = doc.create_element("li") else {
                return;
            };
            let _ = li.set_attribute("class", &class(r));
            li.set_text_content(Some(&r.1));
            let retry = (is_retry(r) && !self.plain).then(|| {
                let span = doc.create_element("span").ok()?;
                let _ = span.set_attribute("class", "retrying");
                let _ = span.set_attribute("hidden", "");
                let text = doc.create_text_node("");
                span.append_child(&text).ok()?;
                span.insert_adjacent_html(
                    "beforeend",
                    r#"<button class="cancel" aria-label="Cancel the send">Cancel</button>"#,
                )
                .ok()?;
                li.append_child(&span).ok()?;
                Some((r.4, span, text))
            });
            let _ = list.insert_before(&li, kept.peek().map(|(_, e)| e.as_ref()));
            self.drawn.push((k, retry.flatten()));
        }
    }

    /// Sets each retry row's span to what the producer does now.
    fn update_retries(&self, ctx: Ctx) {
        for (_, retry) in &self.drawn {
            if let Some((at, span, text)) = retry {
                let left = retry_left(ctx, *at);
                let _ = if left.is_some() {
                    span.remove_attribute("hidden")
                } else {
                    span.set_attribute("hidden", "")
                };
                let left = left.unwrap_or_default();
                if text.data() != left {
                    text.set_data(&left);
                }
            }
        }
    }
}

/// Draws `rows` in the list `selector` names (see [`RowList`]), each `<li>` of class
/// `class`; a list that `follow`s its newest line (the event log, like `tail -f`) is
/// scrolled to it in the next frame unless the reader scrolled up. Not generic: one copy of
/// its effects for both lists.
fn row_list(
    ctx: Ctx,
    selector: &'static str,
    rows: Signal<Vec<Row>>,
    class: fn(&Row) -> String,
    follow: bool,
) {
    let list = StoredValue::new_local(RowList::default());
    Effect::new(move |_| {
        let Some(el) = page_element(selector) else {
            return;
        };
        rows.with(|rows| list.update_value(|l| l.sync(&el, rows, class)));
        // The new rows' spans at once (the effect below wakes with the clock).
        untrack(|| list.with_value(|l| l.update_retries(ctx)));
        if follow && FOLLOWING.get() {
            FOLLOW.with(|f| *f.borrow_mut() = Some(el));
            // The next frame scrolls it (the loop sleeps while paused).
            crate::frames::wake(ctx);
        }
    });
    Effect::new(move |_| {
        // Wakes when a row is drawn, and with the clock and the snapshot.
        rows.track();
        list.with_value(|l| l.update_retries(ctx));
    });
}

/// A click on a row's Cancel gives up on the send.
fn on_cancel(ctx: Ctx, ev: leptos::ev::MouseEvent) {
    use leptos::wasm_bindgen::JsCast;
    let cancel = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|t| t.closest(".cancel").ok().flatten().is_some());
    if cancel {
        ctx.act(Action::CancelProduce);
    }
}

thread_local! {
    /// The event log, when it grew while following its newest line.
    static FOLLOW: std::cell::RefCell<Option<web_sys::Element>> = const { std::cell::RefCell::new(None) };
    /// Whether the event log follows its newest line: false once the reader scrolled up.
    static FOLLOWING: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Whether the browser skips the read-outs' rendering: they are off screen, and
    /// `content-visibility: auto` (style/main.css) lays out and paints nothing in them.
    static READOUTS_SKIPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Scrolls the event log to its newest line if it grew while following. The frame loop
/// calls this first thing in a frame, while the layout is still clean from the frame
/// before, so reading the log's height costs nothing. Read after a frame's DOM changes (as
/// an animation-frame callback of its own did), it forced a layout of all of them, four
/// times a second while playing (3% of the main thread at 10× under load B).
///
/// Whether it still follows is asked here, not when the log grew: a reader who scrolled up
/// between the two (the scroll event runs before the frame's callbacks) stays where they
/// are, instead of being pulled back to the bottom.
///
/// While the read-outs are off screen their layout is skipped, and reading the log's height
/// would force it: the scroll waits (the log stays marked as grown) until they are shown.
pub fn follow_log() {
    if READOUTS_SKIPPED.get() {
        return;
    }
    if let Some(el) = FOLLOW.with(|f| f.borrow_mut().take()) {
        if FOLLOWING.get() {
            el.set_scroll_top(el.scroll_height());
        }
    }
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// ContentVisibilityAutoStateChangeEvent (not in web-sys): whether the browser now skips
    /// the element's contents.
    type StateChange;
    #[wasm_bindgen(method, getter)]
    fn skipped(this: &StateChange) -> bool;
}

/// Follows whether the browser skips the read-outs' rendering (`content-visibility: auto`
/// on `.readouts`: off screen, nothing in them is laid out or painted, though their DOM is
/// kept current every frame, so the accessibility tree and a reader who scrolls to them get
/// the present moment). Shown again, the event log scrolls to its newest line at the next
/// frame ([`follow_log`]).
fn watch_skipped(ctx: Ctx, el: &web_sys::Element) {
    use wasm_bindgen::closure::Closure;
    // The closure type of the frame loop's listeners (crate::frames): one glue shim for all.
    let on_change = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        let skipped = ev.unchecked_into::<StateChange>().skipped();
        READOUTS_SKIPPED.set(skipped);
        if !skipped {
            crate::frames::wake(ctx);
        }
    });
    let _ = el.add_event_listener_with_callback(
        "contentvisibilityautostatechange",
        on_change.as_ref().unchecked_ref(),
    );
    // The read-outs are mounted once, for the page's life.
    on_change.forget();
}

#[component]
pub fn Readouts(ctx: Ctx) -> impl IntoView {
    let snap = ctx.snap;
    // The kinds hidden, as a set of bits (the runs beside hide them too).
    let hidden = ctx.log_hidden;
    let epochs = move || {
        let many = ctx.pg.with_value(|pg| many_partitions(pg.scenario()));
        snap.with(|sn| epochs_text(sn, many))
    };
    // Rebuilt only when a value changes; the rows themselves stay.
    // A `Vec`, the type of another memo of the page (a memo of another type is kilobytes of
    // wasm of its own).
    let metrics = Memo::new(move |_| snap.with(|sn| Vec::from(metric_values(&sn.metrics))));
    // Kafka's metrics by MBean, per broker and cluster-wide: one piece of markup, set when
    // it changed, patched where only values changed (crate::patch).
    let kafka_div = NodeRef::<leptos::html::Div>::new();
    crate::patch::patch_effect(
        Box::new(move || kafka_div.get().map(|d| d.unchecked_into())),
        Box::new(move || snap.with(|sn| kafka_metrics_markup(&sn.metrics.kafka))),
    );
    // Every line, a run of retries as one (a run is not broken by other kinds of lines, so
    // filtering after collapsing gives what collapsing the filtered lines would).
    let all = Memo::new(move |_| ctx.log.with(|l| rows(l.iter())));
    let results = Memo::new(move |_| all.with(|l| results_of(l)));
    // The newest 200 lines, oldest first as in a server log: new lines are appended (and old
    // ones dropped from the top), which keeps every other line's DOM node where it is.
    let lines = Signal::derive(move || {
        let hidden = hidden.get();
        all.with(|l| {
            let mut v = newest_rows(l, hidden);
            v.reverse();
            v
        })
    });
    // The log follows its newest line, like `tail -f`, unless the reader scrolled up.
    let log = || page_element(".readouts .log");
    FOLLOWING.set(true);
    // Once, after the section is mounted (an effect runs after its view is built).
    Effect::new(move |_| {
        if let Some(el) = page_element("section.readouts") {
            watch_skipped(ctx, &el);
        }
    });
    row_list(
        ctx,
        ".readouts .results",
        results.into(),
        level_class,
        false,
    );
    row_list(ctx, ".readouts .log", lines, log_class, true);
    let on_log_scroll = move |_| {
        if let Some(el) = log() {
            let follow = el.scroll_top() + el.client_height() >= el.scroll_height() - 24;
            if follow != FOLLOWING.get() {
                FOLLOWING.set(follow);
                // Scroll anchoring keeps a reader's place when old lines leave the top; while
                // following it is off, or its adjustment would read as the reader scrolling
                // up (style/main.css, `.log`).
                let _ = el.set_attribute("data-follow", if follow { "1" } else { "0" });
            }
        }
    };
    view! {
        // One click handler for the Cancel buttons of both lists.
        <section class="readouts" aria-labelledby="readouts-h" on:click=move |ev| on_cancel(ctx, ev)>
            <h2 id="readouts-h">"In Kafka's words"</h2>
            <h3>"kafka-topics.sh --describe"</h3>
            <pre class="describe" aria-label="kafka-topics --describe">{move || snap.with(|sn| sn.describe.clone())}</pre>
            <h3>"kafka-get-offsets.sh"</h3>
            <pre class="offsets" aria-label="kafka-get-offsets">{move || snap.with(|sn| sn.offsets.clone())}</pre>
            <h3>"leader-epoch-checkpoint"</h3>
            <pre class="epochs" aria-label="leader-epoch-checkpoint">{move || epochs()}</pre>
            <h3>"kafka-dump-log.sh"</h3>
            {crate::readout_tools::log_tools(ctx)}
            <h3>"Produce and consume results"</h3>
            // Rows keyed by sequence number and text (`RowList`): a new cluster's trace
            // numbers its lines from 0 again, and a key of the number alone kept the old
            // cluster's lines.
            <ul class="results" aria-label="Produce results"></ul>
            <h3>"Metrics"</h3>
            <dl class="metrics">
                // Each pair an AnyView, as each lane is: one list type (each list type is a
                // family of functions of its own).
                {METRICS.iter().enumerate().map(|(i, k)| view! {
                    <dt>{*k}</dt><dd>{move || metrics.with(|m| m[i].clone())}</dd>
                }.into_any()).collect_view()}
            </dl>
            <h3>"Kafka's metrics " <span class="hint">"(JMX: a gauge's Value, a meter's Count since its broker started)"</span></h3>
            <div class="kafka-metrics" aria-label="Kafka's metrics" node_ref=kafka_div></div>
            <h3>"Event log " <span class="hint">"(newest at the bottom)"</span></h3>
            // Static markup and one change handler (each box carries its kind's index): the
            // boxes are only ever changed by the reader, so nothing else sets them.
            <fieldset class="filters" inner_html=filters_markup(hidden.get_untracked())
                on:change=move |ev| {
                    let Some(input) = event_input(&ev) else {
                        return;
                    };
                    let kind = input.get_attribute("data-k").and_then(|i| i.parse::<usize>().ok()).and_then(|i| FILTERS.get(i));
                    if let Some(&k) = kind {
                        let on = input.checked();
                        hidden.update(|h| if on { *h &= !kind_bit(k) } else { *h |= kind_bit(k) });
                    }
                }>
            </fieldset>
            // Focusable: it scrolls, and a keyboard must be able to scroll it too.
            <ol class="log" aria-label="Event log" tabindex="0" on:scroll=on_log_scroll></ol>
        </section>
    }
}

/// `yes` or `no` as a `String`: the texts and attributes that follow a condition are all
/// `String`s, the type the page's other texts have (each output type of a reactive text or
/// attribute is a family of functions of its own in the wasm).
pub(crate) fn pick(on: bool, yes: &str, no: &str) -> String {
    if on { yes } else { no }.to_string()
}

/// Each line escaped, between `open` and `close`: a list of texts as one piece of markup.
pub(crate) fn lines_markup(open: &str, close: &str, lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("{open}{}{close}", crate::session::escape_attr(l)))
        .collect()
}

/// A condition as a memo, for a part built while it holds and removed when it stops (what
/// `<Show>` does): one function, so one memo's code for all of them. The part is returned
/// as an `AnyView` (`.into_any()`), so that all of them are one type, `Option<AnyView>`: as
/// an `Option` of each element or fragment type, each was a family of functions of its own.
pub(crate) fn flag(when: Box<dyn Fn() -> bool + Send + Sync>) -> Memo<bool> {
    Memo::new(move |_| when())
}

/// Red banner for broken invariants; a plain statement for lost committed records.
#[component]
pub fn Alarms(ctx: Ctx) -> impl IntoView {
    let snap = ctx.snap;
    let violations = Memo::new(move |_| snap.with(|sn| sn.violations.clone()));
    let losses = Memo::new(move |_| {
        snap.with(|sn| {
            sn.losses
                .iter()
                .map(|l| {
                    // The partition, where the cluster has more than one (the loss names it).
                    let of =
                        l.tp.as_ref()
                            .map(|t| format!(" of {t}"))
                            .unwrap_or_default();
                    format!(
                        "Committed records{of} were lost at {}: offsets {}..{} ({}). Cause: {}.",
                        geometry::format_clock(l.time_ms),
                        l.first_offset,
                        l.last_offset,
                        l.values.join(" "),
                        l.cause
                    )
                })
                .collect::<Vec<_>>()
        })
    });
    let alarm = flag(Box::new(move || violations.with(|v| !v.is_empty())));
    let lost = flag(Box::new(move || losses.with(|l| !l.is_empty())));
    let noticed = flag(Box::new(move || ctx.notice.with(Option::is_some)));
    // The replication protocol of an older Kafka (the scenario's `protocol`), said above
    // the picture for as long as the run follows it: what the era did, and the KIP that
    // fixed it, linked. Hidden in Kafka 4.x. (Closures on the status, which changes
    // seldom, not a memo: a memo of a new type is code of its own.)
    view! {
        <aside class="protocol" aria-label="Replication protocol"
            prop:hidden=move || ctx.status.with(|s| s.config.protocol.is_default())
            inner_html=move || ctx.status.with(|s| protocol_markup(s.config.protocol))></aside>
        // Built and removed, not `<Show>`s (less code, BENCHMARKS.md "Shipped size"); while
        // shown, only their text changes (they are live regions).
        {move || alarm.get().then(|| view! {
            <div class="banner" role="alert" tabindex="0">
                <strong>"An invariant was broken. This is a bug in Watermark's engine: "</strong>
                {move || violations.with(|v| v.join("; "))}
            </div>
        }.into_any())}
        {move || lost.get().then(|| view! {
            <div class="loss" role="status" tabindex="0" inner_html=move || losses.with(|l| lines_markup("<p>", "</p>", l))></div>
        }.into_any())}
        {move || noticed.get().then(|| view! {
            <p class="notice" role="status">
                {move || ctx.notice.get().unwrap_or_default()}
                <button aria-label="Dismiss" on:click=move |_| ctx.notice.set(None)>"×"</button>
            </p>
        }.into_any())}
    }
}

/// What the page says of a run in an older Kafka's protocol (`Protocol::era`, and the KIP
/// that ended the era, its page linked): markup, empty for Kafka 4.x.
pub(crate) fn protocol_markup(p: watermark_engine::Protocol) -> String {
    if p.is_default() {
        return String::new();
    }
    // "KIP-101 replaced it … in Kafka 0.11.0: https://…": the words, then the page.
    // Byte loops, not `str::find`, and `get`, not `&s[..i]`: core's substring searcher and
    // the string-slicing panic (with char's Debug and Unicode's printable tables) are
    // kilobytes of wasm (BENCHMARKS.md, "Shipped size").
    let fixed = p.fixed_by();
    let b = fixed.as_bytes();
    let at = (0..b.len()).find(|&i| b[i..].starts_with(b": https://"));
    let words = at.and_then(|at| fixed.get(..at)).unwrap_or(fixed);
    let link = at.and_then(|at| fixed.get(at + 2..)).unwrap_or("");
    let space = words.bytes().position(|c| c == b' ');
    let kip = space.and_then(|i| words.get(..i)).unwrap_or(words);
    let link = if link.is_empty() {
        String::new()
    } else {
        format!(r#" (<a href="{link}" target="_blank" rel="noopener">{kip}</a>)"#)
    };
    format!(
        "<strong>Protocol <code>{}</code>, not Kafka 4.x:</strong> {}. {words}{link}.",
        p.name(),
        p.era()
    )
}

/// What the simulation simplifies, in plain words (docs/engine.md keeps the same list). All
/// static: the view macro builds the summary and the list from markup (a view's top element,
/// the `<details>`, is always built as an element of its own).
#[component]
pub fn Simplifications() -> impl IntoView {
    view! {
        <details class="simplifications">
            <summary>"What this simulation simplifies"</summary>
            <ul>
                <li>"The lanes show one partition at a time: the first, or the one chosen in the overview. The KRaft controller is one always-available node with a latency; its Raft quorum is not shown, and brokers get the whole metadata image at once."</li>
                <li>"Clients always know the current leader, as if their metadata refreshed instantly."</li>
                <li>"The idempotent producer has id 0, epoch 0 at once (no InitProducerId); its producer state never expires. A produce request carries one batch."</li>
                <li>"No segments, retention or compression: the log start offset stays 0. A batch's records share one timestamp."</li>
                <li>"Writes reach the page cache at once and survive kill -9; a lost disk loses everything. A power cut loses what each log appended in the last sim.writeback.delay.ms (30 s), as if the kernel wrote each page back exactly then; a clean shutdown and log.flush.interval.* (or a topic's flush.*) flush; a segment roll's flush is not modelled."</li>
                <li>"A slow broker waits the given time after each fetch response before fetching again."</li>
                <li>"One consumer without a group; after OFFSET_OUT_OF_RANGE it moves to the log end (auto.offset.reset=latest). A new client.rack stands for a new consumer in that rack."</li>
                <li>"Log directories have no ids: a broker back with a new disk can lead once it is unfenced (Kafka waits the moment it takes to move its replicas to the new directory)."</li>
                <li>"Reassignment has --execute, --verify and --cancel (--additional and --preserve-throttles in scenario files), not --list or --generate; a removed replica's log is deleted at once. Throttles come only from --throttle."</li>
                <li>"A killed broker's machine stays up: its kernel resets connections at once. A cut link drops packets, and requests time out. A zone cut off loses the controller too."</li>
                <li>"Changing replica.lag.time.max.ms applies at once on every broker, as if each were restarted with the new value (real Kafka needs a broker restart for it); min.insync.replicas reaches each broker through the metadata."</li>
                <li>"Kafka's meters show their count, not a rate; the replication byte-rate shows whole bytes per second."</li>
                <li>"A produce's records are all appended before the producer sends any of them, so the sticky partitioner always finds its queues empty: partitioner.adaptive.partitioning.enable changes nothing, and partitioner.availability.timeout.ms keeps its default."</li>
            </ul>
        </details>
    }
}

/// Narrates key events for screen readers.
pub fn narration(ctx: Ctx) -> String {
    ctx.log.with(|l| {
        l.iter()
            .rev()
            .find(|e| {
                matches!(
                    e.kind(),
                    TraceKind::Isr | TraceKind::Election | TraceKind::Truncation | TraceKind::Loss
                ) || (e.kind() == TraceKind::Produce && e.level() != Level::Warn)
            })
            .map(|e| e.line())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use watermark_engine::Scenario;

    #[test]
    fn an_older_protocol_is_said_with_the_kip_that_fixed_it_and_kafka_4_says_nothing() {
        use watermark_engine::protocol::PROTOCOLS;
        assert_eq!(protocol_markup(watermark_engine::Protocol::Kafka4), "");
        let old = PROTOCOLS
            .iter()
            .find(|(_, n)| *n == "pre-kip-101")
            .map(|(p, _)| *p)
            .unwrap();
        assert_eq!(
            protocol_markup(old),
            format!(
                "<strong>Protocol <code>pre-kip-101</code>, not Kafka 4.x:</strong> {}. KIP-101 replaced it with leader-epoch truncation in Kafka 0.11.0 (<a href=\"https://cwiki.apache.org/confluence/display/KAFKA/KIP-101+-+Alter+Replication+Protocol+to+use+Leader+Epoch+rather+than+High+Watermark+for+Truncation\" target=\"_blank\" rel=\"noopener\">KIP-101</a>).",
                old.era()
            )
        );
        // Every older mode names its KIP and links its page; its words need no escaping.
        for &(p, n) in PROTOCOLS.iter().filter(|(p, _)| !p.is_default()) {
            let m = protocol_markup(p);
            assert!(m.contains(&format!("<code>{n}</code>")), "{m}");
            assert!(m.contains(r#"<a href="https://cwiki.apache.org/"#), "{m}");
            assert!(m.contains(">KIP-"), "{m}");
            for text in [p.era(), p.fixed_by()] {
                assert!(!text.contains(['<', '&', '"']), "{text}");
            }
        }
    }

    #[test]
    fn kafkas_metrics_table_has_each_brokers_value_and_a_dash_for_one_not_running() {
        // Broker 3 killed at 1 s, fenced by 20 s: the leader (broker 1) has its one partition
        // under-replicated, at its minimum of 2 (Partition.isUnderReplicated, isAtMinIsr).
        let s = Scenario::from_json(
            r#"{"brokers":3,"config":{"min.insync.replicas":2},
                "timeline":[{"at":1000,"action":"kill","broker":3}],"end_ms":20000}"#,
        )
        .unwrap();
        let sim = watermark_engine::run(&s, true).unwrap();
        let m = kafka_metrics_markup(&sim.snapshot().metrics.kafka);
        assert!(m.starts_with("<table><thead><tr><th scope=\"col\">metric</th><th scope=\"col\">cluster</th><th scope=\"col\">broker 1</th><th scope=\"col\">broker 2</th><th scope=\"col\">broker 3</th></tr>"), "{m}");
        let row = |name: &str| {
            let start = m.find(&format!(">{name}</th>")).unwrap();
            let end = start + m[start..].find("</tr>").unwrap();
            m[start..end]
                .split("<td")
                .skip(1)
                .map(|c| c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()].to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(row("UnderReplicatedPartitions"), ["1", "1", "0", "—"]);
        assert_eq!(row("AtMinIsrPartitionCount"), ["1", "1", "0", "—"]);
        assert_eq!(row("LeaderCount"), ["1", "1", "0", "—"]);
        assert_eq!(row("PartitionCount"), ["2", "1", "1", "—"]);
        assert_eq!(row("OfflinePartitionsCount"), ["0", ""]);
        assert!(
            m.contains("title=\"kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions\"")
        );
    }
}
