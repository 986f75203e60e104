//! The device, its apps and the user — inputs first.
//!
//! This crate holds the validated input model of a simulated phone session: [`device`] and
//! [`app`] profiles, [`scenario`] scripts, and the [`input`] machinery that reports a bad file as
//! `FILE:LINE:COL: field: problem`; and the [`activity_manager`] (process states → adj, the
//! cached-process limit); the [`calibration`] knobs of a device's stock baseline; and the [`session`] simulator that runs a scenario on a phone (zygote,
//! system processes, apps with cold/hot launches and their TTID breakdowns, frames, metrics).

pub mod activity_manager;
pub mod app;
pub mod calibration;
pub mod catalog;
pub mod device;
pub mod input;
pub mod low_mem_detector;
pub mod scenario;
pub mod session;
pub mod standalone;
pub mod systems;

pub use input::InputError;
