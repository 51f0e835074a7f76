"""Fresh, untuned NumPy programs for testing autofuse (written for a bug sweep).

Each entry of PROGRAMS maps a name to (function, make) where make(seed) builds the arguments
(fresh arrays each call; fixed seed) so that views / strides / order survive "copying"."""
from __future__ import annotations

import numpy as np

PROGRAMS: dict = {}


def program(make):
    def deco(fn):
        PROGRAMS[fn.__name__] = (fn, make)
        return fn
    return deco


def R(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- scientific / loops

@program(lambda s: (R(s).random(200), 25, 0.2))
def fd_heat_inplace(u, steps, alpha):
    # explicit heat equation, in-place on the caller's array, Python int loop count
    for _ in range(steps):
        u[1:-1] += alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u.max()


@program(lambda s: (R(s).random((40, 30)).astype(np.float32),))
def roll_laplacian(f):
    lap = (np.roll(f, 1, axis=0) + np.roll(f, -1, axis=0)
           + np.roll(f, 1, axis=1) + np.roll(f, -1, axis=1) - 4 * f)
    return lap, np.abs(lap).max()


@program(lambda s: (R(s).random((500, 3)) * 10.0, R(s + 7).standard_normal((500, 3)), 0.01, 10.0))
def particle_step(pos, vel, dt, box):
    force = -(pos - box / 2)
    vel += force * dt
    pos += vel * dt
    pos %= box
    kinetic = 0.5 * (vel ** 2).sum()
    return kinetic


@program(lambda s: (R(s).random(3000), 17))
def histogram_bincount(x, nbins):
    idx = np.clip((x * nbins).astype(np.int64), 0, nbins - 1)
    counts = np.bincount(idx, minlength=nbins)
    weighted = np.bincount(idx, weights=x, minlength=nbins)
    return counts, weighted / np.maximum(counts, 1)


@program(lambda s: (R(s).standard_normal(1000), R(s).integers(0, 50, 1000), 50))
def scatter_add_at(values, idx, n):
    out = np.zeros(n)
    np.add.at(out, idx, values)
    return out


@program(lambda s: (np.zeros(20), R(s).integers(0, 20, 100)))
def fancy_iadd_duplicates(out, idx):
    # buffered: duplicates count once (classic NumPy semantics)
    out[idx] += 1.0
    return out


@program(lambda s: (R(s).random((30, 40)),))
def cumsum_normalize(x):
    c = np.cumsum(x, axis=1)
    p = np.cumprod(1 + x[:, :5] * 0.1, axis=1)
    return c / c[:, -1:], p


@program(lambda s: (R(s).standard_normal((25, 31)),))
def sort_median_argsort(x):
    s = np.sort(x, axis=-1)
    order = np.argsort(x, axis=-1)
    med = s[:, x.shape[1] // 2]
    return med, order[:, :3], np.sort(x, axis=0)[-1]


@program(lambda s: (R(s).standard_normal((20, 50)), 5))
def partition_topk(x, k):
    p = np.partition(x, -k, axis=-1)[:, -k:]
    return np.sort(p, axis=-1)


@program(lambda s: (R(s).standard_normal((60, 70)).astype(np.float32),))
def where_masks(x):
    y = np.where(x > 0, np.sqrt(np.abs(x)), -x * x)
    z = np.where(np.abs(x) < 0.5, 0.0, x)      # Python float branch: stays float32
    return y, z, (x > 1).sum(axis=0)


@program(lambda s: (R(s).standard_normal(500), 0.3))
def boolean_mask_select(x, thresh):
    sel = x[x > thresh]
    return sel.sum(), sel.size


@program(lambda s: (R(s).standard_normal((50, 20)),))
def boolean_mask_assign(x):
    x[x < 0] = 0.0
    x[:, 3][x[:, 4] > 1.0] = -1.0
    return x.sum(axis=1)


@program(lambda s: (R(s).standard_normal((40, 6)), R(s).integers(-40, 40, 25)))
def fancy_gather(table, idx):
    a = table[idx] * 2 + table[idx[::-1]]
    b = table[idx, 1:3]
    c = table[[0, -1, 3]]
    return a, b, c


@program(lambda s: (R(s).standard_normal((12, 9)), R(s).standard_normal((9, 7)),
                    R(s).standard_normal((4, 5, 5))))
def einsum_mix(a, b, c):
    m = np.einsum("ij,jk->ik", a, b)
    t = np.einsum("bii->b", c)
    bm = np.einsum("bij,bjk->bik", c, c)
    o = np.einsum("i,j->ij", a[:, 0], b[0])
    return m, t, bm, o


@program(lambda s: (R(s).standard_normal((30, 8)),))
def norms(x):
    return (np.linalg.norm(x, axis=1), np.linalg.norm(x), np.linalg.norm(x, ord=1, axis=0),
            np.linalg.norm(x[0], ord=np.inf), np.linalg.norm(x, axis=1, keepdims=True))


@program(lambda s: (R(s).standard_normal((6, 4, 5)), R(s).standard_normal((4, 5, 3))))
def tensordot_clip(a, b):
    t = np.tensordot(a, b, axes=([1, 2], [0, 1]))
    t2 = np.tensordot(a, b[:, :, 0], axes=2)
    return np.clip(t, -1.5, 2.0), t2


@program(lambda s: (R(s).standard_normal(15), R(s).standard_normal(15)))
def outer_concat_stack(a, b):
    o = np.outer(a, b)
    c = np.concatenate([a, b, a[:3]])
    st = np.stack([a, b], axis=1)
    v = np.vstack([a, b])
    h = np.hstack([o[:, :2], st])
    return o, c, st, v, h


@program(lambda s: (R(s).standard_normal(120).astype(np.float32),))
def reshape_transpose_chain(x):
    y = x.reshape(4, 6, 5).transpose(2, 0, 1).reshape(5, -1)
    z = y.T @ y
    w = np.swapaxes(x.reshape(2, 3, 20), 0, 2).reshape(-1)
    return z, w, np.moveaxis(x.reshape(3, 4, 10), 0, -1)


@program(lambda s: (R(s).standard_normal((5, 6, 7)),))
def keepdims_reductions(x):
    return (x.sum(axis=(0, 2), keepdims=True), x.max(axis=1, keepdims=True),
            x.min(axis=0), x.prod(axis=2), x.mean(axis=-1, keepdims=True),
            np.sum(x, axis=(0, 1, 2), keepdims=True))


@program(lambda s: (R(s).standard_normal((40, 30)).astype(np.float32) * 3 + 1,))
def mean_var_std_ddof(x):
    return (x.var(axis=0, ddof=1), x.std(ddof=1), np.mean(x, axis=1), np.var(x),
            x.std(axis=1, keepdims=True, ddof=0))


@program(lambda s: (R(s).integers(0, 4, (20, 15)).astype(np.int32),))
def argmax_ties(x):
    return x.argmax(axis=0), x.argmin(axis=1), np.argmax(x), np.argmax(x[:, ::-1], axis=1)


@program(lambda s: (R(s).random(300).astype(np.float32) * 2 - 0.5,
                    R(s + 1).standard_normal(300).astype(np.float32)))
def special_functions(x, y):
    return (np.log1p(x), np.expm1(y), np.arctan2(y, x), np.hypot(x, y),
            np.log1p(np.float32(1e-6) * x), np.expm1(1e-7 * y))


@program(lambda s: (R(s).integers(-50, 50, 200).astype(np.int32),
                    np.where(R(s + 1).integers(-7, 8, 200) == 0, 3,
                             R(s + 1).integers(-7, 8, 200)).astype(np.int32), 7))
def int_floordiv_mod(a, b, k):
    return (a // b, a % b, np.floor_divide(a, k), a % k, (a * 3) // -4,
            np.remainder(a, -k), np.fmod(a, b), divmod(a, 5)[1])


@program(lambda s: (R(s).standard_normal(100) * 10, R(s + 1).standard_normal(100) * 3))
def float_floordiv_mod(x, y):
    return x // y, x % y, np.fmod(x, y), x % 2.5, np.floor(x / 3) * 3


@program(lambda s: (R(s).standard_normal(400).astype(np.float16),))
def float16_ops(x):
    y = x * x + 1
    return y.sum(), x.mean(), np.exp(x), x.astype(np.float32).sum(), np.maximum(x, 0), y / 3


@program(lambda s: (R(s).integers(-100, 100, 50).astype(np.int32), 3, 2.5))
def python_scalars(x, a, b):
    return x * a, x + b, x ** 2, x / a, x // a, (x * a) > b, x * a * 1000000


@program(lambda s: (R(s).integers(0, 256, (16, 16, 3)).astype(np.uint8),))
def uint8_image(img):
    f = img.astype(np.float32) / 255
    wrap = img + img                       # uint8 wraparound
    gray = (img[..., 0].astype(np.uint16) * 77 + img[..., 1] * 150 + img[..., 2] * 29) >> 8
    return f.mean(axis=(0, 1)), wrap, gray.astype(np.uint8), img & 0x0F, img.sum()


@program(lambda s: (R(s).integers(-1000, 1000, (30, 20)).astype(np.int32),
                    R(s).random((30, 20)) > 0.5))
def int_bool_reduction_dtypes(x, m):
    return (x.sum(), x.sum(axis=0), np.cumsum(x, axis=1), x.mean(), m.sum(), m.mean(axis=1),
            x.astype(np.int8).prod(axis=1), np.count_nonzero(m, axis=0), m.any(axis=1), m.all())


@program(lambda s: (R(s).standard_normal(300),))
def overlap_inplace(x):
    x[1:] += x[:-1]        # NumPy copies the overlapping read first
    y = x.copy()
    y[:-1] = y[1:]
    return y


@program(lambda s: (np.arange(40.0), 0.9, 6))
def iir_recurrence(x, a, n):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = a * out[i - 1] + x[i]
    return out[::n]


@program(lambda s: (R(s).random((30, 10)),))
def row_loop_python(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] / x[i].sum()
    return out


@program(lambda s: (np.sort(R(s).random(20)), R(s + 1).random(300)))
def searchsorted_digitize(edges, x):
    i = np.searchsorted(edges, x)
    j = np.digitize(x, edges)
    return i, j, np.diff(edges), np.diff(x, n=2)


@program(lambda s: (np.where(R(s).random((20, 8)) < 0.1, np.nan, R(s).standard_normal((20, 8))),))
def nan_handling(x):
    return (np.nansum(x, axis=0), np.nanmax(x, axis=1), np.isnan(x).sum(),
            np.nan_to_num(x, nan=-1.0), np.nanmean(x))


@program(lambda s: (R(s).standard_normal(100),))
def running_max(x):
    return np.maximum.accumulate(x), np.minimum.reduce(x), np.add.reduce(x[::3])


@program(lambda s: (R(s).standard_normal((6, 6)),))
def small_matrix_ops(a):
    g = a.T @ a + np.eye(6)
    return np.trace(g), np.diag(g), np.diag(a[:3, 0]), np.triu(a, 1), np.linalg.solve(g, a[:, 0])


# ---------------------------------------------------------------- ML layers

@program(lambda s: (R(s).standard_normal((4, 10, 10)).astype(np.float32),))
def masked_softmax(scores):
    n = scores.shape[-1]
    mask = np.tril(np.ones((n, n), dtype=bool))
    s = np.where(mask, scores, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


@program(lambda s: (R(s).standard_normal((3, 8, 16)).astype(np.float32),
                    R(s).standard_normal(16).astype(np.float32), 1e-5))
def layernorm_eps(x, gamma, eps):
    mu = x.mean(axis=(-2, -1), keepdims=True)
    var = ((x - mu) ** 2).mean(axis=(-2, -1), keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma


@program(lambda s: (R(s).standard_normal((32, 64)).astype(np.float32),))
def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


@program(lambda s: (R(s).standard_normal((2, 12, 32)).astype(np.float32),
                    R(s + 1).standard_normal((32, 96)).astype(np.float32) * 0.1, 4))
def multihead_attention(x, w_qkv, heads):
    b, t, d = x.shape
    qkv = x @ w_qkv
    q, k, v = np.split(qkv, 3, axis=-1)
    hd = d // heads
    q = q.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
    k = k.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
    v = v.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
    att = q @ k.swapaxes(-1, -2) / np.sqrt(hd)
    att = att - att.max(-1, keepdims=True)
    att = np.exp(att)
    att /= att.sum(-1, keepdims=True)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return out


@program(lambda s: (R(s).standard_normal((64, 10)), R(s).integers(0, 10, 64).astype(np.int32)))
def cross_entropy_take_along(logits, labels):
    m = logits.max(axis=1, keepdims=True)
    logz = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    logp = logits - logz
    nll = -np.take_along_axis(logp, labels[:, None], axis=1)
    acc = (logits.argmax(axis=1) == labels).mean()
    return nll.mean(), acc


@program(lambda s: (R(s).standard_normal((16, 32)).astype(np.float32), R(s).random((16, 32)) > 0.25,
                    0.25))
def dropout_mask(x, mask, p):
    return x * mask / (1 - p), np.where(mask, x, 0).sum(axis=0)


@program(lambda s: (R(s).standard_normal((3, 100)), R(s).standard_normal((4, 3, 5))))
def conv1d_slices(x, w):
    c_out, c_in, k = w.shape
    n = x.shape[1] - k + 1
    out = np.zeros((c_out, n))
    for j in range(k):
        out += w[:, :, j] @ x[:, j:j + n]
    return np.maximum(out, 0)


@program(lambda s: (R(s).standard_normal((64, 20)).astype(np.float32),
                    R(s).standard_normal((20, 5)).astype(np.float32),
                    R(s).integers(0, 5, 64)))
def logistic_grad_step(x, w, y):
    # float() of a traced value: a TraceError naming the line, as documented
    return float(_logistic_step(x, w, y))


def _logistic_step(x, w, y):
    z = x @ w
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    onehot = np.eye(5, dtype=np.float32)[y]
    grad = x.T @ (p - onehot) / x.shape[0]
    w -= 0.1 * grad
    return -np.log(p[np.arange(64), y]).mean()


# ---------------------------------------------------------------- edge inputs

@program(lambda s: (np.array(1.5), R(s).standard_normal(10)))
def zero_d_array(x0, y):
    return x0 * y, np.sin(x0), x0 + 1, (x0 * y).sum()


@program(lambda s: (np.zeros((0, 5)), np.zeros(0, dtype=np.int64)))
def size_zero(x, i):
    return x.sum(axis=0), x.sum(), x.max(axis=1), np.exp(x), x.T @ x, np.cumsum(i), i * 2


@program(lambda s: (R(s).standard_normal((20, 30))[:, ::2], R(s + 1).standard_normal(40)[::-1]))
def noncontig_views(x, r):
    return x * 2 + x.sum(axis=0), r[1:] - r[:-1], x[::-1, ::3].T @ x[:, :5]


@program(lambda s: (np.asfortranarray(R(s).standard_normal((12, 9))),
                    np.asfortranarray(R(s + 1).standard_normal((9, 4)).astype(np.float32))))
def fortran_order(a, b):
    return a @ b, a.T.sum(axis=1), a.reshape(-1)[:20], a.ravel()[5::7], np.exp(a)[::2]


@program(lambda s: (R(s).standard_normal((7, 1)), R(s + 1).standard_normal((1, 9)).astype(np.float32)))
def broadcast_col_row(col, row):
    return col + row, np.maximum(col, row), col * row == 0, (col > row).sum(axis=0), col - row.T[:7]


@program(lambda s: (np.asfortranarray(R(s).standard_normal((10, 10))), 8))
def jacobi_2d_inplace_fortran(u, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
        u[0, :] = 1.0
    return u


# ================================================================ batch 2 (after the first sweep)

def _alias(s):
    a = R(s).standard_normal(50)
    return a, a


@program(_alias)
def aliased_args_iadd(x, y):
    # caller passes the same array twice: f(a, a)
    x += y[::-1]
    return x


def _views_of_one(s):
    u = R(s).standard_normal(60)
    return u[1:], u[:-1]


@program(_views_of_one)
def overlapping_arg_views(a, b):
    a -= 0.5 * b
    return a.sum()


@program(lambda s: (np.array([7, -7, 0, 5, -3], dtype=np.int32), np.array([0, 0, 0, 2, -2], dtype=np.int32),
                    np.array([1.0, -1.0, 0.0, 2.0, np.inf])))
def divide_by_zero(a, b, x):
    return a // b, a % b, x / 0.0, np.fmod(a, b), x // 0.0


@program(lambda s: (np.array([-2147483648, 5, -5], dtype=np.int32),))
def int_min_floordiv(a):
    return a // -1, np.abs(a), -a


@program(lambda s: (np.array([1.0, np.nan, 3.0, -np.inf, 2.0]), R(s).standard_normal((4, 6))))
def nan_propagation(x, m):
    m = m.copy()
    m[1, 2] = np.nan
    return (x.max(), x.min(), np.argmax(x), np.argmin(x), np.maximum(x, 2.0), np.fmax(x, 2.0),
            m.max(axis=1), m.argmax(axis=1), np.sort(x), np.argsort(m[1]), m.sum(axis=0),
            np.clip(x, 0.0, 2.5))


@program(lambda s: (R(s).standard_normal(50) * 5, np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.375])))
def rounding(x, halves):
    return np.round(x, 1), np.round(halves), np.rint(halves), np.around(halves * 10, -1), np.round(halves, 2), np.trunc(x), np.floor(x).astype(np.int64)


@program(lambda s: (R(s).standard_normal((10, 12)), 2))
def pad_stencil(f, w):
    p = np.pad(f, 1, mode="edge")
    q = np.pad(f, ((w, w), (0, 0)), mode="constant", constant_values=0.5)
    r = np.pad(f, 1, mode="wrap")
    lap = p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4 * f
    return lap, q.sum(axis=1), r


@program(lambda s: (R(s).standard_normal(200), np.array([0.25, 0.5, 0.25])))
def convolve_1d(x, k):
    return np.convolve(x, k, mode="same"), np.convolve(x, k, mode="valid"), np.correlate(x, k, mode="valid")


@program(lambda s: (R(s).standard_normal((100, 3)), R(s + 1).standard_normal((100, 3))))
def cross_dot(r, v):
    L = np.cross(r, v)
    return L, np.dot(r[:, 0], v[:, 0]), np.inner(r[0], v[0]), np.vdot(r, v), (r * v).sum(-1)


@program(lambda s: (16, 12, 0.1))
def meshgrid_field(nx, ny, sigma):
    x = np.linspace(-1, 1, nx)
    y = np.linspace(-1, 1, ny)
    X, Y = np.meshgrid(x, y, indexing="ij")
    g = np.exp(-(X ** 2 + Y ** 2) / (2 * sigma))
    idx = np.arange(nx * ny).reshape(nx, ny) % 5
    return g / g.sum(), idx, np.arange(0, 1, 0.15)


@program(lambda s: (R(s).standard_normal((5, 4, 3)), R(s).standard_normal((3, 2))))
def einsum_ellipsis(a, b):
    return (np.einsum("...ij,jk->...ik", a, b), np.einsum("ijk->kji", a), np.einsum("ijk,ijk->i", a, a),
            np.einsum("ijk->", a))


@program(lambda s: (R(s).integers(-100, 100, 40).astype(np.int8), R(s).integers(0, 2**40, 40).astype(np.uint64),
                    R(s).standard_normal(40).astype(np.float32)))
def dtype_promotion(i8, u64, f32):
    return (i8 + 100, i8 * i8, u64 + 1, u64 + i8.astype(np.int64), f32 * np.float64(2.0),
            f32 + np.array(1.0), i8 + np.float32(0.5), i8.astype(np.uint8) + 1.5, np.abs(i8),
            i8 // np.int8(3), f32 > 0.5, (i8 > 0) + (i8 < 0), ~(i8 > 0))


@program(lambda s: (R(s).integers(-9, 9, 30).astype(np.int32), R(s).integers(0, 5, 30).astype(np.int64)))
def int_powers(a, e):
    return a ** 3, a ** e, 2 ** e, np.power(a, 2), a.astype(np.float32) ** -1, np.sqrt(np.abs(a)), (a ** 2).mean()


@program(lambda s: (R(s).standard_normal((20, 5)), R(s).integers(0, 20, 7), R(s).standard_normal((7, 5))))
def fancy_set_take(x, idx, vals):
    y = x.copy()
    y[idx] = vals
    t1 = np.take(x, [1, 25, -3], axis=0, mode="wrap")
    t2 = np.take(x[:, 0], [1, 25, -3], mode="clip")
    return y, t1, t2, x[-3::-2, 1], x[idx % 4, idx % 5]


@program(lambda s: (R(s).random(600), 300, 0.4))
def heat_many_steps(u, steps, alpha):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@program(lambda s: (np.arange(600.0), 0.9))
def iir_long(x, a):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = a * out[i - 1] + x[i]
    return out


@program(lambda s: (R(s).random(64), 20, 0.01))
def python_float_loop(u, steps, dt):
    t = 0.0
    for n in range(steps):
        t += dt
        if n % 2 == 0:
            u = u * np.exp(-t)
        else:
            u = np.sqrt(u + t)
    return u, t


@program(lambda s: (R(s).standard_normal(5000).astype(np.float32), R(s).standard_normal((3000, 4)).astype(np.float32) + 100))
def float32_big_reductions(x, y):
    return x.sum(), x.mean(), np.cumsum(x)[-5:], y.sum(axis=0), y.mean(axis=0), y.var(axis=0), (x * x).sum() ** 0.5


@program(lambda s: (R(s).standard_normal(30) + 1j * R(s + 1).standard_normal(30),))
def complex_ops(z):
    return np.abs(z), np.angle(z), z.conj() * z, np.exp(1j * z.real), (z * z).sum(), z.real ** 2 - z.imag


@program(lambda s: (np.zeros((0, 5)),))
def error_empty_max(x):
    return x.max(axis=0)   # NumPy raises ValueError


@program(lambda s: (R(s).standard_normal(20), R(s).integers(0, 30, 5)))
def error_index_oob(y, idx):
    return y[idx] * 2       # NumPy raises IndexError


@program(lambda s: (R(s).standard_normal((6, 7)),))
def returns_views_and_same(x):
    y = x * 2
    return x, x[::2], y, y, x.T


@program(lambda s: (R(s).standard_normal((3, 4)), True, 2))
def python_bool_int_args(x, flag, k):
    y = x * flag + k
    return y, x > k, np.full((k, 3), flag), np.zeros(k, dtype=bool) | flag


@program(lambda s: (R(s).standard_normal((7, 8)).astype(np.float16), R(s).standard_normal((8, 3)).astype(np.float16)))
def float16_matmul_reduce(a, b):
    return a @ b, a.sum(axis=1), a.var(axis=0), np.sort(a, axis=1), a.max(), a.astype(np.float64).mean(axis=0), np.tanh(a)


# ---- variants of first-sweep programs with the unsupported call removed

@program(lambda s: (R(s).integers(-50, 50, 200).astype(np.int32),
                    np.where(R(s + 1).integers(-7, 8, 200) == 0, 3,
                             R(s + 1).integers(-7, 8, 200)).astype(np.int32), 7))
def int_floordiv_mod_nodivmod(a, b, k):
    return (a // b, a % b, np.floor_divide(a, k), a % k, (a * 3) // -4,
            np.remainder(a, -k), np.fmod(a, b), np.divmod(a, 5)[1])


@program(lambda s: (R(s).standard_normal((64, 20)).astype(np.float32),
                    R(s).standard_normal((20, 5)).astype(np.float32),
                    R(s).integers(0, 5, 64)))
def logistic_grad_step_nofloat(x, w, y):
    return _logistic_step(x, w, y)


@program(lambda s: (R(s).standard_normal((6, 6)),))
def small_matrix_ops_nosolve(a):
    g = a.T @ a + np.eye(6)
    return np.trace(g), np.diag(g), np.diag(a[:3, 0]), np.triu(a, 1), np.linalg.solve(g[:3, :3], a[:3, 0])


@program(lambda s: (R(s).standard_normal((40, 30)).astype(np.float32) * 3 + 1,))
def mean_var_std_ddof_split(x):
    return (np.mean(x, axis=1), np.var(x), x.std(axis=1, keepdims=True, ddof=0), x.var(axis=0, ddof=1))


# ================================================================ batch 3

@program(lambda s: (R(s).standard_normal(30), R(s + 1).standard_normal(30), R(s).standard_normal(10)))
def out_kwarg(a, b, c):
    np.add(a, b, out=a)
    np.multiply(b[::2], 2, out=b[::2])
    np.clip(c, -0.5, 0.5, out=c)
    return a.sum() + b.sum() + c.sum()


@program(lambda s: (R(s).standard_normal((8, 5)), R(s).standard_normal(12)))
def inplace_sort_fill(m, v):
    m.sort(axis=0)
    v.sort()
    v[:3] = 0
    m[...] += 1
    return m[0], v


@program(lambda s: (R(s).standard_normal(20), R(s + 1).standard_normal(20)))
def copyto_fill_put(x, y):
    np.copyto(x, y, where=y > 0)
    y.fill(2.0)
    return x, y[0]


@program(lambda s: (R(s).random(500),))
def np_histogram(x):
    h, edges = np.histogram(x, bins=10, range=(0.0, 1.0))
    return h, edges


@program(lambda s: (R(s).standard_normal((31, 6)),))
def median_percentile(x):
    return np.median(x, axis=0), np.percentile(x, 90), np.quantile(x, [0.25, 0.75], axis=0), np.median(x)


@program(lambda s: (R(s).integers(0, 5, 40).astype(np.int64),))
def unique_counts(labels):
    u, c = np.unique(labels, return_counts=True)
    return u, c


@program(lambda s: (R(s).integers(0, 3, 25).astype(np.int32), R(s).standard_normal(25)))
def stable_argsort_ties(k, v):
    return np.argsort(k, kind="stable"), np.lexsort((v, k)), np.sort(k)[::-1]


@program(lambda s: (R(s).standard_normal((7, 7)),))
def triu_indices_ix(x):
    iu = np.triu_indices(7, 1)
    rows = np.array([0, 2, 4])
    cols = np.array([1, 3])
    return x[iu], x[np.ix_(rows, cols)], np.flip(x, axis=0), np.rot90(x), np.tile(x[0], 2), np.repeat(x[:, 0], 3)


@program(lambda s: (R(s).integers(-1000, 1000, (10, 8)).astype(np.int32), R(s).integers(0, 2, (8, 4)).astype(bool)))
def integer_matmul(a, m):
    return a.T @ a, np.dot(a, m), m.T @ m, (a * 100000) @ (a.T * 100000)


@program(lambda s: (R(s).standard_normal((3, 3)), R(s).standard_normal((2, 3, 3))))
def small_linalg(a, b):
    return np.linalg.det(a), np.linalg.inv(a), np.linalg.norm(a, "fro"), np.linalg.det(b)


@program(lambda s: (R(s).standard_normal((10, 6)), R(s).random((10, 6)) > 0.3))
def reduction_where_kwarg(x, m):
    return np.sum(x, where=m), np.mean(x, axis=0, where=m), x.max(axis=1, initial=-10.0, where=m)


@program(lambda s: (R(s).standard_normal(1000).astype(np.float32),))
def reduction_dtype_kwarg(x):
    return np.sum(x, dtype=np.float64), np.mean(x, dtype=np.float64), np.cumsum(x, dtype=np.float64)[-1], x.astype(int)[:5]


@program(lambda s: (R(s).standard_normal(20).astype(np.float32), np.float32(0.5), np.int64(3)))
def numpy_scalar_args(x, a, k):
    return x * a, x * k, x + a * k, (x > a).astype(np.int64) * k


@program(lambda s: ({"w": R(s).standard_normal((4, 3)), "b": R(s).standard_normal(3)},
                    [R(s).standard_normal((5, 4)), R(s + 1).standard_normal((5, 4))]))
def pytree_args(params, xs):
    return [np.tanh(x @ params["w"] + params["b"]) for x in xs], {"s": params["b"].sum()}


@program(lambda s: (R(s).standard_normal(40), R(s).standard_normal(20)))
def strided_setitem(u, v):
    u[::2] = v
    u[1::2] *= -1
    r = u[::-1].cumsum()[::-1]
    return r


@program(lambda s: (R(s).integers(0, 10, 30), R(s).standard_normal(30)))
def int_array_iadd_float(a, x):
    a += 1.5          # NumPy raises UFuncTypeError (same_kind casting)
    return a


@program(lambda s: (R(s).standard_normal((5, 4)), R(s).integers(0, 4, (5, 1))))
def put_along_axis(x, idx):
    np.put_along_axis(x, idx, -1.0, axis=1)
    return x


@program(lambda s: (R(s).standard_normal((6, 5)),))
def global_and_row_stats(x):
    # loss-style: a global scalar and a per-row statistic returned together
    return x.sum(), x.var(axis=1)


@program(lambda s: (R(s).standard_normal((16, 10)).astype(np.float32),))
def softmax_with_global_max(x):
    g = x.max()
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return g, e.sum(axis=1)


@program(lambda s: (R(s).standard_normal(64), 30))
def roll_advection_loop(u, steps):
    for _ in range(steps):
        u[:] = u - 0.3 * (u - np.roll(u, 1))
    return u.sum()


@program(lambda s: (R(s).standard_normal((12, 12)).astype(np.float32), 10))
def game_of_life_like_int(g, steps):
    g = (g > 0).astype(np.int8)
    for _ in range(steps):
        n = sum(np.roll(np.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        g = ((n == 3) | ((g == 1) & (n == 2))).astype(np.int8)
    return g, g.sum()
