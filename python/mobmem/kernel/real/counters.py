"""The kernel counters a real replay reports, and how they are read: the cgroup's memory.stat where it has them, else /proc/vmstat."""

from __future__ import annotations

# Canonical counters printed and compared, in order.
COUNTERS = (
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_anon",
    "pgscan_file",
    "pgsteal_anon",
    "pgsteal_file",
    "allocstall",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "workingset_activate",
    "workingset_restore",
    "pgactivate",
    "pgdeactivate",
    "pgrefill",
    "pgrotated",
    "pgpgin",
    "pgpgout",
    "oom_kill",
)


# memory.stat keys that mean the same as the /proc/vmstat counter of that name
_MEMCG_V1_SAME = ("pgfault", "pgmajfault", "workingset_refault_anon", "workingset_refault_file")


# Counters cgroup v2's memory.stat has under the same name: all but the global-only ones.
_NOT_IN_MEMCG_V2 = ("allocstall", "workingset_activate", "workingset_restore", "pgrotated", "pgpgin", "pgpgout", "oom_kill")
_MEMCG_V2_SAME = tuple(c for c in COUNTERS if c not in _NOT_IN_MEMCG_V2)


def canonical_counters(vm: dict[str, int], mc1: dict[str, int], mc0: dict[str, int], version: int) -> tuple[dict[str, int], dict[str, str]]:
    """Pick each canonical counter from the cgroup where it has it, else global vmstat."""
    values: dict[str, int] = {}
    sources: dict[str, str] = {}
    same = _MEMCG_V1_SAME if version == 1 else _MEMCG_V2_SAME
    for name in COUNTERS:
        if name in same and name in mc1:
            values[name] = mc1[name] - mc0.get(name, 0)
            sources[name] = "memcg"
        elif name == "allocstall":
            values[name] = sum(v for k, v in vm.items() if k.startswith("allocstall_"))
            sources[name] = "vmstat: sum of allocstall_*"
        elif name in ("workingset_activate", "workingset_restore"):
            continue  # summed below
        elif name == "oom_kill":
            continue
        else:
            values[name] = vm.get(name, 0)
            sources[name] = "vmstat"
    if version == 1:
        # memcg limit reclaim counts its scans only in pgscan_{anon,file} globally; its
        # pgscan_direct/pgsteal_direct live in the memcg, which v1 does not show.
        for kind in ("pgscan", "pgsteal"):
            total = vm.get(f"{kind}_anon", 0) + vm.get(f"{kind}_file", 0)
            others = sum(vm.get(f"{kind}_{r}", 0) for r in ("kswapd", "direct", "khugepaged", "proactive"))
            values[f"{kind}_direct"] = values.get(f"{kind}_direct", 0) + max(0, total - others)
            sources[f"{kind}_direct"] = f"vmstat: {kind}_anon+{kind}_file-{kind}_kswapd-…"
    for name in ("workingset_activate", "workingset_restore"):
        values[name] = values.get(f"{name}_anon", 0) + values.get(f"{name}_file", 0)
        sources[name] = "_anon + _file"
    return values, sources
