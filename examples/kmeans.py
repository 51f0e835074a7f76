"""k-means assignment step: pairwise squared distances and the nearest centroid of each point.

NumPy materializes the [points, centroids, dims] difference array; autofuse fuses the
subtraction, the square and the sum over dims into a reduction, and reduces the distances with
min and argmin without writing that 3-D temporary.

    python examples/kmeans.py [--small] [--repeats N] [--device cuda]
"""
import numpy as np

import _common
import autofuse


@autofuse.jit
def assign(points, centroids):
    d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    return d2.argmin(axis=-1), d2.min(axis=-1)


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    n, k, dims = (200, 8, 4) if args.small else (100_000, 32, 16)
    _common.header("assign(points, centroids), float64", dev, f"points: [{n}, {dims}], k={k}")

    rng = np.random.default_rng(0)
    points = dev.asarray(rng.standard_normal((n, dims)))
    centroids = dev.asarray(rng.standard_normal((k, dims)))

    labels, dist = assign(points, centroids)
    want_labels, want_dist = _common.numpy_reference(assign, points, centroids)
    _common.check(dist, want_dist, name="min distance")
    # argmin may pick the other of two centroids whose distances tie to rounding: accept only that.
    labels = _common.to_numpy(labels)
    assert labels.dtype == want_labels.dtype, (labels.dtype, want_labels.dtype)
    differ = np.flatnonzero(labels != want_labels)
    d2 = ((_common.to_numpy(points)[differ, None] - _common.to_numpy(centroids)[None]) ** 2).sum(-1)
    rows = np.arange(differ.size)
    np.testing.assert_allclose(d2[rows, labels[differ]], d2[rows, want_labels[differ]], rtol=1e-12)
    print(f"check labels: {labels.dtype}{list(labels.shape)} match NumPy's argmin "
          f"({differ.size} near-ties resolved differently)")

    _common.print_summary(assign, points, centroids)
    _common.compare_times(assign, points, centroids, repeats=args.repeats, dev=dev)


if __name__ == "__main__":
    main()
