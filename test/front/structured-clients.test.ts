// Structured outputs and tool calls through hearth/msw with the Vercel AI SDK and
// LangChain; the checks themselves live in test/helpers/structured-clients.ts.
import { useHearthMsw } from '../helpers/msw.js';
import { describeStructuredClients } from '../helpers/structured-clients.js';

const baseURL = 'https://api.example.test/v1';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
useHearthMsw(baseURL);

describeStructuredClients('hearth/msw', () => ({ baseURL, apiKey }));
