//! Fleet's runtime-guided swap (RGS).
//!
//! `T_B` after the app goes to the background, one full copying collection traces breadth-first
//! from the roots (the tracer's FIFO order keeps each object's shortest depth) and evacuates
//! every region. Each survivor is classified, first match wins (as the released code's
//! `ConcurrentCopying::Copy` does): **WS** if a mutator copied it (its read barrier reached it
//! during this collection: the app is using it), **FYO** if it was allocated since the last
//! collection, **NRO** if it lies within `D` levels of the roots, otherwise **cold**. WS objects
//! go to working-set regions, FYO and NRO to launch regions, the rest to cold regions. When the
//! collection ends, cold regions are paged out at once (`pageout`: reclaimed ignoring
//! references) and launch regions marked hot (the kernel's `hot` hint: referenced, active list),
//! again every `hot_period` after the grouping GC started while the app stays in the background
//! (once with `hot_once`); an app back in the foreground by then gets neither.
//!
//! The grouping GC replaces ART's collector transition (the compacting GC 5 s after going to the
//! background), as the released code does. Background mode starts on going to the background and ends `T_F` after returning to the
//! foreground; going back to the background within `T_F` keeps the grouping (no second grouping
//! GC). Returning to the foreground before `T_B` cancels the grouping GC. Without the
//! background-object GC ([`super::bgc`]) other collections place survivors as stock ART does
//! (class 0), so a later full collection may copy grouped objects back into ordinary regions.
//! Large objects and the non-moving space are not grouped (they do not move).

use super::config::FleetConfig;
use super::state::{phase, Classes, Shared, RGS_CAUSE};
use crate::config::TraceOrder;
use crate::gc::{GcRecord, GcType};
use crate::heap::Heap;
use crate::hooks::{AfterGcAction, AfterGcPolicy, PlacementPolicy, PolicyAction, StateHook, SurvivorInfo};
use crate::object::{AppState, SpaceId};
use mobmem_engine::Nanos;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// Placement: the grouping GC's classification; with the background-object GC, background
/// objects in their own regions (new ones and survivors of background-object GCs).
pub struct Grouping {
    pub(crate) classes: Classes,
    pub(crate) max_depth: u16,
    pub(crate) shared: Arc<Shared>,
}

impl PlacementPolicy for Grouping {
    fn survivor_class(&mut self, _heap: &Heap, info: &SurvivorInfo) -> u8 {
        if info.cause == RGS_CAUSE {
            if info.by_mutator {
                self.classes.ws
            } else if info.young || info.depth <= self.max_depth {
                self.classes.launch
            } else {
                self.classes.cold
            }
        } else if self.shared.bgc_now() {
            self.classes.bgo
        } else {
            0
        }
    }
    fn mutator_class(&mut self, _heap: &Heap, _state: AppState) -> u8 {
        if self.shared.phase() == phase::GROUPED {
            self.classes.bgo
        } else {
            0
        }
    }
}

/// Madvise of every region of `class` with `advice`.
fn advise(heap: &Heap, class: u8, advice: &str, out: &mut Vec<AfterGcAction>) {
    for (first_page, count) in heap.regions.class_page_runs(class) {
        out.push(AfterGcAction::Madvise { space: SpaceId::Main, first_page, count, advice: advice.into() });
    }
}

/// The end of the grouping GC: the grouping is in place; in the background, cold regions are
/// paged out at once and launch regions marked hot (the released code does both right after the
/// grouping GC; an app back in the foreground by then keeps its pages).
pub struct Grouped {
    pub(crate) classes: Classes,
    pub(crate) shared: Arc<Shared>,
}

impl AfterGcPolicy for Grouped {
    fn after_gc(&mut self, heap: &Heap, rec: &GcRecord, state: AppState, out: &mut Vec<AfterGcAction>) {
        if rec.cause != RGS_CAUSE.name() || self.shared.phase() != phase::GROUPING {
            return;
        }
        self.shared.set_phase(phase::GROUPED);
        if state == AppState::Background {
            advise(heap, self.classes.cold, "pageout", out);
            advise(heap, self.classes.launch, "hot", out);
        }
    }
}

/// Background mode and its timers: the grouping GC, the periodic hot hint, the end of background
/// mode.
pub struct Mode {
    pub(crate) cfg: FleetConfig,
    pub(crate) classes: Classes,
    pub(crate) shared: Arc<Shared>,
    /// In background mode (from going to the background until `T_F` after returning).
    pub(crate) active: bool,
    pub(crate) rgs_at: Option<Nanos>,
    pub(crate) hot_at: Option<Nanos>,
    pub(crate) end_at: Option<Nanos>,
}

impl Mode {
    pub fn new(cfg: FleetConfig, classes: Classes, shared: Arc<Shared>) -> Self {
        Self { cfg, classes, shared, active: false, rgs_at: None, hot_at: None, end_at: None }
    }
    fn grouped(&self) -> bool {
        self.shared.phase() != phase::NONE
    }
}

impl StateHook for Mode {
    fn on_state(&mut self, _heap: &Heap, state: AppState, now: Nanos) {
        match state {
            AppState::Background => {
                self.end_at = None;
                if !self.active {
                    self.active = true;
                    self.shared.set_phase(phase::NONE);
                }
                if self.grouped() {
                    if !self.cfg.hot_once {
                        self.hot_at = Some(now + self.cfg.hot_period_ns);
                    }
                } else {
                    self.rgs_at = Some(now + self.cfg.t_b_ns);
                }
            }
            AppState::Foreground => {
                self.rgs_at = None;
                self.hot_at = None;
                if self.active {
                    self.end_at = Some(now + self.cfg.t_f_ns);
                }
            }
        }
    }

    /// The grouping GC is the background compaction: Fleet's code comments out ART's collector
    /// transition request (`Heap::UpdateProcessState`), so objects allocated since the last
    /// foreground collection are still young when it runs.
    fn replaces_transition(&self) -> bool {
        true
    }

    fn next_at(&self) -> Option<Nanos> {
        [self.rgs_at, self.hot_at, self.end_at].into_iter().flatten().min()
    }

    fn due(&mut self, heap: &Heap, now: Nanos, out: &mut Vec<PolicyAction>) {
        let due = |t: Option<Nanos>| t.is_some_and(|t| t <= now);
        if due(self.rgs_at) {
            self.rgs_at = None;
            self.shared.grouping_clock.store(heap.alloc_clock, Relaxed);
            self.shared.groupings.fetch_add(1, Relaxed);
            self.shared.set_phase(phase::GROUPING);
            out.push(PolicyAction::Collect { cause: RGS_CAUSE, gc_type: GcType::Full, order: TraceOrder::BreadthFirst, evacuate_all: true });
            if !self.cfg.hot_once {
                self.hot_at = Some(now + self.cfg.hot_period_ns);
            }
        }
        if due(self.hot_at) {
            // Only once the grouping is in place (the grouping GC may still run) and in the
            // background (returning clears this timer).
            if self.shared.phase() == phase::GROUPED {
                let mut a = Vec::new();
                advise(heap, self.classes.launch, "hot", &mut a);
                out.extend(a.into_iter().map(PolicyAction::Heap));
            }
            self.hot_at = Some(now + self.cfg.hot_period_ns);
        }
        if due(self.end_at) {
            self.end_at = None;
            self.rgs_at = None;
            self.hot_at = None;
            self.active = false;
            self.shared.set_phase(phase::NONE);
        }
    }
}
