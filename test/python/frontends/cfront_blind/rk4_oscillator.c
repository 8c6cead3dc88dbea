// One RK4 step of a harmonic oscillator on a 2-element state; the final
// position is written to an output pointer.
#include <stdio.h>

int enzyme_dup, enzyme_const, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);

static void rhs(const double *s, double w2, double *ds) {
  ds[0] = s[1];
  ds[1] = -w2 * s[0];
}

void rk4_position(double *state, double w2, double h, double *pos) {
  double k1[2], k2[2], k3[2], k4[2], tmp[2];
  rhs(state, w2, k1);
  for (int i = 0; i < 2; i++)
    tmp[i] = state[i] + 0.5 * h * k1[i];
  rhs(tmp, w2, k2);
  for (int i = 0; i < 2; i++)
    tmp[i] = state[i] + 0.5 * h * k2[i];
  rhs(tmp, w2, k3);
  for (int i = 0; i < 2; i++)
    tmp[i] = state[i] + h * k3[i];
  rhs(tmp, w2, k4);
  *pos = state[0] + h / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]);
}

int main(void) {
  double state[2] = {1.0, 0.5};
  double dstate[2] = {0.0, 0.0};
  double pos = 0.0, dpos = 1.0;
  __enzyme_autodiff((void *)rk4_position, enzyme_dup, state, dstate,
                    enzyme_const, 4.0, enzyme_const, 0.1, enzyme_dupnoneed,
                    &pos, &dpos);
  printf("dstate = %f %f\n", dstate[0], dstate[1]);
  return 0;
}
