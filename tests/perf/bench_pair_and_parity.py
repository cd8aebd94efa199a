"""Pair check and runtime parity on a MobileNetV2-sized pair (`make bench`).

Targets: the pair check (weights only, run before every comparison) takes under 1 s on the
3.5 M-parameter pair; compare-runtimes (reference vs optimized, spec check of every conv,
depthwise, FC and ADD included) runs a 224x224 sample in under 10 s.
"""

from __future__ import annotations

import sys
import time

from bench_models import mobilenet_pair

PAIR_CHECK_TARGET_S = 1.0
PARITY_PER_SAMPLE_TARGET_S = 10.0


def main() -> int:
    from inspector.core.compare.pair_check import check_pair_files
    from inspector.core.compare.runtime_parity import ParityOptions, compare_runtimes
    from inspector.core.samples.settings import SampleSettings

    f, q = mobilenet_pair()
    check_pair_files(f, q)  # warm: imports, mmap
    t0 = time.perf_counter()
    check = check_pair_files(f, q)
    t_check = time.perf_counter() - t0
    print(f"pair check: {t_check:.2f} s for {check.elements_compared:,} weights in {check.weights_compared} tensors "
          f"(max {check.max_step_error:.2f} steps, related={check.related}); target < {PAIR_CHECK_TARGET_S} s")
    samples = 2
    t0 = time.perf_counter()
    result = compare_runtimes(str(q), ParityOptions(runtimes=("reference", "optimized"), samples=SampleSettings(count=samples)))
    t_parity = (time.perf_counter() - t0) / samples
    first = result.first_divergence
    print(f"compare-runtimes: {t_parity:.2f} s per sample over {len(result.layers)} layers "
          f"(first divergence: {'none' if first is None else f'op {first.op_index} {first.op_type}'}); "
          f"target < {PARITY_PER_SAMPLE_TARGET_S} s")
    ok = t_check < PAIR_CHECK_TARGET_S and t_parity < PARITY_PER_SAMPLE_TARGET_S and check.related
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
