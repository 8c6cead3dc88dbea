"""Design-space sweeps (`tapeflow-sweep`): the spec (`spec`), running its grid (`engine`)
and the rows on disk (`results`)."""
