//! Registry mirrors: `REGISTRY=HOST[:PORT][/PREFIX]` on the command line, `REGISTRY: HOST[:PORT][/PREFIX]`
//! in the config file. Only parsed and validated here; the resolver that uses them comes with `pin`.

use std::fmt;
use std::str::FromStr;

/// Where a registry's images are fetched instead: `127.0.0.1:5000/quay.io`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorEndpoint {
    pub host: String,
    pub port: Option<u16>,
    /// Path prepended to the repository, without leading or trailing `/`.
    pub prefix: Option<String>,
}

impl FromStr for MirrorEndpoint {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (authority, prefix) = match text.split_once('/') {
            Some((authority, prefix)) => (authority, Some(prefix.trim_end_matches('/'))),
            None => (text, None),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => {
                let port = port.parse::<u16>().map_err(|_| {
                    format!("`{text}`: port `{port}` is not a number from 0 to 65535")
                })?;
                (host, Some(port))
            }
            None => (authority, None),
        };
        if host.is_empty() {
            return Err(format!(
                "`{text}`: expected HOST[:PORT][/PREFIX], the host is empty"
            ));
        }
        if let Some(bad) = host
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        {
            return Err(format!("`{text}`: `{bad}` is not allowed in a host name"));
        }
        let prefix = match prefix {
            Some("") | None => None,
            Some(prefix) if prefix.split('/').any(str::is_empty) => {
                return Err(format!("`{text}`: the path prefix has an empty component"));
            }
            Some(prefix) => Some(prefix.to_owned()),
        };
        Ok(Self {
            host: host.to_owned(),
            port,
            prefix,
        })
    }
}

impl fmt::Display for MirrorEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        if let Some(prefix) = &self.prefix {
            write!(f, "/{prefix}")?;
        }
        Ok(())
    }
}

/// One `--mirror REGISTRY=HOST[:PORT][/PREFIX]` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorFlag {
    pub registry: String,
    pub endpoint: MirrorEndpoint,
}

impl FromStr for MirrorFlag {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some((registry, endpoint)) = text.split_once('=') else {
            return Err(format!("`{text}`: expected REGISTRY=HOST[:PORT][/PREFIX]"));
        };
        let registry = registry.trim();
        if registry.is_empty() {
            return Err(format!("`{text}`: the registry before `=` is empty"));
        }
        Ok(Self {
            registry: registry.to_owned(),
            endpoint: endpoint.trim().parse()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays_endpoints() {
        for (text, host, port, prefix) in [
            ("mirror.local", "mirror.local", None, None),
            ("127.0.0.1:5000", "127.0.0.1", Some(5000), None),
            (
                "127.0.0.1:5000/quay.io",
                "127.0.0.1",
                Some(5000),
                Some("quay.io"),
            ),
            ("localhost/a/b", "localhost", None, Some("a/b")),
        ] {
            let endpoint: MirrorEndpoint = text.parse().unwrap();
            assert_eq!(endpoint.host, host, "{text}");
            assert_eq!(endpoint.port, port, "{text}");
            assert_eq!(endpoint.prefix.as_deref(), prefix, "{text}");
            assert_eq!(endpoint.to_string(), text);
        }
    }

    #[test]
    fn rejects_bad_endpoints() {
        for text in [
            "",
            ":5000",
            "host:port",
            "host:70000",
            "ht tp",
            "host//x",
            "https://x",
        ] {
            assert!(text.parse::<MirrorEndpoint>().is_err(), "{text}");
        }
    }

    #[test]
    fn parses_flags() {
        let flag: MirrorFlag = "quay.io=127.0.0.1:5000/quay.io".parse().unwrap();
        assert_eq!(flag.registry, "quay.io");
        assert_eq!(flag.endpoint.to_string(), "127.0.0.1:5000/quay.io");
        for text in ["quay.io", "=127.0.0.1", "quay.io="] {
            assert!(text.parse::<MirrorFlag>().is_err(), "{text}");
        }
    }
}
