//! The `tagpin` package's library: only the test hooks of `pin --write`.
//!
//! The end-to-end tests in `tests/` need to stop the binary between two writes, in the middle
//! of one, and to change a file between the scan and the write, deterministically. The hooks
//! that let them are compiled in only with the `test-hooks` feature, which the package enables
//! for its own tests through a dev-dependency on itself (which is why this library exists:
//! cargo ignores a dev-dependency on a package without one). A plain `cargo build --release`
//! or `cargo install` has no hook: every function here is then empty and no variable is read
//! (`scripts/check-release-hooks` checks that the release binary does not even hold their
//! names).

/// The variables the hooks read, with the `test-hooks` feature only.
#[cfg(feature = "test-hooks")]
pub mod env {
    /// `pin --write` calls `std::process::abort()` after writing this many files.
    pub const ABORT_AFTER_WRITES: &str = "TAGPIN_TEST_ABORT_AFTER_WRITES";
    /// Before its first write, `pin --write` creates the file this names and waits (up to a
    /// minute) until it is deleted.
    pub const PAUSE_BEFORE_WRITES: &str = "TAGPIN_TEST_PAUSE_BEFORE_WRITES";
    /// In each write, once the temporary file holds the new text and before it is renamed
    /// over the file, `pin --write` creates the file this names and waits (up to a minute)
    /// until it is deleted: a test kills it there with SIGKILL.
    pub const PAUSE_IN_WRITE: &str = "TAGPIN_TEST_PAUSE_IN_WRITE";
}

/// Called once before the first write.
pub fn before_writes() {
    #[cfg(feature = "test-hooks")]
    pause(env::PAUSE_BEFORE_WRITES);
}

/// Called after each file written, with the number written so far.
pub fn after_write(written: usize) {
    #[cfg(feature = "test-hooks")]
    if std::env::var(env::ABORT_AFTER_WRITES)
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        == Some(written)
    {
        std::process::abort();
    }
    #[cfg(not(feature = "test-hooks"))]
    let _ = written;
}

/// Called in each write between writing the temporary file and renaming it.
pub fn temporary_written() {
    #[cfg(feature = "test-hooks")]
    pause(env::PAUSE_IN_WRITE);
}

/// Creates the file `variable` names and waits (at most a minute) until the test deletes it.
#[cfg(feature = "test-hooks")]
fn pause(variable: &str) {
    use std::time::{Duration, Instant};
    let Some(path) = std::env::var_os(variable).filter(|value| !value.is_empty()) else {
        return;
    };
    let path = std::path::PathBuf::from(path);
    if std::fs::write(&path, b"").is_err() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}
