use std::net::IpAddr;

use reqwest::Url;
use tagpin_reference::TagKey;

use crate::mirror::Mirror;

/// Docker Hub's registry API host; `docker.io` is only its name.
const DOCKER_HUB_API: &str = "registry-1.docker.io";

/// Where one lookup goes: the scheme and host the request is sent to, the repository path there
/// and the name credentials are looked up by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub scheme: &'static str,
    /// `host[:port]`, the unit of the per-registry limit, the token cache and challenges.
    pub host: String,
    pub repository: String,
    /// The registry name credentials are stored under (`docker.io`, or the mirror's host).
    pub credentials_key: String,
}

impl Endpoint {
    /// The endpoint for `key`, through a mirror when one stands in for its registry.
    pub fn for_key(key: &TagKey, mirrors: &[Mirror], insecure: &[String]) -> Self {
        let mirror = mirrors
            .iter()
            .find(|mirror| mirror.registry() == key.registry);
        let (host, repository, credentials_key) = if let Some(mirror) = mirror {
            (
                mirror.host().to_owned(),
                mirror.repository(&key.repository),
                mirror.host().to_owned(),
            )
        } else if key.registry == tagpin_reference::DOCKER_HUB {
            (
                DOCKER_HUB_API.to_owned(),
                key.repository.clone(),
                key.registry.clone(),
            )
        } else {
            (
                key.registry.clone(),
                key.repository.clone(),
                key.registry.clone(),
            )
        };
        let plain_http = is_loopback(&host)
            || insecure
                .iter()
                .any(|allowed| *allowed == host || allowed == host_name(&host));
        Self {
            scheme: if plain_http { "http" } else { "https" },
            host,
            repository,
            credentials_key,
        }
    }

    /// `<scheme>://<host>/v2/<repository>/manifests/<tag>`.
    pub fn manifest_url(&self, tag: &str) -> Url {
        let text = format!(
            "{}://{}/v2/{}/manifests/{tag}",
            self.scheme, self.host, self.repository
        );
        Url::parse(&text).expect("registry, repository and tag come from a parsed reference")
    }

    /// `<scheme>://<host>/v2/<repository>/blobs/<digest>`.
    pub fn blob_url(&self, digest: &str) -> Url {
        let text = format!(
            "{}://{}/v2/{}/blobs/{digest}",
            self.scheme, self.host, self.repository
        );
        Url::parse(&text).expect("registry, repository and digest come from parsed values")
    }

    /// The token scope for pulling this repository.
    pub fn pull_scope(&self) -> String {
        format!("repository:{}:pull", self.repository)
    }
}

/// Whether `host[:port]` names this machine: `localhost`, `127.0.0.0/8` or `::1`.
pub(crate) fn is_loopback(host: &str) -> bool {
    let name = host_name(host);
    let name = name
        .strip_prefix('[')
        .and_then(|name| name.strip_suffix(']'))
        .unwrap_or(name);
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `host[:port]` without the port (`[::1]` keeps its brackets).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.rsplit_once(':').map_or(host, |(name, _port)| name)
}

#[cfg(test)]
mod tests {
    use tagpin_reference::TagKey;

    use super::Endpoint;
    use crate::Mirror;

    #[test]
    fn maps_registries_to_endpoints() {
        let mirrors = vec![Mirror::new("quay.io", "127.0.0.1:5000/quay.io").unwrap()];
        let insecure = vec!["registry.lan:5000".to_owned(), "plain.lan".to_owned()];
        let cases = [
            (
                ("docker.io", "library/busybox", "1"),
                "https://registry-1.docker.io/v2/library/busybox/manifests/1",
                "docker.io",
            ),
            (
                ("quay.io", "org/img", "latest"),
                "http://127.0.0.1:5000/v2/quay.io/org/img/manifests/latest",
                "127.0.0.1:5000",
            ),
            (
                ("registry.lan:5000", "a/b", "v1"),
                "http://registry.lan:5000/v2/a/b/manifests/v1",
                "registry.lan:5000",
            ),
            (
                ("localhost:5000", "a", "v1"),
                "http://localhost:5000/v2/a/manifests/v1",
                "localhost:5000",
            ),
            (
                ("[::1]:5000", "a", "v1"),
                "http://[::1]:5000/v2/a/manifests/v1",
                "[::1]:5000",
            ),
            (
                ("registry.lan", "a", "v1"),
                "https://registry.lan/v2/a/manifests/v1",
                "registry.lan",
            ),
            (
                ("plain.lan:8080", "a", "v1"),
                "http://plain.lan:8080/v2/a/manifests/v1",
                "plain.lan:8080",
            ),
            (
                ("registry.lan:5001", "a", "v1"),
                "https://registry.lan:5001/v2/a/manifests/v1",
                "registry.lan:5001",
            ),
            (
                ("[::1]", "a", "v1"),
                "http://[::1]/v2/a/manifests/v1",
                "[::1]",
            ),
            (
                ("ghcr.io", "o/i", "v1"),
                "https://ghcr.io/v2/o/i/manifests/v1",
                "ghcr.io",
            ),
        ];
        for ((registry, repository, tag), url, credentials_key) in cases {
            let key = TagKey::new(registry, repository, tag);
            let endpoint = Endpoint::for_key(&key, &mirrors, &insecure);
            assert_eq!(endpoint.manifest_url(tag).as_str(), url);
            assert_eq!(endpoint.credentials_key, credentials_key);
        }
    }
}
