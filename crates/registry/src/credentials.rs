//! Who we are at each registry: explicit logins, Docker's `config.json` and `GITHUB_TOKEN`.
//!
//! Lookup order for a registry name (`docker.io`, `quay.io`, a mirror's `host:port`):
//! 1. [`Credentials::with_basic`];
//! 2. `config.json`: `credHelpers.<registry>` (runs `docker-credential-<name> get`), then an
//!    `auths` entry with `auth`, `username`/`password` or `identitytoken`, then `credsStore`;
//! 3. [`Credentials::with_github_token`] for `ghcr.io`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;

use crate::mirror::normalise_registry;
use crate::{Error, Secret};

/// The registry that GitHub's token is good for.
const GHCR: &str = "ghcr.io";

/// The user name sent with `GITHUB_TOKEN`; ghcr.io's token endpoint accepts any.
const GITHUB_TOKEN_USER: &str = "x-access-token";

/// Credentials for the registries of a run. `Debug` lists registry names, never a secret.
#[derive(Clone, Default)]
pub struct Credentials {
    explicit: BTreeMap<String, Credential>,
    docker: Option<Arc<DockerConfig>>,
    github_token: Option<Secret>,
    /// `PATH` for finding `docker-credential-*` helpers; the process's own when `None`.
    helper_path: Option<OsString>,
}

/// One registry's login.
#[derive(Clone)]
pub(crate) enum Credential {
    /// User name and password (or a personal access token as password).
    Basic { username: String, password: Secret },
    /// An `OAuth2` refresh token (`identitytoken` in `config.json`), exchanged at the token realm.
    IdentityToken { token: Secret },
}

struct DockerConfig {
    path: PathBuf,
    auths: BTreeMap<String, Credential>,
    cred_helpers: BTreeMap<String, String>,
    creds_store: Option<String>,
}

impl Credentials {
    /// No credentials: every registry is asked anonymously.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// Reads Docker's `config.json` at `path`. Credential helpers run later, only for the
    /// registries a run asks for.
    pub fn from_docker_config_file(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadConfig {
            path: path.to_owned(),
            source,
        })?;
        let config = DockerConfig::parse(path, &text)?;
        Ok(Self {
            docker: Some(Arc::new(config)),
            ..Self::default()
        })
    }

    /// Reads `$DOCKER_CONFIG/config.json`, else `$HOME/.docker/config.json`; no file means no
    /// credentials.
    pub fn from_default_docker_config() -> Result<Self, Error> {
        let dir = std::env::var_os("DOCKER_CONFIG")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".docker")));
        match dir.map(|dir| dir.join("config.json")) {
            Some(path) if path.is_file() => Self::from_docker_config_file(&path),
            _ => Ok(Self::default()),
        }
    }

    /// Uses `token` (a GitHub token such as `GITHUB_TOKEN`) for `ghcr.io` when nothing else
    /// provides a login there.
    #[must_use]
    pub fn with_github_token(mut self, token: Secret) -> Self {
        self.github_token = Some(token);
        self
    }

    /// Logs in to `registry` with a user name and password, ahead of any other source.
    #[must_use]
    pub fn with_basic(mut self, registry: &str, username: &str, password: Secret) -> Self {
        self.explicit.insert(
            normalise_registry(registry),
            Credential::Basic {
                username: username.to_owned(),
                password,
            },
        );
        self
    }

    /// Finds `docker-credential-*` helpers on `path` (a `PATH`-style list) instead of the
    /// process's `PATH`.
    #[must_use]
    pub fn with_helper_path(mut self, path: impl Into<OsString>) -> Self {
        self.helper_path = Some(path.into());
        self
    }

    /// The login for `registry`, running a credential helper when the config names one.
    pub(crate) async fn lookup(&self, registry: &str) -> Result<Option<Credential>, Error> {
        let registry = normalise_registry(registry);
        if let Some(credential) = self.explicit.get(&registry) {
            return Ok(Some(credential.clone()));
        }
        if let Some(docker) = &self.docker {
            if let Some(helper) = docker.cred_helpers.get(&registry) {
                return self.run_helper(helper, &registry).await;
            }
            if let Some(credential) = docker.auths.get(&registry) {
                return Ok(Some(credential.clone()));
            }
            if let Some(helper) = &docker.creds_store
                && let Some(credential) = self.run_helper(helper, &registry).await?
            {
                return Ok(Some(credential));
            }
        }
        if registry == GHCR
            && let Some(token) = &self.github_token
        {
            return Ok(Some(Credential::Basic {
                username: GITHUB_TOKEN_USER.to_owned(),
                password: token.clone(),
            }));
        }
        Ok(None)
    }

    async fn run_helper(&self, helper: &str, registry: &str) -> Result<Option<Credential>, Error> {
        run_helper(helper, registry, self.helper_path.as_ref()).await
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Credentials");
        debug.field("explicit", &self.explicit.keys().collect::<Vec<_>>());
        if let Some(docker) = &self.docker {
            debug
                .field("docker_config", &docker.path)
                .field("auths", &docker.auths.keys().collect::<Vec<_>>())
                .field("cred_helpers", &docker.cred_helpers)
                .field("creds_store", &docker.creds_store);
        }
        debug
            .field("github_token", &self.github_token.is_some())
            .field("helper_path", &self.helper_path)
            .finish()
    }
}

impl DockerConfig {
    /// Parses `config.json`. Field values are never echoed in errors: they may be secrets.
    fn parse(path: &Path, text: &str) -> Result<Self, Error> {
        let root: Value = serde_json::from_str(text).map_err(|source| Error::ParseConfig {
            path: path.to_owned(),
            source,
        })?;
        let invalid = |registry: &str, field, problem| Error::InvalidConfigEntry {
            path: path.to_owned(),
            registry: registry.to_owned(),
            field,
            problem,
        };
        let mut auths = BTreeMap::new();
        if let Some(entries) = root.get("auths").and_then(Value::as_object) {
            for (server, entry) in entries {
                let registry = registry_of_server(server);
                if let Some(credential) = auth_entry(entry, &registry, &invalid)? {
                    auths.insert(registry, credential);
                }
            }
        }
        let mut cred_helpers = BTreeMap::new();
        if let Some(entries) = root.get("credHelpers").and_then(Value::as_object) {
            for (server, helper) in entries {
                let registry = registry_of_server(server);
                let Some(helper) = helper.as_str() else {
                    return Err(invalid(&registry, "credHelpers", "is not a string"));
                };
                cred_helpers.insert(registry, helper.to_owned());
            }
        }
        let creds_store = root
            .get("credsStore")
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .map(str::to_owned);
        Ok(Self {
            path: path.to_owned(),
            auths,
            cred_helpers,
            creds_store,
        })
    }
}

/// One `auths` entry; `None` when it holds nothing usable (as with a `credsStore`).
fn auth_entry(
    entry: &Value,
    registry: &str,
    invalid: &dyn Fn(&str, &'static str, &'static str) -> Error,
) -> Result<Option<Credential>, Error> {
    let field = |name: &'static str| -> Result<Option<&str>, Error> {
        match entry.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(invalid(registry, name, "is not a string")),
        }
    };
    if let Some(token) = field("identitytoken")? {
        return Ok(Some(Credential::IdentityToken {
            token: Secret::new(token),
        }));
    }
    if let (Some(username), Some(password)) = (field("username")?, field("password")?) {
        return Ok(Some(Credential::Basic {
            username: username.to_owned(),
            password: Secret::new(password),
        }));
    }
    if let Some(auth) = field("auth")? {
        let decoded = STANDARD
            .decode(auth.trim())
            .map_err(|_| invalid(registry, "auth", "is not valid base64"))?;
        let decoded = String::from_utf8(decoded)
            .map_err(|_| invalid(registry, "auth", "is not UTF-8 once decoded"))?;
        let Some((username, password)) = decoded.split_once(':') else {
            return Err(invalid(registry, "auth", "is not base64 of user:password"));
        };
        return Ok(Some(Credential::Basic {
            username: username.to_owned(),
            password: Secret::new(password),
        }));
    }
    Ok(None)
}

/// The registry name a `config.json` key stands for: `https://index.docker.io/v1/` is
/// `docker.io`, `https://quay.io` is `quay.io`.
fn registry_of_server(server: &str) -> String {
    let without_scheme = server
        .strip_prefix("https://")
        .or_else(|| server.strip_prefix("http://"))
        .unwrap_or(server);
    let host = without_scheme.split('/').next().unwrap_or(without_scheme);
    normalise_registry(host)
}

/// The server URL credential helpers know Docker Hub by; other registries go by their host.
fn helper_server_url(registry: &str) -> &str {
    if registry == tagpin_reference::DOCKER_HUB {
        "https://index.docker.io/v1/"
    } else {
        registry
    }
}

/// Runs `docker-credential-<helper> get` with the server URL on stdin (the helper protocol).
/// A helper that has no login for the server answers "credentials not found": anonymous.
async fn run_helper(
    helper: &str,
    registry: &str,
    search_path: Option<&OsString>,
) -> Result<Option<Credential>, Error> {
    let program = format!("docker-credential-{helper}");
    let io_error = |source| Error::CredentialHelper {
        helper: helper.to_owned(),
        registry: registry.to_owned(),
        source,
    };
    let mut command = tokio::process::Command::new(&program);
    if let Some(path) = search_path {
        // A child's `PATH` is also where the program is looked up.
        command.env("PATH", path);
    }
    let mut child = command
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(io_error)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(helper_server_url(registry).as_bytes())
            .await
            .map_err(io_error)?;
    }
    let output = child.wait_with_output().await.map_err(io_error)?;
    if !output.status.success() {
        if String::from_utf8_lossy(&output.stdout).contains("credentials not found") {
            tracing::debug!(helper, registry, "credential helper has no login");
            return Ok(None);
        }
        return Err(Error::CredentialHelperFailed {
            helper: helper.to_owned(),
            registry: registry.to_owned(),
            status: output.status,
        });
    }
    let reply: Value = serde_json::from_slice(&output.stdout).map_err(|_| {
        io_error(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the helper's answer is not JSON",
        ))
    })?;
    let text = |name| reply.get(name).and_then(Value::as_str).unwrap_or_default();
    let (username, secret) = (text("Username"), text("Secret"));
    if secret.is_empty() {
        return Ok(None);
    }
    tracing::debug!(helper, registry, "credential helper gave a login");
    Ok(Some(if username == "<token>" {
        Credential::IdentityToken {
            token: Secret::new(secret),
        }
    } else {
        Credential::Basic {
            username: username.to_owned(),
            password: Secret::new(secret),
        }
    }))
}

#[cfg(test)]
mod tests;
