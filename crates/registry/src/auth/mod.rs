//! Authorization for registry requests: challenges, Basic, and Bearer tokens cached per host and
//! scope until they expire.
//!
//! A host's challenge is remembered after its first 401, so later lookups there authenticate up
//! front (a token per repository, fetched once however many tags it has) instead of paying a
//! 401 round trip each.

mod challenge;
mod token;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use reqwest::Url;
use reqwest::header::HeaderValue;

use crate::credentials::Credential;
use crate::endpoint::Endpoint;
use crate::error::redact;
use crate::http::Http;
use crate::stats::Recorder;
use crate::{Credentials, ResolveError};

pub(crate) use challenge::{Challenge, from_headers as challenges};
use token::{Token, TokenRequest};

type TokenSlot = Arc<tokio::sync::Mutex<Option<Token>>>;

pub(crate) struct Auth {
    credentials: Credentials,
    /// The last challenge seen per endpoint host.
    challenges: Mutex<HashMap<String, Challenge>>,
    /// Tokens per (endpoint host, scope); the slot's lock makes concurrent lookups share a fetch.
    tokens: Mutex<HashMap<(String, String), TokenSlot>>,
    /// Credentials looked up per registry name, so a credential helper runs once per run.
    logins: tokio::sync::Mutex<HashMap<String, Option<Credential>>>,
}

impl Auth {
    pub fn new(credentials: Credentials) -> Self {
        Self {
            credentials,
            challenges: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            logins: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The `Authorization` for a request to `endpoint` from what is already known about its
    /// host; `None` before the host has challenged us.
    pub async fn authorization(
        &self,
        http: &Http,
        stats: &Recorder,
        endpoint: &Endpoint,
        url: &Url,
    ) -> Result<Option<HeaderValue>, ResolveError> {
        let challenge = self
            .challenges
            .lock()
            .expect("challenges lock")
            .get(&endpoint.host)
            .cloned();
        match challenge {
            None => Ok(None),
            Some(Challenge::Basic) => self.basic(endpoint, url).await,
            Some(Challenge::Bearer { realm, service }) => {
                let request = TokenRequest {
                    realm: &realm,
                    service: service.as_deref(),
                    scope: &endpoint.pull_scope(),
                };
                self.bearer(http, stats, endpoint, url, &request, None)
                    .await
            }
        }
    }

    /// After a 401 offering `challenge` (one of those it offered): remembers it for the host
    /// and returns what to send next time, or `None` when it has nothing better to try than
    /// what was `sent` (by a request that began at the given instant).
    pub async fn after_challenge(
        &self,
        http: &Http,
        stats: &Recorder,
        endpoint: &Endpoint,
        url: &Url,
        challenge: &Challenge,
        sent: Option<(&HeaderValue, Instant)>,
    ) -> Result<Option<HeaderValue>, ResolveError> {
        self.challenges
            .lock()
            .expect("challenges lock")
            .insert(endpoint.host.clone(), challenge.clone());
        let sent_basic = sent.is_some_and(|(header, _)| header.as_bytes().starts_with(b"Basic "));
        match challenge {
            Challenge::Basic if sent_basic => Ok(None),
            Challenge::Basic => self.basic(endpoint, url).await,
            Challenge::Bearer { realm, service } => {
                let request = TokenRequest {
                    realm,
                    service: service.as_deref(),
                    scope: &endpoint.pull_scope(),
                };
                self.bearer(http, stats, endpoint, url, &request, sent)
                    .await
            }
        }
    }

    async fn basic(
        &self,
        endpoint: &Endpoint,
        url: &Url,
    ) -> Result<Option<HeaderValue>, ResolveError> {
        Ok(match self.login(endpoint, url).await? {
            Some(Credential::Basic { username, password }) => {
                Some(token::basic_header(&username, password.expose()))
            }
            Some(Credential::IdentityToken { .. }) | None => None,
        })
    }

    /// A valid token for the request's scope: the cached one unless it is the `stale` one that
    /// was just refused, else a fresh one (fetched by one caller while the others wait). `None`
    /// when the refused token was itself fetched since the refused request began: a new one
    /// would be refused too (no access, not an expired token).
    async fn bearer(
        &self,
        http: &Http,
        stats: &Recorder,
        endpoint: &Endpoint,
        url: &Url,
        request: &TokenRequest<'_>,
        stale: Option<(&HeaderValue, Instant)>,
    ) -> Result<Option<HeaderValue>, ResolveError> {
        let slot = Arc::clone(
            self.tokens
                .lock()
                .expect("tokens lock")
                .entry((endpoint.host.clone(), request.scope.to_owned()))
                .or_default(),
        );
        let mut cached = slot.lock().await;
        if let Some(token) = cached.as_ref() {
            let header = token.header();
            let refused_since = stale
                .filter(|(refused, _)| **refused == header)
                .map(|(_, since)| since);
            match refused_since {
                Some(since) if token.fetched_at() >= since => return Ok(None),
                None if token.is_fresh() => return Ok(Some(header)),
                _ => {}
            }
        }
        let login = self.login(endpoint, url).await?;
        let token = token::fetch(http, stats, endpoint, request, login.as_ref()).await?;
        let header = token.header();
        *cached = Some(token);
        Ok(Some(header))
    }

    async fn login(
        &self,
        endpoint: &Endpoint,
        url: &Url,
    ) -> Result<Option<Credential>, ResolveError> {
        let mut logins = self.logins.lock().await;
        if let Some(login) = logins.get(&endpoint.credentials_key) {
            return Ok(login.clone());
        }
        let login = self
            .credentials
            .lookup(&endpoint.credentials_key)
            .await
            .map_err(|source| ResolveError::Credentials {
                url: redact(url),
                source,
            })?;
        tracing::debug!(
            registry = endpoint.credentials_key,
            found = login.is_some(),
            "looked up credentials"
        );
        logins.insert(endpoint.credentials_key.clone(), login.clone());
        Ok(login)
    }
}
