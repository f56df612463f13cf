use leptos::prelude::*;

fn main() {
    console_error_panic_hook_set();
    leptos::mount::mount_to_body(|| view! { <h1>"Watermark " {watermark_engine::VERSION}</h1> });
}

fn console_error_panic_hook_set() {}
