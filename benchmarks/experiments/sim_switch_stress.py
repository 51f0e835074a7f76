"""Stress the simulator cases of tests/dynamic_sim_reductions.py with another thread switch
interval (tests/simulated.py's SWITCH_INTERVAL). At short intervals (2e-6, 1e-4) cases returned
wrong values, static and class kernels alike (2026-11-28): numba-cuda's simulated shared arrays
were torn between a block's threads (a lookup-then-store race in FakeCUDAShared.array; see
tests/simulated.py's _shared_array). With simulated.prepare_simulator's fix every case passes at
2e-6 (three runs).

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
