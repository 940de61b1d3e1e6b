//! YAML written in every shape finds the same references; anchors and aliases never leak an
//! edit into a value that is not an image.

use std::fmt::Write as _;
use std::path::Path;

use tagpin_reference::Digest;

use crate::{EditSite, Error, FileKind, Finding, Status, apply_edits, scan};

fn digest() -> Digest {
    Digest::parse(&format!("sha256:{}", "4".repeat(64))).unwrap()
}

fn findings(kind: FileKind, text: &str) -> Vec<Finding> {
    scan(Path::new("t.yaml"), kind, text).unwrap_or_else(|error| panic!("{text:?}: {error}"))
}

/// `(line, column, status, text)` of every finding, with CRLF too.
fn shapes(kind: FileKind, text: &str) -> Vec<(usize, usize, Status, String)> {
    let shape = |text: &str| -> Vec<_> {
        findings(kind, text)
            .into_iter()
            .map(|f| (f.line, f.column, f.status, f.text))
            .collect()
    };
    let lf = shape(text);
    assert_eq!(shape(&text.replace('\n', "\r\n")), lf, "{text:?} with CRLF");
    lf
}

fn pinned(kind: FileKind, text: &str) -> String {
    let edits: Vec<_> = findings(kind, text)
        .iter()
        .filter_map(|f| f.edit(&digest()))
        .collect();
    apply_edits(text, &edits).unwrap()
}

fn unsupported_reason(finding: &Finding) -> &str {
    match &finding.site {
        EditSite::Unsupported { reason } => reason,
        other => panic!("{finding:?} is editable: {other:?}"),
    }
}

/// Each row is one way of writing the same manifest: the reference is found at its place.
#[test]
fn every_layout_of_a_value_is_read() {
    use Status::Floating;
    let canonical = "%YAML 1.1\n---\n!!map {\n  ? !!str \"spec\"\n  : !!map {\n    ? !!str \"containers\"\n    : !!seq [\n      !!map {\n        ? !!str \"image\"\n        : !!str \"nginx:1.25\",\n      },\n    ],\n  },\n}\n";
    let cases: &[(&str, &str, (usize, usize))] = &[
        (
            "next line (ruamel.yaml)",
            "spec:\n  containers:\n  - image:\n      quay.io/acme/app:1.0\n",
            (4, 7),
        ),
        ("on the --- line", "--- {image: nginx:1.25}\n", (1, 13)),
        (
            "flow on the --- line, nested",
            "--- {spec: {containers: [{image: \"nginx:1.25\"}]}}\n",
            (1, 35),
        ),
        (
            "after a quoted scalar over lines on ---",
            "--- \"a long\n  line\"\n---\nimage: nginx:1.25\n",
            (4, 8),
        ),
        ("PyYAML canonical", canonical, (10, 18)),
        ("complex key", "? image\n: nginx:1.25\n", (2, 3)),
        (
            "multi-line flow",
            "containers: [\n  {\n    name: a,\n    image: nginx:1.25\n  }\n]\n",
            (4, 12),
        ),
        ("tagged", "image: !!str nginx:1.25\n", (1, 14)),
        ("JSON", "{\"spec\": {\"image\": \"nginx:1.25\"}}\n", (1, 21)),
    ];
    for (name, text, (line, column)) in cases {
        let found = shapes(FileKind::Yaml, text);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        let (l, c, status, _) = &found[0];
        assert_eq!((*l, *c, *status), (*line, *column, Floating), "{name}");
    }
}

#[test]
fn a_compose_extension_anchor_is_pinned_where_it_is_defined() {
    let text = "x-app-image: &app \"redis:7\"\nservices:\n  web:\n    image: *app\n  worker:\n    image: *app\n";
    let found = findings(FileKind::Compose, text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].line, found[0].column), (1, 20));
    assert_eq!(found[0].status, Status::Floating);
    assert_eq!(
        pinned(FileKind::Compose, text),
        text.replace("\"redis:7\"", &format!("\"redis:7@{}\"", digest()))
    );
}

/// A build argument under an image key names the base image the build pulls: pinned in
/// place, in a mapping or a list; one without a tag, with a variable, or under another key is
/// not read.
#[test]
fn a_compose_build_argument_naming_an_image_is_a_reference() {
    let text = "services:\n  db:\n    build:\n      context: ./clickhouse\n      args:\n        BASE_IMAGE: \"altinity/clickhouse-server:23.8.11.29.altinitystable\"\n        APP_IMAGE: app\n        DEV_IMAGE: \"false\"\n        GO_VERSION: \"1.22\"\n        RUNTIME_IMAGE: ${RUNTIME:-alpine:3.20}\n  web:\n    build:\n      context: .\n      args:\n        - builder-image=golang:1.22\n        - OTHER=nginx:1.25\n        - PULL_IMAGE=nginx:1.25\n    image: acme/web:dev\n";
    assert_eq!(
        shapes(FileKind::Compose, text),
        vec![
            (
                6,
                22,
                Status::Floating,
                "altinity/clickhouse-server:23.8.11.29.altinitystable".to_owned()
            ),
            (15, 25, Status::Floating, "golang:1.22".to_owned()),
            (18, 12, Status::Local, "acme/web:dev".to_owned()),
        ]
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::Compose, text),
        text.replace("altinitystable\"", &format!("altinitystable@{digest}\""))
            .replace("=golang:1.22", &format!("=golang:1.22@{digest}"))
    );
}

/// A build's named context that is an image (`docker-image://`) is the image the build pulls:
/// pinned after its scheme, in a mapping or a list; another context (a directory, a service,
/// a Git repository) is no image.
#[test]
fn a_compose_image_context_is_a_reference() {
    let text = "services:\n  app:\n    build:\n      context: .\n      additional_contexts:\n        alpine: docker-image://alpine:3.19\n        src: ../src\n        base: service:base\n  web:\n    build:\n      additional_contexts:\n        - \"go=docker-image://golang\"\n        - repo=https://github.com/acme/repo.git\n";
    assert_eq!(
        shapes(FileKind::Compose, text),
        vec![
            (6, 32, Status::Floating, "alpine:3.19".to_owned()),
            (12, 30, Status::Floating, "golang".to_owned()),
        ]
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::Compose, text),
        text.replace("alpine:3.19", &format!("alpine:3.19@{digest}"))
            .replace("//golang", &format!("//golang:latest@{digest}"))
    );
}

/// A service that runs the image another service builds runs the build: `local` too. So does
/// a Kustomize entry for Kubebuilder's placeholder `controller`.
#[test]
fn an_image_the_file_builds_is_local_wherever_it_is_used() {
    let text = "services:\n  api:\n    image: myorg/api:1.0\n    build: .\n  worker:\n    image: myorg/api:1.0\n  cache:\n    image: myorg/api:2.0\n";
    assert_eq!(
        shapes(FileKind::Compose, text),
        vec![
            (3, 12, Status::Local, "myorg/api:1.0".to_owned()),
            (6, 12, Status::Local, "myorg/api:1.0".to_owned()),
            (8, 12, Status::Floating, "myorg/api:2.0".to_owned()),
        ]
    );
    let kustomization = "images:\n- name: controller\n  newName: controller\n  newTag: latest\n";
    let statuses: Vec<Status> = shapes(FileKind::Kustomize, kustomization)
        .into_iter()
        .map(|(_, _, status, _)| status)
        .collect();
    assert_eq!(statuses, [Status::Local]);
    // Renamed by `make deploy` to the project's image, and committed so: still what the
    // project builds. Another entry is pinned as any.
    let renamed = "images:\n- name: controller\n  newName: quay.io/operator-framework/operator-controller\n  newTag: devel\n- name: kube-rbac-proxy\n  newName: quay.io/brancz/kube-rbac-proxy\n  newTag: v0.18.0\n";
    let statuses: Vec<Status> = shapes(FileKind::Kustomize, renamed)
        .into_iter()
        .map(|(_, _, status, _)| status)
        .collect();
    assert_eq!(statuses, [Status::Local, Status::Floating]);
}

/// Woodpecker's documented idiom: anchors in a top-level `variables:` list (which Woodpecker
/// never reads), aliased by the steps' images. The anchored image is written where it is
/// defined; in any other YAML file, and with the anchor used elsewhere too, it is not.
#[test]
fn a_woodpecker_pipeline_s_anchored_image_is_written_where_it_is_defined() {
    let text = "variables:\n  - &golang_image 'golang:1.25'\n  - &when {branch: main}\nsteps:\n  build:\n    image: *golang_image\n    commands: [go build ./...]\n  test:\n    image: *golang_image\n    when: *when\n";
    let pinned_text = text.replace("'golang:1.25'", &format!("'golang:1.25@{}'", digest()));
    for path in [
        ".woodpecker.yml",
        "ci/.woodpecker/build.yaml",
        ".woodpecker/test.yml",
    ] {
        let findings = scan(Path::new(path), FileKind::Yaml, text).unwrap();
        assert_eq!(findings.len(), 1, "{path}: {findings:?}");
        assert_eq!(
            (findings[0].line, findings[0].status),
            (2, Status::Floating)
        );
        let edits: Vec<_> = findings.iter().filter_map(|f| f.edit(&digest())).collect();
        assert_eq!(apply_edits(text, &edits).unwrap(), pinned_text, "{path}");
    }
    // Elsewhere `variables` may be read; and an alias outside the list and the images still
    // keeps the anchor unwritten.
    let elsewhere = scan(Path::new("pipeline.yml"), FileKind::Yaml, text).unwrap();
    assert!(unsupported_reason(&elsewhere[0]).contains("variables[0]"));
    let shared = format!("{text}labels:\n  go: *golang_image\n");
    let findings = scan(Path::new(".woodpecker.yml"), FileKind::Yaml, &shared).unwrap();
    assert!(
        unsupported_reason(&findings[0]).contains("labels.go"),
        "{findings:?}"
    );
}

/// An image that is never pulled, `imagePullPolicy: Never` (loaded with `kind load`, built on
/// the node) or compose's `pull_policy: never` or `build`, is `local`: a registry's digest
/// would not name the image that runs.
#[test]
fn images_never_pulled_are_local() {
    let manifest = "spec:\n  containers:\n    - name: app\n      image: my-py-image:0.0.1\n      imagePullPolicy: Never\n    - name: proxy\n      image: envoy:v1\n      imagePullPolicy: IfNotPresent\n";
    assert_eq!(
        shapes(FileKind::Yaml, manifest),
        vec![
            (4, 14, Status::Local, "my-py-image:0.0.1".to_owned()),
            (7, 14, Status::Floating, "envoy:v1".to_owned()),
        ]
    );
    let compose = "services:\n  api:\n    image: content-publishing-dev:latest\n    pull_policy: never\n  web:\n    image: acme/web:1\n    pull_policy: build\n  db:\n    image: postgres:16\n    pull_policy: always\n";
    assert_eq!(
        shapes(FileKind::Compose, compose),
        vec![
            (
                3,
                12,
                Status::Local,
                "content-publishing-dev:latest".to_owned()
            ),
            (6, 12, Status::Local, "acme/web:1".to_owned()),
            (9, 12, Status::Floating, "postgres:16".to_owned()),
        ]
    );
}

/// An image a pipeline builds or pushes in one job and runs in a later one is what the
/// pipeline makes: `local`, in GitLab CI and in a GitHub workflow; another image is pinned.
#[test]
fn an_image_the_pipeline_builds_is_local() {
    let gitlab = "build:\n  image: docker:24.0\n  script:\n    - docker build -t registry.gitlab.com/acme/ci:latest ci/\n    - docker push registry.gitlab.com/acme/ci:latest\ntest:\n  image: registry.gitlab.com/acme/ci:latest\n  script: [make test]\n";
    assert_eq!(
        shapes(FileKind::GitlabCi, gitlab),
        vec![
            (2, 10, Status::Floating, "docker:24.0".to_owned()),
            (
                7,
                10,
                Status::Local,
                "registry.gitlab.com/acme/ci:latest".to_owned()
            ),
        ]
    );
    let workflow = "jobs:\n  image:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          docker buildx build --push --tag ghcr.io/acme/ci .\n  test:\n    needs: image\n    container: ghcr.io/acme/ci:latest\n    services:\n      db:\n        image: postgres:16\n";
    assert_eq!(
        shapes(FileKind::Workflow, workflow),
        vec![
            (9, 16, Status::Local, "ghcr.io/acme/ci:latest".to_owned()),
            (12, 16, Status::Floating, "postgres:16".to_owned()),
        ]
    );
}

/// A workflow step's `run` and a GitLab job's script lines are read as shell scripts, when
/// their source is the script line for line (or one command line folded over several) and
/// their shell is a POSIX one; the edit lands inside the scalar, which keeps every other byte.
#[test]
fn pipeline_scripts_are_read_as_shell_scripts() {
    let workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: docker run --rm alpine:3.20 true\n      - run: |-\n          docker run --rm \\\n            -v \"$PWD:/src\" hadolint/hadolint:v2.12.0 hadolint Dockerfile # lint\n          docker run ghcr.io/${{ github.repository }}:latest\n      - shell: pwsh\n        run: docker run mcr.microsoft.com/powershell:7.4\n      - shell: bash -e {0}\n        run: 'docker run redis:7.2'\n      - run: >\n          docker run --rm\n          folded:1.0 true\n      - run: >\n          echo\n\n          docker run kept:1.0\n  windows:\n    runs-on: [self-hosted, Windows]\n    steps:\n      - run: docker run nanoserver:ltsc2022\n";
    let floating = |line, column, text: &str| (line, column, Status::Floating, text.to_owned());
    assert_eq!(
        shapes(FileKind::Workflow, workflow),
        vec![
            floating(6, 30, "alpine:3.20"),
            floating(9, 28, "hadolint/hadolint:v2.12.0"),
            floating(14, 26, "redis:7.2"),
            floating(17, 11, "folded:1.0"),
        ]
    );
    let pinned_workflow = pinned(FileKind::Workflow, workflow);
    assert_eq!(
        pinned_workflow,
        workflow
            .replace("alpine:3.20", &format!("alpine:3.20@{}", digest()))
            .replace("v2.12.0", &format!("v2.12.0@{}", digest()))
            .replace("redis:7.2", &format!("redis:7.2@{}", digest()))
            .replace("folded:1.0", &format!("folded:1.0@{}", digest()))
    );
    let action = "runs:\n  using: composite\n  steps:\n    - shell: sh\n      run: docker run --rm busybox:1.36 true\n    - shell: python\n      run: print('docker run busybox:1.35')\n";
    assert_eq!(
        shapes(FileKind::Workflow, action),
        vec![floating(5, 28, "busybox:1.36")]
    );
    let gitlab = ".setup: &setup\n  - docker pull postgres:16\nbuild:\n  before_script: *setup\n  script:\n    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHA .\n    - [\"docker run --rm busybox:1.36 true\"]\n    - |\n      docker run --rm \\\n        curlimages/curl:8.5.0 -sf http://x\n    - docker run --rm\n        -v $PWD:/src\n      plain/multi:1.0 lint\n    - >\n      true; # then, in the comment YAML folds this into:\n      docker run commented/out:1.0\n  after_script: \"docker run \\\"quoted:1\\\"\"\ndefault:\n  before_script: docker run --rm alpine:3.20 true\n";
    assert_eq!(
        shapes(FileKind::GitlabCi, gitlab),
        vec![
            floating(2, 17, "postgres:16"),
            floating(7, 25, "busybox:1.36"),
            floating(10, 9, "curlimages/curl:8.5.0"),
            floating(13, 7, "plain/multi:1.0"),
            floating(19, 34, "alpine:3.20"),
        ]
    );
}

/// Other CI systems' scripts, told by the pipeline's path, are read as shell scripts too:
/// `CircleCI`'s `run` (or its `command`), Bitbucket's `script`, Azure's `bash` steps (not
/// `script`, cmd on Windows), Drone's and Woodpecker's `commands`; none in a pipeline that
/// names Windows. A step's later one runs what an earlier one built. Azure's own image
/// strings are read, its variables are not.
#[test]
fn other_ci_systems_scripts_are_read() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            ".circleci/config.yml",
            "jobs:\n  test:\n    docker:\n      - image: cimg/base:2024.01\n    steps:\n      - run: docker run --rm alpine:3.20 true\n      - run:\n          name: lint\n          command: |\n            docker build -t app .\n            docker run --rm app lint\n      - run:\n          shell: powershell.exe\n          command: docker run mcr.microsoft.com/powershell:7.4\n",
            &["cimg/base:2024.01", "alpine:3.20"],
        ),
        // An orb's image and tag parameters are the orb's to build, push or pull.
        (
            ".circleci/config.yml",
            "version: 2.1\norbs:\n  docker: circleci/docker@2.2.0\nworkflows:\n  main:\n    jobs:\n      - docker/publish:\n          image: myorg/myapp\n          tag: latest\n      - node/test:\n          image: cimg/node:20.1\n",
            &["cimg/node:20.1"],
        ),
        (
            "bitbucket-pipelines.yml",
            "image: node:20\npipelines:\n  default:\n    - step:\n        script:\n          - docker run --rm busybox:1.36 true\n        after-script:\n          - docker run --rm redis:7 true\n        services: [docker]\n",
            &["node:20", "busybox:1.36", "redis:7"],
        ),
        (
            "azure-pipelines.yml",
            "pool:\n  vmImage: ubuntu-latest\nsteps:\n  - bash: docker run --rm alpine:3.20 true\n  - script: docker run --rm busybox:1.36 true\n",
            &["alpine:3.20"],
        ),
        // Azure's job container and services as strings (a bare word names a resource),
        // and no variable read as an image.
        (
            "azure-pipelines.yml",
            "variables:\n  dockerImage: myacr.azurecr.io/app:latest\nresources:\n  containers:\n  - container: py\n    image: python:3.12\njobs:\n- job: test\n  container: py\n  services:\n    redis: redis:7\n    db: pg\n  variables:\n    testImage: busybox:1\n- job: other\n  container: ubuntu:22.04\n",
            &["python:3.12", "redis:7", "ubuntu:22.04"],
        ),
        (
            ".drone.yml",
            "kind: pipeline\nsteps:\n  - name: test\n    image: docker:27\n    commands:\n      - docker run --rm alpine:3.20 true\n",
            &["docker:27", "alpine:3.20"],
        ),
        (
            ".woodpecker.yml",
            "steps:\n  test:\n    image: docker:27\n    commands:\n      - docker run --rm alpine:3.20 true\n",
            &["docker:27", "alpine:3.20"],
        ),
        (
            "bitbucket-pipelines.yml",
            "pipelines:\n  default:\n    - step:\n        runs-on: [windows]\n        script:\n          - docker run --rm busybox:1.36 true\n",
            &[],
        ),
    ];
    for (path, text, expected) in cases {
        let writable: Vec<String> = scan(Path::new(path), FileKind::Yaml, text)
            .unwrap()
            .into_iter()
            .filter(|f| f.status == Status::Floating)
            .map(|f| f.text)
            .collect();
        assert_eq!(writable, *expected, "{path}");
    }
}

/// An image a script needs under its tag is reported, not written: pulled by digest, the
/// image would not carry that name locally. So is one it also names elsewhere (`kind load`,
/// `docker tag`, `docker save`, skopeo's `docker-daemon:`), one it pulls and runs nowhere
/// (fetched for something else), and one it runs after loading images from an archive. A
/// second writable use of the same name, a longer name, or a comment is no such use.
#[test]
fn an_image_a_script_needs_under_its_tag_is_not_written() {
    let cases: &[(&str, &[(&str, bool)])] = &[
        (
            "docker pull nginx:1.25\nkind load docker-image nginx:1.25\n",
            &[("nginx:1.25", true)],
        ),
        (
            "docker pull redis:7 # redis:7 again\ndocker run --rm redis:7 true\ndocker run docker.io/library/redis:7\n",
            &[
                ("redis:7", false),
                ("redis:7", false),
                ("docker.io/library/redis:7", false),
            ],
        ),
        (
            "docker run --rm busybox:1.36 true\ndocker save -o b.tar \"busybox:1.36\"\n",
            &[("busybox:1.36", true)],
        ),
        (
            "docker run alpine:3.20\ndocker tag alpine:3.20-slim mirror/alpine:3.20-slim\n",
            &[("alpine:3.20", false)],
        ),
        (
            "skopeo copy docker://alpine:3.20 docker-daemon:alpine:3.20\ndocker run alpine:3.20\n",
            &[("alpine:3.20", true)],
        ),
        // Fetched ahead for the tests, which run it by its tag.
        (
            "docker pull consul:1.8.4\ndocker pull consul:1.8.4\n",
            &[("consul:1.8.4", true), ("consul:1.8.4", true)],
        ),
        // Names are compared as a runtime compares them.
        (
            "docker run -d postgres:latest\ndocker save postgres > pg.tar\n",
            &[("postgres:latest", true)],
        ),
        (
            "docker run -d docker.io/library/redis:7\ndocker tag redis:7 myredis\n",
            &[("docker.io/library/redis:7", true)],
        ),
        (
            "docker pull -q alpine\ndocker run --rm alpine:latest true\n",
            &[("alpine", false), ("alpine:latest", false)],
        ),
        (
            "docker run --name db -d quay.io/acme/db:1\ndocker rmi quay.io/acme/db:1\n",
            &[("quay.io/acme/db:1", true)],
        ),
        (
            "docker load -i app.tar\ndocker run --rm acme/app:1.0 test\n",
            &[("acme/app:1.0", true)],
        ),
        // A registry's transport, as skopeo writes it: the copy's destination, run next.
        (
            "skopeo copy docker://alpine:3.19 docker://reg.example.com/alpine:3.19\ndocker run --rm reg.example.com/alpine:3.19 true\n",
            &[("reg.example.com/alpine:3.19", true)],
        ),
        (
            "# docker load -i app.tar\ndocker run --rm acme/app:1.0 test\n",
            &[("acme/app:1.0", false)],
        ),
    ];
    for (script, expected) in cases {
        let rows: Vec<(String, bool)> = findings(FileKind::Shell, script)
            .into_iter()
            .map(|f| (f.text, matches!(f.site, EditSite::Unsupported { .. })))
            .collect();
        let expected: Vec<(String, bool)> = expected
            .iter()
            .map(|(text, refused)| ((*text).to_owned(), *refused))
            .collect();
        assert_eq!(rows, expected, "{script:?}");
    }
    let reasons: Vec<String> = [
        "docker pull nginx:1.25\nkind load docker-image nginx:1.25\n",
        "docker pull consul:1.8.4\n",
        "docker load < app.tar\ndocker run acme/app:1.0\n",
    ]
    .iter()
    .map(|script| unsupported_reason(&findings(FileKind::Shell, script)[0]).to_owned())
    .collect();
    assert_eq!(
        reasons,
        [
            "the script also names `nginx:1.25` by its tag (line 2): pulled by digest, the image \
             would no longer carry that name locally",
            "pulled here and run nowhere in this file: it is fetched for something else that \
             runs it by its tag, and pulled by digest the image would not carry that tag",
            "the script loads images from an archive (line 1): the image it runs may be one of \
             them, which a digest would replace with the registry's",
        ]
    );
    // In a workflow, the job's `container:` of the same name is pinned alike.
    let workflow =
        "jobs:\n  test:\n    container: node:20\n    steps:\n      - run: docker pull node:20\n";
    assert!(
        findings(FileKind::Workflow, workflow)
            .iter()
            .all(|f| !matches!(f.site, EditSite::Unsupported { .. }))
    );
}

/// A CI expression is part of the shell word it is in: `docker exec ${{ env.NAME }} docker
/// run …` runs in a container, `ssh ${{ secrets.HOST }} docker pull …` on another host.
#[test]
fn a_ci_expression_is_one_shell_word() {
    for script in [
        "docker exec ${{ env.DOCKER_CONTAINER }} docker run hello-world\n",
        "ssh ${{ secrets.USER }}@${{ secrets.HOST }} docker pull myorg/app:v1\n",
        "echo Deploying ${{ github.sha }} docker pull myorg/app:v3\n",
    ] {
        assert_eq!(findings(FileKind::Shell, script), vec![], "{script:?}");
    }
}

/// A heredoc's `image:` lines are a manifest's, except in a heredoc fed to an interpreter or
/// to a CI runner's own file; a manifest that says `imagePullPolicy: Never` runs its images
/// from the node, as a manifest file does, and a compose service's `image:` beside `build:`
/// names what compose builds.
#[test]
fn heredocs_are_read_as_what_they_feed() {
    let shape = |script: &str| -> Vec<(String, Status)> {
        findings(FileKind::Shell, script)
            .into_iter()
            .map(|f| (f.text, f.status))
            .collect()
    };
    let never = "cat <<EOF | kubectl apply -f -\nspec:\n  containers:\n  - name: c\n    image: nginx:1.19\n    imagePullPolicy: Never\nEOF\ncat <<EOF > values.yaml\nimage: redis:7\nEOF\n";
    assert_eq!(
        shape(never),
        [
            ("nginx:1.19".to_owned(), Status::Local),
            ("redis:7".to_owned(), Status::Floating)
        ]
    );
    // A compose file written by a heredoc: the image beside `build:` is what compose builds;
    // another service's, and one beside a nested `build:`, are pulled.
    let compose = "cat > docker-compose.yml <<'YAML'\nservices:\n  app:\n    build: .\n    ports:\n      - \"80:80\"\n    image: myorg/app:dev\n  db:\n    image: postgres:16\n  tool:\n    image: acme/tool:1\n    x-meta:\n      build: yes\nYAML\n";
    assert_eq!(
        shape(compose),
        [
            ("myorg/app:dev".to_owned(), Status::Local),
            ("postgres:16".to_owned(), Status::Floating),
            ("acme/tool:1".to_owned(), Status::Floating)
        ]
    );
    for script in [
        "python3 - <<'PY'\nprint('image: nginx:1.25')\nPY\n",
        "cat >> \"$GITHUB_STEP_SUMMARY\" <<EOF\nimage: nginx:1.25\nEOF\n",
    ] {
        assert_eq!(shape(script), [], "{script:?}");
    }
}

/// The names a `docker/build-push-action` step tags its build with are `local`, and so is a
/// later step's or job's use of them.
#[test]
fn a_build_action_s_tags_are_local() {
    let workflow = "jobs:\n  build:\n    steps:\n      - uses: docker/build-push-action@v6\n        with:\n          load: true\n          tags: |\n            brew\n            ghcr.io/acme/brew:ci, ${{ env.TAG }}\n      - run: docker run --rm brew brew test-bot\n      - run: docker run --rm brew:latest true\n  test:\n    container: ghcr.io/acme/brew:ci\n    steps:\n      - run: docker run --rm alpine:3.20 true\n";
    let local = |line, column, text: &str| (line, column, Status::Local, text.to_owned());
    assert_eq!(
        shapes(FileKind::Workflow, workflow),
        vec![
            local(8, 13, "brew"),
            local(9, 13, "ghcr.io/acme/brew:ci"),
            local(10, 30, "brew"),
            local(11, 30, "brew:latest"),
            local(13, 16, "ghcr.io/acme/brew:ci"),
            (15, 30, Status::Floating, "alpine:3.20".to_owned()),
        ]
    );
}

/// A flow collection closed at its holder's indentation (strictly invalid, read by libyaml
/// and so by Kubernetes and GitHub) is read, and the edit lands on the text as written.
#[test]
fn a_flow_collection_closed_at_its_holder_s_indentation_is_read() {
    let text = "spec:\n  containers:\n    - args: [\n        --v=2,\n    ]\n      image: nginx:1.25\n    - {name: b,\n       image: redis:7\n  }\n";
    assert_eq!(
        shapes(FileKind::Yaml, text),
        vec![
            (6, 14, Status::Floating, "nginx:1.25".to_owned()),
            (8, 15, Status::Floating, "redis:7".to_owned()),
        ]
    );
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace("nginx:1.25", &format!("nginx:1.25@{}", digest()))
            .replace("redis:7", &format!("redis:7@{}", digest()))
    );
}

/// A Tekton step's image given as a parameter is the parameter's default, pinned there when
/// the Task reads the parameter nowhere else; read elsewhere too, it is reported, not
/// written. Two steps reading it report it once.
#[test]
fn a_tekton_step_s_image_parameter_is_its_default() {
    let task = |script: &str| {
        format!(
            "apiVersion: tekton.dev/v1\nkind: Task\nspec:\n  params:\n    - name: url\n    - name: gitInitImage\n      type: string\n      default: \"gcr.io/tekton-releases/git-init:v0.40.2\"\n  steps:\n    - name: clone\n      image: \"$(params.gitInitImage)\"\n      script: {script}\n"
        )
    };
    let alone = task("git clone $(params.url)");
    assert_eq!(
        shapes(FileKind::Yaml, &alone),
        vec![(
            8,
            17,
            Status::Floating,
            "gcr.io/tekton-releases/git-init:v0.40.2".to_owned()
        )]
    );
    assert!(
        pinned(FileKind::Yaml, &alone)
            .contains("default: \"gcr.io/tekton-releases/git-init:v0.40.2@sha256:")
    );
    let echoed = task("echo $(params.gitInitImage)");
    let found = findings(FileKind::Yaml, &echoed);
    assert_eq!(found.len(), 1);
    assert!(unsupported_reason(&found[0]).contains("reads `params.gitInitImage` elsewhere"));
    // No `default`: nothing to report; outside a Kubernetes document: not a parameter.
    let no_default = alone.replace(
        "      default: \"gcr.io/tekton-releases/git-init:v0.40.2\"\n",
        "",
    );
    assert!(findings(FileKind::Yaml, &no_default).is_empty());
    let two_steps = alone.replace(
        "      script: git clone $(params.url)\n",
        "      script: git clone $(params.url)\n    - name: again\n      image: $(params.gitInitImage)\n",
    );
    let found = findings(FileKind::Yaml, &two_steps);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(unsupported_reason(&found[0]).contains("elsewhere"));
}

/// Istio's gateway injection fills in a container's `image: auto`: `templated`, never pinned
/// as Docker Hub's `auto:latest`; `auto` elsewhere than a container's image stays a value.
#[test]
fn istio_s_injected_image_is_templated() {
    let gateway = "spec:\n  template:\n    metadata:\n      annotations:\n        inject.istio.io/templates: gateway\n    spec:\n      containers:\n        - name: istio-proxy\n          image: auto\n        - name: app\n          image: \"auto:1.0\"\n";
    assert_eq!(
        shapes(FileKind::Yaml, gateway),
        vec![
            (9, 18, Status::Templated, "auto".to_owned()),
            (11, 19, Status::Floating, "auto:1.0".to_owned()),
        ]
    );
    assert!(pinned(FileKind::Yaml, gateway).contains("image: auto\n"));
}

/// A compose build's `tags` name what it makes: `local`, and so is every other use of them
/// (a service that runs the build without building it).
#[test]
fn a_compose_build_s_tags_are_local_wherever_used() {
    let compose = "services:\n  builder:\n    build:\n      context: .\n      tags: [\"content-publishing-dev:latest\"]\n  api:\n    image: content-publishing-dev:latest\n  db:\n    image: postgres:16\n";
    assert_eq!(
        shapes(FileKind::Compose, compose),
        vec![
            (
                5,
                15,
                Status::Local,
                "content-publishing-dev:latest".to_owned()
            ),
            (
                7,
                12,
                Status::Local,
                "content-publishing-dev:latest".to_owned()
            ),
            (9, 12, Status::Floating, "postgres:16".to_owned()),
        ]
    );
}

/// release-please's generic updater rewrites the version on a line marked
/// `x-release-please-version` (and inside `x-release-please-start-…`/`-end` blocks): a digest
/// beside it would pull the previous release's image. Such references are `ignored`, with the
/// reason.
#[test]
fn references_release_please_rewrites_are_ignored() {
    let action = "runs:\n  using: docker\n  image: \"docker://ghcr.io/super-linter/super-linter:v7.2.1\" # x-release-please-version\n";
    let found = findings(FileKind::Workflow, action);
    assert_eq!(found[0].status, Status::Ignored);
    assert!(unsupported_reason(&found[0]).contains("release-please"));
    let values = "# x-release-please-start-version\nimage: ghcr.io/acme/app:1.4.2\n# x-release-please-end\nsidecar:\n  image: envoy:v1\n";
    let statuses: Vec<Status> = findings(FileKind::Yaml, values)
        .iter()
        .map(|f| f.status)
        .collect();
    assert_eq!(statuses, [Status::Ignored, Status::Floating]);
}

/// A Percona operator's cluster with automatic upgrades (`upgradeOptions.apply` not
/// `disabled`): the operator writes its images, which are `ignored` with the reason; with
/// upgrades off they are written as any image.
#[test]
fn images_an_operator_upgrades_are_ignored() {
    for (apply, status) in [
        ("8.0-recommended", Status::Ignored),
        ("Recommended", Status::Ignored),
        ("disabled", Status::Floating),
        ("Never", Status::Floating),
    ] {
        let text = format!(
            "apiVersion: pxc.percona.com/v1\nkind: PerconaXtraDBCluster\nspec:\n  updateStrategy: SmartUpdate\n  upgradeOptions:\n    apply: {apply}\n  pxc:\n    image: percona/percona-xtradb-cluster:8.0.23-14.1\n"
        );
        let found = findings(FileKind::Yaml, &text);
        assert_eq!(found[0].status, status, "{apply}");
        if status == Status::Ignored {
            assert!(unsupported_reason(&found[0]).contains("upgraded by its operator"));
        }
    }
}

/// A workload whose images `OpenShift` sets from an image stream (an `ImageChange` trigger of a
/// `DeploymentConfig`, or the `image.openshift.io/triggers` annotation) is `ignored`, with the
/// reason; another document of the same file is not.
#[test]
fn images_openshift_triggers_set_are_ignored() {
    let text = "apiVersion: apps.openshift.io/v1\nkind: DeploymentConfig\nspec:\n  triggers:\n    - type: ConfigChange\n    - type: ImageChange\n      imageChangeParams: {automatic: true, containerNames: [web]}\n  template:\n    spec:\n      containers:\n        - name: web\n          image: quay.io/acme/web:latest\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    image.openshift.io/triggers: '[]'\nspec:\n  template:\n    spec:\n      containers:\n        - name: api\n          image: quay.io/acme/api:1\n---\nkind: DeploymentConfig\nspec:\n  triggers: [{type: ConfigChange}]\n  template: {spec: {containers: [{name: db, image: postgres:16}]}}\n";
    let found = findings(FileKind::Yaml, text);
    let statuses: Vec<(&str, Status)> = found.iter().map(|f| (f.text.as_str(), f.status)).collect();
    assert_eq!(
        statuses,
        [
            ("quay.io/acme/web:latest", Status::Ignored),
            ("quay.io/acme/api:1", Status::Ignored),
            ("postgres:16", Status::Floating),
        ]
    );
    assert!(unsupported_reason(&found[0]).contains("image stream"));
}

/// A Molecule platform's image is written only with `pre_build_image: true`: otherwise
/// Molecule builds on it and tags the build `molecule_local/<image>`, which a digest breaks.
#[test]
fn a_molecule_platform_s_image_is_written_only_when_pulled_as_it_is() {
    let text = "driver:\n  name: docker\nplatforms:\n  - name: instance\n    image: ubuntu:20.04\n  - name: pulled\n    image: geerlingguy/docker-rockylinux9-ansible:latest\n    pre_build_image: true\n";
    let found = scan(
        Path::new("molecule/default/molecule.yml"),
        FileKind::Yaml,
        text,
    )
    .unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(unsupported_reason(&found[0]).contains("molecule_local"));
    assert_eq!(found[1].site, EditSite::Inline);
    // Elsewhere the same YAML is no scenario.
    let elsewhere = scan(Path::new("ci/platforms.yml"), FileKind::Yaml, text).unwrap();
    assert!(elsewhere.iter().all(|f| f.site == EditSite::Inline));
}

/// An image in a registry that only names this machine's runtime (`ko.local`, `kind.local`,
/// `dev.local`: ko and kind load images there, never push them) is `local` in every kind of
/// file: no registry answers for it, so it is not written and `check` does not fail on it.
#[test]
fn images_of_the_local_only_registries_are_local() {
    let manifest = "spec:\n  containers:\n    - image: ko.local/app:latest\n    - image: kind.local/app\n    - image: dev.local/web:1\n    - image: ko.localhost/app:1\n";
    assert_eq!(
        shapes(FileKind::Yaml, manifest),
        vec![
            (3, 14, Status::Local, "ko.local/app:latest".to_owned()),
            (4, 14, Status::Local, "kind.local/app".to_owned()),
            (5, 14, Status::Local, "dev.local/web:1".to_owned()),
            (6, 14, Status::Floating, "ko.localhost/app:1".to_owned()),
        ]
    );
    assert_eq!(
        pinned(FileKind::Yaml, manifest),
        manifest.replace(
            "ko.localhost/app:1",
            &format!("ko.localhost/app:1@{}", digest())
        )
    );
    for (kind, text) in [
        (FileKind::Dockerfile, "FROM ko.local/base:1\n"),
        (FileKind::Shell, "docker run --rm kind.local/app:dev\n"),
        (
            FileKind::Compose,
            "services:\n  app:\n    image: dev.local/app:1\n",
        ),
    ] {
        let statuses: Vec<Status> = shapes(kind, text)
            .into_iter()
            .map(|(_, _, status, _)| status)
            .collect();
        assert_eq!(statuses, [Status::Local], "{kind:?}: {text:?}");
    }
}

#[test]
fn a_compose_variable_s_default_image_is_the_reference() {
    let text = "services:\n  web:\n    image: ${WEB_IMAGE:-apache/airflow:3.1.4}\n  db:\n    image: \"${DB-postgres:16}\"\n  built:\n    image: ${APP:-acme/app:1}\n    build: .\n  other:\n    image: ${REGISTRY:-docker.io}/nginx:1.25\n  required:\n    image: ${APP:?set it}\n  nested:\n    image: ${A:-${B:-nginx:1}}\n";
    assert_eq!(
        shapes(FileKind::Compose, text),
        vec![
            (3, 25, Status::Floating, "apache/airflow:3.1.4".to_owned()),
            (5, 18, Status::Floating, "postgres:16".to_owned()),
            (7, 19, Status::Local, "acme/app:1".to_owned()),
            (
                10,
                12,
                Status::Templated,
                "${REGISTRY:-docker.io}/nginx:1.25".to_owned()
            ),
            (12, 12, Status::Templated, "${APP:?set it}".to_owned()),
            (14, 12, Status::Templated, "${A:-${B:-nginx:1}}".to_owned()),
        ]
    );
    let pinned = pinned(FileKind::Compose, text);
    let digest = digest();
    assert_eq!(
        pinned,
        text.replace("airflow:3.1.4}", &format!("airflow:3.1.4@{digest}}}"))
            .replace("postgres:16}", &format!("postgres:16@{digest}}}"))
    );
}

#[test]
fn an_image_name_with_its_tag_beside_it_is_reported_and_left_to_the_chart() {
    let text = "exporter:\n  image: ghcr.io/oliver006/redis_exporter\n  tag: v1.75.0\n\
                full:\n  image: nginx:1.25\n  tag: v1\n";
    let found = findings(FileKind::Yaml, text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].text, "ghcr.io/oliver006/redis_exporter:v1.75.0");
    assert_eq!((found[0].line, found[0].column), (2, 10));
    assert!(
        found[0]
            .unproven()
            .is_some_and(|reason| reason.starts_with("not proven: a name with its `tag`")),
        "{found:?}"
    );
}

#[test]
fn a_gitlab_image_named_by_a_variable_is_pinned_where_the_variable_is_set() {
    let text = "variables:\n  CI_IMAGE: registry.gitlab.com/acme/ci:1.8\n  SVC:\n    value: \"redis:7\"\n    description: the cache\n  BUILT: registry.gitlab.com/acme/app:1\n  OTHER: \"$CI_REGISTRY_IMAGE/x:1\"\n\
                image: $CI_IMAGE\n\
                test:\n  image: ${CI_IMAGE}\n  services:\n    - name: $SVC\n  script: [make test]\n\
                own:\n  variables:\n    CI_IMAGE: alpine:3.20\n  image: $CI_IMAGE\n\
                build:\n  image: $BUILT\n  script: [\"docker build -t $BUILT .\"]\n\
                other:\n  image: $OTHER\n\
                shell:\n  variables:\n    DEF: busybox:1\n  image: $DEF\n  script: [\"echo ${DEF:-none}\"]\n";
    let found = shapes(FileKind::GitlabCi, text);
    let floating: Vec<_> = found
        .iter()
        .filter(|(.., status, _)| *status == Status::Floating)
        .cloned()
        .collect();
    assert_eq!(
        floating,
        vec![
            (
                2,
                13,
                Status::Floating,
                "registry.gitlab.com/acme/ci:1.8".to_owned()
            ),
            (4, 13, Status::Floating, "redis:7".to_owned()),
            (16, 15, Status::Floating, "alpine:3.20".to_owned()),
        ],
        "{found:?}"
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::GitlabCi, text),
        text.replace("ci:1.8\n", &format!("ci:1.8@{digest}\n"))
            .replace("\"redis:7\"", &format!("\"redis:7@{digest}\""))
            .replace("alpine:3.20", &format!("alpine:3.20@{digest}"))
    );
}

/// A variable whose long form lists the `options` of a manual run must keep a value among
/// them: its image stays `templated`, and the file unchanged.
#[test]
fn a_gitlab_image_variable_with_options_is_not_pinned() {
    let text = "variables:\n  BUILD_IMAGE:\n    value: \"node:20\"\n    options:\n      - \"node:20\"\n      - \"node:18\"\nbuild:\n  image: $BUILD_IMAGE\n";
    let found = shapes(FileKind::GitlabCi, text);
    assert_eq!(
        found,
        vec![(8, 10, Status::Templated, "$BUILD_IMAGE".to_owned())],
        "{found:?}"
    );
    assert_eq!(pinned(FileKind::GitlabCi, text), text);
}

/// A hidden job's image variable, merged into the jobs that extend it with `<<: *base`, is
/// one use of the variable however many jobs merge it.
#[test]
fn a_gitlab_image_variable_merged_into_jobs_is_one_use() {
    let text = "variables:\n  KANIKO: gcr.io/kaniko-project/executor:v1.9.0-debug\n.base: &base\n  image:\n    name: $KANIKO\n    entrypoint: [\"\"]\nbuild:\n  <<: *base\n  script: [/kaniko/executor]\nalso:\n  <<: *base\n";
    assert_eq!(
        shapes(FileKind::GitlabCi, text)
            .into_iter()
            .filter(|(.., status, _)| *status == Status::Floating)
            .collect::<Vec<_>>(),
        [(
            2,
            11,
            Status::Floating,
            "gcr.io/kaniko-project/executor:v1.9.0-debug".to_owned()
        )]
    );
}

/// A job on GitLab's hosted macOS runners names a virtual machine in `image`; its other jobs'
/// images are containers.
#[test]
fn a_gitlab_macos_job_s_image_is_a_machine() {
    let text = "build-ios:\n  image: macos-14-xcode-15\n  tags:\n    - saas-macos-medium-m1\n  script: [xcodebuild]\nlint:\n  image: ruby:3.3\n  tags: [saas-linux-small-amd64]\n";
    assert_eq!(
        shapes(FileKind::GitlabCi, text),
        [(7, 10, Status::Floating, "ruby:3.3".to_owned())]
    );
}

#[test]
fn a_merged_compose_base_is_pinned_once_and_an_override_stays_its_own() {
    let text = "x-base: &base\n  image: redis:7\n  restart: always\nservices:\n  a:\n    <<: *base\n  b:\n    <<: *base\n    image: postgres:16\n";
    assert_eq!(
        shapes(FileKind::Compose, text),
        vec![
            (2, 10, Status::Floating, "redis:7".to_owned()),
            (9, 12, Status::Floating, "postgres:16".to_owned()),
        ]
    );
    let pinned = pinned(FileKind::Compose, text);
    assert!(pinned.contains(&format!("image: redis:7@{}", digest())));
    assert!(pinned.contains(&format!("image: postgres:16@{}", digest())));
}

#[test]
fn a_tag_anchor_also_used_in_a_label_is_reported_and_not_written() {
    let text = "image:\n  repository: nginx\n  tag: &ver \"1.25\"\nlabels: {version: *ver}\n";
    let found = findings(FileKind::Yaml, text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].text, "nginx:1.25");
    assert_eq!(
        unsupported_reason(&found[0]),
        "anchor `&ver` is also used at labels.version (line 4), which is not an image; \
         rewriting it would change that value too"
    );
    assert_eq!(pinned(FileKind::Yaml, text), text);
}

#[test]
fn an_image_anchor_also_used_in_an_annotation_is_reported_and_not_written() {
    let text = "spec:\n  containers:\n  - name: a\n    image: &img redis:7\nmetadata:\n  annotations:\n    source: *img\n";
    let found = findings(FileKind::Yaml, text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        unsupported_reason(&found[0])
            .starts_with("anchor `&img` is also used at metadata.annotations.source (line 7)")
    );
    assert_eq!(pinned(FileKind::Yaml, text), text);
}

#[test]
fn an_anchor_used_only_where_images_go_is_pinned_once() {
    let text =
        "spec:\n  containers:\n  - image: &img redis:7\n  initContainers:\n  - image: *img\n";
    let found = findings(FileKind::Yaml, text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].site, EditSite::Inline);
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace("redis:7", &format!("redis:7@{}", digest()))
    );
}

#[test]
fn an_ignore_comment_beside_an_alias_ignores_the_anchored_reference() {
    let text = "x-img: &img redis:7\nservices:\n  a:\n    image: *img # tagpin:ignore\n";
    let found = findings(FileKind::Compose, text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].status, Status::Ignored);
}

fn limit_error(text: &str) -> String {
    match scan(Path::new("deep.yaml"), FileKind::Yaml, text) {
        Err(error @ (Error::Syntax { .. } | Error::Limit { .. })) => error.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn nesting_deeper_than_supported_is_an_error_not_a_silent_drop() {
    let nested = |depth: usize| {
        format!(
            "a: {}{{image: nginx:1}}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    // Deeper than the old scanner's 64 levels, within the supported 256.
    assert_eq!(findings(FileKind::Yaml, &nested(100)).len(), 1);
    // saphyr-parser's own limit on flow levels (255) comes first here.
    assert_eq!(
        limit_error(&nested(300)),
        "deep.yaml:1:259: recursion limit exceeded"
    );
    let mut block = String::new();
    for level in 0..300 {
        block.push_str(&" ".repeat(level));
        block.push_str("k:\n");
    }
    block.push_str(&" ".repeat(300));
    block.push_str("image: nginx:1\n");
    assert!(limit_error(&block).ends_with("collections nested deeper than 256 levels"));
}

#[test]
fn aliases_that_expand_without_bound_are_an_error() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..10 {
        let previous = format!("*a{}", level - 1);
        let items = vec![previous; 10].join(", ");
        let _ = writeln!(text, "a{level}: &a{level} [{items}]");
    }
    text.push_str("image: nginx:1\n");
    assert!(
        limit_error(&text).contains("aliases expand the document past"),
        "{}",
        limit_error(&text)
    );
}

#[test]
fn a_recursive_alias_is_an_error() {
    assert_eq!(
        limit_error("a: &a [*a]\nimage: nginx:1\n"),
        "deep.yaml:1:8: the alias refers to a node that contains it (a recursive structure)"
    );
}

#[test]
fn crd_schema_defaults_are_not_references() {
    let crd = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              proxy:
                default:
                  image: registry.k8s.io/kas-network-proxy/proxy-server:latest
                type: object
";
    assert_eq!(shapes(FileKind::Yaml, crd), []);
    // The same object outside a schema is one.
    let object =
        "spec:\n  proxy:\n    image: registry.k8s.io/kas-network-proxy/proxy-server:latest\n";
    assert_eq!(shapes(FileKind::Yaml, object).len(), 1);
}

#[test]
fn a_whole_image_beside_version_is_a_custom_resources_reference() {
    use Status::Floating;
    let prometheus = "\
kind: Prometheus
spec:
  image: quay.io/prometheus/prometheus:v2.54.1
  version: v2.54.1
";
    assert_eq!(
        shapes(FileKind::Yaml, prometheus),
        [(
            3,
            10,
            Floating,
            "quay.io/prometheus/prometheus:v2.54.1".to_owned()
        )]
    );
    // Only the image is written: the version stays a version.
    assert!(pinned(FileKind::Yaml, prometheus).contains("\n  version: v2.54.1\n"));
    // A bare name beside `version` is still the name part of a split spec.
    let split =
        "operator:\n  repository: nvcr.io/nvidia\n  image: gpu-operator\n  version: v24.6.0\n";
    assert_eq!(
        shapes(FileKind::Yaml, split),
        [(
            2,
            15,
            Floating,
            "nvcr.io/nvidia/gpu-operator:v24.6.0".to_owned()
        )]
    );
}

/// The YAML files of the corpus (`../shared/corpus`) and the inputs of the YAML test suite
/// (`../shared/yaml-test-suite`), by path; both must be there.
fn shared_yaml() -> Vec<(std::path::PathBuf, String)> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let mut files = Vec::new();
    let mut stack = vec![shared.join("corpus"), shared.join("yaml-test-suite")];
    assert!(stack.iter().all(|dir| dir.is_dir()), "{stack:?} must exist");
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let yaml = path
                .extension()
                .is_some_and(|ext| ext == "yaml" || ext == "yml");
            if path.is_dir() {
                stack.push(path);
            } else if let Some(text) = yaml.then(|| std::fs::read_to_string(&path).ok()).flatten() {
                files.push((path, text));
            }
        }
    }
    files.sort();
    files
}

/// The walk passes over collections whose source holds none of the words the rules (and the
/// chart's candidates) look for: the findings and the candidates are what visiting every
/// collection gives, on real charts, the YAML test suite, and keys written the hard way.
#[test]
fn passing_over_collections_without_the_words_changes_nothing() {
    use crate::chart::values_images;
    use crate::rules::walk::tests::visiting_every_collection;

    let written = [
        // The file says `image` (the scan reads nothing of a file that does not), the key not.
        "# an image\na:\n  \"im\\x61ge\": nginx:1.25\n",
        "a:\n  b: {\"repo\\u0073itory\": nginx, tag: \"1.2\"}\n",
        "x:\n  y:\n    - z: {enabled: false, repository: r, tag: t}\n",
        "a: {b: [{c: {d: {sidecarImage: busybox}}}]}\n",
        "? |-\n  image\n: nginx:1.25\n",
        "a: &x {image: redis:7}\nb: *x\nc: {d: 1}\n",
        "<<: {image: nginx:1.25}\nq: {enabled: false}\n",
    ];
    let mut files: Vec<(std::path::PathBuf, String)> = written
        .iter()
        .map(|text| ("values.yaml".into(), (*text).to_owned()))
        .collect();
    files.extend(shared_yaml());
    let mut compared = 0;
    for (path, text) in &files {
        for kind in [FileKind::Yaml, FileKind::HelmTemplate] {
            let passed = scan(path, kind, text).map_err(|e| e.to_string());
            let every =
                visiting_every_collection(|| scan(path, kind, text).map_err(|e| e.to_string()));
            assert_eq!(passed, every, "{} as {kind:?}", path.display());
        }
        let passed = values_images(path, text).map_err(|e| e.to_string());
        let every =
            visiting_every_collection(|| values_images(path, text).map_err(|e| e.to_string()));
        assert_eq!(passed, every, "candidates of {}", path.display());
        compared += usize::from(passed.is_ok_and(|images| !images.candidates.is_empty()));
    }
    // Not vacuous: the charts' values hold candidates.
    assert!(compared > 20, "{compared} files with candidates");
    for (text, found) in written.iter().zip([1, 0, 0, 1, 1, 1, 1]) {
        let count = scan(Path::new("values.yaml"), FileKind::Yaml, text)
            .unwrap()
            .len();
        assert_eq!(count, found, "{text:?}");
    }
}

/// A values file's walk is shared by its rules and its image maps (`apply_with`), and passes
/// over what holds none of the image maps' words: those must include every word the rules
/// look for.
#[test]
fn the_image_maps_look_for_every_word_the_values_rules_look_for() {
    let rules = super::rules_for(FileKind::Yaml)
        .words()
        .expect("words")
        .needles();
    let images = crate::chart::Collect::new("");
    let images = super::Visitor::words(&images).expect("words").needles();
    assert!(!rules.is_empty());
    for word in rules {
        assert!(
            images.contains(&word),
            "{:?}",
            String::from_utf8_lossy(word)
        );
    }
}

/// A chart's values read with the collections no rule looks into left unread give what
/// reading them all gives: the findings, the image maps, the values a template reads (every
/// top-level key), and the images of the file laid over a base, on hand-written values, real
/// charts and the YAML test suite.
#[test]
fn values_read_with_collections_left_unread_give_what_reading_them_gives() {
    let written = [
        "component0:\n  enabled: true\n  image:\n    repository: worker\n    tag: \"v1.18\"\n  setting0: { limit: 969, request: \"1430Mi\", labels: [a, b, c] }\n",
        // A merge key's collection is looked into: here it holds the tag of a split map.
        "app:\n  repository: nginx\n  <<: {tag: \"1.25\"}\n  extra: {tag: x}\n",
        "resources: {limits: {cpu: 100m, memory: 1Gi}, requests: [1, 2.5, true, null, \"x\", ~]}\n",
        "a:\n  - b: {c: d}\n  - {e: [f, g]}\nh: [i, {j: k}]\n",
        "redis: {tag: 7.2}\nimage: {repository: nginx, tag: \"1.25\"}\n",
        "x: {y: z} # a comment\ny: {\"q\": \"r s\", t: [u, ]}\n",
        "deep: {a: {b: {c: {d: {e: [f]}}}}}\nimages: {main: {repository: r}}\n",
        // Typed as Helm's reader types them, read from the collection's source.
        "s: {a: 1, b: 2.5, c: true, d: null, e: \"x\", f: 0x1F, g: -3, h: +4, i: 1e3, j: .inf}\nt: {k: No, l: [], m: {}, n: \"\", o: [1, [2, {p: q}]], a: 1, a: \"2\", \"10\": ten}\n",
    ];
    let base = "redis:\n  repository: bitnami/redis\n  tag: \"7.0\"\nimage:\n  repository: nginx\n";
    let written_files = written
        .iter()
        .map(|text| ("values.yaml".into(), (*text).to_owned()));
    // A scan reads nothing of a file without `image`: each file also with a comment that has it.
    let mut files = Vec::new();
    for (path, text) in written_files.chain(shared_yaml()) {
        files.push((path.clone(), format!("# image\n{text}")));
        files.push((path, text));
    }
    let (mut compared, mut deferred) = (0, 0);
    for (path, text) in &files {
        let read = |defer| {
            crate::scan_values_reading(path, text, defer).map_err(|error| error.to_string())
        };
        let (left, whole) = match (read(true), read(false)) {
            (Ok(left), Ok(whole)) => (left, whole),
            (left, whole) => {
                assert_eq!(left.err(), whole.err(), "{path:?}");
                continue;
            }
        };
        assert_eq!(left.0, whole.0, "{path:?}");
        let (Some(mut left), Some(mut whole)) = (left.1, whole.1) else {
            continue;
        };
        compared += 1;
        deferred += usize::from(left.has_deferred());
        assert!(!whole.has_deferred());
        let keys = whole.top_keys();
        assert_eq!(left.json(Some(&keys)), whole.json(Some(&keys)), "{path:?}");
        assert_eq!(left.images().ok(), whole.images().ok(), "{path:?}");
        let base_path = Path::new("base/values.yaml");
        assert_eq!(
            left.overlay_images(base_path, base).ok(),
            whole.overlay_images(base_path, base).ok(),
            "{path:?}"
        );
    }
    assert!(
        compared > 100 && deferred > 10,
        "{compared} compared, {deferred} deferred"
    );
    // The overlay's `redis: {tag: 7.2}` is found, though its line has no word.
    let (_, values) = crate::scan_values(Path::new("values-prod.yaml"), written[4]).unwrap();
    let overlay = values
        .unwrap()
        .overlay_images(Path::new("values.yaml"), base)
        .unwrap();
    assert!(
        overlay
            .candidates
            .iter()
            .any(|c| c.path == ["redis"] && c.overlaid),
        "{overlay:?}"
    );
}

/// A key ending in `Image` names an image unless the word before it makes it a switch about
/// images (Jenkins' agent templates write `alwaysPullImage: {{ .Values.agent.alwaysPullImage }}`).
#[test]
fn switches_about_images_are_not_images() {
    let text = "spec:\n  alwaysPullImage: \"{{ .Values.agent.alwaysPullImage }}\"\n  skipImage: \"{{ .Values.skip }}\"\n  forcePushImage: nginx\n  sidecarImage: busybox:1.36\n  baseImage: \"{{ .Values.base }}\"\n  pullimage: redis:7\n  IMAGE: nope\n  pullPolicyImage: alpine:3\n";
    for kind in [FileKind::Yaml, FileKind::HelmTemplate] {
        let texts: Vec<String> = shapes(kind, text).into_iter().map(|f| f.3).collect();
        assert_eq!(
            texts,
            ["busybox:1.36", "{{ .Values.base }}", "redis:7", "alpine:3"],
            "{kind:?}"
        );
    }
    for (key, image) in [
        ("image", true),
        ("initImage", true),
        ("sidecarImage", true),
        ("alwaysPullImage", false),
        ("pullImage", false),
        ("skipImage", false),
        ("Image", true),
        ("PushImage", false),
        ("imagePullPolicy", false),
        ("vmImage", false),
        ("azureVmImage", false),
        ("machineImage", false),
    ] {
        assert_eq!(crate::rules::is_image_key(key), image, "{key}");
    }
}

/// A virtual machine's image is no container image: the `vmImage` of Azure Pipelines, the
/// `machine` executor of `CircleCI` (whose `docker` executor's images are containers).
#[test]
fn machine_images_are_not_images() {
    let azure = "pool:\n  vmImage: ubuntu-latest\nsteps:\n  - script: make\n";
    assert_eq!(shapes(FileKind::Yaml, azure), []);
    let circle = "jobs:\n  build:\n    machine:\n      image: ubuntu-2004:202101-01\n  test:\n    docker:\n      - image: cimg/go:1.22\n";
    assert_eq!(
        shapes(FileKind::Yaml, circle),
        [(7, 16, Status::Floating, "cimg/go:1.22".to_owned())]
    );
}

/// Cloud Build: each step's `name` is the image it runs in; a substitution is templated; the
/// top-level `images` (pushed), `env` values and substitutions' values are not read.
#[test]
fn cloud_build_steps_run_in_their_names_images() {
    let text = "steps:\n  - name: gcr.io/cloud-builders/docker\n    args: [build, -t, \"gcr.io/$PROJECT_ID/app\", .]\n  - id: test\n    name: 'golang:1.22'\n    env: [IMAGE=busybox:1.36]\n  - name: $_BUILDER\nsubstitutions:\n  _BUILDER: golang:1.21\nimages: [gcr.io/$PROJECT_ID/app]\nother:\n  - name: nginx:1.25\n";
    assert_eq!(
        shapes(FileKind::CloudBuild, text),
        [
            (
                2,
                11,
                Status::Floating,
                "gcr.io/cloud-builders/docker".to_owned()
            ),
            (5, 12, Status::Floating, "golang:1.22".to_owned()),
            (7, 11, Status::Templated, "$_BUILDER".to_owned()),
        ]
    );
}

/// A reference with no tag and no digest is written only in a pod's containers: elsewhere a
/// field beside it may complete it (ceph-ansible's `ceph_docker_image` with its
/// `ceph_docker_image_tag`, `IstioOperator`'s `hub` and `tag`), so it is reported, not written.
#[test]
fn an_untagged_image_outside_containers_is_reported_not_written() {
    let text = "ceph_docker_registry: quay.io\nceph_docker_image: ceph/daemon\nceph_docker_image_tag: latest-octopus\nspec:\n  hub: docker.io/istio\n  values:\n    pilot:\n      image: pilot\n  containers:\n    - name: a\n      image: busybox\n    - name: b\n      image: nginx:1.25\nother:\n  image: quay.io/acme/app:v1\n";
    let found = findings(FileKind::Yaml, text);
    let texts: Vec<(&str, bool)> = found
        .iter()
        .map(|f| (f.text.as_str(), f.edit(&digest()).is_some()))
        .collect();
    assert_eq!(
        texts,
        [
            ("ceph/daemon", false),
            ("pilot", false),
            ("busybox", true),
            ("nginx:1.25", true),
            ("quay.io/acme/app:v1", true),
        ]
    );
    assert!(unsupported_reason(&found[0]).starts_with("no tag or digest is written"));
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace(
            "image: busybox\n",
            &format!("image: busybox:latest@{}\n", digest())
        )
        .replace("nginx:1.25", &format!("nginx:1.25@{}", digest()))
        .replace("app:v1", &format!("app:v1@{}", digest()))
    );
}

/// An image volume's `reference` is pulled by kubelet as a container's image is: read, with
/// or without a tag. A `reference` elsewhere, or outside a Kubernetes object, is not.
#[test]
fn an_image_volume_reference_is_a_reference() {
    let text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: shell\n    image: debian:12\n  volumes:\n  - name: artifact\n    image:\n      reference: quay.io/crio/artifact:v2\n      pullPolicy: IfNotPresent\n  - name: data\n    persistentVolumeClaim: {claimName: x}\n  - name: plain\n    image: {reference: quay.io/crio/artifact}\n---\nvolumes:\n- image:\n    reference: quay.io/crio/artifact:v1\n";
    assert_eq!(
        shapes(FileKind::Yaml, text),
        vec![
            (6, 12, Status::Floating, "debian:12".to_owned()),
            (
                10,
                18,
                Status::Floating,
                "quay.io/crio/artifact:v2".to_owned()
            ),
            (15, 24, Status::Floating, "quay.io/crio/artifact".to_owned()),
        ]
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace("debian:12", &format!("debian:12@{digest}"))
            .replace("artifact:v2", &format!("artifact:v2@{digest}"))
            .replace("artifact}", &format!("artifact:latest@{digest}}}"))
    );
}

/// Flux hands Kustomize the image overrides of a `Kustomization`'s `spec.images` and a
/// `HelmRelease` post-renderer's `kustomize.images`: read as a `kustomization.yaml`'s entries,
/// the digest inserted beside `newTag`. An `images` list elsewhere is not.
#[test]
fn flux_image_overrides_are_kustomize_entries() {
    let text = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec:\n  path: ./app\n  images:\n    - name: ghcr.io/acme/app\n      newTag: 1.2.0\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  postRenderers:\n    - kustomize:\n        images:\n          - name: docker.io/acme/web\n            newName: ghcr.io/acme/web\n            newTag: 2.0.0\n---\napiVersion: v1\nkind: ConfigMap\nspec:\n  images:\n    - name: ghcr.io/acme/other\n      newTag: 3.0.0\n";
    assert_eq!(
        shapes(FileKind::Yaml, text),
        vec![
            (6, 13, Status::Floating, "ghcr.io/acme/app:1.2.0".to_owned()),
            (
                16,
                22,
                Status::Floating,
                "ghcr.io/acme/web:2.0.0".to_owned()
            ),
        ]
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace(
            "      newTag: 1.2.0\n",
            &format!("      newTag: 1.2.0\n      digest: {digest}\n")
        )
        .replace(
            "            newTag: 2.0.0\n",
            &format!("            newTag: 2.0.0\n            digest: {digest}\n")
        )
    );
}

/// Argo CD hands a source's `kustomize.images` to `kustomize edit set image`: `name=new:tag`
/// is pinned after its `=`; `name:tag` is reported, not written (Kustomize 4 would read the
/// digest as part of the name); a digest is pinned already; a bare name is no override. An
/// `ApplicationSet`'s template and an `Application`'s `sources` are read alike; an `images`
/// list elsewhere is not.
#[test]
fn argo_kustomize_images_are_pinned_after_their_name() {
    let text = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  source:\n    kustomize:\n      images:\n      - gcr.io/acme/demo:0.2\n      - app=gcr.io/acme/app:v1.0\n      - \"web=nginx:1.27\"\n      - busybox\n      - redis@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72\n---\napiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nspec:\n  template:\n    spec:\n      sources:\n      - kustomize:\n          images: [api=ghcr.io/acme/api:2.0]\n---\napiVersion: v1\nkind: ConfigMap\nspec:\n  source:\n    kustomize:\n      images:\n      - other=ghcr.io/acme/other:3.0\n";
    let found = shapes(FileKind::Yaml, text);
    assert_eq!(
        found,
        vec![
            (7, 9, Status::Floating, "gcr.io/acme/demo:0.2".to_owned()),
            (8, 13, Status::Floating, "gcr.io/acme/app:v1.0".to_owned()),
            (9, 14, Status::Floating, "nginx:1.27".to_owned()),
            (
                11,
                9,
                Status::DigestOnly,
                "redis@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72"
                    .to_owned()
            ),
            (20, 24, Status::Floating, "ghcr.io/acme/api:2.0".to_owned()),
        ]
    );
    // The one without `=` says why it is not written.
    let findings = findings(FileKind::Yaml, text);
    assert!(
        unsupported_reason(&findings[0]).contains("Kustomize 4"),
        "{:?}",
        findings[0]
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace("acme/app:v1.0", &format!("acme/app:v1.0@{digest}"))
            .replace("nginx:1.27", &format!("nginx:1.27@{digest}"))
            .replace("acme/api:2.0", &format!("acme/api:2.0@{digest}"))
    );
}

/// A container's `--*-image=` flags name images its program deploys (cert-manager's solver,
/// prometheus-operator's reloader): pinned after the `=`. A flag not named as an image, a bare
/// `--image` (a push target for some programs), one that names a cache or a base, a value
/// without a tag or digest, and a CI step's arguments are not read.
#[test]
fn image_flags_of_a_container_are_references() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: controller\n        image: quay.io/jetstack/cert-manager-controller:v1.13.0\n        args:\n        - --v=2\n        - --acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.13.0\n        - \"--config-reloader-image=quay.io/acme/reloader:v0.60.1\"\n        - --image=nginx\n        - --image-pull-policy=IfNotPresent\n        - --use-image=true\n        - --thanos-default-base-image=quay.io/thanos/thanos:v0.34.0\n        - --cache-image=ghcr.io/acme/cache:latest\n        - --image=busybox:1.36\n        command: [/manager, --sidecar-image=ghcr.io/acme/sidecar@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72]\n";
    let found = shapes(FileKind::Yaml, text);
    let texts: Vec<(usize, usize, &str)> = found
        .iter()
        .map(|(line, column, _, text)| (*line, *column, text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (8, 16, "quay.io/jetstack/cert-manager-controller:v1.13.0"),
            (11, 38, "quay.io/jetstack/cert-manager-acmesolver:v1.13.0"),
            (12, 36, "quay.io/acme/reloader:v0.60.1"),
            (
                19,
                45,
                "ghcr.io/acme/sidecar@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72"
            ),
        ]
    );
    let digest = digest();
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace(
            "controller:v1.13.0",
            &format!("controller:v1.13.0@{digest}")
        )
        .replace(
            "acmesolver:v1.13.0",
            &format!("acmesolver:v1.13.0@{digest}")
        )
        .replace("reloader:v0.60.1", &format!("reloader:v0.60.1@{digest}"))
    );
    let step =
        "steps:\n- name: build\n  image: golang:1.23\n  args: [--builder-image=golang:1.22]\n";
    assert_eq!(shapes(FileKind::Yaml, step).len(), 1);
}

/// ko's base images: `defaultBaseImage` and each of `baseImageOverrides`.
#[test]
fn ko_base_images_are_references() {
    let text = "defaultBaseImage: cgr.dev/chainguard/static:latest\nbaseImageOverrides:\n  github.com/acme/tool/cmd/debug: gcr.io/distroless/base:debug\n";
    assert_eq!(
        shapes(FileKind::Yaml, text),
        vec![
            (
                1,
                19,
                Status::Floating,
                "cgr.dev/chainguard/static:latest".to_owned()
            ),
            (
                3,
                35,
                Status::Floating,
                "gcr.io/distroless/base:debug".to_owned()
            ),
        ]
    );
}

/// A Kyverno policy's checks hold image patterns (`validate.pattern`, `verifyImages`,
/// `preconditions`), matched against what pods name: not read. What a rule patches in or
/// generates is an image pods run: read.
#[test]
fn a_kyverno_policy_checks_patterns_and_patches_images() {
    let text = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nspec:\n  rules:\n  - name: verify\n    verifyImages:\n    - image: \"ghcr.io/kyverno/test-verify-image:signed\"\n  - name: allow\n    validate:\n      pattern:\n        spec:\n          containers:\n          - image: ghcr.io/acme/app:1.2\n  - name: sidecar\n    mutate:\n      patchStrategicMerge:\n        spec:\n          containers:\n          - name: proxy\n            image: envoyproxy/envoy:v1.30.1\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: ghcr.io/acme/app:1.2\n";
    assert_eq!(
        shapes(FileKind::Yaml, text),
        vec![
            (
                20,
                20,
                Status::Floating,
                "envoyproxy/envoy:v1.30.1".to_owned()
            ),
            (26, 12, Status::Floating, "ghcr.io/acme/app:1.2".to_owned()),
        ]
    );
}

/// Image keys that name no image to pull: Flux's `ImageRepository` (a repository to scan for
/// tags), kbld's `Config` (images matched by name, and where to push), a Concourse task's
/// `image` (an artifact fetched earlier in the plan), Home Assistant's `camera_image`.
#[test]
fn repositories_artifacts_and_cameras_are_not_images() {
    for text in [
        "apiVersion: image.toolkit.fluxcd.io/v1beta2\nkind: ImageRepository\nmetadata:\n  name: podinfo\nspec:\n  image: ghcr.io/stefanprodan/podinfo\n  interval: 5m\n",
        "apiVersion: kbld.k14s.io/v1alpha1\nkind: Config\noverrides:\n  - image: nginx\n    newImage: nginx:1.25\ndestinations:\n  - image: app\n    newImage: ghcr.io/acme/app\n",
        "jobs:\n  - name: test\n    plan:\n      - get: golang\n      - task: unit\n        image: golang\n        file: ci/unit.yml\n",
        "type: picture-glance\ncamera_image: camera.front_door\n",
    ] {
        assert_eq!(shapes(FileKind::Yaml, text), [], "{text}");
    }
    // The same keys in other documents still name images.
    let flux_policy = "apiVersion: image.toolkit.fluxcd.io/v1beta2\nkind: ImageRepository\n---\nkind: Pod\nspec:\n  containers:\n    - image: nginx:1.25\n";
    assert_eq!(
        shapes(FileKind::Yaml, flux_policy),
        [(7, 14, Status::Floating, "nginx:1.25".to_owned())]
    );
}

/// A pre-commit hook of `language: docker_image` runs the first word of its `entry`, after
/// an `--entrypoint` and its value.
#[test]
fn a_docker_image_hook_runs_its_entry_s_first_word() {
    let text = "repos:\n  - repo: local\n    hooks:\n      - id: hadolint\n        language: docker_image\n        entry: hadolint/hadolint:v2.12.0 hadolint\n      - id: shfmt\n        language: docker_image\n        entry: --entrypoint /bin/shfmt mvdan/shfmt:v3\n      - id: other\n        language: system\n        entry: nginx:1.25 x\n      - id: alone\n        language: docker_image\n        entry: \"koalaman/shellcheck:v0.10.0\"\n";
    assert_eq!(
        shapes(FileKind::Yaml, text),
        [
            (
                6,
                16,
                Status::Floating,
                "hadolint/hadolint:v2.12.0".to_owned()
            ),
            (9, 40, Status::Floating, "mvdan/shfmt:v3".to_owned()),
            (
                15,
                17,
                Status::Floating,
                "koalaman/shellcheck:v0.10.0".to_owned()
            ),
        ]
    );
    assert_eq!(
        pinned(FileKind::Yaml, text),
        text.replace(
            "v2.12.0 hadolint",
            &format!("v2.12.0@{} hadolint", digest())
        )
        .replace("shfmt:v3\n", &format!("shfmt:v3@{}\n", digest()))
        .replace("v0.10.0\"", &format!("v0.10.0@{}\"", digest()))
    );
}

/// Cirrus CI's `*_instance` virtual machines, Travis CI's `osx_image` and a disk image are not
/// container images; Cirrus CI's `container` is.
#[test]
fn virtual_machines_of_other_ci_systems_are_not_images() {
    let cirrus = "task:\n  gce_instance:\n    image_project: ubuntu-os-cloud\n    image: ubuntu-2204-jammy-v20230919\nlint:\n  macos_instance:\n    image: ghcr.io/cirruslabs/macos-sonoma-xcode:15\ntest:\n  container:\n    image: golang:1.22\n";
    assert_eq!(
        shapes(FileKind::Yaml, cirrus),
        [(10, 12, Status::Floating, "golang:1.22".to_owned())]
    );
    let keys = "osx_image: xcode10.2\nvm_image: ubuntu-latest\nboot-image: debian-12\nalways_pull_image: nginx\nsidecar_image: busybox:1.36\nsidecar-image: redis:7\n";
    let texts: Vec<String> = shapes(FileKind::Yaml, keys)
        .into_iter()
        .map(|f| f.3)
        .collect();
    assert_eq!(texts, ["busybox:1.36", "redis:7"]);
}

/// An `image` key that names a file (a logo, a splash screen, a disk) or sits in an API
/// description's example names no image a registry holds.
#[test]
fn files_and_examples_are_not_images() {
    let text = "title: My Blog\nimage: logo.png\nauthor:\n  image: \"assets/Me.JPG\"\nsplash:\n  background_image: assets/bg.svg\nvm:\n  image: disks/base.qcow2\ncomponents:\n  schemas:\n    Pet:\n      example:\n        image: tom\n      examples:\n        - image: nginx:1.25\nwebsite:\n  image: nginx:1.25\n  other: ghcr.io/acme/logo.png:1.0\n  logo:\n    image: ghcr.io/acme/png:1.0\n";
    for kind in [FileKind::Yaml, FileKind::HelmTemplate] {
        let texts: Vec<String> = shapes(kind, text).into_iter().map(|f| f.3).collect();
        assert_eq!(texts, ["nginx:1.25", "ghcr.io/acme/png:1.0"], "{kind:?}");
    }
    // A tag after the ending: an image whose name happens to end so.
    let tagged = "image: acme/site.png:1.0\n";
    let texts: Vec<String> = shapes(FileKind::Yaml, tagged)
        .into_iter()
        .map(|f| f.3)
        .collect();
    assert_eq!(texts, ["acme/site.png:1.0"]);
}

/// The image a build makes is pushed, not pulled: `local`, as compose's `image` beside
/// `build:` (Skaffold's artifacts and those they require, Strimzi's and Shipwright's build
/// outputs, a compose file by another name, `OpenFaaS` functions, Okteto's builds, and
/// Kubebuilder's placeholder). The same key anywhere else is an image to pull.
#[test]
fn images_a_build_makes_are_local() {
    use Status::{Floating, Local, Templated};
    // Each case: its name, the file, and the line and status of each finding.
    type Case<'a> = (&'a str, &'a str, &'a [(usize, Status)]);
    let cases: &[Case] = &[
        (
            "skaffold",
            "apiVersion: skaffold/v4beta6\nkind: Config\nbuild:\n  artifacts:\n    - image: leeroy-app\n      context: app\n      requires:\n        - image: base\n          alias: BASE\n    - image: base\n      context: base\n",
            &[(5, Local), (8, Local), (10, Local)],
        ),
        (
            "strimzi",
            "kind: KafkaConnect\nspec:\n  image: quay.io/strimzi/kafka:0.45.0\n  build:\n    output:\n      type: docker\n      image: ttl.sh/acme/connect:24h\n",
            &[(3, Floating), (7, Local)],
        ),
        (
            "shipwright",
            "kind: Build\nspec:\n  output:\n    image: \"${REGISTRY}/app\"\n  strategy:\n    name: kaniko\n",
            &[(4, Templated)],
        ),
        (
            "artifacts outside a build",
            "steps:\n  artifacts:\n    - image: nginx:1.25\n",
            &[(3, Floating)],
        ),
        // A compose file not named as one (a Swarm stack): beside `build:`, and every other
        // use of the image it builds; not another service's own image.
        (
            "docker-stack.yml",
            "services:\n  api:\n    image: myorg/api:1.0\n    build: .\n  worker:\n    image: myorg/api:1.0\n  db:\n    image: postgres:16\n    build:\n      args: {A: b}\n",
            &[(3, Local), (6, Local), (8, Floating)],
        ),
        (
            "openfaas",
            "provider:\n  name: openfaas\nfunctions:\n  hello:\n    lang: python3\n    handler: ./hello\n    image: hello:latest\n  fetch:\n    image: ghcr.io/o/fetch:1\n",
            &[(7, Local), (9, Floating)],
        ),
        (
            "okteto",
            "build:\n  api:\n    context: .\n    image: okteto.dev/api:1.0.0\ndeploy:\n  - kubectl apply -f k8s\n",
            &[(4, Local)],
        ),
        (
            "devspace",
            "version: v2beta1\nimages:\n  default:\n    image: me/app:dev\ndeployments:\n  app:\n    helm:\n      values:\n        containers:\n        - image: me/app:dev\n        - image: redis:7\n",
            &[(4, Local), (10, Local), (11, Floating)],
        ),
        (
            "garden",
            "kind: Module\ntype: container\nname: api\nimage: my-org/api:v1.2.3\ndockerfile: Dockerfile\n",
            &[(4, Local)],
        ),
        (
            "kamal",
            "service: hey\nimage: 37s/hey:1.0\nbuilder:\n  arch: amd64\naccessories:\n  mysql:\n    image: mysql:8.0\n",
            &[(2, Local), (7, Floating)],
        ),
        (
            "kubebuilder's placeholder",
            "spec:\n  template:\n    spec:\n      containers:\n      - image: controller:latest\n      - image: quay.io/o/controller:1\n",
            &[(5, Local), (6, Floating)],
        ),
    ];
    for (name, text, expected) in cases {
        let found: Vec<(usize, Status)> = shapes(FileKind::Yaml, text)
            .into_iter()
            .map(|(line, _, status, _)| (line, status))
            .collect();
        assert_eq!(found, *expected, "{name}");
        assert_eq!(
            pinned(FileKind::Yaml, text).matches("@sha256").count(),
            expected.iter().filter(|(_, s)| *s == Floating).count(),
            "{name}"
        );
    }
}

/// Not images a container runtime pulls: a Cirrus persistent worker's virtual machine, AWS
/// `CodeBuild`'s curated images, and an OLM catalog whose tag is polled.
#[test]
fn machines_curated_build_images_and_polled_catalogs_are_not_references() {
    let cases = [
        "persistent_worker:\n  isolation:\n    tart:\n      image: ghcr.io/cirruslabs/macos-sonoma-base:latest\n",
        "Resources:\n  Build:\n    Properties:\n      Environment:\n        Type: LINUX_CONTAINER\n        Image: aws/codebuild/standard:7.0\n",
        "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nspec:\n  image: quay.io/x/catalog:latest\n  updateStrategy:\n    registryPoll:\n      interval: 30m\n",
    ];
    for text in cases {
        assert_eq!(shapes(FileKind::Yaml, text), [], "{text}");
    }
    // An ECS task's image in the same kind of file is one.
    let ecs = "Resources:\n  Task:\n    Properties:\n      ContainerDefinitions:\n        - Image: nginx:1.25\n";
    assert_eq!(shapes(FileKind::Yaml, ecs).len(), 1);
}

/// Bitbucket Pipelines' private image: `{name, username, password}` (or `aws` for ECR).
#[test]
fn an_image_map_with_credentials_names_its_image() {
    let text = "image:\n  name: account/java:8u66\n  username: $USER\n  password: $PASS\npipelines:\n  default:\n    - step:\n        image:\n          name: 1234.dkr.ecr.us-east-1.amazonaws.com/app:1\n          aws:\n            access-key: $K\n        script: [make]\n    - step:\n        image: {name: app, tag: \"1\"}\n";
    let found: Vec<(usize, Status, String)> = shapes(FileKind::Yaml, text)
        .into_iter()
        .map(|(line, _, status, text)| (line, status, text))
        .collect();
    assert_eq!(
        found,
        [
            (2, Status::Floating, "account/java:8u66".to_owned()),
            (
                9,
                Status::Floating,
                "1234.dkr.ecr.us-east-1.amazonaws.com/app:1".to_owned()
            ),
            (14, Status::Floating, "app:1".to_owned()),
        ]
    );
    // With no tag, it is reported and not written, as any image outside a pod's containers.
    let untagged = "image:\n  name: account/java\n  username: $USER\n";
    let findings = scan(
        Path::new("bitbucket-pipelines.yml"),
        FileKind::Yaml,
        untagged,
    )
    .unwrap();
    assert!(
        matches!(&findings[0].site, EditSite::Unsupported { reason } if reason.starts_with("no tag or digest is written")),
        "{findings:?}"
    );
}

/// A workload Keel updates (`keel.sh/policy` as a label or an annotation): its images are
/// `ignored`; another document of the file is read as ever.
#[test]
fn a_workload_keel_updates_is_left_to_keel() {
    let text = "kind: Deployment\nmetadata:\n  name: a\n  annotations:\n    keel.sh/policy: minor\nspec:\n  template:\n    spec:\n      containers:\n      - image: nginx:1.25\n---\nkind: Deployment\nmetadata:\n  labels: {keel.sh/policy: all}\nspec: {template: {spec: {containers: [{image: redis:7}]}}}\n---\nkind: Pod\nspec: {containers: [{image: busybox:1.36}]}\n";
    let statuses: Vec<(usize, Status)> = shapes(FileKind::Yaml, text)
        .into_iter()
        .map(|(line, _, status, _)| (line, status))
        .collect();
    assert_eq!(
        statuses,
        [
            (10, Status::Ignored),
            (15, Status::Ignored),
            (18, Status::Floating)
        ]
    );
}

/// A `baseImage` with no tag is a name another field completes (the `TiDB` operator appends
/// `spec.version`); with a tag or a digest it is a whole reference.
#[test]
fn a_base_image_without_a_tag_is_a_name_part() {
    use Status::{DigestOnly, Floating};
    let digest = format!("sha256:{}", "2".repeat(64));
    let text = format!(
        "spec:\n  version: v8.5.4\n  pd:\n    baseImage: pingcap/pd\n  tikv:\n    baseImage: registry:5000/pingcap/tikv\n  tools:\n    baseImage: node:22-alpine\n    sidecarImage: busybox\n  pinned:\n    baseImage: acme/base@{digest}\n"
    );
    let found: Vec<(usize, Status, String)> = shapes(FileKind::Yaml, &text)
        .into_iter()
        .map(|(line, _, status, text)| (line, status, text))
        .collect();
    assert_eq!(
        found,
        [
            (8, Floating, "node:22-alpine".to_owned()),
            (9, Floating, "busybox".to_owned()),
            (11, DigestOnly, format!("acme/base@{digest}")),
        ]
    );
}

/// `image: {name: quay.io/jupyterhub/k8s-hub, tag: "4.1.0"}` (the `JupyterHub` charts): a map under
/// an image key whose name part is `name`, found from the map above it (its own source may
/// hold none of the words the walk looks for), unproven as an `{image, tag}` map is. A `name`
/// with a tag of its own, a map beside a `repository`, one under another key, or an Ansible
/// `docker_image` task that builds or removes the image is not one.
#[test]
fn a_name_with_its_tag_under_an_image_key_is_reported_and_left_to_the_chart() {
    let text = "hub:\n  image:\n    name: quay.io/jupyterhub/k8s-hub\n    tag: \"4.1.0\"\n\
                proxy:\n  chp:\n    image: {name: quay.io/jupyterhub/configurable-http-proxy, tag: \"4.6.3\"}\n\
                other:\n  image:\n    name: nginx:1.25\n    tag: v1\n\
                volume:\n  name: data\n  tag: v1\n\
                build:\n  docker_image:\n    name: acme/app\n    tag: v1\n    source: build\n\
                remove:\n  docker_image: {name: acme/old, tag: latest, state: absent}\n";
    for kind in [FileKind::Yaml, FileKind::HelmTemplate] {
        let found = findings(kind, text);
        let rows: Vec<(usize, usize, &str)> = found
            .iter()
            .map(|f| (f.line, f.column, f.text.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                (3, 11, "quay.io/jupyterhub/k8s-hub:4.1.0"),
                (7, 19, "quay.io/jupyterhub/configurable-http-proxy:4.6.3"),
            ],
            "{kind:?}"
        );
        assert!(
            found.iter().all(|f| f
                .unproven()
                .is_some_and(|reason| reason.starts_with("not proven: a name with its `tag`"))),
            "{found:?}"
        );
    }
    // With CRLF too.
    assert_eq!(shapes(FileKind::Yaml, text).len(), 2);
}
