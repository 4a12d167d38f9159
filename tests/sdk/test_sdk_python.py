"""Cross-checks Hooklab's signatures against the providers' official Python SDKs.

For every provider whose official SDK is on PyPI:

* ``hooklab sign`` output must be accepted by the SDK's own verifier;
* the same signature over a tampered body must be rejected by the SDK (so an accepting SDK
  is not accepting everything);
* where the SDK can sign, its signature must be accepted by ``hooklab verify`` (the other
  way round) and rejected once the body is tampered with.

The last part does the same for ``hooklab trigger``: every test-event template of a provider
with an official Python SDK, signed by ``hooklab trigger --print --json``, must be accepted by
that SDK.

Timestamps are the real current time: the SDKs check tolerance against their own clock
(Paddle's default is 5 seconds), so each test signs right before it verifies.

The binary comes from ``HOOKLAB_BIN`` (default: ``target/debug/hooklab`` in the repository).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

REPO = Path(__file__).resolve().parents[2]
HOOKLAB_BIN = os.environ.get("HOOKLAB_BIN", str(REPO / "target" / "debug" / "hooklab"))


# --------------------------------------------------------------------------------------------
# Driving the hooklab binary
# --------------------------------------------------------------------------------------------


def _body_file(body: bytes) -> str:
    f = tempfile.NamedTemporaryFile(prefix="hooklab-sdk-", suffix=".body", delete=False)
    f.write(body)
    f.close()
    return f.name


def hooklab_sign(
    provider: str,
    secret: str,
    body: bytes,
    *,
    now: int | None = None,
    msg_id: str | None = None,
    url: str | None = None,
    content_type: str | None = None,
) -> dict:
    """Runs ``hooklab sign --json`` and returns its parsed output.

    The result has ``headers`` as a list of ``[name, value]`` pairs, plus ``body`` and ``url``
    (null unless the provider signs inside the body or changes the URL).
    """
    path = _body_file(body)
    try:
        args = [HOOKLAB_BIN, "sign", "--json", "--provider", provider, f"--secret={secret}"]
        args += ["--body-file", path]
        args += ["--now", str(now if now is not None else int(time.time()))]
        if msg_id is not None:
            args += ["--id", msg_id]
        if url is not None:
            args += ["--url", url]
        if content_type is not None:
            args += ["--content-type", content_type]
        out = subprocess.run(args, capture_output=True, check=False)
        assert out.returncode == 0, f"hooklab sign failed: {out.stderr.decode(errors='replace')}"
        return json.loads(out.stdout)
    finally:
        os.unlink(path)


def hooklab_verify(
    provider: str,
    secret: str,
    headers: dict[str, str],
    body: bytes,
    *,
    url: str | None = None,
    now: int | None = None,
) -> tuple[bool, str]:
    """Runs ``hooklab verify``; returns (valid, combined output) from its exit code."""
    path = _body_file(body)
    try:
        args = [HOOKLAB_BIN, "verify", "--provider", provider, f"--secret={secret}"]
        for name, value in headers.items():
            args += ["--header", f"{name}: {value}"]
        args += ["--body-file", path]
        if url is not None:
            args += ["--url", url]
        args += ["--now", str(now if now is not None else int(time.time()))]
        out = subprocess.run(args, capture_output=True, check=False)
        assert out.returncode in (0, 1), f"hooklab verify crashed: {out.stderr!r}"
        text = (out.stdout + out.stderr).decode(errors="replace")
        return out.returncode == 0, text
    finally:
        os.unlink(path)


def headers_of(signed: dict) -> dict[str, str]:
    """The signed headers as a dict, names as hooklab spelled them."""
    return {name: value for name, value in signed["headers"]}


def header(signed: dict, name: str) -> str:
    """One signed header, looked up case-insensitively as an HTTP server would."""
    for n, v in signed["headers"]:
        if n.lower() == name.lower():
            return v
    raise AssertionError(f"hooklab sign did not emit {name}: {signed['headers']}")


def tamper(body: bytes) -> bytes:
    """The body with one byte changed, as a proxy or a re-serialisation would do."""
    return body.replace(b"4200", b"4201", 1) if b"4200" in body else body + b" "


def json_body(event_id: str, event_type: str) -> bytes:
    """A realistic body: pretty-printed, non-ASCII, with a `/` escape that re-serialising drops."""
    doc = (
        "{\n"
        f'  "id": "{event_id}",\n'
        f'  "type": "{event_type}",\n'
        '  "created": 1700000000,\n'
        '  "data": {\n'
        '    "amount": 4200,\n'
        '    "description": "Caf\u00e9 \u2615 \u2014 pago \u00e0 vista",\n'
        '    "url": "https:\\/\\/example.com\\/r"\n'
        "  }\n"
        "}\n"
    )
    return doc.encode("utf-8")


def uid(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


# --------------------------------------------------------------------------------------------
# Stripe (stripe.Webhook.construct_event / WebhookSignature.verify_header)
# --------------------------------------------------------------------------------------------

import stripe  # noqa: E402


def test_stripe_sdk_accepts_hooklab_signature():
    secret = "whsec_" + secrets.token_hex(16)
    event_id = uid("evt")
    body = json_body(event_id, "payment_intent.succeeded")
    signed = hooklab_sign("stripe", secret, body)
    sig = header(signed, "Stripe-Signature")

    assert stripe.WebhookSignature.verify_header(body.decode(), sig, secret, tolerance=300)
    event = stripe.Webhook.construct_event(body, sig, secret)
    assert event.id == event_id, "the SDK parses the same event hooklab signed"


def test_stripe_sdk_rejects_tampered_body():
    secret = "whsec_" + secrets.token_hex(16)
    body = json_body(uid("evt"), "charge.refunded")
    sig = header(hooklab_sign("stripe", secret, body), "Stripe-Signature")
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(tamper(body), sig, secret)
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(body, sig, secret + "x")


def test_hooklab_accepts_stripe_sdk_signature():
    secret = "whsec_" + secrets.token_hex(16)
    body = json_body(uid("evt"), "invoice.paid")
    now = int(time.time())
    sig = stripe.WebhookSignature.generate_signature_header(body.decode(), secret, timestamp=now)
    ok, out = hooklab_verify("stripe", secret, {"Stripe-Signature": sig}, body, now=now)
    assert ok, f"hooklab rejects a stripe-python signature: {out}"
    ok, out = hooklab_verify("stripe", secret, {"Stripe-Signature": sig}, tamper(body), now=now)
    assert not ok, f"hooklab accepts a tampered body: {out}"


# --------------------------------------------------------------------------------------------
# Svix (svix.webhooks.Webhook) and Standard Webhooks (standardwebhooks.Webhook)
# --------------------------------------------------------------------------------------------

import standardwebhooks  # noqa: E402
import svix.webhooks  # noqa: E402
from standardwebhooks.webhooks import WebhookVerificationError  # noqa: E402


def svix_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def test_svix_sdk_accepts_hooklab_signature():
    secret = svix_secret()
    msg_id = uid("msg")
    body = json_body(uid("evt"), "user.created")
    signed = hooklab_sign("svix", secret, body, msg_id=msg_id)
    assert header(signed, "svix-id") == msg_id, "the message id is the one asked for"
    # Raises on failure.
    svix.webhooks.Webhook(secret).verify(body, headers_of(signed))


def test_svix_sdk_rejects_tampered_body():
    secret = svix_secret()
    body = json_body(uid("evt"), "user.deleted")
    signed = hooklab_sign("svix", secret, body, msg_id=uid("msg"))
    with pytest.raises(WebhookVerificationError):
        svix.webhooks.Webhook(secret).verify(tamper(body), headers_of(signed))


def test_standardwebhooks_sdk_accepts_hooklab_signature():
    secret = svix_secret()
    msg_id = uid("msg")
    body = json_body(uid("evt"), "invoice.paid")
    signed = hooklab_sign("standard-webhooks", secret, body, msg_id=msg_id)
    assert header(signed, "webhook-id") == msg_id
    parsed = standardwebhooks.Webhook(secret).verify(body, headers_of(signed))
    assert parsed["type"] == "invoice.paid"


def test_standardwebhooks_sdk_rejects_tampered_body():
    secret = svix_secret()
    body = json_body(uid("evt"), "invoice.paid")
    signed = hooklab_sign("standard-webhooks", secret, body, msg_id=uid("msg"))
    with pytest.raises(WebhookVerificationError):
        standardwebhooks.Webhook(secret).verify(tamper(body), headers_of(signed))
    # A signature made with another endpoint's secret must not pass either.
    with pytest.raises(WebhookVerificationError):
        standardwebhooks.Webhook(svix_secret()).verify(body, headers_of(signed))


def test_hooklab_accepts_standardwebhooks_sdk_signature():
    secret = svix_secret()
    body = json_body(uid("evt"), "invoice.paid")
    msg_id = uid("msg")
    now = int(time.time())
    sig = standardwebhooks.Webhook(secret).sign(
        msg_id, datetime.fromtimestamp(now, tz=timezone.utc), body.decode()
    )
    hdrs = {"webhook-id": msg_id, "webhook-timestamp": str(now), "webhook-signature": sig}
    ok, out = hooklab_verify("standard-webhooks", secret, hdrs, body, now=now)
    assert ok, f"hooklab rejects a standardwebhooks signature: {out}"
    ok, out = hooklab_verify("standard-webhooks", secret, hdrs, tamper(body), now=now)
    assert not ok, f"hooklab accepts a tampered body: {out}"


def test_hooklab_accepts_svix_sdk_signature():
    secret = svix_secret()
    body = json_body(uid("evt"), "user.created")
    msg_id = uid("msg")
    now = int(time.time())
    sig = svix.webhooks.Webhook(secret).sign(
        msg_id, datetime.fromtimestamp(now, tz=timezone.utc), body.decode()
    )
    hdrs = {"svix-id": msg_id, "svix-timestamp": str(now), "svix-signature": sig}
    ok, out = hooklab_verify("svix", secret, hdrs, body, now=now)
    assert ok, f"hooklab rejects a svix signature: {out}"


# --------------------------------------------------------------------------------------------
# Slack (slack_sdk.signature.SignatureVerifier)
# --------------------------------------------------------------------------------------------

from slack_sdk.signature import SignatureVerifier  # noqa: E402


def test_slack_sdk_accepts_hooklab_signature():
    secret = secrets.token_hex(16)
    body = json_body(uid("Ev"), "event_callback")
    signed = hooklab_sign("slack", secret, body)
    assert SignatureVerifier(secret).is_valid_request(body, headers_of(signed))


def test_slack_sdk_accepts_hooklab_signature_on_form_body():
    # Slash commands arrive form-encoded; the signature is over exactly those bytes.
    secret = secrets.token_hex(16)
    body = b"token=x&team_id=T1&command=%2Fpay&text=caf%C3%A9+%E2%98%95&response_url=https%3A%2F%2Fhooks.slack.com%2Fx"
    signed = hooklab_sign("slack", secret, body, content_type="application/x-www-form-urlencoded")
    assert SignatureVerifier(secret).is_valid_request(body, headers_of(signed))


def test_slack_sdk_rejects_tampered_body():
    secret = secrets.token_hex(16)
    body = json_body(uid("Ev"), "event_callback")
    signed = hooklab_sign("slack", secret, body)
    assert not SignatureVerifier(secret).is_valid_request(tamper(body), headers_of(signed))


def test_hooklab_accepts_slack_sdk_signature():
    secret = secrets.token_hex(16)
    body = json_body(uid("Ev"), "event_callback")
    now = int(time.time())
    sig = SignatureVerifier(secret).generate_signature(timestamp=str(now), body=body)
    hdrs = {"X-Slack-Request-Timestamp": str(now), "X-Slack-Signature": sig}
    ok, out = hooklab_verify("slack", secret, hdrs, body, now=now)
    assert ok, f"hooklab rejects a slack_sdk signature: {out}"
    ok, out = hooklab_verify("slack", secret, hdrs, tamper(body), now=now)
    assert not ok, f"hooklab accepts a tampered body: {out}"


# --------------------------------------------------------------------------------------------
# Twilio (twilio.request_validator.RequestValidator): form POST, and JSON with bodySHA256
# --------------------------------------------------------------------------------------------

from twilio.request_validator import RequestValidator  # noqa: E402


class MultiDict(dict):
    """A form as a web framework hands it to the validator: repeated keys kept (``getall``)."""

    def __init__(self, pairs):
        super().__init__()
        self._pairs = list(pairs)
        for k, v in self._pairs:
            self.setdefault(k, v)

    def getall(self, key):
        return [v for k, v in self._pairs if k == key]


TWILIO_FORM = (
    b"AccountSid=AC0123456789abcdef0123456789abcdef&CallSid=CA42&From=%2B14155550100"
    b"&To=%2B5511999990000&Body=Ol%C3%A1+mundo+%E2%98%95&MediaUrl=b&MediaUrl=a&MediaUrl=b"
)
TWILIO_URL = "https://hooks.example.com/twilio/sms?tenant=acme&x=1"


def test_twilio_sdk_accepts_hooklab_form_signature():
    token = secrets.token_hex(16)
    signed = hooklab_sign(
        "twilio", token, TWILIO_FORM, url=TWILIO_URL,
        content_type="application/x-www-form-urlencoded",
    )
    sig = header(signed, "X-Twilio-Signature")
    params = MultiDict(parse_qsl(TWILIO_FORM.decode(), keep_blank_values=True))
    assert RequestValidator(token).validate(TWILIO_URL, params, sig)


def test_twilio_sdk_rejects_tampered_form():
    token = secrets.token_hex(16)
    signed = hooklab_sign(
        "twilio", token, TWILIO_FORM, url=TWILIO_URL,
        content_type="application/x-www-form-urlencoded",
    )
    sig = header(signed, "X-Twilio-Signature")
    tampered = TWILIO_FORM.replace(b"CallSid=CA42", b"CallSid=CA43")
    params = MultiDict(parse_qsl(tampered.decode(), keep_blank_values=True))
    assert not RequestValidator(token).validate(TWILIO_URL, params, sig)
    # The URL is signed too: another path must fail.
    params = MultiDict(parse_qsl(TWILIO_FORM.decode(), keep_blank_values=True))
    assert not RequestValidator(token).validate(TWILIO_URL.replace("/sms", "/voice"), params, sig)


def test_twilio_sdk_accepts_hooklab_json_body_sha256():
    token = secrets.token_hex(16)
    body = json_body(uid("EV"), "com.twilio.messaging.message.delivered")
    base_url = "https://hooks.example.com/twilio/events"
    signed = hooklab_sign("twilio", token, body, url=base_url, content_type="application/json")
    signed_url = signed.get("url")
    assert signed_url and "bodySHA256=" in signed_url, f"a JSON body is bound via the URL: {signed}"
    sig = header(signed, "X-Twilio-Signature")
    assert RequestValidator(token).validate(signed_url, body.decode(), sig)


def test_twilio_sdk_rejects_tampered_json_body():
    token = secrets.token_hex(16)
    body = json_body(uid("EV"), "com.twilio.messaging.message.delivered")
    signed = hooklab_sign(
        "twilio", token, body, url="https://hooks.example.com/twilio/events",
        content_type="application/json",
    )
    sig = header(signed, "X-Twilio-Signature")
    assert not RequestValidator(token).validate(signed["url"], tamper(body).decode(), sig)


def test_hooklab_accepts_twilio_sdk_form_signature():
    token = secrets.token_hex(16)
    params = MultiDict(parse_qsl(TWILIO_FORM.decode(), keep_blank_values=True))
    sig = RequestValidator(token).compute_signature(TWILIO_URL, params)
    hdrs = {"Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": sig}
    ok, out = hooklab_verify("twilio", token, hdrs, TWILIO_FORM, url=TWILIO_URL)
    assert ok, f"hooklab rejects a twilio-python signature: {out}"
    tampered = TWILIO_FORM.replace(b"CallSid=CA42", b"CallSid=CA43")
    ok, out = hooklab_verify("twilio", token, hdrs, tampered, url=TWILIO_URL)
    assert not ok, f"hooklab accepts a tampered form: {out}"


# --------------------------------------------------------------------------------------------
# Razorpay (razorpay.Client(...).utility.verify_webhook_signature)
# --------------------------------------------------------------------------------------------

import razorpay  # noqa: E402
from razorpay.errors import SignatureVerificationError as RazorpaySignatureError  # noqa: E402


def razorpay_utility():
    # The client is only a holder of API credentials here; no request is made.
    client = razorpay.Client(auth=("rzp_test_" + secrets.token_hex(7), secrets.token_hex(12)))
    return client.utility


def test_razorpay_sdk_accepts_hooklab_signature():
    secret = secrets.token_hex(12)
    body = json_body(uid("pay"), "payment.captured")
    signed = hooklab_sign("razorpay", secret, body)
    sig = header(signed, "X-Razorpay-Signature")
    assert razorpay_utility().verify_webhook_signature(body.decode(), sig, secret)


def test_razorpay_sdk_rejects_tampered_body():
    secret = secrets.token_hex(12)
    body = json_body(uid("pay"), "payment.captured")
    sig = header(hooklab_sign("razorpay", secret, body), "X-Razorpay-Signature")
    with pytest.raises(RazorpaySignatureError):
        razorpay_utility().verify_webhook_signature(tamper(body).decode(), sig, secret)


# --------------------------------------------------------------------------------------------
# Paddle Billing (paddle_billing.Notifications.Verifier): 5-second default tolerance
# --------------------------------------------------------------------------------------------

from paddle_billing.Notifications import Secret as PaddleSecret  # noqa: E402
from paddle_billing.Notifications import Verifier as PaddleVerifier  # noqa: E402


class PaddleRequest:
    """The shape the Verifier reads: ``headers.get(name)`` and raw ``body`` bytes."""

    def __init__(self, headers: dict[str, str], body: bytes):
        self.headers = headers
        self.body = body


def paddle_secret() -> str:
    return "pdl_ntfset_01" + secrets.token_hex(12) + "_" + secrets.token_urlsafe(24)


@pytest.fixture
def paddle_checks_time(monkeypatch):
    # TEST_MODE=1 makes the SDK skip its time check; make sure it is not set.
    monkeypatch.delenv("TEST_MODE", raising=False)


def test_paddle_sdk_accepts_hooklab_signature(paddle_checks_time):
    secret = paddle_secret()
    body = json_body(uid("evt"), "transaction.completed")
    signed = hooklab_sign("paddle", secret, body)
    request = PaddleRequest({"Paddle-Signature": header(signed, "Paddle-Signature")}, body)
    assert PaddleVerifier().verify(request, PaddleSecret(secret)) is True


def test_paddle_sdk_rejects_tampered_body(paddle_checks_time):
    secret = paddle_secret()
    body = json_body(uid("evt"), "transaction.completed")
    signed = hooklab_sign("paddle", secret, body)
    request = PaddleRequest({"Paddle-Signature": header(signed, "Paddle-Signature")}, tamper(body))
    assert PaddleVerifier().verify(request, PaddleSecret(secret)) is False


def test_paddle_sdk_rejects_stale_hooklab_signature(paddle_checks_time):
    # Signed 60 s ago: hooklab must put the time it was asked for into the header.
    secret = paddle_secret()
    body = json_body(uid("evt"), "transaction.completed")
    signed = hooklab_sign("paddle", secret, body, now=int(time.time()) - 60)
    request = PaddleRequest({"Paddle-Signature": header(signed, "Paddle-Signature")}, body)
    assert PaddleVerifier().verify(request, PaddleSecret(secret)) is False
    assert PaddleVerifier(maximum_variance=120).verify(request, PaddleSecret(secret)) is True


# --------------------------------------------------------------------------------------------
# `hooklab trigger`: every template of every provider with an official Python SDK
# --------------------------------------------------------------------------------------------


def trigger_types(provider: str) -> list[str]:
    """The event types ``hooklab trigger --list --json`` shows for ``provider``."""
    out = subprocess.run(
        [HOOKLAB_BIN, "trigger", "--list", "--json", provider], capture_output=True, check=False
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    [entry] = json.loads(out.stdout)
    assert entry["event_types"], f"{provider} has templates"
    return entry["event_types"]


def hooklab_trigger(provider: str, event: str, secret: str, *, to: str | None = None) -> dict:
    """``hooklab trigger P E --print --json``: url, headers, body (str), event id/type/object."""
    to = to or f"http://127.0.0.1:8787/{provider}"
    args = [HOOKLAB_BIN, "trigger", provider, event, f"--secret={secret}", "--to", to]
    out = subprocess.run(args + ["--print", "--json"], capture_output=True, check=False)
    assert out.returncode == 0, f"hooklab trigger failed: {out.stderr.decode(errors='replace')}"
    printed = json.loads(out.stdout)
    printed["raw"] = printed["body"].encode("utf-8")
    return printed


@pytest.mark.parametrize("event_type", trigger_types("stripe"))
def test_trigger_stripe_templates_construct_with_stripe_python(event_type):
    secret = "whsec_" + secrets.token_hex(16)
    sent = hooklab_trigger("stripe", event_type, secret)
    event = stripe.Webhook.construct_event(sent["raw"], header(sent, "Stripe-Signature"), secret)
    assert event.type == event_type
    assert event.id == sent["event_id"]
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(sent["raw"], header(sent, "Stripe-Signature"), secret + "x")


@pytest.mark.parametrize(
    "provider,event_type",
    [(p, t) for p in ("svix", "clerk", "resend") for t in trigger_types(p)],
)
def test_trigger_svix_family_templates_verify_with_svix(provider, event_type):
    secret = svix_secret()
    sent = hooklab_trigger(provider, event_type, secret)
    svix.webhooks.Webhook(secret).verify(sent["raw"], headers_of(sent))  # raises on failure
    assert json.loads(sent["raw"])["type"] == sent["event_type"]
    assert header(sent, "svix-id") == sent["event_id"]
    with pytest.raises(WebhookVerificationError):
        svix.webhooks.Webhook(svix_secret()).verify(sent["raw"], headers_of(sent))


@pytest.mark.parametrize(
    "provider,event_type",
    [(p, t) for p in ("standard-webhooks", "supabase") for t in trigger_types(p)],
)
def test_trigger_standard_webhooks_templates_verify_with_standardwebhooks(provider, event_type):
    key = base64.b64encode(secrets.token_bytes(32)).decode()
    # Supabase shows its secret as `v1,whsec_…`; the SDK takes what follows `whsec_`.
    secret = f"v1,whsec_{key}" if provider == "supabase" else f"whsec_{key}"
    sent = hooklab_trigger(provider, event_type, secret)
    parsed = standardwebhooks.Webhook(key).verify(sent["raw"], headers_of(sent))
    assert parsed["type"] == sent["event_type"]
    assert header(sent, "webhook-id") == sent["event_id"]


@pytest.mark.parametrize("event_type", trigger_types("slack"))
def test_trigger_slack_templates_verify_with_slack_sdk(event_type):
    secret = secrets.token_hex(16)
    sent = hooklab_trigger("slack", event_type, secret)
    assert SignatureVerifier(secret).is_valid_request(sent["raw"], headers_of(sent))
    assert json.loads(sent["raw"])["type"] == event_type
    assert not SignatureVerifier(secret + "x").is_valid_request(sent["raw"], headers_of(sent))


@pytest.mark.parametrize("event_type", trigger_types("twilio"))
def test_trigger_twilio_templates_validate_with_twilio_python(event_type):
    token = secrets.token_hex(16)
    sent = hooklab_trigger("twilio", event_type, token)
    assert "bodySHA256=" in sent["url"], f"a JSON body is bound through the URL: {sent['url']}"
    sig = header(sent, "X-Twilio-Signature")
    assert RequestValidator(token).validate(sent["url"], sent["body"], sig)
    assert not RequestValidator(token).validate(sent["url"], sent["body"] + " ", sig)


@pytest.mark.parametrize("event_type", trigger_types("razorpay"))
def test_trigger_razorpay_templates_verify_with_razorpay(event_type):
    secret = secrets.token_hex(12)
    sent = hooklab_trigger("razorpay", event_type, secret)
    sig = header(sent, "X-Razorpay-Signature")
    assert razorpay_utility().verify_webhook_signature(sent["body"], sig, secret)
    assert header(sent, "X-Razorpay-Event-Id") == sent["event_id"]


@pytest.mark.parametrize("event_type", trigger_types("paddle"))
def test_trigger_paddle_templates_verify_with_paddle_python(event_type, paddle_checks_time):
    secret = paddle_secret()
    sent = hooklab_trigger("paddle", event_type, secret)
    request = PaddleRequest({"Paddle-Signature": header(sent, "Paddle-Signature")}, sent["raw"])
    assert PaddleVerifier().verify(request, PaddleSecret(secret)) is True
    body = json.loads(sent["raw"])
    assert body["event_type"] == event_type
    assert body["data"]["id"] == sent["object_id"]
    assert PaddleVerifier().verify(request, PaddleSecret(paddle_secret())) is False
