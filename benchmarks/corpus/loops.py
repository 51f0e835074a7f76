"""The loop corpus: every loop program (grids in loops_grids.py, solvers and training loops in
loops_solvers.py), each with its step count passed as the static keyword `steps`.

>>> from benchmarks.corpus.loops import LOOPS
>>> len(LOOPS) >= 25
True
"""
from __future__ import annotations

from .loops_grids import GRIDS
from .loops_solvers import SOLVERS
from .program import Registry

LOOPS = Registry()
for _program in (*GRIDS, *SOLVERS):
    LOOPS.add(_program)
