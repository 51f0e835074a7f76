"""The jax twins of loops_solvers.py's programs (see loops_jax.py, which gathers all twins):
`jax.lax.fori_loop` with the integrator's or solver's state as the carry."""
from __future__ import annotations

import math


def _jax():
    import jax.numpy as jnp
    from jax import lax
    return jnp, lax


def lorenz_euler(x, y, z, steps):
    jnp, lax = _jax()
    sigma, rho, beta, dt = 10.0, 28.0, 8.0 / 3.0, 1e-3

    def body(_, state):
        x, y, z = state
        return (x + dt * (sigma * (y - x)), y + dt * (x * (rho - z) - y),
                z + dt * (x * y - beta * z))
    return lax.fori_loop(0, steps, body, tuple(map(jnp.asarray, (x, y, z))))


def lorenz_rk4(state, steps):
    jnp, lax = _jax()
    dt = 1e-3

    def derivative(s, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
        x, y, z = s[:, 0], s[:, 1], s[:, 2]
        return jnp.stack([sigma * (y - x), x * (rho - z) - y, x * y - beta * z], axis=1)

    def body(_, s):
        k1 = derivative(s)
        k2 = derivative(s + 0.5 * dt * k1)
        k3 = derivative(s + 0.5 * dt * k2)
        k4 = derivative(s + dt * k3)
        return s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return lax.fori_loop(0, steps, body, jnp.asarray(state))


def damped_oscillators_rk4(x, v, omega, gamma, steps):
    jnp, lax = _jax()
    dt = 0.01
    omega, gamma = jnp.asarray(omega), jnp.asarray(gamma)

    def acceleration(position, velocity):
        return -2.0 * gamma * velocity - omega * omega * position

    def body(_, state):
        x, v = state
        k1x, k1v = v, acceleration(x, v)
        k2x, k2v = v + 0.5 * dt * k1v, acceleration(x + 0.5 * dt * k1x, v + 0.5 * dt * k1v)
        k3x, k3v = v + 0.5 * dt * k2v, acceleration(x + 0.5 * dt * k2x, v + 0.5 * dt * k2v)
        k4x, k4v = v + dt * k3v, acceleration(x + dt * k3x, v + dt * k3v)
        return (x + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x),
                v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v))
    return lax.fori_loop(0, steps, body, (jnp.asarray(x), jnp.asarray(v)))


def particles_in_field(position, velocity, steps):
    jnp, lax = _jax()
    dt, k = 0.01, 2.0 * math.pi

    def body(_, state):
        position, velocity = state
        force = jnp.stack([jnp.sin(k * position[:, 1]), jnp.cos(k * position[:, 0])], axis=-1)
        velocity = velocity + dt * (force - 0.1 * velocity)
        return position + dt * velocity, velocity
    return lax.fori_loop(0, steps, body, (jnp.asarray(position), jnp.asarray(velocity)))


def boris_push(position, velocity, electric, magnetic, steps):
    jnp, lax = _jax()
    half = 0.5 * 0.01 * 1.0
    electric, magnetic = jnp.asarray(electric), jnp.asarray(magnetic)

    def body(_, state):
        position, velocity = state
        v_minus = velocity + half * electric
        t = half * magnetic
        s = 2.0 * t / (1.0 + (t * t).sum(axis=1, keepdims=True))
        v_prime = v_minus + jnp.cross(v_minus, t)
        velocity = v_minus + jnp.cross(v_prime, s) + half * electric
        return position + 0.01 * velocity, velocity
    return lax.fori_loop(0, steps, body, (jnp.asarray(position), jnp.asarray(velocity)))


def power_iteration(matrix, vector, steps):
    jnp, lax = _jax()
    matrix = jnp.asarray(matrix)

    def body(_, vector):
        vector = matrix @ vector
        return vector / jnp.linalg.norm(vector)
    vector = lax.fori_loop(0, steps, body, jnp.asarray(vector))
    return vector @ (matrix @ vector), vector


def least_squares_gd(features, targets, weights, steps):
    jnp, lax = _jax()
    features, targets = jnp.asarray(features), jnp.asarray(targets)
    count = features.shape[0]

    def body(_, weights):
        return weights - 0.1 * (features.T @ (features @ weights - targets) / count)
    return lax.fori_loop(0, steps, body, jnp.asarray(weights))


def logistic_regression(features, labels, weights, steps):
    jnp, lax = _jax()
    features, labels = jnp.asarray(features), jnp.asarray(labels)
    count = features.shape[0]

    def body(_, weights):
        probability = 1.0 / (1.0 + jnp.exp(-(features @ weights)))
        return weights - 0.5 * (features.T @ (probability - labels)) / count
    return lax.fori_loop(0, steps, body, jnp.asarray(weights))


def softmax_regression(features, onehot, weights, steps):
    jnp, lax = _jax()
    features, onehot = jnp.asarray(features), jnp.asarray(onehot)
    count = features.shape[0]

    def body(_, weights):
        logits = features @ weights
        probability = jnp.exp(logits - logits.max(axis=1, keepdims=True))
        probability = probability / probability.sum(axis=1, keepdims=True)
        return weights - 0.5 * features.T @ (probability - onehot) / count
    return lax.fori_loop(0, steps, body, jnp.asarray(weights))


def _squared_distances(points, centroids):
    return ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)


def kmeans_onehot(points, centroids, steps):
    jnp, lax = _jax()
    points = jnp.asarray(points)
    k = centroids.shape[0]

    def body(_, centroids):
        labels = _squared_distances(points, centroids).argmin(axis=1)
        onehot = (labels[:, None] == jnp.arange(k)[None, :]).astype(points.dtype)
        counts = onehot.sum(axis=0)
        return (onehot.T @ points) / jnp.maximum(counts, 1.0)[:, None]
    return lax.fori_loop(0, steps, body, jnp.asarray(centroids))


def kmeans_where(points, centroids, steps):
    """NOTE: NumPy promotes float32 centroids to float64 here (a float32 sum over an int64 count);
    jax keeps float32, so the twin's result is float32 where NumPy's is float64."""
    jnp, lax = _jax()
    points = jnp.asarray(points)
    k = centroids.shape[0]

    def body(_, centroids):
        labels = _squared_distances(points, centroids).argmin(axis=1)
        updated = []
        for j in range(k):
            member = (labels == j)[:, None]
            total = jnp.where(member, points, 0.0).sum(axis=0)
            updated.append(total / jnp.maximum(member.sum(), 1))
        return jnp.stack(updated).astype(centroids.dtype)
    return lax.fori_loop(0, steps, body, jnp.asarray(centroids))


def richardson(matrix, rhs, x, steps):
    jnp, lax = _jax()
    matrix, rhs = jnp.asarray(matrix), jnp.asarray(rhs)
    omega = 0.8 / jnp.abs(matrix).sum(axis=1).max()
    return lax.fori_loop(0, steps, lambda _, x: x + omega * (rhs - matrix @ x), jnp.asarray(x))


def conjugate_gradient(matrix, rhs, x, steps):
    jnp, lax = _jax()
    matrix, x = jnp.asarray(matrix), jnp.asarray(x)
    residual = jnp.asarray(rhs) - matrix @ x

    def body(_, state):
        x, residual, direction, rr = state
        image = matrix @ direction
        alpha = rr / (direction @ image)
        x = x + alpha * direction
        residual = residual - alpha * image
        rr_next = residual @ residual
        return x, residual, residual + (rr_next / rr) * direction, rr_next
    return lax.fori_loop(0, steps, body, (x, residual, residual, residual @ residual))[0]


def pagerank(links, rank, steps):
    jnp, lax = _jax()
    links = jnp.asarray(links)
    n = rank.shape[0]
    return lax.fori_loop(0, steps, lambda _, r: 0.85 * (links @ r) + (1.0 - 0.85) / n,
                         jnp.asarray(rank))


def sinkhorn(cost, a, b, steps):
    jnp, lax = _jax()
    kernel = jnp.exp(-jnp.asarray(cost) / 0.1)
    a, b = jnp.asarray(a), jnp.asarray(b)

    def body(_, state):
        u = a / (kernel @ state[1])
        return u, b / (kernel.T @ u)
    u, v = lax.fori_loop(0, steps, body, (jnp.ones_like(a), jnp.ones_like(b)))
    return u[:, None] * kernel * v[None, :]


def attention_decode(query, keys, values, projection, steps):
    """The KV cache is preallocated to its final length (a carry's shape cannot grow) and the
    positions not yet written are masked out of the softmax, as jax decoders do."""
    jnp, lax = _jax()
    heads, length, dim = keys.shape
    scale = 1.0 / math.sqrt(dim)
    projection = jnp.asarray(projection)
    padding = jnp.zeros((heads, steps, dim), keys.dtype)
    keys = jnp.concatenate([jnp.asarray(keys), padding], axis=1)
    values = jnp.concatenate([jnp.asarray(values), padding], axis=1)
    positions = jnp.arange(length + steps)

    def body(t, state):
        query, keys, values, outputs = state
        scores = (keys @ query[:, :, None])[:, :, 0] * scale
        scores = jnp.where(positions[None, :] < length + t, scores, -jnp.inf)
        weights = jnp.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        output = (weights[:, None, :] @ values)[:, 0, :]
        query = jnp.tanh(output @ projection)
        return (query, keys.at[:, length + t, :].set(query),
                values.at[:, length + t, :].set(output), outputs.at[:, t, :].set(output))
    outputs = jnp.zeros((heads, steps, dim), keys.dtype)
    return lax.fori_loop(0, steps, body, (jnp.asarray(query), keys, values, outputs))[3]
