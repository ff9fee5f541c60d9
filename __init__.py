"""hloforge: build, rewrite and run StableHLO programs from Python.

``import hloforge`` loads only ``hf.config`` (and jax's runtime, which it configures); every other
public name, and the ``hloforge.numpy`` / ``ops`` / ``nn`` / ``lax`` / ``random`` namespaces, load
on first use (PEP 562). ``python -X importtime -c "import hloforge"`` shows what is left.
"""
import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys

__version__ = "0.1.0"

from hloforge.runtime.settings import config  # noqa: E402  (XLA's log level is set before any backend starts)

# public name -> (module, attribute)
_NAMES = {
    **{name: ("hloforge.frontend.jit", name) for name in ("jit", "Jitted")},
    "trace": ("hloforge.frontend.trace_function", "trace"),
    "from_jax": ("hloforge.frontend.from_jax", "from_jax"),
    **{name: ("hloforge.frontend.to_jax", name) for name in ("to_jax", "optimize")},
    "Module": ("hloforge.frontend.module", "Module"),
    "ShapeDtype": ("hloforge.frontend.module", "ShapeDtype"),
    "Tensor": ("hloforge.frontend.tracing", "Tensor"),
    "PassReport": ("hloforge.passes.report", "PassReport"),
    "Executable": ("hloforge.runtime.executable", "Executable"),
    "ShardedExecutable": ("hloforge.runtime.sharded", "ShardedExecutable"),
    "DynamicExecutable": ("hloforge.runtime.dynamic", "DynamicExecutable"),
    **{name: ("hloforge.runtime.pjrt", name) for name in (
        "devices", "Mesh", "NamedSharding", "DeviceNotFoundError", "CompileError", "ExecutionError")},
    "P": ("hloforge.runtime.pjrt", "PartitionSpec"),
    "UnsupportedOnDevice": ("hloforge.target", "UnsupportedOnDevice"),
    **{name: ("hloforge.frontend.ad", name) for name in (
        "grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "custom_vjp", "custom_jvp")},
    "closure_convert": ("hloforge.frontend.ad.custom", "closure_convert"),
    "stop_gradient": ("hloforge.frontend.lax", "stop_gradient"),  # the eager-wrapped one
    "vmap": ("hloforge.frontend.batching", "vmap"),
    **{name: ("hloforge.frontend.ad.checkpoint", name) for name in (
        "checkpoint", "remat", "checkpoint_policies", "checkpoint_name")},
    **{name: ("hloforge.frontend.api_extras", name) for name in ("eval_shape", "ShapeDtypeStruct")},
    **{name: ("hloforge.runtime.placement", name) for name in ("device_put", "block_until_ready")},
    "bfloat16": ("hloforge.frontend.dtypes", "bfloat16"),
    "pure_callback": ("hloforge.frontend.callbacks", "pure_callback"),
    "io_callback": ("hloforge.frontend.callbacks", "io_callback"),
}
# `hloforge.numpy` etc. are these modules: as attributes, and for `import hloforge.numpy` (never a
# second copy of a module)
_SUBMODULES = {
    "numpy": "hloforge.frontend.numpy", "numpy.fft": "hloforge.frontend.numpy.fft",
    "numpy.linalg": "hloforge.frontend.numpy.linalg", "ops": "hloforge.frontend.ops", "nn": "hloforge.frontend.nn",
    "nn.initializers": "hloforge.frontend.nn.initializers",
    "lax": "hloforge.frontend.lax", "lax.linalg": "hloforge.frontend.lax.linalg", "random": "hloforge.frontend.random",
    "tree_util": "jax.tree_util", "tree": "jax.tree",  # (jax's own modules, re-exported)
    "debug": "hloforge.frontend.debug",
}
# What a program that touches any of the names above needs although that name's module may not
# import it: Tensor's operators (attached by hloforge.numpy), Module.optimize and Module.compile
# (attached by the passes and the runtime, the layers above the core), hf.jit for eager calls
# (frontend/eager.py). Module.vjp and Module.jvp,
# attached by the AD package, load it (and its rules) on their first call; Module.vmap loads the
# batching package (and its rules) the same way.
_COMPLETE = ("hloforge.frontend.numpy", "hloforge.runtime.compiler", "hloforge.frontend.jit")
_completed = []


def _complete() -> None:
    if not _completed:
        for name in _COMPLETE:
            _importlib.import_module(name)
        _defer_ad(_sys.modules["hloforge.frontend.module"].Module)
        _completed.append(True)


# Module methods -> (the module that attaches the real one, what it is, for the stand-in's docstring)
_DEFERRED_METHODS = {
    "vjp": ("hloforge.frontend.ad", "hloforge's AD (hf.grad's package)"),
    "jvp": ("hloforge.frontend.ad", "hloforge's AD (hf.grad's package)"),
    "vmap": ("hloforge.frontend.batching.module_vmap", "hloforge's batching (hf.vmap's package)"),
}


def _defer_ad(module_class) -> None:
    for name, (module, what) in _DEFERRED_METHODS.items():
        if name not in module_class.__dict__:  # (its package is not loaded yet)
            setattr(module_class, name, _load_then(name, module, what, module_class))


def _load_then(name: str, module: str, what: str, module_class):
    def method(self, *args, **kwargs):
        _importlib.import_module(module)  # (replaces this method with the real one)
        real = module_class.__dict__[name]
        if real is method:
            raise RuntimeError(f"{module} did not define Module.{name}")
        return real(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Module.{name}: loads {what} on the first call, then runs it."
    return method


def _submodule(name: str):
    _complete()
    return _importlib.import_module(_SUBMODULES[name])


def __getattr__(name):
    if name in _NAMES:
        module, attribute = _NAMES[name]
        if not module.startswith("hloforge.runtime.pjrt"):
            _complete()
        value = getattr(_importlib.import_module(module), attribute)
    elif name in _SUBMODULES:
        value = _submodule(name)
    else:
        raise AttributeError(f"module 'hloforge' has no attribute {name!r}")
    globals()[name] = value  # (the next access is a plain attribute)
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Aliases(_abc.MetaPathFinder, _abc.Loader):
    """``import hloforge.numpy`` (and the other ``_SUBMODULES``) imports the real module and binds it
    under the public name too."""

    def __init__(self, package: str):
        self.package = package  # (pytest may import this file a second time under another name)

    def find_spec(self, fullname, path=None, target=None):
        prefix = self.package + "."
        short = fullname[len(prefix):] if fullname.startswith(prefix) else None
        return _util.spec_from_loader(fullname, self) if short in _SUBMODULES else None

    def create_module(self, spec):
        module = _submodule(spec.name[len(self.package) + 1:])
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module):
        # (the import system set __spec__ to the alias's spec: the module keeps its own)
        module.__spec__ = module.__spec__.loader_state


_sys.meta_path[:] = [f for f in _sys.meta_path  # (importlib.reload: one finder per package name)
                     if type(f).__qualname__ != "_Aliases" or getattr(f, "package", None) != __name__]
_sys.meta_path.insert(0, _Aliases(__name__))

__all__ = ["jit", "trace", "Jitted", "from_jax", "Module", "ShapeDtype", "Tensor", "PassReport", "Executable",
           "ShardedExecutable", "DynamicExecutable", "devices", "config", "Mesh", "NamedSharding", "P",
           "DeviceNotFoundError", "CompileError", "UnsupportedOnDevice", "ExecutionError", "grad", "value_and_grad", "vjp", "jvp",
           "jacfwd", "jacrev", "hessian", "custom_vjp", "custom_jvp", "closure_convert", "stop_gradient", "vmap", "numpy", "ops", "nn", "lax",
           "random", "bfloat16", "__version__",
           "checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "eval_shape", "ShapeDtypeStruct",
           "device_put", "block_until_ready", "tree_util", "tree", "debug", "pure_callback", "io_callback"]
