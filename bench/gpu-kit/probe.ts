// Prints `ok` and exits 0 when onnxruntime-node's WebGPU provider finds an adapter under the
// current environment (VK_ICD_FILENAMES, …); else prints why and exits 1. run.sh tries each
// Vulkan set-up with it.
import { webgpuAdapterProblem } from '../../src/backends/node-webgpu-probe.js';

const problem = await webgpuAdapterProblem(30_000);
console.log(problem ?? 'ok');
process.exit(problem ? 1 : 0);
