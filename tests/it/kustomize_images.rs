//! Kustomize's base/overlay idiom: an `images:` entry with `newTag` or `digest` replaces the
//! tag and digest of the resources its kustomization builds (its own directory's, and those it
//! reaches through `resources:`), so `scan` reports such a resource's reference as unwritable;
//! the entries themselves stay writable.

use crate::context::{TestContext, reference};

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: nginx\n        - name: app\n          image: myapp\n        - name: cache\n          image: redis:7\n";

/// `tagpin scan --format json` of the repository in `context`.
fn scan(context: &TestContext) -> serde_json::Value {
    context
        .run(["scan", ".", "--format", "json"])
        .assert_code(0)
        .json()
}

/// The `unwritable` reason of the reference at `path:line`, or `None` when writable.
fn unwritable(doc: &serde_json::Value, path: &str, line: u64) -> Option<String> {
    reference(doc, path, line)["unwritable"]
        .as_str()
        .map(str::to_owned)
}

#[test]
fn a_same_directory_kustomization_makes_its_resources_unwritable() {
    let context = TestContext::new();
    context.write("k8s/deployment.yaml", DEPLOYMENT);
    context.write(
        "k8s/kustomization.yaml",
        "resources:\n  - deployment.yaml\nimages:\n  - name: nginx\n    newTag: \"1.27\"\n  - name: myapp\n    newName: ghcr.io/acme/app\n    digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    );
    let doc = scan(&context);
    assert_eq!(
        unwritable(&doc, "k8s/deployment.yaml", 10).as_deref(),
        Some(
            "not written: `kustomization.yaml` (k8s) sets this image's tag with its `images` \
             entry `nginx` (line 4), so kustomize replaces what is written here"
        ),
        "{doc:#}"
    );
    let app = reference(&doc, "k8s/deployment.yaml", 12);
    assert_eq!(app["status"], "floating", "{doc:#}");
    assert!(
        app["unwritable"]
            .as_str()
            .is_some_and(|reason| reason.contains("this image's digest")
                && reason.contains("`myapp` (line 7)")),
        "{doc:#}"
    );
    // No `latest` warning: kustomize renders the entry's digest, not `latest`.
    assert_eq!(app["warnings"], serde_json::json!([]), "{doc:#}");
    // Not named by an entry: writable.
    assert_eq!(unwritable(&doc, "k8s/deployment.yaml", 14), None, "{doc:#}");
    // The entries themselves are still written.
    let entry = reference(&doc, "k8s/kustomization.yaml", 4);
    assert_eq!(
        (&entry["kind"], &entry["status"], &entry["unwritable"]),
        (
            &serde_json::json!("kustomize"),
            &serde_json::json!("floating"),
            &serde_json::Value::Null
        ),
        "{doc:#}"
    );
}

#[test]
fn an_overlay_makes_the_base_it_reaches_unwritable() {
    let context = TestContext::new();
    context.write("base/deployment.yaml", DEPLOYMENT);
    context.write("base/kustomization.yaml", "resources: [deployment.yaml]\n");
    context.write(
        "overlays/prod/kustomization.yaml",
        "resources: [../../base]\nimages:\n  - name: nginx\n    newTag: \"1.27\"\n",
    );
    let doc = scan(&context);
    assert_eq!(
        unwritable(&doc, "base/deployment.yaml", 10).as_deref(),
        Some(
            "not written: `kustomization.yaml` (overlays/prod) sets this image's tag with its \
             `images` entry `nginx` (line 3), so kustomize replaces what is written here"
        ),
        "{doc:#}"
    );
    assert_eq!(
        reference(&doc, "base/deployment.yaml", 10)["status"],
        "floating"
    );
    assert_eq!(
        unwritable(&doc, "base/deployment.yaml", 12),
        None,
        "{doc:#}"
    );
    assert_eq!(
        unwritable(&doc, "overlays/prod/kustomization.yaml", 3),
        None,
        "{doc:#}"
    );
}

#[test]
fn an_entry_with_only_new_name_leaves_the_resource_writable() {
    let context = TestContext::new();
    context.write("base/deployment.yaml", DEPLOYMENT);
    context.write(
        "base/kustomization.yaml",
        "resources: [deployment.yaml]\nimages:\n  - name: nginx\n    newName: mirror.example.com/nginx\n",
    );
    let doc = scan(&context);
    assert_eq!(
        unwritable(&doc, "base/deployment.yaml", 10),
        None,
        "{doc:#}"
    );
}

#[test]
fn a_resource_no_kustomization_reaches_stays_writable() {
    let context = TestContext::new();
    context.write("base/deployment.yaml", DEPLOYMENT);
    context.write("other/deployment.yaml", DEPLOYMENT);
    context.write(
        "base/kustomization.yaml",
        "resources: [deployment.yaml]\nimages:\n  - name: nginx\n    newTag: \"1.27\"\n",
    );
    let doc = scan(&context);
    assert!(
        unwritable(&doc, "base/deployment.yaml", 10).is_some(),
        "{doc:#}"
    );
    assert_eq!(
        unwritable(&doc, "other/deployment.yaml", 10),
        None,
        "{doc:#}"
    );
}

/// Two kustomizations that list each other, and one that lists itself: the walk ends.
#[test]
fn kustomizations_in_a_cycle_end() {
    let context = TestContext::new();
    context.write("a/deployment.yaml", DEPLOYMENT);
    context.write(
        "a/kustomization.yaml",
        "resources: [deployment.yaml, ../b, .]\nimages:\n  - name: nginx\n    newTag: \"1.27\"\n",
    );
    context.write("b/deployment.yaml", DEPLOYMENT);
    context.write(
        "b/kustomization.yaml",
        "resources: [../a]\nimages:\n  - name: myapp\n    newTag: v2\n",
    );
    let doc = scan(&context);
    for path in ["a/deployment.yaml", "b/deployment.yaml"] {
        assert!(unwritable(&doc, path, 10).is_some(), "{path}: {doc:#}");
        assert!(unwritable(&doc, path, 12).is_some(), "{path}: {doc:#}");
        assert_eq!(unwritable(&doc, path, 14), None, "{path}: {doc:#}");
    }
}

/// Kustomizations Kustomize would refuse or read nothing from: no panic, and the resources
/// stay writable.
#[test]
fn odd_kustomizations_change_nothing() {
    let kustomizations = [
        "resources: [deployment.yaml]\nimages: nginx\n",
        "resources: [deployment.yaml]\nimages: {name: nginx, newTag: \"1\"}\n",
        "resources: deployment.yaml\nimages:\n  - newTag: \"1\"\n  - [nginx]\n  - ~\n  - name: [nginx]\n    newTag: \"1\"\n",
        "resources: [{path: x}, 7, \"\", https://example.com/x, /]\nimages:\n  - name: nginx\n    newName: nginx\n",
        "images:\n  - name: nginx\n    newTag: \"\"\n    digest: ~\n",
    ];
    for kustomization in kustomizations {
        let context = TestContext::new();
        context.write("k8s/deployment.yaml", DEPLOYMENT);
        context.write("k8s/kustomization.yaml", kustomization);
        let doc = scan(&context);
        assert_eq!(
            unwritable(&doc, "k8s/deployment.yaml", 10),
            None,
            "{kustomization}: {doc:#}"
        );
    }
}

/// Kubebuilder's layout: `image: controller` is a placeholder the kustomization replaces, so it
/// is `local`, and the lint about pulling `latest` (with its `imagePullPolicy` edit) is not
/// given for an image no registry is asked for.
#[test]
fn a_local_placeholder_gets_no_pull_lint() {
    let context = TestContext::new();
    context.write(
        "config/manager/manager.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller-manager\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: controller # replaced by kustomize\n",
    );
    context.write(
        "config/manager/kustomization.yaml",
        "resources:\n  - manager.yaml\nimages:\n  - name: controller\n    newName: quay.io/acme/operator\n    newTag: v0.13.3\n",
    );
    let doc = scan(&context);
    let manager = reference(&doc, "config/manager/manager.yaml", 10);
    assert_eq!(manager["status"], "local", "{doc:#}");
    assert_eq!(manager["warnings"], serde_json::json!([]), "{doc:#}");
}
