//! `tagpin check`: exit codes, output formats, the stdout/stderr split.

use std::io::Read as _;
use std::process::Stdio;

use crate::context::TestContext;
use crate::fixtures::{COMPOSE, DIGEST_A, REPO};
use crate::registry::{Flavour, Registry};

fn pinned_only() -> TestContext {
    let context = TestContext::new();
    context.write(
        "deploy.yaml",
        format!("spec:\n  containers:\n    - name: app\n      image: nginx:1.27@{DIGEST_A}\n"),
    );
    context
}

#[test]
fn passes_with_exit_0_when_everything_is_pinned() {
    let run = pinned_only().run(["check"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "", "{run}");
    assert!(run.stderr.starts_with("check passed"), "{run}");
}

#[test]
fn fails_with_exit_1_on_floating_references() {
    let context = TestContext::new();
    context.write_all(REPO, false);
    let run = context.run(["check", "."]);
    run.assert_code(1);
    for line in [
        "Dockerfile:2:32: floating image reference golang:1.22",
        "compose.yaml:6:12: floating image reference postgres:16",
        "deploy/app.yaml:15:19: floating image reference registry.example.com:5000/team/app:2.0",
        "charts/api/templates/deployment.yaml:21:18: floating image reference busybox",
    ] {
        assert!(
            run.stdout.lines().any(|l| l == line),
            "missing `{line}`:\n{run}"
        );
    }
    // Not floating: pinned, digest-only, local, templated.
    for text in ["distroless", "envoyproxy", "acme/web:dev", "{{"] {
        assert!(
            !run.stdout
                .lines()
                .any(|l| l.contains("floating image reference") && l.contains(text)),
            "{text}:\n{run}"
        );
    }
    assert!(run.stderr.contains("check failed: "), "{run}");
    assert!(!run.stdout.contains("check failed"), "{run}");
}

#[test]
fn kubernetes_latest_warning_shows_and_does_not_fail() {
    let context = TestContext::new();
    context.write(
        "deploy.yaml",
        format!(
            "spec:\n  containers:\n    - name: app\n      image: quay.io/org/app:latest@{DIGEST_A}\n"
        ),
    );
    let run = context.run(["check"]);
    run.assert_code(0);
    assert!(
        run.stdout.starts_with(&format!(
            "deploy.yaml:4:14: warning: quay.io/org/app:latest@{DIGEST_A}: tag `latest` without imagePullPolicy"
        )),
        "{run}"
    );
    assert!(run.stderr.contains("1 warning"), "{run}");
}

#[test]
fn exit_2_on_usage_errors() {
    let context = pinned_only();
    for args in [
        &["check", "--format", "xml"][..],
        &["scan", "--no-such-flag"],
        &["scan", "missing-dir"],
        &["scan", "--mirror", "quay.io"],
        &["scan", "--config", "missing.yaml"],
    ] {
        let run = context.run(args);
        run.assert_code(2);
        assert_eq!(run.stdout, "", "{args:?}: {run}");
        assert!(run.stderr.contains("error"), "{args:?}: {run}");
    }
}

/// A mirror typed with a password is refused without echoing it (clap would have printed the
/// rejected value, so `--mirror` is parsed in the settings step).
#[test]
fn a_mirror_with_a_password_is_refused_without_echoing_it() {
    let run = pinned_only().run([
        "scan",
        "--mirror",
        "quay.io=bob:canary-s3cret@mirror.example",
    ]);
    run.assert_code(2);
    assert!(run.stderr.contains("invalid --mirror"), "{run}");
    assert!(run.stderr.contains("<redacted>@mirror.example"), "{run}");
    assert!(!run.stderr.contains("canary-s3cret"), "{run}");
    assert!(!run.stdout.contains("canary-s3cret"), "{run}");
}

/// `--online` against a real registry: the pinned digest is stale until the file carries the
/// tag's current one.
#[test]
fn online_fails_on_a_stale_digest_and_passes_on_the_current_one() {
    let context = pinned_only();
    let mut registry = Registry::start();
    let current = registry.push("docker.io/library/nginx:1.27", Flavour::Image);
    let mirror = registry.mirror_args(["docker.io"]);
    let mut args = vec!["check".to_owned(), "--online".to_owned()];
    args.extend(mirror);

    let run = context.run(&args);
    run.assert_code(1);
    assert_eq!(
        run.stdout,
        format!(
            "deploy.yaml:4:14: stale digest nginx:1.27@{DIGEST_A}: docker.io/library/nginx:1.27 now points to {current}\n"
        ),
        "{run}"
    );
    assert!(
        run.stderr.starts_with("check failed: 1 stale digest"),
        "{run}"
    );

    context.write(
        "deploy.yaml",
        format!("spec:\n  containers:\n    - name: app\n      image: nginx:1.27@{current}\n"),
    );
    let run = context.run(&args);
    run.assert_code(0);
    assert!(
        run.stderr.starts_with(
            "check passed: no floating references, no stale or missing digests (1 reference in 1 file, 1 verified online)"
        ),
        "{run}"
    );
}

#[test]
fn help_and_version_exit_0_on_stdout() {
    let context = TestContext::new();
    let run = context.run(["--help"]);
    run.assert_code(0);
    assert!(run.stdout.contains("Usage: tagpin"), "{run}");
    let run = context.run(["--version"]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("tagpin "), "{run}");
}

#[test]
fn github_annotations() {
    let context = TestContext::new();
    context
        .write("compose.yaml", COMPOSE)
        .write("bad.yaml", b"\0")
        .write(
            "deploy.yaml",
            "spec:\n  containers:\n    - name: app\n      image: quay.io/org/app:latest\n",
        );
    let run = context.run(["check", "--format", "github"]);
    run.assert_code(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines.contains(&"::error file=compose.yaml,line=6,col=12,title=floating image reference::postgres:16 is a floating image reference: it does not record which image runs; pin it to a digest"),
        "{run}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with(
            "::warning file=deploy.yaml,line=4,col=14,title=imagePullPolicy defaults to Always::quay.io/org/app:latest: tag `latest`"
        )),
        "{run}"
    );
    assert!(
        lines.contains(&"::error file=bad.yaml,title=file not checked::not read: binary file (NUL byte at byte 0)"),
        "{run}"
    );
}

#[test]
fn github_annotations_for_unreadable_files() {
    let context = TestContext::new();
    context.write("bad.yaml", b"\0");
    let run = context.run(["check", "--format", "github"]);
    run.assert_code(1);
    assert_eq!(
        run.stdout,
        "::error file=bad.yaml,title=file not checked::not read: binary file (NUL byte at byte 0)\n"
    );
}

#[test]
fn sarif() {
    let context = TestContext::new();
    context
        .write("compose.yaml", COMPOSE)
        .write("bad.yaml", b"\0");
    let run = context.run(["check", "--format", "sarif"]);
    run.assert_code(1);
    let doc = run.json();
    assert_eq!(doc["version"], "2.1.0");
    let sarif_run = &doc["runs"][0];
    assert_eq!(sarif_run["tool"]["driver"]["name"], "tagpin");
    let results = sarif_run["results"].as_array().unwrap();
    let floating = results
        .iter()
        .find(|r| r["ruleId"] == "floating-image-reference")
        .unwrap_or_else(|| panic!("{run}"));
    assert_eq!(floating["level"], "error");
    let location = &floating["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "compose.yaml");
    assert_eq!(location["region"]["startLine"], 6);
    assert_eq!(location["region"]["startColumn"], 12);
    assert!(results.iter().any(|r| r["ruleId"] == "file-not-checked"
        && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.yaml"));
}

#[test]
fn sarif_and_json_without_findings_are_valid_documents() {
    let context = pinned_only();
    let run = context.run(["check", "--format", "sarif"]);
    run.assert_code(0);
    assert_eq!(run.json()["runs"][0]["results"], serde_json::json!([]));
    let run = context.run(["check", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    assert_eq!(doc["summary"]["passed"], true);
    assert_eq!(doc["errors"], serde_json::json!([]));
}

#[test]
fn check_json_summary() {
    let context = TestContext::new();
    context.write("compose.yaml", COMPOSE);
    let doc = context
        .run(["check", "--format", "json"])
        .assert_code(1)
        .json();
    assert_eq!(
        doc["summary"],
        serde_json::json!({
            "passed": false, "files": 1, "references": 2, "floating": 1, "ignored": 0,
            "warnings": 0, "errors": 0, "stale": 0, "missing": 0, "unresolved": 0,
            "missing_platform": 0,
        })
    );
}

/// `tagpin check --format github | head -1`: the reader goes away; that is not an error.
#[test]
fn a_broken_pipe_is_not_an_error() {
    let context = TestContext::new();
    for i in 0..3000 {
        context.write(&format!("bad/file-{i:04}.yaml"), b"\0");
    }
    let mut child = context
        .command(["check", "--format", "github"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0_u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
