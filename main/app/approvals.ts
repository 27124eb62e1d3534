/**
 * The desktop's permission questions (P3): a queue the runs ask through and the window answers.
 * The desktop's composition makes one and hands it to the app as its prompter.
 */
export { ApprovalQueue, type ApprovalPort } from '../permissions/approval-queue.js';
