// A one-layer model whose activation is picked at run time from a table of
// function pointers indexed by an integer argument, the plugin style of C
// numerical code.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

static double identity(double a) { return a; }
static double square_act(double a) { return a * a; }
static double softsign(double a) { return a / (1.0 + (a < 0 ? -a : a)); }

typedef double (*activation)(double);
static activation activations[3] = {identity, square_act, softsign};

double layer(double *w, const double *x, int n, int kind) {
  activation act = activations[kind];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += act(w[i] * x[i]);
  return s;
}

int main(void) {
  double w[3] = {0.5, -1.5, 2.0};
  double dw[3] = {0};
  double x[3] = {1.0, 2.0, -0.5};
  __enzyme_autodiff((void *)layer, enzyme_dup, w, dw, enzyme_const, x,
                    enzyme_const, 3, enzyme_const, 2);
  for (int i = 0; i < 3; i++)
    printf("dw[%d] = %f\n", i, dw[i]);
  return 0;
}
