// Open pages in one headless Chromium through the DevTools protocol; for
// each, wait until it sets document.title to 'done' (holosim animate's test
// modes do), print the text of its <pre id="hs-test"> on one line, and fail
// on any script error or console error of the page.  Used by
// tests/cli_animate.sh.
//
//   node tests/anim_browser.js URL...
//
// Exit 0 with one line per URL on stdout; 1 with the errors on stderr (the
// URL named); 3 when Chromium cannot be started.  HS_BROWSER_TIMEOUT: the
// seconds allowed in all (default 120).
'use strict';
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const urls = process.argv.slice(2);
const timeout = 1000 * (+process.env.HS_BROWSER_TIMEOUT || 120);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hs-chromium-'));
const chrome = spawn(process.env.CHROMIUM || 'chromium', [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage', '--user-data-dir=' + dir, '--remote-debugging-port=0',
  'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
let chromeErr = '';
chrome.stderr.on('data', (d) => { chromeErr += d; });
let done = false;
let exited = false;
chrome.on('exit', () => { exited = true; });
function finish(code, out, err) {
  if (done) return;
  done = true;
  if (out) process.stdout.write(out + '\n');
  if (err) process.stderr.write(err + '\n');
  try { chrome.kill('SIGKILL'); } catch (e) { /* gone */ }
  // the profile is removed once chromium has exited (it writes there until then)
  const t0 = Date.now();
  const clean = () => {
    if (!exited && Date.now() - t0 < 5000) return setTimeout(clean, 50);
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (e) { /* a leftover in the temporary folder is no failure */ }
    process.exit(code);
  };
  clean();
}
chrome.on('error', (e) => finish(3, '', 'anim_browser: cannot start chromium: ' + e.message));
setTimeout(() => finish(1, '', 'anim_browser: timed out after ' + timeout / 1000 +
                        ' s waiting for ' + current), timeout);
let current = '';


// A WebSocket client of what the DevTools protocol needs (RFC 6455: text
// frames, masked from the client, fragments joined, pings answered), so
// that any node (Debian's included) will do.
function wsConnect(url, onText) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
                 'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64') } });
    req.on('error', reject);
    req.on('upgrade', (res, sock, head) => {
      let buf = head, parts = [];
      const frame = (op, payload) => {
        const n = payload.length, mask = crypto.randomBytes(4);
        const hdr = n < 126 ? Buffer.from([0x80 | op, 0x80 | n])
                  : n < 65536 ? Buffer.from([0x80 | op, 0x80 | 126, n >> 8, n & 255])
                  : Buffer.concat([Buffer.from([0x80 | op, 0x80 | 127, 0, 0, 0, 0]),
                                   Buffer.from([n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255])]);
        const body = Buffer.alloc(n);
        for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
        sock.write(Buffer.concat([hdr, mask, body]));
      };
      sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        for (;;) {
          if (buf.length < 2) return;
          const fin = buf[0] & 0x80, op = buf[0] & 15;
          let n = buf[1] & 127, off = 2;
          if (n === 126) { if (buf.length < 4) return; n = buf.readUInt16BE(2); off = 4; }
          else if (n === 127) { if (buf.length < 10) return; n = Number(buf.readBigUInt64BE(2)); off = 10; }
          if (buf.length < off + n) return;
          const payload = buf.subarray(off, off + n);
          buf = buf.subarray(off + n);
          if (op === 9) frame(10, payload);
          else if (op === 1 || op === 0) {
            parts.push(payload);
            if (fin) { const text = Buffer.concat(parts).toString('utf8'); parts = []; onText(text); }
          }
        }
      });
      resolve({ send: (text) => frame(1, Buffer.from(text, 'utf8')) });
    });
    req.end();
  });
}
function getJSON(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => { try { resolve(JSON.parse(body)); } catch (e) { reject(e); } });
    }).on('error', reject);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  let port = null;
  for (let i = 0; i < 300 && !port; i++) {
    try {
      port = fs.readFileSync(path.join(dir, 'DevToolsActivePort'), 'utf8').split('\n')[0];
    } catch (e) { await sleep(100); }
  }
  if (!port) return finish(3, '', 'anim_browser: chromium did not start\n' + chromeErr);
  let list = [];
  for (let i = 0; i < 50; i++) {
    list = await getJSON('http://127.0.0.1:' + port + '/json/list');
    if (list.some((t) => t.type === 'page')) break;
    await sleep(100);
  }
  const page = list.find((t) => t.type === 'page');
  let id = 0;
  const pending = new Map();
  const errors = [];
  const onText = (data) => {
    const msg = JSON.parse(data);
    if (msg.id && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    } else if (msg.method === 'Runtime.exceptionThrown') {
      const d = msg.params.exceptionDetails;
      errors.push('script error: ' + (d.exception && d.exception.description || d.text) +
                  ' at ' + d.url + ':' + d.lineNumber + ':' + d.columnNumber);
    } else if (msg.method === 'Runtime.consoleAPICalled' && msg.params.type === 'error') {
      errors.push('console.error: ' + msg.params.args.map((a) => a.value).join(' '));
    } else if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error') {
      errors.push('log error: ' + msg.params.entry.text + ' ' + (msg.params.entry.url || ''));
    }
  };
  const ws = await wsConnect(page.webSocketDebuggerUrl, onText);
  const send = (method, params) => new Promise((r) => {
    const k = ++id;
    pending.set(k, r);
    ws.send(JSON.stringify({ id: k, method, params: params || {} }));
  });
  await send('Runtime.enable');
  await send('Log.enable');
  await send('Page.enable');
  const evaluate = async (expression) => {
    const r = await send('Runtime.evaluate', { expression, returnByValue: true });
    return r.result && r.result.result ? r.result.result.value : undefined;
  };
  const lines = [];
  for (const url of urls) {
    current = url;
    await send('Page.navigate', { url: 'about:blank' });
    while ((await evaluate('document.title')) === 'done') await sleep(50);
    const nav = await send('Page.navigate', { url });
    if (nav.result && nav.result.errorText)
      return finish(1, lines.join('\n'), url + ': ' + nav.result.errorText);
    const t0 = Date.now();
    for (;;) {
      await sleep(100);
      if (errors.length) break;
      if (Date.now() - t0 > 60000)
        return finish(1, lines.join('\n'), url + ': no result after 60 s');
      if ((await evaluate('document.title')) === 'done' &&
          (await evaluate('location.href')) === url) break;
    }
    const text = await evaluate("(document.getElementById('hs-test') || {}).textContent || ''");
    if (errors.length)
      return finish(1, lines.join('\n'), url + ':\n' + errors.join('\n'));
    lines.push(text);
  }
  finish(0, lines.join('\n'), '');
}
main().catch((e) => finish(1, '', 'anim_browser: ' + (e && e.stack || e)));
