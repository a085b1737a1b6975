// GraphiQL in headless Chromium (driven by puppeteer-core) against the served API.
//   node graphiql.mjs API_ORIGIN LINK CHROMIUM PROFILE_DIR [CHROMIUM_FLAG...]
// 1. A page on another origin (a tiny server started here, on a free port) embeds GraphiQL, using
//    the API's own GraphiQL files, and runs a query against the API: a cross-origin call (CORS).
// 2. The API's playground opened from a shared link (LINK: /graphql?query=…&variables=…&
//    operationName=…, so with Chromium's own Accept header) shows that query, those variables
//    and that operation in its editors, and runs them.
// Prints one JSON object: the other origin, and for each page the editors' text as the DOM
// shows it, the response shown, and the page's errors.
import { createServer } from 'node:http';
import puppeteer from 'puppeteer-core';

const [api, link, chromium, profile, ...flags] = process.argv.slice(2);
if (!profile) {
  console.error('usage: node graphiql.mjs API_ORIGIN LINK CHROMIUM PROFILE_DIR [FLAG...]');
  process.exit(2);
}
const TIMEOUT = 20000;

const embedding = `<!doctype html>
<html><head><meta charset="utf-8"><title>another origin</title>
<link rel="stylesheet" href="${api}/playground/graphiql.css">
<style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style></head>
<body><div id="graphiql"></div>
<script src="${api}/playground/react.js"></script>
<script src="${api}/playground/react-dom.js"></script>
<script src="${api}/playground/graphiql.js"></script>
<script>
  const fetcher = GraphiQL.createFetcher({ url: ${JSON.stringify(api + '/graphql')} });
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, { fetcher, query: '{ user(id: "bob") { name } }' })
  );
</script></body></html>`;
const other = createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(embedding);
});
await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${other.address().port}`;

// The editors' text as rendered: CodeMirror's line elements (an empty line holds a U+200B, and
// indentation is shown with no-break spaces).
function editorText(selector) {
  const editor = document.querySelector(selector);
  if (!editor) return null;
  const lines = [...editor.querySelectorAll('.CodeMirror-line')];
  const text = (line) => line.textContent.replaceAll('\u200b', '').replaceAll('\u00a0', ' ');
  return lines.map(text).join('\n');
}

async function run(page, url) {
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('requestfailed', (request) => errors.push(`failed ${request.method()} ${request.url()}`));
  page.on('response', (answer) => {
    const path = new URL(answer.url()).pathname;
    if (answer.status() >= 400 && path !== '/favicon.ico') {
      errors.push(`${answer.status()} ${answer.request().method()} ${answer.url()}`);
    }
  });
  await page.evaluateOnNewDocument(`window.editorText = ${editorText};`);
  await page.goto(url, { waitUntil: 'load', timeout: TIMEOUT });
  await page.waitForSelector('.graphiql-query-editor .CodeMirror-line', { timeout: TIMEOUT });
  const query = await page.evaluate(editorText, '.graphiql-query-editor');
  const variables = await page.evaluate(editorText, '.graphiql-editor-tool .graphiql-editor');
  await page.click('.graphiql-execute-button');
  await page.waitForFunction(() => window.editorText('.graphiql-response'), { timeout: TIMEOUT });
  const shown = await page.evaluate(editorText, '.graphiql-response');
  let response;
  try {
    response = JSON.parse(shown);
  } catch {
    response = shown; // not JSON: GraphiQL shows why the request failed
  }
  return { query, variables, response, location: page.url(), errors };
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  userDataDir: profile,
  headless: true,
  pipe: true,
  args: flags,
});
try {
  const [page] = await browser.pages();
  const embedded = await run(page, `${origin}/`);
  const shared = await run(await browser.newPage(), link);
  process.stdout.write(JSON.stringify({ origin, embedded, shared }) + '\n');
} finally {
  await browser.close();
  other.close();
}
