//! Helm templates: Go template actions masked to the same byte length, then scanned as YAML.
//!
//! Every `{{ … }}` action (with `{{-`/`-}}` trimming, string literals that contain `}}`, raw
//! strings in backquotes and `{{/* … */}}` comments) is replaced byte for byte by a filler,
//! keeping line breaks, so every offset, line and column of the masked text is the original's.
//! A line left holding only whitespace and filler (`{{- if … }}`, `{{- end }}`,
//! `{{- include … | nindent 8 }}`) becomes blank, so control structure disappears and every
//! branch of an `if` is scanned; filler anywhere else is [`crate::yaml::MASK`], so a scalar
//! touching an action (`image: {{ .Values.image }}`, `"mariadb:{{ … }}"`) is `templated` and
//! a literal one is spliceable.
//!
//! Templates are scanned leniently: masking can leave text that is not YAML (an unterminated
//! quote, a flow collection closed inside an action), and the YAML scanner then reads that
//! construct up to the end of its line instead of failing, so what can be found line by line
//! is still found. A Helm template never yields a syntax error.

use crate::yaml::MASK;

/// The text with every action masked; same length, same line breaks.
pub(crate) fn mask(text: &str) -> String {
    let src = text.as_bytes();
    let mut out = src.to_vec();
    let mut any = false;
    let mut p = 0;
    while let Some(i) = memchr::memmem::find(&src[p..], b"{{") {
        let start = p + i;
        let end = action_end(src, start + 2);
        for b in &mut out[start..end] {
            if *b != b'\n' && *b != b'\r' {
                *b = MASK;
            }
        }
        any = true;
        p = end;
    }
    if !any {
        return text.to_owned();
    }
    // Lines holding only whitespace and filler become blank.
    let mut line_start = 0;
    let len = out.len();
    while line_start < len {
        let line_end = memchr::memchr(b'\n', &out[line_start..]).map_or(len, |i| line_start + i);
        // A BOM before the first line's action counts as blank too.
        let from = if line_start == 0 && out.starts_with(crate::common::BOM.as_bytes()) {
            crate::common::BOM.len()
        } else {
            line_start
        };
        let line = &mut out[from..line_end.max(from)];
        if line.contains(&MASK) && line.iter().all(|&b| b.is_ascii_whitespace() || b == MASK) {
            for b in line.iter_mut() {
                if *b == MASK {
                    *b = b' ';
                }
            }
        }
        line_start = line_end + 1;
    }
    // Only ASCII bytes replaced whole actions that start and end at ASCII braces.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// The offset just past the `}}` closing the action whose body starts at `p`.
fn action_end(s: &[u8], mut p: usize) -> usize {
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
        if let Some(i) = memchr::memmem::find(&s[q + 2..], b"*/") {
            p = q + 2 + i + 2;
        } else {
            return len;
        }
    }
    while p < len {
        match s[p] {
            b'}' if s.get(p + 1) == Some(&b'}') => return p + 2,
            b'"' => {
                p += 1;
                while p < len && s[p] != b'"' && s[p] != b'\n' {
                    if s[p] == b'\\' {
                        p += 1;
                    }
                    p += 1;
                }
                p += 1;
            }
            b'`' => {
                p += 1;
                p = memchr::memchr(b'`', &s[p.min(len)..]).map_or(len, |i| p + i + 1);
            }
            b'\'' => {
                // A rune literal such as '}' (at most a few bytes).
                let close = s[p + 1..len.min(p + 8)].iter().position(|&b| b == b'\'');
                p += close.map_or(1, |i| i + 2);
            }
            _ => p += 1,
        }
    }
    len.min(p)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn blanks_lines_that_hold_only_actions() {
        let masked = mask("a:\n  {{- toYaml .x | nindent 2 }}\nb: {{ .y }}\n");
        let lines: Vec<&str> = masked.lines().collect();
        assert!(lines[1].trim().is_empty());
        assert!(lines[2].starts_with("b: \u{1a}"));
    }
}
