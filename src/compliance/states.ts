/**
 * The compliance state machines as data: for each workflow, which move leads from which state to
 * which. Every move goes through `nextState`, which refuses an illegal one with
 * STATE_TRANSITION_INVALID (409) naming the current state and the moves it allows.
 */
import { SvcError } from '../platform/errors.ts';

export const GRIEVANCE_STATES = ['submitted', 'under_review', 'resolved', 'rejected'] as const;
export type GrievanceState = (typeof GRIEVANCE_STATES)[number];
export type GrievanceMove = 'review' | 'uphold' | 'decline';

export const APPEAL_STATUSES = ['pending', 'under_review', 'resolved'] as const;
export type AppealStatus = (typeof APPEAL_STATUSES)[number];
export type AppealMove = 'review' | 'resolve';

export const UNLEARNING_STATES = ['queued', 'running', 'completed', 'failed'] as const;
export type UnlearningState = (typeof UNLEARNING_STATES)[number];

type Machine<State extends string, Move extends string> = Readonly<Record<State, Partial<Record<Move, State>>>>;

export const GRIEVANCE_MACHINE: Machine<GrievanceState, GrievanceMove> = {
  submitted: { review: 'under_review' },
  under_review: { uphold: 'resolved', decline: 'rejected' },
  resolved: {},
  rejected: {},
};

export const APPEAL_MACHINE: Machine<AppealStatus, AppealMove> = {
  pending: { review: 'under_review' },
  under_review: { resolve: 'resolved' },
  resolved: {},
};

export function nextState<State extends string, Move extends string>(machine: Machine<State, Move>, resource: string, from: State, move: Move): State {
  const to = machine[from][move];
  if (to === undefined) {
    const allowed = Object.keys(machine[from]);
    throw new SvcError('STATE_TRANSITION_INVALID', {
      message: `A ${resource} in state ${from} cannot be moved by ${move}${allowed.length === 0 ? ' (it is final)' : `; allowed: ${allowed.join(', ')}`}.`,
      details: { resource, state: from, move, allowed_moves: allowed },
    });
  }
  return to;
}
