"""Builds what the JVM back end needs, on first use, into a cache (``$MOBMEM_CACHE`` or
``~/.cache/mobmem``), keyed by a hash of the sources so an edit triggers a rebuild and nothing is
built twice:

- the JVMTI agent (``agent/mobmem_agent.c``) with the system C compiler, against the JDK's headers;
- the core workload classes (harness, probe, GCBench) with ``javac --release 17`` — no network;
- the library workloads (Lucene, Xalan, PMD) with Maven from the pinned versions in
  ``workloads/pom.xml`` (the first build downloads from Maven Central into ~/.m2; later builds run
  offline).

Build outputs never go into the source tree. Left out: shading, building on Windows/macOS.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Callable

from mobmem.errors import MobmemError
from mobmem.jvm.jdk import JDK

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_SRC = os.path.join(HERE, "agent", "mobmem_agent.c")
WORKLOADS = os.path.join(HERE, "workloads")
JAVA_SRC = os.path.join(WORKLOADS, "src", "main", "java", "mobmem", "bench")
CORE_FILES = ("Probe.java", "Workload.java", "Args.java", "Harness.java", "GCBench.java")


def cache_root() -> str:
    return os.environ.get("MOBMEM_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mobmem")


def _hash(paths: list[str], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for p in sorted(paths):
        h.update(os.path.basename(p).encode())
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _lock(path: str):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(argv: list[str], what: str, cwd: str | None = None, env: dict | None = None, log: Callable[[str], None] | None = None) -> None:
    if log:
        log(f"building {what}: {' '.join(argv)}")
    try:
        r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    except FileNotFoundError:
        raise MobmemError(f"cannot build {what}: {argv[0]!r} not found (install it, e.g. apt-get install {'maven' if argv[0] == 'mvn' else 'gcc'})") from None
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-25:])
        raise MobmemError(f"building {what} failed (exit {r.returncode}):\n{tail}")


def build_agent(jdk: JDK, log=None) -> str:
    """Path of libmobmem_agent.so for ``jdk`` (built if needed)."""
    if not jdk.has_jvmti_header:
        raise MobmemError(f"JDK {jdk.home} has no include/jvmti.h: cannot build the JVMTI agent")
    out_dir = os.path.join(cache_root(), "agent", _hash([AGENT_SRC], jdk.home))
    so = os.path.join(out_dir, "libmobmem_agent.so")
    with _lock(out_dir):
        if not os.path.exists(so):
            os.makedirs(out_dir, exist_ok=True)
            cc = os.environ.get("CC", "cc")
            inc = os.path.join(jdk.home, "include")
            _run(
                [cc, "-O2", "-shared", "-fPIC", "-Wall", f"-I{inc}", f"-I{os.path.join(inc, 'linux')}", "-o", so + ".tmp", AGENT_SRC, "-lpthread"],
                "the JVMTI agent",
                log=log,
            )
            os.replace(so + ".tmp", so)
    return so


def build_core(jdk: JDK, log=None) -> str:
    """Classpath directory with the harness and GCBench (javac only, no Maven)."""
    srcs = [os.path.join(JAVA_SRC, f) for f in CORE_FILES]
    out_dir = os.path.join(cache_root(), "core", _hash(srcs))
    classes = os.path.join(out_dir, "classes")
    with _lock(out_dir):
        if not os.path.isdir(classes):
            if not jdk.javac:
                raise MobmemError(f"JDK {jdk.home} has no javac: cannot build the workloads")
            tmp = classes + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            _run([jdk.javac, "--release", "17", "-d", tmp, *srcs], "the core workloads (GCBench)", log=log)
            os.replace(tmp, classes)
    return classes


@dataclass
class LibBuild:
    jar: str
    libs: list[str]
    sources_jar: str

    @property
    def classpath(self) -> str:
        return os.pathsep.join([self.jar] + self.libs)


def build_libs(jdk: JDK, log=None) -> LibBuild:
    """Maven build of the library workloads (first time online, later offline)."""
    srcs = glob.glob(os.path.join(JAVA_SRC, "*.java")) + [os.path.join(WORKLOADS, "pom.xml")]
    out_dir = os.path.join(cache_root(), "libs", _hash(srcs))
    target = os.path.join(out_dir, "target")
    with _lock(out_dir):
        done = os.path.join(out_dir, "BUILT")
        if not os.path.exists(done):
            if shutil.which("mvn") is None:
                raise MobmemError(
                    "cannot build the Lucene/Xalan/PMD workloads: Maven ('mvn') not found; install it (apt-get install maven) or use only the gcbench workload"
                )
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
            shutil.copy(os.path.join(WORKLOADS, "pom.xml"), out_dir)
            shutil.copytree(os.path.join(WORKLOADS, "src"), os.path.join(out_dir, "src"))
            env = dict(os.environ, JAVA_HOME=jdk.home)
            try:
                _run(["mvn", "-B", "-q", "-o", "package"], "the library workloads (Maven, offline)", cwd=out_dir, env=env, log=log)
            except MobmemError:
                _run(["mvn", "-B", "-q", "package"], "the library workloads (Maven, downloading pinned versions)", cwd=out_dir, env=env, log=log)
            open(done, "w").close()
    jars = glob.glob(os.path.join(target, "mobmem-jvm-workloads-*.jar"))
    libs = sorted(glob.glob(os.path.join(target, "lib", "*.jar")))
    sources = [p for p in libs if p.endswith("-sources.jar")]
    if not jars or not sources:
        raise MobmemError(f"library workload build in {out_dir} is incomplete; delete it and retry")
    return LibBuild(jars[0], [p for p in libs if not p.endswith("-sources.jar")], sources[0])
