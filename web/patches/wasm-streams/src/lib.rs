//! The part of wasm-streams 0.5's API that server_fn 0.8 names, put in its place through
//! `[patch.crates-io]` in the workspace's Cargo.toml.
//!
//! Why: Leptos 0.8 always enables server_fn's `browser` feature, whose client turns
//! streaming server-function bodies into JavaScript streams with wasm-streams. Watermark
//! runs entirely in the browser and has no server functions, so none of that code can run.
//! But wasm-streams exports three JavaScript classes (`IntoUnderlyingSource`,
//! `IntoUnderlyingByteSource`, `IntoUnderlyingSink`), and exports are never removed as
//! unused: they kept about 17 kB of wasm (their promise code and std::io's error text) and
//! 1 kB of glue, 8 kB of the shipped gzip (BENCHMARKS.md, "Shipped size").
//!
//! What is here: the types and functions server_fn's `request::browser` and
//! `response::browser` name, with the same signatures. Wrapping and unwrapping a
//! `ReadableStream` work; turning a Rust stream into a JavaScript one, or the reverse,
//! which only streaming server functions do, throws a JavaScript error that says so.
//! If a Leptos upgrade names more of wasm-streams, the build fails here, not at run time.

use futures_util::stream::Empty;
use wasm_bindgen::JsValue;

pub mod readable {
    pub mod sys {
        pub use web_sys::ReadableStream;
    }
}

/// A JavaScript `ReadableStream`, as server_fn holds one.
pub struct ReadableStream {
    raw: web_sys::ReadableStream,
}

impl ReadableStream {
    pub fn from_raw(raw: web_sys::ReadableStream) -> Self {
        ReadableStream { raw }
    }

    /// A streaming request body (a streaming server function's input): not provided.
    pub fn from_stream<St>(_stream: St) -> Self {
        wasm_bindgen::throw_str(
            "streaming server-function bodies are not available in Watermark (web/patches/wasm-streams)",
        )
    }

    pub fn into_raw(self) -> web_sys::ReadableStream {
        self.raw
    }

    /// A streaming response body (a streaming server function's output): not provided.
    pub fn into_stream(self) -> Empty<Result<JsValue, JsValue>> {
        wasm_bindgen::throw_str(
            "streaming server-function responses are not available in Watermark (web/patches/wasm-streams)",
        )
    }
}
