"""What is measured: implementations, parameters and configurations.

- :class:`Parameters` — named, immutable values for one run (heap size, collector, seed…), with a
  stable key used to identify runs in results files.
- :class:`Implementation` — the thing measured, with ``setup`` / ``run`` / ``teardown`` hooks.
  :class:`CommandImplementation` runs an argv list (never a shell string) through
  :func:`mobmem.harness.process.run_process`.
- :class:`Configuration` — an implementation paired with its parameters and a name.

How runs are repeated, stopped and measured lives in ``runner``, ``stop`` and ``meters``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from mobmem.errors import MobmemError
from mobmem.harness.process import ProcessResult, run_process


class Parameters(Mapping[str, Any]):
    """An immutable mapping of JSON-able parameter values."""

    __slots__ = ("_d",)

    def __init__(self, values: Mapping[str, Any] | None = None, **kw: Any) -> None:
        d = dict(values or {})
        d.update(kw)
        for k, v in d.items():
            try:
                json.dumps(v)
            except TypeError as e:
                raise MobmemError(f"parameter {k!r}: value {v!r} is not JSON-serialisable") from e
        self._d = MappingProxyType(dict(sorted(d.items())))

    def __getitem__(self, k: str) -> Any:
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Parameters) and dict(self._d) == dict(other._d)

    def __repr__(self) -> str:
        return f"Parameters({dict(self._d)!r})"

    @property
    def key(self) -> str:
        return json.dumps(dict(self._d), sort_keys=True, separators=(",", ":"))

    def with_(self, **kw: Any) -> "Parameters":
        return Parameters(dict(self._d), **kw)

    def to_dict(self) -> dict:
        return dict(self._d)


@dataclass
class RunContext:
    """Per-run scratch space shared by the implementation and the meters."""

    index: int
    phase: str  # "warmup" | "measure"
    workdir: str
    perf_events: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunOutcome:
    status: str  # see mobmem.harness.process.STATUSES
    process: ProcessResult | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class Implementation:
    """Base class: override ``run``; ``setup``/``teardown`` are optional."""

    name = "implementation"

    def setup(self, params: Parameters) -> None:  # noqa: D401 - hook
        pass

    def prepare_run(self, params: Parameters, ctx: RunContext) -> None:
        """Before each run (warm-up included), outside the measurement."""

    def run(self, params: Parameters, ctx: RunContext) -> RunOutcome:
        raise NotImplementedError

    def teardown(self, params: Parameters) -> None:
        pass

    def describe(self, params: Parameters) -> dict[str, Any]:
        return {"implementation": self.name}


class CommandImplementation(Implementation):
    """Runs one argv list per run. Output goes to /dev/null unless ``show_output``; the tail of
    stderr is kept for runs that do not succeed."""

    name = "command"

    def __init__(
        self,
        argv: list[str],
        *,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        show_output: bool = False,
        keep_stdout: bool = False,
        shell=None,
    ) -> None:
        if not argv:
            raise MobmemError("no command given (put it after `--`)")
        if any(not isinstance(a, str) for a in argv):
            raise MobmemError("command must be a list of strings")
        if os.sep not in argv[0] and shutil.which(argv[0]) is None:
            raise MobmemError(f"command not found: {argv[0]!r}")
        if timeout is not None and timeout <= 0:
            raise MobmemError(f"timeout must be positive, got {timeout}")
        self.argv = list(argv)
        self.timeout = timeout
        self.env = env
        self.cwd = cwd
        self.show_output = show_output
        self.keep_stdout = keep_stdout
        #: hyperfine's --setup/--prepare/--cleanup (:class:`mobmem.harness.hyperfine.ShellCommands`).
        self.shell = shell

    def argv_for(self, params: Parameters) -> list[str]:
        """The argv with ``{NAME}`` replaced by each parameter's value (hyperfine's -L/-P)."""
        if not params:
            return self.argv
        from mobmem.harness.hyperfine import substitute

        return [substitute(a, dict(params)) for a in self.argv]

    def setup(self, params: Parameters) -> None:
        if self.shell:
            self.shell.run("--setup", self.shell.setup, dict(params))

    def prepare_run(self, params: Parameters, ctx: RunContext) -> None:
        if self.shell:
            self.shell.run("--prepare", self.shell.prepare, dict(params))

    def teardown(self, params: Parameters) -> None:
        if self.shell:
            self.shell.run("--cleanup", self.shell.cleanup, dict(params))

    def run(self, params: Parameters, ctx: RunContext) -> RunOutcome:
        err_path = os.path.join(ctx.workdir, "stderr")
        out_path = os.path.join(ctx.workdir, "stdout") if self.keep_stdout else None
        pr = run_process(
            self.argv_for(params),
            timeout=self.timeout,
            stdout=out_path,
            stderr=err_path,
            env=self.env,
            cwd=self.cwd,
            perf_events=ctx.perf_events,
            inherit_output=self.show_output,
        )
        out = RunOutcome(pr.status, pr, error=pr.error)
        if out_path:
            ctx.extra["stdout_path"] = out_path
        ctx.extra["stderr_path"] = err_path
        if pr.status != "ok" and not self.show_output:
            out.info["stderr_tail"] = _tail(err_path)
        return out

    def describe(self, params: Parameters) -> dict[str, Any]:
        return {"implementation": self.name, "argv": self.argv_for(params), "timeout_s": self.timeout}


def _tail(path: str, n: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Configuration:
    """An implementation with fixed parameters, under a display name."""

    name: str
    implementation: Implementation
    parameters: Parameters = field(default_factory=Parameters)

    @property
    def key(self) -> str:
        desc = json.dumps(
            {"name": self.name, "impl": self.implementation.describe(self.parameters), "params": self.parameters.to_dict()}, sort_keys=True, default=str
        )
        return hashlib.sha256(desc.encode()).hexdigest()[:16]


def scratch_dir() -> str:
    return tempfile.mkdtemp(prefix="mobmem-run-")
