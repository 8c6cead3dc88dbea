// Enzyme's file-scope registration `void *__enzyme_function_like[2] = {(void *)f,
// "log1p"}` (its customlog1p.c, the Enzyme tutorial's 5_fn_like) is the attribute
// enzyme_function_like("log1p") on f: calls of f are math.log1p (value and derivative;
// f's own body is not used). It was ignored before, and f's body (2a) differentiated:
// d/da at 2 is 1/3 (2.0 before). A custom gradient (__enzyme_register_gradient_*) gives
// its function enzyme_augment/enzyme_gradient (custom-gradient.c; the function
// differentiated itself is differentiated as written, as Enzyme does at the top level).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry test_grad --args 2.0 1.0 | filecheck %s --check-prefix=VAL
// RUN: tapeflow-cc %S/Inputs/enzyme-register-gradient.c 2>&1 | filecheck %s --check-prefix=REG

double __enzyme_autodiff(void *, ...);

double log1p_like_function(double a) { return 2 * a; }

double test(double a) { return log1p_like_function(a); }

void *__enzyme_function_like[2] = {(void *)log1p_like_function, "log1p"};

int main(void) { return __enzyme_autodiff(test, 2.0) > 0.0; }

// CHECK:     func.func @test
// CHECK:     math.log1p
// CHECK-NOT: func.call @log1p_like_function
// VAL-NOT:   Traceback
// VAL:       result[0]: f64 = 0.333333
// REG-NOT:   Traceback
// REG:       func.func @square({{.*}} attributes {enzyme_augment = @aug_square, enzyme_gradient = @rev_square, tapeflow.autodiff}
