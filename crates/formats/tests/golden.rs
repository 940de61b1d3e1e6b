//! Golden tests: every fixture's findings and its content after pinning every editable
//! reference, as insta snapshots; each fixture also run with CRLF line endings and a BOM.

use std::fmt::Write as _;
use std::path::Path;

use tagpin_formats::{FileKind, Finding, Status, apply_edits, scan};
use tagpin_reference::Digest;

const FIXTURES: &[(&str, FileKind)] = &[
    ("chart/values.yaml", FileKind::Yaml),
    ("chart/templates/deployment.yaml", FileKind::HelmTemplate),
    ("manifests.yaml", FileKind::Yaml),
    ("flux/releases.yaml", FileKind::Yaml),
    ("docker-compose.yml", FileKind::Compose),
    ("workflow.yml", FileKind::Workflow),
    ("action.yml", FileKind::Workflow),
    (".gitlab-ci.yml", FileKind::GitlabCi),
    ("ci/cloudbuild.yaml", FileKind::CloudBuild),
    ("overlays/prod/kustomization.yaml", FileKind::Kustomize),
    (".devcontainer/devcontainer.json", FileKind::Devcontainer),
    ("Dockerfile", FileKind::Dockerfile),
    ("Containerfile.windows", FileKind::Dockerfile),
    ("build.sh", FileKind::Shell),
    ("Makefile", FileKind::Shell),
];

fn digest() -> Digest {
    Digest::parse(&format!("sha256:{}", "abcdef01".repeat(8))).unwrap()
}

fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = write!(
            out,
            "{}:{} {:?} {:?} {:?}",
            f.line, f.column, f.status, f.text, f.site
        );
        if !f.warnings.is_empty() {
            let _ = write!(out, " {:?}", f.warnings);
        }
        if let Some(reason) = f.unproven() {
            let _ = write!(out, " unproven: {reason:?}");
        }
        out.push('\n');
    }
    out
}

/// The edit the binary writes by default: none for an unproven split map.
fn written(finding: &Finding) -> Option<tagpin_formats::Edit> {
    finding
        .unproven()
        .is_none()
        .then(|| finding.edit(&digest()))
        .flatten()
}

fn pin_all(text: &str, findings: &[Finding]) -> String {
    let edits: Vec<_> = findings.iter().filter_map(written).collect();
    apply_edits(text, &edits).unwrap()
}

fn read(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// What must not change when line endings or a BOM change.
fn shape(findings: &[Finding]) -> Vec<(usize, usize, Status, String)> {
    findings
        .iter()
        .map(|f| (f.line, f.column, f.status, f.text.clone()))
        .collect()
}

#[test]
fn fixtures() {
    for &(name, kind) in FIXTURES {
        let path = Path::new(name);
        let text = read(name);
        assert!(!text.contains('\r'), "{name}: fixtures are written with LF");
        let findings = scan(path, kind, &text).unwrap();
        let snapshot = name.replace('/', "__");
        insta::assert_snapshot!(format!("{snapshot}-findings"), render(&findings));
        let pinned = pin_all(&text, &findings);
        insta::assert_snapshot!(format!("{snapshot}-pinned"), pinned);

        // Pinning is idempotent and everything it wrote is now pinned with that digest.
        let rescanned = scan(path, kind, &pinned).unwrap();
        assert_eq!(rescanned.len(), findings.len(), "{name}");
        let edits: Vec<_> = findings.iter().filter_map(written).collect();
        for (before, after) in findings.iter().zip(&rescanned) {
            // Lines move only by the lines inserted above (a Kustomize `digest:` key).
            let inserted: usize = edits
                .iter()
                .filter(|e| e.span.start < before.span.start)
                .map(|e| e.replacement.matches('\n').count())
                .sum();
            assert_eq!(before.line + inserted, after.line, "{name}");
            if written(before).is_some() {
                assert_eq!(after.status, Status::Pinned, "{name}: {}", after.text);
                assert_eq!(after.reference.as_ref().unwrap().digest(), Some(&digest()));
            }
            assert_eq!(written(after), None, "{name}: {}", after.text);
        }

        // CRLF: the same findings, and the same result with CRLF line endings.
        let crlf = text.replace('\n', "\r\n");
        let crlf_findings = scan(path, kind, &crlf).unwrap();
        assert_eq!(shape(&crlf_findings), shape(&findings), "{name} with CRLF");
        for f in &crlf_findings {
            assert!(!crlf[f.span.clone()].contains('\r'), "{name}: {f:?}");
        }
        let crlf_pinned = pin_all(&crlf, &crlf_findings);
        assert_eq!(
            crlf_pinned,
            pinned.replace('\n', "\r\n"),
            "{name} with CRLF"
        );

        // A BOM: the same lines and columns, spans shifted by its three bytes.
        let bom = format!("\u{feff}{text}");
        let bom_findings = scan(path, kind, &bom).unwrap();
        assert_eq!(shape(&bom_findings), shape(&findings), "{name} with a BOM");
        for (with, without) in bom_findings.iter().zip(&findings) {
            assert_eq!(with.span.start, without.span.start + 3, "{name}");
        }
        assert_eq!(pin_all(&bom, &bom_findings), format!("\u{feff}{pinned}"));
    }
}
