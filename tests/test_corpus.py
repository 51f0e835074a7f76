"""The corpus (benchmarks/corpus): every program runs under NumPy at its small size, its metadata
is complete, every loop has a jax twin, and a few programs that autofuse compiles today match
NumPy on the CPU backend. The whole corpus under autofuse is the runner's job
(python -m benchmarks.corpus.run), not CI's."""
from __future__ import annotations

import keyword

import numpy as np
import pytest

import autofuse
from benchmarks.corpus import all_programs, find, loops_jax
from benchmarks.corpus.compare import compare, judged
from benchmarks.corpus.loops import LOOPS
from benchmarks.corpus.programs import PROGRAMS
from benchmarks.corpus.program import SIZES

PROGRAM_NAMES = [program.name for program in all_programs()]

# Programs autofuse compiles and runs correctly today (RESULTS-cpu-small.md), with the step count
# CI uses for a loop (fewer than the small size's, to keep compile time down).
WORKING_TODAY = {"heat_1d": {"steps": 3}, "softmax_last": {}, "adam_step": {}, "rmsnorm": {},
                 "rgb_to_gray": {}}


def test_corpus_sizes():
    assert len(LOOPS) >= 25
    assert len(PROGRAMS) >= 30


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_runs_under_numpy(name):
    program = find(name)
    for dtype in program.dtypes:
        arguments, static = program.arguments("small", dtype)
        result = program.function(*[np.copy(a) if isinstance(a, np.ndarray) else a
                                    for a in arguments], **static)
        for leaf in (result if isinstance(result, tuple) else (result,)):
            assert leaf is None or np.all(np.isfinite(np.asarray(leaf).real)), name


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_metadata_complete(name):
    program = find(name)
    assert program.name.isidentifier() and not keyword.iskeyword(program.name)
    assert callable(program.function) and callable(program.make)
    assert program.description.strip() and "(" in program.description, "name the source"
    assert set(program.sizes) == set(SIZES)
    assert program.dtypes and program.tags
    assert program.kind in ("loop", "program")
    for size in SIZES:
        assert set(program.static) <= set(program.sizes[size])
    if program.kind == "loop":
        assert "steps" in program.static
        assert 100 <= program.sizes["large"]["steps"] <= 5000
        assert program.sizes["small"]["steps"] <= program.sizes["large"]["steps"]
    arguments, static = program.arguments("small", program.dtypes[0])
    assert program.bytes_moved(arguments, static) > 0


@pytest.mark.parametrize("name", [program.name for program in LOOPS])
def test_every_loop_has_a_jax_twin(name):
    assert name in loops_jax.TWIN_NAMES
    assert callable(loops_jax.twin(name))


def test_no_twin_without_a_loop():
    assert set(loops_jax.TWIN_NAMES) == {program.name for program in LOOPS}


@pytest.mark.parametrize("name", sorted(WORKING_TODAY))
def test_working_programs_match_numpy_on_cpu(name):
    program = find(name)
    dtype = program.dtypes[0]
    arguments, static = program.arguments("small", dtype)
    static.update(WORKING_TODAY[name])
    want_arguments = [np.copy(a) if isinstance(a, np.ndarray) else a for a in arguments]
    got_arguments = [np.copy(a) if isinstance(a, np.ndarray) else a for a in arguments]
    want = program.function(*want_arguments, **static)
    function = autofuse.jit(program.function, static_argnames=program.static, backend="cpu")
    got = function(*got_arguments, **static)
    result = compare((got, got_arguments), (want, want_arguments), np.dtype(dtype).name)
    assert result["correct"], result["note"]


def _mandelbrot_fused(c_real, c_imag, steps):
    """The corpus's float32 Mandelbrot with each `a * b + c` rounded once, as a GPU's fused
    multiply-add computes it (NVVM contracts them in autofuse's CUDA kernels; a float32 product
    is exact in float64)."""
    def fused(a, b, c):
        return (a.astype(np.float64) * b + c).astype(np.float32)
    z_real, z_imag = np.zeros_like(c_real), np.zeros_like(c_imag)
    count = np.zeros(c_real.shape, dtype=np.int32)
    for _ in range(steps):
        square = z_imag * z_imag
        inside = fused(z_real, z_real, square) <= 4.0
        new_real = fused(z_real, z_real, -square) + c_real
        new_imag = fused(np.float32(2.0) * z_real, z_imag, c_imag)
        z_real = np.where(inside, new_real, z_real)
        z_imag = np.where(inside, new_imag, z_imag)
        count = count + inside
    return count


def test_counts_from_floats_judged_against_the_float64_run():
    # the GPU corpus run's one "wrong" answer: float32 escape counts after 200 steps, 6,296 of
    # 2048^2 off NumPy's where NumPy's own are 6,572 off the float64 run's (fused multiply-adds)
    mandelbrot = find("mandelbrot")
    c_real, c_imag = mandelbrot.make(None, np.dtype(np.float32), height=256, width=256)
    want = mandelbrot.function(c_real, c_imag, steps=200)
    exact = mandelbrot.function(c_real.astype(np.float64), c_imag.astype(np.float64), steps=200)
    got = _mandelbrot_fused(c_real, c_imag, 200)
    assert np.count_nonzero(got != want) > 0
    assert not compare(got, want, "float32")["correct"]
    verdict = judged(got, want, exact, "float32")
    assert verdict["correct"] and "of its integers" in verdict["note"], verdict
    worse = got + (np.arange(got.size).reshape(got.shape) % 5 == 0)
    assert not judged(worse, want, exact, "float32")["correct"]
    # counts that no rounding moves (NumPy's equal the float64 run's) are held exactly
    assert not judged(got, want, want, "float32")["correct"]
