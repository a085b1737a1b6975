"""GraphiQL served from the app itself: pinned npm assets, no CDN, so it renders offline.

``playground/package.json`` pins React and GraphiQL. An installed wheel carries the four files
the app serves in ``server/http/playground_assets/`` (built at packaging time by
``tools/build_playground.py``); a checkout serves them from ``playground/node_modules``, which
``make playground`` (a dependency of ``make serve`` and ``make test``) fills with ``npm ci``.
"""

from __future__ import annotations

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
<p>In a checkout, run <code>make playground</code> (needs npm); an installed wheel carries
them. Or set EDGEWISE_PLAYGROUND_DIR to a node_modules folder holding react@18, react-dom@18
and graphiql@3.</p></body></html>"""

PACKAGED = Path(__file__).resolve().parent / "playground_assets"  # in an installed wheel
CHECKOUT = Path(__file__).resolve().parents[2] / "playground" / "node_modules"


def assets_dir(configured: Path | None = None) -> Path:
    """``configured`` (``EDGEWISE_PLAYGROUND_DIR``) if set, else the wheel's copy, else the
    checkout's."""
    if configured is not None:
        return configured
    return PACKAGED if PACKAGED.is_dir() else CHECKOUT


def page(configured: Path | None = None) -> Response:
    if not all((assets_dir(configured) / path).is_file() for path in ASSETS.values()):
        return HTMLResponse(MISSING, status_code=503)
    return HTMLResponse(PAGE)


async def asset(request: Request) -> Response:
    path = ASSETS.get(request.path_params["name"])
    settings = request.app.state.settings
    folder = assets_dir(settings.playground_dir)
    if settings.production or path is None or not (folder / path).is_file():
        raise HTTPException(404)
    return FileResponse(folder / path, headers={"Cache-Control": "public, max-age=86400"})
