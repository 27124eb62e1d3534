/**
 * Loaded by `ward` before a command's code, so before any schema exists: zod validates without compiling
 * a specialised parser per object schema. Each compile (generated source, then `new Function`)
 * pays off over thousands of parses in the long-lived desktop; a `ward` command parses each schema
 * a few times, and a `ward run` made 32 of them, ~10 ms, half before its spawn (issue 29).
 * The setting is read as each schema is made, so this module must be evaluated before any.
 */
import { config } from 'zod';

config({ jitless: true });
