/* Gatehouse hosted phone sign-in: progressive enhancement only. Every form also works without
 * this script (in dev mode). It adds: an app token from the proof of work (pow.js) before
 * submitting forms that need one, busy buttons against double posts, the "send again"
 * countdown, code clean-up, and WebOTP autofill where the browser offers it. */
(function () {
  'use strict';

  function button(form) {
    return form.querySelector('button[type="submit"]');
  }

  function setBusy(form, busy) {
    var b = button(form);
    if (!b) return;
    if (busy) {
      if (!b.dataset.idleLabel) b.dataset.idleLabel = b.textContent;
      if (b.dataset.busyLabel) b.textContent = b.dataset.busyLabel;
      b.disabled = true;
      b.setAttribute('aria-busy', 'true');
      form.classList.add('is-busy');
    } else {
      if (b.dataset.idleLabel) b.textContent = b.dataset.idleLabel;
      b.disabled = false;
      b.removeAttribute('aria-busy');
      form.classList.remove('is-busy');
    }
  }

  function showError(form, text) {
    var target = document.getElementById(form.dataset.errorTarget || '');
    if (!target || !text) return;
    target.textContent = text;
    target.hidden = false;
    target.setAttribute('tabindex', '-1');
    target.focus();
  }

  // Forms that need an app token get one from the proof of work just before they are sent.
  // Without pow.js (dev mode) the form goes as is; the server decides.
  function needsToken(form) {
    var field = form.querySelector('input[name="appToken"]');
    return form.dataset.appToken === 'required' && field && !field.value &&
      window.GatehousePow && typeof window.GatehousePow.token === 'function';
  }

  function onSubmit(ev) {
    var form = ev.target;
    if (!(form instanceof HTMLFormElement) || ev.defaultPrevented) return;
    if (form.classList.contains('is-busy')) { ev.preventDefault(); return; }
    if (needsToken(form)) {
      ev.preventDefault();
      setBusy(form, true);
      window.GatehousePow.token().then(function (token) {
        form.querySelector('input[name="appToken"]').value = token;
        form.submit();
      }, function () {
        setBusy(form, false);
        showError(form, form.dataset.msgVerification);
      });
      return;
    }
    // Let the browser send it, then lock the button until the next page.
    setTimeout(function () { setBusy(form, true); }, 0);
  }

  document.addEventListener('submit', onSubmit);

  // Back/forward cache: a restored page must not keep busy buttons.
  window.addEventListener('pageshow', function (ev) {
    if (!ev.persisted) return;
    Array.prototype.forEach.call(document.querySelectorAll('form.is-busy'), function (f) { setBusy(f, false); });
  });

  // "Send again" (and "Send by WhatsApp", "Call me"): disabled with a visible countdown until the
  // server allows it.
  var resend = document.getElementById('resend');
  var status = document.getElementById('resend-status');
  var waiting = document.querySelectorAll('button[data-wait]');
  if (resend && waiting.length) {
    var wait = parseInt(resend.dataset.wait || '0', 10) || 0;
    var label = resend.dataset.waitLabel || '';
    var until = Date.now() + wait * 1000;
    var setAll = function (disabled) {
      Array.prototype.forEach.call(waiting, function (b) { b.disabled = disabled; });
    };
    var tick = function () {
      var left = Math.ceil((until - Date.now()) / 1000);
      if (left > 0) {
        setAll(true);
        if (status) status.textContent = label.replace('{seconds}', String(left));
        setTimeout(tick, 1000 - ((until - Date.now()) % 1000 || 0) + 5);
      } else {
        setAll(false);
        if (status) status.textContent = '';
      }
    };
    if (wait > 0) tick();
  }

  // What became of the code's message: "not delivered" instead of leaving the person waiting,
  // and a note when the code went again by another channel (the automatic fallback). Every 4 s
  // for 3 minutes at most, while the answer may still change.
  var codeForm = document.getElementById('code-form');
  if (codeForm && codeForm.dataset.delivery && window.fetch && window.URLSearchParams) {
    var channel = codeForm.dataset.channel;
    var notDelivered = document.getElementById('not-delivered');
    var notice = document.getElementById('fallback-notice');
    var polls = 0;
    var poll = function () {
      polls += 1;
      var body = new URLSearchParams();
      body.set('csrf', codeForm.querySelector('input[name="csrf"]').value);
      body.set('sessionInfo', codeForm.querySelector('input[name="sessionInfo"]').value);
      fetch(codeForm.dataset.delivery, { method: 'POST', body: body, credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.json() : {}; })
        .then(function (d) {
          if (!d.state) return;
          if (d.channel && d.channel !== channel && notice) {
            notice.textContent = (notice.dataset.text || '').replace('{channel}', notice.dataset['name' + d.channel.charAt(0).toUpperCase() + d.channel.slice(1)] || d.channel);
            notice.hidden = false;
            channel = d.channel;
            if (notDelivered) notDelivered.hidden = true;
          } else if (notDelivered && (d.state === 'undelivered' || d.state === 'failed')) {
            notDelivered.hidden = false;
          }
          if (polls < 45 && d.state !== 'delivered') setTimeout(poll, 4000);
        }, function () { if (polls < 45) setTimeout(poll, 4000); });
    };
    setTimeout(poll, 4000);
  }

  // The code field keeps digits only (pasted "123 456" or "123-456" become "123456").
  var code = document.getElementById('code');
  if (code) {
    code.addEventListener('input', function () {
      var digits = code.value.replace(/[^0-9]/g, '').slice(0, 6);
      if (digits !== code.value) code.value = digits;
    });

    // WebOTP: the SMS ends with "@domain #code"; browsers that support it offer the code.
    if ('OTPCredential' in window && navigator.credentials && window.AbortController) {
      var form = document.getElementById('code-form');
      var ac = new AbortController();
      if (form) form.addEventListener('submit', function () { ac.abort(); });
      navigator.credentials.get({ otp: { transport: ['sms'] }, signal: ac.signal }).then(function (otp) {
        if (otp && otp.code && form && !code.value) {
          code.value = otp.code;
          if (form.requestSubmit) form.requestSubmit(); else form.submit();
        }
      }).catch(function () { /* dismissed or unsupported: the user types the code */ });
    }
  }
})();
