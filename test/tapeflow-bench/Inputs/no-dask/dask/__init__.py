"""Stands for a missing dask (the sweep extra not installed)."""

raise ImportError("No module named dask")
