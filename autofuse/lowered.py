"""What `f.lower(*args)` returns: the traced, simplified and fused programs and their kernels."""
from __future__ import annotations

from .ir.printer import graph_text, type_text


def signature_text(entry, symbolic: bool = False) -> str:
    """`softmax(f32[64,128], 2.5)`: the traced inputs of an entry in the printer's type notation.
    A shape class's program (autofuse/dynamic/) shows the sizes of the call it runs for, or with
    `symbolic` (or where it runs for none) its class: `softmax(f32[n0,128])`."""
    named = _class_sizes(entry, symbolic)
    parts = [type_text(tuple(named.get((n.attrs["index"], d), size)
                             for d, size in enumerate(n.shape)), n.dtype)
             for n in entry.traced.graph.inputs]
    parts += [f"{name}={value!r}" for name, value in getattr(entry, "specialized", {}).items()]
    return f"{entry.name}({', '.join(parts)})"


def _class_sizes(entry, symbolic: bool) -> dict:
    """(leaf, dim) -> what to write for each dynamic dimension of a shape class's program."""
    shapes = getattr(entry, "dynamic", None)
    if shapes is None or not shapes.places:
        return {}
    sizes = None if symbolic else getattr(entry, "sizes", None)    # (an instance's, classes.py)
    return {place: (f"n{symbol}" if sizes is None else sizes[symbol])
            for symbol, where in shapes.places.items() for place in where}


def class_text(entry) -> str:
    """` (shape class softmax(f32[n0,8]): n0 = x.shape[0])` for a shape class's program, else ''."""
    shapes = getattr(entry, "dynamic", None)
    if shapes is None or not shapes.places:
        return ""
    names = "; ".join(f"n{s} = {' = '.join(shapes.names[s])}" for s in shapes.places)
    return f" (shape class {signature_text(entry, symbolic=True)}: {names})"


def loop_text(entry) -> str:
    """What was done once for a loop's steps (ir/periods.py, fusion/rolled.py)."""
    from .fusion.rolled import STEADY
    loop = entry.loop
    first = entry.traced.graph.nodes[loop.start]
    where = f" from {first.origin}" if first.origin else ""
    return (f"# loop: {loop.repeats} steps of {loop.length} traced ops{where}; simplified and "
            f"fused on steps 0-{STEADY} and the last, steps {STEADY + 1}-{loop.repeats - 2} "
            f"copied from step {STEADY}"
            + ("; each kernel holds one step's values (its steps were not alike when kernels "
               "spanned several)" if loop.held else ""))


class Lowered:
    """The program autofuse built for one signature, for reading (nothing runs)."""

    def __init__(self, entry):
        self._entry = entry

    @property
    def traced(self):
        """The graph as traced, before simplification."""
        return self._entry.traced.graph

    @property
    def graph(self):
        """The simplified graph."""
        return self._entry.graph

    @property
    def fused(self):
        return self._entry.fused

    @property
    def kernels(self) -> list:
        return list(self._entry.kernels)

    @property
    def specialized(self) -> dict:
        """Argument name -> value for the Python scalars this program was traced with by value
        (the trace needed them concretely: shapes, axes, loop counts)."""
        return dict(self._entry.specialized)

    @property
    def backend(self) -> str:
        return self._entry.backend

    @property
    def host_source(self) -> str | None:
        """The CUDA backend's generated host call for this signature (the CUDA graph replay of
        runtime/graph.py, or runtime/host.py's launches with jit(cuda_graph=False)): what a call does
        between Python and the kernels. Generated at the signature's first call on a GPU; None
        before that and on other backends."""
        return getattr(self._entry.program, "host_source", None)

    def as_text(self, stage: str = "all") -> str:
        """The program as text: "traced", "simplified", "fused", or "all" of them."""
        sections = []
        if getattr(self._entry, "dynamic", None) is not None:
            sections.append(self._entry.dynamic.as_text())
        if self._entry.specialized:
            values = ", ".join(f"{name}={value!r}" for name, value in self._entry.specialized.items())
            sections.append(f"# specialized by value: {values}")
        if getattr(self._entry, "loop", None) is not None and stage in ("simplified", "fused", "all"):
            sections.append(loop_text(self._entry))
        if stage in ("traced", "all"):
            sections.append("# traced\n" + graph_text(self.traced))
        if stage in ("simplified", "all"):
            sections.append("# simplified\n" + graph_text(self.graph))
        if stage in ("fused", "all") and self.fused is not None:
            sections.append("# fused\n" + self.fused.as_text())
        return "\n\n".join(sections)

    def to_dot(self) -> str:
        """The fused program as Graphviz DOT text: a cluster per fusion group coloured by kind,
        values labelled with name, shape and dtype, edges between groups labelled with bytes."""
        from .picture import to_dot
        return to_dot(self.fused, f"{signature_text(self._entry)} on {self.backend}",
                      {kernel.id: kernel.strategy for kernel in self.kernels})

    def render(self, path, format: str | None = None) -> str:
        """Write the picture to `path` as "svg", "png" or "pdf" (default: the path's suffix, else
        svg) with Graphviz's `dot`; "dot" writes the DOT text. Returns the path written; raises
        autofuse.picture.RenderError naming what to install where `dot` is missing."""
        from .picture import render
        return render(self.to_dot(), path, format)

    def __repr__(self):
        return self.as_text()
