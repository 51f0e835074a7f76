"""The CUDA backend: each fusion group as one numba.cuda kernel over raw pointers, compiled to PTX,
linked to a cubin (cached on disk), loaded and launched through the driver on the caller's stream.

Where each step lives:
- which kernel a group becomes, and why: plan.py (`choose`), sized by tuning.py (`Tuning`, every
  generator constant) and device.py (`Device`, the GPU's facts);
- its source: writer.py (`KernelWriter`: kernel.py's core plus one emitter a strategy in emit/:
  elementwise, vector, transpose, strip, rows, tiles, columns (with runs of outputs a thread:
  runs, run_tiles; short rows staged: short_tiles), split, two_stage (run_two_stage), combine,
  scans, matmul, matmul_tiles, gemm, mma_gemm (tensor cores; mma_plan.py plans it), sorting);
  the device functions kernels call are in intrinsics/ (mma.py: tensor-core instructions,
  mma_shapes.py);
- compiled: compile.py (module text -> PTX -> cubin, disk cache);
- launched: runtime/ (program.py runs a signature; host.py and graph.py generate its host call;
  driver.py is the CUDA driver; library_sort.py hands a lone long sort to CuPy or torch,
  library_fft.py an FFT to cupy.fft or torch.fft).

Without a GPU, `lower()` still generates every kernel's source and PTX for inspection; under the
CUDA simulator (NUMBA_ENABLE_CUDASIM=1) the same source runs on NumPy arrays.
"""
from __future__ import annotations

import dataclasses
import os
import sys

import numpy as np

from ...fusion import CostModel
from ...fusion.columns import column_sizes
from ...fusion.in_place import region_base
from ...ir.fourier_plan import FourierLimits
from .. import cuda_problem, sharing
from .compile import CompiledKernel, compiled_before, module_text
from .compile_workers import caller_warm, processes, running, warm
from .emit import attention_plan, mma_plan, staged_plan
from .device import HOPPER, Device, from_attributes
from .runtime.library_fft import FourierKernel, call_text, library_for_fft
from .runtime.program import CudaProgram, SimulatorProgram
from .tuning import DEFAULT, Tuning
from .writer import generate

COST = CostModel(max_row=32 * 1024, region_updates=True, max_reductions=8,
                 broadcast_recompute=64, broadcast_recompute_cost=8, broadcast_chains=True,
                 broadcast_across=True)
# np.fft's cost rule here (ir/fourier_plan.py), not yet measured on a GPU: estimated from an H100's
# 3.35 TB/s and ~60 TFLOP/s float32, the library step's stored input and result (16 bytes an
# element of complex64 each way) cost about what 64 complex multiply-adds do, and a launch
# (~5 us) far more than a short transform's arithmetic: a short transform with a neighbour is
# traced.
FOURIER = FourierLimits(library_element_terms=64.0, library_call_terms=1 << 20)


def simulating() -> bool:
    if "numba" in sys.modules:
        from numba import config
        return bool(config.ENABLE_CUDASIM)
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def tuning_of(options: dict) -> Tuning:
    """The Tuning a jit asked for (`jit(tuning=...)`, checked there), or the defaults, with the
    jit's matmul_precision (where it names one other than "float32")."""
    tuning = options.get("tuning") or DEFAULT
    precision = options.get("matmul_precision", "float32")
    if precision != "float32":
        tuning = tuning.replace(matmul_precision=precision)
    return tuning


def cost_model(options: dict) -> CostModel:
    """The cost model fusion decides by: COST, with the tuning's bounds on whole-column
    programs (measured on an H200: BENCHMARKS.md, "Reductions in every layout")."""
    tuning = tuning_of(options)
    return dataclasses.replace(COST, max_column_bytes=tuning.column_program_bytes,
                               column_fill=tuning.column_program_fill if
                               tuning.column_program_bytes else 0,
                               column_walk=tuning.column_program_walk,
                               online_sums=tuning.online_sums)


def candidates(entry) -> list:
    """Options to time at the signature's first call (autofuse/autotune.py): where a reduction
    over leading or middle axes sits within Tuning.autotune_margin of the whole-column bounds
    (bytes; or few columns of about the walk's length), its program as column tiles and as a
    kernel a level."""
    tuning = tuning_of(entry.options)
    margin = tuning.autotune_margin
    if not margin or not tuning.column_program_bytes or entry.varying:
        return []
    cost = cost_model(entry.options)
    if not any(_near_columns(node, cost, margin) for node in entry.graph.nodes
               if node.kind == "reduce" and node.inputs):
        return []
    return [("column tiles", dict(entry.options, tuning=tuning.replace(column_program_bytes=0))),
            ("a kernel a level", dict(entry.options,
                                      tuning=tuning.replace(column_program_bytes=1)))]


def _near_columns(node, cost: CostModel, margin: float) -> bool:
    shape, axes = node.inputs[0].shape, tuple(node.attrs["axes"])
    if axes == tuple(range(len(shape) - len(axes), len(shape))):
        return False
    columns, inner, read = column_sizes(node)
    return cost.max_column_bytes / margin <= read <= cost.max_column_bytes * margin or (
        columns < cost.column_fill * margin and
        cost.column_walk / margin < inner <= cost.column_walk * margin)


def timeable(leaves) -> bool:
    """Whether a call's arguments let its programs be timed (autotune.py): on the device (the
    simulator runs on host arrays), else copies to and from the host would be most of the time."""
    return simulating() or not any(isinstance(leaf, np.ndarray) and leaf.size > 1
                                   for leaf in leaves)


def synchronize(entry) -> None:
    """Wait for the entry's last call (autotune.py's timing)."""
    if not simulating():
        from .runtime import driver
        driver.synchronize(entry.program.stream())


def device_key() -> str:
    """The facts of the GPU a choice timed here holds for (autotune.py's record)."""
    return "simulator" if simulating() else repr(device_for(False))


def product_limits(options: dict):
    """Which matrix products run as reductions (ir/products.py): the tuning's."""
    return tuning_of(options).products


def fourier_limits(options: dict, leaves) -> FourierLimits:
    """Which fft nodes run as the array library's FFT here (ir/fourier_plan.py): the jit's
    `fft_limits` or the defaults, run by the call's library (runtime/library_fft.py), or traced
    where there is none."""
    limits = options.get("fft_limits") or FOURIER
    if limits.library is None:
        return dataclasses.replace(limits, why_none=limits.why_none or "fft_limits(library=None)")
    library, why = library_for_fft(leaves)
    return dataclasses.replace(limits, library=library, why_none=why)


def device_for(simulator: bool) -> Device:
    """The facts of the GPU this process runs kernels on; a Hopper's where none runs them (the
    simulator, or lowering without a GPU)."""
    from .. import cuda_problem
    if simulator or cuda_problem() is not None:
        return HOPPER
    from .runtime import driver
    return from_attributes(driver.ensure_context())


def passable(dtype) -> bool:
    """Whether a scalar constant of `dtype` may be a kernel argument (backends/sharing.py): not a
    float16 one (held in a float32 register) nor a complex one (wider than a parameter slot)."""
    return dtype.kind != "c" and dtype != np.float16


def before_trace(function_key: str) -> None:
    """A build is about to trace: where this process has compiled no kernel yet, kernels can run
    here, and no program of the function loaded here before (compile.note_compiled: then its
    kernels are likely in the disk cache), start the warm compile workers, so that their start
    (numba-cuda's imports and first compile, 1-3 s) overlaps tracing and planning
    (compile_workers.py)."""
    if simulating() or caller_warm() or processes() < 2 or running() or \
            compiled_before(function_key) or cuda_problem() is not None:
        return
    warm()


def liftable(group) -> bool:
    """Whether the kernel of `group` reads slice starts and constants through the renderer, so
    that they can be its arguments (backends/sharing.py): those sharing's LIFTABLE names, and a
    product's general kernels (emit/matmul.py: its operands and epilogue through their index
    maps; the tensor-core and compact kernels refuse slices of their operands). Not a staged
    product or attention, whose plans read their operands' layout. A convolution written as a
    sum of products of shifted slices (`out += x[:, i:i + h, j:j + w] @ k[i, j]`) then compiles
    one product kernel, not one a shift."""
    if group.kind == "output":
        return not staged_plan.marked(group) and not attention_plan.marked(group)
    return group.kind in sharing.LIFTABLE


def prepare(entry) -> None:
    """Plan and write each group's kernel (the entry's kernel records get the strategy, reason,
    source, launch and PTX), and give the entry its program. Groups of one structure (a loop's
    sweeps) share the first one's kernel: written, compiled and loaded once."""
    simulator = simulating()
    strides = {} if simulator else getattr(entry, "input_strides", {})
    tuning, device = tuning_of(entry.options), device_for(simulator)
    misaligned = misaligned_inputs(entry, simulator)
    kernels, first = [], {}
    lifted = sharing.plan([record.group for record in entry.kernels], strides, passable,
                          liftable)
    users, results = entry.graph.users(), {node.id for node in entry.graph.outputs}
    for record in entry.kernels:
        group = record.group
        if group.kind == "fft":
            kernels.append(_fourier_kernel(record))
            continue
        places = lifted.get(group.id, frozenset())
        if attention_plan.marked(group):
            # NOTE: attention's plan reads its mask's constants (the causal tiles it skips): a
            # kernel is shared only where they are the same, never taken as arguments
            places = frozenset()
        # (a staged product's kernel has its sizes in its text: groups share it by shape)
        general = group.kind == "output" and not staged_plan.marked(group) \
            and not attention_plan.marked(group)
        into = in_place(group, users, results)
        structure = ((general and mma_plan.structure(group, strides, tuning,
                                                     device.shared_per_block))
                     or group.structure(strides, lifted=places), into is not None,
                     tuple(node.id in misaligned for node in group.canonical()[0]))
        origin = first.get(structure)
        if origin is None:
            source = generate(group, record.name, strides, simulator,
                              round_halves=entry.options.get("float16", "numpy") == "numpy",
                              tuning=tuning, device=device,
                              lifted=sharing.arguments(group, places), into=into,
                              misaligned=misaligned)
            kernel = first[structure] = CompiledKernel(record, source, module_text(source, simulator),
                                                       simulator)
            reason = source.reason
        else:
            source = origin.source.rebound(group.correspondence(origin.group), strides)
            kernel = CompiledKernel(record, source, origin.text, simulator, origin)
            reason = f"{origin.record.reason}; the kernel of {origin.record.name} (the same structure" \
                + (f"; {sharing.describe([s for s in source.sizes if isinstance(s, sharing.Lifted)])} "
                   f"passed as arguments)" if places else ")")
        kernel.into = None if into is None else into.id
        text = kernel.text
        # NOTE: PTX is compiled lazily: a cubin found in the disk cache needs no numba at all.
        record.source, record.strategy, record.reason = text, source.strategy, reason
        record.ptx_provider = None if simulator else kernel.ptx_text
        record.launch = {"grid": source.grid, "block": source.block}
        if source.min_blocks and not simulator:
            record.launch["min_blocks_per_sm"] = source.min_blocks
        kernels.append(kernel)
    entry.program = SimulatorProgram(entry, kernels) if simulator else \
        CudaProgram(entry, kernels, tuning)


def misaligned_inputs(entry, simulator: bool) -> frozenset:
    """The inputs a kernel may not assume 16-byte aligned: those whose base address was not at
    this signature's first call (Entry.misaligned); on a GPU only device arrays (a NumPy
    argument reaches the device as a new, aligned copy), under the simulator every array."""
    misaligned = getattr(entry, "misaligned", frozenset())
    if simulator:
        return misaligned
    return frozenset(node for node in misaligned if node in getattr(entry, "input_strides", {})) \
        | getattr(entry, "misaligned_on_device", frozenset())


def in_place(group, users: dict, results: set):
    """The base `group` writes its slice assignment into (fusion/in_place.py), or None. Not where
    the assignment is a result of the function: with jit(cuda_graph=True) a graph's
    intermediates are its own memory, kept between calls, which a result must not be."""
    base = region_base(group, users, results)
    return None if base is None or group.root.id in results else base


def _fourier_kernel(record) -> FourierKernel:
    """An fft group: the call's library runs it between kernels (runtime/library_fft.py)."""
    node = record.group.transform
    library = node.attrs["library"]
    record.strategy = f"library FFT: {library}.fft"
    record.reason = node.attrs["plan"]
    record.source = f"# a step between kernels, not a kernel\n{call_text(node, library)}\n"
    return FourierKernel(record, library)


__all__ = ["COST", "Tuning", "Device", "cost_model", "prepare", "product_limits", "simulating"]
