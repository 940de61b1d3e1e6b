//! Reading a file's text, with the checks that decide whether tagpin can scan it.
//!
//! A file that cannot be read, is over [`MAX_FILE_SIZE`], holds a NUL byte (binary) or is not
//! UTF-8 is an error: it is reported with its path and the run goes on, and `check` fails
//! because it cannot vouch for that file (exclude it in the config to accept that).
//!
//! An empty file is *not* an error: it holds no reference, so there is nothing to vouch for.
//! It is reported as skipped (`skipped` in JSON, a note with `-v`), so a run over an empty
//! placeholder file passes.

use std::fmt;
use std::io::Read as _;
use std::path::Path;

/// Files larger than this are not read: 10 MiB.
pub const MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

/// The YAML file at `path` (at most `largest` bytes) as one JSON document, for a pass that
/// reads another file a scanned one names (a kustomization's bases, a compose file's
/// override): tagpin's own reader when it types every value as a YAML library would, else
/// `yaml_serde`. `None` for a file that is missing, too large or not one readable document.
pub fn yaml_document(path: &Path, largest: u64) -> Option<serde_json::Value> {
    yaml_document_of(path, &text_up_to(path, largest)?)
}

/// The text of the file at `path`, when it is at most `largest` bytes, for a pass that reads
/// another file again: `None` for one that is missing, too large or not UTF-8.
pub fn text_up_to(path: &Path, largest: u64) -> Option<String> {
    if std::fs::metadata(path).ok()?.len() > largest {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// [`yaml_document`] of a file read already: its `text`, at `path`.
pub fn yaml_document_of(path: &Path, text: &str) -> Option<serde_json::Value> {
    tagpin_formats::chart::plain_document(path, text).or_else(|| yaml_serde::from_str(text).ok())
}

/// Why a file was not scanned.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    TooLarge { size: u64 },
    Binary { offset: usize },
    NotUtf8 { offset: usize },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(error) => write!(f, "cannot read: {error}"),
            Self::TooLarge { size } => write!(
                f,
                "not read: {size} bytes is over the {} MiB limit",
                MAX_FILE_SIZE / 1024 / 1024
            ),
            Self::Binary { offset } => {
                write!(f, "not read: binary file (NUL byte at byte {offset})")
            }
            Self::NotUtf8 { offset } => {
                write!(f, "not read: not UTF-8 (invalid byte at byte {offset})")
            }
        }
    }
}

/// What reading a file gave.
#[derive(Debug)]
pub enum Contents<'a> {
    Text(&'a str),
    /// Nothing to scan: zero bytes.
    Empty,
}

/// Which file a path is on disk: its device and inode (links followed), to tell a file
/// reached by two paths. Elsewhere than on unix, a hash of its canonical path.
#[cfg(unix)]
pub type Identity = (u64, u64);
#[cfg(not(unix))]
pub type Identity = u64;

/// The identity of the open `file`: asked of the file itself, which spares the kernel a
/// lookup of its path. `None` elsewhere than on unix, where the path tells it.
pub fn identity_of(file: &std::fs::File) -> Option<Identity> {
    identity_from(&file.metadata().ok()?)
}

#[cfg(unix)]
#[expect(
    clippy::unnecessary_wraps,
    reason = "the same signature as elsewhere, where it is None"
)]
fn identity_from(metadata: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt as _;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(not(unix))]
fn identity_from(_metadata: &std::fs::Metadata) -> Option<Identity> {
    None
}

/// Reads the file at `path` as UTF-8 text into `buffer`, which is cleared first. Reusing one
/// buffer per thread spares an allocation, and the page faults that come with it, per file.
pub fn read<'a>(path: &Path, buffer: &'a mut Vec<u8>) -> Result<Contents<'a>, ReadError> {
    read_open(path, buffer).map(|(contents, _)| contents)
}

/// [`read`], and the file still open, to ask [`identity_of`] when it is needed: most files
/// hold no reference, and no one asks which file they are.
pub fn read_open<'a>(
    path: &Path,
    buffer: &'a mut Vec<u8>,
) -> Result<(Contents<'a>, std::fs::File), ReadError> {
    buffer.clear();
    let mut file = std::fs::File::open(path).map_err(ReadError::Io)?;
    // The size a file claims can be wrong (files in /proc say 0): read at most one byte past
    // the limit to tell "at the limit" from "over it".
    (&mut file)
        .take(MAX_FILE_SIZE + 1)
        .read_to_end(buffer)
        .map_err(ReadError::Io)?;
    let size = buffer.len() as u64;
    if size > MAX_FILE_SIZE {
        // Keep the whole file's size for the message when the system knows it.
        let size = std::fs::metadata(path).map_or(size, |metadata| metadata.len().max(size));
        buffer.clear();
        buffer.shrink_to(1024 * 1024);
        return Err(ReadError::TooLarge { size });
    }
    decode(buffer).map(|contents| (contents, file))
}

/// The whole text of the file at `path`, and which file it is (see [`identity_of`]).
pub fn read_to_string_identified(path: &Path) -> std::io::Result<(String, Option<Identity>)> {
    let file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    // The size asked once, for the identity and the buffer (`File::read_to_string` would
    // ask the system again). Read up to that size, in one call: the read that finds the end
    // is spared. A file that grew meanwhile is read as it was (its fingerprint then differs
    // from what `pin` reads again, which refuses it); a file that says it is empty (as files
    // in /proc do) is read to its end.
    let size = metadata.len();
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    let limit = if size == 0 { u64::MAX } else { size };
    file.take(limit).read_to_end(&mut bytes)?;
    // What `std::fs::read_to_string` says of such a file.
    let text = String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })?;
    Ok((text, identity_from(&metadata)))
}

/// Whether [`read`] gives a file holding `text` to scan (a `str` is UTF-8 already): not
/// empty, no NUL byte, not over [`MAX_FILE_SIZE`].
pub fn is_scanned(text: &str) -> bool {
    !text.is_empty()
        && text.len() as u64 <= MAX_FILE_SIZE
        && memchr::memchr(0, text.as_bytes()).is_none()
}

/// The checks on a file's bytes.
pub fn decode(bytes: &[u8]) -> Result<Contents<'_>, ReadError> {
    if bytes.is_empty() {
        return Ok(Contents::Empty);
    }
    if let Some(offset) = memchr::memchr(0, bytes) {
        return Err(ReadError::Binary { offset });
    }
    std::str::from_utf8(bytes)
        .map(Contents::Text)
        .map_err(|error| ReadError::NotUtf8 {
            offset: error.valid_up_to(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_table() {
        for (bytes, expected) in [
            (&b""[..], "empty"),
            (b"image: nginx\n", "text"),
            (b"image: nginx\r\n", "text"),
            ("\u{feff}image: caf\u{e9}\n".as_bytes(), "text"),
            (b"image: a\0b", "not read: binary file (NUL byte at byte 8)"),
            (
                b"image: caf\xe9\n",
                "not read: not UTF-8 (invalid byte at byte 10)",
            ),
        ] {
            let got = match decode(bytes) {
                Ok(Contents::Empty) => "empty".to_owned(),
                Ok(Contents::Text(_)) => "text".to_owned(),
                Err(error) => error.to_string(),
            };
            assert_eq!(got, expected, "{bytes:?}");
        }
    }

    #[test]
    fn is_scanned_agrees_with_decode() {
        for text in ["", "image: nginx\n", "image: a\0b", "\u{feff}caf\u{e9}\r\n"] {
            let decoded = matches!(decode(text.as_bytes()), Ok(Contents::Text(_)));
            assert_eq!(is_scanned(text), decoded, "{text:?}");
        }
    }

    #[test]
    fn large_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_FILE_SIZE + 1).unwrap();
        let mut buffer = Vec::new();
        let error = read(&path, &mut buffer).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "not read: {} bytes is over the 10 MiB limit",
                MAX_FILE_SIZE + 1
            )
        );
        std::fs::File::create(&path)
            .unwrap()
            .set_len(MAX_FILE_SIZE)
            .unwrap();
        assert!(matches!(
            read(&path, &mut buffer),
            Err(ReadError::Binary { offset: 0 })
        ));
        std::fs::write(&path, "image: nginx\n").unwrap();
        assert!(matches!(
            read(&path, &mut buffer),
            Ok(Contents::Text("image: nginx\n"))
        ));
    }

    #[test]
    fn missing_files_are_io_errors() {
        let error = read(Path::new("/nonexistent/x.yaml"), &mut Vec::new()).unwrap_err();
        assert!(matches!(error, ReadError::Io(_)));
        assert!(error.to_string().starts_with("cannot read: "), "{error}");
    }

    /// A reading tells which file it read as a lookup of the path does, links followed: two
    /// paths to one file are one file, two files are two.
    #[cfg(unix)]
    #[test]
    fn a_reading_identifies_the_file_as_its_path_does() {
        use std::os::unix::fs::MetadataExt as _;
        let by_path = |path: &Path| {
            let metadata = std::fs::metadata(path).unwrap();
            Some((metadata.dev(), metadata.ino()))
        };
        let dir = tempfile::tempdir().unwrap();
        let (file, other, link) = (
            dir.path().join("a.yaml"),
            dir.path().join("b.yaml"),
            dir.path().join("link.yaml"),
        );
        std::fs::write(&file, "image: nginx\n").unwrap();
        std::fs::write(&other, "image: nginx\n").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let mut buffer = Vec::new();
        for path in [&file, &other, &link] {
            let (_, opened) = read_open(path, &mut buffer).unwrap();
            assert_eq!(identity_of(&opened), by_path(path), "{path:?}");
            let (text, identity) = read_to_string_identified(path).unwrap();
            assert_eq!((text.as_str(), identity), ("image: nginx\n", by_path(path)));
        }
        assert_eq!(by_path(&file), by_path(&link));
        assert_ne!(by_path(&file), by_path(&other));
        // Read whole, however large; a file that says it is empty is read to its end.
        let large = "image: nginx\n".repeat(20_000);
        std::fs::write(&other, &large).unwrap();
        assert_eq!(read_to_string_identified(&other).unwrap().0, large);
        #[cfg(target_os = "linux")]
        assert!(
            !read_to_string_identified(Path::new("/proc/self/status"))
                .unwrap()
                .0
                .is_empty()
        );
        std::fs::write(&other, b"image: \xff\n").unwrap();
        let error = read_to_string_identified(&other).unwrap_err();
        let std_error = std::fs::read_to_string(&other).unwrap_err();
        assert_eq!(error.to_string(), std_error.to_string());
    }
}
