//! `tagpin pin` end to end against a real registry: the fixture repository
//! (`tests/fixtures/pin-repo`: every file kind) pinned through `--mirror` flags, compared with
//! golden files (`tests/fixtures/pin-repo.expected`, pushed digests written as
//! `<digest:KEY>`); idempotence, refresh, 404s, a kill between writes, and a file changed
//! between the scan and the write.
//!
//! `TAGPIN_BLESS=1 cargo test --test it pin::` rewrites the golden files from this run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use crate::context::{Run, TestContext};
use crate::registry::{Flavour, Registry};

/// Every tag the fixture resolves, normalised, and how it is pushed.
const IMAGES: &[(&str, Flavour)] = &[
    ("docker.io/docker/dockerfile:1.7", Flavour::Image),
    ("docker.io/library/alpine:3.20", Flavour::Image),
    ("docker.io/library/busybox:1.36", Flavour::OciIndex),
    ("docker.io/library/busybox:latest", Flavour::Image),
    ("docker.io/library/golang:1.22", Flavour::DockerList),
    ("docker.io/library/nginx:1.27", Flavour::DockerList),
    ("docker.io/library/node:20", Flavour::Image),
    ("docker.io/library/postgres:16", Flavour::Image),
    ("docker.io/library/redis:7", Flavour::Image),
    ("docker.io/nicolaka/netshoot:latest", Flavour::Image),
    ("gcr.io/distroless/static:nonroot", Flavour::OciIndex),
    ("ghcr.io/acme/demo:1.4.2", Flavour::Image),
    ("ghcr.io/acme/migrate:2.1", Flavour::Image),
    ("ghcr.io/acme/worker:1.4.2", Flavour::Image),
    ("quay.io/prometheus/node-exporter:v1.8.2", Flavour::Image),
    ("quay.io/prometheus/statsd-exporter:v0.27.1", Flavour::Image),
];

const REGISTRIES: [&str; 4] = ["docker.io", "gcr.io", "ghcr.io", "quay.io"];

pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every file under `dir`, by path relative to it (`/`-separated), with its bytes.
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(root, &path, out);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(dir, dir, &mut out);
    out
}

/// Copies every file under `from` into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for (relative, bytes) in tree(from) {
        let path = to.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

fn mtimes(dir: &Path) -> BTreeMap<String, SystemTime> {
    tree(dir)
        .into_keys()
        .map(|relative| {
            let mtime = std::fs::metadata(dir.join(&relative))
                .unwrap()
                .modified()
                .unwrap();
            (relative, mtime)
        })
        .collect()
}

/// `text` with every pushed digest written as `<digest:KEY>`.
fn placeholders(text: &str, pushed: &BTreeMap<String, String>) -> String {
    let text = pushed.iter().fold(text.to_owned(), |text, (key, digest)| {
        text.replace(digest.as_str(), &format!("<digest:{key}>"))
    });
    // A chart whose template adds `sha256:` holds the hex digits alone.
    pushed.iter().fold(text, |text, (key, digest)| {
        text.replace(hex(digest), &format!("<hex:{key}>"))
    })
}

fn hex(digest: &str) -> &str {
    digest.strip_prefix("sha256:").expect("a sha256 digest")
}

/// `text` with every `<digest:KEY>` replaced by the digest pushed for KEY.
fn expand(text: &str, pushed: &BTreeMap<String, String>) -> String {
    let expanded = pushed.iter().fold(text.to_owned(), |text, (key, digest)| {
        text.replace(&format!("<digest:{key}>"), digest)
            .replace(&format!("<hex:{key}>"), hex(digest))
    });
    assert!(
        !expanded.contains("<digest:") && !expanded.contains("<hex:"),
        "a placeholder for a tag not pushed:\n{expanded}"
    );
    expanded
}

/// With `TAGPIN_BLESS` set, rewrites the golden tree `name` from `root`, digests as
/// placeholders.
pub fn bless(root: &Path, name: &str, pushed: &BTreeMap<String, String>) {
    if std::env::var_os("TAGPIN_BLESS").is_none() {
        return;
    }
    let golden = fixture_dir(name);
    let _ = std::fs::remove_dir_all(&golden);
    for (path, bytes) in tree(root) {
        let text = placeholders(&String::from_utf8(bytes).unwrap(), pushed);
        let target = golden.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, text).unwrap();
    }
}

/// The golden tree with the digests of `pushed`.
fn expected(pushed: &BTreeMap<String, String>) -> BTreeMap<String, Vec<u8>> {
    golden("pin-repo.expected", pushed)
}

/// The golden tree `name` with the digests of `pushed`.
pub fn golden(name: &str, pushed: &BTreeMap<String, String>) -> BTreeMap<String, Vec<u8>> {
    tree(&fixture_dir(name))
        .into_iter()
        .map(|(path, bytes)| {
            let text = String::from_utf8(bytes).unwrap();
            (path, expand(&text, pushed).into_bytes())
        })
        .collect()
}

/// Asserts the repository equals `expected`, file by file, showing the first difference.
#[track_caller]
pub fn assert_tree(root: &Path, expected: &BTreeMap<String, Vec<u8>>) {
    let actual = tree(root);
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the files differ"
    );
    for (path, bytes) in expected {
        let got = &actual[path];
        assert!(
            got == bytes,
            "{path} differs from the golden file\n--- expected\n{}\n--- actual\n{}",
            String::from_utf8_lossy(bytes).replace('\r', "\\r"),
            String::from_utf8_lossy(got).replace('\r', "\\r")
        );
    }
}

/// A copy of the fixture repository and a registry holding every image it names.
struct Setup {
    context: TestContext,
    registry: Registry,
}

impl Setup {
    fn new(proxy: bool) -> Self {
        let context = TestContext::new();
        copy_tree(&fixture_dir("pin-repo"), context.root());
        let mut registry = Registry::start();
        if proxy {
            registry = registry.with_proxy();
        }
        for (key, flavour) in IMAGES {
            registry.push(key, *flavour);
        }
        Self { context, registry }
    }

    fn args(&self, args: &[&str]) -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        all.extend(self.registry.mirror_args(REGISTRIES));
        // The fixture's chart renders: its values edits are proven with real Helm.
        all.extend(crate::helm::args());
        all
    }

    fn run(&self, args: &[&str]) -> Run {
        self.context.run(self.args(args))
    }
}

#[test]
fn pin_writes_the_golden_files_and_is_idempotent() {
    let mut setup = Setup::new(false);
    let root = setup.context.root().to_owned();
    let original = tree(&root);

    setup.run(&["check", "."]).assert_code(1);

    // Without --write: the diff on stdout, nothing written.
    let dry = setup.run(&["pin", "."]);
    dry.assert_code(0);
    assert!(
        dry.stdout
            .contains("--- a/docker-compose.yml\n+++ b/docker-compose.yml\n"),
        "{dry}"
    );
    assert!(
        dry.stdout
            .contains("\n-      image: busybox\r\n+      image: busybox:latest@sha256:"),
        "{dry}"
    );
    assert!(dry.stdout.contains("\\ No newline at end of file"), "{dry}");
    assert!(
        dry.stderr.contains("pinned 21, refreshed 1, unchanged 0, unresolved 0 (29 references in 9 files); skipped: 1 digest-only, 4 templated, 2 local; 2 warnings; 7 files would change (--write writes them)"),
        "{dry}"
    );
    assert!(
        dry.stderr.contains("warning: k8s/manifests.yaml:27:18: busybox:latest: tag `latest` without imagePullPolicy"),
        "{dry}"
    );
    assert_eq!(tree(&root), original, "pin without --write changed files");

    let write = setup.run(&["pin", ".", "--write"]);
    write.assert_code(0);
    assert_eq!(write.stdout, "", "{write}");
    assert!(write.stderr.contains("wrote 7 files"), "{write}");

    bless(&root, "pin-repo.expected", setup.registry.pushed());
    assert_tree(&root, &expected(setup.registry.pushed()));

    // A second run changes nothing: same bytes, same modification times.
    let before = mtimes(&root);
    let bytes = tree(&root);
    std::thread::sleep(Duration::from_millis(20));
    let again = setup.run(&["pin", ".", "--write"]);
    again.assert_code(0);
    assert!(
        again.stderr.contains("pinned 0, refreshed 0, unchanged 22"),
        "{again}"
    );
    assert!(again.stderr.contains("wrote 0 files"), "{again}");
    assert_eq!(tree(&root), bytes);
    assert_eq!(mtimes(&root), before);

    setup.run(&["check", "."]).assert_code(0);
    setup.run(&["check", ".", "--online"]).assert_code(0);

    // The tag moves: check --online sees it, pin moves exactly that digest everywhere.
    let old = setup.registry.pushed()["docker.io/library/busybox:1.36"].clone();
    let new = setup
        .registry
        .push("docker.io/library/busybox:1.36", Flavour::OciIndex);
    assert_ne!(old, new);
    let check = setup.run(&["check", ".", "--online"]);
    check.assert_code(1);
    let stale: Vec<&str> = check
        .stdout
        .lines()
        .filter(|line| line.contains(": stale digest busybox:1.36@"))
        .collect();
    assert_eq!(stale.len(), 3, "{check}");
    let refreshed = setup.run(&["pin", ".", "--write", "--format", "json"]);
    refreshed.assert_code(0);
    let doc = refreshed.json();
    let edits = doc["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 3, "{refreshed}");
    for edit in edits {
        assert_eq!(edit["change"], "refreshed", "{edit}");
        assert_eq!(edit["old_digest"], old.as_str());
        assert_eq!(edit["new_digest"], new.as_str());
        assert_eq!(edit["tag"], "1.36");
    }
    assert_tree(&root, &expected(setup.registry.pushed()));
}

#[test]
fn pin_json_reports_every_edit() {
    let setup = Setup::new(false);
    let run = setup.run(&["pin", ".", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    let edits = doc["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 22);
    let pushed = setup.registry.pushed();
    let compose_db = edits
        .iter()
        .find(|e| e["path"] == "docker-compose.yml" && e["line"] == 12)
        .unwrap();
    assert_eq!(compose_db["kind"], "compose");
    assert_eq!(compose_db["change"], "refreshed");
    assert_eq!(compose_db["image"], "postgres");
    assert_eq!(compose_db["tag"], "16");
    assert_eq!(
        compose_db["old_digest"],
        format!("sha256:{}", "0123456789abcdef".repeat(4))
    );
    assert_eq!(
        compose_db["new_digest"],
        pushed["docker.io/library/postgres:16"].as_str()
    );
    let implicit = edits
        .iter()
        .find(|e| e["path"] == "k8s/manifests.yaml" && e["line"] == 8)
        .unwrap();
    assert_eq!(implicit["text"], "busybox");
    assert_eq!(implicit["tag"], "latest");
    assert_eq!(implicit["change"], "pinned");
    assert_eq!(implicit["old_digest"], serde_json::Value::Null);
    assert_eq!(doc["unresolved"], serde_json::json!([]));
    assert_eq!(doc["written"], serde_json::json!([]));
    assert_eq!(doc["summary"]["files_changed"], 7);
    // One HEAD per distinct tag: 16 tags for 22 edits.
    assert_eq!(doc["stats"]["lookups"], 16);
    assert_eq!(doc["stats"]["requests"]["HEAD"]["200"], 16);
    assert_eq!(doc["stats"]["deduplicated"], 6);
}

#[test]
fn verbose_prints_the_resolver_figures() {
    let setup = Setup::new(false);
    let run = setup.run(&["pin", ".", "-v"]);
    run.assert_code(0);
    // The GETs: the compose file's made-up pinned digest, which the registry has not got, and
    // the new image it moved to (its manifest and config), asked for beside the lookups as
    // soon as the tag resolved, before tagpin knew the old one is gone.
    assert!(
        run.stderr.contains("note: registry: 16 tags looked up, 6 saved by de-duplication; requests: GET 200: 2, GET 404: 1, HEAD 200: 16; 0 tokens fetched; 0 retries"),
        "{run}"
    );
}

#[test]
fn not_found_references_are_listed_and_the_rest_is_written() {
    let setup = Setup::new(true);
    setup.registry.proxy().answer_not_found("/v2/ghcr.io/acme/");
    let root = setup.context.root().to_owned();
    let original = tree(&root);

    let run = setup.run(&["pin", ".", "--write"]);
    run.assert_code(1);
    for location in [
        "chart/values.yaml:5:15: cannot resolve ghcr.io/acme/demo:1.4.2 (not-found)",
        "chart/values.yaml:25:17: cannot resolve ghcr.io/acme/worker:1.4.2 (not-found)",
        "k8s/manifests.yaml:22:28: cannot resolve ghcr.io/acme/migrate:2.1 (not-found)",
        "scripts/deploy.sh:12:14: cannot resolve ghcr.io/acme/demo:1.4.2 (not-found)",
    ] {
        assert!(
            run.stderr.contains(&format!("error: {location}: http://")),
            "{location}\n{run}"
        );
    }
    assert!(run.stderr.contains("unresolved 4"), "{run}");

    // Every other reference is written; the lines of the unresolved ones are as they were.
    let golden = expected(setup.registry.pushed());
    let unresolved_lines: &[(&str, usize)] = &[
        ("chart/values.yaml", 6),
        ("chart/values.yaml", 27),
        ("k8s/manifests.yaml", 22),
        ("scripts/deploy.sh", 12),
    ];
    let mut want = golden.clone();
    for (path, line) in unresolved_lines {
        let old = String::from_utf8(original[*path].clone()).unwrap();
        let new = String::from_utf8(want[*path].clone()).unwrap();
        let mut lines: Vec<&str> = new.split_inclusive('\n').collect();
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        lines[line - 1] = old_lines[line - 1];
        want.insert((*path).to_owned(), lines.concat().into_bytes());
    }
    assert_tree(&root, &want);

    // JSON lists them too, with the error kind and message.
    let json = setup.run(&["pin", ".", "--format", "json"]);
    json.assert_code(1);
    let doc = json.json();
    let unresolved = doc["unresolved"].as_array().unwrap();
    assert_eq!(unresolved.len(), 4, "{json}");
    for entry in unresolved {
        assert_eq!(entry["error"], "not-found", "{entry}");
        assert!(
            entry["message"].as_str().unwrap().ends_with(": not found"),
            "{entry}"
        );
    }
    assert_eq!(
        doc["edits"],
        serde_json::json!([]),
        "everything else is pinned already"
    );
}

#[test]
fn killed_between_writes_leaves_every_file_old_or_new() {
    let setup = Setup::new(false);
    let root = setup.context.root().to_owned();
    let original = tree(&root);
    let golden = expected(setup.registry.pushed());
    let output = setup
        .context
        .command(setup.args(&["pin", ".", "--write"]))
        .env(tagpin::env::ABORT_AFTER_WRITES, "1")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_eq!(output.status.code(), None, "killed by SIGABRT, not exited");

    let after = tree(&root);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        original.keys().collect::<Vec<_>>(),
        "no temporary file left"
    );
    let (mut new, mut old) = (0, 0);
    for (path, bytes) in &after {
        if *bytes == golden[path] && *bytes != original[path] {
            new += 1;
        } else if *bytes == original[path] {
            old += 1;
        } else {
            panic!("{path} is neither the old nor the new version");
        }
    }
    assert_eq!(new, 1, "exactly one file was written before the abort");
    assert_eq!(old, after.len() - 1);

    // Running again finishes the job.
    setup.run(&["pin", ".", "--write"]).assert_code(0);
    assert_tree(&root, &golden);
}

#[test]
fn a_file_changed_after_the_scan_is_not_overwritten() {
    let setup = Setup::new(false);
    let root = setup.context.root().to_owned();
    let pause = tempfile::tempdir().unwrap();
    let marker = pause.path().join("paused");
    let child = setup
        .context
        .command(setup.args(&["pin", ".", "--write"]))
        .env(tagpin::env::PAUSE_BEFORE_WRITES, &marker)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "pin never reached its writes");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Someone edits the compose file while pin is between its scan and its writes.
    let compose = root.join("docker-compose.yml");
    let edited = format!(
        "{}# edited meanwhile\n",
        std::fs::read_to_string(&compose).unwrap()
    );
    std::fs::write(&compose, &edited).unwrap();
    std::fs::remove_file(&marker).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error: docker-compose.yml: changed on disk since it was scanned; not overwritten"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("wrote 6 files, 1 not written"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&compose).unwrap(), edited);
    let mut want = expected(setup.registry.pushed());
    want.insert("docker-compose.yml".to_owned(), edited.into_bytes());
    assert_tree(&root, &want);
}

#[test]
fn check_online_reports_missing_digests() {
    let setup = Setup::new(true);
    setup.run(&["pin", ".", "--write"]).assert_code(0);
    setup
        .registry
        .proxy()
        .answer_not_found("/v2/quay.io/prometheus/node-exporter/");
    for (format, needle) in [
        (
            "text",
            "chart/values.yaml:13:17: missing image quay.io/prometheus/node-exporter:v1.8.2@sha256:",
        ),
        (
            "github",
            "::error file=chart/values.yaml,line=13,col=17,title=missing image::quay.io/prometheus/node-exporter:v1.8.2@sha256:",
        ),
        ("json", "\"missing\": ["),
        ("sarif", "\"ruleId\": \"missing-image\""),
    ] {
        let run = setup.run(&["check", ".", "--online", "--format", format]);
        run.assert_code(1);
        assert!(run.stdout.contains(needle), "{format}: {needle}\n{run}");
    }
}

/// A file reached twice — through overlapping PATHs, or through a symbolic link to a file also
/// walked — is read, counted and written once: it used to be rewritten twice, the second write
/// then failing with "changed on disk since it was scanned" and exit code 1.
#[test]
fn a_file_reached_twice_is_pinned_once() {
    let context = TestContext::new();
    let mut registry = Registry::start();
    let digest = registry.push("docker.io/library/nginx:1.27", Flavour::Image);
    context
        .write("chart/values.yaml", "image: nginx:1.27\n")
        .symlink("values.yaml", "chart/prod.yaml");
    let mut args = vec!["pin", "chart", ".", "--write", "--format", "json"];
    let mirrors = registry.mirror_args(["docker.io"]);
    args.extend(mirrors.iter().map(String::as_str));
    let run = context.run(&args);
    run.assert_code(0);
    let doc = run.json();
    assert_eq!(doc["summary"]["references"], 1, "{run}");
    assert_eq!(doc["summary"]["files_written"], 1, "{run}");
    assert_eq!(doc["not_written"], serde_json::json!([]), "{run}");
    assert_eq!(
        std::fs::read_to_string(context.path("chart/values.yaml")).unwrap(),
        format!("image: nginx:1.27@{digest}\n")
    );
    assert!(
        std::fs::symlink_metadata(context.path("chart/prod.yaml"))
            .unwrap()
            .is_symlink()
    );
    // scan and check see it once too.
    let scan = context.run(["scan", "chart", ".", "--format", "json"]);
    assert_eq!(
        scan.json()["references"].as_array().unwrap().len(),
        1,
        "{scan}"
    );
}

/// `-q` says nothing on stderr but errors: no summary line when everything was done; when a
/// reference is left unresolved, its error and the summary.
#[test]
fn quiet_pin_prints_only_errors() {
    let context = TestContext::new();
    let mut registry = Registry::start();
    registry.push("docker.io/library/nginx:1.27", Flavour::Image);
    context.write("a.yaml", "image: nginx:1.27\n");
    let mirrors = registry.mirror_args(["docker.io"]);
    let with_mirrors = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        all.extend(mirrors.iter().cloned());
        all
    };

    let run = context.run(with_mirrors(&["pin", "-q"]));
    run.assert_code(0);
    assert!(run.stdout.contains("+image: nginx:1.27@sha256:"), "{run}");
    assert_eq!(run.stderr, "", "{run}");
    let run = context.run(with_mirrors(&["pin", "-q", "--write"]));
    run.assert_code(0);
    assert_eq!(run.stderr, "", "{run}");

    context.write("b.yaml", "image: nginx:9\n");
    let run = context.run(with_mirrors(&["pin", "-q", "--write"]));
    run.assert_code(1);
    assert!(
        run.stderr
            .starts_with("error: b.yaml:1:8: cannot resolve nginx:9 (not-found)"),
        "{run}"
    );
    assert!(run.stderr.contains("unresolved 1"), "{run}");
    assert_eq!(
        std::fs::read_to_string(context.path("b.yaml")).unwrap(),
        "image: nginx:9\n"
    );
}
