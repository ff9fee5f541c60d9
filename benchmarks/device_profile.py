"""Where a program's device time goes: each XLA op's time per call, from a jax.profiler trace, grouped
by kind, for jax.jit against hloforge (issues 46 and 47: which ops of the FNO-2D keep hloforge's TPU
programs from their targets).

    python benchmarks/device_profile.py [--device tpu] [--size b,n,width,modes] [--calls 10] [--out DIR] [--step]
                                        [--planes] [--host]

It profiles the FNO-2D of benchmarks/to_jax.py (4 layers, 3 input channels, jax arrays on the device) four
ways: the forward and ``value_and_grad`` of its mean squared error, each through plain ``jax.jit`` and
through ``jax.jit(hf.optimize(...))``; ``--step`` adds a training step with optax's Adam three ways (plain,
the model through hf.optimize, the whole step through hf.optimize), and ``--planes`` two more with the
spectral weights stored as float32 (real, imaginary) planes. It prints one table per kind of program: device
time per call by kind of op (fusions by XLA's fusion kind, copies, custom calls by target, the rest by
opcode). ``--out DIR`` writes every op's time and XLA's text of it (``<case>.ops.txt``) and each compiled
program (``<case>.hlo.txt``).
``--host`` also times each case from the host (``host_times``): the enqueue of a call alone, a call waited
for, and calls queued 5 (the benchmarks' queued rows) and 40 per wait, beside its device time. That splits
a queued ratio into the programs' own time and what each wait costs.

``HLOFORGE_DFT_PRECISION=high`` (or "default") profiles hloforge's programs with that precision of their DFT
contractions (docs/passes.md); to compare variants of hloforge's own code, set ``HLOFORGE_CACHE_DIR=`` so that
no process reads another's pipeline result.

On a TPU the times are the "XLA Ops" of the device plane, and the call's own time is its "XLA Modules"
line; on the CPU, XLA's ops are the events of its thread pools (no module line: the ops' sum is shown).
Figures (TPU v5e, 2026-12-07) are in docs/benchmarks.md, "Tenth session" and "Eleventh session".
"""
import argparse
import collections
import glob
import os
import re
import statistics
import sys
import tempfile
import time

import numpy as np
import jax
import jax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
from timing import use_device  # noqa: E402

_OP = re.compile(r"%(\S+) = (.*)$")


def _framework_event(name: str) -> bool:
    """Events of XLA:CPU's thread pools that are not ops (``ThunkExecutor::Execute``, ``end:``, ...)."""
    return "::" in name or name.startswith("end:")


def op_times(fn, args, calls=10):
    """(device time per call in µs or None, {op: [µs per call, count per call, XLA's text]}) of ``fn(*args)``,
    from a trace of ``calls`` calls after three warm-up calls."""
    for _ in range(3):
        jax.block_until_ready(fn(*args))
    with tempfile.TemporaryDirectory() as directory:
        with jax.profiler.trace(directory):
            for _ in range(calls):
                out = fn(*args)
            jax.block_until_ready(out)
        path = glob.glob(os.path.join(directory, "**", "*.xplane.pb"), recursive=True)[0]
        data = jax.profiler.ProfileData.from_file(path)
        module_ns, ops = 0.0, collections.defaultdict(lambda: [0.0, 0, ""])
        for plane in data.planes:
            device = plane.name.startswith("/device:")
            if not device and plane.name != "/host:CPU":
                continue
            for line in plane.lines:
                if device and line.name == "XLA Modules":
                    module_ns += sum(e.duration_ns for e in line.events)
                if (device and line.name == "XLA Ops") or (not device and line.name.startswith("tf_XLA")):
                    for e in line.events:
                        if not device and _framework_event(e.name):
                            continue
                        entry = ops[e.name]
                        entry[0] += e.duration_ns
                        entry[1] += 1
    table = {name: [ns / calls / 1e3, count // calls or 1, name] for name, (ns, count, _) in ops.items()}
    return (module_ns / calls / 1e3 if module_ns else None), table


def host_times(fn, args, rounds=7, deep=40) -> dict:
    """µs per call of ``fn(*args)`` seen from the host, medians over ``rounds``: "enqueue" (``deep`` calls
    issued without a wait, the issuing alone; once the runtime's limit of calls in flight is reached, issuing
    waits for the device, so for long programs it reads as part of their device time), "waited" (each call
    waited for), "queued 5" (5 calls per wait, as the benchmarks' queued rows) and "queued 40" (``deep`` calls
    per wait: the device's pace plus the gaps between calls)."""
    def per_call(calls):
        jax.block_until_ready(fn(*args))
        t = time.perf_counter()
        outs = [fn(*args) for _ in range(calls)]
        issued = time.perf_counter()
        jax.block_until_ready(outs)
        return (issued - t) / calls * 1e6, (time.perf_counter() - t) / calls * 1e6
    deep_runs = [per_call(deep) for _ in range(rounds)]
    return {"enqueue": statistics.median(r[0] for r in deep_runs),
            "waited": statistics.median(per_call(1)[1] for _ in range(3 * rounds)),
            "queued 5": statistics.median(per_call(5)[1] for _ in range(3 * rounds)),
            "queued 40": statistics.median(r[1] for r in deep_runs)}


def compare_host(name, rows):
    """Print one table: each (label, host_times result, device µs) of ``rows`` as a row."""
    columns = ("enqueue", "waited", "queued 5", "queued 40")
    print(f"\n{name}: µs per call from the host, and the device's time")
    print(f"  {'':12s}" + "".join(f"{c:>12s}" for c in columns) + f"{'device':>12s}")
    for label, times, device in rows:
        print(f"  {label:12s}" + "".join(f"{times[c]:12.1f}" for c in columns) + f"{device:12.1f}")


def kind(op: str) -> str:
    """The kind of an op of a profile: ``fusion kOutput``, ``copy``, ``custom-call X64SplitLow``, ... from its
    XLA text (TPU, GPU) or its name (CPU)."""
    match = _OP.search(op)
    name, text = (match.group(1), match.group(2)) if match else (op.split()[0], "")
    base = re.sub(r"\.\d+$", "", name)
    if "fusion" in base:
        fusion_kind = re.search(r"kind=(\w+)", text)
        return "fusion " + fusion_kind.group(1) if fusion_kind else "fusion"
    if base == "custom-call":
        target = re.search(r'custom_call_target="([^"]+)"', text)
        return "custom-call " + (target.group(1) if target else "")
    return base


def by_kind(table) -> dict:
    """{kind: (µs per call, ops per call)} of an ``op_times`` table."""
    out = collections.defaultdict(lambda: [0.0, 0])
    for us, count, text in table.values():
        out[kind(text)][0] += us
        out[kind(text)][1] += count
    return {k: tuple(v) for k, v in out.items()}


def call_time(profile) -> float:
    """µs of device time per call of an ``op_times`` result: its module line, else (CPU) its ops' sum."""
    module, table = profile
    return module if module is not None else sum(us for us, _, _ in table.values())


def compare(name, profiles):
    """Print one table: device time per call by kind, for each (label, (module µs, table)) in ``profiles``."""
    kinds = [by_kind(table) for _, (_, table) in profiles]
    totals = [call_time(profile) for _, profile in profiles]
    rows = sorted({k for ks in kinds for k in ks}, key=lambda k: -max(ks.get(k, (0, 0))[0] for ks in kinds))
    print(f"\n{name}: device time per call (µs, ops)")
    print(f"  {'kind':32s}" + "".join(f"{label:>22s}" for label, _ in profiles))
    for row in rows:
        print(f"  {row:32s}" + "".join(f"{ks.get(row, (0.0, 0))[0]:14.1f} ({ks.get(row, (0.0, 0))[1]:4d})"
                                       for ks in kinds))
    print(f"  {'the call':32s}" + "".join(f"{t:14.1f}       " for t in totals))
    return dict(zip((label for label, _ in profiles), totals))


def _fno(batch, n, width, modes):
    """(the FNO-2D model, its loss, and its arguments: parameters, input, target) as jax arrays on the device."""
    rng = np.random.default_rng(0)
    params = jax.tree.map(jnp.asarray, models.fno_params(2, (modes, modes), width, 4, 3, rng))
    x = jnp.asarray(rng.standard_normal((batch, 3, n, n)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((batch, 1, n, n)).astype(np.float32))

    def model(p, v):
        return models.fno(jnp, v, p, (modes, modes), 0)

    def loss_of(f):
        return lambda p, v, t: jnp.mean((f(p, v) - t) ** 2)
    return model, loss_of, (params, x, y)


def fno_cases(batch, n, width, modes):
    """{case: (function, args)}: the FNO-2D forward and value_and_grad, through jax.jit and hf.optimize."""
    import hloforge as hf
    model, loss_of, (params, x, y) = _fno(batch, n, width, modes)
    optimized = hf.optimize(model)
    return {"forward jax": (jax.jit(model), (params, x)), "forward hf": (jax.jit(optimized), (params, x)),
            "value_and_grad jax": (jax.jit(jax.value_and_grad(loss_of(model))), (params, x, y)),
            "value_and_grad hf": (jax.jit(jax.value_and_grad(loss_of(optimized))), (params, x, y))}


def step_cases(batch, n, width, modes, planes=False):
    """{case: (function, args)}: a training step with optax's Adam, as ``fno_cases``' model: plain jax.jit,
    the model through hf.optimize, and the whole step (gradient and update) through hf.optimize. ``planes``
    adds jax's step and hf.optimize's with the spectral weights stored as float32 planes
    (``models.split_planes``): on a TPU each complex64 leaf a program takes or returns costs a split or a
    combine (docs/limits.md)."""
    import optax
    import hloforge as hf
    model, loss_of, (params, x, y) = _fno(batch, n, width, modes)
    optimizer = optax.adam(1e-3)

    def step_of(f):
        def step(p, state, v, t):
            loss, grads = jax.value_and_grad(loss_of(f))(p, v, t)
            updates, state = optimizer.update(models.descent(grads), state, p)
            return optax.apply_updates(p, updates), state, loss
        return step
    args = (params, optimizer.init(params), x, y)
    cases = {"step jax": (jax.jit(step_of(model)), args),
             "step hf": (jax.jit(step_of(hf.optimize(model))), args),
             "step hf-whole": (jax.jit(hf.optimize(step_of(model))), args)}
    if planes:
        split = models.split_planes(params)
        planes_args = (split, optimizer.init(split), x, y)
        cases["step jax-planes"] = (jax.jit(step_of(models.on_planes(model))), planes_args)
        cases["step hf-planes"] = (jax.jit(step_of(hf.optimize(models.on_planes(model)))), planes_args)
    return cases


def positive_int(text: str) -> int:
    """argparse's type for a count: a bad value is one line and exit status 2."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _size(text: str) -> tuple:
    parts = text.split(",")
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected batch,grid,width,modes (four positive integers), got {text!r}")
    return tuple(int(p) for p in parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, choices=("cpu", "gpu", "tpu"),
                        help="default: jax's default device")
    parser.add_argument("--size", default=(8, 64, 32, 12), type=_size,
                        help="batch,grid,width,modes (default 8,64,32,12)")
    parser.add_argument("--calls", type=positive_int, default=10)
    parser.add_argument("--out", default=None, help="a folder for each case's ops and compiled program")
    parser.add_argument("--step", action="store_true", help="also a training step with optax's Adam: the "
                        "model, and the whole step, through hf.optimize")
    parser.add_argument("--planes", action="store_true", help="with --step: also the step with the spectral "
                        "weights as float32 planes, through jax.jit and hf.optimize")
    parser.add_argument("--host", action="store_true", help="also each case's time per call from the host: "
                        "enqueue, waited for, queued 5 and 40 per wait")
    args = parser.parse_args(argv)
    if args.planes and not args.step:
        parser.error("--planes adds cases to --step's table: pass --step too")
    use_device(args.device)
    batch, n, width, modes = args.size
    cases = fno_cases(batch, n, width, modes)
    if args.step:
        cases.update(step_cases(batch, n, width, modes, args.planes))
    profiles, hosts = {}, {}
    for case, (fn, fn_args) in cases.items():
        profiles[case] = op_times(fn, fn_args, args.calls)
        if args.host:
            hosts[case] = host_times(fn, fn_args)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            stem = os.path.join(args.out, case.replace(" ", "_"))
            with open(stem + ".ops.txt", "w") as f:
                for us, count, text in sorted(profiles[case][1].values(), key=lambda v: -v[0]):
                    f.write(f"{us:9.2f} us  x{count}  {text}\n")
            with open(stem + ".hlo.txt", "w") as f:
                f.write(fn.lower(*fn_args).compile().as_text())
    totals = {}
    for what in ("forward", "value_and_grad", "step"):
        who = [case.split(" ", 1)[1] for case in profiles if case.split(" ", 1)[0] == what]
        if who:
            totals[what] = compare(f"FNO-2D b{batch} {n}² width {width} modes {modes}, {what}",
                                   [(w, profiles[f"{what} {w}"]) for w in who])
            if args.host:
                compare_host(f"FNO-2D b{batch} {n}² width {width} modes {modes}, {what}",
                             [(w, hosts[f"{what} {w}"], totals[what][w]) for w in who])
    if args.host:
        totals["host"] = hosts
    return totals


if __name__ == "__main__":
    main()
