/* for user-c-kernel-preprocessor.c: a header found through tapeflow-bench -I */
#define GAIN 0.5
