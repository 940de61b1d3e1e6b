//! Walking the PATHs given: which files tagpin reads, in parallel.
//!
//! - A directory is walked with the `ignore` crate's parallel walker: `.gitignore` (also
//!   outside a git repository, and in parent directories), `.ignore`, `.git/info/exclude` and
//!   the global git excludes are respected. Hidden files and directories are walked (`.github`
//!   holds workflows); only `.git` is skipped, and directories of test data ([`holds_test_data`]).
//! - Symbolic links are followed, so a link loop is found and reported, and a dangling link is
//!   reported as unreadable.
//! - In a directory, only files whose [`FileKind::detect`] knows them are read, and the config
//!   file's `include`/`exclude` apply.
//! - A file given as a PATH is read as given, whatever its name: no filter applies, and a name
//!   tagpin does not know is scanned as [`FileKind::Shell`] ("other text").
//! - A file the config's `custom` entries name is read as [`FileKind::Custom`] with their
//!   patterns, whatever its name (given as PATH or walked; `include` does not limit it,
//!   `exclude` does in a walked directory).

use std::path::{Path, PathBuf};

use ignore::{WalkBuilder, WalkState};
use tagpin_formats::FileKind;

use crate::filter::PathFilter;

/// A file to read.
#[derive(Debug)]
pub struct Candidate {
    /// Where to open it: the PATH as given, joined with the path below it.
    pub path: PathBuf,
    /// The path made absolute, for the rules that look at parent directories (`templates/`,
    /// `.github/workflows/`), which a relative PATH like `.` hides.
    pub absolute: PathBuf,
    /// How to show it: see [`DisplayPaths`].
    pub display: String,
    pub kind: FileKind,
    /// For [`FileKind::Custom`]: the config's patterns that read it.
    pub patterns: Vec<tagpin_formats::CustomPattern>,
}

/// What the walker found.
#[derive(Debug)]
pub enum Visit {
    File(Candidate),
    /// A file no kind reads that changes how its neighbours are read: an `OpenShift` payload's
    /// `image-references` (see `release_payload`). Noted as walked, so that no directory is
    /// asked for it after the walk.
    Marker(PathBuf),
    /// A path that could not be walked: a symlink loop, a dangling link, an unreadable
    /// directory, a bad `.gitignore`.
    Error {
        display: String,
        message: String,
    },
}

/// How paths are shown. With one PATH that is a directory, a path is relative to it
/// (`charts/app/values.yaml`); a PATH that is a file is shown as given; with several PATHs,
/// each path is shown with its PATH in front (`charts/app/values.yaml` for PATH `charts`), so
/// files of different PATHs never look alike.
#[derive(Clone, Copy, Debug)]
pub struct DisplayPaths {
    pub prefix_root: bool,
}

impl DisplayPaths {
    pub fn for_roots(roots: &[PathBuf]) -> Self {
        Self {
            prefix_root: roots.len() > 1,
        }
    }

    fn show(self, root: &Path, path: &Path) -> String {
        let shown = match below(path, root) {
            Some(relative) if relative.as_os_str().is_empty() => root,
            Some(relative) if !self.prefix_root => relative,
            _ => path,
        };
        shown.to_string_lossy().into_owned()
    }
}

/// Walks every PATH in `roots` and calls `visit` from the walker's threads.
pub fn walk(roots: &[PathBuf], filter: &PathFilter, visit: &(dyn Fn(Visit) + Sync)) {
    let display = DisplayPaths::for_roots(roots);
    for root in roots {
        walk_root(root, filter, display, visit);
    }
}

fn walk_root(
    root: &Path,
    filter: &PathFilter,
    display: DisplayPaths,
    visit: &(dyn Fn(Visit) + Sync),
) {
    let root_owned = root.to_owned();
    let dir_filter = filter.clone();
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(true)
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            if entry.file_name() == ".git" {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            if is_dir && holds_test_data(entry.file_name()) {
                return false;
            }
            match below(entry.path(), &root_owned) {
                Some(relative) if is_dir => dir_filter.enters(relative),
                _ => true,
            }
        })
        .build_parallel();

    walker.run(|| {
        Box::new(|result| {
            match result {
                Ok(entry) => {
                    let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
                    if !is_file {
                        return WalkState::Continue;
                    }
                    let path = entry.path();
                    if entry.file_name() == crate::release_payload::MARKER {
                        visit(Visit::Marker(path.to_owned()));
                    }
                    // A file given as PATH is matched as given, one below it relative to it.
                    let relative = if entry.depth() == 0 {
                        path.strip_prefix(".").unwrap_or(path)
                    } else {
                        below(path, root).unwrap_or(path)
                    };
                    let patterns = filter.custom_patterns(relative);
                    let absolute = absolute(path);
                    let detected = if patterns.is_empty() {
                        FileKind::detect(&absolute)
                    } else {
                        Some(FileKind::Custom)
                    };
                    let kind = if entry.depth() == 0 {
                        Some(detected.unwrap_or(FileKind::Shell))
                    } else {
                        detected.filter(|_| filter.reads_or_custom(relative, !patterns.is_empty()))
                    };
                    if let Some(kind) = kind {
                        visit(Visit::File(Candidate {
                            path: path.to_owned(),
                            absolute,
                            display: display.show(root, path),
                            kind,
                            patterns,
                        }));
                    }
                }
                Err(error) => {
                    let (path, message) = describe(&error);
                    // A dangling link whose name tagpin would not read anyway is no one's concern.
                    let relevant = path.as_deref().is_none_or(|path| {
                        path == root
                            || path.is_dir()
                            || FileKind::detect(path).is_some()
                            || matches!(error_kind(&error), Some(ErrorKind::Loop))
                    });
                    if relevant {
                        visit(Visit::Error {
                            display: path.map_or_else(
                                || root.to_string_lossy().into_owned(),
                                |path| display.show(root, &path),
                            ),
                            message,
                        });
                    }
                }
            }
            WalkState::Continue
        })
    });
}

/// Directories whose files are the data of a test (`testdata`, Go's convention; `fixtures`,
/// Ruby's, Python's and many others' (`spec/fixtures`, `test/fixtures`); `__fixtures__` and
/// `__snapshots__`, JavaScript's; `.kyverno-test` and `.chainsaw-test`, a Kyverno policy's
/// test resources for the Kyverno CLI and for Chainsaw):
/// a test compares them or what they give to what it expects, and a policy's test pods hold
/// the very tags its policy must refuse, so a digest written there breaks the test. They are
/// not walked; named as a PATH, such a directory is read.
fn holds_test_data(name: &std::ffi::OsStr) -> bool {
    matches!(
        name.to_str(),
        Some(
            "testdata"
                | "fixtures"
                | "__fixtures__"
                | "__snapshots__"
                | ".kyverno-test"
                | ".chainsaw-test"
        )
    )
}

/// `path` relative to `root`, as `Path::strip_prefix` gives it. The walker's paths are
/// `root` joined with names, so the bytes after `root` and a separator are most often the
/// answer: taking a path apart into components, three times per file, was 2% of a scan.
fn below<'p>(path: &'p Path, root: &Path) -> Option<&'p Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let bytes = path.as_os_str().as_bytes();
        let root_bytes = root.as_os_str().as_bytes();
        let rest = bytes.strip_prefix(root_bytes).and_then(|rest| {
            if rest.is_empty() || root_bytes.ends_with(b"/") {
                Some(rest)
            } else {
                rest.strip_prefix(b"/")
            }
        });
        // Whatever components would read otherwise (`.`, doubled or trailing separators) is
        // left to `strip_prefix`.
        if let Some(rest) = rest.filter(|rest| is_plain_relative(rest)) {
            return Some(Path::new(std::ffi::OsStr::from_bytes(rest)));
        }
    }
    path.strip_prefix(root).ok()
}

/// Whether `rest` is a relative path whose components are its `/`-separated parts: no `.`
/// part, no empty part but for an empty path.
#[cfg(unix)]
fn is_plain_relative(rest: &[u8]) -> bool {
    rest.is_empty()
        || rest
            .split(|&b| b == b'/')
            .all(|part| !part.is_empty() && part != b".")
}

/// The path as an absolute path (see [`Candidate::absolute`]).
fn absolute(path: &Path) -> PathBuf {
    if is_plain_absolute(path) {
        // What `std::path::absolute` would give, without taking it apart (once per file).
        return path.to_owned();
    }
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// Whether `path` is absolute with nothing `std::path::absolute` removes: no `.` component,
/// no doubled or trailing separator.
fn is_plain_absolute(path: &Path) -> bool {
    let text = path.as_os_str().as_encoded_bytes();
    let removable = memchr::memmem::find(text, b"//").is_some()
        || memchr::memmem::find(text, b"/./").is_some()
        || text.ends_with(b"/.")
        || (text.len() > 1 && text.ends_with(b"/"));
    cfg!(unix) && path.is_absolute() && !removable
}

enum ErrorKind {
    Loop,
}

fn error_kind(error: &ignore::Error) -> Option<ErrorKind> {
    match error {
        ignore::Error::Loop { .. } => Some(ErrorKind::Loop),
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => error_kind(err),
        _ => None,
    }
}

/// The path an error is about and what to say about it.
fn describe(error: &ignore::Error) -> (Option<PathBuf>, String) {
    match error {
        ignore::Error::WithPath { path, err } => (Some(path.clone()), describe(err).1),
        ignore::Error::WithDepth { err, .. } => describe(err),
        ignore::Error::WithLineNumber { line, err } => {
            let (path, message) = describe(err);
            (path, format!("line {line}: {message}"))
        }
        ignore::Error::Loop { ancestor, child } => (
            Some(child.clone()),
            format!(
                "symlink loop: not walked, it leads back to `{}`",
                ancestor.display()
            ),
        ),
        ignore::Error::Io(error) if error.kind() == std::io::ErrorKind::NotFound => {
            (None, format!("cannot read: {error} (a dangling symlink?)"))
        }
        ignore::Error::Io(error) => (None, format!("cannot read: {error}")),
        ignore::Error::Partial(errors) => {
            let path = errors.iter().find_map(|error| describe(error).0);
            let messages: Vec<String> = errors.iter().map(|error| describe(error).1).collect();
            (path, messages.join("; "))
        }
        other => (None, other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn a_path_is_made_absolute_as_std_makes_it() {
        for path in [
            "/a/b/c.yaml",
            "/a//b/c.yaml",
            "/a/./b/c.yaml",
            "/a/b/.",
            "/a/b/",
            "/a/../b",
            "/",
            "a/b.yaml",
            "./a/b.yaml",
            ".",
        ] {
            let path = Path::new(path);
            // As text: paths compare equal by components, whatever their separators.
            assert_eq!(
                absolute(path).as_os_str(),
                std::path::absolute(path).unwrap().as_os_str(),
                "{path:?}"
            );
        }
    }

    #[test]
    fn a_path_below_its_root_is_what_strip_prefix_gives() {
        let roots = [
            "/r", "/r/", "r", "./r", ".", "./", "/", "r/./s", "r//s", "/r/s/..",
        ];
        let rests = [
            "", "a", "a/b.yaml", "/a", "a//b", "./a", "a/./b", "a/.", "a/", ".", "..", "../a",
            ".a/b", "a..", "s/a",
        ];
        for root in roots {
            for rest in rests {
                for path in [format!("{root}{rest}"), format!("{root}/{rest}")] {
                    let (path, root) = (Path::new(&path), Path::new(root));
                    // As text: a path compares equal to another by components.
                    assert_eq!(
                        below(path, root).map(Path::as_os_str),
                        path.strip_prefix(root).ok().map(Path::as_os_str),
                        "{path:?} below {root:?}"
                    );
                }
            }
        }
        assert_eq!(
            below(Path::new("/r/a/b.yaml"), Path::new("/r")),
            Some(Path::new("a/b.yaml"))
        );
        assert_eq!(below(Path::new("/rs/a"), Path::new("/r")), None);
    }

    fn collect(roots: &[PathBuf], filter: &PathFilter) -> (Vec<(String, FileKind)>, Vec<String>) {
        let files = Mutex::new(Vec::new());
        let errors = Mutex::new(Vec::new());
        let markers = Mutex::new(Vec::new());
        walk(roots, filter, &|visit| match visit {
            Visit::File(candidate) => files
                .lock()
                .unwrap()
                .push((candidate.display, candidate.kind)),
            Visit::Error { display, message } => {
                errors.lock().unwrap().push(format!("{display}: {message}"));
            }
            Visit::Marker(path) => {
                let shown = below(&path, &roots[0]).unwrap_or(&path).display();
                markers.lock().unwrap().push(format!("marker {shown}"));
            }
        });
        let mut files = files.into_inner().unwrap();
        let mut errors = errors.into_inner().unwrap();
        // A marker is reported among the errors, which no test expects otherwise.
        errors.extend(markers.into_inner().unwrap());
        files.sort();
        errors.sort();
        (files, errors)
    }

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "image: nginx:1.27\n").unwrap();
        }
        dir
    }

    #[test]
    fn walks_known_files_respecting_gitignore() {
        let dir = tree(&[
            ".gitignore",
            "Dockerfile",
            "README.md",
            "chart/values.yaml",
            "chart/templates/deploy.yaml",
            ".github/workflows/ci.yml",
            ".git/config.yaml",
            "build/out.yaml",
            "pkg/testdata/deploy.yaml",
            "spec/fixtures/deploy.yaml",
            "policy/.kyverno-test/resource.yaml",
            "policy/.chainsaw-test/bad-pod.yaml",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        let (files, errors) = collect(&[dir.path().to_owned()], &PathFilter::default());
        assert_eq!(
            files,
            [
                (".github/workflows/ci.yml".to_owned(), FileKind::Workflow),
                ("Dockerfile".to_owned(), FileKind::Dockerfile),
                (
                    "chart/templates/deploy.yaml".to_owned(),
                    FileKind::HelmTemplate
                ),
                ("chart/values.yaml".to_owned(), FileKind::Yaml),
            ]
        );
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn a_release_payload_marker_is_noted_as_walked() {
        let dir = tree(&[
            "manifests/image-references",
            "manifests/deploy.yaml",
            "build/image-references",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        let (files, notes) = collect(&[dir.path().to_owned()], &PathFilter::default());
        assert_eq!(
            files,
            [("manifests/deploy.yaml".to_owned(), FileKind::Yaml)]
        );
        assert_eq!(notes, ["marker manifests/image-references"]);
    }

    #[test]
    fn a_directory_of_test_data_is_read_only_when_named() {
        let dir = tree(&["pkg/testdata/deploy.yaml", "pkg/deploy.yaml"]);
        let (files, _) = collect(&[dir.path().to_owned()], &PathFilter::default());
        assert_eq!(files, [("pkg/deploy.yaml".to_owned(), FileKind::Yaml)]);
        let named = dir.path().join("pkg/testdata");
        let (files, _) = collect(std::slice::from_ref(&named), &PathFilter::default());
        assert_eq!(files.len(), 1, "{files:?}");
    }

    #[test]
    fn explicit_files_are_read_as_given() {
        let dir = tree(&["notes.txt", "chart/values.yaml"]);
        let file = dir.path().join("notes.txt");
        let (files, _) = collect(std::slice::from_ref(&file), &PathFilter::default());
        assert_eq!(
            files,
            [(file.to_string_lossy().into_owned(), FileKind::Shell)]
        );
    }

    #[test]
    fn several_roots_show_their_root() {
        let dir = tree(&["a/x.yaml", "b/x.yaml"]);
        let roots = [dir.path().join("a"), dir.path().join("b")];
        let (files, _) = collect(&roots, &PathFilter::default());
        let shown: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
        let expected: Vec<String> = roots
            .iter()
            .map(|root| root.join("x.yaml").to_string_lossy().into_owned())
            .collect();
        assert_eq!(shown, expected);
    }

    #[test]
    fn exclude_prunes_directories_and_include_selects_files() {
        let dir = tree(&["vendor/a.yaml", "charts/a/values.yaml", "deploy/app.yaml"]);
        let filter = PathFilter::new(
            &["charts/**".to_owned(), "vendor/**".to_owned()],
            &["vendor".to_owned()],
        )
        .unwrap();
        let (files, _) = collect(&[dir.path().to_owned()], &filter);
        assert_eq!(files, [("charts/a/values.yaml".to_owned(), FileKind::Yaml)]);
    }

    #[test]
    fn symlink_loops_and_dangling_links_are_reported() {
        let dir = tree(&["a/values.yaml"]);
        std::os::unix::fs::symlink("..", dir.path().join("a/loop")).unwrap();
        std::os::unix::fs::symlink("missing.yaml", dir.path().join("gone.yaml")).unwrap();
        std::os::unix::fs::symlink("missing.txt", dir.path().join("gone.txt")).unwrap();
        let (files, errors) = collect(&[dir.path().to_owned()], &PathFilter::default());
        assert_eq!(files, [("a/values.yaml".to_owned(), FileKind::Yaml)]);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("a/loop: symlink loop"), "{errors:?}");
        assert!(
            errors[1].starts_with("gone.yaml: cannot read"),
            "{errors:?}"
        );
    }
}
