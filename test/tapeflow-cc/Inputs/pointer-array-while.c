#include <stdlib.h>
double f(double x, int n) {
  double *rows[8];
  int i = 0;
  while (i < n) {
    posix_memalign((void **)&rows[i], 64, 4 * sizeof(double));
    rows[i][0] = x;
    i++;
  }
  return rows[0][0];
}
