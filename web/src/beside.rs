//! Runs side by side (issue 15): the scenario's `compare` runs the session's own timeline
//! again under another configuration or protocol (`acks=1` beside `acks=all`, Kafka 3.x
//! beside 4.x), drawn under the session's own run on the same clock, with what differs
//! from it listed.
//!
//! Each run beside is a [`Playground`] of its own, built from the session's scenario
//! (`Scenario::variant`), that follows the session's shown moment: it plays, steps, seeks
//! and goes back in time with it, and takes each of the person's actions as its variant has
//! it (`Variant::adapt`: a produce with the variant's acks; a change of a setting the
//! variant sets is not taken, so the comparison keeps its difference). The pure parts are
//! tested natively here; the view is at the end.

use leptos::prelude::*;
use watermark_engine::compare::{self, Variant, MAX_VARIANTS};
use watermark_engine::json::Value;
use watermark_engine::scenario::TopicConfigs;
use watermark_engine::types::Acks;
use watermark_engine::{Action, Protocol, Scenario};

use crate::cluster::ClusterView;
use crate::model::Playground;
use crate::panels::Row;
use crate::state::Ctx;
use watermark_engine::snapshot::Snapshot;

/// A run beside the session's own.
#[derive(Clone)]
pub struct Beside {
    pub pg: Playground,
    pub variant: Variant,
    /// Its state's key (`state::snap_key`, the clock left out) when its snapshot was last
    /// published.
    key: Option<crate::state::SnapKey>,
}

/// What the page shows of a run beside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BesideView {
    /// What the run changes (`Variant::title`).
    pub title: String,
    /// Its `kafka-topics.sh --describe` line at the shown moment.
    pub describe: String,
    /// What differs from the session's own run at the shown moment, as list items.
    pub differences: String,
    /// Its `replica.lag.time.max.ms` (a variant may set it), for its lanes' lag bars.
    pub lag_time_max_ms: u64,
    /// Its section's class: `beside`, and `dN` for each broker N whose replica or process
    /// differs from the top run's (style/main.css outlines its lane).
    pub class: String,
}

/// The runs beside `main` (its scenario's `compare`), each brought to `main`'s shown moment;
/// and a note when one cannot be built (the error names the field).
pub fn build(main: &Playground) -> (Vec<Beside>, Option<String>) {
    let s = main.to_scenario();
    let mut runs = Vec::new();
    let mut note = None;
    for (i, v) in s.compare.iter().enumerate() {
        match s.variant(i).and_then(Playground::new) {
            Ok(mut pg) => {
                // The session's own run stops at captions; the runs beside follow it.
                pg.pause_at_captions = false;
                if main.started() {
                    pg.run_to(main.max_time());
                    pg.seek(main.current().now());
                }
                runs.push(Beside {
                    pg,
                    variant: v.clone(),
                    key: None,
                });
            }
            Err(e) => {
                note = Some(format!(
                    "The run beside ({}) could not start: {e}",
                    v.title()
                ));
            }
        }
    }
    (runs, note)
}

/// Brings each run to `main`'s shown moment. Returns the runs whose shown state changed
/// since it was last published (every run when `all`).
pub fn follow_all(runs: &mut [Beside], main: &Playground, all: bool) -> Vec<usize> {
    let now = main.current().now();
    let mut changed = Vec::new();
    let shown = main.current().view_partition();
    for (i, run) in runs.iter_mut().enumerate() {
        // The partition the person chose in the overview, in every run (the same cluster:
        // it is there), so that each picture and its differences are of that partition.
        if run.pg.current().view_partition() != shown {
            let _ = run.pg.set_view_partition(&shown.topic, shown.partition);
        }
        if main.started() {
            // `run_to` moves a view of the past on, or the live run forward; a run showing
            // its live moment is sent back by `seek`.
            if !run.pg.is_scrubbed_back() && now < run.pg.max_time() {
                run.pg.seek(now);
            } else {
                run.pg.run_to(now);
            }
        }
        let key = crate::state::snap_key(&run.pg);
        if all || run.key != Some(key) {
            run.key = Some(key);
            changed.push(i);
        }
    }
    changed
}

/// Each run takes the person's action as its variant has it. Returns a note when a run
/// refused it (the session's own run took it).
pub fn act(runs: &mut [Beside], action: &Action) -> Option<String> {
    let mut note = None;
    for run in runs.iter_mut() {
        let Some(a) = run.variant.adapt(action) else {
            continue;
        };
        if let Err(e) = run.pg.act(&a) {
            note = Some(format!(
                "The run beside ({}) did not take it: {e}",
                run.variant.title()
            ));
        }
    }
    note
}

/// What the page shows of each run, compared with `main` at the shown moment.
/// `describe` gives each run's describe line (from the snapshot its view already has: a
/// snapshot is not built again for it).
pub fn views(
    runs: &[Beside],
    main: &Playground,
    describe: impl Fn(usize) -> String,
) -> Vec<BesideView> {
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let sim = run.pg.current();
            let diffs = compare::differences(main.current(), sim);
            BesideView {
                title: run.variant.title(),
                describe: describe(i),
                differences: differences_markup(&diffs),
                lag_time_max_ms: sim.config().replica_lag_time_max_ms,
                class: section_class(&diffs),
            }
        })
        .collect()
}

/// Adds to the time bar what the runs beside mark: their errors (a write refused, records
/// lost) and their expectations, each named by its run.
pub fn add_marks(runs: &[Beside], status: &mut crate::state::Status) {
    for run in runs {
        let title = run.variant.title();
        for m in run.pg.markers() {
            if m.kind == crate::model::MarkerKind::Error {
                status.markers.push(crate::model::Marker {
                    text: format!("Beside ({title}): {}", m.text),
                    ..m.clone()
                });
            }
        }
        for mut e in run.pg.expect_marks() {
            e.text = format!("Beside ({title}): {}", e.text);
            status.expect.push(e);
        }
    }
}

/// The event log of a run beside at its shown moment: its trace's rows (`panels::rows`, a
/// run of retries as one) up to that moment, those of a kind `hidden` hides left out (the
/// session's own log's filters), newest first, at most 200 (as the session's own log).
pub fn log_rows(pg: &Playground, hidden: u64) -> Vec<Row> {
    let lines = crate::state::newest_trace(pg);
    crate::panels::newest_rows(&crate::panels::rows(lines.iter()), hidden)
}

/// The read-outs of a run beside at its shown moment, as markup, from its own snapshot and
/// trace: the blocks of "In Kafka's words" that differ from run to run (the describe line is
/// in the section already; the tools are the session's, and their lines are in each run's
/// event log).
pub fn readouts_markup(pg: &Playground, sn: &Snapshot) -> String {
    use crate::panels::{
        epochs_text, kafka_metrics_markup, level_class, many_partitions, metric_values, results_of,
        rows, METRICS,
    };
    use crate::session::escape_attr as esc;
    let lines = crate::state::newest_trace(pg);
    let mut results = String::new();
    for r in results_of(&rows(lines.iter())) {
        results.push_str(&format!(
            r#"<li class="{}">{}</li>"#,
            level_class(&r),
            esc(&r.1)
        ));
    }
    let mut metrics = String::new();
    for (k, v) in METRICS.iter().zip(metric_values(&sn.metrics)) {
        metrics.push_str(&format!("<dt>{k}</dt><dd>{v}</dd>"));
    }
    format!(
        concat!(
            r#"<h3>kafka-get-offsets.sh</h3><pre class="offsets">{}</pre>"#,
            r#"<h3>leader-epoch-checkpoint</h3><pre class="epochs">{}</pre>"#,
            r#"<h3>Produce and consume results</h3><ul class="results">{}</ul>"#,
            r#"<h3>Metrics</h3><dl class="metrics">{}</dl>"#,
            r#"<h3>Kafka's metrics</h3><div class="kafka-metrics">{}</div>"#
        ),
        esc(&sn.offsets),
        esc(&epochs_text(sn, many_partitions(pg.scenario()))),
        results,
        metrics,
        kafka_metrics_markup(&sn.metrics.kafka)
    )
}

/// The class of a run's section: `beside`, then `dN` for each broker N a difference is of
/// (its log end offset, process or log), once each, in the order listed.
pub fn section_class(diffs: &[compare::Difference]) -> String {
    let mut class = String::from("beside");
    let mut seen: Vec<u32> = Vec::new();
    for b in diffs.iter().filter_map(|d| d.broker) {
        if !seen.contains(&b) {
            seen.push(b);
            class.push_str(&format!(" d{b}"));
        }
    }
    class
}

/// The differences as list items: what, this run's value marked, the top run's after it.
pub fn differences_markup(diffs: &[compare::Difference]) -> String {
    use crate::session::escape_attr as esc;
    if diffs.is_empty() {
        return r#"<li class="same">Nothing differs from the top run at this moment.</li>"#
            .to_string();
    }
    let mut out = String::new();
    if diffs.iter().any(|d| d.broker.is_some()) {
        out.push_str(r#"<li class="same">The lanes of the brokers named below are outlined.</li>"#);
    }
    for d in diffs {
        let of = d
            .broker
            .map_or(String::new(), |b| format!(" of broker {b}"));
        out.push_str(&format!(
            r#"<li><span class="what">{}{of}</span> <mark>{}</mark> <span class="top">(top: {})</span></li>"#,
            esc(&d.what),
            esc(&d.other),
            esc(&d.top)
        ));
    }
    out
}

/// What the session's own run has of what the runs beside change: `acks=all`,
/// `min.insync.replicas=2`, `protocol kafka-4`.
pub fn top_title(s: &Scenario) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !parts.contains(&p) {
            parts.push(p);
        }
    };
    for v in &s.compare {
        if v.acks.is_some() {
            push(produce_acks(s));
        }
        for name in v.config.keys() {
            push(format!("{name}={}", config_text(s, name)));
        }
        // A topic's own configs, as the top run has them (the page offers a topic's only
        // where it has its own).
        for topic in v.topics.keys() {
            if let Some(t) = s.topics.iter().find(|t| t.name == *topic) {
                push(format!("{topic}: {}", t.configs.text()));
            }
        }
        if v.protocol.is_some() {
            push(format!("protocol {}", s.protocol.name()));
        }
    }
    parts.join(", ")
}

/// The acks the scenario's produce actions use: one value, or "acks as each write sets it".
fn produce_acks(s: &Scenario) -> String {
    let mut seen: Option<Acks> = None;
    for a in &s.timeline {
        if let Action::Produce(p) = &a.action {
            match seen {
                Some(x) if x != p.acks.0 => return "acks as each write sets it".to_string(),
                _ => seen = Some(p.acks.0),
            }
        }
    }
    format!("acks={}", acks_name(seen.unwrap_or(Acks::All)))
}

fn acks_name(a: Acks) -> &'static str {
    match a {
        Acks::Zero => "0",
        Acks::One => "1",
        Acks::All => "all",
    }
}

/// A config's value in the scenario, as Kafka prints it.
fn config_text(s: &Scenario, name: &str) -> String {
    let c = &s.config;
    match name {
        "unclean.leader.election.enable" => c.unclean_leader_election_enable.to_string(),
        "eligible.leader.replicas.version" => u8::from(c.elr_enabled()).to_string(),
        "enable.idempotence" => (c.enable_idempotence != Some(false)).to_string(),
        _ => c
            .numeric(name)
            .map_or_else(|| "as the scenario sets it".to_string(), |v| v.to_string()),
    }
}

/// The choices the page offers (the select's values): none; acks=1; acks=0; both (article
/// 003's acks=0/1/all view); the other `min.insync.replicas`; the other unclean election;
/// each other protocol. A `compare` that is none of these (from a link) is offered as it is.
/// Where the shown topic of a version-2 scenario (`topic`) sets `min.insync.replicas` or
/// `unclean.leader.election.enable` in its own `configs`, the broker's would change nothing
/// for it: the other value is offered as that topic's (`orders:min.insync.replicas=1`).
pub fn choices(s: &Scenario, topic: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![(String::new(), "nothing".to_string())];
    out.push(("acks=1".into(), "acks=1".into()));
    out.push(("acks=0".into(), "acks=0".into()));
    out.push((
        "acks=1|acks=0".into(),
        "acks=1 and acks=0 (three runs)".into(),
    ));
    let own = s
        .topics
        .iter()
        .find(|t| t.name == topic)
        .map(|t| t.configs)
        .unwrap_or_default();
    // The shown topic's own setting, else the broker's: (value, label) of the other one.
    let mut other = |name: &str, own: Option<String>, broker: String| match own {
        Some(v) => out.push((
            format!("{topic}:{name}={v}"),
            format!("{topic}: {name}={v}"),
        )),
        None => out.push((format!("{name}={broker}"), format!("{name}={broker}"))),
    };
    let min = |m: u32| if m > 1 { 1 } else { 2 };
    other(
        "min.insync.replicas",
        own.min_insync_replicas.map(|m| min(m).to_string()),
        min(s.config.min_insync_replicas).to_string(),
    );
    other(
        "unclean.leader.election.enable",
        own.unclean_leader_election_enable.map(|u| (!u).to_string()),
        (!s.config.unclean_leader_election_enable).to_string(),
    );
    for &(p, n) in watermark_engine::protocol::PROTOCOLS {
        if p != s.protocol {
            out.push((
                format!("protocol={n}"),
                format!("protocol {n}: {}", p.era()),
            ));
        }
    }
    let now = choice_of(&s.compare);
    if !out.iter().any(|(v, _)| *v == now) {
        let title: Vec<String> = s.compare.iter().map(Variant::title).collect();
        out.push((now, title.join(" and ")));
    }
    out
}

/// The select's options, the scenario's own choice selected; `topic` is the shown one
/// (version 2), whose own configs the choices change where it has them.
pub fn options_markup(s: &Scenario, topic: &str) -> String {
    use crate::session::escape_attr as esc;
    let now = choice_of(&s.compare);
    let mut out = String::new();
    for (value, label) in choices(s, topic) {
        let sel = if value == now { " selected" } else { "" };
        out.push_str(&format!(
            r#"<option value="{}"{sel}>{}</option>"#,
            esc(&value),
            esc(&label)
        ));
    }
    out
}

/// The choice's value of a `compare`: its variants' parts joined by `|`.
pub fn choice_of(compare: &[Variant]) -> String {
    let parts: Vec<String> = compare.iter().map(part_of).collect();
    parts.join("|")
}

/// One variant as a choice's part: `acks=1`, `min.insync.replicas=1`, a topic's own config
/// `orders:min.insync.replicas=1`, `protocol=no-elr`; a variant of more than one change
/// (from a link) joins them with `&`.
fn part_of(v: &Variant) -> String {
    let mut parts = Vec::new();
    if let Some(a) = v.acks {
        parts.push(format!("acks={}", acks_name(a)));
    }
    for (name, value) in v.config.iter() {
        parts.push(format!("{name}={}", value_text(value)));
    }
    for (topic, configs) in v.topics.iter() {
        for (name, value) in configs.entries() {
            parts.push(format!("{topic}:{name}={value}"));
        }
    }
    if let Some(p) = v.protocol {
        parts.push(format!("protocol={}", p.name()));
    }
    parts.join("&")
}

/// A config value as a choice's part writes it: a text as it is.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => watermark_engine::json::value_text(other),
    }
}

/// The variants of a choice's value; an error names what could not be read.
pub fn variants_of(choice: &str) -> Result<Vec<Variant>, String> {
    let mut out = Vec::new();
    for part in choice.split('|').filter(|p| !p.is_empty()) {
        let mut v = Variant::default();
        for change in part.split('&') {
            let Some((name, value)) = change.split_once('=') else {
                return Err(format!("not a change: {change}"));
            };
            // A topic's own config (`orders:min.insync.replicas=1`; a topic name has no `:`),
            // read and checked as `topics[].configs` is.
            if let Some((topic, config)) = name.split_once(':') {
                let value = watermark_engine::json::parse(value)
                    .unwrap_or_else(|_| Value::String(value.to_string()));
                let mut one = watermark_engine::json::Map::new();
                one.insert(config.to_string(), value);
                let c = TopicConfigs::from_json(topic, &Value::Object(one))
                    .map_err(|e| e.to_string())?;
                let mut configs = v
                    .topics
                    .get(&topic.to_string())
                    .copied()
                    .unwrap_or_default();
                configs = configs.overridden_by(&c);
                v.topics.insert(topic.to_string(), configs);
                continue;
            }
            match name {
                "acks" => {
                    v.acks = Some(match value {
                        "0" => Acks::Zero,
                        "1" => Acks::One,
                        "all" => Acks::All,
                        _ => return Err(format!("acks: {value} is not 0, 1 or all")),
                    })
                }
                "protocol" => {
                    v.protocol =
                        Some(Protocol::parse("protocol", value).map_err(|e| e.to_string())?)
                }
                _ => {
                    // Checked as the run will take it (Config::set: the range, by name).
                    let value = Value::String(value.to_string());
                    watermark_engine::Config::default()
                        .set(name, &value)
                        .map_err(|e| e.to_string())?;
                    v.config.insert(name.to_string(), value);
                }
            }
        }
        out.push(v);
    }
    if out.len() > MAX_VARIANTS {
        return Err(format!("at most {MAX_VARIANTS} runs beside"));
    }
    Ok(out)
}

/// The line above the session's own run while runs are beside it.
#[component]
pub fn BesideTop(ctx: Ctx) -> impl IntoView {
    let shown = crate::panels::flag(Box::new(move || ctx.beside.with(|b| !b.is_empty())));
    let text = move || {
        let below: Vec<String> = ctx
            .beside
            .with(|b| b.iter().map(|v| v.title.clone()).collect());
        let top = ctx.pg.with_value(|pg| top_title(pg.scenario()));
        format!(
            "Side by side, on one clock. Top: this session's run ({top}). Below: the same timeline with {}.",
            below.join(", then with ")
        )
    };
    view! {
        <p class="beside-top" prop:hidden=move || !shown.get()>{move || shown.get().then(text)}</p>
    }
}

/// Keeps run `i`'s event log and read-outs (in its section's two `<details>`) showing its
/// shown moment while each is open (`log_open`, `readouts_open`), refreshed at the event
/// log's pace (`Ctx::beside_logs`: at most four times a second while playing, at once on a
/// pause, an action or a seek). Closed, an effect reads only whether it is open, so the
/// run's events wake nothing and build nothing.
fn follow_details(ctx: Ctx, i: usize, log_open: RwSignal<bool>, readouts_open: RwSignal<bool>) {
    let snap = ctx.beside_snaps[i];
    // Each run's log keeps its rows' elements while they stay, as the session's own does.
    let list = StoredValue::new_local(crate::panels::RowList::plain());
    Effect::new(move |_| {
        if !log_open.get() {
            return;
        }
        ctx.beside_logs.track();
        let hidden = ctx.log_hidden.get();
        let rows = ctx.beside_runs.with_value(|runs| {
            runs.get(i)
                .map(|r| log_rows(&r.pg, hidden))
                .unwrap_or_default()
        });
        if let Some(el) = crate::panels::page_element(&format!("ol[data-run=\"{i}\"]")) {
            list.update_value(|l| l.sync(&el, &rows, crate::panels::log_class));
        }
    });
    crate::patch::patch_effect(
        Box::new(move || crate::panels::page_element(&format!("div[data-run=\"{i}\"]"))),
        Box::new(move || {
            if !readouts_open.get() {
                return String::new();
            }
            ctx.beside_logs.track();
            snap.with_untracked(|sn| {
                ctx.beside_runs.with_value(|runs| {
                    runs.get(i)
                        .map(|r| readouts_markup(&r.pg, sn))
                        .unwrap_or_default()
                })
            })
        }),
    );
}

/// A click on the summary of a run's event log or read-outs: sets `log` or `readouts` to
/// whether its `<details>` is open once the click has toggled it (after this handler). A
/// click, not the `toggle` event: one more event type is code of its own.
fn toggled(ev: &leptos::ev::MouseEvent, log: RwSignal<bool>, readouts: RwSignal<bool>) {
    use wasm_bindgen::JsCast;
    let details = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|t| t.closest("summary").ok().flatten())
        .and_then(|s| s.parent_element());
    if let Some(d) = details {
        let open = !d.has_attribute("open");
        if d.class_name() == "beside-log" {
            log.set(open);
        } else {
            readouts.set(open);
        }
    }
}

/// The runs beside, each under the one before: its title, its cluster view on the same
/// clock, its describe line, what differs from the top run, and (on the full page) its own
/// event log and read-outs, each in a `<details>` closed until opened.
#[component]
pub fn BesideRuns(ctx: Ctx, labels: Memo<bool>) -> impl IntoView {
    (0..MAX_VARIANTS)
        .map(|i| {
            let named = move |what: &str| {
                format!(
                    "{what} of the run below ({})",
                    ctx.beside
                        .with(|b| b.get(i).map(|v| v.title.clone()).unwrap_or_default())
                )
            };
            let shown = crate::panels::flag(Box::new(move || ctx.beside.with(|b| b.len() > i)));
            let lag = Memo::new(move |_| {
                ctx.beside
                    .with(|b| b.get(i).map_or(0, |v| v.lag_time_max_ms))
            });
            let field = move |f: fn(&BesideView) -> &String| {
                ctx.beside
                    .with(|b| b.get(i).map(|v| f(v).clone()).unwrap_or_default())
            };
            let snap = ctx.beside_snaps[i];
            view! {
                {move || shown.get().then(|| {
                    // Made with the section (closed), so a section built again starts
                    // closed and its effects are made again with it.
                    let log_open = RwSignal::new(false);
                    let readouts_open = RwSignal::new(false);
                    if !ctx.embed {
                        follow_details(ctx, i, log_open, readouts_open);
                    }
                    view! {
                    <section class=move || field(|v| &v.class) aria-label=move || format!("Beside: {}", field(|v| &v.title))
                        on:click=move |ev| toggled(&ev, log_open, readouts_open)>
                        <h2 class="beside-title">"Below: the same timeline with "<b>{move || field(|v| &v.title)}</b></h2>
                        <ClusterView snap=snap clock=ctx.clock tick=ctx.tick lag_time_max_ms=lag width=ctx.width broker_ids=ctx.broker_ids labels=labels />
                        <p class="describe-mini" aria-label="kafka-topics --describe">{move || field(|v| &v.describe)}</p>
                        <ul class="differences" aria-label="What differs from the top run" inner_html=move || field(|v| &v.differences)></ul>
                        // The run's own event log and read-outs (web/src/beside.rs,
                        // follow_details): built only while open. Not in an embed, which
                        // has no event log or read-outs of its own run either.
                        {(!ctx.embed).then(|| view! {
                            <details class="beside-log">
                                <summary>{move || named("Event log")}" "<span class="hint">"(newest at the top)"</span></summary>
                                <ol class="log" data-run=i.to_string() tabindex="0" aria-label=move || named("Event log")></ol>
                            </details>
                            <details class="beside-readouts">
                                <summary>{move || named("Read-outs")}</summary>
                                <div class="beside-outs" data-run=i.to_string() role="group" aria-label=move || named("Read-outs")></div>
                            </details>
                        }.into_any())}
                    </section>
                }.into_any()})}
            }
        })
        .collect_view()
}

#[cfg(test)]
mod tests {
    use super::*;
    use watermark_engine::scenario::{AcksOrDefault, ProduceSpec};

    fn produce(acks: Acks, value: &str) -> Action {
        Action::Produce(ProduceSpec {
            acks: AcksOrDefault(acks),
            values: vec![value.into()],
            ..ProduceSpec::default()
        })
    }

    fn session(choice: &str) -> Playground {
        let mut s = crate::model::default_scenario();
        s.compare = variants_of(choice).expect("a choice of the page");
        Playground::new(s).expect("the default scenario with a run beside")
    }

    /// The acks of every produce a playground's run has had, in time order.
    fn acks_sent(pg: &Playground) -> Vec<Acks> {
        pg.to_scenario()
            .timeline
            .iter()
            .filter_map(|a| match &a.action {
                Action::Produce(p) => Some(p.acks.0),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_run_beside_follows_the_shown_moment_forward_back_and_forward() {
        let mut main = session("acks=1");
        // Not started: the run beside shows the moment before the events at 0 too.
        let (mut runs, note) = build(&main);
        assert_eq!(note, None);
        assert_eq!(runs.len(), 1);
        assert!(!runs[0].pg.started());
        main.run_to(5_000);
        assert_eq!(follow_all(&mut runs, &main, false), vec![0]);
        assert_eq!(runs[0].pg.current().now(), 5_000);
        assert_eq!(
            follow_all(&mut runs, &main, false),
            Vec::<usize>::new(),
            "nothing moved"
        );
        assert_eq!(
            follow_all(&mut runs, &main, true),
            vec![0],
            "all: published again"
        );
        main.seek(2_000);
        follow_all(&mut runs, &main, false);
        assert_eq!(runs[0].pg.current().now(), 2_000);
        assert!(runs[0].pg.is_scrubbed_back());
        assert_eq!(
            runs[0].pg.max_time(),
            5_000,
            "the past is shown, the run is kept"
        );
        main.run_to(9_000);
        follow_all(&mut runs, &main, false);
        assert_eq!(runs[0].pg.current().now(), 9_000);
        // Built anew at a moment (a session restored, a choice made while paused): it
        // shows the same moment, having run as far as the session.
        main.seek(4_000);
        let (runs, _) = build(&main);
        assert_eq!(runs[0].pg.current().now(), 4_000);
        assert_eq!(runs[0].pg.max_time(), 9_000);
    }

    #[test]
    fn a_run_beside_shows_the_partition_the_person_chose() {
        let shape = crate::model::Shape {
            brokers: 3,
            racks: 0,
            topics: 1,
            partitions: 3,
            replication_factor: 3,
        };
        let mut s = crate::model::scenario_for(shape, &crate::model::default_scenario());
        s.compare = variants_of("acks=1").expect("choice");
        let mut main = Playground::new(s).expect("builds");
        main.run_to(2_000);
        let (mut runs, _) = build(&main);
        let first = main.current().view_partition().clone();
        // Another partition than the one shown.
        let (topic, partition) = if first.partition == 0 {
            (first.topic.clone(), 1)
        } else {
            (first.topic.clone(), 0)
        };
        main.set_view_partition(&topic, partition)
            .expect("a partition of the cluster");
        follow_all(&mut runs, &main, false);
        let shown = runs[0].pg.current().view_partition();
        assert_eq!(
            (shown.topic.as_str(), shown.partition),
            (topic.as_str(), partition)
        );
        // Back in the past too.
        main.seek(1_000);
        follow_all(&mut runs, &main, false);
        let shown = runs[0].pg.current().view_partition();
        assert_eq!(
            (shown.topic.as_str(), shown.partition),
            (topic.as_str(), partition)
        );
    }

    #[test]
    fn each_run_takes_the_persons_actions_as_its_variant_has_them() {
        let mut main = session("acks=1|min.insync.replicas=1");
        main.run_to(1_000);
        let (mut runs, _) = build(&main);
        let write = produce(Acks::All, "x");
        main.act(&write).expect("a produce");
        assert_eq!(act(&mut runs, &write), None);
        let min_isr = Action::SetConfig {
            name: "min.insync.replicas".into(),
            value: watermark_engine::json::Value::from(3u64),
        };
        main.act(&min_isr).expect("a setting");
        act(&mut runs, &min_isr);
        assert_eq!(acks_sent(&main), vec![Acks::All]);
        assert_eq!(acks_sent(&runs[0].pg), vec![Acks::One], "acks=1 beside");
        assert_eq!(acks_sent(&runs[1].pg), vec![Acks::All]);
        let min = |pg: &Playground| pg.current().config().min_insync_replicas;
        assert_eq!(min(&main), 3);
        assert_eq!(
            min(&runs[0].pg),
            3,
            "a run that does not set it takes the change"
        );
        assert_eq!(
            min(&runs[1].pg),
            1,
            "the compared setting keeps its difference"
        );
        // Acting in the past discards the future in every run alike.
        main.run_to(4_000);
        follow_all(&mut runs, &main, false);
        main.seek(2_000);
        follow_all(&mut runs, &main, false);
        main.act(&write).expect("a produce in the past");
        act(&mut runs, &write);
        for r in &runs {
            assert_eq!(r.pg.max_time(), 2_000);
            assert!(!r.pg.is_scrubbed_back());
        }
    }

    #[test]
    fn each_side_by_side_preset_meets_every_runs_expectations_played_frame_by_frame() {
        // Every preset that compares runs (engine/tests/compare.rs names them).
        for (name, scenario) in watermark_engine::presets::PRESETS.iter().filter_map(|p| {
            let s = watermark_engine::presets::preset(p.name).expect(p.name);
            (!s.compare.is_empty()).then_some((p.name, s))
        }) {
            let straight = watermark_engine::check::check(&scenario).expect("checks");
            let mut main = Playground::new(scenario.clone()).expect(name);
            let (mut runs, note) = build(&main);
            assert_eq!(note, None);
            assert_eq!(runs.len(), scenario.compare.len());
            main.pause_at_captions = false;
            main.playing = true;
            main.set_speed(20.0);
            while main.max_time() < scenario.end_ms() {
                main.tick(16.0);
                follow_all(&mut runs, &main, false);
            }
            // The top run checks only its own; each run beside checks those naming it.
            let top = scenario.expect.iter().filter(|e| e.run.is_none()).count();
            assert_eq!(main.outcomes().iter().flatten().count(), top, "{name}");
            let mut met = main.outcomes().iter().flatten().filter(|o| o.met()).count();
            for (i, r) in runs.iter().enumerate() {
                let own = scenario
                    .expect
                    .iter()
                    .filter(|e| e.run == Some(i as u32 + 1))
                    .count();
                assert!(own > 0, "{name}: run {} has expectations", i + 1);
                assert_eq!(r.pg.outcomes().iter().flatten().count(), own, "{name}");
                met += r.pg.outcomes().iter().flatten().filter(|o| o.met()).count();
            }
            assert_eq!(
                met,
                straight.len(),
                "{name}: every expectation met, as watermark check finds"
            );
            assert!(straight.iter().all(|o| o.met()), "{name}");
            // The time bar shows every run's expectations, each run beside's named.
            let mut status = crate::state::tests_status(&main);
            add_marks(&runs, &mut status);
            assert_eq!(status.expect.len(), scenario.expect.len(), "{name}");
            assert!(status.expect.iter().all(|m| m.met == Some(true)), "{name}");
            let named = status
                .expect
                .iter()
                .filter(|m| m.text.starts_with("Beside ("))
                .count();
            assert_eq!(named, scenario.expect.len() - top, "{name}");
        }
    }

    /// The rows' texts.
    fn texts(rows: &[Row]) -> Vec<String> {
        rows.iter().map(|r| r.1.clone()).collect()
    }

    /// What the event logs hide by default (the main log's filters: broker lines).
    fn default_hidden() -> u64 {
        crate::panels::kind_bit(watermark_engine::event::TraceKind::Broker)
    }

    /// min-isr-side-by-side at `t` (the top run's minimum 2, the run beside's 1), the run
    /// beside brought to it as the page does.
    fn min_isr_at(t: u64) -> (Playground, Vec<Beside>) {
        let scenario = watermark_engine::presets::preset("min-isr-side-by-side").expect("preset");
        let mut main = Playground::new(scenario).expect("builds");
        main.pause_at_captions = false;
        let (mut runs, note) = build(&main);
        assert_eq!(note, None);
        main.run_to(t);
        follow_all(&mut runs, &main, false);
        (main, runs)
    }

    #[test]
    fn a_run_besides_event_log_is_its_own_and_cut_at_the_shown_moment() {
        let ok = "acks=all -> ok, offsets=3..5";
        let refused = "acks=all -> NOT_ENOUGH_REPLICAS";
        let (mut main, mut runs) = min_isr_at(11_500);
        let below = texts(&log_rows(&runs[0].pg, default_hidden()));
        let top = texts(&log_rows(&main, default_hidden()));
        // The write at 10 s: acknowledged by the leader alone below (minimum 1), refused on
        // top (minimum 2); each log has its own run's line only.
        assert!(below.iter().any(|l| l.contains(ok)), "{below:#?}");
        assert!(!below.iter().any(|l| l.contains(refused)), "{below:#?}");
        assert!(top.iter().any(|l| l.contains(refused)), "{top:#?}");
        assert!(!top.iter().any(|l| l.contains(ok)), "{top:#?}");
        // The run's own `offsets` read-out at 11 s: HW 6 below, 3 on top.
        assert!(
            below.contains(&"[  11.000s] orders:0:6".to_string()),
            "{below:#?}"
        );
        assert!(
            top.contains(&"[  11.000s] orders:0:3".to_string()),
            "{top:#?}"
        );
        // Newest first, as the page draws it, nothing after the shown moment, broker lines
        // hidden as the session's log hides them by default.
        let rows = log_rows(&runs[0].pg, default_hidden());
        assert!(rows.windows(2).all(|w| w[0].0 > w[1].0));
        assert!(rows.iter().all(|r| r.4 <= 11_500));
        assert!(rows
            .iter()
            .all(|r| r.3 != watermark_engine::event::TraceKind::Broker));
        assert!(log_rows(&runs[0].pg, 0)
            .iter()
            .any(|r| r.3 == watermark_engine::event::TraceKind::Broker));
        // Back to 10.005 s, before the answer: the run beside's log is cut there, exactly
        // the log of its run played straight to that moment.
        main.seek(10_005);
        follow_all(&mut runs, &main, false);
        let back = log_rows(&runs[0].pg, default_hidden());
        assert!(!texts(&back).iter().any(|l| l.contains(ok)), "{back:#?}");
        assert!(back.iter().all(|r| r.4 <= 10_005));
        let mut straight =
            Playground::new(main.to_scenario().variant(0).expect("variant")).expect("builds");
        straight.run_to(10_005);
        assert_eq!(back, log_rows(&straight, default_hidden()));
        // Forward again: the line is back.
        main.run_to(11_500);
        follow_all(&mut runs, &main, false);
        assert_eq!(log_rows(&runs[0].pg, default_hidden()), rows);
    }

    #[test]
    fn a_run_besides_log_shows_its_loss_lines() {
        // KIP-101's scenario with Kafka 4.x on top and Kafka 0.10.2 beside: only the run
        // beside loses an acknowledged record, and its log says so.
        let mut s = watermark_engine::presets::preset("kip-101-side-by-side").expect("preset");
        s.protocol = Protocol::Kafka4;
        s.compare = variants_of("protocol=pre-kip-101").expect("choice");
        s.expect.clear();
        let mut main = Playground::new(s).expect("builds");
        main.pause_at_captions = false;
        let (mut runs, _) = build(&main);
        main.run_to(20_000);
        follow_all(&mut runs, &main, false);
        let loss = |pg: &Playground| {
            log_rows(pg, default_hidden())
                .into_iter()
                .filter(|r| r.3 == watermark_engine::event::TraceKind::Loss)
                .collect::<Vec<_>>()
        };
        let lost = loss(&runs[0].pg);
        assert!(!lost.is_empty());
        assert!(lost
            .iter()
            .all(|r| r.2 == watermark_engine::event::Level::Error));
        assert!(lost[0].1.contains("lost"), "{lost:#?}");
        assert_eq!(loss(&main), vec![]);
    }

    #[test]
    fn a_run_besides_read_outs_are_built_from_its_own_snapshot() {
        let (main, runs) = min_isr_at(11_500);
        let sn = |pg: &Playground| pg.current().snapshot_tail(crate::geometry::SNAPSHOT_TAIL);
        let below = readouts_markup(&runs[0].pg, &sn(&runs[0].pg));
        let top = readouts_markup(&main, &sn(&main));
        assert!(
            below.starts_with(concat!(
                r#"<h3>kafka-get-offsets.sh</h3><pre class="offsets">orders:0:6</pre>"#,
                r#"<h3>leader-epoch-checkpoint</h3><pre class="epochs">broker 1: 0 1 0 0"#
            )),
            "{below}"
        );
        assert!(
            top.contains(r#"<pre class="offsets">orders:0:3</pre>"#),
            "{top}"
        );
        // The produce results: the leader alone acknowledged below, refused on top.
        assert!(
            below.contains(r#"<li class="info">[  10.010s] acks=all -&gt; ok, offsets=3..5 (waited 10 ms)</li>"#),
            "{below}"
        );
        assert!(
            top.contains(
                r#"<li class="error">[  10.010s] acks=all -&gt; NOT_ENOUGH_REPLICAS</li>"#
            ),
            "{top}"
        );
        assert!(
            below.contains("<dt>Produce ok / failed</dt><dd>2 / 0</dd>"),
            "{below}"
        );
        assert!(
            top.contains("<dt>Produce ok / failed</dt><dd>1 / 1</dd>"),
            "{top}"
        );
        // Kafka's metrics table of the run beside, and every text in it escaped (the patch
        // reads only the five entities).
        assert!(below.contains(&crate::panels::kafka_metrics_markup(
            &sn(&runs[0].pg).metrics.kafka
        )));
        assert!(crate::patch::pieces(&below).is_some());
    }

    #[test]
    fn every_choice_of_the_page_reads_back_as_itself() {
        let s = crate::model::default_scenario();
        let all = choices(&s, "");
        assert!(all.len() >= 6 + watermark_engine::protocol::PROTOCOLS.len() - 1);
        for (value, _) in &all {
            let v = variants_of(value).expect(value);
            assert_eq!(choice_of(&v), *value);
            let mut with = s.clone();
            with.compare = v;
            assert!(with.validate().is_ok(), "{value} builds");
        }
        // The minimum offered is the other one.
        assert!(all.iter().any(|(v, _)| v == "min.insync.replicas=1"));
        assert!(all
            .iter()
            .any(|(v, _)| v == "unclean.leader.election.enable=true"));
        assert!(
            !all.iter().any(|(v, _)| v == "protocol=kafka-4"),
            "not the run's own protocol"
        );
        // A compare the page does not offer (from a link) is offered as it is, selected.
        let mut linked = s.clone();
        linked.compare = variants_of("acks=1&replica.lag.time.max.ms=10000").expect("two changes");
        let m = options_markup(&linked, "");
        assert!(
            m.contains(r#"<option value="acks=1&amp;replica.lag.time.max.ms=10000" selected>"#),
            "{m}"
        );
    }

    #[test]
    fn differences_are_listed_with_the_broker_the_value_below_marked_and_the_tops_after() {
        assert_eq!(
            differences_markup(&[]),
            r#"<li class="same">Nothing differs from the top run at this moment.</li>"#
        );
        let d = |what: &str, broker, top: &str, other: &str| compare::Difference {
            what: what.into(),
            broker,
            top: top.into(),
            other: other.into(),
        };
        assert_eq!(
            differences_markup(&[
                d(
                    "leader",
                    None,
                    "Leader: 2 (leader epoch 3)",
                    "Leader: none (leader epoch 2)"
                ),
                d("process", Some(2), "running", "killed <9>"),
            ]),
            concat!(
                r#"<li class="same">The lanes of the brokers named below are outlined.</li>"#,
                r#"<li><span class="what">leader</span> <mark>Leader: none (leader epoch 2)</mark> <span class="top">(top: Leader: 2 (leader epoch 3))</span></li>"#,
                r#"<li><span class="what">process of broker 2</span> <mark>killed &lt;9&gt;</mark> <span class="top">(top: running)</span></li>"#
            )
        );
    }

    #[test]
    fn a_run_whose_brokers_differ_outlines_their_lanes_once_each() {
        let d = |broker| compare::Difference {
            what: "log end offset".into(),
            broker,
            top: "log end offset 1".into(),
            other: "log end offset 2".into(),
        };
        assert_eq!(section_class(&[]), "beside");
        assert_eq!(section_class(&[d(None)]), "beside");
        assert_eq!(
            section_class(&[d(Some(3)), d(None), d(Some(1)), d(Some(3))]),
            "beside d3 d1"
        );
    }

    #[test]
    fn a_choice_that_cannot_be_read_says_why() {
        assert_eq!(
            variants_of("acks=2").unwrap_err(),
            "acks: 2 is not 0, 1 or all"
        );
        assert_eq!(variants_of("acks").unwrap_err(), "not a change: acks");
        assert!(variants_of("protocol=kafka-3")
            .unwrap_err()
            .contains("kafka-3"));
        assert!(variants_of("min.insync.replicas=0")
            .unwrap_err()
            .contains("min.insync.replicas"));
        assert_eq!(
            variants_of("acks=1|acks=0|acks=all").unwrap_err(),
            "at most 2 runs beside"
        );
        assert_eq!(variants_of(""), Ok(vec![]));
    }

    /// Two topics on brokers 1, 2 and 3: `orders` with its own `min.insync.replicas=3` and
    /// `unclean.leader.election.enable=false`, `payments` with none (the broker's 2);
    /// broker 3 killed, then an acks=all write to `orders`.
    fn two_topics() -> Scenario {
        Scenario::from_json(
            r#"{"version":2,"brokers":3,
                "topics":[{"name":"orders","assignment":[[1,2,3]],
                           "configs":{"min.insync.replicas":3,"unclean.leader.election.enable":false}},
                          {"name":"payments","assignment":[[1,2,3]]}],
                "config":{"min.insync.replicas":2},
                "timeline":[{"at":100,"action":"kill","broker":3},
                            {"at":40000,"action":"produce","topic":"orders","values":["o"],"retries":0}]}"#,
        )
        .expect("valid")
    }

    #[test]
    fn a_topic_with_its_own_setting_is_offered_the_other_one_as_its_own() {
        let s = two_topics();
        let values = |topic: &str| -> Vec<String> {
            choices(&s, topic).into_iter().map(|(v, _)| v).collect()
        };
        let orders = choices(&s, "orders");
        assert!(orders.contains(&(
            "orders:min.insync.replicas=1".to_string(),
            "orders: min.insync.replicas=1".to_string()
        )));
        assert!(orders.contains(&(
            "orders:unclean.leader.election.enable=true".to_string(),
            "orders: unclean.leader.election.enable=true".to_string()
        )));
        assert!(!values("orders")
            .iter()
            .any(|v| v.starts_with("min.insync.replicas=")
                || v.starts_with("unclean.leader.election.enable=")));
        // payments sets neither: the broker's, the other of 2.
        let payments = values("payments");
        assert!(payments.contains(&"min.insync.replicas=1".to_string()));
        assert!(payments.contains(&"unclean.leader.election.enable=true".to_string()));
        assert!(!payments.iter().any(|v| v.contains(':')));
        // Every choice reads back as itself and runs.
        for topic in ["orders", "payments"] {
            for value in values(topic) {
                let v = variants_of(&value).expect(&value);
                assert_eq!(choice_of(&v), value);
                let mut with = s.clone();
                with.compare = v;
                assert!(with.validate().is_ok(), "{value} builds");
            }
        }
        // The choice changes what it says: orders' write, refused at its own minimum 3 with
        // 2 in sync, is acknowledged beside it; the broker's minimum would change nothing.
        let runs = |choice: &str| {
            let mut with = s.clone();
            with.compare = variants_of(choice).expect(choice);
            let top = watermark_engine::run(&with, true).expect("runs");
            let beside =
                watermark_engine::run(&with.variant(0).expect("a variant"), true).expect("runs");
            compare::differences(&top, &beside)
                .into_iter()
                .map(|d| (d.what, d.top, d.other))
                .filter(|(what, _, _)| what == "produce results")
                .collect::<Vec<_>>()
        };
        assert_eq!(
            runs("orders:min.insync.replicas=1"),
            [(
                "produce results".to_string(),
                "0 acknowledged, 1 failed, 0 pending".to_string(),
                "1 acknowledged, 0 failed, 0 pending".to_string()
            )]
        );
        assert_eq!(runs("min.insync.replicas=1"), []);
        // The top run is titled by the topic's own configs.
        let mut with = s.clone();
        with.compare = variants_of("orders:min.insync.replicas=1").expect("choice");
        assert_eq!(
            top_title(&with),
            "orders: min.insync.replicas=3,unclean.leader.election.enable=false"
        );
        assert_eq!(with.compare[0].title(), "orders: min.insync.replicas=1");
        // Selected when it is the scenario's.
        assert!(options_markup(&with, "orders")
            .contains(r#"<option value="orders:min.insync.replicas=1" selected>"#));
        // A topic variant from a link, of several configs, is offered as it is.
        with.compare =
            variants_of("orders:flush.ms=0&orders:min.insync.replicas=2").expect("from a link");
        assert_eq!(
            choice_of(&with.compare),
            "orders:min.insync.replicas=2&orders:flush.ms=0"
        );
        assert_eq!(
            top_title(&with),
            "orders: min.insync.replicas=3,unclean.leader.election.enable=false"
        );
        assert!(options_markup(&with, "orders").contains(
            r#"<option value="orders:min.insync.replicas=2&amp;orders:flush.ms=0" selected>orders: min.insync.replicas=2,flush.ms=0</option>"#
        ));
    }

    #[test]
    fn a_topic_choice_that_cannot_be_read_says_why() {
        assert_eq!(
            variants_of("orders:min.insync.replicas=0").unwrap_err(),
            "orders.min.insync.replicas: min.insync.replicas must be a whole number in 1..=2147483647, got 0"
        );
        assert_eq!(
            variants_of("orders:unclean.leader.election.enable=yes").unwrap_err(),
            "orders.unclean.leader.election.enable: invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(
            variants_of("orders:retention.ms=1").unwrap_err(),
            "orders: unknown field `retention.ms`, expected one of `min.insync.replicas`, `unclean.leader.election.enable`, `flush.messages`, `flush.ms`"
        );
    }

    #[test]
    fn the_top_run_is_titled_by_what_the_runs_beside_change() {
        let mut s = crate::model::default_scenario();
        s.timeline.push(watermark_engine::TimedAction {
            at: 0,
            action: produce(Acks::All, "a"),
        });
        s.compare = variants_of("acks=1&min.insync.replicas=1|protocol=no-elr").expect("choice");
        assert_eq!(
            top_title(&s),
            "acks=all, min.insync.replicas=2, protocol kafka-4"
        );
    }
}
