struct P { double x, y; };
double f(struct P *p) { return p->x * p->y; }
void d(struct P *p, struct P *dp) {
  __enzyme_autodiff((void *)f, enzyme_dup, p, dp);
}
