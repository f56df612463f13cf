//! The data-loss finder in the playground (issue 15, docs/history.md "The data-loss finder";
//! docs/ui.md "The data-loss finder"): "Find a way to lose acknowledged data" searches fault
//! schedules of the session's scenario, as `watermark explore` does, in a Web Worker, with
//! progress and Cancel, and opens the schedule it found at the moment of the loss.
//!
//! One wasm: the worker is a small module script, made here as a Blob URL, that imports the
//! page's own wasm-bindgen glue by its address (`import.meta.url` read inside the glue),
//! instantiates the page's compiled `WebAssembly.Module` (sent in the first message) and
//! calls [`finder_run`]. `main` does nothing where there is no `window` (the worker).
//! The worker posts `{tried, budget}` after each chunk of schedules, then the answer
//! (`done`), or `{error}`. Cancel terminates it.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use watermark_engine::explore::{self, Explorer, FaultKind, Options};
use watermark_engine::{Action, Scenario};

use crate::session::escape_attr;
use crate::state::Ctx;

/// The process and network faults: no broker loses data (`watermark explore --faults
/// freeze,kill,stop,slow,cut,cut_controller`).
pub const PROCESS_FAULTS: [FaultKind; 6] = [
    FaultKind::Freeze,
    FaultKind::Kill,
    FaultKind::Stop,
    FaultKind::Slow,
    FaultKind::Cut,
    FaultKind::CutController,
];

/// Schedules between two progress messages: the engine's chunk of a parallel search.
pub const CHUNK: u64 = explore::CHUNK;

/// A search's settings, as the form gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Search {
    pub budget: u64,
    pub seed: u64,
    pub max_faults: usize,
    /// Also power loss and lost disks (every kind, as `watermark explore` without
    /// `--faults`); else the process and network faults.
    pub data_loss: bool,
}

/// The form's fields as one text (`budget seed max_faults kinds`): the worker's message
/// carries it and [`read_search`] reads it on both sides.
pub fn search_text(budget: &str, seed: &str, max_faults: &str, kinds: &str) -> String {
    format!(
        "{} {} {} {}",
        budget.trim(),
        seed.trim(),
        max_faults.trim(),
        kinds.trim()
    )
}

/// Reads [`search_text`]'s text; an error names the field and its allowed range.
pub fn read_search(text: &str) -> Result<Search, String> {
    let mut f = text.split(' ');
    let mut number = |name: &str, min: u64, max: u64| -> Result<u64, String> {
        match f.next().and_then(|v| v.parse::<u64>().ok()) {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!(
                "{name}: a whole number from {min} to {max}, please"
            )),
        }
    };
    let budget = number("Schedules to try", 1, explore::MAX_BUDGET)?;
    let seed = number("Seed", 0, u64::MAX)?;
    let max_faults = number(
        "Most faults per schedule",
        1,
        explore::MAX_FAULTS_LIMIT as u64,
    )? as usize;
    let data_loss = match f.next() {
        Some("process") => false,
        Some("all") => true,
        _ => return Err("Faults: process or all".into()),
    };
    Ok(Search {
        budget,
        seed,
        max_faults,
        data_loss,
    })
}

/// A schedule that broke a property, as the page shows and opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The schedule's index in the search (`watermark explore`'s "schedule N").
    pub index: u64,
    /// The property's words (`Property::words`) and what happened.
    pub words: &'static str,
    pub detail: String,
    /// The shrunk schedule, one fault a line (`explore::describe_schedule`).
    pub schedule: Vec<String>,
    /// The written scenario (`Explorer::found_scenario`) and the moment of the break in it.
    pub scenario: Scenario,
    pub at_ms: u64,
}

/// A search's answer: how many schedules it tried and what it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub tried: u64,
    pub found: Option<Finding>,
}

/// The search `watermark explore` runs (the same schedules in the same order, the first that
/// breaks a property, then shrunk), in chunks of [`CHUNK`] schedules with `progress(tried)`
/// after each. Errors (the session's scenario, the settings) in words.
pub fn search(
    scenario: &Scenario,
    s: Search,
    progress: &mut dyn FnMut(u64),
) -> Result<Answer, String> {
    if !scenario
        .timeline
        .iter()
        .any(|a| matches!(a.action, Action::Produce(_)))
    {
        return Err(
            "The session writes no records, so there is nothing acknowledged to lose: produce some first (acks=1 or acks=all)."
                .into(),
        );
    }
    let kinds = (!s.data_loss).then_some(&PROCESS_FAULTS[..]);
    let ex = Explorer::new(scenario, s.max_faults, kinds).map_err(|e| e.to_string())?;
    let opts = Options {
        budget: s.budget,
        seed: s.seed,
        max_faults: s.max_faults,
    };
    explore::validate(&opts).map_err(|e| e.to_string())?;
    let mut start = 0;
    while start < s.budget {
        let end = (start + CHUNK).min(s.budget);
        if let Some((index, schedule, v)) = ex
            .search_range(s.seed, start..end)
            .map_err(|e| e.to_string())?
        {
            progress(index + 1);
            let (shrunk, v) = ex
                .shrink(&schedule, v.property)
                .map_err(|e| e.to_string())?;
            let scenario = ex.found_scenario(&shrunk, &v);
            return Ok(Answer {
                tried: index + 1,
                found: Some(Finding {
                    index,
                    words: v.property.words(),
                    detail: v.detail,
                    schedule: explore::describe_schedule(&shrunk),
                    at_ms: v.time_ms.min(scenario.end_ms()),
                    scenario,
                }),
            });
        }
        progress(end);
        start = end;
    }
    Ok(Answer {
        tried: s.budget,
        found: None,
    })
}

/// What the page says of an answer, as markup (the texts escaped).
pub fn answer_markup(a: &Answer, s: &Search) -> String {
    let kinds = if s.data_loss {
        "every fault kind, power loss and lost disks included"
    } else {
        "process and network faults"
    };
    match &a.found {
        None => format!(
            "<p class=\"finder-none\">No way to lose acknowledged data in {} schedules (seed {}).</p>\
             <p class=\"hint\">None of these {} schedules of up to {} faults ({kinds}) lost an acknowledged record, showed a consumer a record that was later rewritten, or left replicas that differ once healed. That is evidence, not proof: other schedules (a larger budget, another seed, more faults or kinds) may still lose data.</p>",
            a.tried, s.seed, a.tried, s.max_faults
        ),
        Some(f) => {
            let mut lines = String::new();
            for l in &f.schedule {
                lines.push_str(&format!("<li>{}</li>", escape_attr(l)));
            }
            format!(
                "<p class=\"finder-found\"><strong>Found, schedule {} of seed {} (tried {}): {}.</strong> {}.</p>\
                 <p>The faults, shrunk to {}:</p><ol class=\"finder-schedule\">{lines}</ol>\
                 <button data-act=\"finder-open\">Open it at the moment of loss ({})</button>",
                f.index,
                s.seed,
                a.tried,
                escape_attr(f.words),
                escape_attr(&f.detail),
                f.schedule.len(),
                crate::geometry::format_clock(f.at_ms)
            )
        }
    }
}

/// The progress bar and line (Cancel is a button of its own, which stays while this
/// changes).
pub fn progress_markup(tried: u64, budget: u64) -> String {
    format!(
        "<progress max=\"{budget}\" value=\"{tried}\" aria-label=\"Search progress\"></progress> \
         <span class=\"finder-tried\">Tried {tried} of {budget} schedules</span>"
    )
}

// ---- The worker's side ----------------------------------------------------------------

#[wasm_bindgen]
extern "C" {
    /// The worker's `postMessage` (its global scope's).
    #[wasm_bindgen(js_name = postMessage)]
    fn post_message(message: &JsValue);
    /// The glue's own address: `import.meta.url` read in the glue, which is what the worker
    /// imports (it holds after the release build renames the glue's imports).
    #[wasm_bindgen(thread_local_v2, js_namespace = ["import", "meta"], js_name = url)]
    static GLUE_URL: String;
}

/// A JavaScript object of these fields.
fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in fields {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

fn field(data: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(data, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// Runs in the worker: searches `scenario_json` with the settings' text ([`search_text`]),
/// posting progress and then the answer or an error.
#[wasm_bindgen]
pub fn finder_run(scenario_json: String, settings: String) {
    let result = Scenario::from_json(&scenario_json)
        .map_err(|e| e.to_string())
        .and_then(|scn| {
            let s = read_search(&settings)?;
            let budget = s.budget as f64;
            let a = search(&scn, s, &mut |tried| {
                post_message(&object(&[
                    ("tried", (tried as f64).into()),
                    ("budget", budget.into()),
                ]))
            })?;
            Ok((a, s))
        });
    let message = match result {
        Err(e) => object(&[("error", e.into())]),
        Ok((a, s)) => {
            let mut fields = vec![
                ("done", JsValue::TRUE),
                ("tried", (a.tried as f64).into()),
                ("markup", answer_markup(&a, &s).into()),
            ];
            if let Some(f) = a.found {
                fields.push(("scenario", f.scenario.to_json_pretty().into()));
                fields.push(("at_ms", (f.at_ms as f64).into()));
            }
            object(&fields)
        }
    };
    post_message(&message);
}

// ---- The page's side -------------------------------------------------------------------

/// The search under way, and the schedule found last.
#[derive(Default)]
struct Run {
    worker: Option<web_sys::Worker>,
    /// The worker's message handler, alive until the next search (a terminated worker
    /// posts nothing more).
    _handler: Option<Closure<dyn FnMut(JsValue)>>,
    url: String,
    tried: u64,
    /// The found scenario's JSON and the moment of the break.
    found: Option<(String, u64)>,
}

thread_local! {
    static RUN: std::cell::RefCell<Run> = std::cell::RefCell::new(Run::default());
}

/// Ends the worker (if one runs) and forgets it; how many schedules it had tried. Its
/// message handler is kept until the next search replaces it: `stop` runs inside it too.
fn stop() -> u64 {
    RUN.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(w) = r.worker.take() {
            w.terminate();
        }
        if !r.url.is_empty() {
            let _ = web_sys::Url::revoke_object_url(&r.url);
            r.url.clear();
        }
        r.tried
    })
}

/// The worker's script: imports the glue at `glue` and runs the search it is sent.
fn worker_script(glue: &str) -> String {
    // The glue's address is a URL: it holds no `"` or `\` (they are percent-encoded).
    format!(
        "import init,{{finder_run as r}}from\"{glue}\";onmessage=async({{data:d}})=>{{try{{await init({{module_or_path:d.m}});r(d.s,d.o)}}catch(x){{postMessage({{error:String(x)}})}}}}"
    )
}

fn start(
    ctx: Ctx,
    shown: RwSignal<Option<String>>,
    progress: RwSignal<Option<String>>,
    root: &web_sys::Element,
) {
    use crate::panels::control_value;
    let text = search_text(
        &control_value(root, "[aria-label='Schedules to try']"),
        &control_value(root, "[aria-label=Seed]"),
        &control_value(root, "[aria-label='Most faults per schedule']"),
        &control_value(root, "[aria-label='Fault kinds']"),
    );
    let fail = |e: String| {
        shown.set(Some(format!(
            "<p class=\"finder-error\">Not started: {}</p>",
            escape_attr(&e)
        )))
    };
    let s = match read_search(&text) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let scenario = ctx.pg.with_value(|pg| pg.to_scenario());
    stop();
    let worker = (|| -> Result<(web_sys::Worker, String), JsValue> {
        let src = js_sys::Array::of1(&worker_script(&GLUE_URL.with(String::clone)).into());
        let bag = web_sys::BlobPropertyBag::new();
        bag.set_type("text/javascript");
        let blob = web_sys::Blob::new_with_str_sequence_and_options(&src, &bag)?;
        let url = web_sys::Url::create_object_url_with_blob(&blob)?;
        let opts = web_sys::WorkerOptions::new();
        opts.set_type(web_sys::WorkerType::Module);
        Ok((web_sys::Worker::new_with_options(&url, &opts)?, url))
    })();
    let Ok((worker, url)) = worker else {
        return fail("this browser could not start a Web Worker".into());
    };
    // One handler for its messages and its `error` event (its script or the glue did not
    // load), which has no data.
    let handler = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
        let mut data = field(&ev, "data");
        if data.is_undefined() {
            let why = field(&ev, "message")
                .as_string()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "the worker could not load the page's code".into());
            data = object(&[("error", why.into())]);
        }
        on_message(shown, progress, &s, &data)
    });
    worker.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    worker.set_onerror(Some(handler.as_ref().unchecked_ref()));
    worker
        .post_message(&object(&[
            ("m", wasm_bindgen::module()),
            ("s", scenario.to_json_pretty().into()),
            ("o", text.into()),
        ]))
        .ok();
    RUN.with(|r| {
        *r.borrow_mut() = Run {
            worker: Some(worker),
            _handler: Some(handler),
            url,
            tried: 0,
            found: None,
        }
    });
    shown.set(None);
    progress.set(Some(progress_markup(0, s.budget)));
}

fn on_message(
    shown: RwSignal<Option<String>>,
    progress: RwSignal<Option<String>>,
    s: &Search,
    data: &JsValue,
) {
    let number = |name: &str| field(data, name).as_f64().unwrap_or(0.0) as u64;
    if let Some(e) = field(data, "error").as_string() {
        stop();
        progress.set(None);
        shown.set(Some(format!(
            "<p class=\"finder-error\">The search stopped: {}</p>",
            escape_attr(&e)
        )));
    } else if field(data, "done").is_truthy() {
        let found = field(data, "scenario")
            .as_string()
            .map(|json| (json, number("at_ms")));
        stop();
        RUN.with(|r| r.borrow_mut().found = found);
        progress.set(None);
        shown.set(field(data, "markup").as_string());
    } else {
        let tried = number("tried");
        RUN.with(|r| r.borrow_mut().tried = tried);
        progress.set(Some(progress_markup(tried, s.budget)));
    }
}

/// Replaces the session with the found scenario (Undo brings the old one back) and shows
/// the moment of the break, paused.
fn open(ctx: Ctx, undo: crate::undo::Undo) {
    let Some((json, at)) = RUN.with(|r| r.borrow().found.clone()) else {
        return;
    };
    match Scenario::from_json(&json) {
        Ok(s) => undo.discarding(ctx, move || {
            let note = format!(
                "Opened the schedule the finder found, at the moment of the loss ({}).",
                crate::geometry::format_clock(at)
            );
            ctx.restart(s, note);
            ctx.with_pg(|pg| {
                pg.run_to(at);
                pg.playing = false;
            });
        }),
        Err(e) => ctx.notice.set(Some(format!("Not done: {e}"))),
    }
}

/// "Find a way to lose acknowledged data": the settings, the button, and what the search
/// says (progress with Cancel, the answer with Open it, or an error). Controls are markup
/// with `data-act` (docs/ui.md, "Controls as markup").
#[component]
pub fn Finder(ctx: Ctx, undo: crate::undo::Undo) -> impl IntoView {
    // What the search said (a live region: an answer, an error, a cancel), and its
    // progress while it runs (not live: it changes many times a second). Option<String>,
    // the type of another signal (each signal type is code of its own).
    let shown = RwSignal::new(None::<String>);
    let progress = RwSignal::new(None::<String>);
    let on_click = move |ev: leptos::ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        match crate::panels::clicked_act(&ev).as_deref() {
            Some("finder-find") => {
                if let Some(root) = ev
                    .current_target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                {
                    start(ctx, shown, progress, &root);
                }
            }
            Some("finder-cancel") => {
                let tried = stop();
                progress.set(None);
                shown.set(Some(format!(
                    "<p class=\"finder-cancelled\">Search cancelled after {tried} schedules.</p>"
                )));
            }
            Some("finder-open") => open(ctx, undo),
            _ => {}
        }
    };
    view! {
        // Closed until opened: open, it would push the read-outs below the side panel
        // further down the page on narrow screens.
        <details class="finder" on:click=on_click>
            <summary>"Data-loss finder"</summary>
            <p class="hint">"Searches fault schedules of this session's writes, as "<code>"watermark explore"</code>" does: its faults are replaced by each schedule, then every fault heals and the cluster has time to converge. The first schedule that loses an acknowledged record, rewrites a record a consumer read, or leaves replicas differing is shrunk and can be opened."</p>
            <label>"Schedules to try "<input type="number" min="1" max="10000000" value="200" aria-label="Schedules to try" />" (1 to 10 000 000)"</label>
            <label>"Seed "<input type="number" min="0" value="1" aria-label="Seed" /></label>
            <label>"Most faults per schedule "<input type="number" min="1" max="8" value="4" aria-label="Most faults per schedule" />" (1 to 8)"</label>
            <label>"Faults "
                <select aria-label="Fault kinds">
                    <option value="process">"process and network (freeze, kill, stop, slow, cut links)"</option>
                    <option value="all">"also power loss and lost disks"</option>
                </select>
            </label>
            <button data-act="finder-find" prop:disabled=move || progress.with(Option::is_some)>"Find a way to lose acknowledged data"</button>
            " "
            <button data-act="finder-cancel" prop:hidden=move || progress.with(Option::is_none)>"Cancel"</button>
            <div class="finder-progress" inner_html=move || progress.get().unwrap_or_default()></div>
            <div class="finder-status" role="status" inner_html=move || shown.get().unwrap_or_default()></div>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_read_back_and_name_field_and_range() {
        let t = search_text(" 60", "1 ", "4", "process");
        assert_eq!(t, "60 1 4 process");
        assert_eq!(
            read_search(&t),
            Ok(Search {
                budget: 60,
                seed: 1,
                max_faults: 4,
                data_loss: false
            })
        );
        assert!(read_search("5 0 8 all").is_ok_and(|s| s.data_loss && s.max_faults == 8));
        assert_eq!(
            read_search("0 1 4 process"),
            Err("Schedules to try: a whole number from 1 to 10000000, please".into())
        );
        assert_eq!(
            read_search("10 x 4 process"),
            Err(format!(
                "Seed: a whole number from 0 to {}, please",
                u64::MAX
            ))
        );
        assert_eq!(
            read_search("10 1 9 process"),
            Err("Most faults per schedule: a whole number from 1 to 8, please".into())
        );
        assert_eq!(
            read_search("10 1 4 some"),
            Err("Faults: process or all".into())
        );
    }

    #[test]
    fn the_worker_imports_the_glue_by_its_address() {
        assert_eq!(
            worker_script("http://h/sub/watermark-web-1.js"),
            "import init,{finder_run as r}from\"http://h/sub/watermark-web-1.js\";onmessage=async({data:d})=>{try{await init({module_or_path:d.m});r(d.s,d.o)}catch(x){postMessage({error:String(x)})}}"
        );
    }

    #[test]
    fn a_session_without_writes_has_nothing_to_lose() {
        let s = crate::model::default_scenario();
        let r = search(&s, read_search("5 1 4 process").unwrap(), &mut |_| {});
        assert!(r.is_err_and(|e| e.contains("nothing acknowledged to lose")));
    }

    #[test]
    fn progress_and_answers_in_words() {
        assert_eq!(
            progress_markup(8, 200),
            "<progress max=\"200\" value=\"8\" aria-label=\"Search progress\"></progress> <span class=\"finder-tried\">Tried 8 of 200 schedules</span>"
        );
        let s = read_search("40 3 2 process").unwrap();
        let none = answer_markup(
            &Answer {
                tried: 40,
                found: None,
            },
            &s,
        );
        assert!(
            none.contains("No way to lose acknowledged data in 40 schedules (seed 3)."),
            "{none}"
        );
        assert!(
            none.contains("up to 2 faults (process and network faults)"),
            "{none}"
        );
        assert!(none.contains("evidence, not proof"), "{none}");
    }

    /// The explore tests' cluster (engine/tests/explore.rs): three brokers, RF 3, two
    /// records a second with `acks` for 10 s, a consume every 2 s, and a kill the finder drops.
    fn writes(acks: &str, min_isr: u32) -> Scenario {
        let mut timeline = vec![];
        for i in 0..10 {
            timeline.push(format!(
                r#"{{"at": {}, "action": "produce", "acks": "{acks}", "prefix": "v{i}-", "count": 2}}"#,
                i * 1000
            ));
            if i % 2 == 1 {
                timeline.push(format!(
                    r#"{{"at": {}, "action": "consume"}}"#,
                    i * 1000 + 500
                ));
            }
        }
        timeline.push(r#"{"at": 4000, "action": "kill", "broker": 2}"#.to_string());
        let json = format!(
            r#"{{"version": 1, "title": "t", "topic": "t", "brokers": 3, "replication_factor": 3,
                "config": {{"min.insync.replicas": {min_isr}}}, "timeline": [{}], "end_ms": 12000}}"#,
            timeline.join(",")
        );
        Scenario::from_json(&json).expect("the test scenario parses")
    }

    #[test]
    fn the_page_finds_what_watermark_explore_finds() {
        let scn = writes("1", 1);
        let s = read_search("60 1 4 process").unwrap();
        let mut seen = vec![];
        let a = search(&scn, s, &mut |t| seen.push(t)).expect("search");
        // The engine's whole search, as `watermark explore --faults
        // freeze,kill,stop,slow,cut,cut_controller --seed 1 --budget 60` runs it.
        let ex = Explorer::new(&scn, 4, Some(&PROCESS_FAULTS)).expect("explorer");
        let r = ex
            .search(Options {
                budget: 60,
                seed: 1,
                max_faults: 4,
            })
            .expect("engine search");
        let e = r.found.expect("the engine finds a loss");
        let f = a.found.expect("the page finds a loss");
        assert_eq!((a.tried, f.index), (r.tried, e.index));
        assert_eq!(f.words, e.shrunk_violation.property.words());
        assert_eq!(f.detail, e.shrunk_violation.detail);
        assert_eq!(f.schedule, explore::describe_schedule(&e.shrunk));
        assert_eq!(
            f.scenario,
            ex.found_scenario(&e.shrunk, &e.shrunk_violation)
        );
        assert_eq!(f.at_ms, e.shrunk_violation.time_ms.min(f.scenario.end_ms()));
        // Progress after each chunk of 8, then the found one's count.
        let chunks: Vec<u64> = (1..=e.index / CHUNK).map(|c| c * CHUNK).collect();
        assert_eq!(seen, [chunks, vec![e.index + 1]].concat());
        // The moment of the loss is in the opened scenario, with a note saying so.
        assert!(f.scenario.timeline.iter().any(|t| t.at == f.at_ms
            && matches!(&t.action, Action::Note { text } if text.starts_with("Here "))));
    }

    #[test]
    fn nothing_found_counts_the_whole_budget() {
        // acks=all, min.insync.replicas 2 (the explore tests: nothing in 400 schedules).
        let scn = writes("all", 2);
        let mut seen = vec![];
        let a = search(&scn, read_search("20 1 4 process").unwrap(), &mut |t| {
            seen.push(t)
        })
        .expect("search");
        assert_eq!(
            a,
            Answer {
                tried: 20,
                found: None
            }
        );
        assert_eq!(seen, [8, 16, 20]);
    }
}
