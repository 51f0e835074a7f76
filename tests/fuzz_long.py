"""The long fuzz run: `python tests/fuzz_long.py N [START] [BACKEND] [wide] [sorts]` checks the
programs of seeds
START..START+N-1 (tests/programs.py's `seeded_program`) against NumPy and the reference
interpreter, prints running counts, and appends every failing program to fuzz_failures.txt
(next to this file, or $FUZZ_FAILURES)."""
from __future__ import annotations

import os
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from programs import WITH_SORTS, check_fuzz_program, seeded_program  # noqa: E402


def main(argv) -> int:
    count = int(argv[1]) if len(argv) > 1 else 10_000
    start = int(argv[2]) if len(argv) > 2 else 0
    backend = argv[3] if len(argv) > 3 else "cpu"
    wide = "wide" in argv[4:]                         # programs.WIDE_DIMS sizes
    kinds = WITH_SORTS if "sorts" in argv[4:] else None   # sorts drawn too
    failures_path = os.environ.get("FUZZ_FAILURES") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fuzz_failures.txt")
    counts = {"ok": 0, "unsupported": 0, "undefined": 0, "failed": 0}
    began = time.time()
    warnings.simplefilter("ignore")
    for seed in range(start, start + count):
        program = seeded_program(seed, wide=wide, kinds=kinds)
        try:
            outcome = check_fuzz_program(program, backend, seed)
            counts[outcome.split(":")[0] if outcome.startswith("undefined") else
                   "ok" if outcome == "ok" else "unsupported"] += 1
        except Exception:
            counts["failed"] += 1
            with open(failures_path, "a") as file:
                file.write(f"=== seed {seed} backend {backend}\n{program!r}\n"
                           f"{traceback.format_exc()}\n")
        done = seed - start + 1
        if done % 100 == 0 or done == count:
            print(f"{done}/{count} programs: {counts} ({time.time() - began:.0f} s)", flush=True)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    sys.exit(main(sys.argv))
