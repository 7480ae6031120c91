/* Gatehouse app verification for the stock Firebase JS SDK, outside emulator mode
   (docs/clients.md "Web, in production"). An ES module a web app imports from its Gatehouse:

     import { GatehouseVerifier, installGatehouseRecaptcha } from 'https://auth.example.com/__/auth/static/verifier.js';
     const verifier = new GatehouseVerifier(auth);                 // phone sign-in, linking, MFA
     await signInWithPhoneNumber(auth, '+33612345678', verifier);
     installGatehouseRecaptcha(auth);                              // email links (sendSignInLinkToEmail)

   GatehouseVerifier is what the SDK checks of an application verifier (type 'recaptcha', verify()
   resolving to a string, _reset()): verify() solves a Gatehouse proof of work in Web Workers and
   redeems it for a single-use app token, which the SDK sends as `recaptchaToken`.
   installGatehouseRecaptcha gives the SDK's reCAPTCHA Enterprise path (taken for email links once
   Gatehouse answers MISSING_RECAPTCHA_TOKEN) a `grecaptcha.enterprise` whose execute() resolves
   to such a token, sent as `captchaResp`; no Google script is loaded.
   The Gatehouse origin is this module's own; the API key is the app's (`auth.config.apiKey`). */

const ORIGIN = new URL(import.meta.url).origin;
const MAX_WORKERS = 4;

/* Errors carry the SDK's codes, so an app's usual handling covers them: `auth/network-request-failed`
   for a request that did not get through (a refused origin too), the server's code in the SDK's
   form otherwise (`TOO_MANY_ATTEMPTS_TRY_LATER` → `auth/too-many-requests`, other codes
   lower-cased with hyphens, as the SDK maps codes it does not know). */
const KNOWN = { TOO_MANY_ATTEMPTS_TRY_LATER: 'too-many-requests', NETWORK: 'network-request-failed' };
function failure(message, code) {
  const e = new Error(message);
  const c = String(code || message);
  e.code = 'auth/' + (KNOWN[c] || c.toLowerCase().replace(/_/g, '-'));
  return e;
}

async function fetchJSON(url, init) {
  let r;
  try {
    r = await fetch(url, Object.assign({ cache: 'no-store', credentials: 'omit' }, init || {}));
  } catch (e) {
    throw failure('network request failed', 'NETWORK');
  }
  const body = await r.json().catch(() => ({}));
  if (r.ok) return body;
  const message = (body && body.error && body.error.message) || ('HTTP ' + r.status);
  throw failure(message, message.split(':')[0].trim());
}

/* The solver runs the hosted pages' own worker (pow-worker.js), loaded as text and started from
   a blob: a worker script must be same-origin with the page, and this page is the app's. */
let workerURL;
async function workerSource(origin) {
  if (!workerURL) {
    const r = await fetch(origin + '/__/auth/static/pow-worker.js', { credentials: 'omit' });
    if (!r.ok) throw failure('worker unavailable', 'UNSUPPORTED');
    workerURL = URL.createObjectURL(new Blob([await r.text()], { type: 'text/javascript' }));
  }
  return workerURL;
}

function hexBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

/* The same search on this thread, where workers cannot start (a CSP without blob: workers). */
async function solveHere(c) {
  const target = hexBytes(c.challenge), encoder = new TextEncoder(), max = c.maxnumber || 1000000;
  for (let n = 0; n <= max; n += 256) {
    const numbers = [], digests = [];
    for (let k = n; k < n + 256 && k <= max; k++) {
      numbers.push(k);
      digests.push(crypto.subtle.digest('SHA-256', encoder.encode(c.salt + k)));
    }
    const results = await Promise.all(digests);
    for (let j = 0; j < results.length; j++) {
      const d = new Uint8Array(results[j]);
      if (d.length === target.length && d.every((b, i) => b === target[i])) return numbers[j];
    }
  }
  throw failure('no solution found', 'UNSOLVED');
}

async function solve(c, origin) {
  let url;
  try { url = await workerSource(origin); } catch (e) { return solveHere(c); }
  const count = Math.max(1, Math.min(MAX_WORKERS, navigator.hardwareConcurrency || 2));
  const max = c.maxnumber || 1000000;
  return new Promise((resolve, reject) => {
    const workers = [];
    let exhausted = 0, settled = false;
    const settle = (fn, v) => { if (!settled) { settled = true; workers.forEach(w => w.terminate()); fn(v); } };
    const fallback = () => { if (!settled) { settled = true; workers.forEach(w => w.terminate()); solveHere(c).then(resolve, reject); } };
    for (let i = 0; i < count; i++) {
      let w;
      try { w = new Worker(url); } catch (e) { fallback(); return; }
      w.onmessage = (event) => {
        const m = event.data || {};
        if (m.number !== undefined) settle(resolve, m.number);
        else if (m.exhausted && ++exhausted === count) settle(reject, failure('no solution found', 'UNSOLVED'));
        else if (m.error) fallback();
      };
      w.onerror = (event) => { if (event && event.preventDefault) event.preventDefault(); fallback(); };
      workers.push(w);
      w.postMessage({ challenge: c.challenge, salt: c.salt, max: max, start: i, step: count });
    }
  });
}

/** A single-use Gatehouse app token for `apiKey` (bound to it, to the project and to app 'web'). */
export async function appToken({ apiKey, origin = ORIGIN } = {}) {
  const query = apiKey ? '?apiKey=' + encodeURIComponent(apiKey) : '';
  const c = await fetchJSON(origin + '/__/auth/challenge' + query);
  if (c.provider) throw failure('this project verifies apps with ' + c.provider + ', not the proof of work', 'UNSUPPORTED');
  const number = await solve(c, origin);
  const payload = btoa(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number, salt: c.salt, signature: c.signature }));
  const r = await fetchJSON(origin + '/__/auth/challenge' + query, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ payload, apiKey })
  });
  return r.token;
}

function apiKeyOf(auth, options) {
  return (options && options.apiKey) || (auth && auth.config && auth.config.apiKey) || (auth && auth.app && auth.app.options.apiKey);
}

/** An application verifier for signInWithPhoneNumber, linkWithPhoneNumber,
    reauthenticateWithPhoneNumber and PhoneAuthProvider.verifyPhoneNumber (MFA enrolment and sign-in). */
export class GatehouseVerifier {
  constructor(auth, options = {}) {
    this.type = 'recaptcha';
    this._auth = auth;
    this._options = options;
  }
  verify() { return appToken({ apiKey: apiKeyOf(this._auth, this._options), origin: this._options.origin || ORIGIN }); }
  render() { return Promise.resolve(0); }
  clear() {}
  _reset() {}
}

/** Serves the SDK's reCAPTCHA Enterprise calls with Gatehouse app tokens (email links). */
export function installGatehouseRecaptcha(auth, options = {}) {
  const g = window.grecaptcha || (window.grecaptcha = {});
  g.enterprise = {
    ready(callback) { callback(); },
    execute() { return appToken({ apiKey: apiKeyOf(auth, options), origin: options.origin || ORIGIN }); }
  };
}
