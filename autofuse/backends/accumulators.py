"""How reductions start, take values and merge partial results, rendered for any backend.

A reduction holds its running value in `acc`; some hold a second value in `idx` (`paired`):
argmax and argmin their position (int64), expsum (sum(exp(x - max(x)))) the sum scaled to the
running maximum in `acc`, which becomes the result once the maximum is final: a value above the
maximum scales the sum by exp(old - new) and becomes it, every value adds exp(value - maximum);
partial results scale both sums to the larger maximum. The result is NaN where the maximum is
not finite or no element was (NumPy's exp(x - max) is NaN there)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from ..ir.ops import OPS, typed_constants
from .render import Renderer

ARG = ("argmax", "argmin")
PAIRED = ARG + ("expsum",)


def paired(node: Node) -> bool:
    """Whether reduction `node` holds a second value (`idx`) beside `acc`."""
    return node.op in PAIRED


def acc_dtype(node: Node) -> np.dtype:
    """The dtype of `acc`: an arg-reduction's operand's, else the result's."""
    return node.inputs[0].dtype if node.op in ARG else node.dtype


def second_dtype(node: Node) -> np.dtype:
    """The dtype of a paired reduction's `idx`: a position, or expsum's scaled sum."""
    return np.dtype(np.int64) if node.op in ARG else node.dtype


class Accumulators:
    """How reductions start and take values, rendered for any backend: `acc` holds the running
    value and `idx` the position (argmax/argmin) of reduction `node`."""

    def __init__(self, renderer: Renderer):
        self.r = renderer

    def init(self, node: Node, acc: str, idx: str, acc_type) -> None:
        r = self.r
        if node.op == "expsum":
            # (the lowest finite value: a -inf element then adds exp(-inf) = 0, not NaN)
            held = r.held(node.dtype)
            r.emit(f"{acc} = {r.constant(held.type(np.finfo(held).min))}")
            r.emit(f"{idx} = {r.constant(typed_constants(held)['ZERO'])}")
            return
        r.emit(f"{idx} = 0")
        if node.op in ("argmax", "argmin"):
            start = "LOWEST" if node.op == "argmax" else "HIGHEST"
            r.emit(f"{acc} = {r.constant(typed_constants(node.inputs[0].dtype)[start])}")
            return
        init = OPS[node.op].init
        if init in ("True", "False"):
            r.emit(f"{acc} = {init}")
        else:
            r.emit(f"{acc} = {r.constant(typed_constants(r.held(acc_type))[init.strip('{}')])}")

    def _logic(self) -> tuple:
        """(or, and) as argmax/argmin's conditions join their terms: short-circuit on the CPU,
        whose branch takes them (_take), eager on CUDA, whose selects do."""
        return (" or ", " and ") if self.r.target == "cpu" else (" | ", " & ")

    def better(self, node: Node, value: str, acc: str) -> str:
        """Whether `value` replaces `acc` in argmax/argmin (NaN wins, first occurrence kept)."""
        op = ">" if node.op == "argmax" else "<"
        either, both = self._logic()
        return f"(({value} {op} {acc}){either}(({value} != {value}){both}({acc} == {acc})))"

    def _take(self, condition: str, acc: str, idx: str, value: str, position: str) -> None:
        """acc, idx = value, position where `condition` holds. CUDA: selects, not a branch
        (numba's front end pays for every basic block: backends/selection.py; the PTX loses its
        branches, measured no slower). CPU: a branch, rarely taken and well predicted, where
        selects chain each element's compare to the last (argmax over rows of 2048 float32 took
        1.6x as long with selects on the 2-core machine)."""
        r = self.r
        if r.target == "cpu":
            r.emit(f"if {condition}:")
            r.push()
            r.emit(f"{acc} = {value}")
            r.emit(f"{idx} = {position}")
            r.pop()
            return
        taken = r.name("better")
        r.emit(f"{taken} = {condition}")
        r.emit(f"{acc} = select({taken}, {value}, {acc})")
        r.emit(f"{idx} = select({taken}, {position}, {idx})")

    def combine(self, node: Node, acc: str, idx: str, value: str, acc_type, position: str) -> None:
        r = self.r
        if node.op == "expsum":
            held = r.held(node.dtype)
            if r.held(node.inputs[0].dtype) != held:
                value = f"{r.ctor(held)}({value})"
            v = r.name("v")
            r.emit(f"{v} = {value}")
            # NOTE: a branch, taken where the maximum grows (rarely, after a row's first
            # elements): selects computed the rescale's exp for every element (H200: log-sum-exp
            # down 4096x8192 columns 62.5 us, a max and a sum of exps 35 each)
            either, _ = self._logic()
            r.emit(f"if ({v} > {acc}){either}({v} != {v}):")
            r.push()
            r.emit(f"{idx} = {idx} * {r.apply('exp', held, [f'{acc} - {v}'])}")
            r.emit(f"{acc} = {v}")
            r.pop()
            r.emit(f"{idx} = {idx} + {r.apply('exp', held, [f'{v} - {acc}'])}")
            return
        if node.op in ("argmax", "argmin"):
            self._take(self.better(node, value, acc), acc, idx, value, position)
            return
        if r.held(acc_type) != r.held(node.dtype):
            value = f"{r.ctor(r.held(acc_type))}({value})"
        r.emit(f"{acc} = " + self.combined(node, value, acc, acc_type))

    def final(self, node: Node, acc: str, idx: str) -> str:
        """The reduction's result from its accumulators: an arg-reduction's position; expsum's
        sum where its maximum is finite, else NaN (NumPy's exp(x - max) is NaN at an infinite
        maximum); the others' `acc`."""
        if node.op in ARG:
            return idx
        if node.op == "expsum":
            # (a sum of 0: no finite element, every one -inf)
            nan = self.r.constant(self.r.held(node.dtype).type(np.nan))
            _, both = self._logic()
            return f"select(({acc} - {acc} == 0){both}({idx} != 0), {idx}, {nan})"
        return acc

    def merge(self, node: Node, acc: str, idx: str, other: str, other_idx: str) -> None:
        """acc = acc (+) other, for partial results (argmax keeps the earlier position on ties)."""
        r = self.r
        if node.op == "expsum":
            # both sums scaled to the larger maximum (NaN where either maximum is)
            held = r.held(node.dtype)
            peak = r.name("peak")
            r.emit(f"{peak} = {self._combined('max', other, acc, held)}")
            r.emit(f"{idx} = {idx} * {r.apply('exp', held, [f'{acc} - {peak}'])} + "
                   f"{other_idx} * {r.apply('exp', held, [f'{other} - {peak}'])}")
            r.emit(f"{acc} = {peak}")
            return
        if node.op in ("argmax", "argmin"):
            either, both = self._logic()
            tie = f"((({other} == {acc}){either}(({other} != {other}){both}({acc} != {acc})))" \
                  f"{both}({other_idx} < {idx}))"
            self._take(f"{self.better(node, other, acc)}{either}{tie}", acc, idx, other, other_idx)
            return
        r.emit(f"{acc} = " + self.combined(node, other, acc, node.dtype))

    def combined(self, node: Node, value: str, acc: str, acc_type) -> str:
        """The accumulator's next value: the op table's combine, or the backend's own spelling of
        this reduction where it has one (NaN-propagating either way)."""
        return self._combined(node.op, value, acc, acc_type)

    def _combined(self, op: str, value: str, acc: str, acc_type) -> str:
        template = self.r.spellings.get((op, self.r.held(acc_type).kind))
        if template is not None:
            return template.format(value, acc)
        return OPS[op].combine.format(value, acc=acc)
