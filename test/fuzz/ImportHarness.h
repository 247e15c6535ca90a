//===- ImportHarness.h - the importer's fuzz targets share this -*- C++ -*-===//
//
// Runs hmcc::importOnnxModel (with --batch 2 --seq 5) on bytes written to a
// model file in a private folder (a sandbox made once per process under
// $TMPDIR, removed at exit).
// Beside the model lie files that external data may name: weights.bin (64
// bytes), empty.bin, sub/w.bin, and two symlinks that leave the model's
// folder, link.bin -> ../outside.bin and linkdir -> .. . What an import must
// never do aborts the process, so that libFuzzer reports it:
//  - open a file outside the model's folder (the LLVM code's open calls are
//    wrapped at link time; the file opened is resolved through /proc);
//  - leave a file behind, or change the sandbox;
//  - return a module that does not verify.
// With HMCC_FUZZ_VERBOSE set in the environment, each import's outcome (ok,
// or the importer's message) goes to stderr.
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_TEST_FUZZ_IMPORTHARNESS_H
#define HMCC_TEST_FUZZ_IMPORTHARNESS_H

#include <cstddef>
#include <cstdint>

namespace hmcc::fuzz {

/// Imports `data` as a model: ONNX text (model.onnxtxt) when its first byte
/// that is not white space is '<', else a binary protobuf (model.onnx).
/// Returns whether the import succeeded.
bool importBytes(const uint8_t *data, size_t size);

} // namespace hmcc::fuzz

#endif // HMCC_TEST_FUZZ_IMPORTHARNESS_H
