// A function with a custom gradient called on local fixed-size arrays (cast to
// `double *` at the call), in a loop and out of one. The gradient is deliberately
// not the derivative: d x[j] += (j + 1) * d y, where the sum's derivative is 1.
double __enzyme_autodiff(void *, ...);

void total(double *y, const double *x) { *y = x[0] + x[1] + x[2]; }
void *aug_total(double *y, double *d_y, const double *x, double *d_x) {
  total(y, x);
  return 0;
}
void grad_total(double *y, double *d_y, const double *x, double *d_x, void *tape) {
  for (int j = 0; j < 3; j++)
    d_x[j] += (j + 1) * *d_y;
  *d_y = 0.0;
}
void *__enzyme_register_gradient_total[3] = {(void *)total, (void *)aug_total,
                                             (void *)grad_total};

double spread(const double *w, double k, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double a[3], t;
    a[0] = w[i] * k;
    a[1] = w[i] * w[i];
    a[2] = k;
    total(&t, a);
    s += t * t;
  }
  double b[3] = {k, k * k, w[0]}, u;
  total(&u, b);
  return s + u;
}

int main(void) {
  double w[4] = {0.5, -1.0, 2.0, 0.25}, dw[4] = {0};
  __enzyme_autodiff((void *)spread, w, dw, 1.5, 4);
  return 0;
}
