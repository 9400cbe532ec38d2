"""The report of ``benchmarks/bf16_profile.py`` (a helper, not a script): its tables and the estimate.

The estimate of the bf16 / fp32 throughput on a native-bf16 CPU takes this machine's copy
rates (:func:`copy_rates`) and an assumed bf16 matmul speed-up k (:data:`SPEEDUPS`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import torch
from profile_arms import attention_kernels
from profile_steps import ARMS, CASTS, COLUMNS, LABEL, MATMUL_OPS, PHASE_ORDER, Census, Profiled

SPEEDUPS = (2.0, 4.0, 8.0, float("inf"))


# ---- machine constants for the estimate ----------------------------------------------------------------


def copy_rates() -> tuple[float, float]:
    """(ns per element of an fp32 copy of 256K elements, µs per call of a conversion of one element)."""
    big, small = torch.randn(256 * 1024), torch.randn(1)

    def per_call(function: Callable[[], Any], calls: int) -> float:
        function()
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(calls):
                function()
            best = min(best, (time.perf_counter() - started) / calls)
        return best

    return (per_call(big.clone, 200) / big.numel() * 1e9,
            per_call(lambda: small.to(torch.bfloat16), 2000) * 1e6)


# ---- the report ----------------------------------------------------------------------------------------


def report(results: dict[tuple[str, str], Profiled], censuses: dict[str, Census], args: argparse.Namespace,
           native: bool) -> None:
    columns = [c for c in COLUMNS if c in results]

    def _header(first: str, width: int = 36) -> str:
        return f"  {first:<{width}}" + "".join(f"{arm + ' ' + LABEL[p]:>14}" for arm, p in columns)

    emulated = "" if native else " (bf16 EMULATED on this CPU: its times are not representative)"
    print(f"\nStep time, ms{emulated}")
    print(_header(""))
    print(f"  {'unprofiled':<36}" + "".join(f"{results[c].step_seconds * 1000:>14.1f}" for c in columns))
    print(f"  {'profiled (wall)':<36}" + "".join(f"{results[c].wall_ms:>14.1f}" for c in columns))
    print(f"  {'aten ops per step':<36}" + "".join(f"{results[c].aten_calls:>14.0f}" for c in columns))

    print("\nWhere a profiled step goes, ms per step (share of the step)")
    print(_header("phase"))
    for phase in PHASE_ORDER:
        cells = []
        for c in columns:
            ms = results[c].phase_ms.get(phase)
            cells.append("-" if ms is None else f"{ms:.1f} ({ms / results[c].wall_ms:.0%})")
        print(f"  {phase:<36}" + "".join(f"{cell:>14}" for cell in cells))

    for arm, precision in [c for c in (("clue", "no"), ("clue", "bf16")) if c in results]:
        r = results[(arm, precision)]
        print(f"\nTop {args.top} ops by self CPU time, {arm} {LABEL[precision]} "
              f"(per step; share of all ops' self time)")
        for name, (calls, ms) in sorted(r.ops.items(), key=lambda item: -item[1][1])[: args.top]:
            print(f"  {name:<56} {calls:6.0f} calls {ms:8.2f} ms {ms / r.self_ms:6.1%}")

    for title, a, b in (("clue fp32 against plain fp32 (what clue-core's loop adds)", ("clue", "no"), ("plain", "no")),
                        ("clue bf16 against clue fp32 (what autocast adds)", ("clue", "bf16"), ("clue", "no"))):
        if a not in results:
            continue
        ra, rb = results[a], results[b]
        print(f"\nOps whose calls per step differ, {title}: calls {LABEL[a[1]]} / {LABEL[b[1]]}, self ms")
        names = [n for n in set(ra.ops) | set(rb.ops) if abs(ra.calls(n) - rb.calls(n)) >= 0.5]
        names.sort(key=lambda n: -abs(ra.calls(n) - rb.calls(n)))
        for name in names[: args.top]:
            print(f"  {name:<56} {ra.calls(name):6.0f} / {rb.calls(name):6.0f}  "
                  f"{ra.ops.get(name, (0, 0))[1]:8.2f} / {rb.ops.get(name, (0, 0))[1]:8.2f} ms")

    print("\nDtype conversions per step (profiled): aten::_to_copy calls by phase and source dtype "
          "(elements converted)")
    keys = sorted({key for c in columns for key in results[c].conversions},
                  key=lambda k: (PHASE_ORDER.index(k[0]), k[1]))
    print(_header("phase, from"))
    for key in keys:
        cells = []
        for c in columns:
            calls, elements = results[c].conversions.get(key, (0.0, 0.0))
            cells.append(f"{calls:.0f} ({elements / 1e6:.2f}M)" if calls else "-")
        print(f"  {key[0] + ', from ' + key[1]:<36}" + "".join(f"{cell:>14}" for cell in cells))
    for name in CASTS:
        print(f"  {name + ' calls (all)':<36}" + "".join(f"{results[c].calls(name):>14.0f}" for c in columns))
    print(f"  {'_to_copy + copy_ self ms':<36}"
          + "".join(f"{results[c].ms(('aten::_to_copy', 'aten::copy_')):>14.1f}" for c in columns))

    print("\nCensus of one clue-core step (TorchDispatchMode: each op in the dtype it computes in); calls")
    for precision, census in censuses.items():
        moves = ", ".join(f"{a}->{b} {calls} calls ({n / 1e6:.2f}M elements)"
                          for (a, b), (calls, n) in sorted(census.conversions.items()))
        print(f"  {LABEL[precision]} conversions: {moves or 'none'}")
    bf16 = censuses["bf16"]
    plain_views = {"view", "t", "transpose", "expand", "unsqueeze", "slice", "select", "detach", "_unsafe_view",
                   "_to_copy", "copy_", "empty", "empty_like", "empty_strided", "clone", "alias", "as_strided"}
    names = sorted({name for name, _ in bf16.ops} - plain_views)
    fp32_ms = results[("clue", "no")]
    rows = [(name, bf16.ops.get((name, "bf16"), 0), bf16.ops.get((name, "fp32"), 0),
             fp32_ms.ops.get(f"aten::{name}", (0.0, 0.0))[1]) for name in names]
    rows = [row for row in rows if row[1] or row[2]]
    rows.sort(key=lambda row: -row[3])
    print("  compute ops in the bf16 step by dtype (self ms of the op in the profiled fp32 step):")
    print(f"  {'op':<40} {'bf16':>6} {'fp32':>6} {'fp32 ms':>9}")
    for name, in_bf16, in_fp32, ms in rows[: max(args.top, 24)]:
        print(f"  {name:<40} {in_bf16:>6} {in_fp32:>6} {ms:>9.2f}")

    print(f"  attention on bf16 inputs (torch.nn.functional.scaled_dot_product_attention): {attention_kernels()}")

    print("\nMatmul-class ops (addmm, mm, bmm, flash attention), self ms per step")
    for c in columns:
        r = results[c]
        mm = r.ms(MATMUL_OPS)
        print(f"  {c[0]} {LABEL[c[1]]:<5} {mm:8.1f} ms = {mm / r.wall_ms:4.0%} of the profiled step; "
              f"everything else {r.wall_ms - mm:8.1f} ms")

    per_element_ns, per_call_us = copy_rates()
    # what a native-bf16 CPU speeds up: the matmul ops the census saw computing in bf16
    in_bf16 = tuple(f"aten::{name}" for name, dtype in bf16.ops if dtype == "bf16" and f"aten::{name}" in MATMUL_OPS)
    in_fp32 = tuple(name for name in MATMUL_OPS if name not in in_bf16 and results[("clue", "no")].calls(name))
    added_calls = sum(calls for calls, _ in bf16.conversions.values()) - sum(
        calls for calls, _ in censuses["no"].conversions.values())
    added_elements = sum(n for _, n in bf16.conversions.values()) - sum(
        n for _, n in censuses["no"].conversions.values())
    casts_ms = (added_elements * per_element_ns / 1e6) + added_calls * per_call_us / 1000
    print("\nESTIMATE, not a measurement: bf16 / fp32 training throughput of these steps on a CPU with native bf16")
    print(f"  t_bf16 = fp32 step - its ms in the matmuls autocast runs in bf16 ({', '.join(in_bf16)}) x (1 - 1/k) "
          f"+ added conversions; fp32 step and matmul ms from the same profiled run")
    print(f"  added conversions: {added_calls} calls, {added_elements / 1e6:.2f}M elements per step at this machine's "
          f"fp32 copy rate ({per_element_ns:.2f} ns/element) and per-call cost ({per_call_us:.1f} µs) = "
          f"{casts_ms:.1f} ms")
    print(f"  matmuls that stay fp32 under autocast here (not sped up): {', '.join(in_fp32) or 'none'}")
    print(f"  {'arm':<8} {'fp32 ms':>8} {'bf16-able ms':>13}" + "".join(
        f"{'k=' + (f'{k:g}' if k != float('inf') else 'inf'):>9}" for k in SPEEDUPS))
    for arm in ARMS:
        fp32 = results[(arm, "no")]
        step_ms = fp32.wall_ms
        sped = fp32.ms(in_bf16)
        cells = [step_ms / (step_ms - sped * (1 - (0.0 if k == float("inf") else 1 / k)) + casts_ms) for k in SPEEDUPS]
        print(f"  {arm:<8} {step_ms:>8.1f} {sped:>13.1f}" + "".join(f"{cell:>9.2f}" for cell in cells))
