//! A whole reference in an ARG default whose value is also expanded outside image positions
//! (the OCI `org.opencontainers.image.base.name` label idiom): reported, not written.

use std::path::Path;

use crate::tests::Sited;
use crate::{FileKind, Status, apply_edits, scan};

/// [`crate::tests::sites`] of a Dockerfile.
fn sites(text: &str) -> Vec<Sited> {
    crate::tests::sites(FileKind::Dockerfile, text)
}

fn row(line: usize, column: usize, status: Status, text: &str, site: &str) -> Sited {
    (line, column, status, text.to_owned(), site.to_owned())
}

/// The reason a whole-reference default `name` (line `line`) is not written.
fn elsewhere(name: &str, line: usize, used: &str) -> String {
    format!(
        "no: ARG {name} (line {line}) is also used outside image references ({used}); a digest \
         in its default would change that use too"
    )
}

/// Each row's findings with where the digest would go, also with CRLF.
#[test]
fn dockerfile_whole_arg_used_outside_images() {
    use Status::{Floating, Pinned};
    let digest = format!("sha256:{}", "1".repeat(64));
    let alpine = |line, column| row(line, column, Floating, "alpine:3.20", "inline");
    let kept = |line, column, used: &str| {
        row(
            line,
            column,
            Floating,
            "alpine:3.20",
            &elsewhere("BASE_IMAGE", line, used),
        )
    };
    let cases: Vec<(String, Vec<Sited>)> = vec![
        // The label idiom: re-declared in the stage, then expanded by LABEL and RUN.
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             LABEL org.opencontainers.image.base.name=\"${BASE_IMAGE}\"\n\
             RUN echo \"${BASE_IMAGE}\" | cut -d: -f2\n"
                .into(),
            vec![kept(1, 16, "LABEL on line 4 and 1 other place")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             LABEL org.opencontainers.image.base.name=\"${BASE_IMAGE}\"\n"
                .into(),
            vec![kept(1, 16, "LABEL on line 4")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\nRUN echo $BASE_IMAGE\n"
                .into(),
            vec![kept(1, 16, "RUN on line 4")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             ENV BASE=${BASE_IMAGE}\n"
                .into(),
            vec![kept(1, 16, "ENV on line 4")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             WORKDIR /src/${BASE_IMAGE}\nCMD [\"echo\", \"$BASE_IMAGE\"]\n\
             entrypoint echo ${BASE_IMAGE}\n"
                .into(),
            vec![kept(1, 16, "WORKDIR on line 4 and 2 other places")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             LABEL base=${BASE_IMAGE:-none}\n"
                .into(),
            vec![kept(1, 16, "LABEL on line 4")],
        ),
        // Another ARG's default, in the stage or among the global ARGs.
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             ARG NAME=${BASE_IMAGE}\n"
                .into(),
            vec![kept(1, 16, "ARG on line 4")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nARG BASE_NAME=$BASE_IMAGE\nFROM ${BASE_IMAGE}\n".into(),
            vec![kept(1, 16, "ARG on line 2")],
        ),
        // A heredoc body, a COPY source, a mount's other option.
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             RUN <<EOF\necho ${BASE_IMAGE}\nEOF\n"
                .into(),
            vec![kept(1, 16, "RUN on line 5")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             COPY --chown=1 ${BASE_IMAGE}.txt /x\n"
                .into(),
            vec![kept(1, 16, "COPY on line 4")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
             RUN --mount=type=bind,from=${BASE_IMAGE},target=/${BASE_IMAGE} true\n"
                .into(),
            vec![kept(1, 16, "RUN on line 4")],
        ),
        // A default declared in a stage, used there by COPY --from and by RUN.
        (
            "FROM a:1\nARG TOOLS=ghcr.io/t/tools:2\nCOPY --from=${TOOLS} /x /x\nRUN echo $TOOLS\n"
                .into(),
            vec![
                row(1, 6, Floating, "a:1", "inline"),
                row(
                    2,
                    11,
                    Floating,
                    "ghcr.io/t/tools:2",
                    &elsewhere("TOOLS", 2, "RUN on line 4"),
                ),
            ],
        ),
        // A pinned default is not refreshed either.
        (
            format!("ARG BASE_IMAGE=alpine:3.20@{digest}\nFROM ${{BASE_IMAGE}}\nARG BASE_IMAGE\nRUN echo $BASE_IMAGE\n"),
            vec![row(
                1,
                16,
                Pinned,
                &format!("alpine:3.20@{digest}"),
                &elsewhere("BASE_IMAGE", 1, "RUN on line 4"),
            )],
        ),
        // Not a use: no re-declaration in the stage (the expansion is empty), a re-declaration
        // alone, a stage default of its own, a later stage without one, a comment.
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\n\
             LABEL org.opencontainers.image.base.name=\"${BASE_IMAGE}\"\nRUN echo $BASE_IMAGE\n"
                .into(),
            vec![alpine(1, 16)],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\nRUN true\n".into(),
            vec![alpine(1, 16)],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE=other\n\
             RUN echo $BASE_IMAGE\n"
                .into(),
            vec![alpine(1, 16)],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE} AS one\nARG BASE_IMAGE\nFROM a:1\n\
             RUN echo $BASE_IMAGE\n"
                .into(),
            vec![alpine(1, 16), row(4, 6, Floating, "a:1", "inline")],
        ),
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n# ${BASE_IMAGE}\n"
                .into(),
            vec![alpine(1, 16)],
        ),
        // Only image positions: every one gets the digest.
        (
            "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE} AS b1\nFROM ${BASE_IMAGE} AS b2\n\
             FROM a:1\nARG BASE_IMAGE\nCOPY --from=${BASE_IMAGE} /x /x\n\
             RUN --mount=type=bind,from=$BASE_IMAGE,target=/t true\n"
                .into(),
            vec![alpine(1, 16), row(4, 6, Floating, "a:1", "inline")],
        ),
        // The tag-only case, as before.
        (
            "ARG ALPINE_VERSION=3.20\nFROM alpine:${ALPINE_VERSION}\nARG ALPINE_VERSION\n\
             RUN echo $ALPINE_VERSION\n"
                .into(),
            vec![row(
                2,
                6,
                Floating,
                "alpine:3.20",
                "no: ARG ALPINE_VERSION (line 1) is also used outside image references (RUN on \
                 line 4); a digest in its default would change that use too",
            )],
        ),
        (
            "ARG ALPINE_VERSION=3.20\nFROM alpine:${ALPINE_VERSION}\nARG ALPINE_VERSION\n".into(),
            vec![row(2, 6, Floating, "alpine:3.20", "arg 3.20")],
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(sites(&text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(sites(&crlf), expected, "{crlf:?}");
    }
}

/// `pin` leaves the label idiom's file as it is and writes the one whose uses are all images.
#[test]
fn dockerfile_whole_arg_pin_writes_only_image_uses() {
    use tagpin_reference::Digest;
    let digest = Digest::parse(&format!("sha256:{}", "1".repeat(64))).unwrap();
    let pin = |text: &str| {
        let findings = scan(Path::new("Dockerfile"), FileKind::Dockerfile, text).unwrap();
        let edits: Vec<_> = findings.iter().filter_map(|f| f.edit(&digest)).collect();
        apply_edits(text, &edits).unwrap()
    };
    let label = "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\n\
                 LABEL org.opencontainers.image.base.name=\"${BASE_IMAGE}\"\n";
    let images = "ARG BASE_IMAGE=alpine:3.20\nFROM ${BASE_IMAGE} AS b\nFROM b\nARG BASE_IMAGE\n\
                  COPY --from=${BASE_IMAGE} /x /x\n";
    for crlf in [false, true] {
        let text = |s: &str| {
            if crlf {
                s.replace('\n', "\r\n")
            } else {
                s.to_owned()
            }
        };
        assert_eq!(pin(&text(label)), text(label));
        assert_eq!(
            pin(&text(images)),
            text(&images.replacen("alpine:3.20", &format!("alpine:3.20@{digest}"), 1))
        );
    }
}

/// Odd declarations and expansions neither panic nor count as uses.
#[test]
fn dockerfile_odd_args_do_not_panic() {
    use Status::{Floating, Templated};
    let cases: Vec<(&str, Vec<Sited>)> = vec![
        (
            "ARG =\nARG X=\nARG\nARG =${X}\nFROM ${X}\nLABEL a=$ b=${ c=${} d=$X e=${X\n",
            vec![row(5, 6, Templated, "${X}", "inline")],
        ),
        (
            "ARG B=alpine:3.20\nFROM $B\nARG B\nLABEL a=$ b=${ c=${} d=$$ e=${B f=\u{e9}$\u{e9}\n",
            vec![row(
                1,
                7,
                Floating,
                "alpine:3.20",
                &elsewhere("B", 1, "LABEL on line 4"),
            )],
        ),
        (
            "ARG B=alpine:3.20\nFROM ${B:-x}\nARG B\nRUN <<EOF\n${B:-\n",
            vec![row(2, 6, Templated, "${B:-x}", "inline")],
        ),
        (
            "ARG B=alpine:3.20\nFROM ${B}\nRUN --mount= --mount=, --mount=from=\n",
            vec![row(1, 7, Floating, "alpine:3.20", "inline")],
        ),
        ("ARG B=alpine:3.20\nFROM\nCOPY --from=\nRUN $\n", vec![]),
    ];
    for (text, expected) in cases {
        assert_eq!(sites(text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(sites(&crlf), expected, "{crlf:?}");
    }
}
