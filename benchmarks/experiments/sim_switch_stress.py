"""Stress the simulator cases of tests/dynamic_sim_reductions.py with another thread switch
interval (tests/simulated.py's SWITCH_INTERVAL). At short intervals (2e-6, 1e-4; 1e-3 and 5e-3
pass) cases return wrong values, at 6056e50 and 7a36727 alike (2026-11-28), among them a column
sum whose kernel has no shared memory and no barrier: most likely the simulator's own per-thread
state under fast switching, not the kernels (to be settled on a GPU).

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/experiments/sim_switch_stress.py INTERVAL [CASE ...]
"""
import os
import runpy
import sys

TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "tests")
sys.path.insert(0, TESTS)

import simulated  # noqa: E402

simulated.SWITCH_INTERVAL = float(sys.argv[1])
sys.argv = ["dynamic_sim_reductions.py"] + sys.argv[2:]
runpy.run_path(os.path.join(TESTS, "dynamic_sim_reductions.py"), run_name="__main__")
