//! Sharing and sessions in the page: the Share panel (link and embed snippet), presets with
//! their own links and step-through captions, Reset, export and import of scenario files,
//! the transcript download, local storage, and the embed's postMessage protocol
//! (docs/embedding.md).

use leptos::prelude::*;
use std::fmt::Write as _;
use wasm_bindgen::{JsCast, JsValue};
use watermark_engine::{share, Scenario};

use crate::geometry;
use crate::model::default_scenario;
use crate::session::{self, EmbedOptions, PresetInfo, CATALOG, STORAGE_KEY, TIME_KEY};
use crate::state::Ctx;

/// The page address without query or fragment (origin + path).
pub fn page_base() -> String {
    web_sys::window()
        .map(|w| {
            let l = w.location();
            format!(
                "{}{}",
                l.origin().unwrap_or_default(),
                l.pathname().unwrap_or_default()
            )
        })
        .unwrap_or_default()
}

pub fn page_search_and_hash() -> (String, String) {
    web_sys::window()
        .map(|w| {
            let l = w.location();
            (l.search().unwrap_or_default(), l.hash().unwrap_or_default())
        })
        .unwrap_or_default()
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

pub fn stored_session() -> Option<String> {
    storage().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
}

/// How far the stored session had run, as saved (parsed by `session::restored_time`).
pub fn stored_time() -> Option<String> {
    storage().and_then(|s| s.get_item(TIME_KEY).ok().flatten())
}

/// Saves the session: its scenario and inputs as a link payload, and how far it has run (not
/// in an embed, which must not touch its host's storage). Encoding a long session takes
/// milliseconds (JSON, deflate), so this runs after actions, not while playing.
pub fn save_session(ctx: Ctx) {
    ctx.set_dirty(false);
    if ctx.embed {
        return;
    }
    let (link, head) = ctx
        .pg
        .with_value(|pg| (share::encode(&pg.to_scenario()), pg.max_time()));
    if let Some(s) = storage() {
        let _ = s.set_item(STORAGE_KEY, &link);
        let _ = s.set_item(TIME_KEY, &head.to_string());
        ctx.set_stored_is_current(true);
    }
}

/// Saves the session if it moved since it was last saved: only how far it has run when the
/// stored scenario and inputs are already this playground's (every action saves them), the
/// whole session otherwise. Opening a link and leaving without doing anything keeps the
/// stored session as it was.
pub fn save_if_dirty(ctx: Ctx) {
    if !ctx.dirty() {
        return;
    }
    if !ctx.stored_is_current() {
        save_session(ctx);
        return;
    }
    ctx.set_dirty(false);
    if ctx.embed {
        return;
    }
    let head = ctx.pg.with_value(|pg| pg.max_time());
    if let Some(s) = storage() {
        let _ = s.set_item(TIME_KEY, &head.to_string());
    }
}

fn clear_session(ctx: Ctx) {
    ctx.set_stored_is_current(false);
    if let Some(s) = storage() {
        let _ = s.remove_item(STORAGE_KEY);
        let _ = s.remove_item(TIME_KEY);
    }
}

/// Fetches the file of the preset `info` (`presets/NAME.json`, relative to the page, so it
/// comes from the page's own folder, embedded or not): its text, or why there is none (the
/// HTTP status, or the browser's error). The query names the digest the page expects, so a
/// browser never answers from a cached file of another build.
pub async fn fetch_preset(info: &'static PresetInfo) -> Result<String, String> {
    use wasm_bindgen_futures::JsFuture;
    let error = |e: JsValue| {
        e.dyn_ref::<js_sys::Error>().map_or_else(
            || "the request failed".to_string(),
            |e| String::from(e.message()),
        )
    };
    let window = web_sys::window().ok_or("no window")?;
    let url = format!("{}?v={:016x}", session::preset_path(info.name), info.digest);
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(&url))
        .await
        .map_err(error)?
        .unchecked_into();
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let text = JsFuture::from(response.text().map_err(error)?)
        .await
        .map_err(error)?;
    text.as_string()
        .ok_or_else(|| "the file is not text".into())
}

/// Marks the app as loading (`data-wasm="loading"`) or ready again, at once (not on the
/// next render), so that whoever waits for the ready app waits for the preset too.
fn set_loading(loading: bool) {
    if let Some(app) = crate::panels::page_element(".app") {
        let _ = app.set_attribute("data-wasm", if loading { "loading" } else { "ready" });
    }
}

/// Offers `text` as a file download.
fn download(filename: &str, text: &str, mime: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    // The link's attributes through `set_attribute`, which the page uses anyway (the
    // anchor's own setters are two more imports in the glue).
    if let Ok(a) = document.create_element("a") {
        let _ = a.set_attribute("href", &url);
        let _ = a.set_attribute("download", filename);
        a.unchecked_into::<web_sys::HtmlElement>().click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Copies `text` and says how it went in `status`: "Copied." when the browser took it, or
/// what to do instead when it refused (no permission, or no secure context). The status is
/// shown while the text it speaks of is the one shown (see `SessionPanel`).
fn copy_to_clipboard(text: String, status: Copied) {
    let Some(w) = web_sys::window() else { return };
    let promise = w.navigator().clipboard().write_text(&text);
    leptos::task::spawn_local(async move {
        let copied = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
        status.refused.set(!copied);
        status.text.set(Some(text));
    });
}

/// What a copy button last copied, and whether the browser refused it: signals of types the
/// page has (each signal type is code of its own).
#[derive(Clone, Copy)]
struct Copied {
    text: RwSignal<Option<String>>,
    refused: RwSignal<bool>,
}

impl Copied {
    fn new() -> Self {
        Copied {
            text: RwSignal::new(None),
            refused: RwSignal::new(false),
        }
    }
}

/// A caption as shown: once the person has acted (at `first_input_ms`), the run is no
/// longer the scenario's, and a caption written for a moment from then on describes the
/// scenario's own run, not this one. It says so rather than pass for true.
pub fn caption_text(caption: Option<(u64, String)>, first_input_ms: Option<u64>) -> (bool, String) {
    match (caption, first_input_ms) {
        (None, Some(t)) => (
            true,
            format!(
                "You left the scenario's script at {}: its steps describe its own run, not this one.",
                geometry::format_clock(t)
            ),
        ),
        (None, None) => (false, "Press Next step to walk through this scenario.".into()),
        (Some((at, text)), Some(t)) if at >= t => (
            true,
            format!(
                "Off script since {} (you acted), so this step describes the scenario's own run, not this one: {text}",
                geometry::format_clock(t)
            ),
        ),
        (Some((_, text)), _) => (false, text),
    }
}

#[component]
pub fn SessionPanel(ctx: Ctx) -> impl IntoView {
    let open = RwSignal::new(false);
    let autoplay = RwSignal::new(false);
    let controls = RwSignal::new(true);
    // A u64, the type of another signal (each signal type is code of its own).
    let height = RwSignal::new(480u64);
    let fit = RwSignal::new(true);
    // The start time's text as typed, read when the snippet is made: an Option<String>, the
    // type of another signal (each signal type is code of its own).
    let start = RwSignal::new(None::<String>);
    let link_copied = Copied::new();
    let snippet_copied = Copied::new();
    let base = page_base();
    let base_link = base.clone();
    let link = Memo::new(move |_| {
        if !open.get() {
            return String::new();
        }
        let t = ctx.clock.with(|c| c.now);
        // An action taken while paused changes the session but not the clock: the snapshot
        // changes with it.
        ctx.snap.track();
        ctx.pg
            .with_value(|pg| session::share_link(&base_link, &pg.to_scenario(), t))
    });
    let base_embed = base.clone();
    let snippet = Memo::new(move |_| {
        if !open.get() {
            return String::new();
        }
        let now = ctx.clock.with(|c| c.now);
        ctx.snap.track();
        let o = EmbedOptions {
            autoplay: autoplay.get(),
            start_ms: start.with(|t| t.as_deref().and_then(|t| t.parse().ok()).unwrap_or(now)),
            controls: controls.get(),
            height: u32::try_from(height.get()).unwrap_or(480),
            fit: fit.get(),
        };
        ctx.pg
            .with_value(|pg| session::embed_snippet(&base_embed, &pg.to_scenario(), &o))
    });
    // A confirmation speaks of the text that was copied: it shows while that text is the one
    // shown (no effect to clear it: an effect is code of its own).
    let confirmation = move |copied: Copied, text: Memo<String>| {
        let shown = copied
            .text
            .with(|c| c.as_ref().is_some_and(|t| text.with(|x| x == t)));
        let said = match (shown, copied.refused.get()) {
            (false, _) => "",
            (true, false) => "Copied.",
            (true, true) => "The browser did not allow copying: select the text and press Ctrl+C.",
        };
        // A String, the type of the page's other texts (each text type is code of its own).
        said.to_string()
    };
    let reset = move || {
        ctx.restart(
            default_scenario(),
            "Started over with the default scenario.".into(),
        );
        // Reset forgets the session: the next reload opens the default scenario.
        clear_session(ctx);
    };
    let export = move || {
        let json = ctx.pg.with_value(|pg| pg.to_scenario().to_json_pretty());
        download("watermark-scenario.json", &json, "application/json");
    };
    let transcript = move || {
        let text = ctx.pg.with_value(|pg| pg.current().transcript().join("\n"));
        download(
            "watermark-transcript.txt",
            &format!("{text}\n"),
            "text/plain",
        );
    };
    let import = move |ev: web_sys::Event| {
        let Some(input) = crate::panels::event_input(&ev) else {
            return;
        };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        if file.size() > 4.0 * 1024.0 * 1024.0 {
            ctx.notice.set(Some(
                "Not imported: a scenario file may be at most 4 MiB.".into(),
            ));
            return;
        }
        let promise = file.text();
        leptos::task::spawn_local(async move {
            let text = wasm_bindgen_futures::JsFuture::from(promise)
                .await
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            match Scenario::from_json(&text) {
                Ok(s) => {
                    let title = if s.title.is_empty() {
                        "the scenario".to_string()
                    } else {
                        format!("“{}”", s.title)
                    };
                    ctx.restart(s, format!("Imported {title}."));
                }
                Err(e) => ctx.notice.set(Some(format!("Not imported: {e}"))),
            }
        });
    };
    // A session that is a preset, unchanged (opened with ?preset=NAME, or a link or stored
    // session of one), shows that preset in the picker.
    let current = ctx
        .pg
        .with_value(|pg| session::unchanged_preset(&pg.to_scenario()));
    // The chosen preset's index in CATALOG: a u64, the type of another signal (each signal
    // type is code of its own).
    let chosen = RwSignal::new(preset_index(current.unwrap_or_default()));
    // The picker names the chosen preset while the session is still it, by its title:
    // Reset, an import or a found scenario put another in its place, and it names none.
    let chosen_preset = move || {
        usize::try_from(chosen.get())
            .ok()
            .and_then(|i| CATALOG.get(i))
            .filter(|p| ctx.title.with(|t| t == p.title))
    };
    // Choosing a preset opens it, once its file is fetched: meanwhile the session stays as
    // it was and the notice says what loads. A preset chosen later wins over one still
    // loading.
    let open_preset = move |ev: web_sys::Event| {
        let name = event_target_value(&ev);
        let Ok(info) = session::preset_info(&name) else {
            return;
        };
        let before = chosen.get_untracked();
        let index = preset_index(info.name);
        chosen.set(index);
        set_loading(true);
        ctx.notice.set(Some(session::preset_loading(info)));
        let picker = ev.target();
        leptos::task::spawn_local(async move {
            let fetched = fetch_preset(info).await;
            if chosen.get_untracked() != index {
                return;
            }
            match fetched.and_then(|text| session::read_preset(info, &text)) {
                Ok(s) => {
                    let pauses = ctx.pg.with_value(|pg| pg.pause_at_captions);
                    let play = if pauses {
                        "Play it (it pauses at each step)"
                    } else {
                        "Play it"
                    };
                    ctx.restart(
                        s,
                        format!(
                            "Opened the preset “{}”. {play}, or step through it with Next step.",
                            info.title
                        ),
                    );
                }
                Err(why) => {
                    // The picker goes back to what it showed: the session did not change.
                    chosen.set(before);
                    if let Some(picker) = &picker {
                        let _ = js_sys::Reflect::set(
                            picker,
                            &JsValue::from_str("value"),
                            &JsValue::from_str(preset_name(before)),
                        );
                    }
                    ctx.notice.set(Some(format!(
                        "{} Your session is as it was; Reset opens the default scenario.",
                        session::preset_failed(info, &why)
                    )));
                }
            }
            set_loading(false);
        });
    };
    let on_embed_option = move |ev: web_sys::Event| {
        let Some(input) = crate::panels::event_input(&ev) else {
            return;
        };
        match input.get_attribute("aria-label").as_deref() {
            Some("Start playing") => autoplay.set(input.checked()),
            Some("Show time controls") => controls.set(input.checked()),
            Some("Size to its content") => fit.set(input.checked()),
            Some("Start time") => start.set(Some(input.value())),
            Some("Height") => height.set(input.value().parse::<u32>().map_or(480, u64::from)),
            _ => {}
        }
    };
    let base_presets = base.clone();
    view! {
        <section class="session" aria-labelledby="session-h">
            <h2 id="session-h">"Scenarios"</h2>
            <label class="preset-pick">
                "Preset "
                // The options as markup, the chosen one selected: only the picker itself
                // changes the choice afterwards.
                <select aria-label="Preset" on:change=open_preset inner_html=presets_markup(preset_name(chosen.get_untracked()))
                    prop:value=move || chosen_preset().map_or("", |p| p.name).to_string()></select>
            </label>
            // The description and source as escaped markup (their line break is an element of
            // its own type otherwise).
            // A session that is no preset (the default one, a link's, a stored one) names none.
            {move || chosen_preset().map(|s| view! {
                <p class="preset-about" inner_html=format!(
                    "{}<br><small>Source: {}</small>",
                    session::escape_attr(s.description),
                    session::escape_attr(s.source)
                )></p>
                <div class="row">
                    <a class="preset-link" href=format!("{}?preset={}", base_presets, s.name)>"Link to this preset"</a>
                </div>
            }.into_any())}
            // One click handler for the row's buttons (each names its action in `data-act`), and
            // one change handler for its file field.
            <div class="row" on:click=move |ev| match crate::panels::clicked_act(&ev).as_deref() {
                Some("reset") => reset(),
                Some("export") => export(),
                Some("transcript") => transcript(),
                _ => {}
            } on:change=import>
                <button aria-label="Share" aria-expanded=move || open.get().to_string() on:click=move |_| {
                    open.update(|o| *o = !*o);
                    // A panel opened again has copied nothing yet.
                    link_copied.text.set(None);
                    snippet_copied.text.set(None);
                }>"Share"</button>
                <button aria-label="Reset" data-act="reset">"Reset"</button>
                <button aria-label="Export scenario" data-act="export">"Export scenario"</button>
                <label class="file">"Import JSON " <input type="file" accept="application/json,.json" aria-label="Import scenario" /></label>
                <button aria-label="Download transcript" data-act="transcript">"Transcript"</button>
            </div>
            {move || open.get().then(|| view! {
                // One click handler for the copy buttons (each names its action in
                // `data-act`) and one input handler for the embed's options: the controls are
                // then markup, far less wasm than a view with handlers each.
                <div class="share-panel" on:click=move |ev| match crate::panels::clicked_act(&ev).as_deref() {
                    Some("copy-link") => copy_to_clipboard(link.get_untracked(), link_copied),
                    Some("copy-snippet") => copy_to_clipboard(snippet.get_untracked(), snippet_copied),
                    _ => {}
                }>
                    <label for="share-link">"Link to this moment "<small>{move || format!("({} characters)", link.with(|l| l.len()))}</small></label>
                    // Properties are set from closures, not from the memo itself: one property
                    // type for the page (each type of one is a family of functions); and
                    // `readonly=""`, a string as the other static attributes are, not a bool.
                    <textarea id="share-link" readonly="" rows="3" aria-label="Share link" prop:value=move || link.get()></textarea>
                    <button aria-label="Copy link" data-act="copy-link">"Copy link"</button>
                    <span class="copied" role="status" data-testid="link-copied">{move || confirmation(link_copied, link)}</span>
                    <ScenarioWords ctx=ctx />
                    <fieldset on:input=on_embed_option>
                        <legend>"Embed"</legend>
                        // The boxes as the options stand when the panel opens; only they
                        // change the options afterwards.
                        <label class="check" inner_html=check_markup("Start playing", autoplay.get_untracked())></label>
                        <label class="check" inner_html=check_markup("Show time controls", controls.get_untracked())></label>
                        <label>"Start at (ms) "<input type="number" min="0" aria-label="Start time" placeholder="now" /></label>
                        <label class="check" inner_html=check_markup("Size to its content", fit.get_untracked())></label>
                        <label>{move || crate::panels::pick(fit.get(), "Height until loaded (px) ", "Height (px) ")}<input type="number" min="200" max="2000" aria-label="Height" prop:value=move || height.get().to_string() /></label>
                        <textarea readonly="" rows="4" aria-label="Embed snippet" prop:value=move || snippet.get()></textarea>
                        <button aria-label="Copy embed snippet" data-act="copy-snippet">"Copy embed snippet"</button>
                        <span class="copied" role="status" data-testid="snippet-copied">{move || confirmation(snippet_copied, snippet)}</span>
                    </fieldset>
                </div>
            }.into_any())}
        </section>
    }
}

/// The index in CATALOG of the preset `name`, or [`NO_PRESET`] if there is none of that name.
fn preset_index(name: &str) -> u64 {
    CATALOG
        .iter()
        .position(|p| p.name == name)
        .map_or(NO_PRESET, |i| i as u64)
}

/// The picker's choice when the session is no preset: its placeholder option is shown.
const NO_PRESET: u64 = u64::MAX;

/// The name of the preset at `index` in CATALOG.
fn preset_name(index: u64) -> &'static str {
    usize::try_from(index)
        .ok()
        .and_then(|i| CATALOG.get(i))
        .map_or("", |p| p.name)
}

/// The preset picker's options, `chosen` selected; first a placeholder that cannot be
/// chosen, selected when `chosen` is empty (the session is no preset).
fn presets_markup(chosen: &str) -> String {
    let placeholder = if chosen.is_empty() { " selected" } else { "" };
    let mut out = format!(r#"<option value="" disabled{placeholder}>Choose a preset…</option>"#);
    for p in CATALOG {
        let selected = if p.name == chosen { " selected" } else { "" };
        let _ = write!(
            out,
            r#"<option value="{}"{selected}>{}</option>"#,
            p.name,
            session::escape_attr(p.title)
        );
    }
    out
}

/// A checkbox of the embed's options and its label's text (static text of this file).
fn check_markup(label: &str, checked: bool) -> String {
    let checked = if checked { " checked" } else { "" };
    format!(r#"<input type="checkbox" aria-label="{label}"{checked}>{label}"#)
}

/// The scenario's own words, which its link and embed carry: a title, and captions written
/// at the shown moment (the walkthrough's steps). Writing a caption makes the run shown the
/// scenario's own (`Playground::with_caption`).
#[component]
fn ScenarioWords(ctx: Ctx) -> impl IntoView {
    // A memo of text (a memo of another type is kilobytes of wasm of its own).
    let title = ctx.title;
    let list = Memo::new(move |_| {
        ctx.snap.track();
        ctx.status.track();
        ctx.pg.with_value(|pg| captions_markup(&pg.captions()))
    });
    let set_title = move |ev: web_sys::Event| {
        let title = event_target_value(&ev);
        match ctx.with_pg(|pg| pg.set_title(&title)) {
            Some(Err(e)) => ctx.notice.set(Some(format!("Title not changed: {e}"))),
            _ => save_session(ctx),
        }
    };
    // The draft is read from its field when Add is pressed (nothing else sets it).
    let add = move |draft: &web_sys::HtmlInputElement| {
        let at = ctx.clock.with_untracked(|c| c.now);
        let made = ctx.pg.with_value(|pg| pg.with_caption(at, &draft.value()));
        match made {
            Ok((pg, dropped)) => {
                let off = ctx.pg.with_value(|pg| pg.first_input_ms()).unwrap_or(0);
                let mut note = format!("Added your caption at {}.", geometry::format_clock(at));
                if dropped > 0 {
                    note.push_str(&format!(
                        " This run is now the scenario's own: {dropped} of its captions from {} on described the run before you acted there, so they were removed.",
                        geometry::format_clock(off)
                    ));
                }
                draft.set_value("");
                ctx.replace(pg, note);
            }
            Err(e) => ctx.notice.set(Some(format!("Caption not added: {e}"))),
        }
    };
    let remove = move |index: usize| match ctx.pg.with_value(|pg| pg.without_caption(index)) {
        Ok(pg) => ctx.replace(pg, format!("Removed caption {}.", index + 1)),
        Err(e) => ctx.notice.set(Some(format!("Not removed: {e}"))),
    };
    // One click handler for Add and the list's Remove buttons (each carries its caption's
    // index): the draft's field and the button are then markup.
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let target = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let Some(target) = target else { return };
        if let Some(i) = target
            .get_attribute("data-remove")
            .and_then(|i| i.parse().ok())
        {
            remove(i);
        } else if target.get_attribute("data-act").as_deref() == Some("add-caption") {
            let draft = target
                .owner_document()
                .and_then(|d| d.get_element_by_id("caption-draft"))
                // A textarea: `value` is read and set by name, as an input's is.
                .map(|e| e.unchecked_into::<web_sys::HtmlInputElement>());
            if let Some(draft) = draft {
                add(&draft);
            }
        }
    };
    view! {
        <fieldset class="words" on:click=on_click>
            <legend>"Title and captions"</legend>
            <label>"Title "<input type="text" maxlength="500" aria-label="Scenario title" placeholder="untitled"
                prop:value=move || title.get() on:change=set_title /></label>
            <label for="caption-draft">{move || format!("Caption at {} ", geometry::format_clock(ctx.clock.with(|c| c.now)))}</label>
            <textarea id="caption-draft" rows="2" maxlength="500" aria-label="Caption" placeholder="What a reader should notice at this moment"></textarea>
            <button data-act="add-caption">"Add caption at this moment"</button>
            // One piece of markup for the list (a view per caption cost kilobytes of wasm):
            // each Remove button carries its caption's index.
            <ol class="captions" aria-label="Captions" inner_html=move || list.get()></ol>
        </fieldset>
    }
}

/// The Share panel's list of captions as markup, each with its Remove button.
fn captions_markup(captions: &[(u64, &str)]) -> String {
    captions
        .iter()
        .enumerate()
        .map(|(i, (at, text))| {
            format!(
                r#"<li><span class="at">{}</span> {} <button data-remove="{i}" aria-label="Remove caption {}">Remove</button></li>"#,
                geometry::format_clock(*at),
                session::escape_attr(text),
                i + 1
            )
        })
        .collect()
}

/// Messages to the host page of an embed (docs/embedding.md): an object of these fields,
/// built in place (no JSON text in between), after `source: "watermark"`. The fields come
/// in alphabetical order, as the messages always had them.
pub fn post_to_host(kind: &str, fields: &[(&str, JsValue)]) {
    let Some(w) = web_sys::window() else { return };
    let Ok(parent) = w.parent() else { return };
    let Some(parent) = parent else { return };
    if parent == w {
        return;
    }
    let message = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&message, &JsValue::from_str(k), v);
    };
    for (k, v) in fields.iter().filter(|(k, _)| *k < "source") {
        set(k, v);
    }
    set("source", &JsValue::from_str("watermark"));
    for (k, v) in fields.iter().filter(|(k, _)| *k > "source" && *k < "type") {
        set(k, v);
    }
    set("type", &JsValue::from_str(kind));
    let _ = parent.post_message(&message, "*");
}

/// Tells the host what went wrong (`opening`: while the page opened a link).
pub fn post_error(message: &str, opening: bool) {
    let mut fields = vec![("message", JsValue::from_str(message))];
    if opening {
        fields.push(("opening", JsValue::TRUE));
    }
    post_to_host("error", &fields);
}

/// A field of a host's message, if the message is an object that has it.
fn field(data: &JsValue, name: &str) -> Option<JsValue> {
    js_sys::Reflect::get(data, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined())
}

thread_local! {
    /// What was last reported to the host: height, time, playing, describe line.
    static REPORTED: std::cell::RefCell<(i32, u64, bool, String)> =
        const { std::cell::RefCell::new((-1, u64::MAX, false, String::new())) };
}

/// Reports the content height and the state (time, describe line) to the host, if they
/// changed since the last report. The frame loop calls it (`frames`).
pub fn report_to_host(ctx: Ctx) {
    // The body's height, not the root element's: the root's scrollHeight is never below the
    // iframe's own height, so an embed that grew (its legend opened) could not shrink again.
    let height = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("body").ok().flatten())
        .map_or(0, |e| e.scroll_height());
    let now = ctx.clock.with_untracked(|c| c.now);
    let playing = ctx.status.with_untracked(|s| s.playing);
    let describe = ctx.snap.with_untracked(|s| s.describe.clone());
    let (h0, t0, p0, d0) = REPORTED.with(|r| r.borrow().clone());
    if height != h0 {
        post_to_host("height", &[("height", height.into())]);
    }
    if now != t0 || playing != p0 || describe != d0 {
        post_to_host(
            "state",
            &[
                ("clock", geometry::format_clock(now).into()),
                ("describe", describe.as_str().into()),
                ("playing", playing.into()),
                // Simulated times stay far below 2^53: exact as a JavaScript number.
                ("time_ms", (now as f64).into()),
            ],
        );
    }
    REPORTED.with(|r| *r.borrow_mut() = (height, now, playing, describe));
}

/// Handles a message from the host: play, pause, seek, load. Its fields are read from the
/// object as it came (no JSON text in between); only a `scenario` object is written out as
/// JSON text, for the scenario reader. A link or scenario longer than twice the longest
/// link is ignored, as a whole message that long always was.
pub fn handle_host_message(ctx: Ctx, data: &JsValue) {
    let text_of = |name: &str| field(data, name).and_then(|v| v.as_string());
    if text_of("target").as_deref() != Some("watermark") {
        return;
    }
    let too_long = |s: &str| s.len() > share::MAX_LINK_CHARS * 2;
    match text_of("type").as_deref() {
        Some("play") => {
            ctx.with_pg(|pg| pg.playing = true);
        }
        Some("pause") => {
            ctx.with_pg(|pg| pg.playing = false);
        }
        Some("seek") => {
            // A whole number of milliseconds, as JSON's reader took it (`as_u64`).
            let t = field(data, "time_ms")
                .and_then(|t| t.as_f64())
                .filter(|t| *t >= 0.0 && t.fract() == 0.0 && *t < 18_446_744_073_709_551_616.0);
            let Some(t) = t.map(|t| t as u64) else {
                post_error("seek needs time_ms, a whole number of milliseconds", false);
                return;
            };
            let t = t.min(watermark_engine::scenario::MAX_TIME_MS);
            ctx.with_pg(|pg| {
                if t > pg.max_time() {
                    pg.run_to(t);
                } else {
                    pg.seek(t);
                }
            });
        }
        Some("load") => {
            let scenario_text = || {
                field(data, "scenario")
                    .and_then(|s| js_sys::JSON::stringify(&s).ok())
                    .and_then(|s| s.as_string())
            };
            let scenario = match (text_of("link"), scenario_text()) {
                (Some(link), _) if too_long(&link) => return,
                (Some(link), _) => share::decode(&link).map_err(|e| e.to_string()),
                (None, Some(s)) if too_long(&s) => return,
                (None, Some(s)) => Scenario::from_json(&s).map_err(|e| e.to_string()),
                _ => Err(
                    "load needs link (a w1. payload) or scenario (a scenario object)".to_string(),
                ),
            };
            match scenario {
                Ok(s) => ctx.restart(s, String::new()),
                Err(e) => post_error(&e, false),
            }
            ctx.notice.set(None);
        }
        _ => post_error("unknown message type: use play, pause, seek or load", false),
    }
}

#[cfg(test)]
mod tests {
    use super::{caption_text, preset_index, preset_name, presets_markup, NO_PRESET};

    #[test]
    fn the_picker_names_no_preset_for_a_session_that_is_none() {
        // No preset of that name (the default scenario, a link's): the placeholder, selected.
        assert_eq!(preset_index("mine"), NO_PRESET);
        assert_eq!(preset_name(NO_PRESET), "");
        let none = presets_markup("");
        assert!(none.starts_with(r#"<option value="" disabled selected>Choose a preset…</option><option value="acks-walkthrough">"#), "{none}");
        assert_eq!(none.matches(" selected").count(), 1);
        // A preset: it is selected, the placeholder is not.
        let index = preset_index("frozen-follower");
        assert_eq!(preset_name(index), "frozen-follower");
        let one = presets_markup(preset_name(index));
        assert!(
            one.starts_with(r#"<option value="" disabled>Choose a preset…</option>"#),
            "{one}"
        );
        assert!(
            one.contains(r#"<option value="frozen-follower" selected>"#),
            "{one}"
        );
        assert_eq!(one.matches(" selected").count(), 1);
    }

    #[test]
    fn a_caption_for_a_moment_after_the_person_acted_says_it_is_off_script() {
        let step = |at: u64| Some((at, "Step 7. The HW jumped to 18.".to_string()));
        assert_eq!(
            caption_text(step(23_999), None),
            (false, "Step 7. The HW jumped to 18.".into())
        );
        assert_eq!(
            caption_text(step(23_999), Some(30_000)),
            (false, "Step 7. The HW jumped to 18.".into()),
            "written for a moment before the person acted: still true"
        );
        let (stale, text) = caption_text(step(23_999), Some(16_500));
        assert!(stale);
        assert_eq!(text, "Off script since 0:16.500 (you acted), so this step describes the scenario's own run, not this one: Step 7. The HW jumped to 18.");
        assert!(caption_text(None, Some(0)).0);
        assert!(!caption_text(None, None).0);
    }
}
