#!/usr/bin/env bash
# The sanitizer job (issue "Nothing lost, nothing silent"): a CPU-only build with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer (float-cast-overflow included; any report fails),
# running the unit tests (not the learning runs, the peer comparisons or the viewer) and the three
# libFuzzer harnesses for a fixed number of inputs each (tests/fuzz). The last step of the README's
# test command. Built at -O1 with line tables only (stack traces keep file:line; half the time of
# -O2 -g). Left out: the long physics runs (thousands of robot steps: TenThousandRandomSteps, the
# MuJoCo fall statistics, ...), 80% of the job's time under ASan for code with no allocation in its
# loops; their shorter siblings in the same binaries run (docs/RESULTS.md, "Tests and CI").
#   tools/sanitize.sh [BUILD_DIR]        (default build-sanitize)
# Environment: RLTRAIN_FUZZ_RUNS (inputs per harness, default 20000).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-sanitize}
san="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
CC=clang CXX=clang++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" -DRLTRAIN_TESTS=ON -DRLTRAIN_CUDA=OFF -DRLTRAIN_PYTHON=OFF \
  -DRLTRAIN_VIEWER=OFF -DRLTRAIN_NATIVE=OFF -DRLTRAIN_TEST_OPT=-O0 -DRLTRAIN_FUZZ=ON -DRLTRAIN_FUZZ_RUNS="${RLTRAIN_FUZZ_RUNS:-20000}" \
  -DCMAKE_CXX_FLAGS="$san -fsanitize=fuzzer-no-link" -DCMAKE_C_FLAGS="$san" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
# One goal, rlt_sanitizer_set (tests/CMakeLists.txt: the binaries the tests below run), so make runs
# the compiles on every core. A list of --target goals was built one goal after another (CMake's top
# Makefile is .NOTPARALLEL), each test binary's one or two files on one core: 565 s instead of about
# 360 for the same compiles (fourteenth session).
cmake --build "$dir" -j"$(nproc)" --target rlt_sanitizer_set
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
long_runs='TenThousandRandom|FallsUnderZeroActions|CommandsWithinRangesAndResampled|RandomActionsStayFinite|StandsUnderZeroActions|SameSeedSameEpisodesOtherSeedOther|ResetOneStartsTheNextEpisode|BoxStackAndCapsuleOnBoxRest|ConvexGeomsLandOnTheField'
# Also left out (twenty-second session: the job took 19 min on a fresh 2-vCPU machine, the whole CI
# 40): the longest runs whose subject is bits, precision or whole training runs rather than memory
# (each 10-56 s under ASan; their Release runs check them, and shorter siblings in the same binaries
# run here): the CLI's resume-after-signal, settled-tracking, bench-phase and full-stdout runs, the
# thread-count and pinned-trace bit checks, libm's sinf/cosf bits, the reduced-precision PPO
# gradients, the G1's low-rank solve and identity randomization, its checkpoint resume.
long_runs+='|CliResume.SignalStopsWithACheckpointAndResumesBitForBit|CliEvalTracking.SettledTrackingSkipsStepsAfterCommandChanges'
long_runs+='|CliBench.PhasesSplitThePpoIterationsCpuTime|CliWriteFailures.FullStdoutAndFullDiskExitWithCode5'
long_runs+='|RobotEnvs.ThreadCountDoesNotChangeTheBits|ClassicTrace.OutputsAreBitForBitThePinnedOnes|Lanes.SinCosAreLibmsBits'
long_runs+='|PpoPrecision.LossGradientInReducedPrecisionNearFp32|PpoPrecision.AntBf16IterationNearFp32'
long_runs+='|LowRankCrossRowsAnswerAsEnvelopeG1|G1Both.IdentityRandomizationIsNone|CheckpointResumesBitForBit/g1_joystick'
long_runs+='|PhysicsAnalytic.DoublePendulumEnergyDrift|PhysicsAnalytic.FreeBodyTorqueFreePrecession|TreeFactors.SpanElimination'
long_runs+='|TreeFactors.CrbaColumnsAndKinematicsShortcuts|StopsOnMuJoCosTestG1|IncrementalFactorsEqualFreshOnesG1'
long_runs+='|IncrementalSolveAnswersAsFreshG1'
# Twenty-eighth session: the classic VecEnv's thread-count bit check (8 s under ASan; the robot envs'
# one is left out above; multi-threaded VecEnv steps still run here in test_vec_env and test_executor).
long_runs+='|VecEnv.ResultsDoNotDependOnThreadCount'
# Twenty-ninth session: the lanes' bit checks on many states (38 s under ASan: each case steps eight
# robots to the floor first); their code runs here in SlotStep.ControlStepInLanesIsEachEnvsSlotPhysicsStep
# (rows, solve, lanes, the last substep's forces and sensors), the line-search test and the batch's.
long_runs+='|SlotNewton.EachLaneIsItsEnvSolvedAlone|SlotNewton.LandsWhereNewtonSolveLands'
long_runs+='|SlotRowsTest.EachLaneHoldsItsEnvsRowsInOrder|SlotStep.LanesStepEachEnvAsItsFloatStepDoes'
# Twenty-fifth session: the shipped Go1 policy's 16 episodes (its subject is the walking, not memory;
# the eval path runs here in CliEvalTracking's and CliExport's shorter runs).
long_runs+='|CliEvalTracking.ShippedGo1PolicyStillWalks'
# Twenty-third session (the tests' own code at -O0 here, RLTRAIN_TEST_OPT; CI at 30.8 min): five more
# numeric sweeps, 6-15 s each under ASan, whose siblings run here (the Humanoid's and Ant's stopping
# and improvement tests, GemmTwin's error bound, Precision's bit patterns, IndexPermutation's bijection).
long_runs+='|StopsOnMuJoCosTestElliptic|ImprovementIsTheCostDecreaseElliptic|GemmTwin.IsTheFp32GemmOfTheRoundedInputs'
long_runs+='|Precision.SweepAgainstIndependentReferences|IndexPermutation.TheTableWalkIsTheSameMap'
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -L 'cpu|fuzz' -LE 'learning|peer|viewer|gpu|mpi' -E "$long_runs"
# Under mpirun: Open MPI itself leaks at MPI_Finalize (its plugins' buffers, allocated in libraries
# dlclose'd by then), so LeakSanitizer is off for these; ASan's other checks and UBSan stay on. The
# two longest (a bench and a training to its target, 10 and 8 s under ASan) run in the Release ctest.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -L mpi -LE gpu \
  -E 'Mpi.BenchReportsSamplesPerRankAndAllreduceTime|Mpi.CartPoleReachesTargetWithTwoProcesses'
