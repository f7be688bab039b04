"""The site build's background work: a generator run in a forked child, read on demand."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from generator.site.background import Background, BackgroundFailed, can_fork

needs_fork = pytest.mark.skipif(not can_fork(), reason="this process cannot fork safely")


def pids(count: int) -> Iterator[tuple[int, int]]:
    for number in range(count):
        yield number, os.getpid()


@needs_fork
def test_the_items_are_made_in_a_child_and_arrive_in_order():
    items = Background(lambda: pids(300))
    assert items.forked
    received = list(items)
    assert [number for number, _ in received] == list(range(300))
    assert {pid for _, pid in received} != {os.getpid()}
    assert len({pid for _, pid in received}) == 1
    assert not items.forked  # the child was waited for once it had finished


def test_without_a_fork_the_items_are_made_here_when_asked_for():
    made: list[int] = []

    def produce() -> Iterator[int]:
        for number in range(3):
            made.append(number)
            yield number

    items = Background(produce, fork=False)
    assert not items.forked and made == []
    assert next(items) == 0 and made == [0]
    assert list(items) == [1, 2]


@needs_fork
def test_no_fork_while_another_thread_runs():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        items = Background(lambda: pids(2))
        assert not items.forked
        assert {pid for _, pid in items} == {os.getpid()}
    finally:
        stop.set()
        thread.join()


class Unpicklable:
    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __str__(self) -> str:
        return "a value with a lock"


@needs_fork
def test_the_childs_log_records_are_logged_again_in_the_parent(caplog):
    def produce() -> Iterator[int]:
        logging.getLogger("generator.somewhere").warning("checked %s", Unpicklable())
        yield 1
        logging.getLogger("mkdocs.plugins.other").info("second")
        yield 2

    caplog.set_level(logging.INFO)
    items = Background(produce)
    assert next(items) == 1
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("generator.somewhere", "WARNING", "checked a value with a lock")
    ]
    assert list(items) == [2]
    assert caplog.records[-1].getMessage() == "second"


@needs_fork
def test_an_exception_in_the_child_is_raised_in_the_parent():
    def produce() -> Iterator[int]:
        yield 1
        raise ValueError("docs/x.md: cannot be read")

    items = Background(produce)
    assert next(items) == 1
    with pytest.raises(ValueError, match=r"docs/x\.md: cannot be read"):
        next(items)
    assert not items.forked
    with pytest.raises(StopIteration):
        next(items)


class LocalError(Exception):
    def __init__(self, lock: threading.Lock) -> None:
        super().__init__("held a lock")
        self.lock = lock


@needs_fork
def test_an_exception_that_does_not_pickle_arrives_as_its_description():
    def produce() -> Iterator[int]:
        raise LocalError(threading.Lock())
        yield 0

    with pytest.raises(RuntimeError, match="LocalError: held a lock"):
        list(Background(produce))


@needs_fork
def test_an_item_that_does_not_pickle_is_an_error_after_the_items_before_it():
    def produce() -> Iterator[object]:
        yield 1
        yield threading.Lock()

    items = Background(produce)
    assert next(items) == 1
    with pytest.raises(TypeError, match="pickle"):
        next(items)


@needs_fork
def test_a_child_that_dies_is_a_clear_error_and_is_waited_for():
    def produce() -> Iterator[int]:
        yield 1
        os.kill(os.getpid(), signal.SIGKILL)
        yield 2

    items = Background(produce)
    pid = items.pid
    assert next(items) == 1
    with pytest.raises(BackgroundFailed, match=r"without finishing its work \(killed by SIGKILL\)"):
        next(items)
    assert pid is not None and not items.forked
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)


@needs_fork
def test_close_stops_a_child_that_is_still_working():
    def produce() -> Iterator[int]:
        yield 1
        while True:
            time.sleep(1)

    items = Background(produce)
    pid = items.pid
    assert next(items) == 1
    items.close()
    assert pid is not None and not items.forked
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)
    with pytest.raises(StopIteration):
        next(items)
    items.close()  # twice is harmless
