//! The image values of a chart's values file: maps that give an image in parts (split maps)
//! and single strings under image keys, each with its path from the values root.
//!
//! The net is wider than the key-name rules of [`crate::rules`]: any mapping with a
//! `repository`, or a `registry` and an `image`, is a candidate, wherever it sits, because the
//! chart's rendering decides what it is. Candidates inside lists are left out: a values
//! override cannot set one item of a list.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use crate::rules::walk::{self, Visitor};
use crate::rules::{At, Doc, Entry, ScalarAt, Seg};
use crate::yaml::tree::{Kind, NodeId, Style, Tree};
use crate::yaml::{self, Mode};
use crate::{Error, common};

/// One part of a split map, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The key it sits under (`tag`, `version`, `digest`, `sha`, …).
    pub key: String,
    /// Its bytes in the values file (inside quotes).
    pub span: Range<usize>,
    /// Its source text (the value, unless `decoded`).
    pub text: String,
    /// Written plain (not quoted).
    pub plain: bool,
    /// The value differs from the source (escapes, folding): tagpin does not rewrite it.
    pub decoded: bool,
    /// For a value not written at all (`digest:` alone, YAML's null), what must go around a
    /// quoted value inserted at `span` so the line still reads: a space after a bare `:`, a
    /// space before a comment.
    pub around_null: Option<(&'static str, &'static str)>,
    /// Why a digest may not be written into it, when its node is an anchor's that an alias
    /// uses elsewhere (`tag: &ver 1.25.0`, then `appLabel: *ver`): the edit would change
    /// that use too.
    pub shared: Option<String>,
}

impl Part {
    /// Empty, `~` or `null`: no value.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() || (self.plain && matches!(self.text.as_str(), "~" | "null"))
    }
}

/// How a candidate gives its image.
#[derive(Clone, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "a values file has tens of candidates, and most are split maps"
)]
pub enum Shape {
    /// A mapping of parts.
    Split {
        registry: Option<Part>,
        /// The repository (`repository`), or the name where a map has `registry` and `image`.
        name: Part,
        /// The last path component where the name is split again (gpu-operator's `image`).
        image: Option<Part>,
        /// `tag`, or `version` when there is no `tag`.
        tag: Option<Part>,
        /// `digest`, or `sha`.
        digest: Option<Part>,
    },
    /// A single string under an image key.
    Inline(Part),
}

impl Shape {
    /// Every part it has.
    fn parts_mut(&mut self) -> Vec<&mut Part> {
        match self {
            Self::Split {
                registry,
                name,
                image,
                tag,
                digest,
            } => [
                registry.as_mut(),
                Some(name),
                image.as_mut(),
                tag.as_mut(),
                digest.as_mut(),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Self::Inline(part) => vec![part],
        }
    }
}

/// An image value of a values file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The keys from the values root to the map (or to the string).
    pub path: Vec<String>,
    pub shape: Shape,
    /// The span of tagpin's finding for it: the name scalar, or the string.
    pub span: Range<usize>,
    /// A map of the chart's values that an overlay sets parts of (see [`overlay_images`]):
    /// an image, whatever a rendering shows.
    pub overlaid: bool,
    /// The keys beside a split map's parts that a user may set to pick a variant of the image
    /// (`suffix: ""`, `debug: false`, `distroless: true`, `base: debian`). A chart may render
    /// another image once one changes (`{{ .tag }}{{ with .suffix }}-{{ . }}{{ end }}`): a
    /// digest appended to the tag would land inside it, and a digest key would pin the
    /// variant of the defaults in place of the one the user picked.
    /// [`sentinel::Render::Switched`] changes them all to find out.
    ///
    /// [`sentinel::Render::Switched`]: super::sentinel::Render::Switched
    pub beside: Vec<(String, Beside)>,
}

/// What a key beside a split map's parts holds (see [`Candidate::beside`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beside {
    /// `""`.
    Empty,
    /// `false`.
    False,
    /// `true`.
    True,
    /// One word (`debian`, `-alpine`, `distroless-libc`).
    Word,
}

impl Candidate {
    /// The path as `a.b.image`.
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }
}

/// A values file's image candidates, and the mappings (by path) that hold `enabled: false`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValuesImages {
    pub candidates: Vec<Candidate>,
    pub disabled: Vec<Vec<String>>,
    /// Turn on every flag of `disabled`, not only those on a candidate's path (a container a
    /// pod helper adds when another feature is on: grafana's `initChownData` needs
    /// `persistence.enabled`).
    pub every_flag: bool,
}

/// Reads the values file `text` (at `path`, for errors).
pub fn values_images(path: &Path, text: &str) -> Result<ValuesImages, Error> {
    let tree = yaml::read(path, text, Mode::Strict)?;
    images_of(&tree, text, path)
}

/// [`values_images`] of a values file read already.
pub(crate) fn images_of(tree: &Tree, text: &str, path: &Path) -> Result<ValuesImages, Error> {
    let doc = Doc {
        tree,
        structure: text,
    };
    let aliased = walk::aliased(tree);
    // A values file is one document; a second one is not read by Helm.
    match tree.documents.first() {
        Some(Some(root)) => images_under(doc, *root, &aliased, path),
        _ => Ok(ValuesImages::default()),
    }
}

/// The candidates in the values whose root is `root`: paths from there, spans in the text.
pub(crate) fn images_under(
    doc: Doc<'_>,
    root: NodeId,
    aliased: &HashSet<NodeId>,
    path: &Path,
) -> Result<ValuesImages, Error> {
    let mut visitor = Collect::new(doc.structure);
    walk::walk(doc, root, aliased, &mut visitor).map_err(|_| Error::Limit {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        message: "aliases expand the values past what tagpin follows".to_owned(),
    })?;
    Ok(visitor.finish())
}

/// What finds the candidates of a values document: by [`images_under`], or on a walk shared
/// with the rules (`rules::apply_with`), which walks a values file's tree once for both.
pub(crate) struct Collect<'s> {
    text: &'s str,
    found: ValuesImages,
    /// Spans already taken (a node reached twice through an alias is one candidate).
    seen: HashSet<(usize, usize)>,
    /// Where each alias of the text starts, by where its anchored node starts: read from the
    /// tree at the first mapping, when the tree has aliases.
    aliases: Option<Vec<(usize, usize)>>,
}

impl<'s> Collect<'s> {
    pub(crate) fn new(text: &'s str) -> Self {
        Self {
            text,
            found: ValuesImages::default(),
            seen: HashSet::new(),
            aliases: None,
        }
    }

    pub(crate) fn finish(mut self) -> ValuesImages {
        let aliases = self.aliases.take().unwrap_or_default();
        if !aliases.is_empty() {
            for candidate in &mut self.found.candidates {
                for part in candidate.shape.parts_mut() {
                    part.shared = shared_reason(self.text, &aliases, part);
                }
            }
        }
        self.found
    }

    /// Reads where the aliases of `doc` are, once.
    fn read_aliases(&mut self, doc: Doc<'_>) {
        if self.aliases.is_some() {
            return;
        }
        let tree = doc.tree;
        let aliases = tree.nodes.iter().filter_map(|node| match node.kind {
            Kind::Alias { target } if tree.has_aliases => Some((
                tree.node(target).span.start as usize,
                node.span.start as usize,
            )),
            _ => None,
        });
        // Most values files have no alias: their nodes are not looked at.
        self.aliases = Some(if tree.has_aliases {
            aliases.collect()
        } else {
            Vec::new()
        });
    }
}

/// Why `part` may not take a digest: its node is anchored and an alias in `aliases` (anchored
/// node's start, alias's start) uses it elsewhere. The lines named are the anchor's and every
/// alias's: the part may be reached through one of the aliases (`tag: *appVersion`), and then
/// the anchor itself is the other use.
fn shared_reason(text: &str, aliases: &[(usize, usize)], part: &Part) -> Option<String> {
    if part.span.is_empty() {
        return None;
    }
    let uses: Vec<usize> = aliases
        .iter()
        .filter(|(anchored, _)| *anchored == part.span.start)
        .map(|&(_, alias)| alias)
        .collect();
    let &first = uses.first()?;
    let name = text[first..]
        .split([' ', '\t', '\r', '\n', ',', ']', '}'])
        .next()
        .unwrap_or_default()
        .trim_start_matches('*');
    let line = |at: usize| text[..at].matches('\n').count() + 1;
    let anchor_line = line(part.span.start);
    let alias_lines: Vec<String> = uses.iter().map(|&at| line(at).to_string()).collect();
    Some(format!(
        "anchor `&{name}` (line {anchor_line}) is also used at line {}; rewriting it would \
         change every use",
        alias_lines.join(", ")
    ))
}

fn keys(path: &[Seg<'_>]) -> Option<Vec<String>> {
    path.iter()
        .map(|seg| match seg {
            Seg::Key(key) => Some((*key).to_owned()),
            Seg::Item(_) => None,
        })
        .collect()
}

impl<'t> Visitor<'t> for Collect<'_> {
    fn words(&self) -> Option<&'static walk::Words> {
        // What `mapping` looks for: an `enabled` flag, a `repository`, an image key (`image`,
        // `registry` beside an `image`, `*Image`). A key's value differs from its source only
        // through escapes.
        static WORDS: std::sync::LazyLock<walk::Words> =
            std::sync::LazyLock::new(|| walk::Words::new(&["mage", "repository", "enabled", "\\"]));
        Some(&WORDS)
    }

    fn mapping(
        &mut self,
        doc: Doc<'t>,
        _at: &At,
        path: &[Seg<'t>],
        entries: &[Entry<'t>],
        _shared: bool,
    ) {
        self.read_aliases(doc);
        // Most mappings of a values file hold none of the keys looked for: their path is not
        // copied.
        let looked_for = |e: &Entry<'_>| {
            matches!(e.key, "enabled" | "repository") || crate::rules::is_image_key(e.key)
        };
        if !entries.iter().any(looked_for) {
            return;
        }
        let Some(path) = keys(path) else {
            return;
        };
        let scalar = |key: &str| {
            entries
                .iter()
                .find(|e| e.key == key)
                .and_then(|e| doc.scalar(&e.value))
        };
        if scalar("enabled").is_some_and(|s| s.style == Style::Plain && s.value == "false") {
            self.found.disabled.push(path.clone());
        }
        if let Some(shape) = split_shape(self.text, &scalar) {
            let (span, path) = match &shape {
                Shape::Split { name, .. } => (name.span.clone(), path),
                // A string's path ends with its key.
                Shape::Inline(part) => (part.span.clone(), {
                    let mut path = path;
                    path.push(part.key.clone());
                    path
                }),
            };
            if self.seen.insert((span.start, span.end)) {
                self.found.candidates.push(Candidate {
                    path,
                    shape,
                    span,
                    overlaid: false,
                    beside: beside(doc, entries),
                });
            }
            return;
        }
        for entry in entries {
            if !crate::rules::is_image_key(entry.key) {
                continue;
            }
            if let Some((shape, beside)) = name_and_tag(self.text, doc, &entry.value) {
                let span = match &shape {
                    Shape::Split { name, .. } | Shape::Inline(name) => name.span.clone(),
                };
                if self.seen.insert((span.start, span.end)) {
                    let mut path = path.clone();
                    path.push(entry.key.to_owned());
                    self.found.candidates.push(Candidate {
                        path,
                        shape,
                        span,
                        overlaid: false,
                        beside,
                    });
                }
                continue;
            }
            let Some(value) = doc.scalar(&entry.value) else {
                continue;
            };
            let Some(part) = part(self.text, entry.key, &value) else {
                continue;
            };
            let inline = !part.is_empty()
                && !common::is_templated(&part.text)
                && common::classify(&part.text).is_some();
            if inline && self.seen.insert((part.span.start, part.span.end)) {
                let mut path = path.clone();
                path.push(entry.key.to_owned());
                self.found.candidates.push(Candidate {
                    path,
                    span: part.span.clone(),
                    shape: Shape::Inline(part),
                    overlaid: false,
                    beside: Vec::new(),
                });
            }
        }
    }
}

/// The keys of a split map's `entries` that are not its parts and may pick a variant of the
/// image: a quoted empty string, a plain `true` or `false`, or one word.
fn beside(doc: Doc<'_>, entries: &[Entry<'_>]) -> Vec<(String, Beside)> {
    const PARTS: &[&str] = &[
        "registry",
        "repository",
        "image",
        "tag",
        "imageTag",
        "version",
        "digest",
        "sha",
        // Name parts too: Strimzi's `{registry, repository, name, tag}` joins `name` after
        // the repository, Kyverno's helper takes `defaultRegistry` when `registry` is empty.
        // Another value there is another image, as another `repository` is.
        "name",
        "defaultRegistry",
        // A flag the renderings turn on already.
        "enabled",
        // Never part of the image, and a schema may hold them to a list of values.
        "pullPolicy",
        "imagePullPolicy",
    ];
    entries
        .iter()
        .filter(|e| !PARTS.contains(&e.key))
        .filter_map(|e| {
            let scalar = doc.scalar(&e.value)?;
            let plain = scalar.style == Style::Plain;
            let quoted = matches!(scalar.style, Style::Single | Style::Double);
            let value = scalar.value;
            let beside = match value {
                "false" if plain => Beside::False,
                "true" if plain => Beside::True,
                "" if quoted => Beside::Empty,
                _ if (plain || quoted) && is_word(value) => Beside::Word,
                _ => return None,
            };
            Some((e.key.to_owned(), beside))
        })
        .collect()
}

/// Whether `value` is a word a chart may put into an image (`debian`, `-alpine`): letters
/// first or after a dash, then letters, digits, `.`, `_` and `-`; not a YAML keyword.
fn is_word(value: &str) -> bool {
    let rest = value.strip_prefix('-').unwrap_or(value);
    rest.starts_with(|c: char| c.is_ascii_alphabetic())
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "null" | "true" | "false" | "yes" | "no" | "on" | "off"
        )
}

/// An image key's value `{name: quay.io/jupyterhub/k8s-hub, tag: "4.1.0"}` (the `JupyterHub`
/// charts): a map whose name part is `name`, with its `tag` beside it (and perhaps a
/// `registry`), and no `repository` or `image`. Found from the map above it, whose source holds the image key (the
/// walk passes over a map whose own source holds none of its words).
///
/// Also the keys beside its parts ([`Candidate::beside`]).
fn name_and_tag(text: &str, doc: Doc<'_>, value: &At) -> Option<(Shape, Vec<(String, Beside)>)> {
    if !doc.is_mapping(value) {
        return None;
    }
    let mut entries = Vec::new();
    doc.entries_into(value, &mut entries);
    let get = |key: &str| entry_part(text, doc, &entries, key);
    // A `repository` left empty overrides nothing (Datadog's `{name: agent, tag, repository:}`,
    // under a registry of the chart's).
    let set = |key: &str| {
        entries.iter().any(|e| e.key == key) && get(key).is_none_or(|part| !part.is_empty())
    };
    if set("repository") || set("image") {
        return None;
    }
    let name = get("name")
        .filter(|name| !name.is_empty() && !name.decoded && !name.text.contains([':', '@']))?;
    let shape = Shape::Split {
        // Telepresence's `{registry, name, tag}`.
        registry: get("registry"),
        name,
        image: None,
        // Linkerd's `{name, version}`.
        tag: Some(get("tag").or_else(|| get("version"))?),
        digest: get("digest"),
    };
    Some((shape, beside(doc, &entries)))
}

/// The part of an image that the scalar under `key` among a mapping's `entries` gives.
fn entry_part(text: &str, doc: Doc<'_>, entries: &[Entry<'_>], key: &str) -> Option<Part> {
    entries
        .iter()
        .find(|e| e.key == key)
        .and_then(|e| doc.scalar(&e.value))
        .and_then(|scalar| part(text, key, &scalar))
}

fn part(text: &str, key: &str, scalar: &ScalarAt<'_>) -> Option<Part> {
    if matches!(scalar.style, Style::Literal | Style::Folded) {
        return None;
    }
    let plain = scalar.style == Style::Plain;
    let around_null = (plain && scalar.span.is_empty())
        .then(|| {
            let before = &text.as_bytes()[..scalar.span.start];
            let spaces = before.iter().rev().take_while(|b| **b == b' ').count();
            // Only right after its key's `:`; anywhere else the reader's empty span is not
            // where a value would go.
            if before[..before.len() - spaces].last() != Some(&b':') {
                return None;
            }
            let after = text.as_bytes().get(scalar.span.start);
            Some((
                if spaces == 0 { " " } else { "" },
                if matches!(after, None | Some(b'\n' | b'\r' | b' ' | b'\t')) {
                    ""
                } else {
                    " "
                },
            ))
        })
        .flatten();
    Some(Part {
        key: key.to_owned(),
        span: scalar.span.clone(),
        text: text.get(scalar.span.clone())?.to_owned(),
        plain,
        decoded: scalar.decoded,
        around_null,
        shared: None,
    })
}

/// The split map a mapping is, by its keys: a `repository` (with `registry`, `image`, `tag`,
/// `version`, `digest`, `sha` beside it), a `registry` with an `image` (ingress-nginx), or an
/// `image` name with a `tag`.
fn split_shape<'t>(text: &str, scalar: &dyn Fn(&str) -> Option<ScalarAt<'t>>) -> Option<Shape> {
    let get = |key: &str| scalar(key).and_then(|s| part(text, key, &s));
    let repository = get("repository");
    let image = get("image");
    let registry = get("registry");
    let tag = get("tag").or_else(|| get("version"));
    let (name, image, tag) = match (repository, image) {
        (Some(repository), image) => (repository, image, tag),
        (None, Some(image)) if registry.is_some() => (image, None, tag),
        // `{image: bats/bats, tag: v1.4.1}` (grafana's testFramework): a name and its tag;
        // `imageTag` in Elastic's charts.
        (None, Some(image)) if !image.text.contains([':', '@']) => {
            let tag = tag.or_else(|| get("imageTag"))?;
            (image, None, Some(tag))
        }
        _ => return None,
    };
    if name.is_empty() || name.decoded {
        return None;
    }
    let digest = get("digest").or_else(|| get("sha"));
    // A whole reference under `repository`, alone (meshery's adapters:
    // `repository: meshery/meshery-istio:stable-latest`): a string, decided as one.
    let whole = name.key == "repository"
        && [&registry, &image, &tag, &digest]
            .iter()
            .all(|p| p.is_none())
        && name
            .text
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains([':', '@']));
    if whole {
        return Some(Shape::Inline(name));
    }
    Some(Shape::Split {
        registry,
        name,
        image,
        tag,
        digest,
    })
}

/// The candidates of an overlay values file (`values-prod.yaml`, a chart-testing `ci/` file)
/// laid over the chart's own values (`base`): its own, and for each split map of the base
/// whose overlay sets only some parts (`image: {tag: v0.7.1}`), a candidate whose name is the
/// base's and whose tag and digest are the overlay's, at the overlay's tag (or digest): the
/// overlay decides the image, and is where an edit goes.
pub fn overlay_images(
    path: &Path,
    text: &str,
    base_path: &Path,
    base_text: &str,
) -> Result<ValuesImages, Error> {
    let tree = yaml::read(path, text, Mode::Strict)?;
    overlay_images_of(&tree, text, path, base_path, base_text)
}

/// [`overlay_images`] of an overlay read already.
pub(crate) fn overlay_images_of(
    tree: &Tree,
    text: &str,
    path: &Path,
    base_path: &Path,
    base_text: &str,
) -> Result<ValuesImages, Error> {
    let mut images = images_of(tree, text, path)?;
    let base = values_images(base_path, base_text)?;
    let doc = Doc {
        tree,
        structure: text,
    };
    let Some(Some(root)) = tree.documents.first() else {
        return Ok(images);
    };
    let root = doc.at(*root, &walk::Chain::default());
    for candidate in base.candidates {
        let Shape::Split {
            registry,
            name,
            image,
            ..
        } = candidate.shape
        else {
            continue;
        };
        if images.candidates.iter().any(|c| c.path == candidate.path) {
            continue;
        }
        let Some(map) = mapping_at(doc, &root, &candidate.path) else {
            continue;
        };
        let mut entries = Vec::new();
        doc.entries_into(&map, &mut entries);
        let get = |key: &str| entry_part(text, doc, &entries, key);
        let tag = get("tag").or_else(|| get("version"));
        let digest = get("digest").or_else(|| get("sha"));
        let Some(span) = tag.as_ref().or(digest.as_ref()).map(|p| p.span.clone()) else {
            continue;
        };
        images.candidates.push(Candidate {
            path: candidate.path,
            shape: Shape::Split {
                registry: get("registry").or(registry),
                name,
                image: get("image").or(image),
                tag,
                digest,
            },
            span,
            overlaid: true,
            beside: Vec::new(),
        });
    }
    for flag in base.disabled {
        if !images.disabled.contains(&flag) {
            images.disabled.push(flag);
        }
    }
    Ok(images)
}

/// The mapping at `keys` below `root`, if there is one.
fn mapping_at(doc: Doc<'_>, root: &At, keys: &[String]) -> Option<At> {
    let mut at = root.clone();
    for key in keys {
        let mut entries = Vec::new();
        doc.entries_into(&at, &mut entries);
        at = entries.into_iter().find(|e| e.key == key)?.value;
    }
    doc.is_mapping(&at).then_some(at)
}
