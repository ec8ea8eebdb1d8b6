#!/usr/bin/env bash
# bash bench/gpu-kit/run.sh [--quick] [more bench/device.ts arguments]   (or --setup-only: steps 1-3 alone)
# On the device machine (bare: no Node, no npm, no network), from the repository root of the
# working tree that travelled there with .gpu-kit carried (bench/gpu-kit/pack.sh made it here):
#   1. unpacks Node 24 into /tmp/hearth-gpu-kit/bin and the kit's node_modules into ./node_modules
#      (an existing node_modules that is not the kit's is used as it is);
#   2. installs the Vulkan loader from .gpu-kit/debs when the image has none (dpkg -x, as root);
#   3. finds a Vulkan set-up under which onnxruntime-node's WebGPU provider sees a GPU: the
#      caller's VK_ICD_FILENAMES / VK_DRIVER_FILES if set, else on NVIDIA a manifest naming
#      libEGL_nvidia.so.0 (docs/gpu.md: the driver's own names libGLX_nvidia.so.0, which answers
#      nothing headless), else the driver's manifests under /usr/local/nvidia (device README),
#      else the loader's defaults;
#   4. runs the GPU bench (bench/device.ts) and writes bench/results-gpu.json (--quick:
#      bench/results-gpu-quick.json); with $OUT set (the device tool), copies it there with
#      bench-device.log and gpu-setup.txt.
# Exit status: the bench's (0 when the file was written, whatever each section gave).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KIT=${HEARTH_GPU_KIT:-$ROOT/.gpu-kit}
TOOLS=${HEARTH_GPU_TOOLS:-/tmp/hearth-gpu-kit}
OUTDIR=${OUT:-}
SETUP=$(mktemp)
log() { echo "[gpu-kit] $*" | tee -a "$SETUP"; }
t0=$(date +%s)

if [ ! -s "$KIT/node.xz" ] || [ ! -s "$KIT/node_modules.tar.xz" ]; then
  echo "[gpu-kit] no kit in $KIT: run bench/gpu-kit/pack.sh where node_modules is installed, and carry .gpu-kit" >&2
  exit 2
fi
unxz_to() { # unxz_to FILE.xz DEST (python3's lzma where xz is missing)
  if command -v xz >/dev/null; then xz -dc "$1" > "$2"; else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"; fi
}

# 1. Node and node_modules.
mkdir -p "$TOOLS/bin"
if [ "$(cat "$TOOLS/node.stamp" 2>/dev/null)" != "$(cat "$KIT/node.stamp")" ] || [ ! -x "$TOOLS/bin/node" ]; then
  unxz_to "$KIT/node.xz" "$TOOLS/bin/node.part" && chmod +x "$TOOLS/bin/node.part" && mv "$TOOLS/bin/node.part" "$TOOLS/bin/node" || { log "could not unpack Node"; exit 2; }
  cp "$KIT/node.stamp" "$TOOLS/node.stamp"
fi
export PATH="$TOOLS/bin:$PATH"
if [ -d node_modules ] && [ ! -f node_modules/.gpu-kit.stamp ]; then
  log "node_modules is there and is not the kit's: using it as it is"
elif [ "$(cat node_modules/.gpu-kit.stamp 2>/dev/null)" != "$(cat "$KIT/node_modules.stamp")" ]; then
  rm -rf node_modules
  unxz_to "$KIT/node_modules.tar.xz" "$TOOLS/node_modules.tar" && tar -xf "$TOOLS/node_modules.tar" -C "$ROOT" || { log "could not unpack node_modules"; exit 2; }
  rm -f "$TOOLS/node_modules.tar"
  cp "$KIT/node_modules.stamp" node_modules/.gpu-kit.stamp
fi
log "node $(node -v) at $(command -v node); kit unpacked in $(($(date +%s) - t0)) s"

# 2. The Vulkan loader.
has_vulkan() { ldconfig -p 2>/dev/null | grep 'libvulkan\.so\.1' >/dev/null; } # (grep -q under pipefail: SIGPIPE)
if ! has_vulkan; then
  if [ "$(id -u)" = 0 ] && ls "$KIT"/debs/*.deb >/dev/null 2>&1; then
    for f in "$KIT"/debs/*.deb; do dpkg -x "$f" / || log "dpkg -x $f failed"; done
    ldconfig
    if has_vulkan; then log "installed the loaders from $KIT/debs: $(ls "$KIT"/debs | tr '\n' ' ')"; else log "the loaders from $KIT/debs did not install"; fi
  else
    log "no Vulkan loader (libvulkan.so.1) and none to install: WebGPU sections will record the error"
  fi
fi

# 3. A Vulkan set-up under which WebGPU finds an adapter.
probe() { node node_modules/tsx/dist/cli.mjs bench/gpu-kit/probe.ts 2>/dev/null | tail -1; }
nvidia_lib() { # the path of an NVIDIA library, by name (the loader's cache first, then the driver's folders)
  ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n && !found { print $NF; found = 1 }' | grep . ||
    find /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib -maxdepth 3 -name "$1" 2>/dev/null | head -1
}
chosen=""
if [ -n "${VK_ICD_FILENAMES:-}${VK_DRIVER_FILES:-}" ]; then
  r=$(probe); log "the caller's VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-} VK_DRIVER_FILES=${VK_DRIVER_FILES:-}: $r"
  chosen="caller's"
else
  try() { # try LABEL VAR=VALUE…: keeps the environment when the probe says ok
    local label=$1; shift
    local r; r=$(env "$@" bash -c "$(declare -f probe); probe")
    log "WebGPU with $label: $r"
    if [ "$r" = ok ]; then for kv in "$@"; do export "${kv?}"; done; chosen=$label; return 0; fi
    return 1
  }
  if [ -e /dev/nvidiactl ] || command -v nvidia-smi >/dev/null; then
    egl=$(nvidia_lib libEGL_nvidia.so.0)
    if [ -n "$egl" ]; then
      echo "{\"file_format_version\":\"1.0.1\",\"ICD\":{\"library_path\":\"$egl\",\"api_version\":\"1.4.312\"}}" > /tmp/nvidia_egl_icd.json
      # Its own folder on the library path too, for the driver libraries it loads.
      libs=LD_LIBRARY_PATH=$(dirname "$egl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      try "a manifest naming $egl" VK_ICD_FILENAMES=/tmp/nvidia_egl_icd.json "$libs" ||
        { [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && try "$egl and NVIDIA's EGL vendor file" VK_ICD_FILENAMES=/tmp/nvidia_egl_icd.json "$libs" __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; } || true
    else
      log "no libEGL_nvidia.so.0 found"
    fi
    if [ -z "$chosen" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
      try "the driver's manifest" VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json || true
    fi
  fi
  [ -n "$chosen" ] || try "the loader's defaults" HEARTH_GPU_KIT_DEFAULTS=1 || log "no Vulkan set-up gave an adapter: the WebGPU sections will record why"
fi
{
  echo "--- set-up: ${chosen:-none}; VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-} VK_DRIVER_FILES=${VK_DRIVER_FILES:-} __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  [ -f /tmp/nvidia_egl_icd.json ] && echo "--- /tmp/nvidia_egl_icd.json: $(cat /tmp/nvidia_egl_icd.json)"
  echo "--- uname: $(uname -a); cores: $(nproc)"
  command -v nvidia-smi >/dev/null && nvidia-smi -L && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  echo "--- loaders:"; ldconfig -p 2>/dev/null | grep -E 'libvulkan|libEGL|nvidia' | head -30
  echo "--- manifests:"; ls /usr/local/nvidia/share/vulkan/icd.d /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null
  echo "--- kit:"; cat "$KIT/MANIFEST" 2>/dev/null
} >> "$SETUP" 2>&1

# 4. The bench.
quick=0
for a in "$@"; do [ "$a" = --quick ] && quick=1; done
if [ "${1:-}" = --setup-only ]; then
  sed -n '/^--- set-up/,$p' "$SETUP"
  if [ -n "$OUTDIR" ]; then mkdir -p "$OUTDIR" && cp "$SETUP" "$OUTDIR/gpu-setup.txt"; fi
  exit 0
fi
RESULT=$ROOT/bench/results-gpu.json
[ "$quick" = 1 ] && RESULT=$ROOT/bench/results-gpu-quick.json
LOG=$(mktemp)
node node_modules/tsx/dist/cli.mjs bench/device.ts --out "$RESULT" "$@" 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
log "bench exited $status after $(($(date +%s) - t0)) s in all; results in $RESULT"
if [ -n "$OUTDIR" ]; then
  mkdir -p "$OUTDIR"
  [ -f "$RESULT" ] && cp "$RESULT" "$OUTDIR/"
  cp "$LOG" "$OUTDIR/bench-device.log"
  cp "$SETUP" "$OUTDIR/gpu-setup.txt"
fi
rm -f "$LOG"
exit "$status"
