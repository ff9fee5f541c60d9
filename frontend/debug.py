"""``hloforge.debug``: jax.debug's host callbacks, ``print`` and ``callback`` (frontend/callbacks.py).

Example:
  >>> @hf.jit
  ... def f(x):
  ...     hf.debug.print("x = {}", x)
  ...     return x * 2
"""
from hloforge.frontend.callbacks import debug_callback as callback
from hloforge.frontend.callbacks import debug_print as print  # noqa: A001  (jax.debug.print's name)
from hloforge.frontend.naming import name_missing_attributes

__all__ = ["print", "callback"]

name_missing_attributes(globals())
