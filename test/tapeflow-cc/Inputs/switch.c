double f(double x, int k) {
  switch (k) { case 0: if (x > 1.0) return x; x = x * 2.0; case 1: return x; default: return 0.0; }
}
