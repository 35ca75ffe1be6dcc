/**
 * The headers of the HTTP surface's JSON answers: the app's (errors.ts `jsonResponse`) and those
 * the start gate gives before the app has loaded (start-gate.ts), which must not differ. A module
 * of its own: the gate is on the bind path, which loads neither srvx nor the app.
 */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  'x-content-type-options': 'nosniff',
}
