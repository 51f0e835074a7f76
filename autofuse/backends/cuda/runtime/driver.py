"""The CUDA driver calls the backend makes on a call's path, through cuda.bindings: find or set
the context, load a cubin, launch a kernel with a pre-packed parameter block.

cuda.core (used for linking PTX into a cubin on a disk-cache miss) costs about 80 ms to import on
the GPU machine, most of a new process's first call when every kernel is already on disk;
cuda.bindings' driver module costs a fraction of that, and cuLaunchKernel over parameters packed
in advance skips the per-launch argument conversion (../shared/GPU.md: 3.2 µs vs 3.4 µs).

A kernel's parameters live in 8-byte slots of a NumPy array (pointers as uint64, scalars written
through a view of their own type, so a float32 parameter occupies the slot's low 4 bytes); the
driver reads each parameter's size from the kernel and copies the values at launch.
"""
from __future__ import annotations

import threading

import numpy as np

from ....errors import BackendError, where

INVALID_CONTEXT = 201          # CUDA_ERROR_INVALID_CONTEXT (cuda.h): no current context
_lock = threading.Lock()
_state: dict = {}
_driver = None


def driver():
    """cuda.bindings' driver module (imported on first use: a call path must not pay for it)."""
    global _driver
    if _driver is None:
        from cuda.bindings import driver as module
        _driver = module
    return _driver


def check(result, what: str):
    """The value of a cuda.bindings call, or a BackendError naming the call and the error."""
    error = result[0]
    if int(error) != 0:
        raise BackendError(f"CUDA driver call {what} failed: {error_text(error)}{where()}")
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def error_text(error) -> str:
    """A driver error's name (CUDA_ERROR_...), from a CUresult or its number."""
    try:
        cu = driver()
        name = cu.cuGetErrorName(cu.CUresult(int(error)))[1]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return repr(error)


def available() -> str | None:
    """Why no kernel can launch here (no driver, no GPU), or None."""
    try:
        cu = driver()
        check(cu.cuInit(0), "cuInit")
        if check(cu.cuDeviceGetCount(), "cuDeviceGetCount") < 1:
            return "no CUDA device"
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def ensure_context() -> dict:
    """A current context on this thread (the one CuPy/torch use: the device's primary context),
    and that device's compute capability, multiprocessor count, threads and registers an SM,
    shared memory a block, and the driver's CUDA version."""
    cu = driver()
    context = check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if context is not None and int(context) != 0:
        device = check(cu.cuCtxGetDevice(), "cuCtxGetDevice")
    else:
        with _lock:
            check(cu.cuInit(0), "cuInit")
            device = check(cu.cuDeviceGet(0), "cuDeviceGet")
            context = check(cu.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
            check(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    key = int(device)
    if key not in _state:
        attribute = cu.CUdevice_attribute
        get = lambda what: check(cu.cuDeviceGetAttribute(what, device), "cuDeviceGetAttribute")
        _state[key] = {
            "context": context,
            "cc": (get(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                   get(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)),
            "sms": get(attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            "threads_per_sm": get(attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
            "registers_per_sm": get(attribute.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
            "shared_per_block": get(attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            "driver": int(check(cu.cuDriverGetVersion(), "cuDriverGetVersion"))}
    return _state[key]


def set_context() -> None:
    """Make the device's primary context current on this thread (a thread that has not touched
    the GPU through CuPy or torch yet has none)."""
    state = ensure_context()
    check(driver().cuCtxSetCurrent(state["context"]), "cuCtxSetCurrent")


def load(cubin: bytes, entry: str):
    """The kernel `entry` of `cubin`, loaded into the current context (a CUfunction)."""
    return _load(cubin, entry)[1]


def _load(cubin: bytes, entry: str) -> tuple:
    """(module, function): `cubin` loaded into the current context, and its kernel `entry`."""
    cu = driver()
    image = np.frombuffer(cubin, np.uint8)
    module = check(cu.cuModuleLoadData(image.ctypes.data), "cuModuleLoadData")
    return module, check(cu.cuModuleGetFunction(module, entry.encode()),
                         f"cuModuleGetFunction({entry})")


def resources(function) -> dict:
    """What a loaded kernel's thread uses: registers, and bytes of local memory (spills, local
    arrays)."""
    cu = driver()
    names = cu.CUfunction_attribute
    return {key: int(check(cu.cuFuncGetAttribute(attribute, function), "cuFuncGetAttribute"))
            for key, attribute in (("registers", names.CU_FUNC_ATTRIBUTE_NUM_REGS),
                                   ("local_bytes", names.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES))}


def cubin_resources(cubin: bytes, entry: str) -> dict:
    """`resources` of kernel `entry` in `cubin`: the module is loaded to ask, then unloaded."""
    module, function = _load(cubin, entry)
    try:
        return resources(function)
    finally:
        check(driver().cuModuleUnload(module), "cuModuleUnload")


def local_bytes(cubin: bytes, entry: str) -> int:
    """Bytes of local memory a thread of kernel `entry` in `cubin` uses."""
    return cubin_resources(cubin, entry)["local_bytes"]


class Config:
    """A launch configuration: grid and block as 3-tuples; `args`, cuLaunchKernel's arguments
    from the grid to the dynamic shared memory (none)."""
    __slots__ = ("grid", "block", "args")

    def __init__(self, grid, block):
        self.grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        block = tuple(block) if isinstance(block, (tuple, list)) else (block,)
        self.block = block + (1,) * (3 - len(block))
        self.args = self.grid + self.block + (0,)

    def __repr__(self):
        return f"Config(grid={self.grid}, block={self.block})"


class Packed:
    """A kernel's parameter block: `values[i]` is parameter i's 8-byte slot, `address` the array
    of slot addresses the driver takes as kernelParams."""

    def __init__(self, count: int):
        self.values = np.zeros(max(1, count), np.uint64)
        base = self.values.ctypes.data
        self.slots = np.array([base + 8 * i for i in range(len(self.values))], np.uint64)
        self.address = int(self.slots.ctypes.data)

    def view(self, index: int, dtype) -> np.ndarray:
        """A one-element array over slot `index`'s low bytes, as `dtype`."""
        return self.values[index:index + 1].view(np.dtype(dtype))[:1]

    def set(self, index: int, value) -> None:
        if isinstance(value, np.generic):
            self.view(index, value.dtype)[0] = value
        else:
            self.values[index] = np.uint64(int(value) & 0xFFFFFFFFFFFFFFFF)


def overlapped(config: Config):
    """A CUlaunchConfig for `config` with programmatic stream serialization: the kernel may
    start launching before the stream's previous kernel ends, once that one's blocks have all
    run `griddepcontrol.launch_dependents` (intrinsics/vector.py's launch_dependents); its hStream is set at
    each launch."""
    cu = driver()
    native = cu.CUlaunchConfig()
    native.gridDimX, native.gridDimY, native.gridDimZ = config.grid
    native.blockDimX, native.blockDimY, native.blockDimZ = config.block
    native.sharedMemBytes = 0
    attribute = cu.CUlaunchAttribute()
    attribute.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attribute.value.programmaticStreamSerializationAllowed = 1
    native.attrs = [attribute]
    native.numAttrs = 1
    return native


def launch_packed(stream, config: Config, function, packed: Packed) -> None:
    """Launch `function` with parameters already in `packed`, on `stream` (a CUstream)."""
    cu = driver()
    result = cu.cuLaunchKernel(function, *config.args, stream, packed.address, 0)
    if result[0]:
        if int(result[0]) == INVALID_CONTEXT:
            set_context()
            result = cu.cuLaunchKernel(function, *config.args, stream, packed.address, 0)
        check(result, "cuLaunchKernel")


def launch(stream, config: Config, function, *args) -> None:
    """Launch `function` with `args` (ints are pointers or 64-bit integers; NumPy scalars keep
    their type's size), packed now: the general call path."""
    packed = Packed(len(args))
    for index, value in enumerate(args):
        packed.set(index, value)
    launch_packed(stream, config, function, packed)


class Streams(dict):
    """CUstreams by raw stream handle, each built on first use (building one costs about a
    microsecond); generated host calls look theirs up here directly."""

    def __missing__(self, handle):
        found = self[handle] = driver().CUstream(handle)
        return found


streams = Streams()


def stream(handle: int):
    """The CUstream for a raw stream handle."""
    return streams[handle]


def synchronize(stream) -> None:
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize")
