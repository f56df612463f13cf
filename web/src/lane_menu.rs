//! Each broker's faults, reached where one looks: a button on the broker's lane ("Faults
//! for broker 2") opens a menu of its actions (role=menu; arrow keys, Home, End, Escape),
//! and so does the lane's context menu. What a state forbids is disabled (Thaw only when
//! frozen, Start only when stopped or killed). "Slow" asks for the delay; the link items
//! name each peer (the controller, every other broker).
//!
//! The buttons are plain HTML over the cluster's SVGs: `LaneMenus` wraps the cluster view
//! in a grid cell and lays a layer of the same size over it, with each button placed in
//! per cent of the picture, so it stays on its lane when the picture scales.

// `attr=move || f()` rather than `attr=f`: with `erase_components` only a closure written in
// the view is boxed (one monomorphization per output type); a named one is its own
// (BENCHMARKS.md, "Shipped size").
#![allow(clippy::redundant_closure)]

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use watermark_engine::scenario::{ControllerName, Endpoint};
use watermark_engine::snapshot::Snapshot;
use watermark_engine::types::{BrokerId, Node, ProcessState};
use watermark_engine::Action;

use crate::geometry::{fixed, LABEL_W, LANE_H, TOP};
use crate::state::Ctx;

/// The largest delay `slow` takes (the engine's limit, `Action::validate`).
pub const SLOW_MS_MAX: u64 = 600_000;

/// One entry of a broker's menu: its name (what it says and its accessible name), whether
/// the broker's state allows it, and what it does (`None`: ask for the delay first).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub name: String,
    pub enabled: bool,
    pub action: Option<Action>,
}

/// A broker's menu for the shown state, in order: process faults, the delay, each link,
/// the disk.
pub fn menu_items(s: &Snapshot, id: BrokerId) -> Vec<Item> {
    let Some(b) = s.brokers.iter().find(|b| b.id == id) else {
        return vec![];
    };
    let up = b.process.is_up();
    let frozen = b.process == ProcessState::Frozen;
    let item = |name: String, enabled: bool, action: Option<Action>| Item {
        name,
        enabled,
        action,
    };
    let mut out = vec![
        item(
            format!("Freeze broker {id}"),
            up && !frozen,
            Some(Action::Freeze { broker: id }),
        ),
        item(
            format!("Thaw broker {id}"),
            frozen,
            Some(Action::Thaw { broker: id }),
        ),
        item(
            format!("Kill broker {id}"),
            up,
            Some(Action::Kill { broker: id }),
        ),
        item(
            format!("Stop broker {id}"),
            up,
            Some(Action::Stop { broker: id }),
        ),
        item(
            format!("Start broker {id}"),
            !up,
            Some(Action::Start { broker: id }),
        ),
        item(format!("Slow broker {id}…"), true, None),
    ];
    if b.slow_ms > 0 {
        out.push(item(
            format!("Speed up broker {id}"),
            true,
            Some(Action::Slow { broker: id, ms: 0 }),
        ));
    }
    let me = Endpoint::Broker(id);
    let mut peers = vec![(
        Endpoint::Controller(ControllerName::Controller),
        Node::Controller,
        "the controller".to_string(),
    )];
    peers.extend(s.brokers.iter().filter(|p| p.id != id).map(|p| {
        (
            Endpoint::Broker(p.id),
            Node::Broker(p.id),
            format!("broker {}", p.id),
        )
    }));
    for (peer, node, name) in peers {
        let cut = s.is_cut(Node::Broker(id), node);
        out.push(if cut {
            item(
                format!("Heal broker {id} to {name}"),
                true,
                Some(Action::Heal { a: me, b: peer }),
            )
        } else {
            item(
                format!("Cut broker {id} from {name}"),
                true,
                Some(Action::Cut { a: me, b: peer }),
            )
        });
    }
    // The machine, not the process: what the OS had not written back is lost (issue 15,
    // docs/history.md "Power loss"); the playground keeps the appends' times for it
    // (`Sim::track_writeback`).
    out.push(item(
        format!("Cut the power to broker {id}"),
        true,
        Some(Action::PowerLoss { broker: id }),
    ));
    out.push(item(
        format!("Lose the disk of broker {id}"),
        true,
        Some(Action::LoseDisk { broker: id }),
    ));
    out
}

/// Reads the delay a person typed for `slow`: a whole number of milliseconds in
/// 1..=[`SLOW_MS_MAX`], or an error that names the field and its range.
pub fn parse_delay(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(ms) if (1..=SLOW_MS_MAX).contains(&ms) => Ok(ms),
        _ => Err(format!(
            "Delay (ms) must be a whole number from 1 to {SLOW_MS_MAX}; got “{}”.",
            text.trim()
        )),
    }
}

/// Where a lane's button sits, in per cent of the picture (`n` lanes): top and left.
fn place(index: usize, n: usize, width: f64) -> (f64, f64) {
    let height = TOP + n as f64 * LANE_H;
    let top = TOP + index as f64 * LANE_H + LANE_H / 2.0 + 1.0;
    (
        100.0 * top / height,
        100.0 * (LABEL_W - 30.0) / width.max(1.0),
    )
}

/// The lanes' buttons as markup (one per broker, in lane order).
fn buttons_markup(ids: &[BrokerId], width: f64) -> String {
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let (top, left) = place(i, ids.len(), width);
            format!(
                r#"<button class="lane-menu-button" data-broker="{id}" aria-label="Faults for broker {id}" title="Faults for broker {id} (or right-click its lane)" aria-haspopup="menu" aria-expanded="false" style="top:{}%;left:{}%">⋮</button>"#,
                fixed(top, 3),
                fixed(left, 3)
            )
        })
        .collect()
}

/// A menu's items as markup; `data-i` is the item's index in `items`.
fn items_markup(items: &[Item]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            format!(
                r#"<button role="menuitem" tabindex="-1" data-i="{i}"{}{}>{}</button>"#,
                if it.enabled { "" } else { " disabled" },
                if it.name.starts_with("Lose") {
                    r#" class="danger""#
                } else {
                    ""
                },
                it.name
            )
        })
        .collect()
}

fn focus(el: &web_sys::Element) {
    if let Some(h) = el.dyn_ref::<web_sys::HtmlElement>() {
        let _ = h.focus();
    }
}

fn find(root: &web_sys::Element, selector: &str) -> Option<web_sys::Element> {
    root.query_selector(selector).ok().flatten()
}

/// The element under an event, or its nearest ancestor with `attr`, and that attribute.
fn target_with(ev: &web_sys::Event, attr: &str) -> Option<(web_sys::Element, String)> {
    let el = ev
        .target()?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest(&format!("[{attr}]"))
        .ok()??;
    let v = el.get_attribute(attr)?;
    Some((el, v))
}

/// Moves the focus among the menu's enabled items: by `step` (wrapping), or to the first
/// (`i32::MIN`) or the last (`i32::MAX`).
fn move_focus(menu: &web_sys::Element, step: i32) {
    let Ok(list) = menu.query_selector_all("[role=menuitem]:not([disabled])") else {
        return;
    };
    let items: Vec<web_sys::Element> = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into().ok())
        .collect();
    if items.is_empty() {
        return;
    }
    let n = items.len() as i32;
    let active = menu
        .owner_document()
        .and_then(|d| d.active_element())
        .and_then(|a| items.iter().position(|x| *x == a))
        .map(|i| i as i32);
    let next = match (step, active) {
        (i32::MIN, _) => 0,
        (i32::MAX, _) => n - 1,
        (s, Some(i)) => (i + s).rem_euclid(n),
        (_, None) => 0,
    };
    focus(&items[next as usize]);
}

/// The cluster view with a menu button on each lane, and the one menu open. The buttons
/// and items are plain markup, and events are handled where they bubble to (a few hundred
/// bytes of wasm, where a component per lane and per item cost kilobytes).
#[component]
pub fn LaneMenus(ctx: Ctx, children: Children) -> impl IntoView {
    // The broker whose menu is open, 0 for none (broker ids start at 1): a u64, the type of
    // another signal (each signal type is code of its own).
    let open_id = RwSignal::new(0u64);
    let open_of = |id: u64| BrokerId::try_from(id).ok().filter(|&id| id > 0);
    let open = move || open_of(open_id.get());
    let open_untracked = move || open_of(open_id.get_untracked());
    let set_open = move |id: Option<BrokerId>| open_id.set(id.map_or(0, u64::from));
    let asking = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let ids = ctx.broker_ids;
    // The open menu's items, as its markup was last built from (the click reads them).
    let items = StoredValue::new(Vec::<Item>::new());
    // The layer of buttons and menus, found when needed (see `panels::page_element`).
    let layer = || crate::panels::page_element(".lane-menus");
    let part = move |selector: &str| layer().and_then(|l| find(&l, selector));
    let trigger =
        move |id: BrokerId| layer().and_then(|l| find(&l, &format!("[data-broker=\"{id}\"]")));
    let close = move |refocus: bool| {
        let was = open_untracked();
        set_open(None);
        asking.set(false);
        error.set(None);
        if let (true, Some(t)) = (refocus, was.and_then(trigger)) {
            focus(&t);
        }
    };
    let place_menu = move || {
        let list = ids.get();
        let width = ctx.width.get() as f64;
        open()
            .and_then(|id| list.iter().position(|x| *x == id))
            .map(|i| {
                let (top, left) = place(i, list.len(), width);
                format!(
                    "top:calc({}% + 26px);left:{}%",
                    fixed(top, 3),
                    fixed(left, 3)
                )
            })
            .unwrap_or_default()
    };
    // One effect for the layer (each effect is code of its own). It remembers the buttons'
    // markup, the menu it marked open and whether the delay form was shown.
    //
    // The buttons change with the lanes and the width only; the open menu's button says it
    // is expanded. The menu's and the form's names, place and error are markup, set where
    // they changed (a reactive attribute each was code of its own). Then the items: rebuilt
    // when one changes (the clock runs while the menu is open), keeping the focus on the item
    // it was on; on opening, the first enabled item takes it. Then the delay form, whose
    // field takes the focus when the form is shown (for the broker it was shown for, a new
    // snapshot does not select the field again).
    Effect::new(move |prev: Option<(String, Option<BrokerId>, bool)>| {
        let id = open();
        let html = buttons_markup(&ids.get(), ctx.width.get() as f64);
        let Some(l) = layer() else {
            return (String::new(), id, false);
        };
        let (drawn, before, was_shown) = prev.unwrap_or_default();
        if drawn != html {
            if let Some(b) = find(&l, ".lane-buttons") {
                b.set_inner_html(&html);
            }
        }
        if drawn != html || before != id {
            for (id, v) in [(before, "false"), (id, "true")] {
                if let Some(b) = id.and_then(|id| find(&l, &format!("[data-broker=\"{id}\"]"))) {
                    let _ = b.set_attribute("aria-expanded", v);
                }
            }
        }
        let name = |f: fn(BrokerId) -> String| id.map(f).unwrap_or_default();
        let place = place_menu();
        let invalid = error.with(Option::is_some);
        for (selector, attribute, value) in [
            (
                ".menu[role=menu]",
                "aria-label",
                name(|id| format!("Broker {id}")),
            ),
            (".menu[role=menu]", "style", place.clone()),
            ("form", "aria-label", name(|id| format!("Slow broker {id}"))),
            ("form", "style", place),
            (
                "form input",
                "aria-label",
                name(|id| format!("Delay (ms) for broker {id}")),
            ),
            ("form input", "aria-invalid", invalid.to_string()),
        ] {
            if let Some(el) = find(&l, selector) {
                if el.get_attribute(attribute).as_deref() != Some(value.as_str()) {
                    let _ = el.set_attribute(attribute, &value);
                }
            }
        }
        for (selector, text) in [
            ("#slow-error", error.get().unwrap_or_default()),
            ("[data-slow]", name(|id| format!("Slow broker {id}"))),
        ] {
            if let Some(el) = find(&l, selector) {
                if el.text_content().as_deref() != Some(text.as_str()) {
                    el.set_text_content(Some(&text));
                }
            }
        }
        let now = id
            .map(|id| ctx.snap.with(|s| menu_items(s, id)))
            .unwrap_or_default();
        let asked = asking.get();
        let shown = id.is_some() && !asked;
        if let Some(m) = part(".menu[role=menu]") {
            // Shown here, before the focus moves in (a hidden item takes no focus).
            let _ = if shown {
                m.remove_attribute("hidden")
            } else {
                m.set_attribute("hidden", "")
            };
            if items.with_value(|v| *v != now) || m.child_element_count() == 0 {
                let doc = m.owner_document();
                let active = doc
                    .as_ref()
                    .and_then(|d| d.active_element())
                    .filter(|a| m.contains(Some(a)))
                    .and_then(|a| a.get_attribute("data-i"));
                m.set_inner_html(&items_markup(&now));
                items.set_value(now);
                if let Some(el) = active.and_then(|i| find(&m, &format!("[data-i=\"{i}\"]"))) {
                    focus(&el);
                }
            }
            let inside = m
                .owner_document()
                .and_then(|d| d.active_element())
                .is_some_and(|a| m.contains(Some(&a)));
            if shown && !inside {
                move_focus(&m, i32::MIN);
            }
        }
        let form_shown = asked && id.is_some();
        if let (Some(f), Some(input)) = (part("form"), part("form input")) {
            let _ = if form_shown {
                f.remove_attribute("hidden")
            } else {
                f.set_attribute("hidden", "")
            };
            if form_shown && !(was_shown && before == id) {
                focus(&input);
                if let Some(i) = input.dyn_ref::<web_sys::HtmlInputElement>() {
                    i.select();
                }
            }
        } else {
            // Not drawn yet: the focus goes in once it is.
            return (html, id, false);
        }
        (html, id, form_shown)
    });
    // The lane's context menu opens its broker's menu.
    let on_context = move |ev: web_sys::MouseEvent| {
        let Some(el) = layer() else {
            return;
        };
        let rect = el.get_bounding_client_rect();
        let n = ids.with_untracked(Vec::len);
        if rect.height() <= 0.0 || n == 0 {
            return;
        }
        let y = (f64::from(ev.client_y()) - rect.top()) / rect.height() * (TOP + n as f64 * LANE_H);
        if y < TOP {
            return;
        }
        let i = ((y - TOP) / LANE_H) as usize;
        if let Some(id) = ids.with_untracked(|v| v.get(i).copied()) {
            ev.prevent_default();
            asking.set(false);
            set_open(Some(id));
        }
    };
    let slow = move || {
        let Some(id) = open_untracked() else {
            return;
        };
        // The field is read when the form is sent (nothing but the person changes it).
        let typed = part("form input")
            .and_then(|i| i.dyn_into::<web_sys::HtmlInputElement>().ok())
            .map(|i| i.value())
            .unwrap_or_default();
        match parse_delay(&typed) {
            Ok(ms) => {
                ctx.act(Action::Slow { broker: id, ms });
                close(true);
            }
            Err(e) => error.set(Some(e)),
        }
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some((_, id)) = target_with(&ev, "data-broker") {
            let id: BrokerId = id.parse().unwrap_or(0);
            if open_untracked() == Some(id) {
                close(true);
            } else {
                asking.set(false);
                set_open(Some(id));
            }
        } else if let Some((_, i)) = target_with(&ev, "data-i") {
            let item =
                items.with_value(|v| v.get(i.parse::<usize>().unwrap_or(usize::MAX)).cloned());
            match item.map(|it| it.action) {
                Some(Some(a)) => {
                    ctx.act(a);
                    close(true);
                }
                Some(None) => asking.set(true),
                None => {}
            }
        } else if target_with(&ev, "data-cancel").is_some() {
            // The delay form's Cancel (handled here, with the layer's other clicks).
            close(true);
        } else if target_with(&ev, "data-slow").is_some() {
            // The form's submit button, clicked or by Enter in the field (a form's implicit
            // submission clicks its default button): no submit handler of its own, and the
            // click's default (sending the form) is cancelled.
            ev.prevent_default();
            slow();
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let key = ev.key();
        if key == "Escape" && open_untracked().is_some() {
            ev.prevent_default();
            close(true);
            return;
        }
        if let Some((_, id)) = target_with(&ev, "data-broker") {
            if key == "ArrowDown" {
                ev.prevent_default();
                set_open(id.parse().ok());
            }
            return;
        }
        let Some(m) = part(".menu[role=menu]") else {
            return;
        };
        if target_with(&ev, "data-i").is_none() {
            return;
        }
        let step = match key.as_str() {
            "ArrowDown" => 1,
            "ArrowUp" => -1,
            "Home" => i32::MIN,
            "End" => i32::MAX,
            "Tab" => {
                close(false);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        move_focus(&m, step);
    };
    // Leaving the buttons and the menu for anything else closes the menu.
    let on_focus_out = move |ev: web_sys::FocusEvent| {
        // An item rebuilt or hidden under the focus (the menu turning into the delay form)
        // is not the person leaving.
        let removed = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|t| !t.is_connected() || t.closest("[hidden]").ok().flatten().is_some());
        let inside = removed
            || ev
                .related_target()
                .and_then(|t| t.dyn_into::<web_sys::Node>().ok())
                .zip(layer())
                .is_some_and(|(t, l)| l.contains(Some(&t)));
        if !inside {
            close(false);
        }
    };
    view! {
        <div class="cluster-box" on:contextmenu=on_context>
            {children()}
            // The layer's parts are markup (the effects above set what changes in them), and
            // its events are handled where they bubble to: typing in the delay's field clears
            // its error.
            <div class="lane-menus" on:click=on_click on:keydown=on_key on:focusout=on_focus_out
                on:input=move |_| error.set(None)>
                <div class="lane-buttons"></div>
                <div class="menu" role="menu" hidden=""></div>
                <form class="menu slow-form" role="dialog" hidden="">
                    <label>
                        "Delay (ms) after each fetch "
                        <input type="text" inputmode="numeric" aria-describedby="slow-error" value="5000" />
                    </label>
                    <p class="field-error" id="slow-error" role="alert"></p>
                    <div class="row">
                        <button type="submit" data-slow=""></button>
                        <button type="button" data-cancel="">"Cancel"</button>
                    </div>
                </form>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use watermark_engine::Scenario;

    fn snapshot_of(json: &str) -> Snapshot {
        let s = Scenario::from_json(json).unwrap();
        watermark_engine::run(&s, true).unwrap().snapshot()
    }

    fn enabled(items: &[Item]) -> Vec<&str> {
        items
            .iter()
            .filter(|i| i.enabled)
            .map(|i| i.name.as_str())
            .collect()
    }

    #[test]
    fn the_menu_allows_what_the_brokers_state_allows() {
        let s = snapshot_of(
            r#"{"timeline":[{"at":0,"action":"freeze","broker":2},{"at":0,"action":"kill","broker":3},
                {"at":0,"action":"slow","broker":1,"ms":300},{"at":0,"action":"cut","a":1,"b":"controller"}],
                "end_ms":100}"#,
        );
        assert_eq!(
            enabled(&menu_items(&s, 2)),
            [
                "Thaw broker 2",
                "Kill broker 2",
                "Stop broker 2",
                "Slow broker 2…",
                "Cut broker 2 from the controller",
                "Cut broker 2 from broker 1",
                "Cut broker 2 from broker 3",
                "Cut the power to broker 2",
                "Lose the disk of broker 2",
            ]
        );
        assert_eq!(
            enabled(&menu_items(&s, 3))[..2],
            ["Start broker 3", "Slow broker 3…"],
            "a killed broker can only be started (or slowed, cut, lose its disk)"
        );
        let one = menu_items(&s, 1);
        assert_eq!(
            enabled(&one)[..6],
            [
                "Freeze broker 1",
                "Kill broker 1",
                "Stop broker 1",
                "Slow broker 1…",
                "Speed up broker 1",
                "Heal broker 1 to the controller",
            ]
        );
        assert!(one.iter().any(|i| i.name == "Thaw broker 1" && !i.enabled));
        assert_eq!(
            one.iter()
                .find(|i| i.name.starts_with("Heal"))
                .unwrap()
                .action,
            Some(Action::Heal {
                a: Endpoint::Broker(1),
                b: Endpoint::Controller(ControllerName::Controller)
            })
        );
        assert!(menu_items(&s, 9).is_empty());
    }

    #[test]
    fn a_delay_is_a_whole_number_of_ms_in_range_and_the_error_names_the_field() {
        assert_eq!(parse_delay(" 250 "), Ok(250));
        assert_eq!(parse_delay("600000"), Ok(600_000));
        for bad in ["0", "600001", "-5", "1.5", "slow", ""] {
            let e = parse_delay(bad).unwrap_err();
            assert!(
                e.starts_with("Delay (ms) must be a whole number from 1 to 600000"),
                "{e}"
            );
        }
    }
}
