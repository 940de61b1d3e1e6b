//! Writing files atomically, only inside the PATHs given, only when nobody changed them since
//! they were scanned, and keeping what the file was besides its text.
//!
//! The new content goes to a temporary file in the same directory (so the rename cannot cross
//! filesystems), gets the original's owner, group, mode and extended attributes, is flushed to
//! disk and is renamed over the original: a reader, or a crash at any point, sees either the
//! old content or the new one, never a mix. docs/safety.md lists the guarantees and their
//! tests. Refused, with the reason:
//!
//! - a file whose real path (links followed) is outside every PATH given: a symbolic link in
//!   the tree must not steer a write at any file the user can write;
//! - a file with several hard links: the rename would give only this name the new text;
//! - a read-only file (no write bit, or not writable by this user);
//! - a file whose owner, group or extended attributes cannot be given to the new file.
//!
//! A temporary file is locked (`flock`) while it is written; one left behind by a killed run
//! (`.tagpin-*.tmp`, unlocked) is removed by the next write in its directory.

use std::fmt;
use std::fs;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

/// The prefix and suffix of tagpin's temporary files.
const TEMPORARY_PREFIX: &str = ".tagpin-";
const TEMPORARY_SUFFIX: &str = ".tmp";

/// Why a file was not written.
#[derive(Debug)]
pub enum WriteError {
    /// The file no longer holds the text that was scanned: someone (a person, a formatter)
    /// edited it meanwhile. It keeps their edit.
    ChangedOnDisk,
    /// The path leads, through the symbolic link `link` (which points to `link_target`), to
    /// `target`, outside every PATH given.
    OutsidePaths {
        link: PathBuf,
        link_target: PathBuf,
        target: PathBuf,
    },
    /// The file has `links` names; a rename would replace only one of them.
    HardLinks { links: u64 },
    /// The file is read-only (mode `mode`), or this user may not write it.
    ReadOnly { mode: u32 },
    /// The new file cannot be given the old one's owner and group.
    Owner {
        uid: u32,
        gid: u32,
        source: std::io::Error,
    },
    /// The new file cannot be given one of the old one's extended attributes.
    Attribute {
        name: String,
        source: std::io::Error,
    },
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
            Self::OutsidePaths {
                link,
                link_target,
                target,
            } => write!(
                f,
                "not written: `{}` is a symbolic link to `{}`, and the file it leads to, `{}`, is \
                 outside the PATHs given",
                link.display(),
                link_target.display(),
                target.display()
            ),
            Self::HardLinks { links } => write!(
                f,
                "not written: the file has {links} hard links, and replacing it would give the \
                 new text to this name only (the others would keep the old file)"
            ),
            Self::ReadOnly { mode } => write!(
                f,
                "not written: the file is read-only (mode {mode:04o}); make it writable to pin it"
            ),
            Self::Owner { uid, gid, source } => write!(
                f,
                "not written: cannot keep its owner and group ({uid}:{gid}): {source}"
            ),
            Self::Attribute { name, source } => write!(
                f,
                "not written: cannot keep its extended attribute `{name}`: {source}"
            ),
            Self::Io { action, source } => write!(f, "{action}: {source}"),
        }
    }
}

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> WriteError {
    let action = action.into();
    move |source| WriteError::Io { action, source }
}

/// The PATHs given, as real paths (links followed): a file is written only when its real
/// path is one of them or under one. A PATH named on the command line is taken as given: a
/// link that is itself a PATH may lead anywhere; links found inside it may not.
#[derive(Clone, Debug, Default)]
pub struct Roots {
    roots: Vec<PathBuf>,
}

impl Roots {
    pub fn new(paths: &[PathBuf]) -> Self {
        Self {
            roots: paths
                .iter()
                .filter_map(|path| fs::canonicalize(path).ok())
                .collect(),
        }
    }

    fn contains(&self, real: &Path) -> bool {
        self.roots.iter().any(|root| real.starts_with(root))
    }
}

/// The checks that need no writing: `path` leads inside `roots`, is one name of its file, and
/// is writable. Returns its real path.
pub fn check(path: &Path, roots: &Roots) -> Result<PathBuf, WriteError> {
    let target = fs::canonicalize(path).map_err(io("cannot resolve the path"))?;
    if !roots.contains(&target) {
        let (link, link_target) = first_link(path).unwrap_or_else(|| {
            (
                path.to_owned(),
                fs::read_link(path).unwrap_or_else(|_| target.clone()),
            )
        });
        return Err(WriteError::OutsidePaths {
            link,
            link_target,
            target,
        });
    }
    let metadata = fs::metadata(&target).map_err(io("cannot read the file's metadata"))?;
    platform::check(&target, &metadata)?;
    Ok(target)
}

/// The first symbolic link on the way to `path` (a directory on the way, or the file), and
/// what it points to as written.
fn first_link(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut walked = PathBuf::new();
    for component in path.components() {
        walked.push(component);
        if matches!(component, Component::Normal(_))
            && fs::symlink_metadata(&walked).is_ok_and(|m| m.file_type().is_symlink())
        {
            let target = fs::read_link(&walked).ok()?;
            return Some((walked, target));
        }
    }
    None
}

/// Replaces the file at `path`, which held `expected` when it was scanned, with `new_text`,
/// after [`check`].
pub fn replace(
    path: &Path,
    expected: &str,
    new_text: &str,
    roots: &Roots,
) -> Result<(), WriteError> {
    let target = check(path, roots)?;
    // Read again just before writing: a file edited meanwhile keeps the edit rather than being
    // replaced by a rewrite of its older self.
    let current = fs::read(&target).map_err(io("cannot read"))?;
    if current != expected.as_bytes() {
        return Err(WriteError::ChangedOnDisk);
    }
    drop(current);
    let metadata = fs::metadata(&target).map_err(io("cannot read the file's metadata"))?;
    let directory = target.parent().unwrap_or_else(|| Path::new("/"));
    remove_leftovers(directory);
    let mut temporary = locked_temporary(directory)?;
    temporary
        .write_all(new_text.as_bytes())
        .map_err(io("cannot write the temporary file"))?;
    platform::copy_owner_and_attributes(&target, &metadata, temporary.as_file())?;
    fs::set_permissions(temporary.path(), metadata.permissions())
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

/// A new temporary file in `directory`, locked for as long as it is open. A run that removes
/// leftovers may unlink a file in the instant between its creation and its lock; it is then
/// made again.
fn locked_temporary(directory: &Path) -> Result<tempfile::NamedTempFile, WriteError> {
    loop {
        let temporary = tempfile::Builder::new()
            .prefix(TEMPORARY_PREFIX)
            .suffix(TEMPORARY_SUFFIX)
            .tempfile_in(directory)
            .map_err(io(format!(
                "cannot create a temporary file in {}",
                directory.display()
            )))?;
        if platform::lock(temporary.as_file()) {
            return Ok(temporary);
        }
    }
}

/// Removes the temporary files that runs killed while writing left in `directory`: those
/// named like tagpin's and not locked by a live run. Nothing else is touched.
pub fn remove_leftovers(directory: &Path) {
    let Ok(entries) = fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(TEMPORARY_PREFIX) && name.ends_with(TEMPORARY_SUFFIX)) {
            continue;
        }
        if !entry.file_type().is_ok_and(|kind| kind.is_file()) {
            continue;
        }
        platform::remove_if_abandoned(&entry.path());
    }
}

#[cfg(unix)]
mod platform {
    use std::fs;
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    use std::path::Path;

    use rustix::fs::{Access, FlockOperation, XattrFlags};

    use super::WriteError;

    pub fn check(target: &Path, metadata: &fs::Metadata) -> Result<(), WriteError> {
        if metadata.nlink() > 1 {
            return Err(WriteError::HardLinks {
                links: metadata.nlink(),
            });
        }
        let mode = metadata.permissions().mode() & 0o7777;
        // Root may write anything: a file without any write bit is read-only for tagpin too.
        if mode & 0o222 == 0 || rustix::fs::access(target, Access::WRITE_OK).is_err() {
            return Err(WriteError::ReadOnly { mode });
        }
        Ok(())
    }

    /// Gives `temporary` the owner, group and extended attributes of the file at `target`.
    pub fn copy_owner_and_attributes(
        target: &Path,
        metadata: &fs::Metadata,
        temporary: &fs::File,
    ) -> Result<(), WriteError> {
        let ours = temporary
            .metadata()
            .map_err(super::io("cannot read the temporary file's metadata"))?;
        if (ours.uid(), ours.gid()) != (metadata.uid(), metadata.gid()) {
            std::os::unix::fs::fchown(temporary, Some(metadata.uid()), Some(metadata.gid()))
                .map_err(|source| WriteError::Owner {
                    uid: metadata.uid(),
                    gid: metadata.gid(),
                    source,
                })?;
        }
        let original = fs::File::open(target).map_err(super::io("cannot open"))?;
        for (name, value) in
            attributes(&original).map_err(super::io("cannot list its extended attributes"))?
        {
            rustix::fs::fsetxattr(temporary, name.as_bytes(), &value, XattrFlags::empty())
                .map_err(|errno| WriteError::Attribute {
                    name: name.clone(),
                    source: errno.into(),
                })?;
        }
        Ok(())
    }

    /// Every extended attribute of `file`, with its value; none where the filesystem has none.
    fn attributes(file: &fs::File) -> std::io::Result<Vec<(String, Vec<u8>)>> {
        let size = match rustix::fs::flistxattr_query(file) {
            Ok(size) => size,
            Err(errno) if errno == rustix::io::Errno::NOTSUP => return Ok(Vec::new()),
            Err(errno) => return Err(errno.into()),
        };
        let mut names = vec![0_u8; size];
        let length = rustix::fs::flistxattr(file, &mut names[..])?;
        names.truncate(length);
        let mut attributes = Vec::new();
        for name in names.split(|&b| b == 0).filter(|name| !name.is_empty()) {
            let size = rustix::fs::fgetxattr_query(file, name)?;
            let mut value = vec![0_u8; size];
            let length = rustix::fs::fgetxattr(file, name, &mut value[..])?;
            value.truncate(length);
            attributes.push((String::from_utf8_lossy(name).into_owned(), value));
        }
        Ok(attributes)
    }

    /// Locks `file` for as long as it is open; `false` when it was unlinked before the lock
    /// was had (by a run removing leftovers). A filesystem without locks is written unlocked.
    pub fn lock(file: &fs::File) -> bool {
        if rustix::fs::flock(file, FlockOperation::LockExclusive).is_err() {
            return true;
        }
        file.metadata()
            .map_or(true, |metadata| metadata.nlink() > 0)
    }

    /// Removes `path` when no live run holds its lock, and it is still the file locked.
    pub fn remove_if_abandoned(path: &Path) {
        let Ok(file) = fs::File::open(path) else {
            return;
        };
        if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
            return;
        }
        let same = match (file.metadata(), fs::symlink_metadata(path)) {
            (Ok(open), Ok(named)) => (open.dev(), open.ino()) == (named.dev(), named.ino()),
            _ => false,
        };
        if same {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(not(unix))]
mod platform {
    use std::fs;
    use std::path::Path;

    use super::WriteError;

    pub fn check(_target: &Path, metadata: &fs::Metadata) -> Result<(), WriteError> {
        if metadata.permissions().readonly() {
            return Err(WriteError::ReadOnly { mode: 0o444 });
        }
        Ok(())
    }

    pub fn copy_owner_and_attributes(
        _target: &Path,
        _metadata: &fs::Metadata,
        _temporary: &fs::File,
    ) -> Result<(), WriteError> {
        Ok(())
    }

    pub fn lock(_file: &fs::File) -> bool {
        true
    }

    pub fn remove_if_abandoned(_path: &Path) {}
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn roots(dir: &Path) -> Roots {
        Roots::new(&[dir.to_owned()])
    }

    #[test]
    fn replaces_keeping_permissions_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        fs::write(&path, "old\r\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
        replace(&path, "old\r\n", "new\r\n", &roots(dir.path())).unwrap();
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
        let error = replace(&path, "scanned\n", "rewritten\n", &roots(dir.path())).unwrap_err();
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
        replace(&link, "old\n", "new\n", &roots(dir.path())).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new\n");
    }

    /// Only tagpin's own, unlocked temporary files are removed; a locked one (a live run's)
    /// and other files stay.
    #[test]
    fn leftovers_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let left = dir.path().join(".tagpin-abc123.tmp");
        fs::write(&left, "half").unwrap();
        let other = dir.path().join(".other-abc.tmp");
        fs::write(&other, "keep").unwrap();
        let live = locked_temporary(dir.path()).unwrap();
        remove_leftovers(dir.path());
        assert!(!left.exists());
        assert!(other.exists());
        assert!(live.path().exists(), "a live run's temporary file stays");
    }
}
