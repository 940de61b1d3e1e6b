//! Where a new entry goes in a mapping, written as the mapping is written: in a block mapping a
//! new line at its keys' indentation after its last entry (with the file's line break), in a
//! one-line flow mapping `, key: value` before its `}`.
//!
//! Used for a key the file lacks (a Kustomize `digest:`, an `imagePullPolicy:`). An insertion
//! is refused (`None`) where it cannot be proven to land in that mapping only, written as it
//! is: a mapping reached through an alias or inside an aliased node (the entry would appear in
//! every use), a flow mapping whose `}` is not on its last entry's line, a block mapping whose
//! last value is a block scalar (the new line would become its content), an empty mapping.

use super::Map;
use crate::yaml::tree::{Kind, Style};

/// A new entry's place: insert `lead`, then `key: value` (quoted if `quoted`), at `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Insertion {
    pub(crate) at: usize,
    /// A line break and the indentation, or `, ` (or ` ` after a trailing comma).
    pub(crate) lead: String,
    /// The mapping's keys are double-quoted (JSON): quote the new key and value too.
    pub(crate) quoted: bool,
}

impl Insertion {
    /// The text to insert for `key: value`.
    pub(crate) fn entry(&self, key: &str, value: &str) -> String {
        if self.quoted {
            format!("{}\"{key}\": \"{value}\"", self.lead)
        } else {
            format!("{}{key}: {value}", self.lead)
        }
    }
}

/// Where a new entry goes in `map` (the mapping at `at`), read from `text`.
pub(crate) fn entry_point(map: &Map<'_, '_>, text: &str) -> Option<Insertion> {
    let at = map.at;
    if map.shared || !at.chain.is_empty() {
        return None;
    }
    let tree = map.doc.tree;
    let children = tree.children(at.node);
    let (&last_key, &last_value) = (
        children.get(children.len().checked_sub(2)?)?,
        children.last()?,
    );
    let key = tree.node(last_key);
    let (quoted, key_start) = match key.kind {
        Kind::Scalar {
            style: Style::Double,
            ..
        } => (true, key.span.start as usize - 1),
        Kind::Scalar {
            style: Style::Single,
            ..
        } => (false, key.span.start as usize - 1),
        _ => (false, key.span.start as usize),
    };
    let s = text.as_bytes();
    let mapping = tree.node(at.node);
    let end = mapping.span.end as usize;
    if end > 0 && s.get(end - 1) == Some(&b'}') {
        return flow_point(s, end - 1, quoted);
    }
    if matches!(
        tree.node(tree_resolve(map, last_value)).kind,
        Kind::Scalar {
            style: Style::Literal | Style::Folded,
            ..
        }
    ) {
        return None;
    }
    block_point(text, key_start, end)
}

/// The value node itself, or what an alias as a value names (only its kind matters here).
fn tree_resolve(map: &Map<'_, '_>, id: u32) -> u32 {
    let tree = map.doc.tree;
    match tree.node(id).kind {
        Kind::Alias { target } => target,
        _ => id,
    }
}

/// Before the `}` at `close`, when the collection's last entry is on that line.
fn flow_point(s: &[u8], close: usize, quoted: bool) -> Option<Insertion> {
    let mut q = close;
    while q > 0 && s[q - 1] == b' ' {
        q -= 1;
    }
    if q == 0 || matches!(s[q - 1], b'\n' | b'\r' | b'{') {
        // The last entry ends on an earlier line, or the mapping is empty.
        return None;
    }
    let lead = if s[q - 1] == b',' { " " } else { ", " };
    Some(Insertion {
        at: q,
        lead: lead.to_owned(),
        quoted,
    })
}

/// After the line holding the mapping's last byte (`end`), at the indentation of its last key
/// (which starts at `key_start`).
pub(crate) fn block_point(text: &str, key_start: usize, end: usize) -> Option<Insertion> {
    let s = text.as_bytes();
    let line_start = text[..key_start].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..key_start].chars().count();
    let last = end.checked_sub(1)?;
    let line_end = memchr::memchr(b'\n', &s[last..]).map_or(s.len(), |i| last + i);
    let (at, break_) = if line_end > 0 && s.get(line_end - 1) == Some(&b'\r') {
        (line_end - 1, "\r\n")
    } else if line_end < s.len() {
        (line_end, "\n")
    } else {
        // The last line has no line break: use the file's first one, or `\n`.
        let crlf = memchr::memmem::find(s, b"\r\n").is_some();
        (line_end, if crlf { "\r\n" } else { "\n" })
    };
    Some(Insertion {
        at,
        lead: format!("{break_}{}", " ".repeat(column)),
        quoted: false,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::path::Path;

    use super::{Insertion, entry_point};
    use crate::rules::Map;
    use crate::rules::walk::{self, At, Doc, Entry, Seg, Visitor};
    use crate::yaml::{self, Mode};

    /// Records where `digest: D` would go in each mapping that has a `name` key.
    struct Points<'s> {
        text: &'s str,
        points: Vec<Option<Insertion>>,
    }

    impl<'t> Visitor<'t> for Points<'_> {
        fn mapping(
            &mut self,
            doc: Doc<'t>,
            at: &At,
            path: &[Seg<'t>],
            entries: &[Entry<'t>],
            shared: bool,
        ) {
            if entries.iter().any(|e| e.key == "name") {
                let map = Map {
                    doc,
                    at,
                    path,
                    entries,
                    shared,
                };
                self.points.push(entry_point(&map, self.text));
            }
        }
    }

    /// The text with `digest: D` inserted into every mapping with a `name`, or `None` where
    /// an insertion is refused.
    fn inserted(text: &str) -> Vec<Option<String>> {
        let tree = yaml::read(Path::new("k.yaml"), text, Mode::Strict).unwrap();
        let doc = Doc {
            tree: &tree,
            structure: text,
        };
        let aliased: HashSet<u32> = walk::aliased(&tree);
        let mut points = Points {
            text,
            points: Vec::new(),
        };
        for root in tree.documents.iter().flatten() {
            walk::walk(doc, *root, &aliased, &mut points).unwrap();
        }
        points
            .points
            .into_iter()
            .map(|point| {
                point.map(|point| {
                    let mut out = text.to_owned();
                    out.insert_str(point.at, &point.entry("digest", "D"));
                    out
                })
            })
            .collect()
    }

    #[test]
    fn an_entry_goes_where_the_mapping_writes_its_entries() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "images:\n- name: nginx\n  newTag: \"1.2\" # pinned\n- name: redis\n",
                Some(
                    "images:\n- name: nginx\n  newTag: \"1.2\" # pinned\n  digest: D\n- name: redis\n",
                ),
            ),
            (
                "images:\n  - name: nginx\n    newTag: 1.2\n    extra:\n      a: 1\nnext: 1\n",
                Some(
                    "images:\n  - name: nginx\n    newTag: 1.2\n    extra:\n      a: 1\n    digest: D\nnext: 1\n",
                ),
            ),
            (
                "images:\n- {name: nginx, newTag: \"1.2\"}\n",
                Some("images:\n- {name: nginx, newTag: \"1.2\", digest: D}\n"),
            ),
            (
                "images:\n- {name: nginx, newTag: \"1.2\", }\n",
                Some("images:\n- {name: nginx, newTag: \"1.2\", digest: D }\n"),
            ),
            (
                "[{\"name\": \"nginx\", \"newTag\": \"1.2\"}]\n",
                Some("[{\"name\": \"nginx\", \"newTag\": \"1.2\", \"digest\": \"D\"}]\n"),
            ),
            ("name: nginx", Some("name: nginx\ndigest: D")),
            ("- 'name': nginx\n", Some("- 'name': nginx\n  digest: D\n")),
            // A flow mapping over lines: after its last entry, when `}` is on that line.
            (
                "- {name: nginx,\n   newTag: \"1.2\"}\n",
                Some("- {name: nginx,\n   newTag: \"1.2\", digest: D}\n"),
            ),
            // Refused: `}` alone on its line, a block scalar last, an aliased mapping.
            ("- {name: nginx,\n   newTag: \"1.2\"\n  }\n", None),
            ("- name: nginx\n  note: |\n    text\n", None),
            ("base: &b\n  name: nginx\nuse: *b\n", None),
        ];
        for (text, expected) in cases {
            let got = inserted(text);
            assert_eq!(
                got.first().cloned().flatten().as_deref(),
                *expected,
                "{text:?}"
            );
            if !text.contains('\n') {
                continue;
            }
            let crlf = inserted(&text.replace('\n', "\r\n"));
            assert_eq!(
                crlf.first().cloned().flatten(),
                expected.map(|e| e.replace('\n', "\r\n")),
                "{text:?} with CRLF"
            );
        }
    }
}
