"""Debug levels: $AUTOFUSE_DEBUG and `autofuse.debug(level)`, each level's stderr output."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import autofuse
from autofuse.debug import STATE

X = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(4, 8)


def fresh(backend="cpu"):
    """A new jitted function each time, so nothing is cached in memory."""
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return autofuse.jit(softmax, backend=backend)


def lines(captured) -> list[str]:
    return [line for line in captured.err.splitlines() if line.startswith("[autofuse]")]


@pytest.fixture(autouse=True)
def no_env_level(monkeypatch):
    monkeypatch.setattr(STATE, "env_level", 0)
    STATE.update()
    yield
    STATE.update()


def test_level_0_prints_nothing(capfd):
    f = fresh()
    f(X)
    f(X)
    with autofuse.debug(0):
        f(X)
        fresh()(X)
    out = capfd.readouterr()
    assert out.err == "" and out.out == ""
    assert not STATE.active


def test_level_1_compile_line_then_one_hit_line(capsys):
    f = fresh()
    with autofuse.debug(1):
        f(X)
        f(X)
        f(X)
    got = lines(capsys.readouterr())
    assert len(got) == 1
    assert got[0].startswith("[autofuse] compile softmax(f32[4,8]) backend=cpu: 7 ops -> 1 group "
                             "(input 1) in ")
    assert got[0].endswith(" ms [miss]")


def test_level_1_hit_printed_once_per_signature(capsys):
    f = fresh()
    f(X)                                   # compiled with debug off
    with autofuse.debug(1):
        for _ in range(3):
            f(X)
        f(X[:2])                           # a new signature: a compile line
        f(X[:2])
    got = lines(capsys.readouterr())
    assert [line.split()[1] for line in got] == ["cache", "compile"]
    assert got[0].startswith("[autofuse] cache hit softmax(f32[4,8]) backend=cpu")
    assert "softmax(f32[2,8])" in got[1]


def test_level_2_a_line_per_launch(capsys):
    f = fresh()
    with autofuse.debug(2):
        f(X)
        f(X)
    got = lines(capsys.readouterr())
    launches = [line for line in got if line.startswith("[autofuse] launch ")]
    assert len(launches) == 2                               # one kernel, two calls
    assert launches[0].startswith("[autofuse] launch input_0 strategy=rows elements=32 time=")
    assert "first call" not in launches[1]       # (the first may compile the kernel)
    assert launches[1].endswith(" us (host wall)")


def test_level_2_numpy_backend_one_line_per_call(capsys):
    f = fresh("numpy")
    with autofuse.debug(2):
        f(X)
    got = lines(capsys.readouterr())
    assert any(line.startswith("[autofuse] run softmax(f32[4,8]) backend=numpy: 7 ops") for line in got)


def test_level_3_traced_and_fused_ir(capsys):
    f = fresh()
    with autofuse.debug(3):
        f(X)
    err = capsys.readouterr().err
    assert "[autofuse] # traced\n[autofuse] def softmax(v0: f32[4,8]):" in err
    assert "[autofuse] # fused" in err and "v7 = input_0(v0)" in err
    assert "numba.njit" not in err                             # sources are level 4


def test_level_4_kernel_source(capsys):
    f = fresh()
    with autofuse.debug(4):
        f(X)
    err = capsys.readouterr().err
    assert "[autofuse] source of input_0 (strategy rows):" in err
    assert "[autofuse] @numba.njit(" in err and "def input_0(" in err
    assert "ptx of" not in err


def test_level_5_ptx(capsys):
    pytest.importorskip("numba.cuda")
    f = fresh("cuda")
    with autofuse.debug(5):
        f.lower(X)
    err = capsys.readouterr().err
    assert "[autofuse] compile softmax(f32[4,8]) backend=cuda" in err
    assert "[autofuse] ptx of input_0:" in err and ".target sm_" in err


def test_context_manager_nests_and_restores():
    assert autofuse.debug_level() == 0
    with autofuse.debug(3):
        assert autofuse.debug_level() == 3 and STATE.active
        with autofuse.debug(0):
            assert autofuse.debug_level() == 0
        assert autofuse.debug_level() == 3
    assert autofuse.debug_level() == 0 and not STATE.active


def test_context_manager_is_per_thread(capsys):
    f = fresh()
    f(X)
    seen = {}

    def other():
        seen["level"] = autofuse.debug_level()
        fresh()(X)                      # compiles in a thread that has no debug block

    with autofuse.debug(2):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen["level"] == 0
    assert lines(capsys.readouterr()) == []


@pytest.mark.parametrize("level", [-1, 6, 1.5, True, "2"])
def test_bad_level(level):
    with pytest.raises(autofuse.ArgumentError, match="level must be an int 0..5"):
        autofuse.debug(level)


def test_environment_variable_and_override():
    script = textwrap.dedent("""
        import numpy as np, autofuse
        def f(x):
            return x * 2.0 + 1.0
        g = autofuse.jit(f, backend="numpy")
        g(np.ones(3))
        with autofuse.debug(0):
            autofuse.jit(f, backend="numpy")(np.ones(4))
        print(autofuse.debug_level())
    """)
    env = dict(os.environ, AUTOFUSE_DEBUG="2")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"
    err = done.stderr.splitlines()
    assert err[0].startswith("[autofuse] compile f(f64[3]) backend=numpy: 2 ops -> 1 group")
    assert err[1].startswith("[autofuse] run f(f64[3]) backend=numpy")
    assert len(err) == 2                         # nothing from inside debug(0)

    env["AUTOFUSE_DEBUG"] = "lots"
    done = subprocess.run([sys.executable, "-c", "import autofuse; print(autofuse.debug_level())"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "0"
    assert "ignoring AUTOFUSE_DEBUG='lots'" in done.stderr
