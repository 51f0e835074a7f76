"""The README's Quick start block and the examples it points to.

The Quick start block must hold exactly the two commands CI runs (.ci/run reads them from it),
and every script in examples/ must run and pass its own check against NumPy (with --small),
timing the peers (torch, jax) where they are installed and saying so where they are not.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if not p.stem.startswith("_"))
EXPECTED_EXAMPLES = {"softmax", "layernorm", "bias_gelu", "mlp", "attention", "black_scholes",
                     "jacobi", "kmeans"}
MAIN_EXAMPLE = "softmax"


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Quick start' section"
    block = re.search(r"^```[^\n]*\n(.*?)^```", section.group(1), re.S | re.M)
    assert block, "the Quick start section has no fenced block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_has_exactly_two_commands():
    commands = quick_start_commands()
    assert commands == ['pip install -e ".[test]" && python examples/softmax.py',
                        "python -m pytest -q -n 2 tests"]


def test_ci_script_runs_the_quick_start_block():
    script = ROOT / ".ci" / "run"
    assert script.exists() and os.access(script, os.X_OK)
    assert "## Quick start" in script.read_text()


def test_all_examples_present():
    assert EXPECTED_EXAMPLES <= set(EXAMPLES)


def run_example(name: str, *flags: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("AUTOFUSE_BACKEND", None)
    return subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"), *flags],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs(name):
    """Each example with tiny sizes: ~20 s for all of them on 2 workers with a cold compile cache."""
    result = run_example(name, "--small", "--repeats", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches NumPy" in result.stdout, result.stdout
    assert "fused program" in result.stdout, result.stdout
    assert "time (median" in result.stdout, result.stdout
    for package, line in (("torch", "torch and torch.compile skipped"), ("jax", "jax.jit skipped")):
        if importlib.util.find_spec(package) is None:
            assert f"not installed (ModuleNotFoundError: No module named '{package}'); {line}" \
                in result.stdout, result.stdout
    assert "mismatch" not in result.stdout, result.stdout


def test_main_example_prints_the_fused_program():
    result = run_example(MAIN_EXAMPLE, "--small", "--repeats", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "def softmax(" in result.stdout and "# not fused:" in result.stdout, result.stdout


def test_cuda_flag_exits_cleanly_without_a_gpu():
    result = run_example(MAIN_EXAMPLE, "--small", "--device", "cuda", "--repeats", "1")
    assert result.returncode == 0, result.stdout + result.stderr
