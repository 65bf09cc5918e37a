"""hopforge's tools for verl's tool agent loop: each tool of `hopforge.corpus.tools`, over HTTP.

verl loads these from the `tool_config.yaml` every RL export writes (BUILD/export/rl/verl/):
each entry names `hopforge.export.verl_tools.HopforgeTool`, the tool's JSON schema as hopforge
wrote it, and the URL of a running `hopforge serve-search` over the same index. A call posts its
arguments to `URL/tools/NAME` and gives the model the result text, exactly what the teacher got
in the build; the environment variable `HOPFORGE_SEARCH_URL` overrides the URL (e.g. one search
service per node). A 503 from a busy service is retried after its `Retry-After`; a service that
stays unreachable gives the model an error text naming the URL and the fix (verl's loop turns an
exception into such a text anyway).

verl's own `OpenAIFunctionToolSchema` keeps only `type`, `description` and `enum` of each
property, so `minLength`, `minimum`, `maximum` and `additionalProperties` would not reach the
chat template; `WholeSchema` validates through it and still renders the schema whole.

This module imports verl (it runs inside verl's workers), so it is not imported by hopforge
itself. Install hopforge there without its dependencies (`pip install --no-deps hopforge`).
"""

from __future__ import annotations

import asyncio
import copy
import os
from typing import Any
from uuid import uuid4

import httpx
from pydantic import PrivateAttr
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

URL_ENV = "HOPFORGE_SEARCH_URL"
DEFAULT_URL = "http://127.0.0.1:8900"


class WholeSchema(OpenAIFunctionToolSchema):
    """verl's tool schema model, dumped as the whole JSON schema it was made from."""

    _whole: dict[str, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def of(cls, schema: dict[str, Any]) -> WholeSchema:
        """Validate `schema` as verl does and keep it whole for the chat template."""
        made = cls.model_validate(schema)
        made._whole = copy.deepcopy(schema)
        return made

    def model_dump(self, **_: Any) -> dict[str, Any]:  # type: ignore[override]
        return copy.deepcopy(self._whole)


class HopforgeTool(BaseTool):
    """One of hopforge's tools (its name comes from the schema), served by `serve-search`.

    `config`: `schema` (the tool's JSON schema), `url`, and optionally `timeout_s` (default 60)
    and `retries` (503 answers retried, default 5).
    """

    def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None
                 ) -> None:
        schema = config.get("schema")
        if not isinstance(schema, dict):
            raise TypeError("a hopforge tool needs `config.schema`, its JSON schema: use the "
                             "tool_config.yaml that `hopforge export` writes under rl/verl/")
        self.url = (os.environ.get(URL_ENV) or str(config.get("url") or DEFAULT_URL)).rstrip("/")
        self.timeout_s = float(config.get("timeout_s", 60.0))
        self.retries = int(config.get("retries", 5))
        self._instances: dict[str, dict[str, Any]] = {}
        self._clients: dict[int, httpx.AsyncClient] = {}
        super().__init__(config, WholeSchema.of(schema))

    def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
        return self.tool_schema

    async def create(self, instance_id: str | None = None, **kwargs: Any
                     ) -> tuple[str, ToolResponse]:
        """Start a rollout's use of the tool; `create_kwargs` (qid, ground truth) are kept."""
        instance_id = instance_id or str(uuid4())
        self._instances[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, ToolResponse()

    def _client(self) -> httpx.AsyncClient:
        loop = id(asyncio.get_running_loop())
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = httpx.AsyncClient(
                timeout=self.timeout_s, limits=httpx.Limits(max_connections=256))
        return client

    async def call(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The service's answer to one call: `{"text", "ok", "error", "doc_ids"}`."""
        route = f"{self.url}/tools/{self.name}"
        for attempt in range(self.retries + 1):
            try:
                response = await self._client().post(route, json=parameters)
            except httpx.HTTPError as exc:
                return {"text": f"Error: the search service at {self.url} did not answer "
                                f"({type(exc).__name__}); start `hopforge serve-search BUILD` "
                                f"there or set {URL_ENV}", "ok": False,
                        "error": type(exc).__name__, "doc_ids": []}
            if response.status_code == 503 and attempt < self.retries:
                await asyncio.sleep(float(response.headers.get("Retry-After") or 1))
                continue
            if response.status_code != 200:
                error = response.json().get("error", response.text)
                return {"text": f"Error: {error}", "ok": False, "error": error, "doc_ids": []}
            return dict(response.json())
        raise AssertionError("unreachable")

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
                      ) -> tuple[ToolResponse, float, dict[str, Any]]:
        """Run the call on the service; the text is what the model reads next."""
        result = await self.call(parameters)
        state = self._instances.setdefault(instance_id, {})
        state["last"] = result
        return ToolResponse(text=str(result["text"])), 0.0, {"ok": bool(result["ok"])}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._instances.pop(instance_id, None)
