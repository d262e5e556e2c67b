"""A load generator: processes spinning in plain Python at normal priority, one per core by default (as other work on
a station PC would keep it busy). The tests of a start under load and the benchmarks of a loaded machine share it."""

import contextlib
import multiprocessing

# spawned, not forked: a test process has threads, and a fork of it may deadlock (Python 3.12 warns)
_CONTEXT = multiprocessing.get_context("spawn")


def _busy(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@contextlib.contextmanager
def busy_cores(count: int = multiprocessing.cpu_count()):
    stop = _CONTEXT.Event()
    load = [_CONTEXT.Process(target=_busy, args=(stop,), daemon=True) for _ in range(count)]
    for process in load:
        process.start()
    try:
        yield
    finally:
        stop.set()
        for process in load:
            process.join()
