// The zod schemas the client-library checks ask for, shared by the Node tests and the
// page (test/browser/page-client.ts), so every front door is held to the same schema.
import { z } from 'zod';

export const Person = z.object({ name: z.string().max(12), age: z.number().int().min(0).max(120), tags: z.array(z.enum(['a', 'b'])).max(3) });
export const Weather = z.object({ city: z.string().max(16), unit: z.enum(['c', 'f']) });
