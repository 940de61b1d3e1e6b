//! `tagpin scan`: the JSON contract, the walk, stdout and stderr.

use serde_json::json;

use crate::context::{TestContext, assert_statuses, error, reference, summary};
use crate::fixtures::{DIGEST_A, DIGEST_B, EXPECTED, REPO};

fn repo(crlf: bool) -> TestContext {
    let context = TestContext::new();
    context.write_all(REPO, crlf);
    context
}

#[test]
fn json_has_exactly_the_contract_fields() {
    let context = repo(false);
    let run = context.run(["scan", ".", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    let top: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // serde_json's map is sorted: these are sets.
    assert_eq!(top, ["errors", "references", "skipped"]);
    let first_key = run.stdout.lines().nth(1).unwrap_or_default().trim();
    assert!(
        first_key.starts_with("\"references\""),
        "references come first: {run}"
    );
    assert_eq!(doc["errors"], json!([]), "{run}");
    let references = doc["references"].as_array().unwrap();
    assert!(!references.is_empty(), "{run}");
    for reference in references {
        // `tag_source` (a chart's values) and `unwritable` (why pin cannot write it) are
        // additions that show only where they apply.
        let keys: Vec<&str> = reference
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|key| !["tag_source", "unwritable"].contains(key))
            .collect();
        assert_eq!(
            keys,
            [
                "column",
                "digest",
                "kind",
                "line",
                "path",
                "registry",
                "repository",
                "status",
                "tag",
                "text",
                "warnings",
            ]
        );
    }
}

#[test]
fn references_of_a_realistic_repo() {
    let context = repo(false);
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    for (path, line, column, status, text) in EXPECTED {
        let found = reference(&doc, path, *line);
        assert_eq!(found["column"], *column, "{path}:{line}: {found}");
        assert_eq!(found["status"], *status, "{path}:{line}: {found}");
        assert_eq!(found["text"], *text, "{path}:{line}: {found}");
    }
}

#[test]
fn field_values() {
    let context = repo(false);
    let doc = context
        .run(["scan", ".", "--format", "json"])
        .assert_code(0)
        .json();

    let busybox = reference(&doc, "charts/api/templates/deployment.yaml", 21);
    assert_eq!(
        *busybox,
        json!({
            "path": "charts/api/templates/deployment.yaml", "line": 21, "column": 18,
            "kind": "helm-template", "text": "busybox", "status": "floating",
            "registry": "docker.io", "repository": "library/busybox", "tag": "latest",
            "digest": null, "warnings": [],
        })
    );

    let app = reference(&doc, "deploy/app.yaml", 15);
    assert_eq!(app["kind"], "yaml");
    assert_eq!(app["registry"], "registry.example.com:5000");
    assert_eq!(app["repository"], "team/app");
    assert_eq!(app["tag"], "2.0");

    let envoy = reference(&doc, "deploy/app.yaml", 17);
    assert_eq!(envoy["digest"], DIGEST_B);
    assert_eq!(
        envoy["tag"],
        json!(null),
        "a digest-only reference has no tag"
    );

    let distroless = reference(&doc, "Dockerfile", 7);
    assert_eq!(distroless["kind"], "dockerfile");
    assert_eq!(distroless["tag"], "nonroot");
    assert_eq!(distroless["digest"], DIGEST_A);

    assert_eq!(
        reference(&doc, ".github/workflows/ci.yml", 8)["kind"],
        "workflow"
    );
    assert_eq!(reference(&doc, "compose.yaml", 6)["kind"], "compose");
    assert_eq!(reference(&doc, "scripts/deploy.sh", 3)["kind"], "shell");

    let templated = reference(&doc, "charts/api/templates/deployment.yaml", 13);
    assert_eq!(templated["status"], "templated");
    assert_eq!(templated["registry"], json!(null));

    let statsd = reference(&doc, "charts/api/templates/deployment.yaml", 17);
    assert_eq!(
        statsd["warnings"][0]["code"], "latest-pulls-always",
        "{statsd}"
    );

    let uses = reference(&doc, ".github/workflows/ci.yml", 14);
    assert_eq!(uses["status"], "floating");
    assert!(
        uses["text"].as_str().unwrap().ends_with("alpine:3.20"),
        "{uses}"
    );
}

#[test]
fn helm_values_split_map() {
    let context = repo(false);
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let split = doc["references"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["text"] == "ghcr.io/acme/api:1.4.2")
        .unwrap_or_else(|| panic!("no split-map reference: {doc:#}"));
    assert_eq!(split["path"], "charts/api/values.yaml");
    assert_eq!(split["status"], "floating");
    assert_eq!(split["repository"], "acme/api");
    assert_eq!(split["tag"], "1.4.2");
}

#[test]
fn sorted_by_path_then_line() {
    let context = repo(false);
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let order: Vec<(String, u64)> = summary(&doc)
        .into_iter()
        .map(|(path, line, _, _)| (path, line))
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    assert!(order.len() >= EXPECTED.len(), "{order:?}");
}

#[test]
fn gitignore_is_respected_github_is_scanned_git_is_skipped() {
    let context = repo(false);
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let paths: Vec<String> = summary(&doc).into_iter().map(|(path, ..)| path).collect();
    assert!(
        paths.iter().any(|p| p == ".github/workflows/ci.yml"),
        "{paths:?}"
    );
    for absent in ["build/generated.yaml", ".git/manifest.yaml", "README.md"] {
        assert!(
            !paths.iter().any(|p| p == absent),
            "{absent} was read: {paths:?}"
        );
    }
}

/// The files of a Kubernetes test suite's directory (KUTTL's step files beside an
/// `01-assert.yaml`, a Chainsaw test beside its `chainsaw-test.yaml`, a Kyverno CLI test and
/// the directories below it) name images as the test applies or expects them: skipped, with
/// the reason, so `check` passes and nothing there is written. The rest of the tree is read.
#[test]
fn test_suite_directories_are_skipped_with_their_reason() {
    let context = TestContext::new();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: busybox:latest\n";
    context.write_all(
        &[
            ("deploy/pod.yaml", pod),
            ("tests/e2e/jobs/00-install.yaml", pod),
            ("tests/e2e/jobs/01-assert.yaml", pod),
            ("tests/e2e/other/00-install.yaml", pod),
            (
                "policies/latest/chainsaw/chainsaw-test.yaml",
                "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\nspec:\n  steps:\n  - try:\n    - apply:\n        file: bad-pod.yaml\n",
            ),
            ("policies/latest/chainsaw/bad-pod.yaml", pod),
            ("policies/latest/cli/kyverno-test.yaml", "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\n"),
            ("policies/latest/cli/resources/pod.yaml", pod),
        ],
        false,
    );
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let paths: Vec<String> = summary(&doc).into_iter().map(|(path, ..)| path).collect();
    // A KUTTL directory without an assert or errors file is not told apart from any other.
    assert_eq!(
        paths,
        ["deploy/pod.yaml", "tests/e2e/other/00-install.yaml"]
    );
    let skipped: Vec<(&str, &str)> = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    let runners: Vec<(&str, &str)> = skipped
        .iter()
        .map(|(path, reason)| (*path, reason.split(" test's file").next().unwrap()))
        .collect();
    assert_eq!(
        runners,
        [
            ("policies/latest/chainsaw/bad-pod.yaml", "a Chainsaw"),
            ("policies/latest/cli/resources/pod.yaml", "a Kyverno CLI"),
            ("tests/e2e/jobs/00-install.yaml", "a KUTTL"),
            ("tests/e2e/jobs/01-assert.yaml", "a KUTTL"),
        ],
        "{doc}"
    );
    assert!(
        skipped[2]
            .1
            .contains("`01-assert.yaml` marks the test's directory"),
        "{doc}"
    );
    context.run(["check", "policies"]).assert_code(0);
}

/// The walk, without depending on what the scanners find: unreadable files are reported only
/// where tagpin looks.
#[test]
fn walk_reports_only_files_it_reads() {
    let context = TestContext::new();
    context
        .write(".gitignore", "build/\n")
        .write("build/bad.yaml", b"\0")
        .write(".git/bad.yaml", b"\0")
        .write("notes.txt", b"\0")
        .write(".github/workflows/bad.yml", b"\0")
        .write("charts/x/templates/bad.yaml", b"\0");
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let paths: Vec<&str> = doc["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [".github/workflows/bad.yml", "charts/x/templates/bad.yaml"]
    );
}

#[test]
fn crlf_gives_the_same_references_at_the_same_positions() {
    let lf = repo(false)
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let crlf = repo(true)
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    assert_eq!(lf, crlf);
    assert!(!lf["references"].as_array().unwrap().is_empty());
}

#[test]
fn paths_are_relative_to_the_path_given() {
    let context = repo(false);
    let doc = context
        .run(["scan", "charts", "--format", "json"])
        .assert_code(0)
        .json();
    let paths: Vec<String> = summary(&doc).into_iter().map(|(path, ..)| path).collect();
    assert!(paths.iter().any(|p| p == "api/values.yaml"), "{paths:?}");
    assert!(paths.iter().all(|p| p.starts_with("api/")), "{paths:?}");

    // Several PATHs: each shows its PATH, so they stay apart.
    let doc = context
        .run(["scan", "charts", "deploy", "--format", "json"])
        .assert_code(0)
        .json();
    let paths: Vec<String> = summary(&doc).into_iter().map(|(path, ..)| path).collect();
    assert!(
        paths.iter().any(|p| p == "charts/api/values.yaml"),
        "{paths:?}"
    );
    assert!(paths.iter().any(|p| p == "deploy/app.yaml"), "{paths:?}");
}

#[test]
fn an_explicit_file_is_read_as_given() {
    let context = TestContext::new();
    context
        .write(".gitignore", "*.yaml\nnotes.txt\n")
        .write(
            "pod.yaml",
            "spec:\n  containers:\n    - image: nginx:1.27\n",
        )
        .write("notes.txt", "kubectl run x --image=nginx:1.27\n");
    let doc = context
        .run(["scan", "pod.yaml", "notes.txt", "--format", "json"])
        .assert_code(0)
        .json();
    assert_eq!(
        summary(&doc),
        [
            (
                "notes.txt".to_owned(),
                1,
                "floating".to_owned(),
                "nginx:1.27".to_owned()
            ),
            (
                "pod.yaml".to_owned(),
                3,
                "floating".to_owned(),
                "nginx:1.27".to_owned()
            ),
        ]
    );
}

#[test]
fn text_output_is_a_table_on_stdout_and_a_summary_on_stderr() {
    let context = repo(false);
    let run = context.run(["scan"]);
    run.assert_code(0);
    let mut lines = run.stdout.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("LOCATION"), "{run}");
    assert!(header.ends_with("REFERENCE"), "{run}");
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("compose.yaml:6:12 ")
                && l.contains("floating")
                && l.ends_with("postgres:16")),
        "{run}"
    );
    assert!(
        !run.stdout.contains("\x1b["),
        "no color when stdout is not a terminal"
    );
    assert!(run.stderr.contains(" references in "), "{run}");
    assert!(!run.stdout.contains(" references in "), "{run}");
}

#[test]
fn json_stdout_is_only_the_document() {
    let context = repo(false);
    context.write("bad.yaml", b"\0");
    let run = context.run(["scan", "--format", "json"]);
    run.assert_code(0);
    run.json();
    assert_eq!(
        error(&run.json(), "bad.yaml"),
        "not read: binary file (NUL byte at byte 0)"
    );
    assert!(
        run.stderr.contains("bad.yaml"),
        "errors are also told on stderr: {run}"
    );
}

#[test]
fn color_always_colors_and_no_color_does_not() {
    let context = TestContext::new();
    context.write("compose.yaml", crate::fixtures::COMPOSE);
    let run = context.run(["scan", "--color", "always"]);
    assert!(run.stdout.contains("\x1b["), "{run}");
    let run = context.run_command(
        context
            .command(["scan", "--color", "auto"])
            .env("NO_COLOR", "1"),
    );
    assert!(!run.stdout.contains("\x1b["), "{run}");
    let run = context.run_command(context.command(["scan"]).env("TAGPIN_COLOR", "always"));
    assert!(run.stdout.contains("\x1b["), "{run}");
}

/// Skaffold and `DevSpace` build their artifacts on each run and deploy the build in place of
/// every image of that name in the manifests, wherever those are: such images are `local` in
/// every file, whatever their tag; other images stay floating.
#[test]
fn images_a_dev_loop_builds_are_local_in_every_file() {
    let context = TestContext::new();
    context.write(
        "skaffold.yaml",
        "apiVersion: skaffold/v4beta11\nkind: Config\nbuild:\n  artifacts:\n    - image: us.gcr.io/ticketing/auth\n      context: auth\nmanifests:\n  rawYaml: [infra/k8s/*]\n",
    );
    context.write(
        "infra/k8s/auth-depl.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: auth\n          image: us.gcr.io/ticketing/auth:latest\n        - name: mongo\n          image: mongo:7\n",
    );
    context.write(
        "tools/devspace.yaml",
        "images:\n  api:\n    image: acme/api\n",
    );
    context.write(
        "k8s/api.yaml",
        "spec:\n  containers:\n    - image: docker.io/acme/api:dev\n",
    );
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let statuses: Vec<(String, String)> = doc["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["text"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("us.gcr.io/ticketing/auth:latest", "local"),
        ("mongo:7", "floating"),
        ("docker.io/acme/api:dev", "local"),
        ("us.gcr.io/ticketing/auth", "local"),
        ("acme/api", "local"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(text, status)| ((*text).to_owned(), (*status).to_owned()))
        .collect();
    assert_eq!(statuses, expected, "{doc:#}");
}

/// A compose service built in another file compose loads with it (the override file beside
/// the main one, a file its `extends` names) names what the build makes: `local`, in either
/// file; a service no file builds stays floating.
#[test]
fn a_compose_image_built_by_another_file_is_local() {
    for crlf in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                (
                    "docker-compose.yml",
                    "services:\n  web:\n    image: example/web:dev\n  worker:\n    extends:\n      file: base.yml\n      service: app-base\n    image: example/worker:dev\n  db:\n    image: postgres:16\n",
                ),
                ("docker-compose.override.yml", "services:\n  web:\n    build: .\n"),
                ("base.yml", "services:\n  app-base:\n    build:\n      context: .\n"),
            ],
            crlf,
        );
        let doc = context
            .run(["scan", ".", "--format", "json"])
            .assert_code(0)
            .json();
        let statuses: Vec<(String, String)> = summary(&doc)
            .into_iter()
            .map(|(_, _, status, text)| (text, status))
            .collect();
        assert_eq!(
            statuses,
            [
                ("example/web:dev".to_owned(), "local".to_owned()),
                ("example/worker:dev".to_owned(), "local".to_owned()),
                ("postgres:16".to_owned(), "floating".to_owned()),
            ],
            "crlf {crlf}"
        );
    }
}

/// A compose build argument that names an image is written only where the service's
/// Dockerfile uses it as a whole `FROM` image: `FROM ${PYTHON_IMAGE}-slim` would become no
/// reference, and a `RUN` that echoes it would see the digest too. An `image:` of the same
/// text is no argument, and stays writable.
#[test]
fn compose_build_arguments_are_written_only_where_their_dockerfile_uses_them_whole() {
    let context = TestContext::new();
    let compose = "services:\n  whole:\n    build:\n      context: whole\n      args:\n        PYTHON_IMAGE: python:3.12\n  suffix:\n    build:\n      context: suffix\n      args:\n        - PYTHON_IMAGE=python:3.11\n  plain:\n    image: python:3.11\n";
    context.write_all(
        &[
            ("docker-compose.yml", compose),
            (
                "whole/Dockerfile",
                "ARG PYTHON_IMAGE\nFROM ${PYTHON_IMAGE}\n",
            ),
            (
                "suffix/Dockerfile",
                "ARG PYTHON_IMAGE\nFROM ${PYTHON_IMAGE}-slim\n",
            ),
        ],
        false,
    );
    let doc = context
        .run(["scan", "--format", "json"])
        .assert_code(0)
        .json();
    let unwritable = |line| reference(&doc, "docker-compose.yml", line)["unwritable"].clone();
    assert_eq!(unwritable(6), serde_json::Value::Null, "{doc:#}");
    assert_eq!(unwritable(13), serde_json::Value::Null, "{doc:#}");
    assert_eq!(
        unwritable(11),
        "`suffix/Dockerfile` uses build argument PYTHON_IMAGE as more than a whole `FROM` image \
         (line 2): a digest here would reach that use too",
        "{doc:#}"
    );
}

/// What a compose file tells of the Dockerfiles its services build: a name its
/// `additional_contexts` gives is read from that context (`local` in the Dockerfile, whose
/// `docker-image://` value is the pulled image), and an image another service builds is the
/// build compose just made, in a script too. A Dockerfile no service builds, and another tag,
/// stay floating.
#[test]
fn a_dockerfile_reads_its_compose_contexts_and_sibling_builds_locally() {
    for crlf in [false, true] {
        let context = TestContext::new();
        let compose = "services:\n  base:\n    build: ./base\n    image: ghcr.io/acme/base:1\n  app:\n    build:\n      context: app\n      additional_contexts:\n        tools: service:tools\n        alpine: docker-image://alpine:3.19\n  tools:\n    build: ./tools\n";
        context.write_all(
            &[
                ("compose.yaml", compose),
                ("base/Dockerfile", "FROM debian:12\n"),
                (
                    "app/Dockerfile",
                    "FROM ghcr.io/acme/base:1\nCOPY --from=tools /bin/t /bin/t\nFROM alpine\nRUN --mount=type=bind,from=alpine:3.20,target=/x true\n",
                ),
                ("tools/Dockerfile", "FROM golang:1.23\n"),
                ("loose/Dockerfile", "FROM ghcr.io/acme/base:1\nCOPY --from=tools /a /a\n"),
                (
                    "test.sh",
                    "docker compose build\ndocker run --rm ghcr.io/acme/base:1 true\ndocker run --rm ghcr.io/acme/base:2 true\n",
                ),
            ],
            crlf,
        );
        let doc = context
            .run(["scan", ".", "--format", "json"])
            .assert_code(0)
            .json();
        let statuses = summary(&doc);
        let expected = [
            ("app/Dockerfile", 1, "local", "ghcr.io/acme/base:1"),
            ("app/Dockerfile", 2, "local", "tools"),
            ("app/Dockerfile", 3, "local", "alpine"),
            ("app/Dockerfile", 4, "floating", "alpine:3.20"),
            ("base/Dockerfile", 1, "floating", "debian:12"),
            ("compose.yaml", 4, "local", "ghcr.io/acme/base:1"),
            ("compose.yaml", 10, "floating", "alpine:3.19"),
            ("loose/Dockerfile", 1, "floating", "ghcr.io/acme/base:1"),
            ("loose/Dockerfile", 2, "floating", "tools"),
            ("test.sh", 2, "local", "ghcr.io/acme/base:1"),
            ("test.sh", 3, "floating", "ghcr.io/acme/base:2"),
            ("tools/Dockerfile", 1, "floating", "golang:1.23"),
        ];
        let expected: Vec<(String, u64, String, String)> = expected
            .iter()
            .map(|(p, l, s, t)| ((*p).to_owned(), *l, (*s).to_owned(), (*t).to_owned()))
            .collect();
        assert_eq!(statuses, expected, "crlf {crlf}: {doc:#}");
    }
}

/// A workflow or a GitLab pipeline that runs `docker compose build` then runs what it built:
/// those images are `local` (a digest would run the registry's image in place of the build).
/// Another tag, a service container, and a pipeline that runs no compose build stay floating.
#[test]
fn a_pipeline_that_builds_with_compose_runs_its_builds_locally() {
    let compose = "services:\n  base:\n    build: ./base\n    image: ghcr.io/acme/base:1\n";
    let workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    services:\n      db:\n        image: postgres:16\n    steps:\n      - run: docker compose build\n      - run: |\n          docker run --rm ghcr.io/acme/base:1 true\n          docker run --rm ghcr.io/acme/base:2 true\n";
    let gitlab = "test:\n  image: docker:27\n  script:\n    - docker compose up -d\n    - docker run --rm ghcr.io/acme/base:1 true\n";
    let other = "on: push\njobs:\n  run:\n    runs-on: ubuntu-latest\n    steps:\n      - run: docker run --rm ghcr.io/acme/base:1 true\n";
    for crlf in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("compose.yaml", compose),
                ("base/Dockerfile", "FROM debian:12\n"),
                (".github/workflows/ci.yml", workflow),
                (".github/workflows/other.yml", other),
                (".gitlab-ci.yml", gitlab),
            ],
            crlf,
        );
        let doc = context
            .run(["scan", ".", "--format", "json"])
            .assert_code(0)
            .json();
        let expected = [
            (".github/workflows/ci.yml", 7, "floating"),
            (".github/workflows/ci.yml", 11, "local"),
            (".github/workflows/ci.yml", 12, "floating"),
            (".github/workflows/other.yml", 6, "floating"),
            (".gitlab-ci.yml", 2, "floating"),
            (".gitlab-ci.yml", 5, "local"),
            ("base/Dockerfile", 1, "floating"),
            ("compose.yaml", 4, "local"),
        ];
        assert_statuses(&doc, &expected, &format!("crlf {crlf}"));
    }
}

/// The images an `OpenShift` release payload component's manifests name in the
/// `image-references` beside them are placeholders `oc adm release new` replaces by their
/// text: `ignored`, with the reason. Other images, and manifests elsewhere, are floating.
#[test]
fn a_release_payload_placeholder_is_ignored() {
    let stream = "kind: ImageStream\napiVersion: image.openshift.io/v1\nspec:\n  tags:\n  - name: operator\n    from:\n      kind: DockerImage\n      name: quay.io/openshift/origin-dns-operator:latest\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: op\n        image: quay.io/openshift/origin-dns-operator:latest\n      - name: proxy\n        image: quay.io/acme/proxy:1.0\n";
    for crlf in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("manifests/image-references", stream),
                ("manifests/02-deployment.yaml", deployment),
                ("deploy/deployment.yaml", deployment),
            ],
            crlf,
        );
        let doc = context
            .run(["scan", ".", "--format", "json"])
            .assert_code(0)
            .json();
        let expected = [
            ("deploy/deployment.yaml", 8, "floating"),
            ("deploy/deployment.yaml", 10, "floating"),
            ("manifests/02-deployment.yaml", 8, "ignored"),
            ("manifests/02-deployment.yaml", 10, "floating"),
        ];
        assert_statuses(&doc, &expected, &format!("crlf {crlf}"));
        let reason = reference(&doc, "manifests/02-deployment.yaml", 8)["unwritable"].clone();
        assert!(
            reason
                .as_str()
                .is_some_and(|r| r.contains("oc adm release new")),
            "{doc:#}"
        );
    }
}
