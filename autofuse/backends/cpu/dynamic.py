"""The CPU backend's side of shape classes (autofuse/dynamic/): kernel texts to compare between
builds at stand-in sizes, kernels compiled once with the sizes as their first arguments, and a
program per call's sizes that runs those kernels.
"""
from __future__ import annotations

import functools
import re

from ...dynamic.instances import instantiate_graph
from .source import generate
from . import Program, Step, _compilable, load, module_text

_PARALLEL = re.compile(r"parallel=(True|False)")


def _comparable(text: str) -> str:
    """A kernel's text without what only decides threads (numba.prange runs as range where a
    function is not parallel): builds at sizes either side of the threading threshold agree."""
    return _PARALLEL.sub("parallel=P", text).replace("numba.prange(", "range(")


def dynamic_texts(entry) -> list:
    """Per kernel record: (what must agree between builds, the comparable text, the text)."""
    texts = []
    for record in entry.kernels:
        group = record.group
        if not _compilable(group):
            raise ValueError("a float16 group runs node by node on the CPU")
        kernel = generate(group, f"{group.kind}_{group.id}", dynamic=True)
        text = module_text(kernel)
        meta = (kernel.strategy, kernel.name,
                tuple((a.view, a.node.id, tuple(n.id for n in a.chain)) for a in kernel.inputs),
                tuple((a.view, a.node.id) for a in kernel.outputs))
        record.strategy, record.dynamic_kernel = kernel.strategy, kernel
        texts.append((meta, _comparable(text), text))
    return texts


def prepare_dynamic(entry, shapes, raw_texts: list) -> None:
    """Compile each kernel of the class entry once, its sizes first among its arguments."""
    compiled = {}
    entry.dynamic_steps = []
    for record, text, raw in zip(entry.kernels, shapes.texts, raw_texts):
        kernel = record.dynamic_kernel
        symbols = text.symbols
        source = text.generic(raw)
        if symbols:
            names = "".join(f"n{s}, " for s in symbols)
            source = source.replace(f"def {kernel.name}(", f"def {kernel.name}({names}", 1)
        if source not in compiled:
            compiled[source] = load(kernel, source)
        record.source = source
        record.reason = (f"sizes {', '.join(f'n{s}' for s in symbols)} are arguments"
                         if symbols else "no size of the class reaches it")
        entry.dynamic_steps.append((record.group, kernel, compiled[source], source, symbols))
    entry.program = None


class SizedStep(Step):
    """A step of a class program: the class's compiled function, given this call's sizes."""

    def __init__(self, group, kernel, function, text, sizes: tuple):
        self.sizes = sizes
        super().__init__(group, kernel, functools.partial(function, *sizes), text)

    def first_call(self, args: list) -> None:
        try:
            self.function(*args)
        except Exception:
            fresh = load(self.kernel, self.text, fresh=True)
            self.function = functools.partial(fresh, *self.sizes)
            self.function(*args)
        self.first = False


def instantiate(entry, sizes: dict):
    """The program of the class entry at `sizes` (symbol -> int): its graph, and steps that call
    the class's kernels."""
    graph, made = instantiate_graph(entry, sizes)
    steps = []
    for group, kernel, function, text, symbols in entry.dynamic_steps:
        rebound = kernel.rebound(made)
        steps.append(SizedStep(group, rebound, function, text, tuple(sizes[s] for s in symbols)))
    program = Program(graph, steps, {k.id: k for k in entry.kernels}, entry.name)
    return graph, program
