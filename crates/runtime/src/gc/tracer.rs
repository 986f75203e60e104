//! The shared tracer's work state for one collection: the mark stack (a queue for breadth-first
//! tracing), the live-stack snapshot that bounds a sticky collection, the reclaim pass's lists and
//! the card scan's position. The tracing functions of [`super::trace`] work on it; collectors own
//! what only they need (e.g. mark-compact's compaction) and set the collection's scope in
//! [`super::GcState`].

use crate::config::TraceOrder;
use crate::object::ObjId;

pub struct Tracer {
    /// Mark stack of (object, depth). Breadth-first tracing reads it from `head` as a queue.
    pub(crate) stack: Vec<(ObjId, u16)>,
    pub(crate) head: usize,
    pub(crate) order: TraceOrder,
    /// Depth-first marking pops through ART MarkSweep's prefetch FIFO (see
    /// [`super::Collector::mark_stack_prefetch`]).
    pub(crate) prefetch_fifo: bool,
    /// Store each marked object's depth in `Info::depth` (placement policies, breadth-first
    /// tracing); the mark stack carries depths either way.
    pub(crate) record_depth: bool,
    /// The live stack: objects allocated since the previous collection started (the sticky
    /// scope; survivors become old).
    pub(crate) young_snapshot: Vec<ObjId>,
    /// Position in a resumable pass (reclaim's second pass, a concurrent sweep).
    pub(crate) cursor: usize,
    /// Reclaim: the first pass is done; the objects to rescue (out of the tracing scope, in the
    /// from-space) and to sweep (dead, in free-list spaces or the large-object space), each in
    /// ascending address order.
    pub(crate) sweep_started: bool,
    pub(crate) rescue: Vec<ObjId>,
    pub(crate) sweep: Vec<ObjId>,
    /// Sort keys (space, address and object): the reused buffer that sorts `rescue` and `sweep`.
    pub(crate) sort_buf: Vec<u64>,
    /// Card scanning in progress: the used card ranges, the range and card reached.
    pub(crate) cards_started: bool,
    pub(crate) card_ranges: [(usize, usize); 3],
    pub(crate) card_range_idx: usize,
    pub(crate) card_cursor: usize,
    /// Objects of the card being scanned (reused buffer).
    pub(crate) card_buf: Vec<ObjId>,
}

impl Tracer {
    pub fn new(order: TraceOrder) -> Self {
        Self {
            stack: Vec::new(),
            head: 0,
            order,
            prefetch_fifo: false,
            record_depth: order == TraceOrder::BreadthFirst,
            young_snapshot: Vec::new(),
            cursor: 0,
            sweep_started: false,
            rescue: Vec::new(),
            sweep: Vec::new(),
            sort_buf: Vec::new(),
            cards_started: false,
            card_ranges: [(0, 0); 3],
            card_range_idx: 0,
            card_cursor: 0,
            card_buf: Vec::new(),
        }
    }
}
