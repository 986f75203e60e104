//! An app's workload profile ([`AppProfile`]): its heap, allocation, lifetimes, accesses, native
//! and file memory and launch; the generic app's defaults; the runtime configuration the app's
//! manifest asks for; the size distributions its objects are drawn from. The display's refresh rate and vsync period.

use super::size_mix::{android_size_mix, cdf_of, count_probs, survivor_count_probs, SizeClass, SURVIVOR_OBJECT_BYTES};
use crate::config::RuntimeConfig;
use mobmem_engine::Nanos;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct AppProfile {
    pub name: String,
    /// Long-lived structure built at start (the live heap in the foreground).
    pub live_heap: u64,
    pub near_root_share: f64,
    pub roots: u32,
    pub fanout: f64,
    pub size_mix: Vec<SizeClass>,
    /// Mean size of the objects that outlive their first collection (the long-lived structure,
    /// medium- and long-lived units): `size_mix` tilted to this mean ([`survivor_count_probs`](super::size_mix::survivor_count_probs));
    /// temporaries keep `size_mix`. 0 = survivors drawn from `size_mix` as well.
    pub survivor_object_bytes: f64,
    /// Objects per unit (mean; a unit is a small tree).
    pub unit_objects: f64,
    /// Lifetime mix of allocated units (temporary, medium; long = the rest).
    pub temp_share: f64,
    pub medium_share: f64,
    pub temp_life: u64,
    pub medium_life: u64,
    pub bg_temp_share: f64,
    pub alloc_rate_fg: u64,
    pub alloc_rate_bg: u64,
    pub frame_ns: Nanos,
    pub bg_period_ns: Nanos,
    pub cpu_fg: f64,
    pub cpu_bg: f64,
    pub reads_fg: u32,
    pub reads_bg: u32,
    pub recent_share: f64,
    pub hot_share: f64,
    pub hot_fraction: f64,
    pub pinned_share: f64,
    pub native_anon: u64,
    pub native_touch_fg: u32,
    /// Share of the native heap (its leading pages) that units of work touch; the rest is
    /// written once at start-up and never again.
    pub native_hot_share: f64,
    /// Share of the native heap's used part that the app frees when its UI is hidden
    /// (`onTrimMemory(TRIM_MEMORY_UI_HIDDEN)`: image and content caches trimmed); use refills it.
    pub ui_hidden_release_share: f64,
    pub file_bytes: u64,
    pub file_touch_fg: u32,
    /// Share of the file pages the app keeps re-reading while in use (its file-backed working
    /// set): touches in units of work fall on it, the most used part (what a launch reads
    /// first) most often.
    pub file_ws_share: f64,
    /// Share of the file pages read at start-up (a cold launch).
    pub launch_file_share: f64,
    /// Share of the file pages a hot launch touches.
    pub hot_launch_file_share: f64,
    /// Mean length in pages of a contiguous run of the file pages read at start-up: the launch
    /// reads its pages as runs scattered over the file, in no file order.
    pub launch_read_run_pages: f64,
    pub launch_near_share: f64,
    pub launch_fyo_window: u64,
    pub launch_other_share: f64,
    /// The app sizes caches from the reported maximum heap (heap-size feedback): no by default.
    /// Recorded only: the mutator model does not act on it yet.
    pub introspects_heap: bool,
    /// The app's manifest declares `android:largeHeap`: its heap limit is `dalvik.vm.heapsize`
    /// instead of the growth limit.
    pub large_heap: bool,
    pub seed: u64,
}

impl Default for AppProfile {
    /// A generic mid-sized app (estimates: 48 MiB live Java heap, 8 MiB/s foreground allocation).
    fn default() -> Self {
        Self {
            name: "generic".into(),
            live_heap: 48 << 20,
            near_root_share: 0.10,
            roots: 64,
            fanout: 3.0,
            size_mix: android_size_mix(),
            survivor_object_bytes: SURVIVOR_OBJECT_BYTES,
            unit_objects: 4.0,
            temp_share: 0.75,
            medium_share: 0.15,
            temp_life: 1 << 20,
            medium_life: 32 << 20,
            bg_temp_share: 0.95,
            alloc_rate_fg: 8 << 20,
            alloc_rate_bg: 128 << 10,
            frame_ns: VSYNC_NS,
            bg_period_ns: 100_000_000,
            cpu_fg: 0.30,
            cpu_bg: 0.01,
            reads_fg: 2000,
            reads_bg: 40,
            recent_share: 0.5,
            hot_share: 0.3,
            hot_fraction: 0.05,
            pinned_share: 0.02,
            native_anon: 32 << 20,
            native_touch_fg: 64,
            native_hot_share: 1.0 / 3.0,
            ui_hidden_release_share: 0.0,
            file_bytes: 48 << 20,
            file_touch_fg: 16,
            file_ws_share: 0.35,
            launch_file_share: 0.3,
            hot_launch_file_share: 0.3,
            launch_read_run_pages: 3.0,
            launch_near_share: 1.0,
            launch_fyo_window: 4 << 20,
            launch_other_share: 0.05,
            introspects_heap: false,
            large_heap: false,
            seed: 1,
        }
    }
}

/// The display's refresh rate: 60 Hz, the Pixel 3's (a 16.7 ms frame budget). One constant for
/// every model; a per-device refresh rate would go in the device profile.
/// A frame is due every vsync; a frame that takes longer than the period is janky.
pub const DISPLAY_HZ: u64 = 60;
/// The vsync period (the frame budget), rounded to the nearest nanosecond.
pub const VSYNC_NS: Nanos = (1_000_000_000 + DISPLAY_HZ / 2) / DISPLAY_HZ;

impl AppProfile {
    /// The runtime configuration of this app's process: the device's and the user's `cfg` with
    /// what the app's manifest asks for (`android:largeHeap`).
    pub fn runtime_config(&self, cfg: &RuntimeConfig) -> RuntimeConfig {
        let mut c = cfg.clone();
        c.heap.large_heap |= self.large_heap;
        c
    }
}

impl AppProfile {
    /// Cumulative object-count probabilities of the size classes (byte shares / mean sizes).
    pub(super) fn count_cdf(&self) -> Vec<f64> {
        cdf_of(&count_probs(&self.size_mix))
    }

    /// The same for objects that outlive their first collection ([`survivor_count_probs`]).
    pub(super) fn survivor_cdf(&self) -> Vec<f64> {
        cdf_of(&survivor_count_probs(&self.size_mix, self.survivor_object_bytes))
    }
}
