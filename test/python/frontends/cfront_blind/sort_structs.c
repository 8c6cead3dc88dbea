// Bubble sort of a local array of structs by key, swapping whole structs
// through a temporary inside the loops, then a rank-weighted sum.
#include <stdio.h>

typedef struct {
  double key;
  double weight;
  int origin;
} Sample;

double __enzyme_autodiff(void *, ...);

double ranked_sum(double *keys, double *weights, int n) {
  Sample s[6];
  for (int i = 0; i < n; i++) {
    s[i].key = keys[i];
    s[i].weight = weights[i];
    s[i].origin = i;
  }
  for (int pass = 0; pass < n - 1; pass++) {
    for (int j = 0; j + 1 < n - pass; j++) {
      if (s[j].key > s[j + 1].key) {
        Sample tmp = s[j];
        s[j] = s[j + 1];
        s[j + 1] = tmp;
      }
    }
  }
  double acc = 0.0;
  for (int k = 0; k < n; k++)
    acc += (k + 1) * s[k].key * s[k].weight + 0.01 * s[k].origin;
  return acc;
}

int main(void) {
  double keys[5] = {0.7, -1.2, 2.5, 0.1, 1.4};
  double weights[5] = {1.0, 0.5, -2.0, 3.0, 0.25};
  double dkeys[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  double dweights[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)ranked_sum, keys, dkeys, weights, dweights, 5);
  for (int i = 0; i < 5; i++)
    printf("dkeys[%d] = %f dweights[%d] = %f\n", i, dkeys[i], i, dweights[i]);
  return 0;
}
