//! What the command-line tests share: running the binary and reading what it wrote.

use std::process::{Command, Output};

pub fn watermark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_watermark"))
        .args(args)
        .output()
        .expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
