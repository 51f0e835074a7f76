"""Run the corpus: each program in its own process under a timeout and a memory cap, recording
whether autofuse traces and compiles it, its first-call time, peak RSS, kernel count, whether it
matches NumPy, and its warm time beside NumPy's (NumPy's functions on CuPy arrays with --backend
cuda, which dispatch through __array_function__ / __array_ufunc__).

    python -m benchmarks.corpus.run --backend cpu --size small [--only NAME[,NAME]] [--kind loop]
        [--dtype first|all|float32] [--timeout 60] [--jobs 2] [--memory-gb 4] [--json out.json]
        [--markdown out.md] [--reference cpu|device] [--first NAME[,NAME]]

--reference device (CUDA): the reference answers are the programs' NumPy text on CuPy arrays, not
NumPy on the CPU (large loops take minutes there); --first starts the named programs before the
others (the slowest known), and the JSON and Markdown files are rewritten as each one finishes.

A hang, a crash or running out of memory is recorded as a finding of that program, not an error
of the run. Each process compiles into a fresh autofuse disk cache, so first calls are cold.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from . import all_programs
from .report import markdown_table, text_table

REPOSITORY = Path(__file__).resolve().parents[2]


def jobs_for(programs, dtype_choice: str) -> list[tuple]:
    """(program name, dtype name) for each measurement asked for."""
    import numpy as np
    jobs = []
    for program in programs:
        names = [np.dtype(dtype).name for dtype in program.dtypes]
        if dtype_choice == "first":
            names = names[:1]
        elif dtype_choice != "all":
            names = [name for name in names if name == dtype_choice]
        jobs.extend((program.name, name) for name in names)
    return jobs


def _memory_cap(gigabytes: float):
    limit = int(gigabytes * (1 << 30))
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_one(name: str, dtype: str, options) -> dict:
    """Measure one program in a subprocess; the record it left, with how the process ended."""
    with tempfile.TemporaryDirectory(prefix="corpus-") as scratch:
        progress = os.path.join(scratch, "progress.json")
        environment = dict(os.environ, AUTOFUSE_CACHE_DIR=os.path.join(scratch, "cache"),
                           CORPUS_REFERENCE=options.reference,
                           CORPUS_STACK_AFTER=str(max(1.0, options.timeout - 3.0)),
                           PYTHONPATH=str(REPOSITORY) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        command = [sys.executable, "-m", "benchmarks.corpus.measure", name, dtype, options.size,
                   options.backend, progress]
        capped = options.backend == "cpu" and options.memory_gb > 0   # CUDA needs address space
        outcome = {}
        try:
            process = subprocess.run(command, cwd=REPOSITORY, env=environment, capture_output=True,
                                     text=True, timeout=options.timeout,
                                     preexec_fn=_memory_cap(options.memory_gb) if capped else None)
            if process.returncode != 0:
                tail = (process.stderr.strip().splitlines() or [""])[-1]
                outcome = {"exit": process.returncode, "crash": tail[:300]}
        except subprocess.TimeoutExpired:
            outcome = {"timeout": options.timeout}
        record = {"name": name, "dtype": dtype, "stage": "start"}
        if os.path.exists(progress):
            with open(progress) as file:
                record = json.load(file)
        record.update(outcome)
        hung_at = _hung_at(progress + ".stack")
        if hung_at:
            record.update(timeout=options.timeout, hung_at=hung_at)
            if hung_at.startswith("backends"):     # lower() had traced and was compiling
                record["traced"] = True
            record.pop("crash", None)
        return record


def _hung_at(stack_path: str) -> str:
    """The innermost autofuse frame (or numba's, or the program's) of the stack a worker wrote
    when its time ran out; "" where it finished in time."""
    if not os.path.exists(stack_path):
        return ""
    with open(stack_path) as file:
        frames = [line.strip() for line in file if line.strip().startswith("File ")]
    for marker in (os.sep + "autofuse" + os.sep, os.sep + "numba" + os.sep, "corpus"):
        for frame in frames:            # faulthandler writes the innermost frame first
            if marker in frame:
                return frame.split(marker, 1)[-1].replace('", line ', ":")
    return frames[0] if frames else ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--size", default="small", choices=("small", "large"))
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--kind", default="", choices=("", "loop", "program"))
    parser.add_argument("--dtype", default="all", help="first, all, or one dtype name")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--memory-gb", type=float, default=4.0)
    parser.add_argument("--json", default="")
    parser.add_argument("--markdown", default="")
    parser.add_argument("--reference", default="cpu", choices=("cpu", "device"))
    parser.add_argument("--first", default="", help="comma-separated names to start first")
    options = parser.parse_args(argv)

    programs = all_programs()
    if options.only:
        wanted = set(options.only.split(","))
        programs = [program for program in programs if program.name in wanted]
    if options.kind:
        programs = [program for program in programs if program.kind == options.kind]
    jobs = jobs_for(programs, options.dtype)
    first = options.first.split(",")
    started = sorted(jobs, key=lambda job: first.index(job[0]) if job[0] in first
                     else len(first))
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        futures = {pool.submit(run_one, name, dtype, options): (name, dtype)
                   for name, dtype in started}
        finished = {}
        for future in as_completed(futures):
            finished[futures[future]] = future.result()
            print(text_table([finished[futures[future]]], header=len(finished) == 1), flush=True)
            write(options, [finished[job] for job in jobs if job in finished])
    return 0


def write(options, records) -> None:
    """The records so far, in the corpus's order, to the --json and --markdown files."""
    if options.json:
        Path(options.json).write_text(json.dumps(records, indent=1))
    if options.markdown:
        Path(options.markdown).write_text(markdown_table(records))


if __name__ == "__main__":
    sys.exit(main())
