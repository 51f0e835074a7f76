"""`python -m autofuse FILE FUNC --arg SHAPE:DTYPE ...`: output, picture, and exit 2 on bad input."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib

import pytest

from autofuse import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOFTMAX = os.path.join(ROOT, "examples", "softmax.py")


def autofuse_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "autofuse", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=180)


def test_softmax_report():
    done = autofuse_cli("examples/softmax.py", "softmax", "--arg", "64x128:float32")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("# softmax(f32[64,128]) on cpu: 7 ops -> 1 kernel (input 1)")
    assert "v7 = input_0(v0)" in out                             # the fused program
    assert "# not fused: (nothing: every edge is fused)" in out   # the explanation
    assert "bytes moved: unfused 258.0 KiB, fused 64.0 KiB (4.03x less)" in out
    assert "input_0  input  rows      7    64.0 KiB  258.0 KiB  softmax.py:19-20" in out
    assert "softmax.py:19        e = np.exp(x - x.max(axis=-1, keepdims=True))" in out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_picture_svg(tmp_path):
    out = tmp_path / "softmax.svg"
    done = autofuse_cli("examples/softmax.py", "softmax", "--arg", "64x128:float32",
                        "--picture", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out}"
    assert "<svg" in out.read_text() and "input_0" in out.read_text()


def test_plain_function_statics_scalars_stages_and_sources(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""
        import numpy as np

        def center(x, scale, axis):
            return (x - x.mean(axis=axis, keepdims=True)) * scale
    """))
    argv = [str(source), "center", "--arg", "8x4:float64", "--arg", "2.5", "--static", "axis=0",
            "--backend", "numpy", "--stage", "all", "--source"]
    assert cli.run(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("# center(f64[8,4], f64[]) on numpy")
    for section in ("# traced", "# simplified", "# fused", "# kernels", "# source of input_0"):
        assert section in out
    assert "sum(v0, axes=(0,))" in out
    assert cli.run([str(source), "center", "--arg", "8x4:float64", "--arg", "1",
                    "--static", "axis=1", "--picture", str(tmp_path / "c.dot")]) == 0
    assert (tmp_path / "c.dot").read_text().startswith('digraph "center"')


@pytest.mark.parametrize("argv, message", [
    (["missing.py", "softmax", "--arg", "4x4:float32"], "no such file: missing.py"),
    ([SOFTMAX, "nope", "--arg", "4x4:float32"],
     "softmax.py has no function 'nope' (functions: main, softmax)"),
    ([SOFTMAX, "softmax", "--arg", "4xa:float32"], "bad --arg '4xa:float32': shape '4xa'"),
    ([SOFTMAX, "softmax", "--arg", "4x4:floaty"], "unknown dtype 'floaty'"),
    ([SOFTMAX, "softmax", "--arg", "many"], "bad --arg 'many': expected SHAPE:DTYPE"),
    ([SOFTMAX, "softmax", "--static", "3"], "bad --static '3': expected NAME=VALUE"),
    ([SOFTMAX, "softmax"], "softmax(): missing a required argument: 'x'"),
    ([SOFTMAX, "softmax", "--arg", "4x4:float32", "--picture", "p.gif"], "--picture 'p.gif'"),
])
def test_bad_input_exits_2_with_one_line(argv, message, capsys):
    assert cli.run(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("autofuse: error: ") and message in err[0]


def test_bad_input_exit_status_from_the_command_line():
    done = autofuse_cli("examples/softmax.py", "softmax", "--arg", "64by128:float32")
    assert done.returncode == 2
    assert done.stderr.strip() == ("autofuse: error: bad --arg '64by128:float32': shape '64by128' "
                                   "is not like 1024x512 (dims separated by x; empty or () for 0-d)")


def test_console_script_declared():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        project = tomllib.load(handle)["project"]
    assert project["scripts"]["autofuse"] == "autofuse.cli:main"
