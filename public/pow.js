/* Gatehouse app verification in the browser.

   window.GatehousePow.token(opts) → Promise<string>
     Fetches a challenge (GET /__/auth/challenge), solves it in Web Workers (SHA-256 via Web
     Crypto; the main thread if workers are unavailable), redeems it (POST /__/auth/challenge) and
     resolves with the single-use app token. When the project uses an external verifier instead
     (reCAPTCHA, hCaptcha, Turnstile), its widget is rendered into opts.container and its response
     is redeemed the same way (the page's CSP must allow the provider).
     opts: {apiKey?, app?, container?, onProgress?(fraction)}
   window.GatehousePow.run(opts) → Promise<{token, redirect?}>  (opts.params: extra body fields)

   On the app verification page (#verify-app) it runs by itself and returns to the app with the
   redirect URL the server computed. */
(function () {
  'use strict';

  var BASE = '/__/auth/';
  var WORKER_URL = BASE + 'static/pow-worker.js';
  var MAX_WORKERS = 4;
  var WIDGETS = {
    recaptcha: { src: 'https://www.google.com/recaptcha/api.js?render=explicit&onload=', api: 'grecaptcha' },
    hcaptcha: { src: 'https://js.hcaptcha.com/1/api.js?render=explicit&onload=', api: 'hcaptcha' },
    turnstile: { src: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit&onload=', api: 'turnstile' }
  };

  function failure(message, code, extra) {
    var e = new Error(message);
    e.code = code || message;
    if (extra) for (var k in extra) e[k] = extra[k];
    return e;
  }

  /* fetch → JSON; a Firebase-style error envelope becomes an Error with .code and .status. */
  function fetchJSON(url, init) {
    init = init || {};
    init.credentials = 'same-origin';
    init.cache = 'no-store';
    return fetch(url, init).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) {
        if (r.ok) return body;
        var message = (body && body.error && body.error.message) || ('HTTP ' + r.status);
        throw failure(message, message.split(':')[0].trim(), { status: r.status });
      });
    }, function () {
      throw failure('network request failed', 'NETWORK');
    });
  }

  function fetchChallenge(opts) {
    return fetchJSON(BASE + 'challenge' + (opts.apiKey ? '?apiKey=' + encodeURIComponent(opts.apiKey) : ''));
  }

  function redeem(body) {
    return fetchJSON(BASE + 'challenge', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body)
    });
  }

  function hexBytes(hex) {
    var out = new Uint8Array(hex.length / 2);
    for (var i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
    return out;
  }

  function equal(a, b) {
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  function maxNumber(c) { return c.maxnumber || c.maxNumber || 1000000; }

  /* The same search as the worker, on this thread (no Worker support, or it failed to start). */
  function solveHere(c, opts) {
    if (!(window.crypto && window.crypto.subtle && window.TextEncoder)) {
      return Promise.reject(failure('Web Crypto is unavailable', 'UNSUPPORTED', { unsupported: true }));
    }
    var target = hexBytes(c.challenge), encoder = new TextEncoder(), max = maxNumber(c), n = 0, t0 = Date.now();
    return new Promise(function (resolve, reject) {
      function next() {
        var numbers = [], digests = [];
        for (var i = 0; i < 256 && n <= max; i++, n++) {
          numbers.push(n);
          digests.push(window.crypto.subtle.digest('SHA-256', encoder.encode(c.salt + n)));
        }
        if (!numbers.length) { reject(failure('no solution found', 'UNSOLVED')); return; }
        Promise.all(digests).then(function (results) {
          for (var j = 0; j < results.length; j++) {
            if (equal(new Uint8Array(results[j]), target)) { resolve({ number: numbers[j], took: Date.now() - t0 }); return; }
          }
          if (opts.onProgress) opts.onProgress(n / (max + 1));
          next();
        }, reject);
      }
      next();
    });
  }

  /* Splits the range over up to MAX_WORKERS workers (number ≡ i mod workers). */
  function solve(c, opts) {
    opts = opts || {};
    if (typeof Worker === 'undefined') return solveHere(c, opts);
    var count = Math.max(1, Math.min(MAX_WORKERS, navigator.hardwareConcurrency || 2));
    var max = maxNumber(c), t0 = Date.now();
    return new Promise(function (resolve, reject) {
      var workers = [], tried = [], exhausted = 0, settled = false;
      function stop() { workers.forEach(function (w) { w.terminate(); }); }
      function settle(fn, value) { if (!settled) { settled = true; stop(); fn(value); } }
      function fallback() { if (!settled) { settled = true; stop(); solveHere(c, opts).then(resolve, reject); } }
      function listen(i) {
        return function (event) {
          var m = event.data || {};
          if (settled) return;
          if (m.number !== undefined) settle(resolve, { number: m.number, took: Date.now() - t0 });
          else if (m.progress !== undefined) {
            tried[i] = m.progress;
            if (opts.onProgress) opts.onProgress(tried.reduce(function (a, b) { return a + b; }, 0) / (max + 1));
          } else if (m.exhausted && ++exhausted === count) settle(reject, failure('no solution found', 'UNSOLVED'));
          else if (m.error) fallback();
        };
      }
      for (var i = 0; i < count; i++) {
        var w;
        try { w = new Worker(WORKER_URL); } catch (e) { fallback(); return; }
        tried.push(0);
        w.onmessage = listen(i);
        w.onerror = function (event) { if (event && event.preventDefault) event.preventDefault(); fallback(); };
        workers.push(w);
        w.postMessage({ challenge: c.challenge, salt: c.salt, max: max, start: i, step: count });
      }
    });
  }

  /* base64 of the ALTCHA v1 solution JSON. */
  function payload(c, number) {
    return btoa(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: number, salt: c.salt, signature: c.signature }));
  }

  /* Renders the configured external widget and resolves with its response token. */
  function widget(cfg, opts) {
    var spec = WIDGETS[cfg.provider];
    if (!spec || !cfg.siteKey) return Promise.reject(failure('unknown verifier ' + cfg.provider, 'UNSUPPORTED', { unsupported: true }));
    var container = opts.container || document.body.appendChild(document.createElement('div'));
    var v3 = cfg.provider === 'recaptcha' && cfg.version === 'v3';
    return new Promise(function (resolve, reject) {
      var ready = 'gatehouseWidgetReady' + Math.floor(Math.random() * 1e9);
      window[ready] = function () {
        var api = window[spec.api];
        if (v3) {
          api.ready(function () { api.execute(cfg.siteKey, { action: 'verify' }).then(resolve, reject); });
          return;
        }
        api.render(container, {
          sitekey: cfg.siteKey,
          callback: resolve,
          'error-callback': function () { reject(failure('verifier widget failed', 'WIDGET')); }
        });
      };
      var script = document.createElement('script');
      script.src = v3 ? 'https://www.google.com/recaptcha/api.js?render=' + encodeURIComponent(cfg.siteKey) + '&onload=' + ready
                      : spec.src + ready;
      script.async = true;
      script.onerror = function () { reject(failure('verifier unavailable', 'WIDGET')); };
      document.head.appendChild(script);
    });
  }

  function run(opts) {
    opts = opts || {};
    function body(extra) {
      var b = {}, k;
      for (k in (opts.params || {})) if (opts.params[k]) b[k] = opts.params[k];
      if (opts.apiKey) b.apiKey = opts.apiKey;
      if (opts.app) b.app = opts.app;
      for (k in extra) b[k] = extra[k];
      return b;
    }
    return fetchChallenge(opts).then(function (c) {
      if (c.provider) return widget(c, opts).then(function (response) { return redeem(body({ response: response })); });
      return solve(c, opts).then(function (s) { return redeem(body({ payload: payload(c, s.number) })); });
    });
  }

  function token(opts) { return run(opts).then(function (r) { return r.token; }); }

  window.GatehousePow = { token: token, run: run, solve: solve, payload: payload };

  /* ---- The app verification page ---------------------------------------------------------- */

  function verifyPage(root) {
    var d = root.dataset;
    function el(id) { return document.getElementById(id); }
    var status = el('verify-status'), progress = el('verify-progress'), error = el('verify-error');
    var button = el('verify-button'), back = el('verify-return'), container = el('verify-widget');
    var params = { eventId: d.eventId, ibi: d.ibi, apn: d.apn, clientId: d.clientId, appId: d.appId };
    var busy = false, retried = false, external = d.provider && d.provider !== 'pow';

    function state(name) {
      root.classList.remove('is-working', 'is-failed', 'is-done');
      root.classList.add('is-' + name);
    }

    function fail(e) {
      busy = false;
      state('failed');
      var message = d.msgFailed;
      if (/- (EXPIRED|REPLAYED)$/.test(e.message || '')) message = d.msgExpired;
      if (e.code === 'TOO_MANY_ATTEMPTS_TRY_LATER') message = d.msgTooMany;
      if (e.unsupported) message = d.msgUnsupported;
      status.textContent = '';
      progress.hidden = true;
      error.textContent = message;
      error.hidden = false;
      button.hidden = false;
      button.focus();
    }

    function start() {
      if (busy) return;
      busy = true;
      state('working');
      error.hidden = true;
      button.hidden = true;
      progress.hidden = external;
      progress.value = 0;
      status.textContent = external ? d.msgWidget : d.msgWorking;
      run({
        apiKey: d.apiKey,
        params: params,
        container: container,
        onProgress: function (f) { progress.value = Math.min(99, Math.round(f * 100)); }
      }).then(function (r) {
        busy = false;
        state('done');
        progress.value = 100;
        status.textContent = d.msgDone;
        back.href = r.redirect;
        back.hidden = false;
        window.location.replace(r.redirect);
      }, function (e) {
        busy = false;
        if (!retried && /- (EXPIRED|REPLAYED)$/.test(e.message || '')) { retried = true; start(); return; }
        fail(e);
      });
    }

    button.addEventListener('click', function () { retried = false; start(); });
    start();
  }

  function init() {
    var root = document.getElementById('verify-app');
    if (root) verifyPage(root);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
