// The example's sign-in: phone, email link and a second factor (phone or TOTP), with the stock
// SDK. Only `connect` knows about Gatehouse; the rest is what any Firebase web app writes.
import { initializeApp } from 'firebase/app';
import {
  getAuth, connectAuthEmulator, onAuthStateChanged, signOut, signInWithPhoneNumber, RecaptchaVerifier,
  sendSignInLinkToEmail, isSignInWithEmailLink, signInWithEmailLink, getMultiFactorResolver,
  PhoneAuthProvider, PhoneMultiFactorGenerator, TotpMultiFactorGenerator,
} from 'firebase/auth';
import config from './config.js';

const $ = (id) => document.getElementById(id);
const log = (text) => { $('log').textContent += text + '\n'; };

const app = initializeApp(config.firebase);
const auth = getAuth(app);
let verifier;

// Gatehouse instead of Google: the emulator switch in development; in production the SDK's hosts
// and Gatehouse's own application verifier (docs/clients.md "Web").
async function connect() {
  if (config.emulator) {
    connectAuthEmulator(auth, config.gatehouse, { disableWarnings: true });
    verifier = new RecaptchaVerifier(auth, 'phone-send', { size: 'invisible' });
    return;
  }
  const host = new URL(config.gatehouse).host;
  auth.config.apiHost = host + '/identitytoolkit.googleapis.com';
  auth.config.tokenApiHost = host + '/securetoken.googleapis.com';
  const { GatehouseVerifier, installGatehouseRecaptcha } = await import(config.gatehouse + '/__/auth/static/verifier.js');
  verifier = new GatehouseVerifier(auth);
  installGatehouseRecaptcha(auth);
}
const ready = connect();

onAuthStateChanged(auth, (user) => {
  $('who').textContent = user ? `Signed in as ${user.phoneNumber || user.email || user.uid}.` : 'Signed out.';
});

let confirmation, resolver, pending;

$('phone-send').onclick = async () => {
  await ready;
  try {
    confirmation = await signInWithPhoneNumber(auth, $('phone-number').value, verifier);
    log('Code sent.');
  } catch (e) { log(e.code || e.message); }
};

$('phone-verify').onclick = async () => {
  try { await confirmation.confirm($('phone-code').value); } catch (e) { secondFactorOrLog(e); }
};

$('email-send').onclick = async () => {
  await ready;
  try {
    await sendSignInLinkToEmail(auth, $('email-address').value, { url: location.href, handleCodeInApp: true });
    localStorage.setItem('emailForSignIn', $('email-address').value);
    log('Link sent: open it in this browser.');
  } catch (e) { log(e.code || e.message); }
};

// Back from the email link.
ready.then(async () => {
  if (!isSignInWithEmailLink(auth, location.href)) return;
  const email = localStorage.getItem('emailForSignIn') || prompt('Your email address');
  try { await signInWithEmailLink(auth, email, location.href); } catch (e) { secondFactorOrLog(e); }
  history.replaceState(null, '', location.pathname);
});

// A user with a second factor: the SDK hands a resolver; phone factors get a code by SMS,
// TOTP factors take the authenticator app's code.
async function secondFactorOrLog(e) {
  if (e.code !== 'auth/multi-factor-auth-required') { log(e.code || e.message); return; }
  resolver = getMultiFactorResolver(auth, e);
  const hint = resolver.hints[0];
  if (hint.factorId === TotpMultiFactorGenerator.FACTOR_ID) {
    pending = { totp: hint.uid };
    $('mfa-hint').textContent = `Enter the code of your authenticator app (${hint.displayName || 'TOTP'}).`;
    return;
  }
  const id = await new PhoneAuthProvider(auth).verifyPhoneNumber({ multiFactorHint: hint, session: resolver.session }, verifier);
  pending = { phone: id };
  $('mfa-hint').textContent = `Enter the code sent to ${hint.phoneNumber}.`;
}

$('mfa-verify').onclick = async () => {
  const code = $('mfa-code').value;
  const assertion = pending.totp
    ? TotpMultiFactorGenerator.assertionForSignIn(pending.totp, code)
    : PhoneMultiFactorGenerator.assertion(PhoneAuthProvider.credential(pending.phone, code));
  try { await resolver.resolveSignIn(assertion); } catch (e) { log(e.code || e.message); }
};

$('sign-out').onclick = () => signOut(auth);
