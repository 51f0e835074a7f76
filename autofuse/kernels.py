"""What a backend made of each fusion group, for reading: `f.lower(...).kernels[i]`.

A `Kernel` joins the group (kind, ops, bytes) with what the backend decided and wrote: the
strategy and the reason for it, the generated source, the launch, and the PTX on demand. Backends
return these records on the entry; fusion's `Group` stays what the partitioner made.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .fusion.group import Group


@dataclass
class Kernel:
    group: Group
    strategy: str | None = None       # how the backend runs the group (None: interpreted)
    source: str | None = None         # the generated module's text
    reason: str = ""                  # why this strategy (the CUDA planner's words)
    launch: dict = field(default_factory=dict)     # CUDA: grid, block, registers once loaded
    ptx_provider: Callable | None = None           # CUDA: makes the PTX when first asked

    @property
    def ptx(self) -> str | None:
        """The kernel's PTX (CUDA backend; compiled on first access, also without a GPU)."""
        return self.ptx_provider() if self.ptx_provider is not None else None

    @property
    def name(self) -> str:
        return f"{self.group.kind}_{self.group.id}"

    # the group's own facts
    @property
    def id(self) -> int:
        return self.group.id

    @property
    def kind(self) -> str:
        return self.group.kind

    @property
    def ops(self) -> list[str]:
        return self.group.ops

    @property
    def nodes(self) -> list:
        return self.group.nodes

    @property
    def inputs(self) -> list:
        return self.group.inputs

    @property
    def outputs(self) -> dict:
        return self.group.outputs

    @property
    def root(self):
        return self.group.root

    def bytes_fused(self) -> int:
        return self.group.bytes_fused()

    def bytes_unfused(self) -> int:
        return self.group.bytes_unfused()

    def __repr__(self):
        return f"Kernel({self.name}, {self.strategy!r}, {self.ops})"
