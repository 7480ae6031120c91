/* Gatehouse proof-of-work worker (ALTCHA v1 challenges).
   Input message: {challenge, salt, max, start, step}. Tries start, start + step, … up to max and
   looks for the number whose SHA-256(salt + number) equals the challenge, hashing with Web Crypto
   in batches. Posts {progress: <numbers tried>} along the way, then {number}, {exhausted: true}
   or {error}. */
'use strict';

var BATCH = 512;

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

self.onmessage = function (event) {
  var d = event.data;
  if (!self.crypto || !self.crypto.subtle || !self.TextEncoder) {
    self.postMessage({ error: 'unsupported' });
    return;
  }
  var target = hexBytes(String(d.challenge));
  var encoder = new TextEncoder();
  var n = d.start;
  var tried = 0;

  function next() {
    var numbers = [];
    var digests = [];
    for (var i = 0; i < BATCH && n <= d.max; i++, n += d.step) {
      numbers.push(n);
      digests.push(self.crypto.subtle.digest('SHA-256', encoder.encode(d.salt + n)));
    }
    if (numbers.length === 0) {
      self.postMessage({ exhausted: true });
      return;
    }
    Promise.all(digests).then(function (results) {
      for (var j = 0; j < results.length; j++) {
        if (equal(new Uint8Array(results[j]), target)) {
          self.postMessage({ number: numbers[j] });
          return;
        }
      }
      tried += numbers.length;
      self.postMessage({ progress: tried });
      next();
    }, function () {
      self.postMessage({ error: 'digest' });
    });
  }

  next();
};
