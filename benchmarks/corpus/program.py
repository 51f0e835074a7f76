"""The corpus's record of one program (the function, how to build its arguments at each size, what
it is and where it comes from) and the small helpers the corpus files build inputs with."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

FLOATS = (np.float32, np.float64)
SIZES = ("small", "large")


@dataclass(frozen=True)
class Program:
    """One ordinary NumPy program of the corpus.

    `make(rng, dtype, **shape)` builds the positional arguments (NumPy arrays) from `sizes[size]`
    less the names in `static`, which are passed as keyword arguments that jit marks static.
    `bytes_moved(arguments, static)` is the memory floor: the bytes one step must read and write
    for a loop program, one call for the others."""
    name: str
    function: Callable
    make: Callable
    sizes: dict
    description: str
    bytes_moved: Callable
    static: tuple = ()
    dtypes: tuple = FLOATS
    tags: tuple = ()
    kind: str = "program"
    notes: str = ""

    def arguments(self, size: str, dtype, seed: int = 0) -> tuple[tuple, dict]:
        """(positional arguments, static keyword arguments) at `size`, from a seeded RNG."""
        parameters = dict(self.sizes[size])
        static = {name: parameters.pop(name) for name in self.static}
        rng = np.random.default_rng(seed)
        return tuple(self.make(rng, np.dtype(dtype), **parameters)), static

    def steps(self, size: str) -> int:
        """The loop's step count at `size` (1 for a program that is not a loop)."""
        return int(self.sizes[size].get("steps", 1))


@dataclass
class Registry:
    """Programs in the order they were added; names must be unique."""
    programs: dict = field(default_factory=dict)

    def add(self, program: Program) -> Program:
        if program.name in self.programs:
            raise ValueError(f"two corpus programs are named {program.name!r}")
        self.programs[program.name] = program
        return program

    def __iter__(self):
        return iter(self.programs.values())

    def __len__(self):
        return len(self.programs)


def normal(rng, dtype, *shape, scale=1.0, shift=0.0):
    """Standard normal values of `shape` and `dtype`, times `scale` plus `shift`."""
    return (rng.standard_normal(shape) * scale + shift).astype(dtype)


def uniform(rng, dtype, *shape, low=0.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


def nbytes(*arrays) -> int:
    """Bytes held by the arrays (NumPy arrays or anything with .nbytes)."""
    return int(sum(array.nbytes for array in arrays))


def read_write(count_read: int, count_written: int):
    """A bytes_moved rule: read the first argument's size `count_read` times, write it
    `count_written` times (a stencil step reads and writes its grid once)."""
    return lambda arguments, static: (count_read + count_written) * arguments[0].nbytes


def inputs_and(output_factor: float = 0.0):
    """A bytes_moved rule: every argument read once, plus `output_factor` times the first
    argument's bytes written."""
    return lambda arguments, static: (nbytes(*arguments)
                                      + int(output_factor * arguments[0].nbytes))
