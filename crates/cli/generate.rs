//! Shell completions and the man page, generated from the clap definitions so they never drift
//! from the flags the binary accepts.

use std::io::{self, Write};

use clap::CommandFactory as _;
use clap_complete::Shell;

use crate::args::Cli;

/// Writes the completion script for `shell`.
pub fn completions(shell: Shell, out: &mut impl Write) -> io::Result<()> {
    let mut command = Cli::command();
    let name = command.get_name().to_owned();
    // clap_complete writes straight to `out` and has no error channel of its own, so render
    // into memory first: a closed pipe then surfaces as an error from the single write below.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, name, &mut script);
    out.write_all(&script)?;
    out.flush()
}

/// Writes the man page, in roff.
pub fn man(out: &mut impl Write) -> io::Result<()> {
    clap_mangen::Man::new(Cli::command()).render(out)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_naming_every_command() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let mut script = Vec::new();
            completions(shell, &mut script).unwrap();
            let script = String::from_utf8(script).unwrap();
            for command in ["scan", "check", "pin", "pr", "completions", "man"] {
                assert!(script.contains(command), "{shell}: no {command}");
            }
            assert!(script.contains("mirror"), "{shell}: no mirror flag");
        }
    }

    #[test]
    fn man_page_is_roff_with_the_commands() {
        let mut page = Vec::new();
        man(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.starts_with(".ie \\n(.g .ds Aq"), "{}", &page[..80]);
        assert!(page.contains(".TH tagpin 1"), "no title header");
        for command in ["tagpin\\-scan", "tagpin\\-check", "tagpin\\-pin"] {
            assert!(page.contains(command), "no {command}");
        }
    }
}
