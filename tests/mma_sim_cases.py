"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_mma.py: the tensor-core product kernels
(emit/mma_gemm.py; float16's pipelined one, emit/mma_pipeline.py, and its register-staged one)
executed by numba's simulator (mma.sync emulated a warp at a time, intrinsics/mma_simulator.py)
on small inputs, against NumPy in float64: odd sizes, transposed
operands, batch broadcasting, K = 0, prologues and epilogues; float64 with each instruction,
float16, and float32 as TF32 and 3xTF32."""
import numpy as np

import autofuse
from autofuse.backends.cuda.tuning import Tuning
from autofuse.ir.products import ProductLimits

rng = np.random.default_rng(35)
TILED = Tuning(mma=True, products=ProductLimits(0, 0, 0))     # every product a tiled kernel, tensor cores on


def rand(dtype, *shape):
    return rng.standard_normal(shape).astype(dtype)


F64, F16, F32 = np.float64, np.float16, np.float32
TOLERANCE = {F64: 1e-12, F16: 2e-3, "tf32": 5e-3, "3xtf32": 2e-5}
CASES = [     # name, program, operands, tuning changes, matmul_precision
    ("f64_relu_bias", lambda x, w, b: np.maximum(x @ w + b, 0),
     (rand(F64, 19, 21), rand(F64, 21, 23), rand(F64, 23)), {}, "float32"),
    ("f64_transposed_both", lambda x, w: np.tanh(x.T @ w.T), (rand(F64, 13, 10), rand(F64, 17, 13)),
     {}, "float32"),
    ("f64_batch_broadcast", lambda a, b: a @ b - 1, (rand(F64, 3, 1, 9, 5), rand(F64, 2, 5, 11)),
     {}, "float32"),
    ("f64_empty_k", lambda a, b: a @ b + 1, (rand(F64, 9, 0), rand(F64, 0, 10)), {}, "float32"),
    ("f64_m16n8k4", lambda a, b: a @ b * 2, (rand(F64, 20, 11), rand(F64, 11, 9)),
     {"mma_f64_shape": "mma_f64_m16n8k4"}, "float32"),
    ("f64_m16n8k8", lambda a, b, r: a @ b + r, (rand(F64, 20, 19), rand(F64, 19, 9), rand(F64, 20, 9)),
     {"mma_f64_shape": "mma_f64_m16n8k8"}, "float32"),
    ("f64_m16n8k16", lambda a, b: np.tanh(a @ b.T), (rand(F64, 21, 37), rand(F64, 9, 37)),
     {"mma_f64_shape": "mma_f64_m16n8k16"}, "float32"),
    ("f16_relu_bias", lambda x, w, b: np.maximum(x @ w + b, 0),
     (rand(F16, 20, 37), rand(F16, 37, 17), rand(F16, 17)), {}, "float32"),
    ("f16_transposed_a_cast", lambda x, w: (x.T @ w).astype(np.float32) * 3,
     (rand(F16, 33, 18), rand(F16, 33, 9)), {}, "float32"),
    ("f16_register_staged", lambda x, w, b: np.maximum(x @ w + b, 0),     # (mma_gemm.py's)
     (rand(F16, 20, 37), rand(F16, 37, 17), rand(F16, 17)), {"mma_stages": 0}, "float32"),
    # strides and sizes that let chunks take the vector loads (and edges that do not)
    ("f64_vector_loads", lambda x, w, b: x @ w + b, (rand(F64, 24, 20), rand(F64, 20, 36), rand(F64, 36)),
     {}, "float32"),
    ("f16_vector_loads", lambda x, w: np.maximum(x @ w, 0), (rand(F16, 24, 48), rand(F16, 48, 24)),
     {}, "float32"),
    ("f16_vector_loads_transposed", lambda x, w: x @ w.T, (rand(F16, 24, 64), rand(F16, 24, 64)),
     {}, "float32"),
    ("tf32_vector_loads", lambda x, w: x.T @ w, (rand(F32, 40, 36), rand(F32, 40, 20)), {}, "tf32"),
    ("tf32", lambda x, w: x @ w.T, (rand(F32, 17, 19), rand(F32, 21, 19)), {}, "tf32"),
    ("3xtf32_epilogue", lambda x, w, b: np.tanh(x @ w) + b,
     (rand(F32, 18, 35), rand(F32, 35, 9), rand(F32, 9)), {}, "3xtf32"),
]


def main() -> None:
    for name, fn, args, changes, precision in CASES:
        jitted = autofuse.jit(fn, backend="cuda", tuning=TILED.replace(**changes),
                              matmul_precision=precision)
        got = np.asarray(jitted(*args), np.float64)
        want = fn(*[a.astype(np.float64) for a in args])
        kernels = jitted.lower(*args).kernels
        tensor = any(k.strategy.startswith("tensor cores") for k in kernels)
        key = precision if precision != "float32" else args[0].dtype.type
        scale = max(np.abs(want).max(initial=0.0), 1.0)
        close = got.shape == want.shape and \
            np.abs(got - want).max(initial=0.0) <= TOLERANCE[key] * scale
        print(f"{name}: {'ok' if close and tensor else 'WRONG'}")


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
