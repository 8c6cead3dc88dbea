/* Enzyme's C interface, as TapeFlow's C frontend (tapeflow-cc) reads it.
 *
 * `#include <enzyme/enzyme.h>` finds this file on the frontend's include path, so a C file
 * written for Enzyme compiles unedited. The activity markers are only compared by name;
 * `__enzyme_autodiff` is never called by translated code (it names the function that
 * TapeFlow differentiates; see the README, "C kernels").
 */
#ifndef TAPEFLOW_ENZYME_ENZYME_H
#define TAPEFLOW_ENZYME_ENZYME_H

#ifdef __cplusplus
extern "C" {
#endif

extern int enzyme_dup;
extern int enzyme_dupnoneed;
extern int enzyme_const;
extern int enzyme_out;
extern int enzyme_allocated;
extern int enzyme_tape;

/* Variadic, as Enzyme's: the return type is the gradients of the active float scalars. */
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* Split mode: the augmented forward returns the tape the reverse takes. */
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

#ifdef __cplusplus
}
#endif

#endif
