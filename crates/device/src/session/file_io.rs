//! Storage-throughput tests (`file_io` script steps, as in Acclaim's storage test): the
//! foreground app reads or writes a new file sequentially, one 4 KiB `read`/`write` call after
//! the other, on its main thread — its page faults, readahead and the reclaim its allocations
//! cause included — while the rest of the phone goes on. A write of a page not in the page cache
//! allocates it without reading it (a new file's pages are holes). Left out: the file system (its
//! metadata and journal), the block layer's merging of requests beyond readahead, dirty-page
//! throttling (`balance_dirty_pages`) and `fsync`: written pages are dirty page cache, written
//! back when reclaim reaches them, so a write's throughput is the page cache's (an upper bound).

use mobmem_engine::Nanos;
use serde::Serialize;

/// CPU time of one 4 KiB `read`/`write` system call besides its page access (entry, checks, the
/// copy to or from user memory). source: estimate (a few microseconds on a phone's big core).
pub const CALL_NS: Nanos = 2_000;

/// One storage-throughput test.
#[derive(Clone, Debug, Serialize)]
pub struct FileIoRecord {
    pub(crate) t_s: f64,
    pub(crate) app: String,
    pub(crate) mode: &'static str,
    pub(crate) mib: u32,
    pub(crate) seconds: f64,
    /// Decimal megabytes per second.
    pub(crate) mb_per_s: f64,
    pub(crate) major_faults: u64,
    pub(crate) file_read_wait_ms: f64,
    pub(crate) reclaim_stall_ms: f64,
    pub(crate) allocstalls: u64,
}
