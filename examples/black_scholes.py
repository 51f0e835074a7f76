"""Black-Scholes option pricing: ~40 elementwise ops with two outputs, fused into one loop.

The call and the put share every intermediate (log, sqrt, exp, the normal CDF); autofuse computes
both in one pass over the five inputs instead of NumPy's dozens of temporaries.

    python examples/black_scholes.py [--small] [--repeats N] [--device cuda] [--no-peers]
"""
import math

import numpy as np

import _common
import autofuse

RSQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429


def cnd(d, xp=np):
    """The standard normal CDF (Abramowitz & Stegun 26.2.17), branch-free with `where`; `xp` is
    NumPy, or torch or jax.numpy for the peers' version."""
    k = 1.0 / (1.0 + 0.2316419 * xp.abs(d))
    tail = RSQRT2PI * xp.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return xp.where(d > 0, 1.0 - tail, tail)


@autofuse.jit
def black_scholes(price, strike, years, rate, vol):
    sqrt_t = np.sqrt(years)
    d1 = (np.log(price / strike) + (rate + 0.5 * vol * vol) * years) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    discount = strike * np.exp(-rate * years)
    call = price * cnd(d1) - discount * cnd(d2)
    put = discount * (1.0 - cnd(d2)) - price * (1.0 - cnd(d1))
    return call, put


# The peers' version, timed beside it: the same computation in the peers' own ops. torch and
# jax.numpy spell every op here alike, so one function serves both (`xp` is torch or jnp).
def _black_scholes_peers(xp, price, strike, years, rate, vol):
    sqrt_t = xp.sqrt(years)
    d1 = (xp.log(price / strike) + (rate + 0.5 * vol * vol) * years) / (vol * sqrt_t)
    d2 = d1 - vol * sqrt_t
    discount = strike * xp.exp(-rate * years)
    call = price * cnd(d1, xp) - discount * cnd(d2, xp)
    put = discount * (1.0 - cnd(d2, xp)) - price * (1.0 - cnd(d1, xp))
    return call, put


# float64 throughout: jax runs with 64-bit types enabled (_peers.py), as NumPy and torch compute.
PEERS = _common.Peers(black_scholes, torch=_black_scholes_peers, jax=_black_scholes_peers)


def _make_inputs(dev, small):
    """black_scholes's arguments: price, strike, years, float64 [4_000_000] ([1000] with `small`)
    on `dev`, and the rate and volatility as Python floats (weak scalars: results stay float64)."""
    n = 1000 if small else 4_000_000
    rng = np.random.default_rng(0)
    price = dev.asarray(rng.uniform(5.0, 30.0, n))
    strike = dev.asarray(rng.uniform(1.0, 100.0, n))
    years = dev.asarray(rng.uniform(0.25, 10.0, n))
    return price, strike, years, 0.02, 0.30


def main():
    args = _common.parse_args(__doc__)
    dev = _common.device(args)
    inputs = _make_inputs(dev, args.small)
    _common.header("black_scholes(price, strike, years, rate, vol), float64", dev,
                   f"[{inputs[0].shape[0]}] options")

    _common.check(black_scholes(*inputs), _common.numpy_reference(black_scholes, *inputs),
                  name="(call, put)")
    _common.print_summary(black_scholes, *inputs)
    _common.compare_times(black_scholes, *inputs, repeats=args.repeats, dev=dev,
                          peers=None if args.no_peers else PEERS)


if __name__ == "__main__":
    main()
