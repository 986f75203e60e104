"""The environment record stored with every result, and warnings about unreliable conditions.

Collected from /proc and /sys (no privileges needed): CPU model, cores, per-core governor and
current/min/max frequency, thermal zones and throttle counters, load average, ASLR, isolated CPUs,
kernel, hypervisor, perf_event_paranoid and which perf events work, memory, Python, git revision,
JDK version when asked, and the exact command. ``warnings`` says, before running, what will make
numbers unreliable; ``drift`` compares two snapshots (frequency changes, throttling, load) after a
run. Where something cannot be read (e.g. no cpufreq in a VM) the record says so instead of
guessing. Left out: SMT/turbo control, IRQ affinity, per-process interference accounting.
"""

from __future__ import annotations

import datetime as _dt
import glob
import os
import platform
import shlex
import socket
import subprocess
import sys
from typing import Any

from mobmem.harness.process import perf_event_status


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cpu_model() -> str | None:
    txt = _read("/proc/cpuinfo") or ""
    for line in txt.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _hypervisor() -> bool:
    txt = _read("/proc/cpuinfo") or ""
    return any(line.startswith("flags") and " hypervisor" in line for line in txt.splitlines())


def cpufreq() -> dict[str, dict[str, Any]]:
    out = {}
    for d in sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq")):
        cpu = d.split("/")[-2]
        rec = {}
        for k in ("scaling_governor", "scaling_cur_freq", "scaling_min_freq", "scaling_max_freq", "cpuinfo_max_freq"):
            v = _read(os.path.join(d, k))
            rec[k] = int(v) if v and v.isdigit() else v
        out[cpu] = rec
    return out


def temperatures() -> dict[str, float]:
    out = {}
    for z in sorted(glob.glob("/sys/class/thermal/thermal_zone*")):
        t = _read(os.path.join(z, "temp"))
        typ = _read(os.path.join(z, "type")) or os.path.basename(z)
        if t and t.lstrip("-").isdigit():
            out[f"{os.path.basename(z)}:{typ}"] = int(t) / 1000.0
    return out


def throttle_counts() -> dict[str, int]:
    out = {}
    for f in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*_throttle_count"):
        v = _read(f)
        if v and v.isdigit():
            out[f.split("/")[-3] + ":" + os.path.basename(f)] = int(v)
    return out


def git_revision(path: str | None = None) -> str | None:
    try:
        r = subprocess.run(["git", "-C", path or os.getcwd(), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if r.returncode != 0:
            return None
        rev = r.stdout.strip()
        d = subprocess.run(["git", "-C", path or os.getcwd(), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=5)
        return rev + ("-dirty" if d.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def snapshot() -> dict[str, Any]:
    """The quickly changing part: frequencies, temperatures, throttling, load."""
    freqs = {c: r.get("scaling_cur_freq") for c, r in cpufreq().items()}
    return {
        "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "loadavg": os.getloadavg(),
        "cur_freq_khz": freqs,
        "temperatures_c": temperatures(),
        "throttle_counts": throttle_counts(),
    }


def collect(command: list[str] | None = None, jdk: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The full environment record (see the module docstring)."""
    uname = platform.uname()
    meminfo = _read("/proc/meminfo") or ""
    mem_total = next((line.split()[1] for line in meminfo.splitlines() if line.startswith("MemTotal")), None)
    rec: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cpus_online": os.cpu_count(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "hypervisor": _hypervisor(),
        "kernel": f"{uname.system} {uname.release} {uname.version}",
        "machine": uname.machine,
        "mem_total_kb": int(mem_total) if mem_total else None,
        "cpufreq": cpufreq() or "unavailable (no /sys/devices/system/cpu/*/cpufreq: frequency cannot be read or controlled here)",
        "aslr": _read("/proc/sys/kernel/randomize_va_space"),
        "isolated_cpus": _read("/sys/devices/system/cpu/isolated") or "",
        "nohz_full": _read("/sys/devices/system/cpu/nohz_full"),
        "perf_event_paranoid": _read("/proc/sys/kernel/perf_event_paranoid"),
        "perf_events": {e: (perf_event_status(e) or "ok") for e in ("task-clock", "cycles", "instructions")},
        "python": sys.version.split()[0],
        "git_revision": git_revision(os.path.dirname(os.path.abspath(__file__))),
        "command": shlex.join(command) if command is not None else shlex.join(sys.argv),
        "snapshot": snapshot(),
    }
    if jdk:
        try:
            r = subprocess.run([jdk, "-version"], capture_output=True, text=True, timeout=30)
            rec["jdk"] = {"java": jdk, "version": r.stderr.strip().splitlines()}
        except (OSError, subprocess.SubprocessError) as e:
            rec["jdk"] = {"java": jdk, "error": str(e)}
    if extra:
        rec.update(extra)
    rec["warnings"] = warnings(rec)
    return rec


def warnings(rec: dict[str, Any]) -> list[str]:
    """What will make numbers unreliable, judged from a record made by :func:`collect`."""
    w = []
    cf = rec.get("cpufreq")
    if isinstance(cf, dict):
        govs = {r.get("scaling_governor") for r in cf.values()}
        if govs - {"performance", "userspace"}:
            w.append(f"CPU frequency governor is {sorted(map(str, govs))}, not fixed (use 'performance' or a fixed userspace frequency)")
        ranges = {(r.get("scaling_min_freq"), r.get("scaling_max_freq")) for r in cf.values()}
        if any(lo != hi for lo, hi in ranges):
            w.append("CPU frequency range is not pinned (scaling_min_freq != scaling_max_freq): frequency may change during runs")
    else:
        w.append("CPU frequency cannot be read or controlled here (no cpufreq in sysfs; likely a VM): frequency changes go undetected")
    n = rec.get("cpus_online") or 1
    load1 = rec["snapshot"]["loadavg"][0]
    if load1 > 0.25 * n:
        w.append(f"high load: 1-minute load average {load1:.2f} on {n} CPUs — other work is competing for the machine")
    temps = rec["snapshot"].get("temperatures_c") or {}
    hot = {k: v for k, v in temps.items() if v >= 80}
    if hot:
        w.append(f"hot thermal zones (≥ 80 °C), throttling likely: {hot}")
    if rec.get("hypervisor"):
        w.append("running under a hypervisor: steal time and virtualised timers add noise")
    if rec.get("aslr") not in (None, "0"):
        w.append("ASLR is on (randomize_va_space != 0): layout-dependent variation between runs (usually wanted, but adds variance)")
    if not rec.get("isolated_cpus"):
        w.append("no isolated CPUs: the benchmark shares cores with the rest of the system")
    pe = rec.get("perf_events") or {}
    bad = {k: v for k, v in pe.items() if v != "ok"}
    if bad:
        w.append("perf_event counters unavailable: " + "; ".join(f"{k}: {v}" for k, v in bad.items()))
    return w


def drift(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Warnings about changes between two :func:`snapshot` results taken around a benchmark."""
    w = []
    fb, fa = before.get("cur_freq_khz") or {}, after.get("cur_freq_khz") or {}
    changed = {c: (fb[c], fa.get(c)) for c in fb if fa.get(c) != fb[c]}
    if changed:
        w.append(f"CPU frequency changed during the run: {changed}")
    tb, ta = before.get("throttle_counts") or {}, after.get("throttle_counts") or {}
    thr = {k: ta[k] - tb.get(k, 0) for k in ta if ta[k] > tb.get(k, 0)}
    if thr:
        w.append(f"thermal throttling happened during the run: {thr}")
    temps = after.get("temperatures_c") or {}
    if any(v >= 80 for v in temps.values()):
        w.append(f"thermal zones were hot at the end: {temps}")
    return w
