"""Stands for a missing distributed (the sweep extra not installed)."""

raise ImportError("No module named distributed")
