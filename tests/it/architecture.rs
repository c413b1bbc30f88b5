//! The layers of the crate, kept by a test: every `crate::<module>` path in
//! the code of `src/` (comments and doc links aside) must name a module of a
//! lower layer than the file's own top-level module, so no module imports
//! upward and no two top-level modules import each other. The README's
//! "Architecture" section describes the same layers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level modules by layer, lowest first. A module may use any module of a
/// lower layer, none of its own or a higher one.
const LAYERS: &[&[&str]] = &[
    // Outbound traffic and plain values: no knowledge of protocols.
    &["transport", "target", "events"],
    // The suite engine: protocols, rules, verdicts; settings of the process.
    &["suite", "config"],
    // What stands on the engine: reference servers, the store.
    &["reference", "store"],
    // What reads and writes runs: reports, attestations, the queue, API keys,
    // metrics.
    &["report", "attest", "queue", "keys", "metrics"],
    // What acts when runs change, and the REST client.
    &["webhook", "client"],
    // Workers.
    &["worker"],
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
                "src/{module} is in no layer of tests/it/architecture.rs (add it, and to the README)"
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
