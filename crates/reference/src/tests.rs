use proptest::prelude::*;

use crate::{Digest, DigestAlgorithm, ImageReference, ParseErrorKind, TagKey};

fn sha256(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

/// Each case: input, registry, repository, tag, digest.

#[test]
fn parses_valid_references() {
    let d = sha256('a');
    let sha512 = format!("sha512:{}", "b".repeat(128));
    let long_tag = format!("v{}", "1".repeat(127));
    #[expect(
        clippy::type_complexity,
        reason = "a table of expected parts reads best inline"
    )]
    let cases: Vec<(String, &str, &str, Option<&str>, Option<&str>)> = vec![
        ("busybox".into(), "docker.io", "library/busybox", None, None),
        (
            "busybox:1.36".into(),
            "docker.io",
            "library/busybox",
            Some("1.36"),
            None,
        ),
        (
            "library/busybox".into(),
            "docker.io",
            "library/busybox",
            None,
            None,
        ),
        (
            "docker.io/busybox".into(),
            "docker.io",
            "library/busybox",
            None,
            None,
        ),
        (
            "index.docker.io/busybox".into(),
            "docker.io",
            "library/busybox",
            None,
            None,
        ),
        (
            "bitnami/redis:7".into(),
            "docker.io",
            "bitnami/redis",
            Some("7"),
            None,
        ),
        (
            "quay.io/org/img:latest".into(),
            "quay.io",
            "org/img",
            Some("latest"),
            None,
        ),
        ("localhost/img".into(), "localhost", "img", None, None),
        (
            "localhost:5000/img:tag".into(),
            "localhost:5000",
            "img",
            Some("tag"),
            None,
        ),
        (
            "127.0.0.1:5000/a/b/c:1".into(),
            "127.0.0.1:5000",
            "a/b/c",
            Some("1"),
            None,
        ),
        ("[::1]:5000/img".into(), "[::1]:5000", "img", None, None),
        (
            "Registry.Example.com/img".into(),
            "Registry.Example.com",
            "img",
            None,
            None,
        ),
        ("my-host/img".into(), "docker.io", "my-host/img", None, None),
        (
            "a__b/c.d/e-f/g---h:x".into(),
            "docker.io",
            "a__b/c.d/e-f/g---h",
            Some("x"),
            None,
        ),
        (
            format!("img:{long_tag}"),
            "docker.io",
            "library/img",
            Some(long_tag.as_str()),
            None,
        ),
        (
            format!("img@{d}"),
            "docker.io",
            "library/img",
            None,
            Some(d.as_str()),
        ),
        (
            format!("img:1@{d}"),
            "docker.io",
            "library/img",
            Some("1"),
            Some(d.as_str()),
        ),
        (
            format!("ghcr.io/o/i:latest@{sha512}"),
            "ghcr.io",
            "o/i",
            Some("latest"),
            Some(sha512.as_str()),
        ),
        (
            "img:_x.Y-z".into(),
            "docker.io",
            "library/img",
            Some("_x.Y-z"),
            None,
        ),
        (
            "localhost:5000".into(),
            "docker.io",
            "library/localhost",
            Some("5000"),
            None,
        ),
    ];
    for (input, registry, repository, tag, digest) in cases {
        let reference = ImageReference::parse(&input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(reference.as_written(), input, "{input}");
        assert_eq!(reference.registry(), registry, "{input}");
        assert_eq!(reference.repository(), repository, "{input}");
        assert_eq!(reference.tag(), tag, "{input}");
        assert_eq!(
            reference.digest().map(ToString::to_string).as_deref(),
            digest,
            "{input}"
        );
    }
}

/// (input, byte position, kind)
#[test]
fn rejects_invalid_references() {
    let cases: Vec<(String, usize, ParseErrorKind)> = vec![
        (String::new(), 0, ParseErrorKind::Empty),
        (":tag".into(), 0, ParseErrorKind::Empty),
        ("Busybox".into(), 0, ParseErrorKind::UppercasePath),
        ("quay.io/Org/img".into(), 8, ParseErrorKind::UppercasePath),
        ("img:".into(), 4, ParseErrorKind::EmptyTag),
        ("img:-x".into(), 4, ParseErrorKind::InvalidTagCharacter('-')),
        ("img:a/b".into(), 4, ParseErrorKind::InvalidPort),
        (
            format!("img:{}", "a".repeat(129)),
            4,
            ParseErrorKind::TagTooLong { length: 129 },
        ),
        ("a//b".into(), 2, ParseErrorKind::EmptyPathComponent),
        ("img/".into(), 4, ParseErrorKind::EmptyPathComponent),
        ("-img".into(), 0, ParseErrorKind::InvalidSeparator),
        ("img-".into(), 3, ParseErrorKind::InvalidSeparator),
        ("a..b".into(), 1, ParseErrorKind::InvalidSeparator),
        ("a___b".into(), 1, ParseErrorKind::InvalidSeparator),
        ("a._b".into(), 1, ParseErrorKind::InvalidSeparator),
        ("im g".into(), 2, ParseErrorKind::InvalidPathCharacter(' ')),
        (
            "{{ .Values.image }}".into(),
            0,
            ParseErrorKind::InvalidPathCharacter('{'),
        ),
        ("host:abc/img".into(), 5, ParseErrorKind::InvalidPort),
        ("-host.io/img".into(), 0, ParseErrorKind::InvalidDomain),
        (
            "img@sha256:abc".into(),
            11,
            ParseErrorKind::DigestLength {
                expected: 64,
                found: 3,
            },
        ),
        (
            format!("img@md5:{}", "a".repeat(32)),
            4,
            ParseErrorKind::UnsupportedDigestAlgorithm,
        ),
        (
            format!("img@sha256:{}", "A".repeat(64)),
            11,
            ParseErrorKind::InvalidDigestHex,
        ),
        ("img@".into(), 4, ParseErrorKind::DigestMissingAlgorithm),
        (
            "a".repeat(256),
            0,
            ParseErrorKind::NameTooLong { length: 256 },
        ),
    ];
    for (input, position, kind) in cases {
        let error = ImageReference::parse(&input).expect_err(&input);
        assert_eq!(error.kind(), &kind, "{input}");
        assert_eq!(error.position(), position, "{input}");
        assert_eq!(error.input(), input);
    }
}

#[test]
fn error_message_names_input_and_column() {
    let error = ImageReference::parse("quay.io/Org/img").unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"invalid image reference "quay.io/Org/img" at column 9: repository names must be lowercase"#
    );
}

#[test]
fn pinned_text_keeps_spelling_and_replaces_digest() {
    let new = Digest::parse(&sha256('b')).unwrap();
    let cases = [
        ("busybox", format!("busybox:latest@{new}")),
        ("busybox:1.36", format!("busybox:1.36@{new}")),
        (
            "docker.io/library/busybox:1",
            format!("docker.io/library/busybox:1@{new}"),
        ),
        (
            &*format!("localhost:5000/x:1@{}", sha256('a')),
            format!("localhost:5000/x:1@{new}"),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            ImageReference::parse(input).unwrap().pinned_text(&new),
            expected
        );
    }
}

#[test]
fn spellings_share_a_tag_key() {
    let keys: Vec<TagKey> = [
        "busybox",
        "busybox:latest",
        "docker.io/library/busybox:latest",
    ]
    .iter()
    .map(|r| ImageReference::parse(r).unwrap().tag_key())
    .collect();
    assert!(keys.iter().all(|k| *k == keys[0]));
    assert_eq!(keys[0].to_string(), "docker.io/library/busybox:latest");
}

#[test]
fn digest_from_bytes_round_trips() {
    let digest = Digest::from_bytes(DigestAlgorithm::Sha256, &[0xab; 32]).unwrap();
    assert_eq!(digest.to_string(), format!("sha256:{}", "ab".repeat(32)));
    assert_eq!(digest.short(), "sha256:abababababab");
    assert!(Digest::from_bytes(DigestAlgorithm::Sha512, &[0; 32]).is_none());
}

proptest! {
    #[test]
    fn never_panics(input in "\\PC{0,80}") {
        let _ = ImageReference::parse(&input);
    }

    #[test]
    fn valid_names_round_trip(
        domain in proptest::option::of("[a-z][a-z0-9]{0,8}\\.[a-z]{2,4}(:[0-9]{1,5})?"),
        // A first component with a `.` would be a domain, so only later ones carry dots.
        path in "[a-z0-9]{1,6}([_-][a-z0-9]{1,6}){0,2}(/[a-z0-9]{1,6}([._-][a-z0-9]{1,6})?){0,2}",
        tag in proptest::option::of("[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}"),
    ) {
        let mut text = domain.clone().map(|d| format!("{d}/")).unwrap_or_default();
        text.push_str(&path);
        if let Some(tag) = &tag {
            text.push(':');
            text.push_str(tag);
        }
        let reference = ImageReference::parse(&text).unwrap();
        prop_assert_eq!(reference.as_written(), text.as_str());
        prop_assert_eq!(reference.tag(), tag.as_deref());
        let digest = Digest::parse(&sha256('c')).unwrap();
        let pinned = ImageReference::parse(&reference.pinned_text(&digest)).unwrap();
        prop_assert_eq!(pinned.tag_key(), reference.tag_key());
        prop_assert_eq!(pinned.digest(), Some(&digest));
    }
}
