use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Credential, Credentials};
use crate::Secret;

/// What a lookup found, secrets exposed for comparison.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    None,
    Basic(String, String),
    Identity(String),
}

async fn found(credentials: &Credentials, registry: &str) -> Found {
    match credentials.lookup(registry).await.unwrap() {
        None => Found::None,
        Some(Credential::Basic { username, password }) => {
            Found::Basic(username, password.expose().to_owned())
        }
        Some(Credential::IdentityToken { token }) => Found::Identity(token.expose().to_owned()),
    }
}

fn basic(user: &str, password: &str) -> Found {
    Found::Basic(user.to_owned(), password.to_owned())
}

fn config(dir: &Path, json: &str) -> Credentials {
    let path = dir.join("config.json");
    std::fs::write(&path, json).unwrap();
    Credentials::from_docker_config_file(&path).unwrap()
}

/// Writes `docker-credential-test`, which logs its calls and knows two servers.
fn fake_helper(dir: &Path) {
    let script = format!(
        r#"#!/bin/sh
read -r server || true
echo "$1 $server" >> "{log}"
case "$server" in
  helper.example) echo '{{"ServerURL":"helper.example","Username":"helper-user","Secret":"helper-pass"}}' ;;
  https://index.docker.io/v1/) echo '{{"ServerURL":"https://index.docker.io/v1/","Username":"<token>","Secret":"hub-refresh"}}' ;;
  broken.example) echo 'boom' >&2; exit 3 ;;
  *) echo 'credentials not found in native keychain'; exit 1 ;;
esac
"#,
        log = dir.join("helper.log").display()
    );
    let path = dir.join("docker-credential-test");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn reads_auths_entries() {
    let dir = tempfile::tempdir().unwrap();
    let auth = STANDARD.encode("bob:pa:ss");
    let credentials = config(
        dir.path(),
        &format!(
            r#"{{"auths": {{
                "https://index.docker.io/v1/": {{"auth": "{auth}"}},
                "quay.io": {{"username": "quser", "password": "qpass"}},
                "https://registry.example:5000/v2/": {{"identitytoken": "refresh-me"}},
                "empty.example": {{}},
                "127.0.0.1:5000": {{"auth": "{auth}", "email": "x@example.com"}}
            }}}}"#
        ),
    );
    let cases = [
        ("docker.io", basic("bob", "pa:ss")),
        ("index.docker.io", basic("bob", "pa:ss")),
        ("quay.io", basic("quser", "qpass")),
        (
            "registry.example:5000",
            Found::Identity("refresh-me".to_owned()),
        ),
        ("empty.example", Found::None),
        ("127.0.0.1:5000", basic("bob", "pa:ss")),
        ("ghcr.io", Found::None),
    ];
    for (registry, expected) in cases {
        assert_eq!(found(&credentials, registry).await, expected, "{registry}");
    }
}

#[tokio::test]
async fn explicit_and_github_token_precedence() {
    let dir = tempfile::tempdir().unwrap();
    let credentials = config(
        dir.path(),
        r#"{"auths": {"quay.io": {"username": "file", "password": "file-pass"}}}"#,
    )
    .with_basic("quay.io", "flag", Secret::new("flag-pass"))
    .with_github_token(Secret::new("gh-token"));
    assert_eq!(
        found(&credentials, "quay.io").await,
        basic("flag", "flag-pass")
    );
    assert_eq!(
        found(&credentials, "ghcr.io").await,
        basic("x-access-token", "gh-token")
    );
    let file_wins = config(
        dir.path(),
        r#"{"auths": {"ghcr.io": {"username": "me", "password": "pat"}}}"#,
    )
    .with_github_token(Secret::new("gh-token"));
    assert_eq!(found(&file_wins, "ghcr.io").await, basic("me", "pat"));
}

#[tokio::test]
async fn runs_credential_helpers() {
    let dir = tempfile::tempdir().unwrap();
    fake_helper(dir.path());
    let path = std::env::join_paths([dir.path()]).unwrap();
    let helpers = config(
        dir.path(),
        r#"{"credHelpers": {"helper.example": "test", "unknown.example": "test", "broken.example": "test"},
            "auths": {"helper.example": {"username": "ignored", "password": "ignored"}}}"#,
    )
    .with_helper_path(&path);
    assert_eq!(
        found(&helpers, "helper.example").await,
        basic("helper-user", "helper-pass"),
        "credHelpers wins over auths"
    );
    assert_eq!(found(&helpers, "unknown.example").await, Found::None);
    assert_eq!(found(&helpers, "not-configured.example").await, Found::None);
    let error = helpers.lookup("broken.example").await.err().unwrap();
    assert!(
        error.to_string().contains("docker-credential-test failed"),
        "{error}"
    );

    let store = config(
        dir.path(),
        r#"{"credsStore": "test", "auths": {"https://index.docker.io/v1/": {}, "quay.io": {"username": "q", "password": "p"}}}"#,
    )
    .with_helper_path(&path);
    assert_eq!(
        found(&store, "docker.io").await,
        Found::Identity("hub-refresh".to_owned()),
        "`<token>` user means an identity token"
    );
    assert_eq!(
        found(&store, "quay.io").await,
        basic("q", "p"),
        "inline auths first"
    );
    assert_eq!(found(&store, "elsewhere.example").await, Found::None);

    let log = std::fs::read_to_string(dir.path().join("helper.log")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            "get helper.example",
            "get unknown.example",
            "get broken.example",
            "get https://index.docker.io/v1/",
            "get elsewhere.example",
        ]
    );

    let missing = config(dir.path(), r#"{"credsStore": "absent"}"#).with_helper_path(&path);
    let error = missing.lookup("quay.io").await.err().unwrap();
    assert!(
        error.to_string().contains("docker-credential-absent"),
        "{error}"
    );
}

#[test]
fn rejects_malformed_files_without_echoing_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let cases = [
        ("{not json", "cannot parse"),
        (
            r#"{"auths": {"quay.io": {"auth": "!!not-base64-canary!!"}}}"#,
            "is not valid base64",
        ),
        (
            &format!(
                r#"{{"auths": {{"quay.io": {{"auth": "{}"}}}}}}"#,
                STANDARD.encode("no-colon-canary")
            ),
            "user:password",
        ),
        (
            r#"{"auths": {"quay.io": {"password": 12345}}}"#,
            "is not a string",
        ),
        (r#"{"credHelpers": {"quay.io": 7}}"#, "is not a string"),
    ];
    for (json, message) in cases {
        std::fs::write(&path, json).unwrap();
        let error = Credentials::from_docker_config_file(&path).err().unwrap();
        let text = format!("{error} {error:?}");
        assert!(text.contains(message), "{json}: {text}");
        assert!(
            !text.contains("canary") && !text.contains("12345"),
            "{text}"
        );
    }
    let error = Credentials::from_docker_config_file(&dir.path().join("absent.json"))
        .err()
        .unwrap();
    assert!(error.to_string().contains("absent.json"), "{error}");
}

#[test]
fn debug_lists_registries_only() {
    let dir = tempfile::tempdir().unwrap();
    let credentials = config(
        dir.path(),
        r#"{"auths": {"quay.io": {"username": "u", "password": "debug-canary"}}}"#,
    )
    .with_basic("ghcr.io", "u", Secret::new("debug-canary"))
    .with_github_token(Secret::new("debug-canary"));
    let debug = format!("{credentials:?}");
    assert!(
        debug.contains("quay.io") && debug.contains("ghcr.io"),
        "{debug}"
    );
    assert!(!debug.contains("debug-canary"), "{debug}");
}
