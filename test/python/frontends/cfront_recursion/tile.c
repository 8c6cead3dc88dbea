// Divide and conquer over a 2-D tile, as Enzyme's mixedstruct1 tests recurse
// (tile_multiply): halve the longer side until a small tile, then a loop nest.
double __enzyme_autodiff(void *, ...);

double tile(double *data, long r0, long r1, long c0, long c1) {
  if (r1 - r0 > 2) {
    long rm = (r0 + r1) / 2;
    return tile(data, r0, rm, c0, c1) + tile(data, rm, r1, c0, c1);
  }
  if (c1 - c0 > 2) {
    long cm = (c0 + c1) / 2;
    return tile(data, r0, r1, c0, cm) * tile(data, r0, r1, cm, c1);
  }
  double sum = 0.0;
  for (long r = r0; r < r1; r++)
    for (long c = c0; c < c1; c++)
      sum += data[r * 8 + c] * data[r * 8 + c] * data[r * 8 + c];
  return sum;
}

int main(void) {
  double d[64] = {0}, dd[64] = {0};
  __enzyme_autodiff((void *)tile, d, dd, 0L, 8L, 0L, 8L);
  return 0;
}
