struct P { double x; int n; };
double f(struct P p) { return p.x * p.n; }
void d(struct P p, struct P *dp) {
  __enzyme_autodiff((void *)f, enzyme_dup, p, dp);
}
