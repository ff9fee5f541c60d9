"""Issue 18 regressions: recursion through hf.jit, nested hf.jit, executables on a device other
than the first. Cases that used to hang run in subprocesses with timeouts."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from helpers import assert_close


def _python(code: str, env=None, timeout=60):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=timeout, env=dict(os.environ, **(env or {})))
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    return out.stdout


def test_a_jitted_function_that_calls_itself_is_an_error_not_a_deadlock():
    out = _python("""
        import numpy as np, hloforge as hf
        @hf.jit
        def g(x):
            return g(x)
        @hf.jit
        def h(x):  # calls itself with concrete values while being traced (used to wait on its lock)
            return h(np.ones(2, np.float32)) + x
        for f in (g, h):
            try:
                f(np.ones(2, np.float32))
            except RecursionError as e:
                print("error:", e)
        """)
    lines = out.splitlines()
    assert lines == [f"error: jit: {n} calls itself while it is being traced; hloforge cannot trace recursion "
                     f"(unroll it with a Python loop instead)" for n in ("g", "h")], out


def test_nested_jit_traces_inline():
    inner = hf.jit(lambda x: hnp.sin(x) * 2.0)
    outer = hf.jit(lambda x, y: inner(x) + inner(y) * y)
    x, y = np.linspace(0, 1, 4, dtype=np.float32), np.full(4, 3, np.float32)
    assert_close(outer(x, y), np.sin(x) * 2 + np.sin(y) * 2 * y)
    counts = outer.lower(x, y).op_counts()
    assert counts["stablehlo.sine"] == 2 and "func.call" not in counts
    assert_close(inner(x), np.sin(x) * 2)  # still callable (and compiled) on its own
    nested_kwargs = hf.jit(lambda x: inner(x=x))
    assert_close(nested_kwargs(x), np.sin(x) * 2)


def test_nested_sharded_jit_traces_inline():
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("batch",))
    inner = hf.jit(lambda x: x * 2.0, in_shardings=hf.P("batch"), mesh=mesh)
    outer = hf.jit(lambda x: inner(x) + 1.0)
    assert_close(outer(np.ones(2, np.float32)), np.full(2, 3, np.float32))


def test_executables_on_the_second_device():
    out = _python("""
        import jax, numpy as np, hloforge as hf
        d0, d1 = hf.devices("cpu")
        x = np.arange(3, dtype=np.float32)
        f = hf.jit(lambda a: a * 2.0, device=d1)
        for _ in range(3):  # the Python path, then jax's C++ loop
            y = f(x)
            assert y.devices() == {d1} and np.asarray(y).tolist() == [0, 2, 4], y
        exe = hf.trace(lambda a: a + 1.0, x).compile(device=d1)
        for arg in (x, x, jax.device_put(x, d0), y):
            z = exe(arg)
            assert z.devices() == {d1}, z.devices()
        assert np.asarray(exe(x)).tolist() == [1, 2, 3]
        assert hf.trace(lambda a: a + 1.0, x).compile(device=d0)(y).devices() == {d0}
        print("OK")
        """, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert out.strip() == "OK"


@pytest.mark.parametrize("bad", ["<f4", ">f4"])
def test_byte_order_does_not_change_the_signature(bad):
    f = hf.jit(lambda a: a + 1.0)
    f(np.ones(2, np.float32))
    f(np.ones(2, bad))
    assert f.cache_size() == 1
