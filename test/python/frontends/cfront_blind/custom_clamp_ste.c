// Weights clipped to [-1, 1] before a squared error, the clip given a
// straight-through gradient as in quantization-aware training. The clip works
// through pointers, so its registration uses the pointer interface of Enzyme's
// tests (each argument followed by its shadow; the augmented forward returns
// the tape, here none). The reverse passes the output's adjoint through
// unchanged, also where the clip saturates and the true derivative is 0: a
// re-derived gradient would differ there.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

__attribute__((noinline)) void clip_unit(double *y, const double *x) {
  *y = fmin(fmax(*x, -1.0), 1.0);
}

void *aug_clip_unit(double *y, double *d_y, const double *x, double *d_x) {
  clip_unit(y, x);
  return NULL;
}

void rev_clip_unit(double *y, double *d_y, const double *x, double *d_x,
                   void *tape) {
  *d_x += *d_y; // straight through
  *d_y = 0.0;   // y is only written
}

void *__enzyme_register_gradient_clip_unit[3] = {
    (void *)clip_unit, (void *)aug_clip_unit, (void *)rev_clip_unit};

double clipped_error(const double *w, const double *t, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) {
    double c;
    clip_unit(&c, &w[i]);
    acc += (c - t[i]) * (c - t[i]);
  }
  return acc;
}

int main(void) {
  double w[5] = {0.4, -1.7, 2.5, -0.2, 0.9};
  double dw[5] = {0.0};
  double t[5] = {0.5, -0.5, 0.8, 0.0, 1.0};
  __enzyme_autodiff((void *)clipped_error, enzyme_dup, w, dw, enzyme_const, t,
                    enzyme_const, 5);
  for (int i = 0; i < 5; i++)
    printf("dw[%d] = %f\n", i, dw[i]);
  return 0;
}
