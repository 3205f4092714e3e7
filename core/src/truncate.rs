//! Cutting text that came from outside (a host name, a variable, a file, a URL, a header, a
//! coordinator's record) to a length. A byte index into such text may fall inside a
//! character, where `String::truncate` and `&text[..n]` panic; these never do.

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character
/// boundary.
pub fn prefix(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1; // 0 is a boundary, so this stops
    }
    &text[..end]
}

/// Cuts `text` in place to at most `max_bytes` bytes, on a character boundary.
pub fn truncate(text: &mut String, max_bytes: usize) {
    let keep = prefix(text, max_bytes).len();
    text.truncate(keep);
}

/// Characters of bad input a message echoes back.
pub const SHOWN_CHARS: usize = 40;

/// `text` as a message shows it: at most `SHOWN_CHARS` characters (then `…`), with control
/// characters and quotes escaped, so that a message stays one short line whatever it quotes.
pub fn shown(text: &str) -> String {
    let mut chars = text.chars();
    let mut short: String = chars.by_ref().take(SHOWN_CHARS).collect();
    if chars.next().is_some() {
        short.push('…');
    }
    short.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_cut_inside_a_character_keeps_the_whole_characters_before_it() {
        // U+FFFD, as a host name's bytes that are not UTF-8 are read, is three bytes.
        let name = "ab\u{FFFD}\u{FFFD}";
        assert_eq!(prefix(name, 3), "ab");
        assert_eq!(prefix(name, 4), "ab");
        assert_eq!(prefix(name, 5), "ab\u{FFFD}");
        assert_eq!(prefix(name, 100), name);
        let mut owned = "\u{FFFD}".repeat(30);
        truncate(&mut owned, 64);
        assert_eq!(owned, "\u{FFFD}".repeat(21));
    }

    proptest! {
        #[test]
        fn prefix_never_panics_and_is_the_longest_whole_prefix(
            text in any::<String>(), max in 0usize..300,
        ) {
            let cut = prefix(&text, max);
            prop_assert!(cut.len() <= max);
            prop_assert!(text.starts_with(cut));
            // Longest: the next character would not have fitted.
            if cut.len() < text.len() {
                let next = text[cut.len()..].chars().next().unwrap();
                prop_assert!(cut.len() + next.len_utf8() > max);
            }
            let mut owned = text.clone();
            truncate(&mut owned, max);
            prop_assert_eq!(owned.as_str(), cut);
        }

        #[test]
        fn shown_is_bounded(text in any::<String>()) {
            // Each character escapes to at most 10 bytes (`\u{10ffff}`), the ellipsis is 3.
            prop_assert!(shown(&text).len() <= SHOWN_CHARS * 10 + 3);
        }
    }
}
