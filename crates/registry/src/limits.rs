use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests in flight: at most `global` in all and `per_host` to any one host.
pub(crate) struct Limits {
    global: Arc<Semaphore>,
    per_host: usize,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// Held while a request is in flight.
pub(crate) struct Permit {
    _host: Option<OwnedSemaphorePermit>,
    _global: OwnedSemaphorePermit,
}

impl Limits {
    pub fn new(global: usize, per_host: usize) -> Self {
        Self {
            global: Arc::new(Semaphore::new(global.max(1))),
            per_host: per_host.max(1),
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for a slot at `host` (when given) and then a global one, so a busy host does not
    /// hold global slots while it queues.
    pub async fn acquire(&self, host: Option<&str>) -> Permit {
        let host = match host {
            Some(host) => {
                let semaphore = Arc::clone(
                    self.hosts
                        .lock()
                        .expect("limits lock")
                        .entry(host.to_owned())
                        .or_insert_with(|| Arc::new(Semaphore::new(self.per_host))),
                );
                Some(semaphore.acquire_owned().await.expect("never closed"))
            }
            None => None,
        };
        let global = Arc::clone(&self.global)
            .acquire_owned()
            .await
            .expect("never closed");
        Permit {
            _host: host,
            _global: global,
        }
    }
}
