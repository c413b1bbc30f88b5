//! Drawing a badge: the flat SVG style of shields.io, and the shields.io endpoint
//! JSON. Every text here may come from a target (a declared level, its URL), so
//! all of it is cleaned and escaped; nothing else is ever interpolated.

use super::widths::preferred_width;
use serde_json::json;

/// Longest message or label a badge shows, in characters; longer text is cut
/// with an ellipsis (a target's declared level is whatever it chose to send).
/// Room for two MCP revisions, each beside its grade
/// (`2026-07-28 non-compliant · 2025-11-25 non-compliant`).
pub const MAX_TEXT_CHARS: usize = 56;
/// Longest title (tooltip and accessible name), in characters.
pub const MAX_TITLE_CHARS: usize = 300;

/// The shields.io palette, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    BrightGreen,
    Green,
    YellowGreen,
    Red,
    Blue,
    LightGrey,
}

impl Color {
    /// The name the shields.io endpoint schema takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::BrightGreen => "brightgreen",
            Self::Green => "green",
            Self::YellowGreen => "yellowgreen",
            Self::Red => "red",
            Self::Blue => "blue",
            Self::LightGrey => "lightgrey",
        }
    }

    /// The fill shields.io draws for that name.
    pub fn hex(self) -> &'static str {
        match self {
            Self::BrightGreen => "#4c1",
            Self::Green => "#97ca00",
            Self::YellowGreen => "#a4a61d",
            Self::Red => "#e05d44",
            Self::Blue => "#007ec6",
            Self::LightGrey => "#9f9f9f",
        }
    }
}

/// The message's text colour and that of its shadow. shields.io writes white
/// on these fills, at 2.1:1 (bright green) to 4.4:1 (blue) against them; the
/// dark text it uses on light fills reads at 4.8:1 or more on each, so
/// protocheck writes that (WCAG 1.4.3 asks 4.5:1). The grey label keeps its
/// white text (7.5:1).
const MESSAGE_TEXT: (&str, &str) = ("#010101", "#fff");

/// What a badge says, before it is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Badge {
    pub label: String,
    pub message: String,
    pub color: Color,
    /// The tooltip and accessible name: label, message and the target.
    pub title: String,
    /// The badge reports no verdict (unknown target, run errored).
    pub is_error: bool,
    /// The day of the verdict shown (`YYYY-MM-DD`, UTC), if one is: in the
    /// title, and beside the message in the shields.io JSON, whose schema
    /// has no other place for it.
    pub dated: Option<String>,
}

impl Badge {
    pub fn new(label: &str, message: &str, color: Color, target_url: Option<&str>) -> Self {
        let label = clean(label, MAX_TEXT_CHARS);
        let message = clean(message, MAX_TEXT_CHARS);
        let title = match target_url {
            Some(url) => clean(&format!("{label}: {message} — {url}"), MAX_TITLE_CHARS),
            None => format!("{label}: {message}"),
        };
        Self {
            label,
            message,
            color,
            title,
            is_error: false,
            dated: None,
        }
    }

    pub fn error(mut self) -> Self {
        self.is_error = true;
        self
    }

    /// The badge of a verdict given on `day` (`YYYY-MM-DD`): the title says
    /// so, as does the shields.io JSON.
    pub fn dated(mut self, day: &str) -> Self {
        self.title = clean(
            &format!("{} — verdict of {day}", self.title),
            MAX_TITLE_CHARS,
        );
        self.dated = Some(day.to_owned());
        self
    }
}

/// Text as a badge may show it: characters XML 1.0 cannot carry even escaped
/// (most C0 controls, U+FFFE, U+FFFF) and other controls become U+FFFD, and it is
/// cut to `max` characters.
pub fn clean(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .take(max)
        .collect();
    if text.chars().count() > max {
        out.pop();
        out.push('…');
    }
    out
}

/// Escapes for XML text and attribute values alike.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// How wide [`svg`] draws `badge`, in pixels (its height is 20).
pub fn svg_width(badge: &Badge) -> u32 {
    preferred_width(&badge.label) + preferred_width(&badge.message) + 20
}

/// The flat badge. Geometry as shields.io draws it: 5px padding each side of
/// each text, text laid out at ten times the size and scaled down (finer glyph
/// positioning), `textLength` pinning each text to its measured width.
pub fn svg(badge: &Badge) -> String {
    let label_w = preferred_width(&badge.label);
    let message_w = preferred_width(&badge.message);
    let left = label_w + 10;
    let right = message_w + 10;
    let width = left + right;
    let label_x = 60 + 5 * label_w;
    let message_x = 10 * (left + 4) + 5 * message_w;
    let (label_len, message_len) = (10 * label_w, 10 * message_w);
    let title = escape_xml(&badge.title);
    let label = escape_xml(&badge.label);
    let message = escape_xml(&badge.message);
    let color = badge.color.hex();
    format!(
        concat!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" aria-label="{title}">"##,
            r##"<title>{title}</title>"##,
            r##"<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>"##,
            r##"<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>"##,
            r##"<g clip-path="url(#r)"><rect width="{left}" height="20" fill="#555"/><rect x="{left}" width="{right}" height="20" fill="{color}"/><rect width="{width}" height="20" fill="url(#s)"/></g>"##,
            r##"<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">"##,
            r##"<text aria-hidden="true" x="{label_x}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="{label_len}">{label}</text>"##,
            r##"<text x="{label_x}" y="140" transform="scale(.1)" fill="#fff" textLength="{label_len}">{label}</text>"##,
            r##"<text aria-hidden="true" x="{message_x}" y="150" fill="{shadow}" fill-opacity=".3" transform="scale(.1)" textLength="{message_len}">{message}</text>"##,
            r##"<text x="{message_x}" y="140" transform="scale(.1)" fill="{ink}" textLength="{message_len}">{message}</text>"##,
            r##"</g></svg>"##,
        ),
        width = width,
        left = left,
        right = right,
        color = color,
        title = title,
        label = label,
        message = message,
        label_x = label_x,
        message_x = message_x,
        label_len = label_len,
        message_len = message_len,
        ink = MESSAGE_TEXT.0,
        shadow = MESSAGE_TEXT.1,
    )
}

/// The shields.io endpoint schema (<https://shields.io/badges/endpoint-badge>).
pub fn shields_json(badge: &Badge, cache_seconds: u64) -> String {
    json!({
        "schemaVersion": 1,
        "label": badge.label,
        "message": match &badge.dated {
            Some(day) => format!("{} · {day}", badge.message),
            None => badge.message.clone(),
        },
        "color": badge.color.name(),
        "isError": badge.is_error,
        "cacheSeconds": cache_seconds,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_follows_the_text() {
        let narrow = svg(&Badge::new("RCP", "L0", Color::YellowGreen, None));
        let wide = svg(&Badge::new("RCP", "L2 OVERCLAIMED", Color::Red, None));
        // RCP is 21px (+10), L0 13px (+10).
        assert!(narrow.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="54""#));
        assert!(wide.contains(r#"width="140""#), "{wide}");
        assert!(narrow.contains(r##"<rect x="31" width="23" height="20" fill="#a4a61d"/>"##));
        assert!(narrow.contains("<title>RCP: L0</title>"));
        assert_eq!(
            svg_width(&Badge::new("RCP", "L0", Color::YellowGreen, None)),
            54
        );
        // The message in dark text, which every fill carries at 4.5:1 or more.
        assert!(
            narrow.contains(r##"fill="#010101" textLength="130">L0</text>"##),
            "{narrow}"
        );
    }

    #[test]
    fn hostile_text_is_escaped_cleaned_and_cut() {
        let b = Badge::new(
            "RCP",
            "<script>alert(1)</script><script>alert(2)</script> OVERCLAIMED",
            Color::Red,
            Some("http://x/?a=1&b='\"\u{1}"),
        );
        assert_eq!(b.message.chars().count(), MAX_TEXT_CHARS);
        assert!(b.message.ends_with('…'));
        let out = svg(&b);
        assert!(!out.contains("<script"), "{out}");
        assert!(out.contains("&lt;script&gt;"));
        assert!(out.contains("a=1&amp;b=&apos;&quot;\u{FFFD}"), "{out}");
        let json: serde_json::Value = serde_json::from_str(&shields_json(&b, 300)).unwrap();
        assert_eq!(json["message"], b.message.as_str());
    }

    #[test]
    fn clean_keeps_ordinary_text() {
        assert_eq!(clean("MCP 2026-07-28", 32), "MCP 2026-07-28");
        assert_eq!(clean("abcdef", 4), "abc…");
        assert_eq!(clean("a\u{0}b\u{FFFF}", 10), "a\u{FFFD}b\u{FFFD}");
    }
}
