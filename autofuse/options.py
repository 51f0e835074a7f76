"""jit's options checked where the user calls it: a bad value raises ArgumentError naming the
option, what it takes, and the user's line (errors.where)."""
from __future__ import annotations

from .errors import ArgumentError, where


def check_options(cuda_graph, float16, tuning, max_ops, dynamic, matmul_precision,
                  fft_limits, autotune=True) -> None:
    if cuda_graph is not None and not isinstance(cuda_graph, bool):
        raise ArgumentError(f"jit(cuda_graph=...) takes None, True or False, got {cuda_graph!r}"
                            f"{where()}")
    if float16 not in ("numpy", "float32"):
        raise ArgumentError(f"jit(float16=...) takes 'numpy' or 'float32', got {float16!r}"
                            f"{where()}")

    if matmul_precision not in ("float32", "tf32", "3xtf32"):
        raise ArgumentError(f"jit(matmul_precision=...) takes 'float32', 'tf32' or '3xtf32', got "
                            f"{matmul_precision!r}{where()}")
    if matmul_precision != "float32" and tuning is not None and not getattr(tuning, "mma", True):
        raise ArgumentError(f"jit(matmul_precision={matmul_precision!r}) runs on the tensor-core "
                            f"kernel, which this call's tuning turns off (Tuning.mma=False){where()}")
    if tuning is not None:
        from .backends.cuda.tuning import Tuning
        if not isinstance(tuning, Tuning):
            raise ArgumentError(f"jit(tuning=...) takes an autofuse.backends.cuda.Tuning, got "
                                f"{type(tuning).__name__}{where()}")

    if fft_limits is not None:
        from .ir.fourier_plan import FourierLimits
        if not isinstance(fft_limits, FourierLimits):
            raise ArgumentError(f"jit(fft_limits=...) takes an autofuse.FourierLimits, got "
                                f"{type(fft_limits).__name__}{where()}")

    if isinstance(max_ops, bool) or not isinstance(max_ops, int) or max_ops < 1:
        raise ArgumentError(f"jit(max_ops=...) takes a positive int, got {max_ops!r}{where()}")

    if not isinstance(autotune, bool):
        raise ArgumentError(f"jit(autotune=...) takes True or False, got {autotune!r}{where()}")

    if dynamic not in (None, True, False):
        raise ArgumentError(f"jit(dynamic=...) takes None, True or False, got {dynamic!r}{where()}")
