// Total distance from the origin of n points given by their coordinates: hypot.
#include <math.h>
#include <stdio.h>

int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

double total_radius(double *x, double *y, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += hypot(x[i], y[i]);
  return s;
}

int main(void) {
  double x[4] = {3.0, -1.0, 0.5, 2.0};
  double y[4] = {4.0, 2.0, -1.5, 0.25};
  double dx[4] = {0.0, 0.0, 0.0, 0.0};
  double dy[4] = {0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)total_radius, enzyme_dup, x, dx, enzyme_dup, y, dy,
                    enzyme_const, 4);
  for (int i = 0; i < 4; i++)
    printf("dx[%d] = %f dy[%d] = %f\n", i, dx[i], i, dy[i]);
  return 0;
}
