"""The reference backend: the simplified graph evaluated by the NumPy interpreter (the oracle)."""
from __future__ import annotations

import numpy as np

from ..fusion import DEFAULT, CostModel
from ..ir.fourier_plan import FourierLimits
from ..ir.interpreter import evaluate
from ..ir.products import ProductLimits

COST = DEFAULT


def cost_model(options: dict) -> CostModel:
    """The cost model fusion decides by: COST, whatever the options."""
    return COST


def candidates(entry) -> list:
    """Options to time at a signature's first call (autofuse/autotune.py): none."""
    return []


def product_limits(options: dict) -> ProductLimits:
    """The interpreter runs every product the planner lowers (ir/products.py)."""
    return ProductLimits()


def fourier_limits(options: dict, leaves) -> FourierLimits:
    """The interpreter evaluates every fft node with NumPy (ir/fourier.py)."""
    return FourierLimits("numpy")


def before_trace(function_key: str) -> None:
    """A build is about to trace (the CUDA backend starts its compile workers then):
    nothing compiles here."""


def prepare(entry) -> None:
    graph = entry.graph

    def program(inputs):
        return [owned(out, inputs) for out in evaluate(graph, inputs)]

    entry.program = program


def owned(array, inputs=()):
    """A result never shares memory with an argument (NumPy's interpreter may return views, or an
    input itself where the simplifier folded `x * 1` to `x`; the call then writes arguments)."""
    array = np.asarray(array)
    if array.base is not None or not array.flags.writeable or any(array is i for i in inputs):
        return np.array(array, copy=True)
    return array
