//! Property tests: no input makes a scanner panic, and splicing digests changes nothing but
//! the edited spans and re-scans to the pinned references.

use std::path::Path;

use proptest::prelude::*;
use tagpin_formats::{FileKind, Status, apply_edits, scan};
use tagpin_reference::Digest;

const KINDS: [FileKind; 10] = [
    FileKind::Yaml,
    FileKind::Devcontainer,
    FileKind::Compose,
    FileKind::Workflow,
    FileKind::GitlabCi,
    FileKind::CloudBuild,
    FileKind::Kustomize,
    FileKind::HelmTemplate,
    FileKind::Dockerfile,
    FileKind::Shell,
];

fn digest() -> Digest {
    Digest::parse(&format!("sha256:{}", "9".repeat(64))).unwrap()
}

fn yamlish_line() -> impl Strategy<Value = String> {
    let indent = 0usize..8;
    let dash = prop_oneof![Just(""), Just("- "), Just("- - ")];
    let key = prop::sample::select(vec![
        "image",
        "repository",
        "tag",
        "digest",
        "registry",
        "version",
        "name",
        "containers",
        "services",
        "properties",
        "kubectlImage",
        "build",
        "imagePullPolicy",
        "jobs",
        "container",
        "uses",
        "runs",
        "\"image\"",
        "data",
        "images",
        "newTag",
        "newName",
    ]);
    let value = prop::sample::select(vec![
        "",
        "nginx",
        "nginx:1.27",
        "\"nginx:1.27\"",
        "'ghcr.io/a/b:v1'",
        "quay.io/x/y:latest",
        "busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111",
        "\"a:1@sha256:2222222222222222222222222222222222222222222222222222222222222222\"",
        "{{ .Values.image }}",
        "\"{{ .Values.x }}:1\"",
        "|",
        ">-",
        "{image: redis:7, tag: x}",
        "[a, {image: alpine}]",
        "*anchor",
        "&anchor nginx:1",
        "\"\"",
        "''",
        "\"esc\\x3a\"",
        "docker://alpine:3",
        "${{ matrix.image }}",
        "$IMAGE",
        "{",
        "\"unterminated",
        "[1,",
        "true",
        "v1.2.3",
        "# image: fake:1",
    ]);
    let comment = prop_oneof![Just(""), Just(" # tagpin:ignore"), Just(" # note")];
    let shape = prop_oneof![
        4 => (indent.clone(), dash, key, value.clone(), comment)
            .prop_map(|(i, d, k, v, c)| format!("{}{d}{k}: {v}{c}", " ".repeat(i))),
        1 => (indent, value).prop_map(|(i, v)| format!("{}{v}", " ".repeat(i))),
        1 => prop::sample::select(vec![
            "---", "...", "{{- if .Values.x }}", "{{- end }}", "  {{- include \"x\" . | nindent 4 }}",
            "# image: commented:1", "FROM alpine:3 AS build", "COPY --from=build /a /b",
            "kubectl run x --image=busybox:1", "image: heredoc:1", "", "  ",
            "docker run --rm \\", "  -e A=1 alpine:3 \\", "podman pull quay.io/a/b:1 # c",
            "ARG BASE=alpine:3", "ARG TAG=\"1.36\"", "FROM ${BASE}", "FROM busybox:${TAG} AS t",
            "COPY --from=$BASE /a /b", "LABEL v=$TAG",
        ]).prop_map(str::to_owned),
    ];
    shape
}

fn yamlish() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(yamlish_line(), 0..24),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf, bom)| {
            let ending = if crlf { "\r\n" } else { "\n" };
            let mut text = if bom {
                "\u{feff}".to_owned()
            } else {
                String::new()
            };
            text.push_str(&lines.join(ending));
            text
        })
}

/// A kustomization's `images:` list: entries in block and flow style, at any indentation,
/// with comments, other keys and existing digests, in any order.
fn kustomization() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec!["nginx", "ghcr.io/a/b", "\"quay.io/x/y\"", "'r'"]);
    let tag = prop::sample::select(vec!["\"1.27\"", "v1", "'7.4'", "1.2", "\"\""]);
    let digest = prop::sample::select(vec![
        "",
        "sha256:3333333333333333333333333333333333333333333333333333333333333333",
        "\"sha256:3333333333333333333333333333333333333333333333333333333333333333\"",
    ]);
    let comment = prop::sample::select(vec!["", " # note"]);
    let entry = (
        name,
        prop::option::of(tag),
        digest,
        comment,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(name, tag, digest, comment, flow, new_name)| {
            let mut keys = vec![format!("name: {name}")];
            if new_name {
                keys.push("newName: ghcr.io/m/n".to_owned());
            }
            if let Some(tag) = tag {
                keys.push(format!("newTag: {tag}"));
            }
            if !digest.is_empty() {
                keys.push(format!("digest: {digest}"));
            }
            // `@` stands for the list's indentation.
            if flow {
                format!("@- {{{}}}{comment}", keys.join(", "))
            } else {
                format!("@- {}{comment}", keys.join("\n@  "))
            }
        });
    (
        prop::collection::vec(entry, 1..5),
        0usize..4,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(entries, indent, crlf, final_newline)| {
            let entries = entries.join("\n").replace('@', &" ".repeat(indent));
            let mut text = format!("resources: [a.yaml]\nimages:\n{entries}");
            if final_newline {
                text.push('\n');
            }
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            text
        })
}

/// A `devcontainer.json`: JSON with comments and trailing commas, other members (nested
/// `"image"` keys, comments and strings that look like one) around at most one root `"image"`;
/// and whether it has that one.
fn devcontainer() -> impl Strategy<Value = (String, bool)> {
    let space = prop::sample::select(vec!["", " ", "\n", "\n\t", "  \n  "]);
    let member = prop::sample::select(vec![
        "\"name\": \"dev\"",
        "// \"image\": \"commented:1\"\n\"a\": 1",
        "/* \"image\": \"block:1\" */ \"b\": true",
        "\"features\": {\"ghcr.io/devcontainers/features/node:1\": {},}",
        "\"customizations\": {\"x\": {\"image\": \"nested:1\"}}",
        "\"list\": [\"image\", \"n:1\", [1, 2,],]",
        "\"cmd\": \"echo // \\\"image\\\": \\\"quoted:1\\\"\"",
        "\"é\": \"ü\" /* ∑ */",
        "\"n\": null",
    ]);
    let image = prop::sample::select(vec![
        "\"image\": \"mcr.microsoft.com/devcontainers/go:1.23\"",
        "\"image\" : \"alpine\" // tagpin:ignore\n",
        "\"image\":\"ghcr.io/a/b:v1@sha256:5555555555555555555555555555555555555555555555555555555555555555\"",
        "\"image\": \"${localEnv:IMG}\"",
    ]);
    (
        prop::collection::vec((member, space.clone()), 0..6),
        prop::option::of((image, 0usize..6)),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(members, image, trailing, crlf, bom)| {
            let mut parts: Vec<String> = members
                .into_iter()
                .map(|(m, space)| format!("{space}{m}"))
                .collect();
            let has_image = image.is_some();
            if let Some((image, at)) = image {
                parts.insert(at.min(parts.len()), format!("\n  {image}"));
            }
            let mut text = format!("// dev\n{{{}", parts.join(","));
            if trailing && !parts.is_empty() {
                text.push(',');
            }
            text.push_str("\n}\n");
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            if bom {
                text.insert(0, '\u{feff}');
            }
            (text, has_image)
        })
}

/// Pins every editable finding and checks what the splice promises.
fn check_splice(kind: FileKind, text: &str) -> Result<(), TestCaseError> {
    let path = Path::new("input");
    let Ok(findings) = scan(path, kind, text) else {
        return Ok(());
    };
    for finding in &findings {
        prop_assert!(finding.span.end <= text.len());
        prop_assert!(finding.line >= 1 && finding.column >= 1);
    }
    let mut edits: Vec<_> = findings.iter().filter_map(|f| f.edit(&digest())).collect();
    let pinned = apply_edits(text, &edits).unwrap();
    edits.sort_by_key(|e| e.span.start);
    let (mut old, mut new) = (0, 0);
    for edit in &edits {
        let kept = edit.span.start - old;
        prop_assert_eq!(&text[old..edit.span.start], &pinned[new..new + kept]);
        new += kept + edit.replacement.len();
        old = edit.span.end;
    }
    prop_assert_eq!(&text[old..], &pinned[new..]);

    let rescanned = scan(path, kind, &pinned);
    prop_assert!(rescanned.is_ok(), "{:?}", rescanned.err());
    let rescanned = rescanned.unwrap();
    prop_assert_eq!(
        rescanned.len(),
        findings.len(),
        "{:#?}\n{:#?}",
        findings,
        rescanned
    );
    for (before, after) in findings.iter().zip(&rescanned) {
        // Lines move only by the lines inserted above (a Kustomize `digest:` key).
        let inserted: usize = edits
            .iter()
            .filter(|e| e.span.start < before.span.start)
            .map(|e| e.replacement.matches('\n').count())
            .sum();
        prop_assert_eq!(before.line + inserted, after.line);
        let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
        let edited_before_on_line = edits
            .iter()
            .any(|e| e.span.start < before.span.start && line_of(e.span.start) == before.line);
        if !edited_before_on_line {
            prop_assert_eq!(before.column, after.column);
        }
        if before.edit(&digest()).is_some() {
            prop_assert!(matches!(after.status, Status::Pinned | Status::Ignored));
            prop_assert_eq!(
                after.reference.as_ref().and_then(|r| r.digest()),
                Some(&digest())
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        for kind in KINDS {
            check_splice(kind, &text)?;
        }
    }

    #[test]
    fn kustomize_digests_are_inserted_and_refreshed_byte_exactly(text in kustomization()) {
        let findings = scan(Path::new("kustomization.yaml"), FileKind::Kustomize, &text);
        prop_assert!(findings.is_ok(), "{:?}", findings.err());
        prop_assert!(!findings.unwrap().is_empty());
        check_splice(FileKind::Kustomize, &text)?;
    }

    #[test]
    fn devcontainer_image_is_found_alone_and_spliced_byte_exactly(
        (text, has_image) in devcontainer()
    ) {
        let findings = scan(Path::new("devcontainer.json"), FileKind::Devcontainer, &text);
        prop_assert!(findings.is_ok(), "{:?}", findings.err());
        let findings = findings.unwrap();
        prop_assert_eq!(findings.len(), usize::from(has_image), "{:?}", findings);
        check_splice(FileKind::Devcontainer, &text)?;
    }

    #[test]
    fn yamlish_text_splices_cleanly(text in yamlish()) {
        for kind in KINDS {
            check_splice(kind, &text)?;
        }
    }
}
