//! Undo for what discards a session: changing the brokers or the replication factor starts
//! a new cluster. When the session had actions on its timeline, the whole playground (its
//! run, rewind checkpoints and clock) is put aside, and an Undo bar brings it back exactly,
//! for as long as the new cluster is the one shown.

use leptos::prelude::*;
use watermark_engine::Scenario;

use crate::model::Playground;
use crate::state::Ctx;

#[derive(Clone, Copy)]
pub struct Undo {
    /// The session put aside, and the scenario of the new cluster the offer applies to.
    kept: StoredValue<Option<(Playground, Scenario)>>,
    /// What the bar says: an Option<String>, the type of another signal (each signal type is
    /// code of its own).
    offer: RwSignal<Option<String>>,
}

impl Undo {
    pub fn new() -> Self {
        Undo {
            kept: StoredValue::new(None),
            offer: RwSignal::new(None),
        }
    }

    /// Runs `start` (which starts a new cluster), keeping the session before it for Undo if
    /// it had actions on its timeline.
    pub fn discarding(self, ctx: Ctx, start: impl FnOnce()) {
        let before = ctx.pg.with_value(|pg| {
            let actions = pg.to_scenario().timeline.len();
            (actions > 0).then(|| (pg.clone(), actions))
        });
        start();
        match before {
            Some((mut pg, actions)) => {
                pg.playing = false;
                let after = ctx.pg.with_value(|p| p.scenario().clone());
                self.kept.set_value(Some((pg, after)));
                let plural = if actions == 1 { "action" } else { "actions" };
                self.offer.set(Some(format!(
                    "The previous session ({actions} {plural} on its timeline) was put aside."
                )));
            }
            None => self.forget(),
        }
    }

    fn forget(self) {
        self.kept.set_value(None);
        self.offer.set(None);
    }

    /// Brings the session put aside back, as it was.
    fn restore(self, ctx: Ctx) {
        let Some((pg, _)) = self.kept.try_update_value(Option::take).flatten() else {
            return;
        };
        self.offer.set(None);
        // A restart first: it resets what the page derived from the cluster shown (the log).
        ctx.restart(pg.scenario().clone(), String::new());
        ctx.pg.set_value(pg);
        ctx.notice.set(Some(
            "Restored the session from before the new cluster.".into(),
        ));
        ctx.publish();
        crate::share_ui::save_session(ctx);
    }
}

/// "The previous session was put aside. Undo", while the new cluster is the one shown.
#[component]
pub fn UndoBar(ctx: Ctx, undo: Undo) -> impl IntoView {
    let text = move || {
        ctx.status.track();
        let current = undo.kept.with_value(|k| {
            k.as_ref()
                .is_some_and(|(_, after)| ctx.pg.with_value(|pg| pg.scenario() == after))
        });
        undo.offer.get().filter(|_| current)
    };
    view! {
        <p class="undo-bar" role="status" prop:hidden=move || text().is_none()>
            {move || text().unwrap_or_default()}
            " "
            <button aria-label="Undo" on:click=move |_| undo.restore(ctx)>"Undo"</button>
        </p>
    }
}
