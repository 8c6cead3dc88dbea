// Softmax cross-entropy of logits against an integer label, stabilised by
// the max logit (a branch on data).
#include <math.h>
#include <stdio.h>

int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

double xent(double *logits, int n, int label) {
  double m = logits[0];
  for (int i = 1; i < n; i++)
    if (logits[i] > m)
      m = logits[i];
  double z = 0.0;
  for (int i = 0; i < n; i++)
    z += exp(logits[i] - m);
  return log(z) + m - logits[label];
}

int main(void) {
  double logits[5] = {1.0, 2.5, -0.5, 0.3, 2.0};
  double dlogits[5] = {0};
  __enzyme_autodiff((void *)xent, enzyme_dup, logits, dlogits, enzyme_const, 5,
                    enzyme_const, 1);
  for (int i = 0; i < 5; i++)
    printf("dlogits[%d] = %f\n", i, dlogits[i]);
  return 0;
}
