//===- import_fuzz.cpp - the ONNX importer on raw bytes -------------------===//
//
// The bytes are the model file: a binary ModelProto, or ONNX's text syntax
// when they start with '<' (ImportHarness.h). Seeds: the fixtures' models.
//
//===----------------------------------------------------------------------===//
#include "ImportHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hmcc::fuzz::importBytes(data, size);
  return 0;
}
