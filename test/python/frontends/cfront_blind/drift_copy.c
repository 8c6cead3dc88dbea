// An array of particles copied struct by struct into a malloc'ed array in a
// loop (next[i] = ps[i]), each copy drifted, then an energy of the copies.
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  double x;
  double v;
} Particle;

double __enzyme_autodiff(void *, ...);

double drift_energy(Particle *ps, int n, double dt) {
  Particle *next = malloc(n * sizeof(Particle));
  for (int i = 0; i < n; i++) {
    next[i] = ps[i];
    next[i].x += dt * next[i].v;
  }
  double e = 0.0;
  for (int i = 0; i < n; i++)
    e += next[i].x * next[i].x + 0.5 * next[i].v * next[i].v;
  free(next);
  return e;
}

int main(void) {
  Particle ps[3] = {{0.5, 1.0}, {-1.0, 0.25}, {2.0, -0.5}};
  Particle dps[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  double ddt = __enzyme_autodiff((void *)drift_energy, ps, dps, 3, 0.1);
  for (int i = 0; i < 3; i++)
    printf("dps[%d] = (%f, %f)\n", i, dps[i].x, dps[i].v);
  printf("ddt = %f\n", ddt);
  return 0;
}
