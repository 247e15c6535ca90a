// The bigram test program as a generated model would be: it defines
// hmcc_program() and links with hmrt_driver, whose main() is the `train`
// command line.  ctest runs the resulting executable (hmrt.driver_exe_*).
#include "driver_test_programs.h"

extern "C" const hmrt_program* hmcc_program(void) {
  return hmrt_test_programs::bigram::program();
}
