"""JDK discovery: ``$JAVA_HOME``, every JDK under /usr/lib/jvm, and ``java`` on PATH.

A JDK is a directory with ``bin/java``; its version comes from ``java -version`` (cached per path
for the process) and whether it can build the JVMTI agent from ``include/jvmti.h``. Collector
support is probed by starting the JVM with the collector's flags (``-version``), so the answer is
what this JDK build really does (e.g. Shenandoah is absent from some vendors' builds).
Left out: downloading JDKs.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from mobmem.errors import MobmemError


@dataclass(frozen=True)
class JDK:
    home: str
    version: str  # e.g. "17.0.15"
    major: int
    vendor_line: str

    @property
    def java(self) -> str:
        return os.path.join(self.home, "bin", "java")

    @property
    def javac(self) -> str | None:
        p = os.path.join(self.home, "bin", "javac")
        return p if os.path.exists(p) else None

    @property
    def has_jvmti_header(self) -> bool:
        return os.path.exists(os.path.join(self.home, "include", "jvmti.h"))

    def to_dict(self) -> dict:
        return {"home": self.home, "version": self.version, "major": self.major, "vendor": self.vendor_line}


@functools.lru_cache(maxsize=None)
def probe(home: str) -> JDK | None:
    java = os.path.join(home, "bin", "java")
    if not os.access(java, os.X_OK):
        return None
    try:
        r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = r.stderr.strip().splitlines()
    m = re.search(r'version "([^"]+)"', r.stderr)
    if not m:
        return None
    ver = m.group(1)
    major = int(ver.split(".")[1]) if ver.startswith("1.") else int(re.match(r"\d+", ver).group(0))
    return JDK(os.path.realpath(home), ver, major, lines[1] if len(lines) > 1 else "")


def discover() -> list[JDK]:
    """All distinct JDKs found, newest major last."""
    cands = []
    if os.environ.get("JAVA_HOME"):
        cands.append(os.environ["JAVA_HOME"])
    cands += sorted(glob.glob("/usr/lib/jvm/*"))
    j = shutil.which("java")
    if j:
        cands.append(os.path.dirname(os.path.dirname(os.path.realpath(j))))
    seen, out = set(), []
    for c in cands:
        real = os.path.realpath(c)
        if real in seen:
            continue
        seen.add(real)
        jdk = probe(real)
        if jdk:
            out.append(jdk)
    return sorted(out, key=lambda k: (k.major, k.version))


def select(spec: str | None = None) -> JDK:
    """``spec``: None (the default: ``java`` on PATH, else the lowest JDK ≥ 17), a major version
    ("17", "25") or a JDK home directory."""
    jdks = discover()
    if not jdks:
        raise MobmemError("no JDK found (looked at $JAVA_HOME, /usr/lib/jvm/*, java on PATH)")
    if spec is None:
        j = shutil.which("java")
        if j:
            d = probe(os.path.dirname(os.path.dirname(os.path.realpath(j))))
            if d:
                return d
        return next((k for k in jdks if k.major >= 17), jdks[-1])
    if spec.isdigit():
        for k in jdks:
            if k.major == int(spec):
                return k
        raise MobmemError(f"no JDK {spec} found; available: {', '.join(f'{k.major} ({k.home})' for k in jdks)}")
    d = probe(os.path.realpath(spec))
    if not d:
        raise MobmemError(f"{spec!r} is not a JDK home (no working bin/java)")
    return d


@functools.lru_cache(maxsize=None)
def supports(java: str, flags: tuple[str, ...]) -> tuple[bool, str]:
    """Whether ``java`` starts with ``flags``; with the JVM's message when it does not."""
    try:
        r = subprocess.run([java, *flags, "-Xmx64m", "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return False, str(e)
    if r.returncode == 0:
        return True, ""
    msg = (r.stderr or r.stdout).strip().splitlines()
    return False, msg[0] if msg else f"exit {r.returncode}"
