"""Run a command as a fresh process and measure it: wall time, CPU time and peak memory.

Shared by the benchmark scripts. ``os.wait4`` gives the resource usage of the one child waited
for, unlike ``RUSAGE_CHILDREN``, which is the maximum over every child the script ever ran (the
git processes that built the corpus included). It counts the processes that child started and
waited for too: their CPU time is added, and the peak memory is that of the largest of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float
    cpu_seconds: float
    """User and system time of the process and of the processes it waited for."""


def run_generator(args: list[str], cwd: Path) -> Measured:
    """``python -m generator ARGS`` in ``cwd``, measured."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None and process.stderr is not None
    # Read both pipes fully before waiting, so a chatty child cannot block on a full pipe.
    stdout, stderr = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measured(
        process.returncode,
        stdout.decode(),
        stderr.decode(),
        seconds,
        usage.ru_maxrss / 1024,
        usage.ru_utime + usage.ru_stime,
    )
