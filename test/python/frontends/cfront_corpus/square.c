// Enzyme's getting-started example: the derivative of a scalar function.
#include <stdio.h>

extern double __enzyme_autodiff(void*, double);

double square(double x) {
    return x * x;
}

double dsquare(double x) {
    return __enzyme_autodiff((void*) square, x);
}

int main() {
    for(double i=1; i<5; i++)
        printf("square(%f)=%f, dsquare(%f)=%f\n", i, square(i), i, dsquare(i));
}
