"""A corpus of ordinary NumPy programs nobody tuned autofuse for (loops.py: PDE steppers, ODE
integrators and iterative solvers; programs.py: ML layers, scientific and NPBench-style kernels),
their jax.lax.fori_loop twins (loops_jax.py) and a runner (run.py) that measures each one."""
from __future__ import annotations


def all_programs() -> list:
    """Every corpus program, loops first."""
    from .loops import LOOPS
    from .programs import PROGRAMS
    return [*LOOPS, *PROGRAMS]


def find(name: str):
    """The corpus program called `name`."""
    for program in all_programs():
        if program.name == name:
            return program
    raise KeyError(f"no corpus program is called {name!r}")
