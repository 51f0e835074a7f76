"""The BLAS library numba's np.dot calls (SciPy's bundled OpenBLAS, not NumPy's), kept on one
thread while a program with matrix-product kernels runs, so that its tiles run on numba's
threads alone (one pool).

Why: with BLAS's own threads, each tile's call forks and joins BLAS's threads; when another
process holds a core, every join waits out a scheduler slice, and a 1024x2048 @ 2048x512 product
in tiles took 32-378 ms from run to run on the 2-core CI machine (NumPy's one call: 25 ms); with
one BLAS thread and the tiles on numba's threads, 32-40 ms (issue 34's measurements).

threadpoolctl finds the library by what the process has loaded and sets its thread count through
the library's own API (OpenBLAS, MKL or BLIS alike); without it, or where SciPy's BLAS is not
found, nothing is changed. The count is set while at least one such call runs and restored after
the last (a counter under a lock: concurrent calls from several threads share one setting).
"""
from __future__ import annotations

import threading

_lock = threading.Lock()
_state = {"active": 0, "saved": None, "library": None, "searched": False}


def _library():
    if not _state["searched"]:
        _state["searched"] = True
        try:
            import os

            import scipy
            import scipy.linalg.cython_blas  # noqa: F401  (what numba's np.dot calls)
            from threadpoolctl import ThreadpoolController
            # SciPy's own copy (scipy/ or scipy.libs/ beside it), never NumPy's (numpy.libs/
            # holds a library also named libscipy_openblas...)
            package = os.path.dirname(os.path.abspath(scipy.__file__))
            places = (package + os.sep, package + ".libs" + os.sep)
            found = [c for c in ThreadpoolController().lib_controllers
                     if c.user_api == "blas" and os.path.abspath(c.filepath).startswith(places)]
            _state["library"] = found[0] if found else None
        except Exception:       # no threadpoolctl or no SciPy BLAS: leave BLAS as it is
            _state["library"] = None
    return _state["library"]


class single_threaded:
    """`with single_threaded():` around a call that runs BLAS tiles on numba's threads."""

    __slots__ = ()

    def __enter__(self):
        library = _library()
        if library is None:
            return self
        with _lock:
            if _state["active"] == 0:
                _state["saved"] = library.get_num_threads()
                if _state["saved"] != 1:
                    library.set_num_threads(1)
            _state["active"] += 1
        return self

    def __exit__(self, *exc):
        library = _state["library"]
        if library is None:
            return False
        with _lock:
            _state["active"] -= 1
            if _state["active"] == 0 and _state["saved"] not in (None, 1):
                library.set_num_threads(_state["saved"])
        return False


GUARD = single_threaded()
