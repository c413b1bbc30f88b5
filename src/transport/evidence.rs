//! Evidence: what protocheck sent a target and what came back, as the
//! transport records it (bounded, credentials redacted) and findings carry it.

use serde::{Deserialize, Serialize};

/// A request as recorded for evidence: bounded and with credentials redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RequestRecord {
    /// `POST http://host/rcp/info`, or `stdin` for the stdio transport.
    pub line: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
}

/// A response as recorded for evidence: bounded excerpt, never the whole body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ResponseRecord {
    /// HTTP status, absent on stdio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// True when `body` is an excerpt of a longer body.
    #[serde(default)]
    pub truncated: bool,
    pub elapsed_ms: u64,
}

/// One request and what came back (or why nothing did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Exchange {
    pub request: RequestRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Exchange {
    /// Replaces `secret` with `shown` wherever it appears: the request line,
    /// headers and body, the response headers and body, and the error.
    pub fn replace_secret(&mut self, secret: &str, shown: &str) {
        if secret.is_empty() {
            return;
        }
        let hide = |text: &mut String| {
            if text.contains(secret) {
                *text = text.replace(secret, shown);
            }
        };
        hide(&mut self.request.line);
        hide(&mut self.request.body);
        for (_, value) in &mut self.request.headers {
            hide(value);
        }
        if let Some(response) = &mut self.response {
            hide(&mut response.body);
            for (_, value) in &mut response.headers {
                hide(value);
            }
        }
        if let Some(error) = &mut self.error {
            hide(error);
        }
    }
}
