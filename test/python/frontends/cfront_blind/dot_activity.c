// Dot product plus an offset, with explicit activity markers: one vector is
// constant, the other duplicated, the offset an active output.
#include <stdio.h>
#include <stdlib.h>

int enzyme_const, enzyme_dup, enzyme_out;
double __enzyme_autodiff(void *, ...);

double shifted_dot(double *a, double *b, double shift, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; ++i)
    acc += a[i] * b[i];
  return acc + shift;
}

int main(void) {
  int n = 6;
  double *a = (double *)malloc(sizeof(double) * n);
  double *b = (double *)malloc(sizeof(double) * n);
  double *db = (double *)malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    a[i] = 0.5 * (i + 1);
    b[i] = 2.0 - i;
    db[i] = 0.0;
  }
  double dshift = __enzyme_autodiff((void *)shifted_dot, enzyme_const, a,
                                    enzyme_dup, b, db, enzyme_out, 0.25,
                                    enzyme_const, n);
  for (int i = 0; i < n; i++)
    printf("db[%d] = %f\n", i, db[i]);
  printf("dshift = %f\n", dshift);
  free(a);
  free(b);
  free(db);
  return 0;
}
