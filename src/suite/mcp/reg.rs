//! REG — registry readiness: the `server.json` a run carries in
//! `options.server_json` (a URL or the document itself), judged against the MCP
//! Registry's rules (`docs/registry/*.mdx` of the specification repository and
//! the registry's server.schema.json, `mcp-2026-07-28.md` §12). Without one the
//! rules are skipped with that reason.

use super::reg_survey::{self, RegistryDoc, RegistryError};
use super::rule::{Keyword, McpRule};
use super::session::{Judgement, Session};
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::Value;
use url::Url;

pub(crate) const SERVER_JSON_VALID: McpRule = McpRule::new(
    "MCP-REG-001",
    "server.json present and valid against the registry schema",
    Keyword::May,
    Outcome::Warn,
    "https://modelcontextprotocol.io/registry/quickstart",
    "REG",
    |s| server_json_valid(s).boxed(),
)
.says("server.json follows the MCP Registry schema")
.help(
    "With a `server.json` given for the run (the document, or an http(s) URL protocheck fetches), \
     protocheck checks what the registry schema requires: `name`, `description` and `version` \
     with their lengths, the `name` pattern, and the shape of `repository`, `packages`, `remotes` \
     and `icons`. Skipped without one; an unreadable document fails.",
    "The document lacks `description` or `version`, has a description over 100 characters, a \
     `name` without a `namespace/` part, a package pinned to `latest`, or a remote whose `type` \
     is neither `streamable-http` nor `sse`.",
    "Correct the fields the finding names, following the registry's `server.json` schema \
     (required `name`, `description` and `version`, exact package versions), and validate the \
     file against that schema before publishing.",
)
.requires(&[])
.on_legacy();

pub(crate) const NAMESPACE: McpRule = McpRule::new(
    "MCP-REG-002",
    "Namespace ownership is verifiable (GitHub or DNS TXT)",
    Keyword::May,
    Outcome::Warn,
    "https://modelcontextprotocol.io/registry/authentication",
    "REG",
    |s| namespace(s).boxed(),
)
.says("the registry name's namespace is verifiable (GitHub or DNS)")
.help(
    "protocheck reads the namespace of the `server.json` `name` (before the `/`): \
     `io.github.<login>` passes with a valid GitHub login that matches the owner of a github.com \
     `repository.url`, and a reverse-DNS domain with valid labels passes as verifiable by DNS.",
    "The name has no namespace, a namespace that is neither a GitHub login nor a domain, or \
     claims `io.github.<someone>` while `repository.url` belongs to another GitHub account.",
    "Publish under `io.github.<your-login>/...` from that GitHub account, or under the reverse of \
     a domain you control, such as `com.example/...`, and prove it with a DNS TXT record or an \
     HTTP well-known file.",
)
.requires(&[])
.on_legacy();

pub(crate) const SEMVER: McpRule = McpRule::new(
    "MCP-REG-003",
    "version is present and valid semver",
    Keyword::May,
    Outcome::Warn,
    "https://modelcontextprotocol.io/registry/versioning",
    "REG",
    |s| semver(s).boxed(),
)
.says("version is present and valid semantic versioning")
.help(
    "protocheck reads `version` from the run's `server.json` and checks that it is a string in \
     strict Semantic Versioning 2.0.0 form: MAJOR.MINOR.PATCH with optional pre-release and build \
     parts, no `v` prefix and no leading zeros.",
    "The version is missing, prefixed with `v`, has only two parts (`1.0`), or is a range such as \
     `^1.2.0` or `1.x`, which the registry refuses; a version that is not semver cannot be \
     ordered, so it is always treated as the latest.",
    "Set `version` to the exact release, such as `1.4.2` or `2.0.0-rc.1`, keep it in step with \
     your package version, and bump it for every publication so that clients can tell releases \
     apart.",
)
.requires(&[])
.on_legacy();

pub(crate) const REMOTE_MATCHES: McpRule = McpRule::new(
    "MCP-REG-004",
    "Declared remote endpoint matches the probed URL",
    Keyword::May,
    Outcome::Warn,
    "https://modelcontextprotocol.io/registry/remote-servers",
    "REG",
    |s| remote_matches(s).boxed(),
)
.says("a declared remote endpoint matches the probed URL")
.help(
    "protocheck compares each concrete `remotes[].url` of the run's `server.json` (templates with \
     `{variables}` are left out) with the endpoint it probed: same scheme, host in any case, \
     port, path ignoring a trailing slash, and query.",
    "The registry entry points at another URL than the one checked, such as a staging or \
     production host, an old path like `/sse`, or `http` instead of `https`, so clients \
     installing from the registry would reach a different endpoint.",
    "Make `remotes[].url` exactly the public Streamable HTTP endpoint URL clients should use, or \
     run protocheck against the URL that the registry entry declares.",
)
.requires(&[])
.on_legacy()
.http_only("server.json's remotes[].url against the endpoint URL");

pub(crate) const RULES: &[McpRule] = &[SERVER_JSON_VALID, NAMESPACE, SEMVER, REMOTE_MATCHES];

const NO_SERVER_JSON: &str =
    "no server.json was given with the run (options.server_json: a URL or the document)";

/// Reads `options.server_json` once per run; `None` when the run gave none.
async fn load(s: &Session) -> Option<Result<RegistryDoc, RegistryError>> {
    let given = s.options.server_json.clone()?;
    let loaded = s
        .registry
        .get_or_init(|| reg_survey::read(&s.client, given))
        .await;
    Some(loaded.clone())
}

/// The document, or the judgement to give when there is none.
async fn document(s: &Session, first: bool) -> Result<RegistryDoc, Judgement> {
    match load(s).await {
        None => Err(Judgement::skip(NO_SERVER_JSON)),
        Some(Ok(doc)) => Ok(doc),
        // The read failure is reported once, by REG-001; the others cannot judge.
        Some(Err(e)) if first => {
            let mut j = Judgement::fail(format!("server.json could not be read: {}", e.message));
            if let Some(x) = &e.exchange {
                j = j.with(x);
            }
            Err(j)
        }
        Some(Err(e)) => Err(Judgement::skip(format!(
            "not verified: server.json could not be read ({})",
            e.message
        ))),
    }
}

fn with_source(j: Judgement, doc: &RegistryDoc) -> Judgement {
    match &doc.exchange {
        Some(x) => j.with(x),
        None => j,
    }
}

fn str_len(v: &Value, min: usize, max: usize) -> Option<Result<(), String>> {
    let s = v.as_str()?;
    let n = s.chars().count();
    Some(if (min..=max).contains(&n) {
        Ok(())
    } else {
        Err(format!("is {n} characters long ({min}–{max} allowed)"))
    })
}

/// `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3–200 characters, exactly one slash.
fn name_problem(name: &str) -> Option<String> {
    let n = name.chars().count();
    if !(3..=200).contains(&n) {
        return Some(format!("is {n} characters long (3–200 allowed)"));
    }
    let Some((ns, rest)) = name.split_once('/') else {
        return Some("has no `/` between namespace and server name".into());
    };
    let ns_ok = !ns.is_empty()
        && ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-".contains(c));
    let rest_ok = !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    (!(ns_ok && rest_ok)).then(|| {
        "does not match `namespace/name` (letters, digits, `.`, `-` before the slash; `_` also after)"
            .to_owned()
    })
}

/// The schema-level problems of a server.json document.
fn document_problems(doc: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut field = |key: &str, min: usize, max: usize, required: bool| match doc.get(key) {
        None if required => problems.push(format!("`{key}` is missing")),
        None => {}
        Some(v) => match str_len(v, min, max) {
            None => problems.push(format!("`{key}` is not a string")),
            Some(Err(e)) => problems.push(format!("`{key}` {e}")),
            Some(Ok(())) => {}
        },
    };
    field("name", 3, 200, true);
    field("description", 1, 100, true);
    field("version", 1, 255, true);
    field("title", 1, 100, false);
    if let Some(name) = doc.get("name").and_then(Value::as_str)
        && let Some(p) = name_problem(name)
    {
        problems.push(format!("`name` {p}"));
    }
    for key in ["$schema", "websiteUrl"] {
        if let Some(v) = doc.get(key)
            && v.as_str().is_none_or(|u| Url::parse(u).is_err())
        {
            problems.push(format!("`{key}` is not a URL"));
        }
    }
    if let Some(repo) = doc.get("repository") {
        if !repo.is_object() {
            problems.push("`repository` is not an object".into());
        } else {
            for key in ["url", "source"] {
                if !repo.get(key).is_some_and(Value::is_string) {
                    problems.push(format!("`repository.{key}` is missing or not a string"));
                }
            }
        }
    }
    match doc.get("packages") {
        None => {}
        Some(Value::Array(packages)) => {
            for (i, p) in packages.iter().enumerate() {
                for key in ["registryType", "identifier"] {
                    if !p.get(key).is_some_and(Value::is_string) {
                        problems.push(format!("`packages[{i}].{key}` is missing"));
                    }
                }
                if !p.pointer("/transport/type").is_some_and(Value::is_string) {
                    problems.push(format!("`packages[{i}].transport.type` is missing"));
                }
                if p.get("version").and_then(Value::as_str) == Some("latest") {
                    problems.push(format!(
                        "`packages[{i}].version` is \"latest\"; name a specific version"
                    ));
                }
            }
        }
        Some(_) => problems.push("`packages` is not an array".into()),
    }
    match doc.get("remotes") {
        None => {}
        Some(Value::Array(remotes)) => {
            for (i, r) in remotes.iter().enumerate() {
                match r.get("type").and_then(Value::as_str) {
                    Some("streamable-http" | "sse") => {}
                    Some(other) => problems.push(format!(
                        "`remotes[{i}].type` is \"{other}\" (streamable-http or sse)"
                    )),
                    None => problems.push(format!("`remotes[{i}].type` is missing")),
                }
                match r.get("url").and_then(Value::as_str) {
                    Some(u) if remote_url_ok(u) => {}
                    Some(u) => problems.push(format!(
                        "`remotes[{i}].url` {:?} is not an http(s) URL or `{{variable}}` template",
                        super::client::clip(u, 60)
                    )),
                    None => problems.push(format!("`remotes[{i}].url` is missing")),
                }
            }
        }
        Some(_) => problems.push("`remotes` is not an array".into()),
    }
    match doc.get("icons") {
        None => {}
        Some(Value::Array(icons)) => {
            for (i, icon) in icons.iter().enumerate() {
                match icon.get("src").and_then(Value::as_str) {
                    Some(src) if src.starts_with("https://") && src.len() <= 255 => {}
                    _ => problems.push(format!(
                        "`icons[{i}].src` must be an https URL of at most 255 characters"
                    )),
                }
            }
        }
        Some(_) => problems.push("`icons` is not an array".into()),
    }
    problems
}

/// `^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$`
fn remote_url_ok(u: &str) -> bool {
    if u.chars().any(char::is_whitespace) || u.is_empty() {
        return false;
    }
    if let Some(rest) = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
    {
        return !rest.is_empty();
    }
    let Some(inner) = u
        .strip_prefix('{')
        .and_then(|r| r.split_once('}'))
        .map(|(v, _)| v)
    else {
        return false;
    };
    inner
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

async fn server_json_valid(s: &Session) -> Judgement {
    let doc = match document(s, true).await {
        Ok(d) => d,
        Err(j) => return j,
    };
    let problems = document_problems(&doc.doc);
    if problems.is_empty() {
        Judgement::pass(format!(
            "server.json from {} has the fields the registry requires",
            doc.source
        ))
    } else {
        with_source(
            Judgement::fail(format!(
                "server.json from {}: {}; the registry refuses documents that break its schema",
                doc.source,
                super::client::some(&problems, 6, "; ")
            )),
            &doc,
        )
    }
}

fn dns_label_ok(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// A GitHub user or organisation name: 1–39 letters, digits and single hyphens.
fn github_login_ok(login: &str) -> bool {
    (1..=39).contains(&login.len())
        && login.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !login.starts_with('-')
        && !login.ends_with('-')
        && !login.contains("--")
}

async fn namespace(s: &Session) -> Judgement {
    let doc = match document(s, false).await {
        Ok(d) => d,
        Err(j) => return j,
    };
    let Some(name) = doc.doc.get("name").and_then(Value::as_str) else {
        return Judgement::skip("not verified: server.json has no name");
    };
    let Some((ns, _)) = name.split_once('/') else {
        return with_source(
            Judgement::fail(format!(
                "`{name}` has no namespace (`namespace/name`), so no ownership can be verified"
            )),
            &doc,
        );
    };
    if let Some(owner) = ns.strip_prefix("io.github.") {
        if !github_login_ok(owner) {
            return with_source(
                Judgement::fail(format!(
                    "`{name}`: `{owner}` is not a GitHub user or organisation name, so GitHub \
                     authentication cannot prove the `io.github.{owner}` namespace"
                )),
                &doc,
            );
        }
        // A repository on GitHub under another owner suggests the namespace is not the publisher's.
        if let Some(repo) = doc.doc.pointer("/repository/url").and_then(Value::as_str)
            && let Ok(u) = Url::parse(repo)
            && u.host_str() == Some("github.com")
            && let Some(repo_owner) = u.path_segments().and_then(|mut p| p.next())
            && !repo_owner.eq_ignore_ascii_case(owner)
        {
            return with_source(
                Judgement::fail(format!(
                    "`{name}` claims the GitHub namespace of `{owner}`, but repository.url is \
                     owned by `{repo_owner}`; publish under io.github.{repo_owner} or from \
                     `{owner}`'s account"
                )),
                &doc,
            );
        }
        return Judgement::pass(format!(
            "`{name}` is in the GitHub namespace of `{owner}`, verifiable by GitHub authentication"
        ));
    }
    let labels: Vec<&str> = ns.split('.').collect();
    let tld_ok = labels
        .first()
        .is_some_and(|t| t.len() >= 2 && t.chars().all(|c| c.is_ascii_alphabetic()));
    if labels.len() >= 2 && tld_ok && labels.iter().all(|l| dns_label_ok(l)) {
        let domain: Vec<&str> = labels.iter().rev().copied().collect();
        return Judgement::pass(format!(
            "`{name}` is in the reverse-DNS namespace of {}, verifiable by a DNS TXT record or \
             an HTTP well-known file on that domain",
            domain.join(".")
        ));
    }
    with_source(
        Judgement::fail(format!(
            "the namespace `{ns}` of `{name}` is neither `io.github.<user-or-org>` nor a \
             reverse-DNS domain (such as `com.example`), so the registry cannot verify who owns it"
        )),
        &doc,
    )
}

/// Semantic Versioning 2.0.0, strictly (no `v`, no ranges, no leading zeros).
pub(crate) fn is_semver(v: &str) -> bool {
    let (core_pre, build) = match v.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match core_pre.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (core_pre, None),
    };
    let numeric = |p: &str| {
        !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && (p == "0" || !p.starts_with('0'))
    };
    let ident = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        && pre.is_none_or(|pre| {
            pre.split('.')
                .all(|p| ident(p) && (!p.chars().all(|c| c.is_ascii_digit()) || numeric(p)))
        })
        && build.is_none_or(|b| b.split('.').all(ident))
}

/// Version ranges the registry refuses outright.
fn is_range(v: &str) -> bool {
    v.starts_with(['^', '~', '>', '<', '='])
        || v.contains("||")
        || v.contains(" - ")
        || v.split('.').any(|p| p == "x" || p == "X" || p == "*")
}

async fn semver(s: &Session) -> Judgement {
    let doc = match document(s, false).await {
        Ok(d) => d,
        Err(j) => return j,
    };
    match doc.doc.get("version") {
        None => with_source(Judgement::fail("server.json has no `version`"), &doc),
        Some(Value::String(v)) if is_semver(v) => {
            Judgement::pass(format!("version `{v}` is valid semver"))
        }
        Some(Value::String(v)) if is_range(v) => with_source(
            Judgement::fail(format!(
                "version `{v}` is a range; the registry refuses ranges: publish one exact version"
            )),
            &doc,
        ),
        Some(Value::String(v)) => with_source(
            Judgement::fail(format!(
                "version `{v}` is not semver (MAJOR.MINOR.PATCH, no `v` prefix); the registry \
                 accepts it but cannot order it, so it is always treated as the latest"
            )),
            &doc,
        ),
        Some(other) => with_source(
            Judgement::fail(format!("`version` is {other}, not a string")),
            &doc,
        ),
    }
}

/// A URL compared as an endpoint: host case and a trailing slash do not matter.
fn same_endpoint(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
        && a.path().trim_end_matches('/') == b.path().trim_end_matches('/')
        && a.query() == b.query()
}

async fn remote_matches(s: &Session) -> Judgement {
    let doc = match document(s, false).await {
        Ok(d) => d,
        Err(j) => return j,
    };
    let remotes: Vec<String> = doc
        .doc
        .get("remotes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("url").and_then(Value::as_str).map(str::to_owned))
        .collect();
    if remotes.is_empty() {
        return Judgement::skip("server.json declares no remotes");
    }
    let concrete: Vec<&String> = remotes.iter().filter(|u| !u.contains('{')).collect();
    if concrete.is_empty() {
        return Judgement::skip(
            "every remote URL in server.json is a template with {variables}; none can be compared",
        );
    }
    if concrete
        .iter()
        .any(|u| Url::parse(u).is_ok_and(|u| same_endpoint(&u, &s.url)))
    {
        return Judgement::pass(format!(
            "server.json declares the probed endpoint {}",
            s.url
        ));
    }
    with_source(
        Judgement::fail(format!(
            "server.json declares the remote(s) {concrete:?}, but protocheck probed {}; the \
             registry entry would send clients somewhere else",
            s.url
        )),
        &doc,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_is_strict() {
        for ok in [
            "0.1.0",
            "1.2.3",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "10.20.30-rc.1+x",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "v1.0", "1.0", "01.2.3", "1.2.3-", "1.2.3-01", "^1.2.3", "latest", "1.2.x",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
        assert!(is_range("^1.2.3") && is_range("1.x") && is_range(">=1.0.0"));
        assert!(!is_range("v1.0"));
    }

    #[test]
    fn names_follow_the_registry_pattern() {
        assert_eq!(name_problem("io.github.someone/server"), None);
        assert!(name_problem("no-slash").is_some());
        assert!(name_problem("a/b/c").is_some());
        assert!(name_problem("ab").is_some());
    }
}
