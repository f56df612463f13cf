//! No file of `engine/src` is part of an import circle (issue 13): a file that names another
//! module of the crate (`use crate::x::…` or a path `crate::x::…` in its code) may not be
//! named back by it, directly or through other files. Test modules are left out (a test
//! may drive anything), and so are comments. A circle is printed with the names that tie
//! each file to the next, so it can be cut where it should not be.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules of `engine/src` (one per file; `broker/tests.rs` is a test), each with the
/// modules its code names.
fn import_graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("engine/src") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).expect("readable");
            files.insert(name, text);
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (name, text) in &files {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for line in code_lines(text) {
            for (module, item) in crate_paths(line) {
                if module != *name && module != "lib" && modules.contains(&module) {
                    edges.entry(module).or_default().insert(item);
                }
            }
        }
        graph.insert(name.clone(), edges);
    }
    graph
}

/// The file's lines up to its first `#[cfg(test)]` module, without comments.
fn code_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|next| is_mod(next)) {
            break;
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push(code);
    }
    out
}

/// Whether `line` declares a module (`mod tests {`, `pub(crate) mod tests;`).
fn is_mod(line: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
    let line = line.strip_prefix("pub ").unwrap_or(line);
    line.starts_with("mod ")
}

/// Each `crate::module::item` a line names, also inside `use crate::{a::x, b::{y, z}}`.
fn crate_paths(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // A grouped use: each member that names a module (`a::…`).
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                let member = member.trim();
                if let Some((module, item)) = member.split_once("::") {
                    out.push((module.to_string(), item.to_string()));
                }
            }
            continue;
        }
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = &rest[ident.len()..];
        let item: String = after
            .strip_prefix("::")
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
            .collect();
        out.push((ident, item));
    }
    out
}

/// The circles of `graph` (strongly connected components of more than one file).
fn circles(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on the reversed graph.
    fn visit<'a>(
        v: &'a str,
        next: &dyn Fn(&'a str) -> Vec<&'a str>,
        seen: &mut BTreeSet<&'a str>,
        out: &mut Vec<&'a str>,
    ) {
        if !seen.insert(v) {
            return;
        }
        for w in next(v) {
            visit(w, next, seen, out);
        }
        out.push(v);
    }
    let forward = |v: &str| -> Vec<&str> {
        graph
            .get(v)
            .map(|e| e.keys().map(String::as_str).collect())
            .unwrap_or_default()
    };
    let backward = |v: &str| -> Vec<&str> {
        graph
            .iter()
            .filter(|(_, e)| e.contains_key(v))
            .map(|(k, _)| k.as_str())
            .collect()
    };
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for v in graph.keys() {
        visit(v, &forward, &mut seen, &mut order);
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for v in order.into_iter().rev() {
        let mut component = Vec::new();
        visit(v, &backward, &mut seen, &mut component);
        if component.len() > 1 {
            let mut c: Vec<String> = component.into_iter().map(String::from).collect();
            c.sort();
            out.push(c);
        }
    }
    out
}

#[test]
fn no_file_of_the_engine_is_in_an_import_circle() {
    let graph = import_graph();
    assert!(
        graph.len() > 30,
        "read the engine's files: {:?}",
        graph.keys()
    );
    let found = circles(&graph);
    let mut report = String::new();
    for c in &found {
        report.push_str(&format!("circle: {}\n", c.join(", ")));
        for a in c {
            for (b, items) in &graph[a] {
                if c.contains(b) {
                    let items: Vec<&str> = items.iter().map(String::as_str).collect();
                    report.push_str(&format!("  {a} -> {b}: {}\n", items.join(", ")));
                }
            }
        }
    }
    assert!(found.is_empty(), "{report}");
}

#[test]
fn the_reader_finds_a_circle_and_the_names_that_tie_it() {
    // The check checks something: two modules naming each other, one through a grouped
    // use, one through a path in code, and a third that only names them.
    let mut graph = BTreeMap::new();
    let files = [
        (
            "sim",
            "use crate::{broker::Broker, types::Node};\nfn f() {}",
        ),
        (
            "broker",
            "fn g() { crate::sim::step(); } // crate::types::x\n",
        ),
        (
            "types",
            "/// crate::sim::Sim\npub struct Node;\n#[cfg(test)]\nmod tests { use crate::sim; }",
        ),
        (
            "log",
            "#[cfg(test)]\npub(crate) mod tests {\n    use crate::sim::Sim;\n}",
        ),
    ];
    for (name, text) in files {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for line in code_lines(text) {
            for (module, item) in crate_paths(line) {
                edges.entry(module).or_default().insert(item);
            }
        }
        graph.insert(name.to_string(), edges);
    }
    assert_eq!(
        graph["types"].len(),
        0,
        "doc comments and test modules do not count"
    );
    assert_eq!(graph["log"].len(), 0, "a public test module does not count");
    assert_eq!(graph["broker"].keys().collect::<Vec<_>>(), ["sim"]);
    assert_eq!(
        circles(&graph),
        [vec!["broker".to_string(), "sim".to_string()]]
    );
}
