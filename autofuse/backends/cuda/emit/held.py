"""Rows kernels' values held in registers: their types (float16 held as halves), which values
are read again later, and cache hints on held rows."""
from __future__ import annotations



from ....ir.graph import Node
from ..kernel import Param, storage_dtype


class Held:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def holds_halves(self, dtype) -> bool:
        return self.renderer.halves is not None and self.tuning.row_hold_halves and \
            self.renderer.held(dtype) != dtype

    def register_type(self, node_id: int, dtype) -> str:
        """The numba type of a register array holding a row's values of node `node_id`: float16
        ones as halves (holds_halves; noted in held_halves), others as numba_type."""
        if not self.holds_halves(dtype):
            return self.numba_type(dtype)
        self.held_halves.add(node_id)
        self.renderer.globals["nb_f16"] = ("numba", "types.float16")
        return "nb_f16"

    def holding(self, node_id: int, value: str) -> str:
        """A held input's value as its register array keeps it (float16 held as halves)."""
        return self.renderer.halves.narrow(value) if node_id in self.held_halves else value

    def held_item(self, node_id: int, item: str) -> str:
        """Item `item` of a held input's (or kept value's) register array, as the kernel holds
        its values."""
        value = f"{self.cached.get(node_id) or self.kept[node_id]}[{item}]"
        return self.renderer.halves.widen(value) if node_id in self.held_halves else value

    def row_hints(self, shape) -> bool:
        """Whether a rows kernel's vector path reads its held row twice and orders its stores
        (ROW_RELOAD, ROW_STORES): rows of elements at least ROW_HINT_BYTES wide."""
        width = self.row_itemsize(shape)
        return width > 0 and width >= self.tuning.row_hint_bytes

    def row_itemsize(self, shape) -> int:
        """Bytes of the widest element of a rows kernel's row: its held inputs and row-shaped
        outputs (0 where there are none)."""
        row = self.held_params(shape) + [p for p in self.outputs if p.node.shape == shape]
        return max((storage_dtype(p.node.dtype).itemsize for p in row), default=0)

    def held_params(self, shape) -> list[Param]:
        """The inputs a rows kernel holds in registers: row-shaped, read at the row index."""
        return [p for p in self.params if not p.by_value and p.node.shape == shape
                and self._read_at_row(p.node)]

    def _read_later(self, source: Node, reduction: Node) -> bool:
        """Whether a member other than `reduction` reads `source` (a computed row value)."""
        if source.id not in self.group.members or source.kind != "elementwise":
            return False
        return any(m.id != reduction.id and any(s.id == source.id for s in m.inputs)
                   for m in self.group.members.values())

    def _read_at_row(self, node: Node) -> bool:
        """Whether every member reads `node` at the row index itself (not through an index map)."""
        return all(m.kind == "reduce" or m.kind == "elementwise" and m.shape == node.shape
                   for m in self.group.members.values() if any(s.id == node.id for s in m.inputs))
