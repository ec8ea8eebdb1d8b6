// Whether onnxruntime-node's WebGPU provider finds a GPU adapter, asked before serving on it:
// without one every model would fail to load while the server ran on. The probe opens a
// one-node graph in a child process, because Dawn writes its Vulkan loader's complaints
// (and a native backtrace line) straight to the process's stderr, which would bury the
// one line the user should read.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { GraphBuilder } from '../onnx/graph.js';
import { TensorType } from '../onnx/proto.js';

const PROBE = `
const ort = require(process.argv[1]);
ort.InferenceSession.create(Buffer.from(process.argv[2], 'base64'), { executionProviders: ['webgpu'], logSeverityLevel: 4 })
  .then(() => process.exit(0), (e) => { process.stdout.write(String((e && e.message) || e)); process.exit(3); });
`;

function identityGraph(): Uint8Array {
  const g = new GraphBuilder('probe');
  g.output('y', g.node('Identity', [g.input('x', TensorType.FLOAT, [1])]), TensorType.FLOAT, [1]);
  return g.toBytes();
}

/** onnxruntime's reason without its source location ("…was false. Failed to get a WebGPU adapter: No supported adapters"). */
function reasonOf(message: string): string {
  const text = message.trim().replace(/\s+/g, ' ');
  return text.match(/(Failed to get a WebGPU adapter[^.]*)/)?.[1] ?? text.split(' was false. ').pop()!;
}

/** Undefined when WebGPU starts in Node; else one line saying that no adapter was found and what WebGPU needs here. */
export async function webgpuAdapterProblem(timeoutMs = 60_000): Promise<string | undefined> {
  const binding = createRequire(import.meta.url).resolve('onnxruntime-node');
  const graph = Buffer.from(identityGraph()).toString('base64');
  const outcome = await new Promise<{ code: number | null; out: string; failed?: string }>((resolve) => {
    execFile(process.execPath, ['-e', PROBE, binding, graph], { timeout: timeoutMs }, (err, stdout) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, out: stdout, failed: err && code === null ? (err.signal ? `it ended on ${err.signal}` : err.message) : undefined });
    });
  });
  if (outcome.code === 0) return undefined;
  const why = outcome.out ? reasonOf(outcome.out) : (outcome.failed ?? `the probe exited with status ${outcome.code}`);
  return (
    `--device webgpu: onnxruntime-node's WebGPU provider found no usable GPU adapter (${why}). ` +
    "In Node it runs on Vulkan: it needs the Vulkan loader (libvulkan.so.1) and a GPU driver's Vulkan ICD (VK_ICD_FILENAMES; see docs/gpu.md). Or use --device cpu."
  );
}
