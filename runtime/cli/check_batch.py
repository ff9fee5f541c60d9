"""``hloforge check`` over many files, each in isolation: a file that kills its process fails alone.

One worker process (``python -c "...check_batch import main; main()"``) runs the files one after
another: it says ``{"ready": true}`` once started, then reads a path per line on stdin and answers one
JSON line per file, ``{"results": [{"function", "line", "ok", "reason"}, ...]}``, one entry per test
function. When a file kills the worker (XLA aborts or segfaults on some invalid programs) or takes
longer than the timeout (the worker is then killed), that file fails with the reason and a new worker
takes the rest, so one bad file never ends the batch. The worker sees
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (unless XLA_FLAGS sets a count already), so
``interpreter.run_parallel`` has CPU devices to run on.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys

from hloforge.runtime.check_parallel import DEVICE_FLAG
from hloforge.runtime.checkfile import CheckResult, check_file

CPU_DEVICES = 8  # (StableHLO's run_parallel tests use up to 5 processes)
TIMEOUT = 600.0  # seconds a file may take (StableHLO's largest testdata files take a few)


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the process running this file was killed by {name}"
    return f"the process running this file exited with code {returncode}"


def _environment() -> dict:
    env = dict(os.environ)
    flags = env.get("XLA_FLAGS", "")
    if DEVICE_FLAG not in flags:
        env["XLA_FLAGS"] = f"{flags} {DEVICE_FLAG}={CPU_DEVICES}".strip()
    return env


class _Worker:
    def __init__(self, optimize: bool, device: str | None, finite_math: bool = False, timeout: float = TIMEOUT):
        # (-c, not -m: running a module of an imported package as __main__ makes runpy warn)
        command = [sys.executable, "-c", "from hloforge.runtime.cli.check_batch import main; main()"]
        self.timeout, self.timed_out, self.ready = timeout, False, False
        if optimize:
            command.append("--optimize")
        if finite_math:
            command.append("--finite-math")
        if device:
            command += ["--device", device]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        bufsize=1, env=_environment())

    def run(self, path: str):
        """The file's CheckResults, or None when the worker died on it or ran out of time (then it is
        killed)."""
        try:
            if not self.ready:  # (the clock starts once the worker has imported everything)
                self.ready = bool(self.process.stdout.readline())
                if not self.ready:
                    return None
            self.process.stdin.write(path + "\n")
            self.process.stdin.flush()
            ready, _, _ = select.select([self.process.stdout], [], [], self.timeout)
            if not ready:
                self.timed_out = True
                self.process.kill()
                return None
            line = self.process.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            return None
        return [CheckResult(path, r["ok"], r["reason"], r["function"], r["line"], r.get("piece"))
                for r in json.loads(line)["results"]]

    def death(self) -> str:
        code = self.process.wait()
        if self.timed_out:
            return f"timed out after {self.timeout:g} s (the process running this file was stopped)"
        return _death(code)

    def close(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        self.process.wait()


def run_isolated(paths, optimize: bool = False, device: str | None = None, finite_math: bool = False,
                 timeout: float = TIMEOUT):
    """Yield the CheckResults of each path (one per test function), in order, each file run in a
    worker process; a file that takes more than ``timeout`` seconds fails."""
    worker = None
    try:
        for path in paths:
            path = str(path)
            if "\n" in path:
                yield CheckResult(path, False, "the path holds a line break")
                continue
            worker = worker or _Worker(optimize, device, finite_math, timeout)
            results = worker.run(path)
            if results is None:
                results, worker = [CheckResult(path, False, worker.death())], None
            yield from results
    finally:
        if worker is not None:
            worker.close()


def _answer(path: str, optimize: bool, device: str | None, finite_math: bool) -> dict:
    try:
        results = check_file(path, optimize=optimize, device=device, finite_math=finite_math)
    except Exception as e:  # (one file's failure, whatever it is: report it, go on)
        results = [CheckResult(path, False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")]
    return {"results": [{"function": r.function, "line": r.line, "piece": r.piece, "ok": r.ok, "reason": r.reason}
                        for r in results]}


def _serve(optimize: bool, device: str | None, finite_math: bool) -> None:
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # (anything else printed, by Python or by XLA, goes to stderr, not into the answers)
    answers.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        answers.write(json.dumps(_answer(line.rstrip("\n"), optimize, device, finite_math)) + "\n")


def main() -> None:
    """The worker: ``--optimize``, ``--finite-math`` and ``--device DEVICE`` as hloforge check's."""
    arguments = sys.argv[1:]
    device = arguments[arguments.index("--device") + 1] if "--device" in arguments else None
    _serve("--optimize" in arguments, device, "--finite-math" in arguments)


if __name__ == "__main__":
    main()
