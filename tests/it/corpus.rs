//! The cozystack corpus (`../shared/corpus/cozystack`, see its SOURCE.md): real charts whose
//! `:latest` references cozystack issue #3578 lists.
//!
//! The corpus lives beside the project in CI and in the development environment, not in a
//! user's clone: when it is absent this test says so and returns. `TAGPIN_CORPUS` points
//! elsewhere.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::PathBuf;

use crate::context::{TestContext, reference};
use crate::pin::{copy_tree, tree};
use crate::registry::{Flavour, Registry};

fn corpus() -> Option<PathBuf> {
    let path = std::env::var_os("TAGPIN_CORPUS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/cozystack"),
        PathBuf::from,
    );
    if path.join("SOURCE.md").is_file() {
        Some(path)
    } else {
        // Straight to the process's stderr, past the test harness's capture, so it shows.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the cozystack corpus is not at {} (set TAGPIN_CORPUS to its directory)",
            path.display()
        );
        None
    }
}

/// The seven `:latest` references of cozystack issue #3578: `(path, line, column, text)`.
const ISSUE_3578: &[(&str, u64, u64, &str)] = &[
    (
        "packages/apps/http-cache/templates/haproxy/deployment.yaml",
        34,
        16,
        "haproxy:latest",
    ),
    (
        "packages/apps/kubernetes/templates/csi/deploy.yaml",
        82,
        18,
        "quay.io/openshift/origin-csi-external-provisioner:latest",
    ),
    (
        "packages/apps/kubernetes/templates/csi/deploy.yaml",
        112,
        18,
        "quay.io/openshift/origin-csi-external-attacher:latest",
    ),
    (
        "packages/apps/kubernetes/templates/csi/deploy.yaml",
        141,
        18,
        "quay.io/openshift/origin-csi-livenessprobe:latest",
    ),
    (
        "packages/apps/tcp-balancer/templates/deployment.yaml",
        35,
        16,
        "haproxy:latest",
    ),
    (
        "packages/system/kubevirt-csi-node/templates/deploy.yaml",
        204,
        18,
        "quay.io/openshift/origin-csi-node-driver-registrar:latest",
    ),
    (
        "packages/system/kubevirt-csi-node/templates/deploy.yaml",
        228,
        18,
        "quay.io/openshift/origin-csi-livenessprobe:latest",
    ),
];

#[test]
fn cozystack_issue_3578() {
    let Some(corpus) = corpus() else { return };
    let context = TestContext::new();
    let corpus_arg = corpus.to_str().unwrap();
    let run = context.run(["scan", corpus_arg, "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();

    for (path, line, column, text) in ISSUE_3578 {
        let found = reference(&doc, path, *line);
        assert_eq!(found["status"], "floating", "{found}");
        assert_eq!(found["column"], *column, "{found}");
        assert_eq!(found["text"], *text, "{found}");
        assert_eq!(found["tag"], "latest", "{found}");
    }

    let plunger = reference(&doc, "packages/system/flux-plunger/values.yaml", 1);
    assert_eq!(plunger["status"], "pinned", "{plunger}");
    assert_eq!(plunger["tag"], "latest", "{plunger}");
    assert_eq!(
        plunger["digest"],
        "sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72"
    );

    for (path, line) in [
        (
            "packages/system/kubevirt-csi-node/templates/deploy.yaml",
            166,
        ),
        ("packages/apps/kubernetes/templates/csi/deploy.yaml", 33),
        ("packages/apps/mariadb/templates/mariadb.yaml", 11),
        ("packages/apps/rabbitmq/templates/rabbitmq.yaml", 10),
    ] {
        assert_eq!(
            reference(&doc, path, line)["status"],
            "templated",
            "{path}:{line}"
        );
    }

    // Nothing on a comment line.
    for found in doc["references"].as_array().unwrap() {
        let path = corpus.join(found["path"].as_str().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        let line = text
            .lines()
            .nth(usize::try_from(found["line"].as_u64().unwrap()).unwrap() - 1)
            .unwrap();
        assert!(
            !line.trim_start().starts_with('#'),
            "reference on a comment line: {found}"
        );
    }

    let run = context.run(["check", corpus_arg]);
    run.assert_code(1);
    for (path, line, column, text) in ISSUE_3578 {
        let expected = format!("{path}:{line}:{column}: floating image reference {text}");
        assert!(
            run.stdout.lines().any(|l| l == expected),
            "missing `{expected}`:\n{run}"
        );
    }
}

/// The tags pushed for `pin`: the images of the seven references of issue #3578, and
/// flux-plunger's tag, whose pinned digest the push moves.
const PUSHED: &[&str] = &[
    "docker.io/library/haproxy:latest",
    "quay.io/openshift/origin-csi-external-provisioner:latest",
    "quay.io/openshift/origin-csi-external-attacher:latest",
    "quay.io/openshift/origin-csi-livenessprobe:latest",
    "quay.io/openshift/origin-csi-node-driver-registrar:latest",
    "ghcr.io/cozystack/cozystack/flux-plunger:latest",
];

const PLUNGER: &str = "packages/system/flux-plunger/values.yaml";
const PLUNGER_TEXT: &str = "ghcr.io/cozystack/cozystack/flux-plunger:latest@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72";

/// `pin --write` over a copy of the corpus: the seven `:latest` references gain the pushed
/// digest, flux-plunger's digest is refreshed, every reference not pushed is reported
/// unresolved and left as it was, and no other byte of any file changes.
#[test]
fn cozystack_pin_write() {
    let Some(corpus) = corpus() else { return };
    let context = TestContext::new();
    copy_tree(&corpus, context.root());
    let original = tree(context.root());

    // Every registry a reference names goes to the test registry: nothing reaches the
    // internet, and what was not pushed there is not found.
    let doc = context.run(["scan", ".", "--format", "json"]).json();
    let registries: BTreeSet<String> = doc["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["registry"].as_str().map(ToOwned::to_owned))
        .collect();
    let mut registry = Registry::start();
    let digests: BTreeMap<&str, String> = PUSHED
        .iter()
        .map(|key| (*key, registry.push(key, Flavour::OciIndex)))
        .collect();
    let mut args: Vec<String> = ["pin", ".", "--write", "--format", "json"]
        .map(ToOwned::to_owned)
        .to_vec();
    args.extend(registry.mirror_args(registries.iter().map(String::as_str)));

    let run = context.run(&args);
    run.assert_code(1);
    let report = run.json();

    // The expected rewrite: (path, line) → (text before, text after).
    let mut rewrites: BTreeMap<(String, usize), (String, String)> = BTreeMap::new();
    for (path, line, _, text) in ISSUE_3578 {
        let key = if text.starts_with("quay.io/") {
            (*text).to_owned()
        } else {
            format!("docker.io/library/{text}")
        };
        let digest = &digests[key.as_str()];
        rewrites.insert(
            ((*path).to_owned(), usize::try_from(*line).unwrap()),
            ((*text).to_owned(), format!("{text}@{digest}")),
        );
    }
    let plunger = &digests["ghcr.io/cozystack/cozystack/flux-plunger:latest"];
    rewrites.insert(
        (PLUNGER.to_owned(), 1),
        (
            PLUNGER_TEXT.to_owned(),
            format!("ghcr.io/cozystack/cozystack/flux-plunger:latest@{plunger}"),
        ),
    );

    let after = tree(context.root());
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        original.keys().collect::<Vec<_>>()
    );
    let mut changed = 0;
    for (path, old) in &original {
        let new = &after[path];
        if old == new {
            continue;
        }
        let old = String::from_utf8(old.clone()).unwrap();
        let new = String::from_utf8(new.clone()).unwrap();
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        assert_eq!(old_lines.len(), new_lines.len(), "{path}");
        for (index, (old_line, new_line)) in old_lines.iter().zip(&new_lines).enumerate() {
            if old_line == new_line {
                continue;
            }
            let Some((before, replacement)) = rewrites.get(&(path.clone(), index + 1)) else {
                panic!(
                    "{path}:{} changed and should not have:\n-{old_line}+{new_line}",
                    index + 1
                );
            };
            assert_eq!(
                old_line.matches(before.as_str()).count(),
                1,
                "{path}:{}",
                index + 1
            );
            assert_eq!(
                *new_line,
                old_line.replace(before.as_str(), replacement),
                "{path}:{}",
                index + 1
            );
            changed += 1;
        }
    }
    assert_eq!(changed, rewrites.len(), "every expected line changed once");

    let summary = &report["summary"];
    assert_eq!(summary["pinned"], 7, "{summary}");
    assert_eq!(summary["refreshed"], 1, "{summary}");
    let unresolved = report["unresolved"].as_array().unwrap();
    assert!(!unresolved.is_empty());
    for entry in unresolved {
        assert_eq!(entry["error"], "not-found", "{entry}");
        assert!(
            !PUSHED
                .iter()
                .any(|key| key.ends_with(entry["tag"].as_str().unwrap())
                    && key.contains(entry["image"].as_str().unwrap())),
            "a pushed tag came back unresolved: {entry}"
        );
    }
    assert_eq!(summary["unresolved"], unresolved.len());
}

/// Issue 12: cozystack keeps image references in `images/*.tag` files its build writes; a
/// two-line `custom` entry finds both, and the one that is floating.
#[test]
fn cozystack_tag_files_are_read_by_a_custom_pattern() {
    let Some(corpus) = corpus() else { return };
    let context = TestContext::new();
    context.write(
        "tagpin.yaml",
        "custom:\n  - files: ['**/images/*.tag']\n    pattern: '^(?P<ref>\\S+)$'\n",
    );
    let config = context.path("tagpin.yaml");
    let run = context.run([
        "--config",
        config.to_str().unwrap(),
        "scan",
        corpus.to_str().unwrap(),
        "--format",
        "json",
    ]);
    run.assert_code(0);
    let doc = run.json();
    let custom: BTreeMap<String, String> = doc["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "custom")
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        custom,
        BTreeMap::from([
            (
                "packages/apps/kubernetes/images/kubevirt-csi-driver.tag".to_owned(),
                "pinned".to_owned()
            ),
            (
                "packages/extra/seaweedfs/images/seaweedfs-cosi-driver.tag".to_owned(),
                "floating".to_owned()
            ),
        ]),
        "{doc}"
    );
}
