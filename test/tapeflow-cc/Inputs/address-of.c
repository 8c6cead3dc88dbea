void g(double *p) { p[0] = 1.0; }
double f(double x) { double *p = &x; g(p); return x; }
