struct S { double x; union { double d; long l; } u; };
double f(double a, struct S *s) { return s->x * a; }
