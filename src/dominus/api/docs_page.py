"""The API's docs page (`/api/v1/docs`): Swagger UI from the copy shipped in this package
(docs_assets/, see its README), so the page works without the internet, and its Authorize
button takes the bearer token the document declares (openapi.py)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS = "docs_assets"
# What the page asks of Swagger UI beyond FastAPI's defaults: no online validator badge (it
# would send the document to validator.swagger.io), and the token typed into Authorize is not
# kept in the browser's storage once the page is closed.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None, "persistAuthorization": False}


def install_docs(app: FastAPI, *, docs_url: str, openapi_url: str) -> str:
    """Serve the docs page at `docs_url` and its assets below it; returns the assets' path
    prefix (public, like the page: the bearer check leaves it alone)."""
    assets_url = f"{docs_url}/assets"

    async def docs_page(_request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} API",
            swagger_js_url=f"{assets_url}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets_url}/swagger-ui.css",
            swagger_favicon_url=f"{assets_url}/favicon-32x32.png",
            swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
        )

    app.add_route(docs_url, docs_page, include_in_schema=False)
    app.mount(assets_url, StaticFiles(directory=str(files("dominus.api") / ASSETS)))
    return assets_url
