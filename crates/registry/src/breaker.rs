//! The circuit breaker: a host that failed to connect or timed out several times in a row is
//! not asked again by this resolver. Its remaining lookups fail at once with the failure that
//! opened the breaker, instead of each waiting out its own connect attempts or timeout (200
//! tags on a host that never answers would otherwise take 200 ÷ 8 × 30 s).

use std::collections::HashMap;
use std::sync::Mutex;

/// Consecutive connect failures or timeouts on one host that open its breaker.
pub(crate) const THRESHOLD: u32 = 3;

#[derive(Default)]
pub(crate) struct Breaker {
    hosts: Mutex<HashMap<String, Host>>,
}

#[derive(Default)]
struct Host {
    /// Connect failures and timeouts since the last response from the host.
    failures: u32,
    /// Set once the breaker opened: the failure that opened it.
    open: Option<Open>,
}

/// Why a request was not sent: the host's breaker is open.
#[derive(Clone)]
pub(crate) struct Open {
    pub failures: u32,
    /// The [`crate::ResolveError::kind`] of the failure that opened it.
    pub kind: &'static str,
    /// That failure, with its causes.
    pub cause: String,
}

impl Breaker {
    /// `Some` when `host`'s breaker is open.
    pub fn check(&self, host: &str) -> Option<Open> {
        let hosts = self.hosts.lock().expect("breaker lock");
        hosts.get(host)?.open.clone()
    }

    /// The host answered (whatever the status): it is alive.
    pub fn answered(&self, host: &str) {
        let mut hosts = self.hosts.lock().expect("breaker lock");
        if let Some(state) = hosts.get_mut(host)
            && state.open.is_none()
        {
            state.failures = 0;
        }
    }

    /// A connect failure or a timeout on `host`: `kind` and `cause` say what it was. Returns
    /// whether the breaker is open now.
    pub fn failed(&self, host: &str, kind: &'static str, cause: impl FnOnce() -> String) -> bool {
        let mut hosts = self.hosts.lock().expect("breaker lock");
        let state = hosts.entry(host.to_owned()).or_default();
        if state.open.is_some() {
            return true;
        }
        state.failures += 1;
        if state.failures >= THRESHOLD {
            let cause = cause();
            tracing::warn!(
                host,
                failures = state.failures,
                cause,
                "not asking this host again"
            );
            state.open = Some(Open {
                failures: state.failures,
                kind,
                cause,
            });
            return true;
        }
        false
    }
}
