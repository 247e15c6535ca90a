#!/usr/bin/env bash
# Runs the libFuzzer targets of a fuzz build (make fuzz, make fuzz-regress).
#
#   run.sh fuzz    BUILD SECONDS [TARGET...]   fuzz each target for SECONDS
#   run.sh regress BUILD SECONDS [TARGET...]   replay every seed and regression
#                                              input once, then fuzz SECONDS
#                                              (0: replay only)
#
# TARGET defaults to every target built in BUILD/fuzz. Inputs of a target:
#   seeds        made here from the repository's fixtures (not kept in git),
#                in BUILD/fuzz-work/seeds/TARGET
#   regressions  test/fuzz/regressions/TARGET: every input that ever crashed
#   corpus       BUILD/fuzz-work/corpus/TARGET (fuzz: kept between runs;
#                regress: a fresh one each time)
# A crash, timeout or out-of-memory input found while fuzzing is copied into
# test/fuzz/regressions/TARGET (commit it, under a name that says what it
# triggers); the run then fails. FUZZ_FLAGS adds libFuzzer flags, e.g.
# FUZZ_FLAGS=-jobs=2 or -fork=2 -ignore_crashes=1.
set -uo pipefail

mode=${1:?usage: run.sh fuzz|regress BUILD SECONDS [TARGET...]}
build=${2:?build folder}
seconds=${3:?seconds}
shift 3
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
bin=$build/fuzz
work=$build/fuzz-work
regressions=$src/test/fuzz/regressions

case $mode in fuzz | regress) ;; *) echo "run.sh: unknown mode '$mode'" >&2; exit 2 ;; esac
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in "$bin"/*_fuzz; do [ -x "$t" ] && targets+=("$(basename "$t")"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run.sh: no fuzz targets in $bin" >&2; exit 2; }

# Limits: an input may take TIMEOUT seconds and the process RSS_MB of memory
# (hostile models must fail fast and small, even under ASan).
timeout_s=${FUZZ_INPUT_TIMEOUT:-30}
rss_mb=${FUZZ_RSS_MB:-2048}
# New inputs longer than this are not made (seeds may be longer).
max_len=${FUZZ_MAX_LEN:-262144}

symbolizer=$(command -v llvm-symbolizer-22 || ls /usr/lib/llvm-22/bin/llvm-symbolizer 2>/dev/null || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
# Leaks: the importer's libraries (protobuf, ONNX's schema registry, MLIR)
# keep process-lifetime allocations, which LeakSanitizer does not report;
# any other leak fails.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Every process gets a private TMPDIR (the importer targets' sandboxes lie in
# it), removed whatever happens.
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/hmcc-fuzz-run.XXXXXX")
trap 'rm -rf "$sandbox"' EXIT
export TMPDIR=$sandbox

# The seeds of a target, into $1.
make_seeds() {
  local target=$1 out=$2
  rm -rf "$out" && mkdir -p "$out"
  local f name
  case $target in
    import_fuzz | import_structured_fuzz)
      # Every committed model (binary and text; the structured target only
      # mutates binary ones, the others get byte mutations). The bundled
      # demo model (11 MB) only in the replay: too large to mutate.
      while IFS= read -r f; do
        name=${f#"$src"/}
        cp "$f" "$out/${name//\//__}"
      done < <(find "$src/test" -path "$src/test/fuzz" -prune -o \
                 \( -name '*.onnx' -o -name '*.onnxtxt' \) -type f -print | sort)
      if [ "$mode" = regress ]; then
        cp "$src/examples/gpt-demo/model.onnx" "$out/examples__gpt-demo__model.onnx"
      elif [ -d /usr/share/libonnx-testdata/data/node ]; then
        # make fuzz: also ONNX's backend node tests (one operator each).
        for f in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
          name=${f%/model.onnx}
          cp "$f" "$out/onnx-node__${name##*/}.onnx"
        done
      fi
      ;;
    size_fuzz)
      local k=0
      while IFS= read -r line; do
        printf '%s' "$line" >"$out/seed-$k"
        k=$((k + 1))
      done <"$src/test/fuzz/size_seeds.txt"
      ;;
    *)
      # The runtime's readers: test/fuzz/runtime/make_seeds.py DIR writes
      # the seeds of NAME_fuzz into DIR/NAME.
      if [ -f "$src/test/fuzz/runtime/make_seeds.py" ]; then
        if [ ! -d "$work/runtime-seeds" ]; then
          python3 "$src/test/fuzz/runtime/make_seeds.py" "$work/runtime-seeds.tmp" &&
            mv "$work/runtime-seeds.tmp" "$work/runtime-seeds" ||
            { echo "run.sh: test/fuzz/runtime/make_seeds.py failed" >&2; return 1; }
        fi
        if [ -d "$work/runtime-seeds/${target%_fuzz}" ]; then
          cp -R "$work/runtime-seeds/${target%_fuzz}/." "$out/"
        fi
      fi
      ;;
  esac
}

# The interesting lines of a sanitizer or libFuzzer report in $1: the error
# and the first frames of the stack that are the program's own.
report() {
  grep -E '^(==[0-9]+==ERROR|==hmcc-fuzz==|INVARIANT BROKEN|SUMMARY|.*runtime error:|==[0-9]+== ERROR: libFuzzer)|^    #[0-9]+ ' "$1" |
    grep -vE ' in (__sanitizer|__asan|__ubsan|__interceptor|fuzzer::|abort|raise|__pthread_kill|__libc_start|_start|main) |::die\(|libc\.so' |
    head -"${2:-8}" | sed 's/^/  /'
}

# Runs each of the files in the array `inputs` once in target $1, in as few
# processes as it can: after a failure it goes on with the next file. Sets
# the arrays `failed` and `passed`.
replay() {
  local exe=$1 rest=("${inputs[@]}") log=$work/$(basename "$1").replay.log last i
  failed=()
  passed=()
  while [ ${#rest[@]} -gt 0 ]; do
    if "$exe" "${limits[@]}" "${rest[@]}" >"$log" 2>&1; then
      passed+=("${rest[@]}")
      return
    fi
    last=$(sed -n 's/^Running: //p' "$log" | tail -1)
    for ((i = 0; i < ${#rest[@]}; ++i)); do [ "${rest[i]}" = "$last" ] && break; done
    if [ -z "$last" ] || [ "$i" -ge ${#rest[@]} ]; then
      echo "FAIL: $(basename "$exe") did not run its inputs:"
      tail -5 "$log" | sed 's/^/  /'
      failed+=("${rest[@]}")
      return
    fi
    passed+=("${rest[@]:0:i}")
    failed+=("$last")
    echo "FAIL: $(basename "$exe") on ${last#"$src"/}:"
    report "$log" 8
    rest=("${rest[@]:i+1}")
  done
}

status=0
summary=()
for target in "${targets[@]}"; do
  exe=$bin/$target
  [ -x "$exe" ] || { echo "run.sh: $exe is not built" >&2; status=1; continue; }
  seeds=$work/seeds/$target
  artifacts=$work/artifacts/$target
  make_seeds "$target" "$seeds" || { status=1; continue; }
  rm -rf "$artifacts" && mkdir -p "$artifacts"
  limits=(-timeout="$timeout_s" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb")

  # 1. Every seed and regression input once.
  inputs=()
  while IFS= read -r f; do inputs+=("$f"); done < <(
    find "$seeds" "$regressions/$target" -type f ! -name '.*' ! -name '*.md' 2>/dev/null | sort)
  start=$SECONDS
  replay "$exe"
  echo "$target: replayed ${#inputs[@]} inputs in $((SECONDS - start)) s, ${#failed[@]} failed"
  if [ ${#failed[@]} -gt 0 ]; then
    status=1
    summary+=("$target: ${#failed[@]} of ${#inputs[@]} seed and regression inputs fail")
  fi
  [ "$seconds" -gt 0 ] || continue

  # 2. Fuzzing, from the inputs that pass (a known crash would stop it at
  # once). make test: a short run with a fixed seed, the same each time, in
  # a fresh corpus; make fuzz: the corpus grows from run to run.
  start_dir=$work/start/$target
  rm -rf "$start_dir" && mkdir -p "$start_dir"
  for f in "${passed[@]}"; do cp "$f" "$start_dir/"; done
  if [ "$mode" = regress ]; then
    corpus=$work/smoke/$target
    rm -rf "$corpus"
    flags=(-seed=1)
  else
    corpus=$work/corpus/$target
    flags=()
  fi
  mkdir -p "$corpus"
  [ -f "$src/test/fuzz/$target.dict" ] && flags+=(-dict="$src/test/fuzz/$target.dict")
  log=$work/$target.$mode.log
  echo "$target: fuzzing for $seconds s (log: ${log#"$src"/})"
  start=$SECONDS
  # shellcheck disable=SC2086
  "$exe" "${limits[@]}" "${flags[@]}" -max_total_time="$seconds" -max_len="$max_len" \
    -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_FLAGS:-} \
    "$corpus" "$start_dir" >"$log" 2>&1
  rc=$?
  # The last status line, "#N ... cov: C ft: F corp: K/SIZE ..." (with -fork:
  # "#N: cov: C ft: F corp: K exec/s ... oom/timeout/crash: O/T/C ...").
  done_line=$(grep -E '^#[0-9]+:?[[:space:]].*cov: ' "$log" | tail -1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$done_line")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  corp=$(sed -n 's/.* corp: \([0-9/]*[^ ]*\).*/\1/p' <<<"$done_line")
  line="$target: ${execs:-?} executions in $((SECONDS - start)) s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
  if grep -q 'oom/timeout/crash:' <<<"$done_line"; then
    line="$line, oom/timeout/crash $(sed -n 's|.*oom/timeout/crash: \([0-9/]*\).*|\1|p' <<<"$done_line")"
  fi
  crashes=()
  for f in "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/oom-* "$artifacts"/leak-*; do
    [ -f "$f" ] && crashes+=("$f")
  done
  if [ ${#crashes[@]} -gt 0 ] || [ $rc -ne 0 ]; then
    echo "FAIL: $target crashed while fuzzing (exit $rc):"
    report "$log" 10
    for f in "${crashes[@]}"; do
      if [ "$mode" = fuzz ]; then
        # Every input that ever crashed is kept.
        mkdir -p "$regressions/$target"
        cp "$f" "$regressions/$target/"
        echo "  kept as test/fuzz/regressions/$target/$(basename "$f"): commit it, under a name that says what it triggers"
      else
        echo "  the input: ${f#"$src"/} (make fuzz keeps such inputs in test/fuzz/regressions)"
      fi
    done
    line="$line, CRASHED"
    status=1
  fi
  summary+=("$line")
done

if [ ${#summary[@]} -gt 0 ]; then
  echo
  printf '%s\n' "${summary[@]}"
fi
exit $status
