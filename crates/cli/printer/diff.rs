//! Unified diffs of rewritten files, byte-faithful: a CRLF line keeps its `\r`, and a last line
//! without a newline gets git's `\ No newline at end of file` marker.

use std::io::{self, Write};

use similar::TextDiff;

/// Writes the diff turning `old` into `new` for `path` (shown as `a/<path>` and `b/<path>`),
/// with three lines of context. Nothing when the texts are equal.
pub fn unified(out: &mut impl Write, path: &str, old: &str, new: &str) -> io::Result<()> {
    let diff = TextDiff::from_lines(old, new);
    let mut unified = diff.unified_diff();
    unified
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"));
    unified.to_writer(out)
}

#[cfg(test)]
mod tests {
    use super::unified;

    fn render(path: &str, old: &str, new: &str) -> String {
        let mut out = Vec::new();
        unified(&mut out, path, old, new).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Shows `\r` so the snapshots tell CRLF from LF.
    fn visible(text: &str) -> String {
        text.replace('\r', "\\r")
    }

    const OLD: &str = "a: 1\nspec:\n  image: busybox:1.36\n  b: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\n  image: nginx:1.27\n";

    #[test]
    fn lf() {
        let new = OLD
            .replace("busybox:1.36", "busybox:1.36@sha256:aaaa")
            .replace("nginx:1.27", "nginx:1.27@sha256:bbbb");
        insta::assert_snapshot!(render("k8s/pod.yaml", OLD, &new));
    }

    #[test]
    fn crlf() {
        let old = OLD.replace('\n', "\r\n");
        let new = old.replace("busybox:1.36", "busybox:1.36@sha256:aaaa");
        let rendered = render("pod.yaml", &old, &new);
        assert!(
            rendered.contains("-  image: busybox:1.36\r\n+  image: busybox:1.36@sha256:aaaa\r\n")
        );
        insta::assert_snapshot!(visible(&rendered));
    }

    #[test]
    fn missing_final_newline() {
        let old = "FROM golang:1.22 AS build\nRUN go build\nFROM busybox:1.36";
        let new = "FROM golang:1.22 AS build\nRUN go build\nFROM busybox:1.36@sha256:aaaa";
        insta::assert_snapshot!(render("Dockerfile", old, new));
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        let old = "services:\r\n  web:\r\n    image: nginx:1.27";
        let new = "services:\r\n  web:\r\n    image: nginx:1.27@sha256:bbbb";
        insta::assert_snapshot!(visible(&render("compose.yaml", old, new)));
    }

    #[test]
    fn equal_texts_give_nothing() {
        assert_eq!(render("a", "x\n", "x\n"), "");
    }
}
