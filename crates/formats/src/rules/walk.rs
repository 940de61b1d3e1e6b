//! Walking a document as its consumer reads it: aliases followed to the node they name, merge
//! keys (`<<: *base`) folded into the mapping that holds them, and every place a node is used
//! remembered, so an edit to an anchored scalar can be checked against all of its uses.

use std::collections::HashSet;
use std::rc::Rc;

use crate::yaml::tree::{Kind, MAX_DEPTH, NodeId, Span, Style, Tree};

/// One step of a path from the document's root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seg<'t> {
    /// A mapping value, under its key (`""` for a key that is not a scalar).
    Key(&'t str),
    /// A sequence item.
    Item(usize),
}

/// Renders a path as `spec.containers[0].image`.
pub(crate) fn display_path(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Seg::Item(index) => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// The aliases followed to reach a node, outermost first: two uses of one node differ in it.
/// Empty (no allocation, nothing counted) for a node reached without aliases.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Chain(Option<Rc<[NodeId]>>);

impl Chain {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The innermost alias.
    pub(crate) fn last(&self) -> Option<&NodeId> {
        self.0.as_deref().and_then(<[NodeId]>::last)
    }

    fn then(&self, alias: NodeId) -> Self {
        let mut longer = self.0.as_deref().unwrap_or_default().to_vec();
        longer.push(alias);
        Self(Some(longer.into()))
    }
}

/// A node as reached: never an alias (aliases are followed), with the chain that led there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct At {
    pub(crate) node: NodeId,
    pub(crate) chain: Chain,
}

/// A scalar as reached.
#[derive(Clone, Debug)]
pub(crate) struct ScalarAt<'t> {
    pub(crate) at: At,
    /// The value (decoded, or the source).
    pub(crate) value: &'t str,
    pub(crate) style: Style,
    pub(crate) span: std::ops::Range<usize>,
    /// The value differs from its source (escapes, folding).
    pub(crate) decoded: bool,
}

/// One entry of a mapping as its consumer sees it (merge keys folded in).
#[derive(Clone, Debug)]
pub(crate) struct Entry<'t> {
    pub(crate) key: &'t str,
    pub(crate) value: At,
}

/// The document being walked: the tree and the text its spans index (for Helm templates, the
/// masked text).
#[derive(Clone, Copy)]
pub(crate) struct Doc<'t> {
    pub(crate) tree: &'t Tree,
    pub(crate) structure: &'t str,
}

impl<'t> Doc<'t> {
    /// `id` reached through `chain`, aliases followed.
    pub(crate) fn at(&self, id: NodeId, chain: &Chain) -> At {
        let mut chain = chain.clone();
        let mut id = id;
        while let Kind::Alias { target } = self.tree.node(id).kind {
            chain = chain.then(id);
            id = target;
        }
        At { node: id, chain }
    }

    pub(crate) fn scalar(&self, at: &At) -> Option<ScalarAt<'t>> {
        let node = self.tree.node(at.node);
        let Kind::Scalar { style, decoded } = node.kind else {
            return None;
        };
        Some(ScalarAt {
            at: at.clone(),
            value: self.tree.scalar(at.node, self.structure)?,
            style,
            span: node.span.range(),
            decoded: decoded.is_some(),
        })
    }

    pub(crate) fn is_mapping(&self, at: &At) -> bool {
        matches!(self.tree.node(at.node).kind, Kind::Mapping { .. })
    }

    /// A sequence's items as reached.
    pub(crate) fn items(&self, at: &At) -> Vec<At> {
        match self.tree.node(at.node).kind {
            Kind::Sequence { .. } => self
                .tree
                .children(at.node)
                .iter()
                .map(|&child| self.at(child, &at.chain))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A mapping's entries as its consumer sees them, into `entries` (which must be empty):
    /// its own, then those merged in by `<<` (a mapping, or a sequence of mappings, earlier
    /// ones first) whose keys it lacks.
    pub(crate) fn entries_into(&self, at: &At, entries: &mut Vec<Entry<'t>>) {
        let mut merges = Vec::new();
        self.own_entries(at, entries, &mut merges);
        let mut depth = 0;
        while let Some(source) = (!merges.is_empty()).then(|| merges.remove(0)) {
            depth += 1;
            if depth > MAX_DEPTH {
                break;
            }
            let mut from_source = Vec::new();
            let mut nested = Vec::new();
            self.own_entries(&source, &mut from_source, &mut nested);
            for entry in from_source {
                if !entries.iter().any(|e: &Entry<'_>| e.key == entry.key) {
                    entries.push(entry);
                }
            }
            merges.extend(nested);
        }
    }

    /// The value of `key` in the mapping at `at`, as [`Doc::entries_into`] would give it, found
    /// without listing the entries (a mapping with a `<<` merge key is listed).
    pub(crate) fn value_of(&self, at: &At, key: &str) -> Option<At> {
        if !self.is_mapping(at) {
            return None;
        }
        for pair in self.tree.children(at.node).chunks_exact(2) {
            match self.key(pair[0]) {
                ("<<", true) => {
                    let mut entries = Vec::new();
                    self.entries_into(at, &mut entries);
                    return entries.into_iter().find(|e| e.key == key).map(|e| e.value);
                }
                (name, _) if name == key => return Some(self.at(pair[1], &at.chain)),
                _ => {}
            }
        }
        None
    }

    /// A key's value (`""` for a collection) and whether it is a plain scalar.
    fn key(&self, mut id: NodeId) -> (&'t str, bool) {
        while let Kind::Alias { target } = self.tree.node(id).kind {
            id = target;
        }
        match self.tree.node(id).kind {
            Kind::Scalar { style, .. } => (
                self.tree.scalar(id, self.structure).unwrap_or(""),
                style == Style::Plain,
            ),
            _ => ("", false),
        }
    }

    fn own_entries(&self, at: &At, entries: &mut Vec<Entry<'t>>, merges: &mut Vec<At>) {
        if !self.is_mapping(at) {
            return;
        }
        for pair in self.tree.children(at.node).chunks_exact(2) {
            let (key, plain) = self.key(pair[0]);
            let value = self.at(pair[1], &at.chain);
            let merge_key = key == "<<" && plain;
            if merge_key {
                if self.is_mapping(&value) {
                    merges.push(value);
                } else {
                    merges.extend(
                        self.items(&value)
                            .into_iter()
                            .filter(|i| self.is_mapping(i)),
                    );
                }
                continue;
            }
            entries.push(Entry { key, value });
        }
    }
}

/// What a walk calls for each mapping it reaches.
pub(crate) trait Visitor<'t> {
    /// Words every mapping this visitor acts on holds in its own source (in a key): the walk
    /// then passes over a collection whose source holds none of them, as it would find
    /// nothing there. `None`: any mapping may concern it. A chart's values file is read with
    /// the one-line flow collections on lines without the words left unread
    /// (`yaml::read_values`): acting on a mapping, a visitor of a values file must not look
    /// into an entry's collection value on such a line.
    fn words(&self) -> Option<&'static Words> {
        None
    }

    /// `shared`: the mapping is aliased, or inside an aliased node.
    fn mapping(
        &mut self,
        doc: Doc<'t>,
        at: &At,
        path: &[Seg<'t>],
        entries: &[Entry<'t>],
        shared: bool,
    );
}

/// A place where a shared node is used: the chain that reached it and (in [`Uses`]) the path
/// there.
#[derive(Clone, Debug)]
pub(crate) struct Use {
    pub(crate) chain: Chain,
    /// Where its path is in [`Uses::segs`].
    path: std::ops::Range<usize>,
}

/// Every use of each scalar in an aliased node, as a walk found them: flat lists, not a map of
/// lists of paths. A file of many anchors has a use per alias of each, and allocating (then
/// freeing) a list and a path per use was most of its reading.
#[derive(Debug, Default)]
pub(crate) struct Uses<'t> {
    /// By node, then in walk order (sorted when the walk ends).
    uses: Vec<(NodeId, Use)>,
    /// The paths of all uses, one after another.
    segs: Vec<Seg<'t>>,
}

impl<'t> Uses<'t> {
    fn push(&mut self, node: NodeId, chain: Chain, path: &[Seg<'t>]) {
        let start = self.segs.len();
        self.segs.extend_from_slice(path);
        self.uses.push((
            node,
            Use {
                chain,
                path: start..self.segs.len(),
            },
        ));
    }

    /// The uses of `node`, in walk order.
    pub(crate) fn of(&self, node: NodeId) -> impl Iterator<Item = &Use> {
        let first = self.uses.partition_point(|(n, _)| *n < node);
        self.uses[first..]
            .iter()
            .take_while(move |(n, _)| *n == node)
            .map(|(_, u)| u)
    }

    /// The path where `use_` is.
    pub(crate) fn path(&self, use_: &Use) -> &[Seg<'t>] {
        &self.segs[use_.path.clone()]
    }
}

/// Test builds can make the walk visit every collection, to check that passing over those
/// without a visitor's words changes nothing.
#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        static EVERY_COLLECTION: Cell<bool> = const { Cell::new(false) };
    }

    pub(crate) fn every_collection() -> bool {
        EVERY_COLLECTION.with(Cell::get)
    }

    /// `f`'s result with every collection visited.
    pub(crate) fn visiting_every_collection<T>(f: impl FnOnce() -> T) -> T {
        EVERY_COLLECTION.with(|every| every.set(true));
        let result = f();
        EVERY_COLLECTION.with(|every| every.set(false));
        result
    }
}

#[cfg(not(test))]
mod tests {
    pub(super) fn every_collection() -> bool {
        false
    }
}

/// The words of [`Visitor::words`], with their searchers built once (every walk of every file
/// searches for them).
pub(crate) struct Words(Vec<memchr::memmem::Finder<'static>>);

impl Words {
    /// The words, as bytes.
    #[cfg(test)]
    pub(crate) fn needles(&self) -> Vec<&[u8]> {
        self.0.iter().map(memchr::memmem::Finder::needle).collect()
    }

    /// Whether `text` holds one of the words.
    pub(crate) fn any_in(&self, text: &str) -> bool {
        self.0
            .iter()
            .any(|word| word.find(text.as_bytes()).is_some())
    }

    pub(crate) fn new(words: &[&'static str]) -> Self {
        Self(
            words
                .iter()
                .map(|word| memchr::memmem::Finder::new(*word))
                .collect(),
        )
    }
}

/// Where a visitor's [`Visitor::words`] occur in a document's source, in order.
struct Marks(Vec<u32>);

impl Marks {
    /// The words within `span` of `text` (a document's: a stream of many documents is walked
    /// once per document, and each must search only its own text).
    fn of(text: &str, span: Span, words: &Words) -> Self {
        Self(offsets_within(text, span, words))
    }

    /// Whether a word starts within `span`.
    fn within(&self, span: Span) -> bool {
        let first = self.0.partition_point(|&at| at < span.start);
        self.0.get(first).is_some_and(|&at| at < span.end)
    }
}

/// Where `words` start in `text`, sorted.
pub(crate) fn word_offsets(text: &str, words: &Words) -> Vec<u32> {
    offsets_within(text, Span::new(0..text.len()), words)
}

/// Where `words` start within `span` of `text`, sorted.
fn offsets_within(text: &str, span: Span, words: &Words) -> Vec<u32> {
    let within = text.as_bytes().get(span.range()).unwrap_or_default();
    let mut at: Vec<u32> = words
        .0
        .iter()
        .flat_map(|word| word.find_iter(within))
        .map(|offset| u32::try_from(offset).map_or(u32::MAX, |o| o.saturating_add(span.start)))
        .collect();
    at.sort_unstable();
    at
}

/// The walk went past its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Aliases expand the document past this many nodes.
    Expansion(usize),
    /// Nesting (aliases followed) deeper than [`MAX_DEPTH`], at this node.
    Depth(NodeId),
}

/// The nodes some alias refers to, in the whole stream (empty when it has no aliases).
pub(crate) fn aliased(tree: &Tree) -> HashSet<NodeId> {
    if !tree.has_aliases {
        return HashSet::new();
    }
    tree.nodes
        .iter()
        .filter_map(|node| match node.kind {
            Kind::Alias { target } => Some(target),
            _ => None,
        })
        .collect()
}

/// Walks one document from its root, calling `visitor` for every mapping as reached (so a
/// mapping reached through two aliases is visited twice), and returns every use of each
/// scalar that sits in an `aliased` node (a scalar used in one place only is not listed).
pub(crate) fn walk<'t>(
    doc: Doc<'t>,
    root: NodeId,
    aliased: &HashSet<NodeId>,
    visitor: &mut dyn Visitor<'t>,
) -> Result<Uses<'t>, Limit> {
    walk_knowing(doc, root, aliased, visitor, None)
}

/// Where some [`Words`] start in a text, found already.
#[derive(Clone, Copy)]
pub(crate) struct Offsets<'a> {
    pub(crate) words: &'static Words,
    /// Sorted, as [`word_offsets`] gives them.
    pub(crate) offsets: &'a [u32],
}

/// [`walk`], with where the visitor's words are in the whole text when it is `known`.
pub(crate) fn walk_knowing<'t>(
    doc: Doc<'t>,
    root: NodeId,
    aliased: &HashSet<NodeId>,
    visitor: &mut dyn Visitor<'t>,
    known: Option<Offsets<'_>>,
) -> Result<Uses<'t>, Limit> {
    let budget = doc
        .tree
        .nodes
        .len()
        .saturating_mul(8)
        .saturating_add(100_000);
    // Passing over what holds none of the words is sound only when nothing is shared: an
    // alias in a passed-over collection could lead to a node elsewhere (and its uses count).
    let marks = visitor
        .words()
        .filter(|_| aliased.is_empty() && !tests::every_collection())
        .map(|words| {
            let span = doc.tree.node(root).span;
            match known {
                Some(known) if std::ptr::eq(known.words, words) => {
                    let first = known.offsets.partition_point(|&at| at < span.start);
                    let end = known.offsets.partition_point(|&at| at < span.end);
                    Marks(known.offsets[first..end.max(first)].to_vec())
                }
                _ => Marks::of(doc.structure, span, words),
            }
        });
    let mut walker = Walker {
        doc,
        visitor,
        marks,
        budget,
        aliased,
        shared_depth: 0,
        uses: Uses::default(),
        path: Vec::new(),
        pool: Vec::new(),
    };
    let root = doc.at(root, &Chain::default());
    walker.visit(&root).map_err(|limit_hit| match limit_hit {
        Limit::Expansion(_) => Limit::Expansion(budget),
        depth @ Limit::Depth(_) => depth,
    })?;
    let mut uses = walker.uses;
    // Stable: each node's uses stay in walk order.
    uses.uses.sort_by_key(|(node, _)| *node);
    Ok(uses)
}

struct Walker<'t, 'v> {
    doc: Doc<'t>,
    visitor: &'v mut dyn Visitor<'t>,
    /// Where the visitor's words are, when the walk may pass over collections without them.
    marks: Option<Marks>,
    budget: usize,
    aliased: &'v HashSet<NodeId>,
    /// How many aliased nodes enclose the current one.
    shared_depth: usize,
    uses: Uses<'t>,
    path: Vec<Seg<'t>>,
    /// Entry buffers, one per open mapping, reused.
    pool: Vec<Vec<Entry<'t>>>,
}

impl Walker<'_, '_> {
    fn visit(&mut self, at: &At) -> Result<(), Limit> {
        self.budget = self.budget.checked_sub(1).ok_or(Limit::Expansion(0))?;
        if self.path.len() > MAX_DEPTH {
            return Err(Limit::Depth(at.node));
        }
        // Without aliases nothing is shared, and a scalar has nothing to walk.
        if self.aliased.is_empty() {
            let node = self.doc.tree.node(at.node);
            let passed_over = self
                .marks
                .as_ref()
                .is_some_and(|marks| !marks.within(node.span));
            return match node.kind {
                Kind::Scalar { .. } | Kind::Alias { .. } | Kind::Deferred => Ok(()),
                _ if passed_over => Ok(()),
                _ => self.visit_node(at),
            };
        }
        let shared = self.aliased.contains(&at.node);
        self.shared_depth += usize::from(shared);
        let result = self.visit_node(at);
        self.shared_depth -= usize::from(shared);
        result
    }

    fn visit_node(&mut self, at: &At) -> Result<(), Limit> {
        match self.doc.tree.node(at.node).kind {
            Kind::Scalar { .. } => {
                if self.shared_depth > 0 {
                    self.uses.push(at.node, at.chain.clone(), &self.path);
                }
            }
            Kind::Sequence { .. } => {
                let tree = self.doc.tree;
                for (index, &child) in tree.children(at.node).iter().enumerate() {
                    if self.aliased.is_empty()
                        && matches!(tree.node(child).kind, Kind::Scalar { .. } | Kind::Deferred)
                    {
                        continue;
                    }
                    let item = self.doc.at(child, &at.chain);
                    self.path.push(Seg::Item(index));
                    let result = self.visit(&item);
                    self.path.pop();
                    result?;
                }
            }
            Kind::Mapping { .. } => {
                let mut entries = self.pool.pop().unwrap_or_default();
                self.doc.entries_into(at, &mut entries);
                let shared = self.shared_depth > 0;
                self.visitor
                    .mapping(self.doc, at, &self.path, &entries, shared);
                let mut result = if self.aliased.is_empty() {
                    Ok(())
                } else {
                    self.visit_keys(at)
                };
                for entry in &entries {
                    if result.is_err() {
                        break;
                    }
                    if self.aliased.is_empty()
                        && matches!(
                            self.doc.tree.node(entry.value.node).kind,
                            Kind::Scalar { .. } | Kind::Deferred
                        )
                    {
                        // Nothing to record, nothing to walk (the budget is the tree's size).
                        continue;
                    }
                    self.path.push(Seg::Key(entry.key));
                    result = self.visit(&entry.value);
                    self.path.pop();
                }
                entries.clear();
                self.pool.push(entries);
                result?;
            }
            // A deferred collection holds none of the visitors' words, no anchor and no alias:
            // no visitor acts in it, and no scalar in it is edited, so none of its uses counts.
            Kind::Alias { .. } | Kind::Deferred => {}
        }
        Ok(())
    }

    /// Keys are uses too (`*name: value`), under the path of the mapping.
    fn visit_keys(&mut self, at: &At) -> Result<(), Limit> {
        let tree = self.doc.tree;
        for pair in tree.children(at.node).chunks_exact(2) {
            let key = self.doc.at(pair[0], &at.chain);
            if matches!(tree.node(key.node).kind, Kind::Scalar { .. }) {
                self.visit(&key)?;
            }
        }
        Ok(())
    }
}
