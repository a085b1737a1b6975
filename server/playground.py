"""GraphiQL served from the app itself: pinned npm assets, no CDN, so it renders offline.

``make playground`` (a dependency of ``make serve`` and ``make test``) runs ``npm ci`` in
``playground/``, whose ``package.json`` pins React and GraphiQL; the app serves four files
from the resulting ``node_modules``.
"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

__all__ = ["ASSETS", "asset", "assets_dir", "page"]

ASSETS = {
    "react.js": "react/umd/react.production.min.js",
    "react-dom.js": "react-dom/umd/react-dom.production.min.js",
    "graphiql.js": "graphiql/graphiql.min.js",
    "graphiql.css": "graphiql/graphiql.min.css",
}

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Edgewise GraphiQL</title>
  <link rel="stylesheet" href="/playground/graphiql.css">
  <style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="/playground/react.js"></script>
  <script src="/playground/react-dom.js"></script>
  <script src="/playground/graphiql.js"></script>
  <script>
    const fetcher = GraphiQL.createFetcher({ url: window.location.pathname });
    const defaultQuery = `{
  user(id: "alice") {
    name
    products { product { id name } via { id name } }
  }
}`;
    // A link shares a query: ?query=…&variables=…&operationName=… fill the editors, and every
    // edit is written back to the address bar (headers never are: they may hold a token).
    const shared = {};
    const search = new URLSearchParams(window.location.search);
    for (const name of ["query", "variables", "operationName"]) {
      if (search.has(name)) shared[name] = search.get(name);
    }
    const remember = (name) => (value) => {
      if (value) shared[name] = value; else delete shared[name];
      const next = new URLSearchParams(shared).toString();
      history.replaceState(null, "", window.location.pathname + (next ? "?" + next : ""));
    };
    ReactDOM.createRoot(document.getElementById("graphiql")).render(
      React.createElement(GraphiQL, {
        fetcher,
        defaultQuery,
        query: shared.query,
        variables: shared.variables,
        operationName: shared.operationName,
        onEditQuery: remember("query"),
        onEditVariables: remember("variables"),
        onEditOperationName: remember("operationName"),
      })
    );
  </script>
</body>
</html>
"""

MISSING = """<!doctype html><html><body><h1>Playground assets are not installed</h1>
<p>Run <code>make playground</code> (needs npm), or set EDGEWISE_PLAYGROUND_DIR to a
node_modules folder holding react@18, react-dom@18 and graphiql@3.</p></body></html>"""


def assets_dir() -> Path:
    default = Path(__file__).resolve().parent.parent / "playground" / "node_modules"
    return Path(os.environ.get("EDGEWISE_PLAYGROUND_DIR", default))


def page() -> Response:
    if not all((assets_dir() / path).is_file() for path in ASSETS.values()):
        return HTMLResponse(MISSING, status_code=503)
    return HTMLResponse(PAGE)


async def asset(request: Request) -> Response:
    path = ASSETS.get(request.path_params["name"])
    production = request.app.state.settings.production
    if production or path is None or not (assets_dir() / path).is_file():
        raise HTTPException(404)
    return FileResponse(assets_dir() / path, headers={"Cache-Control": "public, max-age=86400"})
