"""Where a cached call's host time goes, piece by piece (CUDA backend, CuPy arguments, 1024
floats), beside the launch paths the driver offers and cupy.fuse: each case timed over 3000 async
calls, 7 interleaved rounds, median (µs).

    python benchmarks/experiments/call_parts.py

Behind the choice to replay cached calls as CUDA graphs (6541e2e; BENCHMARKS.md, "Launches").
"""
import ctypes
import statistics
import threading
import time

import cupy
import numpy as np

import autofuse
from autofuse.backends.cuda.runtime import driver as cuda_driver
from autofuse.jit import fast_key


def cases():
    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal(1024, dtype=np.float32))
    y, z = x * 2, x + 1
    args = (x, y, z)
    body = lambda a, b, c: np.maximum(a * b + c, 0)
    launched = autofuse.jit(body, cuda_graph=False)
    replayed = autofuse.jit(body)
    for f in (launched, replayed):
        f(*args)
    kernel = next(iter(launched._cache.values())).program.steps[0].kernel
    generated = next(iter(launched._fast.values()))
    graph = next(iter(replayed._cache.values())).program.graph_call
    cu = cuda_driver.driver()
    stream = cuda_driver.streams[cupy.cuda.get_current_stream().ptr]
    out = cupy.empty(1024, cupy.float32)
    packed = cuda_driver.Packed(4)
    pointers = [a.data.ptr for a in (x, y, z, out)]
    for i, pointer in enumerate(pointers):
        packed.set(i, pointer)
    slots = memoryview(packed.values)
    grid = kernel.config.args
    by_ctypes = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    by_ctypes.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    by_ctypes.restype = ctypes.c_int
    function, handle = int(kernel.function), int(stream)
    fused = cupy.fuse(kernel_name="relu_fma")(lambda a, b, c: cupy.maximum(a * b + c, 0))
    lock = threading.Lock()
    current = cupy.cuda.get_current_stream
    node, params = graph.handles[0], graph.params[0]

    def locked():
        with lock:
            pass

    def write_slots():
        for i, pointer in enumerate(pointers):
            slots[i] = pointer

    return {
        "empty loop": lambda: None,
        "autofuse call (graph replay, the default)": lambda: replayed(*args),
        "autofuse call, cuda_graph=False": lambda: launched(*args),
        "  its generated host call alone": lambda: generated(args),
        "  fast_key(args)": lambda: fast_key(args),
        "  cupy.ndarray((1024,), float32)": lambda: cupy.ndarray((1024,), np.float32),
        "  current stream -> CUstream": lambda: cuda_driver.streams[current().ptr],
        "  three .data.ptr": lambda: (x.data.ptr, y.data.ptr, z.data.ptr),
        "  lock": locked,
        "  four slot writes": write_slots,
        "cuLaunchKernel, cuda.bindings": lambda: cu.cuLaunchKernel(
            kernel.function, *grid, stream, packed.address, 0),
        "cuLaunchKernel, ctypes": lambda: by_ctypes(function, *grid, handle, packed.address, None),
        "cuLaunchKernel, cupy.cuda.driver.launchKernel": lambda: cupy.cuda.driver.launchKernel(
            function, *grid, handle, packed.address, 0),
        "graph node update + cuGraphLaunch": lambda: (
            cu.cuGraphExecKernelNodeSetParams(graph.exec, node, params),
            cu.cuGraphLaunch(graph.exec, stream)),
        "cuGraphLaunch alone": lambda: cu.cuGraphLaunch(graph.exec, stream),
        "cupy.fuse call": lambda: fused(*args),
    }


def main(calls=3000, rounds=7):
    table = cases()
    times = {name: [] for name in table}
    for _ in range(rounds):
        for name, call in table.items():
            call()
            cupy.cuda.Device().synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                call()
            cupy.cuda.Device().synchronize()
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    for name, values in times.items():
        print(f"{name:48s} {statistics.median(values):6.2f} µs  (min {min(values):.2f})")


if __name__ == "__main__":
    main()
