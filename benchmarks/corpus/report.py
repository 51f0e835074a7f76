"""The corpus run's records as tables (plain text while it runs, Markdown for RESULTS files) and
a summary of how many programs trace, compile and match NumPy, with the commonest failures."""
from __future__ import annotations

from collections import Counter

COLUMNS = ("program", "dtype", "traces", "outcome", "first call s", "peak RSS MB", "kernels",
           "correct", "max error", "vs NumPy", "warm ms", "NumPy ms", "jax ms", "jax first s")


def outcome(record: dict) -> str:
    """The first thing that went wrong, in one line ("ok" where nothing did)."""
    if "timeout" in record:
        where = f" at {record['hung_at']}" if record.get("hung_at") else ""
        return f"timeout {record['timeout']:g} s during {record.get('stage', '?')}{where}"
    if "crash" in record and "error_type" not in record:
        return f"crash (exit {record['exit']}) during {record.get('stage', '?')}: {record['crash']}"
    if "error_type" in record:
        where = f" [{record['error_at']}]" if record.get("error_at") else ""
        message = record["error"].split(" Supported: ")[0]     # not the list of every function
        return f"{record['error_type']}: {message}{where}"
    if record.get("correct") is False:
        return f"WRONG: {record.get('note', '')}"
    if "numpy_error" in record:
        return f"NumPy peer failed: {record['numpy_error']}"
    return "ok" if record.get("stage") == "done" else f"stopped during {record.get('stage')}"


def _number(value, digits=2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def row(record: dict) -> list[str]:
    speedup = record.get("speedup")
    error = record.get("max_error")
    return [record["name"], record.get("dtype", ""),
            {True: "yes", False: "no"}.get(record.get("traced"), "?"),
            outcome(record), _number(record.get("first_call_s")), _number(record.get("peak_rss_mb"), 0),
            str(record.get("kernels", "")), {True: "yes", False: "NO"}.get(record.get("correct"), ""),
            "" if error is None else f"{error:.1e}", "" if speedup is None else f"{speedup:.2f}x",
            _milliseconds(record.get("warm_s")), _milliseconds(record.get("numpy_s")),
            _jax(record), _number(record.get("jax_first_s"))]


def _milliseconds(seconds) -> str:
    return "" if seconds is None else f"{seconds * 1e3:.3g}"


def _jax(record: dict) -> str:
    """The jax twin's warm time (ms), marked where it did not match NumPy, or why it did not run."""
    if "jax_error" in record:
        return "(" + record["jax_error"][:60] + ")"
    text = _milliseconds(record.get("jax_s"))
    return text + (" WRONG" if record.get("jax_correct") is False else "")


def text_table(records, header=True) -> str:
    lines = ["  ".join(COLUMNS)] if header else []
    lines += ["  ".join(row(record)) for record in records]
    return "\n".join(lines)


def summary(records) -> list[str]:
    """Counts of what traced, compiled and matched, and the commonest failure causes."""
    total = len(records)
    traced = sum(record.get("traced") is True for record in records)
    compiled = sum(record.get("compiled") is True for record in records)
    correct = sum(record.get("correct") is True for record in records)
    wrong = [record for record in records if record.get("correct") is False]
    causes = Counter(outcome(record).split(" [")[0] for record in records
                     if outcome(record) != "ok" and record.get("correct") is not False)
    lines = [f"- {total} measurements: {traced} trace, {compiled} compile and run, "
             f"{correct} match NumPy, {len(wrong)} do not"]
    for record in wrong:
        lines.append(f"- WRONG ANSWER: {record['name']} {record.get('dtype')}: {record.get('note')}")
    lines.append("- failures by cause (count: cause):")
    lines += [f"  - {count}: {cause}" for cause, count in causes.most_common()]
    return lines


def markdown_table(records) -> str:
    def escape(text):
        return text.replace("|", "\\|")
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(escape(cell) for cell in row(record)) + " |" for record in records]
    return "\n".join(summary(records) + [""] + lines) + "\n"
