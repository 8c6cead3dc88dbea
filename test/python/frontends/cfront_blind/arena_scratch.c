// Scratch memory from a bump arena. Enzyme is told the arena allocates like
// malloc (__enzyme_allocation_like: the byte count is argument 1, and
// arena_release takes the allocation's argument 2 and the returned pointer),
// so the scratch gets a shadow and the arena's own code is not differentiated.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

extern double __enzyme_autodiff(void *, ...);
int enzyme_const;

static char arena[1 << 12];
static size_t arena_top = 0;

void *arena_alloc(char *base, size_t bytes, size_t *top) {
  void *p = base + *top;
  *top += (bytes + 7) & ~(size_t)7;
  return p;
}

void arena_release(size_t *top, void *p) { *top = (size_t)((char *)p - arena); }

void *__enzyme_allocation_like[4] = {(void *)arena_alloc, (void *)1,
                                     (void *)"2,-1", (void *)arena_release};

double smooth_norm(const double *x, int n) {
  double *y = (double *)arena_alloc(arena, n * sizeof(double), &arena_top);
  for (int i = 0; i < n; i++)
    y[i] = x[i] * x[i] + 1.0;
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += sqrt(y[i]);
  arena_release(&arena_top, y);
  return s;
}

int main(void) {
  double x[3] = {0.5, -1.5, 2.0};
  double dx[3] = {0.0};
  __enzyme_autodiff((void *)smooth_norm, x, dx, enzyme_const, 3);
  for (int i = 0; i < 3; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
