//! The README and the book (all of docs/) stay true to the binary: every rule id they name is
//! a rule of some suite, and every `protocheck` flag and `PROTOCHECK_*`
//! variable they name is one the binary takes (its `--help` says so).
//! Variables and flags read only by the test tooling (scripts/, tests/,
//! benches/) are the documented exception: the development pages name them.

use crate::common::cli::{protocheck, show};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of the book, with their paths for messages.
fn pages() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read docs dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                // docs/book is the built book: the pages again, as HTML.
                if !path.ends_with("docs/book") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).expect("read page");
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    let readme = root().join("README.md");
    out.push((
        readme.clone(),
        std::fs::read_to_string(&readme).expect("README"),
    ));
    // docs/ whole: the book's pages, and the pages it includes from docs/
    // and docs/spec/.
    walk(&root().join("docs"), &mut out);
    out
}

/// Every word of `text` that has the shape of a rule id: a suite prefix, a
/// category and a three-digit number (`MCP-HDR-001`, `MCP25-RPC-005`,
/// `RCP-L0-003`, `RCP-CERT-001`).
fn rule_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let mut start = 0;
    while start < bytes.len() {
        if !is_word(bytes[start]) {
            start += 1;
            continue;
        }
        let mut end = start;
        while end < bytes.len() && is_word(bytes[end]) {
            end += 1;
        }
        let word = text[start..end].trim_end_matches('-');
        let parts: Vec<&str> = word.split('-').collect();
        if parts.len() == 3
            && matches!(parts[0], "MCP" | "MCP25" | "RCP")
            && !parts[1].is_empty()
            && parts[1]
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && parts[2].len() == 3
            && parts[2].bytes().all(|b| b.is_ascii_digit())
        {
            ids.insert(word.to_owned());
        }
        start = end;
    }
    ids
}

#[test]
fn every_rule_id_the_book_names_is_a_rule() {
    let mut unknown = Vec::new();
    let mut named = 0;
    for (path, text) in pages() {
        for id in rule_ids(&text) {
            named += 1;
            if protocheck::suite::index::rule(&id).is_none() {
                unknown.push(format!("{}: {id}", path.display()));
            }
        }
    }
    assert!(
        named > 20,
        "the book names rule ids; the scan found {named}"
    );
    assert!(
        unknown.is_empty(),
        "rule ids named in the README or the book that no suite has:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn rule_id_scan_finds_ids_and_nothing_else() {
    let ids =
        rule_ids("see MCP-HDR-001, `MCP25-RPC-005` and RCP-L0-003; not MCP-HDR-01 or XMCP-A-001x");
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(ids, ["MCP-HDR-001", "MCP25-RPC-005", "RCP-L0-003"]);
}

/// The help of `protocheck ARGS --help`.
fn help(args: &[&str]) -> String {
    let mut cmd = protocheck();
    cmd.args(args).arg("--help");
    let out = cmd.output().expect("run protocheck --help");
    assert!(out.status.success(), "{args:?} --help: {}", show(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommands a help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

/// Every help text of the binary: the top level and each subcommand, nested.
/// Read once for the tests that need it (some forty runs of the binary).
fn all_help() -> &'static str {
    static HELP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HELP.get_or_init(read_all_help)
}

fn read_all_help() -> String {
    let mut text = String::new();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = queue.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let h = help(&args);
        for sub in subcommands(&h) {
            let mut next = path.clone();
            next.push(sub);
            queue.push(next);
        }
        text.push_str(&h);
        text.push('\n');
    }
    text
}

/// Every word starting with `prefix` made of `[A-Za-z0-9_-]` after it.
fn words_with(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        let tail = &rest[at + prefix.len()..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(tail.len());
        let word = tail[..len].trim_end_matches('-');
        if before_ok && !word.is_empty() {
            out.insert(format!("{prefix}{word}"));
        }
        rest = &tail[len..];
    }
    out
}

/// Source text of the test tooling: what reads a variable or flag there is
/// test or benchmark configuration, not the binary's.
fn tooling_text() -> String {
    fn walk(dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    let mut out = String::new();
    for dir in ["scripts", "tests", "benches", ".ci"] {
        walk(&root().join(dir), &mut out);
    }
    // A variable the library's own tests read (`PROTOCHECK_BLESS`) is read with
    // `env::var` in src/, never through clap, so it is not in the help.
    let mut src = String::new();
    walk(&root().join("src"), &mut src);
    for (at, _) in src.match_indices("env::var(\"PROTOCHECK_") {
        let tail = &src[at + "env::var(\"".len()..];
        let end = tail.find('"').unwrap_or(tail.len());
        out.push_str(&tail[..end]);
        out.push('\n');
    }
    // This file names every variable it looks for; it must not vouch for them.
    out.replace(include_str!("book.rs"), "")
}

#[test]
fn every_variable_the_book_names_exists() {
    let help = all_help();
    let tooling = words_with(&tooling_text(), "PROTOCHECK_");
    let mut missing = Vec::new();
    let mut named = 0;
    for (path, text) in pages() {
        for var in words_with(&text, "PROTOCHECK_") {
            named += 1;
            if !help.contains(&var) && !tooling.contains(&var) {
                missing.push(format!("{}: {var}", path.display()));
            }
        }
    }
    assert!(
        named > 20,
        "the book names variables; the scan found {named}"
    );
    assert!(
        missing.is_empty(),
        "PROTOCHECK_* variables named in the README or the book that neither the \
         binary's help nor the test tooling knows:\n{}",
        missing.join("\n")
    );
}

/// The `--flags` written after `protocheck` (or `cargo run … --`) on one
/// command line of the book, continuation lines joined.
fn protocheck_flags(text: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let joined = text.replace("\\\n", " ");
    for line in joined.lines() {
        let Some(at) = line
            .find("protocheck ")
            .or_else(|| line.find("cargo run --release -- "))
            .or_else(|| line.find("cargo run -- "))
        else {
            continue;
        };
        // A shell line ends at the next command or comment.
        let rest = &line[at..];
        let end = ["&&", "|", ";", " #", "`"]
            .iter()
            .filter_map(|sep| rest[1..].find(sep).map(|i| i + 1))
            .min()
            .unwrap_or(rest.len());
        flags.extend(words_with(&rest[..end], "--").into_iter().filter(|f| {
            // `--` alone and cargo's own flags are not protocheck's.
            f.len() > 3 && f != "--release"
        }));
    }
    flags
}

#[test]
fn every_flag_the_book_gives_protocheck_exists() {
    let help = all_help();
    let known = words_with(help, "--");
    let mut missing = Vec::new();
    let mut named = 0;
    for (path, text) in pages() {
        for flag in protocheck_flags(&text) {
            named += 1;
            if !known.contains(&flag) {
                missing.push(format!("{}: {flag}", path.display()));
            }
        }
    }
    assert!(
        named > 20,
        "the book gives protocheck flags; the scan found {named}"
    );
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "flags given to protocheck in the README or the book that its help does not list:\n{}",
        missing.join("\n")
    );
}

#[test]
fn flag_scan_reads_protocheck_lines_only() {
    let text = "```sh\nprotocheck check URL --suite rcp \\\n  --json && curl --silent x\n\
                curl -X POST --data y\n`protocheck submit --wait` and `--other`\n```";
    assert_eq!(protocheck_flags(text), ["--json", "--suite", "--wait"]);
}

/// The `sh` blocks of the README's section `heading`, in order.
fn readme_blocks(heading: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("the README has a section `{heading}`"));
    section
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap_or_default().to_owned())
        .collect()
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// The README's quick start runs as pasted: each block of "A first check",
/// in a fresh directory, with the test's binary for `target/release/protocheck`
/// (the line that builds it dropped) and free ports for the fixed ones, so
/// that the test cannot meet a port in use. The blocks wait for readiness
/// themselves; the timeout only keeps a broken block from hanging the suite.
#[test]
fn readme_first_check_runs_as_written() {
    let blocks = readme_blocks("A first check");
    assert_eq!(
        blocks.len(),
        3,
        "the quick start has three blocks: {blocks:?}"
    );
    let ports: Vec<(String, String)> = ["8080", "8765", "8766", "8767"]
        .iter()
        .map(|p| (p.to_string(), free_port().to_string()))
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = env!("CARGO_BIN_EXE_protocheck");
    // (block, exit code the README promises, words its output must show)
    let expected: [(i32, &[&str]); 3] = [
        (
            0,
            &[
                "/api/v1/runs/",
                "event: verdict",
                "\"certified_level\":\"L2\"",
            ],
        ),
        (1, &["RCP-L0-003", "RCP-CERT-001"]),
        (0, &["strict"]),
    ];
    for (block, (code, words)) in blocks.iter().zip(expected) {
        let mut script: String = block
            .lines()
            .filter(|l| !l.starts_with("cargo build --release"))
            .collect::<Vec<_>>()
            .join("\n");
        script = script.replace("target/release/protocheck", bin);
        for (from, to) in &ports {
            script = script.replace(from.as_str(), to);
        }
        let serve_port = &ports[0].1;
        let wrapped = format!("trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n{script}\n");
        let mut cmd = std::process::Command::new("timeout");
        cmd.args(["600", "bash", "-c", &wrapped])
            .current_dir(dir.path())
            .env("PROTOCHECK_BIND", format!("127.0.0.1:{serve_port}"))
            .env("RUST_LOG", "warn");
        // Nothing from the environment that would change what the blocks do.
        for var in [
            "DATABASE_URL",
            "PROTOCHECK_BEARER_TOKEN",
            "PROTOCHECK_LIMITED_TOKEN",
            "PROTOCHECK_API_KEY",
            "PROTOCHECK_SERVER",
            "PROTOCHECK_PUBLIC_URL",
        ] {
            cmd.env_remove(var);
        }
        let out = cmd.output().expect("run bash");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(code),
            "README block exits {code}:\n{script}\n{}",
            show(&out)
        );
        for word in words {
            assert!(
                stdout.contains(word),
                "README block's output shows `{word}`:\n{script}\n{}",
                show(&out)
            );
        }
    }
}
