//! The config file: discovery, unknown keys, `ignore`, `include`/`exclude`, inline ignores.

use crate::context::{TestContext, reference, summary};
use crate::fixtures::COMPOSE;

#[test]
fn unknown_key_is_exit_2_naming_the_key_and_the_file() {
    let context = TestContext::new();
    context
        .write("compose.yaml", COMPOSE)
        .write(".tagpin.yaml", "exclude: [vendor]\nignroe:\n  - busybox\n");
    let run = context.run(["check"]);
    run.assert_code(2);
    assert_eq!(run.stdout, "", "{run}");
    assert!(run.stderr.contains("unknown field `ignroe`"), "{run}");
    assert!(run.stderr.contains(".tagpin.yaml"), "{run}");
    assert!(
        run.stderr.starts_with("error: invalid config file `"),
        "{run}"
    );
}

#[test]
fn config_is_found_in_the_first_path() {
    let context = TestContext::new();
    context
        .write("repo/compose.yaml", COMPOSE)
        .write("repo/.tagpin.yaml", "ignore: ['postgres:*']\n");
    context.run(["check", "repo"]).assert_code(0);
    context
        .run(["check", "repo", "--config", "/dev/null"])
        .assert_code(1);
    let run = context.run_command(
        context
            .command(["check", "repo", "-v"])
            .env("TAGPIN_CONFIG", context.path("repo/.tagpin.yaml")),
    );
    run.assert_code(0);
    assert!(run.stderr.contains("note: config file: "), "{run}");
}

#[test]
fn ignore_patterns_mark_references_ignored() {
    let context = TestContext::new();
    context
        .write("compose.yaml", COMPOSE)
        .write(
            "deploy.yaml",
            "spec:\n  containers:\n    - image: ghcr.io/acme/api:dev\n    - image: ghcr.io/acme/api:1.0\n",
        )
        .write(".tagpin.yaml", "ignore:\n  - 'ghcr.io/acme/*:dev'\n  - docker.io/library/postgres\n");
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    assert_eq!(reference(&doc, "compose.yaml", 6)["status"], "ignored");
    assert_eq!(reference(&doc, "deploy.yaml", 3)["status"], "ignored");
    assert_eq!(reference(&doc, "deploy.yaml", 4)["status"], "floating");
    let run = context.run(["check"]);
    run.assert_code(1);
    assert_eq!(
        run.stdout, "deploy.yaml:4:14: floating image reference ghcr.io/acme/api:1.0\n",
        "{run}"
    );
    assert!(run.stderr.contains("2 ignored"), "{run}");
}

#[test]
fn inline_ignore_comment() {
    for crlf in [false, true] {
        let context = TestContext::new();
        let text = "spec:\n  containers:\n    - image: alpine:3.20 # tagpin:ignore\n    - image: alpine:3.19\n";
        context.write_all(&[("pod.yaml", text)], crlf);
        let doc = context
            .run(["scan", "--format", "json"])
            .assert_code(0)
            .json();
        assert_eq!(
            summary(&doc),
            [
                (
                    "pod.yaml".to_owned(),
                    3,
                    "ignored".to_owned(),
                    "alpine:3.20".to_owned()
                ),
                (
                    "pod.yaml".to_owned(),
                    4,
                    "floating".to_owned(),
                    "alpine:3.19".to_owned()
                ),
            ],
            "crlf: {crlf}"
        );
    }
}

#[test]
fn exclude_accepts_files_that_cannot_be_read() {
    let context = TestContext::new();
    context
        .write("vendor/blob.yaml", b"\0")
        .write("tests/fixtures/broken.yaml", b"\xff")
        .write("ok.yaml", "image: nginx:1.27@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72\n");
    context.run(["check"]).assert_code(1);
    context.write(
        ".tagpin.yaml",
        "exclude:\n  - vendor\n  - tests/fixtures/**\n",
    );
    let run = context.run(["check"]);
    run.assert_code(0);
    // CRLF config files read the same.
    context.write(
        ".tagpin.yaml",
        "exclude:\r\n  - vendor\r\n  - tests/fixtures/**\r\n",
    );
    context.run(["check"]).assert_code(0);
}

#[test]
fn include_limits_what_is_read() {
    let context = TestContext::new();
    context
        .write("charts/bad.yaml", b"\0")
        .write("deploy/bad.yaml", b"\0")
        .write(".tagpin.yaml", "include: ['charts/**']\n");
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let errors: Vec<&str> = doc["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(errors, ["charts/bad.yaml"]);
}

#[test]
fn bad_globs_in_the_config_are_exit_2() {
    let context = TestContext::new();
    context.write(".tagpin.yaml", "ignore: ['ghcr.io/[acme']\n");
    let run = context.run(["scan"]);
    run.assert_code(2);
    assert!(run.stderr.contains("ghcr.io/[acme"), "{run}");
    assert!(run.stderr.contains(".tagpin.yaml"), "{run}");
}

#[test]
fn an_ignored_reference_has_no_check_warning() {
    let context = TestContext::new();
    context
        .write(
            "deploy.yaml",
            "spec:\n  containers:\n    - image: quay.io/acme/app:latest\n",
        )
        .write(".tagpin.yaml", "ignore: ['quay.io/acme/*']\n");
    let run = context.run(["check"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "", "{run}");
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let found = reference(&doc, "deploy.yaml", 3);
    assert_eq!(found["status"], "ignored");
    assert_eq!(
        found["warnings"][0]["code"], "latest-pulls-always",
        "scan still reports it"
    );
}
