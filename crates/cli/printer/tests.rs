//! Snapshots of every output format, from hand-made reports (no scanning involved).

use tagpin_formats::{FileKind, Status, Warning};

use super::{github, sarif, text, write_json};
use crate::commands::check::CheckReport;
use crate::commands::scan::{ReferenceRow, ScanReport, WarningRow};
use crate::commands::{FileError, Skipped};
use crate::settings::Verbosity;

const DIGEST: &str = "sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72";

fn row(
    path: &str,
    line: usize,
    column: usize,
    kind: FileKind,
    text: &str,
    status: Status,
) -> ReferenceRow {
    ReferenceRow {
        path: path.to_owned(),
        line,
        column,
        kind,
        text: text.to_owned(),
        status,
        registry: None,
        repository: None,
        tag: None,
        digest: None,
        warnings: Vec::new(),
        tag_source: None,
        unwritable: None,
    }
}

fn report() -> ScanReport {
    let mut latest = row(
        "deploy/app.yaml",
        10,
        18,
        FileKind::Yaml,
        "quay.io/acme/app:latest",
        Status::Floating,
    );
    latest.registry = Some("quay.io".to_owned());
    latest.repository = Some("acme/app".to_owned());
    latest.tag = Some("latest".to_owned());
    latest.warnings = vec![WarningRow {
        code: Warning::LatestPullsAlways,
        message: Warning::LatestPullsAlways.message(),
    }];
    let mut pinned = row(
        "Dockerfile",
        5,
        6,
        FileKind::Dockerfile,
        &format!("gcr.io/distroless/static:nonroot@{DIGEST}"),
        Status::Pinned,
    );
    pinned.registry = Some("gcr.io".to_owned());
    pinned.repository = Some("distroless/static".to_owned());
    pinned.tag = Some("nonroot".to_owned());
    pinned.digest = Some(DIGEST.to_owned());
    // A chart's values map whose tag is the chart's appVersion and that has no digest key.
    let mut chart = row(
        "charts/api/values.yaml",
        3,
        15,
        FileKind::Yaml,
        "ghcr.io/acme/api:1.4.2",
        Status::Floating,
    );
    chart.registry = Some("ghcr.io".to_owned());
    chart.repository = Some("acme/api".to_owned());
    chart.tag = Some("1.4.2".to_owned());
    chart.tag_source = Some(tagpin_formats::chart::TagSource::AppVersion);
    chart.unwritable = Some(
        "the tag comes from the chart's appVersion (`1.4.2`) and the chart renders no digest \
         key for this map"
            .to_owned(),
    );
    ScanReport {
        references: vec![
            row(
                "Dockerfile",
                2,
                32,
                FileKind::Dockerfile,
                "golang:1.22",
                Status::Floating,
            ),
            pinned,
            row(
                "Dockerfile",
                6,
                13,
                FileKind::Dockerfile,
                "build",
                Status::Local,
            ),
            row(
                "charts/api/templates/deployment.yaml",
                6,
                19,
                FileKind::HelmTemplate,
                "{{ .Values.image }}",
                Status::Templated,
            ),
            chart,
            row(
                "compose.yaml",
                6,
                12,
                FileKind::Compose,
                "postgres:16",
                Status::Ignored,
            ),
            latest,
        ],
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
    let mut scan = report();
    scan.references.retain(|r| r.status != Status::Floating);
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
    let mut scan = report();
    scan.references.retain(|r| r.status != Status::Floating);
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
