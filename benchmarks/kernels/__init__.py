"""The bundled benchmark kernels' files: `small/` and `default/` MLIR (made by
`generate.py`), their C twins in `c/`, and suite salam's C files and results in `salam/`.
The kernels themselves (sizes, arguments, inputs, NumPy references) are defined in the
package, `tapeflow.eval.bundled` (suite salam's in `tapeflow.eval.suites`), which reads
this folder as data (`tapeflow.eval.bundled.kernel_dir`)."""
