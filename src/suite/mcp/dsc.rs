//! DSC — discovery and capabilities (server/discover, versioning, basic#meta).

use super::client::{clip, some};
use super::era::Era;
use super::rule::{DISCOVER_ID, Keyword, McpRule, spec};
use super::session::{Judgement, Session};
use super::wire::{LEGACY_VERSION, META_SERVER_INFO, PROTOCOL_VERSION};
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::Value;

pub(crate) const DISCOVER: McpRule = McpRule::new(
    DISCOVER_ID,
    "server/discover is implemented",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/versioning#protocol-version-negotiation"),
    "DSC",
    |s| discover_implemented(s).boxed(),
)
.says("servers MUST implement server/discover, which any request may precede or follow")
.help(
    "The run's first request is a cold `server/discover` POST, with the 2026-07-28 headers and \
     per-request `_meta` and no session; protocheck reads the status and looks for a \
     DiscoverResult with a `capabilities` object. When that fails it also sends a legacy \
     `initialize`, to tell a server that speaks only an earlier revision.",
    "The server speaks only an earlier revision (it answers `initialize` but not \
     `server/discover`), routes the method to a 404 or 405, asks for authorization, or \
     answers with a result missing `capabilities`. Every other rule needs this answer, so \
     they are reported as not verified.",
    "Implement `server/discover` on the MCP endpoint and answer it, without a session or a \
     prior `initialize`, with 200 and a DiscoverResult listing `supportedVersions`, \
     `capabilities` and `serverInfo`. With an SDK, upgrade to a release that supports the \
     2026-07-28 revision.",
)
.requires(&[])
.on_legacy()
.pool_independent();

pub(crate) const VERSIONS: McpRule = McpRule::new(
    "MCP-DSC-002",
    "DiscoverResult advertises supported protocol versions",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/discover"),
    "DSC",
    |s| versions_advertised(s).boxed(),
)
.says("a DiscoverResult MUST list the protocol versions the server supports in supportedVersions")
.help(
    "protocheck sends nothing of its own: it reads the answer to the run's `server/discover` (the \
     cold POST with the 2026-07-28 headers and `_meta`) and checks that its `supportedVersions` \
     is present, is a non-empty array, and holds only strings.",
    "The DiscoverResult usually leaves `supportedVersions` out, sends it empty, or sends one \
     version as a plain string instead of an array; a hand-written discover handler that returns \
     only `capabilities` and `serverInfo` is the most common cause.",
    "Return `supportedVersions` in every DiscoverResult as an array of the version strings the \
     server speaks, e.g. `[\"2026-07-28\"]`, adding `2025-11-25` only when the server also serves \
     legacy clients through `initialize`.",
)
.pool_independent();

pub(crate) const CURRENT_REVISION: McpRule = McpRule::new(
    "MCP-DSC-003",
    "Advertised versions include a currently-supported revision",
    Keyword::May,
    Outcome::Info,
    spec!("/basic/versioning"),
    "DSC",
    |s| current_revision(s).boxed(),
)
.says("a server MAY list any revision it supports; listing a current one lets current clients connect")
.help(
    "protocheck reads `supportedVersions` from the run's `server/discover` answer and looks for a \
     current revision, `2026-07-28` or `2025-11-25`. It sends nothing of its own, and judges the \
     rule only when MCP-DSC-002 passed.",
    "An info finding, not a violation: none of the listed versions is a current revision, usually \
     because of a typo in the date (`2026-7-28`), a draft or pre-release label, or only older \
     revisions such as `2025-06-18`. Clients that know only published revisions then find none to \
     pick.",
    "List the revision the server implements with its exact published string, `2026-07-28` (and \
     `2025-11-25` if legacy clients are served). A server that deliberately lists other revisions \
     only needs no change, but current clients will not connect to it.",
)
.requires(&[VERSIONS.rule.id])
.pool_independent();

pub(crate) const EXTENSION_IDS: McpRule = McpRule::new(
    "MCP-DSC-004",
    "Extension identifiers use a valid non-reserved reverse-DNS prefix",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/versioning#extension-negotiation"),
    "DSC",
    |s| extension_ids(s).boxed(),
)
.says("extension identifiers MUST use a reverse-DNS prefix, and the modelcontextprotocol/mcp prefixes are reserved")
.help(
    "protocheck reads `capabilities.extensions` from the run's `server/discover` answer and \
     checks each key: a reverse-DNS prefix, a `/`, then a name of letters, digits, `-`, `_` and \
     `.`; a prefix whose second label is `modelcontextprotocol` or `mcp` is refused unless it is \
     `io.modelcontextprotocol`. Skipped when no extension is advertised.",
    "The server usually lists extensions under bare names (`tasks` rather than \
     `io.modelcontextprotocol/tasks`), invents an identifier under the reserved MCP namespace \
     such as `dev.mcp/...`, or sends `extensions` as an array instead of an object keyed by \
     identifier.",
    "Key `capabilities.extensions` by full identifiers, each mapping to its settings object: \
     `io.modelcontextprotocol/<name>` for official extensions and your own reverse-DNS prefix, \
     such as `com.example/my-extension`, for your own.",
)
.pool_independent();

pub(crate) const SERVER_INFO: McpRule = McpRule::new(
    "MCP-DSC-005",
    "Results carry io.modelcontextprotocol/serverInfo in _meta",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/index#meta"),
    "DSC",
    |s| server_info(s).boxed(),
)
.says("servers SHOULD identify themselves in result _meta io.modelcontextprotocol/serverInfo (an Implementation with name and version)")
.help(
    "After every other rule, protocheck reads every result the run received for its valid \
     2026-07-28 requests, from the survey and from every rule, and checks that each carries \
     `_meta[\"io.modelcontextprotocol/serverInfo\"]` with a string `name` and `version`.",
    "Most often the server puts `serverInfo` on the DiscoverResult only, or adds it in some \
     handlers and not others; sometimes `version` is missing. Clients and logs then cannot tell \
     which implementation answered a given request.",
    "Add `io.modelcontextprotocol/serverInfo` with `name` and `version` to the `_meta` of every \
     result, not only that of `server/discover`; one response hook that stamps every result is \
     the simplest place to do it.",
)
.run_wide();

pub(crate) const RULES: &[McpRule] = &[
    DISCOVER,
    VERSIONS,
    CURRENT_REVISION,
    EXTENSION_IDS,
    SERVER_INFO,
];

async fn discover_implemented(s: &Session) -> Judgement {
    if let Era::Legacy {
        legacy_version,
        listed,
    } = &s.era
        && !listed.is_empty()
    {
        // The versioning page has a server that does not support the
        // requested version say which it does; this one did, and 2026-07-28
        // is not among them. It is not judged on a revision it says it does
        // not speak, and its `server/discover` is not broken: no grade (the
        // first clause is the verdict's short reason, see `grade`).
        return Judgement::skip(format!(
            "not verified: the server does not speak {PROTOCOL_VERSION}: `server/discover` was \
             answered {}, listing {} and not {PROTOCOL_VERSION}, and a legacy `initialize` \
             negotiated {legacy_version}, so the {PROTOCOL_VERSION} rules do not apply. \
             `--mcp-revision newest` judges it on the newest revision it lists that protocheck \
             knows",
            s.discover.describe(),
            listed.join(", ")
        ))
        .reply(&s.discover)
        .reply(&s.initialize);
    }
    if let Era::Legacy { legacy_version, .. } = &s.era {
        return Judgement::fail(format!(
            "`server/discover` was answered {}, not as a {PROTOCOL_VERSION} server answers it, \
             and a legacy `initialize` with a result negotiating {legacy_version}: judged, from \
             these two answers, as a server that speaks MCP {legacy_version} only, so the \
             {PROTOCOL_VERSION} rules do not apply. Serve {PROTOCOL_VERSION} requests \
             (per-request `_meta`, `server/discover`) to be judged",
            s.discover.describe()
        ))
        .reply(&s.discover)
        .reply(&s.initialize);
    }
    let reply = &s.discover;
    match reply.result() {
        Some(result)
            if reply.status_is(200) && result.get("capabilities").is_some_and(Value::is_object) =>
        {
            Judgement::pass("`server/discover` answered a cold request with a DiscoverResult")
        }
        Some(_) if reply.status_is(200) => Judgement::fail(
            "`server/discover` answered with a result that has no `capabilities` object; \
             DiscoverResult requires `capabilities`, and without it protocheck cannot tell \
             what the server offers",
        )
        .reply(reply),
        _ => {
            // A refusal for authorization is judged by the AUT rules: say what
            // the request carried, so that the refusal is not left unexplained.
            // (A 401 to a run without a token skips this rule before its check.)
            let hint = match (reply.status, s.options.bearer_token.is_some()) {
                (Some(401 | 403), true) => {
                    " (the request carried the run's bearer token; the MCP-AUT rules judge \
                     how the server asks for authorization)"
                }
                (Some(401 | 403), false) => {
                    " (the request carried no credentials: this run has no token; the \
                     MCP-AUT rules judge how the server asks for authorization)"
                }
                _ => "",
            };
            Judgement::fail(format!(
                "`server/discover` with MCP {PROTOCOL_VERSION} headers and `_meta` answered \
                 {}{hint}; every {PROTOCOL_VERSION} server MUST implement it and answer with \
                 200 and a DiscoverResult",
                reply.describe()
            ))
            .reply(reply)
        }
    }
}

async fn versions_advertised(s: &Session) -> Judgement {
    let reply = &s.discover;
    let Some(result) = reply.result() else {
        return Judgement::skip("not verified: `server/discover` returned no result");
    };
    match result.get("supportedVersions") {
        None => Judgement::fail(
            "DiscoverResult has no `supportedVersions`; it MUST list the protocol versions \
             the server supports, e.g. [\"2026-07-28\"]",
        )
        .reply(reply),
        Some(Value::Array(list)) if list.is_empty() => Judgement::fail(
            "DiscoverResult `supportedVersions` is empty; list at least the revision the \
             server speaks, e.g. [\"2026-07-28\"]",
        )
        .reply(reply),
        Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
            Judgement::pass(format!("supportedVersions: {}", Value::Array(list.clone())))
        }
        Some(other) => Judgement::fail(format!(
            "DiscoverResult `supportedVersions` is {}; it MUST be an array of version strings",
            clip(&other.to_string(), 120)
        ))
        .reply(reply),
    }
}

async fn current_revision(s: &Session) -> Judgement {
    let versions = s.supported_versions().unwrap_or_default();
    let current = [PROTOCOL_VERSION, LEGACY_VERSION];
    if versions.iter().any(|v| current.contains(&v.as_str())) {
        Judgement::pass(format!(
            "supportedVersions includes {}",
            versions.join(", ")
        ))
    } else {
        Judgement::fail(format!(
            "supportedVersions lists {}, none of which is a current revision ({}); clients \
             that know only published revisions cannot pick one",
            clip(&format!("{versions:?}"), 200),
            current.join(" or ")
        ))
        .reply(&s.discover)
    }
}

/// Why `id` is not a valid extension identifier, if it is not. The rules are the
/// `_meta` key rules with a mandatory prefix (versioning#extension-negotiation,
/// basic/index#meta).
pub(crate) fn extension_id_problem(id: &str) -> Option<String> {
    let Some((prefix, name)) = id.rsplit_once('/') else {
        return Some("has no `prefix/` (e.g. `com.example/my-extension`)".into());
    };
    if prefix.is_empty() {
        return Some("has an empty prefix".into());
    }
    for label in prefix.split('.') {
        let ok = label
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && label
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric())
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !ok {
            return Some(format!(
                "has the prefix label `{label}`; labels start with a letter, end with a \
                 letter or digit, and hold only letters, digits and hyphens"
            ));
        }
    }
    if name.is_empty() {
        return Some("has an empty name after the prefix".into());
    }
    let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !edge_ok(name.chars().next())
        || !edge_ok(name.chars().last())
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Some(format!(
            "has the name `{name}`; names begin and end with a letter or digit and hold only \
             letters, digits, `-`, `_` and `.`"
        ));
    }
    // Any prefix whose second label is `modelcontextprotocol` or `mcp` is reserved
    // for MCP. MCP's own extensions live under `io.modelcontextprotocol/`, so that
    // one prefix is accepted: protocheck cannot know every official extension.
    let second = prefix.split('.').nth(1).map(str::to_ascii_lowercase);
    if matches!(second.as_deref(), Some("modelcontextprotocol" | "mcp"))
        && prefix != "io.modelcontextprotocol"
    {
        return Some(format!(
            "uses the prefix `{prefix}/`, which is reserved for MCP (its second label is \
             `{}`); use your own reverse-DNS prefix such as `com.example/`",
            second.unwrap_or_default()
        ));
    }
    None
}

async fn extension_ids(s: &Session) -> Judgement {
    let Some(extensions) = s.capabilities().get("extensions") else {
        return Judgement::skip(
            "the server advertises no extensions (capabilities.extensions is absent)",
        );
    };
    let Some(map) = extensions.as_object() else {
        return Judgement::fail(
            "capabilities.extensions is not an object mapping extension ids to settings",
        )
        .reply(&s.discover);
    };
    if map.is_empty() {
        return Judgement::skip(
            "the server advertises no extensions (capabilities.extensions is empty)",
        );
    }
    // Each value is the extension's settings: an object (the schema's
    // `extensions?: {<id>: object}`), `{}` when there are none.
    let problems: Vec<String> = map
        .iter()
        .filter_map(|(id, value)| {
            let problem = extension_id_problem(id).or_else(|| {
                (!value.is_object()).then(|| {
                    format!(
                        "is advertised with {}, not an object of settings (`{{}}` when there \
                         are none)",
                        clip(&value.to_string(), 40)
                    )
                })
            })?;
            Some(format!("`{}` {problem}", clip(id, 80)))
        })
        .collect();
    if problems.is_empty() {
        let ids: Vec<String> = map.keys().map(|k| clip(k, 80)).collect();
        Judgement::pass(format!("extension ids are valid: {}", some(&ids, 5, ", ")))
    } else {
        Judgement::fail(format!("extension identifier {}", some(&problems, 5, "; ")))
            .reply(&s.discover)
    }
}

async fn server_info(s: &Session) -> Judgement {
    let seen = s.client.seen().await;
    let results: Vec<_> = seen.iter().filter(|r| r.result.is_some()).collect();
    if results.is_empty() {
        return Judgement::skip("no result was received to judge");
    }
    let missing: Vec<_> = results
        .iter()
        .filter(|r| {
            let info = r
                .result
                .as_ref()
                .and_then(|v| v.get("_meta"))
                .and_then(|m| m.get(META_SERVER_INFO));
            !info.is_some_and(|i| {
                i.get("name").is_some_and(Value::is_string)
                    && i.get("version").is_some_and(Value::is_string)
            })
        })
        .collect();
    if missing.is_empty() {
        return Judgement::pass(format!(
            "all {} results carried `_meta[\"{META_SERVER_INFO}\"]` with name and version",
            results.len()
        ));
    }
    let mut methods: Vec<&str> = missing.iter().map(|r| r.method.as_str()).collect();
    methods.sort_unstable();
    methods.dedup();
    let mut j = Judgement::fail(format!(
        "{} of {} results lack `_meta[\"{META_SERVER_INFO}\"]` (an Implementation with name \
         and version), e.g. on {}; servers SHOULD identify themselves in every result",
        missing.len(),
        results.len(),
        methods.join(", ")
    ));
    for r in missing.iter().take(2) {
        j = j.with(&r.exchange);
    }
    j
}

#[cfg(test)]
mod tests {
    use super::extension_id_problem;

    #[test]
    fn extension_ids_follow_the_meta_key_rules() {
        for ok in [
            "com.example/my-ext",
            "io.modelcontextprotocol/tasks",
            "com.example.mcp/x",
            "dev.protocheck/reference",
            "a/b",
        ] {
            assert_eq!(extension_id_problem(ok), None, "{ok}");
        }
        for bad in [
            "tasks",
            "dev.mcp/reference",
            "org.modelcontextprotocol.api/x",
            "com.mcp.tools/x",
            "com.example/",
            "1com.example/x",
            "com.example-/x",
            "com.example/-x",
            "com..example/x",
        ] {
            assert!(extension_id_problem(bad).is_some(), "{bad}");
        }
    }
}
