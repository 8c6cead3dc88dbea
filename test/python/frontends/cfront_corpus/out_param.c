// A function that writes its result through a pointer; the output's shadow is the seed
// (enzyme_dupnoneed: its primal value is not needed afterwards).
#include <stdio.h>
#include <math.h>
#include <enzyme/enzyme.h>

void f(double* x, double* out, int n) {
    double acc = 0.0;
    for (int i = 0; i < n; i++)
        acc += sin(x[i]) * x[i];
    *out = acc;
}

int main() {
    double x[4] = {0.1, 0.2, 0.3, 0.4};
    double dx[4] = {0};
    double out = 0, dout = 1.0;
    __enzyme_autodiff((void*)f, enzyme_dup, x, dx, enzyme_dupnoneed, &out, &dout, enzyme_const, 4);
    for (int i = 0; i < 4; i++) printf("%f\n", dx[i]);
}
