// uint64_t without <stdint.h>: every use after the first is an error too.

uint64_t twice(uint64_t x) { return 2 * x; }

double f(double x) {
  uint64_t n = twice(3);
  return x * n;
}
