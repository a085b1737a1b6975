"""Edgewise benchmarks: ``python -m bench`` (or ``make bench``) prints tables and writes
``bench/results/RESULTS.md`` and plots. Scripts here measure and print; they never pass or fail
on timings."""
