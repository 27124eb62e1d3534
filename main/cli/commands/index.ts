import type { Command } from '../command.js';
import { agentsCommand } from './agents.js';
import { connectionsCommand } from './connections.js';
import { conversationsCommand } from './conversations.js';
import { doctorCommand } from './doctor.js';
import { loginCommand } from './login.js';
import { logoutCommand } from './logout.js';
import { namespaceCommand } from './namespace.js';
import { permissionsCommand } from './permissions.js';
import { providerCommand } from './provider.js';
import { replayCommand } from './replay.js';
import { reconcileCommand, runCommand } from './run.js';
import { verifyCommand } from './verify.js';
import { whoamiCommand } from './whoami.js';

/** Every `ward` subcommand, in the order `ward help` lists them. */
export const COMMANDS: readonly Command[] = [doctorCommand, runCommand, reconcileCommand, agentsCommand, connectionsCommand, namespaceCommand, conversationsCommand, replayCommand, verifyCommand, permissionsCommand, loginCommand, whoamiCommand, logoutCommand, providerCommand];
