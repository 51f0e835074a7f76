"""autofuse.grad / value_and_grad / vjp (autofuse/autodiff): every rule checked against central
finite differences in float64 on fresh random inputs, through broadcasting, reductions with axes,
layout ops, slicing and slice assignment, in-place updates, loops and matmul; the API's
argnums, has_aux, structures and errors."""
import numpy as np
import pytest

import autofuse
from autofuse.ir.ops import OPS, ELEMENTWISE

from conftest import rng_for

EPS = 1e-6


def numeric_grad(f, args, index):
    """Central differences of the scalar f(*args) with respect to args[index] (float64)."""
    x = np.array(args[index], dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = EPS
        plus = list(args)
        minus = list(args)
        plus[index], minus[index] = x + step, x - step
        grad[i] = (f(*plus) - f(*minus)) / (2 * EPS)
    return grad


def check(f, *args, argnums=0, rtol=1e-5, atol=1e-7, backend="cpu"):
    numbers = (argnums,) if isinstance(argnums, int) else argnums
    value, grads = autofuse.value_and_grad(f, argnums=numbers, backend=backend)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-10, atol=1e-12)
    for index, grad in zip(numbers, grads):
        expected = numeric_grad(f, args, index)
        assert np.shape(grad) == np.shape(args[index])
        np.testing.assert_allclose(grad, expected, rtol=rtol, atol=atol)
    return grads


# op -> (NumPy function, domain of its inputs); the loss weighs each element differently
UNARY_DOMAINS = {
    "arcsin": (-0.8, 0.8), "arccos": (-0.8, 0.8), "arctanh": (-0.8, 0.8), "arccosh": (1.5, 3.0),
    "log": (0.3, 3.0), "log2": (0.3, 3.0), "log10": (0.3, 3.0), "log1p": (0.3, 3.0),
    "sqrt": (0.3, 3.0), "reciprocal": (0.5, 2.0), "tan": (-1.0, 1.0),
    "absolute": (0.3, 2.0), "cbrt": (0.3, 3.0),
}
DIFFERENTIABLE = [name for name, op in OPS.items()
                  if op.kind == ELEMENTWISE and op.vjp and op.ufunc is not None]


def _inputs(name, shapes, rng):
    low, high = UNARY_DOMAINS.get(name, (-2.0, 2.0))
    if name in ("power",):
        return [rng.uniform(0.5, 2.0, shapes[0]), rng.uniform(-1.5, 1.5, shapes[1])]
    if name in ("divide", "floor_divide", "remainder", "arctan2", "hypot"):
        return [rng.uniform(0.5, 2.0, shapes[0]), rng.uniform(0.5, 2.0, shapes[1])]
    if name in ("maximum", "minimum", "fmax", "fmin", "copysign"):
        return [rng.uniform(-2, 2, s) for s in shapes]
    return [rng.uniform(low, high, s) for s in shapes]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_every_elementwise_rule_matches_finite_differences_with_broadcasting(name):
    op = OPS[name]
    rng = rng_for(hash(name) % 1000)
    shapes = [(3, 4), (4,), (3, 1)][:op.arity]
    args = _inputs(name, shapes, rng)
    weights = rng.standard_normal((3, 4))
    ufunc = op.ufunc

    def loss(*xs):
        return (ufunc(*xs) * weights).sum()
    numbers = tuple(k for k, rule in enumerate(op.vjp) if rule is not None)
    check(loss, *args, argnums=numbers)


def test_maximum_and_minimum_split_ties_evenly_and_where_routes_the_gradient():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 0.0])
    gx, gy = autofuse.grad(lambda a, b: np.maximum(a, b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    g = autofuse.grad(lambda a: (a.max() * 2.0))(np.array([3.0, 1.0, 3.0]))
    np.testing.assert_array_equal(g, [1.0, 0.0, 1.0])
    g = autofuse.grad(lambda a, b: np.where(a > 1.5, a * a, b).sum())(x, y)
    np.testing.assert_array_equal(g, [0.0, 4.0, 6.0])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod", "var", "std"])
def test_reductions_along_axes(reduction, axis):
    rng = rng_for(3)
    x = rng.uniform(0.5, 1.5, (3, 4, 2))
    if reduction in ("max", "min", "prod", "var", "std") and isinstance(axis, tuple):
        axis = (0, 2)
    weights = rng.standard_normal(np.sum(x, axis=axis).shape)

    def loss(a):
        return (getattr(a, reduction)(axis=axis) * weights).sum()
    check(loss, x)


def test_prod_with_zeros_gives_the_product_of_the_others():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    g = autofuse.grad(lambda a: a.prod(axis=1).sum())(x)
    np.testing.assert_array_equal(g, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]])


def test_layout_ops_slices_and_concatenation():
    rng = rng_for(4)
    x = rng.standard_normal((4, 6))
    w = rng.standard_normal((6, 4))

    def loss(a):
        b = a.T * w                                  # transpose
        c = a.reshape(3, 8)[:, ::-2]                 # reshape, negative-step slice
        d = np.concatenate([a[1:3], a[:, :3].reshape(2, 6)], axis=0)
        e = np.broadcast_to(a[:, None, :], (4, 2, 6)) * np.arange(2.0)[None, :, None]
        return (b ** 2).sum() + (c * 3.0).sum() + (d * d * d).sum() + e.sum() + a[-1, -1]
    check(loss, x)


def test_slice_assignment_and_in_place_updates():
    rng = rng_for(5)
    x = rng.standard_normal((5, 5))
    v = rng.standard_normal(3)

    def loss(a, b):
        a = a.copy()
        a[1:4, 2] = b * 2.0              # overwritten values get no gradient
        a *= a
        a[0] += 1.0
        return (np.sin(a) * np.arange(25.0).reshape(5, 5)).sum()
    check(loss, x, v, argnums=(0, 1))


def test_an_argument_written_in_place_is_differentiated_at_its_value_on_entry():
    x = np.array([1.0, 2.0, 3.0])

    def loss(a):
        a *= 3.0
        return (a * a).sum()
    g = autofuse.grad(loss)(x.copy())
    np.testing.assert_allclose(g, 18.0 * x)


def test_an_unrolled_loop_of_stencil_steps():
    rng = rng_for(6)
    u = rng.standard_normal(12)

    def loss(u0):
        u = u0.copy()
        for _ in range(5):
            u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        return (u * u).sum()
    check(loss, u)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((4,), (4, 3)),
                                    ((3, 4), (4,)), ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul_of_every_operand_rank(shapes):
    rng = rng_for(7)
    a, b = (rng.standard_normal(s) for s in shapes)

    def loss(p, q):
        return np.tanh(p @ q).sum()
    check(loss, a, b, argnums=(0, 1))


def test_float32_inputs_get_float32_gradients_close_to_float64_ones():
    rng = rng_for(8)
    x = rng.standard_normal((8, 16)).astype(np.float32)

    def layernorm_loss(a):
        mu = a.mean(-1, keepdims=True)
        var = ((a - mu) ** 2).mean(-1, keepdims=True)
        return (((a - mu) / np.sqrt(var + 1e-5)) * np.arange(16, dtype=np.float32)).sum()
    g32 = autofuse.grad(layernorm_loss)(x)
    g64 = autofuse.grad(layernorm_loss)(x.astype(np.float64))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-3, atol=1e-3)


def test_non_contiguous_and_negative_stride_inputs():
    rng = rng_for(9)
    base = rng.standard_normal((6, 8))
    check(lambda a: (np.exp(a) * a).sum(), base[::2, ::-3])


def test_argnums_has_aux_structures_and_python_floats():
    rng = rng_for(10)
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((4, 3))

    def loss(p, a, scale):
        out = np.tanh(a @ p["w"] + p["b"]) * scale
        return (out ** 2).sum(), out
    (value, out), (gp, gscale) = autofuse.value_and_grad(loss, argnums=(0, 2), has_aux=True)(
        params, x, 1.5)
    assert set(gp) == {"w", "b"} and isinstance(gscale, float)
    np.testing.assert_allclose(out, np.tanh(x @ params["w"] + params["b"]) * 1.5)
    expected_w = numeric_grad(lambda w: loss({"w": w, "b": params["b"]}, x, 1.5)[0],
                              [params["w"]], 0)
    np.testing.assert_allclose(gp["w"], expected_w, rtol=1e-5, atol=1e-7)
    expected_scale = (loss(params, x, 1.5 + EPS)[0] - loss(params, x, 1.5 - EPS)[0]) / (2 * EPS)
    assert gscale == pytest.approx(expected_scale, rel=1e-5)
    g, aux = autofuse.grad(loss, has_aux=True)(params, x, 1.5)
    np.testing.assert_allclose(g["b"], gp["b"])


def test_vjp_of_a_non_scalar_result():
    rng = rng_for(11)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    value, pullback = autofuse.vjp(lambda a, b: np.tanh(a @ b), x, w)
    np.testing.assert_allclose(value, np.tanh(x @ w))
    ct = rng.standard_normal((4, 5))
    gx, gw = pullback(ct)
    d = ct * (1 - np.tanh(x @ w) ** 2)
    np.testing.assert_allclose(gx, d @ w.T)
    np.testing.assert_allclose(gw, x.T @ d)


def test_gradients_compile_once_per_signature_and_compose_with_jit():
    f = autofuse.jit(lambda a: (np.exp(a) ** 2).sum())
    g = autofuse.grad(f)
    x = np.linspace(0.0, 1.0, 7)
    for _ in range(3):
        np.testing.assert_allclose(g(x), 2 * np.exp(2 * x))
    assert g.cache_info().traces == 1
    np.testing.assert_allclose(autofuse.jit(g)(x), 2 * np.exp(2 * x))
    assert "(gradient)" in g.lower(x).as_text("fused")


def test_integer_parts_stop_gradients_and_the_numpy_backend_agrees():
    x = np.array([0.5, 1.5, 2.5])

    def loss(a):
        k = np.floor(a).astype(np.int64)          # no gradient through floor or the int cast
        return (a * k).sum() + (a > 1).sum() * a.sum()
    for backend in ("cpu", "numpy"):
        g = autofuse.grad(loss, backend=backend)(x)
        np.testing.assert_allclose(g, np.floor(x) + 2.0)


def test_errors_name_the_problem_and_the_line():
    x = np.ones(3)
    with pytest.raises(autofuse.ShapeError, match="(?s)grad.*float scalar.*shape \\(3,\\).*test_autodiff.py"):
        autofuse.grad(lambda a: a * 2.0)(x)
    with pytest.raises(autofuse.ArgumentError, match="argument 0 holds a int64"):
        autofuse.grad(lambda a: (a * 2).sum())(np.arange(3))
    with pytest.raises(autofuse.ArgumentError, match="argnums 3 is out of range"):
        autofuse.grad(lambda a: a.sum(), argnums=3)(x)


def test_attention_gradients_and_their_joint_program_partitions_without_a_cycle():
    """The joint program of attention's gradient once made the partitioner merge the loss with the
    output's cotangent (siblings reading r) while the softmax rows held forward and backward
    nodes: no path between the merged nodes, a cycle between kernels. Merges now see other
    groups as the kernels they will be (fusion/order.py)."""
    rng = rng_for(12)
    q, k, v, r = (rng.standard_normal((2, 5, 3)) for _ in range(4))

    def loss(a, b, c):
        s = (a @ np.swapaxes(b, -1, -2)) * 0.5
        e = np.exp(s - s.max(-1, keepdims=True))
        return ((e / e.sum(-1, keepdims=True)) @ c * r).sum()
    check(loss, q, k, v, argnums=(0, 1, 2))
    for backend in ("cpu", "cuda"):
        autofuse.value_and_grad(loss, argnums=(0, 1, 2), backend=backend).lower(q, k, v)


def _loss_of(program, weights):
    """sum(w * out) over the program's float results, as a float64 scalar."""
    def loss(*args):
        args = [a.copy() if hasattr(a, "copy") else a for a in args]   # (argument updates)
        total = 0.0
        for out, w in zip(program.fn(*args), weights):
            if w is not None:
                total = total + (np.asarray(out, np.float64) * w).sum()
        return total
    return loss


@pytest.mark.parametrize("seed", range(80))
def test_gradients_of_random_programs_match_finite_differences(seed):
    """The fuzzer's random programs (tests/programs.py: broadcasts, layouts, reductions, matmuls,
    in-place updates) with their float inputs in float64, differentiated through every float
    result: a wrong rule or a partition that cannot hold the joint program shows here."""
    from programs import FUZZ_KINDS_BEFORE_GATHERS
    _random_program_gradients(seed, FUZZ_KINDS_BEFORE_GATHERS)


@pytest.mark.parametrize("seed", range(160))
def test_gradients_of_random_programs_with_gathers(seed):
    """The same with gathers drawn (integer-array indexing, np.take, take_along_axis; an index
    read twice accumulates its cotangent) and updates at gathered indices: the seeds that draw
    one (about a quarter)."""
    from programs import WITH_GATHERS
    _random_program_gradients(seed, WITH_GATHERS, drawn=("np.take(", "np.take_along_axis(",
                                                         ".astype(np.int64) - 1]",
                                                         ".astype(np.int32) - 1]"))


def _random_program_gradients(seed, kinds, drawn=None):
    from programs import seeded_program
    program = seeded_program(seed, kinds=kinds)
    if drawn is not None and not any(text in program.source for text in drawn):
        pytest.skip("no statement of the kind asked for")
    args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in program.inputs(seed)]
    floats = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f" and a.size)
    outs = program.fn(*[a.copy() for a in args])
    rng = rng_for(seed)
    weights = [rng.standard_normal(np.shape(o)) if np.asarray(o).dtype.kind == "f" else None
               for o in outs]
    if not floats or all(w is None for w in weights):
        pytest.skip("no float input or result")
    loss = _loss_of(program, weights)
    with np.errstate(all="ignore"):
        if not np.isfinite(loss(*args)):
            pytest.skip("the loss is not finite here (a division by zero, say)")
    check(loss, *args, argnums=floats, rtol=1e-4, atol=1e-6)


_W = rng_for(90).standard_normal((4, 7))
_IDX = np.array([0, 3, 3, -1])
GATHERS = {
    "rows": lambda x: (x[_IDX] * _W).sum(),
    "take along axis 1": lambda x: (np.take(x, np.array([6, 0, 0, -2]), axis=1) ** 2).sum(),
    "two index arrays": lambda x: np.sin(x[np.array([1, 2, 2]), np.array([0, -1, -1])]).sum(),
    "take_along_axis": lambda x: (np.take_along_axis(x, np.argsort(x, axis=1)[:, :3], axis=1)
                                  * np.arange(3)).sum(),
    "of a computed value": lambda x: (np.exp(x)[_IDX][:, 2:] * _W[:, 2:]).sum(),
    "empty index": lambda x: x[np.array([], np.int64)].sum() + x.sum(),
}


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gather_gradients_add_back_where_each_index_read(name, backend):
    """A gather's rule: the cotangent of each read added at the position read (indices read
    twice get both; negative ones from the end; kept axes by their coordinates)."""
    x = rng_for(91).standard_normal((5, 7))
    check(GATHERS[name], x, backend=backend)


SORTS = {
    "sort rows": lambda x: (np.sort(x, axis=1) * _W7).sum(),
    "sort columns": lambda x: (np.sort(x, axis=0) * _W7).sum(),
    "sort flattened": lambda x: (np.sort(x, axis=None) * _W7.ravel()).sum(),
    "median": lambda x: (np.median(x, axis=1) * _W7[:, 0]).sum(),
    "quantiles": lambda x: (np.quantile(x, [0.3, 0.8], axis=0) * _W7[:2]).sum(),
    "percentile of a computed value": lambda x: np.percentile(np.exp(x), 40),
    "nanmedian": lambda x: np.nanmedian(np.where(x > 1.5, np.nan, x), axis=0).sum(),
}
_W7 = rng_for(92).standard_normal((5, 7))


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name", sorted(SORTS))
def test_sort_gradients_go_back_to_where_each_value_came_from(name, backend):
    """np.sort's rule (and through it median, quantiles, percentiles): a sorted value's
    cotangent added at its place in the input, by the row's stable order."""
    x = rng_for(93).standard_normal((5, 7))
    check(SORTS[name], x, backend=backend)


@pytest.mark.parametrize("seed", range(160))
def test_gradients_of_random_programs_with_sorts(seed):
    """The fuzzer's programs with sorts and order statistics drawn (the seeds that draw one)."""
    from programs import WITH_SORTS
    _random_program_gradients(seed, WITH_SORTS, drawn=("np.sort(", "np.median(", "np.quantile(",
                                                       "np.percentile(", "np.nanmedian("))


# paths through complex values (autodiff/complexes.py's convention); x is real, of shape (4, 6)
COMPLEX_PATHS = {
    "abs_fft": lambda x: np.abs(np.fft.fft(x)).sum(),
    "exp_i_real": lambda x: (np.exp(1j * x).real * x).sum(),
    "abs_of_complex_cast": lambda x: np.abs(x + 0j).sum() + x.sum(),
    "power_spectrum": lambda x: (np.abs(np.fft.rfft(x)) ** 2 * np.arange(4)).sum(),
    "filtered": lambda x: (np.fft.irfft(np.fft.rfft(x) * np.arange(4), n=6) * x).sum(),
    "padded_fft_ortho": lambda x: (np.fft.fft(x, n=9, norm="ortho").real * np.arange(9)).sum(),
    "cropped_ifft_forward": lambda x: np.abs(np.fft.ifft(x * (1 + 2j), n=4, norm="forward")).sum(),
    "fft2_padded": lambda x: (np.abs(np.fft.fft2(x, s=(5, 4), axes=(0, 1))) * np.arange(4)).sum(),
    "rfftn_axes": lambda x: (np.abs(np.fft.rfftn(x, axes=(1, 0))) ** 1.5).sum(),
    "irfftn_odd_forward": lambda x: (np.fft.irfftn(np.fft.fft2(x + 0.5j * x), s=(3, 5),
                                                   axes=(0, 1), norm="forward") ** 2).sum(),
    "analytic": lambda x: np.abs(np.exp(1j * x) * np.log(x + 3 + 1j) / np.sqrt(x + 2j)
                                 + np.sin(x * 1j) ** 2 + np.tanh(x - 1j)).sum(),
    "power_reciprocal_conj": lambda x: (np.conj((x + 1j) ** 2.5)
                                        * np.reciprocal(x + 0.5j)).real.sum()
    + np.imag((x - 1j) ** (x + 0.3j)).sum(),
    "parts_and_angle": lambda x: (np.angle(x + 2j) * np.imag(x * (1 - 1j))).sum(),
    "cumprod_prod": lambda x: np.abs(np.cumprod(x + 0.3j, axis=1)).sum()
    + np.real(np.prod(x[:2] + 1j, axis=0)).sum(),
    "where_mean": lambda x: np.abs(np.where(x > 0, x * 1j, x + 2j)).mean()
    + np.abs((x + 1j).mean(0)).sum(),
    "matmul": lambda x: np.abs((x + 1j * x ** 2) @ (x.T * (0.5 - 1j))).sum(),
    # (compared with the float64 path's differences: a float32 loss has none worth taking)
    "complex64": lambda x: np.abs(np.fft.fft(x.astype(np.float32) * (1 + 1j))).astype(
        np.float64).sum(),
}


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("name", sorted(COMPLEX_PATHS))
def test_gradients_through_complex_values(name, backend):
    """A real loss of complex intermediates (transforms with n= padding and cropping, norms, real
    transforms in several axes, analytic functions, parts, products): central differences in
    float64 (complex64's path within float32's)."""
    x = rng_for(94).standard_normal((4, 6))
    fn = COMPLEX_PATHS[name]
    if name != "complex64":
        check(fn, x, backend=backend)
        return
    value, grad = autofuse.value_and_grad(fn, backend=backend)(x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-6)
    wide = numeric_grad(lambda x: np.abs(np.fft.fft(x * (1 + 1j))).sum(), (x,), 0)
    assert grad.dtype == np.float64
    np.testing.assert_allclose(grad, wide, rtol=1e-4, atol=1e-4)


def test_complex_results_take_complex_cotangents_and_complex_arguments_are_refused():
    """vjp of a complex result: its cotangent c stands for the loss Re(sum(conj(c) * f(x))). A
    complex argument to differentiate is refused (its gradient would need a convention chosen for
    the user); a complex value off every path changes nothing."""
    rng = rng_for(95)
    x, c = rng.standard_normal(8), rng.standard_normal(8) + 1j * rng.standard_normal(8)
    value, pullback = autofuse.vjp(lambda x: np.fft.fft(x * x), x)
    np.testing.assert_allclose(value, np.fft.fft(x * x), atol=1e-12)
    (got,) = pullback(c)
    np.testing.assert_allclose(got, numeric_grad(
        lambda x: np.real(np.conj(c) * np.fft.fft(x * x)).sum(), (x,), 0), rtol=1e-5, atol=1e-7)
    with pytest.raises(autofuse.ArgumentError, match="only float arrays"):
        autofuse.grad(lambda z: np.abs(z).sum())(x + 1j)
    value, grad = autofuse.value_and_grad(lambda x, z: (x * x).sum() + np.abs(z).sum() * 0)(
        x, x + 1j)
    np.testing.assert_allclose(grad, 2 * x)
