double f(double x, int k) {
  switch (k) {
  case 0:
    if (x > 0) break;
    x = -x;
    break;
  }
  return x;
}
