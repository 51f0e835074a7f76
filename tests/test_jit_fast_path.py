"""The jit's fast path (autofuse/jit.py): a flat positional call is looked up by fast_key() and
runs caller()'s choice. The key must tell apart every signature that needs its own entry (type,
shape, dtype, strides, NumPy's writeable flag) and never depend on an object's identity; a
cached call straight into the CUDA backend's generated host call must launch and return what
the first call did, without run()."""
import importlib

import numpy as np
import pytest

import autofuse
from autofuse.fastpath import native_key, tuple_key
from autofuse.jit import fast_key

jit_module = importlib.import_module("autofuse.jit")     # (autofuse.jit is also the decorator)


class CupyLike:
    """A device array with CuPy's attribute shape: shape and strides built as tuples per access,
    the shape settable in place (`a.shape = ...`, as CuPy allows)."""

    def __init__(self, shape, dtype=np.float32):
        self.host = np.zeros(shape, dtype)

    @property
    def shape(self):
        return tuple(self.host.shape)

    @shape.setter
    def shape(self, value):
        self.host.shape = value

    @property
    def strides(self):
        return tuple(self.host.strides)

    @property
    def dtype(self):
        return self.host.dtype

    @property
    def pointer(self):
        return self.host.ctypes.data

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "strides": self.strides,
                "data": (self.pointer, False), "version": 3}


CupyLike.__module__ = "cupy_standin"          # fast_key takes a "cupy..." module as CuPy's


class OtherCupyLike(CupyLike):
    pass


OtherCupyLike.__module__ = "cupy_standin"


def test_numpy_keys_tell_apart_shape_dtype_strides_and_writeable():
    a = np.ones((4, 6), np.float32)
    read_only = a.copy()
    read_only.flags.writeable = False
    variants = [a, np.ones((6, 4), np.float32), a.astype(np.float64), np.asfortranarray(a),
                a[:, ::2], np.ones((4, 3), np.float32), read_only]
    keys = [fast_key((v,)) for v in variants]
    assert len(set(keys)) == len(variants)
    assert fast_key((a,)) == fast_key((a.copy(),))        # an equal array, another object


def test_the_writeable_flag_keys_only_functions_that_write_an_argument():
    """A function that writes no argument reads a read-only array as a writable one: both take
    one fast entry. One that writes its argument keys on the flag from its first program on, so
    a read-only array still gets NumPy's error, from the full path."""
    a = np.arange(6.0)
    read_only = a.copy()
    read_only.flags.writeable = False
    assert fast_key((a,), writes=False) == fast_key((read_only,), writes=False)
    reads = autofuse.jit(lambda x: x * 2.0)
    for x in (a, read_only, a, read_only):
        np.testing.assert_allclose(reads(x), a * 2.0)
    assert len(reads._fast) == 1 and reads.cache_info().hits == 3

    def bump(x):
        x += 1.0
        return x * 2.0
    writes = autofuse.jit(bump)
    target = a.copy()
    np.testing.assert_allclose(writes(target), (a + 1.0) * 2.0)
    np.testing.assert_allclose(target, a + 1.0)
    with pytest.raises(autofuse.AutofuseError, match="read-only"):
        writes(read_only)
    np.testing.assert_allclose(read_only, a)               # unchanged


def test_scalar_keys_are_their_types_and_unknown_types_have_none():
    assert len({fast_key((1,)), fast_key((1.0,)), fast_key((True,))}) == 3
    assert fast_key((2,)) == fast_key((3,))

    class Sub(np.ndarray):
        pass

    for value in (None, "text", np.float32(1), np.ones(3).view(Sub), [1.0]):
        assert fast_key((np.ones(3), value)) is None


def test_device_array_keys_follow_shape_dtype_strides_and_type():
    a = CupyLike((4, 6))
    key = fast_key((a,))
    assert fast_key((CupyLike((4, 6)),)) == key
    assert fast_key((CupyLike((4, 6), np.float64),)) != key
    assert fast_key((CupyLike((6, 4)),)) != key
    assert fast_key((OtherCupyLike((4, 6)),)) != key
    a.shape = (6, 4)                                       # reshaped in place: a new key
    assert fast_key((a,)) != key and fast_key((a,)) == fast_key((CupyLike((6, 4)),))
    transposed = CupyLike((6, 4))
    transposed.host = np.zeros((4, 6), np.float32).T       # same shape, other strides
    assert fast_key((transposed,)) != fast_key((a,))


def test_an_array_reshaped_in_place_takes_another_entry():
    f = autofuse.jit(lambda x: x.sum(-1), backend="numpy")
    a = np.arange(12.0)
    assert f(a) == 66.0 and f(a) == 66.0
    a.shape = (3, 4)
    np.testing.assert_array_equal(f(a), [6.0, 22.0, 38.0])
    np.testing.assert_array_equal(f(a), [6.0, 22.0, 38.0])
    assert f.cache_info().traces == 2


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_cached_call_still_copies_a_computed_result_that_is_an_argument(backend):
    f = autofuse.jit(lambda x: x + 0, backend=backend)    # folded away: the program returns x
    a = np.arange(3.0)
    for _ in range(3):
        result = f(a)
        assert result is not a
        np.testing.assert_array_equal(result, a)
    assert f.cache_info().hits == 2


class Entry:
    def __init__(self, program, single_array=True, input_leaves=(0, 1)):
        self.program = program
        self.single_array = single_array
        self.input_leaves = input_leaves


class Program:
    def __init__(self):
        self.fast = lambda inputs: [("fast", inputs)]


def test_caller_goes_straight_to_a_generated_call_only_where_run_would_add_nothing():
    entry = Entry(Program())
    assert jit_module.caller(entry, (1, 2))((1, 2)) == ("fast", (1, 2))
    for other in (Entry(Program(), single_array=False), Entry(Program(), input_leaves=(1, 0)),
                  Entry(object())):
        call = jit_module.caller(other, (1, 2))
        assert call.func is jit_module.run and call.args == (other,)


@pytest.fixture
def generated_call(monkeypatch):
    """A jitted one-kernel function on CupyLike arrays whose CUDA program runs its generated host
    call against the stand-in library and cuLaunchKernel of test_cuda_host (no GPU)."""
    pytest.importorskip("numba_cuda")
    from numba import config
    if config.ENABLE_CUDASIM:
        pytest.skip("the simulator runs its own program class")
    import autofuse.backends as backends
    from autofuse.backends.cuda.runtime import driver as cuda_driver
    from autofuse.backends.cuda.runtime import host as cuda_host
    from test_cuda_host import KernelRecorder, Library

    from autofuse.backends import cuda
    from autofuse.backends.cuda.device import HOPPER
    monkeypatch.setattr(backends, "cuda_problem", lambda: None)
    monkeypatch.setattr(cuda, "device_for", lambda simulator: HOPPER)    # (no driver to ask)

    class CupyLikeLibrary(Library):
        name = "cupy_standin"

        def empty(self, shape, dtype):
            return CupyLike(shape, dtype)

        allocate = empty

    f = autofuse.jit(lambda a, b, c: np.maximum(a * b + c, 0), backend="cuda")
    args = tuple(CupyLike((64,)) for _ in range(3))
    program = f.lower(*args)._entry.program
    program.library = CupyLikeLibrary()
    for kernel in program.kernels:
        kernel.config = cuda_driver.Config(kernel.source.grid, kernel.source.block)
        kernel.function = kernel.source.name
    program.launch_kernel = KernelRecorder(program)
    program.launch = program.launch_packed = None
    assert cuda_host.plannable(program, args)
    program.fast, program.host_source = cuda_host.build(program)
    program.loaded = True
    return f, program, args


def test_a_cached_call_runs_the_generated_host_call_directly(generated_call, monkeypatch):
    f, program, args = generated_call
    first = f(*args)
    monkeypatch.setattr(jit_module, "run", None)          # a hit must not need run()
    second = f(*args)
    assert isinstance(second, CupyLike) and second.shape == (64,) and second is not first
    launches = program.launch_kernel.calls
    assert len(launches) == 2
    for (_, _, _, parameters), result in zip(launches, (first, second)):
        assert parameters == tuple(a.pointer for a in args) + (result.pointer,)
    assert f.cache_info().hits == 2                       # the first call's from f.lower's entry


def test_functions_with_defaults_take_the_fast_path_when_called_positionally():
    """np.fft.rfft(a, n=None, axis=-1, norm=None, out=None) and a user's f(x, scale=2.0): a
    positional call leaving the defaults out is cached by its fast key (its defaults are
    constants of the program); passing one more argument is another key, keywords the full path."""
    def scaled(x, scale=2.0):
        return x * scale
    x = np.arange(6.0)
    for fn, calls in ((scaled, [(x,), (x, 3.0)]), (np.fft.rfft, [(x,), (x, 4)])):
        jitted = autofuse.jit(fn)
        for args in calls:
            for _ in range(2):
                np.testing.assert_allclose(jitted(*args), fn(*args))
            assert jitted._fast_key(args) in jitted._fast, (fn, args)
    jitted = autofuse.jit(scaled)
    np.testing.assert_allclose(jitted(x, scale=0.5), x * 0.5)
    assert not jitted._fast


def test_functions_of_star_args_take_the_fast_path():
    """`lambda *a: ...` and a gradient of one (value_and_grad's wrapper takes *args): each call
    length has its own fast key, with the answers of the full path."""
    def total(*arrays):
        out = arrays[0]
        for a in arrays[1:]:
            out = out + a
        return out
    x, y = np.arange(6.0), np.linspace(0, 1, 6)
    jitted = autofuse.jit(total)
    for args in ((x,), (x, y), (x, y, y)):
        for _ in range(2):
            np.testing.assert_allclose(jitted(*args), total(*args))
        assert jitted._fast_key(args) in jitted._fast, len(args)
    assert jitted.cache_info().hits == 3
    both = autofuse.value_and_grad(lambda *a: (a[0] * a[1]).sum(), argnums=(0, 1))
    for _ in range(3):
        value, (dx, dy) = both(x, y)
        np.testing.assert_allclose(value, (x * y).sum())
        np.testing.assert_allclose(dx, y)
        np.testing.assert_allclose(dy, x)
    assert both._fast


def _key_cases():
    """Argument tuples whose keys must be equal exactly when their signatures are the same."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    read_only = a.copy()
    read_only.flags.writeable = False
    swapped = a.astype(">f4")
    arrays = [a, a.copy(), np.ones((6, 4), np.float32), np.asfortranarray(a), a[:, ::2],
              a[::-1], a.T, read_only, swapped, a.astype(np.float64), a.astype(np.float16),
              a.astype(np.complex64), a > 3, a.astype(np.int8), a.astype(np.uint64),
              a.astype("l"), a.astype("q"), a.astype("<f8"), a.astype(">f8"),
              a.astype("=f8").astype(np.dtype(">f8").newbyteorder()),
              np.ones((), np.float32), np.ones((0, 6), np.float32), np.ones((4, 0)),
              np.ones((1, 4, 6), np.float32)[0]]
    scalars = [1, 2, 1.0, True, False]
    cases = [(x,) for x in arrays + scalars]
    cases += [(x, y) for x in arrays[:4] for y in (arrays[:3] + scalars[:3])]
    return cases


@pytest.mark.parametrize("writes", [True, False])
def test_the_c_key_tells_calls_apart_as_the_tuple_key_does(writes):
    """native_key (autofuse/_fastkey.c) and tuple_key must agree on which calls share a key, for
    every array layout, dtype and scalar type the C key describes."""
    pytest.importorskip("autofuse._fastkey")
    cases = _key_cases()
    native = [native_key(args, writes) for args in cases]
    python = [tuple_key(args, writes) for args in cases]
    assert all(type(key) is bytes for key in native)
    for i in range(len(cases)):
        for j in range(len(cases)):
            assert (native[i] == native[j]) == (python[i] == python[j]), (cases[i], cases[j])


def test_the_c_key_leaves_other_arguments_to_the_tuple_key():
    pytest.importorskip("autofuse._fastkey")

    class Sub(np.ndarray):
        pass

    others = [None, "text", np.float32(1), np.ones(3).view(Sub), [1.0], 2 ** 70 + 0j,
              np.zeros(3, dtype=[("a", "f4")]), np.zeros(3, object), np.zeros(3, "M8[s]"),
              np.zeros(3, "U4"), CupyLike((4, 6))]
    for value in others:
        assert native_key((np.ones(3), value), True) is None, value
    assert native_key([np.ones(3)], True) is None            # (a tuple of arguments only)
    assert type(fast_key((CupyLike((4, 6)),))) is tuple      # (CuPy's keys stay tuples)
    with pytest.raises(TypeError):
        native_key((np.ones(3),))


def test_cached_numpy_calls_take_the_c_key():
    pytest.importorskip("autofuse._fastkey")
    f = autofuse.jit(lambda x, y, s: x * y + s)
    a, b = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(f(a, b, 2.0), a * b + 2.0)
    np.testing.assert_array_equal(f(a.T, a[:, 0], 2.0), a.T * a[:, 0] + 2.0)
    assert f.cache_info().hits == 2 and f.cache_info().traces == 2
    assert {type(key) for key in f._fast} == {bytes}


def test_keys_of_learned_values_pair_the_c_key_with_the_values():
    """A Python int the trace needed by value (an axis) joins the key beside the C key."""
    f = autofuse.jit(lambda x, axis: x.sum(axis))
    a = np.arange(12.0).reshape(3, 4)
    for _ in range(2):
        np.testing.assert_array_equal(f(a, 0), a.sum(0))
        np.testing.assert_array_equal(f(a, 1), a.sum(1))
    assert f.cache_info().hits == 2 and f.cache_info().traces == 2


def test_a_c_key_library_of_another_layout_is_not_used(monkeypatch):
    """An editable install's library is not rebuilt when _fastkey.c changes: fastpath uses it
    only where its KEY_VERSION is the one the tuple key agrees with."""
    module = pytest.importorskip("autofuse._fastkey")
    fastpath = importlib.import_module("autofuse.fastpath")
    assert module.KEY_VERSION == fastpath.KEY_VERSION and fastpath.native_key is module.key
    monkeypatch.setattr(module, "KEY_VERSION", fastpath.KEY_VERSION - 1)
    try:
        importlib.reload(fastpath)
        assert fastpath.native_key((np.ones(3),), True) is None
        assert type(fastpath.fast_key((np.ones(3),))) is tuple
    finally:
        monkeypatch.undo()
        importlib.reload(fastpath)
    assert fastpath.native_key is module.key
