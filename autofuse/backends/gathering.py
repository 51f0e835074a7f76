"""A gather rendered for any backend: its data read at the positions its indices hold, each
wrapped (negative counts from the end) and clamped into its axis."""
from __future__ import annotations


def render(r, node, index: tuple) -> str:
    """`node` (a gather) at `index`, with renderer `r` (render.Renderer)."""
    data, *indices = node.inputs
    indexed, kept = node.attrs["indexed"], node.attrs["kept"]
    others = iter(kept)
    source_index = []
    for d, size in enumerate(data.shape):
        if d in indexed:
            position = r.value(indices[indexed.index(d)], index)
            source_index.append(clamped(r, position, size))
        else:
            source_index.append(index[next(others)])
    return r.value(data, tuple(source_index))


def clamped(r, position: str, size: int) -> str:
    """A gathered position as an index into an axis of `size`: a negative one counted from the
    end, and one still outside clamped into it (the call reports it: trace/checks.py), so no
    kernel reads outside its arrays."""
    wrapped, name = r.name("w"), r.name("g")
    r.emit(f"{wrapped} = {position} + {size} if {position} < 0 else {position}")
    r.emit(f"{name} = {r.index(f'min(max({wrapped}, 0), {max(size - 1, 0)})')}")
    return name
