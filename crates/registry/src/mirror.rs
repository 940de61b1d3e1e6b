use std::fmt;
use std::str::FromStr;

use crate::Error;

/// Where lookups for one registry go instead: `quay.io=127.0.0.1:5000/quay.io` sends
/// `quay.io/org/img:tag` to `127.0.0.1:5000` as repository `quay.io/org/img`.
///
/// The digest is reported for the reference as written; a faithful mirror serves the same one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mirror {
    registry: String,
    host: String,
    prefix: Option<String>,
}

impl Mirror {
    /// A mirror of `registry` at `endpoint` (`HOST[:PORT][/PREFIX]`), as config files spell it.
    pub fn new(registry: &str, endpoint: &str) -> Result<Self, Error> {
        let text = || without_userinfo(&format!("{registry}={endpoint}"));
        let invalid = |problem| Error::InvalidMirror {
            text: text(),
            problem,
        };
        let registry = registry.trim();
        if registry.is_empty() || registry.contains('/') {
            return Err(invalid("the registry must be a host such as quay.io"));
        }
        if endpoint.contains('@') {
            return Err(invalid(
                "credentials do not belong in a mirror; put them in Docker's config.json under the mirror's HOST[:PORT]",
            ));
        }
        if endpoint.contains("://") {
            return Err(invalid(
                "write HOST[:PORT][/PREFIX] without a scheme; loopback hosts use HTTP, list others under insecure_registries",
            ));
        }
        let endpoint = endpoint.trim().trim_end_matches('/');
        let (host, prefix) = match endpoint.split_once('/') {
            Some((host, prefix)) => (host, Some(prefix.trim_matches('/').to_owned())),
            None => (endpoint, None),
        };
        check_host(host).map_err(invalid)?;
        let prefix = prefix.filter(|prefix| !prefix.is_empty());
        if prefix
            .as_deref()
            .is_some_and(|prefix| prefix.split('/').any(str::is_empty))
        {
            return Err(invalid("the path prefix has an empty component"));
        }
        Ok(Self {
            registry: normalise_registry(registry),
            host: host.to_ascii_lowercase(),
            prefix,
        })
    }

    /// The registry this mirror stands in for, normalised (`docker.io` for Docker Hub).
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// `host[:port]` the lookups go to.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The path prepended to every repository, if any.
    pub fn prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// The repository path at the mirror for `repository` at the original registry.
    pub(crate) fn repository(&self, repository: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}/{repository}"),
            None => repository.to_owned(),
        }
    }
}

impl FromStr for Mirror {
    type Err = Error;

    /// Parses `REGISTRY=HOST[:PORT][/PREFIX]`, the `--mirror` flag's syntax.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some((registry, endpoint)) = text.split_once('=') else {
            return Err(Error::InvalidMirror {
                text: without_userinfo(text),
                problem: "expected REGISTRY=HOST[:PORT][/PREFIX]",
            });
        };
        Self::new(registry, endpoint)
    }
}

impl fmt::Display for Mirror {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.registry, self.host)?;
        if let Some(prefix) = &self.prefix {
            write!(f, "/{prefix}")?;
        }
        Ok(())
    }
}

/// `text` with whatever precedes its last `@` (after `=` and any `scheme://`) replaced by
/// `<redacted>`: a `user:password@` must not reach an error message.
fn without_userinfo(text: &str) -> String {
    let Some(at) = text.rfind('@') else {
        return text.to_owned();
    };
    let start = [
        text.find('=').map(|index| index + 1),
        text[..at].find("://").map(|index| index + 3),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(0);
    format!("{}<redacted>{}", &text[..start], &text[at..])
}

/// Checks `host[:port]`: a host name or IPv4 address (letters, digits, `.`, `-`, `_`) or a
/// bracketed IPv6 address, then an optional port from 0 to 65535.
fn check_host(authority: &str) -> Result<(), &'static str> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let Some((address, after)) = rest.split_once(']') else {
            return Err("an IPv6 address needs its closing `]`");
        };
        if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            return Err("the endpoint must be HOST[:PORT][/PREFIX]");
        }
        match after {
            "" => (address, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (address, Some(port)),
                None => return Err("the endpoint must be HOST[:PORT][/PREFIX]"),
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("the endpoint must be HOST[:PORT][/PREFIX]: the host is empty");
    }
    if !authority.starts_with('[')
        && !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err("the host may hold only letters, digits, `.`, `-` and `_`");
    }
    if port.is_some_and(|port| port.parse::<u16>().is_err()) {
        return Err("the port must be a number from 0 to 65535");
    }
    Ok(())
}

/// Folds Docker Hub's aliases into `docker.io`, the name references normalise to.
pub(crate) fn normalise_registry(registry: &str) -> String {
    let registry = registry.to_ascii_lowercase();
    match registry.as_str() {
        "index.docker.io" | "registry-1.docker.io" | "registry.hub.docker.com" => {
            "docker.io".to_owned()
        }
        _ => registry,
    }
}

#[cfg(test)]
mod tests {
    use super::Mirror;

    #[test]
    fn parses_flag_syntax() {
        let cases = [
            (
                "quay.io=127.0.0.1:5000/quay.io",
                "quay.io",
                "127.0.0.1:5000",
                Some("quay.io"),
            ),
            ("docker.io=mirror.local", "docker.io", "mirror.local", None),
            (
                "index.docker.io=mirror.local/",
                "docker.io",
                "mirror.local",
                None,
            ),
            (
                "ghcr.io=m.example:443/a/b/",
                "ghcr.io",
                "m.example:443",
                Some("a/b"),
            ),
            ("quay.io=[::1]:5000/q", "quay.io", "[::1]:5000", Some("q")),
            ("quay.io=127.0.0.1:5000", "quay.io", "127.0.0.1:5000", None),
        ];
        for (text, registry, host, prefix) in cases {
            let mirror: Mirror = text.parse().unwrap();
            assert_eq!(
                (mirror.registry(), mirror.host(), mirror.prefix()),
                (registry, host, prefix),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_malformed() {
        for text in [
            "quay.io",
            "=host",
            "quay.io=",
            "quay.io=http://host",
            "a/b=host",
            "quay.io=:5000",
            "quay.io=host:port",
            "quay.io=host:70000",
            "quay.io=ht tp",
            "quay.io=host/a//b",
            "quay.io=user@host",
            "quay.io=[::1",
        ] {
            let error = text.parse::<Mirror>().unwrap_err();
            assert!(
                error.to_string().contains("invalid mirror"),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn prefixes_repositories() {
        let mirror = Mirror::new("quay.io", "127.0.0.1:5000/quay.io").unwrap();
        assert_eq!(mirror.repository("org/img"), "quay.io/org/img");
        assert_eq!(mirror.to_string(), "quay.io=127.0.0.1:5000/quay.io");
    }

    #[test]
    fn errors_never_echo_userinfo() {
        for (text, shown) in [
            (
                "quay.io=bob:s3cret@mirror.example/q",
                "quay.io=<redacted>@mirror.example/q",
            ),
            (
                "quay.io=https://bob:s3cret@mirror.example",
                "quay.io=https://<redacted>@mirror.example",
            ),
            (
                "quay.io=s3cret@127.0.0.1:5000",
                "quay.io=<redacted>@127.0.0.1:5000",
            ),
            ("bob:s3cret@mirror.example", "<redacted>@mirror.example"),
        ] {
            let error = text.parse::<Mirror>().unwrap_err();
            let message = format!("{error} {error:?}");
            assert!(!message.contains("s3cret"), "{message}");
            assert!(message.contains(shown), "{message}");
        }
    }
}
