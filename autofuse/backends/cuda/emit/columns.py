"""The "columns" reduction kernel: one thread per output element, the reduced axes looped; and
the stores of reduced outputs every reduction kernel shares."""
from __future__ import annotations

import itertools



from ....fusion.group import keepdims_shape, outer_shape
from ..kernel import KernelSource, Param
from . import run_tiles, runs, short_tiles


class Columns:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def _outer_index(self, outer_axes, shape, flat: str) -> None:
        names = [f"i{d}" for d in outer_axes]
        self.delinearize(flat, names, [shape[d] for d in outer_axes])

    def store_reduced(self, shape, axes, guard: str | None, run=None) -> list[Param]:
        """Store outputs of the reduced (outer) shape, at each position of `run` (runs.Run) if
        given; returns the row-shaped ones left."""
        r = self.renderer
        outer_index = tuple(f"i{d}" for d in range(len(shape)) if d not in axes)
        keep_index = tuple("0" if d in axes else f"i{d}" for d in range(len(shape)))
        reduced, rows = [], []
        for param in self.outputs:
            node = param.node
            if node.shape == outer_shape(shape, axes):
                reduced.append((param, outer_index))
            elif node.shape == keepdims_shape(shape, axes):
                reduced.append((param, keep_index))
            else:
                rows.append(param)
        if reduced and guard:
            r.emit(f"if {guard}:")
            r.push()
        for position in runs.positions(run):
            for param, index in reduced:
                self.store(param, runs.at(run, index, position))
        if reduced and guard:
            r.pop()
        return rows

    def columns(self, shape, axes, outer_axes, outer, run=None) -> KernelSource:
        """One thread per output element, or per run of outputs along `run`'s axis (runs.py);
        the reduced axes looped in order."""
        if run is not None and run.staged is not None:
            return run_tiles.write(self, shape, axes, outer_axes, outer, run)
        r = self.renderer
        full = tuple(f"i{d}" if d not in axes else f"r{d}" for d in range(len(shape)))
        threads = outer if run is None else outer // run.size
        elements = _written_out(shape, axes, self.tuning.short_rows, self.dynamic)
        tiles = None if elements is None or run is not None or not self.tuning.short_tiles \
            else short_tiles.plan(self.group, shape, axes, self.names, self.outputs,
                                  self.tuning.threads, self.device.shared_per_block)
        if tiles is not None:
            short_tiles.open_block(self, tiles)
            short_tiles.register(self, tiles, elements)
        else:
            r.emit(f"o = {self.ix('cuda.grid(1)')}")
            r.emit(f"while o < {threads}:")
            r.push()
            if run is not None and run.strip:      # the axis counted in strips of run.size
                strips = list(shape)
                strips[run.axis] //= run.size
                self._outer_index(outer_axes, strips, "o")
                for position in runs.positions(run):
                    r.emit(f"{run.name(position)} = "
                           f"{self.ix(f'i{run.axis} * {run.size} + {position}')}")
            else:
                self._outer_index([d for d in outer_axes if run is None or d != run.axis],
                                  shape, "o")
        for node in self.group.reductions:
            accs = [(r.name("acc"), r.name("k"), r.name("red")) for _ in runs.positions(run)]
            for acc, idx, _ in accs:
                self.acc.init(node, acc, idx, node.dtype)
            if elements is not None:      # every element of the row, in this scope
                for flat, names in enumerate(elements):
                    index = tuple(names.get(part, part) for part in full)
                    for position, (acc, idx, _) in zip(runs.positions(run), accs):
                        value = r.value(node.inputs[0], runs.at(run, index, position))
                        self.acc.combine(node, acc, idx, value, node.dtype, str(flat))
            else:
                for a in axes:
                    r.emit(f"for r{a} in range({shape[a]}):")
                    r.push()
                for position, (acc, idx, _) in zip(runs.positions(run), accs):
                    value = r.value(node.inputs[0], runs.at(run, full, position))
                    self.acc.combine(node, acc, idx, value, node.dtype,
                                     f"r{axes[0]}" if axes else "0")
                for _ in axes:
                    r.pop()
            results = []
            for acc, idx, result in accs:
                final = self.acc.final(node, acc, idx)
                r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
                results.append(result)
            r.special[node.id] = (lambda index, result=results[0]: result) if run is None else \
                run.result(results, shape, axes)
        rows = self.store_reduced(shape, axes, None if tiles is None else short_tiles.guard(tiles),
                                  run)
        for param in rows:
            if elements is not None:
                for k, names in enumerate(elements):
                    index = tuple(names.get(part, part) for part in full)
                    if tiles is None or not short_tiles.gather(self, tiles, param, index, k):
                        self.store(param, index)
                continue
            for a in axes:
                r.emit(f"for r{a} in range({shape[a]}):")
                r.push()
            self.store(param, full)
            for _ in axes:
                r.pop()
        if tiles is not None:
            short_tiles.close_block(self, tiles)
            blocks = max(1, min(-(-threads // tiles.threads), 65535))
            return self.finish(f"columns, rows of {len(elements)} written out, {tiles.threads} "
                               f"a block staged in shared memory", tiles.threads, (blocks, 1, 1))
        r.emit(f"o = {self.ix('o + cuda.gridsize(1)')}")
        r.pop()
        blocks = max(1, min(-(-threads // self.tuning.threads), 65535))
        strategy = "columns" if run is None else f"columns, {run.size} outputs a thread"
        if run is not None and run.strip:
            strategy += f" along axis {run.axis}"
        if elements is not None:
            strategy += f", rows of {len(elements)} written out"
        source = self.finish(strategy, self.tuning.threads, (blocks, 1, 1))
        if self.dynamic and run is None:     # (a shape class's: the outputs' loop takes any count)
            source.launch_rule = ("outputs", self.tuning.threads)
        return source


def _written_out(shape, axes, most: int, dynamic: bool) -> list | None:
    """The reduced elements of a row as {index name: its number} each, in order, where the row has
    at most `most` (and more than one) and is written out element by element: each element is then
    loaded and computed once for every reduction and output of its row (the renderer's memo shares
    them), where a loop each would read it again; None to loop."""
    inner = 1
    for a in axes:
        inner *= shape[a]
    if dynamic or not axes or inner > most or inner < 2:
        return None
    return [{f"r{a}": str(value) for a, value in zip(axes, values)}
            for values in itertools.product(*(range(shape[a]) for a in axes))]
