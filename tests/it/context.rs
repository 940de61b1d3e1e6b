//! `TestContext`: a temporary directory to write a repository into, and the `tagpin` binary run
//! in it with a scrubbed environment.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct TestContext {
    dir: tempfile::TempDir,
    /// Where a fake `$HOME` lives, outside the repository.
    home: tempfile::TempDir,
}

/// What a run of the binary gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout as JSON; panics with both streams when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self}"))
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code:\n{self}");
        self
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {}\n--- stdout\n{}--- stderr\n{}---",
            self.code, self.stdout, self.stderr
        )
    }
}

impl TestContext {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Writes `contents` at `relative`, creating directories.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> &Self {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        self
    }

    /// Writes every `(path, text)` of `files`, with CRLF line endings when `crlf`.
    pub fn write_all(&self, files: &[(&str, &str)], crlf: bool) -> &Self {
        for (path, text) in files {
            if crlf {
                self.write(path, text.replace('\n', "\r\n"));
            } else {
                self.write(path, text);
            }
        }
        self
    }

    /// Makes a symbolic link at `link` pointing to `target` (as written).
    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) -> &Self {
        let path = self.path(link);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
        self
    }

    /// The binary, in the repository root, with nothing from the outer environment but `PATH`
    /// (and no Helm).
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tagpin"));
        command
            .args(args)
            .current_dir(self.root())
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            // No chart is rendered unless a test asks (`crate::charts`): a `helm` on the
            // machine's PATH must not change what the other tests see.
            .env("TAGPIN_HELM", "none")
            .stdin(Stdio::null());
        command
    }

    /// Runs the binary with `args` and captures everything.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_command(&mut self.command(args))
    }

    #[expect(
        clippy::unused_self,
        reason = "reads as `context.run_command(…)` beside `run`"
    )]
    pub fn run_command(&self, command: &mut Command) -> Run {
        let output = command.output().unwrap();
        Run {
            code: output.status.code().expect("exited, not killed"),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }
}

/// The reference in a scan document at `path` and `line`; panics listing them all when absent.
pub fn reference<'a>(doc: &'a serde_json::Value, path: &str, line: u64) -> &'a serde_json::Value {
    let references = doc["references"]
        .as_array()
        .expect("references is an array");
    references
        .iter()
        .find(|r| r["path"] == path && r["line"] == line)
        .unwrap_or_else(|| {
            panic!(
                "no reference at {path}:{line}; found:\n{}",
                serde_json::to_string_pretty(references).unwrap()
            )
        })
}

/// `(path, line, status, text)` of every reference, in output order.
pub fn summary(doc: &serde_json::Value) -> Vec<(String, u64, String, String)> {
    doc["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["line"].as_u64().unwrap(),
                r["status"].as_str().unwrap().to_owned(),
                r["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Asserts that the references of `doc` are, in output order, at `expected`'s paths and lines
/// with its statuses (`context` says which run, in the message).
pub fn assert_statuses(doc: &serde_json::Value, expected: &[(&str, u64, &str)], context: &str) {
    let statuses: Vec<(String, u64, String)> = summary(doc)
        .into_iter()
        .map(|(path, line, status, _)| (path, line, status))
        .collect();
    let expected: Vec<(String, u64, String)> = expected
        .iter()
        .map(|(path, line, status)| ((*path).to_owned(), *line, (*status).to_owned()))
        .collect();
    assert_eq!(statuses, expected, "{context}: {doc:#}");
}

/// The error in a scan document about `path`; panics listing them all when absent.
pub fn error<'a>(doc: &'a serde_json::Value, path: &str) -> &'a str {
    let errors = doc["errors"].as_array().expect("errors is an array");
    errors
        .iter()
        .find(|e| e["path"] == path)
        .and_then(|e| e["message"].as_str())
        .unwrap_or_else(|| panic!("no error about {path}; errors: {errors:#?}"))
}
