// Checkpoints and initial-state directories: manifest.json + tensors.bin.
//
// manifest.json, format version 2 (written by hand, one tensor per line;
// read with nlohmann/json through io/json_util.h):
//   {
//     "format": "hmrt-checkpoint",
//     "format_version": 2,
//     "model": "gpt2",
//     "program_identity": "0d390ee2bb076a97",    (identity_of() below)
//     "program_abi_version": 3,                  (or null: not recorded,
//     "optimizer": "adamw",                       then all three are null)
//     "hyperparams": {"lr": 0.00100000005, ..., "lr_schedule": "cosine",
//                     "warmup_steps": 10, "decay_steps": 0},
//     "step": 100,
//     "data_position": 100,
//     "seed": 1,
//     "data_file": "tensors.bin",
//     "data_bytes": 1234,
//     "tensors": [
//       {"name": "wte", "kind": "param", "dtype": "float32", "shape": [50, 8],
//        "offset": 0, "bytes": 1600, "crc32": 305419896},
//       ...
//     ],
//     "manifest_crc32": 123456789
//   }
// Integrity: the last member, "manifest_crc32", is the CRC-32 (zlib) of every
// byte of the file before its key, i.e. from the '{' up to and including the
// two spaces that indent it; the file must end with that key, the decimal
// number and "\n}\n".  A reader parses and checks every member first, then
// the identity against the tensors listed, then this checksum, so any edit
// of a well-formed manifest (step 3 -> 7) is refused.
// tensors.bin holds each tensor's raw little-endian bytes at its offset
// (64-byte aligned, zero padding between tensors).
//
// hmrt_checkpoint_save and hmrt_checkpoint_load move a program's tensors
// between the files and its execution context's arenas through the device
// interface (hmrt/device.h): piece by piece through a pinned host-tier
// staging buffer, with hmrt_copy between it and the tensor's tier.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <zlib.h>

#include "io/io_internal.h"
#include "io/json_util.h"

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;

namespace {

using hmrt::fail;

constexpr const char* kFormat = "hmrt-checkpoint";
constexpr const char* kManifest = "manifest.json";
constexpr const char* kData = "tensors.bin";
constexpr uint64_t kAlign = 64;

const char* kind_name(int32_t kind) {
  return kind == HMRT_KIND_STATE ? "state" : "param";
}
const char* kind_noun(int32_t kind) {
  return kind == HMRT_KIND_STATE ? "optimizer state" : "parameter";
}

// ---- paths ------------------------------------------------------------------

// `dir` without trailing slashes, so "<dir>.tmp" is a sibling.
std::string clean_dir(const char* dir) {
  std::string s = dir;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// Reads a small file whole (at most `limit` bytes); false on any failure.
bool read_small_file(const fs::path& p, uint64_t limit, std::string* out) {
  hmrt::io::File f(p.c_str(), "rb");
  if (!f) return false;
  const int64_t size = hmrt::io::file_size(f.get());
  if (size < 0 || uint64_t(size) > limit) return false;
  out->assign(static_cast<size_t>(size), '\0');
  return size == 0 ||
         std::fread(&(*out)[0], 1, out->size(), f.get()) == out->size();
}

// Whether a save may delete or replace `p` (the target directory, or its
// "<dir>.tmp" / "<dir>.old" sibling).  Only these may go: nothing (absent),
// an empty directory, or one of hmrt's own checkpoints: a real directory
// (not a symbolic link) holding nothing but regular files named
// manifest.json and the data file that manifest names, where manifest.json
// parses as JSON with "format": "hmrt-checkpoint" (any format version).
// With `partial_ok` (the ".tmp" and ".old" siblings, which an interrupted
// save leaves behind) the manifest may be missing, and then only
// tensors.bin may be there.  Otherwise *why says what is in the way.
bool replaceable(const fs::path& p, bool partial_ok, std::string* why) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);
  if (st.type() == fs::file_type::not_found) return true;
  if (ec) {
    *why = "cannot inspect it: " + ec.message();
    return false;
  }
  if (fs::is_symlink(st)) {
    *why = "it is a symbolic link (a checkpoint is never written through one)";
    return false;
  }
  if (!fs::is_directory(st)) {
    *why = "it exists and is not a directory";
    return false;
  }
  std::vector<std::string> names;
  std::string irregular;  // the first entry that is not a regular file
  fs::directory_iterator it(p, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ec2;
    const fs::file_status es = fs::symlink_status(it->path(), ec2);
    if ((ec2 || !fs::is_regular_file(es)) && irregular.empty())
      irregular = name;
    names.push_back(name);
  }
  if (ec) {
    *why = "cannot list it: " + ec.message();
    return false;
  }
  if (names.empty()) return true;
  const bool has_manifest =
      std::find(names.begin(), names.end(), kManifest) != names.end() &&
      irregular != kManifest;
  std::string data_file = kData;
  if (has_manifest) {
    std::string text;
    hmrt::json::Json root;
    std::string error;
    if (!read_small_file(p / kManifest, uint64_t{256} << 20, &text)) {
      *why = "cannot read its manifest.json";
      return false;
    }
    if (!hmrt::json::parse(text, &root, &error)) {
      *why = "its manifest.json is not JSON (" + error +
             "), so it is not an hmrt checkpoint";
      return false;
    }
    const hmrt::json::Json* f = hmrt::json::member(root, "format");
    if (f == nullptr || !f->is_string() ||
        f->get_ref<const std::string&>() != kFormat) {
      *why = "its manifest.json is not an hmrt checkpoint manifest (no "
             "\"format\": \"hmrt-checkpoint\")";
      return false;
    }
    const hmrt::json::Json* d = hmrt::json::member(root, "data_file");
    if (d != nullptr && d->is_string()) {
      const std::string& n = d->get_ref<const std::string&>();
      if (!n.empty() && n.find('/') == std::string::npos && n != "." &&
          n != "..")
        data_file = n;
    }
  } else if (!partial_ok && irregular.empty()) {
    *why = "it is a non-empty directory without manifest.json (not a "
           "checkpoint)";
    return false;
  }
  if (!irregular.empty()) {
    *why = "it holds '" + irregular + "', which is not a regular file";
    return false;
  }
  for (const std::string& n : names)
    if (n != kManifest && n != data_file) {
      *why = "it holds '" + n + "', which a checkpoint does not";
      return false;
    }
  return true;
}

// ---- the manifest -------------------------------------------------------------

struct Entry {
  std::string name;
  int32_t kind = HMRT_KIND_PARAM;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  uint64_t offset = 0, bytes = 0;
  uint32_t crc = 0;
};

struct Manifest {
  hmrt_checkpoint_meta meta;
  std::string data_file;
  std::vector<Entry> tensors;
};

void set_model(hmrt_checkpoint_meta* meta, const char* name) {
  std::snprintf(meta->model, sizeof(meta->model), "%s", name ? name : "");
}

// ---- the program's identity ---------------------------------------------------

// One parameter or state as the identity sees it.
struct IdTensor {
  int32_t kind;
  std::string name;
  int32_t dtype;
  std::vector<int64_t> shape;
};

// The program identity: FNV-1a (64-bit) over the byte string
//   str("hmrt-program-identity-1") str(model) u64(count)
//   then per tensor, sorted by (kind, name bytes):
//     u64(kind) str(name) str(dtype name) u64(rank) u64(dim)...
// where u64 is 8 little-endian bytes and str(s) is u64(size) then the bytes;
// kind is 0 for a parameter and 1 for a state.  16 lowercase hex digits.
std::string identity_of(const std::string& model, std::vector<IdTensor> ts) {
  std::sort(ts.begin(), ts.end(), [](const IdTensor& a, const IdTensor& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.name < b.name;
  });
  uint64_t h = 0xcbf29ce484222325ull;
  auto bytes = [&](const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 0x100000001b3ull;
    }
  };
  auto u64 = [&](uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    bytes(b, 8);
  };
  auto str = [&](const std::string& v) {
    u64(v.size());
    bytes(v.data(), v.size());
  };
  str("hmrt-program-identity-1");
  str(model);
  u64(ts.size());
  for (const IdTensor& t : ts) {
    u64(static_cast<uint64_t>(t.kind));
    str(t.name);
    str(hmrt_dtype_name(t.dtype));
    u64(t.shape.size());
    for (int64_t d : t.shape) u64(static_cast<uint64_t>(d));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  return hex;
}

// The program's model name as a manifest holds it (at most 255 bytes).
std::string truncated_model(const hmrt_program* p) {
  hmrt_checkpoint_meta m;
  set_model(&m, p->model_name);
  return m.model;
}

// ---- hyper-parameters in the manifest -------------------------------------------

const char* const kOptimizers[] = {"none", "sgd", "adamw", "adamw8bit", "onnx"};
const char* const kSchedules[] = {"constant", "cosine"};

const char* optimizer_name(int32_t o) {
  return o >= 0 && o < 5 ? kOptimizers[o] : nullptr;
}
int32_t optimizer_from_name(const std::string& s) {
  for (int32_t i = 0; i < 5; ++i)
    if (s == kOptimizers[i]) return i;
  return -1;
}

// The float members of hmrt_hyperparams, in manifest order.
struct FloatField {
  const char* key;
  float hmrt_hyperparams::*field;
};
const FloatField kFloatFields[] = {
    {"lr", &hmrt_hyperparams::lr},
    {"beta1", &hmrt_hyperparams::beta1},
    {"beta2", &hmrt_hyperparams::beta2},
    {"eps", &hmrt_hyperparams::eps},
    {"weight_decay", &hmrt_hyperparams::weight_decay},
    {"momentum", &hmrt_hyperparams::momentum},
    {"clip_norm", &hmrt_hyperparams::clip_norm},
    {"min_lr", &hmrt_hyperparams::min_lr},
};

// {"lr": 0.100000001, ..., "lr_schedule": "constant", "warmup_steps": 0,
//  "decay_steps": 0} (the optimizer is its own member of the manifest).
std::string hyper_json(const hmrt_hyperparams& h) {
  std::string js = "{";
  for (const FloatField& f : kFloatFields) {
    if (js.size() > 1) js += ", ";
    js += std::string("\"") + f.key + "\": " + hmrt::json::number_f32(h.*f.field);
  }
  js += std::string(", \"lr_schedule\": \"") + kSchedules[h.lr_schedule] + "\"";
  js += ", \"warmup_steps\": " + std::to_string((long long)h.warmup_steps);
  js += ", \"decay_steps\": " + std::to_string((long long)h.decay_steps);
  return js + "}";
}

// The manifest's last member: "manifest_crc32": the CRC-32 of every byte of
// the file before this key (from the opening '{' up to and including the
// two spaces of indentation before it), written as
//   <text>"manifest_crc32": <decimal>\n}\n
constexpr const char* kCrcKey = "\"manifest_crc32\": ";

// Parses and checks the manifest's text.  Every malformed manifest is one
// message naming the file; nlohmann's exceptions are caught here.
hmrt_status parse_manifest(const std::string& path, const std::string& text,
                           Manifest* m) {
  using hmrt::json::Json;
  using hmrt::json::member;
  const char* p = path.c_str();
  try {
    Json root;
    std::string error;
    if (!hmrt::json::parse(text, &root, &error))
      return fail(HMRT_INVALID_ARGUMENT, "%s: invalid JSON: %s", p,
                  error.c_str());
    if (!root.is_object())
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: the manifest is not a JSON object", p);
    const Json* v = member(root, "format");
    if (!v || !v->is_string() || v->get_ref<const std::string&>() != kFormat)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"format\" must be \"%s\" (not an hmrt checkpoint)", p,
                  kFormat);
    int64_t version = 0;
    v = member(root, "format_version");
    if (!v || !hmrt::json::get_int64(*v, &version))
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"format_version\" is missing or not an integer", p);
    if (version < HMRT_CHECKPOINT_FORMAT_VERSION)
      return fail(HMRT_UNIMPLEMENTED,
                  "%s: checkpoint format version %lld was written by an "
                  "earlier runtime; this one reads only version %d, whose "
                  "manifest carries a checksum and the program's identity "
                  "(continue that run with the train that wrote it, or start "
                  "again from --state)",
                  p, (long long)version, HMRT_CHECKPOINT_FORMAT_VERSION);
    if (version > HMRT_CHECKPOINT_FORMAT_VERSION)
      return fail(HMRT_UNIMPLEMENTED,
                  "%s: checkpoint format version %lld is newer than this "
                  "runtime's version %d; load it with the runtime that wrote "
                  "it",
                  p, (long long)version, HMRT_CHECKPOINT_FORMAT_VERSION);

    std::memset(&m->meta, 0, sizeof(m->meta));
    v = member(root, "model");
    if (!v || !v->is_string())
      return fail(HMRT_INVALID_ARGUMENT, "%s: \"model\" must be a string", p);
    set_model(&m->meta, v->get_ref<const std::string&>().c_str());
    const std::string model = v->get_ref<const std::string&>();

    // The program that wrote it.
    std::string identity;
    v = member(root, "program_identity");
    if (!v || !v->is_string() ||
        (identity = v->get_ref<const std::string&>()).size() != 16 ||
        identity.find_first_not_of("0123456789abcdef") != std::string::npos)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"program_identity\" must be a string of 16 lowercase "
                  "hex digits",
                  p);
    std::snprintf(m->meta.identity, sizeof(m->meta.identity), "%s",
                  identity.c_str());
    const Json* abi = member(root, "program_abi_version");
    const Json* opt = member(root, "optimizer");
    const Json* hyper = member(root, "hyperparams");
    if (!abi || !opt || !hyper)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"program_abi_version\", \"optimizer\" and "
                  "\"hyperparams\" must all be present (null when not "
                  "recorded)",
                  p);
    if (!abi->is_null() || !opt->is_null() || !hyper->is_null()) {
      int64_t a = 0;
      if (!hmrt::json::get_int64(*abi, &a) || a < 1 || a > 0xFFFFFFFFll)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: \"program_abi_version\" must be an integer in [1, "
                    "2^32) (or null with \"optimizer\" and \"hyperparams\")",
                    p);
      m->meta.abi_version = static_cast<uint32_t>(a);
      hmrt_hyperparams& h = m->meta.hyper;
      if (!opt->is_string() ||
          (h.optimizer = optimizer_from_name(
               opt->get_ref<const std::string&>())) < 0)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: \"optimizer\" must be one of none, sgd, adamw, "
                    "adamw8bit, onnx",
                    p);
      if (!hyper->is_object())
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: \"hyperparams\" must be an object", p);
      for (const FloatField& f : kFloatFields) {
        v = member(*hyper, f.key);
        if (!v || !(v->is_number() || v->is_null()))
          return fail(HMRT_INVALID_ARGUMENT,
                      "%s: \"hyperparams\": \"%s\" must be a number", p,
                      f.key);
        h.*f.field =
            v->is_null() ? NAN : static_cast<float>(v->get<double>());
      }
      v = member(*hyper, "lr_schedule");
      const std::string sched =
          v && v->is_string() ? v->get_ref<const std::string&>() : "";
      if (sched != kSchedules[0] && sched != kSchedules[1])
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: \"hyperparams\": \"lr_schedule\" must be \"constant\" "
                    "or \"cosine\"",
                    p);
      h.lr_schedule = sched == kSchedules[1] ? HMRT_LR_COSINE : HMRT_LR_CONSTANT;
      struct {
        const char* key;
        int64_t* out;
      } steps[] = {{"warmup_steps", &h.warmup_steps},
                   {"decay_steps", &h.decay_steps}};
      for (auto& e : steps) {
        v = member(*hyper, e.key);
        if (!v || !hmrt::json::get_int64(*v, e.out))
          return fail(HMRT_INVALID_ARGUMENT,
                      "%s: \"hyperparams\": \"%s\" must be an integer", p,
                      e.key);
      }
    }
    struct {
      const char* key;
      int64_t* out;
    } ints[] = {{"step", &m->meta.step},
                {"data_position", &m->meta.data_position}};
    for (auto& e : ints) {
      v = member(root, e.key);
      if (!v || !hmrt::json::get_int64(*v, e.out) || *e.out < 0)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: \"%s\" must be a non-negative integer", p, e.key);
    }
    v = member(root, "seed");
    if (!v || !hmrt::json::get_uint64(*v, &m->meta.seed))
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"seed\" must be an integer in [0, 2^64)", p);
    v = member(root, "data_file");
    m->data_file = kData;
    if (v) {
      if (!v->is_string() || v->get_ref<const std::string&>().empty() ||
          v->get_ref<const std::string&>().find('/') != std::string::npos)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: \"data_file\" must be a file name in the directory",
                    p);
      m->data_file = v->get_ref<const std::string&>();
    }

    const Json* list = member(root, "tensors");
    if (!list || !list->is_array())
      return fail(HMRT_INVALID_ARGUMENT, "%s: \"tensors\" must be an array", p);
    m->tensors.clear();
    for (size_t i = 0; i < list->size(); ++i) {
      const Json& t = (*list)[i];
      Entry e;
      if (!t.is_object())
        return fail(HMRT_INVALID_ARGUMENT, "%s: tensors[%zu] is not an object",
                    p, i);
      v = member(t, "name");
      if (!v || !v->is_string() || v->get_ref<const std::string&>().empty())
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: tensors[%zu]: \"name\" must be a non-empty string", p,
                    i);
      e.name = v->get_ref<const std::string&>();
      const char* n = e.name.c_str();
      v = member(t, "kind");
      const std::string kind =
          v && v->is_string() ? v->get_ref<const std::string&>() : "";
      if (kind != "param" && kind != "state")
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: tensor '%s': \"kind\" must be \"param\" or \"state\"",
                    p, n);
      e.kind = kind == "state" ? HMRT_KIND_STATE : HMRT_KIND_PARAM;
      v = member(t, "dtype");
      if (!v || !v->is_string() ||
          (e.dtype = hmrt_dtype_from_name(
               v->get_ref<const std::string&>().c_str())) == 0)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: tensor '%s': \"dtype\" must be one of float32, "
                    "float64, float16, bfloat16, int64, int32, int16, int8, "
                    "uint64, uint32, uint16, uint8, bool",
                    p, n);
      v = member(t, "shape");
      if (!v || !v->is_array())
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: tensor '%s': \"shape\" must be an array", p, n);
      for (const Json& d : *v) {
        int64_t dim = 0;
        if (!hmrt::json::get_int64(d, &dim) || dim < 0)
          return fail(HMRT_INVALID_ARGUMENT,
                      "%s: tensor '%s': \"shape\" must hold non-negative "
                      "integers",
                      p, n);
        e.shape.push_back(dim);
      }
      struct {
        const char* key;
        uint64_t* out;
      } u64s[] = {{"offset", &e.offset}, {"bytes", &e.bytes}};
      for (auto& f2 : u64s) {
        int64_t x = 0;
        v = member(t, f2.key);
        if (!v || !hmrt::json::get_int64(*v, &x) || x < 0)
          return fail(HMRT_INVALID_ARGUMENT,
                      "%s: tensor '%s': \"%s\" must be a non-negative integer",
                      p, n, f2.key);
        *f2.out = static_cast<uint64_t>(x);
      }
      uint64_t crc = 0;
      v = member(t, "crc32");
      if (!v || !hmrt::json::get_uint64(*v, &crc) || crc > 0xFFFFFFFFu)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: tensor '%s': \"crc32\" must be an integer in [0, "
                    "2^32)",
                    p, n);
      e.crc = static_cast<uint32_t>(crc);
      const int64_t count = hmrt::io::checked_count(
          static_cast<int32_t>(e.shape.size()), e.shape.data(),
          hmrt_dtype_size(e.dtype));
      if (count < 0)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: tensor '%s': shape %s of %s is more than 2^63 bytes",
                    p, n,
                    hmrt::io::shape_string(static_cast<int32_t>(e.shape.size()),
                                           e.shape.data())
                        .c_str(),
                    hmrt_dtype_name(e.dtype));
      if (uint64_t(count) * hmrt_dtype_size(e.dtype) != e.bytes)
        return fail(
            HMRT_INVALID_ARGUMENT,
            "%s: tensor '%s': \"bytes\" is %llu but shape %s of %s needs %llu",
            p, n, (unsigned long long)e.bytes,
            hmrt::io::shape_string(static_cast<int32_t>(e.shape.size()),
                                   e.shape.data())
                .c_str(),
            hmrt_dtype_name(e.dtype),
            (unsigned long long)(count < 0 ? 0
                                           : count * hmrt_dtype_size(e.dtype)));
      for (const Entry& o : m->tensors)
        if (o.kind == e.kind && o.name == e.name)
          return fail(HMRT_INVALID_ARGUMENT, "%s: %s '%s' is listed twice", p,
                      kind_noun(e.kind), n);
      m->tensors.push_back(std::move(e));
    }

    // The identity must be that of the tensors listed (a writer's error
    // otherwise: the checksum below covers edits).
    std::vector<IdTensor> ids;
    for (const Entry& e : m->tensors)
      ids.push_back({e.kind, e.name, e.dtype, e.shape});
    const std::string computed = identity_of(model, std::move(ids));
    if (computed != identity)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"program_identity\" is %s but the model name and "
                  "tensors listed give %s",
                  p, identity.c_str(), computed.c_str());

    // Last: the checksum over the text before "manifest_crc32".
    uint64_t crc = 0;
    v = member(root, "manifest_crc32");
    if (!v || !hmrt::json::get_uint64(*v, &crc) || crc > 0xFFFFFFFFu)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: \"manifest_crc32\" must be an integer in [0, 2^32)",
                  p);
    const std::string tail = std::to_string((unsigned long long)crc) + "\n}\n";
    const std::string key = kCrcKey;
    if (text.size() < key.size() + tail.size() ||
        text.compare(text.size() - tail.size(), tail.size(), tail) != 0 ||
        text.compare(text.size() - tail.size() - key.size(), key.size(),
                     key) != 0)
      return fail(HMRT_IO_ERROR,
                  "%s: the manifest does not end with its checksum "
                  "(\"manifest_crc32\": N, then \"}\" and a newline, as hmrt "
                  "writes it): it was edited or is corrupt",
                  p);
    const size_t covered = text.size() - tail.size() - key.size();
    const uint32_t have = hmrt_crc32(0, text.data(), covered);
    if (have != crc)
      return fail(HMRT_IO_ERROR,
                  "%s: checksum mismatch: \"manifest_crc32\" is %llu but the "
                  "text before it has CRC-32 %lu; the manifest was edited or "
                  "is corrupt, and an edited manifest is refused",
                  p, (unsigned long long)crc, (unsigned long)have);
    return HMRT_OK;
  } catch (const std::bad_alloc&) {
    return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory reading the manifest",
                p);
  } catch (const std::exception& e) {
    return fail(HMRT_INVALID_ARGUMENT, "%s: invalid manifest: %s", p,
                e.what());
  }
}

hmrt_status read_manifest(const std::string& dir, Manifest* m) {
  const std::string path = dir + "/" + kManifest;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    std::string hint;
    if (fs::exists(dir + ".tmp", ec) || fs::exists(dir + ".old", ec))
      hint = " (a save into it was interrupted: see " + dir + ".old and " +
             dir + ".tmp)";
    return fail(HMRT_IO_ERROR, "%s: no such checkpoint directory%s",
                dir.c_str(), hint.c_str());
  }
  hmrt::io::File f(path.c_str(), "rb");
  if (!f)
    return fail(HMRT_IO_ERROR, "%s: cannot open: %s", path.c_str(),
                hmrt::io::errno_text().c_str());
  const int64_t size = hmrt::io::file_size(f.get());
  if (size < 0)
    return fail(HMRT_IO_ERROR, "%s: cannot read", path.c_str());
  // About 150 bytes per tensor: far more than any model's manifest needs,
  // and a bound on what a damaged file makes the parser allocate.
  constexpr int64_t kMaxManifest = int64_t{256} << 20;
  if (size > kMaxManifest)
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: %lld bytes is larger than any manifest this runtime reads "
                "(%lld)",
                path.c_str(), (long long)size, (long long)kMaxManifest);
  std::string text(static_cast<size_t>(size), '\0');
  if (size > 0 && std::fread(&text[0], 1, text.size(), f.get()) != text.size())
    return fail(HMRT_IO_ERROR, "%s: cannot read", path.c_str());

  return parse_manifest(path, text, m);
}

// Opens the data file and checks that every tensor lies inside it.
hmrt_status open_data(const std::string& dir, const Manifest& m,
                      hmrt::io::File* f, std::string* path) {
  *path = dir + "/" + m.data_file;
  if (!f->open(path->c_str(), "rb"))
    return fail(HMRT_IO_ERROR, "%s: cannot open: %s", path->c_str(),
                hmrt::io::errno_text().c_str());
  const int64_t size = hmrt::io::file_size(f->get());
  if (size < 0) return fail(HMRT_IO_ERROR, "%s: cannot read", path->c_str());
  for (const Entry& e : m.tensors)
    if (e.offset > uint64_t(size) || e.bytes > uint64_t(size) - e.offset)
      return fail(HMRT_IO_ERROR,
                  "%s: truncated: %s '%s' needs bytes [%llu, %llu) but the "
                  "file has %lld",
                  path->c_str(), kind_noun(e.kind), e.name.c_str(),
                  (unsigned long long)e.offset,
                  (unsigned long long)(e.offset + e.bytes), (long long)size);
  return HMRT_OK;
}

// Reads one tensor's bytes in pieces of at most `stage_bytes` into `stage`
// (host memory), handing each piece to put(offset in the tensor, bytes), and
// checks the CRC of the whole.
template <class Put>
hmrt_status read_tensor(std::FILE* f, const std::string& path, const Entry& e,
                        uint8_t* stage, uint64_t stage_bytes, Put&& put) {
  if (e.bytes > 0 && !hmrt::io::seek(f, static_cast<int64_t>(e.offset)))
    return fail(HMRT_IO_ERROR, "%s: cannot read %s '%s'", path.c_str(),
                kind_noun(e.kind), e.name.c_str());
  uint32_t crc = 0;
  for (uint64_t at = 0; at < e.bytes;) {
    const uint64_t n = std::min(e.bytes - at, stage_bytes);
    if (std::fread(stage, 1, n, f) != n)
      return fail(HMRT_IO_ERROR, "%s: cannot read %s '%s'", path.c_str(),
                  kind_noun(e.kind), e.name.c_str());
    crc = hmrt_crc32(crc, stage, n);
    const hmrt_status st = put(at, n);
    if (st != HMRT_OK) return st;
    at += n;
  }
  if (crc != e.crc)
    return fail(HMRT_IO_ERROR,
                "%s: checksum mismatch for %s '%s': the manifest says CRC-32 "
                "%08x, the data has %08x (the checkpoint is corrupt)",
                path.c_str(), kind_noun(e.kind), e.name.c_str(), e.crc, crc);
  return HMRT_OK;
}

// Where the bytes of the tensors being saved come from.
class Source {
 public:
  virtual ~Source() = default;
  // The largest piece chunk() hands out.
  virtual uint64_t max_chunk() const = 0;
  // *data = bytes [offset, offset + n) of tensor i in host memory, valid
  // until the next call.
  virtual hmrt_status chunk(int32_t i, uint64_t offset, uint64_t n,
                            const void** data) = 0;
};

// hmrt_checkpoint_write: the tensors' own host memory.
class HostSource final : public Source {
 public:
  explicit HostSource(const hmrt_checkpoint_tensor* t) : t_(t) {}
  uint64_t max_chunk() const override { return UINT64_MAX; }
  hmrt_status chunk(int32_t i, uint64_t offset, uint64_t,
                    const void** data) override {
    *data = static_cast<const uint8_t*>(t_[i].data) + offset;
    return HMRT_OK;
  }

 private:
  const hmrt_checkpoint_tensor* t_;
};

// Bytes of each piece copied through a host-tier staging buffer between the
// files and the arenas (hmrt::io::set_stage_bytes changes it for tests).
uint64_t g_stage_bytes = uint64_t{64} << 20;

// A pinned (host-tier) buffer for moving tensors between the files and an
// execution context's arenas in pieces.
class Stage {
 public:
  ~Stage() { hmrt_buffer_free(buf_); }
  // Room for pieces of up to min(largest, g_stage_bytes) bytes.
  hmrt_status init(const char* fn, hmrt_device* dev, uint64_t largest) {
    bytes_ = std::max<uint64_t>(1, std::min(largest, g_stage_bytes));
    hmrt_status st = hmrt_buffer_alloc(dev, HMRT_TIER_HOST, bytes_, &buf_);
    if (st != HMRT_OK)
      return fail(st, "%s: cannot allocate a staging buffer: %s", fn,
                  std::string(hmrt_last_error()).c_str());
    void* p = nullptr;
    st = hmrt_buffer_host_ptr(buf_, 0, bytes_, &p);
    if (st != HMRT_OK)
      return fail(st, "%s: %s", fn, std::string(hmrt_last_error()).c_str());
    host_ = static_cast<uint8_t*>(p);
    return HMRT_OK;
  }
  hmrt_buffer* buffer() const { return buf_; }
  uint8_t* host() const { return host_; }
  uint64_t bytes() const { return bytes_; }

 private:
  hmrt_buffer* buf_ = nullptr;
  uint8_t* host_ = nullptr;
  uint64_t bytes_ = 0;
};

// hmrt_checkpoint_save: the program's tensors in the context's arenas,
// copied piece by piece into the staging buffer.
class ExecSource final : public Source {
 public:
  ExecSource(const hmrt_exec* x, const Stage* stage,
             std::vector<const hmrt_tensor_desc*> descs)
      : x_(x), stage_(stage), descs_(std::move(descs)) {}
  uint64_t max_chunk() const override { return stage_->bytes(); }
  hmrt_status chunk(int32_t i, uint64_t offset, uint64_t n,
                    const void** data) override {
    hmrt_status st = hmrt_exec_copy_tensor(x_, descs_[i], offset,
                                           stage_->buffer(), 0, n,
                                           /*into_tensor=*/0);
    if (st != HMRT_OK)
      return fail(st, "hmrt_checkpoint_save: %s",
                  std::string(hmrt_last_error()).c_str());
    *data = stage_->host();
    return HMRT_OK;
  }

 private:
  const hmrt_exec* x_;
  const Stage* stage_;
  std::vector<const hmrt_tensor_desc*> descs_;
};

// hmrt_checkpoint_write_filled: the caller's callback, through one buffer.
class FillSource final : public Source {
 public:
  FillSource(hmrt_checkpoint_fill_fn fill, void* user, uint64_t largest)
      : fill_(fill), user_(user),
        buf_(std::max<uint64_t>(1, std::min(largest, g_stage_bytes))) {}
  uint64_t max_chunk() const override { return buf_.size(); }
  hmrt_status chunk(int32_t i, uint64_t offset, uint64_t n,
                    const void** data) override {
    const hmrt_status st = fill_(user_, i, offset, n, buf_.data());
    *data = buf_.data();
    return st;
  }

 private:
  hmrt_checkpoint_fill_fn fill_;
  void* user_;
  std::vector<uint8_t> buf_;
};

// Checks the arguments of a C function and turns exceptions (out of memory,
// a filesystem error) into a status and message: none escapes the C API.
template <class F>
hmrt_status guarded(const char* fn, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
  } catch (const std::exception& e) {
    return fail(HMRT_INTERNAL, "%s: %s", fn, e.what());
  }
}

// A parameter or state descriptor of the program lies, whole or in pieces,
// inside the context's arenas (hmrt_tensor_check_placed).
hmrt_status check_placed(const char* fn, const hmrt_exec* exec, int32_t kind,
                         const hmrt_tensor_desc& t) {
  uint64_t sizes[HMRT_TIER_COUNT];
  for (int32_t tier = 0; tier < HMRT_TIER_COUNT; ++tier)
    sizes[tier] = hmrt_buffer_size(hmrt_exec_arena(exec, tier));
  const hmrt_status st = hmrt_tensor_check_placed(&t, sizes);
  if (st != HMRT_OK)
    return fail(st, "%s: %s %s", fn, kind_noun(kind),
                std::string(hmrt_last_error()).c_str());
  return HMRT_OK;
}

// Refuses a save into `dir` (without trailing slashes) when `dir`, "<dir>.tmp"
// or "<dir>.old" is something a save may not delete or replace (see
// replaceable()).
hmrt_status check_targets(const std::string& dir) {
  const fs::path final_dir(dir), tmp(dir + ".tmp"), old(dir + ".old");
  std::string why;
  if (!replaceable(final_dir, /*partial_ok=*/false, &why))
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: refusing to replace it with a checkpoint: %s",
                dir.c_str(), why.c_str());
  for (const fs::path& p : {tmp, old})
    if (!replaceable(p, /*partial_ok=*/true, &why))
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: refusing to delete it to save a checkpoint: %s",
                  p.c_str(), why.c_str());
  return HMRT_OK;
}

hmrt_status write_checkpoint(const char* dir_c,
                             const hmrt_checkpoint_meta* meta, int32_t count,
                             const hmrt_checkpoint_tensor* tensors,
                             Source* source) {
  HMRT_CHECK_ARG(dir_c != nullptr && dir_c[0] != '\0',
                 "hmrt_checkpoint_write: dir is NULL or empty");
  HMRT_CHECK_ARG(meta != nullptr, "hmrt_checkpoint_write: meta is NULL");
  HMRT_CHECK_ARG(count >= 0 && (tensors != nullptr || count == 0),
                 "hmrt_checkpoint_write: bad tensor list");
  HMRT_CHECK_ARG(meta->step >= 0 && meta->data_position >= 0,
                 "hmrt_checkpoint_write: step and data_position must be >= 0");
  const std::string dir = clean_dir(dir_c);
  const char* d = dir.c_str();
  const bool host_data = source == nullptr;
  HostSource host_source(tensors);
  if (host_data) source = &host_source;
  // Check the tensors and lay them out.
  std::vector<uint64_t> offsets(count), sizes(count);
  uint64_t end = 0;
  for (int32_t i = 0; i < count; ++i) {
    const hmrt_checkpoint_tensor& t = tensors[i];
    HMRT_CHECK_ARG(t.name != nullptr && t.name[0] != '\0',
                   "hmrt_checkpoint_write: %s: tensor %d has no name", d, i);
    HMRT_CHECK_ARG(hmrt::json::is_utf8(t.name),
                   "hmrt_checkpoint_write: %s: the name of tensor %d is not "
                   "valid UTF-8 (a JSON manifest cannot hold it)",
                   d, i);
    HMRT_CHECK_ARG(t.kind == HMRT_KIND_PARAM || t.kind == HMRT_KIND_STATE,
                   "hmrt_checkpoint_write: %s: tensor '%s' has kind %d", d,
                   t.name, t.kind);
    const size_t elem = hmrt_dtype_size(t.dtype);
    HMRT_CHECK_ARG(elem != 0,
                   "hmrt_checkpoint_write: %s: tensor '%s' has invalid dtype %d",
                   d, t.name, t.dtype);
    const int64_t n = hmrt::io::checked_count(t.rank, t.shape, elem);
    HMRT_CHECK_ARG(n >= 0,
                   "hmrt_checkpoint_write: %s: tensor '%s' has an invalid shape",
                   d, t.name);
    sizes[i] = uint64_t(n) * elem;
    HMRT_CHECK_ARG(!host_data || t.data != nullptr || sizes[i] == 0,
                   "hmrt_checkpoint_write: %s: tensor '%s' has no data", d,
                   t.name);
    for (int32_t j = 0; j < i; ++j)
      HMRT_CHECK_ARG(tensors[j].kind != t.kind ||
                         std::strcmp(tensors[j].name, t.name) != 0,
                     "hmrt_checkpoint_write: %s: %s '%s' is listed twice", d,
                     kind_noun(t.kind), t.name);
    offsets[i] = (end + kAlign - 1) / kAlign * kAlign;
    end = offsets[i] + sizes[i];
  }

  const std::string model(meta->model,
                          strnlen(meta->model, sizeof(meta->model)));
  HMRT_CHECK_ARG(hmrt::json::is_utf8(model),
                 "hmrt_checkpoint_write: %s: the model name is not valid UTF-8",
                 d);
  if (meta->abi_version != 0) {
    HMRT_CHECK_ARG(optimizer_name(meta->hyper.optimizer) != nullptr,
                   "hmrt_checkpoint_write: %s: unknown optimizer %d", d,
                   meta->hyper.optimizer);
    HMRT_CHECK_ARG(meta->hyper.lr_schedule == HMRT_LR_CONSTANT ||
                       meta->hyper.lr_schedule == HMRT_LR_COSINE,
                   "hmrt_checkpoint_write: %s: unknown learning-rate schedule "
                   "%d",
                   d, meta->hyper.lr_schedule);
  }
  std::vector<IdTensor> ids;
  for (int32_t i = 0; i < count; ++i)
    ids.push_back({tensors[i].kind, tensors[i].name, tensors[i].dtype,
                   std::vector<int64_t>(tensors[i].shape,
                                        tensors[i].shape + tensors[i].rank)});
  const std::string identity = identity_of(model, std::move(ids));

  const fs::path final_dir(dir), tmp(dir + ".tmp"), old(dir + ".old");
  hmrt_status st = check_targets(d);
  if (st != HMRT_OK) return st;
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (ec)
    return fail(HMRT_IO_ERROR, "%s: cannot remove: %s", tmp.c_str(),
                ec.message().c_str());
  fs::create_directories(tmp, ec);
  if (ec)
    return fail(HMRT_IO_ERROR, "%s: cannot create the directory: %s",
                tmp.c_str(), ec.message().c_str());

  // tensors.bin
  std::vector<uint32_t> crcs(count);
  {
    const std::string path = (tmp / kData).string();
    hmrt::io::File f(path.c_str(), "wb");
    if (!f)
      return fail(HMRT_IO_ERROR, "%s: cannot create: %s", path.c_str(),
                  hmrt::io::errno_text().c_str());
    static const char zeros[kAlign] = {0};
    uint64_t at = 0;
    bool ok = true;
    for (int32_t i = 0; i < count && ok; ++i) {
      if (offsets[i] > at)
        ok = std::fwrite(zeros, 1, offsets[i] - at, f.get()) == offsets[i] - at;
      uint32_t crc = 0;
      for (uint64_t done = 0; ok && done < sizes[i];) {
        const uint64_t n = std::min(sizes[i] - done, source->max_chunk());
        const void* data = nullptr;
        const hmrt_status cst = source->chunk(i, done, n, &data);
        if (cst != HMRT_OK) return cst;
        ok = std::fwrite(data, 1, n, f.get()) == n;
        crc = hmrt_crc32(crc, data, n);
        done += n;
      }
      crcs[i] = crc;
      at = offsets[i] + sizes[i];
    }
    if (!ok || !hmrt::io::sync_file(f.get()) || !f.close())
      return fail(HMRT_IO_ERROR, "%s: write failed: %s", path.c_str(),
                  hmrt::io::errno_text().c_str());
  }

  // manifest.json, written last: its presence means the data is complete.
  {
    std::string js = "{\n";
    js += "  \"format\": " + hmrt::json::quote(kFormat) + ",\n";
    js += "  \"format_version\": " +
          std::to_string(HMRT_CHECKPOINT_FORMAT_VERSION) + ",\n";
    js += "  \"model\": " + hmrt::json::quote(model) + ",\n";
    js += "  \"program_identity\": \"" + identity + "\",\n";
    if (meta->abi_version != 0) {
      js += "  \"program_abi_version\": " +
            std::to_string((unsigned long)meta->abi_version) + ",\n";
      js += std::string("  \"optimizer\": \"") +
            optimizer_name(meta->hyper.optimizer) + "\",\n";
      js += "  \"hyperparams\": " + hyper_json(meta->hyper) + ",\n";
    } else {
      js += "  \"program_abi_version\": null,\n";
      js += "  \"optimizer\": null,\n";
      js += "  \"hyperparams\": null,\n";
    }
    js += "  \"step\": " + std::to_string((long long)meta->step) + ",\n";
    js += "  \"data_position\": " +
          std::to_string((long long)meta->data_position) + ",\n";
    js += "  \"seed\": " + std::to_string((unsigned long long)meta->seed) +
          ",\n";
    js += "  \"data_file\": " + hmrt::json::quote(kData) + ",\n";
    js += "  \"data_bytes\": " + std::to_string((unsigned long long)end) +
          ",\n";
    js += "  \"tensors\": [";
    for (int32_t i = 0; i < count; ++i) {
      const hmrt_checkpoint_tensor& t = tensors[i];
      js += i ? ",\n    " : "\n    ";
      js += "{\"name\": " + hmrt::json::quote(t.name) + ", \"kind\": \"" +
            kind_name(t.kind) + "\", \"dtype\": \"" + hmrt_dtype_name(t.dtype) +
            "\", \"shape\": [";
      for (int32_t k = 0; k < t.rank; ++k) {
        if (k) js += ", ";
        js += std::to_string((long long)t.shape[k]);
      }
      js += "], \"offset\": " + std::to_string((unsigned long long)offsets[i]) +
            ", \"bytes\": " + std::to_string((unsigned long long)sizes[i]) +
            ", \"crc32\": " + std::to_string((unsigned long)crcs[i]) + "}";
    }
    js += count ? "\n  ],\n  " : "],\n  ";
    const uint32_t manifest_crc = hmrt_crc32(0, js.data(), js.size());
    js += kCrcKey + std::to_string((unsigned long)manifest_crc) + "\n}\n";
    const std::string path = (tmp / kManifest).string();
    hmrt::io::File f(path.c_str(), "wb");
    if (!f)
      return fail(HMRT_IO_ERROR, "%s: cannot create: %s", path.c_str(),
                  hmrt::io::errno_text().c_str());
    bool ok = std::fwrite(js.data(), 1, js.size(), f.get()) == js.size();
    if (!ok || !hmrt::io::sync_file(f.get()) || !f.close())
      return fail(HMRT_IO_ERROR, "%s: write failed: %s", path.c_str(),
                  hmrt::io::errno_text().c_str());
  }
  hmrt::io::sync_dir(tmp.string());

  // Swap it in.  Until the second rename the previous checkpoint is intact
  // at `dir` (or, between the renames, at "<dir>.old").  The targets are
  // checked again: they may have changed while the data was written.
  st = check_targets(d);
  if (st != HMRT_OK) return st;
  const bool had_old =
      fs::symlink_status(final_dir, ec).type() != fs::file_type::not_found;
  if (had_old) {
    fs::remove_all(old, ec);
    fs::rename(final_dir, old, ec);
    if (ec)
      return fail(HMRT_IO_ERROR, "%s: cannot rename it to %s: %s", d,
                  old.c_str(), ec.message().c_str());
  }
  fs::rename(tmp, final_dir, ec);
  if (ec)
    return fail(HMRT_IO_ERROR, "%s: cannot rename it to %s: %s", tmp.c_str(), d,
                ec.message().c_str());
  if (had_old) fs::remove_all(old, ec);
  fs::path parent = final_dir.parent_path();
  hmrt::io::sync_dir(parent.empty() ? "." : parent.string());
  return HMRT_OK;
}

}  // namespace

namespace hmrt {
namespace io {
void set_checkpoint_stage_bytes(uint64_t bytes) {
  g_stage_bytes = bytes > 0 ? bytes : uint64_t{64} << 20;
}
}  // namespace io
}  // namespace hmrt

extern "C" {

uint32_t hmrt_crc32(uint32_t crc, const void* data, size_t bytes) {
  // zlib's crc32 takes a 32-bit length: feed it pieces of at most 1 GiB.
  // (crc32(crc, NULL, 0) would return 0, not crc, so empty input returns
  // here.)
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uLong c = crc;
  while (bytes > 0) {
    const size_t n = bytes < (size_t{1} << 30) ? bytes : (size_t{1} << 30);
    c = ::crc32(c, p, static_cast<uInt>(n));
    p += n;
    bytes -= n;
  }
  return static_cast<uint32_t>(c);
}

hmrt_status hmrt_checkpoint_write(const char* dir,
                                  const hmrt_checkpoint_meta* meta,
                                  int32_t count,
                                  const hmrt_checkpoint_tensor* tensors) {
  return guarded("hmrt_checkpoint_write", [&] {
    return write_checkpoint(dir, meta, count, tensors, nullptr);
  });
}

hmrt_status hmrt_checkpoint_write_filled(const char* dir,
                                         const hmrt_checkpoint_meta* meta,
                                         int32_t count,
                                         const hmrt_checkpoint_tensor* tensors,
                                         hmrt_checkpoint_fill_fn fill,
                                         void* user) {
  return guarded("hmrt_checkpoint_write_filled", [&]() -> hmrt_status {
    HMRT_CHECK_ARG(fill != nullptr,
                   "hmrt_checkpoint_write_filled: fill is NULL");
    HMRT_CHECK_ARG(count >= 0 && (tensors != nullptr || count == 0),
                   "hmrt_checkpoint_write_filled: bad tensor list");
    uint64_t largest = 0;
    for (int32_t i = 0; i < count; ++i) {
      const int64_t n = hmrt::io::checked_count(
          tensors[i].rank, tensors[i].shape, hmrt_dtype_size(tensors[i].dtype));
      if (n > 0)
        largest = std::max(largest, uint64_t(n) * hmrt_dtype_size(tensors[i].dtype));
    }
    FillSource source(fill, user, largest);
    return write_checkpoint(dir, meta, count, tensors, &source);
  });
}

hmrt_status hmrt_checkpoint_check_target(const char* dir) {
  return guarded("hmrt_checkpoint_check_target", [&]() -> hmrt_status {
    HMRT_CHECK_ARG(dir != nullptr && dir[0] != '\0',
                   "hmrt_checkpoint_check_target: dir is NULL or empty");
    return check_targets(clean_dir(dir));
  });
}

hmrt_status hmrt_checkpoint_save(const char* dir, const hmrt_program* program,
                                 const hmrt_exec* exec,
                                 const hmrt_checkpoint_meta* meta) {
  return guarded("hmrt_checkpoint_save", [&]() -> hmrt_status {
    HMRT_CHECK_ARG(dir != nullptr, "hmrt_checkpoint_save: dir is NULL");
    HMRT_CHECK_ARG(program != nullptr, "hmrt_checkpoint_save: program is NULL");
    HMRT_CHECK_ARG(exec != nullptr, "hmrt_checkpoint_save: exec is NULL");
    HMRT_CHECK_ARG(meta != nullptr, "hmrt_checkpoint_save: meta is NULL");
    std::vector<hmrt_checkpoint_tensor> list;
    std::vector<const hmrt_tensor_desc*> descs;
    uint64_t largest = 0;
    for (int kind = 0; kind < 2; ++kind) {
      const int32_t n = kind == 0 ? program->num_params : program->num_states;
      const hmrt_tensor_desc* ds =
          kind == 0 ? program->params : program->states;
      for (int32_t i = 0; i < n; ++i) {
        const hmrt_tensor_desc& t = ds[i];
        const hmrt_status st = check_placed("hmrt_checkpoint_save", exec, kind, t);
        if (st != HMRT_OK) return st;
        const int64_t count =
            hmrt::io::checked_count(t.rank, t.shape, hmrt_dtype_size(t.dtype));
        if (count < 0 || uint64_t(count) * hmrt_dtype_size(t.dtype) != t.bytes)
          return fail(HMRT_INVALID_ARGUMENT,
                      "hmrt_checkpoint_save: %s '%s': %llu bytes do not match "
                      "its dtype and shape",
                      kind_noun(kind), t.name ? t.name : "?",
                      (unsigned long long)t.bytes);
        list.push_back({t.name, kind, t.dtype, t.rank, t.shape, nullptr});
        descs.push_back(&t);
        largest = std::max(largest, t.bytes);
      }
    }
    Stage stage;
    hmrt_status st =
        stage.init("hmrt_checkpoint_save", hmrt_exec_device(exec), largest);
    if (st != HMRT_OK) return st;
    ExecSource source(exec, &stage, std::move(descs));
    hmrt_checkpoint_meta m = *meta;
    set_model(&m, program->model_name);
    m.abi_version = program->abi_version;
    m.hyper = program->hyper;
    return write_checkpoint(dir, &m, static_cast<int32_t>(list.size()),
                            list.data(), &source);
  });
}

hmrt_status hmrt_checkpoint_read_meta(const char* dir,
                                      hmrt_checkpoint_meta* meta) {
  return guarded("hmrt_checkpoint_read_meta", [&]() -> hmrt_status {
    HMRT_CHECK_ARG(dir != nullptr, "hmrt_checkpoint_read_meta: dir is NULL");
    HMRT_CHECK_ARG(meta != nullptr, "hmrt_checkpoint_read_meta: meta is NULL");
    Manifest m;
    hmrt_status st = read_manifest(clean_dir(dir), &m);
    if (st != HMRT_OK) return st;
    *meta = m.meta;
    return HMRT_OK;
  });
}

static hmrt_status checkpoint_load(const char* dir_c,
                                   const hmrt_program* program,
                                   hmrt_exec* exec,
                                   hmrt_checkpoint_meta* meta) {
  HMRT_CHECK_ARG(dir_c != nullptr, "hmrt_checkpoint_load: dir is NULL");
  HMRT_CHECK_ARG(program != nullptr, "hmrt_checkpoint_load: program is NULL");
  HMRT_CHECK_ARG(exec != nullptr, "hmrt_checkpoint_load: exec is NULL");
  const std::string dir = clean_dir(dir_c);
  const char* d = dir.c_str();
  Manifest m;
  hmrt_status st = read_manifest(dir, &m);
  if (st != HMRT_OK) return st;
  const std::string pname = truncated_model(program);
  if (pname != m.meta.model)
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: the checkpoint is for model '%s', this program is '%s'", d,
                m.meta.model, pname.c_str());
  // Programs of ABI 3 and 4 save the same tensors (ABI 4 only lets a
  // program keep one in pieces): their checkpoints load into each other.
  const auto same_tensors = [](uint32_t a, uint32_t b) {
    return a == b || (a >= 3 && a <= 4 && b >= 3 && b <= 4);
  };
  if (m.meta.abi_version != 0 && !same_tensors(m.meta.abi_version, program->abi_version))
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: the checkpoint was saved by a program of ABI version %u, "
                "this program has ABI version %u",
                d, m.meta.abi_version, program->abi_version);
  if (m.meta.abi_version != 0 &&
      m.meta.hyper.optimizer != program->hyper.optimizer) {
    const char* theirs = optimizer_name(program->hyper.optimizer);
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: the checkpoint was saved by optimizer %s, this program "
                "uses %s",
                d, optimizer_name(m.meta.hyper.optimizer),
                theirs ? theirs : ("unknown optimizer " +
                                   std::to_string(program->hyper.optimizer))
                                      .c_str());
  }

  // Match the program's tensors to the manifest's.
  std::map<std::pair<int32_t, std::string>, size_t> index;
  for (size_t i = 0; i < m.tensors.size(); ++i)
    index[{m.tensors[i].kind, m.tensors[i].name}] = i;
  std::vector<bool> used(m.tensors.size(), false);
  struct Job {
    const hmrt_tensor_desc* desc;
    const Entry* entry;
  };
  std::vector<Job> jobs;
  uint64_t largest = 0;
  for (int kind = 0; kind < 2; ++kind) {
    const int32_t n = kind == 0 ? program->num_params : program->num_states;
    const hmrt_tensor_desc* descs =
        kind == 0 ? program->params : program->states;
    for (int32_t i = 0; i < n; ++i) {
      const hmrt_tensor_desc& t = descs[i];
      const char* tn = t.name ? t.name : "";
      auto it = index.find({kind, tn});
      if (it == index.end())
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: the checkpoint has no %s '%s', which the program "
                    "needs",
                    d, kind_noun(kind), tn);
      const Entry& e = m.tensors[it->second];
      used[it->second] = true;
      const bool same_shape =
          e.shape.size() == size_t(t.rank) &&
          std::equal(e.shape.begin(), e.shape.end(), t.shape);
      if (e.dtype != t.dtype || !same_shape)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: %s '%s' is %s%s in the checkpoint but %s%s in the "
                    "program",
                    d, kind_noun(kind), tn, hmrt_dtype_name(e.dtype),
                    hmrt::io::shape_string(static_cast<int32_t>(e.shape.size()),
                                           e.shape.data())
                        .c_str(),
                    hmrt_dtype_name(t.dtype),
                    hmrt::io::shape_string(t.rank, t.shape).c_str());
      if (e.bytes != t.bytes)
        return fail(HMRT_INVALID_ARGUMENT,
                    "%s: %s '%s': the program's descriptor says %llu bytes, "
                    "its shape %llu",
                    d, kind_noun(kind), tn, (unsigned long long)t.bytes,
                    (unsigned long long)e.bytes);
      const hmrt_status placed =
          check_placed("hmrt_checkpoint_load", exec, kind, t);
      if (placed != HMRT_OK) return placed;
      jobs.push_back({&t, &e});
      largest = std::max(largest, e.bytes);
    }
  }
  for (size_t i = 0; i < m.tensors.size(); ++i)
    if (!used[i])
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: the checkpoint has %s '%s', which the program does not "
                  "have",
                  d, kind_noun(m.tensors[i].kind), m.tensors[i].name.c_str());
  // The program identity needs no check of its own: it is a hash of the
  // model name and the tensor list, which agree (above).

  hmrt::io::File f;
  std::string data_path;
  st = open_data(dir, m, &f, &data_path);
  if (st != HMRT_OK) return st;
  // Read in file order, piece by piece through a pinned staging buffer.
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.entry->offset < b.entry->offset;
  });
  Stage stage;
  st = stage.init("hmrt_checkpoint_load", hmrt_exec_device(exec), largest);
  if (st != HMRT_OK) return st;
  for (const Job& j : jobs) {
    st = read_tensor(f.get(), data_path, *j.entry, stage.host(), stage.bytes(),
                     [&](uint64_t at, uint64_t n) -> hmrt_status {
                       const hmrt_status c = hmrt_exec_copy_tensor(
                           exec, j.desc, at, stage.buffer(), 0, n,
                           /*into_tensor=*/1);
                       if (c != HMRT_OK)
                         return fail(c, "%s: %s", d,
                                     std::string(hmrt_last_error()).c_str());
                       return HMRT_OK;
                     });
    if (st != HMRT_OK) return st;
  }
  if (meta != nullptr) *meta = m.meta;
  return HMRT_OK;
}

hmrt_status hmrt_checkpoint_load(const char* dir, const hmrt_program* program,
                                 hmrt_exec* exec, hmrt_checkpoint_meta* meta) {
  return guarded("hmrt_checkpoint_load", [&] {
    return checkpoint_load(dir, program, exec, meta);
  });
}

static hmrt_status checkpoint_read_tensor(const char* dir_c,
                                          const char* name, hmrt_npy* out) {
  HMRT_CHECK_ARG(dir_c != nullptr && name != nullptr && out != nullptr,
                 "hmrt_checkpoint_read_tensor: NULL argument");
  const std::string dir = clean_dir(dir_c);
  Manifest m;
  hmrt_status st = read_manifest(dir, &m);
  if (st != HMRT_OK) return st;
  const Entry* found = nullptr;
  for (const Entry& e : m.tensors)
    if (e.name == name && (found == nullptr || e.kind == HMRT_KIND_PARAM))
      found = &e;
  if (found == nullptr)
    return fail(HMRT_INVALID_ARGUMENT, "%s: the checkpoint has no tensor '%s'",
                dir.c_str(), name);
  if (found->shape.size() > HMRT_NPY_MAX_RANK)
    return fail(HMRT_UNIMPLEMENTED, "%s: tensor '%s' has rank %zu > %d",
                dir.c_str(), name, found->shape.size(), HMRT_NPY_MAX_RANK);
  hmrt::io::File f;
  std::string data_path;
  st = open_data(dir, m, &f, &data_path);
  if (st != HMRT_OK) return st;
  void* data = nullptr;
  if (found->bytes > 0) {
    data = std::malloc(found->bytes);
    if (data == nullptr)
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate %llu bytes",
                  dir.c_str(), (unsigned long long)found->bytes);
  }
  st = read_tensor(f.get(), data_path, *found, static_cast<uint8_t*>(data),
                   found->bytes,
                   [](uint64_t, uint64_t) { return HMRT_OK; });
  if (st != HMRT_OK) {
    std::free(data);
    return st;
  }
  hmrt_npy r;
  std::memset(&r, 0, sizeof(r));
  r.dtype = found->dtype;
  r.rank = static_cast<int32_t>(found->shape.size());
  for (size_t i = 0; i < found->shape.size(); ++i) r.shape[i] = found->shape[i];
  r.count = static_cast<int64_t>(found->bytes / hmrt_dtype_size(found->dtype));
  r.bytes = found->bytes;
  r.data = data;
  *out = r;
  return HMRT_OK;
}

hmrt_status hmrt_checkpoint_read_tensor(const char* dir, const char* name,
                                        hmrt_npy* out) {
  return guarded("hmrt_checkpoint_read_tensor",
                 [&] { return checkpoint_read_tensor(dir, name, out); });
}

}  // extern "C"
