/* hmrt/io.h and hmrt/driver.h compile as C; a C program writes and reads an
 * .npy file and a checkpoint. */
#include <stdio.h>
#include <string.h>

#include "hmrt/driver.h"
#include "hmrt/io.h"

static int fail(const char* what, hmrt_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, hmrt_status_string(st),
          hmrt_last_error());
  return 1;
}

int main(int argc, char** argv) {
  const char* npy = argc > 1 ? argv[1] : "hmrt_io_c_api_test.npy";
  const char* ckpt = argc > 2 ? argv[2] : "hmrt_io_c_api_test.ckpt";
  const int64_t shape[2] = {2, 3};
  const float data[6] = {1, 2, 3, 4, 5, 6};
  hmrt_npy arr;
  hmrt_checkpoint_meta meta;
  hmrt_checkpoint_tensor t;
  hmrt_hyperparams h;
  hmrt_status st = hmrt_npy_write(npy, HMRT_DTYPE_F32, 2, shape, data);
  if (st != HMRT_OK) return fail("hmrt_npy_write", st);
  st = hmrt_npy_read(npy, &arr);
  if (st != HMRT_OK) return fail("hmrt_npy_read", st);
  if (arr.dtype != HMRT_DTYPE_F32 || arr.rank != 2 || arr.shape[1] != 3 ||
      memcmp(arr.data, data, sizeof(data)) != 0) {
    fprintf(stderr, "npy round trip differs\n");
    return 1;
  }
  hmrt_npy_free(&arr);

  memset(&meta, 0, sizeof(meta));
  strcpy(meta.model, "c");
  meta.step = 3;
  t.name = "w";
  t.kind = HMRT_KIND_PARAM;
  t.dtype = HMRT_DTYPE_F32;
  t.rank = 2;
  t.shape = shape;
  t.data = data;
  st = hmrt_checkpoint_write(ckpt, &meta, 1, &t);
  if (st != HMRT_OK) return fail("hmrt_checkpoint_write", st);
  st = hmrt_checkpoint_read_tensor(ckpt, "w", &arr);
  if (st != HMRT_OK) return fail("hmrt_checkpoint_read_tensor", st);
  if (arr.count != 6 || memcmp(arr.data, data, sizeof(data)) != 0) {
    fprintf(stderr, "checkpoint round trip differs\n");
    return 1;
  }
  hmrt_npy_free(&arr);

  memset(&h, 0, sizeof(h));
  h.lr = 0.5f;
  if (hmrt_lr_at(&h, 1, 10) != 0.5f) return 1;
  printf("ok\n");
  return 0;
}
