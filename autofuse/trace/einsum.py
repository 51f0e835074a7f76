"""np.einsum: subscripts parsed by NumPy's rules (explicit or implicit output, ellipsis), repeated
labels of an operand taken as its diagonal, operands combined left to right (a matmul where a
pair shares labels nothing later needs, else a broadcasting multiply), other labels summed."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError, where
from .context import check_dtype
from .indexing import getitem
from .layout import as_tracer, astype, broadcast_to, reshape, transpose
from .matmul import matmul
from .reductions import reduce
from .tracer import Tracer, fresh
from . import ufuncs

WHAT = "np.einsum"


def parse(subscripts: str, ndims: list) -> tuple[list, list]:
    """(per-operand label lists, output labels): letters as their char codes, ellipsis
    dimensions as -k counted from the right."""
    text = subscripts.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"{WHAT}: {len(terms)} operands in the subscripts {subscripts!r} but "
                         f"{len(ndims)} arrays given{where()}")
    inputs, broadcast = [], 0
    for term, ndim in zip(terms, ndims):
        labels = _letters(term, subscripts)
        if "..." in term:
            count = ndim - (len(term) - 3)
            if count < 0:
                raise ShapeError(f"{WHAT}: operand has {ndim} dimensions, fewer than the subscripts "
                                 f"{term!r} name{where()}")
            head = _letters(term.split("...")[0], subscripts)
            labels = head + list(range(-count, 0)) + labels[len(head):]
            broadcast = max(broadcast, count)
        elif len(labels) != ndim:
            raise ShapeError(f"{WHAT}: the subscripts {term!r} name {len(labels)} dimensions for an "
                             f"operand of {ndim}{where()}")
        inputs.append(labels)
    ellipsis = list(range(-broadcast, 0))
    if arrow:
        output = _letters(rhs, subscripts)
        if "..." in rhs:
            head = _letters(rhs.split("...")[0], subscripts)
            output = head + ellipsis + output[len(head):]
        elif broadcast:
            raise ShapeError(f"{WHAT}: output has more dimensions than subscripts given in einstein "
                             f"sum, but no '...' ellipsis provided to broadcast the extra dimensions"
                             f"{where()}")
        seen = [label for labels in inputs for label in labels]
        for label in output:
            if output.count(label) > 1 or label not in seen:
                raise ValueError(f"{WHAT}: output subscript {chr(label)!r} appears more than once "
                                 f"or in no operand{where()}")
    else:
        counts = [label for labels in inputs for label in labels if label >= 0]
        output = ellipsis + sorted(set(l for l in counts if counts.count(l) == 1))
    return inputs, output


def _letters(term: str, subscripts: str) -> list:
    labels = []
    for char in term.replace("...", ""):
        if not char.isalpha() or not char.isascii():
            raise ValueError(f"{WHAT}: invalid subscript {char!r} in {subscripts!r}{where()}")
        labels.append(ord(char))
    return labels


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if not operands or not isinstance(operands[0], str):
        raise UnsupportedError(f"{WHAT}: only the subscripts-string form is supported, "
                               f"np.einsum('ij,jk->ik', a, b){where()}")
    arrays = [as_tracer(a, WHAT) for a in operands[1:]]
    inputs, output = parse(operands[0], [a.ndim for a in arrays])
    result_dtype = check_dtype(dtype, WHAT) if dtype is not None else \
        np.result_type(*(a.dtype for a in arrays))
    sizes = _sizes(arrays, inputs)
    terms = [_diagonal(astype(a, result_dtype, copy=False), labels)
             for a, labels in zip(arrays, inputs)]
    terms = [(_broadcast(t, labels, sizes), labels) for t, labels in terms]
    kept = lambda rest: set(output).union(*(set(l) for _, l in rest))
    terms = [_sum_out(t, labels, kept(terms[:i] + terms[i + 1:]))
             for i, (t, labels) in enumerate(terms)]
    term, labels = terms[0]
    for index in range(1, len(terms)):
        term, labels = _combine((term, labels), terms[index], kept(terms[index + 1:]))
    term, labels = _sum_out(term, labels, set(output))
    perm = tuple(labels.index(label) for label in output)
    if perm != tuple(range(len(perm))):
        term = transpose(term, perm, WHAT)
    if out is not None:
        return ufuncs.write_out(term.node, out, WHAT, casting="unsafe")
    return fresh(term.node, scalar=term.ndim == 0)


def _sizes(arrays, inputs) -> dict:
    """label -> its size: equal in every operand, or 1 (broadcast) where not."""
    sizes = {}
    for a, labels in zip(arrays, inputs):
        own = {}
        for label, size in zip(labels, a.shape):
            if own.setdefault(label, size) != size:
                raise ShapeError(f"{WHAT}: dimensions in operand for collapsing index "
                                 f"{_name(label)!r} don't match ({own[label]} != {size}){where()}")
        for label, size in own.items():
            known = sizes.get(label)
            if known is None or known == 1:
                sizes[label] = size
            elif size != known and size != 1:
                raise ShapeError(f"{WHAT}: size of label {_name(label)!r} is {size} in one operand "
                                 f"and {known} in another{where()}")
    return sizes


def _name(label: int) -> str:
    return chr(label) if label >= 0 else "..."


def _diagonal(x: Tracer, labels: list) -> tuple:
    """The operand with each repeated label's axes collapsed to their diagonal."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        label = next(l for l in labels if labels.count(l) > 1)
        first, second = [i for i, l in enumerate(labels) if l == label][:2]
        size = x.shape[first]
        if x.shape[second] != size:
            raise ShapeError(f"{WHAT}: dimensions in operand for collapsing index {chr(label)!r} "
                             f"don't match ({size} != {x.shape[second]}){where()}")
        rest = [i for i in range(x.ndim) if i not in (first, second)]
        x = transpose(x, rest + [first, second], WHAT) if rest + [first, second] != \
            list(range(x.ndim)) else x
        x = reshape(x, x.shape[:-2] + (size * size,), WHAT)
        x = getitem(x, (Ellipsis, slice(None, None, size + 1)))
        labels = [labels[i] for i in rest] + [label]
    return x, labels


def _broadcast(x: Tracer, labels: list, sizes: dict) -> Tracer:
    shape = tuple(sizes[label] for label in labels)
    return x if shape == x.shape else broadcast_to(x, shape, WHAT)


def _sum_out(x: Tracer, labels: list, keep: set) -> tuple:
    axes = tuple(i for i, label in enumerate(labels) if label not in keep)
    if not axes:
        return x, labels
    if x.dtype == np.dtype(bool):
        x = reduce("any", x, axis=axes)
    else:
        x = reduce("sum", x, axis=axes, dtype=x.dtype)
    return x, [label for label in labels if label in keep]


def _combine(left, right, keep: set) -> tuple:
    (a, la), (b, lb) = left, right
    contracted = [l for l in la if l in lb and l not in keep]
    if contracted and a.dtype != np.dtype(bool):
        return _matmul(a, la, b, lb, contracted)
    union = la + [l for l in lb if l not in la]
    product = ufuncs.apply("multiply", _aligned(a, la, union), _aligned(b, lb, union))
    return _sum_out(product, union, keep)


def _aligned(x: Tracer, labels: list, union: list) -> Tracer:
    """`x` transposed into `union`'s order with size-1 axes for the labels it lacks."""
    order = sorted(range(len(labels)), key=lambda i: union.index(labels[i]))
    if order != list(range(len(labels))):
        x = transpose(x, order, WHAT)
    present = set(labels)
    shape, sizes = [], iter(x.shape)
    for label in union:
        shape.append(next(sizes) if label in present else 1)
    return reshape(x, tuple(shape), WHAT) if tuple(shape) != x.shape else x


def _matmul(a, la, b, lb, contracted) -> tuple:
    batch = [l for l in la if l in lb and l not in contracted]
    left = [l for l in la if l not in lb]
    right = [l for l in lb if l not in la]
    size = dict(zip(la, a.shape)) | dict(zip(lb, b.shape))
    count = lambda labels: int(np.prod([size[l] for l in labels], dtype=np.int64))
    batch_shape = tuple(size[l] for l in batch)
    a2 = transpose(a, [la.index(l) for l in batch + left + contracted], WHAT)
    a2 = reshape(a2, batch_shape + (count(left), count(contracted)), WHAT)
    b2 = transpose(b, [lb.index(l) for l in batch + contracted + right], WHAT)
    b2 = reshape(b2, batch_shape + (count(contracted), count(right)), WHAT)
    product = matmul(a2, b2, WHAT)
    shape = batch_shape + tuple(size[l] for l in left) + tuple(size[l] for l in right)
    return reshape(product, shape, WHAT), batch + left + right
