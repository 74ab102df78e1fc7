"""Amazon Bedrock Converse / ConverseStream.

Wire reference: Amazon Bedrock API reference, "Converse" and "ConverseStream"
(``Message``, ``ContentBlock``, ``ToolConfiguration``/``ToolChoice``,
``ToolResultBlock.status``, ``ConverseStreamOutput`` events ``messageStart``,
``contentBlockStart``/``Delta``/``Stop``, ``messageStop``, ``metadata`` and the
modelled exceptions), sent to ``{endpoint_url}/model/{modelId}/converse``
(``/converse-stream``, framed as ``application/vnd.amazon.eventstream``).

Authentication is SigV4 (service ``bedrock``) from ``aws_access_key_id``/
``aws_secret_access_key``/``aws_session_token`` or the standard ``AWS_*``
variables, or a Bedrock API key (``api_key=`` or ``AWS_BEARER_TOKEN_BEDROCK``)
as a bearer token. Profiles, SSO and instance roles are not read.

Documented emulation: Converse has no "none" tool choice. With
``tool_choice="none"`` the tools stay in ``toolConfig`` (Bedrock requires them
whenever the history holds tool blocks), the system prompt asks for a text
answer, and any tool call the model makes anyway is dropped from the reply.
Converse has no parallel-calls switch: ``parallel_tool_calls=False`` is not
sent (the runtime still runs the calls one by one).
"""

from __future__ import annotations

import os
from typing import Any, Unpack
from urllib.parse import quote, urlsplit

import httpx

from openprogram.exceptions import ConfigurationError, LLMError, LLMErrorReason, UserError
from openprogram.messages import AssistantMessage
from openprogram.providers._converse import (
    CONVERSE_USAGE,
    ERRORS,
    NO_TOOL_INSTRUCTION,
    STOP,
    BedrockStream,
    apply_none,
    bedrock_messages,
    tool_config,
    whole_block,
)
from openprogram.providers._eventstream import EventStreamDecoder
from openprogram.providers._http import error_fields, is_context_length, retry_after_s
from openprogram.providers._http_provider import Decoder, HttpOptions, HttpProvider, StreamParser
from openprogram.providers._reply import ReplyBuilder
from openprogram.providers._sigv4 import AwsCredentials, credentials_from_env, sign
from openprogram.providers._wire import no_seed, usage_with_cache
from openprogram.providers.base import ProviderRequest

__all__ = ["NO_TOOL_INSTRUCTION", "BedrockProvider"]


class BedrockProvider(HttpProvider):
    """Bedrock Converse over httpx with SigV4 (see the module docstring).

    Args:
        model: Model or inference-profile id, e.g. ``"anthropic.claude-3-5-haiku-20241022-v1:0"``.
        api_key: A Bedrock API key (bearer); default ``AWS_BEARER_TOKEN_BEDROCK``.
            Without one, requests are SigV4-signed.
        base_url: Same as ``endpoint_url`` (give one of them).
        client: An ``httpx.AsyncClient`` to use (never closed by the provider).
        stream: Use ConverseStream (``False``: Converse).
        max_retries: Retries of retryable failures (throttling, 5xx, ...).
        timeout: Seconds per read (connect capped at 10 s) or an ``httpx.Timeout``.
        region: AWS region; default ``AWS_REGION``, else ``AWS_DEFAULT_REGION``.
        endpoint_url: Host root; default ``https://bedrock-runtime.{region}.amazonaws.com``.
        aws_access_key_id: Access key; default ``AWS_ACCESS_KEY_ID``.
        aws_secret_access_key: Secret key; default ``AWS_SECRET_ACCESS_KEY``.
        aws_session_token: Session token of temporary credentials; default ``AWS_SESSION_TOKEN``.
        max_tokens: ``inferenceConfig.maxTokens``; ``None`` leaves the model's default.
        backoff_base_s: First retry's maximum delay; doubles per retry.
        backoff_max_s: Cap of the retry delay.
        extra_body: Extra request fields, e.g. ``{"inferenceConfig": {"temperature": 0}}``.
        extra_headers: Extra HTTP headers (signed with the others).
        name: Provider id in events and errors (default ``"bedrock"``).
    """

    default_name = "bedrock"
    key_env = "AWS_BEARER_TOKEN_BEDROCK"

    def __init__(
        self,
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        max_tokens: int | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        base_url = options.get("base_url")
        if base_url and endpoint_url and base_url.rstrip("/") != endpoint_url.rstrip("/"):
            raise UserError(
                "BedrockProvider got both base_url and endpoint_url with different values; "
                "pass only endpoint_url"
            )
        if bool(aws_access_key_id) != bool(aws_secret_access_key):
            raise UserError(
                "BedrockProvider needs aws_access_key_id and aws_secret_access_key together"
            )
        options["base_url"] = endpoint_url or base_url
        super().__init__(**options)
        self._region = region
        self._explicit = (
            AwsCredentials(aws_access_key_id, aws_secret_access_key or "", aws_session_token)
            if aws_access_key_id
            else None
        )
        self._max_tokens = max_tokens

    @property
    def base_url(self) -> str:
        """The endpoint requests go to (derived from the region when not given)."""
        return self._endpoint()

    def __repr__(self) -> str:
        return (
            f"BedrockProvider(model={self._model!r}, region={self._region!r}, "
            f"stream={self._stream})"
        )

    # -- configuration, resolved at request time -----------------------------------------

    def _resolved_region(self) -> str:
        region = (
            self._region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        )
        if not region:
            raise ConfigurationError(
                "bedrock: no AWS region: set the AWS_REGION environment variable or pass "
                "region=... to BedrockProvider"
            )
        return region

    def _endpoint(self) -> str:
        if self._base_url:
            return self._base_url
        return f"https://bedrock-runtime.{self._resolved_region()}.amazonaws.com"

    def _credentials(self) -> AwsCredentials:
        creds = self._explicit or credentials_from_env()
        if creds is None:
            raise ConfigurationError(
                "bedrock: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                "(plus AWS_SESSION_TOKEN for temporary credentials) or AWS_BEARER_TOKEN_BEDROCK, "
                "or pass aws_access_key_id=/aws_secret_access_key= or api_key= to BedrockProvider"
            )
        return creds

    def _secrets(self) -> list[str | None]:
        creds = self._explicit or credentials_from_env()
        extra = [creds.secret_access_key, creds.session_token] if creds else []
        return [self._api_key, self._env_key(), *extra]

    # -- hooks ---------------------------------------------------------------------------

    def _url(self, model: str, stream: bool) -> str:
        action = "converse-stream" if stream else "converse"
        return f"{self._endpoint()}/model/{quote(model, safe='')}/{action}"

    def _auth_headers(self) -> dict[str, str]:
        accept = "application/vnd.amazon.eventstream" if self._stream else "application/json"
        bearer = self._api_key or self._env_key()
        if bearer:
            return {"accept": accept, "authorization": f"Bearer {bearer}"}
        self._credentials()  # fail before the first attempt when there are none
        self._resolved_region()
        return {"accept": accept}

    def _sign(self, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        if "authorization" in headers:
            return headers
        signed = {"host": urlsplit(url).netloc, **headers}
        return sign(
            method="POST",
            url=url,
            headers=signed,
            body=body,
            credentials=self._credentials(),
            region=self._resolved_region(),
            service="bedrock",
        )

    def _body(self, request: ProviderRequest, model: str, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": bedrock_messages(request.messages, model)}
        tools, config = tool_config(request)
        system = request.system or ""
        if config is not None and request.tool_choice == "none" and tools:
            system = f"{system}\n\n{NO_TOOL_INSTRUCTION}".strip()
        if system:
            body["system"] = [{"text": system}]
        if config is not None:
            body["toolConfig"] = config
        no_seed(request, "Bedrock Converse")
        inference: dict[str, Any] = {}
        max_tokens = request.max_tokens or self._max_tokens
        if max_tokens is not None:
            inference["maxTokens"] = max_tokens
        if request.temperature is not None:
            inference["temperature"] = request.temperature
        if inference:
            body["inferenceConfig"] = inference
        return body

    def _parse(self, data: Any, request: ProviderRequest) -> AssistantMessage:
        builder = ReplyBuilder()
        if isinstance(data, dict):
            message = (data.get("output") or {}).get("message") or {}
            for index, block in enumerate(message.get("content") or []):
                whole_block(builder, index, block)
            builder.usage = usage_with_cache(data.get("usage") or {}, CONVERSE_USAGE)
            builder.finish(STOP.get(str(data.get("stopReason")), "stop"))
        return builder.build()

    def _stream_parser(self, request: ProviderRequest) -> StreamParser:
        return BedrockStream()

    def _finalize(self, message: AssistantMessage, request: ProviderRequest) -> AssistantMessage:
        return apply_none(message, request)

    def _decoder(self) -> Decoder:
        return EventStreamDecoder()

    def _classify(self, status: int, headers: httpx.Headers, body: bytes) -> LLMError:
        message, code = error_fields(body)
        kind = (headers.get("x-amzn-errortype") or code or "").split(":")[0].split("#")[-1]
        reason, retryable = ERRORS.get(kind.lower(), _by_status(status))
        if reason == "invalid_request" and is_context_length(message):
            reason = "context_length"
        return LLMError(
            message,
            reason=reason,
            retryable=retryable,
            http_status=status,
            retry_after_s=retry_after_s(headers),
            provider_message=message,
        )


def _by_status(status: int) -> tuple[LLMErrorReason, bool]:
    if status in (401, 403):
        return "auth", False
    if status == 429:
        return "rate_limit", True
    if status in (408, 409) or status >= 500:
        return ("timeout" if status == 408 else "server"), True
    return "invalid_request", False
