//! Prints the findings of the files given as arguments: `cargo run --example dump -- FILE...`.
#![expect(clippy::print_stdout, reason = "a debugging aid")]

use std::path::Path;

fn main() {
    for arg in std::env::args().skip(1) {
        let path = Path::new(&arg);
        let Some(kind) = tagpin_formats::FileKind::detect(path) else {
            println!("{arg}: not scanned");
            continue;
        };
        let Ok(text) = std::fs::read_to_string(path) else {
            println!("{arg}: unreadable");
            continue;
        };
        match tagpin_formats::scan(path, kind, &text) {
            Ok(findings) => {
                for f in findings {
                    println!(
                        "{arg}:{}:{} {:?} {:?} {:?} {:?}",
                        f.line, f.column, f.status, f.text, f.site, f.warnings
                    );
                }
            }
            Err(error) => println!("error: {error}"),
        }
    }
}
