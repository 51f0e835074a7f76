"""Binding a call's arguments: static values, traced leaves, and the cache key of the signature."""
from __future__ import annotations

import difflib
import inspect

import numpy as np

from . import tree
from .arrays import interface
from .errors import ArgumentError, where


class Binder:
    """Turns (args, kwargs) into (cache key, leaves, statics, structure) for one jitted function."""

    def __init__(self, fn, static_argnames=(), static_argnums=()):
        self.fn = fn
        self.name = getattr(fn, "__name__", "f")
        self.signature = inspect.signature(fn)
        parameters = list(self.signature.parameters.values())
        self.static_names = set(static_argnames or ())
        names = tuple(p.name for p in parameters)
        for number in static_argnums or ():
            if not isinstance(number, (int, np.integer)) or isinstance(number, bool) or \
                    not -len(parameters) <= number < len(parameters):
                raise ArgumentError(f"static_argnums={number!r} is out of range for "
                                    f"{self.name}{names}{where()}")
            self.static_names.add(parameters[number].name)     # (negative: from the end)
        unknown = self.static_names - set(names)
        if unknown:
            raise ArgumentError(f"static_argnames {sorted(unknown)} are not parameters of "
                                f"{self.name}{names}{where()}")
        # (a simple function's positional calls take jit's fast path; parameters with defaults
        # may be among them: a call that leaves one out keeps its default, a constant of the
        # program, and a call of another length has another fast key)
        self.simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                          for p in parameters) and not self.static_names
        # (so do a function's positional calls where it takes `*args` besides: its arguments are
        # its leaves in order, and a call of another length has another fast key)
        self.positional = not self.static_names and all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
            for p in parameters)
        self.arity = len(parameters)

    def bind(self, args: tuple, kwargs: dict):
        """(args, kwargs) as the caller passed them, positional where the signature allows.

        Parameters the caller left out are not filled in: their defaults are part of the function
        and stay Python values in its body (as jax.jit treats them), never traced leaves. A
        default such as a ufunc's `casting='same_kind'` or NumPy's `_NoValue` could not be traced,
        and `alpha=0.5` left out is the constant 0.5, not a traced scalar."""
        if self.simple and not kwargs and len(args) == self.arity:
            return args, {}
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise ArgumentError(f"{self.name}(): {self._unknown_keyword(kwargs) or error}{where()}"
                                ) from None
        return bound.args, bound.kwargs

    def _unknown_keyword(self, kwargs: dict) -> str | None:
        """A keyword the function does not take, with the parameter it was probably meant to be
        (inspect would only say that the intended one is missing)."""
        parameters = self.signature.parameters
        if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            return None
        for keyword in kwargs:
            if keyword not in parameters:
                close = difflib.get_close_matches(keyword, list(parameters), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                return f"got an unexpected keyword argument {keyword!r}{hint}"
        return None

    def split(self, args: tuple, kwargs: dict, learned: dict | None = None):
        """(key, leaves, statics, structure): statics maps leaf index -> value kept out of tracing.

        `learned` maps a structure to the leaves earlier traces needed by value (specialized)."""
        leaves, structure = tree.flatten((args, kwargs), sequences=2)
        static_leaves = self._static_leaf_indices(args, kwargs, structure)
        if learned:
            # NOTE: one structure holds calls with an array where another had a scalar or list
            # at the same place: only values are taken by value.
            static_leaves |= {index for index in learned.get(structure, ())
                              if by_value(leaves[index])}
        key = []
        statics = {}
        for index, leaf in enumerate(leaves):
            if index in static_leaves or _static_by_nature(leaf):
                if index not in static_leaves and isinstance(leaf, str):
                    raise ArgumentError(
                        f"{self.name}(): a str argument cannot be traced; mark its parameter static "
                        f"with static_argnames{where()}")
                try:
                    hash(static_key(leaf))
                except TypeError:
                    raise ArgumentError(f"{self.name}(): static argument {leaf!r} is not hashable"
                                        f"{where()}") from None
                statics[index] = leaf
                key.append(static_key(leaf))
            else:
                key.append(leaf_key(leaf))
        return (tuple(key), structure), leaves, statics, structure

    def leaf_names(self, args: tuple, kwargs: dict) -> list[str]:
        """A readable name per leaf of the bound call: `axis`, `shape[1]`, `cfg['n']`."""
        parameters = list(self.signature.parameters.values())
        first_variadic = next((i for i, p in enumerate(parameters) if p.kind == p.VAR_POSITIONAL),
                              len(parameters))
        result = []
        for position, value in enumerate(args):
            if position < first_variadic:
                base = parameters[position].name
            else:
                base = f"{parameters[first_variadic].name}[{position - first_variadic}]"
            result.extend(_paths(base, value))
        for name, value in kwargs.items():
            result.extend(_paths(name, value))
        return result

    def _static_leaf_indices(self, args, kwargs, structure) -> set:
        if not self.static_names:
            return set()
        names = list(self.signature.parameters)
        marked = []
        for position, value in enumerate(args):
            marked.append(names[position] in self.static_names if position < len(names) else False)
        static = set()
        index = 0
        for position, value in enumerate(args):
            count = len(tree.flatten(value, sequences=0)[0])
            if marked[position]:
                static.update(range(index, index + count))
            index += count
        for name, value in kwargs.items():
            count = len(tree.flatten(value, sequences=0)[0])
            if name in self.static_names:
                static.update(range(index, index + count))
            index += count
        return static


def _static_by_nature(leaf) -> bool:
    """Values that can only be passed through, never traced: None, strings, dtypes (keyed by
    value), classes (`dtype=np.float32`), and functions and ufuncs (`activation=np.tanh`, a
    lambda; keyed by identity)."""
    if leaf is None or isinstance(leaf, (str, np.dtype, type)):
        return True
    return callable(leaf) and not hasattr(leaf, "__array_interface__") and \
        not hasattr(leaf, "__cuda_array_interface__")


def _paths(base: str, value) -> list[str]:
    if tree.numeric_sequence(value):
        return [base]
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return [path for i, item in enumerate(value) for path in _paths(f"{base}[{i}]", item)]
    if isinstance(value, dict):
        return [path for key, item in value.items() for path in _paths(f"{base}[{key!r}]", item)]
    return [base]


def by_value(leaf) -> bool:
    """Whether a leaf can be specialized by value: a Python or NumPy scalar, or a list or tuple of
    numbers."""
    return isinstance(leaf, (bool, int, float, np.generic)) or tree.numeric_sequence(leaf)


def static_key(leaf):
    """The part of the cache key for a leaf passed by value: its type and value (1, 1.0 and True
    are equal in Python but trace differently)."""
    return ("static", type(leaf), _frozen(leaf))


def _frozen(value):
    """Lists (a list of numbers is one leaf) as tuples tagged by type, so that they hash; floats
    by their bits, so that -0.0 is not 0.0 and a NaN finds its own entry (NaN != NaN)."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return (type(value),) + tuple(_frozen(v) for v in value)
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, complex):
        return ("complex", value.real.hex(), value.imag.hex())
    if isinstance(value, (np.floating, np.complexfloating)):
        return (value.dtype.str, value.tobytes())
    return value


def leaf_key(leaf):
    """The part of the cache key for one traced leaf: what its tracing depends on."""
    if isinstance(leaf, np.ndarray):
        return (leaf.shape, leaf.dtype, leaf.strides if not leaf.flags.c_contiguous else None,
                leaf.flags.writeable)
    if tree.numeric_sequence(leaf):
        array = np.asarray(leaf)
        return ("sequence", type(leaf), array.shape, array.dtype)
    if isinstance(leaf, (bool, int, float, np.generic)):
        return type(leaf) if not isinstance(leaf, np.generic) else (np.generic, leaf.dtype)
    if hasattr(leaf, "__cuda_array_interface__"):
        shape, dtype, strides, _ = interface(leaf)
        return (type(leaf), shape, dtype, strides)
    return ("object", type(leaf))
