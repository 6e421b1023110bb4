"""Every reach of the validation protocol (/work/shared/reference/validation.md) scored through
the product's own entry points, dev and held-out apart (bench/validation/split.py).

Reaches: interior, next level up, two levels up, past the knee, another workload (by distance),
another GPU of the same generation (by pair), another generation (by direction), twin, another
model (physics-only). Load kind (rate <-> concurrency) is not scored: the shipped samples have
concurrency levels only. Per reach and method: n, MAPE and median signed error of output tok/s,
TTFT and TPOT, the share inside the answer's band and inside the error the product states,
refusals, unknowns and invariant breaks; beside the product, copying the source's numbers,
bandwidth-ratio scaling (GPU reaches) and AIConfigurator 0.12's own estimate where it has the row.
Run: `python bench/bench_validation.py [--quick] [--split dev|held-out|both] [--json out.json]`
(default: dev only; do not look at held-out figures while tuning).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.validation.report import table, to_json, worst_and_reasons
from bench.validation.run import SPLITS, evaluate


def main(argv: list[str] | None = None) -> None:
    """Score the chosen split(s) and print the tables (and write the JSON file)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a fixed subset (< 90 s)")
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--reach", action="append", default=[], help="only this reach (repeatable), e.g. twin"
    )
    args = parser.parse_args(argv)
    splits = SPLITS[args.split]
    start = time.perf_counter()
    stats = evaluate(splits, args.quick, args.reach)
    elapsed = time.perf_counter() - start
    for line in [*table(stats, splits), "", *worst_and_reasons(stats, splits)]:
        print(line)
    print(f"\n{'quick' if args.quick else 'full'} run, split {args.split}: {elapsed:.1f} s")
    if args.json is not None:
        document = {"split": args.split, "quick": args.quick, "groups": to_json(stats)}
        args.json.write_text(json.dumps(document, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
