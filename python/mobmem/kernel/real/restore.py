"""Restoring the machine: every change a real replay makes is recorded in a state file and undone in reverse, also after a crash (the next run cleans up)."""

from __future__ import annotations

import errno
import json
import os
import signal
import time

from mobmem.kernel.real.cgroup import CG_PREFIX, find_memory_cgroup
from mobmem.kernel.real.host import WORK_PARENT, ZRAM, _pid_alive, _proc_swaps, _read, _swapoff, _write

STATE_DIR = "/run/mobmem"


STATE_FILE = os.path.join(STATE_DIR, "real-state.json")


# ----------------------------------------------------------------------------------------
# machine state: every change recorded, undone in reverse
# ----------------------------------------------------------------------------------------
def _save_state(state: dict) -> None:
    from pathlib import Path

    from mobmem.files import atomic_write  # a temporary of this process's own, flushed, renamed

    os.makedirs(STATE_DIR, exist_ok=True)
    atomic_write(Path(STATE_FILE), json.dumps(state))


def _undo(state: dict, log: list[str]) -> list[str]:
    """Undo the steps of ``state`` (in reverse); returns problems that remain."""
    problems: list[str] = []
    # 1. processes we started (their pids), then any task left in our cgroup
    for pid in state.get("children", []):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in state.get("children", []):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    cg = state.get("cgroup")
    if cg and os.path.isdir(cg):
        for _ in range(50):
            try:
                tasks = [int(x) for x in _read(os.path.join(cg, "cgroup.procs")).split()]
            except OSError:
                tasks = []
            if not tasks:
                break
            for pid in tasks:  # only ever our own children (the cgroup is ours)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
    # 2. swap
    swap = state.get("swap_path")
    if swap and swap in _proc_swaps():
        try:
            _swapoff(swap)
            log.append(f"swapoff {swap}")
        except OSError as e:
            problems.append(str(e))
    if state.get("zram_used"):
        try:
            _write(os.path.join(ZRAM, "reset"), 1)
            log.append("zram0 reset")
            alg = state.get("zram_alg_orig")
            if alg:
                try:
                    _write(os.path.join(ZRAM, "comp_algorithm"), alg)
                except OSError:
                    pass
        except OSError as e:
            problems.append(f"zram reset: {e}")
    # 3. cgroup
    if cg and os.path.isdir(cg):
        for i in range(100):
            try:
                os.rmdir(cg)
                log.append(f"rmdir {cg}")
                break
            except OSError as e:
                if e.errno == errno.ENOENT:
                    break
                if i == 99:
                    problems.append(f"rmdir {cg}: {e.strerror}")
                time.sleep(0.05)
    # 4. files
    wd = state.get("workdir")
    if wd and os.path.isdir(wd):
        for name in os.listdir(wd):
            try:
                os.unlink(os.path.join(wd, name))
            except OSError as e:
                problems.append(f"unlink {name}: {e.strerror}")
        try:
            os.rmdir(wd)
            log.append(f"rm -r {wd}")
        except OSError as e:
            problems.append(f"rmdir {wd}: {e.strerror}")
    sub = state.get("v2_subtree_memory_enabled")
    if sub:
        try:
            _write(sub, "-memory")
        except OSError:
            pass  # in use by other cgroups by now: leave it on
    # 5. sysctls
    for path, value in state.get("sysctl_orig", {}).items():
        try:
            _write(path, value)
        except OSError as e:
            problems.append(f"restore {path}: {e}")
    return problems


def _running_owner() -> int | None:
    """The pid of a live replay that owns the state file, if any."""
    try:
        owner = json.loads(_read(STATE_FILE)).get("pid")
    except (OSError, ValueError, AttributeError):
        return None
    if owner and owner != os.getpid() and _pid_alive(owner):
        return int(owner)
    return None


def restore_stale() -> list[str]:
    """Undo what a previous real replay left behind (it was killed before it could)."""
    log: list[str] = []
    try:
        state = json.loads(_read(STATE_FILE))
    except (OSError, ValueError):
        state = None
    if state is not None:
        owner = state.get("pid")
        if owner and owner != os.getpid() and _pid_alive(owner):
            return log  # another replay is running; leave it alone
        _undo(state, log)
        try:
            os.unlink(STATE_FILE)
        except OSError:
            pass
    return log


def machine_is_clean() -> tuple[bool, list[str]]:
    """No swap of ours on, zram0 reset, no mobmem cgroup, no state file (used by the tests)."""
    why: list[str] = []
    for s in _proc_swaps():
        if "zram0" in s or "mobmem" in s:
            why.append(f"swap on: {s}")
    try:
        if int(_read(os.path.join(ZRAM, "disksize")).strip() or 0) != 0:
            why.append("zram0 disksize is not 0")
    except OSError:
        pass
    info = find_memory_cgroup()
    if info is not None:
        for name in os.listdir(info.root):
            if name.startswith(CG_PREFIX):
                why.append(f"cgroup left: {name}")
    if os.path.exists(STATE_FILE):
        why.append(f"state file left: {STATE_FILE}")
    for name in os.listdir(WORK_PARENT) if os.path.isdir(WORK_PARENT) else []:
        if name.startswith(CG_PREFIX):
            why.append(f"work dir left: {os.path.join(WORK_PARENT, name)}")
    return (not why, why)
