#!/usr/bin/env bash
# Device check for a GPU machine (H200, sm_90, CUDA 13): the GPU tests (ctest -L gpu), CartPole,
# Pendulum and Reacher trained on CUDA from their shipped configs (CartPole also with its statistics
# read synchronously, train.stats_readback=sync, and at 256 envs), `rltrain bench --device cuda` for
# every classic env at 4096, 65536, 262144 and 1048576 envs and every robot env at 65536 envs
# (RLT_CHECK_ROBOT_SIZES), then the robot tasks trained on CUDA from their shipped configs until
# they reach the issue's target return or their time cap (RLT_CHECK_ROBOT_TRAIN, TASK:TARGET:CAP_S
# words, default "halfcheetah:4800:60 ant:6000:60 humanoid:5000:120"), Playground's Go1 (flat)
# trained from configs/go1_joystick_gpu.toml (8192 envs) for RLT_CHECK_GO1_TRAIN_S (default 90) s with
# the joystick tasks benched at RLT_CHECK_JOYSTICK_SIZES (default 8192,65536), and one short summary
# table, with bench rows for CPU envs feeding the CUDA learner (RLT_CHECK_PLACEMENT, ENV:NUM_ENVS
# words, default "cartpole:4096 ant:256"; issue 18). Finishes within 9 min 30 s (every step has a
# timeout and the whole script a deadline).
#
# Usage:
#   tools/device-check.sh --prepare [BUILD_DIR]   here, on the build machine (no GPU needed)
#   tools/device-check.sh OUTDIR [BUILD_DIR]      on the GPU machine
#   BUILD_DIR  default REPO/build-sm90
#   OUTDIR     logs, bench JSON, run directories and summary.txt go here (created)
#
# The GPU machine has CUDA 13 (nvcc, cuBLAS), CMake and Python but not our Debian packages (Eigen,
# GTest, CLI11, toml++, nlohmann-json), so the build is made here and carried there. Here:
#   cmake -S . -B build-sm90 -DCMAKE_CUDA_ARCHITECTURES=90 -DRLTRAIN_NATIVE=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build-sm90 --target rltrain test_kernels test_cuda_learner test_contacts_cuda test_cuda_robot_envs test_viewer_cuda test_mpi_gpu
#   tools/device-check.sh --prepare build-sm90
# (`cmake --build build-sm90` with no --target builds everything and works as well, only slower.)
# Open MPI's libraries travel in runtime-libs like the others, but not mpirun: there test_mpi_gpu
# (two processes over NCCL) skips, saying so, unless that machine has mpirun of its own.
# --prepare runs the two cmake commands itself when they have not been run, then copies the shared
# libraries the binaries need that are neither the C/C++ runtime nor CUDA's (toml++, linked as a
# shared library from Debian) into BUILD_DIR/runtime-libs: carrying BUILD_DIR (~30 MB) is then
# enough. There the script puts runtime-libs and the machine's CUDA library folder on
# LD_LIBRARY_PATH, rewrites ctest's absolute paths when the tree sits elsewhere, and points the
# tests at this tree's configs/ (RLTRAIN_SOURCE_DIR). Without a prepared BUILD_DIR it configures and
# builds one itself, which needs the dependencies above.
#
# Exit status: 0 when everything ran and passed; 1 when there is no GPU (the table says "no GPU"),
# or a test, training run or bench failed, or the build failed; 2 for bad usage.
# RLT_CHECK_DEADLINE=S ends the check after S seconds (default 560), the steps left out of time
# marked as such in the table.
# A dry run without a GPU: RLT_CHECK_DEVICE=cpu RLT_CHECK_SIZES=256,4096 tools/device-check.sh OUT
# runs the bench and the training on the CPU (the GPU tests skip).
set -u -o pipefail

usage() {
  sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}
[[ $# -lt 1 || $# -gt 2 || "$1" == "-h" || "$1" == "--help" ]] && usage

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The binaries the check runs; the gpu-labelled test targets of tests/CMakeLists.txt.
TARGETS=(rltrain test_kernels test_cuda_learner test_contacts_cuda test_cuda_robot_envs test_viewer_cuda test_mpi_gpu)
# Their paths in the build folder.
BINS=(rltrain tests/test_kernels tests/test_cuda_learner tests/test_contacts_cuda tests/test_cuda_robot_envs tests/test_viewer_cuda tests/test_mpi_gpu)
CUDA_ARCH=90

# Configures BUILD (sm_90, Release, portable CPU code) unless it is configured, then builds TARGETS.
configure_and_build() {
  local build=$1 log=$2 limit=$3
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    echo "configuring $build (log: $log)"
    timeout "$limit" cmake -S "$REPO" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH -DRLTRAIN_NATIVE=OFF -DRLTRAIN_VIEWER=OFF \
      -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 || return 1
  fi
  echo "building ${TARGETS[*]} in $build (log: $log)"
  timeout "$limit" cmake --build "$build" -j "$(nproc)" --target "${TARGETS[@]}" >>"$log" 2>&1
}

# ---- --prepare: here, on the build machine ------------------------------------------------------------
if [[ "$1" == "--prepare" ]]; then
  BUILD=${2:-$REPO/build-sm90}
  mkdir -p "$BUILD" || exit 2
  BUILD=$(cd "$BUILD" && pwd)
  if ! configure_and_build "$BUILD" "$BUILD/device-check-build.log" 7200; then
    echo "build FAILED: see $BUILD/device-check-build.log"
    exit 1
  fi
  arch=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
  [[ "$arch" == "$CUDA_ARCH" ]] || echo "WARNING: $BUILD is built for CUDA architectures '$arch', not $CUDA_ARCH"
  rm -rf "$BUILD/runtime-libs"
  mkdir -p "$BUILD/runtime-libs"
  # Everything ldd resolves except the C/C++ runtime (present on any Linux) and CUDA's own libraries
  # (the GPU machine's toolkit has them, and cuBLAS alone would be far too large to carry).
  base='^(linux-vdso|ld-linux|libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libutil|libresolv)\.so'
  cuda='^lib(cublas|cublasLt|cudart|cuda|nvrtc|nvJitLink|curand|cusolver|cusparse|cufft)\.so'
  for t in "${BINS[@]}"; do
    bin="$BUILD/$t"
    [[ -x "$bin" ]] || { echo "missing $bin"; exit 1; }
    while read -r name _ path _; do
      [[ "$path" == /* ]] || continue
      [[ "$name" =~ $base || "$name" =~ $cuda ]] && continue
      if [[ ! -f "$BUILD/runtime-libs/$name" ]]; then
        cp -L "$path" "$BUILD/runtime-libs/$name" && echo "runtime-libs: $name (from $path, needed by $t)"
      fi
    done < <(ldd "$bin" | grep '=>')
  done
  # The carried tree is limited to 64 MiB: the linked binaries are all the check needs, so object
  # files and static libraries go (a later --prepare rebuilds them).
  find "$BUILD" \( -name '*.o' -o -name '*.a' \) -delete
  ngpu=$(cd "$BUILD" && ctest -N -L gpu 2>/dev/null | sed -n 's/^Total Tests: //p')
  echo "prepared $BUILD ($(du -sh "$BUILD" | cut -f1)): ${ngpu:-0} gpu tests, runtime-libs: $(ls "$BUILD/runtime-libs" | tr '\n' ' ')"
  echo "on the GPU machine: tools/device-check.sh OUTDIR ${BUILD#"$REPO"/}"
  exit 0
fi

# ---- the check: on the GPU machine --------------------------------------------------------------------
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
BUILD=${2:-$REPO/build-sm90}
DEVICE=${RLT_CHECK_DEVICE:-cuda}
SIZES=${RLT_CHECK_SIZES:-4096,65536,262144,1048576}
ROBOT_SIZES=${RLT_CHECK_ROBOT_SIZES:-65536}
JOYSTICK_SIZES=${RLT_CHECK_JOYSTICK_SIZES:-8192,65536}
GO1_TRAIN_S=${RLT_CHECK_GO1_TRAIN_S:-90}
ROBOT_TRAIN=${RLT_CHECK_ROBOT_TRAIN-halfcheetah:4800:60 ant:6000:60 humanoid:5000:120}
CLASSIC_ENVS=" cartpole pendulum acrobot mountaincar_continuous "
PLACEMENT=${RLT_CHECK_PLACEMENT-cartpole:4096 ant:256}
cd "$REPO" || exit 2

T0=$(date +%s)
# 9 min 20 s by default: the last step's timeout still ends inside 9 min 30 s. RLT_CHECK_DEADLINE
# (seconds) shortens it for a shorter device lease.
DEADLINE=$((T0 + ${RLT_CHECK_DEADLINE:-560}))
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

# ---- machine --------------------------------------------------------------------------------------------
GPU=""
NO_GPU=""
if ! command -v nvidia-smi >/dev/null; then
  NO_GPU="no nvidia-smi"
elif ! GPU=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1) ||
  [[ -z "$GPU" || "$GPU" == *"failed"* || "$GPU" == *"No devices"* ]]; then
  NO_GPU="nvidia-smi: ${GPU:-no answer}"
else
  timeout 20 nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
fi
[[ -n "$NO_GPU" ]] && GPU="no GPU ($NO_GPU)"
log "repo $REPO, out $OUT, gpu: $GPU"

# ---- build ----------------------------------------------------------------------------------------------
BUILD_NOTE=""
if [[ -f "$BUILD/CMakeCache.txt" && -x "$BUILD/rltrain" ]]; then
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
    # Some tests carry their data folder compiled in (RLT_TEST_DATA_DIR and the like): the old
    # source path is made to lead here too.
    if [[ -n "$old_src" && "$old_src" != "$REPO" && ! -e "$old_src" ]]; then
      mkdir -p "$(dirname "$old_src")" && ln -s "$REPO" "$old_src" && log "linked $old_src -> $REPO (compiled-in data paths)"
    fi
  fi
else
  mkdir -p "$BUILD" && BUILD=$(cd "$BUILD" && pwd)
  BUILD_NOTE="built here in $BUILD"
  log "no prepared build in $BUILD: configuring and building (log: build.log; needs our dependencies)"
  if ! configure_and_build "$BUILD" "$OUT/build.log" "$(budget 240)" >>"$LOG"; then
    log "build FAILED or timed out (see build.log); prepare BUILD_DIR on a machine with the dependencies"
    BUILD_NOTE="build failed"
    fail
  fi
fi
arch=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
[[ -n "$arch" ]] && BUILD_NOTE="$BUILD_NOTE, sm_$arch"
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
# NCCL, which rltrain opens at run time for a job of several GPU processes (test_mpi_gpu): the
# toolkit's where it has one, else PyTorch's wheel (nvidia-nccl).
if ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2; then
  nccl_dir=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
  [[ -n "$nccl_dir" && -d "$nccl_dir" ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$nccl_dir"
fi
# Say up front which shared libraries a binary cannot find here.
for t in "${BINS[@]}"; do
  b="$BUILD/$t"
  if [[ ! -x "$b" ]]; then log "WARNING: $b is not built"; continue; fi
  missing=$(ldd "$b" 2>/dev/null | grep "not found" | awk '{print $1}' | tr '\n' ' ')
  [[ -n "$missing" ]] && log "WARNING: $b cannot find: $missing(run tools/device-check.sh --prepare where it was built)"
done
# The tests read configs/ from this tree, wherever the build was made.
export RLTRAIN_SOURCE_DIR="$REPO"

# ---- GPU tests ------------------------------------------------------------------------------------------
TESTS="not run"
if [[ -f "$BUILD/CTestTestfile.cmake" ]]; then
  log "ctest -L gpu (log: ctest_gpu.log)"
  junit=()
  ctest --help 2>/dev/null | grep -- --output-junit >/dev/null && junit=(--output-junit "$OUT/ctest_gpu.xml")
  (cd "$BUILD" && timeout "$(budget 240)" ctest -L gpu -j 4 --output-on-failure --timeout 200 "${junit[@]}") \
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
  elif [[ "$TESTS" == "0 passed, 0 failed,"* ]]; then
    TESTS="$TESTS - all skipped: no GPU answered"
    fail
  fi
else
  TESTS="not built"
  fail
fi
log "tests: $TESTS"

# ---- training and bench ---------------------------------------------------------------------------------
RLTRAIN=""
[[ -x "$BUILD/rltrain" && -f "$BUILD/rltrain" ]] && RLTRAIN="$BUILD/rltrain"
TRAIN_ROWS=()
BENCH_ROWS=()
skip_reason=""
[[ -z "$RLTRAIN" ]] && skip_reason="rltrain not built"
[[ -z "$skip_reason" && -n "$NO_GPU" && "$DEVICE" == cuda ]] && skip_reason="no GPU"
# One training run from a shipped config: train_row TASK CAP_S [extra rltrain train args...]; the row,
# run directory and log are named LABEL (default TASK).
train_row() {
  local task=$1 cap=$2 cfg="configs/$1.toml" label=${LABEL:-$1} t start rc wall row
  shift 2
  if [[ ! -f "$cfg" ]]; then TRAIN_ROWS+=("$label|-|-|no $cfg"); fail; return; fi
  t=$(budget "$cap")
  if ((t < 15)); then TRAIN_ROWS+=("$label|-|-|skipped (out of time)"); fail; return; fi
  log "train $label on $DEVICE (timeout ${t}s, log: train_$label.log)"
  rm -rf "${OUT:?}/$label"
  start=$(date +%s.%N)
  timeout "$t" "$RLTRAIN" train --config "$cfg" --device "$DEVICE" --run-dir "$OUT/$label" "$@" \
    >"$OUT/train_$label.log" 2>&1
  rc=$?
  wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
  row=$(python3 - "$OUT/$label" "$label" "$rc" "$wall" <<'PY'
import csv, json, math, os, sys
run, task, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
status = "ok" if rc == 0 else ("timeout" if rc in (124, 137) else f"exit {rc}")
ret = None
try:  # summary.json, written at the end of a run
    s = json.load(open(os.path.join(run, "summary.json")))
    ret = s.get("final_mean_return")
    status += ", reached target" if s.get("reached_target") else ", target NOT reached"
    status += f", {s.get('env_steps', '?')} steps"
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
  # A robot run cut by its time cap is a measurement (its row says so), not a failure.
  [[ $rc -ne 0 ]] && ! [[ ${TIMEOUT_OK:-0} == 1 && ( $rc == 124 || $rc == 137 ) ]] && fail
  TRAIN_ROWS+=("$row")
}

# One bench row: bench_row LABEL ENV NUM_ENVS [extra rltrain bench args...] (the device is $DEVICE
# unless the extra args place the envs elsewhere).
bench_row() {
  local label=$1 env=$2 n=$3 t rc row file
  shift 3
  file="bench_${label//@/_}_$n"
  t=$(budget 75)
  if ((t < 10)); then BENCH_ROWS+=("$label|$n|-|-|-|-|skipped (out of time)"); fail; return; fi
  log "bench $label at $n envs on $DEVICE (timeout ${t}s, log: $file.log)"
  timeout "$t" "$RLTRAIN" bench --device "$DEVICE" --env "$env" --num-envs "$n" "$@" \
    --json "$OUT/$file.json" >"$OUT/$file.log" 2>&1
  rc=$?
  row=$(python3 - "$OUT/$file.json" "$label" "$n" "$rc" <<'PY'
import json, sys
path, env, n, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
status = "ok" if rc == 0 else ("timeout" if rc in (124, 137) else f"exit {rc}")
def g(r, k, fmt="{:.3g}"):
    v = r.get(k)
    return fmt.format(v) if isinstance(v, (int, float)) else "-"
try:
    r = json.load(open(path))["results"][0]
    print("|".join([env, n, g(r, "env_steps_per_second"), g(r, "policy_steps_per_second"),
                    g(r, "ppo_samples_per_second"), g(r, "transfers_per_ppo_iteration", "{:g}"), status]))
except Exception:
    print(f"{env}|{n}|-|-|-|-|no json ({status})")
PY
)
  [[ $rc -ne 0 ]] && fail
  BENCH_ROWS+=("$row")
}

if [[ -n "$skip_reason" ]]; then
  log "training and bench skipped: $skip_reason"
  for task in cartpole pendulum reacher $ROBOT_TRAIN; do TRAIN_ROWS+=("${task%%:*}|-|-|$skip_reason"); done
  BENCH_ROWS+=("(every env)|-|-|-|-|-|$skip_reason")
  fail
else
  # Three short training runs from the shipped configs (they stop at their target return).
  for task in cartpole pendulum reacher; do train_row "$task" 90; done
  # CartPole again with its statistics read synchronously (the default on CUDA is one iteration
  # late, train.stats_readback): the wall time the overlap saves; and at 256 envs x 16 steps.
  LABEL=cartpole_sync train_row cartpole 60 --set train.stats_readback=sync
  LABEL=cartpole_256 train_row cartpole 60 --set env.num_envs=256 --set ppo.num_steps=16 \
    --set train.total_env_steps=3000000

  # The bench, one invocation per (env, size), so a size that runs out of time loses only its row.
  ENVS=$(timeout 20 "$RLTRAIN" envs --names 2>>"$LOG" | tr ',\n' '  ')
  [[ -z "${ENVS// /}" ]] && log "rltrain envs --names listed nothing" && fail
  for env in $ENVS; do
    sizes=$SIZES steps=()
    # Robot envs: fewer sizes and a fixed step count (physics is ~1000x the work of a classic step).
    [[ "$CLASSIC_ENVS" != *" $env "* ]] && sizes=$ROBOT_SIZES steps=(--steps 200)
    [[ "$env" == *_joystick* ]] && sizes=$JOYSTICK_SIZES
    for n in ${sizes//,/ }; do bench_row "$env" "$env" "$n" "${steps[@]}"; done
  done

  # Placement (issue 18): the envs on the CPU feeding the learner on $DEVICE through the pinned,
  # double-buffered staging (RLT_CHECK_PLACEMENT, ENV:NUM_ENVS words); rows named ENV@cpu-env.
  for spec in $PLACEMENT; do
    IFS=: read -r env n <<<"$spec"
    steps=()
    [[ "$CLASSIC_ENVS" != *" $env "* ]] && steps=(--steps 200)
    bench_row "$env@cpu-env" "$env" "$n" "${steps[@]}" --env-device cpu --learner-device "$DEVICE" --placement-copies
  done

  # Go1 at Playground's scale, time-capped (no return target: its rewards are clipped at 0 per step);
  # the row shows where the return got to.
  ((GO1_TRAIN_S > 0)) && TIMEOUT_OK=1 train_row go1_joystick_gpu "$GO1_TRAIN_S" --set train.stop_at_target=false

  # The robot tasks, each until the issue's target return or its time cap (wall time to target).
  for spec in $ROBOT_TRAIN; do
    IFS=: read -r task target cap <<<"$spec"
    TIMEOUT_OK=1 train_row "$task" "${cap:-60}" --set train.stop_at_target=true --set "train.target_return=$target"
  done
fi

# ---- summary --------------------------------------------------------------------------------------------
{
  echo "== rltrain device check: $GPU =="
  echo "build: $BUILD_NOTE"
  echo "tests (ctest -L gpu): $TESTS"
  echo
  printf '%-16s %12s %8s  %s\n' "train" "final return" "wall s" "status"
  for r in "${TRAIN_ROWS[@]}"; do IFS='|' read -r a b c d <<<"$r"; printf '%-16s %12s %8s  %s\n' "$a" "$b" "$c" "$d"; done
  echo
  printf '%-24s %9s %11s %11s %11s %8s  %s\n' "bench ($DEVICE)" "num_envs" "env st/s" "+policy/s" "PPO smp/s" "xfers/it" "status"
  for r in "${BENCH_ROWS[@]}"; do
    IFS='|' read -r a b c d e f g <<<"$r"
    printf '%-24s %9s %11s %11s %11s %8s  %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g"
  done
  echo
  [[ -n "$NO_GPU" ]] && echo "no GPU: $NO_GPU"
  echo "total $(($(date +%s) - T0)) s, exit $STATUS; logs in $OUT"
} | tee "$OUT/summary.txt"
exit $STATUS
