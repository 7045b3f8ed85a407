//! What the CLI prints of what a server or a model said, made safe for a terminal.
//!
//! A terminal obeys what it is sent: an escape sequence in a tool's name can move the cursor, set
//! a scroll region and draw a fake approval question over the real one; a right-to-left override
//! can make `rm -rf ~` read as something else. Everything that came from a server or a model
//! (names, descriptions, messages, arguments, results, the model's own text, errors that quote
//! them) is printed through this module, the way the window escapes HTML:
//!
//! - control characters (C0, DEL, C1) and the format characters that change how text reads
//!   (bidirectional overrides and isolates, zero-width characters, the byte-order mark) are
//!   shown as visible escapes such as `\u{1b}`, never sent raw;
//! - one-line fields (a name, a reason) show a line break as `\n` too, and are cut at a length
//!   with the number of characters left out;
//! - blocks (arguments, a result under review) keep their line breaks but every line starts with
//!   a gutter, so text from outside can never pass for Toolgate's own lines, and a block is cut at
//!   a length too.

use std::fmt::Write;

/// The gutter that starts every line of a block from outside.
pub const GUTTER: &str = "  │ ";

/// A name or short field (a tool's or server's name, a reason): one line, at most `max` characters.
pub fn line(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max) + 8);
    for (shown, c) in text.chars().enumerate() {
        if shown == max {
            let left = text.chars().count() - shown;
            let _ = write!(out, "… [{left} more characters]");
            break;
        }
        push_visible(&mut out, c, false);
    }
    out
}

/// A block from outside (arguments, a result, a message): its own lines, each behind the gutter,
/// at most `max` characters in all.
pub fn block(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max) + 64);
    out.push_str(GUTTER);
    for (shown, c) in text.chars().enumerate() {
        if shown == max {
            let left = text.chars().count() - shown;
            let _ = write!(out, "\n{GUTTER}… [{left} more characters not shown]");
            break;
        }
        if c == '\n' {
            out.push('\n');
            out.push_str(GUTTER);
        } else {
            push_visible(&mut out, c, true);
        }
    }
    out
}

/// The model's streamed text: line breaks and tabs kept, every other control escaped. A piece at
/// a time, so a sequence split across pieces is escaped all the same (each character is judged
/// alone).
pub fn stream(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' {
            out.push('\n');
        } else {
            push_visible(&mut out, c, true);
        }
    }
    out
}

fn push_visible(out: &mut String, c: char, keep_tab: bool) {
    match c {
        '\t' if keep_tab => out.push('\t'),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() || reorders_or_hides(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// Format characters that change how the text around them reads, or hide: the bidirectional
/// embeddings, overrides, isolates and marks, zero-width spaces and joiners, the word joiner and
/// invisible operators, the byte-order mark, interlinear annotation and the Mongolian vowel
/// separator, and Unicode's tag characters.
fn reorders_or_hides(c: char) -> bool {
    matches!(c,
        '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a terminal would act on: ESC, CSI (8-bit), BEL, backspace, carriage return, DEL.
    fn acts_on_a_terminal(text: &str) -> bool {
        text.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || reorders_or_hides(c))
    }

    #[test]
    fn the_reviews_forged_card_is_shown_as_text() {
        // A tool name that set a scroll region, moved the cursor home, cleared the screen and
        // drew a question of its own.
        let name =
            "read_notes\u{1b}[1;3r\u{1b}[H\u{1b}[2J\nprobe wants to run read_notes on notes\u{7}";
        let shown = line(name, 200);
        assert!(!acts_on_a_terminal(&shown), "{shown}");
        assert_eq!(
            shown,
            "read_notes\\u{1b}[1;3r\\u{1b}[H\\u{1b}[2J\\nprobe wants to run read_notes on notes\\u{7}"
        );
    }

    #[test]
    fn every_control_and_reordering_character_is_escaped_everywhere() {
        let nasty: String = (0u32..0x100)
            .chain([
                0x061c, 0x200b, 0x200e, 0x202e, 0x2066, 0x2069, 0xfeff, 0xe0041,
            ])
            .filter_map(char::from_u32)
            .collect();
        for shown in [line(&nasty, 10_000), block(&nasty, 10_000), stream(&nasty)] {
            assert!(!acts_on_a_terminal(&shown), "{shown:?}");
        }
        assert_eq!(line("rm \u{202e}txt.exe", 50), "rm \\u{202e}txt.exe");
    }

    #[test]
    fn blocks_keep_their_lines_behind_the_gutter() {
        let shown = block("sunny\nAllow? [y]es, [n]o\r\n", 1000);
        assert_eq!(shown, "  │ sunny\n  │ Allow? [y]es, [n]o\\r\n  │ ");
        assert!(shown.lines().all(|l| l.starts_with(GUTTER)));
    }

    #[test]
    fn long_text_is_cut_saying_how_much_was_left_out() {
        assert_eq!(line("abcdef", 3), "abc… [3 more characters]");
        assert_eq!(line("abc", 3), "abc");
        let shown = block(&"x".repeat(50), 10);
        assert!(
            shown.ends_with("… [40 more characters not shown]"),
            "{shown}"
        );
        // Plain text passes unchanged, in any script.
        assert_eq!(line("naïve Ωμέγα 東京 🙂", 100), "naïve Ωμέγα 東京 🙂");
        assert_eq!(stream("a\tb\nc"), "a\tb\nc");
    }
}
