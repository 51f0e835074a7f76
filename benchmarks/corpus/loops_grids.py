"""Loop programs on grids: explicit PDE steppers (heat, Jacobi, FDTD, wave, advection, Burgers),
Game of Life and the Mandelbrot escape iteration, each a step count the caller fixes (static)."""
from __future__ import annotations

import numpy as np

from .program import FLOATS, Program, Registry, normal, read_write, uniform

GRIDS = Registry()


def _loop(name, function, make, small, large, description, bytes_moved, **options):
    return GRIDS.add(Program(name, function, make, {"small": small, "large": large}, description,
                             bytes_moved, static=("steps",), kind="loop", **options))


def _smooth_grid(rng, dtype, *shape):
    """A random field in [0, 1) with hot boundary values, as an initial temperature."""
    grid = uniform(rng, dtype, *shape)
    grid[(0,) * len(shape)] = 1.0
    return grid


def heat_1d(u, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u


_loop("heat_1d", heat_1d, lambda rng, dtype, n: (_smooth_grid(rng, dtype, n),),
      dict(n=256, steps=20), dict(n=1 << 24, steps=1000),
      "1-D heat equation, forward Euler in time, centred space (textbook FTCS)", read_write(1, 1),
      tags=("setslice", "copy"))


def heat_2d(u, steps):
    u = u.copy()
    alpha = 0.2
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * laplacian
    return u


_loop("heat_2d", heat_2d, lambda rng, dtype, n: (_smooth_grid(rng, dtype, n, n),),
      dict(n=48, steps=20), dict(n=1024, steps=1000),
      "2-D heat equation, 5-point FTCS (textbook)", read_write(1, 1),
      tags=("setslice", "copy"))


def heat_3d(a, b, steps):
    a = a.copy()
    b = b.copy()
    for _ in range(steps):
        b[1:-1, 1:-1, 1:-1] = (
            0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1])
            + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[1:-1, :-2, 1:-1])
            + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[1:-1, 1:-1, :-2])
            + a[1:-1, 1:-1, 1:-1])
        a[1:-1, 1:-1, 1:-1] = (
            0.125 * (b[2:, 1:-1, 1:-1] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[:-2, 1:-1, 1:-1])
            + 0.125 * (b[1:-1, 2:, 1:-1] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[1:-1, :-2, 1:-1])
            + 0.125 * (b[1:-1, 1:-1, 2:] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[1:-1, 1:-1, :-2])
            + b[1:-1, 1:-1, 1:-1])
    return a, b


_loop("heat_3d", heat_3d,
      lambda rng, dtype, n: (uniform(rng, dtype, n, n, n), uniform(rng, dtype, n, n, n)),
      dict(n=12, steps=5), dict(n=128, steps=100),
      "3-D heat equation, two arrays in turn (NPBench/PolyBench heat_3d)", read_write(2, 2),
      tags=("setslice", "copy", "tuple-result"))


def jacobi_1d(a, b, steps):
    a = a.copy()
    b = b.copy()
    for _ in range(steps):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    return a, b


_loop("jacobi_1d", jacobi_1d,
      lambda rng, dtype, n: (uniform(rng, dtype, n), uniform(rng, dtype, n)),
      dict(n=300, steps=20), dict(n=1 << 24, steps=1000),
      "1-D Jacobi smoothing, two arrays in turn (NPBench/PolyBench jacobi_1d)", read_write(2, 2),
      tags=("setslice", "copy", "tuple-result"))


def jacobi_2d(a, b, steps):
    a = a.copy()
    b = b.copy()
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a, b


_loop("jacobi_2d", jacobi_2d,
      lambda rng, dtype, n: (uniform(rng, dtype, n, n), uniform(rng, dtype, n, n)),
      dict(n=40, steps=10), dict(n=1024, steps=1000),
      "2-D Jacobi smoothing, two arrays in turn (NPBench/PolyBench jacobi_2d)", read_write(2, 2),
      tags=("setslice", "copy", "tuple-result"))


def fdtd_2d(ex, ey, hz, source, steps):
    ex = ex.copy()
    ey = ey.copy()
    hz = hz.copy()
    for t in range(steps):
        ey[0, :] = source[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


def _fdtd_inputs(rng, dtype, nx, ny, t_max):
    fields = [normal(rng, dtype, nx, ny, scale=0.1) for _ in range(3)]
    return (*fields, np.sin(np.arange(t_max) * 0.1).astype(dtype))


_loop("fdtd_2d", fdtd_2d, _fdtd_inputs,
      dict(nx=40, ny=50, t_max=20, steps=20), dict(nx=1000, ny=1200, t_max=500, steps=500),
      "2-D FDTD (Yee) for TE fields with a line source (NPBench/PolyBench fdtd_2d)",
      read_write(5, 3), tags=("setslice", "scalar-index", "tuple-result"))


def wave_1d(u_previous, u, steps):
    courant2 = 0.25
    for _ in range(steps):
        u_next = u.copy()
        u_next[1:-1] = (2.0 * u[1:-1] - u_previous[1:-1]
                        + courant2 * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        u_previous, u = u, u_next
    return u_previous, u


def _pulse_1d(rng, dtype, n):
    x = np.linspace(-1.0, 1.0, n)
    u = np.exp(-100.0 * x * x) + 0.01 * rng.standard_normal(n)
    return u.astype(dtype), u.astype(dtype)


_loop("wave_1d", wave_1d, _pulse_1d, dict(n=256, steps=30), dict(n=1 << 24, steps=1000),
      "1-D wave equation, leapfrog with two carried arrays (textbook explicit scheme)",
      read_write(2, 1), tags=("setslice", "copy", "tuple-result"))


def wave_2d(u_previous, u, speed2, steps):
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next = np.zeros_like(u)
        u_next[1:-1, 1:-1] = 2.0 * u[1:-1, 1:-1] - u_previous[1:-1, 1:-1] + speed2[1:-1, 1:-1] * laplacian
        u_previous, u = u, u_next
    return u


def _pulse_2d(rng, dtype, n):
    x = np.linspace(-1.0, 1.0, n)
    r2 = x[:, None] ** 2 + x[None, :] ** 2
    u = np.exp(-200.0 * r2).astype(dtype)
    speed2 = (0.2 + 0.05 * rng.random((n, n))).astype(dtype)
    return u, u.copy(), speed2


_loop("wave_2d", wave_2d, _pulse_2d, dict(n=48, steps=20), dict(n=1024, steps=1000),
      "2-D wave equation with variable speed, leapfrog, zero boundary (textbook)",
      read_write(3, 1), tags=("setslice", "zeros_like"))


def advection_upwind(u, steps):
    courant = 0.4
    for _ in range(steps):
        u = u - courant * (u - np.roll(u, 1))
    return u


_loop("advection_upwind", advection_upwind, lambda rng, dtype, n: (_pulse_1d(rng, dtype, n)[0],),
      dict(n=256, steps=20), dict(n=1 << 24, steps=1000),
      "1-D linear advection, first-order upwind, periodic via np.roll (textbook)",
      read_write(1, 1), tags=("roll",))


def advection_lax_wendroff(u, steps):
    c = 0.5
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = (u[1:-1] - 0.5 * c * (u[2:] - u[:-2])
                   + 0.5 * c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
    return u


_loop("advection_lax_wendroff", advection_lax_wendroff,
      lambda rng, dtype, n: (_pulse_1d(rng, dtype, n)[0],),
      dict(n=256, steps=20), dict(n=1 << 24, steps=1000),
      "1-D linear advection, Lax-Wendroff, fixed ends (LeVeque, Finite Volume Methods)",
      read_write(1, 1), tags=("setslice", "copy"))


def burgers_1d(u, steps):
    nu, dt, dx = 0.07, 1e-3, 2.0 * np.pi / (u.shape[0] - 1)
    u = u.copy()
    for _ in range(steps):
        un = u.copy()
        u[1:-1] = (un[1:-1] - un[1:-1] * dt / dx * (un[1:-1] - un[:-2])
                   + nu * dt / dx ** 2 * (un[2:] - 2.0 * un[1:-1] + un[:-2]))
    return u


def _sawtooth(rng, dtype, n):
    x = np.linspace(0.0, 2.0 * np.pi, n)
    return ((4.0 - 2.0 * np.sin(x)) + 0.01 * rng.standard_normal(n)).astype(dtype),


_loop("burgers_1d", burgers_1d, _sawtooth, dict(n=101, steps=30), dict(n=1 << 22, steps=2000),
      "viscous Burgers' equation, upwind convection + FTCS diffusion (Barba, 12 steps to "
      "Navier-Stokes, step 4)", read_write(1, 1),
      tags=("setslice", "copy", "shape-constant"))


def game_of_life(grid, steps):
    grid = grid.copy()
    for _ in range(steps):
        neighbours = (grid[:-2, :-2] + grid[:-2, 1:-1] + grid[:-2, 2:]
                      + grid[1:-1, :-2] + grid[1:-1, 2:]
                      + grid[2:, :-2] + grid[2:, 1:-1] + grid[2:, 2:])
        alive = grid[1:-1, 1:-1] == 1
        grid[1:-1, 1:-1] = np.where((neighbours == 3) | (alive & (neighbours == 2)), 1, 0)
    return grid


_loop("game_of_life", game_of_life,
      lambda rng, dtype, n: ((rng.random((n, n)) < 0.3).astype(dtype),),
      dict(n=64, steps=20), dict(n=4096, steps=1000),
      "Conway's Game of Life with slices and np.where, dead border (textbook)",
      read_write(1, 1), dtypes=(np.int8, np.int32), tags=("where", "int"))


def mandelbrot(c_real, c_imag, steps):
    z_real = np.zeros_like(c_real)
    z_imag = np.zeros_like(c_imag)
    count = np.zeros(c_real.shape, dtype=np.int32)
    for _ in range(steps):
        inside = z_real * z_real + z_imag * z_imag <= 4.0
        new_real = z_real * z_real - z_imag * z_imag + c_real
        new_imag = 2.0 * z_real * z_imag + c_imag
        z_real = np.where(inside, new_real, z_real)
        z_imag = np.where(inside, new_imag, z_imag)
        count = count + inside
    return count


def _plane(rng, dtype, height, width):
    real = np.linspace(-2.0, 0.6, width, dtype=dtype)
    imag = np.linspace(-1.2, 1.2, height, dtype=dtype)
    return np.broadcast_to(real, (height, width)).copy(), np.broadcast_to(imag[:, None], (height, width)).copy()


_loop("mandelbrot", mandelbrot, _plane, dict(height=40, width=60, steps=30),
      dict(height=2048, width=2048, steps=200),
      "Mandelbrot escape counts with real pairs and np.where (textbook)", read_write(4, 2),
      tags=("where", "creation"))


def mandelbrot_complex(c, steps):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int64)
    for _ in range(steps):
        inside = np.abs(z) <= 2.0
        z = np.where(inside, z * z + c, z)
        count += inside
    return count


def _complex_plane(rng, dtype, height, width):
    real, imag = _plane(rng, np.float64, height, width)
    return ((real + 1j * imag).astype(dtype),)


_loop("mandelbrot_complex", mandelbrot_complex, _complex_plane,
      dict(height=40, width=60, steps=30), dict(height=2048, width=2048, steps=200),
      "Mandelbrot escape counts on complex arrays (NPBench mandelbrot1-like)", read_write(2, 1),
      dtypes=(np.complex64, np.complex128), tags=("complex", "where", "creation", "abs"))


def diffusion_periodic(u, steps):
    for _ in range(steps):
        u = u + 0.2 * (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0)
                       + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4.0 * u)
    return u


_loop("diffusion_periodic", diffusion_periodic, lambda rng, dtype, n: (uniform(rng, dtype, n, n),),
      dict(n=48, steps=20), dict(n=1024, steps=1000),
      "2-D diffusion on a torus with np.roll along int axes (textbook FTCS)", read_write(1, 1),
      tags=("roll", "int-axis-arg"))


def gauss_seidel_red_black(u, f, steps):
    u = u.copy()
    h2 = 1.0 / (u.shape[0] - 1) ** 2
    for _ in range(steps):
        for start_row, start_col in ((1, 1), (2, 2), (1, 2), (2, 1)):
            rows = slice(start_row, -1, 2)
            cols = slice(start_col, -1, 2)
            up = slice(start_row - 1, -2, 2)
            down = slice(start_row + 1, None, 2)
            left = slice(start_col - 1, -2, 2)
            right = slice(start_col + 1, None, 2)
            u[rows, cols] = 0.25 * (u[up, cols] + u[down, cols] + u[rows, left] + u[rows, right]
                                    - h2 * f[rows, cols])
    return u


_loop("gauss_seidel_red_black", gauss_seidel_red_black,
      lambda rng, dtype, n: (np.zeros((n, n), dtype), normal(rng, dtype, n, n)),
      dict(n=34, steps=10), dict(n=1025, steps=500),
      "red-black Gauss-Seidel for Poisson's equation with strided slices (textbook)",
      read_write(2, 1), tags=("strided-slice",))
