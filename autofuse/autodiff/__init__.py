"""Gradients: autofuse.grad, value_and_grad and vjp, compiled like any other function.

`value_and_grad(f)` returns an `autofuse.jit` function of a joint program: it traces `f`, then
walks the traced graph backwards (reverse.py) emitting each op's vector-Jacobian product (the op
table's `vjp` column; structural.py for reductions, layout ops and matmul) into the same trace.
The forward and backward ops are one graph, fused and cached per signature like any program.

Differentiated arguments are float arrays or Python floats, or lists / tuples / dicts of them
(a gradient of the same structure comes back). Integer and bool values stop gradients.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import tree
from ..errors import ArgumentError, ShapeError, where
from ..jit import JitFunction, jit
from ..trace.context import current
from ..trace.tracer import Tracer, fresh
from .reverse import backward, carries, differentiable
from .structural import zeros


def _plain(fn):
    """The Python function behind `fn` (an autofuse.jit function is unwrapped)."""
    return fn.fn if isinstance(fn, JitFunction) else fn


def _argnums(argnums) -> tuple:
    if isinstance(argnums, int):
        return (argnums,)
    if not argnums or not all(isinstance(a, int) for a in argnums):
        raise ArgumentError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    return tuple(argnums)


def _differentiated(args, argnums, name: str):
    """(per argnum: (its tracer leaves, its structure)), checked differentiable."""
    taken = []
    for index in argnums:
        if not -len(args) <= index < len(args):
            raise ArgumentError(f"{name}: argnums {index} is out of range for {len(args)} "
                                f"positional arguments{where()}")
        leaves, structure = tree.flatten(args[index])
        for leaf in leaves:
            if not isinstance(leaf, Tracer) or not differentiable(leaf.dtype):
                kind = getattr(leaf, "dtype", type(leaf).__name__)
                raise ArgumentError(
                    f"{name}: argument {index} holds a {kind} value; only float arrays and Python "
                    f"floats are differentiated (integers and bools have no gradient){where()}")
            leaf.input_node = leaf.node     # its value on entry, before f may write it in place
        taken.append((leaves, structure))
    return taken


def _gradients(taken, seeds) -> list:
    """The gradient of each differentiated argument, in its own structure and dtype."""
    nodes = list(current().builder.nodes)
    wrt = [leaf.input_node for leaves, _ in taken for leaf in leaves]
    found = iter(backward(nodes, seeds, wrt))
    result = []
    for leaves, structure in taken:
        grads = []
        for leaf in leaves:
            g = next(found)
            g = zeros(leaf.shape, leaf.dtype) if g is None else g
            grads.append(_as_argument(g, leaf))
        result.append(tree.unflatten(structure, grads))
    return result


def _as_argument(g: Tracer, leaf: Tracer):
    """A Python float argument's gradient is a float; a NumPy scalar's is a scalar."""
    if leaf.weak is not None:
        return fresh(g.node, weak=float)
    return fresh(g.node, scalar=leaf.scalar)


def _joint(fn, argnums, has_aux: bool, name: str):
    """The traced function computing (f's value [and aux], the gradients)."""
    plain, numbers = _plain(fn), _argnums(argnums)

    @functools.wraps(plain)
    def joint(*args, **kwargs):
        taken = _differentiated(args, numbers, name)
        out = plain(*args, **kwargs)
        if has_aux and not (isinstance(out, tuple) and len(out) == 2):
            raise ArgumentError(f"{name}: with has_aux=True the function must return a pair "
                                f"(value, aux){where()}")
        value, aux = out if has_aux else (out, None)
        if not isinstance(value, Tracer) or value.shape != () or not differentiable(value.dtype):
            what = (f"an array of shape {value.shape} and dtype {value.dtype}"
                    if isinstance(value, Tracer) else f"a {type(value).__name__}")
            raise ShapeError(f"{name}: the function must return a float scalar to differentiate, "
                             f"got {what}; for non-scalar results use autofuse.vjp{where()}")
        seed = fresh(current().constant(1, value.dtype))
        grads = _gradients(taken, {value.node.id: seed})
        return value, aux, grads[0] if isinstance(argnums, int) else tuple(grads)

    return joint


def _name(kind: str, fn) -> str:
    return f"{kind}({getattr(_plain(fn), '__name__', 'f')})"


def value_and_grad(fn, argnums=0, has_aux=False, **options):
    """`f(*args) -> (value, gradient)` where value is f's scalar result (with `has_aux`, f returns
    `(value, aux)` and this returns `((value, aux), gradient)`); the gradient is one per argnum
    (a tuple where argnums is a tuple), in the argument's structure and dtype. `options` go to
    autofuse.jit; the result is an autofuse.jit function (compiled once per signature)."""
    name = _name("value_and_grad", fn)
    joint = _joint(fn, argnums, has_aux, name)

    @functools.wraps(_plain(fn))
    def both(*args, **kwargs):
        value, aux, gradient = joint(*args, **kwargs)
        return ((value, aux) if has_aux else value), gradient

    both.__name__ = name
    return jit(both, **options)


def grad(fn, argnums=0, has_aux=False, **options):
    """`f(*args) -> gradient` of f's scalar result (with `has_aux`, `(gradient, aux)`)."""
    name = _name("grad", fn)
    joint = _joint(fn, argnums, has_aux, name)

    @functools.wraps(_plain(fn))
    def only(*args, **kwargs):
        _, aux, gradient = joint(*args, **kwargs)
        return (gradient, aux) if has_aux else gradient

    only.__name__ = name
    return jit(only, **options)


def vjp(fn, *args, argnums=None, **options):
    """`(f(*args), pullback)`: pullback(cotangent) gives the gradients of <cotangent, f(*args)>
    with respect to the float arguments (argnums, default all positional arguments), as a tuple.
    The cotangent has the structure, shapes and dtypes of f's result."""
    plain = _plain(fn)
    numbers = tuple(range(len(args))) if argnums is None else _argnums(argnums)
    value = jit(plain, **options)(*args)
    name = _name("vjp", fn)

    def pulled(*both):
        primals, cotangent = both[:-1], both[-1]
        taken = _differentiated(primals, numbers, name)
        out_leaves, structure = tree.flatten(plain(*primals))
        seed_leaves, seed_structure = tree.flatten(cotangent)
        if len(seed_leaves) != len(out_leaves):
            raise ShapeError(f"{name}: the cotangent has {len(seed_leaves)} arrays, the result "
                             f"{len(out_leaves)}{where()}")
        seeds = {}
        for out, seed in zip(out_leaves, seed_leaves):
            if not isinstance(out, Tracer) or not carries(out.dtype):
                continue
            seed = seed if isinstance(seed, Tracer) else fresh(current().constant(seed, out.dtype))
            if seed.shape != out.shape:
                raise ShapeError(f"{name}: cotangent of shape {seed.shape} for a result of shape "
                                 f"{out.shape}{where()}")
            seed = seed.astype(out.dtype) if seed.dtype != out.dtype else seed
            previous = seeds.get(out.node.id)
            seeds[out.node.id] = seed if previous is None else previous + seed
        return tuple(_gradients(taken, seeds))

    pulled.__name__ = name
    compiled = jit(pulled, **options)
    return value, lambda cotangent: compiled(*args, np.asarray(cotangent)
                                             if isinstance(cotangent, (int, float)) else cotangent)
