"""Benchmarks for memd: run them all with `python -m bench` (`--quick` for a tiny version)."""
