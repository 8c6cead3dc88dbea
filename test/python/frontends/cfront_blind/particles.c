// Array of structs: spring potential between consecutive particles.
#include <stdio.h>

struct particle {
  double x;
  double y;
};

double __enzyme_autodiff(void *, ...);

double chain_energy(struct particle *p, int n, double k) {
  double e = 0.0;
  for (int i = 0; i + 1 < n; i++) {
    double dx = p[i + 1].x - p[i].x;
    double dy = p[i + 1].y - p[i].y;
    e += 0.5 * k * (dx * dx + dy * dy);
  }
  return e;
}

int main(void) {
  struct particle p[3] = {{0.0, 0.0}, {1.0, 0.5}, {1.5, 2.0}};
  struct particle dp[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  double dk = __enzyme_autodiff((void *)chain_energy, p, dp, 3, 2.0);
  for (int i = 0; i < 3; i++)
    printf("dp[%d] = (%f, %f)\n", i, dp[i].x, dp[i].y);
  printf("dk = %f\n", dk);
  return 0;
}
