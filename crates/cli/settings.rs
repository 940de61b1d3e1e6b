//! Settings: what a run uses, merged from flags, the environment and the config file.
//!
//! Precedence, highest first: **command-line flags > environment variables > config file >
//! defaults**. Setting by setting:
//!
//! | setting | flag | environment | config key | default |
//! |---|---|---|---|---|
//! | config file | `--config FILE` | `TAGPIN_CONFIG` | — | `.tagpin.yaml` in the first PATH (a directory), else in the current directory, else none |
//! | color | `--color WHEN` | `TAGPIN_COLOR`, then `NO_COLOR` (set and non-empty: `never`) | — | `auto` (color when the stream is a terminal) |
//! | mirrors | `--mirror R=H` (repeatable) | `TAGPIN_MIRRORS` (`R=H,R=H`) | `mirrors` | none |
//! | concurrency | `--concurrency N` | `TAGPIN_CONCURRENCY` | `concurrency` | 16 |
//! | per-registry concurrency | — | — | `per_registry_concurrency` | 8 |
//! | request timeout | — | — | `timeout_seconds` | 30 |
//! | deadline for resolving all tags | `--deadline SECONDS` | `TAGPIN_DEADLINE` | — | 300 |
//! | Helm renderer for charts | `--helm COMMAND` | `TAGPIN_HELM` | `helm` | `helm` on PATH (`none`: no rendering; a command chosen but not found is an error) |
//! | platforms every new digest must serve | `--platform OS/ARCH[/VARIANT]` (repeatable; replaces the config's list) | — | `platforms` | those of the digest already pinned; for a floating tag, all its index offers |
//! | manifest cache (by digest) | `--cache-dir DIR` (`none`: off) | `TAGPIN_CACHE_DIR` | — | `$XDG_CACHE_HOME/tagpin`, else `~/.cache/tagpin` (`~/Library/Caches/tagpin` on macOS) |
//! | `latest` containers (`pin`, `pr`) | `--latest keep\|pull-policy` | — | `latest` | `keep` (pin and warn) |
//! | build times of new digests (`pin`, `pr`) | `--details` | — | `details` | off |
//! | values maps no rendering proves | — | — | `unproven_values` | `report` (not written) |
//! | insecure registries | — | — | `insecure_registries` | none |
//! | include / exclude / ignore | — | — | `include`, `exclude`, `ignore` | none |
//! | verbosity | `-v`, `-q` | — | — | normal |
//! | ghcr.io and GitHub API token | — | `GITHUB_TOKEN`, then `GH_TOKEN` | — | none (`pr` needs one) |
//! | `pr`: repository | `--repo OWNER/NAME` | `GITHUB_REPOSITORY` | — | none (`pr` needs one) |
//! | `pr`: GitHub API base | — | `GITHUB_API_URL` | — | `https://api.github.com` |
//! | `pr`: base branch | `--base` | — | — | the repository's default branch |
//! | `pr`: branch, title, labels | `--branch`, `--title`, `--label` | — | — | `tagpin/digests`, "Pin container image digests", none |
//! | tracing output | `-vv` (debug) | `RUST_LOG` (a filter, overrides `-vv`) | — | none |
//!
//! Registry credentials also come from Docker's `config.json` (`$DOCKER_CONFIG/config.json`, else
//! `~/.docker/config.json`), read by `tagpin-registry` when a command resolves tags.
//!
//! Mirrors merge per registry: a flag replaces the variable's entry for the same registry,
//! which replaces the config file's. Docker Hub's names (`docker.io`, `index.docker.io`,
//! `registry-1.docker.io`, `registry.hub.docker.com`) are one registry: two different mirrors
//! for it from the same place (two flags, two entries of the variable or of the file) are an
//! error, not a silent choice. An environment variable set to the empty string counts
//! as unset. An invalid value anywhere is an error naming where it came from (exit code 2).

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};

use crate::args::{ColorChoice, GlobalArgs, PrArgs};
use crate::config::{self, Config, LatestPolicy, LoadedConfig, UnprovenValues};
use crate::filter::{CustomRules, IgnorePatterns, PathFilter};
use tagpin_registry::{Mirror, Platform, Secret};

/// Every environment variable tagpin reads.
pub mod env {
    /// A config file to use, like `--config`.
    pub const CONFIG: &str = "TAGPIN_CONFIG";
    /// `auto`, `always` or `never`, like `--color`.
    pub const COLOR: &str = "TAGPIN_COLOR";
    /// Comma-separated `REGISTRY=HOST[:PORT][/PREFIX]`, like repeated `--mirror` flags.
    pub const MIRRORS: &str = "TAGPIN_MIRRORS";
    /// Registry requests in flight at once, like `--concurrency`.
    pub const CONCURRENCY: &str = "TAGPIN_CONCURRENCY";
    /// Seconds resolving may take in all, like `--deadline`.
    pub const DEADLINE: &str = "TAGPIN_DEADLINE";
    /// Where manifests fetched by digest are kept, like `--cache-dir` (`none`: not kept).
    pub const CACHE_DIR: &str = "TAGPIN_CACHE_DIR";
    /// The base of the user cache directory on Linux and BSDs (else `~/.cache`).
    pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
    /// The home directory, for the default cache directory.
    pub const HOME: &str = "HOME";
    /// The Helm command that renders charts, like `--helm`.
    pub const HELM: &str = "TAGPIN_HELM";
    /// <https://no-color.org>: when set and not empty, no color unless `--color` or
    /// `TAGPIN_COLOR` asks for it.
    pub const NO_COLOR: &str = "NO_COLOR";
    /// A GitHub token for ghcr.io (what Actions provides); `GH_TOKEN` is read when it is unset.
    pub const GITHUB_TOKEN: &str = "GITHUB_TOKEN";
    /// The GitHub CLI's name for the same token.
    pub const GH_TOKEN: &str = "GH_TOKEN";
    /// `pr`: the repository, `OWNER/NAME`, like `--repo` (set by GitHub Actions).
    pub const GITHUB_REPOSITORY: &str = "GITHUB_REPOSITORY";
    /// `pr`: the GitHub API base, `https://api.github.com` or a GitHub Enterprise Server's
    /// `https://HOST/api/v3` (set by GitHub Actions).
    pub const GITHUB_API_URL: &str = "GITHUB_API_URL";
    /// A `tracing` filter (`tagpin_github=debug`) for the diagnostic log on stderr; `-vv`
    /// stands for `debug` when it is unset.
    pub const RUST_LOG: &str = "RUST_LOG";
    /// Docker's config directory (`config.json` inside). Read by `tagpin-registry`
    /// (`Credentials::from_default_docker_config`), listed here so every name is in one place.
    pub const DOCKER_CONFIG: &str = "DOCKER_CONFIG";
}

pub const DEFAULT_CONCURRENCY: usize = 16;
pub const DEFAULT_PER_REGISTRY_CONCURRENCY: usize = 8;
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 30;
/// Five minutes: a few thousand tags at a healthy registry take well under a minute; a dead
/// host is cut short by the resolver's circuit breaker long before.
pub const DEFAULT_DEADLINE_SECONDS: u64 = 300;

/// What `pr` talks to and how, merged from its flags and the environment.
#[derive(Debug)]
pub struct PrSettings {
    pub repo: tagpin_github::RepoName,
    pub api_url: String,
    pub token: tagpin_github::Secret,
    /// `None`: the repository's default branch.
    pub base: Option<String>,
    pub branch: String,
    pub title: String,
    pub labels: Vec<String>,
    pub dry_run: bool,
}

impl PrSettings {
    pub fn merge(
        args: &PrArgs,
        settings: &Settings,
        env: &impl Environment,
    ) -> anyhow::Result<Self> {
        let repo = match (&args.repo, non_empty(env, env::GITHUB_REPOSITORY)) {
            (Some(repo), _) => repo
                .parse()
                .with_context(|| "invalid value for `--repo`".to_owned())?,
            (None, Some(repo)) => repo
                .parse()
                .with_context(|| format!("invalid value in {}", env::GITHUB_REPOSITORY))?,
            (None, None) => bail!(
                "no repository: pass `--repo OWNER/NAME` or set {}",
                env::GITHUB_REPOSITORY
            ),
        };
        let Some(token) = &settings.github_token else {
            bail!(
                "no GitHub token: set {} (or {}) to a token that can write contents and pull requests",
                env::GITHUB_TOKEN,
                env::GH_TOKEN
            );
        };
        let mut labels: Vec<String> = Vec::new();
        for label in &args.labels {
            let label = label.trim();
            if !label.is_empty() && !labels.iter().any(|l| l == label) {
                labels.push(label.to_owned());
            }
        }
        Ok(Self {
            repo,
            api_url: non_empty(env, env::GITHUB_API_URL)
                .unwrap_or_else(|| tagpin_github::DEFAULT_API_URL.to_owned()),
            token: tagpin_github::Secret::new(token.expose()),
            base: args.base.clone().filter(|base| !base.is_empty()),
            branch: args.branch.clone(),
            title: args.title.clone(),
            labels,
            dry_run: args.dry_run,
        })
    }
}

/// The mirrors from one place (the flags, the variable or the config file), per registry,
/// each with how it was written there.
#[derive(Default)]
struct MirrorLayer {
    mirrors: BTreeMap<String, (Mirror, String)>,
}

impl MirrorLayer {
    /// Adds `mirror`, written as `written`; a different mirror for the same registry already
    /// there (under another of its names, perhaps) is an error.
    fn add(&mut self, mirror: Mirror, written: &str) -> anyhow::Result<()> {
        if let Some((other, other_written)) = self.mirrors.get(mirror.registry()) {
            if *other != mirror {
                bail!(
                    "`{other_written}` and `{written}` are two mirrors for {}: its names (Docker \
                     Hub's docker.io, index.docker.io, registry-1.docker.io and \
                     registry.hub.docker.com are one registry) must name one mirror",
                    mirror.registry()
                );
            }
            return Ok(());
        }
        self.mirrors
            .insert(mirror.registry().to_owned(), (mirror, written.to_owned()));
        Ok(())
    }
}

/// The user cache directory's `tagpin` folder: `$XDG_CACHE_HOME/tagpin`, else
/// `~/Library/Caches/tagpin` on macOS and `~/.cache/tagpin` elsewhere; `None` without a home.
fn default_cache_dir(env: &impl Environment) -> Option<PathBuf> {
    if let Some(base) = non_empty(env, env::XDG_CACHE_HOME).map(PathBuf::from)
        && base.is_absolute()
    {
        return Some(base.join("tagpin"));
    }
    let home = PathBuf::from(non_empty(env, env::HOME)?);
    Some(if cfg!(target_os = "macos") {
        home.join("Library/Caches/tagpin")
    } else {
        home.join(".cache/tagpin")
    })
}

/// Where environment variables come from: the process, or a table in tests.
pub trait Environment {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl Environment for BTreeMap<&str, &str> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).map(|value| (*value).to_owned())
    }
}

/// The Helm command to render charts with: the one chosen (with where it was chosen), else
/// `helm`; `None` for `none`. A command chosen but not found is an error, as a PATH that
/// does not exist is: without it, charts would be read without Helm, silently. The default
/// `helm` may be missing: the charts are then read by tagpin's own reading.
fn chosen_helm(chosen: Option<(String, String)>) -> anyhow::Result<Option<String>> {
    let Some((command, source)) = chosen else {
        return Ok(Some("helm".to_owned()));
    };
    if command == "none" {
        return Ok(None);
    }
    if crate::charts::Helm::find(&command).is_none() {
        bail!("{source}: Helm command `{command}` not found (`none` renders no chart)");
    }
    Ok(Some(command))
}

fn non_empty(env: &impl Environment, name: &str) -> Option<String> {
    env.var(name).filter(|value| !value.is_empty())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

/// Everything a command needs to know about how to run, decided once.
#[derive(Debug)]
pub struct Settings {
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
    pub paths: PathFilter,
    pub ignore: IgnorePatterns,
    /// One mirror per registry, sorted by registry.
    pub mirrors: Vec<Mirror>,
    pub insecure_registries: Vec<String>,
    pub concurrency: NonZeroUsize,
    pub per_registry_concurrency: NonZeroUsize,
    pub timeout: Duration,
    /// The most resolving may take in all.
    pub deadline: Duration,
    /// The Helm command that renders charts; `None`: no rendering.
    pub helm: Option<String>,
    pub unproven_values: UnprovenValues,
    /// Where manifests fetched by digest are kept across runs; `None`: not kept.
    pub cache_dir: Option<PathBuf>,
    /// `pin`: what to do for Kubernetes containers with the tag `latest`.
    pub latest: LatestPolicy,
    /// `pin`/`pr`: read when the images of each new digest were built (`crate::details`).
    pub details: bool,
    /// The platforms every new digest must serve (`--platform`, else `platforms:`); empty:
    /// those of the digest already pinned, all of a floating tag's.
    pub platforms: Vec<Platform>,
    /// `GITHUB_TOKEN` (or `GH_TOKEN`), sent to ghcr.io.
    pub github_token: Option<Secret>,
    pub color: ColorChoice,
    pub verbosity: Verbosity,
}

impl Settings {
    /// Finds and reads the config file, then merges it with `flags` and `env`.
    pub fn load(
        flags: &GlobalArgs,
        env: &impl Environment,
        first_path: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let named = flags
            .config
            .clone()
            .or_else(|| non_empty(env, env::CONFIG).map(PathBuf::from));
        let config = match named.or_else(|| config::discover(first_path)) {
            Some(path) => Some(Config::load(&path)?),
            None => None,
        };
        Self::merge(flags, env, config)
    }

    /// Merges flags, environment and a config file, in that order of precedence.
    pub fn merge(
        flags: &GlobalArgs,
        env: &impl Environment,
        config: Option<LoadedConfig>,
    ) -> anyhow::Result<Self> {
        let (config_file, config) = match config {
            Some(LoadedConfig { path, config }) => (Some(path), config),
            None => (None, Config::default()),
        };
        let in_config = |key: &str| match &config_file {
            Some(path) => format!("`{key}` in config file `{}`", path.display()),
            None => format!("`{key}`"),
        };

        let color = match (flags.color, non_empty(env, env::COLOR)) {
            (Some(color), _) => color,
            (None, Some(value)) => match value.as_str() {
                "auto" => ColorChoice::Auto,
                "always" => ColorChoice::Always,
                "never" => ColorChoice::Never,
                other => bail!(
                    "invalid value `{other}` for {}: expected auto, always or never",
                    env::COLOR
                ),
            },
            (None, None) if non_empty(env, env::NO_COLOR).is_some() => ColorChoice::Never,
            (None, None) => ColorChoice::Auto,
        };

        // Merged per registry (normalised, so `index.docker.io` and `docker.io` are one); each
        // place may name a registry once, under any of its names.
        let mut mirrors = BTreeMap::new();
        let mut from_file = MirrorLayer::default();
        for (registry, endpoint) in &config.mirrors {
            let mirror = Mirror::new(registry, endpoint).with_context(|| {
                format!("invalid mirror for `{registry}`, {}", in_config("mirrors"))
            })?;
            from_file
                .add(mirror, &format!("{registry}: {endpoint}"))
                .with_context(|| in_config("mirrors"))?;
        }
        let mut from_env = MirrorLayer::default();
        if let Some(value) = non_empty(env, env::MIRRORS) {
            for item in value
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
            {
                let mirror = item
                    .parse::<Mirror>()
                    .with_context(|| format!("invalid mirror in {}", env::MIRRORS))?;
                from_env
                    .add(mirror, item)
                    .with_context(|| format!("invalid mirrors in {}", env::MIRRORS))?;
            }
        }
        let mut from_flags = MirrorLayer::default();
        for flag in &flags.mirrors {
            let mirror = flag.parse::<Mirror>().context("invalid --mirror")?;
            from_flags
                .add(mirror, &format!("--mirror {flag}"))
                .context("invalid --mirror")?;
        }
        for layer in [from_file, from_env, from_flags] {
            mirrors.extend(layer.mirrors.into_iter().map(|(r, (m, _))| (r, m)));
        }

        let concurrency = match (flags.concurrency, non_empty(env, env::CONCURRENCY)) {
            (Some(n), _) => n,
            (None, Some(value)) => value.parse().map_err(|_| {
                anyhow::anyhow!(
                    "invalid value `{value}` for {}: expected a whole number of at least 1",
                    env::CONCURRENCY
                )
            })?,
            (None, None) => config
                .concurrency
                .unwrap_or(NonZeroUsize::new(DEFAULT_CONCURRENCY).expect("non-zero")),
        };

        let deadline = match (flags.deadline, non_empty(env, env::DEADLINE)) {
            (Some(seconds), _) => seconds.get(),
            (None, Some(value)) => value
                .parse::<std::num::NonZeroU64>()
                .map_err(|_| {
                    anyhow::anyhow!(
                        "invalid value `{value}` for {}: expected a whole number of seconds, at least 1",
                        env::DEADLINE
                    )
                })?
                .get(),
            (None, None) => DEFAULT_DEADLINE_SECONDS,
        };

        let verbosity = match (flags.quiet, flags.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, 0) => Verbosity::Normal,
            (false, _) => Verbosity::Verbose,
        };

        // The flags replace the config's list: `--platform linux/arm64` asks about that one.
        let platforms: Vec<Platform> = if flags.platforms.is_empty() {
            config
                .platforms
                .iter()
                .map(|text| text.parse().with_context(|| in_config("platforms")))
                .collect::<anyhow::Result<_>>()?
        } else {
            flags
                .platforms
                .iter()
                .map(|text| text.parse().context("invalid --platform"))
                .collect::<anyhow::Result<_>>()?
        };

        let cache_dir = flags
            .cache_dir
            .clone()
            .or_else(|| non_empty(env, env::CACHE_DIR).map(PathBuf::from))
            .or_else(|| default_cache_dir(env))
            .filter(|dir| dir.as_os_str() != "none");

        let helm = chosen_helm(
            flags
                .helm
                .clone()
                .map(|command| (command, "`--helm`".to_owned()))
                .or_else(|| non_empty(env, env::HELM).map(|c| (c, format!("`{}`", env::HELM))))
                .or_else(|| config.helm.clone().map(|c| (c, in_config("helm")))),
        )?;
        Ok(Self {
            paths: PathFilter::new(&config.include, &config.exclude)
                .with_context(|| in_config("include/exclude"))?
                .with_custom(
                    CustomRules::new(&config.custom).with_context(|| in_config("custom"))?,
                ),
            ignore: IgnorePatterns::new(&config.ignore).with_context(|| in_config("ignore"))?,
            config_file,
            mirrors: mirrors.into_values().collect(),
            insecure_registries: config.insecure_registries,
            concurrency,
            per_registry_concurrency: config
                .per_registry_concurrency
                .unwrap_or(NonZeroUsize::new(DEFAULT_PER_REGISTRY_CONCURRENCY).expect("non-zero")),
            timeout: Duration::from_secs(
                config
                    .timeout_seconds
                    .map_or(DEFAULT_TIMEOUT_SECONDS, std::num::NonZeroU64::get),
            ),
            deadline: Duration::from_secs(deadline),
            helm,
            unproven_values: config.unproven_values.unwrap_or_default(),
            platforms,
            cache_dir,
            latest: flags.latest.or(config.latest).unwrap_or_default(),
            details: flags.details || config.details.unwrap_or(false),
            github_token: non_empty(env, env::GITHUB_TOKEN)
                .or_else(|| non_empty(env, env::GH_TOKEN))
                .map(Secret::new),
            color,
            verbosity,
        })
    }

    /// Whether to color a stream, given whether it is a terminal.
    pub fn colors(&self, is_terminal: bool) -> bool {
        match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => is_terminal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Vars<'a> = &'a [(&'a str, &'a str)];
    type Case<'a> = (
        GlobalArgs,
        BTreeMap<&'a str, &'a str>,
        Option<LoadedConfig>,
        &'a str,
    );

    #[expect(clippy::unnecessary_wraps, reason = "`merge` takes an Option")]
    fn config(text: &str) -> Option<LoadedConfig> {
        Some(LoadedConfig {
            path: PathBuf::from("repo/.tagpin.yaml"),
            config: Config::parse(text).unwrap(),
        })
    }

    fn flags(args: &[&str]) -> GlobalArgs {
        use clap::Parser as _;
        let mut command_line = vec!["tagpin"];
        command_line.extend_from_slice(args);
        command_line.push("scan");
        crate::args::Cli::try_parse_from(command_line)
            .unwrap()
            .global
    }

    #[test]
    fn concurrency_precedence() {
        // (flags, environment, config file, expected)
        let table: &[(&[&str], Vars, &str, usize)] = &[
            (&[], &[], "", DEFAULT_CONCURRENCY),
            (&[], &[], "concurrency: 3", 3),
            (&[], &[(env::CONCURRENCY, "5")], "concurrency: 3", 5),
            (&[], &[(env::CONCURRENCY, "")], "concurrency: 3", 3),
            (
                &["--concurrency", "7"],
                &[(env::CONCURRENCY, "5")],
                "concurrency: 3",
                7,
            ),
            (&["--concurrency", "7"], &[], "", 7),
        ];
        for (args, vars, file, expected) in table {
            let env: BTreeMap<&str, &str> = vars.iter().copied().collect();
            let settings = Settings::merge(&flags(args), &env, config(file)).unwrap();
            assert_eq!(
                settings.concurrency.get(),
                *expected,
                "{args:?} {vars:?} {file:?}"
            );
        }
    }

    #[test]
    fn color_precedence() {
        let table: &[(&[&str], Vars, ColorChoice)] = &[
            (&[], &[], ColorChoice::Auto),
            (&[], &[(env::NO_COLOR, "1")], ColorChoice::Never),
            (&[], &[(env::NO_COLOR, "")], ColorChoice::Auto),
            (
                &[],
                &[(env::NO_COLOR, "1"), (env::COLOR, "always")],
                ColorChoice::Always,
            ),
            (
                &["--color", "always"],
                &[(env::NO_COLOR, "1")],
                ColorChoice::Always,
            ),
            (
                &["--color", "never"],
                &[(env::COLOR, "always")],
                ColorChoice::Never,
            ),
            (
                &["--color", "auto"],
                &[(env::NO_COLOR, "1")],
                ColorChoice::Auto,
            ),
        ];
        for (args, vars, expected) in table {
            let env: BTreeMap<&str, &str> = vars.iter().copied().collect();
            let settings = Settings::merge(&flags(args), &env, None).unwrap();
            assert_eq!(settings.color, *expected, "{args:?} {vars:?}");
        }
    }

    #[test]
    fn mirrors_merge_per_registry() {
        let env: BTreeMap<&str, &str> =
            [(env::MIRRORS, "quay.io=env:5000, ghcr.io=env:5001")].into();
        let settings = Settings::merge(
            &flags(&["--mirror", "ghcr.io=flag:6000/ghcr"]),
            &env,
            config("mirrors: {quay.io: 'file:1', index.docker.io: 'file:2'}"),
        )
        .unwrap();
        let mirrors: Vec<String> = settings.mirrors.iter().map(ToString::to_string).collect();
        assert_eq!(
            mirrors,
            [
                "docker.io=file:2",
                "ghcr.io=flag:6000/ghcr",
                "quay.io=env:5000",
            ]
        );
    }

    /// `--mirror registry.hub.docker.com=…` after `--mirror docker.io=…` used to replace the
    /// first silently: two names of one registry with two mirrors are an error, in each place.
    #[test]
    fn two_mirrors_for_one_registry_are_an_error() {
        let none = BTreeMap::new();
        let error = Settings::merge(
            &flags(&[
                "--mirror",
                "docker.io=a:5000",
                "--mirror",
                "registry.hub.docker.com=b:5000",
            ]),
            &none,
            None,
        )
        .unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.contains("`--mirror docker.io=a:5000` and `--mirror registry.hub.docker.com=b:5000` are two mirrors for docker.io"),
            "{message}"
        );
        let env: BTreeMap<&str, &str> =
            [(env::MIRRORS, "index.docker.io=a:1,docker.io=b:2")].into();
        assert!(Settings::merge(&flags(&[]), &env, None).is_err());
        assert!(
            Settings::merge(
                &flags(&[]),
                &none,
                config("mirrors: {docker.io: 'a:1', registry-1.docker.io: 'b:2'}")
            )
            .is_err()
        );
        // The same mirror twice is fine; a flag still overrides the file.
        let settings = Settings::merge(
            &flags(&[
                "--mirror",
                "docker.io=a:5000",
                "--mirror",
                "index.docker.io=a:5000",
            ]),
            &none,
            config("mirrors: {registry.hub.docker.com: 'file:1'}"),
        )
        .unwrap();
        let mirrors: Vec<String> = settings.mirrors.iter().map(ToString::to_string).collect();
        assert_eq!(mirrors, ["docker.io=a:5000"]);
    }

    #[test]
    fn deadline_precedence() {
        let table: &[(&[&str], Vars, u64)] = &[
            (&[], &[], DEFAULT_DEADLINE_SECONDS),
            (&[], &[(env::DEADLINE, "20")], 20),
            (&[], &[(env::DEADLINE, "")], DEFAULT_DEADLINE_SECONDS),
            (&["--deadline", "7"], &[(env::DEADLINE, "20")], 7),
        ];
        for (args, vars, expected) in table {
            let env: BTreeMap<&str, &str> = vars.iter().copied().collect();
            let settings = Settings::merge(&flags(args), &env, None).unwrap();
            assert_eq!(
                settings.deadline,
                Duration::from_secs(*expected),
                "{args:?} {vars:?}"
            );
        }
        let env: BTreeMap<&str, &str> = [(env::DEADLINE, "0")].into();
        let error = Settings::merge(&flags(&[]), &env, None).unwrap_err();
        assert!(error.to_string().contains("TAGPIN_DEADLINE"), "{error}");
    }

    #[test]
    fn cache_dir_precedence() {
        let home = "/home/u";
        let default = if cfg!(target_os = "macos") {
            "/home/u/Library/Caches/tagpin"
        } else {
            "/home/u/.cache/tagpin"
        };
        let table: &[(&[&str], Vars, Option<&str>)] = &[
            (&[], &[(env::HOME, home)], Some(default)),
            (&[], &[], None),
            (
                &[],
                &[(env::HOME, home), (env::XDG_CACHE_HOME, "/xdg")],
                Some("/xdg/tagpin"),
            ),
            // A relative XDG_CACHE_HOME is invalid per the spec: ignored.
            (
                &[],
                &[(env::HOME, home), (env::XDG_CACHE_HOME, "rel")],
                Some(default),
            ),
            (
                &[],
                &[(env::HOME, home), (env::CACHE_DIR, "/env")],
                Some("/env"),
            ),
            (
                &["--cache-dir", "/flag"],
                &[(env::HOME, home), (env::CACHE_DIR, "/env")],
                Some("/flag"),
            ),
            (&["--cache-dir", "none"], &[(env::HOME, home)], None),
            (&[], &[(env::HOME, home), (env::CACHE_DIR, "none")], None),
        ];
        for (args, vars, expected) in table {
            let env: BTreeMap<&str, &str> = vars.iter().copied().collect();
            let settings = Settings::merge(&flags(args), &env, None).unwrap();
            assert_eq!(
                settings.cache_dir.as_deref(),
                expected.map(Path::new),
                "{args:?} {vars:?}"
            );
        }
    }

    #[test]
    fn platforms_precedence() {
        let none = BTreeMap::new();
        let from_config = config("platforms: [linux/amd64, linux/arm/v7]\n");
        let settings = Settings::merge(&flags(&[]), &none, from_config.clone()).unwrap();
        let shown: Vec<String> = settings.platforms.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["linux/amd64", "linux/arm/v7"]);
        let settings =
            Settings::merge(&flags(&["--platform", "linux/s390x"]), &none, from_config).unwrap();
        let shown: Vec<String> = settings.platforms.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            ["linux/s390x"],
            "the flags replace the config's list"
        );
        let error =
            Settings::merge(&flags(&[]), &none, config("platforms: [amd64]\n")).unwrap_err();
        assert!(
            format!("{error:#}").contains("`platforms` in config file"),
            "{error:#}"
        );
    }

    #[test]
    fn config_only_settings_and_defaults() {
        let none = BTreeMap::new();
        let defaults = Settings::merge(&flags(&[]), &none, None).unwrap();
        assert_eq!(
            defaults.per_registry_concurrency.get(),
            DEFAULT_PER_REGISTRY_CONCURRENCY
        );
        assert_eq!(
            defaults.timeout,
            Duration::from_secs(DEFAULT_TIMEOUT_SECONDS)
        );
        assert_eq!(defaults.config_file, None);
        let set = Settings::merge(
            &flags(&[]),
            &none,
            config(
                "per_registry_concurrency: 2\ntimeout_seconds: 5\ninsecure_registries: [lan:5000]",
            ),
        )
        .unwrap();
        assert_eq!(set.per_registry_concurrency.get(), 2);
        assert_eq!(set.timeout, Duration::from_secs(5));
        assert_eq!(set.insecure_registries, ["lan:5000"]);
        assert_eq!(
            set.config_file.as_deref(),
            Some(Path::new("repo/.tagpin.yaml"))
        );
    }

    #[test]
    fn github_token_precedence() {
        let table: &[(Vars, Option<&str>)] = &[
            (&[], None),
            (&[(env::GH_TOKEN, "gh")], Some("gh")),
            (
                &[(env::GITHUB_TOKEN, "github"), (env::GH_TOKEN, "gh")],
                Some("github"),
            ),
            (
                &[(env::GITHUB_TOKEN, ""), (env::GH_TOKEN, "gh")],
                Some("gh"),
            ),
        ];
        for (vars, expected) in table {
            let env: BTreeMap<&str, &str> = vars.iter().copied().collect();
            let settings = Settings::merge(&flags(&[]), &env, None).unwrap();
            assert_eq!(
                settings.github_token.as_ref().map(Secret::expose),
                *expected,
                "{vars:?}"
            );
            assert!(
                !format!("{settings:?}").contains("github\""),
                "{settings:?}"
            );
        }
    }

    #[test]
    fn pr_settings_precedence() {
        use clap::Parser as _;
        let pr = |args: &[&str]| {
            let mut command_line = vec!["tagpin", "pr"];
            command_line.extend_from_slice(args);
            match crate::args::Cli::try_parse_from(command_line)
                .unwrap()
                .command
            {
                crate::args::Command::Pr(pr) => pr,
                _ => unreachable!(),
            }
        };
        let env: BTreeMap<&str, &str> = [
            (env::GITHUB_REPOSITORY, "env/repo"),
            (env::GITHUB_TOKEN, "t0ken"),
        ]
        .into();
        let settings = Settings::merge(&flags(&[]), &env, None).unwrap();
        let from_env = PrSettings::merge(&pr(&[]), &settings, &env).unwrap();
        assert_eq!(from_env.repo.to_string(), "env/repo");
        assert_eq!(from_env.api_url, "https://api.github.com");
        assert_eq!(from_env.base, None);
        assert_eq!(from_env.branch, "tagpin/digests");
        assert!(!format!("{from_env:?}").contains("t0ken"));
        let from_flag = PrSettings::merge(
            &pr(&[
                "--repo",
                "flag/repo",
                "--label",
                "a",
                "--label",
                " a ",
                "--base",
                "dev",
            ]),
            &settings,
            &env,
        )
        .unwrap();
        assert_eq!(from_flag.repo.to_string(), "flag/repo");
        assert_eq!(from_flag.labels, ["a"]);
        assert_eq!(from_flag.base.as_deref(), Some("dev"));
        let ghes: BTreeMap<&str, &str> = [
            (env::GITHUB_REPOSITORY, "o/r"),
            (env::GITHUB_API_URL, "https://ghe.example/api/v3"),
        ]
        .into();
        assert_eq!(
            PrSettings::merge(&pr(&[]), &settings, &ghes)
                .unwrap()
                .api_url,
            "https://ghe.example/api/v3"
        );

        let none = BTreeMap::new();
        let no_token = Settings::merge(&flags(&[]), &none, None).unwrap();
        let error = PrSettings::merge(&pr(&["--repo", "o/r"]), &no_token, &none).unwrap_err();
        assert!(error.to_string().contains("GITHUB_TOKEN"), "{error}");
        let error = PrSettings::merge(&pr(&[]), &settings, &none).unwrap_err();
        assert!(error.to_string().contains("GITHUB_REPOSITORY"), "{error}");
        let error = PrSettings::merge(&pr(&["--repo", "nope"]), &settings, &env).unwrap_err();
        assert!(format!("{error:#}").contains("--repo"), "{error:#}");
    }

    #[test]
    fn verbosity() {
        let none = BTreeMap::new();
        for (args, expected) in [
            (&[][..], Verbosity::Normal),
            (&["-q"][..], Verbosity::Quiet),
            (&["-v"][..], Verbosity::Verbose),
            (&["-vv"][..], Verbosity::Verbose),
        ] {
            let settings = Settings::merge(&flags(args), &none, None).unwrap();
            assert_eq!(settings.verbosity, expected, "{args:?}");
        }
    }

    #[test]
    fn invalid_values_name_their_source() {
        let none = BTreeMap::new();
        let cases: Vec<Case> = vec![
            (
                flags(&[]),
                [(env::CONCURRENCY, "0")].into(),
                None,
                "TAGPIN_CONCURRENCY",
            ),
            (
                flags(&[]),
                [(env::COLOR, "rainbow")].into(),
                None,
                "TAGPIN_COLOR",
            ),
            (
                flags(&[]),
                [(env::MIRRORS, "quay.io")].into(),
                None,
                "TAGPIN_MIRRORS",
            ),
            (
                flags(&[]),
                none.clone(),
                config("mirrors: {quay.io: 'a:b'}"),
                "repo/.tagpin.yaml",
            ),
            (
                flags(&[]),
                none.clone(),
                config("ignore: ['[']"),
                "repo/.tagpin.yaml",
            ),
            (
                flags(&[]),
                none.clone(),
                config("exclude: ['a/[']"),
                "repo/.tagpin.yaml",
            ),
            // A Helm chosen but not there: charts would be read without it, silently.
            (
                flags(&["--helm", "/nonexistent/helm"]),
                none.clone(),
                None,
                "`--helm`: Helm command `/nonexistent/helm` not found",
            ),
            (
                flags(&[]),
                [(env::HELM, "/nonexistent/helm")].into(),
                None,
                "`TAGPIN_HELM`",
            ),
            (
                flags(&[]),
                none.clone(),
                config("helm: /nonexistent/helm"),
                "`helm` in config file `repo/.tagpin.yaml`",
            ),
        ];
        for (flags, env, config, needle) in cases {
            let error = Settings::merge(&flags, &env, config).unwrap_err();
            assert!(
                format!("{error:#}").contains(needle),
                "{error:#} lacks {needle}"
            );
        }
    }

    #[test]
    fn config_file_location_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let discovered = write(config::FILE_NAME, "concurrency: 1\n");
        let from_env = write("env.yaml", "concurrency: 2\n");
        let from_flag = write("flag.yaml", "concurrency: 3\n");
        let env: BTreeMap<&str, &str> = [(env::CONFIG, from_env.to_str().unwrap())].into();
        let none = BTreeMap::new();
        let flag = flags(&["--config", from_flag.to_str().unwrap()]);

        let load = |flags: &GlobalArgs, env: &BTreeMap<&str, &str>| {
            Settings::load(flags, env, Some(dir.path())).unwrap()
        };
        assert_eq!(load(&flag, &env).config_file, Some(from_flag.clone()));
        assert_eq!(load(&flags(&[]), &env).config_file, Some(from_env));
        assert_eq!(load(&flags(&[]), &none).config_file, Some(discovered));
        assert_eq!(load(&flags(&[]), &none).concurrency.get(), 1);

        let missing = flags(&["--config", "/nonexistent/tagpin.yaml"]);
        let error = Settings::load(&missing, &none, Some(dir.path())).unwrap_err();
        assert!(
            format!("{error:#}").contains("/nonexistent/tagpin.yaml"),
            "{error:#}"
        );
    }
}
