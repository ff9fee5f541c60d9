"""Random programs (chains of fft, pad, slice, transpose and elementwise ops): hf.grad matches jax.grad."""
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from ad_helpers import close
import hloforge as hf
import hloforge.numpy as hnp
from hloforge import ops


def _steps(draw, shape, n):
    """A list of (hloforge fn, jax fn) applied in order; shapes tracked to keep every step valid."""
    out = []
    for _ in range(n):
        kind = draw(st.sampled_from(["unary", "transpose", "pad", "slice", "rfft", "fft", "rfft_abs"]))
        axis = draw(st.integers(0, 1))
        if kind == "unary":
            name = draw(st.sampled_from(["sin", "tanh", "square", "exp"]))
            h = {"sin": hnp.sin, "tanh": hnp.tanh, "square": lambda x: x * x * 0.5, "exp": lambda x: hnp.exp(x * 0.1)}[name]
            j = {"sin": jnp.sin, "tanh": jnp.tanh, "square": lambda x: x * x * 0.5, "exp": lambda x: jnp.exp(x * 0.1)}[name]
            out.append((h, j))
        elif kind == "transpose":
            out.append((lambda x: ops.transpose(x, (1, 0)), lambda x: x.T))
            shape = shape[::-1]
        elif kind == "pad":
            cfg = []
            for n_ in shape:
                lo = draw(st.integers(-min(1, n_ - 1), 2))
                hi = draw(st.integers(-min(1, n_ - 1 - max(-lo, 0)), 2))
                it = draw(st.integers(0, 1))
                cfg.append((lo, hi, it))
            lo, hi, it = zip(*cfg)
            out.append((lambda x, lo=lo, hi=hi, it=it: ops.pad(x, 0.25, lo, hi, it),
                        lambda x, cfg=cfg: lax.pad(x, 0.25, cfg)))
            shape = tuple(l + h + n_ + (n_ - 1) * i for n_, (l, h, i) in zip(shape, cfg))
        elif kind == "slice":
            n_ = shape[axis]
            start = draw(st.integers(0, n_ - 1))
            stop = draw(st.integers(start + 1, n_))
            step = draw(st.integers(1, 2))
            index = (slice(None),) * axis + (slice(start, stop, step),)
            out.append((lambda x, index=index: x[index], lambda x, index=index: x[index]))
            shape = tuple(len(range(start, stop, step)) if d == axis else s for d, s in enumerate(shape))
        elif kind == "rfft":
            norm = draw(st.sampled_from([None, "ortho", "forward"]))
            n_ = shape[axis]
            out.append((lambda x, a=axis, n_=n_, norm=norm: hnp.fft.irfft(hnp.fft.rfft(x, axis=a, norm=norm) * (1 + 0.5j), n=n_, axis=a, norm=norm),
                        lambda x, a=axis, n_=n_, norm=norm: jnp.fft.irfft(jnp.fft.rfft(x, axis=a, norm=norm) * (1 + 0.5j), n=n_, axis=a, norm=norm)))
        elif kind == "fft":
            out.append((lambda x, a=axis: hnp.imag(hnp.fft.ifft(hnp.fft.fft(x, axis=a) * hnp.fft.fft(x, axis=a), axis=a)),
                        lambda x, a=axis: jnp.imag(jnp.fft.ifft(jnp.fft.fft(x, axis=a) * jnp.fft.fft(x, axis=a), axis=a))))
        else:
            out.append((lambda x, a=axis: hnp.abs(hnp.fft.rfft(x, axis=a)) * 0.3,
                        lambda x, a=axis: jnp.abs(jnp.fft.rfft(x, axis=a)) * 0.3))
            shape = tuple(s // 2 + 1 if d == axis else s for d, s in enumerate(shape))
    return out, shape


@st.composite
def programs(draw):
    shape = (draw(st.integers(2, 5)), draw(st.integers(2, 6)))
    steps, out_shape = _steps(draw, shape, draw(st.integers(1, 4)))
    return shape, steps, out_shape


@settings(max_examples=12, deadline=None)
@given(programs())
def test_random_program_gradients_match_jax(program):
    shape, steps, out_shape = program
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    w = rng.standard_normal(out_shape)

    def loss(which):
        def f(x):
            for step in steps:
                x = step[which](x)
            return (hnp if which == 0 else jnp).sum(x * w)
        return f
    got = hf.grad(loss(0))(x)
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(loss(1)))(x)
    close(got, np.asarray(want), rtol=1e-8)
