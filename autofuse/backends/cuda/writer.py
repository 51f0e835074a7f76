"""The kernel writer: one class made of the strategies' emitters (emit/), and `generate`, which
plans a group (plan.py) and writes its kernel."""
from __future__ import annotations

from ...fusion.group import Group
from .. import sharing
from .device import HOPPER, Device
from .emit import (attention, attention_mma, attention_mma_plan, run_two_stage, runs, staged,
                   tiles, two_stage)
from .emit.columns import Columns
from .emit.combine import Combining
from .emit.elementwise import Elementwise
from .emit.held import Held
from .emit.matmul import Matmul
from .emit.rows import Rows
from .emit.sorting import Sorts
from .emit.scans import Scans
from .emit.scatter import Scatters
from .emit.split import Split
from .emit.transpose import Transposes
from .emit.vector import Vectors
from .kernel import KernelBase, KernelSource
from .plan import Plan, choose
from .tuning import DEFAULT, Tuning


class KernelWriter(Elementwise, Vectors, Transposes, Rows, Held, Columns, Split, Combining,
                   Matmul, Sorts, Scans, Scatters, KernelBase):
    """Writes one fusion group's kernel by the plan it is given (write)."""

    def write(self, plan: Plan) -> KernelSource:
        if plan.strategy == "matmul":
            return self.matmul()
        if plan.strategy == "staged":
            return staged.write(self, plan.staged)
        if plan.strategy == "attention":
            if isinstance(plan.attention, attention_mma_plan.MmaPlan):
                return attention_mma.write(self, plan.attention)
            return attention.write(self, plan.attention)
        if plan.strategy == "pointwise":
            return self.region() if self.into is not None else self.pointwise()
        if plan.strategy == "scatter":
            return self.scatter()
        if plan.strategy == "sort":
            return self.sort_rows(plan.sorting)
        if plan.scan is not None:
            return self.scan(plan.scan)
        shape, axes, outer, inner = plan.shape, list(plan.axes), plan.outer, plan.inner
        row_outputs = [p for p in self.outputs if p.node.id in plan.row_outputs]
        if plan.strategy == "split":
            return self.split(shape, axes, inner, row_outputs, plan.scalar)
        if plan.strategy == "two-stage" and plan.run is not None:
            return run_two_stage.write(self, shape, axes, outer, inner, plan.layout, plan.run)
        if plan.strategy == "two-stage":
            return two_stage.write(self, shape, axes, outer, inner, plan.layout, row_outputs)
        if plan.strategy in ("row tiles", "column tiles"):
            return tiles.write(self, shape, axes, outer, inner, plan.layout)
        outer_axes = [d for d in range(len(shape)) if d not in axes]
        if plan.strategy == "rows":
            return self.rows(shape, axes, outer_axes, outer, inner)
        return self.columns(shape, axes, outer_axes, outer, plan.run)


def generate(group: Group, name: str, input_strides: dict, simulator: bool = False,
             round_halves: bool = True, tuning: Tuning = DEFAULT,
             device: Device = HOPPER, dynamic: bool = False, lifted: tuple = (),
             into=None, varying: tuple = (), misaligned: frozenset = frozenset()) -> KernelSource:
    """The kernel of `group`; `round_halves=False` keeps float16 results of ops in float32 (jit's
    float16="float32"); `dynamic`: written for a shape class (autofuse/dynamic/); `lifted`
    (sharing.Lifted): slice starts and scalars it takes as arguments, after its outputs; `into`:
    the base its slice assignment writes in place (fusion/in_place.py), or None; `varying`: a
    shape-class build's (size, stand-in) pairs, which plan.choose counts as their stand-ins;
    `misaligned`: the inputs whose base address was not a multiple of 16 bytes (every other
    array may be read as 16-byte vectors with no element-by-element copy of the body)."""
    try:
        return _generate(group, name, input_strides, simulator, round_halves, tuning, device,
                         dynamic, lifted, into, varying, misaligned)
    except runs.RunIndexError:       # a consumer of a run's results the run cannot index
        return _generate(group, name, input_strides, simulator, round_halves,
                         tuning.replace(output_run=0, output_strip=0), device, dynamic, lifted,
                         into, varying, misaligned)


def _generate(group, name, input_strides, simulator, round_halves, tuning, device, dynamic,
              lifted, into, varying=(), misaligned=frozenset()) -> KernelSource:
    writer = KernelWriter(group, name, input_strides, simulator, tuning, device, misaligned)
    writer.dynamic = dynamic
    writer.into = into
    writer.renderer.lifted = sharing.names(lifted)
    writer.sizes += list(lifted)
    writer.renderer.ones = not dynamic
    writer.renderer.counts = dynamic
    writer.renderer.round_halves = round_halves
    plan = choose(group, tuning, device, simulator, dynamic, input_strides, varying)
    source = writer.write(plan)
    source.reason = source.reason or plan.reason     # (a product kernel's plan says more)
    return source
