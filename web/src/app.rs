//! The playground's top-level component. For now a first page: what Watermark is,
//! and which engine build the page runs.

use leptos::prelude::*;

/// The version label shown in the header, e.g. `engine v0.1.0`.
pub fn engine_version_label(version: &str) -> String {
    format!("engine v{version}")
}

/// The whole page. `data-wasm="ready"` is set only here, by the wasm module, so a
/// browser test can tell a rendered app from the static `index.html`.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <div class="app" data-wasm="ready">
            <header class="masthead">
                <h1>"Watermark"</h1>
                <span class="version" id="engine-version">
                    {engine_version_label(watermark_engine::VERSION)}
                </span>
            </header>
            <main>
                <p class="lede">
                    "A browser playground for Apache Kafka partition replication: "
                    "watch leaders, followers, the ISR and the high watermark move, "
                    "one message at a time."
                </p>
                <p class="note">"The simulation view is on its way."</p>
            </main>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_label_prefixes_engine_and_v() {
        assert_eq!(engine_version_label("1.2.3"), "engine v1.2.3");
    }
}
