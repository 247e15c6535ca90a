//===- SizeTest.cpp - byte sizes written like 24G, 512M, 1.5T ------------===//
#include "lib/support/Size.h"

#include <gtest/gtest.h>

using hmcc::formatBytes;
using hmcc::formatCount;
using hmcc::formatFlops;
using hmcc::parseSize;

static uint64_t ok(const char *text) {
  auto size = parseSize(text);
  EXPECT_TRUE(static_cast<bool>(size)) << text;
  if (!size) {
    llvm::consumeError(size.takeError());
    return 0;
  }
  return *size;
}

static std::string err(const char *text, bool allowZero = false) {
  auto size = parseSize(text, allowZero);
  EXPECT_FALSE(static_cast<bool>(size)) << text;
  return size ? "" : llvm::toString(size.takeError());
}

TEST(Size, BinaryUnits) {
  EXPECT_EQ(ok("4096"), 4096u);
  EXPECT_EQ(ok("64K"), 64u << 10);
  EXPECT_EQ(ok("512M"), 512ull << 20);
  EXPECT_EQ(ok("24G"), 24ull << 30);
  EXPECT_EQ(ok("1.5T"), 3ull << 39);
  EXPECT_EQ(ok("2GiB"), 2ull << 30);
  EXPECT_EQ(ok("2gb"), 2ull << 30);
  EXPECT_EQ(ok(" 8 M "), 8ull << 20);
  EXPECT_EQ(ok("100B"), 100u);
}

TEST(Size, Rejects) {
  EXPECT_NE(err("").find("does not start with a number"), std::string::npos);
}

TEST(Size, Messages) {
  EXPECT_EQ(err("24X"), "invalid size '24X': unknown unit 'X' (write e.g. 24G, 512M, 1.5T or a byte count)");
  EXPECT_NE(err("-3G").find("sizes cannot be negative"), std::string::npos);
  EXPECT_NE(err("0").find("must be greater than zero"), std::string::npos);
  EXPECT_NE(err("0.5").find("not a whole number of bytes"), std::string::npos);
  EXPECT_NE(err("1.2.3G").find("unknown unit '.3G'"), std::string::npos);
  EXPECT_NE(err("16777216T").find("too large"), std::string::npos);
  auto zero = parseSize("0", /*allowZero=*/true);
  ASSERT_TRUE(static_cast<bool>(zero));
  EXPECT_EQ(*zero, 0u);
}

TEST(Size, Formatting) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(112640), "110 KiB");
  EXPECT_EQ(formatBytes(24ull << 30), "24.0 GiB");
  EXPECT_EQ(formatFlops(999), "999 FLOP");
  EXPECT_EQ(formatFlops(114348), "114 kFLOP");
  EXPECT_EQ(formatFlops(8890000000ull), "8.89 GFLOP");
  EXPECT_EQ(formatCount(0), "0");
  EXPECT_EQ(formatCount(999), "999");
  EXPECT_EQ(formatCount(1234567), "1,234,567");
}
