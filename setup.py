"""The one compiled part of autofuse: the fast path's key in C (autofuse/_fastkey.c).

Everything else is in pyproject.toml. The extension is optional: where it cannot be built (no C
compiler or Python headers), the package installs without it and autofuse/fastpath.py builds the
same key in Python (about 1 us more a call of four arrays)."""
from setuptools import Extension, setup

try:
    import numpy          # (pyproject's build requirements bring it; --no-build-isolation may not)
except ImportError:
    numpy = None

setup(ext_modules=[] if numpy is None else [
    Extension("autofuse._fastkey", ["autofuse/_fastkey.c"], include_dirs=[numpy.get_include()],
              optional=True)])
