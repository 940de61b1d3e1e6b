//! The `tagpin` binary: parse flags, settle the settings, run a command, print its result, and
//! pick the exit code. This is the one place that renders errors and chooses exit codes:
//!
//! - 0: success;
//! - 1: findings (`check` found a floating reference that is not ignored, a file it could
//!   not read or parse, or with `--online` a stale or missing digest; `pin` could not resolve
//!   some references or write some files — the rest are still written; `pr` could not resolve
//!   some references — the pull request holds the rest);
//! - 2: usage, config or fatal I/O error.

mod args;
mod charts;
mod commands;
mod compose_build_args;
mod compose_builds;
mod compose_dockerfiles;
mod config;
mod details;
mod dev_loops;
mod filter;
mod generate;
mod kustomize_images;
mod platforms;
mod printer;
mod read;
mod release_payload;
mod resolve;
mod settings;
mod template_scans;
mod test_suites;
mod walk;
mod write;

use std::io;
use std::process::ExitCode;

/// jemalloc on unix, as ripgrep (for musl) and uv do. A scan makes some half a million small
/// allocations, and with glibc's allocator making and freeing them was an eighth of its
/// cycles. Measured on the scan bench: 8% less wall time, the same peak on its tree, and
/// 70 MiB at peak over 100,000 small manifests against glibc's 77 MiB (mimalloc, tried
/// before, was 4–6% faster than glibc's but doubled the peak; see the README's bench notes).
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::Parser as _;

use crate::args::{CheckFormat, Cli, Command, PinFormat};
use crate::commands::pin::PinOptions;
use crate::printer::Printer;
use crate::settings::{PrSettings, ProcessEnvironment, Settings};

/// What a run that did not fail says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Success,
    Findings,
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success => Self::SUCCESS,
            Outcome::Findings => Self::from(1),
        }
    }
}

const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout with 0; usage errors to stderr with 2.
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(&cli) {
        Ok(outcome) => outcome.into(),
        Err(error) => {
            Printer::plain().error(&error);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The settings and printer of a command that reads files; completions and the man page need
/// neither (they are generated from the flag definitions alone).
fn load(cli: &Cli) -> anyhow::Result<(Settings, Printer)> {
    let settings = Settings::load(
        &cli.global,
        &ProcessEnvironment,
        cli.command.paths().first().map(AsRef::as_ref),
    )?;
    let printer = Printer::new(&settings);
    init_tracing(cli.global.verbose, &settings);
    printer.config_note(settings.config_file.as_deref());
    Ok((settings, printer))
}

fn run(cli: &Cli) -> anyhow::Result<Outcome> {
    match &cli.command {
        Command::Completions(completions) => {
            printed(generate::completions(
                completions.shell,
                &mut io::stdout().lock(),
            ))?;
            Ok(Outcome::Success)
        }
        Command::Man => {
            printed(generate::man(&mut io::stdout().lock()))?;
            Ok(Outcome::Success)
        }
        Command::Scan(scan) => {
            let (settings, printer) = load(cli)?;
            let report = commands::scan::run(&scan.paths, &settings)?;
            printed(printer.scan(&report, scan.format))?;
            // The process exits next: freeing a large tree's findings one by one would only
            // delay it (the operating system takes the memory back at once).
            std::mem::forget(report);
            Ok(Outcome::Success)
        }
        Command::Check(check) => {
            let (settings, printer) = load(cli)?;
            let json = !matches!(check.format, CheckFormat::Text | CheckFormat::Github);
            let progress = printer.progress(json);
            let report = commands::check::run(&check.paths, check.online, &settings, &progress)?;
            printed(printer.check(&report, check.format))?;
            Ok(if report.summary.passed {
                Outcome::Success
            } else {
                Outcome::Findings
            })
        }
        Command::Pin(pin) => {
            let (settings, printer) = load(cli)?;
            let options = PinOptions {
                write: pin.write,
                refresh: !pin.no_refresh,
            };
            let progress = printer.progress(pin.format == PinFormat::Json);
            let report = commands::pin::run(&pin.paths, options, &settings, &progress)?;
            printed(printer.pin(&report, pin.format))?;
            Ok(if report.complete() {
                Outcome::Success
            } else {
                Outcome::Findings
            })
        }
        Command::Pr(pr) => {
            let (settings, printer) = load(cli)?;
            let pr_settings = PrSettings::merge(pr, &settings, &ProcessEnvironment)?;
            let progress = printer.progress(pr.format == PinFormat::Json);
            let report = commands::pr::run(&pr.paths, &pr_settings, &settings, &progress)?;
            printed(printer.pr(&report, pr.format))?;
            Ok(if report.complete() {
                Outcome::Success
            } else {
                Outcome::Findings
            })
        }
    }
}

/// The diagnostic log on stderr: `RUST_LOG` (a `tracing` filter) when set, else `debug` for
/// tagpin's crates with `-vv`, else nothing.
fn init_tracing(verbose: u8, settings: &Settings) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var(settings::env::RUST_LOG) {
        Ok(filter) if !filter.is_empty() => EnvFilter::new(filter),
        _ if verbose >= 2 => {
            EnvFilter::new("tagpin=debug,tagpin_registry=debug,tagpin_github=debug")
        }
        _ => return,
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(settings.colors(io::IsTerminal::is_terminal(&io::stderr())))
        .try_init();
}

/// A reader that stopped reading (`tagpin scan | head`) is not an error.
fn printed(result: io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
