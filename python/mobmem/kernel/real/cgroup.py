"""The memory cgroup a real replay runs under: finding the hierarchy (v1 or v2), usage, meminfo and OOM kills of one cgroup."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mobmem.kernel.real.host import _kv, _read

CG_PREFIX = "mobmem-real-"


# ----------------------------------------------------------------------------------------
# cgroups
# ----------------------------------------------------------------------------------------
@dataclass
class CgroupInfo:
    version: int  # 1 or 2
    root: str  # the hierarchy mount holding the memory controller


def find_memory_cgroup(mounts_text: str | None = None, controllers=None) -> CgroupInfo | None:
    """Where the memory controller is: a cgroup2 mount that has it, else a v1 ``memory``
    hierarchy (a hybrid machine may mount cgroup2 without the memory controller)."""
    if mounts_text is None:
        try:
            mounts_text = _read("/proc/self/mounts")
        except OSError:
            return None
    if controllers is None:

        def controllers(mnt: str) -> list[str]:
            try:
                return _read(os.path.join(mnt, "cgroup.controllers")).split()
            except OSError:
                return []

    v1 = v2 = None
    for ln in mounts_text.splitlines():
        parts = ln.split()
        if len(parts) < 4:
            continue
        fstype, mnt, opts = parts[2], parts[1], parts[3].split(",")
        if fstype == "cgroup" and "memory" in opts and v1 is None:
            v1 = mnt
        elif fstype == "cgroup2" and v2 is None and "memory" in controllers(mnt):
            v2 = mnt
    if v2 is not None:
        return CgroupInfo(2, v2)
    if v1 is not None:
        return CgroupInfo(1, v1)
    return None


def _oom_kills(cg: str, version: int) -> int:
    try:
        if version == 1:
            return _kv(_read(os.path.join(cg, "memory.oom_control"))).get("oom_kill", 0)
        return _kv(_read(os.path.join(cg, "memory.events"))).get("oom_kill", 0)
    except OSError:
        return 0


def _cg_usage(cg: str, version: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        if version == 1:
            out["usage_bytes"] = int(_read(os.path.join(cg, "memory.usage_in_bytes")))
            out["max_usage_bytes"] = int(_read(os.path.join(cg, "memory.max_usage_in_bytes")))
            ms = os.path.join(cg, "memory.memsw.usage_in_bytes")
            if os.path.exists(ms):
                out["swap_bytes"] = int(_read(ms)) - out["usage_bytes"]
        else:
            out["usage_bytes"] = int(_read(os.path.join(cg, "memory.current")))
            if os.path.exists(os.path.join(cg, "memory.peak")):
                out["max_usage_bytes"] = int(_read(os.path.join(cg, "memory.peak")))
            if os.path.exists(os.path.join(cg, "memory.swap.current")):
                out["swap_bytes"] = int(_read(os.path.join(cg, "memory.swap.current")))
    except (OSError, ValueError):
        pass
    return out


def _cg_meminfo(mc: dict[str, int], version: int, usage: dict[str, int]) -> dict[str, int]:
    """A meminfo-like snapshot of the cgroup, in kB like /proc/meminfo."""

    def kb(b) -> int:
        return int(b) // 1024

    # memory.stat keys the two cgroup versions share, then the ones each names its own way
    names = {
        "Active(anon)": "active_anon",
        "Inactive(anon)": "inactive_anon",
        "Active(file)": "active_file",
        "Inactive(file)": "inactive_file",
        "Unevictable": "unevictable",
        "Shmem": "shmem",
    }
    if version == 1:
        names |= {"Mapped": "mapped_file", "Cached": "cache", "AnonPages": "rss", "SwapCached": "swapcached", "Dirty": "dirty"}
    else:
        names |= {"Mapped": "file_mapped", "Cached": "file", "AnonPages": "anon", "SwapCached": "swapcached", "Dirty": "file_dirty"}
    out = {k: kb(mc[v]) for k, v in names.items() if v in mc}
    if "usage_bytes" in usage:
        out["MemUsed"] = kb(usage["usage_bytes"])
    if "max_usage_bytes" in usage:
        out["MemUsedMax"] = kb(usage["max_usage_bytes"])
    if "swap_bytes" in usage:
        out["SwapUsed"] = kb(usage["swap_bytes"])
    return out
