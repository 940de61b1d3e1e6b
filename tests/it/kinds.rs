//! `tagpin pin --write` end to end for the places images live that issue 12 added (Dockerfile
//! ARG defaults, GitLab CI, shell container commands in scripts, workflow steps and GitLab
//! jobs, Kustomize `images:`, dev containers, Flux `HelmRelease` values and `$imagepolicy`
//! markers, `custom` patterns), against the real registry: each file before and after, with LF and with CRLF line endings, and a second run
//! that changes nothing.

use crate::context::TestContext;
use crate::registry::{Flavour, Registry};

/// Every tag the files below resolve, normalised.
const IMAGES: &[&str] = &[
    "docker.io/library/alpine:3.20",
    "docker.io/library/busybox:1.36",
    "docker.io/library/postgres:16",
    "docker.io/library/redis:7",
];

/// `(path, before, after)`; in `after`, `<alpine:3.20>` stands for that tag's pushed digest.
const FILES: &[(&str, &str, &str)] = &[
    (
        "Dockerfile",
        "ARG BASE=alpine:3.20\nARG BUSYBOX=\"1.36\"\nFROM ${BASE} AS build\nFROM busybox:${BUSYBOX}\nCOPY --from=build /a /a\n",
        "ARG BASE=alpine:3.20@<alpine:3.20>\nARG BUSYBOX=\"1.36@<busybox:1.36>\"\nFROM ${BASE} AS build\nFROM busybox:${BUSYBOX}\nCOPY --from=build /a /a\n",
    ),
    (
        "ci/.gitlab-ci.yml",
        "default:\n  image: alpine:3.20 # base\ntest:\n  services:\n    - name: \"postgres:16\"\n      alias: db\n    - redis:7\n  script: [\"true\", \"docker run --rm busybox:1.36 true\"]\n",
        "default:\n  image: alpine:3.20@<alpine:3.20> # base\ntest:\n  services:\n    - name: \"postgres:16@<postgres:16>\"\n      alias: db\n    - redis:7@<redis:7>\n  script: [\"true\", \"docker run --rm busybox:1.36@<busybox:1.36> true\"]\n",
    ),
    (
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          docker run --rm \\\n            busybox:1.36 true # smoke\n          docker pull redis:7\n          docker tag redis:7 mirror/redis:7\n      - shell: pwsh\n        run: docker run alpine:3.20\n",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          docker run --rm \\\n            busybox:1.36@<busybox:1.36> true # smoke\n          docker pull redis:7\n          docker tag redis:7 mirror/redis:7\n      - shell: pwsh\n        run: docker run alpine:3.20\n",
    ),
    (
        "scripts/smoke.sh",
        "#!/bin/sh\n# docker pull redis:7 is a comment\ndocker run --rm \\\n  -e A=1 \\\n  busybox:1.36 true\nsudo podman pull 'redis:7'\nsudo podman run 'redis:7'\n",
        "#!/bin/sh\n# docker pull redis:7 is a comment\ndocker run --rm \\\n  -e A=1 \\\n  busybox:1.36@<busybox:1.36> true\nsudo podman pull 'redis:7@<redis:7>'\nsudo podman run 'redis:7@<redis:7>'\n",
    ),
    (
        "deploy/kustomization.yaml",
        "resources: [app.yaml]\nimages:\n  - name: redis\n    newTag: \"7\" # cache\n  - {name: postgres, newTag: \"16\"}\n",
        "resources: [app.yaml]\nimages:\n  - name: redis\n    newTag: \"7\" # cache\n    digest: <redis:7>\n  - {name: postgres, newTag: \"16\", digest: <postgres:16>}\n",
    ),
    (
        ".devcontainer/devcontainer.json",
        "{\n\t// the toolbox\n\t\"image\": \"alpine:3.20\",\n\t\"features\": {},\n}\n",
        "{\n\t// the toolbox\n\t\"image\": \"alpine:3.20@<alpine:3.20>\",\n\t\"features\": {},\n}\n",
    ),
    (
        "clusters/prod/redis.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chart: {spec: {chart: redis, version: 19.6.4}}\n  values:\n    image: {repository: redis, tag: \"7\"}\n    sidecar:\n      image: busybox:1.36\n    app:\n      image: alpine:3.20 # {\"$imagepolicy\": \"flux-system:app\"}\n",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chart: {spec: {chart: redis, version: 19.6.4}}\n  values:\n    image: {repository: redis, tag: \"7\"}\n    sidecar:\n      image: busybox:1.36@<busybox:1.36>\n    app:\n      image: alpine:3.20 # {\"$imagepolicy\": \"flux-system:app\"}\n",
    ),
];

#[test]
fn every_new_kind_is_pinned_byte_exactly_and_idempotently() {
    let mut registry = Registry::start();
    for key in IMAGES {
        registry.push(key, Flavour::Image);
    }
    let mirrors = registry.mirror_args(["docker.io", "ghcr.io", "quay.io"]);
    for crlf in [false, true] {
        let context = TestContext::new();
        let ending = |text: &str| {
            if crlf {
                text.replace('\n', "\r\n")
            } else {
                text.to_owned()
            }
        };
        for (path, before, _) in FILES {
            context.write(path, ending(before));
        }
        let mut args = vec!["pin".to_owned(), ".".to_owned(), "--write".to_owned()];
        args.extend(mirrors.iter().cloned());
        context.run(&args).assert_code(0);
        for (path, _, after) in FILES {
            let mut expected = ending(after);
            for (key, digest) in registry.pushed() {
                let short = key.rsplit('/').next().unwrap();
                expected = expected.replace(&format!("<{short}>"), digest);
            }
            let got = std::fs::read_to_string(context.path(path)).unwrap();
            assert_eq!(got, expected, "{path} (crlf: {crlf})");
        }
        let again = context.run(&args);
        again.assert_code(0);
        assert!(again.stderr.contains("wrote 0 files"), "{again}");
    }
}

/// A split map in a `HelmRelease`'s values is reported and left by default; with
/// `unproven_values: key-names` it is written by its key names, like unproven chart values.
#[test]
fn helm_release_split_maps_are_written_only_when_the_user_opts_in() {
    let mut registry = Registry::start();
    registry.push("docker.io/library/redis:7", Flavour::Image);
    let digest = registry.pushed()["docker.io/library/redis:7"].clone();
    let release = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chart:\n    \
                   spec: {chart: redis, version: 19.6.4}\n  values:\n    image:\n      \
                   repository: redis\n      tag: \"7\" # pinned by hand\n";
    let mut args = vec!["pin", ".", "--write", "--format", "json"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    args.extend(registry.mirror_args(["docker.io"]));
    for (config, written) in [("", false), ("unproven_values: key-names\n", true)] {
        let context = TestContext::new();
        context.write("release.yaml", release);
        if !config.is_empty() {
            context.write(".tagpin.yaml", config);
        }
        let run = context.run(&args);
        run.assert_code(0);
        let doc = run.json();
        let got = std::fs::read_to_string(context.path("release.yaml")).unwrap();
        if written {
            let want = release.replace("tag: \"7\"", &format!("tag: \"7@{digest}\""));
            assert_eq!(got, want, "{run}");
            assert_eq!(doc["unsupported"], serde_json::json!([]), "{run}");
        } else {
            assert_eq!(got, release, "{run}");
            let reason = doc["unsupported"][0]["reason"].as_str().unwrap();
            assert!(
                reason.contains("chart `redis 19.6.4` is not in this repository")
                    && reason.contains("`unproven_values: key-names` writes it"),
                "{run}"
            );
        }
    }
}

/// `custom` patterns in `.tagpin.yaml`: files they name are read whatever their name, walked
/// or given as PATH, and pinned; a bad pattern is a config error (exit 2) at its entry's line.
#[test]
fn custom_patterns_read_and_pin_the_files_they_name() {
    let mut registry = Registry::start();
    let busybox = registry.push("docker.io/library/busybox:1.36", Flavour::Image);
    let redis = registry.push("docker.io/library/redis:7", Flavour::Image);
    let mirrors = registry.mirror_args(["docker.io"]);
    let context = TestContext::new();
    context
        .write(
            ".tagpin.yaml",
            "custom:\n  - files: ['**/images/*.tag']\n    pattern: '^(?P<ref>\\S+)$'\n  - files: [versions.env]\n    pattern: 'IMAGE=(?P<name>\\S+)\\r?\\nTAG=(?P<tag>\\S+)'\n",
        )
        .write("packages/images/busybox.tag", "busybox:1.36\n")
        .write("packages/images/notes.txt", "busybox:1.36\n")
        .write("versions.env", "IMAGE=redis\r\nTAG=7\r\n");
    let mut args = vec!["pin".to_owned(), ".".to_owned(), "--write".to_owned()];
    args.extend(mirrors.iter().cloned());
    context.run(&args).assert_code(0);
    let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
    assert_eq!(
        read("packages/images/busybox.tag"),
        format!("busybox:1.36@{busybox}\n")
    );
    assert_eq!(read("packages/images/notes.txt"), "busybox:1.36\n");
    assert_eq!(
        read("versions.env"),
        format!("IMAGE=redis\r\nTAG=7@{redis}\r\n")
    );
    let scan = context.run(["scan", "packages/images/busybox.tag", "--format", "json"]);
    scan.assert_code(0);
    let doc = scan.json();
    assert_eq!(doc["references"][0]["kind"], "custom", "{doc}");
    assert_eq!(doc["references"][0]["status"], "pinned", "{doc}");

    context.write(
        ".tagpin.yaml",
        "exclude: []\ncustom:\n  - files: [a]\n    pattern: '(?P<ref>x'\n",
    );
    let bad = context.run(["scan", "."]);
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("invalid `custom` pattern `(?P<ref>x`")
            && bad.stderr.contains("at line 4 column 5"),
        "{bad}"
    );
}
