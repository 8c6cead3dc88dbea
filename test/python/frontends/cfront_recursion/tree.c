// A recursive call inside a loop: a 3-ary tree of products over x, each node's
// value overwriting its slot of w (memory written after it is read, across calls).
double __enzyme_autodiff(void *, ...);

double node(const double *x, double *w, int depth, int at) {
  if (depth == 0)
    return x[at % 5];
  double s = 0.0;
  for (int k = 0; k < 3; k++) {
    double child = node(x, w, depth - 1, 3 * at + k);
    s += child * w[at % 4];
    w[at % 4] = w[at % 4] * 0.5 + child;
  }
  return s * s;
}

int main(void) {
  double x[5] = {0.3, -0.2, 0.5, 0.1, -0.4}, dx[5] = {0};
  double w[4] = {0.5, -1.0, 0.25, 0.75}, dw[4] = {0};
  __enzyme_autodiff((void *)node, x, dx, w, dw, 3, 0);
  return 0;
}
