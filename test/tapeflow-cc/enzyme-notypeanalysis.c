// enzyme_notypeanalysis (on a global or a function) tells Enzyme to skip its type
// analysis there; TapeFlow's types are the C declarations', so it changes nothing: the
// file translates as without it, and the global's other limits still apply (a union
// global is refused, located).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt -p tapeflow-autodiff | tapeflow-run - --entry f_grad --args 2.0 1.0 | filecheck %s --check-prefix=VAL
// RUN: not tapeflow-cc %s -D UNION 2>&1 | filecheck %s --check-prefix=UNION
extern double __enzyme_autodiff(void *, ...);

__attribute__((enzyme_notypeanalysis)) double scale = 3.0;

__attribute__((enzyme_notypeanalysis)) double f(double x) { return scale * x * x; }

#ifdef UNION
union bits { long i; double d; };
__attribute__((enzyme_notypeanalysis)) static union bits u;
double g(double x) { u.d = x; return u.d * x; }
double dg(double x) { return __enzyme_autodiff((void *)g, x); }
#endif

double df(double x) { return __enzyme_autodiff((void *)f, x); }

// CHECK: "memref.global"() <{sym_name = "scale"
// CHECK: func.func @f(%x: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff}
// VAL: result[0]: f64 = 12.0
// UNION: error: {{.*}}enzyme-notypeanalysis.c:{{[0-9]+}}:{{[0-9]+}}: unsupported C: the global struct or union 'u'
