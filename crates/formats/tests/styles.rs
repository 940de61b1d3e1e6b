//! Generated documents in every YAML style, with image references at random paths (issue 9).
//!
//! A random document (mappings, sequences, scalars; `image` keys holding references, other
//! keys holding text, some of which looks like a reference) is written out in a random style
//! per node: block, block with values on the next line, flow, `PyYAML`'s canonical style (`? !!str
//! "key"`), with quoted and plain scalars, documents with content on the `---` line, anchors
//! and aliases. The emitter records where each reference's text starts. Then:
//! - every reference is found there, and nothing else is (0 false references);
//! - an anchored reference also used where an image is not expected is found but not editable,
//!   as is one with no tag (`busybox`: no path here is a pod's containers, where alone one is
//!   written);
//! - pinning every editable reference changes no byte outside the edits, and the pinned text
//!   read by a conformant parser (saphyr-parser, directly) has the same events as the original
//!   except the pinned image values, which gained `@digest`.

use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;
use saphyr_parser::{Event, Parser};
use tagpin_formats::{FileKind, apply_edits, scan};
use tagpin_reference::{Digest, ImageReference};

const REFERENCES: &[&str] = &[
    "nginx:1.25",
    "quay.io/acme/app:1.0",
    "ghcr.io/a/b:v2",
    "registry.k8s.io/pause:3.9",
    "busybox",
    "localhost:5000/x/y:1",
];

/// Values under keys that are not images: one looks like a reference on purpose.
const TEXTS: &[&str] = &[
    "a",
    "hello world",
    "1.5",
    "true",
    "nginx:1.25",
    "x-y",
    "v2.0.0",
];

const KEYS: &[&str] = &[
    "name", "spec", "app", "labels", "items", "data", "value", "other",
];

#[derive(Clone, Debug)]
enum Scalar {
    Plain,
    Single,
    Double,
}

#[derive(Clone, Debug)]
enum MapStyle {
    Block,
    /// Block, with scalar and flow values on the line after their key.
    NextLine,
    Flow,
    Canonical,
}

#[derive(Clone, Debug)]
enum Value {
    Image(usize, Scalar),
    Text(usize, Scalar),
    Map(Vec<(usize, Value)>, MapStyle),
    Seq(Vec<Value>, bool),
}

fn scalar_style() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        Just(Scalar::Plain),
        Just(Scalar::Single),
        Just(Scalar::Double)
    ]
}

fn map_style() -> impl Strategy<Value = MapStyle> {
    prop_oneof![
        3 => Just(MapStyle::Block),
        2 => Just(MapStyle::NextLine),
        2 => Just(MapStyle::Flow),
        1 => Just(MapStyle::Canonical),
    ]
}

/// Keys: an index into [`KEYS`], or `KEYS.len()` for `image`.
fn value() -> impl Strategy<Value = Value> {
    let leaf = (0..TEXTS.len(), scalar_style()).prop_map(|(i, s)| Value::Text(i, s));
    leaf.prop_recursive(4, 40, 5, |inner| {
        let entry = prop_oneof![
            3 => (0..KEYS.len(), inner.clone()),
            2 => (0..REFERENCES.len(), scalar_style())
                .prop_map(|(i, s)| (KEYS.len(), Value::Image(i, s))),
        ];
        prop_oneof![
            (prop::collection::vec(entry, 1..5), map_style())
                .prop_map(|(entries, style)| Value::Map(dedup(entries), style)),
            (prop::collection::vec(inner, 1..4), any::<bool>())
                .prop_map(|(items, flow)| Value::Seq(items, flow)),
        ]
    })
}

/// Mapping keys must be unique.
fn dedup(entries: Vec<(usize, Value)>) -> Vec<(usize, Value)> {
    let mut seen = Vec::new();
    entries
        .into_iter()
        .filter(|(key, _)| {
            let fresh = !seen.contains(key);
            seen.push(*key);
            fresh
        })
        .collect()
}

/// How an image value is written: itself, anchored, or an alias to an earlier anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Alias {
    None,
    /// `*aN` to the image value number N.
    To(usize),
}

/// An expected reference: where its text starts, the text, and whether it may be written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    offset: usize,
    text: String,
    editable: bool,
}

fn key_name(key: usize) -> &'static str {
    KEYS.get(key).copied().unwrap_or("image")
}

struct Emitter {
    out: String,
    /// Per image value, in document order: whether it is written as an alias, and to which.
    plan: Vec<Alias>,
    /// Text values (by order) that are aliases to image value N (a non-image use).
    text_aliases: Vec<Option<usize>>,
    image_count: usize,
    text_count: usize,
    expected: Vec<Expected>,
    /// `expected` index of image value N, if it is written (not an alias).
    written: Vec<Option<usize>>,
}

impl Emitter {
    fn anchored(&self, image: usize) -> bool {
        self.plan.contains(&Alias::To(image)) || self.text_aliases.contains(&Some(image))
    }

    /// A scalar's text in `style`; returns where its content starts.
    fn scalar(&mut self, text: &str, style: &Scalar, canonical: bool) -> usize {
        if canonical {
            self.out.push_str("!!str ");
        }
        let quote = match style {
            _ if canonical => "\"",
            Scalar::Plain => "",
            Scalar::Single => "'",
            Scalar::Double => "\"",
        };
        self.out.push_str(quote);
        let at = self.out.len();
        self.out.push_str(text);
        self.out.push_str(quote);
        at
    }

    fn leaf(&mut self, value: &Value, canonical: bool) {
        match value {
            Value::Image(reference, style) => {
                let number = self.image_count;
                self.image_count += 1;
                if let Alias::To(target) = self.plan[number] {
                    let _ = write!(self.out, "*a{target}");
                    return;
                }
                if self.anchored(number) {
                    let _ = write!(self.out, "&a{number} ");
                }
                let text = REFERENCES[*reference];
                let offset = self.scalar(text, style, canonical);
                self.written[number] = Some(self.expected.len());
                let tagged = ImageReference::parse(text)
                    .is_ok_and(|r| r.tag().is_some() || r.digest().is_some());
                self.expected.push(Expected {
                    offset,
                    text: text.to_owned(),
                    editable: tagged,
                });
            }
            Value::Text(text, style) => {
                let number = self.text_count;
                self.text_count += 1;
                if let Some(Some(target)) = self.text_aliases.get(number).copied()
                    && target < self.image_count
                    && let Some(index) = self.written[target]
                {
                    let _ = write!(self.out, "*a{target}");
                    self.expected[index].editable = false;
                    return;
                }
                self.scalar(TEXTS[*text], style, canonical);
            }
            _ => unreachable!("not a leaf"),
        }
    }

    fn flow(&mut self, value: &Value, canonical: bool, indent: usize) {
        match value {
            Value::Map(entries, style) => {
                let canonical = canonical || matches!(style, MapStyle::Canonical);
                if canonical {
                    self.out.push_str("!!map {\n");
                    for (key, value) in entries {
                        let _ = write!(
                            self.out,
                            "{}? !!str \"{}\"\n{}: ",
                            " ".repeat(indent + 2),
                            key_name(*key),
                            " ".repeat(indent + 2)
                        );
                        self.flow(value, true, indent + 2);
                        self.out.push_str(",\n");
                    }
                    let _ = write!(self.out, "{}}}", " ".repeat(indent));
                } else {
                    self.out.push('{');
                    for (i, (key, value)) in entries.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        let _ = write!(self.out, "{}: ", key_name(*key));
                        self.flow(value, false, indent);
                    }
                    self.out.push('}');
                }
            }
            Value::Seq(items, _) => {
                self.out.push_str(if canonical { "!!seq [" } else { "[" });
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.flow(item, canonical, indent);
                }
                self.out.push(']');
            }
            leaf => self.leaf(leaf, canonical),
        }
    }

    /// `value` as the value of a block mapping entry whose key was just written at `indent`.
    fn block_value(&mut self, value: &Value, indent: usize, next_line: bool) {
        match value {
            Value::Map(entries, MapStyle::Block | MapStyle::NextLine) if !entries.is_empty() => {
                self.out.push('\n');
                self.block_map(value, indent + 2);
            }
            Value::Seq(items, false) if !items.is_empty() => {
                self.out.push('\n');
                self.block_seq(items, indent + 2);
            }
            other => {
                if next_line {
                    let _ = write!(self.out, "\n{}", " ".repeat(indent + 2));
                } else {
                    self.out.push(' ');
                }
                self.flow(other, false, indent + 2);
                self.out.push('\n');
            }
        }
    }

    fn block_map(&mut self, map: &Value, indent: usize) {
        let Value::Map(entries, style) = map else {
            unreachable!()
        };
        match style {
            MapStyle::Flow | MapStyle::Canonical => {
                self.out.push_str(&" ".repeat(indent));
                self.flow(map, false, indent);
                self.out.push('\n');
            }
            MapStyle::Block | MapStyle::NextLine => {
                let next_line = matches!(style, MapStyle::NextLine);
                for (key, value) in entries {
                    let _ = write!(self.out, "{}{}:", " ".repeat(indent), key_name(*key));
                    self.block_value(value, indent, next_line);
                }
            }
        }
    }

    fn block_seq(&mut self, items: &[Value], indent: usize) {
        for item in items {
            let _ = write!(self.out, "{}-", " ".repeat(indent));
            match item {
                Value::Map(entries, MapStyle::Block | MapStyle::NextLine)
                    if !entries.is_empty() =>
                {
                    self.out.push('\n');
                    self.block_map(item, indent + 2);
                }
                Value::Seq(items, false) if !items.is_empty() => {
                    self.out.push('\n');
                    self.block_seq(items, indent + 2);
                }
                other => {
                    self.out.push(' ');
                    self.flow(other, false, indent + 2);
                    self.out.push('\n');
                }
            }
        }
    }
}

fn count_images(value: &Value) -> usize {
    match value {
        Value::Image(..) => 1,
        Value::Text(..) => 0,
        Value::Map(entries, _) => entries.iter().map(|(_, v)| count_images(v)).sum(),
        Value::Seq(items, _) => items.iter().map(count_images).sum(),
    }
}

fn count_texts(value: &Value) -> usize {
    match value {
        Value::Image(..) => 0,
        Value::Text(..) => 1,
        Value::Map(entries, _) => entries.iter().map(|(_, v)| count_texts(v)).sum(),
        Value::Seq(items, _) => items.iter().map(count_texts).sum(),
    }
}

/// Documents (each with whether its content is on the `---` line), the bytes that choose
/// aliases for image and for text values, and whether line breaks are CRLF.
type Stream = (Vec<(Value, bool)>, Vec<u8>, Vec<u8>, bool);

/// A stream: each document a mapping, some with their content on the `---` line.
fn stream() -> impl Strategy<Value = Stream> {
    (
        prop::collection::vec(
            (
                (
                    prop::collection::vec(
                        prop_oneof![
                            3 => (0..KEYS.len(), value()),
                            1 => (0..REFERENCES.len(), scalar_style())
                                .prop_map(|(i, s)| (KEYS.len(), Value::Image(i, s))),
                        ],
                        1..5,
                    ),
                    map_style(),
                )
                    .prop_map(|(entries, style)| Value::Map(dedup(entries), style)),
                any::<bool>(),
            ),
            1..3,
        ),
        prop::collection::vec(any::<u8>(), 64),
        prop::collection::vec(any::<u8>(), 64),
        any::<bool>(),
    )
}

/// Writes the stream; aliases follow `alias_bytes` (an image value aliases an earlier one
/// when its byte is below 40) and `text_bytes` (a text value aliases an earlier image below 12).
fn emit(
    documents: &[(Value, bool)],
    alias_bytes: &[u8],
    text_bytes: &[u8],
) -> (String, Vec<Expected>) {
    let mut out = String::new();
    let mut expected = Vec::new();
    for (index, (root, on_marker)) in documents.iter().enumerate() {
        let images = count_images(root);
        let texts = count_texts(root);
        let plan: Vec<Alias> = (0..images)
            .map(|i| {
                let byte = alias_bytes.get(i).copied().unwrap_or(255);
                if i > 0 && byte < 40 {
                    Alias::To(usize::from(byte) % i)
                } else {
                    Alias::None
                }
            })
            .collect();
        // An alias's target must be written, not itself an alias.
        let plan: Vec<Alias> = plan
            .iter()
            .map(|alias| match alias {
                Alias::To(target) if plan[*target] == Alias::None => *alias,
                _ => Alias::None,
            })
            .collect();
        let text_aliases: Vec<Option<usize>> = (0..texts)
            .map(|i| {
                let byte = text_bytes.get(i).copied().unwrap_or(255);
                (images > 0 && byte < 12).then(|| usize::from(byte) % images)
            })
            .map(|target| target.filter(|&t| plan[t] == Alias::None))
            .collect();
        let mut emitter = Emitter {
            out: String::new(),
            written: vec![None; images],
            plan,
            text_aliases,
            image_count: 0,
            text_count: 0,
            expected: Vec::new(),
        };
        if *on_marker {
            emitter.out.push_str("--- ");
            emitter.flow(root, false, 0);
            emitter.out.push('\n');
        } else {
            if index > 0 {
                emitter.out.push_str("---\n");
            }
            emitter.block_map(root, 0);
        }
        let base = out.len();
        out.push_str(&emitter.out);
        expected.extend(emitter.expected.into_iter().map(|e| Expected {
            offset: e.offset + base,
            ..e
        }));
    }
    (out, expected)
}

fn digest() -> Digest {
    Digest::parse(&format!("sha256:{}", "7".repeat(64))).unwrap()
}

/// What pinning writes for `reference` (`busybox` becomes `busybox:latest@…`).
fn pinned_text(reference: &str) -> String {
    ImageReference::parse(reference)
        .unwrap()
        .pinned_text(&digest())
}

/// The conformant parser's events, as text.
fn events(text: &str) -> Result<Vec<String>, String> {
    let mut parser = Parser::new_from_str(text);
    let mut events = Vec::new();
    while let Some(event) = parser.next_event() {
        let (event, _) = event.map_err(|e| e.to_string())?;
        events.push(match event {
            Event::Scalar(value, style, anchor, tag) => {
                format!("=VAL {value:?} {style:?} {anchor} {tag:?}")
            }
            other => format!("{other:?}"),
        });
    }
    Ok(events)
}

fn check(text: &str, expected: &[Expected]) -> Result<(), TestCaseError> {
    prop_assert!(
        events(text).is_ok(),
        "the generator wrote invalid YAML:\n{text}\n{:?}",
        events(text)
    );
    let findings = scan(Path::new("styles.yaml"), FileKind::Yaml, text);
    prop_assert!(findings.is_ok(), "{:?}\n{text}", findings.err());
    let findings = findings.unwrap();
    let got: Vec<Expected> = findings
        .iter()
        .map(|f| Expected {
            offset: f.span.start,
            text: f.text.clone(),
            editable: f.edit(&digest()).is_some(),
        })
        .collect();
    let mut want = expected.to_vec();
    want.sort_by_key(|e| e.offset);
    prop_assert_eq!(&got, &want, "\n{}", text);

    let edits: Vec<_> = findings.iter().filter_map(|f| f.edit(&digest())).collect();
    let pinned = apply_edits(text, &edits).unwrap();
    let before = events(text).unwrap();
    let after = events(&pinned);
    prop_assert!(
        after.is_ok(),
        "pinned text does not parse: {:?}\n{pinned}",
        after.err()
    );
    let after = after.unwrap();
    prop_assert_eq!(before.len(), after.len());
    let edited: Vec<&str> = want
        .iter()
        .filter(|e| e.editable)
        .map(|e| e.text.as_str())
        .collect();
    for (old, new) in before.iter().zip(&after) {
        if old != new {
            let changed = edited.iter().any(|reference| {
                old.contains(&format!("{reference:?}"))
                    && *new
                        == old.replacen(
                            &format!("{reference:?}"),
                            &format!("{:?}", pinned_text(reference)),
                            1,
                        )
            });
            prop_assert!(changed, "{old} became {new}\n{text}\n{pinned}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn every_style_finds_every_reference_and_only_those(
        (documents, alias_bytes, text_bytes, crlf) in stream()
    ) {
        let (text, expected) = emit(&documents, &alias_bytes, &text_bytes);
        if crlf {
            // Offsets shift by one per line break before them.
            let shifted: Vec<Expected> = expected
                .iter()
                .map(|e| Expected {
                    offset: e.offset + text[..e.offset].matches('\n').count(),
                    ..e.clone()
                })
                .collect();
            check(&text.replace('\n', "\r\n"), &shifted)?;
        } else {
            check(&text, &expected)?;
        }
    }
}
