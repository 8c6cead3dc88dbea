// A custom gradient that is right, inside a loop and a recursion: the tape (the augment
// returns the primal result and a saved value) is cached per call by the AD.
#include <math.h>
double __enzyme_autodiff(void *, ...);

typedef struct { double value; double saved; } aug_t;

double soft(double x, double k) { return log(1.0 + exp(k * x)); }

aug_t aug_soft(double x, double k) {
  aug_t r;
  r.value = log(1.0 + exp(k * x));
  r.saved = 1.0 / (1.0 + exp(-k * x));
  return r;
}

typedef struct { double dx; double dk; } grad_t;

grad_t grad_soft(double x, double k, double d, double saved) {
  grad_t g;
  g.dx = d * k * saved;
  g.dk = d * x * saved;
  return g;
}

void *__enzyme_register_gradient_soft[3] = {(void *)soft, (void *)aug_soft, (void *)grad_soft};

double chain(const double *x, double k, int n) {
  if (n == 0)
    return 0.0;
  double s = 0.0;
  for (int i = 0; i < 3; i++)
    s += soft(x[(n + i) % 4], k) * x[i];
  return s + 0.5 * chain(x, k * 0.9, n - 1);
}

int main(void) {
  double x[4] = {0.1, -0.2, 0.3, 0.4}, dx[4] = {0};
  __enzyme_autodiff((void *)chain, x, dx, 1.5, 3);
  return 0;
}
