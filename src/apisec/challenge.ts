/**
 * The protected gateways' side of the challenge (the puzzle itself: platform/challenge.ts): where a
 * browser's answer is posted, the clearance cookie, and the pages a browser is shown.
 */
import { CLEARANCE_HEADER, type Challenge } from '../platform/challenge.ts';

export { CLEARANCE_HEADER, createChallenges, solveChallenge, type Challenge, type Challenges } from '../platform/challenge.ts';
export const CLEARANCE_COOKIE = 'svc_clearance';
/** Reserved path under a gateway where answers are posted (never forwarded to the backend). */
export const CHALLENGE_PATH = '/__svc/challenge';

/** The clearance a request presents (header first, then cookie), or null. */
export function presentedClearance(headers: Readonly<Record<string, string | string[] | undefined>>): string | null {
  const header = headers[CLEARANCE_HEADER];
  if (typeof header === 'string' && header !== '') return header.trim();
  const cookie = headers.cookie;
  const text = Array.isArray(cookie) ? cookie.join('; ') : cookie;
  if (typeof text !== 'string' || !text.includes(CLEARANCE_COOKIE)) return null;
  for (const part of text.split(';')) {
    const trimmed = part.trim();
    if (trimmed.startsWith(`${CLEARANCE_COOKIE}=`)) return trimmed.slice(CLEARANCE_COOKIE.length + 1);
  }
  return null;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/**
 * The interstitial page: self-contained (inline script with its own SHA-256, no external
 * resource), so it works on plain HTTP where `crypto.subtle` is unavailable and behind a strict
 * CSP of the page's own nonce-less inline script. On success it reloads the original address.
 */
/**
 * The page a browser gets when a protected gateway blocks its request and the gateway hides the
 * decision (block_details "hidden", the default): it says nothing of why, only the request id an
 * operator finds the decision under (audit trail, threats API). No script.
 */
export function blockPage(requestId: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>Request blocked</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}code{font-size:.85em}</style>
</head><body>
<h1>Request blocked</h1>
<p>This request was blocked by the site's security policy. If you think this is a mistake, contact the site's owner and give them the request id below.</p>
<p><small>Request <code>${escapeHtml(requestId)}</code></small></p>
</body></html>
`;
}

export function challengePage(challenge: Challenge, verifyUrl: string, requestId: string): string {
  const data = JSON.stringify({ token: challenge.token, difficulty: challenge.difficulty, verify: verifyUrl }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>Checking your browser</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}code{font-size:.85em}</style>
</head><body>
<h1>Checking your browser</h1>
<p id="status">This site is protected. Your browser is solving a short proof-of-work puzzle; the page reloads by itself.</p>
<noscript><p>JavaScript is required to pass this check.</p></noscript>
<p><small>Request <code>${escapeHtml(requestId)}</code></small></p>
<script id="svc-challenge" type="application/json">${data}</script>
<script>
(function(){
var K=[1116352408,1899447441,3049323471,3921009573,961987163,1508970993,2453635748,2870763221,3624381080,310598401,607225278,1426881987,1925078388,2162078206,2614888103,3248222580,3835390401,4022224774,264347078,604807628,770255983,1249150122,1555081692,1996064986,2554220882,2821834349,2952996808,3210313671,3336571891,3584528711,113926993,338241895,666307205,773529912,1294757372,1396182291,1695183700,1986661051,2177026350,2456956037,2730485921,2820302411,3259730800,3345764771,3516065817,3600352804,4094571909,275423344,430227734,506948616,659060556,883997877,958139571,1322822218,1537002063,1747873779,1955562222,2024104815,2227730452,2361852424,2428436474,2756734187,3204031479,3329325298];
function sha256(bytes){var H=[1779033703,3144134277,1013904242,2773480762,1359893119,2600822924,528734635,1541459225];
var l=bytes.length,n=((l+9+63)>>6)<<6,m=new Uint8Array(n);m.set(bytes);m[l]=128;var bl=l*8;
m[n-4]=bl>>>24;m[n-3]=(bl>>>16)&255;m[n-2]=(bl>>>8)&255;m[n-1]=bl&255;var w=new Array(64);
for(var o=0;o<n;o+=64){for(var i=0;i<16;i++)w[i]=(m[o+i*4]<<24)|(m[o+i*4+1]<<16)|(m[o+i*4+2]<<8)|m[o+i*4+3];
for(i=16;i<64;i++){var a=w[i-15],b=w[i-2];var s0=((a>>>7)|(a<<25))^((a>>>18)|(a<<14))^(a>>>3);var s1=((b>>>17)|(b<<15))^((b>>>19)|(b<<13))^(b>>>10);w[i]=(w[i-16]+s0+w[i-7]+s1)|0;}
var A=H[0],B=H[1],C=H[2],D=H[3],E=H[4],F=H[5],G=H[6],J=H[7];
for(i=0;i<64;i++){var S1=((E>>>6)|(E<<26))^((E>>>11)|(E<<21))^((E>>>25)|(E<<7));var ch=(E&F)^(~E&G);var t1=(J+S1+ch+K[i]+w[i])|0;
var S0=((A>>>2)|(A<<30))^((A>>>13)|(A<<19))^((A>>>22)|(A<<10));var mj=(A&B)^(A&C)^(B&C);var t2=(S0+mj)|0;J=G;G=F;F=E;E=(D+t1)|0;D=C;C=B;B=A;A=(t1+t2)|0;}
H[0]=(H[0]+A)|0;H[1]=(H[1]+B)|0;H[2]=(H[2]+C)|0;H[3]=(H[3]+D)|0;H[4]=(H[4]+E)|0;H[5]=(H[5]+F)|0;H[6]=(H[6]+G)|0;H[7]=(H[7]+J)|0;}
return H;}
function zeros(H,d){for(var i=0;i<8;i++){var x=H[i]>>>0;if(x===0){d-=32;if(d<=0)return true;continue;}return Math.clz32(x)>=d;}return true;}
function utf8(s){var out=[];for(var i=0;i<s.length;i++){var c=s.charCodeAt(i);if(c<128)out.push(c);else out.push(63);}return out;}
var cfg=JSON.parse(document.getElementById('svc-challenge').textContent);
var status=document.getElementById('status');var prefix=utf8(cfg.token+':');var nonce=0;
function step(){var end=nonce+20000;for(;nonce<end;nonce++){var digits=String(nonce),bytes=new Uint8Array(prefix.length+digits.length);bytes.set(prefix);
for(var j=0;j<digits.length;j++)bytes[prefix.length+j]=digits.charCodeAt(j);if(zeros(sha256(bytes),cfg.difficulty)){return done(String(nonce));}}setTimeout(step,0);}
function done(answer){status.textContent='Verified, reloading…';
fetch(cfg.verify,{method:'POST',headers:{'content-type':'application/json'},credentials:'same-origin',body:JSON.stringify({token:cfg.token,nonce:answer})})
.then(function(r){if(r.ok){location.reload();}else{status.textContent='The check failed ('+r.status+'). Reload the page to try again.';}})
.catch(function(){status.textContent='The check could not be sent. Reload the page to try again.';});}
setTimeout(step,0);
})();
</script>
</body></html>
`;
}
