//! The fault switches: one per rule of the `mcp-2025-11-25` suite that the
//! reference server can break, named by the rule's id
//! (docs/spec/mcp-2025-11-25-rules.md). Each breaks the behaviour its rule
//! judges; its doc says how. The AUT faults apply with authorization on
//! (`with_auth`), the TSK faults with tasks on (`with_tasks`).
//!
//! Where one behaviour is seen by two rules, a fault shows in both:
//! MCP25-RPC-002's `ping` answer also carries an error (MCP25-UTL-001 reads
//! that `ping`), MCP25-CPL-001's missing capability also makes MCP25-CPL-002
//! apply. MCP25-UTL-002's fault ends the session (over stdio, the server)
//! when a request it answered is cancelled; a cancellation naming an id it
//! never saw is ignored as it should be. MCP25-CPL-002's fault also leaves
//! `completions` undeclared, so MCP25-CPL-001 then applies (and passes: the
//! answer is an error). The faults
//! that answer `tools/list` over SSE (MCP25-LIF-008, MCP25-LIF-009) do so
//! only to have a stream to send their extra message on; SSE is allowed.
//! MCP25-LIF-005's error answer to `notifications/initialized` is, over
//! HTTP, also a notification POST answered with neither 202 nor an error
//! status (MCP25-HTP-002).
//! MCP25-TSK-006's related-task `_meta` is a `_meta` key that
//! MCP25-RPC-012 then has to judge.

// Lifecycle.
/// `serverInfo` without `version`.
pub(super) const SERVER_INFO: &str = "MCP25-LIF-001";
/// A request for 2025-11-25 is answered with 2025-06-18.
pub(super) const VERSION_ECHO_KNOWN: &str = "MCP25-LIF-002";
/// An unknown requested version is echoed back.
pub(super) const VERSION_ECHO_UNKNOWN: &str = "MCP25-LIF-003";
/// An unknown requested version gets 2025-03-26, not the latest.
pub(super) const VERSION_NOT_LATEST: &str = "MCP25-LIF-004";
/// `notifications/initialized` is answered with an error.
pub(super) const INITIALIZED_ANSWERED: &str = "MCP25-LIF-005";
/// A `tasks/list` request is sent before `notifications/initialized`.
pub(super) const REQUEST_BEFORE_INITIALIZED: &str = "MCP25-LIF-006";
/// Requests before `initialize` are served.
pub(super) const BEFORE_INIT: &str = "MCP25-LIF-007";
/// `tools.listChanged` is not declared, yet `tools/list` sends `notifications/tools/list_changed`.
pub(super) const LIST_CHANGED_UNDECLARED: &str = "MCP25-LIF-008";
/// `tools/list` sends a `sampling/createMessage` request to a client without that capability.
pub(super) const SAMPLING_UNDECLARED: &str = "MCP25-LIF-009";

// JSON-RPC.
/// An integer id is answered as a string.
pub(super) const ID_TYPE: &str = "MCP25-RPC-001";
/// The answer to `ping` has both `result` and `error`.
pub(super) const RESULT_AND_ERROR: &str = "MCP25-RPC-002";
/// Error objects have no `message`.
pub(super) const ERROR_SHAPE: &str = "MCP25-RPC-003";
/// Malformed JSON gets a 200 result.
pub(super) const PARSE_ERROR: &str = "MCP25-RPC-004";
/// A request without `method` is served as `ping`.
pub(super) const MISSING_METHOD: &str = "MCP25-RPC-005";
/// A request with a null id is served.
pub(super) const NULL_ID: &str = "MCP25-RPC-006";
/// An unknown method gets an empty result.
pub(super) const UNKNOWN_METHOD: &str = "MCP25-RPC-007";
/// A batch is answered with a batch.
pub(super) const NO_BATCH: &str = "MCP25-RPC-008";
/// An unknown notification gets an error response.
pub(super) const NOTIFICATION_ANSWERED: &str = "MCP25-RPC-009";
/// `_meta` with a key other than `progressToken` is refused with -32602.
pub(super) const META_REFUSED: &str = "MCP25-RPC-010";
/// SSE answers hold a comment with a byte that is not UTF-8 (HTTP only).
pub(super) const INVALID_UTF8: &str = "MCP25-RPC-011";
/// The `_meta` key of the initialize result and of tool results is not a well-formed name.
pub(super) const META_KEY: &str = "MCP25-RPC-012";

// Streamable HTTP.
/// JSON answers are labelled `text/plain`.
pub(super) const CONTENT_TYPE: &str = "MCP25-HTP-001";
/// An accepted notification gets 200, not 202 (a posted response still gets 202).
pub(super) const NOTIFICATION_202: &str = "MCP25-HTP-002";
/// A posted JSON-RPC response gets 200 with a body.
pub(super) const RESPONSE_200: &str = "MCP25-HTP-003";
/// SSE answers have no priming event.
pub(super) const PRIMING_EVENT: &str = "MCP25-HTP-004";
/// SSE answers end without the JSON-RPC response.
pub(super) const SSE_NO_RESPONSE: &str = "MCP25-HTP-005";
/// SSE answers stay open after the response.
pub(super) const SSE_NOT_ENDED: &str = "MCP25-HTP-006";
/// SSE answers close after the priming event without a `retry` field.
pub(super) const NO_RETRY: &str = "MCP25-HTP-007";
/// GET answers `application/json`.
pub(super) const GET_NOT_SSE: &str = "MCP25-HTP-008";
/// The GET stream carries a JSON-RPC response.
pub(super) const GET_RESPONSE: &str = "MCP25-HTP-009";
/// Event ids restart at 1 on every stream.
pub(super) const EVENT_IDS: &str = "MCP25-HTP-010";
/// Resumption replays the events of every stream.
pub(super) const REPLAY_OTHER_STREAM: &str = "MCP25-HTP-011";
/// Session ids contain a space.
pub(super) const SESSION_ID_ASCII: &str = "MCP25-HTP-012";
/// Every initialize gets the same session id (the one session; DELETE then
/// answers 405, so that no client ends the others' session).
pub(super) const SESSION_ID_REUSED: &str = "MCP25-HTP-013";
/// Requests without `Mcp-Session-Id` get 404, as if the session were unknown.
pub(super) const SESSION_REQUIRED: &str = "MCP25-HTP-014";
/// DELETE answers 204 but the session lives on.
pub(super) const DELETE_KEEPS: &str = "MCP25-HTP-015";
/// A session id never issued is served.
pub(super) const SESSION_UNKNOWN: &str = "MCP25-HTP-016";
/// `MCP-Protocol-Version` is not checked.
pub(super) const VERSION_HEADER: &str = "MCP25-HTP-017";
/// `Origin` is not checked.
pub(super) const ORIGIN: &str = "MCP25-HTP-018";

// stdio.
/// Stdout messages are pretty-printed over several lines.
pub(super) const STDIO_NEWLINES: &str = "MCP25-STD-001";
/// A banner line precedes the messages on stdout.
pub(super) const STDIO_ONLY_MESSAGES: &str = "MCP25-STD-002";
/// The end of stdin does not end the server.
pub(super) const STDIO_NO_EXIT: &str = "MCP25-STD-003";

// Utilities.
/// `ping` gets -32601.
pub(super) const PING: &str = "MCP25-UTL-001";
/// A cancellation of an answered request ends the session (stdio: the server).
pub(super) const LATE_CANCEL: &str = "MCP25-UTL-002";
/// A cancellation of `slow` only stops its progress: the call runs on and is answered.
pub(super) const CANCELLED_NO_RESPONSE: &str = "MCP25-UTL-003";
/// Progress names a token no request carried.
pub(super) const PROGRESS_TOKEN: &str = "MCP25-UTL-004";
/// Progress decreases.
pub(super) const PROGRESS_INCREASES: &str = "MCP25-UTL-005";
/// One more progress notification follows the response.
pub(super) const PROGRESS_AFTER_RESPONSE: &str = "MCP25-UTL-006";

// Tools.
/// No `tools` capability.
pub(super) const TOOLS_UNDECLARED: &str = "MCP25-TOL-001";
/// A tool's `title` is a number.
pub(super) const TOOL_TITLE: &str = "MCP25-TOL-002";
/// `slow`'s `inputSchema` has no `type`.
pub(super) const INPUT_SCHEMA: &str = "MCP25-TOL-003";
/// `get_forecast`'s `outputSchema` has no `type`.
pub(super) const OUTPUT_SCHEMA: &str = "MCP25-TOL-004";
/// The first page lists `get_forecast` twice.
pub(super) const TOOL_NAMES_UNIQUE: &str = "MCP25-TOL-005";
/// An extra tool named `météo du jour`.
pub(super) const TOOL_NAME_CHARACTERS: &str = "MCP25-TOL-006";
/// `tools/list` pages one tool at a time, and every `nextCursor` after the
/// first is a cursor the server refuses.
pub(super) const PAGINATION: &str = "MCP25-TOL-007";
/// An invalid cursor gets the first page.
pub(super) const INVALID_CURSOR: &str = "MCP25-TOL-008";
/// An unknown tool gets a tool result with `isError`.
pub(super) const UNKNOWN_TOOL: &str = "MCP25-TOL-009";
/// Successful tool results have `isError: "false"`.
pub(super) const IS_ERROR_TYPE: &str = "MCP25-TOL-010";
/// Missing or invalid arguments get -32602.
pub(super) const TOOL_IS_ERROR: &str = "MCP25-TOL-011";
/// `structuredContent` lacks a required property.
pub(super) const STRUCTURED_CONTENT: &str = "MCP25-TOL-012";
/// The text block is prose, not the structured JSON.
pub(super) const STRUCTURED_TEXT: &str = "MCP25-TOL-013";
/// No `resources` capability (resources methods unknown), yet tool results embed a resource.
pub(super) const EMBEDDED_UNDECLARED: &str = "MCP25-TOL-014";

// Resources.
/// No `resources` capability.
pub(super) const RESOURCES_UNDECLARED: &str = "MCP25-RES-001";
/// A listed resource has no `name`.
pub(super) const RESOURCE_NAME: &str = "MCP25-RES-002";
/// A resource URI has a space.
pub(super) const RESOURCE_URI: &str = "MCP25-RES-003";
/// The template has no `name`.
pub(super) const TEMPLATE_NAME: &str = "MCP25-RES-004";
/// A read content has both `text` and `blob`.
pub(super) const RESOURCE_CONTENTS: &str = "MCP25-RES-005";
/// `blob` is not base64.
pub(super) const BLOB_BASE64: &str = "MCP25-RES-006";
/// An unknown resource gets -32603.
pub(super) const RESOURCE_NOT_FOUND: &str = "MCP25-RES-007";
/// `resources/subscribe` gets -32603.
pub(super) const SUBSCRIBE: &str = "MCP25-RES-008";

// Prompts.
/// No `prompts` capability.
pub(super) const PROMPTS_UNDECLARED: &str = "MCP25-PRM-001";
/// An extra argument, `tone`, whose `required` is a string.
pub(super) const PROMPT_ARGUMENTS: &str = "MCP25-PRM-002";
/// A message has role `system`.
pub(super) const PROMPT_ROLE: &str = "MCP25-PRM-003";
/// The image block's `mimeType` is `text/plain`.
pub(super) const PROMPT_IMAGE: &str = "MCP25-PRM-004";
/// The embedded resource has neither `text` nor `blob`.
pub(super) const PROMPT_RESOURCE: &str = "MCP25-PRM-005";
/// An unknown prompt gets -32603.
pub(super) const UNKNOWN_PROMPT: &str = "MCP25-PRM-006";
/// A missing required argument is accepted.
pub(super) const PROMPT_ARGUMENT: &str = "MCP25-PRM-007";

// Completion.
/// No `completions` capability, yet completions are answered.
pub(super) const COMPLETIONS_UNDECLARED: &str = "MCP25-CPL-001";
/// No `completions` capability, and `completion/complete` gets -32602, not -32601.
pub(super) const COMPLETION_NOT_FOUND: &str = "MCP25-CPL-002";
/// 101 completion values.
pub(super) const COMPLETION_LIMIT: &str = "MCP25-CPL-003";
/// An unknown prompt gets an empty completion.
pub(super) const COMPLETION_UNKNOWN_PROMPT: &str = "MCP25-CPL-004";

// Logging.
/// No `logging` capability, yet a `notifications/message` goes out for every
/// request (over HTTP, on the GET stream when one is open).
pub(super) const LOGGING_UNDECLARED: &str = "MCP25-LOG-001";
/// `logging/setLevel` refuses `warning` as an unknown level (-32602), as a
/// server whose logging library calls it `warn` does; the other seven levels
/// are set and answered `{}`.
pub(super) const SET_LEVEL: &str = "MCP25-LOG-002";
/// An invalid level is accepted.
pub(super) const INVALID_LEVEL: &str = "MCP25-LOG-003";
/// Log messages have level `verbose`.
pub(super) const LOG_LEVEL: &str = "MCP25-LOG-004";

// Authorization (with `with_auth`).
/// Neither `resource_metadata` in the challenge nor a well-known document.
pub(super) const AUTH_DISCOVERY: &str = "MCP25-AUT-001";
/// The metadata lists no authorization server.
pub(super) const AUTH_SERVERS: &str = "MCP25-AUT-002";
/// The metadata's `resource` names another endpoint.
pub(super) const AUTH_RESOURCE: &str = "MCP25-AUT-003";
/// The metadata lists four authorization servers; the fourth's metadata
/// advertises only `plain` PKCE.
pub(super) const AUTH_PKCE: &str = "MCP25-AUT-004";
/// The challenge has no `scope`.
pub(super) const AUTH_CHALLENGE_SCOPE: &str = "MCP25-AUT-005";
/// Any bearer token is accepted.
pub(super) const AUTH_INVALID_TOKEN: &str = "MCP25-AUT-006";
/// Insufficient scope gets 401 `invalid_token`.
pub(super) const AUTH_INSUFFICIENT_SCOPE: &str = "MCP25-AUT-007";
/// A token in the `access_token` query parameter is accepted.
pub(super) const AUTH_QUERY_TOKEN: &str = "MCP25-AUT-008";

// Tasks (with `with_tasks`).
/// `tasks/get` and `tasks/result` of an unknown task get -32603.
pub(super) const TASK_UNKNOWN: &str = "MCP25-TSK-001";
/// `tasks/cancel` of an unknown task succeeds.
pub(super) const TASK_CANCEL_UNKNOWN: &str = "MCP25-TSK-002";
/// `tasks/list` pages one task at a time, over two tasks; the task of the
/// second page has no `lastUpdatedAt` and no `ttl`.
pub(super) const TASK_SHAPE: &str = "MCP25-TSK-003";
/// An invalid `tasks/list` cursor gets the first page.
pub(super) const TASK_CURSOR: &str = "MCP25-TSK-004";
/// `report` (taskSupport "required") called without a task runs.
pub(super) const TASK_REQUIRED: &str = "MCP25-TSK-005";
/// `tasks/list` and `tasks/get` results carry the related-task `_meta`.
pub(super) const TASK_RELATED_META: &str = "MCP25-TSK-006";

/// Every fault id the server knows, in catalogue order.
pub(super) const ALL: &[&str] = &[
    SERVER_INFO,
    VERSION_ECHO_KNOWN,
    VERSION_ECHO_UNKNOWN,
    VERSION_NOT_LATEST,
    INITIALIZED_ANSWERED,
    REQUEST_BEFORE_INITIALIZED,
    BEFORE_INIT,
    LIST_CHANGED_UNDECLARED,
    SAMPLING_UNDECLARED,
    ID_TYPE,
    RESULT_AND_ERROR,
    ERROR_SHAPE,
    PARSE_ERROR,
    MISSING_METHOD,
    NULL_ID,
    UNKNOWN_METHOD,
    NO_BATCH,
    NOTIFICATION_ANSWERED,
    META_REFUSED,
    INVALID_UTF8,
    META_KEY,
    CONTENT_TYPE,
    NOTIFICATION_202,
    RESPONSE_200,
    PRIMING_EVENT,
    SSE_NO_RESPONSE,
    SSE_NOT_ENDED,
    NO_RETRY,
    GET_NOT_SSE,
    GET_RESPONSE,
    EVENT_IDS,
    REPLAY_OTHER_STREAM,
    SESSION_ID_ASCII,
    SESSION_ID_REUSED,
    SESSION_REQUIRED,
    DELETE_KEEPS,
    SESSION_UNKNOWN,
    VERSION_HEADER,
    ORIGIN,
    STDIO_NEWLINES,
    STDIO_ONLY_MESSAGES,
    STDIO_NO_EXIT,
    PING,
    LATE_CANCEL,
    CANCELLED_NO_RESPONSE,
    PROGRESS_TOKEN,
    PROGRESS_INCREASES,
    PROGRESS_AFTER_RESPONSE,
    TOOLS_UNDECLARED,
    TOOL_TITLE,
    INPUT_SCHEMA,
    OUTPUT_SCHEMA,
    TOOL_NAMES_UNIQUE,
    TOOL_NAME_CHARACTERS,
    PAGINATION,
    INVALID_CURSOR,
    UNKNOWN_TOOL,
    IS_ERROR_TYPE,
    TOOL_IS_ERROR,
    STRUCTURED_CONTENT,
    STRUCTURED_TEXT,
    EMBEDDED_UNDECLARED,
    RESOURCES_UNDECLARED,
    RESOURCE_NAME,
    RESOURCE_URI,
    TEMPLATE_NAME,
    RESOURCE_CONTENTS,
    BLOB_BASE64,
    RESOURCE_NOT_FOUND,
    SUBSCRIBE,
    PROMPTS_UNDECLARED,
    PROMPT_ARGUMENTS,
    PROMPT_ROLE,
    PROMPT_IMAGE,
    PROMPT_RESOURCE,
    UNKNOWN_PROMPT,
    PROMPT_ARGUMENT,
    COMPLETIONS_UNDECLARED,
    COMPLETION_NOT_FOUND,
    COMPLETION_LIMIT,
    COMPLETION_UNKNOWN_PROMPT,
    LOGGING_UNDECLARED,
    SET_LEVEL,
    INVALID_LEVEL,
    LOG_LEVEL,
    AUTH_DISCOVERY,
    AUTH_SERVERS,
    AUTH_RESOURCE,
    AUTH_PKCE,
    AUTH_CHALLENGE_SCOPE,
    AUTH_INVALID_TOKEN,
    AUTH_INSUFFICIENT_SCOPE,
    AUTH_QUERY_TOKEN,
    TASK_UNKNOWN,
    TASK_CANCEL_UNKNOWN,
    TASK_SHAPE,
    TASK_CURSOR,
    TASK_REQUIRED,
    TASK_RELATED_META,
];
