//! The config file, `.tagpin.yaml`.
//!
//! Found, in this order: `--config FILE`, the `TAGPIN_CONFIG` variable, `.tagpin.yaml` in the
//! first PATH when that is a directory, `.tagpin.yaml` in the current directory. A file named
//! by the flag or the variable must exist; a discovered one is optional. Every key is optional;
//! an unknown key is an error that names the key and the file. `config/tagpin.yaml` documents
//! every key with its default, and `config/tagpin.schema.json` is its JSON schema.

use std::collections::BTreeMap;
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

/// The name of the config file tagpin looks for.
pub const FILE_NAME: &str = ".tagpin.yaml";

/// The config file's keys, exactly as `config/tagpin.schema.json` lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Globs of files to read, relative to the scanned root; empty means every file tagpin knows.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs of files and directories to skip, relative to the scanned root.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Reference patterns whose findings are reported as `ignored`: `ghcr.io/acme/*:dev`.
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Registry → `HOST[:PORT][/PREFIX]` to resolve that registry's images at.
    #[serde(default)]
    pub mirrors: BTreeMap<String, String>,
    /// Registries (as `host[:port]`) reached over plain HTTP; loopback always is.
    #[serde(default)]
    pub insecure_registries: Vec<String>,
    /// Registry requests in flight at once.
    pub concurrency: Option<NonZeroUsize>,
    /// Registry requests in flight at once per registry.
    pub per_registry_concurrency: Option<NonZeroUsize>,
    /// Timeout of one registry request, in seconds.
    pub timeout_seconds: Option<NonZeroU64>,
    /// The Helm command that renders charts; `none` renders nothing.
    pub helm: Option<String>,
    /// What to do with split image maps no rendering proves.
    pub unproven_values: Option<UnprovenValues>,
    /// User-defined patterns: references in text files tagpin does not know.
    #[serde(default)]
    pub custom: Vec<Custom>,
    /// Platforms (`os/arch[/variant]`) every new digest must serve.
    #[serde(default)]
    pub platforms: Vec<String>,
    /// What `pin` does for Kubernetes containers with the tag `latest`.
    pub latest: Option<LatestPolicy>,
    /// Whether `pin` and `pr` read when the images of each new digest were built.
    pub details: Option<bool>,
}

/// What `pin` does for a Kubernetes container whose reference has the tag `latest`, is being
/// pinned and sets no `imagePullPolicy` (kubelet then defaults to `Always`, even with a
/// digest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum LatestPolicy {
    /// Pin it and warn.
    #[default]
    Keep,
    /// Pin it and add `imagePullPolicy: IfNotPresent` to the container.
    PullPolicy,
}

/// What to do with a values split map whose edit no rendering of its chart proves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnprovenValues {
    /// Report it, with the reason, and write nothing.
    #[default]
    Report,
    /// Write it as its key names say (the digest into `digest:`, else after the tag).
    KeyNames,
}

/// One `custom` entry: the files it reads and the pattern that finds references in them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Custom {
    /// Globs, relative to the scanned directory, as `include` reads them.
    pub files: Vec<String>,
    /// A regex with a named group `ref`, or `name` with `tag` and/or `digest`; checked while
    /// parsing, so a bad one is an error at its `pattern:` line.
    #[serde(deserialize_with = "checked_pattern")]
    pub pattern: String,
}

fn checked_pattern<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let pattern = String::deserialize(deserializer)?;
    match tagpin_formats::CustomPattern::new(&pattern) {
        Ok(_) => Ok(pattern),
        Err(error) => {
            let mut message = format!("invalid `custom` pattern `{pattern}`: {error}");
            if let Some(source) = std::error::Error::source(&error) {
                // The regex error spans lines (it draws the pattern); keep its last line.
                let detail = source.to_string();
                let last = detail.lines().last().unwrap_or_default().trim();
                message.push_str(": ");
                message.push_str(last.trim_start_matches("error: "));
            }
            Err(serde::de::Error::custom(message))
        }
    }
}

/// A config file and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedConfig {
    pub path: PathBuf,
    pub config: Config,
}

/// A config file that does not parse: the YAML reader's message (it says all its error
/// knows), whose location is that of the `pattern:` key when a `custom` pattern is bad (the
/// reader gives its entry's).
#[derive(Debug)]
pub struct ConfigError {
    message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn new(source: &yaml_serde::Error, text: &str) -> Self {
        let rendered = source.to_string();
        let message = bad_pattern_entry(&rendered)
            .and_then(|entry| {
                let (line, column) = pattern_key(text, entry)?;
                let (what, _) = rendered.rsplit_once(" at line ")?;
                Some(format!("{what} at line {line} column {column}"))
            })
            .unwrap_or(rendered);
        Self { message }
    }
}

/// `N` when `rendered` is the error of `custom[N]`'s pattern.
fn bad_pattern_entry(rendered: &str) -> Option<usize> {
    let rest = rendered.strip_prefix("custom[")?;
    let (index, rest) = rest.split_once(']')?;
    rest.starts_with(": invalid `custom` pattern")
        .then(|| index.parse().ok())
        .flatten()
}

/// `(line, column)`, 1-based, of the `entry`-th `pattern` key after the `custom:` key: the
/// config's only key of that name.
fn pattern_key(text: &str, entry: usize) -> Option<(usize, usize)> {
    let custom = text
        .lines()
        .position(|line| line.starts_with("custom:") || line.starts_with("\"custom\":"))?;
    let mut seen = 0;
    for (number, line) in text.lines().enumerate().skip(custom) {
        for (at, _) in line.match_indices("pattern") {
            let before = line[..at].chars().next_back();
            let after = line[at + "pattern".len()..].trim_start_matches([' ', '"', '\'']);
            let is_key = before.is_none_or(|c| matches!(c, ' ' | '-' | '{' | ',' | '"' | '\''))
                && after.starts_with(':');
            if !is_key {
                continue;
            }
            if seen == entry {
                let column = line[..at].chars().count() + 1;
                let quoted = matches!(before, Some('"' | '\''));
                return Some((number + 1, if quoted { column - 1 } else { column }));
            }
            seen += 1;
        }
    }
    None
}

impl Config {
    /// Parses a config file's text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        // An empty file, or one holding only comments, is an empty config.
        let config: Option<Self> =
            yaml_serde::from_str(text).map_err(|error| ConfigError::new(&error, text))?;
        Ok(config.unwrap_or_default())
    }

    /// Reads and parses the config file at `path`.
    pub fn load(path: &Path) -> anyhow::Result<LoadedConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file `{}`", path.display()))?;
        let config = Self::parse(&text)
            .with_context(|| format!("invalid config file `{}`", path.display()))?;
        Ok(LoadedConfig {
            path: path.to_owned(),
            config,
        })
    }
}

/// Where to look for a config file nobody named: the first PATH when it is a directory, then
/// the current directory.
pub fn discover(first_path: Option<&Path>) -> Option<PathBuf> {
    let in_first = first_path
        .filter(|path| path.is_dir())
        .map(|dir| dir.join(FILE_NAME));
    in_first
        .into_iter()
        .chain(std::iter::once(PathBuf::from(FILE_NAME)))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn repo_file(path: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn parses_every_key() {
        let config = Config::parse(
            "include: ['charts/**']\n\
             exclude: [vendor]\n\
             ignore: ['ghcr.io/acme/*:dev']\n\
             mirrors: {quay.io: '127.0.0.1:5000/quay.io'}\n\
             insecure_registries: ['registry.lan:5000']\n\
             concurrency: 16\n\
             per_registry_concurrency: 4\n\
             timeout_seconds: 10\n\
             helm: /opt/helm/bin/helm\n\
             unproven_values: key-names\n",
        )
        .unwrap();
        assert_eq!(config.helm.as_deref(), Some("/opt/helm/bin/helm"));
        assert_eq!(config.unproven_values, Some(UnprovenValues::KeyNames));
        assert_eq!(config.include, ["charts/**"]);
        assert_eq!(config.exclude, ["vendor"]);
        assert_eq!(config.ignore, ["ghcr.io/acme/*:dev"]);
        assert_eq!(config.mirrors["quay.io"], "127.0.0.1:5000/quay.io");
        assert_eq!(config.insecure_registries, ["registry.lan:5000"]);
        assert_eq!(config.concurrency, NonZeroUsize::new(16));
        assert_eq!(config.per_registry_concurrency, NonZeroUsize::new(4));
        assert_eq!(config.timeout_seconds, NonZeroU64::new(10));
    }

    #[test]
    fn empty_and_comment_only_files_are_empty_configs() {
        for text in ["", "\n", "# nothing here\n", "\r\n# crlf\r\n"] {
            assert_eq!(Config::parse(text).unwrap(), Config::default(), "{text:?}");
        }
    }

    #[test]
    fn crlf_files_parse_like_lf_files() {
        let lf = "exclude:\n  - vendor\nignore:\n  - 'busybox'\n";
        assert_eq!(
            Config::parse(&lf.replace('\n', "\r\n")).unwrap(),
            Config::parse(lf).unwrap()
        );
    }

    #[test]
    fn unknown_key_names_the_key_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "exclude: [vendor]\nignroe: ['busybox']\n").unwrap();
        let error = Config::load(&path).unwrap_err();
        let rendered = format!("{error:#}").replace(&dir.path().display().to_string(), "<dir>");
        insta::assert_snapshot!(rendered, @"invalid config file `<dir>/.tagpin.yaml`: unknown field `ignroe`, expected one of `include`, `exclude`, `ignore`, `mirrors`, `insecure_registries`, `concurrency`, `per_registry_concurrency`, `timeout_seconds`, `helm`, `unproven_values`, `custom`, `platforms`, `latest`, `details` at line 2 column 1");
    }

    #[test]
    fn custom_entries_parse_and_a_bad_pattern_is_an_error_at_its_pattern_line() {
        let config = Config::parse(
            "custom:\n  - files: ['**/images/*.tag']\n    pattern: '^(?P<ref>\\S+)$'\n",
        )
        .unwrap();
        assert_eq!(
            config.custom,
            [Custom {
                files: vec!["**/images/*.tag".to_owned()],
                pattern: "^(?P<ref>\\S+)$".to_owned(),
            }]
        );
        let bad = |text: &str| Config::parse(text).unwrap_err().to_string();
        insta::assert_snapshot!(
            bad("exclude: []\ncustom:\n  - files: [a]\n    pattern: '(?P<ref>\\S+'\n"),
            @r"custom[0]: invalid `custom` pattern `(?P<ref>\S+`: invalid regex: unclosed group at line 4 column 5"
        );
        insta::assert_snapshot!(
            bad("custom:\n  - files: [a]\n    pattern: '\\S+'\n"),
            @r"custom[0]: invalid `custom` pattern `\S+`: the pattern has no named group `ref` or `name` at line 3 column 5"
        );
        // The second entry's, in flow style, with a `pattern` word in the first one's value.
        insta::assert_snapshot!(
            bad("custom:\n  - {files: [pattern], pattern: '(?P<ref>x)'}\n  - {files: [b], \"pattern\": 'x'}\n"),
            @r#"custom[1]: invalid `custom` pattern `x`: the pattern has no named group `ref` or `name` at line 3 column 18"#
        );
        assert!(Config::parse("custom:\n  - pattern: '(?P<ref>x)'\n").is_err());
        assert!(
            Config::parse("custom:\n  - files: [a]\n    pattern: '(?P<ref>x)'\n    x: 1\n")
                .is_err()
        );
    }

    #[test]
    fn wrong_types_are_errors() {
        for text in [
            "concurrency: 0\n",
            "include: charts\n",
            "timeout_seconds: -1\n",
            "- a\n",
        ] {
            assert!(Config::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn the_documented_default_file_parses() {
        let config = Config::parse(&repo_file("config/tagpin.yaml")).unwrap();
        assert_eq!(
            config.concurrency,
            NonZeroUsize::new(crate::settings::DEFAULT_CONCURRENCY)
        );
        assert_eq!(
            config.per_registry_concurrency,
            NonZeroUsize::new(crate::settings::DEFAULT_PER_REGISTRY_CONCURRENCY)
        );
        assert_eq!(
            config.timeout_seconds,
            NonZeroU64::new(crate::settings::DEFAULT_TIMEOUT_SECONDS)
        );
    }

    /// The keys serde accepts, read from its own "expected one of" message.
    fn accepted_keys() -> BTreeSet<String> {
        let message = Config::parse("no_such_key: 1\n").unwrap_err().to_string();
        let list = message
            .split_once("expected one of ")
            .expect("serde lists the expected keys")
            .1;
        list.split(", ")
            .map(|key| key.split('`').nth(1).unwrap().to_owned())
            .collect()
    }

    #[test]
    fn the_schema_lists_exactly_the_keys_the_struct_accepts() {
        let schema: serde_json::Value =
            serde_json::from_str(&repo_file("config/tagpin.schema.json")).unwrap();
        assert_eq!(schema["additionalProperties"], false);
        let properties: BTreeSet<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(properties, accepted_keys());
    }

    #[test]
    fn the_default_file_sets_every_key_the_schema_lists() {
        let defaults: BTreeMap<String, yaml_serde::Value> =
            yaml_serde::from_str(&repo_file("config/tagpin.yaml")).unwrap();
        let keys: BTreeSet<String> = defaults.into_keys().collect();
        assert_eq!(keys, accepted_keys());
    }
}
