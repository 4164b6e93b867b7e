# bench/: benchmarks (not tests).  Run with `make bench`.
