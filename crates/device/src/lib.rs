//! The device, its apps and the user (issue 4) — inputs first.
//!
//! This crate holds the validated input model of a simulated phone session: [`app`] profiles,
//! [`scenario`] scripts, and the [`input`] machinery that reports a bad file as
//! `FILE:LINE:COL: field: problem`. The session simulator (zygote, ActivityManager, launches,
//! frames) builds on these and on the runtime crate; it is not here yet.

pub mod app;
pub mod device;
pub mod input;
pub mod scenario;

pub use input::InputError;
