// main() of the `train` executable: libhmrt_driver.a links it with the
// generated program's hmcc_program() (see hmrt/driver.h).
#include "hmrt/driver.h"

int main(int argc, char** argv) {
  return hmrt_train_main(argc, argv, hmcc_program());
}
