"""hloforge: build, rewrite and run StableHLO programs from Python."""
import sys as _sys

from hloforge.frontend import lax, nn, numpy, ops, random
from hloforge.frontend.ad import custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp
from hloforge.frontend.dtypes import bfloat16
from hloforge.frontend.from_jax import from_jax
from hloforge.frontend.jit import Jitted, jit, trace
from hloforge.frontend.lax.autodiff import stop_gradient
from hloforge.frontend.module import Module, ShapeDtype
from hloforge.frontend.tracing import Tensor
from hloforge.passes import PassReport
from hloforge.runtime import (
    CompileError, DeviceNotFoundError, DynamicExecutable, Executable, ExecutionError, Mesh, NamedSharding,
    ShardedExecutable, config, devices)
from hloforge.runtime import PartitionSpec as P

__version__ = "0.1.0"

# `import hloforge.numpy` / `hloforge.numpy.fft` / `hloforge.numpy.linalg` / `hloforge.ops` / `hloforge.nn`
# / `hloforge.lax` / `hloforge.lax.linalg` / `hloforge.random` work like the attributes above (and never
# load a second copy of a module).
for _name, _mod in (("numpy", numpy), ("numpy.fft", numpy.fft), ("numpy.linalg", numpy.linalg), ("ops", ops),
                    ("nn", nn), ("lax", lax), ("lax.linalg", lax.linalg), ("random", random)):
    _sys.modules[f"{__name__}.{_name}"] = _mod

__all__ = ["jit", "trace", "Jitted", "from_jax", "Module", "ShapeDtype", "Tensor", "PassReport", "Executable",
           "ShardedExecutable", "DynamicExecutable", "devices", "config", "Mesh", "NamedSharding", "P",
           "DeviceNotFoundError", "CompileError", "ExecutionError", "grad", "value_and_grad", "vjp", "jvp",
           "jacfwd", "jacrev", "hessian", "custom_vjp", "custom_jvp", "stop_gradient", "numpy", "ops", "nn", "lax",
           "random", "bfloat16", "__version__"]
