"""What the passes learn from the IR without changing it: constants and trip counts
(`constants`), the cost model of `tapeflow{mode=auto}` (`cost_model`), remarks
(`remarks`)."""
