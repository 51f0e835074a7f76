"""Black-Scholes option pricing: ~40 elementwise ops with two outputs, fused into one loop.

The call and the put share every intermediate (log, sqrt, exp, the normal CDF); autofuse computes
both in one pass over the five inputs instead of NumPy's dozens of temporaries.

    python examples/black_scholes.py [--small] [--repeats N] [--device cuda]
"""
import math

import numpy as np

import _common
import autofuse

RSQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429


def cnd(d):
    """The standard normal CDF (Abramowitz & Stegun 26.2.17), branch-free with np.where."""
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    tail = RSQRT2PI * np.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return np.where(d > 0, 1.0 - tail, tail)


@autofuse.jit
def black_scholes(price, strike, years, rate, vol):
    sqrt_t = np.sqrt(years)
    d1 = (np.log(price / strike) + (rate + 0.5 * vol * vol) * years) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    discount = strike * np.exp(-rate * years)
    call = price * cnd(d1) - discount * cnd(d2)
    put = discount * (1.0 - cnd(d2)) - price * (1.0 - cnd(d1))
    return call, put


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    n = 1000 if args.small else 4_000_000
    _common.header("black_scholes(price, strike, years, rate, vol), float64", dev, f"[{n}] options")

    rng = np.random.default_rng(0)
    price = dev.asarray(rng.uniform(5.0, 30.0, n))
    strike = dev.asarray(rng.uniform(1.0, 100.0, n))
    years = dev.asarray(rng.uniform(0.25, 10.0, n))
    rate, vol = 0.02, 0.30          # Python floats: weak scalars, the results stay float64
    inputs = (price, strike, years, rate, vol)

    _common.check(black_scholes(*inputs), _common.numpy_reference(black_scholes, *inputs),
                  name="(call, put)")
    _common.print_summary(black_scholes, *inputs)
    _common.compare_times(black_scholes, *inputs, repeats=args.repeats, dev=dev)


if __name__ == "__main__":
    main()
