//! Odd lines in realistic files: one broken line (an unbalanced quote, `{{` without `}}`, an
//! escaped quote copied into an action, a tab, a stray bracket, …) inserted into a YAML-kind
//! fixture must never make references elsewhere disappear silently.
//!
//! Each fixture is doubled into two YAML documents (`text`, `---`, `text`), so every insertion
//! point has references in another document. After inserting odd lines, every reference that
//! is *far* from all of them (in another document, or in another top-level block and more than
//! [`NEAR`] lines away) must still be found at its (shifted) line and column, with its text and
//! status. A YAML, compose or workflow file may instead fail with a syntax error at or after
//! the first odd line (or the content line before it); a Helm template never fails.
//!
//! A YAML, compose or workflow file is read as YAML 1.2 says, and an odd line can change what
//! every later line means while the file stays valid (a `|` before the first key makes the rest
//! of the document one string). So a far reference in such a file is required only where a
//! conformant parser (saphyr-parser, directly) still reads a scalar with its text on its line.
//!
//! `every_odd_line_at_every_position` is exhaustive for one odd line (every fixture, position,
//! odd line and indentation); the proptest inserts up to three at once.

use std::path::Path;

use proptest::prelude::*;
use tagpin_formats::{Error, FileKind, Status, scan};

const FIXTURES: &[(&str, FileKind)] = &[
    ("chart/templates/deployment.yaml", FileKind::HelmTemplate),
    ("chart/values.yaml", FileKind::Yaml),
    ("manifests.yaml", FileKind::Yaml),
    ("docker-compose.yml", FileKind::Compose),
    ("workflow.yml", FileKind::Workflow),
    ("action.yml", FileKind::Workflow),
];

/// A reference this many lines (or fewer) from an odd line in the same block may be lost.
const NEAR: usize = 2;

const INDENTS: [usize; 4] = [0, 2, 4, 8];

const ODD_LINES: &[&str] = &[
    "\"",
    "'",
    "`",
    "\\",
    "key: \"unbalanced",
    "key: 'unbalanced",
    "key: \"ends in an escaped quote\\\"",
    "key: \"{{ .Values.s | default \\\"7\\\" }}\"",
    "key: {{ .Values.s | default \\\"7\\\" }}",
    "image: \"{{ .Values.s | default \\\"nginx:1\\\" }}\"",
    "{{ .Values.unclosed",
    "key: {{ .Values.unclosed",
    "key: \"{{ .Values.unclosed\"",
    "{{ \"unterminated string }}",
    "{{ 'x }}",
    "{{/* unterminated comment",
    "{{- if .Values.x }}",
    "{{- end }}",
    "}}",
    "\tkey: tab",
    "\t- tab item",
    "key:\tvalue",
    "]",
    "}",
    "key: ]",
    "key: }",
    "key: [a, b",
    "key: {a: 1",
    "key: {a: \"1}",
    "- [",
    "- {",
    "- \"",
    "key: \"a\" junk \"b",
    "image: \"",
    "image: [",
    "image: {",
    "? complex",
    "&anchor",
    "*alias",
    "!tag",
    "|",
    "key: >",
    "key: value: nested",
    "key: `raw",
    "%YAML 1.2",
    "---x",
    "-",
    ":",
];

struct Base {
    name: &'static str,
    kind: FileKind,
    lines: Vec<String>,
    /// Per line: its document and its top-level block (both numbered from the file's start).
    place: Vec<(usize, usize)>,
    findings: Vec<Shape>,
}

/// `(line, column, status, text)`.
type Shape = (usize, usize, Status, String);

fn shapes(kind: FileKind, text: &str) -> Result<Vec<Shape>, Error> {
    Ok(scan(Path::new("odd.yaml"), kind, text)?
        .into_iter()
        .map(|f| (f.line, f.column, f.status, f.text))
        .collect())
}

fn base(name: &'static str, kind: FileKind) -> Base {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let one = std::fs::read_to_string(path).unwrap();
    let text = format!("{}---\n{one}", one.trim_end_matches('\n').to_owned() + "\n");
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let (mut doc, mut block) = (0, 0);
    let place = lines
        .iter()
        .map(|line| {
            if line == "---" || line.starts_with("--- ") {
                doc += 1;
                block += 1;
            } else if line.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '"') {
                block += 1;
            }
            (doc, block)
        })
        .collect();
    let findings = shapes(kind, &text).unwrap();
    assert!(findings.len() >= 2, "{name}: {findings:?}");
    Base {
        name,
        kind,
        lines,
        place,
        findings,
    }
}

/// An odd line inserted before the base's line `at` (0-based; `lines.len()` appends).
#[derive(Clone, Debug)]
struct Insert {
    at: usize,
    line: String,
}

fn odd(index: usize, indent: usize) -> String {
    format!("{}{}", " ".repeat(indent), ODD_LINES[index])
}

fn check(base: &Base, inserts: &mut [Insert]) -> Result<(), String> {
    inserts.sort_by_key(|i| i.at);
    let mut lines: Vec<&str> = Vec::new();
    let mut inserted_at = Vec::new(); // 1-based line numbers in the new text
    let mut next = inserts.iter().peekable();
    for (i, line) in base.lines.iter().enumerate() {
        while let Some(insert) = next.next_if(|insert| insert.at == i) {
            lines.push(&insert.line);
            inserted_at.push(lines.len());
        }
        lines.push(line);
    }
    for insert in next {
        lines.push(&insert.line);
        inserted_at.push(lines.len());
    }
    let text = lines.join("\n") + "\n";
    let context = || format!("{}: {inserts:?}\n{text}", base.name);

    let findings = match shapes(base.kind, &text) {
        Ok(findings) => findings,
        Err(Error::Syntax { path, line, .. }) if base.kind != FileKind::HelmTemplate => {
            // The error may point at the last content line before the first odd line: the
            // plain scalar an odd line would continue ("while scanning a plain scalar, found
            // a tab").
            let first_odd = inserted_at[0];
            let before = (1..first_odd)
                .rev()
                .find(|&n| {
                    let line = lines[n - 1].trim_start();
                    !line.is_empty() && !line.starts_with('#')
                })
                .unwrap_or(first_odd);
            if path != Path::new("odd.yaml") || line < before || line > lines.len() + 1 {
                return Err(format!("error at {line}: {}", context()));
            }
            return Ok(());
        }
        Err(error) => return Err(format!("{error}: {}", context())),
    };
    let conformant = (base.kind != FileKind::HelmTemplate).then(|| conformant_scalars(&text));
    for (line, column, status, found_text) in &base.findings {
        let index = line - 1;
        let shifted = line + inserts.iter().filter(|i| i.at <= index).count();
        let far = inserts.iter().zip(&inserted_at).all(|(insert, &odd_line)| {
            // An odd line sits in the document and block of the line before it.
            let here = base.place[insert.at.saturating_sub(1)];
            let there = base.place[index];
            here.0 != there.0 || (here.1 != there.1 && shifted.abs_diff(odd_line) > NEAR)
        });
        if !far {
            continue;
        }
        if let Some(scalars) = &conformant
            && !scalars.contains(&(shifted, found_text.clone()))
        {
            continue;
        }
        let expected = (shifted, *column, *status, found_text.clone());
        if !findings.contains(&expected) {
            return Err(format!(
                "lost {expected:?} (found {findings:?}): {}",
                context()
            ));
        }
    }
    Ok(())
}

/// `(line, value)` of every scalar saphyr-parser reads in `text` (which must parse).
fn conformant_scalars(text: &str) -> Vec<(usize, String)> {
    let mut parser = saphyr_parser::Parser::new_from_str(text);
    let mut scalars = Vec::new();
    while let Some(Ok((event, span))) = parser.next_event() {
        if let saphyr_parser::Event::Scalar(value, ..) = event {
            scalars.push((span.start.line(), value.into_owned()));
        }
    }
    scalars
}

fn bases() -> Vec<Base> {
    FIXTURES
        .iter()
        .map(|&(name, kind)| base(name, kind))
        .collect()
}

#[test]
fn every_odd_line_at_every_position() {
    let mut failures = Vec::new();
    for base in bases() {
        for at in 0..=base.lines.len() {
            for index in 0..ODD_LINES.len() {
                for indent in INDENTS {
                    let mut inserts = [Insert {
                        at,
                        line: odd(index, indent),
                    }];
                    if let Err(failure) = check(&base, &mut inserts) {
                        failures.push(failure);
                    }
                }
            }
        }
    }
    let count = failures.len();
    let shown: Vec<String> = failures.into_iter().take(3).collect();
    assert!(
        count == 0,
        "{count} failures, the first:\n{}",
        shown.join("\n\n")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn several_odd_lines_lose_only_what_is_near_them(
        fixture in 0..FIXTURES.len(),
        picks in prop::collection::vec(
            (any::<prop::sample::Index>(), 0..ODD_LINES.len(), prop::sample::select(&INDENTS[..])),
            1..=3,
        ),
    ) {
        let (name, kind) = FIXTURES[fixture];
        let base = base(name, kind);
        let mut inserts: Vec<Insert> = picks
            .into_iter()
            .map(|(at, index, indent)| Insert {
                at: at.index(base.lines.len() + 1),
                line: odd(index, indent),
            })
            .collect();
        if let Err(failure) = check(&base, &mut inserts) {
            prop_assert!(false, "{}", failure);
        }
    }
}
