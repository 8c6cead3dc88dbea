struct V { int n; double *x; };
double f(struct V *vs, int i) { return vs[i].x[0]; }
