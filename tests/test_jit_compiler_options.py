"""``hf.jit(compiler_options=...)`` and ``Module.compile(compiler_options=...)``: XLA options per function,
as jax.jit's. Each path that compiles (the plain call, without passes, static arguments, a mesh,
``lower().compile()``, host callbacks, the deferred truncated program) is checked by XLA's own dump:
``xla_dump_to`` writes the module it compiles into the directory named, so files there show the option
reached XLA."""
import glob
import os

import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from hloforge.runtime import pjrt
from hloforge.runtime.targets import resolve_target

X = np.linspace(-1, 1, 6, dtype=np.float32)


def sine(x, scale=2.0):
    return hnp.sin(x) * scale


def printing(x):
    hf.debug.print("x = {}", x)
    return sine(x)


def dumped(directory) -> int:
    """How many modules XLA compiled with ``xla_dump_to=directory``."""
    return len(glob.glob(os.path.join(directory, "*before_optimizations.txt")))


def _mesh_jit(options):
    mesh = hf.Mesh(np.array(hf.devices("cpu")[:1]), ("x",))
    return hf.jit(sine, in_shardings=hf.P("x"), mesh=mesh, compiler_options=options)


PATHS = {
    "call": lambda options: hf.jit(sine, compiler_options=options)(X),
    "without passes": lambda options: hf.jit(sine, optimize=False, compiler_options=options)(X),
    "static argument": lambda options: hf.jit(sine, static_argnums=1, compiler_options=options)(X, 3.0),
    "mesh": lambda options: _mesh_jit(options)(X),
    "lower().compile()": lambda options: hf.jit(sine, compiler_options=options).lower(X).compile()(X),
    "Module.compile": lambda options: hf.jit(sine).lower(X).compile("cpu", compiler_options=options)(X),
    "host callback": lambda options: hf.jit(printing, device="cpu", compiler_options=options)(X),
}


@pytest.mark.parametrize("path", list(PATHS))
def test_the_options_reach_xla(tmp_path, path):
    out = PATHS[path]({"xla_dump_to": str(tmp_path)})
    assert dumped(tmp_path) >= 1
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * (3.0 if path == "static argument" else 2.0),
                               rtol=1e-6)


def test_lower_compile_adds_its_options_to_the_jits(tmp_path):
    first, second = tmp_path / "jit", tmp_path / "compile"
    lowered = hf.jit(sine, compiler_options={"xla_dump_to": str(first)}).lower(X)
    lowered.compile(compiler_options={"xla_dump_to": str(second)})(X)
    assert dumped(second) == 1 and not first.exists()  # (the later option wins, as in jax)


def test_the_deferred_truncated_program_compiles_with_them(tmp_path):
    before = hf.config.first_call
    hf.config.first_call = "fast"
    try:
        x = np.random.default_rng(0).standard_normal((2, 16, 16)).astype(np.float32)
        f = hf.jit(lambda x: hnp.fft.irfft2(hnp.fft.rfft2(x)[:, :4, :4], s=(16, 16)),
                   compiler_options={"xla_dump_to": str(tmp_path)})
        f(x)
        f(x)
        assert f.finish_compiling(timeout=120)
        assert dumped(tmp_path) == 2  # (the program with its FFTs, then the truncated one)
        (entry,) = f._cache.values()
        assert "fft(" not in entry[0].hlo_text
    finally:
        hf.config.first_call = before


def test_each_set_of_options_compiles_its_own_executable():
    # (a program compiled with other options is not reused: XLA sees, and refuses, this one's)
    hf.jit(sine, compiler_options={"xla_backend_optimization_level": 1})(X)
    with pytest.raises(hf.CompileError, match="No such compile option: 'no_such_option'"):
        hf.jit(sine, compiler_options={"no_such_option": 1})(X)
    with pytest.raises(hf.CompileError, match="No such compile option: 'no_such_option'"):
        hf.jit(sine).lower(X).compile(compiler_options={"no_such_option": 1})


def test_xla_refuses_a_value_of_the_wrong_kind():
    with pytest.raises(hf.CompileError, match="'abc' is not a valid int32 value"):
        hf.jit(sine, compiler_options={"xla_backend_optimization_level": "abc"})(X)


@pytest.mark.parametrize("options, message", [
    ([("xla_dump_to", "/tmp")], r"hf.jit: compiler_options must be a dict of XLA option names to values, got \["),
    ({1: 2}, r"hf.jit: compiler_options maps XLA option names \(str\) to str, bool, int or float values, got 1: 2"),
    ({"xla_dump_to": None}, r"got 'xla_dump_to': None"),
    ({"xla_backend_optimization_level": [1]}, r"got 'xla_backend_optimization_level': \[1\]"),
])
def test_options_that_are_not_a_dict_of_names_and_values(options, message):
    with pytest.raises(TypeError, match=message):
        hf.jit(sine, compiler_options=options)
    with pytest.raises(TypeError, match=message.replace("hf.jit", "Module.compile")):
        hf.jit(sine).lower(X).compile(compiler_options=options)


def test_the_users_options_win_over_hloforges():
    target = resolve_target("cpu", compiler_options={"xla_backend_optimization_level": 3,
                                                     "xla_cpu_experimental_ynn_fusion_type": "default"})
    want = {"xla_backend_optimization_level": 3, "xla_cpu_experimental_ynn_fusion_type": "default"}
    assert target.options() == want and target.options(partial_dfts=True) == want
    assert resolve_target(target) is target and resolve_target(target, compiler_options={}) is target
    assert resolve_target(target, compiler_options={"xla_dump_to": "/tmp/d"}).options()["xla_dump_to"] == "/tmp/d"


def test_effort_and_level_options_go_on_the_build_options_as_in_jax():
    options = pjrt.compile_options(hf.devices("cpu")[:1], None, {"optimization_level": 1, "memory_fitting_level": 2,
                                                                 "xla_backend_optimization_level": 0})
    build = options.executable_build_options
    assert (build.optimization_level, build.memory_fitting_level) == (1, 2)
    assert dict(options.env_option_overrides) == {"xla_backend_optimization_level": 0}
    out = hf.jit(sine, compiler_options={"exec_time_optimization_effort": 0.5, "optimization_level": 1})(X)
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * 2, rtol=1e-6)
