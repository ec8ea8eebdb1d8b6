// Code that uses every export of Hearth, type-checked with moduleResolution bundler and nodenext.
import { createRouter, createRuntime } from 'hearth';
import { hearthHandlers, type HearthHandlersOptions } from 'hearth/msw';
import { serve } from 'hearth/node';
import { startHearth, type Hearth } from 'hearth/browser';
import { hearth, type HearthViteOptions } from 'hearth/vite';
import type { Plugin } from 'vite';

export async function inTests(options: HearthHandlersOptions): Promise<number> {
  const handlers = await hearthHandlers(options);
  await handlers.close();
  return handlers.length;
}

export async function asServer(): Promise<string> {
  const server = await serve({ port: 0, models: ['svc/tiny-chat'] });
  await server.close();
  return server.url;
}

export async function inPage(): Promise<Hearth['models']> {
  const h: Hearth = await startHearth({ device: 'wasm' });
  return h.models;
}

export const plugin: Plugin = hearth({ models: ['svc/tiny-chat'] } satisfies HearthViteOptions);
export const core = { createRouter, createRuntime };
