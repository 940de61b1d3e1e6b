//! Snapshots of every output format, from hand-made reports (no scanning involved).

use tagpin_formats::{EditSite, FileKind, Finding, Status, Warning};
use tagpin_reference::ImageReference;

use super::{github, sarif, text, write_json};
use crate::commands::check::CheckReport;
use crate::commands::scan::{FileFindings, ScanReport};
use crate::commands::{FileError, Skipped};
use crate::settings::Verbosity;

const DIGEST: &str = "sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72";

/// A finding as a scanner makes it: the reference parsed from `text` unless it is templated
/// or a stage name.
fn finding(line: usize, column: usize, kind: FileKind, text: &str, status: Status) -> Finding {
    let reference = match status {
        Status::Templated | Status::Local => None,
        _ => Some(ImageReference::parse(text).unwrap()),
    };
    Finding {
        kind,
        line,
        column,
        span: 0..text.len(),
        text: text.to_owned(),
        status,
        reference,
        site: EditSite::Inline,
        warnings: Vec::new(),
        resolve: None,
        tag_source: None,
        extras: None,
    }
}

fn file(display: &str, findings: Vec<Finding>) -> FileFindings {
    FileFindings {
        display: display.to_owned(),
        findings,
    }
}

fn report() -> ScanReport {
    let mut latest = finding(
        10,
        18,
        FileKind::Yaml,
        "quay.io/acme/app:latest",
        Status::Floating,
    );
    latest.warnings = vec![Warning::LatestPullsAlways];
    // A chart's values map whose tag is the chart's appVersion and that has no digest key.
    let mut chart = finding(
        3,
        15,
        FileKind::Yaml,
        "ghcr.io/acme/api:1.4.2",
        Status::Floating,
    );
    chart.tag_source = Some(tagpin_formats::chart::TagSource::AppVersion);
    chart.site = EditSite::Unsupported {
        reason: "the tag comes from the chart's appVersion (`1.4.2`), and the map has no digest \
                 key"
        .to_owned(),
    };
    let files = vec![
        file(
            "Dockerfile",
            vec![
                finding(2, 32, FileKind::Dockerfile, "golang:1.22", Status::Floating),
                finding(
                    5,
                    6,
                    FileKind::Dockerfile,
                    &format!("gcr.io/distroless/static:nonroot@{DIGEST}"),
                    Status::Pinned,
                ),
                finding(6, 13, FileKind::Dockerfile, "build", Status::Local),
            ],
        ),
        file(
            "charts/api/templates/deployment.yaml",
            vec![finding(
                6,
                19,
                FileKind::HelmTemplate,
                "{{ .Values.image }}",
                Status::Templated,
            )],
        ),
        file("charts/api/values.yaml", vec![chart]),
        file(
            "compose.yaml",
            vec![finding(
                6,
                12,
                FileKind::Compose,
                "postgres:16",
                Status::Ignored,
            )],
        ),
        file("deploy/app.yaml", vec![latest]),
    ];
    ScanReport {
        files,
        errors: vec![FileError {
            path: "bad, file:1.yaml".to_owned(),
            message: "not read: binary file (NUL byte at byte 3)\n50%".to_owned(),
        }],
        skipped: vec![Skipped {
            path: "empty.yaml".to_owned(),
            reason: "empty file".to_owned(),
        }],
        files_scanned: 5,
    }
}

/// [`report`] without its floating references.
fn report_without_floating() -> ScanReport {
    let mut scan = report();
    for file in &mut scan.files {
        file.findings.retain(|f| f.status != Status::Floating);
    }
    scan.files.retain(|file| !file.findings.is_empty());
    scan
}

fn render(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn scan_table() {
    insta::assert_snapshot!(render(|out| text::scan_table(out, &report(), false)));
}

#[test]
fn scan_table_in_color() {
    let colored = render(|out| text::scan_table(out, &report(), true));
    assert!(colored.contains("\x1b[33mfloating   \x1b[0m"), "{colored}");
}

#[test]
fn scan_json() {
    insta::assert_snapshot!(render(|out| write_json(out, &report())));
}

/// The names `scan --format json` writes for a kind and a status are `serde`'s.
#[test]
fn kind_and_status_names_are_serdes() {
    use tagpin_formats::{FileKind, Status};
    for kind in [
        FileKind::Yaml,
        FileKind::Compose,
        FileKind::Workflow,
        FileKind::GitlabCi,
        FileKind::CloudBuild,
        FileKind::Kustomize,
        FileKind::Devcontainer,
        FileKind::HelmTemplate,
        FileKind::Dockerfile,
        FileKind::Shell,
        FileKind::Custom,
    ] {
        assert_eq!(
            serde_json::to_string(&kind).unwrap(),
            format!("\"{}\"", kind.name())
        );
    }
    for status in Status::ALL {
        assert_eq!(
            serde_json::to_string(&status).unwrap(),
            format!("\"{}\"", text::status_name(status))
        );
    }
}

/// `scan --format json` writes its rows by hand, and prints what `serde_json` prints.
#[test]
fn scan_json_by_hand_is_serde_json_pretty() {
    let empty = ScanReport {
        files: Vec::new(),
        errors: Vec::new(),
        skipped: Vec::new(),
        files_scanned: 0,
    };
    let mut unusual = report();
    // Strings that need escaping, a digest-only reference, a row without a reference.
    unusual.files[0].findings[0].text = "golang:1.22 \"quoted\" \\ \t tab".to_owned();
    unusual.files[0].display = "Dockerfile \u{e9}\u{1}".to_owned();
    unusual.files.push(file(
        "pinned.yaml",
        vec![finding(
            1,
            8,
            FileKind::Yaml,
            &format!("nginx@{DIGEST}"),
            Status::DigestOnly,
        )],
    ));
    // Enough rows for several chunks, written by two threads in turn, the last one short.
    let mut large = report();
    while large.len() < 3 * 512 + 7 {
        let more = report();
        large.files.extend(more.files);
    }
    large.files[1].findings[0].line = usize::MAX;
    large.files[2].findings[0].column = 0;
    for report in [report(), report_without_floating(), empty, unusual, large] {
        let expected = serde_json::to_string_pretty(&report).unwrap();
        assert_eq!(
            render(|out| super::scan_json::write(out, &report)),
            expected
        );
    }
}

#[test]
fn scan_diagnostics() {
    let report = report();
    for (verbosity, name) in [
        (Verbosity::Quiet, "quiet"),
        (Verbosity::Normal, "normal"),
        (Verbosity::Verbose, "verbose"),
    ] {
        let diagnostics = text::Diagnostics {
            verbosity,
            color: false,
        };
        let rendered = render(|out| {
            diagnostics.files(out, &report.errors, &report.skipped)?;
            diagnostics.scan_summary(out, &report)
        });
        insta::assert_snapshot!(format!("scan_diagnostics_{name}"), rendered);
    }
}

#[test]
fn check_text() {
    let report = CheckReport::from_scan(report());
    let diagnostics = text::Diagnostics {
        verbosity: Verbosity::Normal,
        color: false,
    };
    let stdout = render(|out| text::check_lines(out, &report, false));
    let stderr = render(|out| {
        diagnostics.files(out, &report.errors, &report.skipped)?;
        diagnostics.check_summary(out, &report)
    });
    insta::assert_snapshot!(format!("--- stdout\n{stdout}--- stderr\n{stderr}"));
}

#[test]
fn check_passed_summary() {
    let mut scan = report_without_floating();
    scan.errors.clear();
    let report = CheckReport::from_scan(scan);
    assert!(report.summary.passed);
    let diagnostics = text::Diagnostics {
        verbosity: Verbosity::Normal,
        color: false,
    };
    insta::assert_snapshot!(render(|out| diagnostics.check_summary(out, &report)), @"check passed: no floating references (4 references in 5 files, 1 ignored); 1 file skipped (-v lists them)");
}

#[test]
fn check_github() {
    let report = CheckReport::from_scan(report());
    insta::assert_snapshot!(render(|out| github::check(out, &report)));
}

#[test]
fn check_sarif() {
    let report = CheckReport::from_scan(report());
    let sarif = sarif::check(&report);
    insta::assert_snapshot!(
        serde_json::to_string_pretty(&sarif)
            .unwrap()
            .replace(env!("CARGO_PKG_VERSION"), "[version]")
    );
}

#[test]
fn check_json() {
    let report = CheckReport::from_scan(report());
    insta::assert_snapshot!(render(|out| write_json(out, &report)));
}

#[test]
fn errors_with_causes() {
    let error =
        anyhow::anyhow!("unknown field `ignroe`").context("invalid config file `.tagpin.yaml`");
    insta::assert_snapshot!(render(|out| text::error(out, &error, false)), @r"
    error: invalid config file `.tagpin.yaml`
      caused by: unknown field `ignroe`
    ");
}

fn online_report() -> CheckReport {
    use crate::commands::check::{OnlineProblem, OnlineReport};
    let scan = report_without_floating();
    let problem =
        |line, error: Option<&'static str>, current: Option<&str>, message: &str| OnlineProblem {
            path: "Dockerfile".to_owned(),
            line,
            column: 6,
            text: format!("gcr.io/distroless/static:nonroot@{DIGEST}"),
            digest: DIGEST.to_owned(),
            current_digest: current.map(ToOwned::to_owned),
            error,
            message: message.to_owned(),
        };
    let current = format!("sha256:{}", "b".repeat(64));
    CheckReport::from_scan(scan).with_online(OnlineReport {
        checked: 4,
        verified: 0,
        stale: vec![problem(
            5,
            None,
            Some(&current),
            &format!("gcr.io/distroless/static:nonroot now points to {current}"),
        )],
        missing: vec![problem(
            7,
            Some("not-found"),
            None,
            "http://127.0.0.1:5000/v2/distroless/static/manifests/nonroot: not found (MANIFEST_UNKNOWN)",
        )],
        unresolved: vec![problem(
            9,
            Some("timeout"),
            None,
            "https://gcr.io/v2/distroless/static/manifests/nonroot: no response within 30s",
        )],
        missing_platform: vec![problem(
            11,
            Some("missing-platform"),
            Some(&current),
            &format!("{current} (gcr.io/distroless/static:nonroot) lacks linux/arm64 (platforms in force: linux/amd64, linux/arm64)"),
        )],
        platforms_unchanged: Vec::new(),
        stats: tagpin_registry::Stats::default(),
    })
}

#[test]
fn check_online_every_format() {
    let report = online_report();
    assert!(!report.summary.passed);
    let diagnostics = text::Diagnostics {
        verbosity: Verbosity::Normal,
        color: false,
    };
    let text = render(|out| {
        text::check_lines(out, &report, false)?;
        diagnostics.check_summary(out, &report)
    });
    let github = render(|out| github::check(out, &report));
    let sarif = serde_json::to_string_pretty(&sarif::check(&report))
        .unwrap()
        .replace(env!("CARGO_PKG_VERSION"), "[version]");
    let json = render(|out| write_json(out, &report.online));
    insta::assert_snapshot!(format!(
        "--- text\n{text}--- github\n{github}--- json (online)\n{json}--- sarif\n{sarif}\n"
    ));
}
