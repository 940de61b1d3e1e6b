//! The `tagpin` binary: parse flags, settle the settings, run a command, print its result, and
//! pick the exit code. This is the one place that renders errors and chooses exit codes:
//!
//! - 0: success;
//! - 1: findings (`check` found a floating reference that is not ignored, or a file it could
//!   not read or parse);
//! - 2: usage, config or fatal I/O error.

mod args;
mod commands;
mod config;
mod filter;
mod mirror;
mod printer;
mod read;
mod settings;
mod walk;

use std::io;
use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};
use crate::printer::Printer;
use crate::settings::{ProcessEnvironment, Settings};

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

fn run(cli: &Cli) -> anyhow::Result<Outcome> {
    let first_path = match &cli.command {
        Command::Scan(scan) => scan.paths.first(),
        Command::Check(check) => check.paths.first(),
    };
    let settings = Settings::load(
        &cli.global,
        &ProcessEnvironment,
        first_path.map(AsRef::as_ref),
    )?;
    let printer = Printer::new(&settings);
    printer.config_note(settings.config_file.as_deref());
    match &cli.command {
        Command::Scan(scan) => {
            let report = commands::scan::run(&scan.paths, &settings)?;
            printed(printer.scan(&report, scan.format))?;
            Ok(Outcome::Success)
        }
        Command::Check(check) => {
            let report = commands::check::run(&check.paths, check.online, &settings)?;
            printed(printer.check(&report, check.format))?;
            Ok(if report.summary.passed {
                Outcome::Success
            } else {
                Outcome::Findings
            })
        }
    }
}

/// A reader that stopped reading (`tagpin scan | head`) is not an error.
fn printed(result: io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
