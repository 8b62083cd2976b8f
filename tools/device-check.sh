#!/usr/bin/env bash
# Device check for a GPU machine (H200, sm_90, CUDA 13): GPU tests, env throughput, two short
# training runs, and one summary table. Finishes within 8 minutes (every step has a timeout and the
# whole script a deadline).
#
# Usage: tools/device-check.sh OUTDIR [BUILD_DIR]
#   OUTDIR     logs, bench JSON, run directories and summary.txt go here (created)
#   BUILD_DIR  a build made elsewhere, e.g. on a machine with our Debian packages:
#                cmake -S . -B build-device -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DRLTRAIN_NATIVE=OFF
#                cmake --build build-device
#              It is used as is (never rebuilt; ctest's absolute paths are rewritten when the build
#              was made at another path). Shared libraries the binaries need that this machine
#              lacks can be put in BUILD_DIR/runtime-libs (added to LD_LIBRARY_PATH).
#              Without BUILD_DIR the script configures and builds REPO/build-device itself, which
#              needs CMake, Ninja or Make, and our dependencies (Eigen, GTest, CLI11, toml++, json).
# Exit status: 0 when everything that ran passed; 1 when a test, bench or training run failed or
# the build failed; 2 for bad usage.
set -u -o pipefail

if [[ $# -lt 1 || $# -gt 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
BUILD=${2:-}
cd "$REPO" || exit 2

T0=$(date +%s)
DEADLINE=$((T0 + 460))  # 7 min 40 s: the last step's timeout still ends inside 8 minutes
LOG="$OUT/device-check.log"
: >"$LOG"
log() { echo "[device-check +$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
# Seconds a step may take: its own cap, or what is left before the deadline, whichever is less.
budget() {
  local left=$((DEADLINE - $(date +%s)))
  ((left < $1)) && echo "$left" || echo "$1"
}
STATUS=0
fail() { STATUS=1; }

# ---- machine -------------------------------------------------------------------------------------
GPU="no nvidia-smi"
if command -v nvidia-smi >/dev/null; then
  GPU=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)
  timeout 20 nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
fi
log "repo $REPO, out $OUT, gpu: $GPU"

# ---- build ---------------------------------------------------------------------------------------
BUILD_NOTE=""
if [[ -n "$BUILD" ]]; then
  if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    log "BUILD_DIR $BUILD has no CMakeCache.txt: not a CMake build directory"
    exit 2
  fi
  BUILD=$(cd "$BUILD" && pwd)
  BUILD_NOTE="prebuilt $BUILD"
  # ctest files hold the absolute build and source paths of the machine that configured them.
  old_build=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$BUILD/CMakeCache.txt")
  old_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
  if [[ "$old_build" != "$BUILD" || "$old_src" != "$REPO" ]]; then
    log "relocating ctest files: $old_build -> $BUILD, $old_src -> $REPO"
    python3 - "$BUILD" "$old_build" "$BUILD" "$old_src" "$REPO" <<'PY' 2>&1 | tee -a "$LOG"
import pathlib, re, sys
root, args = pathlib.Path(sys.argv[1]), sys.argv[2:]
mapping = {old: new for old, new in zip(args[0::2], args[1::2]) if old}
# One pass, longest path first: a build dir inside the source dir is rewritten as a whole, once.
pattern = re.compile("|".join(re.escape(p) for p in sorted(mapping, key=len, reverse=True)))
n = 0
for f in root.rglob("*"):
    if f.is_file() and (f.name == "CTestTestfile.cmake" or f.name.endswith(("_include.cmake", "_tests.cmake"))):
        text = f.read_text()
        new_text = pattern.sub(lambda m: mapping[m.group(0)], text)
        if new_text != text:
            f.write_text(new_text)
            n += 1
print(f"rewrote {n} ctest files")
PY
  fi
else
  BUILD="$REPO/build-device"
  BUILD_NOTE="built here in $BUILD"
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  log "configuring $BUILD"
  if ! timeout "$(budget 60)" cmake -S "$REPO" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DRLTRAIN_NATIVE=OFF >"$OUT/configure.log" 2>&1; then
    log "configure FAILED (see configure.log; our dependencies may be missing here: pass a BUILD_DIR)"
    BUILD_NOTE="configure failed"
    fail
  else
    log "building (log: build.log)"
    if ! timeout "$(budget 240)" cmake --build "$BUILD" -j "$(nproc)" >"$OUT/build.log" 2>&1; then
      log "build FAILED or timed out (see build.log); testing whatever was built"
      BUILD_NOTE="build failed"
      fail
    fi
  fi
fi
if [[ -d "$BUILD/runtime-libs" ]]; then
  export LD_LIBRARY_PATH="$BUILD/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# The binaries' RUNPATH names the CUDA library folder of the machine that built them; add this
# machine's (where libcublas lives) in case it is elsewhere.
for d in "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../lib64" \
         /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  if compgen -G "$d/libcublas.so.*" >/dev/null; then
    LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(cd "$d" && pwd)"
    export LD_LIBRARY_PATH
    break
  fi
done
# Say up front which shared libraries a binary cannot find here (e.g. toml++ from Debian).
for b in "$BUILD/tests/test_kernels" "$BUILD/rltrain" "$BUILD/apps/rltrain"; do
  [[ -x "$b" ]] || continue
  missing=$(ldd "$b" 2>/dev/null | grep "not found" | awk '{print $1}' | tr '\n' ' ')
  [[ -n "$missing" ]] && log "WARNING: $b cannot find: $missing(put them in $BUILD/runtime-libs)"
done

# ---- GPU tests -----------------------------------------------------------------------------------
TESTS="not run"
if [[ -f "$BUILD/CTestTestfile.cmake" ]]; then
  log "ctest -L gpu (log: ctest_gpu.log)"
  junit=()
  ctest --help 2>/dev/null | grep -- --output-junit >/dev/null && junit=(--output-junit "$OUT/ctest_gpu.xml")
  (cd "$BUILD" && timeout "$(budget 150)" ctest -L gpu --output-on-failure --timeout 120 "${junit[@]}") \
    >"$OUT/ctest_gpu.log" 2>&1
  rc=$?
  # Counts from the JUnit file (ctest >= 3.21), else from the text summary.
  TESTS=$(python3 - "$OUT/ctest_gpu.xml" "$OUT/ctest_gpu.log" "$rc" <<'PY'
import re, sys, xml.etree.ElementTree as ET
xml_path, log_path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
passed = failed = skipped = None
try:
    cases = ET.parse(xml_path).getroot().iter("testcase")
    passed = failed = skipped = 0
    for c in cases:
        st = c.get("status", "")
        if c.find("skipped") is not None or st in ("notrun", "disabled", "skipped"):
            skipped += 1
        elif c.find("failure") is not None or c.find("error") is not None or st == "fail":
            failed += 1
        else:
            passed += 1
except Exception:
    text = open(log_path, errors="replace").read()
    m = re.search(r"(\d+) tests failed out of (\d+)", text)
    if m:
        failed, total = int(m.group(1)), int(m.group(2))
        skipped = len(re.findall(r"\(Skipped\)", text))
        passed = total - failed - skipped
note = "" if rc == 0 else (" (timed out)" if rc in (124, 137) else f" (ctest exit {rc})")
if passed is None:
    print(f"no result{note}")
else:
    print(f"{passed} passed, {failed} failed, {skipped} skipped{note}")
PY
)
  [[ $rc -ne 0 ]] && fail
  if [[ "$TESTS" == "0 passed, 0 failed, 0 skipped"* ]]; then
    TESTS="$TESTS - no gpu tests registered (built without CUDA?)"
    fail
  fi
else
  TESTS="not built"
fi
log "tests: $TESTS"

# ---- bench and training --------------------------------------------------------------------------
RLTRAIN=""
for cand in "$BUILD/rltrain" "$BUILD/apps/rltrain" "$BUILD/bin/rltrain"; do
  [[ -x "$cand" && -f "$cand" ]] && RLTRAIN=$cand && break
done
[[ -z "$RLTRAIN" ]] && RLTRAIN=$(find "$BUILD" -maxdepth 3 -type f -name rltrain -perm -u+x 2>/dev/null | head -1)

BENCH_ROWS=()
TRAIN_ROWS=()
if [[ -z "$RLTRAIN" ]]; then
  log "no rltrain binary in $BUILD: bench and training not built"
  BENCH_ROWS+=("(all envs)|-|not built")
  TRAIN_ROWS+=("cartpole|-|-|not built" "pendulum|-|-|not built")
else
  ENVS=$(timeout 20 "$RLTRAIN" envs --names 2>>"$LOG" | tr ',' ' ')
  [[ -z "${ENVS// /}" ]] && log "rltrain envs --names listed nothing" && fail
  for env in $ENVS; do
    t=$(budget 45)
    if ((t < 10)); then BENCH_ROWS+=("$env|-|skipped (out of time)"); continue; fi
    log "bench $env (timeout ${t}s, log: bench_$env.log)"
    timeout "$t" "$RLTRAIN" bench --device cuda --env "$env" --num-envs 4096,65536,1048576 \
      --json "$OUT/bench_$env.json" >"$OUT/bench_$env.log" 2>&1
    rc=$?
    rows=$(python3 - "$OUT/bench_$env.json" "$env" "$rc" <<'PY'
import json, sys
path, env, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
status = "ok" if rc == 0 else ("timeout" if rc in (124, 137) else f"exit {rc}")
rate_keys = ("env_steps_per_second", "steps_per_second", "steps_per_sec", "sps")
def records(x):
    if isinstance(x, dict):
        if "num_envs" in x:
            yield x
        for v in x.values():
            yield from records(v)
    elif isinstance(x, list):
        for v in x:
            yield from records(v)
try:
    data = json.load(open(path))
except Exception:
    data = None
found = False
for r in records(data):
    rate = next((r[k] for k in rate_keys if isinstance(r.get(k), (int, float))), None)
    print(f"{r.get('env', env)}|{r['num_envs']}|{rate:.4g} {status}" if rate is not None else
          f"{r.get('env', env)}|{r['num_envs']}|? {status}")
    found = True
if not found:
    print(f"{env}|-|no json ({status})")
PY
)
    [[ $rc -ne 0 ]] && fail
    while IFS= read -r row; do BENCH_ROWS+=("$row"); done <<<"$rows"
  done

  for task in cartpole pendulum; do
    cfg="configs/$task.toml"
    if [[ ! -f "$cfg" ]]; then TRAIN_ROWS+=("$task|-|-|no $cfg"); continue; fi
    t=$(budget 100)
    if ((t < 15)); then TRAIN_ROWS+=("$task|-|-|skipped (out of time)"); continue; fi
    log "train $task (timeout ${t}s, log: train_$task.log)"
    rm -rf "${OUT:?}/$task"
    start=$(date +%s.%N)
    timeout "$t" "$RLTRAIN" train --config "$cfg" --device cuda --run-dir "$OUT/$task" \
      >"$OUT/train_$task.log" 2>&1
    rc=$?
    wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
    row=$(python3 - "$OUT/$task" "$task" "$rc" "$wall" <<'PY'
import csv, json, math, os, sys
run, task, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
status = "ok" if rc == 0 else ("timeout" if rc in (124, 137) else f"exit {rc}")
ret = None
try:  # summary.json, written at the end of a run
    s = json.load(open(os.path.join(run, "summary.json")))
    ret = s.get("final_mean_return")
    if s.get("reached_target"):
        status += ", reached target"
except Exception:
    pass
if ret is None:  # a run cut short: the last row of metrics.csv
    try:
        rows = list(csv.DictReader(open(os.path.join(run, "metrics.csv"))))
        if rows:
            ret = float(rows[-1].get("mean_return", "nan"))
    except Exception:
        pass
ret_s = "-" if ret is None or (isinstance(ret, float) and math.isnan(ret)) else f"{ret:.1f}"
print(f"{task}|{ret_s}|{wall}|{status}")
PY
)
    [[ $rc -ne 0 ]] && fail
    TRAIN_ROWS+=("$row")
  done
fi

# ---- summary -------------------------------------------------------------------------------------
{
  echo "== rltrain device check: $GPU =="
  echo "build: $BUILD_NOTE"
  echo "tests (ctest -L gpu): $TESTS"
  echo
  printf '%-26s %10s %s\n' "bench env" "num_envs" "env steps/s"
  for r in "${BENCH_ROWS[@]}"; do IFS='|' read -r a b c <<<"$r"; printf '%-26s %10s %s\n' "$a" "$b" "$c"; done
  echo
  printf '%-26s %14s %8s %s\n' "train" "final return" "wall s" "status"
  for r in "${TRAIN_ROWS[@]}"; do IFS='|' read -r a b c d <<<"$r"; printf '%-26s %14s %8s %s\n' "$a" "$b" "$c" "$d"; done
  echo
  echo "total $(($(date +%s) - T0)) s; logs in $OUT"
} | tee "$OUT/summary.txt"
exit $STATUS
