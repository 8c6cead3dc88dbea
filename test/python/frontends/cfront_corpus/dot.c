// Reverse mode of a dot product, arrays annotated as Enzyme's documentation does.
#include <stdio.h>
#include <enzyme/enzyme.h>

double dot(double* a, double* b, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += a[i] * b[i];
    }
    return sum;
}

int main() {
    double a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
    double da[3] = {0}, db[3] = {0};
    __enzyme_autodiff((void*)dot, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_const, 3);
    for (int i = 0; i < 3; i++)
        printf("da[%d]=%f db[%d]=%f\n", i, da[i], i, db[i]);
    return 0;
}
