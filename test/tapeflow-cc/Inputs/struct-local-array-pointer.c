struct V { double x; double *y; };
double f(double a) { struct V vs[2]; vs[0].x = a; return vs[0].x; }
