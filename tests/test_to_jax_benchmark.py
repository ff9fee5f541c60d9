"""benchmarks/to_jax.py's parts on an accelerator: the fresh-process first steps run in children, so the
process that starts them must never open the device (a TPU is held by one process at a time)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import to_jax  # noqa: E402


@pytest.fixture
def parts(monkeypatch):
    """Every part replaced by a recorder; opening a device is recorded too."""
    calls = []
    for name in ("fno2d", "tiny", "rollout", "spellings"):
        monkeypatch.setattr(to_jax, name, lambda *a, name=name, **k: calls.append(name) or {})
    monkeypatch.setattr(to_jax, "processes", lambda repeats, device: calls.append(("processes", device)) or {})
    monkeypatch.setattr(to_jax, "use_device", lambda kind: calls.append(("use_device", kind)))
    monkeypatch.setattr(to_jax, "TARGETS", dict(to_jax.TARGETS))
    return calls


def test_the_processes_part_leaves_the_device_to_its_children(parts):
    to_jax.main(["--only", "processes", "--device", "tpu", "--quick"])
    assert parts == [("processes", "tpu")]


def test_a_whole_run_on_an_accelerator_skips_the_processes_part(parts, capsys):
    to_jax.main(["--device", "tpu", "--quick"])
    assert parts == [("use_device", "tpu"), "fno2d", "tiny", "rollout", "spellings"]
    assert "run them with --only processes" in capsys.readouterr().out


def test_a_whole_run_on_the_cpu_has_every_part(parts):
    to_jax.main(["--device", "cpu", "--quick"])
    assert parts == [("use_device", "cpu"), "fno2d", "tiny", "rollout", "spellings", ("processes", "cpu")]
