// XGrammar's package is a UMD script flagged as ESM, which Node's ESM loader cannot
// run (it calls `require` and reads `__filename`); here it is compiled as the
// CommonJS module it really is.
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import type * as XGrammarModule from '@mlc-ai/web-xgrammar';

type XGrammar = typeof XGrammarModule;

export async function loadXGrammarInNode(): Promise<XGrammar> {
  const file = createRequire(import.meta.url).resolve('@mlc-ai/web-xgrammar');
  const cjs = new Module(file) as Module & { _compile(code: string, file: string): void; filename: string; paths: string[] };
  cjs.filename = file;
  cjs.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(file);
  cjs._compile(readFileSync(file, 'utf8'), file);
  return cjs.exports as XGrammar;
}
