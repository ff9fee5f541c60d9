"""Many hosts: 2 local processes (jax.distributed over loopback, gloo collectives on CPU, 2 devices
each) run an hf.jit SPMD program over the 4-device global mesh and 3 data-parallel SGD steps of a tiny
FNO-1D (tests/runtime/multiprocess_worker.py)."""
import os
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_spmd_over_two_processes():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "multiprocess_worker.py"), str(i), port],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
             for i in range(2)]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=TIMEOUT)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for i, (p, out) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0 and f"process {i}: OK" in out, out[-3000:]
    # both processes end with bit-identical losses and parameters
    digests = [re.search(rf"process {i}: train (\w+) loss (\S+)", out) for i, out in enumerate(outputs)]
    assert all(digests), outputs
    assert digests[0].groups() == digests[1].groups(), [d.group(0) for d in digests]
