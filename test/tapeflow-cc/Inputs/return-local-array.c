double *tmp(double x) { double t[2]; t[0] = x; return t; }
double f(double x) { return tmp(x)[0]; }
