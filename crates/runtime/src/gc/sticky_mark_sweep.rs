//! StickyMarkSweep (ART `gc/collector/sticky_mark_sweep.*`): the sticky (young) collections of
//! the mark-sweep collectors — generational CMS. Used by [`super::mark_sweep`] (`ms`) and
//! [`super::mark_sweep_otf`] (`ms-otf`) for `GcType::Sticky`.
//!
//! - **Scope**: the objects allocated since the previous collection started, found through the
//!   allocation stack, which the collection's first pause (or root checkpoint) swaps into the
//!   *live stack* (`GcState::young_snapshot`, ART `Heap::SwapStacks`). Every other object is
//!   treated as marked (ART binds the live bitmap to the mark bitmap): it is neither traced nor
//!   swept.
//! - **Roots**: the roots, and every old object on a card at least aged — written since the
//!   previous collection's card processing (ART `RecursiveMarkDirtyObjects(false, kCardAged)`).
//!   All old objects sharing such a card are scanned, not only the one written: the work and the
//!   pages the GC thread touches depend on card granularity and object placement.
//! - **Remark**: roots, then marked or old objects on cards dirtied during marking.
//! - **Sweep**: only the live stack (ART `SweepArray(live_stack)`): unmarked objects on it are
//!   freed, survivors become old.
//! - **Escalation**: when a sticky collection does not make room, the allocating thread runs a
//!   full one (the runtime's sticky → full escalation, as for CC); GrowForUtilization keeps
//!   choosing sticky collections while they are productive.

use super::{trace, Cx};
use crate::card_table::CARD_AGED;
use mobmem_engine::Nanos;

/// ART's name in GC log lines.
pub const NAME: &str = "sticky concurrent mark sweep";

/// Mark from the old objects on cards at least aged (the remembered set). Resumable.
pub fn mark_from_old_cards(cx: &mut Cx, until: Nanos) -> bool {
    debug_assert!(cx.st.sticky);
    trace::scan_cards(cx, CARD_AGED, trace::CardScan::Old, until)
}
