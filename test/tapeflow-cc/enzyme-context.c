// Enzyme's shadow contexts: `enzyme_context, ctx` in an __enzyme_autodiff call keeps the
// shadows of the globals f uses in the context, every global then being active, even
// one only read. TapeFlow's shadow of a global is the global @g_shadow, so f gets
// tapeflow.context and tapeflow-autodiff gives each float global f reads a shadow
// (without the context, a global only read is a constant). The context calls are the
// driver's; a second context, or a width other than 1, is refused.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt -p tapeflow-autodiff | filecheck %s --check-prefix=AD
// RUN: not tapeflow-cc %s -D TWO 2>&1 | filecheck %s --check-prefix=TWO
extern void *__enzyme_context(int);
extern void *__enzyme_shadow(void *, void *, int);
extern void __enzyme_zero_shadows(void *);
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_context;

double scale = 2.0;

double f(double x) { return scale * x * x; }

double df(double x) {
  void *ctx = __enzyme_context(1);
  __enzyme_zero_shadows(ctx);
#ifdef TWO
  void *other = __enzyme_context(1);
#endif
  return __enzyme_autodiff((void *)f, enzyme_context, ctx, x);
}

// CHECK: func.func @f(%x: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff, tapeflow.context}
// AD: "memref.global"() <{sym_name = "scale_shadow"
// AD: func.func @f_grad(%x: f64, %seed: f64) -> f64
// AD:   memref.get_global @scale_shadow
// TWO: error: {{.*}}enzyme-context.c:25:17: unsupported C: a second __enzyme_context (TapeFlow has one shadow per global, so one context per file)
