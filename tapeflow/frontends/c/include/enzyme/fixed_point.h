/* Enzyme's fixed-point loops, as TapeFlow's C frontend (tapeflow-cc) reads them.
 *
 *     __enzyme_fixed_point((void *)step, markers..., args...);
 *
 * is the loop `int64_t i = 0; while (step(i++, args...));`, with the markers first:
 * `enzyme_fp_state, ptr, bytes`, `enzyme_fp_reduction, r`, `enzyme_fp_max_iters, n`,
 * `enzyme_fp_control, control` and `enzyme_checkpoint_region, ptr, bytes`. A loop may
 * instead be marked from inside by `__enzyme_set_fixed_point(reduction, max_iters,
 * control, state, bytes, ...)`.
 *
 * Enzyme differentiates such a loop by iterating the adjoint of one step at the state
 * the loop ends in (the two-phase adjoint). tapeflow-cc translates the loop as written
 * and TapeFlow differentiates every iteration (their tape streamed), which a remark says:
 * the gradient of the loop as it ran, which equals the two-phase adjoint's once both have
 * converged (to the loop's own tolerance), but is not Enzyme's in three ways: the markers
 * (reduction, iteration limit, control function) are not used; the shadow of the state
 * is the derivative with respect to the initial guess (small once converged, where
 * Enzyme's is zero); and a loop stopped before convergence gets the gradient of what it
 * computed, not an extrapolation to the fixed point.
 */
#ifndef TAPEFLOW_ENZYME_FIXED_POINT_H
#define TAPEFLOW_ENZYME_FIXED_POINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

extern int enzyme_fp_state;
extern int enzyme_fp_reduction;
extern int enzyme_fp_max_iters;
extern int enzyme_fp_control;
extern int enzyme_checkpoint_region;

void __enzyme_fixed_point(void *step, ...);
void __enzyme_set_fixed_point(double reduction, int64_t max_iters, void *control, ...);

#ifdef __cplusplus
}
#endif

#endif
