//! tagpin pins its own repository: its Dockerfile and workflows carry digests, so `check`
//! passes on it. A floating reference added to the project fails this test.

use crate::context::TestContext;

#[test]
fn this_repository_passes_its_own_check() {
    let root = env!("CARGO_MANIFEST_DIR");
    let run = TestContext::new().run(["check", root, "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    assert_eq!(doc["summary"]["floating"], 0, "{doc}");
    assert_eq!(doc["errors"].as_array().map(Vec::len), Some(0), "{doc}");
    // The Dockerfile's two FROM lines are what makes this meaningful: they are pinned.
    let pinned_in_dockerfile = doc["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "Dockerfile" && r["status"] == "pinned")
        .count();
    assert_eq!(pinned_in_dockerfile, 2, "{doc}");
}
