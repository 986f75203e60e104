//! Test policy proving the placement hook: objects are segregated by the app state at their
//! allocation. New objects go to regions of class "fg-alloc" or "bg-alloc" (tagged "fg" / "bg")
//! according to the current state; survivors are copied into regions of the class of the state
//! they were allocated in. After any copying collection, every survivor allocated in background
//! lives in a region tagged "bg" and vice versa.

use crate::heap::Heap;
use crate::hooks::{Hooks, PlacementPolicy, SurvivorInfo};
use crate::object::AppState;

pub struct SegregateByState {
    fg: u8,
    bg: u8,
}

impl PlacementPolicy for SegregateByState {
    fn survivor_class(&mut self, _heap: &Heap, info: &SurvivorInfo) -> u8 {
        match info.alloc_state {
            AppState::Foreground => self.fg,
            AppState::Background => self.bg,
        }
    }
    fn mutator_class(&mut self, _heap: &Heap, state: AppState) -> u8 {
        match state {
            AppState::Foreground => self.fg,
            AppState::Background => self.bg,
        }
    }
}

pub fn install(hooks: &mut Hooks, heap: &mut Heap) {
    let fg = heap.register_class("fg-alloc", &["fg"]);
    let bg = heap.register_class("bg-alloc", &["bg"]);
    hooks.placement = Some(Box::new(SegregateByState { fg, bg }));
}
