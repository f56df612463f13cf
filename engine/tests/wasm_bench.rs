//! Timing of the engine compiled to WebAssembly, with the JavaScript host's
//! `performance.now()`: events per second, the time to rebuild any moment of a
//! 10-minute, 10 000-record scenario, and the cost of one checkpoint (`Sim::clone`) of a
//! 7-broker simulation whose trace is full, and issue 14's 12-broker, 100-partition cluster
//! for 10 simulated minutes. Ignored by default (timings are measurements, not
//! assertions); run with
//! `cargo test -p watermark-engine --release --target wasm32-unknown-unknown --test wasm_bench -- --include-ignored`.
#![cfg(target_arch = "wasm32")]

#[path = "common/workloads.rs"]
mod workloads;

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;
use watermark_engine::rewind::Rewind;
use watermark_engine::Sim;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance)]
    fn now() -> f64;
    #[wasm_bindgen(js_namespace = console)]
    fn log(s: &str);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[wasm_bindgen_test]
#[ignore]
fn timings() {
    for (name, s) in [
        ("steady", workloads::steady()),
        ("fault-heavy", workloads::fault_heavy()),
    ] {
        let mut times = vec![];
        let mut events = 0;
        for _ in 0..7 {
            let t0 = now();
            events = watermark_engine::run(&s, false)
                .expect("runs")
                .events_processed();
            times.push(now() - t0);
        }
        let ms = median(times);
        log(&format!(
            "wasm events/{name}: {events} events in {ms:.2} ms = {:.0} events/s",
            events as f64 / ms * 1000.0
        ));
    }
    // Issue 14's cluster for 10 simulated minutes (the goal: under 3 s in wasm), without
    // and with the invariants the playground checks.
    let cluster = workloads::cluster(10);
    for check in [false, true] {
        let t0 = now();
        let events = watermark_engine::run(&cluster, check)
            .expect("runs")
            .events_processed();
        log(&format!(
            "wasm cluster 12 brokers x 100 partitions, 10 min, invariants {check}: {events} events in {:.0} ms",
            now() - t0
        ));
    }
    let scenario = workloads::ten_minutes();
    let mut live = Sim::new(&scenario).expect("builds");
    let mut rewind = Rewind::new(&live, 5_000);
    let mut t = 0;
    while t < 600_000 {
        t += 250;
        live.advance_to(t);
        rewind.observe(&live);
    }
    for at in [59_999u64, 304_999, 599_999] {
        let mut times = vec![];
        for _ in 0..15 {
            let t0 = now();
            let s = rewind.state_at(at);
            times.push(now() - t0);
            assert!(s.now() == at);
        }
        log(&format!(
            "wasm rewind/state_at({at}) 10 min, 10k records: median {:.2} ms",
            median(times)
        ));
    }
    let mut times = vec![];
    for _ in 0..15 {
        let t0 = now();
        let n = live.snapshot().brokers.len();
        times.push(now() - t0);
        assert!(n == 3);
    }
    log(&format!(
        "wasm snapshot with 10k-record logs: median {:.2} ms",
        median(times)
    ));
    let mut live = watermark_engine::run(&workloads::busy_seven_brokers(), true).expect("runs");
    let mut times = vec![];
    for _ in 0..15 {
        let t0 = now();
        let copy = live.clone();
        times.push(now() - t0);
        live = copy;
    }
    log(&format!(
        "wasm Sim::clone, 7 brokers, full trace: median {:.3} ms",
        median(times)
    ));
}
