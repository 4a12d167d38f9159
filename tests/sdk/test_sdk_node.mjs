// Cross-checks Hooklab's signatures against the providers' official Node SDKs.
//
// For each provider: the SDK must accept what `hooklab sign` produced, must reject the same
// signature over a tampered body, and (where the SDK can sign) `hooklab verify` must accept the
// SDK's own signature. Timestamps are the real current time because the SDKs check tolerance
// against their own clock (Paddle's is 5 seconds).
//
// The second half does the same for `hooklab trigger`: every test-event template of a provider
// with an official Node SDK, signed by `hooklab trigger --print --json`, must be accepted (and
// parsed, where the SDK parses) by that SDK.
//
// Run: HOOKLAB_BIN=../../target/debug/hooklab node --test test_sdk_node.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hmacValidator } from '@adyen/api-library';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { Paddle, Environment } from '@paddle/paddle-node-sdk';
import { WebhooksHelper } from 'square';
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, shopifyApi } from '@shopify/shopify-api';
import { verifyKey as discordVerifyKey } from 'discord-interactions';
import { Webhook as StandardWebhook, WebhookVerificationError } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';

const here = dirname(fileURLToPath(import.meta.url));
const HOOKLAB_BIN = process.env.HOOKLAB_BIN ?? resolve(here, '../../target/debug/hooklab');

// ---------------------------------------------------------------------------------------------
// Driving the hooklab binary
// ---------------------------------------------------------------------------------------------

function withBodyFile(body, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'hooklab-sdk-'));
  const path = join(dir, 'body');
  writeFileSync(path, body);
  try {
    return fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const nowSecs = () => Math.floor(Date.now() / 1000);

/** `hooklab sign --json`: `{headers: [[name, value]...], body, url}`. */
function hooklabSign(provider, secret, body, { now, id, url, contentType } = {}) {
  return withBodyFile(body, (path) => {
    const args = ['sign', '--json', '--provider', provider, `--secret=${secret}`, '--body-file', path];
    args.push('--now', String(now ?? nowSecs()));
    if (id !== undefined) args.push('--id', id);
    if (url !== undefined) args.push('--url', url);
    if (contentType !== undefined) args.push('--content-type', contentType);
    const out = spawnSync(HOOKLAB_BIN, args, { encoding: 'utf8' });
    assert.equal(out.status, 0, `hooklab sign failed: ${out.error ?? ''} ${out.stderr}`);
    return JSON.parse(out.stdout);
  });
}

/** `hooklab verify`: true when it exits 0, false when it exits 1. */
function hooklabVerify(provider, secret, headers, body, { url, now } = {}) {
  return withBodyFile(body, (path) => {
    const args = ['verify', '--provider', provider, `--secret=${secret}`, '--body-file', path];
    for (const [name, value] of Object.entries(headers)) args.push('--header', `${name}: ${value}`);
    if (url !== undefined) args.push('--url', url);
    args.push('--now', String(now ?? nowSecs()));
    const out = spawnSync(HOOKLAB_BIN, args, { encoding: 'utf8' });
    assert.ok(out.status === 0 || out.status === 1, `hooklab verify crashed: ${out.error ?? ''} ${out.stderr}`);
    return { ok: out.status === 0, output: out.stdout + out.stderr };
  });
}

function header(signed, name) {
  const found = signed.headers.find(([n]) => n.toLowerCase() === name.toLowerCase());
  assert.ok(found, `hooklab sign did not emit ${name}: ${JSON.stringify(signed.headers)}`);
  return found[1];
}

/** Headers as a Node HTTP server hands them over: lower-case names. */
function lowerHeaders(signed) {
  return Object.fromEntries(signed.headers.map(([n, v]) => [n.toLowerCase(), v]));
}

const uid = (prefix) => `${prefix}_${randomBytes(8).toString('hex')}`;

/** Pretty-printed, non-ASCII, with `\/` escapes: re-serialising it would break a signature. */
function jsonBody(id, type) {
  return Buffer.from(
    '{\n' +
      `  "id": "${id}",\n` +
      `  "type": "${type}",\n` +
      '  "created": 1700000000,\n' +
      '  "data": {\n' +
      '    "amount": 4200,\n' +
      '    "description": "Café ☕ — pago à vista",\n' +
      '    "url": "https:\\/\\/example.com\\/r"\n' +
      '  }\n' +
      '}\n',
    'utf8',
  );
}

/** One byte changed, as a proxy or a re-serialisation would do. */
const tamper = (body) => Buffer.from(body.toString('utf8').replace('4200', '4201'), 'utf8');

// ---------------------------------------------------------------------------------------------
// GitHub: @octokit/webhooks-methods
// ---------------------------------------------------------------------------------------------

test('github: @octokit/webhooks-methods verifies a hooklab signature and rejects a tampered body', async () => {
  const secret = randomBytes(16).toString('hex');
  const body = jsonBody(uid('delivery'), 'push');
  const sig = header(hooklabSign('github', secret, body), 'X-Hub-Signature-256');
  assert.equal(await octokitVerify(secret, body.toString('utf8'), sig), true);
  assert.equal(await octokitVerify(secret, tamper(body).toString('utf8'), sig), false);
  assert.equal(await octokitVerify(secret + 'x', body.toString('utf8'), sig), false);
});

test('github: hooklab verifies an @octokit/webhooks-methods signature', async () => {
  const secret = randomBytes(16).toString('hex');
  const body = jsonBody(uid('delivery'), 'push');
  const sig = await octokitSign(secret, body.toString('utf8'));
  const hdrs = { 'X-Hub-Signature-256': sig, 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': uid('d') };
  const good = hooklabVerify('github', secret, hdrs, body);
  assert.ok(good.ok, `hooklab rejects an octokit signature: ${good.output}`);
  const bad = hooklabVerify('github', secret, hdrs, tamper(body));
  assert.ok(!bad.ok, `hooklab accepts a tampered body: ${bad.output}`);
});

// ---------------------------------------------------------------------------------------------
// Standard Webhooks: standardwebhooks
// ---------------------------------------------------------------------------------------------

const svixSecret = () => 'whsec_' + randomBytes(32).toString('base64');

test('standard-webhooks: the standardwebhooks SDK verifies a hooklab signature and rejects a tampered body', () => {
  const secret = svixSecret();
  const msgId = uid('msg');
  const body = jsonBody(uid('evt'), 'invoice.paid');
  const signed = hooklabSign('standard-webhooks', secret, body, { id: msgId });
  assert.equal(header(signed, 'webhook-id'), msgId);
  const parsed = new StandardWebhook(secret).verify(body.toString('utf8'), lowerHeaders(signed));
  assert.equal(parsed.type, 'invoice.paid');
  assert.throws(() => new StandardWebhook(secret).verify(tamper(body).toString('utf8'), lowerHeaders(signed)), WebhookVerificationError);
  assert.throws(() => new StandardWebhook(svixSecret()).verify(body.toString('utf8'), lowerHeaders(signed)), WebhookVerificationError);
});

test('standard-webhooks: hooklab verifies a standardwebhooks SDK signature', () => {
  const secret = svixSecret();
  const msgId = uid('msg');
  const body = jsonBody(uid('evt'), 'invoice.paid');
  const now = nowSecs();
  const sig = new StandardWebhook(secret).sign(msgId, new Date(now * 1000), body.toString('utf8'));
  const hdrs = { 'webhook-id': msgId, 'webhook-timestamp': String(now), 'webhook-signature': sig };
  const good = hooklabVerify('standard-webhooks', secret, hdrs, body, { now });
  assert.ok(good.ok, `hooklab rejects a standardwebhooks signature: ${good.output}`);
  const bad = hooklabVerify('standard-webhooks', secret, hdrs, tamper(body), { now });
  assert.ok(!bad.ok, `hooklab accepts a tampered body: ${bad.output}`);
});

// ---------------------------------------------------------------------------------------------
// Stripe: stripe-node
// ---------------------------------------------------------------------------------------------

const stripe = new Stripe('sk_test_offline_crosscheck');

test('stripe: stripe-node constructs the event from a hooklab signature and rejects a tampered body', () => {
  const secret = 'whsec_' + randomBytes(16).toString('hex');
  const id = uid('evt');
  const body = jsonBody(id, 'payment_intent.succeeded');
  const sig = header(hooklabSign('stripe', secret, body), 'Stripe-Signature');
  const event = stripe.webhooks.constructEvent(body, sig, secret);
  assert.equal(event.id, id);
  assert.throws(() => stripe.webhooks.constructEvent(tamper(body), sig, secret), /signature/i);
});

test('stripe: hooklab verifies a stripe-node test header', () => {
  const secret = 'whsec_' + randomBytes(16).toString('hex');
  const body = jsonBody(uid('evt'), 'charge.refunded');
  const now = nowSecs();
  const sig = stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret, timestamp: now });
  const good = hooklabVerify('stripe', secret, { 'Stripe-Signature': sig }, body, { now });
  assert.ok(good.ok, `hooklab rejects a stripe-node signature: ${good.output}`);
  const bad = hooklabVerify('stripe', secret, { 'Stripe-Signature': sig }, tamper(body), { now });
  assert.ok(!bad.ok, `hooklab accepts a tampered body: ${bad.output}`);
});

// ---------------------------------------------------------------------------------------------
// Square: square (WebhooksHelper.verifySignature): the notification URL is signed
// ---------------------------------------------------------------------------------------------

test('square: WebhooksHelper verifies a hooklab signature and rejects a tampered body or another URL', async () => {
  const key = randomBytes(16).toString('base64url');
  const url = 'https://hooks.example.com/square/webhooks?tenant=acme';
  const body = jsonBody(uid('evt'), 'payment.updated');
  const signed = hooklabSign('square', key, body, { url });
  const sig = header(signed, 'x-square-hmacsha256-signature');
  const check = (requestBody, notificationUrl) =>
    WebhooksHelper.verifySignature({ requestBody, signatureHeader: sig, signatureKey: key, notificationUrl });
  assert.equal(await check(body.toString('utf8'), url), true);
  assert.equal(await check(tamper(body).toString('utf8'), url), false);
  assert.equal(await check(body.toString('utf8'), url.replace('acme', 'other')), false);
});

// ---------------------------------------------------------------------------------------------
// Paddle Billing: @paddle/paddle-node-sdk (5-second tolerance, last h1 only)
// ---------------------------------------------------------------------------------------------

const paddle = new Paddle('pdl_sdbx_apikey_offline_crosscheck', { environment: Environment.sandbox });
const paddleSecret = () => 'pdl_ntfset_01' + randomBytes(12).toString('hex') + '_' + randomBytes(18).toString('base64url');

test('paddle: paddle-node-sdk accepts a hooklab signature and rejects a tampered body', async () => {
  const secret = paddleSecret();
  const body = jsonBody(uid('evt'), 'transaction.completed');
  const sig = header(hooklabSign('paddle', secret, body), 'Paddle-Signature');
  assert.equal(await paddle.webhooks.isSignatureValid(body.toString('utf8'), secret, sig), true);
  assert.equal(await paddle.webhooks.isSignatureValid(tamper(body).toString('utf8'), secret, sig), false);
  // unmarshal is what an integration calls: it verifies, then parses.
  const event = await paddle.webhooks.unmarshal(body.toString('utf8'), secret, sig);
  assert.ok(event, 'unmarshal returns the event');
});

test('paddle: paddle-node-sdk rejects a hooklab signature made 60 s ago (the SDK allows 5 s)', async () => {
  const secret = paddleSecret();
  const body = jsonBody(uid('evt'), 'transaction.completed');
  const sig = header(hooklabSign('paddle', secret, body, { now: nowSecs() - 60 }), 'Paddle-Signature');
  assert.equal(await paddle.webhooks.isSignatureValid(body.toString('utf8'), secret, sig), false);
});

// ---------------------------------------------------------------------------------------------
// Twilio: twilio-node (form POST, and JSON bound through bodySHA256)
// ---------------------------------------------------------------------------------------------

const TWILIO_FORM = Buffer.from(
  'AccountSid=AC0123456789abcdef0123456789abcdef&CallSid=CA42&From=%2B14155550100' +
    '&To=%2B5511999990000&Body=Ol%C3%A1+mundo+%E2%98%95&MediaUrl=b&MediaUrl=a&MediaUrl=b',
);
const TWILIO_URL = 'https://hooks.example.com/twilio/sms?tenant=acme&x=1';

/** The form as Express's urlencoded parser hands it over: repeated keys become arrays. */
function formParams(buf) {
  const params = {};
  for (const [k, v] of new URLSearchParams(buf.toString('utf8'))) {
    if (k in params) params[k] = [].concat(params[k], v);
    else params[k] = v;
  }
  return params;
}

test('twilio: validateRequest accepts a hooklab form signature and rejects a tampered form', () => {
  const token = randomBytes(16).toString('hex');
  const signed = hooklabSign('twilio', token, TWILIO_FORM, { url: TWILIO_URL, contentType: 'application/x-www-form-urlencoded' });
  const sig = header(signed, 'X-Twilio-Signature');
  assert.equal(twilio.validateRequest(token, sig, TWILIO_URL, formParams(TWILIO_FORM)), true);
  const tampered = Buffer.from(TWILIO_FORM.toString().replace('CallSid=CA42', 'CallSid=CA43'));
  assert.equal(twilio.validateRequest(token, sig, TWILIO_URL, formParams(tampered)), false);
});

test('twilio: validateRequestWithBody accepts a hooklab JSON signature (bodySHA256) and rejects a tampered body', () => {
  const token = randomBytes(16).toString('hex');
  const body = jsonBody(uid('EV'), 'com.twilio.messaging.message.delivered');
  const signed = hooklabSign('twilio', token, body, { url: 'https://hooks.example.com/twilio/events', contentType: 'application/json' });
  assert.ok(signed.url && signed.url.includes('bodySHA256='), `the body is bound via the URL: ${JSON.stringify(signed)}`);
  const sig = header(signed, 'X-Twilio-Signature');
  assert.equal(twilio.validateRequestWithBody(token, sig, signed.url, body.toString('utf8')), true);
  assert.equal(twilio.validateRequestWithBody(token, sig, signed.url, tamper(body).toString('utf8')), false);
});

test('twilio: hooklab verifies a twilio-node form signature', () => {
  const token = randomBytes(16).toString('hex');
  const sig = twilio.getExpectedTwilioSignature(token, TWILIO_URL, formParams(TWILIO_FORM));
  const hdrs = { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': sig };
  const good = hooklabVerify('twilio', token, hdrs, TWILIO_FORM, { url: TWILIO_URL });
  assert.ok(good.ok, `hooklab rejects a twilio-node signature: ${good.output}`);
  const tampered = Buffer.from(TWILIO_FORM.toString().replace('CallSid=CA42', 'CallSid=CA43'));
  const bad = hooklabVerify('twilio', token, hdrs, tampered, { url: TWILIO_URL });
  assert.ok(!bad.ok, `hooklab accepts a tampered form: ${bad.output}`);
});

// ---------------------------------------------------------------------------------------------
// `hooklab trigger`: every template of every provider with an official Node SDK
// ---------------------------------------------------------------------------------------------

/** The event types `hooklab trigger --list --json` shows for `provider`. */
function triggerTypes(provider) {
  const out = spawnSync(HOOKLAB_BIN, ['trigger', '--list', '--json', provider], { encoding: 'utf8' });
  assert.equal(out.status, 0, `hooklab trigger --list failed: ${out.stderr}`);
  const [entry] = JSON.parse(out.stdout);
  assert.ok(entry.event_types.length > 0, `${provider} has templates`);
  return entry.event_types;
}

function triggerArgs(provider, event, secret, to, set) {
  const args = ['trigger', provider, event, `--secret=${secret}`, '--to', to];
  for (const s of set) args.push(`--set=${s}`);
  return args;
}

/** `hooklab trigger P E --print --json`: `{url, headers, body, event_id, event_type, object_id}`. */
function hooklabTrigger(provider, event, secret, { to, set = [] } = {}) {
  const url = to ?? `http://127.0.0.1:8787/${provider}`;
  const out = spawnSync(HOOKLAB_BIN, [...triggerArgs(provider, event, secret, url, set), '--print', '--json'], {
    encoding: 'utf8',
  });
  assert.equal(out.status, 0, `hooklab trigger ${provider} ${event} failed: ${out.stderr}`);
  const printed = JSON.parse(out.stdout);
  assert.equal(printed.event_type.length > 0, true);
  return { ...printed, raw: Buffer.from(printed.body, 'utf8'), stderr: out.stderr };
}

test('trigger/stripe: stripe-node constructs every template with the id and type hooklab announced', () => {
  const secret = 'whsec_' + randomBytes(16).toString('hex');
  for (const type of triggerTypes('stripe')) {
    const sent = hooklabTrigger('stripe', type, secret);
    const sig = header(sent, 'Stripe-Signature');
    const event = stripe.webhooks.constructEvent(sent.raw, sig, secret);
    assert.equal(event.type, type);
    assert.equal(event.id, sent.event_id);
    assert.throws(() => stripe.webhooks.constructEvent(sent.raw, sig, secret + 'x'), /signature/i);
  }
});

test('trigger/github: @octokit/webhooks-methods verifies every template; X-GitHub-Event names it', async () => {
  const secret = randomBytes(16).toString('hex');
  for (const type of triggerTypes('github')) {
    const sent = hooklabTrigger('github', type, secret);
    assert.equal(await octokitVerify(secret, sent.body, header(sent, 'X-Hub-Signature-256')), true, type);
    assert.equal(header(sent, 'X-GitHub-Event'), type);
    assert.equal(header(sent, 'X-GitHub-Delivery'), sent.event_id);
  }
});

test('trigger/standard-webhooks, supabase: the standardwebhooks SDK verifies every template', () => {
  const base64 = randomBytes(32).toString('base64');
  for (const [provider, secret] of [
    ['standard-webhooks', `whsec_${base64}`],
    ['supabase', `v1,whsec_${base64}`], // as Supabase shows it; the SDK takes the base64 part
  ]) {
    for (const type of triggerTypes(provider)) {
      const sent = hooklabTrigger(provider, type, secret);
      const parsed = new StandardWebhook(base64).verify(sent.body, lowerHeaders(sent));
      assert.equal(parsed.type, sent.event_type);
      assert.equal(header(sent, 'webhook-id'), sent.event_id);
    }
  }
});

test('trigger/paddle: paddle-node-sdk verifies and unmarshals every transaction template', async () => {
  const secret = paddleSecret();
  for (const type of triggerTypes('paddle')) {
    const sent = hooklabTrigger('paddle', type, secret);
    const sig = header(sent, 'Paddle-Signature');
    assert.equal(await paddle.webhooks.isSignatureValid(sent.body, secret, sig), true, type);
    const event = await paddle.webhooks.unmarshal(sent.body, secret, sig);
    assert.equal(event.eventType, type);
    assert.equal(event.eventId, sent.event_id);
    assert.equal(event.data.id, sent.object_id, 'the SDK reads the transaction hooklab announced');
    assert.ok(event.data.items.length > 0 && event.data.details.totals.total, 'a full transaction');
  }
});

test('trigger/square: WebhooksHelper verifies the template against the URL it was signed for', async () => {
  const key = randomBytes(16).toString('base64url');
  for (const type of triggerTypes('square')) {
    const sent = hooklabTrigger('square', type, key, { to: 'http://127.0.0.1:8787/square?tenant=acme' });
    const check = (notificationUrl) =>
      WebhooksHelper.verifySignature({
        requestBody: sent.body,
        signatureHeader: header(sent, 'x-square-hmacsha256-signature'),
        signatureKey: key,
        notificationUrl,
      });
    assert.equal(await check(sent.url), true, type);
    assert.equal(await check(sent.url.replace('acme', 'other')), false);
  }
});

test('trigger/twilio: validateRequestWithBody accepts the template at the URL hooklab signed', () => {
  const token = randomBytes(16).toString('hex');
  for (const type of triggerTypes('twilio')) {
    const sent = hooklabTrigger('twilio', type, token);
    assert.ok(sent.url.includes('bodySHA256='), `a JSON body is bound through the URL: ${sent.url}`);
    assert.equal(twilio.validateRequestWithBody(token, header(sent, 'X-Twilio-Signature'), sent.url, sent.body), true);
  }
});

test('trigger/linear: @linear/sdk LinearWebhookClient parses every template', () => {
  const secret = 'lin_wh_' + randomBytes(16).toString('hex');
  for (const type of triggerTypes('linear')) {
    const sent = hooklabTrigger('linear', type, secret);
    const client = new LinearWebhookClient(secret);
    const payload = client.parseData(sent.raw, header(sent, 'Linear-Signature'));
    assert.equal(payload.type, type);
    assert.equal(header(sent, 'Linear-Event'), type);
    assert.throws(() => new LinearWebhookClient(secret + 'x').parseData(sent.raw, header(sent, 'Linear-Signature')));
  }
});

test('trigger/adyen: @adyen/api-library validates every notification item', () => {
  const key = randomBytes(32).toString('hex').toUpperCase();
  const validator = new hmacValidator();
  for (const type of triggerTypes('adyen')) {
    const sent = hooklabTrigger('adyen', type, key);
    const items = JSON.parse(sent.body).notificationItems;
    assert.ok(items.length > 0);
    for (const { NotificationRequestItem: item } of items) {
      assert.equal(item.eventCode, type);
      assert.equal(validator.validateHMAC(item, key), true, type);
      assert.equal(validator.validateHMAC({ ...item, success: 'false' }, key), false, 'a signed field changed');
    }
  }
});

test('trigger/discord: discord-interactions verifies every template with the public key hooklab names', async () => {
  const seed = randomBytes(32).toString('hex');
  for (const type of triggerTypes('discord')) {
    const sent = hooklabTrigger('discord', type, seed);
    const publicKey = /public key ([0-9a-f]{64})/.exec(sent.stderr)?.[1];
    assert.ok(publicKey, `hooklab names the key to configure: ${sent.stderr}`);
    const sig = header(sent, 'X-Signature-Ed25519');
    const ts = header(sent, 'X-Signature-Timestamp');
    assert.equal(await discordVerifyKey(sent.raw, sig, ts, publicKey), true, type);
    assert.equal(await discordVerifyKey(Buffer.concat([sent.raw, Buffer.from(' ')]), sig, ts, publicKey), false);
  }
});

test('trigger/shopify: @shopify/shopify-api validates every template sent by hooklab to a real server', async () => {
  const secret = randomBytes(16).toString('hex');
  const shopify = shopifyApi({
    apiKey: 'hooklab-crosscheck',
    apiSecretKey: secret,
    scopes: [],
    hostName: 'localhost',
    apiVersion: ApiVersion.October24,
    isEmbeddedApp: false,
    logger: { level: 0 },
  });
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const check = await shopify.webhooks.validate({ rawBody, rawRequest: req, rawResponse: res });
      seen.push(check);
      res.statusCode = check.valid ? 200 : 401;
      res.end();
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const to = `http://127.0.0.1:${server.address().port}/shopify`;
  const run = (args) =>
    new Promise((done) => execFile(HOOKLAB_BIN, args, (error, stdout, stderr) => done({ error, stdout, stderr })));
  try {
    for (const type of triggerTypes('shopify')) {
      const out = await run([...triggerArgs('shopify', type, secret, to, []), '--json']);
      assert.equal(out.error, null, `hooklab trigger shopify ${type}: ${out.stderr}${out.stdout}`);
      const sent = JSON.parse(out.stdout);
      assert.equal(sent.status, 200);
      const check = seen.at(-1);
      assert.equal(check.valid, true, JSON.stringify(check));
      assert.equal(check.topic, type.toUpperCase().replace('/', '_'));
      assert.equal(check.webhookId, sent.event_id);
      const wrong = await run([...triggerArgs('shopify', type, secret + 'x', to, []), '--json']);
      assert.notEqual(wrong.error, null, 'another secret is refused (401, exit 1)');
      assert.equal(seen.at(-1).valid, false);
    }
  } finally {
    server.close();
  }
});
