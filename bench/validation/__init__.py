"""The validation bench of issue 31 (bench/bench_validation.py): every reach of
/work/shared/reference/validation.md scored through the product's own entry points."""
