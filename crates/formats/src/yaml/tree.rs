//! The tree both readers build: every node of every document in one arena, each with the byte
//! span of its source, so a rule can name a scalar and an edit can land on exactly its bytes.
//!
//! A collection's children are stored contiguously in [`Tree::children`] (a mapping's as key,
//! value, key, value, …), so a node is a few words and the whole tree a handful of vectors:
//! dropping it never recurses, whatever the nesting.

use std::cell::Cell;
use std::ops::Range;

/// An index into [`Tree::nodes`].
pub(crate) type NodeId = u32;

/// A byte range of the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Span {
    pub(crate) fn new(range: Range<usize>) -> Self {
        // Texts are at most a few MiB (the binary refuses larger files); saturate rather than
        // wrap if a caller ever passes more.
        let to_u32 = |offset: usize| u32::try_from(offset).unwrap_or(u32::MAX);
        Self {
            start: to_u32(range.start),
            end: to_u32(range.end),
        }
    }

    pub(crate) fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `decoded` indexes [`Tree::strings`] when the value differs from the source at the span
    /// (escapes, `''`, folded lines, block scalars); otherwise the value is the source.
    Scalar {
        style: Style,
        decoded: Option<u32>,
    },
    /// `len` children from `first`: key, value, key, value, …
    Mapping {
        first: u32,
        len: u32,
    },
    Sequence {
        first: u32,
        len: u32,
    },
    /// `*name`: the node it refers to, always one that ended before the alias.
    Alias {
        target: NodeId,
    },
    /// A flow collection on one line of a chart's values, not read into nodes: a collection
    /// no rule and no image map looks into (see [`super::read_values`]). Its source is at the
    /// span; whoever needs its value reads it from there ([`super::read_deferred`]).
    Deferred,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    /// Scalars: the value's source (inside the quotes; a block scalar's content lines).
    /// Collections: from their first byte (or first key) to the end of their last child.
    /// Aliases: `*name`.
    pub(crate) span: Span,
    /// Whether an anchor (`&name`) names this node.
    pub(crate) anchored: bool,
    /// The tag as written (`!!str`, `!Ref`), an index into [`Tree::strings`].
    pub(crate) tag: Option<u32>,
}

/// Every document of one YAML stream.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pub(crate) nodes: Vec<Node>,
    pub(crate) children: Vec<NodeId>,
    /// Decoded scalar values and tags.
    pub(crate) strings: Vec<String>,
    /// Each document's root, `None` for an empty document (`---` alone).
    pub(crate) documents: Vec<Option<NodeId>>,
    /// Whether any node is an alias.
    pub(crate) has_aliases: bool,
    /// Whether any node is [`Kind::Deferred`].
    pub(crate) has_deferred: bool,
}

impl Tree {
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The children of a collection (empty for scalars and aliases).
    pub(crate) fn children(&self, id: NodeId) -> &[NodeId] {
        match self.node(id).kind {
            Kind::Mapping { first, len } | Kind::Sequence { first, len } => {
                &self.children[first as usize..(first + len) as usize]
            }
            Kind::Scalar { .. } | Kind::Alias { .. } | Kind::Deferred => &[],
        }
    }

    /// A scalar's value: decoded, or its source in `text`. `None` for other nodes.
    pub(crate) fn scalar<'t>(&'t self, id: NodeId, text: &'t str) -> Option<&'t str> {
        let node = self.node(id);
        match node.kind {
            Kind::Scalar {
                decoded: Some(index),
                ..
            } => Some(&self.strings[index as usize]),
            Kind::Scalar { decoded: None, .. } => text.get(node.span.range()),
            _ => None,
        }
    }

    #[cfg(test)]
    pub(crate) fn tag(&self, id: NodeId) -> Option<&str> {
        self.node(id)
            .tag
            .map(|index| self.strings[index as usize].as_str())
    }
}

/// How deep collections may nest (flow and block, aliases followed included).
pub(crate) const MAX_DEPTH: usize = 256;

/// Nesting went past [`MAX_DEPTH`] at this byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub(crate) at: usize,
}

#[derive(Debug)]
struct Open {
    mapping: bool,
    start: u32,
    anchored: bool,
    tag: Option<u32>,
    /// Where this collection's children begin in [`Builder::scratch`].
    scratch_start: usize,
}

/// Builds a [`Tree`] in document order: scalars and aliases as they come, collections between
/// [`Builder::begin`] and [`Builder::end`].
#[derive(Debug, Default)]
pub(crate) struct Builder {
    tree: Tree,
    open: Vec<Open>,
    /// The finished children of the open collections, innermost last.
    scratch: Vec<NodeId>,
    /// The current document's root, once finished.
    root: Option<NodeId>,
}

thread_local! {
    /// The arena of the last tree this thread dropped, emptied, for the next tree it builds: a
    /// scan builds a tree per file, and an arena grown and freed per file costs its copies
    /// and page faults again each time.
    static SPARE: Cell<Option<Arena>> = const { Cell::new(None) };
}

/// A tree's two large vectors.
struct Arena {
    nodes: Vec<Node>,
    children: Vec<NodeId>,
}

/// The largest arena kept for the next tree (nodes); a larger one is freed.
const LARGEST_SPARE: usize = 1 << 18;

impl Drop for Tree {
    fn drop(&mut self) {
        if self.nodes.capacity() > LARGEST_SPARE || self.children.capacity() > LARGEST_SPARE {
            return;
        }
        // Of two trees alive at once, the larger arena is kept. A thread already tearing down
        // its locals keeps nothing (`try_with`: a tree dropped then must not panic).
        let _ = SPARE.try_with(|spare| match spare.take() {
            Some(kept) if kept.nodes.capacity() >= self.nodes.capacity() => {
                spare.set(Some(kept));
            }
            _ => {
                let mut nodes = std::mem::take(&mut self.nodes);
                let mut children = std::mem::take(&mut self.children);
                nodes.clear();
                children.clear();
                spare.set(Some(Arena { nodes, children }));
            }
        });
    }
}

impl Builder {
    /// A builder for about `nodes` nodes (the arena grows past it as needed), on this thread's
    /// spare arena when it has one.
    pub(crate) fn with_capacity(nodes: usize) -> Self {
        let Arena {
            nodes: mut arena,
            mut children,
        } = SPARE.try_with(Cell::take).ok().flatten().unwrap_or(Arena {
            nodes: Vec::new(),
            children: Vec::new(),
        });
        arena.reserve(nodes);
        children.reserve(nodes);
        Self {
            tree: Tree {
                nodes: arena,
                children,
                strings: Vec::new(),
                documents: Vec::new(),
                has_aliases: false,
                has_deferred: false,
            },
            ..Self::default()
        }
    }

    pub(crate) fn depth(&self) -> usize {
        self.open.len()
    }

    /// Whether the current document has its root.
    pub(crate) fn has_root(&self) -> bool {
        self.root.is_some()
    }

    /// The number of children the innermost open collection has so far.
    pub(crate) fn open_len(&self) -> usize {
        self.open
            .last()
            .map_or(0, |open| self.scratch.len() - open.scratch_start)
    }

    /// Whether the innermost open collection is a mapping.
    pub(crate) fn in_mapping(&self) -> bool {
        self.open.last().is_some_and(|open| open.mapping)
    }

    pub(crate) fn string(&mut self, value: String) -> u32 {
        self.tree.strings.push(value);
        u32::try_from(self.tree.strings.len() - 1).unwrap_or(u32::MAX)
    }

    #[inline]
    fn push(&mut self, node: Node) -> NodeId {
        let id = NodeId::try_from(self.tree.nodes.len()).unwrap_or(NodeId::MAX);
        self.tree.nodes.push(node);
        if self.open.is_empty() {
            self.root = Some(id);
        } else {
            self.scratch.push(id);
        }
        id
    }

    #[inline]
    pub(crate) fn scalar(
        &mut self,
        span: Span,
        style: Style,
        decoded: Option<String>,
        anchored: bool,
        tag: Option<u32>,
    ) -> NodeId {
        let decoded = decoded.map(|value| self.string(value));
        self.push(Node {
            kind: Kind::Scalar { style, decoded },
            span,
            anchored,
            tag,
        })
    }

    /// A plain scalar, neither anchored nor tagged.
    #[inline]
    pub(crate) fn plain(&mut self, span: Span) -> NodeId {
        self.push(Node {
            kind: Kind::Scalar {
                style: Style::Plain,
                decoded: None,
            },
            span,
            anchored: false,
            tag: None,
        })
    }

    /// An empty plain scalar (a missing value) at `at`.
    pub(crate) fn null(&mut self, at: usize, anchored: bool, tag: Option<u32>) -> NodeId {
        self.scalar(Span::new(at..at), Style::Plain, None, anchored, tag)
    }

    /// A flow collection left unread, at `span` (see [`Kind::Deferred`]).
    pub(crate) fn deferred(&mut self, span: Span) -> NodeId {
        self.tree.has_deferred = true;
        self.push(Node {
            kind: Kind::Deferred,
            span,
            anchored: false,
            tag: None,
        })
    }

    pub(crate) fn alias(&mut self, span: Span, target: NodeId) -> NodeId {
        self.tree.has_aliases = true;
        self.push(Node {
            kind: Kind::Alias { target },
            span,
            anchored: false,
            tag: None,
        })
    }

    pub(crate) fn begin(
        &mut self,
        mapping: bool,
        start: usize,
        anchored: bool,
        tag: Option<u32>,
    ) -> Result<(), TooDeep> {
        if self.open.len() >= MAX_DEPTH {
            return Err(TooDeep { at: start });
        }
        self.open.push(Open {
            mapping,
            start: Span::new(start..start).start,
            anchored,
            tag,
            scratch_start: self.scratch.len(),
        });
        Ok(())
    }

    /// Ends the innermost open collection at byte `end`; returns its id.
    pub(crate) fn end(&mut self, end: usize) -> NodeId {
        let open = self.open.pop().expect("end() without begin()");
        let first = u32::try_from(self.tree.children.len()).unwrap_or(u32::MAX);
        let len = u32::try_from(self.scratch.len() - open.scratch_start).unwrap_or(u32::MAX);
        // A copy and a truncation: `extend(drain(..))` went id by id.
        self.tree
            .children
            .extend_from_slice(&self.scratch[open.scratch_start..]);
        self.scratch.truncate(open.scratch_start);
        let kind = if open.mapping {
            Kind::Mapping { first, len }
        } else {
            Kind::Sequence { first, len }
        };
        let span = Span {
            start: open.start,
            end: Span::new(end..end).end.max(open.start),
        };
        self.push(Node {
            kind,
            span,
            anchored: open.anchored,
            tag: open.tag,
        })
    }

    /// Ends the current document (closing whatever is still open at `end`).
    pub(crate) fn end_document(&mut self, end: usize) {
        while !self.open.is_empty() {
            if self.in_mapping() && self.open_len() % 2 == 1 {
                self.null(end, false, None);
            }
            self.end(end);
        }
        let root = self.root.take();
        self.tree.documents.push(root);
    }

    pub(crate) fn finish(self) -> Tree {
        self.tree
    }
}
