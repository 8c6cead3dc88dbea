// A pointer to one malloc'ed struct with a pointer field, passed down a recursion
// (Enzyme's mixedstruct1-simple.c): each call mallocs the next frame, binds its fields
// and frees it after the recursive call.
#include <math.h>
#include <stdlib.h>

typedef struct {
  long long start;
  double *data;
} frame_t;

static double walk(frame_t *f, int n) {
  if (f->start < n) {
    frame_t *next = malloc(sizeof(frame_t));
    next->data = f->data;
    next->start = f->start + 1;
    double x = f->data[f->start];
    double rest = walk(next, n);
    free(next);
    return x * sin(x) + rest * x;
  }
  return 1.0;
}

double frames(double *data, int n) {
  frame_t *f = malloc(sizeof(frame_t));
  f->start = 0;
  f->data = data;
  double r = walk(f, n);
  free(f);
  return r;
}

double __enzyme_autodiff(void *, ...);

int main(void) {
  double x[6] = {0.5, -1.0, 2.0, 0.25, 0.75, -0.5}, dx[6] = {0};
  __enzyme_autodiff((void *)frames, x, dx, 6);
  return 0;
}
