double f(double x) {
  if (x > 0.0)
    return x;
  return -x;
}
