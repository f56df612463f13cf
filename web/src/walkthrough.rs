//! A preset's walkthrough: its captions (the scenario's notes) as numbered steps, "Step n of
//! N", with Previous and Next; playing stops at each caption (`Playground::next_stop`) and
//! at the scenario's end, where the walkthrough says so and offers to replay it.

use leptos::prelude::*;

use crate::panels::pick;
use crate::share_ui::caption_text;
use crate::state::Ctx;

/// What the walkthrough bar shows at a moment: the step (0 before the first caption), the
/// number of steps, the caption shown, and whether the walkthrough has ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub step: usize,
    pub steps: usize,
    /// The caption is off the scenario's script (the person acted before its moment).
    pub stale: bool,
    pub text: String,
    pub ended: bool,
}

/// The walkthrough at the shown moment: `captions` (time, text) in order, `run` of them
/// run, the shown time and the scenario's end, and when the person first acted.
pub fn shown(
    captions: &[(u64, &str)],
    run: usize,
    now: u64,
    end_ms: u64,
    first_input_ms: Option<u64>,
) -> Shown {
    let current = run
        .checked_sub(1)
        .and_then(|i| captions.get(i))
        .map(|(at, text)| (*at, text.to_string()));
    let (stale, text) = caption_text(current, first_input_ms);
    Shown {
        step: run,
        steps: captions.len(),
        stale,
        text,
        ended: run >= captions.len() && now >= end_ms,
    }
}

/// The step line: "Step 3 of 9", or the end.
pub fn step_label(s: &Shown) -> String {
    if s.ended {
        "End of the walkthrough".into()
    } else {
        format!("Step {} of {}", s.step, s.steps)
    }
}

/// Goes to `t`, paused: runs the live simulation there if it is ahead, shows the past if not.
fn go_to(ctx: Ctx, t: u64) {
    ctx.with_pg(|pg| {
        pg.playing = false;
        if t >= pg.max_time() {
            pg.run_to(t);
        } else {
            pg.seek(t);
        }
    });
}

/// Next: up to the next caption (or the scenario's end after the last one).
fn next(ctx: Ctx) {
    let t = ctx.pg.with_value(|pg| {
        pg.next_note_time()
            .unwrap_or_else(|| pg.scenario().end_ms())
    });
    go_to(ctx, t);
}

/// Previous: back to the time of the caption before the one shown.
fn previous(ctx: Ctx) {
    let t = ctx.pg.with_value(|pg| {
        let run = pg.captions_run();
        run.checked_sub(2)
            .and_then(|i| pg.captions().get(i).map(|c| c.0))
    });
    if let Some(t) = t {
        go_to(ctx, t);
    }
}

#[component]
pub fn Walkthrough(ctx: Ctx) -> impl IntoView {
    let state = Memo::new(move |_| {
        ctx.snap.track();
        ctx.status.track();
        ctx.pg.with_value(|pg| {
            shown(
                &pg.captions(),
                pg.captions_run(),
                pg.current().now(),
                pg.scenario().end_ms(),
                pg.first_input_ms(),
            )
        })
    });
    let pausing = RwSignal::new(ctx.pg.with_value(|pg| pg.pause_at_captions));
    // In an embed the caption is one line (a documentation column has little height to
    // spare); this opens it whole.
    let whole = RwSignal::new(false);
    let replay = move || {
        ctx.with_pg(|pg| {
            pg.seek(0);
            pg.playing = true;
        });
    };
    // Parts are hidden rather than built and removed (`Show`): fewer kilobytes of wasm.
    view! {
        // The buttons name their action in `data-act`: one click handler for the bar.
        <div class=move || pick(whole.get(), "caption-bar whole", "caption-bar") role="group" aria-label="Walkthrough" prop:hidden=move || state.with(|s| s.steps == 0)
            on:click=move |ev| match crate::panels::clicked_act(&ev).as_deref() {
                Some("more") => whole.update(|w| *w = !*w),
                Some("previous") => previous(ctx),
                Some("next") if state.with_untracked(|s| s.ended) => replay(),
                Some("next") => next(ctx),
                _ => {}
            }>
            <span class="step-count" data-testid="step">{move || state.with(step_label)}</span>
            <p class=move || pick(state.with(|s| s.stale), "caption stale", "caption") aria-live="polite" data-testid="caption">{move || state.with(|s| s.text.clone())}</p>
            <button class="more" data-act="more" prop:hidden=move || !ctx.embed aria-expanded=move || whole.get().to_string() aria-label=move || pick(whole.get(), "Show one line of the caption", "Show the whole caption")>
                {move || pick(whole.get(), "▴", "▾")}
            </button>
            <button aria-label="Previous step" data-act="previous" prop:disabled=move || state.with(|s| s.step < 2)>"◂ Previous step"</button>
            // At the end, Next becomes Replay.
            <button
                aria-label=move || pick(state.with(|s| s.ended), "Replay the walkthrough", "Next step")
                data-act="next"
            >{move || pick(state.with(|s| s.ended), "↺ Replay", "Next step ▸")}</button>
            <label class="check pause-steps" prop:hidden=move || ctx.embed>
                // From a closure, not the signal itself: the page's one property type.
                <input type="checkbox" aria-label="Pause at each step" prop:checked=move || pausing.get()
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        pausing.set(on);
                        ctx.pg.update_value(|pg| pg.pause_at_captions = on);
                    } />
                "Pause at each step"
            </label>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Playground;

    #[test]
    fn the_walkthrough_counts_steps_and_ends_after_the_last_caption_and_the_end() {
        let captions = [(0, "One."), (500, "Two."), (900, "Three.")];
        let at = |run, now| shown(&captions, run, now, 2_000, None);
        assert_eq!(step_label(&at(0, 0)), "Step 0 of 3");
        assert_eq!(
            at(0, 0).text,
            "Press Next step to walk through this scenario."
        );
        assert_eq!(at(2, 700).text, "Two.");
        assert_eq!(step_label(&at(2, 700)), "Step 2 of 3");
        assert!(!at(3, 1_999).ended, "the last caption, before the end");
        assert!(at(3, 2_000).ended);
        assert_eq!(step_label(&at(3, 2_000)), "End of the walkthrough");
        // Acted at 600: the third caption was written for the scenario's own run.
        let off = shown(&captions, 3, 1_000, 2_000, Some(600));
        assert!(off.stale);
        assert!(off.text.ends_with("Three."), "{}", off.text);
    }

    #[test]
    fn playing_a_preset_stops_at_each_caption_and_at_its_end() {
        let scenario = watermark_engine::presets::preset("frozen-follower").unwrap();
        let mut p = Playground::new(scenario.clone()).unwrap();
        let times: Vec<u64> = p.captions().iter().map(|c| c.0).collect();
        assert!(times.len() > 3);
        p.set_speed(100.0);
        let mut stops = vec![];
        for _ in 0..times.len() + 1 {
            p.playing = true;
            while p.playing {
                p.tick(16.0);
            }
            stops.push((p.current().now(), p.captions_run()));
        }
        let mut want: Vec<(u64, usize)> =
            times.iter().enumerate().map(|(i, t)| (*t, i + 1)).collect();
        want.push((scenario.end_ms(), times.len()));
        assert_eq!(stops, want);
        // Past the end it plays on; without pausing it never stops.
        p.playing = true;
        p.tick(16.0);
        assert!(p.playing);
        let mut q = Playground::new(scenario.clone()).unwrap();
        q.pause_at_captions = false;
        q.playing = true;
        q.set_speed(100.0);
        while q.max_time() < scenario.end_ms() {
            q.tick(16.0);
        }
        assert!(q.playing);
    }
}
