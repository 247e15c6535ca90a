/* hmrt/driver.h: the `train` command line as a function.
 *
 * libhmrt_driver.a holds main(), which calls
 *     hmrt_train_main(argc, argv, hmcc_program())
 * so a generated program becomes the `train` executable with
 *     g++ model.cpp -lhmrt_driver -lhmrt -fopenmp
 * Tests and embedders call hmrt_train_main() directly with a program of their
 * own.  runtime/README.md documents the flags, the batch rule and the
 * learning-rate schedule; `train --help` prints the flags.
 *
 * Plain C (C99), usable from C++.
 */
#ifndef HMRT_DRIVER_H
#define HMRT_DRIVER_H

#include "hmrt/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the train command line (argv[0] is the program name) on `program`.
 * Progress goes to stdout, errors to stderr as one line
 * "train: error: ...".  Returns the exit status: 0 on success (and for
 * --help), 1 on any error.  Never calls exit().  --threads changes the
 * kernels' thread count for the whole process (hmrt_set_num_threads). */
int hmrt_train_main(int argc, char** argv, const hmrt_program* program);

/* The learning rate of step `step` (counting from 1) of a run of
 * `total_steps` steps under the program's learning-rate schedule:
 *   HMRT_LR_CONSTANT: lr
 *   HMRT_LR_COSINE:   with W = warmup_steps and D = decay_steps, or
 *                     total_steps when decay_steps is 0,
 *     step <= W:      lr * step / W
 *     W < step <= D:  min_lr + (lr - min_lr) * (1 + cos(pi * (step - W) /
 *                     (D - W))) / 2
 *     step > D:       min_lr
 * computed in double precision and rounded to float.  Returns NaN for an
 * unknown learning-rate schedule. */
float hmrt_lr_at(const hmrt_hyperparams* hyper, int64_t step,
                 int64_t total_steps);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_DRIVER_H */
