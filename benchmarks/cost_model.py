"""Measure what ``fft-truncate``'s cost model (hloforge/target.py) needs on one device: FFT and DFT times.

    python benchmarks/cost_model.py --device tpu [--json FILE]

Three tables, every time the median of repeated runs of a jax.jit program on the device:
1. the FFTs alone (FFT, IFFT, RFFT, IRFFT over 1-D and 2-D trailing axes) -> ns per point and log2 of
   the transform size (``CostModel.fft_ns``);
2. real ``dot_general`` contractions of the shapes partial DFTs have, at HIGHEST precision (what
   spectral truncation emits) -> ns per flop (``flop_ns``), and zero-filling a spectrum -> ns per byte
   (``byte_ns``);
3. the decision itself: one FNO spectral convolution (rfft2, the kept modes mixed by einsum, pad,
   irfft2) compiled by hloforge with FFTs kept and with partial DFTs, and what the target's model
   chooses; a model is right when it picks the faster program.
The fitted values print as a ``CostModel(...)`` line; docs/passes.md holds the table of a run.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import target

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

ALWAYS_DFT = target.CostModel("always-dft", dict(target.CPU.fft_ns), flop_ns=0.0, byte_ns=0.0)


def timed(fn, *args, repeats=5, calls=20) -> float:
    """Seconds per call of ``fn(*args)``: the median over ``repeats`` of ``calls`` calls dispatched back to
    back and waited for once, so that the device's time is measured, not each call's round trip (on a
    TPU a blocking call costs about 0.5 ms more than the work)."""
    for _ in range(2):
        jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = [fn(*args) for _ in range(calls)]
        jax.block_until_ready(out)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def fft_rows(device, rng, total=2 ** 22):
    rows = []
    for dims, sizes in ((1, (128, 256, 1024, 4096)), (2, (32, 64, 128, 256))):
        for n in sizes:
            points = n ** dims
            batch = max(1, total // points)
            shape = (batch,) + (n,) * dims
            axes = tuple(range(1, 1 + dims))
            real = jax.device_put(rng.standard_normal(shape).astype(np.float32), device)
            cplx = jax.device_put((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64),
                                  device)
            half = jax.device_put(jnp.fft.rfftn(real, axes=axes), device)
            programs = {"FFT": (lambda a: jnp.fft.fftn(a, axes=axes), cplx),
                        "IFFT": (lambda a: jnp.fft.ifftn(a, axes=axes), cplx),
                        "RFFT": (lambda a: jnp.fft.rfftn(a, axes=axes), real),
                        "IRFFT": (lambda a: jnp.fft.irfftn(a, s=(n,) * dims, axes=axes), half)}
            for kind, (fn, arg) in programs.items():
                seconds = timed(jax.jit(fn), arg)
                per = seconds * 1e9 / (batch * points * max(math.log2(points), 1.0))
                rows.append({"kind": kind, "dims": dims, "n": n, "batch": batch, "ms": seconds * 1e3, "ns_per": per})
    return rows


def dot_rows(device, rng, scale=1):
    rows = []
    # (large enough that the device's work, not the ~0.1 ms a call costs a TPU, decides the time)
    for m, n, k in ((2 ** 18, 64, 24), (2 ** 18, 128, 32), (2 ** 17, 256, 32), (2 ** 19, 85, 24),
                    (2 ** 15, 512, 64), (2 ** 18, 128, 64)):
        m //= scale
        a = jax.device_put(rng.standard_normal((m, n)).astype(np.float32), device)
        b = jax.device_put(rng.standard_normal((n, k)).astype(np.float32), device)
        fn = jax.jit(lambda a, b: jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                      precision=jax.lax.Precision.HIGHEST))
        seconds = timed(fn, a, b)
        rows.append({"m": m, "n": n, "k": k, "ms": seconds * 1e3, "flop_ns": seconds * 1e9 / (2 * m * n * k)})
    pads = []
    for n in (2 ** 22, 2 ** 24):
        x = jax.device_put((rng.standard_normal((n // 64, 16)) + 0j).astype(np.complex64), device)
        fn = jax.jit(lambda x: jnp.pad(x, ((0, 0), (0, 48))))
        seconds = timed(fn, x)
        pads.append({"bytes": n * 8, "ms": seconds * 1e3, "byte_ns": seconds * 1e9 / (n * 8)})
    return rows, pads


DECISION_CASES = ((8, 32, 64, 12), (20, 32, 85, 12), (32, 64, 128, 16), (16, 32, 256, 16))


def decision_rows(device, rng, model, cases=DECISION_CASES):
    rows = []
    for batch, width, n, modes in cases:
        x = rng.standard_normal((batch, width, n, n)).astype(np.float32)
        w = models.fno_params(2, (modes, modes), width, 1, width, rng)["layers"][0]["spectral"]
        args = jax.device_put((x, w), device)
        times, ffts = {}, {}
        for name, cost_model in (("keep_ffts", target.KEEP_FFTS), ("partial_dft", ALWAYS_DFT), ("model", model)):
            m = hf.trace(functools.partial(models.spectral_conv, hnp, modes=(modes, modes)), x, w)
            m.optimize(cost_model=cost_model)
            ffts[name] = m.op_counts().get("stablehlo.fft", 0)
            if name != "model":  # (the model's program is one of the two: its FFT count tells which)
                exe = m.compile(device)
                times[name] = timed(lambda a, b: exe(a, b), *args)
        faster = "partial_dft" if times["partial_dft"] < times["keep_ffts"] else "keep_ffts"
        chose = "partial_dft" if ffts["model"] < ffts["keep_ffts"] else "keep_ffts"
        print(f"  measured batch {batch} width {width} grid {n} modes {modes}: keep-ffts {times['keep_ffts'] * 1e3:.3f} ms, "
              f"partial DFT {times['partial_dft'] * 1e3:.3f} ms", flush=True)
        rows.append({"batch": batch, "width": width, "n": n, "modes": modes,
                     "keep_ffts_ms": times["keep_ffts"] * 1e3, "partial_dft_ms": times["partial_dft"] * 1e3,
                     "faster": faster, "model_chose": chose})
    return rows


def fit(ffts, dots, pads) -> dict:
    fft_ns = {kind: statistics.median(r["ns_per"] for r in ffts if r["kind"] == kind)
              for kind in ("FFT", "IFFT", "RFFT", "IRFFT")}
    return {"fft_ns": fft_ns, "flop_ns": statistics.median(r["flop_ns"] for r in dots),
            "byte_ns": statistics.median(r["byte_ns"] for r in pads)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, choices=target.DEVICE_KINDS,
                        help="cpu, gpu or tpu (default: jax's default device)")
    parser.add_argument("--json", default=None, help="also write the tables here")
    parser.add_argument("--quick", action="store_true", help="small sizes (to try the script on a CPU)")
    parser.add_argument("--decisions-only", action="store_true",
                        help="only the FNO decision table (the FFT, dot and zero-fill tables are skipped)")
    args = parser.parse_args(argv)
    hf.config.cache_dir = None
    device = hf.devices(args.device)[0] if args.device else jax.devices()[0]
    kind = target.kind_of(device.platform)
    rng = np.random.default_rng(0)
    print(f"device: {device.device_kind} ({device.platform}); jax {jax.__version__}", flush=True)
    tables = {} if args.decisions_only else cost_tables(device, rng, kind, args.quick)
    model = target.COST_MODELS[kind]
    decisions = decision_rows(device, rng, model, ((2, 8, 32, 6),) if args.quick else DECISION_CASES)
    print(f"\nFNO spectral convolution (rfft2 -> modes x weights -> irfft2), target.{kind.upper()}'s choice:")
    print(f"{'batch':>5} {'width':>5} {'n':>4} {'modes':>5} {'keep-ffts':>10} {'partial DFT':>12} {'faster':>12} "
          f"{'model':>12}")
    right = 0
    for r in decisions:
        right += r["faster"] == r["model_chose"]
        print(f"{r['batch']:>5} {r['width']:>5} {r['n']:>4} {r['modes']:>5} {r['keep_ffts_ms']:9.3f}ms "
              f"{r['partial_dft_ms']:10.3f}ms {r['faster']:>12} {r['model_chose']:>12}")
    print(f"the {kind} model chose the faster program in {right} of {len(decisions)} cases")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device.device_kind, **tables, "decisions": decisions}, f, indent=1)
    return 0


def cost_tables(device, rng, kind, quick) -> dict:
    """The FFT, dot and zero-fill tables, printed, and the cost model fitted to them."""
    ffts = fft_rows(device, rng, 2 ** 16 if quick else 2 ** 22)
    print(f"{'kind':<6} {'dims':>4} {'n':>5} {'batch':>6} {'ms':>9} {'ns/(pt*log2)':>13}")
    for r in ffts:
        print(f"{r['kind']:<6} {r['dims']:>4} {r['n']:>5} {r['batch']:>6} {r['ms']:9.3f} {r['ns_per']:13.2e}")
    dots, pads = dot_rows(device, rng, 64 if quick else 1)
    print(f"\n{'m':>6} {'n':>4} {'k':>3} {'ms':>8} {'ns/flop':>9}   (dot_general, HIGHEST)")
    for r in dots:
        print(f"{r['m']:>6} {r['n']:>4} {r['k']:>3} {r['ms']:8.3f} {r['flop_ns']:9.2e}")
    for r in pads:
        print(f"zero-fill {r['bytes']:>9} bytes: {r['ms']:.3f} ms, {r['byte_ns']:.2e} ns/byte")
    fitted = fit(ffts, dots, pads)
    print("\nfitted: CostModel({!r}, {{{}}}, flop_ns={:.2e}, byte_ns={:.2e})".format(
        kind, ", ".join(f'"{k}": {v:.2e}' for k, v in fitted["fft_ns"].items()), fitted["flop_ns"], fitted["byte_ns"]))
    return {"ffts": ffts, "dots": dots, "pads": pads, "fitted": fitted}


if __name__ == "__main__":
    sys.exit(main())
