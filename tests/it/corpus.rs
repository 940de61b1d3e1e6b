//! The cozystack corpus (`../shared/corpus/cozystack`, see its SOURCE.md): real charts whose
//! `:latest` references cozystack issue #3578 lists.
//!
//! The corpus lives beside the project in CI and in the development environment, not in a
//! user's clone: when it is absent this test says so and returns. `TAGPIN_CORPUS` points
//! elsewhere.

use std::io::Write as _;
use std::path::PathBuf;

use crate::context::{TestContext, reference};

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
