//! Bad input: each file is reported with its path and the run goes on over the rest.

use crate::context::{TestContext, error, reference};

const GOOD: &str = "spec:\n  containers:\n    - name: app\n      image: nginx:1.27\n";

/// A repository with one good file and every kind of bad one.
fn bad_repo() -> TestContext {
    let context = TestContext::new();
    context
        .write("good.yaml", GOOD)
        .write("binary.yaml", b"image: nginx\0\x01\x02")
        .write("latin1.yaml", b"image: caf\xe9:1\n")
        .write(
            "invalid.yaml",
            "spec:\n  containers:\n    - image: [unclosed\n  bad: : :\n",
        )
        .write("empty.yaml", "")
        // A symlink loop: walking `loop/` leads back to the root.
        .symlink(".", "loop")
        // Unreadable even for root: a dangling link, and a file whose read fails (EIO).
        .symlink("missing.yaml", "dangling.yaml")
        .symlink("/proc/self/mem", "mem.yaml");
    let big = std::fs::File::create(context.path("big.yaml")).unwrap();
    big.set_len(10 * 1024 * 1024 + 1).unwrap();
    context
}

#[test]
fn every_bad_file_is_reported_and_the_run_goes_on() {
    let context = bad_repo();
    let run = context.run(["scan", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    for (path, message) in [
        ("binary.yaml", "not read: binary file (NUL byte at byte 12)"),
        (
            "latin1.yaml",
            "not read: not UTF-8 (invalid byte at byte 10)",
        ),
        (
            "big.yaml",
            "not read: 10485761 bytes is over the 10 MiB limit",
        ),
        (
            "dangling.yaml",
            "cannot read: No such file or directory (os error 2) (a dangling symlink?)",
        ),
        ("mem.yaml", "cannot read: Input/output error (os error 5)"),
    ] {
        assert_eq!(error(&doc, path), message, "{run}");
        assert!(run.stderr.contains(path), "stderr names {path}: {run}");
    }
    assert!(error(&doc, "loop").starts_with("symlink loop"), "{run}");
    assert_eq!(
        doc["skipped"],
        serde_json::json!([{"path": "empty.yaml", "reason": "empty file"}])
    );
    assert!(!run.stderr.contains("panicked"), "{run}");
}

#[test]
fn a_file_that_does_not_parse_is_an_error_and_the_rest_is_scanned() {
    let context = bad_repo();
    let run = context.run(["scan", "--format", "json"]);
    let doc = run.json();
    let message = error(&doc, "invalid.yaml");
    assert!(message.starts_with("cannot parse as yaml: "), "{run}");
    let good = reference(&doc, "good.yaml", 4);
    assert_eq!(good["status"], "floating");
}

#[test]
fn check_fails_on_files_it_cannot_vouch_for() {
    let context = bad_repo();
    let run = context.run(["check"]);
    run.assert_code(1);
    assert!(
        run.stderr
            .contains("error: binary.yaml: not read: binary file"),
        "{run}"
    );
    assert!(run.stderr.contains("check failed"), "{run}");
}

#[test]
fn an_empty_file_is_a_skip_note_not_an_error() {
    let context = TestContext::new();
    context.write("empty.yaml", "").write("Dockerfile", "");
    let run = context.run(["check"]);
    run.assert_code(0);
    assert!(run.stderr.contains("check passed"), "{run}");
    assert!(
        run.stderr.contains("2 files skipped (-v lists them)"),
        "{run}"
    );
    let run = context.run(["check", "-v"]);
    assert!(
        run.stderr.contains("note: empty.yaml: skipped: empty file"),
        "{run}"
    );
    let run = context.run(["check", "-q"]);
    assert_eq!(run.stderr, "", "{run}");
}

#[test]
fn crlf_files_with_bad_bytes_are_reported_the_same() {
    let context = TestContext::new();
    context
        .write("latin1.yaml", b"spec:\r\n  image: caf\xe9:1\r\n")
        .write("binary.yaml", b"spec:\r\n\0");
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    assert_eq!(
        error(&doc, "latin1.yaml"),
        "not read: not UTF-8 (invalid byte at byte 19)"
    );
    assert_eq!(
        error(&doc, "binary.yaml"),
        "not read: binary file (NUL byte at byte 7)"
    );
}
