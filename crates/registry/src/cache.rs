//! Content fetched by digest, kept on disk across runs: manifests and image configs never
//! change for a digest, so a second run over the same digests asks the registry nothing.
//!
//! Layout: `<dir>/by-digest/<algorithm>/<hex>`, the exact bytes. A file is hashed again when
//! read and ignored (and removed) when it does not match, so a torn or tampered entry costs a
//! GET, never a wrong answer. Writes go through a temporary file renamed into place. Nothing
//! here is fatal: a cache that cannot be read or written is a cache miss. Tag → digest
//! lookups are never cached.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use tagpin_reference::Digest;

use crate::resolve::hash;

pub(crate) struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.join("by-digest"),
        }
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        self.dir
            .join(digest.algorithm().name())
            .join(digest.encoded())
    }

    /// The bytes cached for `digest`, when they hash to it.
    pub fn get(&self, digest: &Digest) -> Option<Vec<u8>> {
        let path = self.path(digest);
        let body = std::fs::read(&path).ok()?;
        if hash(digest.algorithm(), &body) == *digest {
            return Some(body);
        }
        tracing::debug!(path = %path.display(), "cache entry does not match its digest; removed");
        let _ = std::fs::remove_file(&path);
        None
    }

    /// Keeps `body` (which hashes to `digest`) for later runs; failures are only logged.
    pub fn put(&self, digest: &Digest, body: &[u8]) {
        let path = self.path(digest);
        let written = (|| {
            let parent = path.parent().expect("a cache path has a parent");
            std::fs::create_dir_all(parent)?;
            let mut file = tempfile::NamedTempFile::new_in(parent)?;
            file.write_all(body)?;
            file.persist(&path).map_err(|error| error.error)?;
            Ok::<_, std::io::Error>(())
        })();
        if let Err(error) = written {
            tracing::debug!(path = %path.display(), %error, "cannot write the cache entry");
        }
    }
}

#[cfg(test)]
mod tests {
    use tagpin_reference::DigestAlgorithm;

    use super::*;

    #[test]
    fn entries_are_kept_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let body = b"{\"schemaVersion\":2}".to_vec();
        let digest = hash(DigestAlgorithm::Sha256, &body);
        assert_eq!(cache.get(&digest), None);
        cache.put(&digest, &body);
        assert_eq!(cache.get(&digest), Some(body));
        // A file that no longer matches its name is a miss, and goes.
        let path = cache.path(&digest);
        std::fs::write(&path, b"tampered").unwrap();
        assert_eq!(cache.get(&digest), None);
        assert!(!path.exists());
    }

    #[test]
    fn an_unwritable_cache_is_only_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-directory");
        std::fs::write(&file, b"").unwrap();
        let cache = Cache::new(&file);
        let digest = hash(DigestAlgorithm::Sha256, b"x");
        cache.put(&digest, b"x");
        assert_eq!(cache.get(&digest), None);
    }
}
