struct V { int n; double *x; };
void f(struct V *v, double *y) { v->x = y; }
