// Explicit Euler steps of a damped oscillator; the gradient of the final energy with
// respect to the initial state and the damping (an active scalar).
#include <stdio.h>
#include <string.h>
#include <enzyme/enzyme.h>

#define STEPS 20

double simulate(const double *init, double damping) {
  double state[2];
  memcpy(state, init, 2 * sizeof(double));
  const double dt = 0.05;
  for (int t = 0; t < STEPS; t++) {
    double x = state[0], v = state[1];
    double a = -x - damping * v;
    state[0] = x + dt * v;
    state[1] = v + dt * a;
  }
  return 0.5 * (state[0] * state[0] + state[1] * state[1]);
}

int main() {
  double init[2] = {1.0, 0.0}, dinit[2] = {0.0, 0.0};
  double ddamp = __enzyme_autodiff((void *)simulate, enzyme_dup, init, dinit, enzyme_out, 0.1);
  printf("d/dx0 = %f, d/dv0 = %f, d/ddamping = %f\n", dinit[0], dinit[1], ddamp);
}
