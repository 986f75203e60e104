//! A global GC service (the session service `gc_service`; the design of Hussein's thesis, "GC as a service"):
//! one system service that sees every app's heap and decides collections for all of them,
//! instead of each runtime deciding alone.
//!
//! Every `system.gc_service_period_ms` the service reads each live app's heap statistics —
//! bytes allocated, live bytes after its last collection, allocation rate, footprint and
//! fragmentation, process state, age — and the phone's available memory, then:
//! - **heap growth**: sets each app's target footprint to `live + growth`, where growth is the
//!   allocation expected over a collection interval (`rate × interval`; the foreground's interval
//!   is shorter than the background's), doubled for an app in its first seconds (start-up),
//!   doubled when memory is plentiful and halved when it is scarce, within the heap's
//!   min/max free bounds; the growth follows that value through a first-order filter (a quarter of
//!   the difference per period), so it settles without oscillating;
//! - **which app to collect**: of the apps that will reach their target before the next period,
//!   the one with the most bytes allocated since its last collection (garbage it can recover at
//!   most) is collected; one new collection per period;
//! - **compaction and trimming**: when memory is scarce, the background app whose heap is most
//!   fragmented (free space inside its footprint) gets a full collection followed by a trim; the
//!   runtimes no longer trim after every collection: the service is their triggers' delegate
//!   (`mobmem_runtime::trigger`), and it acts on a runtime only through that delegation.
//!
//! Its CPU (a fixed cost per period and per app, an estimate) is charged to system_server.
//!
//! Left out: binder/IPC latency between the apps and the service (decisions apply at once),
//! several collections started per period, per-app priorities other than the process state.

use super::app::Live;
use super::service::SessionService;
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use mobmem_runtime::object::AppState;
use serde::Serialize;

/// CPU cost of one period: a fixed part and a part per app examined (estimates).
const TICK_NS: Nanos = 20_000;
const PER_APP_NS: Nanos = 5_000;
/// Collection interval the growth aims at, foreground and background (estimates).
const FG_INTERVAL_S: f64 = 2.0;
const BG_INTERVAL_S: f64 = 30.0;
/// An app this young (since its process started) grows twice as fast.
const STARTUP_NS: Nanos = 10_000_000_000;
/// Share of the difference the growth moves per period.
const FILTER: f64 = 0.25;
/// A background heap with at least this much free space inside its footprint may be compacted.
const SPARSE: f64 = 0.25;
/// A heap is compacted at most this often.
const COMPACT_EVERY_NS: Nanos = 10_000_000_000;

/// The service's settings (from `system.gc_service*`).
#[derive(Clone, Debug, Serialize)]
pub struct ServiceConfig {
    pub(crate) period_ns: Nanos,
    pub(crate) plenty_mib: u64,
    pub(crate) scarce_mib: u64,
}

/// What the service did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ServiceStats {
    pub(crate) periods: u64,
    pub(crate) collections: u64,
    pub(crate) compactions: u64,
    pub(crate) cpu_ms: f64,
    /// Periods in which memory was plentiful / scarce.
    pub(crate) plentiful_periods: u64,
    pub(crate) scarce_periods: u64,
}

/// What the service remembers of one app incarnation (by pid).
#[derive(Clone, Debug)]
struct AppTrack {
    pid: u32,
    born: Nanos,
    /// Bytes allocated when the service first saw the app: its live size until its first
    /// collection measures one.
    base: u64,
    allocated: u64,
    gcs: usize,
    rate: f64,
    growth: f64,
    last_compact: Nanos,
}

pub struct GcService {
    pub(crate) cfg: ServiceConfig,
    pub(crate) stats: ServiceStats,
    next: Nanos,
    last: Nanos,
    tracks: Vec<AppTrack>,
}

impl GcService {
    pub fn new(cfg: ServiceConfig, now: Nanos) -> Self {
        Self { next: now + cfg.period_ns, last: now, cfg, stats: ServiceStats::default(), tracks: Vec::new() }
    }

    /// One period: returns the CPU time the service used (to be charged to its process).
    pub fn tick(&mut self, k: &mut Kernel, apps: &mut [&mut Live], now: Nanos) -> Nanos {
        let dt = (now - self.last).max(1) as f64 / 1e9;
        self.last = now;
        self.next = now + self.cfg.period_ns;
        self.stats.periods += 1;
        // si_mem_available, cheaply: free pages plus half the page cache.
        let avail_mib = (k.nr_free() + k.lru.file() / 2) * 4 / 1024;
        let (plenty, scarce) = (avail_mib >= self.cfg.plenty_mib, avail_mib < self.cfg.scarce_mib);
        self.stats.plentiful_periods += plenty as u64;
        self.stats.scarce_periods += scarce as u64;
        self.tracks.retain(|t| apps.iter().any(|l| l.pid == t.pid));
        let mut due: Option<(u64, usize)> = None;
        let mut sparse: Option<(f64, usize)> = None;
        for (i, l) in apps.iter_mut().enumerate() {
            let rt = &mut l.rt;
            let allocated = rt.heap.bytes_allocated();
            let gcs = rt.records.len();
            let pid = l.pid;
            let idx = match self.tracks.iter().position(|t| t.pid == pid) {
                Some(x) => x,
                None => {
                    let min = rt.cfg.heap.min_free as f64;
                    self.tracks.push(AppTrack { pid, born: now, base: allocated, allocated, gcs, rate: 0.0, growth: min, last_compact: 0 });
                    self.tracks.len() - 1
                }
            };
            let t = &mut self.tracks[idx];
            let live = rt.records.last().map(|r| r.bytes_allocated_after).unwrap_or(t.base);
            // The allocation rate from periods without a collection in between.
            if gcs == t.gcs && allocated >= t.allocated {
                let r = (allocated - t.allocated) as f64 / dt;
                t.rate = if t.rate == 0.0 { r } else { t.rate + FILTER * (r - t.rate) };
            }
            t.allocated = allocated;
            t.gcs = gcs;
            let fg = rt.state == AppState::Foreground;
            let mut want = t.rate * if fg { FG_INTERVAL_S } else { BG_INTERVAL_S };
            if now.saturating_sub(t.born) < STARTUP_NS {
                want *= 2.0;
            }
            if plenty {
                want *= 2.0;
            } else if scarce {
                want *= 0.5;
            }
            let h = &rt.cfg.heap;
            let mult = if fg { h.foreground_multiplier } else { 1.0 };
            let want = want.clamp(h.min_free as f64, h.max_free as f64 * mult);
            t.growth += FILTER * (want - t.growth);
            rt.set_target_footprint(live + t.growth as u64);
            let target = rt.target_footprint;
            if rt.gc_running() {
                continue;
            }
            // Will it reach its target before the next period?
            let soon = allocated + (t.rate * self.cfg.period_ns as f64 / 1e9) as u64;
            if soon >= target {
                let garbage = allocated.saturating_sub(live);
                if due.is_none_or(|(g, _)| garbage > g) {
                    due = Some((garbage, i));
                }
            }
            let footprint = rt.heap.footprint_bytes();
            if scarce && !fg && footprint > 0 && now.saturating_sub(t.last_compact) >= COMPACT_EVERY_NS {
                let frag = 1.0 - allocated.min(footprint) as f64 / footprint as f64;
                if frag >= SPARSE && sparse.is_none_or(|(f, _)| frag > f) {
                    sparse = Some((frag, i));
                }
            }
        }
        if let Some((_, i)) = due {
            apps[i].rt.delegated_collection(k, "GcService");
            self.stats.collections += 1;
        }
        if let Some((_, i)) = sparse {
            if due.is_none_or(|(_, d)| d != i) {
                let pid = apps[i].pid;
                // A full collection, and a trim when it has ended.
                apps[i].rt.delegated_compaction(k, "GcServiceCompact");
                self.stats.compactions += 1;
                if let Some(t) = self.tracks.iter_mut().find(|t| t.pid == pid) {
                    t.last_compact = now;
                }
            }
        }
        let cpu = TICK_NS + PER_APP_NS * apps.len() as Nanos;
        self.stats.cpu_ms += cpu as f64 / 1e6;
        cpu
    }
}

impl SessionService for GcService {
    fn takes_gc_triggers(&self) -> bool {
        true
    }

    /// A period is due.
    fn due(&self, now: Nanos) -> bool {
        now >= self.next
    }

    fn run(&mut self, k: &mut Kernel, apps: &mut [&mut Live], now: Nanos) -> Nanos {
        self.tick(k, apps, now)
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!(self.stats)
    }
}
