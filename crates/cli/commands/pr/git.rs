//! The local git checkout `pr` runs in: its root, its HEAD, and whether the files `pr` would
//! commit hold exactly what HEAD holds. Asked of `git` itself, in the PATH's directory.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// A git checkout: its top-level directory and its HEAD commit.
#[derive(Debug)]
pub struct Checkout {
    /// Canonical.
    pub root: PathBuf,
    pub head: String,
}

impl Checkout {
    /// The checkout holding every one of `paths` (which exist).
    pub fn find(paths: &[PathBuf]) -> anyhow::Result<Self> {
        let first = paths.first().map_or(Path::new("."), PathBuf::as_path);
        let dir = if first.is_dir() {
            first.to_owned()
        } else {
            match first.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
                _ => PathBuf::from("."),
            }
        };
        let top = git(&dir, ["rev-parse", "--show-toplevel"]).with_context(|| {
            format!(
                "`{}` is not in a git checkout (tagpin pr commits what `pin --write` would write on top of the checkout's HEAD)",
                first.display()
            )
        })?;
        let root = std::fs::canonicalize(&top)
            .with_context(|| format!("cannot resolve the checkout's root `{top}`"))?;
        let head = git(&root, ["rev-parse", "--verify", "HEAD"])
            .context("the checkout has no HEAD commit")?;
        let checkout = Self { root, head };
        for path in paths {
            checkout.relative(path)?;
        }
        Ok(checkout)
    }

    /// `path`'s location from the checkout's root, `/`-separated (`.` for the root itself).
    /// A symbolic link is followed: the file a write would change is its target.
    pub fn relative(&self, path: &Path) -> anyhow::Result<String> {
        let canonical = std::fs::canonicalize(path)
            .with_context(|| format!("cannot resolve `{}`", path.display()))?;
        let Ok(relative) = canonical.strip_prefix(&self.root) else {
            bail!(
                "`{}` is outside the git checkout at `{}`",
                path.display(),
                self.root.display()
            );
        };
        let parts: Vec<String> = relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        Ok(if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        })
    }

    /// Which of `paths` (from the root) differ from HEAD: modified, staged or untracked.
    pub fn changed_since_head(&self, paths: &[String]) -> anyhow::Result<Vec<String>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec![
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let output = git(&self.root, args)?;
        // `XY path\0`, and for a rename or copy `XY new\0old\0`.
        let mut changed = Vec::new();
        let mut entries = output.split('\0');
        while let Some(entry) = entries.next() {
            if entry.len() < 4 {
                continue;
            }
            let (status, path) = entry.split_at(3);
            if status.starts_with('R') || status.starts_with('C') {
                entries.next();
            }
            changed.push(path.to_owned());
        }
        Ok(changed)
    }
}

/// Runs `git ARGS` in `dir` and returns its stdout, trimmed.
fn git<I, S>(dir: &Path, args: I) -> anyhow::Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("cannot run `git`")?;
    if !output.status.success() {
        bail!(
            "git: {}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    let stdout = String::from_utf8(output.stdout).context("git printed something not UTF-8")?;
    Ok(stdout.trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn finds_the_root_and_what_changed_since_head() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        run(root, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(root.join("deploy")).unwrap();
        std::fs::write(root.join("deploy/app.yaml"), "image: a\n").unwrap();
        std::fs::write(root.join("Dockerfile"), "FROM a\n").unwrap();
        run(root, &["add", "."]);
        run(root, &["commit", "-q", "-m", "one"]);

        let checkout = Checkout::find(&[root.join("deploy")]).unwrap();
        assert_eq!(checkout.root, std::fs::canonicalize(root).unwrap());
        assert_eq!(checkout.head.len(), 40);
        assert_eq!(
            checkout.relative(&root.join("deploy/app.yaml")).unwrap(),
            "deploy/app.yaml"
        );
        assert_eq!(checkout.relative(root).unwrap(), ".");

        let both = ["deploy/app.yaml".to_owned(), "Dockerfile".to_owned()];
        assert!(checkout.changed_since_head(&both).unwrap().is_empty());
        std::fs::write(root.join("Dockerfile"), "FROM b\n").unwrap();
        std::fs::write(root.join("deploy/new.yaml"), "image: b\n").unwrap();
        let mut all = both.to_vec();
        all.push("deploy/new.yaml".to_owned());
        assert_eq!(
            checkout.changed_since_head(&all).unwrap(),
            ["Dockerfile", "deploy/new.yaml"]
        );

        let outside = tempfile::tempdir().unwrap();
        let error = checkout.relative(outside.path()).unwrap_err();
        assert!(
            error.to_string().contains("outside the git checkout"),
            "{error}"
        );
        let error = Checkout::find(&[outside.path().to_owned()]).unwrap_err();
        assert!(
            error.to_string().contains("not in a git checkout"),
            "{error}"
        );
    }
}
