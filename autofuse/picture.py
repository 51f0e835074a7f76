"""A picture of the fused program: Graphviz DOT text, and rendering it with the `dot` executable.

`Lowered.to_dot()` needs nothing beyond autofuse. `Lowered.render(path)` runs Graphviz's `dot`
(a system package: `apt-get install graphviz`, `brew install graphviz`, `conda install graphviz`);
the `graphviz` PyPI package is not used: it only wraps the same executable.

The picture: the program's inputs (and array constants) as plain boxes; each fusion group as a
cluster box coloured by its kind, holding its ops, one per value (`v3 = exp` / `f32[64,128]`);
solid edges inside a group are values that stay in registers, bold edges between groups are values
stored to memory, labelled with the bytes the consumer reads; the outputs end in `return`.
A pointwise op recomputed in several groups appears once in each.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from .errors import AutofuseError
from .fusion.cost import mib, read_bytes
from .ir.printer import is_inline_constant, type_text

# Fill colours by group kind (the names are XLA's fusion kinds; see README "Inspect").
KIND_COLORS = {
    "elementwise": "#dbeafe",   # blue: pointwise loop over one shape
    "loop": "#dcfce7",          # green: loop with broadcasts, layout ops, iota
    "input": "#ffedd5",         # orange: reduction (rows read, fewer values written)
    "scan": "#fef9c3",          # yellow: a scan (input fusion) with producers and epilogue
    "output": "#ede9fe",        # purple: matmul with its epilogue
    "sort": "#fef9c3",          # yellow: rows sorted on chip, with their order statistics
    "scatter": "#fce7f3",       # pink: values added at computed indices, with their producers
    "fft": "#e5e7eb",           # grey: an FFT by the array library, a step between kernels
}
FORMATS = ("svg", "png", "pdf", "dot")


class RenderError(AutofuseError, RuntimeError):
    """The picture could not be written (Graphviz missing or failing)."""


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(**attrs) -> str:
    return "[" + ", ".join(f"{key}={_quote(str(value))}" for key, value in attrs.items()) + "]"


def to_dot(fused, title: str | None = None, strategies: dict | None = None) -> str:
    """DOT text of a FusedProgram (see the module docstring for what it shows); `strategies`:
    {group id: the backend's strategy for its kernel}."""
    graph, names = fused.graph, fused.names
    summary = fused.summary()
    kinds = ", ".join(f"{kind} {count}" for kind, count in summary["kinds"].items()) or "none"
    heading = title or graph.name
    label = (f"{heading}: {summary['ops']} ops in {summary['groups']} kernels ({kinds})\n"
             f"bytes moved: unfused {mib(summary['bytes_unfused'])}, fused "
             f"{mib(summary['bytes_fused'])} ({summary['ratio']:.2f}x less)")
    lines = [f"digraph {_quote(graph.name)} {{",
             f"  graph {_attrs(label=label, labelloc='t', fontname='Helvetica', compound='true', rankdir='TB')};",
             f"  node {_attrs(shape='box', style='rounded,filled', fillcolor='white', fontname='Helvetica', fontsize='10')};",
             f"  edge {_attrs(fontname='Helvetica', fontsize='9', color='#555555')};"]

    def value_label(node) -> str:
        return f"{names.get(node.id, f'n{node.id}')} = {node.op}\n{type_text(node.shape, node.dtype)}"

    # Values from outside every group: inputs and array constants.
    producer = {}                                  # node id -> group that stores it
    for group in fused.groups:
        for node_id in group.outputs:
            producer.setdefault(node_id, group)
    outside = {}
    for node in graph.inputs:
        outside[node.id] = f"in_{node.id}"
    for group in fused.groups:
        for node in group.inputs:
            if node.id not in producer and node.id not in outside:
                outside[node.id] = f"in_{node.id}"
    by_id = {n.id: n for n in graph.nodes}
    for node in graph.inputs:
        by_id.setdefault(node.id, node)
    for node_id, dot_id in outside.items():
        node = by_id[node_id]
        shape = "invhouse" if node.op == "input" else "box"
        lines.append(f"  {dot_id} {_attrs(label=value_label(node), shape=shape, style='filled', fillcolor='#f3f4f6')};")

    # One cluster per group.
    for group in fused.groups:
        color = KIND_COLORS.get(group.kind, "#eeeeee")
        label = (f"{group.kind}_{group.id}  [{group.kind}]\n"
                 f"{mib(group.bytes_fused())} moved (unfused {mib(group.bytes_unfused())})")
        strategy = (strategies or {}).get(group.id)
        if strategy:
            label += f"\nstrategy: {strategy}"
        lines.append(f"  subgraph cluster_g{group.id} {{")
        lines.append(f"    graph {_attrs(label=label, style='filled,rounded', fillcolor=color, color='#666666', fontsize='10')};")
        members = {n.id for n in group.nodes}
        for node in group.nodes:
            if is_inline_constant(node):
                continue
            extra = {"peripheries": 2} if node.id in group.outputs else {}
            lines.append(f"    g{group.id}_{node.id} {_attrs(label=value_label(node), **extra)};")
        for node in group.nodes:
            for source in node.inputs:
                if source.id in members and not is_inline_constant(source):
                    lines.append(f"    g{group.id}_{source.id} -> g{group.id}_{node.id};")
        lines.append("  }")

    # Edges into each group: values read from memory, labelled with bytes.
    for group in fused.groups:
        members = {n.id for n in group.nodes}
        for value in group.inputs:
            consumer = next((n for n in group.nodes if any(s.id == value.id for s in n.inputs)),
                            None)
            if consumer is None:
                continue
            source_group = producer.get(value.id)
            tail = f"g{source_group.id}_{value.id}" if source_group is not None and \
                source_group is not group else outside.get(value.id)
            if tail is None or value.id in members:
                continue
            lines.append(f"  {tail} -> g{group.id}_{consumer.id} "
                         f"{_attrs(label=mib(read_bytes(value)), penwidth='2', color='#1f2937')};")

    # The program's outputs.
    lines.append(f"  out {_attrs(label='return', shape='oval', style='filled', fillcolor='#f3f4f6')};")
    for index, node in enumerate(graph.outputs):
        group = producer.get(node.id)
        tail = f"g{group.id}_{node.id}" if group is not None else outside.get(node.id)
        if tail is None:                        # a constant result, computed by no kernel
            tail = f"const_{node.id}"
            lines.append(f"  {tail} {_attrs(label=value_label(node), style='filled', fillcolor='#f3f4f6')};")
        lines.append(f"  {tail} -> out {_attrs(label=f'{index}: {mib(node.nbytes)}', penwidth='2', color='#1f2937')};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_executable() -> str:
    """The path of Graphviz's `dot`, or a RenderError saying what to install."""
    found = shutil.which("dot")
    if found is None:
        raise RenderError(
            "rendering a picture needs Graphviz's `dot` executable, which is not on PATH: install "
            "Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
            "conda: conda install graphviz), or write Lowered.to_dot() to a .dot file yourself")
    return found


def render(dot_text: str, path, format: str | None = None) -> str:
    """Write `dot_text` to `path` as svg, png or pdf (by `format`, else the path's suffix, else
    svg); "dot" writes the text itself and needs no Graphviz. Returns the path written."""
    path = os.fspath(path)
    if format is None:
        suffix = os.path.splitext(path)[1].lstrip(".").lower()
        if suffix and suffix not in FORMATS:
            raise RenderError(f"cannot tell the picture format from {path!r}: use a .svg, .png, "
                              f".pdf or .dot file, or pass format=")
        format = suffix or "svg"
    if format not in FORMATS:
        raise RenderError(f"unknown picture format {format!r}; choose one of {FORMATS}")
    if format == "dot":
        with open(path, "w") as handle:
            handle.write(dot_text)
        return path
    done = subprocess.run([dot_executable(), f"-T{format}", "-o", path], input=dot_text.encode(),
                          capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise RenderError(f"Graphviz `dot -T{format}` failed: {message[0] if message else done.returncode}")
    return path
