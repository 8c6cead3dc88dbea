"""TapeFlow's benchmarks: kernels (`benchmarks.kernels`) and measurement scripts."""
