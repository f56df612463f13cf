//! Reading `kafka-topics.sh --describe` partition lines, shared by the cluster tests
//! (`clusters.rs`, `zones.rs`).

/// `Topic: T Partition: P Leader: L Replicas: R Isr: I ...` → (replicas, isr, leader).
pub fn describe_fields(line: &str) -> (Vec<u32>, Vec<u32>, Option<u32>) {
    let field = |name: &str| {
        let start = line.find(name).expect(name) + name.len();
        line[start..].split(' ').next().unwrap_or("").to_string()
    };
    let ids = |s: String| -> Vec<u32> { s.split(',').filter_map(|x| x.parse().ok()).collect() };
    (
        ids(field("Replicas: ")),
        ids(field("Isr: ")),
        field("Leader: ").parse().ok(),
    )
}
