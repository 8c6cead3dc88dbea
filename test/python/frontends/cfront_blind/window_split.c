// Windows over an array as small structs: a malloc'ed window is copied whole
// from another (*left = *whole), narrowed and summed; a struct local is
// initialised from one too.
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int lo;
  int hi;
  double scale;
} Window;

double __enzyme_autodiff(void *, ...);

static double window_sum(const double *x, const Window *w) {
  double acc = 0.0;
  for (int i = w->lo; i < w->hi; i++)
    acc += w->scale * x[i] * x[i];
  return acc;
}

double split_energy(double *x, int n) {
  Window *whole = malloc(sizeof(Window));
  whole->lo = 0;
  whole->hi = n;
  whole->scale = 1.0;
  Window *left = malloc(sizeof(Window));
  Window *right = malloc(sizeof(Window));
  *left = *whole;
  *right = *whole;
  left->hi = n / 2;
  right->lo = n / 2;
  right->scale = 3.0;
  Window half = *left;
  half.scale = 0.5;
  double e = window_sum(x, left) + window_sum(x, right) + window_sum(x, &half);
  free(whole);
  free(left);
  free(right);
  return e;
}

int main(void) {
  double x[5] = {1.0, -2.0, 0.5, 3.0, -1.5};
  double dx[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)split_energy, x, dx, 5);
  for (int i = 0; i < 5; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
