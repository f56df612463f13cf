//! `watermark explore` run as a user runs it: what it prints, writes and exits with.

mod common;

use common::{stderr, stdout, watermark};

const PROCESS_FAULTS: &str = "freeze,kill,stop,slow,cut,cut_controller";

#[test]
fn a_safe_configuration_exits_0_with_the_count() {
    // leader-failover: Kafka 4.x, acks=all, RF 3, min.insync.replicas 2, unclean off.
    let o = watermark(&[
        "explore",
        "--preset",
        "leader-failover",
        "--budget",
        "60",
        "--faults",
        PROCESS_FAULTS,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "tried 60 schedules (seed 0): no property broke\n"
    );
}

#[test]
fn a_found_loss_exits_1_and_writes_a_scenario_that_shows_it() {
    let dir = std::env::temp_dir().join(format!("watermark-explore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("found.json");
    let file = file.to_str().expect("a UTF-8 path");
    let o = watermark(&[
        "explore",
        "--preset",
        "unclean-election",
        "--budget",
        "100",
        "--out",
        file,
        "--base",
        "https://example.test/",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.starts_with("tried 59 schedules (seed 0): schedule 58 broke read-rewritten"),
        "{out}"
    );
    // Shrunk: each fault as early and as short as still breaks it (a 20 s cut and a 10 s
    // lost disk as found shrink to 10 s and 200 ms).
    assert!(
        out.contains(
            "shrunk to 2 fault(s):\n  at 0.050s for 10000 ms: the link between broker 3 and the controller is cut\n  at 9.550s for 200 ms: broker 2 loses its disk (the process dies with it)\n"
        ),
        "{out}"
    );
    assert!(out.contains(&format!("wrote {file}")), "{out}");
    // The file runs, its expectation (the engine's line of the rewritten read) is met.
    let check = watermark(&["check", file]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert_eq!(stdout(&check), format!("{file}: 1 expectation, all met\n"));
    let run = stdout(&watermark(&["run", file]));
    assert!(run.contains("# Step 1. "), "{run}");
    assert!(run.contains("# Here a consumer read a record"), "{run}");
    // The link holds the written scenario.
    let link = out
        .lines()
        .find_map(|l| l.strip_prefix("link: "))
        .expect("a link line");
    assert!(link.starts_with("https://example.test/#s=w1."), "{link}");
    let decoded = stdout(&watermark(&["decode", link]));
    let written = std::fs::read_to_string(file).expect("the written file");
    assert_eq!(decoded.trim_end(), written.trim_end());
}

#[test]
fn the_answer_does_not_depend_on_the_thread_count() {
    let run = |jobs: &str| {
        let o = watermark(&[
            "explore",
            "--preset",
            "unclean-election",
            "--budget",
            "100",
            "--seed",
            "0",
            "--jobs",
            jobs,
        ]);
        (o.status.code(), stdout(&o))
    };
    let one = run("1");
    assert_eq!(one.0, Some(1), "{}", one.1);
    assert_eq!(run("3"), one);
    assert_eq!(run("1"), one);
}

#[test]
fn bad_input_exits_2_and_names_the_option() {
    for (args, says) in [
        (
            vec!["--budget", "0"],
            "--budget: 0 schedules: allowed 1 to 10000000",
        ),
        (vec!["--seed", "x"], "--seed: \"x\" is not a whole number"),
        (
            vec!["--faults", "kill,boom"],
            "--faults: unknown fault kind \"boom\"",
        ),
        (
            vec!["--faults", "lose_zone"],
            "--faults: lose_zone needs brokers with racks",
        ),
        (
            vec!["--max-faults", "9"],
            "--faults: 9 faults per schedule: allowed 1 to 8",
        ),
        (vec!["--jobs", "0"], "--jobs: 0 threads"),
        (vec!["--frobnicate"], "unknown option --frobnicate"),
    ] {
        let mut a = vec!["explore", "--preset", "leader-failover"];
        a.extend(args);
        let o = watermark(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(stderr(&o).contains(says), "{a:?}: {}", stderr(&o));
    }
    let o = watermark(&["explore", "/no/such/file.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read"));
}
