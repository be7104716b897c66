"""fourfold's counter-based random numbers (src/core/counter_rng.h), ported exactly.

value = f(seed, counter): the same seed gives the same bytes whatever the chunking, so a PyTorch run and a
fourfold run make bit-identical inputs. numpy's uint64 arithmetic wraps modulo 2**64 as C++'s does.
"""

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_C_MUL = np.uint64(0xD1B54A32D192ED03)
_C_ADD = np.uint64(0x8CB92BA72F3D8DD7)


def _u64(v):
    return np.asarray(v, dtype=np.uint64)


def mix64(z):
    """splitmix64's finalizer, elementwise on uint64 arrays."""
    z = _u64(z)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def counter_bits(seed, counters):
    with np.errstate(over="ignore"):
        key = mix64(_u64(seed) + _GOLDEN)
        return mix64(key ^ (_u64(counters) * _C_MUL + _C_ADD))


def counter_uniform(seed, counters):
    """Uniform in [0, 1) with 53 random bits (float64)."""
    return (counter_bits(seed, counters) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def bench_values_f32(seed, count, scale=1.0, chunk=1 << 22):
    """The values of fourfold's bench inputs (op_bench.cpp fill_bench): float32((2u - 1) * scale), u from
    (seed, element index). Converting these float32 values to bf16/f16/fp8 with torch rounds to nearest even,
    as fourfold's f32_to_bf16, f32_to_f16 and store_from_double do."""
    out = np.empty(count, dtype=np.float32)
    for start in range(0, count, chunk):
        end = min(count, start + chunk)
        u = counter_uniform(seed, np.arange(start, end, dtype=np.uint64))
        out[start:end] = ((2.0 * u - 1.0) * scale).astype(np.float32)
    return out


def uniform_f64(seed, count, low, high):
    """Tensor::fill_uniform's values before the store: low + (high - low) * u(seed, 2i)."""
    u = counter_uniform(seed, np.arange(count, dtype=np.uint64) * np.uint64(2))
    return low + (high - low) * u


def counter_normal(seed, count):
    """Tensor::fill_normal's N(0, 1) values before the store (counter_normal: Box-Muller on u(seed, 2i) and
    u(seed, 2i + 1)), float64."""
    i = np.arange(count, dtype=np.uint64) * np.uint64(2)
    u1 = 1.0 - counter_uniform(seed, i)   # (0, 1]: log is finite
    u2 = counter_uniform(seed, i + np.uint64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def synthetic_prompt(n, vocab, seed):
    """model::synthetic_prompt (src/model/llm/generation.cpp): the check's prompt token ids."""
    mask = (1 << 64) - 1
    x = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & mask
    out = []
    for _ in range(n):
        x ^= x >> 33
        x = (x * 0xFF51AFD7ED558CCD) & mask
        x ^= x >> 29
        x = (x + 0x9E3779B97F4A7C15) & mask
        out.append(x % vocab)
    return out
