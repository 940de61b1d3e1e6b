//! Integration tests of the resolver: a real registry (`tagpin-testkit`) for the happy paths
//! and auth, fakes on loopback for faults the real registry cannot produce. Every test asserts
//! the requests made, not only the outcome.

mod canary;
mod faults;
mod limits;
mod manifests;
mod real_registry;
mod support;
mod token;
