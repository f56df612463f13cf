//! Watermark's engine: a deterministic, sans-IO simulation of Apache Kafka 4.x
//! partition replication.

/// The engine's version, shown by the UI and the command-line runner.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
