//! Platform-aware refresh end to end against the real registry (issue 13): a tag whose index
//! moved with the same children is not rewritten, a rebuilt child is, a lost platform is
//! refused (exit 1, the rest still written), a floating tag whose index lacks a configured
//! platform is refused, and the requests it costs are counted by the proxy in front of the
//! registry.

use crate::context::{Run, TestContext};
use crate::registry::{Flavour, Registry};

const KEY: &str = "quay.io/org/img:1.0";

/// A repository with one pinned reference to `quay.io/org/img:1.0` and one floating
/// reference elsewhere, and the registry (behind the proxy) holding an amd64/arm64 index.
struct Setup {
    context: TestContext,
    registry: Registry,
    amd64: tagpin_testkit::PlatformImage,
    arm64: tagpin_testkit::PlatformImage,
    pinned: String,
}

impl Setup {
    fn new() -> Self {
        let mut registry = Registry::start().with_proxy();
        let amd64 = registry.push_platform_image(KEY, "linux/amd64");
        let arm64 = registry.push_platform_image(KEY, "linux/arm64");
        let pinned = registry.push_index_of(KEY, &[amd64.clone(), arm64.clone()]);
        registry.push("quay.io/org/other:2.0", Flavour::OciIndex);
        let context = TestContext::new();
        context.write("deploy.yaml", Self::deploy(&pinned));
        context.write("other.yaml", "image: quay.io/org/other:2.0\n");
        Self {
            context,
            registry,
            amd64,
            arm64,
            pinned,
        }
    }

    fn deploy(digest: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: app\n      image: quay.io/org/img:1.0@{digest}  # pinned\n"
        )
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut all: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        all.extend(self.registry.mirror_args(["quay.io"]));
        self.registry.proxy().reset_counts();
        self.context.run(all)
    }

    fn deploy_text(&self) -> String {
        std::fs::read_to_string(self.context.path("deploy.yaml")).unwrap()
    }

    /// Manifest GETs (by digest) and blob GETs the proxy saw for `org/img` in the last run.
    fn gets(&self) -> u64 {
        self.registry.proxy().count("GET", "/v2/quay.io/org/img/")
    }
}

#[test]
fn a_moved_index_with_the_same_platforms_is_not_rewritten() {
    let mut setup = Setup::new();
    // Re-pushed with the same children and a platform added: the index digest moves.
    let s390x = setup.registry.push_platform_image(KEY, "linux/s390x");
    let moved = setup
        .registry
        .push_index_of(KEY, &[setup.amd64.clone(), setup.arm64.clone(), s390x]);
    assert_ne!(moved, setup.pinned);
    let run = setup.run(&["pin", ".", "--write", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    assert_eq!(setup.deploy_text(), Setup::deploy(&setup.pinned), "{run}");
    let same = &doc["platforms_unchanged"][0];
    assert_eq!(same["path"], "deploy.yaml", "{run}");
    assert_eq!(same["digest"], setup.pinned.as_str());
    assert_eq!(same["new_digest"], moved.as_str());
    assert_eq!(doc["summary"]["unchanged"], 1);
    assert_eq!(doc["summary"]["platforms_unchanged"], 1);
    assert_eq!(doc["summary"]["refreshed"], 0);
    // The floating reference in the other file is still pinned.
    assert_eq!(doc["written"], serde_json::json!(["other.yaml"]), "{run}");
    // The moved tag cost two GETs (the old index, the new one); nothing else was fetched.
    assert_eq!(setup.gets(), 2, "{:?}", setup.registry.proxy().requests());
    assert_eq!(
        setup.registry.proxy().count("HEAD", "/v2/quay.io/org/img/"),
        1
    );

    let text = setup.run(&["pin", "."]);
    text.assert_code(0);
    assert!(
        text.stderr.contains(&format!(
            "note: deploy.yaml:6:14: quay.io/org/img:1.0@{}: index moved, platforms unchanged (now {moved}); kept",
            setup.pinned
        )),
        "{text}"
    );
}

#[test]
fn an_unchanged_tag_costs_one_head_and_no_get() {
    let setup = Setup::new();
    let run = setup.run(&["pin", ".", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["summary"]["unchanged"], 1, "{run}");
    assert_eq!(setup.gets(), 0, "{:?}", setup.registry.proxy().requests());
    assert_eq!(
        setup.registry.proxy().count("HEAD", "/v2/quay.io/org/img/"),
        1
    );
}

#[test]
fn a_rebuilt_platform_is_rewritten_and_named() {
    let mut setup = Setup::new();
    let rebuilt = setup.registry.push_platform_image(KEY, "linux/arm64");
    let moved = setup
        .registry
        .push_index_of(KEY, &[setup.amd64.clone(), rebuilt]);
    let run = setup.run(&["pin", ".", "--write", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    let edit = doc["edits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "deploy.yaml")
        .unwrap_or_else(|| panic!("{run}"));
    assert_eq!(edit["change"], "refreshed");
    assert_eq!(edit["new_digest"], moved.as_str());
    assert_eq!(
        edit["platforms_changed"],
        serde_json::json!(["linux/arm64"])
    );
    assert_eq!(setup.deploy_text(), Setup::deploy(&moved));
    // Only amd64 runs here: the arm64 rebuild is no reason to move the pin.
    setup
        .context
        .write("deploy.yaml", Setup::deploy(&setup.pinned));
    let amd64_only = setup.run(&[
        "pin",
        ".",
        "--write",
        "--platform",
        "linux/amd64",
        "--format",
        "json",
    ]);
    amd64_only.assert_code(0);
    assert_eq!(
        amd64_only.json()["summary"]["platforms_unchanged"],
        1,
        "{amd64_only}"
    );
    assert_eq!(setup.deploy_text(), Setup::deploy(&setup.pinned));
}

#[test]
fn a_lost_platform_is_refused_and_the_rest_is_written() {
    let mut setup = Setup::new();
    let rebuilt = setup.registry.push_platform_image(KEY, "linux/amd64");
    let moved = setup.registry.push_index_of(KEY, &[rebuilt]);
    let run = setup.run(&["pin", ".", "--write", "--format", "json"]);
    run.assert_code(1);
    let doc = run.json();
    let refused = &doc["missing_platform"][0];
    assert_eq!(refused["path"], "deploy.yaml", "{run}");
    assert_eq!(refused["digest"], setup.pinned.as_str());
    assert_eq!(refused["new_digest"], moved.as_str());
    assert_eq!(
        refused["platforms"],
        serde_json::json!(["linux/amd64", "linux/arm64"])
    );
    assert_eq!(refused["missing"], serde_json::json!(["linux/arm64"]));
    assert_eq!(doc["summary"]["missing_platform"], 1);
    assert_eq!(doc["edits"].as_array().unwrap().len(), 1, "{run}");
    assert_eq!(doc["written"], serde_json::json!(["other.yaml"]));
    assert_eq!(setup.deploy_text(), Setup::deploy(&setup.pinned));

    let text = setup.run(&["pin", "."]);
    text.assert_code(1);
    assert!(
        text.stderr.contains(&format!(
            "error: deploy.yaml:6:14: not written: {moved} for quay.io/org/img:1.0@{} lacks linux/arm64 (platforms in force: linux/amd64, linux/arm64)",
            setup.pinned
        )),
        "{text}"
    );
}

#[test]
fn a_floating_tag_lacking_a_configured_platform_is_refused() {
    let mut setup = Setup::new();
    let only_amd64 = setup
        .registry
        .push_platform_image("quay.io/org/single:3.0", "linux/amd64");
    let index = setup
        .registry
        .push_index_of("quay.io/org/single:3.0", &[only_amd64]);
    setup
        .context
        .write("single.yaml", "image: quay.io/org/single:3.0\n");
    setup
        .context
        .write(".tagpin.yaml", "platforms: [linux/amd64, linux/arm64]\n");
    let run = setup.run(&["pin", ".", "--write", "--format", "json"]);
    run.assert_code(1);
    let doc = run.json();
    let refused = &doc["missing_platform"][0];
    assert_eq!(refused["path"], "single.yaml", "{run}");
    assert_eq!(refused["digest"], serde_json::Value::Null);
    assert_eq!(refused["new_digest"], index.as_str());
    assert_eq!(refused["missing"], serde_json::json!(["linux/arm64"]));
    assert_eq!(
        std::fs::read_to_string(setup.context.path("single.yaml")).unwrap(),
        "image: quay.io/org/single:3.0\n"
    );
    // The other floating tag serves both: pinned.
    assert_eq!(doc["written"], serde_json::json!(["other.yaml"]), "{run}");
    // `--platform` replaces the config's list.
    let flag = setup.run(&["pin", ".", "--platform", "linux/amd64", "--format", "json"]);
    flag.assert_code(0);
    assert_eq!(
        flag.json()["missing_platform"],
        serde_json::json!([]),
        "{flag}"
    );
}

#[test]
fn an_invalid_platform_is_a_usage_error() {
    let setup = Setup::new();
    let run = setup.run(&["pin", ".", "--platform", "amd64"]);
    run.assert_code(2);
    assert!(run.stderr.contains("invalid platform \"amd64\""), "{run}");
}

#[test]
fn check_online_applies_the_same_rules() {
    let mut setup = Setup::new();
    setup
        .context
        .write("other.yaml", "# nothing floating here\n");
    // Moved with the same children: not stale.
    setup
        .registry
        .push_index_of(KEY, &[setup.amd64.clone(), setup.arm64.clone()]);
    let same = setup.run(&["check", ".", "--online", "--format", "json"]);
    same.assert_code(0);
    let doc = same.json();
    assert_eq!(doc["online"]["stale"], serde_json::json!([]), "{same}");
    assert_eq!(
        doc["online"]["platforms_unchanged"][0]["path"],
        "deploy.yaml"
    );
    // Lost arm64: fails as a missing platform, not as a plain stale digest.
    let rebuilt = setup.registry.push_platform_image(KEY, "linux/amd64");
    let moved = setup.registry.push_index_of(KEY, &[rebuilt]);
    let lost = setup.run(&["check", ".", "--online", "--format", "json"]);
    lost.assert_code(1);
    let doc = lost.json();
    let problem = &doc["online"]["missing_platform"][0];
    assert_eq!(problem["current_digest"], moved.as_str(), "{lost}");
    assert_eq!(problem["error"], "missing-platform");
    assert_eq!(doc["summary"]["missing_platform"], 1);
    assert_eq!(doc["online"]["stale"], serde_json::json!([]));
    // A current pin is checked against configured platforms.
    setup.context.write("deploy.yaml", Setup::deploy(&moved));
    let current = setup.run(&["check", ".", "--online", "--platform", "linux/arm64"]);
    current.assert_code(1);
    assert!(current.stdout.contains("missing platform"), "{current}");
    setup.run(&["check", ".", "--online"]).assert_code(0);
}

#[test]
fn a_literal_from_platform_narrows_the_platforms_in_force() {
    let mut setup = Setup::new();
    setup
        .context
        .write("other.yaml", "# nothing floating here\n");
    let amd64 = setup
        .registry
        .push_platform_image("quay.io/org/base:1", "linux/amd64");
    setup.registry.push_index_of("quay.io/org/base:1", &[amd64]);
    let dockerfile = "FROM --platform=linux/amd64 quay.io/org/base:1 AS build\n\
                      FROM --platform=$BUILDPLATFORM quay.io/org/base:1\n";
    setup.context.write("Dockerfile", dockerfile);
    // arm64 is configured, but the first stage only ever runs on amd64: it is pinned; the
    // second stage is not narrowed (an expansion) and its tag lacks arm64: refused.
    let run = setup.run(&[
        "pin",
        ".",
        "--write",
        "--platform",
        "linux/amd64",
        "--platform",
        "linux/arm64",
        "--format",
        "json",
    ]);
    run.assert_code(1);
    let doc = run.json();
    assert_eq!(doc["edits"].as_array().unwrap().len(), 1, "{run}");
    assert_eq!(doc["edits"][0]["line"], 1);
    assert_eq!(doc["missing_platform"][0]["line"], 2);
    assert_eq!(
        doc["missing_platform"][0]["missing"],
        serde_json::json!(["linux/arm64"])
    );
    let written = std::fs::read_to_string(setup.context.path("Dockerfile")).unwrap();
    assert!(
        written.starts_with("FROM --platform=linux/amd64 quay.io/org/base:1@sha256:"),
        "{written}"
    );
    assert!(written.ends_with("FROM --platform=$BUILDPLATFORM quay.io/org/base:1\n"));
}

#[test]
fn a_second_run_reads_the_manifests_from_the_cache() {
    let mut setup = Setup::new();
    let s390x = setup.registry.push_platform_image(KEY, "linux/s390x");
    setup
        .registry
        .push_index_of(KEY, &[setup.amd64.clone(), setup.arm64.clone(), s390x]);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let args = ["pin", ".", "--format", "json", "--cache-dir", cache_dir];
    let first = setup.run(&args);
    first.assert_code(0);
    assert_eq!(setup.gets(), 2, "{:?}", setup.registry.proxy().requests());
    assert_eq!(first.json()["stats"]["cache_hits"], 0);
    let second = setup.run(&args);
    second.assert_code(0);
    // The request log: the tags are looked up again (a HEAD each), no manifest is fetched.
    assert_eq!(setup.gets(), 0, "{:?}", setup.registry.proxy().requests());
    assert_eq!(
        setup.registry.proxy().count("HEAD", "/v2/quay.io/org/img/"),
        1
    );
    let doc = second.json();
    assert_eq!(doc["stats"]["cache_hits"], 2, "{second}");
    assert_eq!(doc["stats"]["requests"].get("GET"), None, "{second}");
    assert_eq!(doc["summary"]["platforms_unchanged"], 1);
    // `--cache-dir none` keeps nothing and reads nothing.
    let uncached = setup.run(&["pin", ".", "--format", "json", "--cache-dir", "none"]);
    uncached.assert_code(0);
    assert_eq!(setup.gets(), 2);
}

#[test]
fn latest_pull_policy_adds_if_not_present_to_the_containers_being_pinned() {
    let mut setup = Setup::new();
    setup
        .context
        .write("other.yaml", "# nothing floating here\n");
    let digest = setup
        .registry
        .push("quay.io/org/tool:latest", Flavour::Image);
    let manifest = "spec:\r\n  containers:\r\n    - name: a\r\n      image: \"quay.io/org/tool\"   # the tool\r\n      args: [run]\r\n    - name: b\r\n      image: quay.io/org/tool:latest\r\n      imagePullPolicy: Always\r\n";
    let template = "spec:\n  containers:\n  {{- if .Values.tool }}\n  - image: quay.io/org/tool:latest\n    {{- with .Values.args }}\n    args: {{ toYaml . | nindent 6 }}\n    {{- end }}\n  {{- end }}\n";
    setup.context.write("k8s.yaml", manifest);
    setup.context.write("chart/templates/pod.yaml", template);
    setup.context.write(
        "chart/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 1.0.0\n",
    );
    let run = setup.run(&[
        "pin",
        ".",
        "--write",
        "--latest",
        "pull-policy",
        "--format",
        "json",
    ]);
    run.assert_code(0);
    let doc = run.json();
    let added: Vec<(String, u64)> = doc["edits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["pull_policy_added"] == true)
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_owned(),
                e["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        added,
        [
            ("chart/templates/pod.yaml".to_owned(), 4),
            ("k8s.yaml".to_owned(), 4)
        ],
        "{run}"
    );
    assert_eq!(doc["summary"]["warnings"], 0, "{run}");
    assert_eq!(
        std::fs::read_to_string(setup.context.path("k8s.yaml")).unwrap(),
        format!(
            "spec:\r\n  containers:\r\n    - name: a\r\n      image: \"quay.io/org/tool:latest@{digest}\"   # the tool\r\n      imagePullPolicy: IfNotPresent\r\n      args: [run]\r\n    - name: b\r\n      image: quay.io/org/tool:latest@{digest}\r\n      imagePullPolicy: Always\r\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(setup.context.path("chart/templates/pod.yaml")).unwrap(),
        format!(
            "spec:\n  containers:\n  {{{{- if .Values.tool }}}}\n  - image: quay.io/org/tool:latest@{digest}\n    imagePullPolicy: IfNotPresent\n    {{{{- with .Values.args }}}}\n    args: {{{{ toYaml . | nindent 6 }}}}\n    {{{{- end }}}}\n  {{{{- end }}}}\n"
        )
    );
    // Idempotent: nothing left to pin, nothing added twice.
    let again = setup.run(&[
        "pin",
        ".",
        "--write",
        "--latest",
        "pull-policy",
        "--format",
        "json",
    ]);
    again.assert_code(0);
    assert_eq!(again.json()["edits"], serde_json::json!([]), "{again}");
    // `keep` (the default) pins and warns.
    setup.context.write("k8s.yaml", manifest);
    let keep = setup.run(&["pin", ".", "--format", "json"]);
    keep.assert_code(0);
    let doc = keep.json();
    assert_eq!(doc["summary"]["warnings"], 1, "{keep}");
    assert_eq!(
        doc["edits"][0]["pull_policy_added"],
        serde_json::Value::Null
    );
}

/// The image of `platform` in an edit's `built` (`--details`).
fn built_for<'a>(edit: &'a serde_json::Value, platform: &str) -> &'a serde_json::Value {
    edit["built"]
        .as_array()
        .and_then(|all| all.iter().find(|b| b["platform"] == platform))
        .unwrap_or_else(|| panic!("no {platform} in {edit}"))
}

#[test]
fn details_show_when_the_new_images_were_built_and_are_cached() {
    const REBUILT: &str = "2026-12-01T08:15:00Z";
    let mut setup = Setup::new();
    let amd64 = setup
        .registry
        .push_platform_image_created(KEY, "linux/amd64", REBUILT);
    let arm64 = setup
        .registry
        .push_platform_image_created(KEY, "linux/arm64", REBUILT);
    let moved = setup
        .registry
        .push_index_of(KEY, &[amd64.clone(), arm64.clone()]);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let args = [
        "pin",
        ".",
        "--details",
        "--format",
        "json",
        "--cache-dir",
        cache_dir,
    ];
    let blobs = |setup: &Setup| {
        setup
            .registry
            .proxy()
            .count("GET", "/v2/quay.io/org/img/blobs/")
    };

    let first = setup.run(&args);
    first.assert_code(0);
    let doc = first.json();
    let edit = doc["edits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "deploy.yaml")
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(edit["new_digest"], moved.as_str());
    assert_eq!(
        edit["platforms_changed"],
        serde_json::json!(["linux/amd64", "linux/arm64"])
    );
    for (platform, image) in [("linux/amd64", &amd64), ("linux/arm64", &arm64)] {
        let built = built_for(edit, platform);
        assert_eq!(built["digest"], image.digest.as_str(), "{first}");
        assert_eq!(built["created"], REBUILT, "{first}");
        assert_eq!(built.get("error"), None);
    }
    // The first pin of the other tag: each platform of its index, with the testkit's time.
    let other = doc["edits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "other.yaml")
        .unwrap();
    assert_eq!(other["change"], "pinned");
    for platform in ["linux/amd64", "linux/arm64"] {
        assert_eq!(
            built_for(other, platform)["created"],
            tagpin_testkit::CREATED,
            "{first}"
        );
    }
    // Two indexes for the rules, then per platform its manifest and its config blob.
    assert_eq!(setup.gets(), 6, "{:?}", setup.registry.proxy().requests());
    assert_eq!(blobs(&setup), 2);

    // The same digests again: everything by digest comes from the cache.
    let second = setup.run(&args);
    second.assert_code(0);
    assert_eq!(setup.gets(), 0, "{:?}", setup.registry.proxy().requests());
    assert_eq!(blobs(&setup), 0);
    assert_eq!(setup.registry.proxy().count("GET", "/blobs/"), 0);
    let doc = second.json();
    assert_eq!(doc["stats"]["requests"].get("GET"), None, "{second}");
    assert_eq!(doc["edits"], first.json()["edits"]);

    // Without `--details`: no request for it, and no `built`.
    let plain = setup.run(&["pin", ".", "--format", "json", "--cache-dir", "none"]);
    plain.assert_code(0);
    assert_eq!(setup.gets(), 2, "{:?}", setup.registry.proxy().requests());
    assert_eq!(setup.registry.proxy().count("GET", "/blobs/"), 0);
    assert!(
        plain.json()["edits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e.get("built").is_none()),
        "{plain}"
    );
}

#[test]
fn a_config_that_cannot_be_read_leaves_only_its_time_out() {
    let mut setup = Setup::new();
    let rebuilt = setup.registry.push_platform_image(KEY, "linux/arm64");
    let moved = setup
        .registry
        .push_index_of(KEY, &[setup.amd64.clone(), rebuilt]);
    // Every blob of the repository answers 500: the configs cannot be read.
    setup
        .registry
        .proxy()
        .answer("/v2/quay.io/org/img/blobs/", 500, "down");
    let run = setup.run(&[
        "pin",
        ".",
        "--write",
        "--details",
        "--format",
        "json",
        "--cache-dir",
        "none",
    ]);
    run.assert_code(0);
    assert_eq!(setup.deploy_text(), Setup::deploy(&moved), "{run}");
    let doc = run.json();
    let edit = &doc["edits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "deploy.yaml")
        .unwrap_or_else(|| panic!("{run}"));
    assert_eq!(
        edit["platforms_changed"],
        serde_json::json!(["linux/arm64"])
    );
    let arm64 = built_for(edit, "linux/arm64");
    assert_eq!(arm64["created"], serde_json::Value::Null, "{run}");
    assert_eq!(arm64["error"], "unexpected-status");
    assert!(
        run.stderr
            .contains("note: deploy.yaml:6:14: quay.io/org/img:1.0@")
            && run
                .stderr
                .contains("the build time of linux/arm64 (sha256:"),
        "{run}"
    );
}
