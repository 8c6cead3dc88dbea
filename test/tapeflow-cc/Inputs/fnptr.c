double f(double *x, double (*g)(double)) { return g(x[0]); }
