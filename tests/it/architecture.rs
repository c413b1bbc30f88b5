//! The layers of the crate, kept by a test: every `crate::<module>` path in
//! the code of `src/` (comments and doc links aside) must name a module of a
//! lower layer than the file's own top-level module, so no module imports
//! upward and no two top-level modules import each other. The book's
//! Architecture page (docs/src/architecture.md) describes the same layers. A
//! second test keeps the modules of `src/suite` (its shared types, the three
//! suites, the detection and the runner above them) and the files inside the
//! suites `src/suite/mcp` and `src/suite/rcp` free of import cycles.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level modules by layer, lowest first. A module may use any module of a
/// lower layer, none of its own or a higher one.
const LAYERS: &[&[&str]] = &[
    // Outbound traffic and plain values: no knowledge of protocols.
    &["transport", "target", "events"],
    // The suite engine: protocols, rules, verdicts; settings of the process.
    &["suite", "config"],
    // Credentials submitted with a run: sealed for the store, opened for the engine.
    &["credentials"],
    // What stands on the engine: reference servers, the store.
    &["reference", "store"],
    // What reads and writes runs: reports, attestations, the queue, API keys,
    // metrics.
    &["report", "attest", "submit", "api_keys", "metrics"],
    // What acts when runs change or come due, and the REST client.
    &["webhook", "scheduler", "api_client"],
    // Workers, and the public directory's registry sync (it makes watches
    // whose runs the scheduler starts).
    &["worker", "directory"],
    // The web service.
    &["web"],
];

/// Imports that break the layers today, each with the reason it is still
/// there. The list only shrinks: a new entry needs a reason a reviewer accepts.
const KNOWN: &[(&str, &str, &str)] = &[];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for the crate
/// root and the binary).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// The top-level modules a file names through `crate::…` outside comments.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = after;
        }
    }
    out
}

#[test]
fn no_module_imports_a_module_of_its_own_or_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut used_known = BTreeSet::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some(own) = layer_of(&module) else {
            problems.push(format!(
                "src/{module} is in no layer of tests/it/architecture.rs (add it, and to docs/src/architecture.md)"
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("read file");
        for target in imports(&text) {
            if target == module {
                continue;
            }
            // Items of the crate root (`crate::now_ms`, `crate::rfc3339`) sit
            // below every layer.
            let Some(theirs) = layer_of(&target) else {
                continue;
            };
            if theirs < own {
                continue;
            }
            if let Some(known) = KNOWN
                .iter()
                .find(|(from, to, _)| *from == module && *to == target)
            {
                used_known.insert(known.0.to_owned() + "->" + known.1);
                continue;
            }
            problems.push(format!(
                "{} uses crate::{target}: `{module}` (layer {own}) may only use lower layers, \
                 and `{target}` is layer {theirs}",
                file.strip_prefix(&src).unwrap_or(file).display()
            ));
        }
    }
    for (from, to, _) in KNOWN {
        if !used_known.contains(&format!("{from}->{to}")) {
            problems.push(format!(
                "the known exception {from} -> {to} is gone: remove it from KNOWN"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn imports_are_read_from_code_not_from_comments() {
    let text = "use crate::suite::Finding; // see crate::web\n/// [`crate::store`]\nlet t = crate::rfc3339(0);";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["rfc3339", "suite"]);
}

// Inside a suite: the files of `src/suite/mcp` and `src/suite/rcp` name each
// other through `super::x`, `crate::suite::<suite>::x` and, in mod.rs,
// `self::x` or a bare child name. Those paths must form no cycle, so that
// each file can be read knowing only the files below it: the shared types at
// the bottom, the rule files on them, the engine and mod.rs on top.

/// The modules whose files are kept free of import cycles, below
/// `src/suite`: `""` is `suite` itself, whose files and folders (the
/// shared types in mod.rs and context.rs, the three suites, the detection,
/// the runner that dispatches to them) must import downward only, so that
/// the dispatcher sits above the suites and the suites above their types.
const SUITES: &[&str] = &["", "mcp", "rcp"];

/// Cycles between the files of a suite that are still there, each with the
/// reason it is. The list only shrinks, as `KNOWN` above.
const KNOWN_CYCLES: &[(&str, &[&str], &str)] = &[
    (
        "rcp",
        &["harness/", "mod.rs"],
        "the reference profile (harness/) reads the suite's version constants from \
         mod.rs and runs the spec profile through `run_spec`, while mod.rs dispatches \
         to the profile; the constants and the dispatch belong in separate files",
    ),
    (
        "rcp",
        &["l0/", "outside/"],
        "l0/notifications.rs names the HTTP notification status rule of outside/, and \
         outside/writes.rs reuses l0's `no_init` reason; what both use belongs in \
         conversation.rs",
    ),
];

/// One file of a suite: its node (a child file `x.rs`, a child folder `x/`,
/// or `mod.rs`) and its module path below the suite (`[]` for mod.rs,
/// `["x"]` for x.rs or x/mod.rs, `["x", "y"]` for x/y.rs).
struct SuiteFile {
    path: PathBuf,
    node: String,
    module: Vec<String>,
}

/// The files of the suite in `dir`.
fn suite_files(dir: &Path) -> Vec<SuiteFile> {
    let mut paths = Vec::new();
    rust_files(dir, &mut paths);
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(dir).expect("below the suite").to_owned();
        let parts: Vec<String> = rel
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned()
            })
            .collect();
        let module: Vec<String> = parts.iter().filter(|p| *p != "mod").cloned().collect();
        let node = match (parts.len(), module.first()) {
            (_, None) => "mod.rs".to_owned(),
            (1, Some(name)) => format!("{name}.rs"),
            (_, Some(name)) => format!("{name}/"),
        };
        files.push(SuiteFile { path, node, module });
    }
    files
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier `text` starts with.
fn ident_at(text: &str) -> &str {
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// The first segments of the paths of the `{ … }` group `text` starts with:
/// `{a, b::c, d::{e}, *}` gives a, b, d, *.
fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut at_start = false;
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
                at_start = depth == 1;
            }
            '}' => {
                if depth <= 1 {
                    break;
                }
                depth -= 1;
            }
            ',' if depth == 1 => at_start = true,
            '*' if at_start && depth == 1 => {
                at_start = false;
                heads.push("*".to_owned());
            }
            c if at_start && depth == 1 && is_ident(c) => {
                at_start = false;
                heads.push(ident_at(&text[i..]).to_owned());
            }
            _ => {}
        }
    }
    heads
}

/// The code of a file without comments, and for each line's starting offset
/// how many inline modules (`mod tests { … }`, as rustfmt lays them out)
/// enclose it: a `super::` inside one climbs out of it first.
fn code_and_inline_depths(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut code = String::new();
    let mut depths = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for line in text.lines() {
        // A `//` inside a string ends the line early, which only loses paths.
        let line = line.split("//").next().unwrap_or_default();
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if open.last() == Some(&indent) && trimmed.starts_with('}') {
            open.pop();
        }
        depths.push((code.len(), open.len()));
        let item = trimmed
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ");
        if item.starts_with("mod ") && item.ends_with('{') {
            open.push(indent);
        }
        code.push_str(line);
        code.push('\n');
    }
    (code, depths)
}

/// The paths below the suite a file names, each as the module it starts
/// from (below the suite) followed by its next segment: in x.rs,
/// `super::wire::code` gives `["wire"]`, `super::{Rule, era::Era}` gives
/// `["Rule"]` and `["era"]`, and `self::y` gives `["x", "y"]`.
fn suite_paths(
    file: &SuiteFile,
    text: &str,
    suite: &str,
    children: &BTreeSet<String>,
) -> Vec<Vec<String>> {
    let (code, depths) = code_and_inline_depths(text);
    let crate_prefix = if suite.is_empty() {
        "crate::suite".to_owned()
    } else {
        format!("crate::suite::{suite}")
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let Some(first) = rest.chars().next() else {
            break;
        };
        let before = code[..i].chars().next_back();
        let starts_path = is_ident(first) && !before.is_some_and(|c| is_ident(c) || c == ':');
        if !starts_path {
            i += first.len_utf8();
            continue;
        }
        let word = ident_at(rest);
        i += word.len();
        if !rest[word.len()..].starts_with("::") {
            continue;
        }
        let inline = depths
            .iter()
            .rev()
            .find(|(start, _)| *start <= i)
            .map_or(0, |(_, depth)| *depth);
        let mut here = file.module.clone();
        here.extend(std::iter::repeat_n("<inline>".to_owned(), inline));
        // The module the path starts from and what follows it.
        let (from, tail): (Vec<String>, &str) = match word {
            "crate" => match rest.strip_prefix(crate_prefix.as_str()) {
                Some(tail) if tail.starts_with("::") => (Vec::new(), tail),
                _ => continue,
            },
            "self" => (here, &rest[word.len()..]),
            "super" => {
                let mut tail = &rest[word.len()..];
                let mut up = 1;
                while let Some(next) = tail.strip_prefix("::super") {
                    tail = next;
                    up += 1;
                }
                if up > here.len() {
                    continue;
                }
                here.truncate(here.len() - up);
                (here, tail)
            }
            // In mod.rs the children are in scope by their bare names.
            name if file.module.is_empty() && inline == 0 && children.contains(name) => {
                out.push(vec![name.to_owned()]);
                continue;
            }
            _ => continue,
        };
        let Some(tail) = tail.strip_prefix("::") else {
            continue;
        };
        let tail = tail.trim_start();
        let heads = if tail.starts_with('{') {
            group_heads(tail)
        } else if tail.starts_with('*') {
            vec!["*".to_owned()]
        } else {
            vec![ident_at(tail).to_owned()]
        };
        for head in heads {
            let mut path = from.clone();
            if !head.is_empty() && head != "self" {
                path.push(head);
            }
            out.push(path);
        }
    }
    out
}

/// The node a path below the suite lands in: the child module it names, or
/// mod.rs for an item of the suite's root (`super::McpRule`, `super::*`).
fn node_of(path: &[String], nodes_by_child: &std::collections::BTreeMap<String, String>) -> String {
    path.first()
        .and_then(|first| nodes_by_child.get(first))
        .cloned()
        .unwrap_or_else(|| "mod.rs".to_owned())
}

/// The import graph between the files of a suite: node -> (node -> a file
/// and path that shows the edge).
type Graph = std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>;

fn suite_graph(suite: &str) -> Graph {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/suite")
        .join(suite);
    let files = suite_files(&dir);
    let mut nodes_by_child = std::collections::BTreeMap::new();
    for file in &files {
        if let Some(first) = file.module.first() {
            nodes_by_child.insert(first.clone(), file.node.clone());
        }
    }
    let children: BTreeSet<String> = nodes_by_child.keys().cloned().collect();
    let mut graph = Graph::new();
    for file in &files {
        graph.entry(file.node.clone()).or_default();
        let text = std::fs::read_to_string(&file.path).expect("read file");
        for path in suite_paths(file, &text, suite, &children) {
            let target = node_of(&path, &nodes_by_child);
            if target != file.node {
                let shown = format!(
                    "{} names {}",
                    file.path.strip_prefix(&dir).unwrap_or(&file.path).display(),
                    path.join("::")
                );
                graph
                    .entry(file.node.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(shown);
            }
        }
    }
    graph
}

/// The strongly connected components of more than one node.
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(node) = todo.pop() {
            for next in graph.get(&node).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: std::collections::BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|node| (node, reach(node))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for node in graph.keys() {
        let component: BTreeSet<String> = reached[node]
            .iter()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(node)))
            .cloned()
            .collect();
        if component.len() > 1 && !out.contains(&component) {
            out.push(component);
        }
    }
    out
}

#[test]
fn no_import_cycle_between_the_files_of_a_suite() {
    let mut problems = Vec::new();
    for suite in SUITES {
        let graph = suite_graph(suite);
        let found = cycles(&graph);
        for component in &found {
            let known = KNOWN_CYCLES.iter().any(|(s, files, _)| {
                s == suite
                    && files
                        .iter()
                        .copied()
                        .eq(component.iter().map(String::as_str))
            });
            if known {
                continue;
            }
            let edges: Vec<&str> = component
                .iter()
                .flat_map(|from| graph[from].iter())
                .filter(|(to, _)| component.contains(*to))
                .map(|(_, shown)| shown.as_str())
                .collect();
            problems.push(format!(
                "src/suite/{suite}: import cycle between {}\n  {}",
                component.iter().cloned().collect::<Vec<_>>().join(", "),
                edges.join("\n  ")
            ));
        }
        for (s, files, _) in KNOWN_CYCLES.iter().filter(|(s, _, _)| s == suite) {
            let still = found
                .iter()
                .any(|c| files.iter().copied().eq(c.iter().map(String::as_str)));
            if !still {
                problems.push(format!(
                    "the known cycle of src/suite/{s} between {} is gone: remove it from \
                     KNOWN_CYCLES",
                    files.join(", ")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn suite_paths_are_read_from_code_across_lines_and_inline_modules() {
    let children: BTreeSet<String> = ["era", "wire", "rule"].map(str::to_owned).into();
    let file = |module: &[&str]| SuiteFile {
        path: PathBuf::new(),
        node: String::new(),
        module: module.iter().map(|s| (*s).to_owned()).collect(),
    };
    let x = "use super::era::{self, Era};\n\
             use super::{\n    McpRule,\n    wire::{code, H},\n};\n\
             use crate::suite::mcp::rule::spec; // super::comment\n\
             let y = crate::suite::rcp::client::X;\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::Session;\n}\n";
    let found = suite_paths(&file(&["x"]), x, "mcp", &children);
    let expected: Vec<Vec<String>> = [
        &["era"][..],
        &["McpRule"],
        &["wire"],
        &["rule"],
        &["x", "*"],
        &["Session"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| (*s).to_owned()).collect())
    .collect();
    assert_eq!(found, expected);
    let root =
        "mod era;\npub use era::Era;\nuse self::wire::code;\nfn f() { rule::g(); other::h(); }\n";
    let found = suite_paths(&file(&[]), root, "mcp", &children);
    assert_eq!(
        found,
        [
            vec!["era".to_owned()],
            vec!["wire".to_owned()],
            vec!["rule".to_owned()]
        ]
    );
}
