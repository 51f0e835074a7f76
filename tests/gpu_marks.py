"""What every GPU test file starts with: CuPy (the module is skipped without it), and the marks
that select it (`-m gpu`) and skip it where no CUDA device answers.

    from gpu_marks import cupy, pytestmark  # noqa: F401
"""
import pytest

cupy = pytest.importorskip("cupy")
try:
    HAVE_GPU = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:
    HAVE_GPU = False

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="needs a CUDA GPU")]
