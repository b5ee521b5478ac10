"""The OpenAPI document, completed with what only the running installation knows: the job types
it accepts and each one's payload schema.

`EnqueueBody` is generic in code (any type, any payload object: the queue validates the payload
against the job type's model). In the document it becomes one alternative per registered job
type, `type` fixed to that name and `payload` described by that type's payload model, so a
client (or a fuzzer) reading the schema knows exactly what `POST /jobs` accepts. Internal types
(enqueued only by their own endpoint, e.g. PIPELINE_RUN by `POST /runs`) are not listed.

The document declares the bearer token (`components.securitySchemes`, Swagger UI's Authorize
button) always; with a token configured every operation requires it, but the public probes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dominus.api.openapi_links import with_links
from dominus.api.request_guards import document_request_guards
from dominus.jobs.registry import HandlerRegistry

COMPONENTS = "#/components/schemas/"
BEARER = "bearerToken"
BEARER_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": "DOMINUS_API_TOKEN (everything), DOMINUS_API_READ_TOKEN (GET only) or "
    "DOMINUS_API_METRICS_TOKEN (/metrics only), when the installation sets them.",
}
# Operations that answer without a token (ADR 0051).
PUBLIC_OPERATIONS = frozenset({"/health", "/ready"})
NO_NUL_PATTERN = "^[^\u0000]*$"


def install_openapi(app: FastAPI, registry: HandlerRegistry, *, token_required: bool) -> None:
    """Replace `app.openapi` by a builder that adds the job types, the links between
    operations and the bearer token (built once, then cached)."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = with_bearer(
                with_links(document_request_guards(with_job_types(document, registry))),
                required=token_required,
            )
        return app.openapi_schema

    replace: Callable[[], dict[str, Any]] = build
    app.openapi = replace  # type: ignore[method-assign]


def with_bearer(document: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """Declare the bearer token; when `required`, on every operation but the public ones."""
    components = document.setdefault("components", {})
    components.setdefault("securitySchemes", {})[BEARER] = BEARER_SCHEME
    if not required:
        return document
    for path, operations in document.get("paths", {}).items():
        public = any(path.endswith(name) for name in PUBLIC_OPERATIONS)
        for operation in operations.values():
            operation["security"] = [] if public else [{BEARER: []}]
    return document


def with_job_types(document: dict[str, Any], registry: HandlerRegistry) -> dict[str, Any]:
    public = sorted((entry for entry in registry if entry.public), key=lambda entry: entry.name)
    if not public:
        return document  # nothing can be enqueued; the generic body stays (any type is a 422)
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    generic = schemas["EnqueueBody"]
    alternatives = []
    for job_type in public:
        payload_schema = forbid_nul(
            job_type.payload_model.model_json_schema(ref_template=COMPONENTS + "{model}")
        )
        schemas.update(payload_schema.pop("$defs", {}))
        name = _component_name(job_type.name)
        schemas[name] = _enqueue_schema(generic, job_type.name, payload_schema)
        alternatives.append({"$ref": COMPONENTS + name})
    schemas["EnqueueBody"] = {
        "title": "EnqueueBody",
        "description": "A job to enqueue: one of the job types this installation accepts.",
        "oneOf": alternatives,
    }
    return document


def _enqueue_schema(generic: dict[str, Any], name: str, payload: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = forbid_nul(copy.deepcopy(generic))
    schema["title"] = f"Enqueue {name}"
    properties = schema["properties"]
    properties["type"] = {"type": "string", "const": name, "description": "The job type."}
    payload.pop("title", None)
    properties["payload"] = payload | {"description": f"The payload of `{name}`."}
    if payload.get("required"):  # the empty default payload would not validate
        schema["required"] = [*schema.get("required", []), "payload"]
    return schema


def forbid_nul(schema: Any) -> Any:
    """Every free string in `schema` gets a pattern excluding NUL, which the queue refuses
    (PostgreSQL cannot store it): the document says what the API accepts."""
    if isinstance(schema, dict):
        for value in schema.values():
            forbid_nul(value)
        free = not any(key in schema for key in ("pattern", "const", "enum", "format"))
        if schema.get("type") == "string" and free:
            schema["pattern"] = NO_NUL_PATTERN
    elif isinstance(schema, list):
        for item in schema:
            forbid_nul(item)
    return schema


def _component_name(job_type: str) -> str:
    words = job_type.replace(".", "_").replace("-", "_").split("_")
    return "Enqueue" + "".join(word.capitalize() for word in words)
