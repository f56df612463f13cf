//! `watermark`: runs Watermark scenarios natively and prints a transcript in the words of
//! Kafka's own tools, each line prefixed by the simulated time.
//!
//! ```text
//! watermark run FILE [--json] [--all] [--metrics]
//! watermark run --preset NAME [--json] [--all] [--metrics]
//! watermark presets
//! watermark link FILE [--base URL]
//! watermark link --preset NAME [--base URL]
//! watermark decode LINK
//! watermark check FILE... [--preset NAME]... [--presets] [--json]
//! watermark explore FILE [--budget N] [--seed S] [--faults LIST] [--max-faults K]
//!                        [--jobs J] [--out FILE] [--base URL]
//! watermark explore --preset NAME [...]
//! ```

use std::io::Write;
use std::process::ExitCode;

use watermark_engine::event::TraceKind;
use watermark_engine::presets::PRESETS;
use watermark_engine::{Scenario, TraceEvent};

const USAGE: &str = "usage:
  watermark run FILE [--json] [--all] [--metrics]         run a scenario file
  watermark run --preset NAME [--json] [--all] [--metrics] run a built-in preset
  watermark presets                            list the built-in presets
  watermark link FILE [--base URL]             print the share link of a scenario file
  watermark link --preset NAME [--base URL]    print the share link of a preset
  watermark decode LINK                        print the scenario JSON a share link holds
  watermark check FILE... [--preset NAME]... [--presets] [--json]
                                               run the scenarios' expectations; exit 1 if one fails
  watermark explore FILE [--budget N] [--seed S] [--faults LIST] [--max-faults K]
                    [--jobs J] [--out FILE] [--base URL]
  watermark explore --preset NAME [...]        search fault schedules for a lost acknowledged
                                               record; exit 1 if one is found

A scenario with `compare` prints the top run, then each variant's run under a header
(=== compare[0]: acks=1 ===), then what differs at the end (=== differences at T ===).

--json  print the transcript as JSON lines; with check, a JSON object per scenario: its
        expectations (`run`: 1 for compare[0], left out for the top run), each one's
        mismatches, and the invariants broken
--all   also print broker lifecycle lines (becoming leader or follower, starting)
--metrics  after the transcript, Kafka's metrics at the end of the run, per broker and
        cluster-wide (as the `metrics` action prints them; with --json one JSON object)
--base  the playground's address: print URL#s=w1.... instead of the bare payload w1....
--budget  schedules to try (default 200); --seed  the search's seed (default 0)
--faults  the fault kinds to draw, comma-separated (default all: freeze, kill, stop,
        power_loss, lose_disk, slow, cut, cut_controller, and lose_zone where brokers have racks)
--max-faults  the most faults in a schedule (default 4, at most 8)
--jobs  threads (default: every core); the answer does not depend on it
--out   write the found schedule as a scenario file
LINK    a whole link (https://.../#s=w1....), its fragment (#s=w1....) or the payload (w1....)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args, &mut std::io::stdout().lock()) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("watermark: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let io = |e: std::io::Error| e.to_string();
    match args.first().map(String::as_str) {
        Some("presets") => {
            for p in PRESETS {
                let s =
                    Scenario::from_json(p.json).map_err(|e| format!("preset {}: {e}", p.name))?;
                writeln!(out, "{:<24} {}", p.name, s.title).map_err(io)?;
                writeln!(out, "{:<24} {}", "", s.source).map_err(io)?;
                if !s.protocol.is_default() {
                    writeln!(out, "{:<24} protocol {}", "", s.protocol.name()).map_err(io)?;
                }
                for (i, v) in s.compare.iter().enumerate() {
                    writeln!(out, "{:<24} compare[{i}]: {}", "", v.title()).map_err(io)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Some("run") => {
            let rest = &args[1..];
            let json = rest.iter().any(|a| a == "--json");
            let all = rest.iter().any(|a| a == "--all");
            let metrics = rest.iter().any(|a| a == "--metrics");
            let positional: Vec<&String> = rest.iter().filter(|a| !a.starts_with("--")).collect();
            let scenario = if let Some(i) = rest.iter().position(|a| a == "--preset") {
                let name = rest
                    .get(i + 1)
                    .ok_or("--preset needs a name (see `watermark presets`)")?;
                watermark_engine::presets::preset(name).map_err(|e| e.to_string())?
            } else {
                let file = positional.first().ok_or_else(|| USAGE.to_string())?;
                read_scenario(file)?
            };
            let sim = watermark_engine::run(&scenario, true).map_err(|e| e.to_string())?;
            transcript(&sim, json, all, out)?;
            if metrics {
                let m = sim.kafka_metrics();
                if json {
                    let v = serde_json::json!({ "time_ms": sim.now(), "metrics": m });
                    writeln!(out, "{v}").map_err(io)?;
                } else {
                    let t = watermark_engine::trace::format_time(sim.now());
                    for line in m.lines(None) {
                        writeln!(out, "[{t}] {line}").map_err(io)?;
                    }
                }
            }
            let broken = compared(&scenario, &sim, json, all, out)?;
            if sim.violations().is_empty() && !broken {
                Ok(ExitCode::SUCCESS)
            } else {
                Ok(ExitCode::from(1))
            }
        }
        Some("link") => {
            let rest = &args[1..];
            let base = flag_value(rest, "--base")?;
            let scenario = scenario_arg(rest, &["--base"])?;
            let payload = watermark_engine::share::encode(&scenario);
            match base {
                Some(base) => writeln!(out, "{base}#s={payload}").map_err(io)?,
                None => writeln!(out, "{payload}").map_err(io)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Some("decode") => {
            let link = match &args[1..] {
                [link] => link,
                _ => return Err(USAGE.to_string()),
            };
            let scenario = watermark_engine::share::decode(link_payload(link))
                .map_err(|e| format!("the link cannot be opened: {e}"))?;
            writeln!(out, "{}", scenario.to_json_pretty()).map_err(io)?;
            Ok(ExitCode::SUCCESS)
        }
        Some("check") => check(&args[1..], out),
        Some("explore") => explore(&args[1..], out),
        Some("--version") | Some("-V") => {
            writeln!(out, "watermark {}", watermark_engine::VERSION).map_err(io)?;
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(USAGE.to_string()),
    }
}

/// A run's transcript, as text lines or JSON lines.
fn transcript(
    sim: &watermark_engine::Sim,
    json: bool,
    all: bool,
    out: &mut dyn Write,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    for e in sim.trace_events().filter(|e| all || shown(e)) {
        if json {
            writeln!(
                out,
                "{}",
                serde_json::to_string(e).map_err(|e| e.to_string())?
            )
            .map_err(io)?;
        } else {
            writeln!(out, "{}", e.line()).map_err(io)?;
        }
    }
    Ok(())
}

/// After the top run's transcript, each variant of `compare`'s: a header line
/// (`=== compare[0]: acks=1 ===`) and its transcript, then what differs between the top run
/// and each variant at the end (`=== differences at 36.000s ===`, a line per difference).
/// With `--json` the header and the differences are JSON objects. Nothing without
/// `compare`. Returns whether a variant's run broke an invariant.
fn compared(
    scenario: &Scenario,
    top: &watermark_engine::Sim,
    json: bool,
    all: bool,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut runs = Vec::new();
    let mut broken = false;
    for (i, v) in scenario.compare.iter().enumerate() {
        let variant = scenario.variant(i).map_err(|e| e.to_string())?;
        let sim = watermark_engine::run(&variant, true).map_err(|e| e.to_string())?;
        if json {
            let header = serde_json::json!({ "compare": i, "title": v.title() });
            writeln!(out, "{header}").map_err(io)?;
        } else {
            writeln!(out, "=== compare[{i}]: {} ===", v.title()).map_err(io)?;
        }
        transcript(&sim, json, all, out)?;
        broken |= !sim.violations().is_empty();
        runs.push(sim);
    }
    if runs.is_empty() {
        return Ok(broken);
    }
    let time = watermark_engine::trace::format_time(top.now());
    if !json {
        writeln!(out, "=== differences at {} ===", time.trim()).map_err(io)?;
    }
    for (i, sim) in runs.iter().enumerate() {
        let found = watermark_engine::compare::differences(top, sim);
        if json {
            let v = serde_json::json!({
                "differences_at_ms": top.now(),
                "compare": i,
                "differences": found,
            });
            writeln!(out, "{v}").map_err(io)?;
            continue;
        }
        if found.is_empty() {
            writeln!(out, "compare[{i}]: no difference").map_err(io)?;
        }
        for d in found {
            writeln!(out, "compare[{i}]: {}", d.line(&format!("compare[{i}]"))).map_err(io)?;
        }
    }
    Ok(broken)
}

/// `watermark check`: every scenario's expectations, a line per scenario and an account of
/// each one not met. Exit 0 when all are met, 1 when one is not (or the run broke an
/// invariant), 2 when a scenario cannot be read.
fn check(rest: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let io = |e: std::io::Error| e.to_string();
    let mut named: Vec<(String, Result<Scenario, String>)> = vec![];
    let mut json = false;
    let mut i = 0;
    while i < rest.len() {
        match rest[i].as_str() {
            "--json" => json = true,
            "--preset" => {
                let name = flag_value(&rest[i..], "--preset")?.unwrap_or_default();
                let s = watermark_engine::presets::preset(name).map_err(|e| e.to_string());
                named.push((format!("preset {name}"), s));
                i += 2;
                continue;
            }
            "--presets" => {
                for p in PRESETS {
                    let s = watermark_engine::presets::preset(p.name).map_err(|e| e.to_string());
                    named.push((format!("preset {}", p.name), s));
                }
            }
            a if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            file => named.push((file.to_string(), read_scenario(file))),
        }
        i += 1;
    }
    if named.is_empty() {
        return Err(USAGE.to_string());
    }
    let (mut failed, mut broken) = (0usize, 0usize);
    for (name, scenario) in &named {
        let scenario = match scenario {
            Ok(s) => s,
            Err(e) => {
                if json {
                    let v = serde_json::json!({ "scenario": name, "error": e });
                    writeln!(out, "{v}").map_err(io)?;
                } else {
                    writeln!(out, "{name}: cannot be checked: {e}").map_err(io)?;
                }
                broken += 1;
                continue;
            }
        };
        let (outcomes, violations) = watermark_engine::check::check_with_violations(scenario)
            .map_err(|e| format!("{name}: {e}"))?;
        let not_met = outcomes.iter().filter(|o| !o.met()).count();
        if not_met > 0 || !violations.is_empty() {
            failed += 1;
        }
        if json {
            writeln!(
                out,
                "{}",
                check_json(name, scenario, &outcomes, &violations)
            )
            .map_err(io)?;
            continue;
        }
        let n = outcomes.len();
        let verdict = match (n, not_met) {
            (0, _) => "no expectations".to_string(),
            (n, 0) => format!("{n} expectation{}, all met", if n == 1 { "" } else { "s" }),
            (n, k) => format!(
                "{n} expectation{}, {k} NOT MET",
                if n == 1 { "" } else { "s" }
            ),
        };
        writeln!(out, "{name}: {verdict}").map_err(io)?;
        for o in outcomes.iter().filter(|o| !o.met()) {
            // An expectation of a compared run says which (`run`: 1 is compare[0]).
            let run = match scenario.expect.get(o.index).and_then(|e| e.run) {
                Some(r) => format!("compare[{}]: ", r.saturating_sub(1)),
                None => String::new(),
            };
            writeln!(out, "  {run}{}", o.account().replace('\n', "\n  ")).map_err(io)?;
        }
        for v in &violations {
            // A variant's violation names it already (`compare[0]: ...`).
            writeln!(out, "  invariant broken: {v}").map_err(io)?;
        }
    }
    if broken > 0 {
        Ok(ExitCode::from(2))
    } else if failed > 0 {
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// `watermark check --json`'s object for one scenario: every expectation with the run it
/// checks (`run`, 1 for `compare[0]`, as the scenario's `expect[].run`, with `compare` and
/// the variant's title `run_title`; all left out for the top run), whether it was met and its mismatches, and the invariants the runs broke.
fn check_json(
    name: &str,
    scenario: &Scenario,
    outcomes: &[watermark_engine::check::Outcome],
    violations: &[String],
) -> serde_json::Value {
    let expectations: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let mut v = serde_json::json!({
                "index": o.index,
                "at_ms": o.at,
                "met": o.met(),
                "mismatches": o.mismatches,
            });
            if let Some(run) = scenario.expect.get(o.index).and_then(|e| e.run) {
                v["run"] = run.into();
                let i = run.saturating_sub(1) as usize;
                v["compare"] = i.into();
                if let Some(variant) = scenario.compare.get(i) {
                    v["run_title"] = variant.title().into();
                }
            }
            if !o.label.is_empty() {
                v["label"] = o.label.clone().into();
            }
            v
        })
        .collect();
    serde_json::json!({
        "scenario": name,
        "met": outcomes.iter().all(|o| o.met()) && violations.is_empty(),
        "expectations": expectations,
        "violations": violations,
    })
}

/// The value of `--name` as a number, if given; an error names the option.
fn number_flag(rest: &[String], name: &str) -> Result<Option<u64>, String> {
    match flag_value(rest, name)? {
        None => Ok(None),
        Some(v) => v
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("{name}: {v:?} is not a whole number ≥ 0")),
    }
}

/// `watermark explore`: searches fault schedules of a scenario for a broken property
/// (engine/src/explore.rs). Exit 0 when nothing is found, 1 when a schedule is, 2 on bad
/// input.
fn explore(rest: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    use watermark_engine::explore::{self, Explorer, Options};
    let io = |e: std::io::Error| e.to_string();
    const VALUED: [&str; 8] = [
        "--budget",
        "--seed",
        "--faults",
        "--max-faults",
        "--jobs",
        "--out",
        "--base",
        "--preset",
    ];
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        if VALUED.contains(&a) {
            i += 2;
            continue;
        }
        if a.starts_with("--") {
            return Err(format!("unknown option {a}\n{USAGE}"));
        }
        i += 1;
    }
    let scenario = scenario_arg(rest, &VALUED)?;
    let budget = number_flag(rest, "--budget")?.unwrap_or(200);
    let seed = number_flag(rest, "--seed")?.unwrap_or(0);
    let max_faults = number_flag(rest, "--max-faults")?.unwrap_or(4);
    let jobs = match number_flag(rest, "--jobs")? {
        Some(0) => return Err("--jobs: 0 threads; allowed 1 or more".into()),
        Some(j) => j as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let kinds = match flag_value(rest, "--faults")? {
        Some(list) => Some(explore::parse_fault_kinds(list).map_err(|e| format!("--{e}"))?),
        None => None,
    };
    let opts = Options {
        budget,
        seed,
        max_faults: usize::try_from(max_faults).unwrap_or(usize::MAX),
    };
    explore::validate(&opts).map_err(|e| format!("--{e}"))?;
    let ex = Explorer::new(&scenario, opts.max_faults, kinds.as_deref()).map_err(|e| {
        if e.field == "faults" {
            format!("--{e}")
        } else {
            e.to_string()
        }
    })?;
    let report = explore::search_parallel(&ex, opts, jobs).map_err(|e| e.to_string())?;
    let Some(f) = report.found else {
        writeln!(
            out,
            "tried {} schedules (seed {seed}): no property broke",
            report.tried
        )
        .map_err(io)?;
        return Ok(ExitCode::SUCCESS);
    };
    let v = &f.shrunk_violation;
    writeln!(
        out,
        "tried {} schedules (seed {seed}): schedule {} broke {}: {}",
        report.tried,
        f.index,
        f.violation.property.name(),
        f.violation.property.words()
    )
    .map_err(io)?;
    writeln!(out, "as found, {} fault(s):", f.schedule.len()).map_err(io)?;
    for l in explore::describe_schedule(&f.schedule) {
        writeln!(out, "  {l}").map_err(io)?;
    }
    writeln!(out, "shrunk to {} fault(s):", f.shrunk.len()).map_err(io)?;
    for l in explore::describe_schedule(&f.shrunk) {
        writeln!(out, "  {l}").map_err(io)?;
    }
    writeln!(out, "what broke: {}", v.detail).map_err(io)?;
    let found = ex.found_scenario(&f.shrunk, v);
    if let Some(file) = flag_value(rest, "--out")? {
        std::fs::write(file, found.to_json_pretty() + "\n")
            .map_err(|e| format!("--out: cannot write {file}: {e}"))?;
        writeln!(out, "wrote {file}").map_err(io)?;
    }
    let payload = watermark_engine::share::encode(&found);
    match flag_value(rest, "--base")? {
        Some(base) => writeln!(out, "link: {base}#s={payload}").map_err(io)?,
        None => writeln!(out, "link: {payload}").map_err(io)?,
    }
    Ok(ExitCode::from(1))
}

/// The scenario named by `--preset NAME` or by the first positional argument (a file);
/// `valued` lists the other options that take a value, so that value is not a file name.
fn scenario_arg(rest: &[String], valued: &[&str]) -> Result<Scenario, String> {
    if let Some(name) = flag_value(rest, "--preset")? {
        return watermark_engine::presets::preset(name).map_err(|e| e.to_string());
    }
    let mut positional = vec![];
    let mut i = 0;
    while i < rest.len() {
        if valued.contains(&rest[i].as_str()) {
            i += 2;
            continue;
        }
        if !rest[i].starts_with("--") {
            positional.push(&rest[i]);
        }
        i += 1;
    }
    let file = positional.first().ok_or_else(|| USAGE.to_string())?;
    read_scenario(file)
}

fn read_scenario(file: &str) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    Scenario::from_json(&text).map_err(|e| format!("{file}: {e}"))
}

/// The value after `--name`, if the option is there; an error if it has none.
fn flag_value<'a>(rest: &'a [String], name: &str) -> Result<Option<&'a str>, String> {
    match rest.iter().position(|a| a == name) {
        None => Ok(None),
        Some(i) => match rest.get(i + 1) {
            Some(v) if !v.starts_with("--") => Ok(Some(v.as_str())),
            _ => Err(format!("{name} needs a value")),
        },
    }
}

/// The `w1.…` payload of a link given whole (`https://…/?t=5#s=w1.…`), as its fragment
/// (`#s=w1.…`, `s=w1.…`) or bare, read as the playground reads a URL's fragment.
fn link_payload(link: &str) -> &str {
    let link = link.trim();
    let fragment = link.split_once('#').map_or(link, |(_, f)| f);
    fragment
        .split('&')
        .find_map(|p| p.strip_prefix("s="))
        .unwrap_or(fragment)
}

/// The transcript shows read-outs, results and server-log lines; broker lifecycle lines
/// (makeLeader/makeFollower) only with `--all`.
fn shown(e: &TraceEvent) -> bool {
    !matches!(e.kind(), TraceKind::Broker)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_to_string(args: &[&str]) -> (Result<ExitCode, String>, String) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut out = Vec::new();
        let r = run(&args, &mut out);
        (r, String::from_utf8(out).unwrap_or_default())
    }

    #[test]
    fn presets_lists_every_preset() {
        let (r, out) = run_to_string(&["presets"]);
        assert!(r.is_ok());
        for p in PRESETS {
            assert!(out.contains(p.name), "{} listed", p.name);
        }
        // A preset of a historical mode says which.
        assert!(
            out.contains("pre-kip-101-divergence   Before KIP-101"),
            "{out}"
        );
        assert!(out
            .lines()
            .any(|l| l.trim_start() == "protocol pre-kip-101"));
    }

    #[test]
    fn run_preset_prints_a_timed_transcript_and_json() {
        let (r, out) = run_to_string(&["run", "--preset", "min-isr-3"]);
        assert!(r.is_ok());
        assert!(
            out.lines()
                .any(|l| l.contains("Topic: strict Partition: 0 Leader: 1")),
            "{out}"
        );
        assert!(
            out.lines().all(|l| l.starts_with('[') && l.contains("s] ")),
            "{out}"
        );
        let (r, out) = run_to_string(&["run", "--preset", "min-isr-3", "--json"]);
        assert!(r.is_ok());
        for line in out.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v.get("time_ms").is_some() && v.get("text").is_some());
            // One partition: no line names it, no event carries it.
            assert!(v["event"].get("tp").is_none() || v["event"]["type"] != "produce_result");
        }
        assert!(out.contains(r#""type":"produce_result""#), "{out}");
    }

    #[test]
    fn run_shows_the_zone_actions_and_the_consumers_reads() {
        // The zone action's line and each broker's, and a read from a follower, in text ...
        let (r, out) = run_to_string(&["run", "--preset", "zone-outage"]);
        assert!(r.is_ok());
        for line in [
            "zone lost: kill -9 of every broker in rack b (brokers 3,4)",
            "kill -9 broker 3",
            "kill -9 broker 4",
            "zone back: start every broker in rack b (brokers 3,4)",
            "Updating preferred read replica for partition orders-0 to 1",
            "from follower 1, its preferred read replica)",
        ] {
            assert!(out.contains(line), "{line}: {out}");
        }
        // ... and in JSON, with their typed fields.
        let (r, out) = run_to_string(&["run", "--preset", "zone-outage", "--json"]);
        assert!(r.is_ok());
        let events: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].clone())
            .collect();
        assert!(events.iter().any(|e| e["type"] == "zone"
            && e["action"] == "lose"
            && e["zone"] == "b"
            && e["brokers"] == serde_json::json!([3, 4])));
        // Many partitions: a consumer read and a produce result carry theirs.
        let orders_0 = serde_json::json!({"topic": "orders", "partition": 0});
        assert!(events
            .iter()
            .any(|e| e["type"] == "consumer_read" && e["from"] == 1 && e["tp"] == orders_0));
        assert!(events
            .iter()
            .any(|e| e["type"] == "produce_result" && e["tp"] == orders_0));
        assert!(events
            .iter()
            .any(|e| e["type"] == "consumer_preferred_read_replica" && e["replica"] == 1));
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let (r, _) = run_to_string(&["run", "--preset", "nope"]);
        assert!(r.unwrap_err().contains("no preset named"));
        let (r, _) = run_to_string(&["run", "/no/such/file.json"]);
        assert!(r.unwrap_err().contains("cannot read"));
        let (r, _) = run_to_string(&["frobnicate"]);
        assert!(r.unwrap_err().contains("usage"));
    }
}
