"""Benchmark: the mobmem harness side by side with hyperfine on the same trivial command.

Usage: PYTHONPATH=python python benchmarks/harness_overhead.py [--runs 200] [--json]
(equivalently ``mobmem bench harness-overhead``). Needs Debian's hyperfine (apt-get install hyperfine).
Reports the harness's extra time per run (goal ≤ 1 ms) and the runs an adaptive 1 % CI stop
condition needs compared with a fixed 15-run plan (on ``true`` and on a ~10 ms command).
"""

import argparse
import json
import sys

from mobmem.errors import MobmemError
from mobmem.harness.overhead import measure, render


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--command", default="true")
    ap.add_argument("--adaptive-command", default="sha256sum /usr/bin/perf")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    try:
        res = measure(a.runs, a.command, a.adaptive_command)
    except MobmemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(res, indent=2, default=str))
    else:
        render(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
