// RUN: hmcc-opt %s -split-input-file -tg-lr-schedule="kind=cosine warmup-steps=20 decay-steps=300 min-lr=2e-4" -verify-diagnostics | FileCheck %s
// tg-lr-schedule records the schedule as the module attribute tg.lr_schedule.

// CHECK: module attributes {tg.lr_schedule = {decay_steps = 300 : i64, kind = "cosine", min_lr = 2.000000e-04 : f32, warmup_steps = 20 : i64}}
module {
}

// RUN: not hmcc-opt %s -tg-lr-schedule="kind=step" 2>&1 | FileCheck %s --check-prefix=KIND
// An unknown kind is refused with its name.
// KIND: tg-lr-schedule: kind 'step' is unknown: use constant or cosine
