"""A slice assignment written in place on the CPU: the loops run over the assigned region only
and store into the base's memory (fusion/in_place.py says when nothing can tell)."""
from __future__ import annotations

import numpy as np

from ..index_text import affine
from .kernel import PARALLEL_ELEMENTS


class Regions:
    def region(self):
        """The slice assignment's region alone, written into its base's memory (fusion/in_place.py
        says when nothing can tell): the loops run over the update's elements."""
        root = self.group.root
        update = root.inputs[1]
        self.outputs[0].into = self.into
        self._zero_d_views()
        size = int(np.prod(update.shape, dtype=np.int64))
        parallel = size >= PARALLEL_ELEMENTS
        index = tuple(f"i{d}" for d in range(update.ndim))
        opened = self.loops(list(index), list(update.shape), parallel)
        r = self.renderer
        value = r.value(update, index)
        target = tuple(affine(a, s, i) for a, s, i in zip(r.starts(root), root.attrs["step"], index))
        r.emit(f"o0[{', '.join(target)}] = {value}")
        self.close(opened)
        return f"in place: the {'x'.join(map(str, update.shape))} region, into its base's memory", \
            parallel
