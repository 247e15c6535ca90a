// libFuzzer target: checkpoint directories.  The bytes up to the first NUL
// are manifest.json, the bytes after it (if there is a NUL) tensors.bin; JSON
// text holds no NUL, so every split is reachable.  Each input is tried twice:
// as it is, and "resealed" (its "manifest_crc32" replaced by the CRC-32 of
// the text before it, as a writer would compute it), so that the fuzzer
// explores what lies behind the manifest checksum too.
//
// Calls: hmrt_checkpoint_read_meta, hmrt_checkpoint_check_target,
// hmrt_checkpoint_read_tensor and hmrt_checkpoint_load into the small
// program below.  Failures must be one line naming the directory; a load
// that succeeds must save again and load back to the same bytes.  Files live
// in a private temporary directory.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "hmrt/io.h"
#include "hmrt/program.h"

namespace {

// The program the seeds were written for (make_seeds.py).
const int64_t kWShape[] = {2, 3};
const int64_t kBShape[] = {3};
const hmrt_tensor_desc kParams[] = {
    {"w", HMRT_DTYPE_F32, 2, kWShape, 0, 24, 0, HMRT_TIER_DEVICE, 0, nullptr},
    {"b", HMRT_DTYPE_F32, 1, kBShape, 64, 12, 0, HMRT_TIER_DEVICE, 0, nullptr},
};
const hmrt_tensor_desc kStates[] = {
    {"w.m", HMRT_DTYPE_F32, 2, kWShape, 128, 24, 0, HMRT_TIER_DEVICE, 0, nullptr},
};
hmrt_program make_program() {
  hmrt_program p;
  std::memset(&p, 0, sizeof(p));
  p.abi_version = HMRT_PROGRAM_ABI_VERSION;
  p.model_name = "fuzz";
  p.backend = "cpu";
  p.arena_bytes = 192;
  p.num_params = 2;
  p.params = kParams;
  p.num_states = 1;
  p.states = kStates;
  p.hyper.optimizer = HMRT_OPT_ADAMW;
  p.hyper.lr = 1e-3f;
  return p;
}

struct Context {
  hmrt_program program = make_program();
  hmrt_device* device = nullptr;
  hmrt_exec* exec = nullptr;
  Context() {
    const uint64_t bytes[HMRT_TIER_COUNT] = {192, 0, 0};
    if (hmrt_device_open("cpu", &device) != HMRT_OK ||
        hmrt_exec_create(device, bytes, &exec) != HMRT_OK)
      hmrt_fuzz::broken("cannot create the execution context", hmrt_last_error());
  }
  ~Context() {
    hmrt_exec_destroy(exec);
    hmrt_device_close(device);
  }
};

Context& context() {
  static Context c;
  return c;
}

std::string resealed(const std::string& text) {
  const std::string key = "\"manifest_crc32\": ";
  const size_t at = text.rfind(key);
  if (at == std::string::npos) return text;
  return text.substr(0, at) + key +
         std::to_string(hmrt_crc32(0, text.data(), at)) + "\n}\n";
}

void try_directory(const std::string& manifest, const uint8_t* bin,
                   size_t bin_size, bool has_bin) {
  using namespace hmrt_fuzz;
  const std::string ck = dir() / "ck";
  std::error_code ec;
  std::filesystem::remove_all(ck, ec);
  std::filesystem::create_directory(ck);
  write_file(ck + "/manifest.json",
             reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size());
  if (has_bin) write_file(ck + "/tensors.bin", bin, bin_size);

  hmrt_checkpoint_meta meta;
  hmrt_clear_error();
  hmrt_status st = hmrt_checkpoint_read_meta(ck.c_str(), &meta);
  check_failure(st, ck);
  if (st == HMRT_OK && (meta.step < 0 || meta.data_position < 0 ||
                        std::strlen(meta.identity) != 16))
    broken("read_meta returned an invalid meta", "");
  hmrt_clear_error();
  st = hmrt_checkpoint_check_target(ck.c_str());
  check_failure(st, ck);
  for (const char* name : {"w", "b", "w.m"}) {
    hmrt_npy t;
    hmrt_clear_error();
    st = hmrt_checkpoint_read_tensor(ck.c_str(), name, &t);
    check_failure(st, ck);
    if (st == HMRT_OK) {
      if (t.bytes != t.count * hmrt_dtype_size(t.dtype))
        broken("read_tensor: bytes disagree with the count", name);
      hmrt_npy_free(&t);
    }
  }

  Context& c = context();
  uint8_t* arena = hmrt_exec_base(c.exec, HMRT_TIER_DEVICE);
  std::memset(arena, 0x5a, 192);
  hmrt_clear_error();
  st = hmrt_checkpoint_load(ck.c_str(), &c.program, c.exec, &meta);
  check_failure(st, ck);
  if (st != HMRT_OK) return;
  // A loaded checkpoint saves and loads back to the same tensors.
  std::vector<uint8_t> loaded(arena, arena + 192);
  const std::string again = dir() / "again";
  hmrt_clear_error();
  if (hmrt_checkpoint_save(again.c_str(), &c.program, c.exec, &meta) != HMRT_OK)
    broken("cannot save what was loaded", hmrt_last_error());
  std::memset(arena, 0xa5, 192);
  hmrt_checkpoint_meta back;
  if (hmrt_checkpoint_load(again.c_str(), &c.program, c.exec, &back) != HMRT_OK)
    broken("cannot load what was saved", hmrt_last_error());
  for (const hmrt_tensor_desc& d : kParams)
    if (std::memcmp(arena + d.offset, loaded.data() + d.offset, d.bytes) != 0)
      broken("the save/load round trip changed a parameter", d.name);
  if (std::memcmp(arena + 128, loaded.data() + 128, 24) != 0)
    broken("the save/load round trip changed the state", "");
  if (back.step != meta.step || back.seed != meta.seed ||
      back.data_position != meta.data_position)
    broken("the save/load round trip changed the meta", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t text_size = nul ? size_t(nul - data) : size;
  const std::string manifest(reinterpret_cast<const char*>(data), text_size);
  const uint8_t* bin = nul ? nul + 1 : nullptr;
  const size_t bin_size = nul ? size - text_size - 1 : 0;
  try_directory(manifest, bin, bin_size, nul != nullptr);
  const std::string sealed = resealed(manifest);
  if (sealed != manifest) try_directory(sealed, bin, bin_size, nul != nullptr);
  return 0;
}
