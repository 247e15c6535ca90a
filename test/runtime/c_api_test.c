/* The public headers compile as C and the library links from a C program. */
#include <stdio.h>

#include "hmrt/device.h"
#include "hmrt/hmrt.h"
#include "hmrt/kernel_table.h"
#include "hmrt/kernels.h"
#include "hmrt/program.h"

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

  /* hmrt/device.h from C: a device buffer written and read back. */
  {
    hmrt_device* dev = NULL;
    hmrt_buffer* buf = NULL;
    const float in[3] = {1, 2, 3};
    float out[3] = {0, 0, 0};
    if (hmrt_device_open(hmrt_backend_name(0), &dev) != HMRT_OK ||
        hmrt_buffer_alloc(dev, HMRT_TIER_DEVICE, sizeof in, &buf) != HMRT_OK ||
        hmrt_copy_from_host(buf, 0, in, sizeof in) != HMRT_OK ||
        hmrt_copy_to_host(out, buf, 0, sizeof out) != HMRT_OK ||
        out[2] != 3 || hmrt_device_kernels(dev)->sgemm != hmrt_sgemm) {
      fprintf(stderr, "device from C failed: %s\n", hmrt_last_error());
      return 1;
    }
    hmrt_buffer_free(buf);
    {
      /* The ABI-3 execution context from C. */
      const uint64_t bytes[HMRT_TIER_COUNT] = {64, 0, 0};
      hmrt_exec* x = NULL;
      if (hmrt_exec_create(dev, bytes, &x) != HMRT_OK ||
          hmrt_exec_base(x, HMRT_TIER_DEVICE) == NULL ||
          hmrt_exec_base(x, HMRT_TIER_STORAGE) != NULL) {
        fprintf(stderr, "exec from C failed: %s\n", hmrt_last_error());
        return 1;
      }
      hmrt_exec_destroy(x);
    }
    hmrt_device_close(dev);
  }
  printf("ok\n");
  return 0;
}
