//! Command-line flags, as clap parses them. Nothing here decides anything: the settings step
//! (`settings.rs`) merges these flags with the environment and the config file.

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Pin container image references to digests.
///
/// tagpin finds every image reference in a repository (Kubernetes and Helm YAML, compose files,
/// GitHub workflows, Dockerfiles, shell scripts) and reports the floating ones: tags without a
/// digest, which do not record what runs.
#[derive(Debug, Parser)]
#[command(
    name = "tagpin",
    version,
    max_term_width = 100,
    after_help = "Exit codes: 0 success; 1 findings (`check` found a floating reference or a file it \
                  could not read; `pin`/`pr` could not resolve or write some references, the \
                  rest is done); 2 usage or config error, a PATH that does not exist, fatal I/O."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command accepts, before or after the command name.
#[derive(Debug, Default, Args)]
pub struct GlobalArgs {
    /// Config file to use instead of `.tagpin.yaml` in the first PATH or the current directory.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Resolve REGISTRY's images at a mirror (repeatable), e.g. `quay.io=127.0.0.1:5000/quay.io`.
    ///
    /// Kept as text here and parsed in the settings step: clap would echo a rejected value,
    /// and a mistyped mirror may carry a password.
    #[arg(
        long = "mirror",
        global = true,
        value_name = "REGISTRY=HOST[:PORT][/PREFIX]"
    )]
    pub mirrors: Vec<String>,

    /// Registry requests in flight at once (commands that resolve tags).
    #[arg(long, global = true, value_name = "N")]
    pub concurrency: Option<NonZeroUsize>,

    /// The most resolving tags may take, in seconds (default 300): the tags not looked up by
    /// then are reported unresolved, and `pin` still writes the rest.
    #[arg(long, global = true, value_name = "SECONDS")]
    pub deadline: Option<NonZeroU64>,

    /// The Helm command that renders charts to learn and prove values edits (default `helm`
    /// on PATH); `none` renders nothing: tagpin then reads the templates itself, conservatively,
    /// and writes a values edit only where that reading proves it.
    #[arg(long, global = true, value_name = "COMMAND")]
    pub helm: Option<String>,

    /// A platform every new digest must serve (repeatable; replaces `platforms:` of the
    /// config), e.g. `linux/amd64`, `linux/arm/v7`. Default: those of the digest already
    /// pinned; for a floating tag, all its index offers.
    #[arg(long = "platform", global = true, value_name = "OS/ARCH[/VARIANT]")]
    pub platforms: Vec<String>,

    /// `pin`/`pr`: for a Kubernetes container whose tag is `latest`, is being pinned and sets
    /// no `imagePullPolicy`: `keep` (pin and warn, the default) or `pull-policy` (also add
    /// `imagePullPolicy: IfNotPresent`, written as the container's other keys are).
    #[arg(long, global = true, value_name = "POLICY")]
    pub latest: Option<crate::config::LatestPolicy>,

    /// `pin`/`pr`: for each reference whose digest changes, also read when its images were
    /// built (the `created` time of each platform image's config) and show it in JSON and in
    /// the pull request. Costs up to two GETs per platform image, cached like the manifests.
    #[arg(long, global = true)]
    pub details: bool,

    /// Where manifests fetched by digest (for the platform rules) are kept across runs
    /// (default: the user cache directory, `$XDG_CACHE_HOME/tagpin` or `~/.cache/tagpin`);
    /// `none` keeps nothing. Tag lookups are never cached.
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Say more on stderr (repeatable): `-v` names the config file, lists skipped files and
    /// what resolving cost; `-vv` logs every registry and GitHub request.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Say nothing on stderr but errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// When to color output.
    #[arg(long, global = true, value_enum, value_name = "WHEN")]
    pub color: Option<ColorChoice>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every image reference found, with its status.
    Scan(ScanArgs),
    /// Fail (exit 1) when a floating reference is not ignored or a file could not be read.
    Check(CheckArgs),
    /// Resolve floating references to digests and show the rewrite as a diff; `--write`
    /// writes it.
    Pin(PinArgs),
    /// Commit what `pin --write` would write to a branch and keep one pull request for it,
    /// through the GitHub API; the working tree is left as it is.
    Pr(PrArgs),
    /// Print a shell completion script to stdout, e.g. `tagpin completions bash`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout, e.g. `tagpin man | man -l -`.
    Man,
}

impl Command {
    /// The PATHs the command was given.
    pub fn paths(&self) -> &[PathBuf] {
        match self {
            Self::Scan(scan) => &scan.paths,
            Self::Check(check) => &check.paths,
            Self::Pin(pin) => &pin.paths,
            Self::Pr(pr) => &pr.paths,
            Self::Completions(_) | Self::Man => &[],
        }
    }
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Files or directories to scan (directories are walked, respecting `.gitignore`).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ScanFormat::Text)]
    pub format: ScanFormat,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories to check (directories are walked, respecting `.gitignore`).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,

    /// Also resolve pinned references and fail on stale digests (the tag moved) and missing
    /// ones (the tag is gone).
    #[arg(long)]
    pub online: bool,
}

#[derive(Debug, Args)]
pub struct PinArgs {
    /// Files or directories to pin (directories are walked, respecting `.gitignore`).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Write the changed files (atomically) instead of printing the diff.
    #[arg(long)]
    pub write: bool,

    /// Leave pinned references alone: do not replace digests whose tag moved.
    #[arg(long)]
    pub no_refresh: bool,

    /// Output format: `text` prints the diff on stdout; `json` prints every edit and every
    /// unresolved reference.
    #[arg(long, value_enum, default_value_t = PinFormat::Text)]
    pub format: PinFormat,
}

#[derive(Debug, Args)]
pub struct PrArgs {
    /// Files or directories to pin, inside one git checkout (directories are walked,
    /// respecting `.gitignore`).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// The GitHub repository, `OWNER/NAME` [default: `$GITHUB_REPOSITORY`].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,

    /// The branch to build on and merge into [default: the repository's default branch].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,

    /// The branch tagpin owns and force-moves.
    #[arg(long, value_name = "NAME", default_value = "tagpin/digests")]
    pub branch: String,

    /// A label for the pull request (repeatable).
    #[arg(long = "label", value_name = "LABEL")]
    pub labels: Vec<String>,

    /// The pull request's title.
    #[arg(
        long,
        value_name = "TITLE",
        default_value = "Pin container image digests"
    )]
    pub title: String,

    /// Print the commit, the pull request's text and the requests that would be sent; send
    /// only reads.
    #[arg(long)]
    pub dry_run: bool,

    /// Output format: `text` prints the outcome and the pull request's URL; `json` prints
    /// `{"outcome", "number", "url", "changed_files", …}`.
    #[arg(long, value_enum, default_value_t = PinFormat::Text)]
    pub format: PinFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScanFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PinFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
    /// GitHub Actions workflow commands (`::error file=…::…`).
    Github,
    /// SARIF 2.1.0, for code-scanning upload.
    Sarif,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_go_before_or_after_the_command() {
        let before =
            Cli::try_parse_from(["tagpin", "-q", "--color", "never", "scan", "a"]).unwrap();
        let after = Cli::try_parse_from(["tagpin", "scan", "a", "-q", "--color=never"]).unwrap();
        for cli in [before, after] {
            assert!(cli.global.quiet);
            assert_eq!(cli.global.color, Some(ColorChoice::Never));
        }
    }

    #[test]
    fn paths_default_to_the_current_directory() {
        let cli = Cli::try_parse_from(["tagpin", "check", "--format", "sarif"]).unwrap();
        let Command::Check(check) = cli.command else {
            panic!("not check");
        };
        assert_eq!(check.paths, [PathBuf::from(".")]);
        assert_eq!(check.format, CheckFormat::Sarif);
    }

    #[test]
    fn scan_has_no_github_format() {
        assert!(Cli::try_parse_from(["tagpin", "scan", "--format", "github"]).is_err());
    }

    #[test]
    fn pin_flags() {
        let cli =
            Cli::try_parse_from(["tagpin", "pin", "charts", "--write", "--no-refresh"]).unwrap();
        let Command::Pin(pin) = cli.command else {
            panic!("not pin");
        };
        assert!(pin.write && pin.no_refresh);
        assert_eq!(pin.format, PinFormat::Text);
        assert_eq!(pin.paths, [PathBuf::from("charts")]);
        assert!(Cli::try_parse_from(["tagpin", "pin", "--format", "sarif"]).is_err());
    }

    #[test]
    fn pr_flags() {
        let cli = Cli::try_parse_from([
            "tagpin",
            "pr",
            "deploy",
            "--repo",
            "acme/app",
            "--label",
            "a",
            "--label",
            "b",
            "--dry-run",
            "--format",
            "json",
        ])
        .unwrap();
        let Command::Pr(pr) = cli.command else {
            panic!("not pr");
        };
        assert_eq!(pr.paths, [PathBuf::from("deploy")]);
        assert_eq!(pr.repo.as_deref(), Some("acme/app"));
        assert_eq!(pr.labels, ["a", "b"]);
        assert_eq!(pr.branch, "tagpin/digests");
        assert_eq!(pr.title, "Pin container image digests");
        assert_eq!(pr.base, None);
        assert!(pr.dry_run);
        assert_eq!(pr.format, PinFormat::Json);
    }

    #[test]
    fn verbose_and_quiet_conflict() {
        assert!(Cli::try_parse_from(["tagpin", "scan", "-v", "-q"]).is_err());
    }
}
