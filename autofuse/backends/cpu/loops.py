"""Loop nests of a generated CPU function: nested ranges with the outermost a prange when parallel,
and room before a piece of rows for scratch buffers made once per piece rather than per row."""
from __future__ import annotations

from .kernel import ROW_CHUNKS


class Loops:
    def loops(self, names: list[str], sizes: list[int], parallel: bool) -> int:
        """Open nested loops; the outermost is a prange when parallel. Returns how many opened."""
        r = self.renderer
        for depth, (name, size) in enumerate(zip(names, sizes)):
            loop = "numba.prange" if parallel and depth == 0 else "range"
            r.emit(f"for {name} in {loop}({size}):")
            r.push()
        return len(names)

    def tiled_loops(self, names: list[str], sizes: list[int], parallel: bool, tile: int) -> int:
        """`loops`, the last two axes walked in tile x tile blocks (a block's reads across memory
        stay in cache while its writes run along the last axis); the outermost loop (a leading
        axis, else the blocks' rows) a prange when parallel. Returns how many opened."""
        r = self.renderer
        opened = self.loops(names[:-2], sizes[:-2], parallel)
        rows, columns = sizes[-2:]
        outer = "numba.prange" if parallel and not names[:-2] else "range"
        r.emit(f"for tr in {outer}({-(-rows // tile)}):")
        r.push()
        r.emit(f"for tc in range({-(-columns // tile)}):")
        r.push()
        r.emit(f"for {names[-2]} in range(tr * {tile}, min({rows}, tr * {tile} + {tile})):")
        r.push()
        r.emit(f"for {names[-1]} in range(tc * {tile}, min({columns}, tc * {tile} + {tile})):")
        r.push()
        return opened + 4

    def chunked_loops(self, names: list[str], sizes: list[int], parallel: bool) -> int:
        """`loops`, with a place before the innermost rows where per-row scratch buffers are
        made once (`scratch`): at the top of the function, or, when parallel, in each of
        ROW_CHUNKS pieces of the outermost loop (each piece on one thread)."""
        r = self.renderer
        if not parallel or not names:
            self._scratch_at = [len(r.lines), r.depth]
            return self.loops(names, sizes, parallel)
        if self.dynamic:
            # NOTE: in a shape class the size is a kernel argument (dynamic/): the pieces' length
            # is computed from it in the kernel, their count fixed (pieces past the rows are empty)
            step, pieces = r.name("step"), ROW_CHUNKS
            r.emit(f"{step} = -(-{sizes[0]} // {ROW_CHUNKS})")
        else:
            step = -(-sizes[0] // ROW_CHUNKS)
            pieces = -(-sizes[0] // step)
        r.emit(f"for c in numba.prange({pieces}):")
        r.push()
        self._scratch_at = [len(r.lines), r.depth]
        r.emit(f"for {names[0]} in range(c * {step}, min({sizes[0]}, (c + 1) * {step})):")
        r.push()
        return 2 + self.loops(names[1:], sizes[1:], False)

    def scratch(self, prefix: str, size: int, dtype, stack: bool = False) -> str:
        """A buffer of `size` made where `chunked_loops` left room (else here): its contents are
        the caller's to set before each use. `stack`: in the stack frame (lanes.stack_array; a
        few elements)."""
        r = self.renderer
        name = r.name(prefix)
        make = "stack_array" if stack else "np.empty"
        line = f"{name} = {make}({size}, {r.ctor(dtype)})"
        if self._scratch_at is None:
            r.emit(line)
        else:
            at, depth = self._scratch_at
            r.lines.insert(at, "    " * depth + line)
            self._scratch_at[0] += 1
        return name

    def close(self, count: int) -> None:
        for _ in range(count):
            self.renderer.pop()

    # -- group kinds -----------------------------------------------------------------------------
