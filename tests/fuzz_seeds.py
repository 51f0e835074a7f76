"""Re-check chosen fuzzer seeds on one backend: `python tests/fuzz_seeds.py BACKEND|ptx SEED...`
("ptx" lowers every kernel to CUDA PTX without running; BACKEND runs and compares with NumPy)."""
import os
import sys
import warnings
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")
import autofuse
from programs import check_fuzz_program, seeded_program
from simulated import prepare_simulator
prepare_simulator()        # (under the simulator: its barriers, simulated.py)
mode = sys.argv[1]
for seed in map(int, sys.argv[2:]):
    program = seeded_program(seed)
    try:
        if mode != "ptx":
            out = check_fuzz_program(program, mode, seed)
        else:
            args = program.inputs(seed)
            low = autofuse.jit(program.fn, backend="cuda").lower(*args)
            for k in low.kernels:
                k.ptx
            out = f"ptx ok ({len(low.kernels)} kernels)"
        print(seed, out[:60])
    except Exception as e:
        print(seed, "FAIL", type(e).__name__, str(e).splitlines()[0][:150])
