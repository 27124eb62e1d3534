// Imported first by main.tsx: zod decides at schema creation whether to compile parsers with
// `new Function`, and the page's CSP forbids eval (the attempt alone is a CSP violation).
import { z } from 'zod';

z.config({ jitless: true });
