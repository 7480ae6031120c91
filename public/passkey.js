/* Gatehouse passkeys (WebAuthn) on the hosted pages. No inline script (CSP: script-src 'self').
 *
 * Sign-in (/__/auth/passkey, and the email page's autofill): asks the page's options URL for a
 * fresh challenge (POST, the form's CSRF token), calls navigator.credentials.get, and posts the
 * assertion as the ordinary form #passkey-form (base64url fields). On the email page the request
 * is conditional (mediation: 'conditional'): the browser offers its passkeys in the address
 * field's autofill, and choosing one signs in.
 *
 * Enrolment (the account page): a form with data-passkey-register posts its fields (and the CSRF
 * token of its data-csrf) to its action for the creation options ({publicKey}, or {redirect} to sign in again, or {error}), calls
 * navigator.credentials.create, and posts the attestation as #passkey-verify-form.
 *
 * Elements marked data-passkey-only are shown, and data-passkey-unsupported hidden, only where the
 * browser has WebAuthn. */
(function () {
  'use strict';

  var supported = !!(window.PublicKeyCredential && navigator.credentials &&
    typeof navigator.credentials.get === 'function' && typeof navigator.credentials.create === 'function' &&
    window.fetch && window.URLSearchParams);

  /* Base64 of either alphabet, padded or not → ArrayBuffer. */
  function bytes(text) {
    var s = String(text || '').replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    while (s.length % 4) { s += '='; }
    var bin = window.atob(s);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
    return out.buffer;
  }

  /* ArrayBuffer → base64url without padding ('' for none). */
  function base64url(buffer) {
    if (!buffer) { return ''; }
    var b = new Uint8Array(buffer);
    var bin = '';
    for (var i = 0; i < b.length; i++) { bin += String.fromCharCode(b[i]); }
    return window.btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function withIds(list) {
    return (list || []).map(function (c) {
      var copy = {};
      for (var k in c) { if (Object.prototype.hasOwnProperty.call(c, k)) { copy[k] = c[k]; } }
      copy.id = bytes(c.id);
      return copy;
    });
  }

  function requestOptions(o) {
    var out = {};
    for (var k in o) { if (Object.prototype.hasOwnProperty.call(o, k)) { out[k] = o[k]; } }
    out.challenge = bytes(o.challenge);
    if (o.allowCredentials) { out.allowCredentials = withIds(o.allowCredentials); }
    return out;
  }

  function creationOptions(o) {
    var out = {};
    for (var k in o) { if (Object.prototype.hasOwnProperty.call(o, k)) { out[k] = o[k]; } }
    out.challenge = bytes(o.challenge);
    out.user = { id: bytes(o.user.id), name: o.user.name, displayName: o.user.displayName };
    if (o.excludeCredentials) { out.excludeCredentials = withIds(o.excludeCredentials); }
    return out;
  }

  /* POST url-encoded fields; resolves {ok, body} (body {} when the answer is not JSON). */
  function post(url, fields) {
    return window.fetch(url, {
      method: 'POST', body: fields, credentials: 'same-origin', headers: { 'Accept': 'application/json' }
    }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body || {} }; }, function () { return { ok: false, body: {} }; });
    });
  }

  function setField(form, name, value) {
    var field = form.elements.namedItem(name);
    if (field) { field.value = value || ''; }
  }

  /* form.submit() even if a field named "submit" shadowed it. */
  function send(form) { HTMLFormElement.prototype.submit.call(form); }

  function errorTarget(form) {
    return document.getElementById(form.getAttribute('data-error-target') || 'passkey-error');
  }

  function showError(form, text) {
    var target = errorTarget(form);
    if (!target || !text) { return; }
    target.textContent = text;
    target.hidden = false;
    target.setAttribute('tabindex', '-1');
    target.focus();
  }

  function hideError(form) {
    var target = errorTarget(form);
    if (target) { target.hidden = true; target.textContent = ''; }
  }

  function setBusy(button, busy) {
    if (!button) { return; }
    if (busy) {
      if (!button.getAttribute('data-idle-label')) { button.setAttribute('data-idle-label', button.textContent); }
      if (button.getAttribute('data-busy-label')) { button.textContent = button.getAttribute('data-busy-label'); }
      button.disabled = true;
      button.setAttribute('aria-busy', 'true');
    } else {
      if (button.getAttribute('data-idle-label')) { button.textContent = button.getAttribute('data-idle-label'); }
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  }

  /* A refusal the server put in words. */
  function ServerError(message) { this.message = message; this.name = 'ServerError'; }

  function messageFor(form, e) {
    if (e && e.name === 'ServerError' && e.message) { return e.message; }
    if (e && (e.name === 'NotAllowedError' || e.name === 'AbortError')) { return form.getAttribute('data-msg-cancelled'); }
    if (e && e.name === 'InvalidStateError' && form.getAttribute('data-msg-exists')) { return form.getAttribute('data-msg-exists'); }
    if (e && e.name === 'NotSupportedError' && form.getAttribute('data-msg-unsupported')) { return form.getAttribute('data-msg-unsupported'); }
    return form.getAttribute('data-msg-failed');
  }

  // MARK: Sign-in

  function options(form) {
    var fields = new URLSearchParams();
    fields.append('csrf', form.getAttribute('data-options-csrf') || '');
    return post(form.getAttribute('data-options'), fields).then(function (r) {
      if (!r.ok || !r.body.publicKey) { throw new ServerError(r.body.error || ''); }
      return requestOptions(r.body.publicKey);
    });
  }

  function submitAssertion(form, credential) {
    var r = credential.response;
    setField(form, 'id', credential.id);
    setField(form, 'rawId', base64url(credential.rawId));
    setField(form, 'type', credential.type);
    setField(form, 'clientDataJSON', base64url(r.clientDataJSON));
    setField(form, 'authenticatorData', base64url(r.authenticatorData));
    setField(form, 'signature', base64url(r.signature));
    setField(form, 'userHandle', base64url(r.userHandle));
    send(form);
  }

  function signIn(button, form) {
    if (button.disabled) { return; }
    hideError(form);
    setBusy(button, true);
    options(form).then(function (publicKey) {
      return navigator.credentials.get({ publicKey: publicKey });
    }).then(function (credential) {
      if (!credential) { throw new Error('no credential'); }
      submitAssertion(form, credential);
    }).catch(function (e) {
      setBusy(button, false);
      showError(form, messageFor(form, e));
    });
  }

  /* The email page: the browser's autofill offers passkeys while the page is open. The form's
     data-conditional-state says how far it got (for whoever looks: unavailable, waiting, chosen,
     failed). A request that ended with its challenge's time (the page left open for minutes)
     starts again, a few times at most, each with a new challenge. */
  function conditional(form, restarts) {
    function state(s) { form.setAttribute('data-conditional-state', s); }
    var check = window.PublicKeyCredential && PublicKeyCredential.isConditionalMediationAvailable;
    if (!supported || typeof check !== 'function') { state('unavailable'); return; }
    var started = 0;
    PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
      if (!available) { state('unavailable'); return null; }
      return options(form).then(function (publicKey) {
        state('waiting');
        started = Date.now();
        return navigator.credentials.get({ publicKey: publicKey, mediation: 'conditional' });
      }).then(function (credential) {
        if (!credential) { state('failed'); return; }
        state('chosen');
        submitAssertion(form, credential);
      });
    }).catch(function (e) {
      /* The address form works as before. */
      state('failed');
      if (e && e.name === 'NotAllowedError' && started && Date.now() - started > 60000 && restarts < 3) {
        conditional(form, restarts + 1);
      }
    });
  }

  /* After the server said it does not know the credential, the authenticator may stop offering it. */
  function signalUnknown(form) {
    var id = form.getAttribute('data-unknown-credential');
    var rpId = form.getAttribute('data-rp-id');
    if (!id || !rpId || !window.PublicKeyCredential || typeof PublicKeyCredential.signalUnknownCredential !== 'function') { return; }
    PublicKeyCredential.signalUnknownCredential({ rpId: rpId, credentialId: id }).catch(function () {});
  }

  // MARK: Enrolment

  function register(event) {
    var form = event.currentTarget;
    event.preventDefault();
    var button = form.querySelector('button[type="submit"]');
    var verify = document.getElementById('passkey-verify-form');
    if (!verify || (button && button.disabled)) { return; }
    hideError(form);
    setBusy(button, true);
    var fields = new URLSearchParams(new FormData(form));
    /* The options are asked for by this script only: the form's token is in data-csrf. */
    if (form.getAttribute('data-csrf')) { fields.set('csrf', form.getAttribute('data-csrf')); }
    var name = fields.get('name') || '';
    var redirected = false;
    post(form.getAttribute('action'), fields).then(function (r) {
      if (r.body.redirect) { redirected = true; window.location.assign(r.body.redirect); return null; }
      if (!r.ok || !r.body.publicKey) { throw new ServerError(r.body.error || ''); }
      return navigator.credentials.create({ publicKey: creationOptions(r.body.publicKey) });
    }).then(function (credential) {
      if (redirected) { return; }
      if (!credential) { throw new Error('no credential'); }
      var resp = credential.response;
      setField(verify, 'id', credential.id);
      setField(verify, 'rawId', base64url(credential.rawId));
      setField(verify, 'type', credential.type);
      setField(verify, 'clientDataJSON', base64url(resp.clientDataJSON));
      setField(verify, 'attestationObject', base64url(resp.attestationObject));
      setField(verify, 'name', name);
      send(verify);
    }).catch(function (e) {
      setBusy(button, false);
      showError(form, messageFor(form, e));
    });
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll('[data-passkey-only]'), function (el) { el.hidden = !supported; });
    Array.prototype.forEach.call(document.querySelectorAll('[data-passkey-unsupported]'), function (el) { el.hidden = supported; });
    var form = document.getElementById('passkey-form');
    if (form) {
      signalUnknown(form);
      if (supported) {
        Array.prototype.forEach.call(document.querySelectorAll('[data-passkey-signin]'), function (button) {
          button.addEventListener('click', function () { signIn(button, form); });
        });
      }
      if (form.hasAttribute('data-conditional')) { conditional(form, 0); }
    }
    if (supported) {
      Array.prototype.forEach.call(document.querySelectorAll('form[data-passkey-register]'), function (f) {
        f.addEventListener('submit', register);
      });
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
  /* A page restored from the back/forward cache must not keep busy buttons. */
  window.addEventListener('pageshow', function (event) {
    if (!event.persisted) { return; }
    Array.prototype.forEach.call(document.querySelectorAll('button[aria-busy="true"]'), function (b) { setBusy(b, false); });
  });
}());
