"""Row strips: the kernel for 2-D loop groups read through row-shifted slices (a stencil).

`v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])` reads each
element of `u` five times. The grid-stride vector loop issues all five reads per element (20 per
vector, most of them L1 or L2 hits); here a thread owns one vector of `lanes` columns (16 bytes of
the output) over a strip of rows (Tuning.strip_rows) instead, and reads each row it needs once:
- every read is located first, by rendering the strip's outputs in a throwaway renderer and
  evaluating each read's index at two origins: a read at (strip row + a, column + d) for constant
  a and d is "resident"; others (a broadcast, a transposed read) are rendered where used, as
  anywhere else;
- a resident read of an input whose rows are 16-byte aligned vectors is a lane of one vector load
  per (input, a); the rest (the columns left and right of the vector) are one scalar load each;
- all of a strip's loads are issued before its first arithmetic, then a vector store a row;
- a strip wholly inside every slice-assigned region and inside the array takes that branch-free
  body; strips at the edges loop over their rows, a row's lanes unrolled, each lane taking its
  own branches, with 64-bit indices (_edge_rows says why);
- a base address not 16-byte aligned runs the element-by-element grid-stride loop instead
  (written only where an argument was not aligned at the first call: Tuning.assume_aligned).

Measured on an H200 (8192^2 float32 5-point stencil, benchmarks/tune.py): the grid-stride vector
loop 1.22x of the copy floor, strips of 4 rows 1.05x (of 8 rows 1.08x, of 16 1.12x); a
hand-written standalone kernel of the same shape 1.04x (BENCHMARKS.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....arrays import contiguous
from ..kernel import identifiers, storage_dtype
from ...conditions import all_of

ORIGINS = ((1000, 2000), (3000, 6000))   # (row, column) origins a read's index is evaluated at
MAX_GRID_Y = 65535


@dataclass
class Strip:
    shape: tuple
    height: int                       # rows a strip (Tuning.strip_rows)
    lanes: int
    block: int                        # threads per block, along the columns
    grid: tuple
    indices: list                     # [row b][lane k] -> (row name, column name)
    conditions: list                  # the slice assignments' conditions over those names
    resident: dict                    # (node id, index read) -> (row offset a, column offset d)
    vectors: dict                     # node id -> row offsets read as vectors
    scalars: dict                     # node id -> (a, d) read as scalars


def row_name(a: int, height: int) -> str:
    if 0 <= a < height:
        return f"r{a}"
    return f"(r0 + {a})" if a > 0 else f"(r0 - {-a})"


def column_name(d: int, lanes: int) -> str:
    if d == 0:
        return "j"
    if 0 < d < lanes:
        return f"jv{d}"
    return f"(j + {d})" if d > 0 else f"(j - {-d})"


def plan(source, shape, size: int, threads: int) -> Strip | str:
    """The strip kernel's plan for `source` (a KernelWriter of a loop group), or why it does not
    apply (then the grid-stride loop runs)."""
    height = source.tuning.strip_rows
    if not height:
        return "disabled"
    if len(shape) != 2:
        return "not 2-D"
    rows, cols = shape
    # (a shape class's kernel takes strips at every number of rows: its edge path covers few;
    # its grid's rows are checked at launch, cuda/dynamic.py)
    if rows < 2 * height and not source.dynamic:
        return f"under {2 * height} rows"
    lanes = source.vector_lanes(shape, size, threads)
    if not lanes:
        return "no vector stores"
    if any(m.op == "concatenate" for m in source.group.members.values()):
        # its pieces are branches: a read of the piece not taken may lie outside its input
        return "a concatenation"
    grid_y = -(-rows // height)
    if grid_y > MAX_GRID_Y and not source.dynamic:
        return f"more than {MAX_GRID_Y * height} rows"
    lane_names = ["j"] + [f"jv{k}" for k in range(1, lanes)]
    indices = [[(f"r{b}", column) for column in lane_names] for b in range(height)]
    conditions: list = []
    reads = source.probe_reads([index for row in indices for index in row], conditions)
    known = {f"r{b}" for b in range(height)} | set(lane_names) | \
        set(source.renderer.lifted.values())     # (slice starts passed as arguments)
    conditions = list(dict.fromkeys(conditions))
    if any(not identifiers(c) <= known for c in conditions):
        return "a slice assignment's bounds depend on a computed value"
    resident, vectors, scalars, shifts = {}, {}, {}, {}
    for position, found in enumerate(reads):
        for node_id, requested in found.items():
            param = source.names[node_id]
            node = param.node
            if param.by_value or node.ndim != 2:
                continue
            strides = param.strides or contiguous(node.shape)
            vector = strides[1] == 1 and node.shape[1] % lanes == 0 and \
                (node.shape[0] == 1 or strides[0] % lanes == 0) and \
                storage_dtype(node.dtype).itemsize * lanes <= 16
            for wanted in requested:
                spot = _offsets(wanted, lanes, height)
                if spot is None:
                    continue
                resident[(node_id, wanted)] = spot
                a, d = spot
                shifts.setdefault(node_id, set()).add(a - position // lanes)
                if vector and 0 <= d < lanes:
                    vectors.setdefault(node_id, set()).add(a)
                else:
                    scalars.setdefault(node_id, set()).add(spot)
    if not any(len(shift) > 1 for shift in shifts.values()):
        return "no input is read at two row offsets"
    block = min(threads, max(32, -(-(cols // lanes) // 32) * 32))
    grid = (-(-(cols // lanes) // block), grid_y, 1)
    return Strip(tuple(shape), height, lanes, block, grid, indices, conditions, resident,
                 {n: sorted(v) for n, v in vectors.items()},
                 {n: sorted(v) for n, v in scalars.items()})


def _offsets(index: tuple, lanes: int, height: int) -> tuple | None:
    """(a, d) where `index` reads row (strip row 0) + a, column (the vector's first) + d at every
    origin; None where it is not such a read (another form, or names evaluation cannot see)."""
    if len(index) != 2:
        return None
    found = set()
    for row, column in ORIGINS:
        names = {f"r{b}": row + b for b in range(height)}
        names.update({"j": column}, **{f"jv{k}": column + k for k in range(1, lanes)})
        try:
            at = [eval(part, {"__builtins__": {}}, names) for part in index]   # noqa: S307
        except Exception:      # a name the probe made itself (a reshape's flat index)
            return None
        if not all(isinstance(v, (int, np.integer)) for v in at):
            return None
        found.add((int(at[0]) - row, int(at[1]) - column))
    return found.pop() if len(found) == 1 else None


def write(source, strip: Strip, compute, store):
    """The kernel, as `source` (a KernelWriter) renders kernels; `compute` and `store` render the
    element-by-element fallback (as for the grid-stride loop)."""
    r = source.renderer
    ix = source.ix
    rows, cols = strip.shape
    lanes = strip.lanes
    aligned = [source.names[n] for n in strip.vectors] + source.outputs
    assumed = source.assume_aligned(aligned)      # (else the element-by-element loop too)
    for name in (f"vload{lanes}", f"vstore{lanes}") + (() if assumed else ("address",)):
        r.globals[name] = ("vector", name)
    if not assumed:
        r.emit(f"if ({' | '.join(f'address({p.name})' for p in aligned)}) % 16 == 0:")
        r.push()
    r.emit(f"j = {ix(f'(cuda.blockIdx.x * {strip.block} + cuda.threadIdx.x) * {lanes}')}")
    r.emit(f"r0 = {ix(f'cuda.blockIdx.y * {strip.height}')}")
    r.emit(f"if j < {cols}:")
    r.push()
    for b in range(1, strip.height):
        r.emit(f"r{b} = {ix(f'r0 + {b}')}")
    for k in range(1, lanes):
        r.emit(f"jv{k} = {ix(f'j + {k}')}")
    inside = [f"r{strip.height - 1} < {rows}"] + strip.conditions
    r.emit(f"if {all_of(inside)}:    # the whole strip inside: no branches")
    r.push()
    registers = _load_strip(source, strip, contiguous)
    source.preloaded = {key: registers[(key[0],) + spot] for key, spot in strip.resident.items()}
    r.assumed = []
    for b in range(strip.height):
        r.emit(f"ev = {ix(f'r{b} * {cols} + j')}")
        source.vector_lanes_store(strip.indices[b], lanes)
    r.assumed = None
    source.preloaded = {}
    r.pop()
    r.emit("else:    # a strip at an edge of the array or of an assigned region")
    r.push()
    _edge_rows(source, strip, compute, store)
    r.pop()
    r.pop()
    if not assumed:
        r.pop()
        r.emit("else:    # a base address not 16-byte aligned: element by element")
        r.push()
        size = rows * cols
        source.strided_loop(size, strip.shape, 1, compute, store,
                            start="(cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * "
                                  "cuda.blockDim.x + cuda.threadIdx.x",
                            step="cuda.gridDim.x * cuda.gridDim.y * cuda.blockDim.x")
        r.pop()
    strategy = f"row strips of {strip.height}, {lanes}-wide vectors"
    written = source.finish(strategy, strip.block, strip.grid)
    if source.dynamic:          # (a class's grid from the call's rows: cuda/dynamic.py)
        written.launch_rule = ("strip", strip.height, strip.block, lanes)
    return written


def _edge_rows(source, strip: Strip, compute, store) -> None:
    """A strip at an edge: a loop over its rows, each row's lanes unrolled (each lane taking its
    own branches) into one vector store, the lanes' loads independent of each other.

    Written once a row, not once a strip (unrolled over rows too, the edges were two thirds of a
    stencil kernel's text, which numba's type inference compiles in time growing with it), and
    not once an element: a warp holding one edge thread waits for it, and an element-by-element
    loop's dependent iterations made that wait the strips' cost (H200, heat_2d 1024^2 x 1000:
    4.24 -> 5.34 ms).

    Its indices are 64-bit and signed (KernelBase.wide_indices). In 32 bits NVVM (CUDA 13.0)
    rebased one lane's guarded read on another lane's index: `a2[ix((r1 - 1) * 46 + (jv2 - 1))]`
    became `a2 + 4 * zext(r1 * 46 + j - 47) + 8`, whose 32-bit base wraps to 2**32 - 1 on the first
    strip (r1 = 1, j = 0) where the read itself is at element 1: wave_2d's illegal address on
    the GPU, right under the simulator (tests/ptx_addresses.py runs the PTX and finds it)."""
    r = source.renderer
    rows, cols = strip.shape
    source.wide_indices = True
    try:
        if source.tuning.strip_edge_lanes:
            r.emit(f"for b in range({strip.height}):")
            r.push()
            r.emit(f"i0 = {source.ix('r0 + b')}")
            r.emit(f"if i0 < {rows}:")
            r.push()
            r.emit(f"ev = {source.ix(f'i0 * {cols} + j')}")
            source.vector_lanes_store([("i0", column) for _, column in strip.indices[0]],
                                      strip.lanes)
        else:            # Tuning.strip_edge_lanes off: one element at a time, the least text
            r.emit(f"for q in range({strip.height * strip.lanes}):")
            r.push()
            r.emit(f"i0 = {source.ix(f'r0 + q // {strip.lanes}')}")
            r.emit(f"i1 = {source.ix(f'j + q % {strip.lanes}')}")
            r.emit(f"if i0 < {rows}:")
            r.push()
            r.emit(f"e = {source.ix(f'i0 * {cols} + i1')}")
            source.identity, source.flat_index = ("i0", "i1"), "e"
            compute("e", ("i0", "i1"))
            store("e", ("i0", "i1"))
            source.flat_index = None
        r.pop()
        r.pop()
    finally:
        source.wide_indices = False


def _load_strip(source, strip: Strip, contiguous) -> dict:
    """Emit every resident read of the strip, vectors first; returns (node id, a, d) -> the
    register (or expression) holding it."""
    r = source.renderer
    lanes = strip.lanes
    registers = {}
    for node_id, offsets in strip.vectors.items():
        param = source.names[node_id]
        node = param.node
        strides = param.strides or contiguous(node.shape)
        for a in offsets:
            offset = source.offset(node.shape, strides, (row_name(a, strip.height), "j"))
            names = [f"{param.name}_{_tag(a)}_{lane}" for lane in range(lanes)]
            r.emit(f"{', '.join(names)} = vload{lanes}({param.name}, {offset})")
            for lane, name in enumerate(names):
                registers[(node_id, a, lane)] = source.register(node, name)
    for node_id, spots in strip.scalars.items():
        param = source.names[node_id]
        for a, d in spots:
            name = f"{param.name}_{_tag(a)}_{_tag(d)}"
            r.emit(f"{name} = {source.load(param.node, (row_name(a, strip.height), column_name(d, lanes)))}")
            registers[(node_id, a, d)] = name
    return registers


def _tag(offset: int) -> str:
    return f"m{-offset}" if offset < 0 else str(offset)
