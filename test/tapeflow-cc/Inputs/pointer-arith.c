double f(double *x, int n) { double *y = x + 1; return y[0]; }
