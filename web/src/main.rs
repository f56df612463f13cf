//! Watermark's playground: mounts the Leptos app on the page's `<body>`.

mod app;
mod beside;
mod cluster;
mod finder;
mod frames;
mod geometry;
mod lane_menu;
mod legend;
mod model;
mod overview;
mod panels;
mod patch;
mod readout_tools;
mod session;
mod share_ui;
mod state;
mod undo;
mod walkthrough;

// Talc instead of Rust's default wasm allocator (dlmalloc): 1.3 kB of code instead of 7 kB,
// a binned free list that merges freed neighbours and reuses them, so a page that plays for
// hours stays bounded: 400 simulated minutes at 100x grew the wasm memory to 18.4 MB, against
// 17.3 MB with dlmalloc, both in the same steps as the session's history grows. The page runs
// on one thread, which `new_wasm_dynamic_allocator` requires.
#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    // In the data-loss finder's Web Worker (web/src/finder.rs) the same wasm runs without a
    // page: nothing to mount there; the worker calls `finder_run`.
    if web_sys::window().is_none() {
        return;
    }
    // Panics in wasm otherwise print only "unreachable executed"; this sends the
    // message and location to the browser console instead (console_error_panic_hook did
    // the same and added the JavaScript stack, which names no function in a release build:
    // 1.1 kB gzip more).
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
    }));
    leptos::mount::mount_to_body(app::App);
}
