// main() of the `train` executable: libhmrt_driver.a links it with the
// generated program's hmcc_program() (see hmrt/driver.h).
#include "hmrt/driver.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  const int rc = hmrt_train_main(argc, argv, hmcc_program());
  // hmrt_train_main flushed stdout and checked it; closing it is the last
  // chance to see an error (e.g. a file system that reports it at close).
  errno = 0;
  if (std::fclose(stdout) != 0 && rc == 0) {
    std::fprintf(stderr, "train: error: cannot write to standard output: %s\n",
                 errno != 0 ? std::strerror(errno) : "write error");
    return 1;
  }
  return rc;
}
