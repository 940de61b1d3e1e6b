//! The plan, table-driven: each case is a file, the digests the registry gave, and the
//! rendered plan (edits, unresolved, counts and the new text) as a snapshot.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tagpin_formats::FileKind;
use tagpin_reference::{Digest, ImageReference, TagKey};
use tagpin_registry::ResolveError;

use super::{keys_to_resolve, plan};
use crate::commands::ScannedFile;

fn digest(fill: char) -> Digest {
    Digest::parse(&format!("sha256:{}", fill.to_string().repeat(64))).unwrap()
}

fn key(text: &str) -> TagKey {
    ImageReference::parse(text).unwrap().tag_key()
}

fn not_found(text: &str) -> ResolveError {
    let key = key(text);
    ResolveError::NotFound {
        url: format!(
            "http://127.0.0.1:5000/v2/{}/manifests/{}",
            key.repository, key.tag
        )
        .parse()
        .unwrap(),
        code: Some("MANIFEST_UNKNOWN".to_owned()),
    }
}

thread_local! {
    /// The text of each file `scanned` made, by name: the plan keeps no text.
    static TEXTS: std::cell::RefCell<BTreeMap<String, String>> =
        const { std::cell::RefCell::new(BTreeMap::new()) };
}

fn scanned(name: &str, kind: FileKind, text: &str) -> ScannedFile {
    let findings = tagpin_formats::scan(Path::new(name), kind, text).unwrap();
    TEXTS.with_borrow_mut(|texts| texts.insert(name.to_owned(), text.to_owned()));
    ScannedFile {
        path: PathBuf::from(name),
        display: name.to_owned(),
        findings,
        fingerprint: None,
        identity: None,
        chart_values: false,
    }
}

/// The registry of every case: `busybox:1.36` → `a…`, `nginx:1.27` → `b…`, `busybox:latest` →
/// `c…`, `quay.io/org/app:v1` → `d…`; `ghcr.io/acme/missing:1` is not found.
fn registry() -> BTreeMap<TagKey, Result<Digest, ResolveError>> {
    let mut digests = BTreeMap::new();
    digests.insert(key("busybox:1.36"), Ok(digest('a')));
    digests.insert(key("nginx:1.27"), Ok(digest('b')));
    digests.insert(key("busybox:latest"), Ok(digest('c')));
    digests.insert(key("quay.io/org/app:v1"), Ok(digest('d')));
    digests.insert(
        key("ghcr.io/acme/missing:1"),
        Err(not_found("ghcr.io/acme/missing:1")),
    );
    digests
}

fn render(file: &ScannedFile, refresh: bool) -> String {
    let digests = registry();
    let files = std::slice::from_ref(file);
    let plan = plan(files, &digests, refresh);
    let mut out = String::new();
    let keys: std::collections::BTreeSet<String> = keys_to_resolve(files, refresh)
        .iter()
        .map(ToString::to_string)
        .collect();
    let keys: Vec<String> = keys.into_iter().collect();
    let _ = writeln!(out, "lookups: {}", keys.join(", "));
    for edit in &plan.edits {
        let _ = writeln!(
            out,
            "{:?} {}:{}:{} {} [{} {}] {} -> {}{}",
            edit.change,
            edit.path,
            edit.line,
            edit.column,
            edit.text,
            edit.image,
            edit.tag,
            edit.old_digest.as_deref().map_or("-", |d| &d[..9]),
            &edit.new_digest[..9],
            if edit.warnings.is_empty() {
                ""
            } else {
                " (latest warning)"
            },
        );
    }
    for unresolved in &plan.unresolved {
        let _ = writeln!(
            out,
            "unresolved {}:{} {} {}: {}",
            unresolved.line,
            unresolved.column,
            unresolved.text,
            unresolved.error,
            unresolved.message
        );
    }
    for unsupported in &plan.unsupported {
        let _ = writeln!(
            out,
            "unsupported {}:{} {}: {}",
            unsupported.line, unsupported.column, unsupported.text, unsupported.reason
        );
    }
    let skipped: Vec<String> = plan
        .skipped
        .iter()
        .map(|(status, n)| format!("{status:?} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "unchanged: {}; skipped: {}",
        plan.unchanged,
        skipped.join(", ")
    );
    match plan.rewrites.as_slice() {
        [] => out.push_str("(file unchanged)\n"),
        [rewrite] => {
            let text = TEXTS.with_borrow(|texts| texts[&file.display].clone());
            let new_text = tagpin_formats::apply_edits(&text, &rewrite.edits).unwrap();
            let _ = write!(out, "--- new text\n{new_text}");
        }
        more => panic!("one file, {} rewrites", more.len()),
    }
    // Show `\r` so the snapshots tell CRLF from LF (insta normalises line endings).
    out.replace('\r', "\\r")
}

#[test]
fn plans() {
    let stale = "sha256:".to_owned() + &"9".repeat(64);
    let current_a = digest('a').to_string();
    let cases: Vec<(&str, &str, FileKind, String, bool)> = vec![
        (
            "floating_and_implicit_latest",
            "pod.yaml",
            FileKind::Yaml,
            "spec:\n  containers:\n    - image: busybox:1.36\n    - image: busybox\n    - image: 'nginx:1.27'\n"
                .to_owned(),
            true,
        ),
        (
            "pinned_refreshed_or_unchanged",
            "pod.yaml",
            FileKind::Yaml,
            format!(
                "a:\n  image: busybox:1.36@{stale}\nb:\n  image: busybox:1.36@{current_a}\n"
            ),
            true,
        ),
        (
            "no_refresh_skips_pinned",
            "pod.yaml",
            FileKind::Yaml,
            format!("a:\n  image: busybox:1.36@{stale}\nb:\n  image: nginx:1.27\n"),
            false,
        ),
        (
            "unresolved_left_alone",
            "pod.yaml",
            FileKind::Yaml,
            "a:\n  image: ghcr.io/acme/missing:1\nb:\n  image: nginx:1.27\n".to_owned(),
            true,
        ),
        (
            "skipped_statuses",
            "Dockerfile",
            FileKind::Dockerfile,
            format!(
                "FROM busybox@{current_a} AS base\nFROM ${{BASE}}\nFROM base\nFROM scratch\nFROM nginx:1.27 # tagpin:ignore\n"
            ),
            true,
        ),
        (
            "helm_split_maps",
            "values.yaml",
            FileKind::Yaml,
            format!(
                "app:\n  image:\n    registry: quay.io\n    repository: org/app\n    tag: v1\n    digest: \"\"\nold:\n  image:\n    repository: quay.io/org/app\n    tag: \"v1@{stale}\"\nbare:\n  image:\n    repository: busybox\n    tag: '1.36'\n"
            ),
            true,
        ),
        (
            "escaped_scalar_is_unsupported",
            "pod.yaml",
            FileKind::Yaml,
            "a:\n  image: \"busy\\x62ox:1.36\"\n".to_owned(),
            true,
        ),
        (
            "crlf_kept",
            "pod.yaml",
            FileKind::Yaml,
            "kind: Pod\r\nspec:\r\n  containers:\r\n    - image: busybox:latest # web\r\n".to_owned(),
            true,
        ),
    ];
    for (name, file, kind, text, refresh) in cases {
        let rendered = render(&scanned(file, kind, &text), refresh);
        insta::assert_snapshot!(name, rendered);
    }
}

#[test]
fn a_tag_is_looked_up_once_across_files() {
    let files = [
        scanned(
            "a.yaml",
            FileKind::Yaml,
            "spec:\n  containers:\n    - image: busybox\n",
        ),
        scanned(
            "b.yaml",
            FileKind::Yaml,
            "x:\n  image: docker.io/library/busybox:latest\n",
        ),
        scanned("Dockerfile", FileKind::Dockerfile, "FROM busybox:latest\n"),
    ];
    assert_eq!(
        keys_to_resolve(&files, true),
        [key("busybox"), key("busybox"), key("busybox")]
    );
    let plan = plan(&files, &registry(), true);
    assert_eq!(plan.rewrites.len(), 3);
    assert!(
        plan.edits
            .iter()
            .all(|edit| edit.new_digest == digest('c').to_string())
    );
}
