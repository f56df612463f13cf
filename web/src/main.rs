//! Watermark's playground: mounts the Leptos app on the page's `<body>`.

mod app;
mod cluster;
mod frames;
mod geometry;
mod lane_menu;
mod legend;
mod model;
mod panels;
mod session;
mod share_ui;
mod state;
mod undo;
mod walkthrough;

fn main() {
    // Panics in wasm otherwise print only "unreachable executed"; this sends the
    // message and location to the browser console instead (console_error_panic_hook did
    // the same and added the JavaScript stack, which names no function in a release build:
    // 1.1 kB gzip more).
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
    }));
    leptos::mount::mount_to_body(app::App);
}
