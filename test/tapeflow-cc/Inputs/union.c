union U { double d; long l; };
double f(double x) { union U u; u.d = x; return u.d; }
