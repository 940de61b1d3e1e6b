//! Helm templates: Go template actions masked to the same byte length, then scanned as YAML.
//!
//! Every `{{ … }}` action (with `{{-`/`-}}` trimming, string literals that contain `}}`, raw
//! strings in backquotes and `{{/* … */}}` comments) is replaced byte for byte by a filler,
//! keeping line breaks, so every offset, line and column of the masked text is the original's.
//! An action that Go would not lex (`\"` copied from the YAML scalar around it, an unbalanced
//! quote, `{{` without `}}`) ends at the first `}}` on its line, or else at the line's end, so
//! it never masks the lines after it.
//! A line left holding only whitespace and filler (`{{- if … }}`, `{{- end }}`,
//! `{{- include … | nindent 8 }}`) becomes blank, so control structure disappears and every
//! branch of an `if` is scanned; filler anywhere else is [`FILLER`], a letter, so an action
//! reads as part of a plain or quoted scalar and the structure around it stays YAML. A scalar
//! touching an action (`image: {{ .Values.image }}`, `"mariadb:{{ … }}"`) differs from the
//! template at its span, which makes it `templated`; a literal one is spliceable.
//!
//! Templates are read leniently: masking can leave text that is not YAML (an unterminated
//! quote, a flow collection closed inside an action), and the lenient reader then drops that
//! line instead of failing, so what can be found line by line is still found. A Helm template
//! never yields a syntax error.

/// What masked action bytes become (outside lines that become blank).
pub(crate) const FILLER: u8 = b'x';

/// Marks masked bytes while masking; becomes [`FILLER`] (or a space) at the end. Not a byte a
/// text tagpin reads well contains (a control character YAML does not allow).
const MARK: u8 = 0x1a;

/// The text with every action masked; same length, same line breaks.
pub(crate) fn mask(text: &str) -> String {
    mask_with(text, FILLER)
}

fn mask_with(text: &str, filler: u8) -> String {
    let src = text.as_bytes();
    let mut out = src.to_vec();
    let mut any = false;
    let mut p = 0;
    while let Some(start) = open_at(src, p) {
        let end = action_end(src, start + 2);
        let action = &mut out[start..end];
        if memchr::memchr2(b'\n', b'\r', action).is_none() {
            // Most actions: on one line, filled whole.
            action.fill(MARK);
        } else {
            for b in action {
                if *b != b'\n' && *b != b'\r' {
                    *b = MARK;
                }
            }
        }
        any = true;
        p = end;
    }
    if !any {
        return text.to_owned();
    }
    // Lines holding only whitespace and filler become blank. Only lines with a mark are read.
    let len = out.len();
    let mut from_mark = 0;
    while let Some(mark) = memchr::memchr(MARK, &out[from_mark..]).map(|i| from_mark + i) {
        let line_start = memchr::memrchr(b'\n', &out[..mark]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &out[mark..]).map_or(len, |i| mark + i);
        from_mark = line_end;
        // A BOM before the first line's action counts as blank too.
        let from = if line_start == 0 && out.starts_with(crate::common::BOM.as_bytes()) {
            crate::common::BOM.len()
        } else {
            line_start
        };
        let line = &mut out[from..line_end.max(from)];
        // The line holds a mark (the one found), and none before it.
        let blank = line.iter().all(|&b| b.is_ascii_whitespace() || b == MARK);
        let replacement = if blank { b' ' } else { filler };
        // A select, not a branch: the compiler vectorises it.
        for b in &mut line[mark.max(from) - from..] {
            *b = if *b == MARK { replacement } else { *b };
        }
    }
    // Only ASCII bytes replaced whole actions that start and end at ASCII braces.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// Where the first `{{` at or after `from` starts. By its first `{` (`memchr`): a template has
/// dozens of actions, and a substring search per action cost a searcher's start each time.
fn open_at(src: &[u8], from: usize) -> Option<usize> {
    let mut p = from;
    loop {
        let brace = p + memchr::memchr(b'{', src.get(p..)?)?;
        if src.get(brace + 1) == Some(&b'{') {
            return Some(brace);
        }
        p = brace + 1;
    }
}

/// The offset just past the `}}` closing the action whose `{{` is at `start`.
///
/// The body is lexed as Go's `text/template` lexes it (see [`lex_action`]). An action that is
/// not well-formed ends at the first `}}` on its own line, or else at that line's end: one
/// broken action (a `\"` escape copied from the YAML around it, an unbalanced quote, `{{`
/// without `}}`) must not mask the lines that follow it.
fn action_end(s: &[u8], start: usize) -> usize {
    lex_action(s, start + 2).unwrap_or_else(|| {
        let line_end = memchr::memchr(b'\n', &s[start..]).map_or(s.len(), |i| start + i);
        memchr::memmem::find(&s[start + 2..line_end], b"}}").map_or(line_end, |i| start + 2 + i + 2)
    })
}

/// The offset just past the `}}` closing a well-formed action whose body starts at `p`, or
/// `None` when the body holds something no action may hold: a character outside Go's action
/// syntax (`\\`, `{`, `#`, a `:` not in `:=`, …), a quoted string or rune literal cut by a line
/// break, or no `}}` before the end of the text. Actions may span lines.
fn lex_action(s: &[u8], mut p: usize) -> Option<usize> {
    let len = s.len();
    // A comment: `{{/* … */}}`, optionally with trim markers.
    let mut q = p;
    if q < len && s[q] == b'-' {
        q += 1;
    }
    while q < len && s[q].is_ascii_whitespace() {
        q += 1;
    }
    if s[q.min(len)..].starts_with(b"/*") {
        p = q + 2 + memchr::memmem::find(&s[q + 2..], b"*/")? + 2;
    }
    while p < len {
        // Skip the bytes an action is mostly made of.
        let Some(plain) = s[p..].iter().position(|&b| !ACTION_PLAIN[usize::from(b)]) else {
            break;
        };
        p += plain;
        match s[p] {
            b'}' if s.get(p + 1) == Some(&b'}') => return Some(p + 2),
            quote @ (b'"' | b'\'') => p = quoted_literal_end(s, p, quote)?,
            b'`' => p = p + 1 + memchr::memchr(b'`', &s[p + 1..])? + 1,
            b':' if s.get(p + 1) == Some(&b'=') => p += 2,
            b' ' | b'\t' | b'\r' | b'\n' | b'.' | b'$' | b'|' | b'(' | b')' | b',' | b'='
            | b'_' | b'+' | b'-' => p += 1,
            b if b.is_ascii_alphanumeric() || !b.is_ascii() => p += 1,
            _ => return None,
        }
    }
    None
}

/// Bytes that may stand anywhere in an action and need no look at what follows them: white
/// space, `.$|(),=_+-`, letters, digits and every byte of a non-ASCII character.
static ACTION_PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut byte: u8 = 0;
    loop {
        plain[byte as usize] = byte.is_ascii_alphanumeric()
            || !byte.is_ascii()
            || matches!(
                byte,
                b' ' | b'\t'
                    | b'\r'
                    | b'\n'
                    | b'.'
                    | b'$'
                    | b'|'
                    | b'('
                    | b')'
                    | b','
                    | b'='
                    | b'_'
                    | b'+'
                    | b'-'
            );
        if byte == u8::MAX {
            break;
        }
        byte += 1;
    }
    plain
};

/// The offset just past a Go string or rune literal opened by `quote` at `at`; `None` when a
/// line break or the end of the text comes first.
fn quoted_literal_end(s: &[u8], at: usize, quote: u8) -> Option<usize> {
    let mut p = at + 1;
    while p < s.len() {
        match s[p] {
            b'\n' => return None,
            b'\\' if s.get(p + 1).is_some_and(|&b| b != b'\n') => p += 2,
            b if b == quote => return Some(p + 1),
            _ => p += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_opens_where_a_search_for_its_braces_finds_it() {
        for text in [
            "",
            "{",
            "{{",
            "{{{",
            "x{{",
            "{x{{ }}",
            "a { b } {{- c }}",
            "}}{{",
            "\u{e9}{{",
        ] {
            let bytes = text.as_bytes();
            for from in 0..=bytes.len() {
                let searched = memchr::memmem::find(&bytes[from..], b"{{").map(|i| from + i);
                assert_eq!(open_at(bytes, from), searched, "{text:?} from {from}");
            }
        }
    }

    #[test]
    fn masks_to_the_same_length() {
        let cases = [
            "image: {{ .Values.image }}\n",
            "{{- if .Values.x }}\n  a: 1\n{{- end }}\n",
            "x: {{ printf \"}}\" }}y\n",
            "x: {{/* a }} comment */}}\n",
            "x: {{ `raw }}` }}\n",
            "x: {{ '}' }}\n",
            "unterminated {{ .x\n",
            "é{{ \"é\" }}é\n",
        ];
        for case in cases {
            let masked = mask(case);
            assert_eq!(masked.len(), case.len(), "{case:?}");
            assert!(!masked.contains("{{"), "{case:?} -> {masked:?}");
            assert_eq!(masked.matches('\n').count(), case.matches('\n').count());
        }
    }

    #[test]
    fn a_broken_action_ends_on_its_own_line() {
        // (template, the masked text with filler shown as `~`)
        let cases = [
            (
                "k: \"{{ .s | default \\\"7\\\" }}\"\nb: {{ \"x\" }}\n",
                "k: \"~~~~~~~~~~~~~~~~~~~~~~~~\"\nb: ~~~~~~~~~\n",
            ),
            ("a: {{ .x\nb: n:1\n", "a: ~~~~~\nb: n:1\n"),
            ("a: {{ \"x }}\nb: n:1\n", "a: ~~~~~~~~\nb: n:1\n"),
            ("a: {{ 'x\nb: n:1 }}\n", "a: ~~~~~\nb: n:1 }}\n"),
            (
                "a: {{ .x ] }}\nb: {{ .y }}\n",
                "a: ~~~~~~~~~~\nb: ~~~~~~~~\n",
            ),
            ("a: {{/* x\nb: n:1\n", "a: ~~~~~~\nb: n:1\n"),
            // Well-formed actions still span lines (and a line of filler is blanked).
            (
                "a: {{ dict\n  \"k\" \"}}\" }}\nb: n:1\n",
                "a: ~~~~~~~\n             \nb: n:1\n",
            ),
        ];
        for (template, expected) in cases {
            let masked = mask_with(template, b'~');
            assert_eq!(masked, expected, "{template:?}");
        }
    }

    #[test]
    fn blanks_lines_that_hold_only_actions() {
        let masked = mask("a:\n  {{- toYaml .x | nindent 2 }}\nb: {{ .y }}\n");
        let lines: Vec<&str> = masked.lines().collect();
        assert!(lines[1].trim().is_empty());
        assert_eq!(lines[2], "b: xxxxxxxx");
    }
}
