"""Run the external Array API test suite (data-apis/array-api-tests) against autofuse.

    python tests/external/run_array_api.py SUITE_DIR [--max-examples 5] [--files a.py,b.py]

SUITE_DIR is a checkout of https://github.com/data-apis/array-api-tests with its `array-api`
submodule (the spec) checked out; the suite is not part of this project. It is run twice on the
same files and hypothesis seed: against plain NumPy (the baseline: what NumPy itself fails) and
against tests/external/array_api_namespace.py (NumPy's namespace with every function that takes
arrays run through autofuse.jit). A test counts against autofuse only where it passes on NumPy and
fails through autofuse; the summary lists those with the first line of each error, and writes
both reports as JSON beside the summary (--out).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FILES = ["test_operators_and_elementwise_functions.py", "test_statistical_functions.py",
         "test_manipulation_functions.py", "test_searching_functions.py", "test_linalg.py",
         "test_utility_functions.py", "test_data_type_functions.py"]


def run(suite: str, module: str, files: list, examples: int, report: str) -> dict:
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, ARRAY_API_TESTS_VERSION="2021.12",
               PYTHONPATH=os.pathsep.join([HERE, ROOT, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--max-examples={examples}", "--disable-deadline", "--derandomize",
               "--json-report", f"--json-report-file={report}", "-o", "addopts=",
               *[os.path.join("array_api_tests", f) for f in files]]
    started = time.time()
    subprocess.run(command, cwd=suite, env=env, stdout=subprocess.DEVNULL)
    with open(report) as file:
        data = json.load(file)
    outcomes = {t["nodeid"]: t["outcome"] for t in data["tests"]}
    errors = {t["nodeid"]: _first_line(t) for t in data["tests"] if t["outcome"] == "failed"}
    return {"outcomes": outcomes, "errors": errors, "seconds": time.time() - started}


def _first_line(test: dict) -> str:
    text = (test.get("call") or test.get("setup") or {}).get("longrepr", "") or ""
    for line in text.splitlines():
        if line.startswith("E "):
            return line[2:].strip()[:200]
    return text.splitlines()[-1][:200] if text else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--max-examples", type=int, default=5)
    parser.add_argument("--files", default=",".join(FILES))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "external", "results"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    files = args.files.split(",")
    numpy = run(args.suite, "numpy", files, args.max_examples, os.path.join(args.out, "numpy.json"))
    ours = run(args.suite, "array_api_namespace", files, args.max_examples,
               os.path.join(args.out, "autofuse.json"))
    count = lambda outcomes, kind: sum(1 for o in outcomes.values() if o == kind)  # noqa: E731
    against = sorted(t for t, o in ours["outcomes"].items()
                     if o == "failed" and numpy["outcomes"].get(t) == "passed")
    lines = [f"# Array API suite (2021.12, {args.max_examples} examples a test, derandomized)",
             "",
             "| namespace | passed | failed | skipped | seconds |", "|---|---|---|---|---|"]
    for name, result in (("numpy", numpy), ("autofuse", ours)):
        lines.append(f"| {name} | {count(result['outcomes'], 'passed')} | "
                     f"{count(result['outcomes'], 'failed')} | {count(result['outcomes'], 'skipped')} | "
                     f"{result['seconds']:.0f} |")
    lines += ["", f"Failing through autofuse only ({len(against)}):", ""]
    lines += [f"- `{t.split('::')[-1]}`: {ours['errors'].get(t, '')}" for t in against]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "SUMMARY.md"), "w") as file:
        file.write(text)
    print(text)


if __name__ == "__main__":
    main()
