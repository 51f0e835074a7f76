"""The on-disk cache of generated modules: content-addressed files, written once, atomically.

Where it lives: $AUTOFUSE_CACHE_DIR, else ~/.cache/autofuse. A key hashes everything the compiled
code depends on (generated source, toolchain versions), so a change of either misses and a stale
entry is never read.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """Where compiled kernels are cached: $AUTOFUSE_CACHE_DIR if set, else ~/.cache/autofuse.

    Read on every use, so setting the variable takes effect for kernels built afterwards."""
    root = os.environ.get("AUTOFUSE_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "autofuse")
    return Path(root)


def clear_disk_cache() -> None:
    """Remove every cached module and compiled binary from `cache_dir()` (in-memory compiled
    functions stay valid; a new process then compiles again)."""
    shutil.rmtree(cache_dir(), ignore_errors=True)


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def write_once(path: Path, data: bytes) -> None:
    """Create `path` with `data` unless it exists; concurrent writers never expose a partial file."""
    if path.exists():
        return
    _write(path, data)


def write_checked(path: Path, data: bytes) -> None:
    """Make `path` hold exactly `data` (content-addressed: any other content is a corrupted or
    half-written entry, from a crash or a full disk, and is replaced atomically)."""
    if not _holds(path, data):
        _write(path, data)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False


def function_key(fn) -> str:
    """A traced function's name, file and first line, hashed: a key for notes about the function
    as a whole (backends/cuda/compile_workers.py's), not for compiled code."""
    fn = getattr(fn, "__wrapped__", fn)
    code = getattr(fn, "__code__", None)
    return digest(getattr(fn, "__module__", "") or "", getattr(fn, "__qualname__", repr(fn)),
                  getattr(code, "co_filename", ""), str(getattr(code, "co_firstlineno", 0)))
