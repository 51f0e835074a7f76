"""Non-loop kernels in the style of NPBench (Ziogas et al. 2021), which ports PolyBench and
scientific Python codes to NumPy: BLAS-2 kernels, doitgen, syrk, go_fast, arc_distance, azimint,
a 2-D convolution and an N-body acceleration."""
from __future__ import annotations

import numpy as np

from .program import Program, Registry, inputs_and, nbytes, normal, uniform

NPBENCH = Registry()


def _program(name, function, make, small, large, description, bytes_moved, tags=(), **options):
    return NPBENCH.add(Program(name, function, make, {"small": small, "large": large}, description,
                               bytes_moved, tags=tags, **options))


def _matrix_once(arguments, static):
    return arguments[0].nbytes


def gemver(alpha, beta, a, u1, v1, u2, v2, w, x, y, z):
    a = a + np.outer(u1, v1) + np.outer(u2, v2)
    x = x + beta * y @ a + z
    w = w + alpha * a @ x
    return a, x, w


def _gemver_inputs(rng, dtype, n):
    return (1.5, 1.2, uniform(rng, dtype, n, n), *(uniform(rng, dtype, n) for _ in range(8)))


_program("gemver", gemver, _gemver_inputs, dict(n=64), dict(n=8000),
         "rank-2 update then two matvecs (NPBench/PolyBench gemver)",
         lambda arguments, static: 3 * arguments[2].nbytes, ("outer", "matvec", "python-float-args"))


def atax(a, x):
    return (a @ x) @ a


_program("atax", atax, lambda rng, dtype, m, n: (uniform(rng, dtype, m, n), uniform(rng, dtype, n)),
         dict(m=60, n=70), dict(m=20000, n=25000), "A^T (A x) (NPBench/PolyBench atax)",
         lambda arguments, static: 2 * arguments[0].nbytes, ("matvec",))


def bicg(a, p, r):
    return r @ a, a @ p


_program("bicg", bicg,
         lambda rng, dtype, m, n: (uniform(rng, dtype, m, n), uniform(rng, dtype, n), uniform(rng, dtype, m)),
         dict(m=60, n=70), dict(m=20000, n=25000), "the two matvecs of BiCG (NPBench/PolyBench bicg)",
         _matrix_once, ("matvec",))


def mvt(x1, x2, y1, y2, a):
    x1 = x1 + a @ y1
    x2 = x2 + y2 @ a
    return x1, x2


_program("mvt", mvt,
         lambda rng, dtype, n: (*(uniform(rng, dtype, n) for _ in range(4)), uniform(rng, dtype, n, n)),
         dict(n=64), dict(n=20000), "matvec and transposed matvec (NPBench/PolyBench mvt)",
         lambda arguments, static: arguments[4].nbytes, ("matvec",))


def gesummv(alpha, beta, a, b, x):
    return alpha * a @ x + beta * b @ x


_program("gesummv", gesummv,
         lambda rng, dtype, n: (1.5, 1.2, uniform(rng, dtype, n, n), uniform(rng, dtype, n, n),
                                uniform(rng, dtype, n)),
         dict(n=64), dict(n=14000), "alpha A x + beta B x (NPBench/PolyBench gesummv)",
         lambda arguments, static: 2 * arguments[2].nbytes, ("matvec", "python-float-args"))


def doitgen(a, c4):
    nr, nq, npp = a.shape
    a = a.copy()
    a[:] = np.reshape(np.reshape(a, (nr, nq, 1, npp)) @ c4, (nr, nq, npp))
    return a


_program("doitgen", doitgen,
         lambda rng, dtype, nr, nq, np_: (uniform(rng, dtype, nr, nq, np_), uniform(rng, dtype, np_, np_)),
         dict(nr=8, nq=10, np_=12), dict(nr=220, nq=250, np_=270),
         "multi-resolution analysis kernel, batched matmul by reshape (NPBench doitgen)",
         lambda arguments, static: 2 * arguments[0].nbytes, ("reshape", "matmul", "setslice"))


def syrk(alpha, beta, c, a):
    return np.tril(beta * c + alpha * a @ a.T) + np.triu(c, 1)


_program("syrk", syrk,
         lambda rng, dtype, n, m: (1.5, 1.2, uniform(rng, dtype, n, n), uniform(rng, dtype, n, m)),
         dict(n=40, m=30), dict(n=4000, m=3000),
         "symmetric rank-k update of the lower triangle with np.tril/np.triu (PolyBench syrk)",
         lambda arguments, static: 2 * arguments[2].nbytes, ("tril", "matmul"))


def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


_program("go_fast", go_fast, lambda rng, dtype, n: (uniform(rng, dtype, n, n),),
         dict(n=32), dict(n=20000),
         "trace of tanh of the diagonal by a Python loop over scalars (Numba's 5-minute guide, "
         "NPBench go_fast)", inputs_and(1.0), ("scalar-index", "python-loop"))


def arc_distance(theta_1, phi_1, theta_2, phi_2):
    temp = (np.sin((theta_2 - theta_1) / 2) ** 2
            + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2) ** 2)
    return 2 * np.arctan2(np.sqrt(temp), np.sqrt(1 - temp))


_program("arc_distance", arc_distance,
         lambda rng, dtype, n: tuple(uniform(rng, dtype, n, high=np.pi) for _ in range(4)),
         dict(n=1000), dict(n=1 << 24), "great-circle distance (NPBench arc_distance)",
         inputs_and(0.25), ("arctan2", "power"))


def azimint_naive(data, radius, bins):
    rmax = radius.max()
    result = np.zeros(bins, dtype=np.float64)
    for i in range(bins):
        r1 = rmax * i / bins
        r2 = rmax * (i + 1) / bins
        mask = (r1 <= radius) & (radius < r2)
        result[i] = data[mask].mean()
    return result


_program("azimint_naive", azimint_naive,
         lambda rng, dtype, n: (uniform(rng, dtype, n), uniform(rng, dtype, n)),
         dict(n=1000, bins=10), dict(n=1 << 22, bins=1000),
         "azimuthal integration by a masked mean per bin (NPBench azimint_naive)",
         lambda arguments, static: static["bins"] * nbytes(*arguments),
         ("mask-index", "python-loop", "creation"), static=("bins",))


def conv2d_slices(image, kernel, bias):
    kh, kw = kernel.shape[:2]
    height = image.shape[1] - kh + 1
    width = image.shape[2] - kw + 1
    out = np.zeros((image.shape[0], height, width, kernel.shape[3]), dtype=image.dtype)
    for i in range(kh):
        for j in range(kw):
            out += image[:, i:i + height, j:j + width, :] @ kernel[i, j]
    return out + bias


def _conv_inputs(rng, dtype, batch, size, channels, filters):
    return (normal(rng, dtype, batch, size, size, channels),
            normal(rng, dtype, 3, 3, channels, filters, scale=(9 * channels) ** -0.5),
            normal(rng, dtype, filters, scale=0.1))


_program("conv2d_slices", conv2d_slices, _conv_inputs,
         dict(batch=2, size=10, channels=3, filters=4), dict(batch=16, size=128, channels=64, filters=64),
         "NHWC 3x3 valid convolution as shifted-slice matmuls (NPBench conv2d_bias)",
         inputs_and(1.0), ("matmul", "creation", "inplace-op"))


def nbody_acceleration(position, mass):
    dx = position[:, 0:1].T - position[:, 0:1]
    dy = position[:, 1:2].T - position[:, 1:2]
    dz = position[:, 2:3].T - position[:, 2:3]
    inverse_r3 = (dx ** 2 + dy ** 2 + dz ** 2 + 0.1 ** 2) ** (-1.5)
    ax = (dx * inverse_r3) @ mass
    ay = (dy * inverse_r3) @ mass
    az = (dz * inverse_r3) @ mass
    return np.hstack((ax, ay, az))


_program("nbody_acceleration", nbody_acceleration,
         lambda rng, dtype, n: (normal(rng, dtype, n, 3), uniform(rng, dtype, n, 1, low=0.5, high=1.0)),
         dict(n=100), dict(n=8192),
         "all-pairs gravitational accelerations with softening (NPBench nbody's getAcc)",
         lambda arguments, static: 3 * arguments[0].shape[0] ** 2 * arguments[0].itemsize,
         ("matmul", "hstack", "power"))
