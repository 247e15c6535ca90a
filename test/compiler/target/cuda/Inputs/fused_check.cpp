// Checks the fused programs hmcc --emit=cuda wrote (HMRT_FUSED_SOURCE, a
// path) on the host: each program's generated element function against the
// runtime's interpreter (fused_element), on the same operands, bit for bit.
// Operands of every kind: in the output's shape, broadcast along a dim,
// and one value (splat); and all in the output's shape (no index to find).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include HMRT_FUSED_SOURCE

using namespace hmrt::cuda;

namespace {

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }

// Checks program p on a rows x cols output; broadcast: inputs of three kinds.
bool check(const HostFusedProgram& p, int index, bool broadcast, std::mt19937& rng) {
  const int64_t rows = 37, cols = 53, n = rows * cols;
  const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e30f, -1e-30f, 3.0f};
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<std::vector<float>> data(size_t(p.n_in));
  std::vector<FusedOperand> ops(size_t(p.n_in));
  for (int j = 0; j < p.n_in; ++j) {
    const int kind = broadcast ? j % 3 : 0;  // 0 dense, 1 a row broadcast, 2 splat
    data[size_t(j)].resize(kind == 0 ? size_t(n) : kind == 1 ? size_t(cols) : 1);
    for (size_t e = 0; e < data[size_t(j)].size(); ++e)
      data[size_t(j)][e] = e % 11 == 3 ? special[(e / 11) % 8] : value(rng);
    FusedOperand& o = ops[size_t(j)];
    o.p = data[size_t(j)].data();
    o.dense = kind == 0;
    o.splat = kind == 2;
    o.st[0] = kind == 0 ? cols : 0;
    o.st[1] = kind == 2 ? 0 : 1;
  }
  const int64_t dims[2] = {rows, cols};
  const FusedHeader h = fused_header(2, dims, n, ops.data(), p.n_in, p.n_code);
  std::vector<float> interp(size_t(p.n_in + p.n_code)), gen(size_t(p.n_in));
  fused_splats(h, ops.data(), interp.data());
  fused_splats(h, ops.data(), gen.data());
  for (int64_t i = 0; i < n; ++i) {
    const float want = fused_element(h, ops.data(), p.code, i, interp.data());
    const float got = p.element(h, ops.data(), i, gen.data());
    if (!same(want, got)) {
      std::printf("program %d (%s inputs), element %lld: generated %.9g, interpreter %.9g\n",
                  index, broadcast ? "broadcast" : "dense", (long long)i, double(got),
                  double(want));
      return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  std::mt19937 rng(7);
  const std::vector<HostFusedProgram>& programs = host_fused_programs();
  for (size_t k = 0; k < programs.size(); ++k)
    if (!check(programs[k], int(k), false, rng) || !check(programs[k], int(k), true, rng))
      return 1;
  std::printf("%zu fused programs: the generated code computes the interpreter's bits\n",
              programs.size());
  return programs.empty() ? 1 : 0;
}
