double f(double x) {
  if (x > 0.0) {
    x = x * 2.0;
  skip:
    x += 1.0;
  }
  return x;
}
