/* The public headers compile as C and the library links from a C program. */
#include <stdio.h>

#include "hmrt/hmrt.h"
#include "hmrt/kernels.h"

int main(void) {
  hmrt_arena* arena = NULL;
  float* a = NULL;
  hmrt_status st = hmrt_arena_create(3 * 4 * sizeof(float), &arena);
  if (st != HMRT_OK) {
    fprintf(stderr, "%s: %s\n", hmrt_status_string(st), hmrt_last_error());
    return 1;
  }
  st = hmrt_arena_ptr(arena, 0, 3 * 4 * sizeof(float), (void**)&a);
  if (st != HMRT_OK) return 1;
  /* a = [[1,2],[3,4]], b = I: c = a. */
  a[0] = 1; a[1] = 2; a[2] = 3; a[3] = 4;
  a[4] = 1; a[5] = 0; a[6] = 0; a[7] = 1;
  st = hmrt_sgemm(0, 0, 2, 2, 2, 1.0f, a, 2, a + 4, 2, 0.0f, a + 8, 2);
  if (st != HMRT_OK || a[8] != 1 || a[9] != 2 || a[10] != 3 || a[11] != 4) {
    fprintf(stderr, "sgemm from C failed\n");
    return 1;
  }
  if (hmrt_arena_ptr(arena, 0, 49, (void**)&a) != HMRT_OUT_OF_RANGE) return 1;
  hmrt_arena_destroy(arena);
  printf("ok\n");
  return 0;
}
