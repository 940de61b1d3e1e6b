//! Real Helm for the chart tests: `scripts/test` installs the `helm-python-sdk` package (Helm v4's
//! SDK) in a virtual environment with a `helm` command over it (`scripts/helm-shim`) and names
//! that command in `TAGPIN_TEST_HELM`. A test that needs it fails without it: it never skips.

use std::path::PathBuf;

/// The `helm` command the tests render charts with.
pub fn command() -> PathBuf {
    let Some(path) = std::env::var_os("TAGPIN_TEST_HELM") else {
        panic!(
            "TAGPIN_TEST_HELM is not set: run the tests with scripts/test, which installs Helm \
             (helm-python-sdk) and sets it"
        );
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "TAGPIN_TEST_HELM names {}, which does not exist: run scripts/test",
        path.display()
    );
    path
}

/// `--helm COMMAND` for the binary.
pub fn args() -> [String; 2] {
    ["--helm".to_owned(), command().display().to_string()]
}
