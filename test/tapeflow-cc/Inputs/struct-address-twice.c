struct V { double x, y; };
double g(struct V *v, struct V *w) { return v->x * w->y; }
double f(double a) { struct V v = {a, a}; return g(&v, &v); }
