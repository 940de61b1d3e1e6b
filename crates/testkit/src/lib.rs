//! Test support for tagpin: a real registry, image pushes and a fault-injecting proxy.
//!
//! [`TestRegistry`] runs Debian's `docker-registry` (distribution 2.8) on a free loopback port
//! with a temporary store and pushes images to it; [`FaultProxy`] sits in front of any HTTP
//! upstream and adds latency or answers chosen statuses. Helpers panic with a clear message
//! instead of returning errors: they are for tests.
//!
//! ```no_run
//! # async fn run() {
//! use std::time::Duration;
//! use tagpin_testkit::{FaultProxy, TestRegistry};
//!
//! let registry = TestRegistry::start().await;
//! let digest = registry.push_image("org/img", "1.0").await;
//! let proxy = FaultProxy::start(registry.host()).await;
//! proxy.set_latency(Duration::from_millis(20));
//! proxy.answer_not_found("/v2/org/missing/");
//! # let _ = digest;
//! # }
//! ```

mod images;
mod proxy;
mod registry;

pub use images::{CREATED, PlatformImage, media_types};
pub use proxy::{FaultProxy, RequestCount};
pub use registry::{REGISTRY_BIN_ENV, TestRegistry};
