// The Euclidean norm by divide and conquer: each half's norm comes from a
// recursive call, and two halves combine as sqrt(a^2 + b^2). Both results of
// the calls are needed in the reverse pass of their caller.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

double tree_norm(const double *x, int lo, int hi) {
  if (hi - lo == 1)
    return fabs(x[lo]);
  int mid = (lo + hi) / 2;
  double a = tree_norm(x, lo, mid);
  double b = tree_norm(x, mid, hi);
  return sqrt(a * a + b * b);
}

int main(void) {
  double x[7] = {3.0, -1.0, 2.0, 0.5, -4.0, 1.5, 2.5};
  double dx[7] = {0.0};
  __enzyme_autodiff((void *)tree_norm, enzyme_dup, x, dx, enzyme_const, 0,
                    enzyme_const, 7);
  for (int i = 0; i < 7; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
