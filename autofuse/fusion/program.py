"""The fused program: groups in launch order, the decisions behind them, and its text and bytes."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.interpreter import run_nodes
from ..ir.printer import graph_text, is_inline_constant, line, name_nodes, node_text, operand_text, type_text
from .cost import CostModel, mib
from .group import Group


@dataclass(frozen=True)
class Decision:
    """Why `producer` was stored to memory instead of computed inside `consumer`'s kernel."""
    producer: Node
    consumer: Node
    reason: str

    def text(self, names: dict) -> str:
        p, c = names[self.producer.id], names[self.consumer.id]
        return f"{p} -> {c}: " + self.reason.format_map(_Names(names, p=p, c=c))


class _Names(dict):
    """What a reason's fields stand for: {p}, {c}, and {n<id>} for any other node's name."""

    def __init__(self, names: dict, **fields):
        super().__init__(fields)
        self.names = names

    def __missing__(self, key: str) -> str:
        return self.names[int(key[1:])]


class FusedProgram:
    def __init__(self, graph: Graph, groups: list[Group], decisions: list[Decision], cost: CostModel):
        self.graph = graph
        self.groups = groups
        self.decisions = decisions
        self.cost = cost
        self.names = name_nodes(graph.inputs + tuple(n for n in graph.nodes if n.op != "input"))

    # -- numbers ---------------------------------------------------------------------------------
    def bytes_unfused(self) -> int:
        """Bytes moved if every op ran as its own kernel (each input read, each output written)."""
        from .cost import node_bytes_unfused
        return sum(node_bytes_unfused(n) for n in self.graph.nodes if not is_inline_constant(n))

    def bytes_fused(self) -> int:
        return sum(g.bytes_fused() for g in self.groups)

    def summary(self) -> dict:
        ops = sum(1 for n in self.graph.nodes if n.op not in ("input", "constant"))
        unfused, fused = self.bytes_unfused(), self.bytes_fused()
        return {"ops": ops, "groups": len(self.groups),
                "kinds": dict(sorted(Counter(g.kind for g in self.groups).items())),
                "bytes_unfused": unfused, "bytes_fused": fused,
                "ratio": unfused / fused if fused else 1.0}

    def explanations(self) -> list[str]:
        """One sentence per edge between groups: why it was not fused (once, where the consumer
        is recomputed in several kernels that each read the producer for the same reason)."""
        return list(dict.fromkeys(d.text(self.names) for d in self.decisions))

    # -- text ------------------------------------------------------------------------------------
    def group_header(self, group: Group) -> str:
        outs = ", ".join(self.names[n.id] for n in group.outputs.values()) or "_"
        ins = ", ".join(operand_text(n, self.names) for n in group.inputs)
        return f"    {outs} = {group.kind}_{group.id}({ins})"

    def as_text(self) -> str:
        names = self.names
        params = ", ".join(f"{names[n.id]}: {type_text(n.shape, n.dtype)}" for n in self.graph.inputs)
        lines = [f"def {self.graph.name}({params}):"]
        for group in self.groups:
            header = self.group_header(group)
            lines.append(f"{header:<44} # {group.kind}: {mib(group.bytes_fused())} moved "
                         f"(unfused {mib(group.bytes_unfused())}){_source_lines(group)}")
            for node in group.nodes:
                if not is_inline_constant(node):
                    lines.append(line(f"        {names[node.id]} = {node_text(node, names)}", node))
        outputs = ", ".join(operand_text(n, names) for n in self.graph.outputs)
        lines.append(f"    return ({outputs}{',' if len(self.graph.outputs) == 1 else ''})")
        s = self.summary()
        kinds = ", ".join(f"{k} {v}" for k, v in s["kinds"].items()) or "none"
        lines.append(f"# {s['ops']} ops in {s['groups']} kernel{'s' if s['groups'] != 1 else ''} ({kinds}); bytes moved: unfused "
                     f"{mib(s['bytes_unfused'])}, fused {mib(s['bytes_fused'])} "
                     f"({s['ratio']:.2f}x less)")
        lines.extend(self.memory_text())
        explanations = self.explanations()
        lines.append("# not fused:" + ("" if explanations else " (nothing: every edge is fused)"))
        lines.extend(f"#   {text}" for text in explanations)
        return "\n".join(lines)

    def memory_text(self) -> list[str]:
        """What crosses kernels: values kept (stored by one kernel, read by another) against
        values recomputed (computed inside each kernel that reads them, never stored): the
        keep-or-recompute decisions of fusion/cost.py, in bytes. Nothing where neither occurs."""
        owners: dict[int, int] = Counter(n for g in self.groups for n in g.members)
        members = {n: node for g in self.groups for n, node in g.members.items()}
        read_by_other = {n.id for g in self.groups for n in g.inputs}
        kept = [node for g in self.groups for node in g.outputs.values()
                if node.id in read_by_other]
        recomputed = [members[n] for n, count in owners.items()
                      if count > 1 and not is_inline_constant(members[n])]
        lines = []
        if kept:
            listed = ", ".join(f"{self.names[n.id]} {mib(n.nbytes)}" for n in kept[:12])
            more = f", and {len(kept) - 12} more" if len(kept) > 12 else ""
            lines.append(f"# kept between kernels: {mib(sum(n.nbytes for n in kept))} written "
                         f"({listed}{more})")
        if recomputed:
            recomputed.sort(key=lambda n: n.id)
            listed = ", ".join(self.names[n.id] for n in recomputed[:16])
            more = f", and {len(recomputed) - 16} more" if len(recomputed) > 16 else ""
            lines.append(f"# recomputed in each kernel that reads them, not kept: "
                         f"{mib(sum(n.nbytes for n in recomputed))} never written "
                         f"({listed}{more})")
        return lines

    def __repr__(self):
        return self.as_text()

    # -- the reference for fused evaluation -------------------------------------------------------
    def evaluate(self, args) -> list[np.ndarray]:
        """Run group by group with the reference interpreter, passing only stored values between."""
        memory = {n.id: np.asarray(a) for n, a in zip(self.graph.inputs, args)}
        for node in self.graph.nodes:
            if node.op == "constant":
                memory[node.id] = node.attrs["value"].array
        for group in self.groups:
            memory.update(evaluate_group(group, memory))
        return [memory[n.id] for n in self.graph.outputs]


def evaluate_group(group: Group, memory: dict) -> dict:
    """{output node id: value} of one group, run node by node by the reference interpreter from
    the values of its inputs in `memory` (constants it reads are taken from the graph)."""
    local = {n.id: memory[n.id] for n in group.inputs}
    for node in group.nodes:
        for source in node.inputs:
            if source.op == "constant":
                local[source.id] = source.attrs["value"].array
    run_nodes(group.nodes, local)
    return {node_id: local[node_id] for node_id in group.outputs}


def origins(group: Group) -> list[str]:
    """The user's source lines ("file.py:12") that made the group's ops, in file and line order."""
    return sorted({n.origin for n in group.nodes if n.origin}, key=_origin_key)


def _source_lines(group: Group) -> str:
    lines = origins(group)
    return f"  [{', '.join(lines)}]" if lines else ""


def _origin_key(origin: str):
    name, _, number = origin.rpartition(":")
    return (name, int(number) if number.isdigit() else 0)


__all__ = ["FusedProgram", "Decision", "graph_text", "origins"]
