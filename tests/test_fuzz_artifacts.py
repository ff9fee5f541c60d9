"""Damaged text, bytecode and portable artifacts: Module.parse/load raise ValueError, never abort.

Everything runs in a subprocess (with a timeout), so that an abort or a hang fails the test
instead of killing the test run.
"""
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)

_SETUP = r"""
import json, sys
import numpy as np
import hloforge as hf
from hloforge import numpy as hnp

def model(x, w):
    y = hnp.fft.rfft(x) * w
    return hnp.tanh(hnp.fft.irfft(y, n=8)) + hnp.pad(x, [(0, 0), (1, 1)])[:, 1:-1] // 2.0

m = hf.trace(model, hf.ShapeDtype((2, 8), np.float32), hf.ShapeDtype((5,), np.complex64))
ARTIFACTS = {"bytecode": m.to_bytecode(), "portable": m.to_portable(),
             "text": m.to_text(debug_info=True).encode()}

def parse(data):
    try:
        parsed = hf.Module.parse(data)
        parsed.text, parsed.op_counts(), parsed.signature
        return "ok"
    except (ValueError, TypeError) as e:
        return f"{type(e).__name__}: {e}"
"""

_FUZZ = _SETUP + r"""
from hypothesis import given, settings, HealthCheck, strategies as st

outcomes = {"ok": 0, "error": 0}

@settings(max_examples=int(sys.argv[1]), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(sorted(ARTIFACTS)), data=st.data())
def fuzz(kind, data):
    blob = bytearray(ARTIFACTS[kind])
    if data.draw(st.booleans(), "truncate"):
        blob = blob[:data.draw(st.integers(0, len(blob) - 1), "length")]
    else:
        for _ in range(data.draw(st.integers(1, 3), "flips")):
            blob[data.draw(st.integers(0, len(blob) - 1), "at")] = data.draw(st.integers(0, 255), "byte")
    result = parse(bytes(blob))
    assert result == "ok" or result.startswith("ValueError: "), result
    outcomes["ok" if result == "ok" else "error"] += 1

fuzz()
print(json.dumps(outcomes))
"""

_KNOWN = _SETUP + r"""
bad_op = (b'func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n %0 = "stablehlo.\xd4dd"(%a, %a) : '
          b'(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n return %0 : tensor<4xf32>\n}')
bad_symbol = b'func.func @"ma\\D4in"(%a: tensor<4xf32>) -> tensor<4xf32> {\n return %a : tensor<4xf32>\n}'
bad_attr_name = (b'func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> attributes {"f\\D4oo" = 1} {\n'
                 b' return %a : tensor<4xf32>\n}')
bad_unregistered = (b'func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n %0 = "x\\D4y"(%a) : '
                    b'(tensor<4xf32>) -> tensor<4xf32>\n return %a : tensor<4xf32>\n}')
# a to_bytecode() blob with one byte of its attribute offset table changed: MLIR's reader
# corrupts the heap on it (malloc aborts)
corrupt = open(sys.argv[1], "rb").read()
results = {name: parse(data) for name, data in [
    ("bad_op", bad_op), ("bad_symbol", bad_symbol), ("bad_attr_name", bad_attr_name),
    ("surrogate", "func.func @main\udcd4() {\n return\n}"), ("corrupt", bytes(corrupt)),
    ("truncated", ARTIFACTS["portable"][:40])]}
try:
    hf.Module.parse(bad_unregistered, allow_unregistered=True)
except ValueError as e:
    results["bad_unregistered"] = f"ValueError: {e}"
print(json.dumps(results))
"""


def _python(script, *args, timeout=120):
    out = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                         timeout=timeout, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1"))
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_corrupted_bytecode_and_portable_artifacts_only_raise_value_errors():
    outcomes = _python(_FUZZ, 150)
    assert outcomes["error"] > 0 and sum(outcomes.values()) == 150


CORRUPT = os.path.join(HERE, "data", "corrupt_attr_offsets.mlirbc")


@pytest.fixture(scope="module")
def known():
    return _python(_KNOWN, CORRUPT)


@pytest.mark.parametrize("name, message", [
    ("bad_op", r"ValueError: Module.parse: invalid MLIR: .*not valid UTF-8"),
    ("bad_symbol", r"ValueError: .*not valid UTF-8.*sym_name = \"ma\\D4in\""),
    ("bad_attr_name", r"ValueError: .*not valid UTF-8.*func.func"),
    ("bad_unregistered", r"ValueError: .*not valid UTF-8"),
    ("surrogate", r"ValueError: Module.parse: the text is not valid Unicode: .*surrogates"),
    ("corrupt", r"ValueError: Module.parse: invalid MLIR bytecode \(928 bytes\): MLIR's bytecode reader "
                r"crashed on it with signal \d+"),
    ("truncated", r"ValueError: Module.parse: invalid MLIR: "),
])
def test_known_damaged_inputs_raise_value_error(known, name, message):
    assert re.search(message, known[name]), known[name]


def test_cli_inspect_of_damaged_bytecode_is_a_one_line_error():
    out = subprocess.run([sys.executable, "-m", "hloforge.runtime.cli.main", "inspect", CORRUPT],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1"))
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr and "invalid MLIR bytecode" in out.stderr.strip().splitlines()[-1]


def test_fresh_interpreter_reads_bytecode_when_the_forked_child_hangs(monkeypatch):
    import numpy as np

    import hloforge as hf
    from hloforge.frontend import parsing
    monkeypatch.setattr(parsing, "_in_forked_child", lambda *args: None)
    m = hf.trace(lambda x: x * 2, hf.ShapeDtype((3,), np.float32))
    assert hf.Module.parse(m.to_bytecode()).text == m.text
    with open(CORRUPT, "rb") as f:
        with pytest.raises(ValueError, match=r"invalid MLIR bytecode \(928 bytes\): .*crashed on it with signal"):
            hf.Module.parse(f.read())


def _spin(data, allow_unregistered, out):
    while True:
        pass


def _block(data, allow_unregistered, out):
    import time
    time.sleep(60)


def test_a_reader_that_loops_is_a_value_error_without_a_second_try(monkeypatch):
    import time

    from hloforge.frontend import parsing
    monkeypatch.setattr(parsing, "FORK_SECONDS", 1.0)
    monkeypatch.setattr(parsing, "_read_bytecode", _spin)  # (the forked child runs this copy)
    monkeypatch.setattr(parsing, "_in_fresh_interpreter", lambda *args: pytest.fail("retried in a fresh interpreter"))
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"did not finish in 1 s: MLIR's bytecode reader loops on it"):
        parsing._bytecode_as_text(b"ML\xefR" + bytes(64), False)
    assert time.monotonic() - start < 10


def test_a_child_that_waits_is_retried_in_a_fresh_interpreter(monkeypatch):
    from hloforge.frontend import parsing
    monkeypatch.setattr(parsing, "FORK_SECONDS", 1.0)
    monkeypatch.setattr(parsing, "_read_bytecode", _block)
    tried = []
    monkeypatch.setattr(parsing, "_in_fresh_interpreter", lambda *args: tried.append(1) or (0, b"module {}"))
    assert parsing._bytecode_as_text(b"ML\xefR" + bytes(64), False) == b"module {}" and tried
