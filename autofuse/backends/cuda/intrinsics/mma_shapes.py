"""The tensor-core instructions generated kernels use (PTX `mma.sync`), as data: each one's tile
shape, register types and which elements of A, B and C each lane of a warp holds.

The layouts are PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating point type" and its
siblings. A lane's group g = lane // 4 and index in the group t = lane % 4 place every fragment:
A's register i holds the word at (row g + a[i][0], K word t + a[i][1]), B's register i the word
at (K word t + b[i], column g), C's register i the element at (row g + c[i][0], column 2t +
c[i][1]). A K "word" is one element, or two consecutive float16 elements packed in 32 bits.
The emitter (emit/mma_gemm.py), the intrinsics (mma.py) and their simulator twins all read it.
"""
from __future__ import annotations

from dataclasses import dataclass

_QUAD = ((0, 0), (8, 0), (0, 4), (8, 4))       # rows g, g+8; K words t, t+4
_C16 = ((0, 0), (0, 1), (8, 0), (8, 1))        # rows g, g+8; columns 2t, 2t+1


@dataclass(frozen=True)
class Shape:
    name: str          # the intrinsic's name in mma.py
    ptx: str           # the instruction, operands left out
    m: int             # the tile: m x n results, k elements of K (k // pack words)
    n: int
    k: int
    pack: int          # elements a 32-bit register word holds along K (float16: 2)
    word: str          # the operands' register type: "f64", or "u32" (packed halves, TF32 bits)
    accumulator: str   # "f64" or "f32"
    a: tuple
    b: tuple
    c: tuple

    @property
    def words(self) -> int:
        """K words a tile step takes."""
        return self.k // self.pack

    @property
    def text(self) -> str:
        """The instruction with its operands as inline-assembly placeholders ($0 ... )."""
        counts = [len(self.c), len(self.a), len(self.b), len(self.c)]
        groups, first = [], 0
        for count in counts:
            groups.append("{" + ", ".join(f"${first + i}" for i in range(count)) + "}")
            first += count
        return f"{self.ptx} {', '.join(groups)};"


SHAPES = {shape.name: shape for shape in (
    Shape("mma_f64_m8n8k4", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 8, 8, 4, 1,
          "f64", "f64", ((0, 0),), (0,), ((0, 0), (0, 1))),
    Shape("mma_f64_m16n8k4", "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", 16, 8, 4, 1,
          "f64", "f64", ((0, 0), (8, 0)), (0,), _C16),
    Shape("mma_f64_m16n8k8", "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", 16, 8, 8, 1,
          "f64", "f64", _QUAD, (0, 4), _C16),
    Shape("mma_f64_m16n8k16", "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 16, 8, 16, 1,
          "f64", "f64", _QUAD + ((0, 8), (8, 8), (0, 12), (8, 12)), (0, 4, 8, 12), _C16),
    Shape("mma_f16_m16n8k16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, 2,
          "u32", "f32", _QUAD, (0, 4), _C16),
    Shape("mma_tf32_m16n8k8", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, 1,
          "u32", "f32", _QUAD, (0, 4), _C16),
)}


def accumulators_as_a(shape: Shape) -> tuple:
    """How a product's accumulators (C of `shape`, float32) become the A operand of the next
    product of the same shape, with no data moving between lanes (flash attention's P @ V takes
    P = softmax(Q K^T) from the registers that computed Q K^T): for each A register, its `pack`
    elements as (which C tile along A's K, C register), derived from the tables above. A's K
    extent spans k // n C tiles; the element of A register i, pack p, lies at row g + dr, K
    element pack (t + dk) + p, which is C tile j's register at row g + dr, column 2t + dc where
    dc + n j = pack dk + p (t's terms agree: both fragments step 2 elements a lane)."""
    assert shape.accumulator == "f32" and shape.pack == 2 and shape.k % shape.n == 0
    registers = []
    for dr, dk in shape.a:
        elements = []
        for p in range(shape.pack):
            column = shape.pack * dk + p
            tile, dc = divmod(column, shape.n)
            found = [i for i, c in enumerate(shape.c) if c == (dr, dc)]
            assert len(found) == 1, (shape.name, dr, dk, p)
            elements.append((tile, found[0]))
        registers.append(tuple(elements))
    return tuple(registers)
