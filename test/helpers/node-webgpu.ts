// onnxruntime-node's WebGPU provider without a GPU: Dawn on Vulkan, Vulkan on SwiftShader (a
// CPU implementation), from Debian's libvulkan1 and chromium packages. Importing this sets
// VK_ICD_FILENAMES (unless set already, say to a real GPU's ICD) before any WebGPU session
// exists, which is when Dawn reads it; vitest runs each test file in a process of its own.
import { existsSync } from 'node:fs';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** Where Debian and other distributions put the Vulkan loader. */
const LOADER_DIRS = ['/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib'];

function whyNot(): string | undefined {
  if (process.platform !== 'linux') return 'these WebGPU tests run on Linux (Vulkan)';
  if (!LOADER_DIRS.some((d) => existsSync(`${d}/libvulkan.so.1`))) return 'no Vulkan loader (libvulkan.so.1; Debian: apt-get install libvulkan1)';
  const icd = process.env.VK_ICD_FILENAMES ?? SWIFTSHADER_ICD;
  if (!existsSync(icd)) return `no Vulkan driver at ${icd} (SwiftShader comes with Debian's chromium package)`;
  process.env.VK_ICD_FILENAMES = icd;
  return undefined;
}

/** Why onnxruntime-node's WebGPU cannot run here (printed once), or undefined when it can. */
export const NODE_WEBGPU_SKIP = whyNot();
if (NODE_WEBGPU_SKIP) console.warn(`Skipping onnxruntime-node WebGPU tests: ${NODE_WEBGPU_SKIP}`);
