"""Replay a page trace on the real Linux kernel of this machine and read its counters.

``mobmem kernel replay --real TRACE`` ends here (:func:`replay_real`). The trace is executed
by real processes under a memory cgroup whose limit is the trace's ``ram``, with real swap of
the trace's kind, and the kernel's own counter deltas are printed beside the model's.

How a trace becomes real work
-----------------------------
* One real child process per trace ``proc``. The children are small stdlib-only Python
  programs (``python3 -I -S``, see ``_CHILD_SRC``) started a few ahead of their ``proc`` event
  (``SPAWN_AHEAD``); each builds its page-content bank and its receive buffer, says it is
  ready, and only at its ``proc`` event is it moved into the cgroup, so interpreter memory
  stays charged outside. A coordinator (this process) feeds each child its ops over a pipe in
  trace order (runs of one process's consecutive ops, ≤ ``MAX_BATCH`` per message) and waits
  for the child's acknowledgement before going on, so the global order of the trace is kept.
  A child that dies (the memcg OOM killer) is recorded in ``kills`` with the lines being
  executed when it was noticed; its later events are skipped.
* ``map … anon N`` → ``mmap(MAP_PRIVATE|MAP_ANONYMOUS)`` of N pages; ``map … file F N [exec]``
  → ``mmap(MAP_SHARED)`` of a real file F (PROT_EXEC added for ``exec``) created beforehand
  in a directory on the root file system, filled with content, fsync'd and evicted from the
  page cache with ``POSIX_FADV_DONTNEED`` (checked with mincore) before the replay.
* ``touch … r`` reads one 8-byte word of each page, in page order; ``touch … w`` writes the
  whole page (4096 bytes) with content of the trace's compressibility (below).
* ``madvise`` → the real ``madvise(2)`` (DONTNEED=4, COLD=20, PAGEOUT=21, WILLNEED=3).
* ``adj`` / ``proc adj=`` → ``/proc/<pid>/oom_score_adj`` (a negative value needs
  CAP_SYS_RESOURCE; without it 0 is written and a note says so); ``tick`` → sleep (scaled by
  ``time_scale``); ``exit`` → the child exits and is waited for (its memory is freed).
* Before the replay: ``page-cluster`` is set to 0 (Android's and the model's default; restored
  afterwards); on cgroup v1 the cgroup's ``memory.swappiness`` is left at its inherited value
  unless ``RealOptions.swappiness`` is given. ``swap none`` also caps the cgroup's swap at 0.

Page content (what the lead's model needs as its compressed-size input)
-----------------------------------------------------------------------
Every written page is a copy of one of ``BANK_PAGES`` = 256 template pages (page ``p`` of
mapping ``v`` uses template ``(p + 37·v) mod 256``). Template ``i`` is ``k_i`` bytes from a
seeded PRNG (``random.Random(seed).randbytes``) followed by zeros, with
``k_i = round(U(0.8, 1.2) · max(1, 4096/ratio − 32))`` clamped to [1, 4096]. LZ4 (and lzo)
store the random prefix verbatim and the zero run in a few bytes, so a page compresses to
≈ ``k_i + 32`` bytes: the compressed sizes are uniform on ±20 % around ``4096/ratio``. No
template is a same-filled page. The default ratio (no ``ratio=`` in the trace) is
:data:`DEFAULT_RATIO`. Files are filled the same way with :data:`FILE_RATIO`. The measured
ratio (zram ``orig_data_size / compr_data_size``) is reported in ``real.zram``.

Where counters come from
------------------------
The cgroup's ``memory.stat`` where it has the counter (per cgroup: free of other activity on
the machine), else the global ``/proc/vmstat`` (noted per counter in ``real.sources``). Memory
cgroup limit reclaim is neither kswapd nor "direct reclaim" in the global counters: the kernel
counts its scans only in the memcg (``pgscan_direct`` etc. in cgroup v2's memory.stat) and in
the global ``pgscan_anon``/``pgscan_file``; on cgroup v1 the canonical ``pgscan_direct`` /
``pgsteal_direct`` are therefore derived from the latter (sources say so), and ``allocstall``
stays 0 (it counts only global direct reclaim).

Restoration
-----------
Everything done to the machine is recorded step by step in a state file under ``/run`` and
undone in reverse (children killed, swapoff, zram reset and its algorithm restored, cgroup
removed, files deleted, sysctls restored) on success, on error, on exception, on SIGINT,
SIGTERM and SIGHUP; a run killed with SIGKILL is cleaned up by the next run
(:func:`restore_stale`).

Modules: :mod:`.content` (page content, the child program), :mod:`.host` (/proc, /sys, swap,
zram), :mod:`.cgroup` (the memory cgroup), :mod:`.counters` (which counter comes from where),
:mod:`.restore` (the state file and its undo), :mod:`.replayer` (setup, children, the replay)
and :mod:`.report` (model vs real, the command's entry point).
"""

from mobmem.kernel.real.cgroup import CgroupInfo, find_memory_cgroup
from mobmem.kernel.real.content import BANK_PAGES, DEFAULT_RATIO, FILE_RATIO, LZ4_OVERHEAD, PAGE, content_description, content_sigma, make_bank
from mobmem.kernel.real.counters import COUNTERS, canonical_counters
from mobmem.kernel.real.host import ZRAM, Skipped, machine_environment, read_vmstat
from mobmem.kernel.real.replayer import RealOptions, run_real
from mobmem.kernel.real.report import build_report, diff_pct, replay_real
from mobmem.kernel.real.restore import STATE_FILE, machine_is_clean, restore_stale

__all__ = [
    "BANK_PAGES",
    "COUNTERS",
    "DEFAULT_RATIO",
    "FILE_RATIO",
    "LZ4_OVERHEAD",
    "PAGE",
    "STATE_FILE",
    "ZRAM",
    "CgroupInfo",
    "RealOptions",
    "Skipped",
    "build_report",
    "canonical_counters",
    "content_description",
    "content_sigma",
    "diff_pct",
    "find_memory_cgroup",
    "machine_environment",
    "machine_is_clean",
    "make_bank",
    "read_vmstat",
    "replay_real",
    "restore_stale",
    "run_real",
]
