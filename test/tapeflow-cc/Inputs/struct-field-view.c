struct P { double x; double *w; };
double f(struct P *ps, int i) { const struct P *q = ps + i; return q->x; }
