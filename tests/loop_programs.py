"""Time-loop programs as scientists write them: a Python loop of whole-array updates, unrolled while
tracing. Each takes its arrays and a step count (pass it as a static argument)."""
from __future__ import annotations

import numpy as np


def heat(u0, alpha, steps):
    """2-D heat equation, explicit, with a Python-float coefficient passed as an argument."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                                 + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    return u


def heat_literal(u0, steps):
    """The same with the coefficient written in the function."""
    u = u0.copy()
    r = 0.1
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + r * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                             + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    return u


def jacobi_1d(u0, steps):
    """Jacobi sweeps for a 1-D Laplace problem with fixed ends."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = 0.5 * (u[2:] + u[:-2])
    return u


def wave(u0, v0, c, steps):
    """1-D wave equation, leapfrog: two carried arrays (the last two time levels)."""
    previous, current = u0.copy(), v0.copy()
    for _ in range(steps):
        following = current.copy()
        following[1:-1] = (2 * current[1:-1] - previous[1:-1]
                           + c * (current[2:] - 2 * current[1:-1] + current[:-2]))
        previous, current = current, following
    return current


def life(board, steps):
    """Conway's Game of Life with dead cells around the board, the update written with np.where."""
    rows, cols = board.shape
    for _ in range(steps):
        padded = np.zeros((rows + 2, cols + 2), board.dtype)
        padded[1:-1, 1:-1] = board
        neighbours = (padded[:-2, :-2] + padded[:-2, 1:-1] + padded[:-2, 2:] + padded[1:-1, :-2]
                      + padded[1:-1, 2:] + padded[2:, :-2] + padded[2:, 1:-1] + padded[2:, 2:])
        board = np.where((neighbours == 3) | ((board == 1) & (neighbours == 2)), 1, 0)
    return board


def euler(y0, dt, steps):
    """Explicit Euler on a damped oscillator system y' = A y, for many oscillators at once."""
    position, velocity = y0[0].copy(), y0[1].copy()
    for _ in range(steps):
        position, velocity = (position + dt * velocity,
                              velocity + dt * (-4.0 * position - 0.3 * velocity))
    return np.stack([position, velocity])


def stencil_chain(x, steps):
    """Recompute bait: two readers of one value at different shifts, chained (2**steps paths)."""
    for _ in range(steps):
        y = np.sin(x)
        x = (y * 2)[1:] + (y * 3)[:-1]
    return x


def masked_means(data, radius, bins):
    """NPBench's azimint_naive: a masked mean per bin, every one reading the same arrays. Its
    sums and counts fill several reduction kernels (fusion's bound on reductions a kernel), of
    one structure, which share a kernel taking the bins' bounds' factors as arguments."""
    result, top = np.zeros(bins), radius.max()
    for i in range(bins):
        mask = (top * i / bins <= radius) & (radius < top * (i + 1) / bins)
        result[i] = data[mask].mean()
    return result
