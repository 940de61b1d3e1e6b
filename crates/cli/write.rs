//! Writing files atomically, and only when nobody changed them since they were scanned.
//!
//! The new content goes to a temporary file in the same directory (so the rename cannot cross
//! filesystems), is flushed to disk, gets the original's permissions and is renamed over the
//! original: a reader, or a crash at any point, sees either the old content or the new one,
//! never a mix. A symbolic link is followed: its target is replaced, the link stays.

use std::fmt;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Why a file was not written.
#[derive(Debug)]
pub enum WriteError {
    /// The file no longer holds the text that was scanned: someone (a person, a formatter)
    /// edited it meanwhile. It keeps their edit.
    ChangedOnDisk,
    Io {
        /// What was being done: "cannot read", "cannot create a temporary file in …".
        action: String,
        source: std::io::Error,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChangedOnDisk => {
                f.write_str("changed on disk since it was scanned; not overwritten")
            }
            Self::Io { action, source } => write!(f, "{action}: {source}"),
        }
    }
}

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> WriteError {
    let action = action.into();
    move |source| WriteError::Io { action, source }
}

/// Replaces the file at `path`, which held `expected` when it was scanned, with `new_text`.
pub fn replace(path: &Path, expected: &str, new_text: &str) -> Result<(), WriteError> {
    let target: PathBuf = fs::canonicalize(path).map_err(io("cannot resolve the path"))?;
    // Read again just before writing: a file edited meanwhile keeps the edit rather than being
    // replaced by a rewrite of its older self.
    let current = fs::read(&target).map_err(io("cannot read"))?;
    if current != expected.as_bytes() {
        return Err(WriteError::ChangedOnDisk);
    }
    let permissions = fs::metadata(&target)
        .map_err(io("cannot read the permissions"))?
        .permissions();
    let directory = target.parent().unwrap_or_else(|| Path::new("/"));
    let mut temporary = tempfile::Builder::new()
        .prefix(".tagpin-")
        .suffix(".tmp")
        .tempfile_in(directory)
        .map_err(io(format!(
            "cannot create a temporary file in {}",
            directory.display()
        )))?;
    temporary
        .write_all(new_text.as_bytes())
        .map_err(io("cannot write the temporary file"))?;
    fs::set_permissions(temporary.path(), permissions)
        .map_err(io("cannot set the temporary file's permissions"))?;
    temporary
        .as_file()
        .sync_all()
        .map_err(io("cannot flush the temporary file"))?;
    tagpin::temporary_written();
    temporary
        .persist(&target)
        .map_err(|error| io("cannot rename the temporary file over the file")(error.error))?;
    // Make the rename itself durable; not every filesystem lets a directory be synced.
    if let Ok(directory) = fs::File::open(directory) {
        let _ = directory.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn replaces_keeping_permissions_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        fs::write(&path, "old\r\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
        replace(&path, "old\r\n", "new\r\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new\r\n");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["run.sh"]);
    }

    #[test]
    fn a_file_changed_since_the_scan_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        fs::write(&path, "edited meanwhile\n").unwrap();
        let error = replace(&path, "scanned\n", "rewritten\n").unwrap_err();
        assert!(matches!(error, WriteError::ChangedOnDisk), "{error}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "edited meanwhile\n");
    }

    #[test]
    fn a_symbolic_link_keeps_pointing_at_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.yaml");
        let link = dir.path().join("link.yaml");
        fs::write(&target, "old\n").unwrap();
        std::os::unix::fs::symlink("real.yaml", &link).unwrap();
        replace(&link, "old\n", "new\n").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
    }
}
