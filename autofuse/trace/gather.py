"""Integer-array indexing as a gather (ir op `gather`, whose result has the index's shape):
`x[idx]`, `x[i, j]`, `x[:, idx]`, lists as indices, np.take and np.take_along_axis."""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, OutOfBoundsError, ShapeError, UnsupportedError, describe, where
from . import checks
from .context import current
from .layout import as_tracer, broadcast_to, normalize_axis, ravel, reshape
from .tracer import Tracer, fresh
from .ufuncs import to_node


def is_advanced(key) -> bool:
    """Whether NumPy would index with `key` by arrays (a list, an integer array, a traced array)."""
    from .tracer import specializable_arguments
    entries = key if isinstance(key, tuple) else (key,)
    for entry in entries:
        if isinstance(entry, Tracer) and entry.ndim == 0 and specializable_arguments(entry.node):
            return False        # a Python int argument: taken by value (indexing._parse)
    return any(isinstance(entry, (list, np.ndarray, Tracer)) for entry in entries)


def emit(data: Tracer, indexed: tuple, indices: list, kept: tuple, shape: tuple) -> Tracer:
    """data gathered along axes `indexed` by `indices` (each broadcast to `shape`); data's other
    axes follow result axes `kept`."""
    ctx = current()
    nodes = []
    for index in indices:
        node = to_node(index, np.int64, "indexing")
        if node.shape != shape:
            node = ctx.emit("broadcast_to", [node], {"shape": shape})
        nodes.append(node)
    return fresh(ctx.emit("gather", [data.node] + nodes, {"indexed": tuple(indexed),
                                                           "kept": tuple(kept)}))


def _entries(key, what: str) -> list:
    """The key's entries: None, Ellipsis, slices and ("index", array or tracer) pairs; a boolean
    array known now becomes its nonzero() indices, as NumPy reads it."""
    entries = []
    for entry in key if isinstance(key, tuple) else (key,):
        if entry is None or entry is Ellipsis or isinstance(entry, slice):
            entries.append(entry)
        elif isinstance(entry, Tracer):
            if entry.dtype.kind == "b":
                raise UnsupportedError(f"{what}: a boolean array ({describe(entry)}) among other "
                                       f"indices selects a data-dependent count; write np.where"
                                       f"{where()}")
            if entry.dtype.kind not in "iu":
                raise OutOfBoundsError(f"{what}: arrays used as indices must be of integer (or "
                                       f"boolean) type, got {entry.dtype}{where()}")
            entries.append(("index", entry))
        elif isinstance(entry, (bool, np.bool_)):
            raise UnsupportedError(f"{what}: a boolean scalar index is not supported{where()}")
        else:
            array = np.asarray(entry)
            if isinstance(entry, list) and array.size == 0:
                array = array.astype(np.int64)
            if array.dtype.kind == "b":
                entries.extend(("index", part) for part in np.nonzero(array))
            elif array.dtype.kind in "iu":
                entries.append(("index", array))
            else:
                raise OutOfBoundsError(f"{what}: only integers, slices (`:`), ellipsis (`...`), "
                                       f"numpy.newaxis (`None`) and integer or boolean arrays are "
                                       f"valid indices{where()}")
    return entries


def getitem(x: Tracer, key, basic) -> Tracer:
    """x[key] where key holds integer arrays: NumPy's advanced indexing, as one gather of the
    view `basic(x, slices)` (indexing.getitem) takes."""
    what = f"indexing {describe(x)}"
    entries = _entries(key, what)
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise ShapeError(f"{what}: an index can only have a single ellipsis ('...'){where()}")
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise OutOfBoundsError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                               f"{consumed} were indexed{where()}")
    fill = [slice(None)] * (x.ndim - consumed)
    if Ellipsis in [e for e in entries if not isinstance(e, tuple)]:
        at = next(k for k, e in enumerate(entries) if e is Ellipsis)
        entries = entries[:at] + fill + entries[at + 1:]
    else:
        entries = entries + fill
    basic_key = tuple(slice(None) if isinstance(e, tuple) else e for e in entries if e is not None)
    data = basic(x, basic_key, for_write=True)
    axes, arrays, axis = [], [], 0
    for entry in entries:
        if entry is None:
            continue
        if isinstance(entry, tuple):
            axes.append(axis)
            arrays.append(entry[1])
        axis += 1
    try:
        common = tuple(np.broadcast_shapes(*(np.shape(a) for a in arrays)))
    except ValueError:
        shapes = " ".join(str(tuple(np.shape(a))) for a in arrays)
        raise OutOfBoundsError(f"{what}: shape mismatch: indexing arrays could not be broadcast "
                               f"together with shapes {shapes}{where()}") from None
    shapes = f"array {x.shape}, indices " + ", ".join(str(tuple(np.shape(a))) for a in arrays)
    for d, index in zip(axes, arrays):
        checks.indices_in_bounds(index, data.shape[d], d, what, shapes)
    positions = [k for k, e in enumerate(entries) if isinstance(e, tuple)]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    final, gathered, kept, block = [], [], [], None
    if not adjacent:
        final.extend(common)
        gathered.extend(common)
        block = 0
    axis = 0
    for entry in entries:
        if entry is None:
            final.append(1)
        elif isinstance(entry, tuple):
            if block is None:
                block = len(gathered)
                final.extend(common)
                gathered.extend(common)
            axis += 1
        else:
            kept.append(len(gathered))
            final.append(data.shape[axis])
            gathered.append(data.shape[axis])
            axis += 1
    line = [1] * len(gathered)
    line[block:block + len(common)] = common
    indices = [_placed(index, common, tuple(line)) for index in arrays]
    result = emit(data, tuple(axes), indices, tuple(kept), tuple(gathered))
    if tuple(final) != result.shape:
        result = reshape(result, tuple(final), "indexing")
    if result.ndim == 0:
        return fresh(result.node, scalar=True)
    return result


def _placed(index, common: tuple, line: tuple) -> Tracer:
    """`index` broadcast to the indices' common shape, then laid on the result's axes `line`."""
    index = as_tracer(index, "indexing")
    if index.shape != common:
        index = broadcast_to(index, common, "indexing")
    if line != common:
        index = reshape(index, line, "indexing")
    return index


def _integer_indices(indices, what: str, boolean: bool) -> Tracer | np.ndarray:
    if not isinstance(indices, Tracer):
        indices = np.asarray(indices)
        if indices.size == 0 and indices.dtype.kind == "f":
            indices = indices.astype(np.int64)
    kinds = "iub" if boolean else "iu"
    if indices.dtype.kind not in kinds:
        raise DTypeError(f"{what}: Cannot cast array data from dtype('{indices.dtype}') to "
                         f"dtype('int64') according to the rule 'safe'{where()}")
    return indices


def take(a, indices, axis=None, out=None, mode="raise"):
    """np.take: a gather along one axis (all of a flattened where axis is None)."""
    what = "np.take"
    a = as_tracer(a, what)
    indices = _integer_indices(indices, what, boolean=True)
    if axis is None or a.ndim == 0:
        a = ravel(a)     # NumPy takes from a 0-d array as from its one element's 1-d view
        axis = 0 if axis is None else axis
    axis = normalize_axis(axis, a.ndim, what)
    size = a.shape[axis]
    shapes = f"array {a.shape}, indices {tuple(np.shape(indices))}"
    if mode == "raise":
        checks.indices_in_bounds(indices, size, axis, what, shapes)
    elif mode in ("wrap", "clip"):
        if size == 0 and np.size(indices):
            raise OutOfBoundsError(f"{what}: cannot do a non-empty take from an empty axes."
                                   f"{where()}")
        wide = as_tracer(indices, what).astype(np.int64)
        indices = np.remainder(wide, max(size, 1)) if mode == "wrap" else \
            np.clip(wide, 0, max(size - 1, 0))
    else:
        raise UnsupportedError(f"{what}: mode={mode!r} (NumPy takes 'raise', 'wrap' or 'clip')"
                               f"{where()}")
    shape = np.shape(indices)
    result_shape = a.shape[:axis] + tuple(shape) + a.shape[axis + 1:]
    line = (1,) * axis + tuple(shape) + (1,) * (a.ndim - axis - 1)
    kept = tuple(range(axis)) + tuple(range(axis + len(shape), len(result_shape)))
    result = emit(a, (axis,), [_placed(indices, tuple(shape), line)], kept, result_shape)
    if out is not None:
        from .ufuncs import write_out
        return write_out(result.node, out, what, "unsafe")
    return fresh(result.node, scalar=True) if result.ndim == 0 else result


def take_along_axis(arr, indices, axis=-1):
    """np.take_along_axis: arr's elements at `indices` along `axis`, the other axes broadcast."""
    what = "np.take_along_axis"
    arr = as_tracer(arr, what)
    indices = _integer_indices(indices, what, boolean=False)
    if axis is None:
        if np.ndim(indices) != 1:
            raise ShapeError(f"{what}: when axis=None, `indices` must have a single dimension."
                             f"{where()}")
        arr, axis = ravel(arr), 0
    if np.ndim(indices) != arr.ndim:
        raise ShapeError(f"{what}: `indices` and `arr` must have the same number of dimensions"
                         f"{where()}")
    axis = normalize_axis(axis, arr.ndim, what)
    index_shape = tuple(np.shape(indices))
    try:
        others = np.broadcast_shapes(arr.shape[:axis] + (1,) + arr.shape[axis + 1:],
                                     index_shape[:axis] + (1,) + index_shape[axis + 1:])
    except ValueError:
        raise ShapeError(f"{what}: shape mismatch: {arr.shape} and indices {index_shape} do not "
                         f"broadcast{where()}") from None
    size = arr.shape[axis]
    shapes = f"array {arr.shape}, indices {index_shape}"
    checks.indices_in_bounds(indices, size, axis, what, shapes)
    data_shape = others[:axis] + (size,) + others[axis + 1:]
    if arr.shape != data_shape:
        arr = broadcast_to(arr, data_shape, what)
    shape = others[:axis] + (index_shape[axis],) + others[axis + 1:]
    index = as_tracer(indices, what)
    if index.shape != shape:
        index = broadcast_to(index, shape, what)
    kept = tuple(d for d in range(arr.ndim) if d != axis)
    return emit(arr, (axis,), [index], kept, shape)
