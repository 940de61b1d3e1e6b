//! GitHub Actions workflow commands: one annotation per floating reference, warning and file
//! that could not be read. Paths are relative to the PATH given, so run `tagpin check .` from
//! the repository root for annotations to land on the right files.

use std::io::{self, Write};

use crate::commands::check::CheckReport;

/// Escapes a message (the part after `::`).
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value (`file=…`, `title=…`).
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn check(out: &mut impl Write, report: &CheckReport) -> io::Result<()> {
    for reference in report.floating() {
        writeln!(
            out,
            "::error file={},line={},col={},title={}::{}",
            property(&reference.path),
            reference.line,
            reference.column,
            property("floating image reference"),
            data(&format!(
                "{} is a floating image reference: it does not record which image runs; pin it to a digest",
                reference.text
            )),
        )?;
    }
    for (kind, problem) in report.online_problems() {
        writeln!(
            out,
            "::error file={},line={},col={},title={}::{}",
            property(&problem.path),
            problem.line,
            problem.column,
            property(kind.title()),
            data(&format!("{}: {}", problem.text, problem.message)),
        )?;
    }
    for reference in report.warned() {
        for warning in &reference.warnings {
            writeln!(
                out,
                "::warning file={},line={},col={},title={}::{}",
                property(&reference.path),
                reference.line,
                reference.column,
                property("imagePullPolicy defaults to Always"),
                data(&format!("{}: {}", reference.text, warning.message)),
            )?;
        }
    }
    for error in &report.errors {
        writeln!(
            out,
            "::error file={},title={}::{}",
            property(&error.path),
            property("file not checked"),
            data(&error.message),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
