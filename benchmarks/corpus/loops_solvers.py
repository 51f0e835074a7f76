"""Loop programs that are not grids: ODE integrators (Euler, RK4) over ensembles, particle
pushes, iterative linear algebra (power, Richardson, CG, PageRank, Sinkhorn) and training loops
(least squares, logistic and softmax regression, k-means, attention decode)."""
from __future__ import annotations

import math

import numpy as np

from .program import Program, Registry, nbytes, normal, uniform

SOLVERS = Registry()


def _loop(name, function, make, small, large, description, bytes_moved, **options):
    return SOLVERS.add(Program(name, function, make, {"small": small, "large": large}, description,
                               bytes_moved, static=("steps",), kind="loop", **options))


def _all_read_written(arguments, static):
    """Each argument read once and written once per step."""
    return 2 * nbytes(*arguments)


def _matrix_read(arguments, static):
    """The matrix (first argument) read once per step; vectors are negligible."""
    return arguments[0].nbytes


def lorenz_euler(x, y, z, steps):
    sigma, rho, beta, dt = 10.0, 28.0, 8.0 / 3.0, 1e-3
    for _ in range(steps):
        dx = sigma * (y - x)
        dy = x * (rho - z) - y
        dz = x * y - beta * z
        x, y, z = x + dt * dx, y + dt * dy, z + dt * dz
    return x, y, z


def _lorenz_ensemble(rng, dtype, n):
    return tuple(normal(rng, dtype, n, scale=0.1, shift=shift) for shift in (1.0, 1.0, 20.0))


_loop("lorenz_euler", lorenz_euler, _lorenz_ensemble, dict(n=1000, steps=50),
      dict(n=1 << 22, steps=1000),
      "Lorenz-63 ensemble, explicit Euler, x/y/z as separate arrays (textbook)", _all_read_written,
      tags=("elementwise", "tuple-result"))


def _lorenz_derivative(state, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
    x, y, z = state[:, 0], state[:, 1], state[:, 2]
    return np.stack([sigma * (y - x), x * (rho - z) - y, x * y - beta * z], axis=1)


def lorenz_rk4(state, steps):
    dt = 1e-3
    for _ in range(steps):
        k1 = _lorenz_derivative(state)
        k2 = _lorenz_derivative(state + 0.5 * dt * k1)
        k3 = _lorenz_derivative(state + 0.5 * dt * k2)
        k4 = _lorenz_derivative(state + dt * k3)
        state = state + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return state


_loop("lorenz_rk4", lorenz_rk4,
      lambda rng, dtype, n: (np.stack(_lorenz_ensemble(rng, dtype, n), axis=1),),
      dict(n=500, steps=20), dict(n=1 << 21, steps=1000),
      "Lorenz-63 ensemble as an [n, 3] state, classical RK4 with np.stack (textbook)",
      _all_read_written, tags=("stack", "int-axis-arg"))


def damped_oscillators_rk4(x, v, omega, gamma, steps):
    dt = 0.01

    def acceleration(position, velocity):
        return -2.0 * gamma * velocity - omega * omega * position

    for _ in range(steps):
        k1x, k1v = v, acceleration(x, v)
        k2x, k2v = v + 0.5 * dt * k1v, acceleration(x + 0.5 * dt * k1x, v + 0.5 * dt * k1v)
        k3x, k3v = v + 0.5 * dt * k2v, acceleration(x + 0.5 * dt * k2x, v + 0.5 * dt * k2v)
        k4x, k4v = v + dt * k3v, acceleration(x + dt * k3x, v + dt * k3v)
        x = x + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    return x, v


def _oscillators(rng, dtype, n):
    return (normal(rng, dtype, n), normal(rng, dtype, n), uniform(rng, dtype, n, low=0.5, high=3.0),
            uniform(rng, dtype, n, low=0.0, high=0.2))


_loop("damped_oscillators_rk4", damped_oscillators_rk4, _oscillators,
      dict(n=1000, steps=20), dict(n=1 << 22, steps=1000),
      "independent damped harmonic oscillators, RK4 with a closure (textbook)",
      lambda arguments, static: 2 * nbytes(*arguments[:2]) + nbytes(*arguments[2:]),
      tags=("closure", "tuple-result"))


def particles_in_field(position, velocity, steps):
    dt, k = 0.01, 2.0 * np.pi
    for _ in range(steps):
        field_x = np.sin(k * position[:, 1])
        field_y = np.cos(k * position[:, 0])
        force = np.stack([field_x, field_y], axis=-1)
        velocity = velocity + dt * (force - 0.1 * velocity)
        position = position + dt * velocity
    return position, velocity


_loop("particles_in_field", particles_in_field,
      lambda rng, dtype, n: (uniform(rng, dtype, n, 2), normal(rng, dtype, n, 2, scale=0.1)),
      dict(n=1000, steps=20), dict(n=1 << 22, steps=1000),
      "charged particles in a static cellular field with drag, semi-implicit Euler (textbook)",
      _all_read_written, tags=("stack",))


def boris_push(position, velocity, electric, magnetic, steps):
    dt, charge_over_mass = 0.01, 1.0
    for _ in range(steps):
        half = 0.5 * dt * charge_over_mass
        v_minus = velocity + half * electric
        t = half * magnetic
        s = 2.0 * t / (1.0 + (t * t).sum(axis=1, keepdims=True))
        v_prime = v_minus + np.cross(v_minus, t)
        v_plus = v_minus + np.cross(v_prime, s)
        velocity = v_plus + half * electric
        position = position + dt * velocity
    return position, velocity


def _boris_inputs(rng, dtype, n):
    return (normal(rng, dtype, n, 3), normal(rng, dtype, n, 3, scale=0.1),
            normal(rng, dtype, n, 3, scale=0.5), normal(rng, dtype, n, 3, shift=1.0))


_loop("boris_push", boris_push, _boris_inputs, dict(n=500, steps=10), dict(n=1 << 21, steps=1000),
      "Boris particle pusher in fixed E and B fields with np.cross (Birdsall & Langdon)",
      lambda arguments, static: 2 * nbytes(*arguments[:2]) + nbytes(*arguments[2:]),
      tags=("cross",))


def power_iteration(matrix, vector, steps):
    for _ in range(steps):
        vector = matrix @ vector
        vector = vector / np.linalg.norm(vector)
    eigenvalue = vector @ (matrix @ vector)
    return eigenvalue, vector


def _symmetric(rng, dtype, n):
    a = rng.standard_normal((n, n)) / np.sqrt(n)
    return (a + a.T + 3.0 * np.eye(n)).astype(dtype)


_loop("power_iteration", power_iteration,
      lambda rng, dtype, n: (_symmetric(rng, dtype, n), normal(rng, dtype, n)),
      dict(n=64, steps=20), dict(n=4096, steps=200),
      "power iteration for the dominant eigenpair with np.linalg.norm (textbook)",
      _matrix_read, tags=("matvec", "linalg.norm"))


def least_squares_gd(features, targets, weights, steps):
    rate = 0.1
    count = features.shape[0]
    for _ in range(steps):
        residual = features @ weights - targets
        gradient = features.T @ residual / count
        weights = weights - rate * gradient
    return weights


def _regression(rng, dtype, m, n):
    features = normal(rng, dtype, m, n) / np.sqrt(n).astype(dtype)
    truth = rng.standard_normal(n)
    targets = (features @ truth + 0.01 * rng.standard_normal(m)).astype(dtype)
    return features, targets, np.zeros(n, dtype)


_loop("least_squares_gd", least_squares_gd, _regression, dict(m=200, n=16, steps=30),
      dict(m=1 << 20, n=64, steps=200),
      "gradient descent on linear least squares, two matvecs a step (textbook)",
      lambda arguments, static: 2 * arguments[0].nbytes, tags=("matvec", "transpose"))


def logistic_regression(features, labels, weights, steps):
    rate = 0.5
    count = features.shape[0]
    for _ in range(steps):
        probability = 1.0 / (1.0 + np.exp(-(features @ weights)))
        weights = weights - rate * (features.T @ (probability - labels)) / count
    return weights


def _classification(rng, dtype, m, n):
    features = normal(rng, dtype, m, n)
    truth = rng.standard_normal(n)
    labels = (features @ truth + 0.5 * rng.standard_normal(m) > 0).astype(dtype)
    return features, labels, np.zeros(n, dtype)


_loop("logistic_regression", logistic_regression, _classification, dict(m=200, n=8, steps=30),
      dict(m=1 << 20, n=32, steps=200),
      "batch gradient descent for logistic regression (textbook)",
      lambda arguments, static: 2 * arguments[0].nbytes, tags=("matvec", "transpose"))


def softmax_regression(features, onehot, weights, steps):
    rate = 0.5
    count = features.shape[0]
    for _ in range(steps):
        logits = features @ weights
        logits = logits - logits.max(axis=1, keepdims=True)
        probability = np.exp(logits)
        probability /= probability.sum(axis=1, keepdims=True)
        weights = weights - rate * features.T @ (probability - onehot) / count
    return weights


def _multiclass(rng, dtype, m, n, classes):
    features = normal(rng, dtype, m, n)
    labels = (features @ rng.standard_normal((n, classes))).argmax(axis=1)
    return features, np.eye(classes, dtype=dtype)[labels], np.zeros((n, classes), dtype)


_loop("softmax_regression", softmax_regression, _multiclass,
      dict(m=200, n=8, classes=4, steps=20), dict(m=1 << 19, n=64, classes=10, steps=200),
      "multinomial logistic regression, gradient steps with an in-place /= (cs231n-style)",
      lambda arguments, static: 2 * arguments[0].nbytes + arguments[1].nbytes,
      tags=("matmul", "inplace-op"))


def kmeans_onehot(points, centroids, steps):
    k = centroids.shape[0]
    for _ in range(steps):
        distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
        labels = distances.argmin(axis=1)
        onehot = (labels[:, None] == np.arange(k)[None, :]).astype(points.dtype)
        counts = onehot.sum(axis=0)
        centroids = (onehot.T @ points) / np.maximum(counts, 1.0)[:, None]
    return centroids


def _clusters(rng, dtype, n, k, d):
    centres = rng.standard_normal((k, d)) * 4.0
    points = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))
    return points.astype(dtype), points[:k].astype(dtype)


_loop("kmeans_onehot", kmeans_onehot, _clusters, dict(n=300, k=4, d=3, steps=5),
      dict(n=1 << 20, k=16, d=8, steps=100),
      "Lloyd's k-means, centroid update by one-hot matmul (textbook)",
      lambda arguments, static: 2 * arguments[0].nbytes, tags=("argmin", "arange", "matmul"))


def kmeans_where(points, centroids, steps):
    k = centroids.shape[0]
    for _ in range(steps):
        distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
        labels = distances.argmin(axis=1)
        updated = []
        for j in range(k):
            member = (labels == j)[:, None]
            total = np.where(member, points, 0.0).sum(axis=0)
            updated.append(total / np.maximum(member.sum(), 1))
        centroids = np.stack(updated)
    return centroids


_loop("kmeans_where", kmeans_where, _clusters, dict(n=300, k=4, d=3, steps=5),
      dict(n=1 << 20, k=16, d=8, steps=100),
      "Lloyd's k-means, centroid update by masked np.where sums per cluster (textbook)",
      lambda arguments, static: 2 * arguments[0].nbytes, tags=("argmin", "where", "stack"))


def richardson(matrix, rhs, x, steps):
    omega = 0.8 / np.abs(matrix).sum(axis=1).max()
    for _ in range(steps):
        x = x + omega * (rhs - matrix @ x)
    return x


def _diagonally_dominant(rng, dtype, n):
    a = rng.uniform(-1.0, 1.0, (n, n)) / n
    a = a + a.T + 4.0 * np.eye(n)
    return a.astype(dtype), normal(rng, dtype, n), np.zeros(n, dtype)


_loop("richardson", richardson, _diagonally_dominant, dict(n=64, steps=30),
      dict(n=4096, steps=500), "Richardson iteration x += w (b - A x) (textbook)",
      _matrix_read, tags=("matvec",))


def conjugate_gradient(matrix, rhs, x, steps):
    residual = rhs - matrix @ x
    direction = residual
    rr = residual @ residual
    for _ in range(steps):
        image = matrix @ direction
        alpha = rr / (direction @ image)
        x = x + alpha * direction
        residual = residual - alpha * image
        rr_next = residual @ residual
        direction = residual + (rr_next / rr) * direction
        rr = rr_next
    return x


_loop("conjugate_gradient", conjugate_gradient, _diagonally_dominant, dict(n=64, steps=10),
      dict(n=4096, steps=200), "unpreconditioned conjugate gradient (Shewchuk's notes)",
      _matrix_read, tags=("matvec", "dot"))


def pagerank(links, rank, steps):
    damping = 0.85
    n = rank.shape[0]
    for _ in range(steps):
        rank = damping * (links @ rank) + (1.0 - damping) / n
    return rank


def _column_stochastic(rng, dtype, n):
    links = (rng.random((n, n)) < 0.1).astype(np.float64) + 1e-3
    links /= links.sum(axis=0, keepdims=True)
    return links.astype(dtype), np.full(n, 1.0 / n, dtype)


_loop("pagerank", pagerank, _column_stochastic, dict(n=64, steps=30), dict(n=4096, steps=100),
      "PageRank power iteration on a dense column-stochastic matrix (Page et al.)",
      _matrix_read, tags=("matvec",))


def sinkhorn(cost, a, b, steps):
    kernel = np.exp(-cost / 0.1)
    v = np.ones_like(b)
    for _ in range(steps):
        u = a / (kernel @ v)
        v = b / (kernel.T @ u)
    return u[:, None] * kernel * v[None, :]


def _transport(rng, dtype, n, m):
    x, y = rng.random((n, 2)), rng.random((m, 2))
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    return cost.astype(dtype), np.full(n, 1.0 / n, dtype), np.full(m, 1.0 / m, dtype)


_loop("sinkhorn", sinkhorn, _transport, dict(n=50, m=40, steps=20), dict(n=4096, m=4096, steps=200),
      "Sinkhorn iterations for entropic optimal transport (Cuturi 2013)",
      lambda arguments, static: 2 * arguments[0].nbytes, tags=("matvec", "ones_like"))


def attention_decode(query, keys, values, projection, steps):
    scale = 1.0 / math.sqrt(query.shape[-1])
    outputs = []
    for _ in range(steps):
        scores = (keys @ query[:, :, None])[:, :, 0] * scale
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        output = (weights[:, None, :] @ values)[:, 0, :]
        outputs.append(output)
        query = np.tanh(output @ projection)
        keys = np.concatenate([keys, query[:, None, :]], axis=1)
        values = np.concatenate([values, output[:, None, :]], axis=1)
    return np.stack(outputs, axis=1)


def _decode_inputs(rng, dtype, heads, length, dim):
    return (normal(rng, dtype, heads, dim), normal(rng, dtype, heads, length, dim),
            normal(rng, dtype, heads, length, dim),
            normal(rng, dtype, dim, dim, scale=1.0 / np.sqrt(dim)))


_loop("attention_decode", attention_decode, _decode_inputs,
      dict(heads=4, length=16, dim=8, steps=8), dict(heads=32, length=4096, dim=128, steps=128),
      "greedy single-query attention decode with a growing KV cache (transformer inference)",
      lambda arguments, static: nbytes(*arguments[1:3]), tags=("concatenate", "stack", "matmul"))
