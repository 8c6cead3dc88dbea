/* Enzyme's checkpointing schedules, as TapeFlow's C frontend (tapeflow-cc) reads them.
 *
 * The schedule tags and the budget arithmetic of Enzyme's `<enzyme/checkpoint_schedule.h>`,
 * declared with Enzyme's names and values so that a driver written for Enzyme compiles.
 * TapeFlow needs no schedule: its reverse pass streams the tape of every step (see the
 * README, "C kernels": checkpointed loops), so tapeflow-cc never translates these
 * functions; a differentiated function that calls one is refused at the call.
 */
#ifndef TAPEFLOW_ENZYME_CHECKPOINT_SCHEDULE_H
#define TAPEFLOW_ENZYME_CHECKPOINT_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The schedules a loop annotation names. */
enum {
  ENZYME_CKPT_SCHEDULE_NONE = 0,
  ENZYME_CKPT_SCHEDULE_PERIODIC = 1,
  ENZYME_CKPT_SCHEDULE_REVOLVE = 2,
  ENZYME_CKPT_SCHEDULE_STORE_ALL = 3,
  ENZYME_CKPT_SCHEDULE_BINOMIAL = 4
};

/* A scheme's next action (the values of Checkpointing.jl's ActionFlag). */
enum {
  ENZYME_CKPT_NONE = 0,
  ENZYME_CKPT_STORE = 1,
  ENZYME_CKPT_RESTORE = 2,
  ENZYME_CKPT_FORWARD = 3,
  ENZYME_CKPT_FIRSTUTURN = 4,
  ENZYME_CKPT_UTURN = 5,
  ENZYME_CKPT_ERROR = 6,
  ENZYME_CKPT_DONE = 7
};

/* A periodic schedule of n steps: `outer` segments of `inner` steps, then `trailing`. */
typedef struct EnzymeCkptPeriodicSplit {
  int64_t inner;
  int64_t outer;
  int64_t trailing;
} EnzymeCkptPeriodicSplit;

int64_t enzyme_ckpt_isqrt(int64_t n);
int64_t enzyme_ckpt_binomial_progress(int64_t n, int64_t s);
int64_t enzyme_ckpt_binomial_slots(int64_t n, int64_t budget);
EnzymeCkptPeriodicSplit enzyme_ckpt_periodic_split(int64_t n, int64_t budget);
int64_t enzyme_ckpt_periodic_segments(EnzymeCkptPeriodicSplit s);
int64_t enzyme_ckpt_periodic_start(EnzymeCkptPeriodicSplit s, int64_t k);
int64_t enzyme_ckpt_periodic_length(EnzymeCkptPeriodicSplit s, int64_t k);
/* The ENZYME_CKPT_SCHEDULE_* value of a schedule's name (its first `len` characters), or -1. */
int enzyme_ckpt_schedule_from_name(const char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif
