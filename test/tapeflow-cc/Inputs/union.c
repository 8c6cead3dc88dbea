union U { double d; int i; };
double f(double x) { union U u; u.d = x; return u.d; }
