//! The cluster overview: brokers as columns grouped by their `broker.rack`, partitions as
//! rows, each replica's state in its broker's column, and the marks `kafka-topics.sh
//! --describe` filters by. Shown when the cluster has more than one partition; choosing a
//! partition shows it in the lanes below.
//!
//! The table is one piece of markup, built from [`Overview`] by a pure function (tested
//! natively) and set only when it changed: the overview changes when an ISR, a leader or a
//! broker's state does, not with every fetch, and 200 partitions by 12 brokers are 2 400
//! cells (docs/ui.md, "The cluster overview").

use leptos::prelude::*;
use watermark_engine::overview::{Overview, PartitionRow, ReplicaState};
use watermark_engine::types::BrokerId;

use crate::state::Ctx;

/// Which partitions the table lists: TopicCommand's describe filters (all, then
/// `--under-replicated-partitions`, `--under-min-isr-partitions`, `--at-min-isr-partitions`,
/// `--unavailable-partitions`), in the order of the select's options, whose value is the index.
pub const FILTERS: [&str; 5] = [
    "all",
    "under-replicated",
    "under-min-isr",
    "at-min-isr",
    "unavailable",
];

/// Whether `row` passes the filter named `filter` (a key of [`FILTERS`]).
pub fn passes(row: &PartitionRow, filter: &str) -> bool {
    match filter {
        "under-replicated" => row.under_replicated(),
        "under-min-isr" => row.under_min_isr(),
        "at-min-isr" => row.at_min_isr(),
        "unavailable" => row.unavailable(),
        _ => true,
    }
}

/// The brokers (`brokers` in id order) in column order: by rack name, brokers without a
/// rack last, by id within a rack; each with its rack. An insertion by hand, not a sort: a
/// dozen brokers, and no sort's code in the wasm.
pub fn columns(
    brokers: &[BrokerId],
    rack_of: impl Fn(BrokerId) -> Option<String>,
) -> Vec<(BrokerId, Option<String>)> {
    let mut cols: Vec<(BrokerId, Option<String>)> = Vec::new();
    for &b in brokers {
        let rack = rack_of(b);
        // Before the first column of a later rack: the ids stay in order within a rack.
        let at = cols
            .iter()
            .position(|c| (rack.is_none(), &rack) < (c.1.is_none(), &c.1))
            .unwrap_or(cols.len());
        cols.insert(at, (b, rack));
    }
    cols
}

/// The word a replica's cell shows, and its class.
fn cell_word(state: ReplicaState, in_elr: bool) -> (&'static str, &'static str) {
    match state {
        ReplicaState::Leader => ("lead", "r-leader"),
        ReplicaState::InSync => ("isr", "r-isr"),
        ReplicaState::OutOfSync if in_elr => ("elr", "r-elr"),
        ReplicaState::OutOfSync => ("out", "r-out"),
        ReplicaState::Offline => ("off", "r-off"),
    }
}

/// The table's markup: a header row of racks (when any broker has one), a header row of
/// brokers with their state, then one row per partition that passes `filter`. Topic and
/// rack names need no escaping: the scenario reader accepts only Kafka's legal characters
/// for them (Topic.validate). Returns the markup and how many rows it lists.
pub fn table_markup(
    o: &Overview,
    cols: &[(BrokerId, Option<String>)],
    filter: &str,
) -> (String, usize) {
    let mut m = String::from("<table class=\"overview-table\"><thead>");
    if cols.iter().any(|c| c.1.is_some()) {
        m.push_str("<tr><td></td>");
        let mut i = 0;
        while i < cols.len() {
            let rack = &cols[i].1;
            let span = cols[i..].iter().take_while(|c| c.1 == *rack).count();
            // A rack's zone faults (version 2's zone actions): kill every broker of it or
            // start them again, cut it off from the rest or heal it.
            m.push_str(&match rack.as_deref() {
                Some(r) => format!(
                    "<th class=\"rack\" colspan=\"{span}\" scope=\"colgroup\">rack {r}<span class=\"zone-acts\">\
                     <button data-zone=\"lose:{r}\" aria-label=\"Lose zone {r}\" title=\"kill -9 every broker of rack {r}\">lose</button>\
                     <button data-zone=\"start:{r}\" aria-label=\"Start zone {r}\" title=\"start every broker of rack {r}\">start</button>\
                     <button data-zone=\"cut:{r}\" aria-label=\"Cut zone {r} off\" title=\"cut rack {r} off from the other racks and the controller\">cut</button>\
                     <button data-zone=\"heal:{r}\" aria-label=\"Heal zone {r}\" title=\"heal what cutting rack {r} off cut\">heal</button></span></th>"
                ),
                None => format!("<th class=\"rack\" colspan=\"{span}\" scope=\"colgroup\">no rack</th>"),
            });
            i += span;
        }
        m.push_str("<td></td></tr>");
    }
    m.push_str("<tr><th scope=\"col\">partition</th>");
    for (b, _) in cols {
        let state = o
            .brokers
            .iter()
            .find(|(id, _)| id == b)
            .map_or("", |(_, s)| s.label());
        m.push_str(&format!(
            "<th scope=\"col\" class=\"broker-col\" title=\"broker {b}: {state}\">{b}<small>{state}</small></th>"
        ));
    }
    m.push_str("<th scope=\"col\">marks</th></tr></thead><tbody>");
    let mut shown = 0;
    for row in &o.partitions {
        if !passes(row, filter) {
            continue;
        }
        shown += 1;
        let name = row.name();
        let viewed = if row.viewed { " class=\"viewed\"" } else { "" };
        m.push_str(&format!(
            "<tr{viewed}><th scope=\"row\"><button data-tp=\"{}:{}\" aria-pressed=\"{}\" title=\"Show {name} in the lanes\">{name}</button></th>",
            row.topic, row.partition, row.viewed
        ));
        for (b, _) in cols {
            match row.replicas.iter().position(|c| c.broker == *b) {
                Some(at) => {
                    let c = &row.replicas[at];
                    let (word, class) = cell_word(c.state, c.in_elr);
                    let mut facts = c.state.label().to_string();
                    if at == 0 {
                        facts.push_str(", preferred leader");
                    }
                    if c.adding {
                        facts.push_str(", being added by a reassignment");
                    }
                    if c.removing {
                        facts.push_str(", being removed by a reassignment");
                    }
                    match (c.state, c.in_isr, c.in_elr) {
                        (ReplicaState::Offline, true, _) => {
                            facts.push_str(", still in the ISR until fenced")
                        }
                        (ReplicaState::Offline | ReplicaState::OutOfSync, false, true) => {
                            facts.push_str(", in the ELR")
                        }
                        _ => {}
                    }
                    // A reassignment's adding replica is marked +, its removing one −.
                    let mark = if c.adding {
                        "+"
                    } else if c.removing {
                        "−"
                    } else {
                        ""
                    };
                    m.push_str(&format!(
                        "<td class=\"{class}\" title=\"{name} on broker {b}: {facts}\">{word}{mark}</td>"
                    ));
                }
                None => m.push_str("<td></td>"),
            }
        }
        let mut marks = vec![];
        if row.unavailable() {
            marks.push("unavailable");
        }
        if row.under_min_isr() {
            marks.push("under min ISR");
        } else if row.at_min_isr() {
            marks.push("at min ISR");
        }
        if row.under_replicated() {
            marks.push("under-replicated");
        }
        m.push_str(&format!(
            "<td class=\"marks\">{}</td></tr>",
            marks.join(", ")
        ));
    }
    m.push_str("</tbody></table>");
    (m, shown)
}

/// The counts line above the table: how many partitions, and how many of each mark.
pub fn counts_line(o: &Overview) -> String {
    let n = |f: &str| o.partitions.iter().filter(|r| passes(r, f)).count();
    let n_partitions = o.partitions.len();
    format!(
        "{n_partitions} partition{}: {} under-replicated, {} under min ISR, {} at min ISR, {} unavailable",
        if n_partitions == 1 { "" } else { "s" },
        n("under-replicated"),
        n("under-min-isr"),
        n("at-min-isr"),
        n("unavailable")
    )
}

/// Article 004's calculator for each topic (the settings' one speaks of the shown topic
/// only): its partitions, its replication factor (the smallest of its partitions', as
/// TopicCommand counts it during a reassignment), its `min.insync.replicas`, and what
/// [`crate::geometry::replication_calculator`] makes of them. One row per topic.
pub fn calculator_markup(o: &Overview) -> String {
    let mut m = String::from(
        "<div class=\"overview-calc\"><table aria-label=\"Calculator per topic\"><thead><tr>\
         <th scope=\"col\">topic</th><th scope=\"col\">partitions</th><th scope=\"col\">replication factor</th>\
         <th scope=\"col\">min.insync.replicas</th>\
         <th scope=\"col\">brokers that can fail with acks=all writes continuing</th>\
         <th scope=\"col\">brokers that can be lost for ever without losing a committed record</th></tr></thead><tbody>",
    );
    let mut rows = o.partitions.iter().peekable();
    while let Some(first) = rows.next() {
        let (mut n, mut rf) = (1, first.replication_factor);
        while let Some(r) = rows.next_if(|r| r.topic == first.topic) {
            n += 1;
            rf = rf.min(r.replication_factor);
        }
        let min = first.min_insync_replicas;
        let (fail, lose) = crate::geometry::replication_calculator(rf as u32, min);
        m.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{n}</td><td>{rf}</td><td>{min}</td><td>{fail}</td><td>{lose}</td></tr>",
            first.topic
        ));
    }
    m.push_str("</tbody></table></div>");
    m
}

/// Everything the overview shows but its filter: the counts, which partition the lanes
/// show, and the table (of the rows that pass `filter`, or a line saying none does). Empty
/// for a version-1 cluster (`v2` false) of one partition, which the lanes show whole.
pub fn overview_markup(
    o: &Overview,
    cols: &[(BrokerId, Option<String>)],
    filter: &str,
    v2: bool,
) -> String {
    if o.partitions.len() < 2 && !v2 {
        return String::new();
    }
    let viewed = o
        .partitions
        .iter()
        .find(|r| r.viewed)
        .map(|r| format!("The lanes below show {}. ", r.name()))
        .unwrap_or_default();
    let (table, shown) = table_markup(o, cols, filter);
    let empty = if shown == 0 {
        "<p class=\"overview-empty\">No partition matches this filter.</p>"
    } else {
        ""
    };
    format!(
        "<p class=\"overview-counts\">{}</p>{}<p class=\"overview-note\">{viewed}Choose a partition to show it there. \
         Each cell is that broker's replica as the controller's metadata has it: \
         <b class=\"r-leader\">lead</b> leader, <b class=\"r-isr\">isr</b> in-sync follower, \
         <b class=\"r-out\">out</b> out-of-sync follower, <b class=\"r-elr\">elr</b> out of sync but an eligible leader (KIP-966), \
         <b class=\"r-off\">off</b> its broker is killed, stopped or fenced.</p>\
         <div class=\"overview-scroll\">{table}</div>{empty}",
        counts_line(o),
        calculator_markup(o)
    )
}

#[component]
pub fn ClusterOverview(ctx: Ctx) -> impl IntoView {
    let snap = ctx.snap;
    // The filter's index in FILTERS: a u64, the type of another signal (each signal type is
    // code of its own).
    let filter = RwSignal::new(0u64);
    // Built when the shown state changes, and set only when it changed: the overview
    // changes when an ISR, a leader or a broker's state does. One memo of a String, the
    // type of others of the page.
    // What the markup was last built from: while it stays the same (most frames: fetches
    // move no ISR), the markup is not built again.
    type Built = (Overview, Vec<(BrokerId, Option<String>)>, u64, bool);
    let built = StoredValue::new_local(None::<Built>);
    let markup = Memo::new(move |prev: Option<&String>| {
        snap.track();
        let f = filter.get();
        let (o, cols, v2) = ctx.pg.with_value(|pg| {
            let o = pg.current().overview();
            let ids: Vec<BrokerId> = o.brokers.iter().map(|b| b.0).collect();
            let cols = columns(&ids, |b| pg.scenario().rack_of(b).map(str::to_string));
            (o, cols, pg.scenario().version >= 2)
        });
        if let Some(prev) = prev {
            let same = |b: &Built| b.0 == o && b.1 == cols && b.2 == f && b.3 == v2;
            if built.with_value(|b| b.as_ref().is_some_and(same)) {
                return prev.clone();
            }
        }
        let m = overview_markup(&o, &cols, FILTERS[f as usize % FILTERS.len()], v2);
        built.set_value(Some((o, cols, f, v2)));
        m
    });
    let on_click = move |ev: leptos::ev::MouseEvent| {
        use leptos::wasm_bindgen::JsCast;
        let target = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let zone = target
            .as_ref()
            .and_then(|t| t.closest("[data-zone]").ok().flatten())
            .and_then(|b| b.get_attribute("data-zone"));
        if let Some(action) = zone.as_deref().and_then(zone_action) {
            ctx.act(action);
            return;
        }
        let tool = target
            .as_ref()
            .and_then(|t| t.closest("[data-reassign]").ok().flatten())
            .and_then(|b| b.get_attribute("data-reassign"));
        let root = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        if let (Some(tool), Some(root)) = (tool, root) {
            let (topic, partition) = ctx.snap.with_untracked(|s| (s.topic.clone(), s.partition));
            let value = |label: &str| {
                crate::panels::control_value(&root, &format!("[aria-label='{label}']"))
            };
            let done = reassign_file(
                &tool,
                &topic,
                partition,
                &value("Target replicas"),
                &value("Reassignment JSON"),
            )
            .and_then(|file| {
                if tool == "add" {
                    // The file with the shown partition's entry: written back into its box.
                    if let Some(b) = root
                        .query_selector("[aria-label='Reassignment JSON']")
                        .ok()
                        .flatten()
                    {
                        b.unchecked_into::<web_sys::HtmlInputElement>()
                            .set_value(&file_json(&file));
                    }
                    return Ok(());
                }
                ctx.act(reassign_action(&tool, file, &value("Throttle"))?);
                Ok(())
            });
            if let Err(e) = done {
                ctx.notice.set(Some(format!("Not done: {e}")));
            }
            return;
        }
        let tp = target
            .and_then(|t| t.closest("[data-tp]").ok().flatten())
            .and_then(|b| b.get_attribute("data-tp"));
        // `topic:partition`; a topic name has no `:` (Topic.validate).
        let Some((topic, p)) = tp.as_deref().and_then(|tp| tp.rsplit_once(':')) else {
            return;
        };
        let done = ctx.with_pg(|pg| pg.set_view_partition(topic, p.parse().unwrap_or(0)));
        if let Some(Err(e)) = done {
            ctx.notice.set(Some(format!("Not done: {e}")));
        }
    };
    let on_change = move |ev: leptos::ev::Event| {
        filter.set(event_target_value(&ev).parse().unwrap_or(0));
    };
    view! {
        // Hidden, not removed, for a cluster of one partition; the heading and the filter
        // are static markup, the rest one piece of markup (a view built and removed, or
        // written as elements, is code of its own). Clicks and changes bubble to the section.
        <section class="overview" aria-label="Cluster overview" prop:hidden=move || markup.with(String::is_empty)
            on:click=on_click on:change=on_change>
            <div class="overview-head" inner_html=HEAD></div>
            <div inner_html=move || markup.get()></div>
            <div class="reassign" inner_html=REASSIGN></div>
        </section>
    }
}

/// The reassignment file a button of the form acts on. `file` is the form's
/// `--reassignment-json-file` box (the tool's JSON, any partitions); `replicas` the target
/// replicas of the shown partition `topic`-`partition`, written as the person wrote them
/// (`1,3` or `1 3`). "add" puts the shown partition's entry into the file (in place of one
/// for the same partition); the tool's commands take the file, or, when it is empty, the
/// shown partition's entry alone. The engine checks the rest as the tool does (unknown
/// partitions and brokers, duplicates) and its refusal names the field.
pub fn reassign_file(
    tool: &str,
    topic: &str,
    partition: u32,
    replicas: &str,
    file: &str,
) -> Result<watermark_engine::scenario::Reassignment, String> {
    use watermark_engine::scenario::{PartitionReassignment, Reassignment};
    let mut r = match file.trim() {
        "" => Reassignment {
            version: 1,
            partitions: vec![],
        },
        text => Reassignment::from_json(text).map_err(|e| e.to_string())?,
    };
    if tool != "add" && !r.partitions.is_empty() {
        return Ok(r);
    }
    let mut ids = vec![];
    for part in replicas.split(|c: char| c == ',' || c.is_whitespace()) {
        if part.is_empty() {
            continue;
        }
        match part.parse::<u32>() {
            Ok(id) => ids.push(id),
            Err(_) => {
                return Err(format!(
                    "target replicas are broker ids such as 1,3, got \"{part}\""
                ))
            }
        }
    }
    let entry = PartitionReassignment {
        topic: topic.to_string(),
        partition,
        replicas: ids,
    };
    match r
        .partitions
        .iter_mut()
        .find(|p| p.topic == topic && p.partition == partition)
    {
        Some(p) => *p = entry,
        None => r.partitions.push(entry),
    }
    Ok(r)
}

/// A reassignment file as the tool's JSON, one partition a line.
pub fn file_json(r: &watermark_engine::scenario::Reassignment) -> String {
    let mut m = format!("{{\"version\":{},\"partitions\":[", r.version);
    for (i, p) in r.partitions.iter().enumerate() {
        m.push_str(&format!(
            "{}\n{{\"topic\":{},\"partition\":{},\"replicas\":[{}]}}",
            if i == 0 { "" } else { "," },
            watermark_engine::json::value_text(&watermark_engine::json::Value::String(
                p.topic.clone()
            )),
            p.partition,
            watermark_engine::types::Ids(&p.replicas)
        ));
    }
    m.push_str("]}");
    m
}

/// `kafka-reassign-partitions.sh --execute`, `--verify` or `--cancel` (`tool`) with the
/// reassignment file `reassignment`, and `--throttle` in bytes/s (empty: none; `--execute`
/// only).
pub fn reassign_action(
    tool: &str,
    reassignment: watermark_engine::scenario::Reassignment,
    throttle: &str,
) -> Result<watermark_engine::Action, String> {
    use watermark_engine::Action;
    Ok(match tool {
        "execute" => Action::ReassignExecute {
            reassignment,
            throttle: match throttle.trim() {
                "" => None,
                t => Some(t.parse::<u64>().map_err(|_| {
                    format!("--throttle is a rate in bytes/s, such as 10000000, got \"{t}\"")
                })?),
            },
            additional: false,
        },
        "verify" => Action::ReassignVerify {
            reassignment,
            preserve_throttles: false,
        },
        "cancel" => Action::ReassignCancel {
            reassignment,
            preserve_throttles: false,
        },
        _ => return Err(format!("no such reassignment command: {tool}")),
    })
}

/// The zone action a rack's button names (`lose:a`, `start:a`, `cut:a`, `heal:a`).
pub fn zone_action(what: &str) -> Option<watermark_engine::Action> {
    use watermark_engine::Action;
    let (verb, zone) = what.split_once(':')?;
    let zone = zone.to_string();
    Some(match verb {
        "lose" => Action::LoseZone { zone },
        "start" => Action::StartZone { zone },
        "cut" => Action::CutZone { zone },
        "heal" => Action::HealZone { zone },
        _ => return None,
    })
}

/// kafka-reassign-partitions.sh: target replicas for the shown partition (the one the lanes
/// draw, so the new replica is seen copying there, and the overview marks it `+`), "Add to
/// the file" to gather several partitions in the tool's JSON (choose a partition, write its
/// replicas, add; the box can be edited too), a throttle, and the tool's three commands.
const REASSIGN: &str = "<p>kafka-reassign-partitions.sh: \
    <label>replicas for the shown partition <input aria-label=\"Target replicas\" size=\"8\" placeholder=\"1,3\"></label> \
    <button data-reassign=\"add\">Add to the file</button> \
    <label>--throttle <input aria-label=\"Throttle\" size=\"10\" placeholder=\"bytes/s\"></label> \
    <button data-reassign=\"execute\">--execute</button> <button data-reassign=\"verify\">--verify</button> \
    <button data-reassign=\"cancel\">--cancel</button></p>\
    <label class=\"reassign-file\">--reassignment-json-file (empty: the shown partition and the replicas above) \
    <textarea aria-label=\"Reassignment JSON\" rows=\"3\" spellcheck=\"false\" \
    placeholder=\"{&quot;version&quot;:1,&quot;partitions&quot;:[{&quot;topic&quot;:&quot;orders&quot;,&quot;partition&quot;:0,&quot;replicas&quot;:[1,2,3]}]}\"></textarea></label>";

/// The overview's heading and its filter, whose option values index [`FILTERS`].
const HEAD: &str =
    "<h2>Cluster overview</h2><label>Show <select aria-label=\"Which partitions to list\">\
    <option value=\"0\">all partitions</option>\
    <option value=\"1\">--under-replicated-partitions</option>\
    <option value=\"2\">--under-min-isr-partitions</option>\
    <option value=\"3\">--at-min-isr-partitions</option>\
    <option value=\"4\">--unavailable-partitions</option></select></label>";

#[cfg(test)]
mod tests {
    use super::*;
    use watermark_engine::Scenario;

    fn sim_of(timeline: &str, end_ms: u64) -> watermark_engine::Sim {
        let s = Scenario::from_json(&format!(
            r#"{{"version":2,"brokers":4,"racks":{{"1":"b","2":"a","3":"b","4":"a"}},
                "topics":[{{"name":"a","assignment":[[1,2,3],[2,3,4]],
                            "configs":{{"min.insync.replicas":2}}}},
                          {{"name":"b","assignment":[[4,1]]}}],
                "timeline":{timeline},"end_ms":{end_ms}}}"#
        ))
        .unwrap();
        watermark_engine::run(&s, true).unwrap()
    }

    #[test]
    fn a_version_1_partition_has_no_overview() {
        let s = Scenario::from_json(r#"{"brokers":3}"#).unwrap();
        let sim = watermark_engine::run(&s, true).unwrap();
        assert_eq!(
            overview_markup(
                &sim.overview(),
                &columns(&[1, 2, 3], |_| None),
                "all",
                false
            ),
            ""
        );
        let one = overview_markup(&sim.overview(), &columns(&[1, 2, 3], |_| None), "all", true);
        assert!(
            !one.is_empty(),
            "a version-2 cluster of one partition has one"
        );
        let two = sim_of("[]", 100);
        let m = overview_markup(
            &two.overview(),
            &columns(&[1, 2, 3, 4], s_rack),
            "unavailable",
            true,
        );
        assert!(
            m.starts_with("<p class=\"overview-counts\">3 partitions: "),
            "{m}"
        );
        assert!(m.contains("The lanes below show a-0. "));
        assert!(m.ends_with("<p class=\"overview-empty\">No partition matches this filter.</p>"));
    }

    #[test]
    fn a_racks_buttons_name_its_zone_actions() {
        use watermark_engine::Action;
        assert_eq!(
            zone_action("lose:a"),
            Some(Action::LoseZone { zone: "a".into() })
        );
        assert_eq!(
            zone_action("heal:zone-c.1"),
            Some(Action::HealZone {
                zone: "zone-c.1".into()
            })
        );
        assert_eq!(zone_action("dance:a"), None);
        let s = sim_of("[]", 100);
        let (m, _) = table_markup(&s.overview(), &columns(&[1, 2, 3, 4], s_rack), "all");
        for verb in ["lose", "start", "cut", "heal"] {
            for r in ["a", "b"] {
                assert!(
                    m.contains(&format!("data-zone=\"{verb}:{r}\"")),
                    "{verb} {r}"
                );
            }
        }
    }

    #[test]
    fn the_reassignment_form_makes_the_tools_actions() {
        use watermark_engine::Action;
        let shown = |tool: &str, replicas: &str| reassign_file(tool, "move", 0, replicas, " ");
        let Ok(Action::ReassignExecute {
            reassignment,
            throttle,
            ..
        }) = reassign_action("execute", shown("execute", " 1, 3 ").unwrap(), "10000000")
        else {
            panic!("execute");
        };
        assert_eq!(throttle, Some(10_000_000));
        assert_eq!(reassignment.version, 1);
        let p = &reassignment.partitions[0];
        assert_eq!(
            (p.topic.as_str(), p.partition, p.replicas.as_slice()),
            ("move", 0, &[1, 3][..])
        );
        assert!(matches!(
            reassign_action("verify", shown("verify", "1 3").unwrap(), "x"),
            Ok(Action::ReassignVerify { .. })
        ));
        assert!(matches!(
            reassign_action("cancel", shown("cancel", "1,3").unwrap(), ""),
            Ok(Action::ReassignCancel { .. })
        ));
        assert_eq!(
            shown("execute", "1,three").unwrap_err(),
            "target replicas are broker ids such as 1,3, got \"three\""
        );
        assert!(
            reassign_action("execute", shown("execute", "1,3").unwrap(), "fast")
                .unwrap_err()
                .starts_with("--throttle is a rate")
        );
    }

    #[test]
    fn the_reassignment_file_gathers_partitions_and_the_tools_take_it_whole() {
        // Add orders-0 → 1,2,4, then orders-1 → 2,3,5, then orders-0 again → 1,2,6.
        let a = reassign_file("add", "orders", 0, "1,2,4", "").unwrap();
        let text = file_json(&a);
        assert_eq!(
            text,
            "{\"version\":1,\"partitions\":[\n{\"topic\":\"orders\",\"partition\":0,\"replicas\":[1,2,4]}]}"
        );
        let b = reassign_file("add", "orders", 1, "2 3 5", &text).unwrap();
        let c = reassign_file("add", "orders", 0, "1,2,6", &file_json(&b)).unwrap();
        let entries: Vec<(u32, Vec<u32>)> = c
            .partitions
            .iter()
            .map(|p| (p.partition, p.replicas.clone()))
            .collect();
        assert_eq!(entries, [(0, vec![1, 2, 6]), (1, vec![2, 3, 5])]);
        // The commands take the file as it is, whatever the shown partition and the box.
        let run = reassign_file("execute", "clicks", 3, "9", &file_json(&c)).unwrap();
        assert_eq!(run, c);
        // A file the tool would not read names its field.
        let bad = reassign_file(
            "execute",
            "orders",
            0,
            "",
            r#"{"partitions":[{"topic":"orders","partition":0}]}"#,
        );
        assert_eq!(
            bad.unwrap_err(),
            "reassignment.partitions[0]: missing field `replicas`"
        );
        assert!(reassign_file("verify", "orders", 0, "", "{")
            .unwrap_err()
            .starts_with("reassignment: not a reassignment file: "));
    }

    #[test]
    fn the_calculator_speaks_of_each_topic() {
        // a: RF 3, its own min.insync.replicas 2 (one may fail, one be lost); b: RF 2 and
        // the brokers' 1 (one may fail, none be lost for ever).
        let s = sim_of("[]", 100);
        let m = calculator_markup(&s.overview());
        let rows: Vec<&str> = m.split("<tr>").skip(2).collect();
        assert_eq!(rows.len(), 2, "{m}");
        assert!(
            rows[0].starts_with(
                "<th scope=\"row\">a</th><td>2</td><td>3</td><td>2</td><td>1</td><td>1</td>"
            ),
            "{}",
            rows[0]
        );
        assert!(
            rows[1].starts_with(
                "<th scope=\"row\">b</th><td>1</td><td>2</td><td>1</td><td>1</td><td>0</td>"
            ),
            "{}",
            rows[1]
        );
    }

    #[test]
    fn columns_go_by_rack_then_id_with_rackless_brokers_last() {
        let racks = |b: BrokerId| match b {
            1 | 3 => Some("b".to_string()),
            2 => Some("a".to_string()),
            _ => None,
        };
        let cols: Vec<BrokerId> = columns(&[1, 2, 3, 4, 5], racks)
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(cols, [2, 1, 3, 4, 5]);
    }

    #[test]
    fn the_table_has_a_row_per_partition_and_a_cell_per_replica_in_its_brokers_column() {
        let s = sim_of("[]", 100);
        let o = s.overview();
        let cols = columns(&[1, 2, 3, 4], s_rack);
        let (m, shown) = table_markup(&o, &cols, "all");
        assert_eq!(shown, 3);
        let racks: Vec<&str> = m
            .split(r#"<th class="rack" colspan="2" scope="colgroup">"#)
            .skip(1)
            .map(|h| &h[..h.find('<').unwrap()])
            .collect();
        assert_eq!(racks, ["rack a", "rack b"], "{m}");
        // Columns 2, 4 (rack a), 1, 3 (rack b). a-1 = [2,3,4], led by 2.
        let a1 = m
            .split("<tr")
            .find(|r| r.contains(">a-1</button>"))
            .unwrap();
        let cells: Vec<&str> = a1
            .split("<td")
            .skip(1)
            .map(|c| &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()])
            .collect();
        assert_eq!(cells, ["lead", "isr", "", "isr", ""]);
        assert!(a1.contains("a-1 on broker 2: leader, preferred leader"));
        assert!(m.contains(
            r#"<tr class="viewed"><th scope="row"><button data-tp="a:0" aria-pressed="true""#
        ));
        assert_eq!(
            counts_line(&o),
            "3 partitions: 0 under-replicated, 0 under min ISR, 0 at min ISR, 0 unavailable"
        );
    }

    fn s_rack(b: BrokerId) -> Option<String> {
        Some(if b.is_multiple_of(2) { "a" } else { "b" }.to_string())
    }

    #[test]
    fn the_filters_are_the_describe_flags() {
        // Broker 4 killed at 1 s and fenced by 20 s: a-1 and b-0 lose a replica.
        let s = sim_of(r#"[{"at":1000,"action":"kill","broker":4}]"#, 20_000);
        let o = s.overview();
        let cols = columns(&[1, 2, 3, 4], s_rack);
        let rows = |f: &str| -> Vec<String> {
            let (m, shown) = table_markup(&o, &cols, f);
            let names: Vec<String> = m
                .split("</button>")
                .filter_map(|p| p.rsplit('>').next().map(str::to_string))
                .filter(|n| n.contains('-'))
                .collect();
            assert_eq!(names.len(), shown);
            names
        };
        assert_eq!(rows("under-replicated"), ["a-1", "b-0"]);
        assert_eq!(rows("at-min-isr"), ["a-1", "b-0"]);
        assert!(rows("under-min-isr").is_empty());
        assert!(rows("unavailable").is_empty());
        assert_eq!(rows("all").len(), 3);
        let (m, _) = table_markup(&o, &cols, "all");
        let b0 = m
            .split("<tr")
            .find(|r| r.contains(">b-0</button>"))
            .unwrap();
        assert!(
            b0.contains(
                r#"<td class="r-off" title="b-0 on broker 4: offline, preferred leader">off</td>"#
            ),
            "{b0}"
        );
        assert!(b0.contains("at min ISR, under-replicated"));
        assert!(m.contains(r#"title="broker 4: killed">4<small>killed</small>"#));
        assert_eq!(
            counts_line(&o),
            "3 partitions: 2 under-replicated, 0 under min ISR, 2 at min ISR, 0 unavailable"
        );
    }
}
