//! The spaces of the heap (`gc/space/`): the region space, free-list spaces (non-moving space,
//! mark-sweep main space), the large object space and the immune (zygote, boot image) spaces.
//! Spaces manage addresses only; objects live in [`crate::object::Objects`] and every access to
//! their pages goes through the kernel model (see [`crate::heap::Heap`]).

pub mod extents;
pub mod freelist;
pub mod large_object;
pub mod region;

pub use extents::{PageExtents, PAGE};
pub use freelist::FreeListSpace;
pub use large_object::LargeObjectSpace;
pub use region::{RegionSpace, RegionState, REGION_SIZE};
