"""Many threads: jitted functions and executables called at once; first calls compile once."""
import threading

import numpy as np

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.runtime import cache
from helpers import assert_close, random

THREADS, CALLS = 8, 100


def _run_threads(work):
    """Start THREADS threads at once (a barrier); re-raise the first exception."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def body(t):
        try:
            barrier.wait()
            work(t)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "a thread hung"
    if errors:
        raise errors[0]


def test_jitted_function_from_many_threads():
    f = hf.jit(lambda x, s: hnp.tanh(x) * s + hnp.sum(x))
    inputs = [random((4, 5), np.float32, seed=t) for t in range(THREADS)]

    def work(t):
        x = inputs[t]
        want = np.tanh(x) * 1.5 + x.sum()
        for i in range(CALLS):
            assert_close(f(x, np.float32(1.5)), want)

    _run_threads(work)
    assert f.cache_size() == 1


def test_concurrent_first_calls_trace_and_compile_once():
    traces = []

    def fn(x):
        traces.append(threading.get_ident())
        return hnp.exp(x) - 2.0

    f = hf.jit(fn)
    cache.clear()
    before = cache.stats()["compiles"]
    x = random((6,), np.float32, seed=1)
    results = [None] * THREADS

    def work(t):
        results[t] = np.asarray(f(x))

    _run_threads(work)
    assert len(traces) == 1
    assert cache.stats()["compiles"] - before == 1
    for r in results:
        assert_close(r, np.exp(x) - 2)


def test_executable_from_many_threads():
    exe = hf.trace(lambda a, b: a @ b, hf.ShapeDtype((8, 8), np.float32),
                   hf.ShapeDtype((8, 8), np.float32)).compile()
    mats = [random((8, 8), np.float32, seed=t) for t in range(THREADS)]

    def work(t):
        a = mats[t]
        for i in range(CALLS):
            b = mats[(t + i) % THREADS]
            assert_close(exe(a, b), a @ b)

    _run_threads(work)


def test_same_module_compiled_from_many_threads_compiles_once():
    cache.clear()
    before = cache.stats()["compiles"]
    modules = [hf.trace(lambda x: x * 3.0 - 1.0, hf.ShapeDtype((5,), np.float32)) for _ in range(THREADS)]
    sources = [None] * THREADS

    def work(t):
        sources[t] = modules[t].compile().source

    _run_threads(work)
    assert cache.stats()["compiles"] - before == 1
    assert sorted(sources).count("compiled") == 1


def test_different_signatures_from_many_threads():
    signatures = 4
    f = hf.jit(lambda x: x + x)

    def work(t):
        n = 2 + t % signatures
        x = np.arange(n, dtype=np.float32)
        for _ in range(CALLS // 4):
            assert_close(f(x), 2 * x)

    _run_threads(work)
    assert f.cache_size() == signatures
