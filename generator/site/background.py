"""Work a build runs in a forked child process while MkDocs goes on with its own.

`Background` runs a generator in a child made with ``os.fork``: the child inherits everything
the parent loaded (the verifier, the parsed configuration) without pickling any of it, and
sends the items back through a pipe as it produces them. The parent reads them, in order, when
it needs them; on a machine with two cores the child's work then costs the parent little more
than the wait for the first item it needs.

The child's log records are sent with the items and logged again in the parent, so a warning
reaches MkDocs' own handlers (and ``--strict``) exactly as if the parent had logged it. Where a
fork is not safe (`can_fork`: not Linux, or threads running) or not wanted, the generator runs in
this process instead, as the parent reads it: same items, same order.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Generic, NoReturn, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_ITEM, _END, _ERROR = "item", "end", "error"


class BackgroundFailed(Exception):
    """The child process ended without finishing its work or saying why."""


class Background(Generic[T]):
    """The items of ``produce()``, made in a forked child (when possible) and read on demand."""

    def __init__(self, produce: Callable[[], Iterable[T]], *, fork: bool = True) -> None:
        self.pid: int | None = None
        self._stream: IO[bytes] | None = None
        self._local: Iterator[T] | None = None
        self._done = False
        if fork and can_fork():
            self._start_child(produce)
        else:
            self._local = iter(produce())

    @property
    def forked(self) -> bool:
        return self.pid is not None

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        if self._local is not None:
            try:
                return next(self._local)
            except StopIteration:
                self._done = True
                raise
        kind, payload, records = self._receive()
        for record in records:
            logging.getLogger(record.name).handle(record)
        if kind == _ITEM:
            return payload
        self._done = True
        self._reap()
        if kind == _ERROR:
            error, child_traceback = payload
            log.debug("in the background process:\n%s", child_traceback)
            raise error
        raise StopIteration

    def close(self) -> None:
        """Stop the child if it is still working, and release it. Safe to call twice."""
        self._done = True
        if self._local is not None:
            close = getattr(self._local, "close", None)
            if close is not None:
                close()
            self._local = None
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    # -- the parent's side

    def _start_child(self, produce: Callable[[], Iterable[T]]) -> None:
        read_end, write_end = os.pipe()
        # Whatever is buffered now would otherwise be written twice, once by each process.
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _run_child(produce, os.fdopen(write_end, "wb"))
        os.close(write_end)
        self.pid = pid
        self._stream = os.fdopen(read_end, "rb")

    def _receive(self) -> tuple[str, Any, list[logging.LogRecord]]:
        assert self._stream is not None
        try:
            return pickle.load(self._stream)  # type: ignore[no-any-return]
        except (EOFError, pickle.UnpicklingError):
            status = self._reap()
            self._done = True
            raise BackgroundFailed(
                f"the background process ended without finishing its work ({status})"
            ) from None

    def _reap(self) -> str:
        """Wait for the child to exit; how it ended, in words."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self.pid is None:
            return "not started"
        pid, self.pid = self.pid, None
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return "already reaped"
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = str(number)
            return f"killed by {name}"
        return f"exit status {os.waitstatus_to_exitcode(status)}"


def can_fork() -> bool:
    """Whether this process can fork safely: on Linux, with no other thread running.

    A thread could hold a lock (a logging handler's, say) at the moment of the fork, which the
    child would then wait for forever. macOS has ``os.fork`` too, but some of its system
    libraries do not survive one (Python's own multiprocessing stopped forking there).
    """
    return sys.platform.startswith("linux") and threading.active_count() == 1


# -- the child's side


class _Collect(logging.Handler):
    """Keeps the child's log records to send them to the parent."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Arguments and exceptions may not pickle: send the message as the parent would print it.
        record.msg = record.getMessage()
        record.args = None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        self.records.append(record)

    def take(self) -> list[logging.LogRecord]:
        records, self.records = self.records, []
        return records


def _collect_logging() -> _Collect:
    collect = _Collect()
    loggers = [logging.root] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    for logger in loggers:
        logger.handlers = []
        logger.propagate = True
    logging.root.handlers = [collect]
    return collect


def _run_child(produce: Callable[[], Iterable[Any]], stream: IO[bytes]) -> NoReturn:
    """Produce, send, and exit without running the parent's exit handlers or cleanup."""
    code = 0
    collect = _collect_logging()
    try:
        for item in produce():
            _send(stream, (_ITEM, item, collect.take()))
        _send(stream, (_END, None, collect.take()))
    except BaseException as error:  # every failure, KeyboardInterrupt too, goes to the parent
        code = 1
        _send_error(stream, error, collect.take())
    finally:
        with contextlib.suppress(OSError):
            stream.close()
        os._exit(code)


def _send_error(stream: IO[bytes], error: BaseException, records: list[logging.LogRecord]) -> None:
    child_traceback = traceback.format_exc()
    try:
        pickle.dumps(error)
    except Exception:
        error = RuntimeError(f"{type(error).__name__}: {error}")
    with contextlib.suppress(OSError):  # the parent is gone: nobody to tell
        _send(stream, (_ERROR, (error, child_traceback), records))


def _send(stream: IO[bytes], message: tuple[str, Any, list[logging.LogRecord]]) -> None:
    # Pickled whole before a byte is written: what does not pickle leaves the stream intact.
    stream.write(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
    stream.flush()
