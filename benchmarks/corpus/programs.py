"""The non-loop corpus: ML layers (programs_ml.py), scientific kernels (programs_science.py) and
NPBench-style kernels (programs_npbench.py), each tagged with the NumPy features it uses.

>>> from benchmarks.corpus.programs import PROGRAMS
>>> len(PROGRAMS) >= 30
True
"""
from __future__ import annotations

from .program import Registry
from .programs_ml import ML
from .programs_npbench import NPBENCH
from .programs_science import SCIENCE

PROGRAMS = Registry()
for _program in (*ML, *SCIENCE, *NPBENCH):
    PROGRAMS.add(_program)
