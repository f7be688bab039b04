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


# Linux keeps a process's peak memory across exec, and a child starts with its parent's memory
# counted (the mapping it was forked from): a benchmark that holds a big model would report its own
# size as the generator's peak. So the generator is started by a small launcher, which times it,
# waits for it and passes its figures back on a pipe.
_LAUNCHER = """
import os, sys, time
report = int(sys.argv[1])
os.set_inheritable(report, False)
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
os.write(report, f"{seconds} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}".encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def launched(command: list[str], report: int) -> list[str]:
    """``command`` run through the launcher, which writes its figures to the file descriptor
    ``report`` (to be passed on to it) for `read_figures`."""
    return [sys.executable, "-c", _LAUNCHER, str(report), *command]


def read_figures(read_end: int) -> tuple[float, float, float] | None:
    """What the launcher wrote on the pipe ``read_end`` (closed here): wall seconds, peak MiB
    and CPU seconds of the command; None when it wrote nothing (killed with the command)."""
    with os.fdopen(read_end, "rb") as report:
        figures = report.read().decode().split()
    if len(figures) != 3:
        return None
    seconds, max_rss_kib, cpu_seconds = figures
    return float(seconds), int(max_rss_kib) / 1024, float(cpu_seconds)


def run_generator(args: list[str], cwd: Path) -> Measured:
    """``python -m generator ARGS`` in ``cwd``, measured."""
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            launched([sys.executable, "-m", "generator", *args], write_end),
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            pass_fds=(write_end,),
        )
    finally:
        os.close(write_end)
    assert process.stdout is not None and process.stderr is not None
    # Read both pipes fully before waiting, so a chatty child cannot block on a full pipe.
    stdout, stderr = process.stdout.read(), process.stderr.read()
    process.wait()
    figures = read_figures(read_end)
    if figures is None:
        raise RuntimeError(f"the generator could not be started: {stderr.decode()}")
    seconds, peak_mib, cpu_seconds = figures
    return Measured(
        process.returncode, stdout.decode(), stderr.decode(), seconds, peak_mib, cpu_seconds
    )
