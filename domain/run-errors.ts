import { ErrorKind, KitError } from './errors';

/** PermissionDenied: the caller's scope does not reach what it asked for. */
export const denied = (message: string): KitError => new KitError(ErrorKind.PermissionDenied, message);

/** QuotaExceeded; `details` names the limit (`{ limit, value }`). */
export const quota = (message: string, details?: unknown): KitError =>
  new KitError(ErrorKind.QuotaExceeded, message, details);

/** Closed: the run, the thread or the request takes no more of this. */
export const closed = (message: string, details?: unknown): KitError =>
  new KitError(ErrorKind.Closed, message, details);

/** Conflict: the request clashes with what the run already holds (a request id, a sibling's name). */
export const conflict = (message: string, details?: unknown): KitError =>
  new KitError(ErrorKind.Conflict, message, details);
