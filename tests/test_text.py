"""Golden text of `lower(...).as_text()` for small programs (written out literally).

The programs are compiled from source strings under their own file names, so the origin column
(`softmax.py:3`) does not move when this test file is edited.
"""
from __future__ import annotations

import numpy as np

import autofuse

SOURCES = {
    "softmax": '''
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    "stencil": '''
def stencil(x):
    y = np.zeros_like(x)
    y[1:-1] = (x[:-2] + x[1:-1] + x[2:]) / 3
    return y
''',
    "center": '''
def center(x):
    return x - x.mean(axis=0, keepdims=True) * 1.0
''',
}


def jitted(name: str) -> autofuse.JitFunction:
    namespace = {"np": np}
    exec(compile(SOURCES[name], f"{name}.py", "exec"), namespace)
    return autofuse.jit(namespace[name])


def test_softmax_text():
    text = jitted("softmax").lower(np.ones((2, 4), np.float32)).as_text("simplified")
    assert text == """\
# simplified
def softmax(v0: f32[2,4]):
    v1 = max(v0, axes=(1,))                  # f32[2]  softmax.py:3
    v2 = reshape(v1, shape=(2, 1))           # f32[2,1]  softmax.py:3
    v3 = subtract(v0, v2)                    # f32[2,4]  softmax.py:3
    v4 = exp(v3)                             # f32[2,4]  softmax.py:3
    v5 = sum(v4, axes=(1,))                  # f32[2]  softmax.py:4
    v6 = reshape(v5, shape=(2, 1))           # f32[2,1]  softmax.py:4
    v7 = divide(v4, v6)                      # f32[2,4]  softmax.py:4
    return (v7,)"""


def test_stencil_text_traced_and_simplified():
    lowered = jitted("stencil").lower(np.ones(6))
    assert lowered.as_text("traced") == """\
# traced
def stencil(v0: f64[6]):
    v1 = broadcast_to(f64(0.0), shape=(6,))  # f64[6]  stencil.py:3
    v2 = slice(v0, shape=(4,), start=(0,), step=(1,)) # f64[4]  stencil.py:4
    v3 = slice(v0, shape=(4,), start=(1,), step=(1,)) # f64[4]  stencil.py:4
    v4 = add(v2, v3)                         # f64[4]  stencil.py:4
    v5 = slice(v0, shape=(4,), start=(2,), step=(1,)) # f64[4]  stencil.py:4
    v6 = add(v4, v5)                         # f64[4]  stencil.py:4
    v7 = divide(v6, f64(3.0))                # f64[4]  stencil.py:4
    v8 = slice(v1, shape=(4,), start=(1,), step=(1,)) # f64[4]  stencil.py:4
    v9 = setslice(v1, v7, start=(1,), step=(1,)) # f64[6]  stencil.py:4
    return (v9,)"""
    assert lowered.as_text("simplified") == """\
# simplified
def stencil(v0: f64[6]):
    v1 = broadcast_to(f64(0.0), shape=(6,))  # f64[6]  stencil.py:3
    v2 = slice(v0, shape=(4,), start=(0,), step=(1,)) # f64[4]  stencil.py:4
    v3 = slice(v0, shape=(4,), start=(1,), step=(1,)) # f64[4]  stencil.py:4
    v4 = add(v2, v3)                         # f64[4]  stencil.py:4
    v5 = slice(v0, shape=(4,), start=(2,), step=(1,)) # f64[4]  stencil.py:4
    v6 = add(v4, v5)                         # f64[4]  stencil.py:4
    v7 = divide(v6, f64(3.0))                # f64[4]  stencil.py:4
    v8 = setslice(v1, v7, start=(1,), step=(1,)) # f64[6]  stencil.py:4
    return (v8,)"""


def test_reduction_with_keepdims_text():
    lowered = jitted("center").lower(np.ones((3, 2), np.float32))
    assert lowered.as_text("traced") == """\
# traced
def center(v0: f32[3,2]):
    v1 = sum(v0, axes=(0,))                  # f32[2]  center.py:3
    v2 = reshape(v1, shape=(1, 2))           # f32[1,2]  center.py:3
    v3 = divide(v2, f32(3.0))                # f32[1,2]  center.py:3
    v4 = multiply(v3, f32(1.0))              # f32[1,2]  center.py:3
    v5 = subtract(v0, v4)                    # f32[3,2]  center.py:3
    return (v5,)"""
    assert lowered.as_text("simplified") == """\
# simplified
def center(v0: f32[3,2]):
    v1 = sum(v0, axes=(0,))                  # f32[2]  center.py:3
    v2 = reshape(v1, shape=(1, 2))           # f32[1,2]  center.py:3
    v3 = divide(v2, f32(3.0))                # f32[1,2]  center.py:3
    v4 = subtract(v0, v3)                    # f32[3,2]  center.py:3
    return (v4,)"""


def test_all_text_starts_with_traced_then_simplified():
    text = jitted("softmax").lower(np.ones((2, 4), np.float32)).as_text()
    assert text.index("# traced") < text.index("# simplified")


def test_text_is_deterministic():
    first = jitted("stencil").lower(np.ones(6)).as_text("traced")
    second = jitted("stencil").lower(np.ones(6)).as_text("traced")
    assert first == second


def test_multiple_outputs_and_scalar_text():
    namespace = {"np": np}
    exec(compile("def f(x, s):\n    return x * s, x.sum()\n", "multi.py", "exec"), namespace)
    text = autofuse.jit(namespace["f"]).lower(np.ones(3, np.int32), 2).as_text("simplified")
    assert text == """\
# simplified
def f(v0: i32[3], v1: i64[]):
    v2 = cast(v1, dtype=int32)               # i32[]  multi.py:2
    v3 = multiply(v0, v2)                    # i32[3]  multi.py:2
    v4 = cast(v0, dtype=int64)               # i64[3]  multi.py:2
    v5 = sum(v4, axes=(0,))                  # i64[]  multi.py:2
    return (v3, v5)"""
