"""Smoke test of an installed hloforge, as a user's first minutes use it: ``.ci/run`` installs the wheel
into a fresh environment and runs this from a folder outside the checkout (``python -I``: neither the
checkout nor PYTHONPATH is on the path). Every module of the installed package imports; hf.jit, hf.grad,
hf.vmap and hf.to_jax work on tiny functions; the ``hloforge`` command runs its demo, reads a module on
standard input and lists the cache. Not a pytest file (its name does not start with ``test_``): the
suite tests the checkout, this tests the wheel."""
import importlib
import importlib.metadata
import os
import pkgutil
import subprocess
import sys

import numpy as np

import hloforge as hf

PUBLIC = ("hloforge.numpy", "hloforge.numpy.fft", "hloforge.numpy.linalg", "hloforge.lax", "hloforge.lax.linalg",
          "hloforge.nn", "hloforge.nn.initializers", "hloforge.random", "hloforge.ops", "hloforge.debug")


def check(condition, what):
    if not condition:
        sys.exit(f"smoke: FAIL: {what}")
    print(f"smoke: ok: {what}", flush=True)


def installed_outside(checkout):
    here = os.path.dirname(os.path.realpath(hf.__file__))
    check(os.path.basename(os.path.dirname(here)) == "site-packages" and here != os.path.realpath(checkout),
          f"hloforge imports from the installed wheel ({here}), not from the checkout")


def every_module_imports():
    names = [m.name for m in pkgutil.walk_packages(hf.__path__, "hloforge.") if not m.name.endswith("__main__")]
    for name in names + list(PUBLIC):
        importlib.import_module(name)
    for package in ("hloforge.frontend.batching", "hloforge.frontend.ad", "hloforge.runtime.cli"):
        check(package in names, f"{package} is in the wheel")
    check(len(names) > 100, f"{len(names)} modules and the public namespaces import")


def transformations():
    hnp = hf.numpy
    x = np.arange(4, dtype=np.float32)
    check(np.allclose(hf.jit(lambda v: hnp.sin(v) * 2.0)(x), np.sin(x) * 2.0), "hf.jit")
    check(np.allclose(hf.grad(lambda v: hnp.sum(v * v))(x), 2 * x), "hf.grad")
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    check(np.allclose(hf.vmap(lambda r: hnp.dot(r, r))(rows), (rows * rows).sum(1)), "hf.vmap")
    import jax
    import jax.numpy as jnp
    module = hf.trace(lambda v: hnp.tanh(v) + 1.0, hf.ShapeDtype((4,), np.float32))
    in_jax = hf.to_jax(module)
    check(np.allclose(jax.jit(in_jax)(jnp.asarray(x)), np.tanh(x) + 1.0), "hf.to_jax under jax.jit")
    check(np.allclose(jax.grad(lambda v: in_jax(v).sum())(jnp.asarray(x)), 1 - np.tanh(x) ** 2),
          "jax.grad of hf.to_jax")


def command_line():
    command = os.path.join(os.path.dirname(sys.executable), "hloforge")
    version = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=120)
    check(version.returncode == 0 and version.stdout.strip() == f"hloforge {importlib.metadata.version('hloforge')}",
          f"hloforge --version ({version.stdout.strip() or version.stderr.strip()})")
    demo = subprocess.run([command, "demo", "--quiet"], capture_output=True, text=True, timeout=300)
    check(demo.returncode == 0 and demo.stdout.strip().endswith("OK"),
          f"hloforge demo ({(demo.stdout + demo.stderr).strip().splitlines()[-1:]})")
    text = hf.trace(lambda v: v * 2.0, hf.ShapeDtype((3,), np.float32)).text
    piped = subprocess.run([command, "inspect", "-"], input=text, capture_output=True, text=True, timeout=120)
    check(piped.returncode == 0 and "stablehlo.multiply" in piped.stdout, "hloforge inspect - (a module on stdin)")
    if os.environ.get("HLOFORGE_CACHE_DIR"):  # (.ci/wheel's own directory: hf.jit above wrote entries there)
        listed = subprocess.run([command, "cache", "--list"], capture_output=True, text=True, timeout=120)
        check(listed.returncode == 0 and "PROGRAM" in listed.stdout and " cpu:0 " in listed.stdout,
              "hloforge cache --list")


if __name__ == "__main__":
    installed_outside(sys.argv[1] if len(sys.argv) > 1 else os.getcwd())
    every_module_imports()
    transformations()
    command_line()
    print("smoke: OK")
