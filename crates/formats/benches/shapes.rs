//! Linear time on every shape of YAML (issue 9): one file of about 9 MiB per shape, each
//! scanned as `yaml`, timed, and held to the target of under 1 s. No criterion; it reports
//! and always exits 0: `cargo bench -p tagpin-formats --bench shapes`.
//!
//! Shapes: block manifests, one long flow mapping on a line, minified and pretty-printed JSON,
//! deep block and flow nesting, many small documents, block scalars, multi-line plain scalars,
//! anchors and aliases, `PyYAML`'s canonical style, Helm values with split maps.
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use tagpin_formats::{FileKind, scan};

/// The size of each file: 9 MiB, or `TAGPIN_SHAPES_KIB` KiB.
fn size() -> usize {
    std::env::var("TAGPIN_SHAPES_KIB")
        .ok()
        .and_then(|kib| kib.parse::<usize>().ok())
        .map_or(9 << 20, |kib| kib << 10)
}

/// `unit(i)` repeated until the text is [`SIZE`] bytes, wrapped in `head` and `tail`.
fn repeat(head: &str, unit: impl Fn(usize) -> String, separator: &str, tail: &str) -> String {
    let mut text = String::from(head);
    let mut i = 0;
    let size = size();
    while text.len() < size {
        if i > 0 {
            text.push_str(separator);
        }
        text.push_str(&unit(i));
        i += 1;
    }
    text.push_str(tail);
    text
}

/// A shape's name and how to write a file of it.
type Shape = (&'static str, fn() -> String);

fn shapes() -> Vec<Shape> {
    vec![
        ("block manifests", || {
            repeat(
                "",
                |i| {
                    format!(
                        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{i}\n  labels: {{app: a}}\nspec:\n  containers:\n  - name: a\n    image: \"registry.example.com/a:{i}\"\n    args: [\"--v\", \"2\"]\n"
                    )
                },
                "---\n",
                "",
            )
        }),
        ("one flow mapping on a line", || {
            repeat(
                "m: {",
                |i| format!("k{i}: v{i}, image: nginx:{i}"),
                ", ",
                "}\n",
            )
        }),
        ("minified JSON", || {
            repeat(
                "{\"items\":[",
                |i| {
                    format!(
                        "{{\"name\":\"p{i}\",\"spec\":{{\"containers\":[{{\"name\":\"a\",\"image\":\"nginx:1.{i}\"}}]}}}}"
                    )
                },
                ",",
                "]}\n",
            )
        }),
        ("pretty JSON", || {
            repeat(
                "{\n  \"items\": [\n",
                |i| {
                    format!(
                        "    {{\n      \"name\": \"p{i}\",\n      \"image\": \"nginx:1.{i}\"\n    }}"
                    )
                },
                ",\n",
                "\n  ]\n}\n",
            )
        }),
        ("deep block nesting", || {
            repeat("", |i| deep_block(i, 200), "", "")
        }),
        ("deep flow nesting", || {
            repeat(
                "",
                |i| {
                    format!(
                        "d{i}: {}{{image: nginx:{i}}}{}\n",
                        "{a: ".repeat(199),
                        "}".repeat(199)
                    )
                },
                "",
                "",
            )
        }),
        ("many documents", || {
            repeat("", |i| format!("image: nginx:{i}\n"), "---\n", "")
        }),
        ("block scalars", || {
            repeat(
                "",
                |i| {
                    format!(
                        "data{i}: |\n{}image: nginx:{i}\n",
                        "  some: config line that is not an image\n".repeat(40)
                    )
                },
                "",
                "",
            )
        }),
        ("multi-line plain scalars", || {
            repeat(
                "",
                |i| {
                    format!(
                        "description{i}: a long\n  plain scalar\n  over lines\nimage: nginx:{i}\n"
                    )
                },
                "",
                "",
            )
        }),
        ("anchors and aliases", || {
            repeat(
                "",
                |i| {
                    format!(
                        "base{i}: &b{i}\n  image: nginx:{i}\n  restart: always\nuse{i}:\n  <<: *b{i}\n  other: *b{i}\n"
                    )
                },
                "",
                "",
            )
        }),
        ("PyYAML canonical", || {
            repeat(
                "%YAML 1.1\n---\n!!map {\n",
                |i| {
                    format!(
                        "  ? !!str \"k{i}\"\n  : !!map {{\n    ? !!str \"image\"\n    : !!str \"nginx:{i}\",\n  }},\n"
                    )
                },
                "",
                "}\n",
            )
        }),
        ("values split maps", || {
            repeat(
                "",
                |i| {
                    format!(
                        "c{i}:\n  image:\n    registry: quay.io\n    repository: acme/c{i}\n    tag: \"v{i}\"\n    digest: \"\"\n  setting: {{a: 1, b: [x, y]}}\n"
                    )
                },
                "",
                "",
            )
        }),
    ]
}

fn deep_block(i: usize, depth: usize) -> String {
    let mut text = String::new();
    for level in 0..depth {
        let _ = writeln!(text, "{}k{i}_{level}:", " ".repeat(level));
    }
    let _ = writeln!(text, "{}image: nginx:{i}", " ".repeat(depth));
    text
}

fn main() {
    println!(
        "{:<28} {:>8} {:>9} {:>9} {:>10}",
        "shape", "MiB", "seconds", "MB/s", "findings"
    );
    let mut slowest: f64 = 0.0;
    let only = std::env::var("TAGPIN_SHAPES_ONLY").ok();
    for (name, make) in shapes() {
        if only.as_deref().is_some_and(|only| !name.contains(only)) {
            continue;
        }
        let text = make();
        let start = Instant::now();
        let result = black_box(scan(
            Path::new("big.yaml"),
            FileKind::Yaml,
            black_box(&text),
        ));
        let seconds = start.elapsed().as_secs_f64();
        slowest = slowest.max(seconds);
        let found = match result {
            Ok(findings) => findings.len().to_string(),
            Err(error) => format!("error: {error}"),
        };
        #[expect(clippy::cast_precision_loss, reason = "a rate")]
        let megabytes = text.len() as f64 / 1e6;
        println!(
            "{name:<28} {:>8.1} {seconds:>9.3} {:>9.0} {found:>10}",
            megabytes / 1.048_576,
            megabytes / seconds
        );
    }
    let verdict = if slowest < 1.0 { "within" } else { "MISSES" };
    println!("slowest: {slowest:.3} s ({verdict} the 1 s target for a 9 MiB file)");
}
