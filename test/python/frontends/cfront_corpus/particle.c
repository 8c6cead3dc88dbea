// A struct of doubles passed by pointer, as Enzyme users write physics code.
#include <stdio.h>
#include <enzyme/enzyme.h>

typedef struct {
  double x, y;
  double vx, vy;
} Particle;

double energy(const Particle *p) {
  return 0.5 * (p->vx * p->vx + p->vy * p->vy) + 9.81 * p->y;
}

int main() {
  Particle p = {0, 1, 2, 3}, dp = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, &p, &dp);
  printf("%f %f %f %f\n", dp.x, dp.y, dp.vx, dp.vy);
}
