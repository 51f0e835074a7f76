"""Integer-array indexing programs (trace/gather.py) and their inputs, shared by the CPU tests
(test_gather.py) and the CUDA simulator's run of them (gather_sim_cases.py)."""
import numpy as np

rng = np.random.default_rng(11)


def ints(high, shape, dtype=np.int64, negative=True):
    low = -high if negative and np.dtype(dtype).kind == "i" else 0
    return rng.integers(low, high, size=shape).astype(dtype)


def floats(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _strided(shape):
    """A non-contiguous view (every other column) of fresh values."""
    wide = floats(*shape[:-1], 2 * shape[-1])
    return wide[..., ::2]


def _assign(x, i, v):
    y = x.copy()
    y[i] = v
    return y


def _assign_added(x, i, v):
    y = x * 1
    y[i] += v
    return y


def _add_at(x, i, v):
    y = x.copy()
    np.add.at(y, i, v)
    return y


def _assign_list(x):
    y = x + 0
    y[[0, 2, 0]] = x[[1, 1, 3]] * 2
    return y


def _put(axis):
    def put(x, i, v):
        y = x * 1
        np.put_along_axis(y, i, v, axis)
        return y
    return put


def _zero_the_max(x):
    np.put_along_axis(x, np.argmax(x, axis=1)[:, None], 0, axis=1)
    return x


# (name, function, make arguments)
CASES = [
    ("rows", lambda x, i: x[i], lambda: (floats(5, 6), ints(5, (4,)))),
    ("columns", lambda x, i: x[:, i], lambda: (floats(5, 6), ints(6, (3,)))),
    ("rows_then_slice", lambda x, i: x[i, 1:], lambda: (floats(5, 6), ints(5, (7,)))),
    ("pairs", lambda x, i, j: x[i, j], lambda: (floats(5, 6), ints(5, (3, 1)), ints(6, (4,)))),
    ("separated", lambda x, i: x[i, :, i % 3], lambda: (floats(5, 2, 3), ints(5, (4,)))),
    ("middle", lambda x, i: x[:, i, :], lambda: (floats(3, 7, 2), ints(7, (2, 3)))),
    ("new_axes", lambda x, i: x[None, i, None, 2], lambda: (floats(5, 6), ints(5, (4,)))),
    ("ellipsis", lambda x, i: x[..., i], lambda: (floats(2, 3, 4), ints(4, (5,)))),
    ("fused", lambda x, i: x[i] * 2 + 1, lambda: (floats(8), ints(8, (3, 4)))),
    ("producer", lambda x, i: np.exp(x)[i + 1], lambda: (floats(9), ints(8, (5,), negative=False))),
    ("int32", lambda x, i: x[i], lambda: (floats(6, 2), ints(6, (5,), np.int32))),
    ("uint8", lambda x, i: x[:, i], lambda: (floats(3, 6), ints(6, (5,), np.uint8))),
    ("uint64", lambda x, i: x[i], lambda: (floats(6), ints(6, (5,), np.uint64))),
    ("int_data", lambda x, i: x[i] // 2, lambda: (ints(100, (7, 3), np.int16), ints(7, (4,)))),
    ("bool_data", lambda x, i: x[i] | x[0], lambda: (floats(7) > 0, ints(7, (4,)))),
    ("float64", lambda x, i: x[i].sum(axis=-1), lambda: (floats(5, 6, dtype=np.float64), ints(5, (3,)))),
    ("embedding", lambda w, ids: (w[ids] ** 2).sum(axis=1),
     lambda: (floats(10, 4, dtype=np.float64), ints(10, (6,), negative=False))),
    ("non_contiguous", lambda x, i: x[i] - 1, lambda: (_strided((5, 4)), ints(5, (3,)))),
    ("negative_strides", lambda x, i: x[::-1][i], lambda: (floats(6, 3), ints(6, (4,)))),
    ("empty_index", lambda x, i: x[i], lambda: (floats(5, 3), ints(5, (0,)))),
    ("empty_rows", lambda x, i: x[:, i], lambda: (floats(0, 5), ints(5, (3,)))),
    ("scalar_index", lambda x: x[np.argmax(x[:, 0]), 1], lambda: (floats(5, 3),)),
    ("argmax_along", lambda x: np.take_along_axis(x, np.argmax(x, axis=1)[:, None], axis=1),
     lambda: (floats(6, 5),)),
    ("along_axis0", lambda x, i: np.take_along_axis(x, i, axis=0) * 3,
     lambda: (floats(4, 5), ints(4, (2, 5)))),
    ("along_broadcast", lambda x, i: np.take_along_axis(x, i, axis=1),
     lambda: (floats(1, 5), ints(5, (3, 2)))),
    ("along_none", lambda x, i: np.take_along_axis(x, i, axis=None),
     lambda: (floats(3, 4), ints(12, (5,)))),
    ("take_flat", lambda x, i: np.take(x, i), lambda: (floats(3, 4), ints(12, (2, 3)))),
    ("take_axis1", lambda x, i: np.take(x, i, axis=1), lambda: (floats(3, 4, 2), ints(4, (5,)))),
    ("take_axis_neg", lambda x, i: np.take(x, i, axis=-1) + x[:, :1],
     lambda: (floats(3, 4), ints(4, (2,)))),
    ("take_bool", lambda x, i: np.take(x, i > 0), lambda: (floats(4), ints(3, (5,)))),
    ("take_wrap", lambda x, i: np.take(x, i, mode="wrap"), lambda: (floats(4), ints(40, (6,)))),
    ("take_clip", lambda x, i: np.take(x, i, axis=0, mode="clip"), lambda: (floats(4, 2), ints(40, (6,)))),
    ("take_method", lambda x, i: x.take(i, axis=0), lambda: (floats(4, 2), ints(4, (3,)))),
    ("list_index", lambda x: x[[0, 2, -1]], lambda: (floats(4, 3),)),
    ("constant_index", lambda x: x[:, np.array([[1, 0], [2, 2]])], lambda: (floats(4, 3),)),
    ("constant_mask", lambda x: x[np.array([True, False, True, True])] * 2, lambda: (floats(4, 3),)),
    ("computed_index", lambda x, i: x[(i * 7) % 5], lambda: (floats(5), ints(100, (6,)))),
    ("assign_repeated", _assign, lambda: (floats(6), np.array([0, 3, -1, 3, 0, 5]), floats(6))),
    ("assign_rows", _assign, lambda: (floats(6, 3), ints(6, (2, 4)), floats(2, 4, 3))),
    ("assign_scalar", _assign, lambda: (ints(9, (5, 2), np.int32), ints(5, (3,), np.uint8, False),
                                        np.int32(7))),
    ("assign_broadcast", _assign, lambda: (floats(5, 3), ints(5, (4,)), floats(3))),
    ("assign_empty", _assign, lambda: (floats(5, 3), ints(5, (0,)), floats(3))),
    ("assign_added", _assign_added, lambda: (floats(6, 2), np.array([1, 1, -5, 4]), floats(4, 2))),
    ("add_at", _add_at, lambda: (floats(6), np.array([1, 1, -5, 4, 1]), floats(5))),
    ("add_at_rows", _add_at, lambda: (ints(9, (4, 3)), ints(4, (7,)), ints(9, (7, 3)))),
    ("assign_list", _assign_list, lambda: (floats(4, 2),)),
    ("put_along_last", _put(-1), lambda: (floats(2, 5), ints(5, (2, 3)), floats(2, 3))),
    ("put_along_first", _put(0), lambda: (floats(4, 3), ints(4, (2, 3)), np.float32(2))),
    ("put_along_broadcast", _put(1), lambda: (ints(9, (2, 4, 2)), ints(4, (1, 6, 2)), ints(9, (1,)))),
    ("put_the_max", _zero_the_max, lambda: (floats(3, 3),)),
]
