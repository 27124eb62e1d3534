/** Stand-ins for the person a permission question goes to. */
import type { PromptAnswer, PromptQuestion, Prompter } from '../../main/permissions/prompter.js';

/** Answers from a script (deny once it runs out) and remembers every question, so tests can count them. */
export function scriptedPerson(...answers: PromptAnswer[]): Prompter & { questions: PromptQuestion[] } {
  const questions: PromptQuestion[] = [];
  return {
    interactive: true,
    questions,
    ask(question) {
      questions.push(question);
      return Promise.resolve(answers.shift() ?? 'deny');
    },
  };
}

/** Someone who never answers: the question times out. */
export const silentPerson: Prompter = { interactive: true, ask: () => new Promise(() => undefined) };
