use std::ops::Range;

use crate::Error;

/// Replace the bytes at `span` with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Range<usize>,
    pub replacement: String,
}

/// Applies `edits` to `text`: every byte outside the edited spans is kept.
///
/// Edits may come in any order; overlapping edits, spans past the end of `text`, or spans
/// that split a UTF-8 character are rejected, since they mean the scan was of another text.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Result<String, Error> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|edit| (edit.span.start, edit.span.end));
    let mut out = String::with_capacity(text.len() + edits.len() * 80);
    let mut cursor = 0;
    for edit in sorted {
        let Range { start, end } = edit.span;
        if start < cursor {
            return Err(Error::OverlappingEdits { at: start });
        }
        if start > end
            || end > text.len()
            || !text.is_char_boundary(start)
            || !text.is_char_boundary(end)
        {
            return Err(Error::EditOutOfBounds {
                start,
                end,
                len: text.len(),
            });
        }
        out.push_str(&text[cursor..start]);
        out.push_str(&edit.replacement);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}
