// The fetch-level router: (Request) => Promise<Response>, shared by every front
// door (node server, MSW handlers, the in-page service worker). Only Web APIs
// here, so the same code runs in Node and in a browser.
import { Hono, type Handler, type MiddlewareHandler } from 'hono';
import type { Runtime, RouterOptions } from '../types.js';
import { checkContentLength, DEFAULT_MAX_BODY_BYTES } from './body.js';
import { type ApiEnv, type Ctx, type RouteDeps, requireAccess } from './context.js';
import { ApiError, describeFault, errorToResponse, jsonResponse } from './errors.js';
import { requestIdFrom } from './ids.js';
import { IncidentLog } from './incidents.js';
import { requestLimits } from './limits.js';
import { chatCompletions } from './routes/chat-completions.js';
import { responses } from './routes/responses.js';
import { messages } from './routes/messages.js';
import { countTokens } from './routes/count-tokens.js';
import { anthropicErrors } from './messages/errors.js';
import { isAnthropicClient, MESSAGES_PATH } from './messages/client.js';
import { imageAllowance } from './images.js';
import { deleteResponse, getResponse, listInputItems } from './routes/stored-responses.js';
import { completions } from './routes/completions.js';
import { embeddings } from './routes/embeddings.js';
import { generate } from './routes/generate.js';
import { health } from './routes/health.js';
import { getModel, listModels } from './routes/models.js';
import { statusPage } from './routes/status.js';
import { addModel, listAdminModels, modelAction, removeModel } from './routes/admin.js';
import { metrics } from './routes/metrics.js';
import { tokenize } from './routes/tokenize.js';
import { detokenize } from './routes/detokenize.js';
import { rerank } from './routes/rerank.js';
import { score } from './routes/score.js';
import { upstreamOr } from './routes/upstream.js';
import { transcriptions, translations } from './routes/audio.js';
import { checkAudioLength } from './audio/form.js';

export type Router = Hono<ApiEnv>;

// The openai SDK sends x-stainless-* and openai-* headers; a preflight names
// them and is answered with exactly what it asked for. This list is the answer
// when a preflight names none.
const DEFAULT_ALLOW_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'x-request-id',
  'openai-organization',
  'openai-project',
  'openai-beta',
  'x-stainless-lang',
  'x-stainless-package-version',
  'x-stainless-os',
  'x-stainless-arch',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-retry-count',
  'x-stainless-timeout',
  'x-stainless-helper-method',
  // Anthropic's SDKs: the key, the API version and betas, and the SDK's browser opt-in.
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
].join(', ');

const EXPOSE_HEADERS = [
  'x-request-id',
  'request-id',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'retry-after',
  'x-should-retry',
].join(', ');

const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/** Sets headers even on a Response whose headers are immutable (one from fetch()). */
function withHeaders(c: Ctx, headers: Record<string, string>): void {
  try {
    for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
  } catch {
    const res = new Response(c.res.body, c.res);
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    c.res = res;
  }
}

function normaliseBase(p: string | undefined): string {
  const s = (p ?? '/v1').trim();
  if (s === '' || s === '/') return '';
  return ('/' + s.replace(/^\/+|\/+$/g, '')).replace(/\/{2,}/g, '/');
}

export function createRouter(runtime: Runtime, options: RouterOptions = {}): Router {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const base = normaliseBase(options.basePath);
  const deps: RouteDeps = { runtime, maxBodyBytes, limits: requestLimits(options), ...(options.decodeAudio ? { decodeAudio: options.decodeAudio } : {}) };
  const incidents = new IncidentLog();
  const since = Date.now();
  const app = new Hono<ApiEnv>();

  // A 500 answers the client with its request id only; the fault itself goes to the request log.
  const answerError = (c: Ctx, err: unknown): Response => {
    const res = errorToResponse(err, c.get('requestId'));
    if (res.status === 500) c.set('fault', err);
    return res;
  };

  // Hono's onError only sees Error instances; an engine error that crossed the
  // worker boundary may be a plain object. Every route goes through this.
  const guard =
    (h: (c: Ctx) => Promise<Response>): Handler<ApiEnv> =>
    async (c) => {
      try {
        return await h(c);
      } catch (err) {
        return answerError(c, err);
      }
    };

  app.use('*', async (c, next) => {
    const requestId = requestIdFrom(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    const started = Date.now();
    await next();
    withHeaders(c, { 'x-request-id': requestId });
    // Hono answers HEAD with `new Response(null, res)` of the GET answer, and
    // @hono/node-server's Response copies there the headers it was made with, not those set
    // on it since (this id, CORS): a fresh one made with them all carries them. (Its
    // headers are read first: reading anything else first drops what was set.)
    if (c.req.method === 'HEAD') {
      const headers = new Headers(c.res.headers);
      c.res = new Response(null, { status: c.res.status, headers });
    }
    if (runtime.observer) {
      const route = c.req.routePath && c.req.routePath !== '*' && c.req.routePath !== '/*' ? c.req.routePath : 'unmatched';
      try {
        const fault = c.get('fault');
        const error = fault === undefined ? undefined : describeFault(fault);
        runtime.observer.request({ requestId, method: c.req.method, route, status: c.res.status, durationMs: Date.now() - started, error });
      } catch {
        // metrics and logs must never break a response
      }
    }
    if (c.res.status >= 500 && c.res.status !== 503) {
      incidents.add({ at: new Date().toISOString(), requestId, method: c.req.method, path: c.req.path, status: c.res.status });
    }
  });

  // TRACE echoes a request back (its Authorization header included) and CONNECT asks for a
  // tunnel: neither is served on any path.
  app.use('*', async (c, next) => {
    const method = c.req.method.toUpperCase();
    if (method !== 'TRACE' && method !== 'CONNECT') return next();
    const message = `Method ${method} is not allowed on ${c.req.path}; this API serves GET, POST, DELETE and OPTIONS.`;
    return errorToResponse(
      new ApiError(405, 'invalid_request_error', 'method_not_allowed', message, null, { allow: 'GET, POST, DELETE, OPTIONS' }),
      c.get('requestId'),
    );
  });

  app.use('*', async (c, next) => {
    if (c.req.method === 'OPTIONS') {
      const asked = c.req.header('access-control-request-headers');
      return new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
          'access-control-allow-headers': asked && HEADER_LIST.test(asked.trim()) ? asked.trim() : DEFAULT_ALLOW_HEADERS,
          'access-control-expose-headers': EXPOSE_HEADERS,
          'access-control-max-age': '86400',
          vary: 'Access-Control-Request-Headers',
        },
      });
    }
    await next();
    withHeaders(c, { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSE_HEADERS });
  });

  // A declared oversize body is refused before anything else reads it; bodies
  // without (or lying about) a length are capped while being read.
  // Routes that take images may read their data: URLs besides (images.ts).
  const imageRoutes = new Set([`${base}/chat/completions`, `${base}/responses`, '/v1/messages', '/v1/messages/count_tokens', '/tokenize']);
  const withImages = maxBodyBytes + imageAllowance(deps.limits);
  // The audio routes' bodies are bounded by --max-audio-bytes (plus the body limit for the form's other fields).
  const audioRoutes = new Set([`${base}/audio/transcriptions`, `${base}/audio/translations`]);
  const sizeGate: MiddlewareHandler<ApiEnv> = async (c, next) => {
    try {
      if (audioRoutes.has(c.req.path)) checkAudioLength(c.req.raw, deps);
      else checkContentLength(c.req.raw, imageRoutes.has(c.req.path) ? withImages : maxBodyBytes);
    } catch (err) {
      return errorToResponse(err, c.get('requestId'));
    }
    await next();
  };
  // Anthropic's routes answer errors in Anthropic's envelope, the size gate's and key gate's too.
  const models = base + '/models';
  app.use(
    '*',
    anthropicErrors((c) => MESSAGES_PATH.test(c.req.path) || (isAnthropicClient(c.req) && (c.req.path === models || c.req.path.startsWith(models + '/')))),
  );
  app.use('*', sizeGate);

  const keyed = requireAccess(runtime);
  const known: [string, string[]][] = [];
  const route = (method: 'GET' | 'POST' | 'DELETE', path: string, h: (c: Ctx) => Promise<Response>, needsKey = true) => {
    const entry = known.find(([p]) => p === path);
    if (entry) entry[1].push(method);
    else known.push([path, [method]]);
    if (needsKey) app.on(method, path, keyed, guard(h));
    else app.on(method, path, guard(h));
  };

  route('GET', '/health', health(deps), false);
  route('GET', '/status', statusPage(deps, incidents, since), false);
  route('GET', `${base}/models`, listModels(deps));
  route('GET', `${base}/models/:id{.+}`, getModel(deps));
  route('POST', `${base}/chat/completions`, upstreamOr(deps, 'chat', chatCompletions(deps)));
  route('POST', `${base}/completions`, upstreamOr(deps, 'completion', completions(deps)));
  route('POST', `${base}/responses`, responses(deps));
  // Anthropic's SDKs post to the origin's /v1/messages whatever the OpenAI base path is.
  route('POST', '/v1/messages', messages(deps));
  route('POST', '/v1/messages/count_tokens', countTokens(deps));
  route('GET', `${base}/responses/:id/input_items`, listInputItems(deps));
  route('GET', `${base}/responses/:id`, getResponse(deps));
  route('DELETE', `${base}/responses/:id`, deleteResponse(deps));
  route('POST', `${base}/embeddings`, upstreamOr(deps, 'embedding', embeddings(deps)));
  route('POST', '/generate', upstreamOr(deps, 'generate', generate(deps)));
  route('POST', '/tokenize', tokenize(deps));
  route('POST', '/detokenize', detokenize(deps));
  route('POST', `${base}/rerank`, rerank(deps));
  if (base !== '') route('POST', '/rerank', rerank(deps));
  if (base !== '/v2') route('POST', '/v2/rerank', rerank(deps, 'cohere-v2'));
  route('POST', `${base}/score`, score(deps));
  route('POST', `${base}/audio/transcriptions`, transcriptions(deps));
  route('POST', `${base}/audio/translations`, translations(deps));
  route('GET', '/metrics', metrics(deps), false);
  route('GET', '/admin/models', listAdminModels(deps));
  route('POST', '/admin/models', addModel(deps));
  route('POST', '/admin/models/:id{.+}', modelAction(deps)); // .../{id}/redeploy, /load, /unload
  route('DELETE', '/admin/models/:id{.+}', removeModel(deps));

  // A known path with the wrong method: an envelope, never Hono's bare text.
  for (const [path, methods] of known) {
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    app.all(path, (c) =>
      errorToResponse(
        new ApiError(
          405,
          'invalid_request_error',
          'method_not_allowed',
          `Method ${c.req.method} is not allowed on ${c.req.path}; use ${methods.join(' or ')}.`,
          null,
          { allow },
        ),
        c.get('requestId'),
      ),
    );
  }

  app.notFound((c) =>
    jsonResponse(
      {
        error: {
          message: `Unknown request URL: ${c.req.method} ${c.req.path}. Please check the URL for typos.`,
          type: 'invalid_request_error',
          param: null,
          code: 'unknown_url',
        },
      },
      404,
    ),
  );

  app.onError((err, c) => answerError(c as Ctx, err));
  return app;
}
