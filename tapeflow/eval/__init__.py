"""The evaluation harness behind `tapeflow-bench` and `tapeflow-sweep`: the kernels they
run (`kernels`, `bundled`, `suites`), bench jobs (`jobs`, `run`), what is reported
(`summary`, `markdown`, `plots`, assembled by `report`), where tasks run (`pool`) and
design-space sweeps (`sweep`). The library never imports it; the command-line tools do."""
