"""Gradients beside the peers: autofuse.value_and_grad against jax.jit(jax.value_and_grad) and
torch.compile of torch.func.grad_and_value (torch's autograd backward where that fails), on the
GPU, with the memory floor of the forward and backward bytes (inputs read once, gradients
written once); and on the CPU (--cpu) against NumPy gradients written by hand.

    python benchmarks/gradients.py                 # GPU; writes benchmarks/results/gradients.json
    python benchmarks/gradients.py --cpu           # CPU, smaller sizes

Every system's value and gradients are checked against NumPy's forward value and autofuse's
gradient on the CPU (itself checked against finite differences in tests/test_autodiff.py) first.
Timing: benchmarks/gpu.py's interleaved rounds (median of rounds, the difference method).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import autofuse  # noqa: E402
from cpu import interleaved_times  # noqa: E402  (benchmarks/cpu.py: the CPU suite's timing)


class Lib:
    """The few spellings that differ between NumPy / jax.numpy and torch."""

    def __init__(self, xp, torch_like=False):
        self.xp, self.torch = xp, torch_like

    def max(self, x, axis):
        return self.xp.amax(x, axis, keepdim=True) if self.torch else x.max(axis, keepdims=True)

    def sum(self, x, axis):
        return x.sum(axis, keepdim=True) if self.torch else x.sum(axis, keepdims=True)

    def mean(self, x, axis):
        return x.mean(axis, keepdim=True) if self.torch else x.mean(axis, keepdims=True)

    def swap(self, x):
        return x.transpose(-1, -2) if self.torch else self.xp.swapaxes(x, -1, -2)


def softmax_ce(k, z, t):
    m = k.max(z, -1)
    lse = k.xp.log(k.sum(k.xp.exp(z - m), -1)) + m
    return -(t * (z - lse)).sum() / z.shape[0]


def layernorm(k, x, w, b, r):
    mu = k.mean(x, -1)
    xc = x - mu
    y = xc / k.xp.sqrt(k.mean(xc * xc, -1) + 1e-5) * w + b
    return (y * r).sum()


def rmsnorm(k, x, w, r):
    return (x / k.xp.sqrt(k.mean(x * x, -1) + 1e-6) * w * r).sum()


def gelu_mlp(k, w1, b1, w2, x, r):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + k.xp.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return ((h @ w2) * r).sum()


def attention(k, q, kk, v, r):
    s = (q @ k.swap(kk)) * 0.125
    e = k.xp.exp(s - k.max(s, -1))
    return ((e / k.sum(e, -1)) @ v * r).sum()


def adam_step(k, value_and_grad, w, m, v, x, y):
    """One Adam step of a logistic regression: the loss's gradient and the update in one program."""
    def loss(w, x, y):
        p = 1.0 / (1.0 + k.xp.exp(-(x @ w)))
        return -(y * k.xp.log(p + 1e-7) + (1.0 - y) * k.xp.log(1.0 - p + 1e-7)).mean()
    value, g = value_and_grad(loss)(w, x, y)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * (g * g)
    update = (m / (1.0 - 0.9 ** 3)) / (k.xp.sqrt(v / (1.0 - 0.999 ** 3)) + 1e-8)
    return w - 1e-3 * update, m, v, value


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def programs(rng, cpu: bool):
    """(name, loss, inputs, argnums, floor bytes); argnums None: a whole step (adam_step),
    floor its inputs read and its arrays written once."""
    s = 4 if cpu else 1
    b, v = 4096 // s, 4096 // s
    z = _f32(rng, b, v)
    t = np.eye(v, dtype=np.float32)[rng.integers(0, v, b)]
    rows, width = 8192 // s, 1024
    x, w, bias, r = _f32(rng, rows, width), _f32(rng, width), _f32(rng, width), _f32(rng, rows, width)
    n, d = 16384 // s, 1024
    step = (_f32(rng, d, scale=0.1), _f32(rng, d, scale=0.01), np.abs(_f32(rng, d, scale=0.01)),
            _f32(rng, n, d), (rng.random(n) > 0.5).astype(np.float32))
    out = [("softmax-CE", softmax_ce, (z, t), (0,)),
           ("layernorm", layernorm, (x, w, bias, r), (0, 1, 2)),
           ("RMSNorm", rmsnorm, (x, w, r), (0, 1))]
    n, d, hidden = 4096 // s, 1024 // s, 4096 // s
    mlp = (_f32(rng, d, hidden, scale=d ** -0.5), _f32(rng, hidden),
           _f32(rng, hidden, d, scale=hidden ** -0.5), _f32(rng, n, d), _f32(rng, n, d))
    heads, length = 16 // s, 1024 // s
    qkv = tuple(_f32(rng, heads, length, 64) for _ in range(4))
    out += [("GELU MLP block", gelu_mlp, mlp, (0, 1, 2)),
            ("attention", attention, qkv, (0, 1, 2)),
            ("Adam step", adam_step, step, None)]
    return [(name, fn, args, nums, _floor(args, nums)) for name, fn, args, nums in out]


def _floor(args, argnums) -> int:
    read = sum(a.nbytes for a in args)
    if argnums is None:                       # a step: w, m, v written
        return read + sum(a.nbytes for a in args[:3])
    return read + sum(args[i].nbytes for i in argnums)


def _ours(fn, argnums, k, **options):
    """autofuse's callable for a program, and its result as (value, [gradients or new arrays])."""
    if argnums is None:
        step = autofuse.jit(lambda *a: fn(k, autofuse.value_and_grad, *a), **options)
        return step, lambda res: (res[3], list(res[:3]))
    return (autofuse.value_and_grad(lambda *a: fn(k, *a), argnums=argnums, **options),
            lambda res: res)


def _torch_value_and_grad(torch):
    def value_and_grad(f):
        grad_and_value = torch.func.grad_and_value(f)
        return lambda *a: grad_and_value(*a)[::-1]
    return value_and_grad


def _peers(name, fn, host, argnums):
    """{system: (call, sync, to_host)} of the peers that run here; to_host gives (value, arrays)."""
    found = {}
    try:
        import jax
        import jax.numpy as jnp
        jk = Lib(jnp)           # its own name: the torch twin's `k` below must not reach it
        if argnums is None:
            jf = jax.jit(lambda *a: fn(jk, jax.value_and_grad, *a))
            unpack = lambda res: (np.asarray(res[3]), [np.asarray(g) for g in res[:3]])   # noqa: E731
        else:
            jf = jax.jit(jax.value_and_grad(lambda *a: fn(jk, *a), argnums=argnums))
            unpack = lambda res: (np.asarray(res[0]), [np.asarray(g) for g in res[1]])   # noqa: E731
        on_jax = [jax.device_put(a) for a in host]
        found["jax.jit"] = (lambda: jf(*on_jax), jax.block_until_ready, unpack)
    except Exception as error:
        found["jax.jit"] = error
    try:
        import torch
        k = Lib(torch, torch_like=True)
        on_torch = [torch.from_numpy(a).cuda() for a in host]
        compiled_s = None           # the first call below compiles (timed there)
        if argnums is None:
            tf = torch.compile(lambda *a: fn(k, _torch_value_and_grad(torch), *a))
            call = lambda: tf(*on_torch)                       # noqa: E731
            unpack = lambda res: (res[3].item(), [g.cpu().numpy() for g in res[:3]])   # noqa: E731
        else:
            try:
                tf = torch.compile(torch.func.grad_and_value(lambda *a: fn(k, *a), argnums=argnums))
                started = time.perf_counter()
                torch.cuda.synchronize()
                tf(*on_torch)                                      # compiles, or fails here
                torch.cuda.synchronize()
                compiled_s = time.perf_counter() - started
                call = lambda: tf(*on_torch)                       # noqa: E731
                unpack = lambda res: (res[1].item(), [g.cpu().numpy() for g in res[0]])   # noqa: E731
            except Exception:
                leaves = [on_torch[i].requires_grad_() for i in argnums]
                cf = torch.compile(lambda *a: fn(k, *a))

                def call():
                    for leaf in leaves:
                        leaf.grad = None
                    loss = cf(*on_torch)
                    loss.backward()
                    return loss, [leaf.grad for leaf in leaves]
                unpack = lambda res: (res[0].item(), [g.cpu().numpy() for g in res[1]])   # noqa: E731
        found["torch.compile"] = (call, lambda _: torch.cuda.synchronize(), unpack, compiled_s)
    except Exception as error:
        found["torch.compile"] = error
    return found


def _first_line(error) -> str:
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:150]}"


def gpu(args):
    import cupy
    from gpu import copy_bandwidth, time_rounds, _commit, versions
    rng = np.random.default_rng(2026)
    bandwidth = copy_bandwidth(2)
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "commit": _commit(), "versions": versions(),
              "copy_bandwidth_TBps": bandwidth / 1e12, "rows": []}
    k = Lib(np)
    for name, fn, host, argnums, floor in programs(rng, cpu=False):
        if args.only and name not in args.only.split(","):
            continue
        row = {"program": name, "floor_ms": floor / bandwidth * 1000, "times": {}, "notes": {}}
        ours, unpack_ours = _ours(fn, argnums, k)
        inputs = [cupy.asarray(a) for a in host]
        cupy.cuda.Device().synchronize()
        started = time.perf_counter()
        ours.lower(*inputs)             # trace, simplify, partition, write the kernels' source
        row["build_s"] = time.perf_counter() - started
        value, arrays = unpack_ours(ours(*inputs))      # + compile (PTX, link), load, run
        cupy.cuda.Device().synchronize()
        row["first_call_s"] = time.perf_counter() - started
        expected = [cupy.asnumpy(g) for g in arrays]
        reference, wanted = _reference(name, fn, host, argnums, k)
        for got, want in zip(expected, wanted):
            np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-3 * max(1.0, np.abs(want).max()))
        entries = {"autofuse": (lambda: ours(*inputs), lambda _: cupy.cuda.Device().synchronize())}
        row["kernels"] = [f"{x.kind}:{x.strategy}" for x in ours.lower(*inputs).kernels]
        for system, got in _peers(name, fn, host, argnums).items():
            if isinstance(got, Exception):
                row["notes"][system] = _first_line(got)
                continue
            call, sync, unpack = got[:3]
            try:
                started = time.perf_counter()
                res = call()
                sync(res)
                first = got[3] if len(got) > 3 and got[3] is not None else \
                    time.perf_counter() - started
                row.setdefault("peer_first_call_s", {})[system] = first
                _, gs = unpack(res)
                for g, e in zip(gs, expected):
                    np.testing.assert_allclose(g, e, rtol=2e-2, atol=2e-3 * max(1.0, np.abs(e).max()))
                entries[system] = (call, sync)
            except Exception as error:
                row["notes"][system] = _first_line(error)
        row["value_error"] = abs(float(value) - reference) / max(1.0, abs(reference))
        rounds = time_rounds(entries, rounds=args.rounds, short=2)
        row["times"] = {s: float(np.median(v)) for s, v in rounds.items()}
        report["rows"].append(row)
        print(json.dumps({key: row.get(key) for key in (
            "program", "floor_ms", "times", "notes", "build_s", "first_call_s",
            "peer_first_call_s", "kernels")}), flush=True)
        _write(report, args.out)        # each row as it comes (a run cut short keeps them)
    return report


def _write(report, out) -> None:
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as file:
        json.dump(report, file, indent=1)


def _reference(name, fn, host, argnums, k):
    """(the loss in float64, the gradients or new arrays written by hand in float64)."""
    wide = [a.astype(np.float64) for a in host]
    if argnums is None:
        *arrays, loss = _manual_adam(*wide)
        return float(loss), arrays
    return float(fn(k, *wide)), _manual(name, wide)


def _gelu_parts(h):
    c, a = 0.7978845608028654, 0.044715
    t = np.tanh(c * (h + a * h * h * h))
    return 0.5 * h * (1.0 + t), 0.5 * (1.0 + t) + 0.5 * h * (1.0 - t * t) * c * (1.0 + 3.0 * a * h * h)


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _manual_adam(w, m, v, x, y):
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    loss = -(y * np.log(p + 1e-7) + (1.0 - y) * np.log(1.0 - p + 1e-7)).mean()
    dz = (-(y / (p + 1e-7)) + (1.0 - y) / (1.0 - p + 1e-7)) * p * (1.0 - p) / len(y)
    g = dz @ x
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * (g * g)
    update = (m / (1.0 - 0.9 ** 3)) / (np.sqrt(v / (1.0 - 0.999 ** 3)) + 1e-8)
    return w - 1e-3 * update, m, v, loss


def _manual(name, host):
    """NumPy gradients written by hand, the CPU baseline."""
    if name == "softmax-CE":
        z, t = host
        return [(_softmax(z) - t) / z.shape[0]]
    if name == "layernorm":
        x, w, b, r = host
        xc = x - x.mean(-1, keepdims=True)
        inv = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + 1e-5)
        xh = xc * inv
        dxh = r * w
        dx = (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True)) * inv
        return [dx, (r * xh).sum(0), r.sum(0)]
    if name == "RMSNorm":
        x, w, r = host
        inv = 1 / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
        xh = x * inv
        dxh = r * w
        return [(dxh - xh * (dxh * xh).mean(-1, keepdims=True)) * inv, (r * xh).sum(0)]
    if name == "GELU MLP block":
        w1, b1, w2, x, r = host
        h = x @ w1 + b1
        g, slope = _gelu_parts(h)
        dh = (r @ w2.T) * slope
        return [x.T @ dh, dh.sum(0), g.T @ r]
    if name == "attention":
        q, kk, v, r = host
        p = _softmax((q @ np.swapaxes(kk, -1, -2)) * 0.125)
        dp = r @ np.swapaxes(v, -1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * 0.125
        return [ds @ kk, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ r]
    raise KeyError(name)


def cpu(args):
    rng = np.random.default_rng(2026)
    report = {"device": "cpu", "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d"),
              "rows": []}
    k = Lib(np)
    for name, fn, host, argnums, _ in programs(rng, cpu=True):
        if args.only and name not in args.only.split(","):
            continue
        ours, unpack_ours = _ours(fn, argnums, k)
        by_hand = ((lambda: _manual_adam(*host)) if argnums is None
                   else (lambda name=name, host=host: _manual(name, host)))
        started = time.perf_counter()
        _, arrays = unpack_ours(ours(*host))
        first = time.perf_counter() - started
        wanted = by_hand()[:3] if argnums is None else by_hand()
        for g, e in zip(arrays, wanted):
            np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-3 * max(1.0, np.abs(e).max()))
        for _ in range(2):
            ours(*host), by_hand()                  # warm: caches, thread pools
        # NOTE: in turns, each after a pause and an untimed call of its own (cpu.py's
        # interleaved_times): NumPy's OpenBLAS threads spin for a while after its products and,
        # right after them, take the two cores from autofuse's threads (attention 3.80 ms alone,
        # 8.89 right after NumPy's)
        runs = interleaved_times((lambda: ours(*host), by_hand), (), args.rounds)
        times = {"autofuse": float(np.median(runs[0])) * 1000,
                 "numpy by hand": float(np.median(runs[1])) * 1000}
        row = {"program": name, "times": times, "first_call_s": first,
               "speedup": float(np.median([n / a for a, n in zip(*runs)]))}
        report["rows"].append(row)
        print(json.dumps(row), flush=True)
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    args.out = os.path.abspath(args.out or os.path.join(
        os.path.dirname(__file__), "results", "gradients-cpu.json" if args.cpu else "gradients.json"))
    report = cpu(args) if args.cpu else gpu(args)
    _write(report, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
