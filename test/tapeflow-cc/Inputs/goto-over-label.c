double f(double x) {
  if (x > 0.0) goto b;
  x = x * 2.0;
a:
  x += 1.0;
b:
  return x;
}
