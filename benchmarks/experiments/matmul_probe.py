"""A standalone experiment: which steps take a numba.cuda FP32 SIMT SGEMM, C = relu(A @ B + bias),
from autofuse's current kernel (~0.5x cuBLAS on an H200) towards cuBLAS?

Every variant is generated here as Python source with the shapes baked in as constants (as autofuse
does), compiled with numba.cuda.compile_ptx over raw pointers (CPointer(float32)), and checked
against NumPy (simulator) or CuPy (GPU) before it is timed. Nothing here is used by autofuse.

    python benchmarks/experiments/matmul_probe.py --ptx   # sm_90 PTX of every variant (no GPU)
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/experiments/matmul_probe.py --sim
    python benchmarks/experiments/matmul_probe.py         # on a GPU: check and time, M=8192 N=K=4096

Options: --only NAME[,NAME] picks variants; --size M,N,K changes the GPU size.

The variants (fields of Variant below):
  autofuse      the kernel autofuse generates today (its own generator's source), for reference
  a_base        our structure re-written: 128x128x16 tiles, 8x8 per thread strided by 16, scalar
                loads, register prefetch of the next slab, two syncthreads per slab
  b_lds128      (a) with each thread's 8x8 outputs as two 4-wide chunks per side, read from shared
                memory with ld.shared.v4.f32 (an llvmlite intrinsic): 4 loads per k instead of 16
  c_ldg128      (b) plus 16-byte global loads (ld.global.nc.v4.f32) of A, B and bias, 16-byte
                shared stores of B and 16-byte global stores of C (needs K % 4 == N % 4 == 0)
  d_dbuf        (c) with two shared slabs (double buffering): one syncthreads per slab
  e_warp        (d) with a warp as 4x8 threads (cuBLAS/CUTLASS style), so a warp's v4 reads of
                A and B are each one 64/128-byte contiguous run (one shared wavefront)
  e_warp_lb2    e_warp with launch_bounds (256, 2): at most 128 registers, two blocks per SM
  e_warp_k8     e_warp with 8-deep slabs (half the shared memory, twice the syncs, fewer
                staging registers: 128, so two blocks per SM without launch bounds)
  e_128x256     128x256 tiles, 8x16 outputs per thread (128 accumulators), 8-deep slabs, double
                buffered, warp layout: twice the FMAs per shared load, one block per SM
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

os.environ.setdefault("CUPY_TF32", "0")       # the reference must be plain FP32 SGEMM

import numba                                   # noqa: E402
from numba import cuda, types                  # noqa: E402

SIM = bool(numba.config.ENABLE_CUDASIM)
CC = (9, 0)
F32 = np.float32

# -- intrinsics: 16-byte loads and stores -------------------------------------------------------
# Compiled: llvmlite IR. Shared: the array's generic data pointer cast to addrspace(3), bitcast to
# <4 x float>, loaded/stored with align 16 (NVPTX emits ld/st.shared.v4.f32). Global: the same in
# addrspace(1); loads carry !invariant.load, so they become ld.global.nc.v4.f32 (read-only path).
# Simulator: pure-Python twins with the same signatures, which also assert the 16-byte alignment
# the compiled forms assume (element index a multiple of 4 on a 16-byte-aligned base).

if SIM:
    def _aligned(index):
        assert int(index) % 4 == 0, f"a 16-byte access at element {index} is misaligned"

    def ld_shared_v4(array, index):
        """4 elements from flat element `index` of a C-contiguous array of any rank."""
        _aligned(index)
        flat = array.reshape(-1)
        return flat[index], flat[index + 1], flat[index + 2], flat[index + 3]

    def st_shared_v4(array, index, x0, x1, x2, x3):
        _aligned(index)
        flat = array.reshape(-1)
        assert np.shares_memory(flat, array) or flat.size == 0
        flat[index] = x0
        flat[index + 1] = x1
        flat[index + 2] = x2
        flat[index + 3] = x3

    ld_global_v4 = ld_shared_v4
    st_global_v4 = st_shared_v4
else:
    from llvmlite import ir
    from numba.cuda.extending import intrinsic

    _f32 = ir.FloatType()
    _v4 = ir.VectorType(_f32, 4)
    _i32 = ir.IntType(32)

    def _vector_pointer(context, builder, container_type, container, index, addrspace):
        if isinstance(container_type, types.Array):
            data = context.make_array(container_type)(context, builder, container).data
        else:                                   # a CPointer(float32)
            data = container
        typed = builder.addrspacecast(data, ir.PointerType(_f32, addrspace))
        element = builder.gep(typed, [index])
        return builder.bitcast(element, ir.PointerType(_v4, addrspace))

    def _unpack(context, builder, tuple_type, vector):
        items = [builder.extract_element(vector, ir.Constant(_i32, i)) for i in range(4)]
        return context.make_tuple(builder, tuple_type, items)

    def _pack(builder, values):
        vector = ir.Constant(_v4, ir.Undefined)
        for i, value in enumerate(values):
            vector = builder.insert_element(vector, value, ir.Constant(_i32, i))
        return vector

    def _check(container, index, want_array):
        ok_container = (isinstance(container, types.Array) if want_array
                        else isinstance(container, types.CPointer))
        return (ok_container and container.dtype == types.float32
                and isinstance(index, types.Integer))

    def _load_intrinsic(addrspace, want_array, invariant):
        def typer(typingctx, container, index):
            if not _check(container, index, want_array):
                return None
            sig = types.UniTuple(types.float32, 4)(container, index)

            def codegen(context, builder, signature, args):
                pointer = _vector_pointer(context, builder, signature.args[0], args[0], args[1],
                                          addrspace)
                value = builder.load(pointer, align=16)
                if invariant:
                    value.set_metadata("invariant.load", builder.module.add_metadata([]))
                return _unpack(context, builder, signature.return_type, value)
            return sig, codegen
        return typer

    def _store_intrinsic(addrspace, want_array):
        def typer(typingctx, container, index, x0, x1, x2, x3):
            if not _check(container, index, want_array):
                return None
            sig = types.void(container, index, types.float32, types.float32, types.float32,
                             types.float32)

            def codegen(context, builder, signature, args):
                pointer = _vector_pointer(context, builder, signature.args[0], args[0], args[1],
                                          addrspace)
                builder.store(_pack(builder, args[2:]), pointer, align=16)
                return context.get_dummy_value()
            return sig, codegen
        return typer

    def _named(name, typer):
        typer.__name__ = name
        return intrinsic(typer)

    ld_shared_v4 = _named("ld_shared_v4", _load_intrinsic(3, True, False))
    st_shared_v4 = _named("st_shared_v4", _store_intrinsic(3, True))
    ld_global_v4 = _named("ld_global_v4", _load_intrinsic(1, False, True))
    st_global_v4 = _named("st_global_v4", _store_intrinsic(1, False))


# -- the variants -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    name: str
    tile_m: int = 128
    tile_n: int = 128
    depth: int = 16              # K slab
    micro_m: int = 8             # outputs per thread along M
    micro_n: int = 8             # ... along N
    vec_smem: bool = False       # 4-wide chunks per thread, read with ld.shared.v4
    vec_gmem: bool = False       # ld.global.nc.v4 for A/B/bias, st.global.v4 for C
    dbuf: bool = False           # two shared slabs, one syncthreads per slab
    warp_layout: bool = False    # a warp = 4 (M) x 8 (N) threads instead of 2 x 16
    launch_bounds: tuple | None = None

    @property
    def side_m(self):
        return self.tile_m // self.micro_m

    @property
    def side_n(self):
        return self.tile_n // self.micro_n

    @property
    def threads(self):
        return self.side_m * self.side_n

    def unsupported(self, m, n, k) -> str | None:
        """Why this variant cannot run the shape (None: it can)."""
        if self.vec_gmem and (k % 4 or n % 4):
            return "16-byte global loads need K % 4 == 0 and N % 4 == 0"
        return None


AUTOFUSE = "autofuse"
VARIANTS = [
    Variant("a_base"),
    Variant("b_lds128", vec_smem=True),
    Variant("c_ldg128", vec_smem=True, vec_gmem=True),
    Variant("d_dbuf", vec_smem=True, vec_gmem=True, dbuf=True),
    Variant("e_warp", vec_smem=True, vec_gmem=True, dbuf=True, warp_layout=True),
    Variant("e_warp_lb2", vec_smem=True, vec_gmem=True, dbuf=True, warp_layout=True,
            launch_bounds=(256, 2)),
    Variant("e_warp_k8", depth=8, vec_smem=True, vec_gmem=True, dbuf=True, warp_layout=True),
    Variant("e_128x256", tile_n=256, micro_n=16, depth=8, vec_smem=True, vec_gmem=True,
            dbuf=True, warp_layout=True),
]
NAMES = [AUTOFUSE] + [v.name for v in VARIANTS]


# -- the source generator -----------------------------------------------------------------------
class Lines:
    def __init__(self):
        self.lines = []
        self.depth = 1

    def __call__(self, text):
        self.lines.append("    " * self.depth + text)

    def push(self):
        self.depth += 1

    def pop(self):
        self.depth -= 1


def generate(v: Variant, m: int, n: int, k: int) -> str:
    """The kernel `sgemm_relu(a, b, bias, c)` for this variant and shape, as Python source."""
    tm_, tn_, d, um, un, T = v.tile_m, v.tile_n, v.depth, v.micro_m, v.micro_n, v.threads
    sm, sn = v.side_m, v.side_n
    assert tm_ % um == 0 and tn_ % un == 0 and d % 4 == 0
    if v.vec_smem:
        assert um % 4 == 0 and un % 4 == 0
    if v.warp_layout:
        assert sm % 4 == 0 and sn % 8 == 0 and T % 32 == 0
    guard_m, guard_n, guard_k = m % tm_ != 0, n % tn_ != 0, k % d != 0
    L = Lines()
    L("t = cuda.threadIdx.x")
    if v.warp_layout:
        # NOTE: lanes 0-7 of a warp walk N, lanes 8/16/24 step M: a warp covers 4 x 8 threads,
        # so its 16-byte reads of A are 64 contiguous bytes and of B 128 (one wavefront each).
        warps_n = sn // 8
        L("w = t // 32")
        L("lane = t % 32")
        L(f"tm = (w // {warps_n}) * 4 + lane // 8")
        L(f"tn = (w % {warps_n}) * 8 + lane % 8")
    else:
        L(f"tm = t // {sn}")
        L(f"tn = t % {sn}")
    L(f"row0 = cuda.blockIdx.y * {tm_}")
    L(f"col0 = cuda.blockIdx.x * {tn_}")
    nbuf = 2 if v.dbuf else 1
    align = "" if SIM else ", alignment=16"
    # NOTE: 2-D like autofuse's (rows: k of the slab(s)): numba's negative-index wraparound
    # folds away on 2-D [k, m] indexing, not on a flat 1-D index (a select per load remains).
    L(f"sa = cuda.shared.array(({nbuf * d}, {tm_}), nb_f32{align})")
    L(f"sb = cuda.shared.array(({nbuf * d}, {tn_}), nb_f32{align})")
    acc = [[f"c{x}_{y}" for y in range(un)] for x in range(um)]
    for row in acc:
        L(" = ".join(row) + " = zero")

    # staging slots: which elements of the slab this thread moves global -> registers -> shared
    width = 4 if v.vec_gmem else 1
    a_slots, b_slots = [], []
    per_a = d * tm_ // width
    per_b = d * tn_ // width
    assert per_a % T == 0 and per_b % T == 0, "slab not evenly shared by the threads"
    for p in range(per_a // T):
        q = f"(t + {p * T})" if p else "t"
        # consecutive threads walk K within a row of A (coalesced), then rows
        L(f"am{p} = {q} // {d // width}")
        L(f"ak{p} = ({q} % {d // width}) * {width}" if width > 1 else f"ak{p} = {q} % {d}")
        L(f"ag{p} = (row0 + am{p}) * {k} + ak{p}")
        a_slots.append(p)
    for p in range(per_b // T):
        q = f"(t + {p * T})" if p else "t"
        # consecutive threads walk N within a row of B
        L(f"bk{p} = {q} // {tn_ // width}")
        L(f"bn{p} = ({q} % {tn_ // width}) * {width}" if width > 1 else f"bn{p} = {q} % {tn_}")
        L(f"bg{p} = bk{p} * {n} + col0 + bn{p}")
        b_slots.append(p)

    def regs(prefix, p):
        return [f"{prefix}{p}_{i}" for i in range(width)]

    def fetch(k_origin: str):
        """Global reads of the slab at k_origin into registers (guarded where the shape asks)."""
        for p in a_slots:
            conds = ([f"row0 + am{p} < {m}"] if guard_m else []) + \
                    ([f"{k_origin} + ak{p} < {k}"] if guard_k else [])
            _guarded_load(L, regs("ar", p), "a", f"ag{p} + {k_origin}", conds, width)
        for p in b_slots:
            conds = ([f"{k_origin} + bk{p} < {k}"] if guard_k else []) + \
                    ([f"col0 + bn{p} < {n}"] if guard_n else [])
            _guarded_load(L, regs("br", p), "b", f"bg{p} + ({k_origin}) * {n}", conds, width)

    def store(row: str):
        """Registers -> shared rows row.. : A transposed to sa[k, m], B as is to sb[k, n]."""
        for p in a_slots:
            for i, r in enumerate(regs("ar", p)):
                L(f"sa[{row}ak{p} + {i}, am{p}] = {r}")
        for p in b_slots:
            rs = regs("br", p)
            if width == 4 and v.vec_smem:     # flat element index into the 2-D array
                L(f"st_shared_v4(sb, ({row}bk{p}) * {tn_} + bn{p}, {', '.join(rs)})")
            else:
                for i, r in enumerate(rs):
                    L(f"sb[{row}bk{p}, bn{p} + {i}] = {r}")

    def compute(row: str | None):
        """The slab's FMAs, unrolled: constant shared offsets past one base per operand.
        `row`: the variable holding the slab's first shared row (None: row 0)."""
        if v.vec_smem:
            L(f"abase = {row} * {tm_} + tm * 4" if row else "abase = tm * 4")
            L(f"bbase = {row} * {tn_} + tn * 4" if row else "bbase = tn * 4")
        for kk in range(d):
            if v.vec_smem:
                for c in range(um // 4):
                    names = ", ".join(f"a{4 * c + i}_" for i in range(4))
                    L(f"{names} = ld_shared_v4(sa, abase + {kk * tm_ + c * 4 * sm})")
                for c in range(un // 4):
                    names = ", ".join(f"b{4 * c + i}_" for i in range(4))
                    L(f"{names} = ld_shared_v4(sb, bbase + {kk * tn_ + c * 4 * sn})")
            else:
                for x in range(um):
                    L(f"a{x}_ = sa[{row + ' + ' if row else ''}{kk}, tm + {sm * x}]")
                for y in range(un):
                    L(f"b{y}_ = sb[{row + ' + ' if row else ''}{kk}, tn + {sn * y}]")
            for x in range(um):
                for y in range(un):
                    L(f"{acc[x][y]} += a{x}_ * b{y}_")

    if k > 0:
        fetch("0")
    if v.dbuf:
        # slab s lives in buffer s % 2: the next slab is stored into the other buffer after this
        # slab's FMAs, and one barrier per slab orders both (reads of a buffer happen-before the
        # writes two slabs later, writes happen-before the reads of the next slab).
        if k > 0:
            store("")
            L("cuda.syncthreads()")
        L("cur = 0")                          # first shared row of this slab's buffer
        L(f"for k0 in range(0, {k}, {d}):")
        L.push()
        L(f"nxt = {d} - cur")
        L(f"more = k0 + {d} < {k}")
        L("if more:")
        L.push()
        fetch(f"k0 + {d}")
        L.pop()
        compute("cur")
        L("if more:")
        L.push()
        store("nxt + ")
        L.pop()
        L("cuda.syncthreads()")
        L("cur = nxt")
        L.pop()
    else:
        # our structure: store the prefetched slab, barrier, issue the next slab's global reads,
        # FMAs, barrier (the next store must wait for every thread's reads)
        L(f"for k0 in range(0, {k}, {d}):")
        L.push()
        store("")
        L("cuda.syncthreads()")
        L(f"if k0 + {d} < {k}:")
        L.push()
        fetch(f"k0 + {d}")
        L.pop()
        compute(None)
        L("cuda.syncthreads()")
        L.pop()

    # epilogue: bias, relu, store
    if v.vec_smem:
        rows = [f"row0 + tm * 4 + {(x // 4) * 4 * sm + x % 4}" for x in range(um)]
        cols = [f"col0 + tn * 4 + {(y // 4) * 4 * sn + y % 4}" for y in range(un)]
    else:
        rows = [f"row0 + tm + {sm * x}" for x in range(um)]
        cols = [f"col0 + tn + {sn * y}" for y in range(un)]
    for x in range(um):
        L(f"gi{x} = {rows[x]}")
    for y in range(un):
        L(f"gj{y} = {cols[y]}")
    if v.vec_gmem and v.vec_smem:
        for c in range(un // 4):
            names = [f"bv{4 * c + i}" for i in range(4)]
            _guarded_load(L, names, "bias", f"gj{4 * c}", [f"gj{4 * c} < {n}"] if guard_n else [], 4)
        for x in range(um):
            for c in range(un // 4):
                conds = ([f"gi{x} < {m}"] if guard_m else []) + ([f"gj{4 * c} < {n}"] if guard_n else [])
                if conds:
                    L(f"if {' and '.join(conds)}:")
                    L.push()
                vals = ", ".join(f"max({acc[x][4 * c + i]} + bv{4 * c + i}, zero)" for i in range(4))
                L(f"st_global_v4(c, gi{x} * {n} + gj{4 * c}, {vals})")
                if conds:
                    L.pop()
    else:
        for y in range(un):
            _guarded_load(L, [f"bv{y}"], "bias", f"gj{y}", [f"gj{y} < {n}"] if guard_n else [], 1)
        for x in range(um):
            for y in range(un):
                conds = ([f"gi{x} < {m}"] if guard_m else []) + ([f"gj{y} < {n}"] if guard_n else [])
                if conds:
                    L(f"if {' and '.join(conds)}:")
                    L.push()
                L(f"c[gi{x} * {n} + gj{y}] = max({acc[x][y]} + bv{y}, zero)")
                if conds:
                    L.pop()
    header = ["# generated by matmul_probe.py: variant " + v.name,
              "" if SIM else "# compiled with numba.cuda.compile_ptx",
              "def sgemm_relu(a, b, bias, c):"]
    return "\n".join(header + L.lines + ["    return", ""])


def _guarded_load(L, names, array, index, conds, width):
    if conds:
        L(" = ".join(names) + " = zero")
        L(f"if {' and '.join(conds)}:")
        L.push()
    if width == 4:
        L(f"{', '.join(names)} = ld_global_v4({array}, {index})")
    else:
        L(f"{names[0]} = {array}[{index}]")
    if conds:
        L.pop()


# -- building kernels ---------------------------------------------------------------------------
POINTER_SIG = (types.CPointer(types.float32),) * 4
NAMESPACE = {"cuda": cuda, "nb_f32": numba.float32, "zero": F32(0.0),
             "ld_shared_v4": ld_shared_v4, "st_shared_v4": st_shared_v4,
             "ld_global_v4": ld_global_v4, "st_global_v4": st_global_v4}


@dataclass
class Built:
    name: str
    text: str
    function: object          # the Python function (sim: a simulator kernel)
    grid: tuple
    block: int
    launch_bounds: tuple | None = None
    ptx: str | None = None


def build(name: str, m: int, n: int, k: int) -> Built:
    if name == AUTOFUSE:
        return _build_autofuse(m, n, k)
    v = _variant(name)
    why = v.unsupported(m, n, k)
    if why:
        raise Unsupported(why)
    text = generate(v, m, n, k)
    namespace = dict(NAMESPACE)
    exec(compile(text, f"<matmul_probe {name}>", "exec"), namespace)
    function = namespace["sgemm_relu"]
    if SIM:
        function = cuda.jit(function)
    grid = (-(-n // v.tile_n), -(-m // v.tile_m), 1)
    return Built(name, text, function, grid, v.threads, v.launch_bounds)


def _build_autofuse(m, n, k) -> Built:
    """The kernel autofuse generates for relu(x @ w + b) at this shape (its generator, unedited)."""
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
    import autofuse
    f = autofuse.jit(lambda x, w, b: np.maximum(x @ w + b, 0), backend="cuda")
    shapes = [np.empty((m, k), F32), np.empty((k, n), F32), np.empty(n, F32)]
    groups = f.lower(*shapes).kernels
    if len(groups) != 1:
        raise RuntimeError(f"autofuse made {len(groups)} kernels, expected one")
    group = groups[0]
    text = group.source
    name = re.findall(r"^def (\w+)\(", text, re.M)[-1]
    namespace: dict = {}
    exec(compile(text, "<autofuse kernel>", "exec"), namespace)
    launch = group.launch
    block = launch["block"]
    block = block if isinstance(block, int) else int(np.prod(block))
    return Built(AUTOFUSE, text, namespace[name], tuple(launch["grid"]), block)


class Unsupported(Exception):
    pass


def _variant(name) -> Variant:
    for v in VARIANTS:
        if v.name == name:
            return v
    raise KeyError(name)


def compile_ptx(built: Built) -> str:
    kwargs = {"launch_bounds": built.launch_bounds} if built.launch_bounds else {}
    ptx, _ = cuda.compile_ptx(built.function, POINTER_SIG, cc=CC, **kwargs)
    built.ptx = ptx
    return ptx


def link(ptx: str, arch: str = "sm_90"):
    """PTX -> cubin with nvJitLink (no GPU needed); returns (cubin bytes, registers, spill bytes)."""
    from cuda.core import Linker, LinkerOptions, ObjectCode
    linker = Linker(ObjectCode.from_ptx(ptx.encode()), options=LinkerOptions(arch=arch, verbose=True))
    cubin = bytes(linker.link("cubin").code)
    log = linker.get_info_log() or ""
    regs = re.search(r"[Uu]sed (\d+) registers", log)
    spills = [int(s) for s in re.findall(r"(\d+) bytes spill (?:stores|loads)", log)]
    return cubin, (int(regs.group(1)) if regs else None), (max(spills) if spills else 0)


PTX_PATTERNS = {
    "ld.shared.v4": r"\bld\.shared\.v4\.f32\b",
    "ld.shared": r"\bld\.shared\.f32\b",
    "st.shared.v4": r"\bst\.shared\.v4\.f32\b",
    "ld.global.v4": r"\bld\.global(?:\.nc)?\.v4\.f32\b",
    "ld.global": r"\bld\.global(?:\.nc)?\.f32\b",
    "st.global.v4": r"\bst\.global\.v4\.f32\b",
    "fma.rn.f32": r"\bfma\.rn\.f32\b",
    "bar.sync": r"\bbar\.sync\b",
}


def ptx_counts(ptx: str) -> dict:
    return {key: len(re.findall(pattern, ptx)) for key, pattern in PTX_PATTERNS.items()}


def expected_counts(v: Variant) -> dict:
    """What each variant should show in its PTX (the k loop is one copy of the unrolled slab)."""
    d, um, un = v.depth, v.micro_m, v.micro_n
    want = {"fma.rn.f32": (">=", d * um * un), "bar.sync": ("==", 2)}
    if v.vec_smem:
        want["ld.shared.v4"] = (">=", d * (um + un) // 4)
        want["ld.shared"] = ("==", 0)
    else:
        want["ld.shared.v4"] = ("==", 0)
        want["ld.shared"] = (">=", d * (um + un))
    if v.vec_gmem:
        chunks = (d * v.tile_m + d * v.tile_n) // 4 // v.threads
        want["ld.global.v4"] = (">=", chunks + un // 4)     # slabs, plus the bias chunks
        want["ld.global"] = ("==", 0)
        want["st.global.v4"] = ("==", um * un // 4)
        want["st.shared.v4"] = (">=", d * v.tile_n // 4 // v.threads)
    else:
        want["ld.global.v4"] = ("==", 0)
        want["st.global.v4"] = ("==", 0)
    return want


def check_counts(name: str, counts: dict) -> list:
    if name == AUTOFUSE:
        want = {"ld.shared.v4": ("==", 0), "ld.global.v4": ("==", 0), "bar.sync": ("==", 2)}
    else:
        want = expected_counts(_variant(name))
    problems = []
    for key, (op, value) in want.items():
        got = counts[key]
        if (op == "==" and got != value) or (op == ">=" and got < value):
            problems.append(f"{key}={got}, want {op} {value}")
    return problems


# -- modes --------------------------------------------------------------------------------------
def selected(only: str | None) -> list:
    if not only:
        return list(NAMES)
    names = [s.strip() for s in only.split(",") if s.strip()]
    unknown = [s for s in names if s not in NAMES]
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; known: {NAMES}")
    return names


def _ptx_one(job):
    """One variant's PTX, counts and ptxas registers (a worker process: compiles in parallel)."""
    name, (m, n, k) = job
    start = time.perf_counter()
    try:
        built = build(name, m, n, k)
        ptx = compile_ptx(built)
        seconds = time.perf_counter() - start
        regs = spill = None
        note = ""
        try:
            _, regs, spill = link(ptx)
        except Exception as error:            # no nvJitLink here: PTX counts only
            note = f"no ptxas ({type(error).__name__})"
        return name, ptx_counts(ptx), regs, spill, seconds, note, None
    except Exception as error:
        return name, None, None, None, time.perf_counter() - start, "", _one_line(error)


def mode_ptx(names, size) -> int:
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing
    jobs = [(name, size) for name in names]
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    print(f"sm_90 PTX at M,N,K = {size}; {workers} worker(s)")
    keys = list(PTX_PATTERNS)
    print(f"{'variant':12s} " + " ".join(f"{k:>12s}" for k in keys) + "  regs spill  secs")
    failures = 0
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for name, counts, regs, spill, seconds, note, error in pool.map(_ptx_one, jobs):
            if error:
                failures += 1
                print(f"{name:12s} FAILED: {error}")
                continue
            problems = check_counts(name, counts)
            reg_text = f"{regs:4d} {spill:5d}" if regs is not None else "   -     -"
            print(f"{name:12s} " + " ".join(f"{counts[k]:12d}" for k in keys)
                  + f"  {reg_text} {seconds:5.1f} {note}")
            if problems:
                failures += 1
                print(f"{'':12s} UNEXPECTED: {'; '.join(problems)}")
    print("ptx: all variants as intended" if not failures else f"ptx: {failures} variant(s) failed")
    return 1 if failures else 0


SIM_SIZES = [(128, 128, 48), (136, 200, 40), (130, 135, 37)]   # M, N, K: exact, ragged, odd
SIM_SIZES_WIDE = [(128, 256, 48), (136, 264, 40)]              # for 256-wide tiles


def reference(a, b, bias):
    return np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0).astype(F32)


def mode_sim(names) -> int:
    if not SIM:
        raise SystemExit("--sim needs NUMBA_ENABLE_CUDASIM=1 in the environment")
    rng = np.random.default_rng(1)
    failures = 0
    for name in names:
        wide = name != AUTOFUSE and _variant(name).tile_n > 128
        for m, n, k in (SIM_SIZES_WIDE if wide else SIM_SIZES):
            start = time.perf_counter()
            label = f"{name:12s} M,N,K={m},{n},{k}"
            try:
                built = build(name, m, n, k)
            except Unsupported as why:
                print(f"{label:38s} skipped ({why})")
                continue
            except Exception as error:
                failures += 1
                print(f"{label:38s} BUILD FAILED: {_one_line(error)}")
                continue
            a = rng.uniform(-1, 1, (m, k)).astype(F32)
            b = rng.uniform(-1, 1, (k, n)).astype(F32)
            bias = rng.uniform(-1, 1, n).astype(F32)
            out = np.full(m * n, np.nan, F32)       # poison: an unwritten output fails the check
            try:
                built.function[built.grid, built.block](a.reshape(-1), b.reshape(-1), bias, out)
                want = reference(a, b, bias)
                got = out.reshape(m, n)
                error = float(np.nanmax(np.abs(got - want))) if not np.isnan(got).all() else math.inf
                ok = np.allclose(got, want, rtol=1e-4, atol=1e-4)
                status = "ok" if ok else "WRONG"
                failures += not ok
                print(f"{label:38s} {status:5s} max|err|={error:.2e} "
                      f"({time.perf_counter() - start:.1f}s)")
            except Exception as error:
                failures += 1
                print(f"{label:38s} FAILED: {_one_line(error)}")
    print("sim: all variants match NumPy" if not failures else f"sim: {failures} failure(s)")
    return 1 if failures else 0


def mode_gpu(names, size) -> int:
    m, n, k = size
    flops = 2.0 * m * n * k
    # compile everything first, in worker processes (NVVM + ptxas take seconds per variant),
    # before this process touches the GPU
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing
    t0 = time.perf_counter()
    jobs = [(name, size) for name in names]
    with ProcessPoolExecutor(max(1, min(len(jobs), os.cpu_count() or 1)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        compiled = list(pool.map(_gpu_compile_one, jobs))
    print(f"compiled {len(jobs)} variants in {time.perf_counter() - t0:.0f}s")

    import cupy
    from cuda.core import Device, LaunchConfig, ObjectCode, Stream, launch
    device = Device()
    device.set_current()
    cc = device.compute_capability
    if (cc[0], cc[1]) != CC:
        print(f"note: device is sm_{cc[0]}{cc[1]}; PTX was made for sm_90 and JIT-linked for it")
    stream = cupy.cuda.Stream(non_blocking=True)
    core_stream = Stream.from_handle(stream.ptr)
    with stream:
        rng = cupy.random.RandomState(0)
        a = rng.uniform(-1, 1, (m, k), dtype=cupy.float32)
        b = rng.uniform(-1, 1, (k, n), dtype=cupy.float32)
        bias = rng.uniform(-1, 1, n, dtype=cupy.float32)
        out = cupy.empty((m, n), cupy.float32)
        for array in (a, b, bias, out):
            assert array.data.ptr % 16 == 0
        want = cupy.maximum(a @ b + bias, 0)
        cupy_ms = time_ms(lambda: cupy.maximum(a @ b + bias, 0), stream)
        gemm_ms = time_ms(lambda: a @ b, stream)
        props = cupy.cuda.runtime.getDeviceProperties(device.device_id)
        print(f"{props['name'].decode()} ({props['multiProcessorCount']} SMs), M,N,K = {m},{n},{k}, "
              f"timing: median of 5 x 10 launches after 3 warm-ups")
        print(f"{'variant':12s} {'ms':>8s} {'TFLOP/s':>8s} {'x cupy':>7s} {'regs':>5s} "
              f"{'spill':>5s} {'max|err|':>9s}")
        print(f"{'cupy':12s} {cupy_ms:8.3f} {flops / cupy_ms / 1e9:8.1f} {1.0:7.2f} "
              f"{'':>5s} {'':>5s} {'':>9s}  maximum(a @ b + bias, 0)")
        print(f"{'cupy a@b':12s} {gemm_ms:8.3f} {flops / gemm_ms / 1e9:8.1f} "
              f"{cupy_ms / gemm_ms:7.2f}  (SGEMM alone)")
        failures = 0
        for name, result in zip(names, compiled):
            kind, payload = result
            if kind == "error":
                failures += 1
                print(f"{name:12s} FAILED to build: {payload}")
                continue
            cubin, regs, spill, grid, block, entry = payload
            try:
                kernel = ObjectCode.from_cubin(cubin).get_kernel(entry)
                try:                           # what the driver says, over ptxas's log
                    regs = kernel.attributes.num_regs
                except Exception:
                    pass
                config = LaunchConfig(grid=grid, block=block)
                args = (a.data.ptr, b.data.ptr, bias.data.ptr, out.data.ptr)

                def run():
                    launch(core_stream, config, kernel, *args)
                out.fill(cupy.nan)
                run()
                stream.synchronize()
                err = float(cupy.max(cupy.abs(out - want)))
                if not bool(cupy.allclose(out, want, rtol=2e-3, atol=2e-3)):
                    failures += 1
                    print(f"{name:12s} WRONG RESULT: max|err| = {err:.3g} (not timed)")
                    continue
                ms = time_ms(run, stream)
                print(f"{name:12s} {ms:8.3f} {flops / ms / 1e9:8.1f} {cupy_ms / ms:7.2f} "
                      f"{regs if regs is not None else '-':>5} {spill if spill is not None else '-':>5} "
                      f"{err:9.2e}")
            except Exception as error:
                failures += 1
                print(f"{name:12s} FAILED: {_one_line(error)}")
    print(f"total {time.perf_counter() - t0:.0f}s")
    return 1 if failures else 0


def _gpu_compile_one(job):
    name, (m, n, k) = job
    try:
        built = build(name, m, n, k)
        ptx = compile_ptx(built)
        entry = re.search(r"\.visible \.entry (\S+)\(", ptx).group(1)
        cubin, regs, spill = link(ptx)
        return "ok", (cubin, regs, spill, built.grid, built.block, entry)
    except Exception as error:
        return "error", _one_line(error)


def time_ms(fn, stream, warmup=3, repeats=5, calls=10) -> float:
    import cupy
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        for _ in range(calls):
            fn()
        stop.record(stream)
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / calls)
    return statistics.median(times)


def _one_line(error) -> str:
    text = f"{type(error).__name__}: {error}".replace("\n", " | ")
    return text[:300]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--ptx", action="store_true", help="compile to sm_90 PTX and count")
    group.add_argument("--sim", action="store_true", help="run under the CUDA simulator")
    group.add_argument("--source", metavar="NAME", help="print one variant's generated source")
    parser.add_argument("--only", help="comma-separated variant names")
    parser.add_argument("--size", default="8192,4096,4096", help="M,N,K for --ptx and GPU mode")
    args = parser.parse_args(argv)
    size = tuple(int(s) for s in args.size.split(","))
    if args.source:
        print(build(args.source, *size).text)
        return 0
    names = selected(args.only)
    if args.ptx:
        return mode_ptx(names, size)
    if args.sim:
        return mode_sim(names)
    return mode_gpu(names, size)


if __name__ == "__main__":
    sys.exit(main())
