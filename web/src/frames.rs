//! The frame loop, and when it sleeps.
//!
//! An animation frame moves the playground by the real time elapsed × speed and publishes
//! what changed (see `state`). The loop runs only while there is something to move: it stops
//! when the playground is paused, when the page is hidden (`document.visibilityState`), or
//! when the app is scrolled out of view (an `IntersectionObserver` on it; an embed in a long
//! page), so an idle page does no work at all: no animation frames and no timers. Anything
//! that changes what is shown (an action, a seek, a resize, Play, a host's message, the page
//! becoming visible again) calls [`wake`], which runs frames again until there is nothing
//! left to draw: one frame after a change while paused (it scrolls the event log and tells
//! an embed's host), every frame while playing.
//!
//! The session is saved at most once a second while it plays, and when the loop stops.

use std::cell::Cell;

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use crate::share_ui;
use crate::state::Ctx;

/// The session is saved at most this often while it plays (and on every action, when the
/// loop stops and when the page is hidden), so a reload reopens it where it was left.
const SAVE_EVERY_MS: f64 = 1_000.0;
/// An embed tells its host its height and state at most this often while playing.
const REPORT_EVERY_MS: f64 = 250.0;

#[derive(Clone, Copy)]
struct Loop {
    /// A frame is requested.
    running: bool,
    /// The app is (at least partly) in the viewport, as the observer last said.
    in_view: bool,
    saved_at: f64,
    reported_at: f64,
}

thread_local! {
    static LOOP: Cell<Loop> = const {
        Cell::new(Loop { running: false, in_view: true, saved_at: 0.0, reported_at: f64::NEG_INFINITY })
    };
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn page_hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

/// Time moves only while playing, shown and in view.
fn moving(ctx: Ctx) -> bool {
    ctx.pg.with_value(|pg| pg.playing) && !page_hidden() && LOOP.with(|l| l.get().in_view)
}

/// Runs frames again if they stopped: after anything that changes what is shown.
pub fn wake(ctx: Ctx) {
    let mut l = LOOP.with(Cell::get);
    if l.running {
        return;
    }
    l.running = true;
    LOOP.with(|c| c.set(l));
    let now = now_ms();
    request_animation_frame(move || frame(ctx, now));
}

fn set_stopped(ctx: Ctx) {
    LOOP.with(|c| {
        let mut l = c.get();
        l.running = false;
        c.set(l);
    });
    share_ui::save_if_dirty(ctx);
}

fn frame(ctx: Ctx, last: f64) {
    // Layout is still clean from the frame before: reading heights costs nothing here.
    crate::panels::follow_log();
    let now = now_ms();
    let mut l = LOOP.with(Cell::get);
    if ctx.embed && now - l.reported_at >= REPORT_EVERY_MS {
        share_ui::report_to_host(ctx);
        l.reported_at = now;
    }
    let moving = moving(ctx);
    let real = if moving { (now - last).max(0.0) } else { 0.0 };
    let moved = ctx.pg.try_update_value(|pg| pg.tick(real)).unwrap_or(false);
    let pending = ctx.log_pending();
    if moved || pending {
        ctx.publish_frame(now);
    }
    if moved {
        ctx.set_dirty(true);
        if now - l.saved_at >= SAVE_EVERY_MS {
            share_ui::save_if_dirty(ctx);
            l.saved_at = now;
        }
    }
    LOOP.with(|c| c.set(l));
    // One more frame after the last change, to scroll the log and report what it drew.
    if moving || moved || pending {
        request_animation_frame(move || frame(ctx, now));
    } else {
        if ctx.embed {
            // Nothing changed in this frame: the layout is still clean.
            share_ui::report_to_host(ctx);
        }
        set_stopped(ctx);
    }
}

/// Wakes the loop when the page is shown again, and watches whether `el` (the app) is in
/// the viewport. Returns what to drop on cleanup.
pub fn watch(ctx: Ctx, el: &web_sys::Element) -> Option<Watchers> {
    let window = web_sys::window()?;
    let document = window.document()?;
    // Both closures take an `Event`, of the type Leptos's own listeners have, so the glue has
    // one closure shim for them all (each closure type brings its own to the JavaScript).
    let on_visible = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| wake(ctx));
    document
        .add_event_listener_with_callback("visibilitychange", on_visible.as_ref().unchecked_ref())
        .ok()?;
    let on_view = Closure::<dyn FnMut(web_sys::Event)>::new(move |entries: web_sys::Event| {
        // The observer calls this with its array of entries, nothing else.
        let Some(entry) = entries
            .unchecked_into::<js_sys::Array>()
            .iter()
            .last()
            .map(|e| e.unchecked_into::<web_sys::IntersectionObserverEntry>())
        else {
            return;
        };
        let in_view = entry.is_intersecting();
        LOOP.with(|c| {
            let mut l = c.get();
            l.in_view = in_view;
            c.set(l);
        });
        if in_view {
            wake(ctx);
        }
    });
    let observer = web_sys::IntersectionObserver::new(on_view.as_ref().unchecked_ref()).ok()?;
    observer.observe(el);
    Some(Watchers {
        document,
        on_visible,
        observer,
        _on_view: on_view,
    })
}

/// The page listeners [`watch`] added; dropped (and removed) with the app.
pub struct Watchers {
    document: web_sys::Document,
    on_visible: Closure<dyn FnMut(web_sys::Event)>,
    observer: web_sys::IntersectionObserver,
    _on_view: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Watchers {
    fn drop(&mut self) {
        let _ = self.document.remove_event_listener_with_callback(
            "visibilitychange",
            self.on_visible.as_ref().unchecked_ref(),
        );
        self.observer.disconnect();
    }
}
