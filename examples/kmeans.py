"""k-means assignment step: pairwise squared distances and the nearest centroid of each point.

NumPy materializes the [points, centroids, dims] difference array; autofuse fuses the
subtraction, the square and the sum over dims into a reduction, and reduces the distances with
min and argmin without writing that 3-D temporary.

    python examples/kmeans.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import numpy as np

import _common
import autofuse


@autofuse.jit
def assign(points, centroids):
    d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    return d2.argmin(axis=-1), d2.min(axis=-1)


# The peers' versions, timed beside it: the same computation in torch's and jax.numpy's own ops.
def _assign_torch(torch, points, centroids):
    d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(dim=-1)
    return d2.argmin(dim=-1), d2.amin(dim=-1)


def _assign_jax(jnp, points, centroids):
    d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    return d2.argmin(axis=-1), d2.min(axis=-1)


def _assignment_mismatch(got, want, inputs):
    """Why (labels, distances) `got` are not NumPy's `want` on `inputs` (points, centroids), or
    None: the distances within the float64 tolerance, the labels equal to NumPy's argmin except
    where two centroids' distances tie to rounding (argmin may then pick either)."""
    if not isinstance(got, tuple) or len(got) != 2:
        return f"{type(got).__name__} where NumPy returns (labels, min distance)"
    problem = _common.mismatch(got[1], want[1], name="min distance")
    if problem:
        return problem
    labels, want_labels = got[0], want[0]
    if labels.shape != want_labels.shape or labels.dtype != want_labels.dtype:
        return (f"labels: {labels.dtype}{list(labels.shape)} where NumPy's are "
                f"{want_labels.dtype}{list(want_labels.shape)}")
    points, centroids = (_common.to_numpy(a) for a in inputs)
    differ = np.flatnonzero(labels != want_labels)
    d2 = ((points[differ, None] - centroids[None]) ** 2).sum(-1)
    rows = np.arange(differ.size)
    if not np.allclose(d2[rows, labels[differ]], d2[rows, want_labels[differ]], rtol=1e-12, atol=0):
        return f"labels: {differ.size} differ from NumPy's argmin, not all of them at near-ties"
    return None


PEERS = _common.Peers(assign, torch=_assign_torch, jax=_assign_jax, compare=_assignment_mismatch)


def _make_inputs(dev, small):
    """assign's arguments on `dev`, float64: points [100_000, 16] ([200, 4] with `small`) and
    centroids [32, 16] ([8, 4])."""
    n, k, dims = (200, 8, 4) if small else (100_000, 32, 16)
    rng = np.random.default_rng(0)
    return dev.asarray(rng.standard_normal((n, dims))), dev.asarray(rng.standard_normal((k, dims)))


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    points, centroids = _make_inputs(dev, args.small)
    _common.header("assign(points, centroids), float64", dev,
                   f"points: {list(points.shape)}, k={centroids.shape[0]}")

    got = _common.to_numpy(assign(points, centroids))
    want = _common.numpy_reference(assign, points, centroids)
    problem = _assignment_mismatch(got, want, (points, centroids))
    assert problem is None, problem
    _common.check(got[1], want[1], name="min distance")
    print(f"check labels: {got[0].dtype}{list(got[0].shape)} match NumPy's argmin "
          f"({np.count_nonzero(got[0] != want[0])} near-ties resolved differently)")

    _common.print_summary(assign, points, centroids)
    _common.compare_times(assign, points, centroids, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
