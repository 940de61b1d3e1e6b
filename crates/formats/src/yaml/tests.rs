//! The readers against the YAML test suite (`../shared/yaml-test-suite`, see its SOURCE.md) and
//! against each other.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::tree::{Kind, NodeId, Style, Tree};
use super::{conformant, fast};

/// The tree as the test suite's event lines, anchors numbered in order of appearance.
pub(crate) fn events(tree: &Tree, text: &str) -> String {
    let mut out = String::from("+STR\n");
    let mut numbers = HashMap::new();
    for root in &tree.documents {
        out.push_str("+DOC\n");
        if let Some(root) = root {
            node_events(tree, text, *root, &mut numbers, &mut out);
        }
        out.push_str("-DOC\n");
    }
    out.push_str("-STR\n");
    out
}

fn node_events(
    tree: &Tree,
    text: &str,
    id: NodeId,
    numbers: &mut HashMap<NodeId, usize>,
    out: &mut String,
) {
    let node = tree.node(id);
    let mut props = String::new();
    if node.anchored {
        let number = numbers.len() + 1;
        numbers.insert(id, number);
        let _ = write!(props, " &{number}");
    }
    if let Some(tag) = tree.tag(id) {
        let _ = write!(props, " <{tag}>");
    }
    match node.kind {
        Kind::Scalar { style, .. } => {
            let indicator = match style {
                Style::Plain => ':',
                Style::Single => '\'',
                Style::Double => '"',
                Style::Literal => '|',
                Style::Folded => '>',
            };
            let value = tree.scalar(id, text).unwrap_or_default();
            let _ = writeln!(out, "=VAL{props} {indicator}{}", escape(value));
        }
        Kind::Mapping { .. } | Kind::Sequence { .. } => {
            let (open, close) = if matches!(node.kind, Kind::Mapping { .. }) {
                ("+MAP", "-MAP")
            } else {
                ("+SEQ", "-SEQ")
            };
            let _ = writeln!(out, "{open}{props}");
            for &child in tree.children(id) {
                node_events(tree, text, child, numbers, out);
            }
            let _ = writeln!(out, "{close}");
        }
        Kind::Alias { target } => {
            let _ = writeln!(out, "=ALI *{}", numbers.get(&target).copied().unwrap_or(0));
        }
        // The events of the collection it stands for.
        Kind::Deferred => {
            let source = &text[node.span.range()];
            let (sub, root) = super::read_deferred(source).expect("a deferred collection reads");
            node_events(&sub, source, root, &mut HashMap::new(), out);
        }
    }
}

fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out
}

/// The suite's `test.event` in the form [`events`] writes: no document or flow markers,
/// anchors renumbered in order of appearance.
fn normalise_suite_events(expected: &str) -> String {
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let mut count = 0;
    let mut out = String::new();
    for line in expected.lines() {
        let (head, rest) = line.split_at(line.len().min(4));
        match head {
            "+DOC" | "-DOC" | "+STR" | "-STR" | "-MAP" | "-SEQ" => {
                out.push_str(head);
            }
            "+MAP" | "+SEQ" | "=VAL" => {
                out.push_str(head);
                let mut rest = rest.trim_start_matches(' ');
                loop {
                    if let Some(after) = rest.strip_prefix("{} ").or(rest.strip_prefix("[] ")) {
                        rest = after;
                    } else if rest == "{}" || rest == "[]" {
                        rest = "";
                    } else if let Some(anchor) = rest.strip_prefix('&') {
                        let end = anchor.find(' ').unwrap_or(anchor.len());
                        count += 1;
                        numbers.insert(anchor[..end].to_owned(), count);
                        let _ = write!(out, " &{count}");
                        rest = anchor[end..].trim_start_matches(' ');
                    } else if rest.starts_with('<') {
                        let end = rest.find('>').map_or(rest.len(), |i| i + 1);
                        let _ = write!(out, " {}", &rest[..end]);
                        rest = rest[end..].trim_start_matches(' ');
                    } else {
                        break;
                    }
                }
                if head == "=VAL" {
                    let _ = write!(out, " {rest}");
                }
            }
            "=ALI" => {
                let name = rest.trim_start_matches(" *");
                let _ = write!(out, "=ALI *{}", numbers.get(name).copied().unwrap_or(0));
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn suite() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/yaml-test-suite");
    path.join("SOURCE.md").is_file().then_some(path)
}

fn cases(root: &Path) -> Vec<PathBuf> {
    let mut cases = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("in.yaml").is_file() {
            cases.push(dir.clone());
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    cases.sort();
    cases
}

/// Every scalar's span, in document order, for comparing the readers' trees.
fn scalar_spans(tree: &Tree) -> Vec<(u32, u32, Style)> {
    let mut spans: Vec<_> = tree
        .nodes
        .iter()
        .filter_map(|node| match node.kind {
            // Where an empty plain scalar (a missing value) sits is not the readers' concern.
            Kind::Scalar { style, .. }
                if !(matches!(style, Style::Literal | Style::Folded)
                    || (style == Style::Plain && node.span.start == node.span.end)) =>
            {
                Some((node.span.start, node.span.end, style))
            }
            _ => None,
        })
        .collect();
    spans.sort_unstable();
    spans
}

#[expect(clippy::print_stderr, reason = "a skipped suite must say so visibly")]
#[test]
fn yaml_test_suite() {
    let Some(root) = suite() else {
        eprintln!("SKIPPED: ../shared/yaml-test-suite not found");
        return;
    };
    let mut failures = Vec::new();
    let (mut valid, mut fast_read) = (0, 0);
    for case in cases(&root) {
        let name = case.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(case.join("in.yaml")).unwrap();
        let conformant = conformant::read(&text);
        let fast = fast::read(&text);
        // With every collection it may leave unread left unread (no word anywhere).
        let deferring = fast::read_deferring(&text, &[]);
        if deferring.is_ok() != fast.is_ok() {
            failures.push(format!("{name}: deferring reads {:?}", deferring.is_ok()));
        }
        if case.join("error").exists() {
            if fast.is_ok() {
                failures.push(format!("{name}: the fast reader accepts invalid YAML"));
            }
            if conformant.is_ok() {
                failures.push(format!(
                    "{name}: the conformant reader accepts invalid YAML"
                ));
            }
            continue;
        }
        valid += 1;
        let expected =
            normalise_suite_events(&std::fs::read_to_string(case.join("test.event")).unwrap());
        let conformant = match conformant {
            Ok(tree) => tree,
            Err(rejected) => {
                failures.push(format!("{name}: rejected: {rejected:?}"));
                continue;
            }
        };
        let got = events(&conformant, &text);
        if got != expected {
            failures.push(format!("{name}: conformant\n{got}\nexpected\n{expected}"));
        }
        if let Ok(deferring) = deferring {
            let got = events(&deferring, &text);
            if got != expected {
                failures.push(format!("{name}: deferring\n{got}\nexpected\n{expected}"));
            }
        }
        if let Ok(fast) = fast {
            fast_read += 1;
            let got = events(&fast, &text);
            if got != expected {
                failures.push(format!("{name}: fast\n{got}\nexpected\n{expected}"));
            }
            if scalar_spans(&fast) != scalar_spans(&conformant) {
                failures.push(format!(
                    "{name}: spans\nfast {:?}\nconformant {:?}",
                    scalar_spans(&fast),
                    scalar_spans(&conformant)
                ));
            }
        }
    }
    eprintln!("yaml test suite: {valid} valid cases, {fast_read} read by the fast reader");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Lines of YAML-like text in many shapes: a key, a dash, a value of some kind, a comment.
fn yamlish_line() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let indent = prop::sample::select(vec![0usize, 0, 1, 2, 2, 4, 6]);
    let dash = prop::sample::select(vec!["", "", "- ", "- - ", "-   "]);
    let key = prop::sample::select(vec![
        "a: ",
        "image: ",
        "b:",
        "\"q k\": ",
        "'s k': ",
        "k:v: ",
        "x y: ",
        "? ",
        ": ",
        "&k a: ",
        "a:\t",
        "[a]: ",
        "*x : ",
        "c #: ",
        "",
    ]);
    let value = prop::sample::select(vec![
        "",
        "plain",
        "two words",
        "nginx:1.25",
        "\"dq\"",
        "'sq'",
        "\"esc \\\" \\t \\x41 \\u00e9\"",
        "'it''s'",
        "\"unterminated",
        "'open",
        "[a, b]",
        "{a: 1, b: [c, {d: e}]}",
        "[a, b",
        "{a",
        "{\"j\":1,\"k\":[true]}",
        "[a, b,]",
        "[a,,b]",
        "{a, b}",
        "[a: b]",
        "|",
        "|-",
        ">+",
        "|2",
        ">",
        "&anchor value",
        "&x",
        "*x",
        "*missing",
        "!!str tagged",
        "!t",
        "- nested",
        "a: b",
        "b #c",
        "b#c",
        "x: ",
        ": x",
        "-x",
        "?x",
        ":x",
        "%d",
        "@at",
        "`tick`",
        "~",
        "null",
        "0x1F",
        "ü",
        "\u{85}",
        "end  ",
        "{}",
        "[]",
        "\"\"",
        "''",
        "x\ty",
        "#comment",
        "{a: b, {c: d}}",
        "{a: [b, {c: d}], e: \"f\"}",
        "{a: b c}",
        "{a:b}",
        "{\"a\":b}",
        "{a: \"b\\\"c\"}",
        "[a, [b, [c]]]",
        "{a: b, }",
        "[ ]",
        "{ a: 1 , b: 2 }",
        "{a: -1, b: +2, c: /x/y.z}",
        "[-a, a-b, c+d]",
        "{a: b}#c",
        "{a: b} x",
        "{<<: {a: b}}",
        "{a: {b: {c: {d: []}}}}",
    ]);
    let comment = prop::sample::select(vec!["", "", " # c", " #c", "  # tagpin:ignore"]);
    prop_oneof![
        6 => (indent.clone(), dash, key, value, comment)
            .prop_map(|(i, d, k, v, c)| format!("{}{d}{k}{v}{c}", " ".repeat(i))),
        1 => (indent, prop::sample::select(vec!["text line", "  more", "---", "...", "--- x", "# c", "", "   ", "\t", "%YAML 1.2", "--- |", "... # c"]))
            .prop_map(|(i, l)| format!("{}{l}", " ".repeat(i))),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]

    /// Whatever the fast reader accepts, the conformant reader reads the same: same events,
    /// same scalar spans. And a text the conformant reader rejects, the fast one never accepts.
    #[test]
    fn the_fast_reader_agrees_with_the_conformant_one(
        lines in proptest::collection::vec(yamlish_line(), 0..16),
        crlf in proptest::prelude::any::<bool>(),
    ) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        if let Ok(fast) = fast::read(&text) {
            let conformant = conformant::read(&text);
            proptest::prop_assert!(conformant.is_ok(), "fast accepts, conformant rejects {:?}: {:?}", text, conformant.err());
            let conformant = conformant.unwrap();
            proptest::prop_assert_eq!(events(&fast, &text), events(&conformant, &text), "{:?}", text);
            proptest::prop_assert_eq!(scalar_spans(&fast), scalar_spans(&conformant), "{:?}", text);
        }
        // Leaving collections unread reads the same text, to the same events.
        let deferring = fast::read_deferring(&text, &[]);
        proptest::prop_assert_eq!(deferring.is_ok(), fast::read(&text).is_ok(), "{:?}", text);
        if let (Ok(deferring), Ok(fast)) = (deferring, fast::read(&text)) {
            proptest::prop_assert_eq!(events(&deferring, &text), events(&fast, &text), "{:?}", text);
        }
        // Lenient reading never panics and keeps spans inside the text.
        let lenient = fast::read_lenient(&text);
        for node in &lenient.nodes {
            proptest::prop_assert!(node.span.end as usize <= text.len());
        }
    }
}

/// One-line flow collections of many shapes, made of the pieces the fast reader's `skim` reads and
/// of pieces that look like them.
fn flow_collection() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop::sample::select(vec![
        "{", "}", "[", "]", ", ", ",", ": ", ":", " ", "a", "b1", "c.d/e", "-x", "x-", "+", "_",
        "\"q\"", "\"q r\"", "\"\\\"\"", "\"", "'s'", "#", " #", "{}", "[]", "~", "&a ", "*a",
        "!t ", "?", "ü", "<<", "%", "@", "\\",
    ]);
    (
        prop::sample::select(vec!["{", "["]),
        proptest::collection::vec(piece, 0..24),
    )
        .prop_map(|(open, pieces)| format!("{open}{}", pieces.concat()))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 8192, ..Default::default() })]

    /// A flow collection left unread is one the fast reader reads, over the same bytes: the
    /// two readings accept the same texts and give the same events.
    #[test]
    fn a_collection_left_unread_is_one_the_fast_reader_reads(
        flow in flow_collection(),
        nested in proptest::prelude::any::<bool>(),
    ) {
        let text = if nested { format!("k:\n  j: {flow}\n  l: x\n") } else { format!("k: {flow}\n") };
        let fast = fast::read(&text);
        let deferring = fast::read_deferring(&text, &[]);
        proptest::prop_assert_eq!(deferring.is_ok(), fast.is_ok(), "{:?}", text);
        if let (Ok(deferring), Ok(fast)) = (deferring, fast) {
            proptest::prop_assert_eq!(events(&deferring, &text), events(&fast, &text), "{:?}", text);
        }
    }
}

/// The skim leaves to the reader every collection with an escape in a quoted word, valid or
/// not, and whatever it accepts the reader reads the same.
#[test]
fn escapes_are_left_to_the_reader() {
    for flow in [
        r#"["a\,b]"#,
        r#"["a\"]"#,
        r#"["a\", b]"#,
        r#"{k: "x\", j: y}"#,
        r#"{"k\": v}"#,
        r#"["a\\", b]"#,
        r#"[a, "b\tc"]"#,
    ] {
        assert!(!fast::skim_deferred(flow, &mut ()), "{flow}");
        let text = format!("k: {flow}\n");
        let fast = fast::read(&text);
        let deferring = fast::read_deferring(&text, &[]);
        assert_eq!(deferring.is_ok(), fast.is_ok(), "{text:?}");
        if let (Ok(deferring), Ok(fast)) = (deferring, fast) {
            assert_eq!(events(&deferring, &text), events(&fast, &text), "{text:?}");
        }
    }
    for flow in [r#"["a", "b c"]"#, r#"{"k": "v", j: [x]}"#] {
        assert!(fast::skim_deferred(flow, &mut ()), "{flow}");
    }
}

/// A tree built on the arena a larger tree left behind reads as one built afresh.
#[test]
fn a_tree_on_a_spare_arena_is_the_tree_read_afresh() {
    let small = "image: nginx:1.25\nlist: [a, {b: c}]\n";
    let fresh = std::thread::spawn(move || {
        let tree = fast::read(small).unwrap();
        (events(&tree, small), tree.nodes.len(), tree.children.len())
    })
    .join()
    .unwrap();
    let mut large = String::new();
    for i in 0..500 {
        let _ = writeln!(large, "key{i}: {{a: [1, 2, 3], b: x}}");
    }
    let large_nodes = fast::read(&large).unwrap().nodes.len();
    let reused = fast::read(small).unwrap();
    assert!(reused.nodes.capacity() >= large_nodes, "the arena was kept");
    assert_eq!(
        (
            events(&reused, small),
            reused.nodes.len(),
            reused.children.len()
        ),
        fresh
    );
}
