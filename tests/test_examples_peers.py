"""The examples' peers (examples/_peers.py): each example's torch and jax.numpy versions against
NumPy on the CPU where torch / jax are installed, and how a peer that cannot be timed is reported.

The example scripts themselves run in test_readme.py; here their modules are imported in process
(their helpers are _private so that `python -m autofuse examples/NAME.py` lists only their
functions, as tests/test_cli.py expects).
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if not p.stem.startswith("_"))
sys.path.insert(0, str(ROOT / "examples"))    # the examples import _common and _peers

import _common  # noqa: E402
import _peers  # noqa: E402

CPU = _common.Device("cpu", np)


@pytest.fixture(autouse=True)
def _restore_jax_config():
    """_peers sets jax's x64 and matmul precision flags process-wide: undo them after each test."""
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", False)
        jax.config.update("jax_default_matmul_precision", None)


def peer_rows(name: str, peer: str | None) -> list:
    """The timing rows of one peer (None: all) of one example on its small inputs, on the CPU."""
    example = importlib.import_module(name)
    args = example._make_inputs(CPU, small=True)
    want = example.PEERS.function.fn(*args)
    only = None if peer is None else (peer,)
    return _peers.timings(example.PEERS, args, want, CPU, repeats=1, only=only)


@pytest.mark.parametrize("name", EXAMPLES)
def test_torch_version_matches_numpy(name):
    pytest.importorskip("torch")
    [(peer, result, _)] = peer_rows(name, "torch")
    assert peer == "torch" and isinstance(result, float), result


@pytest.mark.parametrize("name", EXAMPLES)
def test_jax_version_matches_numpy(name):
    pytest.importorskip("jax")
    [(peer, result, note)] = peer_rows(name, "jax.jit")
    assert peer == "jax.jit" and isinstance(result, float), result
    if name in ("black_scholes", "jacobi", "kmeans"):       # float64: jax runs with x64 enabled
        assert "x64 enabled" in note
    if name in ("mlp", "attention"):
        assert "matmul precision highest" in note


def test_every_example_has_peers():
    for name in EXAMPLES:
        example = importlib.import_module(name)
        assert isinstance(example.PEERS, _common.Peers), name
        assert callable(example.PEERS.torch) and callable(example.PEERS.jax), name


def test_a_missing_package_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)        # `import torch` raises ImportError
    monkeypatch.setitem(sys.modules, "jax", None)
    rows = peer_rows("softmax", None)
    assert [(name, result.split(" (")[0], result.split("; ")[-1]) for name, result, _ in rows] == [
        ("torch", "not installed", "torch and torch.compile skipped"),
        ("jax.jit", "not installed", "jax.jit skipped")]


def test_a_mismatching_peer_is_reported_not_timed():
    x = np.arange(6.0, dtype=np.float32)
    peers = _common.Peers(None, torch=None, jax=None)
    wrong = _peers.System("torch", lambda a: a * 2 + 1e-3, (x,), None, "")
    result = _peers.measure(peers, wrong, (x,), x * 2, repeats=1)
    assert result.startswith("mismatch (result: max abs error 1.00e-03"), result
    right = _peers.System("torch", lambda a: a * 2, (x,), None, "")
    assert isinstance(_peers.measure(peers, right, (x,), x * 2, repeats=1), float)


def test_a_failing_peer_is_reported_in_one_line():
    x = np.arange(6.0, dtype=np.float32)
    peers = _common.Peers(None, torch=None, jax=None)

    def broken(a):
        raise RuntimeError("backend='inductor' raised:\nInvalidCxxCompiler: no C++ compiler\nmore")
    system = _peers.System("torch.compile", broken, (x,), None, "")
    result = _peers.measure(peers, system, (x,), x, repeats=1)
    assert result == ("fails (RuntimeError: backend='inductor' raised: "
                      "InvalidCxxCompiler: no C++ compiler)")


def test_no_peers_flag_skips_them():
    env = {key: value for key, value in os.environ.items() if key != "AUTOFUSE_BACKEND"}
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "bias_gelu.py"), "--small",
                             "--repeats", "1", "--no-peers"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "peers          torch, torch.compile and jax.jit not timed (--no-peers)" in result.stdout
    assert not any(line.startswith(("  torch", "  jax")) for line in result.stdout.splitlines())
