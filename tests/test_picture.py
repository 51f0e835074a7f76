"""Lowered.to_dot() / render(): a cluster per fusion group coloured by kind, byte-labelled edges."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import autofuse
from autofuse import picture
from autofuse.fusion.cost import mib, read_bytes


def mixed(x, w, b):
    h = np.tanh(x @ w + b)
    c = h - h.mean(axis=0, keepdims=True)
    return c.T * 2.0, x * 3.0


@pytest.fixture(scope="module")
def lowered():
    f = autofuse.jit(mixed, backend="numpy")       # partitioned like any backend; no compile
    return f.lower(np.ones((32, 24), np.float32), np.ones((24, 40), np.float32),
                   np.ones(40, np.float32))


def clusters(dot: str) -> dict:
    """cluster name -> its graph attribute line."""
    return dict(re.findall(r"subgraph (cluster_g\d+) \{\n    graph (\[.*?\]);", dot))


def test_every_kind_is_present(lowered):
    assert {g.kind for g in lowered.kernels} == {"elementwise", "loop", "input", "output"}


def test_one_cluster_per_group_coloured_by_kind(lowered):
    dot = lowered.to_dot()
    assert dot.startswith('digraph "mixed" {') and dot.rstrip().endswith("}")
    found = clusters(dot)
    assert set(found) == {f"cluster_g{g.id}" for g in lowered.kernels}
    for group in lowered.kernels:
        attrs = found[f"cluster_g{group.id}"]
        assert f'fillcolor="{picture.KIND_COLORS[group.kind]}"' in attrs
        assert f"{group.kind}_{group.id}" in attrs


def test_values_labelled_with_name_shape_and_dtype(lowered):
    dot = lowered.to_dot()
    assert '"v0 = input\\nf32[32,24]"' in dot
    assert re.search(r'label="v\d+ = matmul\\nf32\[32,40\]"', dot)
    assert re.search(r'label="v\d+ = transpose\\nf32\[40,32\]"', dot)
    assert "return" in dot


def test_edges_between_groups_labelled_with_bytes(lowered):
    dot = lowered.to_dot()
    names = lowered.fused.names
    crossing = re.findall(r"  (\w+) -> g(\d+)_(\d+) \[label=\"([^\"]+)\", penwidth", dot)
    assert crossing
    groups = {g.id: g for g in lowered.kernels}
    for tail, gid, _, label in crossing:
        group = groups[int(gid)]
        source_id = int(tail.rsplit("_", 1)[1])
        value = next(n for n in group.inputs if n.id == source_id)
        assert label == mib(read_bytes(value)), (tail, gid, names[value.id])
    # the matmul's result is stored by the output group and read by two others
    matmul_group = next(g for g in lowered.kernels if g.kind == "output")
    (matmul_id,) = matmul_group.outputs
    readers = {gid for tail, gid, _, _ in crossing if tail == f"g{matmul_group.id}_{matmul_id}"}
    assert len(readers) == 2
    assert re.search(r'-> out \[label="0: 5.0 KiB"', dot)


def test_dot_needs_no_graphviz(lowered, monkeypatch, tmp_path):
    monkeypatch.setattr(picture.shutil, "which", lambda name: None)
    assert lowered.to_dot()
    written = lowered.render(tmp_path / "p.dot")
    assert open(written).read() == lowered.to_dot()


def test_render_without_dot_names_what_to_install(lowered, monkeypatch, tmp_path):
    monkeypatch.setattr(picture.shutil, "which", lambda name: None)
    with pytest.raises(autofuse.AutofuseError, match="apt-get install graphviz"):
        lowered.render(tmp_path / "p.svg")
    assert not (tmp_path / "p.svg").exists()


def test_unknown_format(lowered, tmp_path):
    with pytest.raises(picture.RenderError, match="picture format"):
        lowered.render(tmp_path / "p.gif")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_render_svg_and_png(lowered, tmp_path):
    svg = lowered.render(tmp_path / "p.svg")
    text = open(svg).read()
    assert "<svg" in text and "output_0" in text
    png = lowered.render(tmp_path / "picture", format="png")
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
