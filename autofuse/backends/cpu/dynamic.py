"""The CPU backend's side of shape classes (autofuse/dynamic/): kernel texts to compare between
builds at stand-in sizes, kernels compiled once with the sizes as their first arguments, and a
program per call's sizes that runs those kernels.
"""
from __future__ import annotations

import functools
import math
import re

from ...dynamic.instances import instantiate_graph
from .kernel import MATMUL_PARALLEL_FLOPS, PARALLEL_ELEMENTS
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


class Variants:
    """A class kernel's function, on numba's threads or on one (compiled when first needed): a
    size's call runs on threads where the static kernel at its size would (kernel.py's
    thresholds), so a small batch pays no fork-join."""

    def __init__(self, kernel, source: str):
        self.kernel = kernel
        serial = _PARALLEL.sub("parallel=False", source).replace("numba.prange(", "range(")
        self.sources = {True: source, False: serial}
        self.functions: dict = {}

    def get(self, parallel: bool):
        parallel = parallel and self.sources[True] != self.sources[False]
        if parallel not in self.functions:
            self.functions[parallel] = load(self.kernel, self.sources[parallel])
        return self.functions[parallel], self.sources[parallel]


def _threads(group, made: dict) -> bool:
    """Whether the group at a call's sizes is big enough for numba's threads."""
    node = group.matmul
    if node is not None:
        m, n = made[node.id].shape[-2:]
        k = made[node.inputs[0].id].shape[-1]
        return 2 * math.prod(made[node.id].shape[:-2]) * m * n * k >= MATMUL_PARALLEL_FLOPS
    largest = max(math.prod(made[n.id].shape) for n in group.nodes) if group.nodes else 0
    return largest >= PARALLEL_ELEMENTS


def prepare_dynamic(entry, shapes, raw_texts: list) -> None:
    """Compile each kernel of the class entry once, its sizes first among its arguments."""
    variants = {}
    entry.dynamic_steps = []
    for record, text, raw in zip(entry.kernels, shapes.texts, raw_texts):
        kernel = record.dynamic_kernel
        symbols = text.symbols
        source = text.generic(raw)
        if symbols:
            names = "".join(f"n{s}, " for s in symbols)
            source = source.replace(f"def {kernel.name}(", f"def {kernel.name}({names}", 1)
        if source not in variants:
            variants[source] = Variants(kernel, source)
        record.source = source
        record.reason = (f"sizes {', '.join(f'n{s}' for s in symbols)} are arguments"
                         if symbols else "no size of the class reaches it")
        entry.dynamic_steps.append((record.group, kernel, variants[source], symbols))
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
    """(graph, program, kernel records) of the class entry at `sizes` (symbol -> int): steps that
    call the class's kernels."""
    graph, made = instantiate_graph(entry, sizes)
    steps = []
    for group, kernel, variants, symbols in entry.dynamic_steps:
        function, text = variants.get(_threads(group, made))
        steps.append(SizedStep(group, kernel.rebound(made), function, text,
                               tuple(sizes[s] for s in symbols)))
    program = Program(graph, steps, {k.id: k for k in entry.kernels}, entry.name)
    return graph, program, entry.kernels
