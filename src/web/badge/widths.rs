//! Text widths in 11px Verdana, the font shields.io lays its badges out for, so a
//! badge is as wide as its text and nothing is clipped or padded out.
//!
//! The table is `verdana-11px-normal.json` of the npm package anafanafo (MIT; see
//! `verdana-11px-normal.LICENSE`), measured from the font itself: a sorted list
//! of `[first code point, last code point, width in px]` ranges.

use std::sync::LazyLock;

static TABLE: LazyLock<Vec<(u32, u32, f64)>> = LazyLock::new(|| {
    // Embedded data, checked by the tests below; an empty table would only make
    // every character as wide as an `m`.
    serde_json::from_str(include_str!("verdana-11px-normal.json")).unwrap_or_default()
});

/// Width of a code point the table does not list: that of `m`, as shields guesses.
static EM_WIDTH: LazyLock<f64> = LazyLock::new(|| lookup('m').unwrap_or(10.7));

fn lookup(c: char) -> Option<f64> {
    let code = u32::from(c);
    let table = &*TABLE;
    let i = table.partition_point(|&(first, _, _)| first <= code);
    let &(first, last, width) = table.get(i.checked_sub(1)?)?;
    (first..=last).contains(&code).then_some(width)
}

/// The width of `text` in px. Control characters take no space.
pub fn text_width(text: &str) -> f64 {
    text.chars()
        .map(|c| {
            if c.is_ascii_control() {
                0.0
            } else {
                lookup(c).unwrap_or(*EM_WIDTH)
            }
        })
        .sum()
}

/// The width a badge gives `text`: whole pixels, rounded up to odd so that the
/// text's centre falls on a half pixel like the shields.io badges users know.
pub fn preferred_width(text: &str) -> u32 {
    // Truncation, then odd: the same rounding as shields.io's badge-maker.
    let w = text_width(text) as u32;
    if w.is_multiple_of(2) { w + 1 } else { w }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_loaded_and_measures_verdana() {
        assert!(TABLE.len() > 10_000, "table has {} ranges", TABLE.len());
        assert!(
            TABLE.windows(2).all(|w| w[0].1 < w[1].0),
            "ranges sorted, disjoint"
        );
        assert_eq!(lookup(' '), Some(3.87));
        assert_eq!(lookup('0'), Some(6.99));
        assert_eq!(lookup('9'), Some(6.99), "inside the range 0-9");
        assert_eq!(lookup('W'), Some(10.88));
        assert_eq!(lookup('m'), Some(10.7));
        // `i` and `W` differ by more than a factor of three: no constant width would do.
        assert!(lookup('i').unwrap() * 3.0 < lookup('W').unwrap());
    }

    #[test]
    fn widths_add_up_and_round_to_odd() {
        assert!((text_width("RCP") - 21.96).abs() < 1e-9);
        assert_eq!(preferred_width("RCP"), 21);
        assert_eq!(preferred_width("L0"), 13);
        assert_eq!(preferred_width("MCP 2026-07-28"), 93);
        assert_eq!(preferred_width("pending"), 45, "44 rounds up to odd");
        assert_eq!(
            text_width("a\u{7}b"),
            text_width("ab"),
            "controls are zero-width"
        );
        // Unlisted code points count as an `m`.
        assert_eq!(text_width("\u{10FFFD}"), *EM_WIDTH);
    }
}
