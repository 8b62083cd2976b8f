#!/usr/bin/env bash
# Installs what rltrain needs on Debian 12 (run as root), only what is missing.
#   tools/setup.sh          build dependencies (with the viewer's: GLFW, Dear ImGui, OpenGL, stb)
#   tools/setup.sh --test   plus the test peers: GoogleTest, MuJoCo 2.2.2 (libmujoco-dev: the MJCF
#                           and physics tests compare against it), xvfb, xauth and Mesa (the viewer
#                           tests render under xvfb-run on llvmpipe), ffmpeg (rltrain view --video),
#                           and the Python packages the peer tests compare against (gymnasium
#                           with its MuJoCo envs, safetensors; they skip when absent)
set -euo pipefail
want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1

pkgs=(build-essential cmake pkg-config libeigen3-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libtinyxml2-dev
      libglfw3-dev libimgui-dev libgl-dev libstb-dev)
(( want_tests )) && pkgs+=(libgtest-dev python3 python3-pip libmujoco-dev libqhull-dev xvfb xauth libgl1-mesa-dri ffmpeg)

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
  peers=("gymnasium[mujoco]" safetensors numpy)
  if ! python3 -c "import gymnasium, safetensors, numpy, mujoco, imageio, packaging" 2>/dev/null; then
    echo "setup: installing the Python test peers ${peers[*]}"
    python3 -m pip install -q "${peers[@]}" 2>/dev/null ||
      python3 -m pip install -q --break-system-packages "${peers[@]}" 2>/dev/null ||
      echo "setup: could not install ${peers[*]}; the peer tests will skip"
  fi
fi
echo "setup: ok (nvcc: $(command -v nvcc || echo 'not found, CPU-only build'))"
