"""Non-loop scientific programs as people write them in NumPy: statistics, distances, option
pricing, integration, finite differences, image filters and colour conversion."""
from __future__ import annotations

import numpy as np

from .program import Program, Registry, inputs_and, normal, uniform

SCIENCE = Registry()


def _program(name, function, make, small, large, description, bytes_moved, tags=(), **options):
    return SCIENCE.add(Program(name, function, make, {"small": small, "large": large}, description,
                               bytes_moved, tags=tags, **options))


_matrix = lambda rng, dtype, rows, cols: (normal(rng, dtype, rows, cols, scale=2.0, shift=1.0),)


def zscore(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


_program("zscore", zscore, _matrix, dict(rows=100, cols=16), dict(rows=1 << 20, cols=64),
         "column z-scores along axis 0 (scipy.stats.zscore)", inputs_and(1.0), ("std", "int-axis-arg"))


def pairwise_distances(a, b):
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=-1))


def _point_sets(rng, dtype, n, m, d):
    return normal(rng, dtype, n, d), normal(rng, dtype, m, d)


_program("pairwise_distances", pairwise_distances, _point_sets, dict(n=60, m=50, d=3),
         dict(n=8192, m=8192, d=3), "Euclidean distance matrix by broadcasting (textbook)",
         lambda arguments, static: arguments[0].shape[0] * arguments[1].shape[0] * arguments[0].itemsize,
         ("newaxis", "power"))


def pairwise_distances_gram(a, b):
    squared = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * a @ b.T
    return np.sqrt(np.maximum(squared, 0.0))


_program("pairwise_distances_gram", pairwise_distances_gram, _point_sets, dict(n=60, m=50, d=16),
         dict(n=8192, m=8192, d=128), "distance matrix through the Gram matrix (scikit-learn's "
         "euclidean_distances)",
         lambda arguments, static: arguments[0].shape[0] * arguments[1].shape[0] * arguments[0].itemsize,
         ("matmul", "newaxis"))


def kmeans_assign(points, centroids):
    distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(distances, axis=1)


_program("kmeans_assign", kmeans_assign,
         lambda rng, dtype, n, k, d: (normal(rng, dtype, n, d), normal(rng, dtype, k, d)),
         dict(n=200, k=8, d=4), dict(n=1 << 20, k=32, d=16),
         "k-means assignment step, np.argmin of squared distances (textbook)", inputs_and(0.25),
         ("argmin", "int-axis-arg"))


def black_scholes(price, strike, time, rate, volatility):
    def cumulative_normal(d):
        k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937
                                                          + k * (-1.821255978 + k * 1.330274429))))
        value = 1.0 - 0.3989422804014327 * np.exp(-0.5 * d * d) * poly
        return np.where(d > 0, value, 1.0 - value)

    root = volatility * np.sqrt(time)
    d1 = (np.log(price / strike) + (rate + 0.5 * volatility * volatility) * time) / root
    d2 = d1 - root
    discounted = strike * np.exp(-rate * time)
    call = price * cumulative_normal(d1) - discounted * cumulative_normal(d2)
    put = discounted * cumulative_normal(-d2) - price * cumulative_normal(-d1)
    return call, put


def _options(rng, dtype, n):
    return (uniform(rng, dtype, n, low=5.0, high=30.0), uniform(rng, dtype, n, low=1.0, high=100.0),
            uniform(rng, dtype, n, low=0.25, high=10.0), np.asarray(0.02, dtype),
            np.asarray(0.30, dtype))


_program("black_scholes", black_scholes, _options, dict(n=1000), dict(n=1 << 24),
         "Black-Scholes calls and puts with the Abramowitz-Stegun normal CDF (Numba's example)",
         lambda arguments, static: 5 * arguments[0].nbytes, ("where", "0-d"), dtypes=(np.float64, np.float32))


def logsumexp(x):
    largest = x.max(axis=1)
    return largest + np.log(np.exp(x - largest[:, None]).sum(axis=1))


_program("logsumexp", logsumexp, _matrix, dict(rows=64, cols=100), dict(rows=16384, cols=4096),
         "row log-sum-exp (scipy.special.logsumexp)", inputs_and(0.0), ("newaxis",))


def column_statistics(x):
    mean = x.mean(axis=0)
    centred = x - mean
    variance = (centred ** 2).mean(axis=0)
    skewness = (centred ** 3).mean(axis=0) / variance ** 1.5
    kurtosis = (centred ** 4).mean(axis=0) / variance ** 2 - 3.0
    return mean, variance, skewness, kurtosis, x.min(axis=0), x.max(axis=0)


_program("column_statistics", column_statistics, _matrix, dict(rows=200, cols=8),
         dict(rows=1 << 20, cols=64), "mean, variance, skewness, excess kurtosis, min, max per "
         "column (scipy.stats.describe)", inputs_and(0.0), ("power", "tuple-result"))


def covariance(x):
    centred = x - x.mean(axis=0, keepdims=True)
    return centred.T @ centred / (x.shape[0] - 1)


_program("covariance", covariance, _matrix, dict(rows=200, cols=8), dict(rows=1 << 20, cols=64),
         "sample covariance of columns (np.cov(x, rowvar=False))", inputs_and(0.0), ("matmul", "transpose"))


def correlation_np_cov(x):
    c = np.cov(x, rowvar=False)
    d = np.sqrt(np.diag(c))
    return c / d[:, None] / d[None, :]


_program("correlation_np_cov", correlation_np_cov, _matrix, dict(rows=200, cols=8),
         dict(rows=1 << 20, cols=64), "correlation matrix via np.cov and np.diag (np.corrcoef)",
         inputs_and(0.0), ("np.cov", "diag"))


def polynomial(x, coefficients):
    result = np.zeros_like(x)
    for c in coefficients:
        result = result * x + c
    return result


_program("polynomial", polynomial,
         lambda rng, dtype, n, degree: (uniform(rng, dtype, n, low=-1.0, high=1.0),
                                        normal(rng, dtype, degree + 1)),
         dict(n=1000, degree=8), dict(n=1 << 24, degree=8),
         "Horner evaluation iterating over a coefficient array (np.polyval)", inputs_and(1.0),
         ("iterate-array",))


def trapezoid(y, x):
    return 0.5 * ((y[:, 1:] + y[:, :-1]) * np.diff(x)).sum(axis=1)


_program("trapezoid", trapezoid,
         lambda rng, dtype, rows, n: (normal(rng, dtype, rows, n),
                                      np.sort(uniform(rng, dtype, n)).astype(dtype)),
         dict(rows=16, n=100), dict(rows=4096, n=4096),
         "trapezoid rule on non-uniform samples with np.diff (np.trapezoid)", inputs_and(0.0), ("diff",))


def gradient_2d(f):
    gy, gx = np.gradient(f, 0.1, 0.2)
    return np.sqrt(gx * gx + gy * gy)


_program("gradient_2d", gradient_2d, _matrix, dict(rows=40, cols=50), dict(rows=4096, cols=4096),
         "gradient magnitude with np.gradient's second-order differences (edge detection)", inputs_and(1.0),
         ("np.gradient",))


def laplacian_2d(f):
    out = np.zeros_like(f)
    out[1:-1, 1:-1] = (f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2] - 4.0 * f[1:-1, 1:-1])
    return out / 0.01


_program("laplacian_2d", laplacian_2d, _matrix, dict(rows=40, cols=50), dict(rows=4096, cols=4096),
         "5-point Laplacian by central differences into zeros_like (textbook)", inputs_and(1.0),
         ("setslice",))


def box_blur(image):
    padded = np.pad(image, ((1, 1), (1, 1), (0, 0)), mode="edge")
    total = np.zeros_like(image)
    for dy in range(3):
        for dx in range(3):
            total = total + padded[dy:dy + image.shape[0], dx:dx + image.shape[1]]
    return total / 9.0


_program("box_blur", box_blur,
         lambda rng, dtype, height, width: (uniform(rng, dtype, height, width, 3),),
         dict(height=32, width=40), dict(height=4096, width=4096),
         "3x3 box blur of an RGB image as slice sums over an edge-padded copy (scikit-image-like)",
         inputs_and(1.0), ("pad",))


def rgb_to_yuv(image):
    matrix = np.array([[0.299, 0.587, 0.114],
                       [-0.14713, -0.28886, 0.436],
                       [0.615, -0.51499, -0.10001]], dtype=image.dtype)
    return image @ matrix.T


_program("rgb_to_yuv", rgb_to_yuv,
         lambda rng, dtype, height, width: (uniform(rng, dtype, height, width, 3),),
         dict(height=32, width=40), dict(height=4096, width=4096),
         "RGB to YUV with an np.array literal matrix (BT.601)", inputs_and(1.0), ("array-literal", "matmul"))


def rgb_to_gray(image):
    return 0.2989 * image[..., 0] + 0.5870 * image[..., 1] + 0.1140 * image[..., 2]


_program("rgb_to_gray", rgb_to_gray,
         lambda rng, dtype, height, width: (uniform(rng, dtype, height, width, 3),),
         dict(height=32, width=40), dict(height=4096, width=4096),
         "RGB to luma by channel slices (MATLAB rgb2gray)", inputs_and(1.0 / 3.0), ("ellipsis",))


def normalize_rows(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


_program("normalize_rows", normalize_rows, _matrix, dict(rows=64, cols=32), dict(rows=1 << 20, cols=128),
         "L2-normalize rows with np.linalg.norm (sklearn.preprocessing.normalize)", inputs_and(1.0),
         ("linalg.norm",))


def moving_average(x, window):
    total = np.cumsum(x, axis=-1)
    total[..., window:] = total[..., window:] - total[..., :-window]
    return total[..., window - 1:] / window


_program("moving_average", moving_average,
         lambda rng, dtype, rows, n: (normal(rng, dtype, rows, n),),
         dict(rows=8, n=100, window=5), dict(rows=1024, n=65536, window=50),
         "running mean by cumulative sums (a common StackOverflow answer)", inputs_and(1.0),
         ("cumsum",), static=("window",))


def bilinear_einsum(x, weight, y):
    return np.einsum("bi,oij,bj->bo", x, weight, y)


_program("bilinear_einsum", bilinear_einsum,
         lambda rng, dtype, batch, n, out: (normal(rng, dtype, batch, n), normal(rng, dtype, out, n, n),
                                            normal(rng, dtype, batch, n)),
         dict(batch=16, n=8, out=4), dict(batch=4096, n=128, out=128),
         "bilinear form with np.einsum (torch.nn.Bilinear)", inputs_and(0.0), ("einsum",))


def robust_scale(x):
    median = np.median(x, axis=0)
    spread = np.percentile(x, 75, axis=0) - np.percentile(x, 25, axis=0)
    return (x - median) / spread


_program("robust_scale", robust_scale, _matrix, dict(rows=101, cols=8), dict(rows=1 << 20, cols=64),
         "median / interquartile scaling (sklearn RobustScaler)", inputs_and(1.0), ("sort", "median"))


def positive_mean(x):
    return x[x > 0].mean(), (x > 0).mean()


_program("positive_mean", positive_mean, lambda rng, dtype, n: (normal(rng, dtype, n),),
         dict(n=1000), dict(n=1 << 24), "mean of the positive entries by a boolean mask (textbook)",
         inputs_and(0.0), ("mask-index",))
