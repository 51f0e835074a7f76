"""The jax twin of every loop program in loops.py, same name and arguments, written as a peer
would: `jax.lax.fori_loop` over the steps with the state as the carry, `.at[...].set` for slice
writes. jax is imported on first use; float64 twins need `jax.config.update("jax_enable_x64",
True)`. `run(name, arguments, static)` jits a twin with its static arguments marked static.

>>> import numpy as np                                          # doctest: +SKIP
>>> run("heat_1d", (np.ones(8, np.float32),), {"steps": 3})    # doctest: +SKIP
"""
from __future__ import annotations

import math


def _jax():
    """(jax.numpy, jax.lax), imported lazily so that the corpus loads without jax."""
    import jax.numpy as jnp
    from jax import lax
    return jnp, lax


def heat_1d(u, steps):
    jnp, lax = _jax()

    def body(_, u):
        return u.at[1:-1].set(u[1:-1] + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
    return lax.fori_loop(0, steps, body, jnp.asarray(u))


def heat_2d(u, steps):
    jnp, lax = _jax()

    def body(_, u):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        return u.at[1:-1, 1:-1].set(u[1:-1, 1:-1] + 0.2 * laplacian)
    return lax.fori_loop(0, steps, body, jnp.asarray(u))


def _heat_3d_sweep(a):
    inner = a[1:-1, 1:-1, 1:-1]
    return (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * inner + a[:-2, 1:-1, 1:-1])
            + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * inner + a[1:-1, :-2, 1:-1])
            + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * inner + a[1:-1, 1:-1, :-2]) + inner)


def heat_3d(a, b, steps):
    jnp, lax = _jax()

    def body(_, state):
        a, b = state
        b = b.at[1:-1, 1:-1, 1:-1].set(_heat_3d_sweep(a))
        a = a.at[1:-1, 1:-1, 1:-1].set(_heat_3d_sweep(b))
        return a, b
    return lax.fori_loop(0, steps, body, (jnp.asarray(a), jnp.asarray(b)))


def jacobi_1d(a, b, steps):
    jnp, lax = _jax()

    def body(_, state):
        a, b = state
        b = b.at[1:-1].set(0.33333 * (a[:-2] + a[1:-1] + a[2:]))
        a = a.at[1:-1].set(0.33333 * (b[:-2] + b[1:-1] + b[2:]))
        return a, b
    return lax.fori_loop(0, steps, body, (jnp.asarray(a), jnp.asarray(b)))


def _jacobi_2d_sweep(a):
    return 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])


def jacobi_2d(a, b, steps):
    jnp, lax = _jax()

    def body(_, state):
        a, b = state
        b = b.at[1:-1, 1:-1].set(_jacobi_2d_sweep(a))
        a = a.at[1:-1, 1:-1].set(_jacobi_2d_sweep(b))
        return a, b
    return lax.fori_loop(0, steps, body, (jnp.asarray(a), jnp.asarray(b)))


def fdtd_2d(ex, ey, hz, source, steps):
    jnp, lax = _jax()
    source = jnp.asarray(source)

    def body(t, state):
        ex, ey, hz = state
        ey = ey.at[0, :].set(source[t])
        ey = ey.at[1:, :].set(ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :]))
        ex = ex.at[:, 1:].set(ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1]
                                                        + ey[1:, :-1] - ey[:-1, :-1]))
        return ex, ey, hz
    return lax.fori_loop(0, steps, body, tuple(map(jnp.asarray, (ex, ey, hz))))


def wave_1d(u_previous, u, steps):
    jnp, lax = _jax()

    def body(_, state):
        u_previous, u = state
        u_next = u.at[1:-1].set(2.0 * u[1:-1] - u_previous[1:-1]
                                + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        return u, u_next
    return lax.fori_loop(0, steps, body, (jnp.asarray(u_previous), jnp.asarray(u)))


def wave_2d(u_previous, u, speed2, steps):
    jnp, lax = _jax()
    speed2 = jnp.asarray(speed2)

    def body(_, state):
        u_previous, u = state
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next = jnp.zeros_like(u).at[1:-1, 1:-1].set(
            2.0 * u[1:-1, 1:-1] - u_previous[1:-1, 1:-1] + speed2[1:-1, 1:-1] * laplacian)
        return u, u_next
    return lax.fori_loop(0, steps, body, (jnp.asarray(u_previous), jnp.asarray(u)))[1]


def advection_upwind(u, steps):
    jnp, lax = _jax()
    return lax.fori_loop(0, steps, lambda _, u: u - 0.4 * (u - jnp.roll(u, 1)), jnp.asarray(u))


def advection_lax_wendroff(u, steps):
    jnp, lax = _jax()
    c = 0.5

    def body(_, u):
        return u.at[1:-1].set(u[1:-1] - 0.5 * c * (u[2:] - u[:-2])
                              + 0.5 * c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
    return lax.fori_loop(0, steps, body, jnp.asarray(u))


def burgers_1d(u, steps):
    jnp, lax = _jax()
    nu, dt, dx = 0.07, 1e-3, 2.0 * math.pi / (u.shape[0] - 1)

    def body(_, u):
        return u.at[1:-1].set(u[1:-1] - u[1:-1] * dt / dx * (u[1:-1] - u[:-2])
                              + nu * dt / dx ** 2 * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
    return lax.fori_loop(0, steps, body, jnp.asarray(u))


def game_of_life(grid, steps):
    jnp, lax = _jax()

    def body(_, grid):
        neighbours = (grid[:-2, :-2] + grid[:-2, 1:-1] + grid[:-2, 2:] + grid[1:-1, :-2]
                      + grid[1:-1, 2:] + grid[2:, :-2] + grid[2:, 1:-1] + grid[2:, 2:])
        alive = grid[1:-1, 1:-1] == 1
        born = (neighbours == 3) | (alive & (neighbours == 2))
        return grid.at[1:-1, 1:-1].set(jnp.where(born, 1, 0).astype(grid.dtype))
    return lax.fori_loop(0, steps, body, jnp.asarray(grid))


def mandelbrot(c_real, c_imag, steps):
    jnp, lax = _jax()
    c_real, c_imag = jnp.asarray(c_real), jnp.asarray(c_imag)

    def body(_, state):
        z_real, z_imag, count = state
        inside = z_real * z_real + z_imag * z_imag <= 4.0
        new_real = z_real * z_real - z_imag * z_imag + c_real
        new_imag = 2.0 * z_real * z_imag + c_imag
        return (jnp.where(inside, new_real, z_real), jnp.where(inside, new_imag, z_imag),
                count + inside)
    start = (jnp.zeros_like(c_real), jnp.zeros_like(c_imag), jnp.zeros(c_real.shape, jnp.int32))
    return lax.fori_loop(0, steps, body, start)[2]


def mandelbrot_complex(c, steps):
    jnp, lax = _jax()
    c = jnp.asarray(c)

    def body(_, state):
        z, count = state
        inside = jnp.abs(z) <= 2.0
        return jnp.where(inside, z * z + c, z), count + inside
    start = (jnp.zeros_like(c), jnp.zeros(c.shape, jnp.int64))
    return lax.fori_loop(0, steps, body, start)[1]


def diffusion_periodic(u, steps):
    jnp, lax = _jax()

    def body(_, u):
        return u + 0.2 * (jnp.roll(u, 1, axis=0) + jnp.roll(u, -1, axis=0)
                          + jnp.roll(u, 1, axis=1) + jnp.roll(u, -1, axis=1) - 4.0 * u)
    return lax.fori_loop(0, steps, body, jnp.asarray(u))


def gauss_seidel_red_black(u, f, steps):
    jnp, lax = _jax()
    f = jnp.asarray(f)
    h2 = 1.0 / (u.shape[0] - 1) ** 2

    def body(_, u):
        for start_row, start_col in ((1, 1), (2, 2), (1, 2), (2, 1)):
            rows, cols = slice(start_row, -1, 2), slice(start_col, -1, 2)
            up, down = slice(start_row - 1, -2, 2), slice(start_row + 1, None, 2)
            left, right = slice(start_col - 1, -2, 2), slice(start_col + 1, None, 2)
            u = u.at[rows, cols].set(0.25 * (u[up, cols] + u[down, cols] + u[rows, left]
                                             + u[rows, right] - h2 * f[rows, cols]))
        return u
    return lax.fori_loop(0, steps, body, jnp.asarray(u))


from .loops_jax_solvers import (attention_decode, boris_push, conjugate_gradient,  # noqa: E402
                                damped_oscillators_rk4, kmeans_onehot, kmeans_where,
                                least_squares_gd, logistic_regression, lorenz_euler, lorenz_rk4,
                                pagerank, particles_in_field, power_iteration, richardson,
                                sinkhorn, softmax_regression)

TWIN_NAMES = (
    "heat_1d", "heat_2d", "heat_3d", "jacobi_1d", "jacobi_2d", "fdtd_2d", "wave_1d", "wave_2d",
    "advection_upwind", "advection_lax_wendroff", "burgers_1d", "game_of_life", "mandelbrot",
    "mandelbrot_complex", "diffusion_periodic", "gauss_seidel_red_black", "lorenz_euler",
    "lorenz_rk4", "damped_oscillators_rk4", "particles_in_field", "boris_push", "power_iteration",
    "least_squares_gd", "logistic_regression", "softmax_regression", "kmeans_onehot",
    "kmeans_where", "richardson", "conjugate_gradient", "pagerank", "sinkhorn", "attention_decode")


def twin(name: str):
    """The jax twin of the loop program `name`."""
    if name not in TWIN_NAMES:
        raise KeyError(f"no jax twin of {name!r}")
    return globals()[name]


def run(name: str, arguments: tuple, static: dict):
    """The twin of `name` under jax.jit with `static`'s names static, called on `arguments`."""
    import jax
    function = jax.jit(twin(name), static_argnames=tuple(static))
    return function(*arguments, **static)
