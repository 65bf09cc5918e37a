"""Benchmarks: `make bench` (or `python -m bench [NAME...] [--quick]`) prints one table each."""
