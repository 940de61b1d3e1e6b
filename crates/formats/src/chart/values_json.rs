//! A values file as the JSON value a template reads, for the static reading: only the top-level
//! keys it asks for (a chart's values file is large and its lines read a few maps), scalars
//! typed as Helm's YAML reading types them (null, booleans, integers; floats and anything else
//! it would read differently are kept as an error marker the evaluator refuses to print).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::Error;
use crate::yaml::tree::{Kind, MAX_DEPTH, NodeId, Style, Tree};
use crate::yaml::{self, Mode};

/// The mappings under the top-level `keys` of the values file `text` (all of them with
/// `None`).
pub fn values_json(
    path: &Path,
    text: &str,
    keys: Option<&BTreeSet<String>>,
) -> Result<Value, Error> {
    if keys.is_some_and(BTreeSet::is_empty) {
        return Ok(Value::Object(Map::new()));
    }
    let tree = yaml::read(path, text, Mode::Strict)?;
    Ok(json_of(&tree, text, keys))
}

/// A whole document as a YAML library with the core schema reads it into JSON, when this
/// reading types every node as such a library would; `None` when they may differ: floats,
/// YAML 1.1 booleans, tags, merge keys (`<<`), keys that repeat or are not strings, more than
/// one document, or a text this reading rejects (the caller then asks the library, whose
/// reading and errors stand). For a chart's `Chart.yaml`, read once per chart reading: a
/// general parser's setup alone cost more than this whole reading.
pub fn plain_document(path: &Path, text: &str) -> Option<Value> {
    let tree = yaml::read(path, text, Mode::Strict).ok()?;
    let [Some(root)] = tree.documents[..] else {
        return None;
    };
    typed_alike(&tree, text, root, 0).then(|| convert(&tree, text, root, 0))
}

/// Whether every node under `id` converts (see [`convert`]) to what the core schema reads.
fn typed_alike(tree: &Tree, text: &str, id: NodeId, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let node = tree.node(id);
    if node.tag.is_some() {
        return false;
    }
    match node.kind {
        Kind::Alias { target } => typed_alike(tree, text, target, depth + 1),
        Kind::Deferred => false,
        Kind::Scalar { style, .. } => {
            style != Style::Plain
                || tree
                    .scalar(id, text)
                    .is_some_and(|value| !matches!(plain(value), Value::String(s) if s == UNTYPED))
        }
        Kind::Sequence { .. } => tree
            .children(id)
            .iter()
            .all(|child| typed_alike(tree, text, *child, depth + 1)),
        Kind::Mapping { .. } => {
            let mut keys = std::collections::HashSet::new();
            tree.children(id).chunks(2).all(|pair| {
                let [key, value] = pair else { return false };
                let key_node = tree.node(*key);
                let Some(name) = tree.scalar(*key, text) else {
                    return false;
                };
                let a_string = match key_node.kind {
                    Kind::Scalar {
                        style: Style::Plain,
                        ..
                    } => name != "<<" && matches!(plain(name), Value::String(s) if s == name),
                    _ => true,
                };
                a_string
                    && key_node.tag.is_none()
                    && keys.insert(name)
                    && typed_alike(tree, text, *value, depth + 1)
            })
        }
    }
}

/// A values file read once, for both what the chart reading needs of it: its image candidates
/// ([`ValuesFile::images`]) and its values under some top-level keys ([`ValuesFile::json`]).
/// A chart's values file is its largest; reading it twice was a large share of a scan. It
/// borrows the text its reader holds (a copy of each values file was 20 MB on the bench tree).
#[derive(Debug)]
pub struct ValuesFile<'t> {
    path: std::path::PathBuf,
    text: &'t str,
    tree: Tree,
    /// Its image maps, when found already (by the scan's walk of the tree).
    images: Option<super::ValuesImages>,
}

impl<'t> ValuesFile<'t> {
    pub fn read(path: &Path, text: &'t str) -> Result<Self, Error> {
        let tree = yaml::read(path, text, Mode::Strict)?;
        Ok(Self {
            path: path.to_owned(),
            text,
            tree,
            images: None,
        })
    }

    /// A values file read already (by [`crate::scan_values`]), with its image maps.
    pub(crate) fn of(path: &Path, text: &'t str, tree: Tree, images: super::ValuesImages) -> Self {
        Self {
            path: path.to_owned(),
            text,
            tree,
            images: Some(images),
        }
    }

    pub fn text(&self) -> &'t str {
        self.text
    }

    /// See [`super::values_images`]: found once (the first call takes what the scan found).
    pub fn images(&mut self) -> Result<super::ValuesImages, Error> {
        match self.images.take() {
            Some(images) => Ok(images),
            None => super::candidates::images_of(&self.tree, self.text, &self.path),
        }
    }

    /// See [`super::overlay_images`]: these values laid over the chart's own, `base_text`.
    pub fn overlay_images(
        &self,
        base_path: &Path,
        base_text: &str,
    ) -> Result<super::ValuesImages, Error> {
        // An overlay is looked into by the base's paths, collections left unread too: read
        // whole (an overlay of a chart's values is rare, and small).
        let whole;
        let tree = if self.tree.has_deferred {
            whole = yaml::read(&self.path, self.text, Mode::Strict)?;
            &whole
        } else {
            &self.tree
        };
        super::candidates::overlay_images_of(tree, self.text, &self.path, base_path, base_text)
    }

    /// See [`values_json`].
    pub fn json(&self, keys: Option<&BTreeSet<String>>) -> Value {
        json_of(&self.tree, self.text, keys)
    }

    /// The top-level keys (scalars) of the first document.
    #[cfg(test)]
    pub(crate) fn top_keys(&self) -> BTreeSet<String> {
        let Some(Some(root)) = self.tree.documents.first() else {
            return BTreeSet::new();
        };
        self.tree
            .children(*root)
            .chunks(2)
            .filter_map(|pair| self.tree.scalar(pair[0], self.text))
            .map(str::to_owned)
            .collect()
    }

    /// Whether a collection was left unread.
    #[cfg(test)]
    pub(crate) fn has_deferred(&self) -> bool {
        self.tree.has_deferred
    }
}

fn json_of(tree: &Tree, text: &str, keys: Option<&BTreeSet<String>>) -> Value {
    let mut out = Map::new();
    if keys.is_some_and(BTreeSet::is_empty) {
        return Value::Object(out);
    }
    let Some(Some(root)) = tree.documents.first() else {
        return Value::Object(out);
    };
    let children = tree.children(*root);
    if !matches!(tree.node(*root).kind, Kind::Mapping { .. }) {
        return Value::Object(out);
    }
    for pair in children.chunks(2) {
        let [key, value] = pair else { continue };
        let Some(key) = tree.scalar(*key, text) else {
            continue;
        };
        if keys.is_none_or(|keys| keys.contains(key)) {
            out.insert(key.to_owned(), convert(tree, text, *value, 0));
        }
    }
    Value::Object(out)
}

/// What a template may not print: a value tagpin's reading does not type as Helm does.
pub const UNTYPED: &str = "\u{0}tagpin:untyped";

pub(crate) fn convert(tree: &Tree, text: &str, id: NodeId, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::String(UNTYPED.to_owned());
    }
    let node = tree.node(id);
    match node.kind {
        Kind::Alias { target } => convert(tree, text, target, depth + 1),
        Kind::Deferred => {
            let source = text.get(node.span.range()).unwrap_or_default();
            // Skimmed into a value directly, unless its nesting could pass the depth limit.
            let mut skim = JsonSkim::new(source);
            if depth + 64 <= MAX_DEPTH
                && yaml::fast::skim_deferred(source, &mut skim)
                && let Some(value) = skim.value
            {
                return value;
            }
            match yaml::read_deferred(source) {
                Some((sub, root)) => convert(&sub, source, root, depth),
                None => Value::String(UNTYPED.to_owned()),
            }
        }
        Kind::Mapping { .. } => {
            let mut map = Map::new();
            for pair in tree.children(id).chunks(2) {
                let [key, value] = pair else { continue };
                let key = tree.scalar(*key, text).unwrap_or(UNTYPED).to_owned();
                map.insert(key, convert(tree, text, *value, depth + 1));
            }
            Value::Object(map)
        }
        Kind::Sequence { .. } => Value::Array(
            tree.children(id)
                .iter()
                .map(|child| convert(tree, text, *child, depth + 1))
                .collect(),
        ),
        Kind::Scalar { style, .. } => {
            let value = tree.scalar(id, text).unwrap_or_default();
            if node.tag.is_some() {
                return Value::String(UNTYPED.to_owned());
            }
            if style != Style::Plain {
                return Value::String(value.to_owned());
            }
            plain(value)
        }
    }
}

/// The value of a deferred collection, built as [`convert`] builds it from the collection's
/// nodes, from what `yaml::fast::skim_deferred` tells of it.
struct JsonSkim<'s> {
    source: &'s str,
    /// The open collections, each with the key it is the value of (in a mapping).
    open: Vec<(Value, Option<String>)>,
    /// The key of the innermost mapping's entry whose value comes next.
    key: Option<String>,
    /// The collection, once closed.
    value: Option<Value>,
}

impl<'s> JsonSkim<'s> {
    fn new(source: &'s str) -> Self {
        Self {
            source,
            open: Vec::new(),
            key: None,
            value: None,
        }
    }

    fn put(&mut self, value: Value) {
        match self.open.last_mut() {
            None => self.value = Some(value),
            Some((Value::Object(map), _)) => {
                map.insert(self.key.take().unwrap_or_default(), value);
            }
            Some((Value::Array(items), _)) => items.push(value),
            Some(_) => {}
        }
    }
}

impl yaml::fast::Skimmed for JsonSkim<'_> {
    fn open(&mut self, mapping: bool) {
        let collection = if mapping {
            Value::Object(Map::new())
        } else {
            Value::Array(Vec::new())
        };
        self.open.push((collection, self.key.take()));
    }

    fn close(&mut self) {
        if let Some((collection, key)) = self.open.pop() {
            self.key = key;
            self.put(collection);
        }
    }

    fn scalar(&mut self, span: std::ops::Range<usize>, quoted: bool) {
        let text = self.source.get(span).unwrap_or_default();
        if matches!(self.open.last(), Some((Value::Object(_), _))) && self.key.is_none() {
            self.key = Some(text.to_owned());
            return;
        }
        self.put(if quoted {
            Value::String(text.to_owned())
        } else {
            plain(text)
        });
    }
}

/// A plain scalar typed by YAML's core schema (with the YAML 1.1 booleans Helm's reader also
/// takes as booleans, and anything numeric but an integer left untyped).
pub(super) fn plain(value: &str) -> Value {
    match value {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "no" | "No" | "NO" | "off" | "Off" | "OFF"
        | "y" | "Y" | "n" | "N" => Value::String(UNTYPED.to_owned()),
        _ => {
            // YAML 1.1 reads `0777` as octal.
            let digits = value.trim_start_matches(['+', '-']);
            if digits.len() > 1 && digits.starts_with('0') && value.parse::<i64>().is_ok() {
                return Value::String(UNTYPED.to_owned());
            }
            if let Ok(n) = value.parse::<i64>() {
                return Value::from(n);
            }
            let numeric = value
                .trim_start_matches(['+', '-'])
                .starts_with(|c: char| c.is_ascii_digit() || c == '.');
            if numeric && value.parse::<f64>().is_ok()
                || value.starts_with("0x")
                || value.starts_with("0o")
                || value.starts_with("0b")
                || numeric && value.contains('_') && {
                    // YAML 1.1 reads `1_000` as a number.
                    let digits = value.replace('_', "");
                    digits.parse::<i64>().is_ok() || digits.parse::<f64>().is_ok()
                }
                || value.eq_ignore_ascii_case(".inf")
                || value.eq_ignore_ascii_case(".nan")
            {
                Value::String(UNTYPED.to_owned())
            } else {
                Value::String(value.to_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_asked_keys_are_read_and_typed() {
        let text = "image:\n  repository: a/b\n  tag: \"1.0\"\n  n: 3\n  f: 1.0\n  e: \n  b: true\n  list: [x, 'y']\nother: {big: map}\nglobal: &g {imageRegistry: r}\nalias: *g\n";
        let keys: BTreeSet<String> = ["image", "alias"].map(str::to_owned).into();
        let value = values_json(Path::new("values.yaml"), text, Some(&keys)).unwrap();
        assert_eq!(
            value,
            json!({
                "image": {"repository": "a/b", "tag": "1.0", "n": 3, "f": UNTYPED, "e": null, "b": true, "list": ["x", "y"]},
                "alias": {"imageRegistry": "r"},
            })
        );
    }

    #[test]
    fn numbers_yaml_1_1_reads_are_not_typed_as_strings() {
        for (plain_text, expected) in [
            ("1_000", json!(UNTYPED)),
            ("1_000.5", json!(UNTYPED)),
            ("0b101", json!(UNTYPED)),
            ("0x1F", json!(UNTYPED)),
            ("2024_01_release", json!("2024_01_release")),
            ("v1_2", json!("v1_2")),
            ("007", json!(UNTYPED)),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("-", json!("-")),
        ] {
            assert_eq!(plain(plain_text), expected, "{plain_text}");
        }
    }

    #[test]
    fn a_document_is_read_whole_only_when_typed_alike() {
        let read = |text: &str| plain_document(Path::new("Chart.yaml"), text);
        assert_eq!(
            read(
                "apiVersion: v2\nname: app\nversion: 1.2.3\nappVersion: \"1.16\"\nkeywords: [a, b]\ndeprecated: false\ncount: 3\ndependencies:\n  - name: db\n    version: ~1.0\n    condition: db.enabled\nbase: &x {a: 1}\nalias: *x\nnull-value:\n"
            ),
            Some(json!({
                "apiVersion": "v2", "name": "app", "version": "1.2.3", "appVersion": "1.16",
                "keywords": ["a", "b"], "deprecated": false, "count": 3,
                "dependencies": [{"name": "db", "version": "~1.0", "condition": "db.enabled"}],
                "base": {"a": 1}, "alias": {"a": 1}, "null-value": null,
            }))
        );
        for text in [
            "appVersion: 1.16\n",
            "enabled: yes\n",
            "name: !!str app\n",
            "a: 1\na: 2\n",
            "1: one\n",
            "true: yes-key\n",
            "base: &b {a: 1}\nmerged:\n  <<: *b\n",
            "? [a, b]\n: c\n",
            "a: 1\n---\nb: 2\n",
            "a: [unclosed\n",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
    }
}
