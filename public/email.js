/* Gatehouse email pages: busy state on submit, the app token from pow.js when the page needs one,
   the resend countdown, and focus on the page's heading. No inline script (CSP). */
(function () {
  'use strict';

  function setBusy(form, busy) {
    var button = form.querySelector('button[type="submit"]');
    if (!button) { return; }
    if (busy) {
      button.dataset.ghLabel = button.textContent;
      if (button.dataset.ghBusy) { button.textContent = button.dataset.ghBusy; }
      button.disabled = true;
      form.setAttribute('aria-busy', 'true');
    } else {
      if (button.dataset.ghLabel) { button.textContent = button.dataset.ghLabel; }
      button.disabled = false;
      form.removeAttribute('aria-busy');
    }
  }

  function onSubmit(event) {
    var form = event.currentTarget;
    if (form.getAttribute('aria-busy') === 'true') { event.preventDefault(); return; }
    var field = form.querySelector('input[name="appToken"]');
    var pow = window.GatehousePow;
    if (form.hasAttribute('data-gh-app-token') && field && !field.value && pow && typeof pow.token === 'function') {
      event.preventDefault();
      setBusy(form, true);
      Promise.resolve().then(function () { return pow.token({ container: form.querySelector('[data-gh-verifier]') || undefined }); }).then(function (token) {
        field.value = token || '';
        form.submit();
      }, function () {
        setBusy(form, false);
        form.submit();
      });
      return;
    }
    setBusy(form, true);
  }

  function countdown(button) {
    var seconds = parseInt(button.dataset.ghWait, 10);
    var status = button.form && button.form.querySelector('[data-gh-wait-status]');
    if (!(seconds > 0)) { return; }
    var template = button.dataset.ghWaitText || '{seconds}';
    button.disabled = true;
    function tick() {
      if (seconds <= 0) {
        button.disabled = false;
        if (status) { status.textContent = ''; }
        return;
      }
      if (status) { status.textContent = template.replace('{seconds}', String(seconds)); }
      seconds -= 1;
      window.setTimeout(tick, 1000);
    }
    tick();
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll('form[data-gh-submit]'), function (form) {
      form.addEventListener('submit', onSubmit);
    });
    Array.prototype.forEach.call(document.querySelectorAll('button[data-gh-wait]'), countdown);
    var heading = document.querySelector('[data-gh-focus]');
    if (heading && !document.querySelector('[autofocus]')) { heading.focus(); }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
  /* Pages restored from the back/forward cache must not stay busy. */
  window.addEventListener('pageshow', function (event) {
    if (!event.persisted) { return; }
    Array.prototype.forEach.call(document.querySelectorAll('form[aria-busy="true"]'), function (form) { setBusy(form, false); });
  });
}());
