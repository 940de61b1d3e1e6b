//! End-to-end tests of the `tagpin` binary: one test binary, modules by subject, all built on
//! [`context::TestContext`].

mod action;
mod bad_input;
mod charts;
mod check;
mod config;
mod context;
mod corpus;
mod fixtures;
mod generate;
mod helm;
mod kinds;
mod kustomize_images;
mod pin;
mod platforms;
mod pr;
mod registry;
mod runner;
mod safety;
mod scan;
mod self_check;
