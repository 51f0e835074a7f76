"""A compiled kernel as a shared library: numba's optimized module, given trampolines for the
functions numba binds at run time, emitted as position-independent object code and linked by
the system linker. native.py loads it in a later process without importing numba.

Why a shared library: loading one is a dlopen (under 1 ms), where loading numba's cached object
code needs numba's import and its JIT (200-450 ms on the 2-core machine), or at the least
llvmlite's LLVM (40-60 ms). What stands between numba's code and a shared library is what numba
hands LLVM at run time instead of at link time: its C helpers, memory runtime and threading
layer (runtime.py), whose addresses no linker can know. Each such declaration becomes a hidden
function in the library that jumps through a pointer slot (`autofuse_slot_<name>`), which the
loader fills with the address numba would bind; everything else the code calls (libm, the
Python C API) is resolved by the dynamic linker from the process, as for any extension module.

Only numba is needed here, besides a linker (`ld`, or `cc`): without one, or for a kernel whose
code calls anything this does not know how to bind, nothing is written and later processes load
the kernel through numba as before.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

SLOT_PREFIX = "autofuse_slot_"
ENVIRONMENT_PREFIX = "_ZN08NumbaEnv"
# Types a trampoline forwards (it jumps to the slot's function with the caller's registers:
# `musttail`), and argument attributes that would change how they are passed (then it declines)
PASSED = ("void", "i1", "i8", "i16", "i32", "i64", "ptr", "float", "double")
PASSING = ("byval", "sret", "inreg", "inalloca", "preallocated", "signext", "zeroext")
LINKERS = (("ld", "-shared"), ("cc", "-shared", "-nostdlib"), ("gcc", "-shared", "-nostdlib"))


class NotLinkable(Exception):
    """The kernel's code needs something a shared library cannot be given (a variadic numba
    helper, numba's late-bound references); it keeps numba's path."""


def linker() -> tuple[str, ...] | None:
    """The command that links a shared library here, or None."""
    for name, *flags in LINKERS:
        path = shutil.which(name)
        if path:
            return (path, *flags)
    return None


def bound_names(helpers: dict) -> set[str]:
    """The functions numba binds at run time (runtime.py has their addresses): its helpers and
    memory runtime by their prefixed names, the C math functions it binds by their own names
    (externals.c_math_functions), the threading layer's scheduler."""
    from numba.core.intrinsics import INTR_MATH

    from .runtime import LAYER_SYMBOLS
    prefixed = {name for name in helpers if name.startswith(("numba_", "NRT_", "_nrt"))}
    return prefixed | (set(INTR_MATH) & set(helpers)) | set(LAYER_SYMBOLS)


def build(cres, bound: set[str]) -> tuple[bytes, dict]:
    """(shared library bytes, what the loader needs: wrapper and environment symbols, slots) for
    numba's compile result `cres`; `bound` names the functions runtime.py can give addresses."""
    import llvmlite.binding as ll
    from numba.core import config

    library = cres.library
    module = ll.parse_bitcode(library._get_module_for_linking().as_bitcode())
    wrapper = cres.fndesc.llvm_cpython_wrapper_name
    function = module.get_function(wrapper)
    function.linkage = ll.Linkage.external
    slots = _slotted(module, bound)
    if slots:
        module.link_in(ll.parse_assembly(_trampolines(module, slots)))
    environments = sorted(g.name for g in module.global_variables
                          if g.name.startswith(ENVIRONMENT_PREFIX))
    codegen = library.codegen
    machine = ll.Target.from_triple(module.triple).create_target_machine(
        cpu=codegen._get_host_cpu_name(), features=codegen._tm_features, opt=int(config.OPT),
        reloc="pic", codemodel="default")
    shared = _link(machine.emit_object(module))
    return shared, {"wrapper": wrapper, "environments": environments, "slots": sorted(slots)}


def _slotted(module, bound: set[str]) -> dict:
    """Declared functions that only numba's runtime defines -> their LLVM function type."""
    slots = {}
    for function in module.functions:
        if not function.is_declaration or function.name not in bound:
            continue
        kind = function.global_value_type
        if kind.is_function_vararg:
            raise NotLinkable(f"{function.name} takes variable arguments")
        if not all(str(element) in PASSED for element in kind.elements):
            raise NotLinkable(f"{function.name} is {kind}: a trampoline passes {PASSED} only")
        attributes = {_name(a) for argument in function.arguments for a in argument.attributes}
        if attributes & set(PASSING):
            raise NotLinkable(f"{function.name} passes arguments as {sorted(attributes)}")
        slots[function.name] = kind
    for variable in module.global_variables:
        if variable.name.startswith("_numba_unresolved$"):
            raise NotLinkable("the code refers to a function numba resolves late")
    return slots


def _name(attribute) -> str:
    """An argument attribute's name (llvmlite gives bytes such as b'align 8')."""
    text = attribute.decode() if isinstance(attribute, bytes) else str(attribute)
    return text.split(" ")[0].split("(")[0]


def _trampolines(module, slots: dict) -> str:
    """LLVM text: for each slotted function, a hidden definition that calls through its slot."""
    lines = [f'target triple = "{module.triple}"', f'target datalayout = "{module.data_layout}"']
    for name, kind in sorted(slots.items()):
        result, *parameters = [str(element) for element in kind.elements]
        formals = ", ".join(f"{p} %a{i}" for i, p in enumerate(parameters))
        lines.append(f'@"{SLOT_PREFIX}{name}" = global ptr null')
        lines.append(f'define hidden {result} @"{name}"({formals}) {{')
        lines.append(f'  %f = load ptr, ptr @"{SLOT_PREFIX}{name}"')
        if result == "void":
            lines += [f"  musttail call void %f({formals})", "  ret void", "}"]
        else:
            lines += [f"  %r = musttail call {result} %f({formals})", f"  ret {result} %r", "}"]
    return "\n".join(lines) + "\n"


def _link(obj: bytes) -> bytes:
    command = linker()
    if command is None:
        raise NotLinkable("no linker (ld or cc) on PATH")
    with tempfile.TemporaryDirectory(prefix="autofuse-link-") as work:
        source = os.path.join(work, "kernel.o")
        target = os.path.join(work, "kernel.so")
        with open(source, "wb") as file:
            file.write(obj)
        done = subprocess.run([*command, "-o", target, source], capture_output=True, text=True)
        if done.returncode != 0:
            raise NotLinkable(f"{os.path.basename(command[0])} failed: {done.stderr.strip()[:300]}")
        with open(target, "rb") as file:
            return file.read()
