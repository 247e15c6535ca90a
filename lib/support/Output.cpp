//===- Output.cpp - outputs that cannot destroy anything ------------------===//
#include "lib/support/Output.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <unistd.h>

using namespace llvm;

namespace hmcc {

/// `path` made absolute, with links resolved when it exists.
static std::string canonical(StringRef path) {
  SmallString<256> real;
  if (!sys::fs::real_path(path, real))
    return std::string(real);
  SmallString<256> absolute(path);
  sys::fs::make_absolute(absolute);
  sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return std::string(absolute);
}

bool samePath(StringRef a, StringRef b) { return canonical(a) == canonical(b); }

std::optional<std::string> checkOutputPath(StringRef path, bool directory, bool force,
                                           ArrayRef<std::string> inputs,
                                           ArrayRef<StringRef> ownEntries) {
  std::string q = "'" + path.str() + "'";
  sys::fs::file_status link;
  if (!sys::fs::status(path, link, /*follow=*/false) &&
      link.type() == sys::fs::file_type::symlink_file)
    return q + " is a symbolic link; hmcc neither writes through nor replaces links";
  std::string target = canonical(path);
  for (const std::string &input : inputs) {
    if (input.empty() || input == "-")
      continue;
    std::string in = canonical(input);
    if (in == target)
      return q + " is one of this run's inputs; hmcc never writes over its inputs";
    if (directory && StringRef(in).starts_with(target) && in.size() > target.size() &&
        sys::path::is_separator(in[target.size()]))
      return q + " holds " + "'" + input + "', one of this run's inputs; hmcc never "
             "replaces a directory that holds its inputs";
  }
  sys::fs::file_status status;
  if (sys::fs::status(path, status))
    return std::nullopt; // absent: nothing to lose
  bool isDir = status.type() == sys::fs::file_type::directory_file;
  if (directory != isDir)
    return q + " exists and is " + (isDir ? "a directory" : "not a directory") +
           "; the output must be " + (directory ? "a directory" : "a file");
  if (!isDir && status.type() != sys::fs::file_type::regular_file)
    return q + " exists and is not a regular file";
  if (!force)
    return "output " + q + " exists; pass --force to replace it";
  if (directory) {
    std::error_code ec;
    for (sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec)) {
      StringRef name = sys::path::filename(it->path());
      if (!is_contained(ownEntries, name))
        return q + " holds '" + name.str() + "', which hmcc did not write there; " +
               "--force replaces only hmcc's own output (move it, or choose another -o)";
    }
    if (ec)
      return "cannot list " + q + ": " + ec.message();
  }
  return std::nullopt;
}

Error writeFileAtomically(StringRef path, function_ref<Error(raw_ostream &)> write) {
  auto temp = sys::fs::TempFile::create(path + ".tmp-%%%%%%",
                                        sys::fs::all_read | sys::fs::owner_write);
  if (!temp)
    return createFileError(path, temp.takeError());
  std::error_code ec;
  {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    if (Error e = write(os)) {
      os.flush();
      os.clear_error();
      consumeError(temp->discard());
      return e;
    }
    os.flush();
    ec = os.error();
    os.clear_error(); // reported here, not by the stream's destructor
  }
  if (!ec && ::fsync(temp->FD) != 0)
    ec = std::error_code(errno, std::generic_category());
  if (ec) {
    consumeError(temp->discard());
    return createFileError(path, ec);
  }
  if (Error e = temp->keep(path)) {
    consumeError(temp->discard());
    return createFileError(path, std::move(e));
  }
  return Error::success();
}

Expected<StagedDirectory> StagedDirectory::create(StringRef path) {
  SmallString<256> clean(path);
  while (clean.size() > 1 && sys::path::is_separator(clean.back()))
    clean.pop_back();
  StringRef parent = sys::path::parent_path(clean);
  if (!parent.empty())
    if (std::error_code ec = sys::fs::create_directories(parent))
      return createFileError(parent, ec);
  for (int attempt = 0; attempt < 100; ++attempt) {
    SmallString<256> staging;
    sys::fs::createUniquePath(clean + ".tmp-%%%%%%", staging, /*MakeAbsolute=*/false);
    std::error_code ec = sys::fs::create_directory(staging, /*IgnoreExisting=*/false);
    if (!ec)
      return StagedDirectory(std::string(clean), std::string(staging));
    if (ec != std::errc::file_exists)
      return createFileError(staging, ec);
  }
  return createStringError(std::errc::file_exists, "cannot create a directory beside '%s'",
                           path.str().c_str());
}

StagedDirectory::StagedDirectory(StagedDirectory &&other)
    : target(std::move(other.target)), staging(std::move(other.staging)) {
  other.staging.clear();
}

StagedDirectory::~StagedDirectory() {
  if (!staging.empty())
    sys::fs::remove_directories(staging);
}

Error StagedDirectory::commit() {
  std::string old;
  if (sys::fs::exists(target)) {
    SmallString<256> unique;
    sys::fs::createUniquePath(target + ".old-%%%%%%", unique, false);
    old = std::string(unique);
    if (std::error_code ec = sys::fs::rename(target, old))
      return createFileError(target, ec);
  }
  if (std::error_code ec = sys::fs::rename(staging, target)) {
    if (!old.empty())
      sys::fs::rename(old, target); // put the previous output back
    return createFileError(target, ec);
  }
  staging.clear();
  if (!old.empty())
    sys::fs::remove_directories(old);
  return Error::success();
}

} // namespace hmcc
