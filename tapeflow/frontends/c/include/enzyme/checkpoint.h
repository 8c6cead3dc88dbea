/* Enzyme's checkpointed loops, as TapeFlow's C frontend (tapeflow-cc) reads them.
 *
 *     __enzyme_checkpoint_for((void *)step, start, n, markers..., args...);
 *
 * is the loop `for (int64_t i = start; i < start + n; i++) step(i, args...);` and
 *
 *     __enzyme_checkpoint_while((void *)step, markers..., args...);
 *
 * the loop `int64_t i = 0; while (step(i++, args...));`. The markers come first:
 * `enzyme_scheme, &scheme, &config` (how Enzyme trades memory for recomputation) and
 * `enzyme_checkpoint_region, ptr, bytes` (memory a snapshot holds).
 *
 * tapeflow-cc translates each call as its loop and differentiates that loop: the
 * gradient is the loop's, whatever the scheme, as it is for Enzyme. The scheme and the
 * regions are read by nobody: TapeFlow's reverse pass streams the tape of every step
 * instead of taking snapshots, so there are no recomputations and no snapshot slots, and
 * `config.stats` is never written (a driver that reads it reads its own initial values).
 * Parameters of type `EnzymeCheckpointScheme *`, `EnzymeCkptConfig *` and
 * `EnzymeCkptStats *` are host objects with no IR argument.
 *
 * The types are declared with Enzyme's names and layouts, so a driver written for
 * Enzyme (which fills a configuration and reads its statistics) compiles unedited.
 */
#ifndef TAPEFLOW_ENZYME_CHECKPOINT_H
#define TAPEFLOW_ENZYME_CHECKPOINT_H

#include "checkpoint_schedule.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENZYME_CKPT_ABI_VERSION 1

typedef struct EnzymeCkptAction {
  int32_t flag; /* an ENZYME_CKPT_* action */
  int64_t iteration;
  int64_t startiteration;
  int64_t cpnum;
} EnzymeCkptAction;

struct EnzymeCkptCallbacks;

typedef struct EnzymeCkptRegion {
  void *ptr;
  uint64_t bytes;
  uint32_t addrspace;
  uint32_t flags;
  void *shadow;
  const struct EnzymeCkptCallbacks *callbacks;
} EnzymeCkptRegion;

typedef struct EnzymeCkptCallbacks {
  void (*enter)(const struct EnzymeCkptCallbacks *, void *, void *);
  void (*save)(const struct EnzymeCkptCallbacks *, void *, void *, int64_t);
  void (*restore)(const struct EnzymeCkptCallbacks *, void *, void *, int64_t);
  void (*sync)(const struct EnzymeCkptCallbacks *, void *, void *);
  void (*leave)(const struct EnzymeCkptCallbacks *, void *, void *);
  void *data;
} EnzymeCkptCallbacks;

/* A checkpointing scheme: Enzyme's driver asks it for actions. */
typedef struct EnzymeCheckpointScheme {
  uint32_t version;
  void *(*init)(void *config, int64_t nsteps, uint64_t snapshot_bytes);
  void (*next_action)(void *state, EnzymeCkptAction *out);
  void (*store)(void *state, int64_t slot, int64_t step, const EnzymeCkptRegion *regions,
                uint64_t nregions);
  void (*restore)(void *state, int64_t slot, int64_t step, const EnzymeCkptRegion *regions,
                  uint64_t nregions);
  void (*set_nsteps)(void *state, int64_t nsteps);
  void (*finalize)(void *state);
  void (*save_state)(void *state, int64_t slot, int64_t step, void *env);
  void (*load_state)(void *state, int64_t slot, int64_t step, void *env);
  void (*set_paths)(void *state, const int64_t *paths, uint64_t len);
} EnzymeCheckpointScheme;

/* What Enzyme's reference schemes count; TapeFlow never writes it. */
typedef struct EnzymeCkptStats {
  int64_t forward_steps;
  int64_t taped_steps;
  int64_t stores;
  int64_t restores;
  int64_t max_slots;
  uint64_t max_bytes;
} EnzymeCkptStats;

typedef struct EnzymeCkptConfig {
  int64_t snapshots;
  int verbose;
  const char *spill_dir;
  uint64_t mem_budget;
  EnzymeCkptStats *stats;
} EnzymeCkptConfig;

extern int enzyme_scheme;
extern int enzyme_checkpoint_region;

/* Enzyme's reference schemes: only their addresses are used (as markers' operands). */
extern const EnzymeCheckpointScheme EnzymeCkptRevolve;
extern const EnzymeCheckpointScheme EnzymeCkptBinomial;
extern const EnzymeCheckpointScheme EnzymeCkptPeriodic;
extern const EnzymeCheckpointScheme EnzymeCkptStoreAll;

void __enzyme_checkpoint_for(void *step, int64_t start, int64_t n, ...);
void __enzyme_checkpoint_while(void *step, ...);

#ifdef __cplusplus
}
#endif

#endif
