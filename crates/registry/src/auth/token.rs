//! Fetching Bearer tokens from a token realm (the distribution token protocol).

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use reqwest::{Method, Url};
use serde_json::Value;

use crate::credentials::Credential;
use crate::endpoint::Endpoint;
use crate::error::redact;
use crate::http::{Http, Request};
use crate::stats::Recorder;
use crate::{ResolveError, Secret};

/// How long a token lives when the response does not say (the token spec's default).
const DEFAULT_EXPIRY: Duration = Duration::from_secs(60);

/// The `OAuth2` client id sent with an identity token.
const CLIENT_ID: &str = "tagpin";

pub(crate) struct TokenRequest<'a> {
    pub realm: &'a Url,
    pub service: Option<&'a str>,
    pub scope: &'a str,
}

pub(crate) struct Token {
    value: Secret,
    /// When to stop using it: a tenth of its life before it expires.
    refresh_at: Instant,
}

impl Token {
    pub fn header(&self) -> HeaderValue {
        let mut header = HeaderValue::from_str(&format!("Bearer {}", self.value.expose()))
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
        header.set_sensitive(true);
        header
    }

    pub fn is_fresh(&self) -> bool {
        Instant::now() < self.refresh_at
    }
}

pub(crate) fn basic_header(username: &str, password: &str) -> HeaderValue {
    let encoded = STANDARD.encode(format!("{username}:{password}"));
    let mut header =
        HeaderValue::from_str(&format!("Basic {encoded}")).expect("base64 is a valid header value");
    header.set_sensitive(true);
    header
}

/// Gets a token: `GET realm?service=…&scope=…` (with Basic credentials when there are any), or
/// for an identity token the `OAuth2` `POST realm` with `grant_type=refresh_token`.
pub(crate) async fn fetch(
    http: &Http,
    stats: &Recorder,
    endpoint: &Endpoint,
    request: &TokenRequest<'_>,
    login: Option<&Credential>,
) -> Result<Token, ResolveError> {
    let mut url = request.realm.clone();
    let mut headers = HeaderMap::new();
    let mut form = None;
    match login {
        Some(Credential::IdentityToken { token }) => {
            let mut body = url::form_urlencoded::Serializer::new(String::new());
            body.append_pair("grant_type", "refresh_token")
                .append_pair("client_id", CLIENT_ID)
                .append_pair("scope", request.scope)
                .append_pair("refresh_token", token.expose());
            if let Some(service) = request.service {
                body.append_pair("service", service);
            }
            form = Some(body.finish());
        }
        login => {
            {
                let mut query = url.query_pairs_mut();
                if let Some(service) = request.service {
                    query.append_pair("service", service);
                }
                query.append_pair("scope", request.scope);
            }
            if let Some(Credential::Basic { username, password }) = login {
                headers.insert(AUTHORIZATION, basic_header(username, password.expose()));
            }
        }
    }
    let method = if form.is_some() {
        Method::POST
    } else {
        Method::GET
    };
    let host = url.host_str().unwrap_or(&endpoint.host).to_owned();
    let reply = http
        .send(
            stats,
            &Request {
                method,
                url: &url,
                host: &host,
                headers,
                form,
            },
        )
        .await?;
    let url = redact(&url);
    match reply.status.as_u16() {
        200..=299 => {}
        401 | 403 => {
            return Err(ResolveError::Unauthorized {
                url,
                status: reply.status.as_u16(),
            });
        }
        429 => {
            return Err(ResolveError::RateLimited {
                url,
                attempts: reply.attempts,
                retry_after: crate::retry::retry_after(&reply.headers),
            });
        }
        other => {
            return Err(ResolveError::Status {
                url,
                status: other,
                attempts: reply.attempts,
            });
        }
    }
    if reply.too_large {
        return Err(ResolveError::BadToken { url, source: None });
    }
    let body: Value =
        serde_json::from_slice(&reply.body).map_err(|source| ResolveError::BadToken {
            url: url.clone(),
            source: Some(source),
        })?;
    let value = ["token", "access_token"]
        .iter()
        .find_map(|name| {
            body.get(name)
                .and_then(Value::as_str)
                .filter(|value| !value.is_empty())
        })
        .ok_or_else(|| ResolveError::BadToken {
            url: url.clone(),
            source: None,
        })?;
    let lifetime = body
        .get("expires_in")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_EXPIRY, Duration::from_secs);
    stats.token_fetched();
    tracing::debug!(%url, scope = request.scope, ?lifetime, "fetched token");
    Ok(Token {
        value: Secret::new(value),
        refresh_at: Instant::now() + lifetime.mul_f64(0.9),
    })
}
