"""The register-block intrinsics (register_block.py) as plain Python over NumPy arrays, for
numba's CUDA simulator: the same names, the same arithmetic in the same order."""
from __future__ import annotations


def functions() -> dict:
    """{name: factory} for each of register_block.py's intrinsic factories."""
    def filled(count: int):
        def fill(acc, value):
            for i in range(count):
                acc[i] = value
        return fill

    def outer_product(rows: int, cols: int):
        def outer(acc, sa, sb, k, tm, tn, spacing):
            a = [sa[k, tm + spacing * i] for i in range(rows)]
            b = [sb[k, tn + spacing * j] for j in range(cols)]
            for i in range(rows):
                for j in range(cols):
                    acc[i * cols + j] += a[i] * b[j]
        return outer

    def outer_values(rows: int, cols: int):
        def outer(acc, *values):
            a, b = values[:rows], values[rows:]
            for i in range(rows):
                for j in range(cols):
                    acc[i * cols + j] += a[i] * b[j]
        return outer

    return {"filled": filled, "outer_product": outer_product, "outer_values": outer_values}
