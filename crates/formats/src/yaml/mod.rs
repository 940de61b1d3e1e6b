//! Reading YAML into a [`Tree`]: the fast reader for the block subset real files use, the
//! conformant reader (`saphyr-parser`) for everything else; and for Helm templates, which are
//! not YAML until rendered, the fast reader, strict and then lenient.
//!
//! # Why two readers
//!
//! `saphyr-parser` is a conformant YAML 1.2 parser (it passes the YAML test suite), but it
//! reads about 34 MB/s here, builds every scalar, and counts positions in characters; the scan
//! benchmark needs several hundred MB/s. The fast reader ([`fast`]) covers what real
//! Kubernetes, Helm, compose and workflow files are written in, at that speed, and gives up
//! ([`fast::Bail`]) on anything else, which then goes to the conformant reader. Both build the
//! same [`Tree`]; the tests run both over the YAML test suite and over generated documents and
//! require the same trees. Every syntax error comes from the conformant reader, which forgives
//! only the under-indented flow lines libyaml reads ([`indentation`]).

pub(crate) mod conformant;
pub(crate) mod fast;
mod indentation;
pub(crate) mod tree;

#[cfg(test)]
mod tests;

use std::path::Path;

use crate::Error;
pub(crate) use tree::Tree;

/// The offset of the quote closing a quoted scalar whose content starts at `p`, searching
/// before `limit`: `\x` escapes in double quotes and `''` in single quotes do not close it.
pub(crate) fn closing_quote(s: &[u8], mut p: usize, limit: usize, quote: u8) -> Option<usize> {
    while p < limit {
        let i = if quote == b'"' {
            memchr::memchr2(b'"', b'\\', &s[p..limit])
        } else {
            memchr::memchr(b'\'', &s[p..limit])
        }? + p;
        let escaped = s[i] == b'\\' || (quote == b'\'' && s.get(i + 1) == Some(&b'\''));
        if !escaped || i + 1 >= limit {
            return (!escaped).then_some(i);
        }
        p = i + 2;
    }
    None
}

/// How a text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// YAML files: valid YAML 1.2 or an error.
    Strict,
    /// Helm templates after masking: what can be read is read; never an error.
    Lenient,
}

/// Reads `text` (for [`Mode::Lenient`], a masked Helm template) into a tree.
///
/// A masked template the fast reader cannot vouch for is read leniently, line by line, rather
/// than conformantly: what masking leaves can be valid YAML that means something else (a `|`
/// before the first key makes the whole file one string), and what matters in a template is
/// each line's own reference.
pub(crate) fn read(path: &Path, text: &str, mode: Mode) -> Result<Tree, Error> {
    if let Ok(tree) = fast::read(text) {
        return Ok(tree);
    }
    if mode == Mode::Lenient {
        return Ok(fast::read_lenient(text));
    }
    indentation::read(text).map_err(|rejected| Error::Syntax {
        path: path.to_path_buf(),
        line: rejected.line,
        column: rejected.column,
        message: rejected.message,
    })
}

/// Reads a chart's values `text` as [`read`] does ([`Mode::Strict`]), except that a flow
/// collection on one line that is a key's value, on a line where none of the words at `marks`
/// (sorted offsets in `text`) starts, is left unread when it is simple enough to be known
/// valid at a glance: a [`tree::Kind::Deferred`] node. A values file is mostly such
/// collections (`resources: {limits: {cpu: 100m}}`), and building their nodes was most of its
/// reading; no rule and no image map looks into them. The key `<<` is the exception: what it
/// merges is looked into.
pub(crate) fn read_values(path: &Path, text: &str, marks: &[u32]) -> Result<Tree, Error> {
    if let Ok(tree) = fast::read_deferring(text, marks) {
        return Ok(tree);
    }
    read(path, text, Mode::Strict)
}

/// The tree of a deferred collection's `source` and its root, as [`read`] reads it.
pub(crate) fn read_deferred(source: &str) -> Option<(Tree, tree::NodeId)> {
    let tree = read(Path::new(""), source, Mode::Strict).ok()?;
    let root = (*tree.documents.first()?)?;
    Some((tree, root))
}

/// Reads `text` leniently ([`Mode::Lenient`]), but only the documents whose text `keep`
/// keeps: the others are passed over unread, as empty documents. For a caller that looks only
/// at what holds some words: a Helm template of several documents often has one that matters.
pub(crate) fn read_lenient_where(text: &str, keep: &dyn Fn(&str) -> bool) -> Tree {
    fast::read_kept(text, Some(keep)).unwrap_or_else(|_| fast::read_lenient_kept(text, Some(keep)))
}
