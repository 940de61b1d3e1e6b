use std::fmt;

/// What a resolver looks a tag up by: the normalised registry, repository and tag.
///
/// Two references that differ only in spelling (`busybox`, `docker.io/library/busybox:latest`)
/// share one key, so each distinct tag is looked up once per run.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct TagKey {
    pub registry: String,
    pub repository: String,
    pub tag: String,
}

impl TagKey {
    pub fn new(registry: &str, repository: &str, tag: &str) -> Self {
        Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.to_owned(),
        }
    }
}

impl fmt::Display for TagKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}:{}", self.registry, self.repository, self.tag)
    }
}
