"""The plan of each fft node (ir/fourier.py's op): the array library's FFT as a step between
kernels, or traced kernels that fuse with the transform's neighbours (trace/fourier_kernels.py
writes them), decided by `FourierLimits`."""
from __future__ import annotations

from dataclasses import dataclass

from .fourier import numpy_call
from .graph import Node
from .ops import ELEMENTWISE, LAYOUT


def describe(node: Node) -> str:
    """The transform in NumPy's words: `rfft(n=1024, axis=1)`, `fftn(s=(64, 64), axes=(0, 1))`."""
    name, keywords = numpy_call(node.attrs)
    norm = keywords.pop("norm")
    words = ", ".join(f"{key}={value}" for key, value in keywords.items())
    return f"{name}({words}" + (f", norm={norm!r})" if norm != "backward" else ")")


@dataclass(frozen=True)
class FourierLimits:
    """Which fft nodes a backend runs as a library step, which as traced kernels: the cost rule.

    A library FFT (pocketfft, cuFFT) does the whole transform in cache or on chip, about
    n log n work an element; but it is a step of its own: its input and its result are stored
    and read back by the kernels beside it, and each call costs its overhead. A transform of a
    few terms traced into its neighbours' kernel (the DFT matrix as a sum: `terms` multiply-adds
    an element, n for fft, n // 2 + 1 for rfft, summed over the axes) moves no data of its own.
    So a transform runs traced where an elementwise or layout neighbour would hold it, every
    length is at most `max_traced_length`, and

        terms < library_element_terms + library_call_terms / elements

    (the library step's cost, in the traced kernel's multiply-adds an element of the input);
    else the library runs it (traced where there is none: `library` None). The defaults are the
    CPU's, measured (benchmarks/fft.py's short-spectrum grid, BENCHMARKS.md): a library step
    (scipy.fft) cost about 20 us a call and 3 multiply-adds' worth an element."""
    library: str | None = "numpy"       # who runs library steps: "numpy", "scipy", "cupy",
    #                                     "torch"; None: every transform traced
    why_none: str = ""                  # where library is None: why no library runs them here
    # Longer transforms never join their neighbours: past the DFT matrix they are radix or
    # Bluestein stages, a pass over memory each.
    max_traced_length: int = 16
    library_element_terms: float = 3.0  # a library step's cost an element, in traced terms
    library_call_terms: int = 10_000    # its fixed cost a call (the call, the stored input and
    #                                     result's kernel launches), in traced terms
    # Threads of a CPU library transform (scipy.fft's workers): 0, as many as numba's kernels use.
    workers: int = 0


TRACED = FourierLimits(library=None, why_none="no library FFT")


@dataclass(frozen=True)
class FourierPlan:
    strategy: str       # "library" or "traced"
    reason: str


def fused_neighbours(node: Node, users: dict) -> list[str]:
    """The ops next to `node` whose kernel a traced transform would join: its input's producer
    and its readers, where they are elementwise or layout ops."""
    found = []
    source = node.inputs[0]
    if source.kind in (ELEMENTWISE, LAYOUT) and source.op not in ("input", "constant"):
        found.append(source.op)
    found += [user.op for user in users.get(node.id, ()) if user.kind in (ELEMENTWISE, LAYOUT)]
    return found


def traced_terms(node: Node) -> int:
    """Multiply-adds an input element of the transform traced through the DFT matrix."""
    lengths = list(node.attrs["lengths"])
    if node.attrs["function"] == "rfft":
        lengths[-1] = lengths[-1] // 2 + 1
    return sum(lengths)


def plan(node: Node, limits: FourierLimits, users: dict) -> FourierPlan:
    """Library step or traced kernels for one fft node, and why, in words."""
    what = describe(node)
    longest = max(node.attrs["lengths"])
    if limits.library is None:
        return FourierPlan("traced", f"{what}: traced kernels ({limits.why_none})")
    library = {"numpy": "np.fft (pocketfft)", "scipy": "scipy.fft (pocketfft)",
               "cupy": "cupy.fft (cuFFT)", "torch": "torch.fft (cuFFT)"}.get(limits.library,
                                                                            limits.library)
    step = f"{what}: {library} as a step between kernels"
    if longest > limits.max_traced_length:
        return FourierPlan("library", f"{step} (length {longest} > {limits.max_traced_length}: "
                                      f"traced, it would be a pass over memory a stage)")
    neighbours = fused_neighbours(node, users)
    if not neighbours:
        return FourierPlan("library", f"{step} (no elementwise neighbour to trace it into)")
    terms, elements = traced_terms(node), max(node.inputs[0].size, 1)
    library_terms = limits.library_element_terms + limits.library_call_terms / elements
    if terms >= library_terms:
        return FourierPlan("library", f"{step} (traced, {terms} multiply-adds an element; the "
                                      f"library step costs {library_terms:.1f} an element of "
                                      f"{elements})")
    ops = ", ".join(sorted(set(neighbours)))
    return FourierPlan("traced", f"{what}: traced into the kernel of its neighbours ({ops}): "
                                 f"{terms} multiply-adds an element, where the library step "
                                 f"costs {library_terms:.1f} an element of {elements}")
