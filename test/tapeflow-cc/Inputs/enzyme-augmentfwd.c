void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
void __enzyme_autodiff(void *, ...);

void f(double *x) { x[0] *= x[0]; }

void split(double *x, double *dx) {
  void *tape = __enzyme_augmentfwd((void *)f, x, dx);
  __enzyme_reverse((void *)f, x, dx, tape);
}
