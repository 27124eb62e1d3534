/**
 * The `ward` program says a turn is starting before it loads anything else of the turn (issue
 * 28): the audit sender holds its batches from then on, not only from the app's start a few
 * hundred milliseconds later.
 */
export { announceTurn } from '../audit/turn-announce.js';
