//! The cozystack corpus (`../shared/corpus/cozystack`, see its SOURCE.md): real charts with the
//! cases tagpin must get right. The corpus exists in CI and the development environment, not in
//! a user's clone; without it this test says so and passes. Set `TAGPIN_CORPUS` to point at it.

use std::path::{Path, PathBuf};

use tagpin_formats::{EditSite, FileKind, Finding, Status, Warning, apply_edits, scan};
use tagpin_reference::Digest;

fn corpus() -> Option<PathBuf> {
    let path = std::env::var_os("TAGPIN_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/cozystack"),
        PathBuf::from,
    );
    path.join("SOURCE.md").is_file().then_some(path)
}

#[expect(
    clippy::print_stderr,
    reason = "a skipped corpus test must say so visibly"
)]
fn skip() {
    eprintln!("corpus: ../shared/corpus/cozystack not found (set TAGPIN_CORPUS); skipping");
}

fn scan_file(root: &Path, relative: &str) -> (String, Vec<Finding>) {
    let path = root.join(relative);
    let text = std::fs::read_to_string(&path).unwrap();
    let kind = FileKind::detect(&path).unwrap();
    let findings = scan(Path::new(relative), kind, &text).unwrap();
    (text, findings)
}

fn at(findings: &[Finding], line: usize) -> &Finding {
    findings
        .iter()
        .find(|f| f.line == line)
        .unwrap_or_else(|| panic!("no finding at line {line}: {findings:#?}"))
}

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn cozystack() {
    let Some(root) = corpus() else {
        skip();
        return;
    };
    let packages = "packages/";
    // cozystack #3578: the seven `:latest` references, floating at their lines.
    let latest = [
        (
            "system/kubevirt-csi-node/templates/deploy.yaml",
            [204, 228].as_slice(),
        ),
        ("apps/kubernetes/templates/csi/deploy.yaml", &[82, 112, 141]),
        ("apps/http-cache/templates/haproxy/deployment.yaml", &[34]),
        ("apps/tcp-balancer/templates/deployment.yaml", &[35]),
    ];
    let mut count = 0;
    let mut insertions = 0;
    for (file, lines) in latest {
        let (text, findings) = scan_file(&root, &format!("{packages}{file}"));
        let mut edits = Vec::new();
        for &line in lines {
            let finding = at(&findings, line);
            assert_eq!(finding.status, Status::Floating, "{file}:{line}");
            assert_eq!(finding.reference.as_ref().unwrap().tag(), Some("latest"));
            assert_eq!(
                finding.warnings,
                [Warning::LatestPullsAlways],
                "{file}:{line}"
            );
            count += 1;
            // `pin --latest pull-policy`: the next line is `imagePullPolicy: IfNotPresent` at
            // the `image` key's column, and nothing else changes.
            if let Some(edit) = finding.pull_policy() {
                insertions += 1;
                edits.push(edit.clone());
            }
        }
        let new = apply_edits(&text, &edits).unwrap();
        let old_lines: Vec<&str> = text.lines().collect();
        let new_lines: Vec<&str> = new.lines().collect();
        assert_eq!(new_lines.len(), old_lines.len() + edits.len(), "{file}");
        let mut shift = 0;
        for (index, old) in old_lines.iter().enumerate() {
            assert_eq!(new_lines[index + shift], *old, "{file}:{}", index + 1);
            if lines.contains(&(index + 1)) {
                shift += 1;
                let column = old.find("image:").unwrap();
                assert_eq!(
                    new_lines[index + shift],
                    format!("{}imagePullPolicy: IfNotPresent", " ".repeat(column)),
                    "{file}:{}",
                    index + 1
                );
            }
        }
    }
    assert_eq!(count, 7);
    assert_eq!(insertions, 7, "every #3578 reference takes the pull policy");

    let (_, findings) = scan_file(&root, "packages/system/flux-plunger/values.yaml");
    assert_eq!(at(&findings, 1).status, Status::Pinned);

    for (file, line) in [
        ("system/kubevirt-csi-node/templates/deploy.yaml", 166),
        ("apps/mariadb/templates/mariadb.yaml", 11),
        ("apps/rabbitmq/templates/rabbitmq.yaml", 10),
        ("apps/kubernetes/templates/csi/deploy.yaml", 33),
    ] {
        let (_, findings) = scan_file(&root, &format!("{packages}{file}"));
        assert_eq!(
            at(&findings, line).status,
            Status::Templated,
            "{file}:{line}"
        );
    }

    // Split maps: pinned, with the digest going to the right scalar.
    let (text, findings) = scan_file(&root, "packages/system/cilium/values.yaml");
    let cilium = at(&findings, 25);
    assert_eq!(cilium.status, Status::Pinned);
    let EditSite::SplitDigest { span, .. } = &cilium.site else {
        panic!("{cilium:?}");
    };
    assert!(text[span.clone()].starts_with("sha256:136a7dff"));
    let (_, findings) = scan_file(&root, "packages/system/linstor/values.yaml");
    for line in [3, 15] {
        let finding = at(&findings, line);
        assert_eq!(finding.status, Status::Pinned);
        assert!(
            matches!(&finding.site, EditSite::SplitTag { tag, .. } if tag.starts_with("v1.6.0@sha256:"))
        );
    }
    let (_, findings) = scan_file(&root, "packages/system/keycloak-operator/values.yaml");
    let keycloak = at(&findings, 4);
    assert_eq!(keycloak.status, Status::Pinned);
    assert!(
        keycloak
            .text
            .starts_with("ghcr.io/cozystack/cozystack/keycloak-operator:latest@")
    );
    assert!(matches!(&keycloak.site, EditSite::SplitTag { .. }));

    // The CRLF file is scanned.
    let (text, findings) = scan_file(
        &root,
        "packages/system/kubeovn/charts/kube-ovn/templates/vpc-nat-config.yaml",
    );
    assert!(text.contains("\r\n"));
    assert!(!findings.is_empty());

    // Over every file: nothing on a comment line or a schema property, and pinning every
    // editable reference changes no byte outside the edits.
    let digest = Digest::parse(&format!("sha256:{}", "0123456789abcdef".repeat(4))).unwrap();
    let mut files = Vec::new();
    all_files(&root, &mut files);
    let mut total = 0;
    for path in files {
        let Some(kind) = FileKind::detect(&path) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let findings = scan(&path, kind, &text).unwrap();
        total += findings.len();
        let lines: Vec<&str> = text.lines().collect();
        for finding in &findings {
            let line = lines[finding.line - 1].trim_start();
            assert!(!line.starts_with('#'), "{}: {finding:?}", path.display());
            assert!(!line.contains("type:"), "{}: {finding:?}", path.display());
        }
        let mut edits: Vec<_> = findings.iter().filter_map(|f| f.edit(&digest)).collect();
        let pinned = apply_edits(&text, &edits).unwrap();
        edits.sort_by_key(|e| e.span.start);
        let mut old = 0;
        let mut new = 0;
        for edit in &edits {
            let kept = edit.span.start - old;
            assert_eq!(text[old..edit.span.start], pinned[new..new + kept]);
            new += kept + edit.replacement.len();
            old = edit.span.end;
        }
        assert_eq!(text[old..], pinned[new..]);
    }
    assert!(total > 50, "{total} findings over the corpus");
}
