//! Dev containers (`.devcontainer/devcontainer.json`, `.devcontainer/<name>/devcontainer.json`,
//! `.devcontainer.json`): the top-level `"image"`, read as JSON with comments (`//`, `/* */`)
//! and trailing commas, as the Dev Container spec allows.
//!
//! Only the root object's `"image"` string is a reference (not `"image"` keys nested deeper, in
//! `customizations`, say, nor feature ids). The edit replaces the string's content between its
//! quotes, so every other byte (comments, commas, indentation, CRLF, a BOM) stays. A string
//! with escapes is reported and not written, since its source differs from its value.
//! `// tagpin:ignore` (or `/* tagpin:ignore */`) on the value's line ignores it.

use std::path::Path;

use crate::common::{Found, IGNORE_MARK, Sink};
use crate::rules::UNSUPPORTED_ESCAPES;
use crate::{EditSite, Error, Status};

/// What the parser expects next inside an object.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    Comma,
}

/// An open collection, and (for objects) what comes next.
struct Open {
    object: bool,
    expect: Expect,
    /// The key whose value comes next is the root object's `"image"`.
    image_key: bool,
}

pub(crate) fn scan(sink: &mut Sink<'_>, path: &Path) -> Result<(), Error> {
    let text = sink.text;
    let s = text.as_bytes();
    let mut i = if text.starts_with(crate::common::BOM) {
        crate::common::BOM.len()
    } else {
        0
    };
    let mut stack: Vec<Open> = Vec::new();
    // The image value found, and the lines whose comments carry the ignore mark.
    let mut image: Option<(usize, usize)> = None;
    let mut ignore_comments: Vec<usize> = Vec::new();
    let syntax = |sink: &mut Sink<'_>, at: usize, message: &str| {
        let (line, column) = sink.position(at);
        Error::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: message.to_owned(),
        }
    };
    while i < s.len() {
        match s[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b',' | b':' => {
                if let Some(open) = stack.last_mut().filter(|o| o.object) {
                    match (s[i], open.expect) {
                        (b':', Expect::Colon) => open.expect = Expect::Value,
                        (b',', _) => {
                            open.expect = Expect::Key;
                            open.image_key = false;
                        }
                        _ => {}
                    }
                }
                i += 1;
            }
            b'/' if s.get(i + 1) == Some(&b'/') => {
                let end = memchr::memchr(b'\n', &s[i..]).map_or(s.len(), |n| i + n);
                if text[i..end].contains(IGNORE_MARK) {
                    ignore_comments.push(i);
                }
                i = end;
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                let Some(n) = memchr::memmem::find(&s[i + 2..], b"*/") else {
                    return Err(syntax(sink, i, "unterminated block comment"));
                };
                let end = i + 2 + n + 2;
                if text[i..end].contains(IGNORE_MARK) {
                    ignore_comments.push(end - 1);
                }
                i = end;
            }
            b'{' | b'[' => {
                value_seen(&mut stack);
                stack.push(Open {
                    object: s[i] == b'{',
                    expect: Expect::Key,
                    image_key: false,
                });
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < s.len() && s[j] != b'"' {
                    if s[j] == b'\n' {
                        return Err(syntax(sink, i, "unterminated string"));
                    }
                    j += if s[j] == b'\\' { 2 } else { 1 };
                }
                if j >= s.len() {
                    return Err(syntax(sink, i, "unterminated string"));
                }
                let root = stack.len() == 1;
                match stack.last_mut() {
                    Some(open) if open.object && open.expect == Expect::Key => {
                        open.expect = Expect::Colon;
                        open.image_key = root && &text[start..j] == "image";
                    }
                    Some(open) if open.object && open.image_key && image.is_none() => {
                        image = Some((start, j));
                        open.expect = Expect::Comma;
                        open.image_key = false;
                    }
                    _ => value_seen(&mut stack),
                }
                i = j + 1;
            }
            _ => {
                // A number, `true`, `false`, `null`, or something JSON does not allow: skipped.
                value_seen(&mut stack);
                i += 1;
                while i < s.len() && !b" \t\r\n,:{}[]\"/".contains(&s[i]) {
                    i += 1;
                }
            }
        }
    }
    if let Some((start, end)) = image {
        report(sink, start, end, &ignore_comments);
    }
    Ok(())
}

/// A value was read where the innermost object expected one.
fn value_seen(stack: &mut [Open]) {
    if let Some(open) = stack.last_mut().filter(|o| o.object) {
        open.expect = Expect::Comma;
        open.image_key = false;
    }
}

fn report(sink: &mut Sink<'_>, start: usize, end: usize, ignore_comments: &[usize]) {
    let raw = &sink.text[start..end];
    let Some(mut found) = Found::inline(start..end, raw.replace("\\/", "/").as_str()) else {
        return;
    };
    if raw.contains('\\') {
        raw.clone_into(&mut found.text);
        found.site = EditSite::Unsupported {
            reason: UNSUPPORTED_ESCAPES.to_owned(),
        };
    }
    let (line, _) = sink.position(start);
    let ignored = ignore_comments
        .iter()
        .any(|&at| sink.position(at).0 == line);
    if ignored {
        found.status = Status::Ignored;
    }
    sink.push(found);
}
