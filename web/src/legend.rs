//! The legend: every mark the cluster view draws, drawn with the same classes (so with the
//! same styles) and named in words. Each entry lists, in `data-mark`, the classes it stands
//! for; a browser test checks that every class drawn in the picture has one.
//!
//! One static piece of markup, collapsed by default: it costs a few hundred bytes, not a
//! view per entry.

/// (classes it explains, the mark as SVG inside a 28×18 box, what it means).
pub const ENTRIES: &[(&str, &str, &str)] = &[
    ("committed", r#"<g class="cell committed"><rect x="2" y="1" width="24" height="16" rx="3"/></g>"#,
        "committed: a leader's high watermark covered this very record"),
    ("uncommitted", r#"<g class="cell uncommitted"><rect x="2" y="1" width="24" height="16" rx="3"/></g>"#,
        "not yet committed (above the high watermark), dashed border"),
    ("divergent", r#"<g class="cell divergent"><rect x="2" y="1" width="24" height="16" rx="3"/></g>"#,
        "diverged from the current leader's log, thick border"),
    ("lost", r#"<g class="cell lost"><rect x="2" y="1" width="24" height="16" rx="3"/><text class="value" x="5" y="13">v</text></g>"#,
        "committed, then lost to an unclean election: dashed red border, value struck through"),
    ("truncated", r#"<g class="cell truncated"><rect x="2" y="1" width="24" height="16" rx="3"/><text class="value" x="5" y="13">v</text></g>"#,
        "truncated: thrown away by its broker, falling out of the lane"),
    ("epoch", r#"<text class="epoch-key" x="4" y="13">e3</text>"#,
        "e3 under a value: the first record of leader epoch 3 in that log"),
    ("hw-marker", r#"<g class="hw-marker" transform="translate(6 0)"><line x1="0" x2="0" y1="1" y2="17"/><text x="3" y="13">HW</text></g>"#,
        "HW: the broker's high watermark (records left of it are readable)"),
    ("leo-marker", r#"<g class="leo-marker" transform="translate(6 0)"><line x1="0" x2="0" y1="1" y2="17"/><text x="3" y="9">LEO</text></g>"#,
        "LEO: the log end offset, where the next record goes"),
    ("lag", r#"<g class="lag"><rect class="lag-track" x="1" y="6" width="26" height="6" rx="3"/><rect class="lag-fill" x="1" y="6" width="16" height="6" rx="3"/></g>"#,
        "lag bar under a follower: full when it has just caught up with the leader, empty at replica.lag.time.max.ms, when the leader drops it from the ISR"),
    ("leader", r#"<g class="lane leader"><rect class="lane-bg" x="2" y="2" width="24" height="14" rx="3"/></g>"#,
        "lane with a thick border: the partition's leader"),
    ("follower none running shutting-down", r#"<g class="lane"><rect class="lane-bg" x="2" y="2" width="24" height="14" rx="3"/></g>"#,
        "thin border: a running follower, or a broker without a replica"),
    ("frozen", r#"<g class="lane frozen"><rect class="lane-bg" x="2" y="2" width="24" height="14" rx="3"/></g>"#,
        "dashed border: frozen (SIGSTOP)"),
    ("killed stopped", r#"<g class="lane killed"><rect class="lane-bg" x="2" y="2" width="24" height="14" rx="3"/></g>"#,
        "faded, dotted border: killed or stopped"),
    ("fenced", r#"<g class="lane fenced"><rect class="lane-bg" x="2" y="2" width="24" height="14" rx="3"/></g>"#,
        "red dashed border: fenced by the controller"),
    ("fetch", r#"<g class="packet fetch"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: a follower's Fetch"),
    ("fetchresponse", r#"<g class="packet fetchresponse"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: the leader's FetchResponse"),
    ("produce produceresponse", r#"<g class="packet produce"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: the producer's Produce, or its answer"),
    ("consumerfetch consumerfetchresponse", r#"<g class="packet consumerfetch"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: the consumer's fetch, or its answer"),
    ("alterpartition alterpartitionresponse", r#"<g class="packet alterpartition"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: AlterPartition (an ISR change) to the controller, or its answer"),
    ("brokerheartbeat brokerheartbeatresponse brokerregistration brokerregistrationresponse metadata",
        r#"<g class="packet metadata"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: heartbeats, registrations and metadata between brokers and the controller"),
    ("connectionreset", r#"<g class="packet connectionreset"><circle cx="14" cy="9" r="6"/></g>"#,
        "message: a connection reset (the peer's process is gone)"),
    ("buffered", r#"<g class="packet buffered fetch"><circle cx="14" cy="9" r="6"/></g>"#,
        "dashed ring: waiting in a frozen broker's socket buffer"),
    ("trail", r#"<g class="trail fetch"><line class="trail-path" x1="1" y1="9" x2="19" y2="9"/><circle cx="20" cy="9" r="5"/></g>"#,
        "hollow ring at the end of a thin line: a message that just arrived (read by its destination), and the path it took, fading over 0.6 s of simulated time. Playing faster than 4×, messages and trails are drawn without their labels (each would show for under 150 ms): pause to read them"),
    ("dropped", r#"<g class="trail dropped fetch"><line class="trail-path" x1="1" y1="9" x2="19" y2="9"/><circle cx="20" cy="9" r="5"/></g>"#,
        "red dashed ring and path: a message dropped where it arrived (its link is cut, or the process it was sent to is gone)"),
];

/// The legend's list as markup.
pub fn markup() -> String {
    ENTRIES
        .iter()
        .map(|(marks, svg, text)| {
            format!(
                r#"<li data-mark="{marks}"><svg width="28" height="18" viewBox="0 0 28 18" aria-hidden="true">{svg}</svg>{text}</li>"#
            )
        })
        .collect()
}

#[leptos::component]
pub fn Legend() -> impl leptos::IntoView {
    use leptos::prelude::*;
    view! {
        <details class="legend">
            <summary>"Legend: what each mark means"</summary>
            <ul inner_html=markup()></ul>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::CellKind;

    #[test]
    fn every_cell_kind_has_an_entry() {
        let marks: Vec<&str> = ENTRIES.iter().flat_map(|e| e.0.split(' ')).collect();
        for kind in [
            CellKind::Committed,
            CellKind::Uncommitted,
            CellKind::Divergent,
            CellKind::Lost,
        ] {
            let class = kind.class().trim_start_matches("cell ");
            assert!(marks.contains(&class), "{class}");
        }
        assert!(markup().starts_with(r#"<li data-mark="committed"><svg"#));
    }
}
