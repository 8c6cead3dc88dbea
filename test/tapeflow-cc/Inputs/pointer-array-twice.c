#include <stdlib.h>
double f(double x, int n) {
  double *rows[3];
  for (int i = 0; i < 3; i++) rows[i] = malloc(2 * sizeof(double));
  for (int i = 0; i < 3; i++) free(rows[i]);
  for (int i = 0; i < 3; i++) rows[i] = malloc(8 * sizeof(double));
  rows[1][7] = x;
  return rows[1][7];
}
