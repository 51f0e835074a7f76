"""Bad input raises an AutofuseError naming the NumPy call, the shapes/dtypes and the user's line.

Every offending line below carries the marker comment `# <- error`; the error message must name
this file and that line.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import autofuse

from conftest import random_array

MARK = "# <- error"


def marked_line(fn) -> int:
    """The line number of the marked line inside `fn`'s source."""
    lines, start = inspect.getsourcelines(fn)
    found = [start + i for i, text in enumerate(lines) if MARK in text]
    assert len(found) == 1, f"{fn.__name__} needs exactly one marked line"
    return found[0]


def raises(error_type, call, fn, *words):
    """`call()` raises `error_type` (an AutofuseError) whose message names `words`, this file and
    the marked line of `fn`; returns the message."""
    with pytest.raises(error_type) as info:
        call()
    assert isinstance(info.value, autofuse.AutofuseError)
    message = str(info.value)
    assert "test_errors.py" in message, message
    assert f":{marked_line(fn)}" in message, f"line {marked_line(fn)} not in: {message}"
    for word in words:
        assert word in message, f"{word!r} not in: {message}"
    return message


@pytest.fixture
def x(rng):
    return random_array((3, 4), np.float32, rng)


def test_python_if_on_traced_value(x):
    def f(a):
        if a.sum() > 0:  # <- error
            return a
        return -a
    raises(autofuse.TraceError, lambda: autofuse.jit(f)(x), f, "bool()", "bool[]", "np.where")


@pytest.mark.parametrize("conversion", ["bool", "int", "float", "item", "tolist", "index", "while"])
def test_value_dependent_python(conversion, x):
    fn = {"bool": _bool_of, "int": _int_of, "float": _float_of, "item": _item_of,
          "tolist": _tolist_of, "index": _index_with, "while": _while_on}[conversion]
    words = {"bool": ["bool()", "float32[]"], "int": ["int()", "float32[]"],
             "float": ["float()", "float32[]"], "item": [".item()", "float32[]"],
             "tolist": [".tolist()", "float32[3, 4]"], "index": ["index", "int64[]"],
             "while": ["bool()", "bool[]"]}[conversion]
    raises(autofuse.TraceError, lambda: autofuse.jit(fn)(x), fn, *words)


def _bool_of(a):
    return bool(a[0, 0])  # <- error


def _int_of(a):
    return int(a.sum())  # <- error


def _float_of(a):
    return float(a[0, 0])  # <- error


def _item_of(a):
    return a.max().item()  # <- error


def _tolist_of(a):
    return a.tolist()  # <- error


def _index_with(a):
    return list(range(3))[a[0, 0].astype(np.int64)]  # <- error


def _while_on(a):
    while a.min() < 0:  # <- error
        a = a + 1
    return a


@pytest.mark.parametrize("name,nearest", [("spacing", None), ("linalg.eig", None),
                                          ("linalg.svd", None), ("i0", None),
                                          ("frexp", "np.ldexp")])
def test_unsupported_numpy_function(name, nearest, x):
    """The call and the user's line come first, then at most a few close spellings."""
    target = np
    for part in name.split("."):
        target = getattr(target, part)

    def f(a):
        return target(a)  # <- error
    message = raises(autofuse.UnsupportedError, lambda: autofuse.jit(f)(x), f, f"np.{name}")
    assert message.startswith(f"np.{name} is not supported"), message
    assert message.index("test_errors.py") < message.index("\n  ", message.index("\n  at") + 1)
    if nearest is not None:
        assert nearest in message.split("nearest supported: ")[1], message
        assert message.split("nearest supported: ")[1].count(",") <= 3
    else:
        assert "np.exp" not in message, message


def test_unsupported_ufunc_method(x):
    def f(a):
        return np.add.reduceat(a, [0])  # <- error
    raises(autofuse.UnsupportedError, lambda: autofuse.jit(f)(x), f, "np.add.reduceat")


@pytest.mark.parametrize("case", ["sum-out", "ufunc-where", "ufunc-order", "any-initial"])
def test_unsupported_keyword_arguments(case, x):
    fn, words = {
        "sum-out": (_sum_out, ["np.sum", "out="]),
        "ufunc-where": (_ufunc_where, ["np.add", "where="]),
        "ufunc-order": (_ufunc_order, ["np.exp", "order="]),
        "any-initial": (_any_initial, ["np.any", "initial="]),
    }[case]
    raises(autofuse.UnsupportedError, lambda: autofuse.jit(fn)(x), fn, *words)


def _sum_out(a):
    return np.sum(a, axis=0, out=a[0])  # <- error


def _ufunc_where(a):
    return np.add(a, 1, where=a > 0)  # <- error


def _ufunc_order(a):
    return np.exp(a, order="F")  # <- error


def _any_initial(a):
    return (a > 0).any(initial=True)  # <- error


def test_shapes_that_do_not_broadcast(rng):
    def f(a, b):
        return a + b  # <- error
    a, b = random_array((3, 4), np.float32, rng), random_array((3,), np.float32, rng)
    with pytest.raises(ValueError):
        f(a, b)
    raises(autofuse.ShapeError, lambda: autofuse.jit(f)(a, b), f, "np.add", "(3, 4)", "(3,)")


def test_ufunc_call_that_does_not_broadcast(rng):
    def f(a, b):
        return np.maximum(a, b.T)  # <- error
    a = random_array((2, 3), np.float32, rng)
    raises(autofuse.ShapeError, lambda: autofuse.jit(f)(a, a), f, "np.maximum", "(2, 3)", "(3, 2)")


def test_setitem_that_does_not_broadcast(x):
    def f(a):
        a[:, :2] = a[:, :3]  # <- error
        return a
    raises(autofuse.ShapeError, lambda: autofuse.jit(f)(x), f, "(3, 3)", "(3, 2)")


@pytest.mark.parametrize("case", ["sum", "argmax", "transpose", "expand_dims", "concatenate",
                                  "moveaxis", "index", "too-many-indices", "squeeze"])
def test_axes_out_of_range(case, x):
    fn, words = {
        "sum": (_sum_axis, ["np.sum", "axis 2", "dimension 2"]),
        "argmax": (_argmax_axis, ["np.argmax", "axis -3"]),
        "transpose": (_transpose_axes, ["transpose", "(1, 0, 2)"]),
        "expand_dims": (_expand_axis, ["expand_dims", "axis 4"]),
        "concatenate": (_concat_axis, ["concatenate", "axis 2"]),
        "moveaxis": (_moveaxis_axis, ["moveaxis", "axis 5"]),
        "index": (_index_oob, ["index 3", "size 3"]),
        "too-many-indices": (_too_many, ["too many indices", "2-dimensional"]),
        "squeeze": (_squeeze_axis, ["squeeze", "(3, 4)"]),
    }[case]
    with pytest.raises((ValueError, IndexError, np.exceptions.AxisError)):
        fn(x.copy())
    raises(autofuse.ShapeError, lambda: autofuse.jit(fn)(x), fn, *words)


def _sum_axis(a):
    return np.sum(a, axis=2)  # <- error


def _argmax_axis(a):
    return a.argmax(axis=-3)  # <- error


def _transpose_axes(a):
    return a.transpose(1, 0, 2)  # <- error


def _expand_axis(a):
    return np.expand_dims(a, 4)  # <- error


def _concat_axis(a):
    return np.concatenate([a, a], axis=2)  # <- error


def _moveaxis_axis(a):
    return np.moveaxis(a, 5, 0)  # <- error


def _index_oob(a):
    return a[3]  # <- error


def _too_many(a):
    return a[0, 0, 0]  # <- error


def _squeeze_axis(a):
    return a.squeeze(axis=1)  # <- error


@pytest.mark.parametrize("case", ["@", "matmul", "dot", "batch"])
def test_matmul_mismatch(case, rng):
    a = random_array((2, 3), np.float32, rng)
    b = random_array((4, 5), np.float32, rng)
    fn, words = {"@": (_at, ["@", "(2, 3)", "(4, 5)"]),
                 "matmul": (_matmul_fn, ["np.matmul", "(2, 3)", "(4, 5)"]),
                 "dot": (_dot_fn, ["np.dot", "(2, 3)", "(4, 5)"]),
                 "batch": (_batch_mismatch, ["(2, 2, 3)", "(3, 3, 4)"])}[case]
    with pytest.raises(ValueError):
        fn(a, b)
    raises(autofuse.ShapeError, lambda: autofuse.jit(fn)(a, b), fn, *words)


def _at(a, b):
    return a @ b  # <- error


def _matmul_fn(a, b):
    return np.matmul(a, b)  # <- error


def _dot_fn(a, b):
    return np.dot(a, b)  # <- error


def _batch_mismatch(a, b):
    return np.broadcast_to(a, (2, 2, 3)) @ np.ones((3, 3, 4), np.float32)  # <- error


def test_reshape_mismatch(x):
    def f(a):
        return a.reshape(5, -1)  # <- error
    raises(autofuse.ShapeError, lambda: autofuse.jit(f)(x), f, "reshape", "12", "(5, -1)")


@pytest.mark.parametrize("value", [np.ones(3, np.clongdouble), np.array([1, "a"], dtype=object),
                                   np.array(["ab", "c"]), np.clongdouble(1j)],
                         ids=["clongdouble", "object", "str", "clongdouble-scalar"])
def test_unsupported_argument_dtypes(value):
    def f(a):
        return a * 2

    def call():
        return autofuse.jit(f)(value)  # <- error
    raises(autofuse.DTypeError, call, test_unsupported_argument_dtypes, str(value.dtype),
           "argument 0", "supported")


def test_complex_ordering_in_function(x):
    def f(a):
        return a * 1j < a  # <- error
    raises(autofuse.UnsupportedError, lambda: autofuse.jit(f)(x), f, "np.less", "complex")


def test_complex_without_a_numpy_loop(x):
    def f(a):
        return np.floor(a + np.array([1j, 2, 3, 4]))  # <- error
    raises(autofuse.DTypeError, lambda: autofuse.jit(f)(x), f, "np.floor", "complex128")


def test_dtype_without_a_loop(x):
    def f(a):
        return a & 1  # <- error
    raises(autofuse.DTypeError, lambda: autofuse.jit(f)(x), f, "np.bitwise_and", "float32")


def test_str_argument_without_static_argnames(x):
    def f(a, mode):
        return a if mode == "id" else -a

    def call():
        return autofuse.jit(f)(x, "id")  # <- error
    raises(autofuse.ArgumentError, call, test_str_argument_without_static_argnames,
           "str", "static_argnames")
    assert_static_works = autofuse.jit(f, static_argnames="mode")(x, "id")
    np.testing.assert_array_equal(assert_static_works, x)


def test_object_argument(x):
    def f(a, b):
        return a

    def call():
        return autofuse.jit(f)(x, object())  # <- error
    raises(autofuse.ArgumentError, call, test_object_argument, "object", "static_argnames")


def test_object_inside_function(x):
    def f(a):
        return a + object()  # <- error
    raises(autofuse.ArgumentError, lambda: autofuse.jit(f)(x), f, "np.add", "object")


@pytest.mark.parametrize("case", ["too-many", "too-few", "typo", "twice"])
def test_wrong_arguments(case, x):
    def f(a, b=1.0):
        return a * b
    jitted = autofuse.jit(f)
    calls = {"too-many": _too_many_args, "too-few": _too_few_args, "typo": _keyword_typo,
             "twice": _given_twice}
    with pytest.raises(TypeError):
        calls[case](f, x)
    words = {"too-many": ["f()", "too many"], "too-few": ["f()", "'a'"], "typo": ["f()", "bb"],
             "twice": ["f()", "multiple values"]}[case]
    raises(autofuse.ArgumentError, lambda: calls[case](jitted, x), calls[case], *words)


def _too_many_args(fn, x):
    return fn(x, 2.0, 3.0)  # <- error


def _too_few_args(fn, x):
    return fn()  # <- error


def _keyword_typo(fn, x):
    return fn(x, bb=2.0)  # <- error


def _given_twice(fn, x):
    return fn(x, a=x)  # <- error


def test_failed_call_modifies_no_argument(rng):
    def f(a, b):
        a += 1
        b[0] = 5
        return a @ b  # <- error
    a, b = random_array((2, 3), np.float64, rng), random_array((2, 3), np.float64, rng)
    before = (a.copy(), b.copy())
    raises(autofuse.ShapeError, lambda: autofuse.jit(f)(a, b), f, "@")
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])


def test_failed_call_at_run_time_modifies_no_argument(rng):
    def f(a, s):
        a += 1
        return a + s
    a = random_array((3,), np.int8, rng)
    before = a.copy()

    def call():
        return autofuse.jit(f)(a, 1000)  # <- error
    raises(autofuse.DTypeError, call, test_failed_call_at_run_time_modifies_no_argument,
           "1000", "int8")
    np.testing.assert_array_equal(a, before)


def test_returning_an_unsupported_object(x):
    def f(a):
        return object()
    with pytest.raises(autofuse.TraceError, match="returned a object"):
        autofuse.jit(f)(x)


def test_advanced_indexing_is_a_clear_error(x):
    def f(a):
        return a[a > 0]  # <- error
    raises(autofuse.UnsupportedError, lambda: autofuse.jit(f)(x), f, "boolean selection",
           "float32[3, 4]", "np.where")

    def g(a):
        a[:, [0, 2]] = 1  # <- error
        return a
    raises(autofuse.UnsupportedError, lambda: autofuse.jit(g)(x), g, "advanced indexing")


def test_assignment_into_read_only_argument(x):
    x.setflags(write=False)

    def f(a):
        a[0] = 1  # <- error
        return a
    raises(autofuse.TraceError, lambda: autofuse.jit(f)(x), f, "read-only", "float32[4]")


def test_error_classes_are_standard_exceptions_too():
    assert issubclass(autofuse.ShapeError, ValueError)
    assert issubclass(autofuse.DTypeError, TypeError)
    assert issubclass(autofuse.ArgumentError, TypeError)
    assert issubclass(autofuse.UnsupportedError, NotImplementedError)
    for cls in (autofuse.TraceError, autofuse.ShapeError, autofuse.DTypeError,
                autofuse.ArgumentError, autofuse.UnsupportedError, autofuse.BackendError):
        assert issubclass(cls, autofuse.AutofuseError)
    assert re.search("np.sum", str(autofuse.UnsupportedError("np.sum")))
