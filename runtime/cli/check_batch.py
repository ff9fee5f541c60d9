"""``hloforge check`` over many files, each in isolation: a file that kills its process fails alone.

One worker process (``python -m hloforge.runtime.cli.check_batch``) runs the files one after another,
reading a path per line on stdin and answering one JSON line per file. When a file kills the worker
(XLA aborts or segfaults on some invalid programs), that file fails with the signal's name and a new
worker takes the rest, so one bad file never ends the batch.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from hloforge.runtime.checkfile import CheckResult, run_check_file


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the process running this file was killed by {name}"
    return f"the process running this file exited with code {returncode}"


class _Worker:
    def __init__(self, optimize: bool, device: str | None):
        command = [sys.executable, "-m", "hloforge.runtime.cli.check_batch"]
        if optimize:
            command.append("--optimize")
        if device:
            command += ["--device", device]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        bufsize=1)

    def run(self, path: str):
        """The file's CheckResult, or None when the worker died on it."""
        try:
            self.process.stdin.write(path + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            return None
        answer = json.loads(line)
        return CheckResult(path, answer["ok"], answer["reason"])

    def death(self) -> str:
        return _death(self.process.wait())

    def close(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        self.process.wait()


def run_isolated(paths, optimize: bool = False, device: str | None = None):
    """Yield one CheckResult per path, in order, each file run in a worker process."""
    worker = None
    try:
        for path in paths:
            path = str(path)
            if "\n" in path:
                yield CheckResult(path, False, "the path holds a line break")
                continue
            worker = worker or _Worker(optimize, device)
            result = worker.run(path)
            if result is None:
                result, worker = CheckResult(path, False, worker.death()), None
            yield result
    finally:
        if worker is not None:
            worker.close()


def _serve(optimize: bool, device: str | None) -> None:
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # (anything else printed, by Python or by XLA, goes to stderr, not into the answers)
    for line in sys.stdin:
        try:
            result = run_check_file(line.rstrip("\n"), optimize=optimize, device=device)
        except Exception as e:  # (one file's failure, whatever it is: report it, go on)
            result = CheckResult(line, False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        answers.write(json.dumps({"ok": result.ok, "reason": result.reason}) + "\n")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    device = arguments[arguments.index("--device") + 1] if "--device" in arguments else None
    _serve("--optimize" in arguments, device)
