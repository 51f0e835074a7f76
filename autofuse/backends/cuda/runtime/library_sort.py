"""A lone sort of long rows handed to the array library's own sort, in the launch list between
kernels: cupy.sort / cupy.argsort for CuPy arrays, torch.sort(stable=True) for torch tensors, on
the caller's stream (the libraries' current stream, which the program launches on too). Both
sort NaN last as NumPy does and sort stably, so their argsort is the kernels' (emit/sorting.py).
Other arrays (numba's device arrays), and dtypes torch does not sort, run the group's own kernel.

The generated host call (runtime/host.py) writes the library's sort in between its kernel launches
(`LibrarySortStep.inline`), its result the array the next kernels read; where the step runs its
kernel, the call launches that like any other. A program whose sort the library runs is never a
CUDA graph (program.py's _host_call says why).
"""
from __future__ import annotations

import numpy as np

from ..emit.sorting import LIBRARY

# torch sorts these on the GPU (its unsigned types wider than a byte it does not)
TORCH_SORTS = {np.dtype(d) for d in (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64,
                                     np.float16, np.float32, np.float64)}


def library_step(kernel) -> bool:
    """Whether `kernel` is a lone sort of long rows, which its plan lets the array library run
    (emit/sorting.plan: Tuning.library_sort)."""
    return kernel.source.strategy.endswith(LIBRARY)


class LibrarySortStep:
    """The sort by CuPy or torch where the call's arrays are theirs, else the kernel's own step
    (a program.CudaStep, whose parameters and outputs the buffer plan reads through this)."""
    library = True

    def __init__(self, step):
        self.step = step
        self.kernel = step.kernel
        self.sort = self.result = step.kernel.group.sort    # (result: the node it computes)
        self.source = self.sort.inputs[0]

    params = property(lambda self: self.step.params)
    outputs = property(lambda self: self.step.outputs)
    always = property(lambda self: self.step.always)
    owners = property(lambda self: self.step.owners,
                      lambda self, owners: setattr(self.step, "owners", owners))

    def scratch_arguments(self, library) -> list:
        return self.step.scratch_arguments(library)

    def inline(self, library) -> tuple[str, dict] | None:
        """The sort as one expression for the generated host call, on `{source}` with its
        function as a field, and that function; None where the step runs its kernel."""
        if library.name == "cupy":
            function = library.cupy.sort if self.sort.op == "sort" else library.cupy.argsort
            return "{sort}({source}, axis=-1)", {"sort": function}
        if library.name == "torch" and self.source.dtype in TORCH_SORTS:
            item = 0 if self.sort.op == "sort" else 1        # torch.sort gives (values, order)
            return f"{{sort}}({{source}}, dim=-1, stable=True)[{item}]", \
                {"sort": library.torch.sort}
        return None

    def launch(self, memory: dict, library, stream, launch) -> None:
        value = memory.get(self.source.id)
        if library.name == "cupy":
            cupy = library.cupy
            memory[self.sort.id] = cupy.sort(value, axis=-1) if self.sort.op == "sort" \
                else cupy.argsort(value, axis=-1)
        elif library.name == "torch" and self.source.dtype in TORCH_SORTS:
            values, order = library.torch.sort(value, dim=-1, stable=True)
            memory[self.sort.id] = values if self.sort.op == "sort" else order
        else:
            self.step.launch(memory, library, stream, launch)
