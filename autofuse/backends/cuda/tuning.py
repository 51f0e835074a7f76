"""Every number and switch the CUDA code generator and launcher use, as one frozen value.

A `Tuning` is passed to the planner and the kernel writer (never patched from outside); what it
changes is in the generated text, which keys the disk cache (`key()` names a tuning in words). `autofuse.jit(f, tuning=Tuning(threads=128))` compiles `f`
with other values; `DEFAULT` is what every other call uses. The measurements behind each default
are in BENCHMARKS.md ("Why the generator's defaults").
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...errors import TuningError
from ...ir.products import ProductLimits


@dataclass(frozen=True)
class Tuning:
    # -- grid-stride (elementwise and loop) kernels ------------------------------------------
    threads: int = 256                # threads a block: pointwise, columns, split, matmul kernels
    ilp_loads: int = 4                # loads a thread aims to have in flight a step ...
    max_ilp: int = 4                  # ... taking up to this many elements a grid-stride apart
    vector: bool = True               # vector loads and stores where they apply ...
    max_lanes: int = 8                # ... of at most this many elements
    vector_bytes: int = 16            # ... and this many bytes; 8 where the full-size inputs at
    vector_step_bytes: int = 32       # 16 bytes each would pass this many (0: no limit) ...
    vector_step_cost: float = 1.0     # ... unless an element's arithmetic (OPS[...].cost summed)
    #                                   is at least this much a byte of its arrays (0: never):
    #                                   compute-bound kernels keep 16 bytes, two independent
    #                                   float64 elements a thread (black-scholes on an H200:
    #                                   0.85x the time of 8 bytes; float32 0.93x)
    pointwise_min_blocks: int = 0     # launch bounds of pointwise kernels: blocks an SM (0: none;
    #                                   5 or 6: black-scholes 0.97x, other chains 0.99-1.01x)
    vector_ilp: int = 1               # vectors a thread a grid-stride step ...
    vector_spread: str = "grid"       # ... a grid-stride apart ("grid") or a block apart ("block")
    assume_aligned: bool = True       # pointwise and rows kernels whose vector arrays were all
    #                                   16-byte aligned at the signature's first call: one vector
    #                                   body, no element-by-element copy of it for other addresses
    #                                   (a call with an argument that is not runs a program built
    #                                   for it: runtime/program.py); numba compiles half the source
    setslice_fast: bool = True        # a branch-free vector path inside every assigned region
    # -- transposed reads ------------------------------------------------------------------
    transpose_tiles: bool = True      # 2-D transposed reads through shared-memory tiles
    tile_t: int = 64                  # ... of tile_t x tile_t elements
    tile_threads: int = 512           # ... by blocks of this many threads
    tiles_min_blocks: int = 2         # float32 tiled products: launch bounds of this many blocks
    #                                   an SM (0: none), kept where ptxas spills at most
    tiles_spill_bytes: int = 16       # ... this many bytes a thread. A GELU MLP's gradient on an
    #                                   H200: three of its five products took 145-163 registers
    #                                   unbounded (one block an SM, 1.31 ms each against 0.86 for
    #                                   the others); bounded, 128 with 8 bytes spilled, 0.86-0.88
    # -- reductions ------------------------------------------------------------------------
    split_elements: int = 1 << 16     # full reductions over at least this many are split
    split_work: int = 1 << 18         # ... or whose elements times the arithmetic each takes (the
    #                                   OPS costs of its pointwise ops) reach this: a logistic
    #                                   loss and its gradient over 16384 values, ~60 units an
    #                                   element, took 16 us in one block on an H200
    split_blocks_per_sm: int = 8      # blocks of a split reduction an SM (one wave)
    reduce_vectors: int = 4           # split reductions: 16-byte vectors a thread loads a step
    reduce_spread: str = "block"      # ... placed a block apart ("grid", "chunk": see vector_spread)
    reduce_loads: str = ".L1::evict_first"    # ... read with these PTX cache qualifiers
    two_stage_columns: int = 32       # two-stage columns layout: outputs a block
    two_stage_steps: int = 8          # two-stage: elements a thread takes of its chunk at least
    two_stage_loads: int = 4          # ... this many loads a step, issued before any combines
    class_two_stage_loads: int = 8    # ... in a shape class's (its chunk a size form: H200,
    #                                   two_stage_class_steps.py: sum(0) 8192x4096 float16 1.118x
    #                                   specialized at 4, 1.033x at 8; A.T @ y 1.088x, 0.929x)
    expsum_loads: int = 16            # ... where the group holds an expsum, whose each value's
    #                                   exp waits on the running maximum (H200, expsum_parts.py:
    #                                   log-sum-exp down 4096x8192 columns 63.7 us at 4, 52.9 at
    #                                   16; over 16 rows of 2^21 53.6, 46.8)
    class_run_steps: int = 4          # a shape class's two-stage run (x.T @ g): elements a step
    #                                   (same experiment: 1.198x specialized at 1, 1.007x at 4)
    class_steps: int = 2              # a shape class's column tiles reading one array: their loop
    #                                   to a size argument takes this many such steps at once (LLVM
    #                                   unrolls a constant trip count: the specialized kernel issued
    #                                   3x the loads; class_steps_gpu.py, an H100: softmax(0)
    #                                   float16 0.93x specialized at 2, 1.00x at 1; x+r
    #                                   layernorm(0), two arrays, 1.03x at 1, 1.12x at 2)
    class_spill_bytes: int = 16       # a class's column tiles keep their launch bound where ptxas
    #                                   spills at most this many bytes a thread (x+r layernorm(0):
    #                                   8 bytes, its tile counter, at 4 blocks an SM 1.03x the
    #                                   specialized kernel; relinked at 3 blocks 1.17x). Not other
    #                                   kinds: rmsnorm's rows class, 16 bytes spilled at 20 blocks
    #                                   of 64, ran 1.18x; relinked at 18, 1.00 (H200,
    #                                   benchmarks/experiments/rows_class_variants.py)
    class_kinds_bytes: int = 1 << 20  # the automatic policy builds no class whose kernels are of
    #                                   other kinds than the call's own sizes get where the call
    #                                   moves at least this many bytes (dynamic.other_kinds; below
    #                                   it a call's time is its launches')
    short_rows: int = 16              # columns: reduced extents this short written out element by
    #                                   element (each loaded and computed once for the row), and
    short_tiles: bool = True          # a block's rows staged in shared memory (emit/short_tiles.py)
    output_run: int = 16              # columns and two-stage columns: a thread computes the outputs
    #                                   along a kept axis this short where an input is the same
    #                                   for all of them (x of x.T @ g, g of 10 columns; emit/runs.py)
    output_run_spread: int = 16       # ... and neighbouring threads read it at most this many
    #                                   bytes apart; two-stage kernels with a run: launch bounds
    output_strip: int = 4             # columns of a broadcast product: a thread computes this many
    #                                   outputs along a long kept axis where an input does not vary
    #                                   along it and lanes read it elements apart (pairwise
    #                                   distances' y rows; emit/runs.choose_strip)
    output_run_registers: int = 64    # giving a thread this many registers (0: none), and this
    output_run_steps: int = 1         # many elements a thread a step
    run_stage_bytes: int = 64         # a run whose shared input is read a row a thread (x @ w):
    #                                   a block's rows copied to shared memory this many bytes of
    #                                   each at a time (0: no staging; emit/run_tiles.py) ...
    run_stage_threads: int = 128      # ... by blocks of this many threads ...
    run_stage_outputs: int = 32       # ... each computing as many rows' runs as keep this many
    #                                   32-bit registers of accumulators (w's values loaded once
    #                                   for all the rows) ...
    run_stage_chunks: int = 8         # ... where a row is at most this many chunks ...
    run_stage_blocks: int = 4         # ... and leave this many blocks an SM
    run_stage_loads: int = 16         # ... copying this many elements a thread at once, under
    run_stage_registers: int = 64     # launch bounds for this many registers a thread (0: none)
    column_tiles: bool = True         # whole-column programs (softmax along axis 0): a block a
    column_tile_width: int = 16       # tile of this many columns (consecutive outputs) ...
    column_tile_threads: int = 512    # ... of this many threads, the rest walking the column
    column_program_bytes: int = 16 << 20  # ... where its columns take at most this many bytes
    column_program_fill: int = 4096   # ... and, with fewer columns than this, ...
    column_program_walk: int = 1024   # ... are at most this long; else each level of its
    #                                   reductions is a kernel of its own (CostModel's
    #                                   max_column_bytes, column_fill, column_walk; 0 bytes:
    #                                   column tiles at any size)
    autotune_margin: float = 2.0      # ... within this factor of a bound, timed both ways at
    #                                   the first call (autofuse/autotune.py; 0: never)
    online_sums: bool = True          # softmax's denominator beside its max, one pass, where
    #                                   columns or rows too long to hold are read (ir/online.py)
    # -- rows kernels (a block a row, the row held in registers) --------------------------------
    rows_per_sm: int = 32             # short trailing reductions stay rows kernels under this
    #                                   many rows an SM (else a thread an output: columns)
    row_items: int = 16               # elements of a row a thread aims to hold, or more where
    row_bytes: int = 64               # they take fewer bytes than this
    max_row_items: int = 32           # the most a thread holds; longer rows are re-read
    row_grid: int = 65535             # blocks, one a row; more rows loop
    row_blocks_per_sm: int = 64       # ... rows kernels whose rows move fewer bytes than
    row_launch_bytes: int = 4608      # this: at most this many blocks an SM, the rest looping.
    #                                   H200 (experiments/row_grid_ab.py): a block a row of
    #                                   33,554 rows of 1000 took 41 us whatever the row's bytes
    #                                   (about 820 blocks a microsecond: float32 1.31x the floor,
    #                                   float16 2.6x), 8,448 blocks 32.5 and 18.7 us; softmax over
    #                                   65,536 rows of 1000 (8 KB a row) 152 -> 159 us capped
    row_threads_per_sm: int = 1280    # launch bounds: ptxas fits this many threads an SM
    row_hold_halves: bool = True      # float16 rows held as halves
    keep_reduced_halves: bool = True  # a reduced float16 value read again kept in registers
    row_wide_divide: bool = True      # rows of more than row_items take the reciprocal division
    row_reload: bool = True           # row outputs read held inputs again, cache-hinted:
    row_hold_load: str = ".L1::evict_last.L2::cache_hint|evict_last"      # first read
    row_reload_load: str = ".L1::evict_first.L2::cache_hint|evict_first"  # second read
    row_stores: str = ".L1::evict_normal"     # row outputs stored in order by inline PTX
    row_hint_bytes: int = 4           # row_reload and row_stores for elements this wide or wider
    row_hoist: bool = True            # values of one per row rendered before the row's loop
    row_read_vector_bytes: int = 4    # other inputs of row outputs (gamma, beta) read as vectors
    row_vector_tail: bool = True      # rows not a multiple of block x lanes as vectors too
    row_tile_least: int = 16          # rows of this many elements ...
    row_tile_elements: int = 512      # ... up to this many: row tiles (a warp or less a row,
    row_tile_items: int = 8           # each lane about this many elements; 4 ran sums over rows
    #                                   of 16-128 1.1-1.55x slower on an H200, BENCHMARKS.md)
    # -- scans (emit/scans.py) ----------------------------------------------------------------
    scan_threads: int = 256           # threads a block of a rows or look-back scan
    scan_items: int = 8               # consecutive elements a thread scans serially a round
    scan_lines_per_sm: int = 4        # at least this many lines an SM: a block a line (rows);
    #                                   fewer, longer than a round: tiles across blocks (look-back)
    scan_short: int = 16              # lines this short, the last axis: a thread a line
    scan_column_lines: int = 4096     # a non-last axis with this many lines: a thread a line
    # -- matrix products -------------------------------------------------------------------
    tile: int = 128                   # the general matmul: tile x tile outputs a block ...
    tile_k: int = 16                  # ... tile_k-deep slabs
    micro: int = 8                    # ... micro x micro outputs a thread
    prefetch: bool = True             # ... the next slab read into registers during this one
    staging_loop: bool = True         # ... its staging reads and stores written as loops over a
    #                                   thread's slots (a local array LLVM unrolls into registers)
    #                                   rather than written out: half the kernel's lines (issue
    #                                   30: no kernel over 400 lines); H200, staging_loop_ab.py:
    #                                   covariance / conv2d_slices float32 0.76 / 0.84 of the
    #                                   written-out time, float64 1.014 / 1.021
    register_block: bool = True       # ... float32/float64: the accumulators a local array, a K
    #                                   step one intrinsic call (intrinsics/register_block.py:
    #                                   the same PTX arithmetic, numba's front end 5x faster)
    epilogue_loop: int = 4            # ... an epilogue of more ops than this (a sum of products'
    #                                   results) applied once in the text, in a loop over the
    #                                   accumulators staged through shared memory a row of the
    #                                   thread's at a time, not written out for each of them (0:
    #                                   always written out)
    tiles_side: int = 128             # float32 tiles kernel: tiles_side x tiles_side a block, or
    tiles_narrow: int = 64            # tiles_wide x tiles_narrow where the result has at most
    tiles_wide: int = 256             # tiles_narrow columns (or rows)
    tiles_depth: int = 8              # ... K elements a shared slab
    # -- staged products (emit/staged.py): stacks of small products, K-small products ----------
    staged_tile_m: int = 64           # a work item's tile: at most this many rows (this many
    staged_tile_m_short: int = 32     # where K <= ProductLimits.small_k: a write-bound result) ...
    staged_tile_n: int = 128          # ... and columns of one product's result
    staged_rows: int = 4              # a thread's outputs: this many rows (fewer where an item
    staged_columns: int = 4           # would have under a warp) x this many columns
    staged_least_threads: int = 64    # items a block together up to this many threads
    staged_unroll: int = 8            # K steps written out a loop iteration
    staged_shared_bytes: int = 47104  # the staged operands' shared memory, at most (K in rounds;
    #                                   under the 48 KiB static limit by the rounding's slack)
    staged_blocks_per_sm: int = 16    # blocks an SM where each block loops over items
    staged_registers: int = 16        # a thread's share of a tile at most this many elements:
    staged_prefetch: bool = True      # held in registers, the next item's read during this one's
    # -- which products run as reductions (ir/products.py; ProductLimits(0, 0, 0): none) ------
    # attention_head: attention of head dimensions up to this runs as one flash kernel
    # (ir/attention.py; emit/attention.py)
    # reduction_k: x @ w with 4-16 columns is a reduction (a thread an output, or the staged run
    # up to K = 128) only up to this K, a tiled product past it
    products: ProductLimits = ProductLimits(staged=True, split_k=8192, attention_head=128,
                                            reduction_k=128)
    gemm: bool = True                 # float32/float64 products: the compact kernel general over
    #                                   sizes (emit/gemm.py; tiles_* sizes it); False: the kernels
    #                                   above, specialized to each shape
    gemm_unroll: int = 8              # ... K steps of a slab written out (a loop where fewer than
    #                                   tiles_depth)
    gemm_blocks: int = 2              # ... float32: launch bounds, blocks an SM (0: none)
    gemm_over_tiles: bool = False     # ... also where the float32 tiles kernel applies (which
    #                                   measured 12-25% faster there, compiled per shape)
    # -- tensor cores (emit/mma_gemm.py, planned by emit/mma_plan.py) ---------------------------
    mma: bool = True                  # float64 and float16 products (and float32 ones under
    #                                   matmul_precision "tf32"/"3xtf32") on tensor cores
    matmul_precision: str = "float32"  # float32 products: "float32" (CUDA cores), "tf32" or
    #                                   "3xtf32" (jit(matmul_precision=...) sets it)
    mma_f64_shape: str = "mma_f64_m16n8k8"    # float64's instruction (intrinsics/mma_shapes.py)
    mma_f64_tile: tuple = (2, 2, 2, 4, 2)     # warps along M, N; instruction tiles a warp along
    mma_tile: tuple = (2, 4, 4, 4, 2)         # M, N; instruction steps a shared slab (float64;
    #                                           TF32; float16 where mma_stages is 0)
    mma_f16_tile: tuple = (2, 2, 4, 8, 2)     # float16 (emit/mma_pipeline.py): the same fields
    #                                           (128 x 128 a block, 4 warps of 64 x 64, K 32 a stage),
    #                                           halved along M, then N, where a wave would be short
    mma_stages: int = 3               # ... shared stages of its cp.async pipeline (fewer where 48
    #                                   KiB cannot hold them; 0: the register-staged kernel, 3.9x
    #                                   slower on an H100 at 8192x4096x4096). Its kernel text keeps
    #                                   numba's passes short (tuples, a looped epilogue: 4-5 s to
    #                                   PTX on a 2-core machine, from 45 s: BENCHMARKS.md)
    mma_blocks: int = 0               # ... launch bounds: blocks an SM the registers allow (0: none;
    #                                   8 warps of 64 x 32 took 0.945 ms with 2, 1.183 with none,
    #                                   against 0.855 for these 4 warps unbounded: BENCHMARKS.md)
    # -- flash attention (emit/attention.py, planned by emit/attention_plan.py) -----------------
    attention_rows: int = 64          # query rows a block (fewer where Sq is short or shared
    attention_keys: int = 32          # memory is short), keys a staged tile,
    attention_rx: int = 4             # rows a thread, and threads a row (a power of two up to
    attention_lanes: int = 8          # 32; the keys and output columns are split among them)
    attention_blocks: int = 4         # launch bounds where the kernel holds float32 values:
    #                                   blocks an SM the registers must allow (0: none). ptxas for
    #                                   sm_90 fits the D = 64 kernel in 128 registers with no spill
    #                                   (causal: 4 bytes) against 168-177 unbounded: 4 blocks of 128
    #                                   threads an SM, not 3, and 32 x 2048 rows in 1.94 waves, not
    #                                   2.59 (not yet timed against 0 on a GPU)
    attention_mma: bool = True        # float16 attention on tensor cores (emit/attention_mma.py)
    attention_mma_tile: tuple = (4, 64)       # ... warps a block (16 query rows each), keys a tile
    # -- the CUDA simulator's sizes (small inputs, many cases) ----------------------------------
    attention_sim: tuple = (16, 8, 2, 4)      # attention's rows, keys, rx, lanes (32 threads)
    attention_mma_sim: tuple = (1, 16)        # the tensor-core attention's warps, keys
    sim_threads: int = 32             # two-stage reductions: threads a block
    sim_blocks: int = 4               # ... blocks (the wave)
    sim_steps: int = 2                # ... elements a thread at least
    # -- sorts (emit/sorting.py) ----------------------------------------------------------
    sort_row: int = 4096              # rows of a lone sort up to this many (padded) elements are
    #                                   sorted in shared memory (where 48 KiB hold them)
    sort_threads: int = 512           # threads a block of a sort kernel, at most
    library_sort: bool = True         # longer rows: CuPy's or torch's sort, for their arrays
    # -- scatter-adds (emit/scatter.py) ---------------------------------------------------------
    scatter_threads: int = 256        # threads a block of a scatter-add kernel
    scatter_blocks_per_sm: int = 8    # blocks an SM at most (a grid-stride loop over the values)
    # -- stencils --------------------------------------------------------------------------
    strip_rows: int = 4               # rows of a strip kernel (0: never take it)
    strip_edge_lanes: bool = True     # edge strips: a row's lanes unrolled (vs one element at a
    #                                   time: less text to compile, a slower warp at the edges)
    # -- arithmetic ------------------------------------------------------------------------
    invariant_divide: bool = True     # a / b with b fixed over a loop: a reciprocal, then multiplies
    native_halves: bool = True        # float16 add, subtract, multiply as f16 instructions
    # -- launches --------------------------------------------------------------------------
    overlap: bool = True              # kernels may launch to overlap the end of the one before
    direct_bytes: int = 32 << 20      # calls moving this many bytes a kernel launch directly,
    #                                   not as a CUDA graph

    def __post_init__(self):
        # NOTE: the float32 tiles kernel and the compact product kernel lay a block out in warps
        # of 4 x 8 threads of 8 x 8 results (32 rows x 64 columns), and each tile size serves as
        # rows and as columns: Tuning(tiles_narrow=32) had written `w // 0` and read out of
        # bounds on an H200 (an illegal address, found timing x @ w variants).
        for name in ("tiles_side", "tiles_wide", "tiles_narrow"):
            size = getattr(self, name)
            if name == "tiles_narrow" and size == 0:
                continue
            if size < 64 or size % 64:
                raise TuningError(f"Tuning.{name}={size}: product tiles are multiples of 64 "
                                  f"(a warp computes 32 x 64 results)" +
                                  (", or 0 (off)" if name == "tiles_narrow" else ""))
        if (self.tiles_side // 8) ** 2 > 1024 or \
                (self.tiles_wide // 8) * (self.tiles_narrow // 8) > 1024:
            raise TuningError(f"Tuning.tiles_side={self.tiles_side}, tiles_wide="
                              f"{self.tiles_wide}, tiles_narrow={self.tiles_narrow}: a tile "
                              f"of more than 1,024 threads (a thread computes 8 x 8 results)")

    def split_blocks(self, device) -> int:
        """Blocks of a split or two-stage reduction on `device`: one wave."""
        return self.split_blocks_per_sm * device.sms

    def replace(self, **changes) -> "Tuning":
        """This tuning with some fields changed (names as the fields, or their upper-case
        spellings in BENCHMARKS.md)."""
        return dataclasses.replace(self, **{name.lower(): value for name, value in changes.items()})

    def changes(self) -> dict:
        """The fields that differ from the defaults, {name: value}."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}

    def key(self) -> str:
        """Text naming this tuning for cache keys: "" at the defaults (so cached kernels keep
        their keys), else the changed fields."""
        return ",".join(f"{name}={value!r}" for name, value in sorted(self.changes().items()))


DEFAULT = Tuning()
