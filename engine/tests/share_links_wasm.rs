//! Links are the same bytes in WebAssembly as natively: the deflater depends on nothing
//! that differs between the two (pointer width, hashing order). A digest of every preset's
//! link, checked by both builds; it changes only if the deflater writes other bytes.
//! In wasm: `cargo test -p watermark-engine --target wasm32-unknown-unknown --test share_links_wasm`.

/// FNV-1a of every preset's link, in preset order, each followed by a newline.
/// (Changed by the zone-outage preset's describe-filter expectations and the historical
/// modes' presets, issue 14's fifth session; then by the four side-by-side presets, issue
/// 15's `compare`: every earlier preset's link is unchanged, tests/compare.rs; then by the
/// describe lines' `Elr: N/A` before Kafka 3.8, quoted by two presets' expectations; then
/// by the presets unclean-by-replica-order (and last-replica-standing-no-elr's words on it)
/// and topic-min-isr-side-by-side, a variant of a topic's own configs.)
const PRESET_LINKS_DIGEST: u64 = 0xf8b6_83b9_2777_7e24;

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn preset_links_have_the_same_bytes_natively_and_in_wasm() {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in watermark_engine::presets::PRESETS {
        let s = watermark_engine::presets::preset(p.name).expect("preset");
        for b in watermark_engine::share::encode(&s).bytes().chain([b'\n']) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    assert_eq!(h, PRESET_LINKS_DIGEST, "{h:#x}");
}
