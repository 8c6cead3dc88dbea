static double sq(double v) { return v * v; }
double f(double *x) { double (*op)(double) = sq; return op(x[0]); }
