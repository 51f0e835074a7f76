"""autofuse's exception hierarchy; every user-facing error names the NumPy call, shapes and source line."""
from __future__ import annotations

import functools
import linecache
import os
import sys

import numpy

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# NOTE: NumPy's own directory, not any path with a "numpy" folder in it (a user's project may
# live under one).
_NUMPY_DIR = os.path.dirname(os.path.abspath(numpy.__file__)) + os.sep


class AutofuseError(Exception):
    """Base class of every error autofuse raises on purpose."""


class TraceError(AutofuseError):
    """The function did something that cannot be traced (control flow on values, .item(), ...)."""


class ValueNeeded(TraceError):
    """Internal: the trace needs the value of Python scalar arguments `leaves` (flat leaf
    indices); `autofuse.jit` retraces with them specialized by value."""

    def __init__(self, message: str, leaves: frozenset):
        super().__init__(message)
        self.leaves = frozenset(leaves)


class UnsupportedError(AutofuseError, NotImplementedError):
    """A NumPy function, argument or dtype that autofuse does not support."""


class ShapeError(AutofuseError, ValueError):
    """Shapes that do not broadcast, axes out of range, matmul dimension mismatch."""


class NumPyValueError(AutofuseError, ValueError):
    """A value NumPy itself refuses, with NumPy's message (integers to negative integer powers)."""


class OutOfBoundsError(AutofuseError, IndexError):
    """An index outside its axis (np.take, x[idx], take_along_axis), as NumPy's IndexError; for
    indices computed in the function, found by the kernels and raised after the call."""


class LinAlgError(AutofuseError, numpy.linalg.LinAlgError):
    """NumPy's LinAlgError (a ValueError): a matrix that is not square, singular or not positive
    definite; for values computed in the function, found by the kernels and raised after the call."""


class DTypeError(AutofuseError, TypeError):
    """A dtype autofuse cannot compute with, or a cast NumPy would refuse."""


class ArgumentError(AutofuseError, TypeError):
    """Arguments that do not bind to the function, or cannot be traced."""


class TuningError(AutofuseError, ValueError):
    """A code generator setting (a Tuning field) its kernels cannot be laid out with."""


class BackendError(AutofuseError, RuntimeError):
    """A backend failed to compile or launch a kernel."""


def user_frame() -> tuple[str, int, str] | None:
    """The innermost stack frame outside autofuse and NumPy: (file, line, source text)."""
    found = user_line()
    if found is None:
        return None
    return found + (linecache.getline(*found).strip(),)


def user_line() -> tuple[str, int] | None:
    """The innermost stack frame outside autofuse and NumPy: (file, line); what every traced op
    records as its origin, so without reading the source text."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _inside(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


@functools.lru_cache(maxsize=4096)
def _inside(code_filename: str) -> bool:
    """Whether code of this file is autofuse's or NumPy's (asked for every frame of every traced
    op: os.path.abspath is cached by file)."""
    # NOTE: code autofuse generates and runs (host calls, kernels) is compiled under names
    # starting "<autofuse": inside too.
    filename = os.path.abspath(code_filename)
    return filename.startswith(_PACKAGE_DIR) or filename.startswith(_NUMPY_DIR) \
        or code_filename.startswith("<autofuse")


def where() -> str:
    """' (at file:line: source)' for the user's innermost frame, or ''."""
    found = user_frame()
    if found is None:
        return ""
    filename, line, text = found
    return f"\n  at {filename}:{line}: {text}" if text else f"\n  at {filename}:{line}"


def describe(value) -> str:
    """A short description of a traced value or Python object for error messages."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{dtype}{list(shape)}"
    return f"{type(value).__name__} {value!r}"
