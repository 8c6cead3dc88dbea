"""Moved: the cost model to `tapeflow.transforms.analysis.cost_model`, remarks to
`tapeflow.transforms.analysis.remarks`. This name stays only until `tapeflow-opt`
imports `collect_remarks` from there."""

from tapeflow.transforms.analysis.remarks import collect_remarks

__all__ = ["collect_remarks"]
