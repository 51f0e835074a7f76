"""Every global memory access of a kernel's PTX, checked against its buffers, for every thread.

numba's CUDA simulator runs a kernel's Python source, so it checks the generator's logic; what
the compiler made of it runs only on a GPU. wave_2d showed the two can differ: the row strips'
unrolled edge path (before 76e2294) was right as source (the simulator read in bounds) and its PTX
read 16 GiB past an array on the device. NVVM had rebased one guarded read on the index of
another lane's read, `a2 + 4 * zext32(r1 * 46 + j - 47) + 8` for `a2[ix((r1 - 1) * 46 + (jv2 - 1))]`,
a base that wraps to 2**32 - 1 on the first strip (r1 = 1, j = 0) where the read itself is at 1.

This interpreter runs the PTX itself at small sizes: integer and predicate arithmetic exactly
(at each register's width), floating point not at all (loads yield 0.0, float results are 0.0, so
branches on data follow zero data), and each ld.global / st.global checked to lie inside one
parameter's buffer. It knows the instructions generated elementwise, loop and strip kernels use
and raises Unsupported on any other (shared memory, shuffles, atomics), so a test can skip those.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SPECIAL = ("tid", "ntid", "ctaid", "nctaid")
BASE_SPACING = 1 << 40             # buffer k lies at (k + 1) << 40, far from every other
COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
           "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


class Unsupported(Exception):
    """An instruction this interpreter does not model."""


@dataclass(frozen=True)
class Fault:
    instruction: str
    address: int
    thread: tuple          # (block x, y, z, thread x, y, z)

    def __str__(self):
        buffer, offset = divmod(self.address, BASE_SPACING)
        return (f"{self.instruction} at thread {self.thread}: parameter {buffer - 1} "
                f"+ {offset} bytes")


def _bits(type_name: str) -> int:
    digits = re.sub(r"\D", "", type_name)
    return int(digits) if digits else 1


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _quotient(a: int, b: int) -> int:
    """PTX's integer division: rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def parse(ptx: str) -> tuple[list, dict, list]:
    """(instructions as (guard, opcode parts, operands), label -> position, parameter names)."""
    start = ptx.index(".entry")
    params = re.findall(r"\.param\s+\.\w+\s+(\w+)", ptx[start:ptx.index(")", start)])
    body = ptx[ptx.index("{", start) + 1:]
    code, labels = [], {}
    for line in body.splitlines():
        line = line.split("//")[0].strip()
        if not line or line.startswith(".") or line == "}":
            continue
        if line.endswith(":"):
            labels[line[:-1]] = len(code)
            continue
        guard, opcode, rest = re.match(r"(@!?%\w+\s+)?(\S+)\s*(.*)", line.rstrip(";")).groups()
        operands = [a.strip() for a in re.split(r",(?![^{]*})", rest)] if rest.strip() else []
        code.append((guard.strip() if guard else None, opcode.split("."), operands, line))
    return code, labels, params


def check(ptx: str, arguments: list, grid: tuple, block: tuple, limit: int = 1 << 20) -> list:
    """Faults of a launch of `ptx` on `grid` x `block` threads; `arguments` gives each parameter
    in order: ("buffer", bytes) or ("value", integer)."""
    code, labels, params = parse(ptx)
    if len(params) != len(arguments):
        raise ValueError(f"{len(params)} parameters, {len(arguments)} arguments")
    values, ranges = {}, []
    for k, (name, (kind, amount)) in enumerate(zip(params, arguments)):
        if kind == "buffer":
            values[name] = (k + 1) * BASE_SPACING
            ranges.append((values[name], values[name] + amount))
        else:
            values[name] = amount
    faults: list = []
    for bz in range(grid[2]):
        for by in range(grid[1]):
            for bx in range(grid[0]):
                for tz in range(block[2]):
                    for ty in range(block[1]):
                        for tx in range(block[0]):
                            special = {"%tid": (tx, ty, tz), "%ntid": block,
                                       "%ctaid": (bx, by, bz), "%nctaid": grid}
                            _thread(code, labels, values, ranges, special,
                                    (bx, by, bz, tx, ty, tz), faults, limit)
    return faults


def _thread(code, labels, params, ranges, special, thread, faults, limit) -> None:
    registers: dict = {}

    def value(operand: str, bits: int = 64):
        if operand in registers:
            return registers[operand]
        if operand.startswith("%"):
            name, _, axis = operand.partition(".")
            if name in special:
                return special[name]["xyz".index(axis)]
            raise Unsupported(f"register {operand} read before written")
        if operand[:2] in ("0f", "0d"):
            return 0.0
        return int(operand, 0) & ((1 << bits) - 1)

    def address(operand: str) -> int:
        base, offset = re.match(r"\[(%?\w+)(?:\+(-?\d+))?\]", operand).groups()
        start = registers[base] if base in registers else params[base]
        return (start + int(offset or 0)) & ((1 << 64) - 1)

    position, steps = 0, 0
    while position < len(code):
        steps += 1
        if steps > limit:
            raise Unsupported(f"thread {thread} ran past {limit} instructions")
        guard, parts, operands, text = code[position]
        position += 1
        if guard is not None and registers[guard.lstrip("@!")] == guard.startswith("@!"):
            continue
        name = parts[0]
        if name == "bra":
            position = labels[operands[0]]
            continue
        if name == "ret" or name == "exit":
            return
        if name == "griddepcontrol":
            continue
        if name in ("ld", "st"):
            _memory(parts, operands, text, registers, params, ranges, thread, faults, address)
            continue
        _arithmetic(name, parts, operands, text, registers, value)


def _memory(parts, operands, text, registers, params, ranges, thread, faults, address) -> None:
    space = parts[1]
    if space == "param":
        registers[operands[0]] = params[operands[1].strip("[]")]
        return
    if space != "global":
        raise Unsupported(text)
    lanes = int(parts[-2][1:]) if parts[-2].startswith("v") else 1
    at = address(operands[1] if parts[0] == "ld" else operands[0])
    size = lanes * max(1, _bits(parts[-1]) // 8)
    if not any(low <= at and at + size <= high for low, high in ranges):
        faults.append(Fault(text, at, thread))
    if parts[0] == "ld":
        for destination in re.findall(r"%\w+", operands[0]):
            registers[destination] = 0 if parts[-1][0] in "usb" else 0.0


def _arithmetic(name, parts, operands, text, registers, value) -> None:
    kind = parts[-1]
    target = operands[0] if operands else None
    if name in ("mov", "cvta"):
        registers[target] = value(operands[1])
        return
    if name == "cvt":
        to, source = parts[-2], parts[-1]
        if to[0] == "f" or source[0] == "f":
            registers[target] = 0.0 if to[0] == "f" else 0
            return
        read = value(operands[1]) & ((1 << _bits(source)) - 1)
        if source[0] == "s":
            read = _signed(read, _bits(source))
        registers[target] = read & ((1 << _bits(to)) - 1)
        return
    if name == "setp":
        test, compared = parts[1], parts[2]
        a, b = value(operands[1]), value(operands[2])
        if compared[0] != "f":
            if compared[0] == "s":
                a, b = _signed(a, _bits(compared)), _signed(b, _bits(compared))
        registers[target] = eval(f"a {COMPARE[test]} b")   # noqa: S307 (a table's operators)
        return
    if name == "selp":
        registers[target] = value(operands[1]) if registers[operands[3]] else value(operands[2])
        return
    if kind == "pred":
        a = registers[operands[1]]
        b = registers[operands[2]] if len(operands) > 2 else None
        results = {"and": lambda: a and b, "or": lambda: a or b, "xor": lambda: a != b,
                   "not": lambda: not a}
        if name not in results:
            raise Unsupported(text)
        registers[target] = results[name]()
        return
    if kind[0] == "f":
        if name in ("add", "sub", "mul", "fma", "div", "neg", "abs", "min", "max", "sqrt",
                    "rcp", "ex2", "lg2", "sin", "cos", "rsqrt", "copysign", "testp"):
            registers[target] = 0.0
            return
        raise Unsupported(text)
    bits = _bits(kind)
    signed = kind[0] == "s"
    a = value(operands[1], bits)
    b = value(operands[2], bits) if len(operands) > 2 else 0
    a_s, b_s = (_signed(a, bits), _signed(b, bits)) if signed else (a, b)
    if name == "mul" and parts[1] == "wide":
        registers[target] = (a_s * b_s) & ((1 << 2 * bits) - 1)
        return
    if name == "mul" and parts[1] == "hi":
        registers[target] = ((a_s * b_s) >> bits) & ((1 << bits) - 1)
        return
    if name == "mad" and parts[1] == "wide":
        registers[target] = (a_s * b_s + value(operands[3])) & ((1 << 2 * bits) - 1)
        return
    operations = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a_s * b_s,
        "mad": lambda: a_s * b_s + value(operands[3], bits),
        "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b, "not": lambda: ~a,
        "neg": lambda: -a, "shl": lambda: a << b,
        "shr": lambda: (a_s >> b) if signed else (a >> b),
        "min": lambda: min(a_s, b_s), "max": lambda: max(a_s, b_s),
        "div": lambda: _quotient(a_s, b_s), "rem": lambda: a_s - _quotient(a_s, b_s) * b_s}
    if name not in operations:
        raise Unsupported(text)
    registers[target] = operations[name]() & ((1 << bits) - 1)


def kernels_of(lowered) -> list:
    """(name, PTX, arguments, grid, block) of each distinct compiled kernel of a CUDA lowering
    (`jit(...).lower(...)`), its buffers sized as its parameters' nodes are."""
    from autofuse.backends.cuda.kernel import atomic_scratch, storage_dtype
    found, seen = [], set()
    for kernel in lowered._entry.program.kernels:
        source = kernel.source
        if kernel.origin is not None or any(atomic_scratch(s[0]) for s in source.scratch):
            continue
        arguments = [("value", 0) if p.by_value else
                     ("buffer", p.node.size * storage_dtype(p.node.dtype).itemsize)
                     for p in source.params]
        arguments += [("buffer", p.node.size * storage_dtype(p.node.dtype).itemsize)
                      for p in source.outputs]
        arguments += [("value", size.value) for size in source.sizes]
        arguments += [("buffer", count * dtype.itemsize) for _, count, dtype in source.scratch]
        grid = tuple(source.grid) + (1,) * (3 - len(source.grid))
        block = (source.block, 1, 1) if isinstance(source.block, int) else tuple(source.block)
        if kernel.text not in seen:
            seen.add(kernel.text)
            found.append((source.name, kernel.ptx_text(), arguments, grid, block))
    return found
