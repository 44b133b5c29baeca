// The sandbox of svc's reproductions (docs/repro-kit.md, "The runner"): every test the runner
// runs takes `test` from here. Each request outside the staging origin is aborted and counted;
// what goes wrong in the page is written down for svc's verdict. Nothing here reads the
// report: the origin and the file to write come from the runner's environment.
import { appendFileSync } from 'node:fs';
import { test as base, expect } from '@playwright/test';

const origin = process.env.SVC_REPRO_ORIGIN;
const progress = process.env.SVC_REPRO_PROGRESS;

function note(record) {
  appendFileSync(progress, JSON.stringify(record) + '\n');
}

function onStaging(url) {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

export const test = base.extend({
  sandbox: [
    async ({ context }, use) => {
      const blocked = new Set();
      await context.route('**/*', (route) => {
        const request = route.request();
        if (onStaging(request.url())) return route.continue();
        blocked.add(request);
        note({ blocked: request.url().slice(0, 300) });
        return route.abort('blockedbyclient');
      });
      await context.routeWebSocket(/.*/, (socket) => {
        if (onStaging(socket.url().replace(/^ws/, 'http'))) return socket.connectToServer();
        note({ blocked: socket.url().slice(0, 300) });
        return socket.close();
      });
      context.on('weberror', (error) => {
        const thrown = error.error();
        note({ console: { level: 'error', message: `${thrown.name}: ${thrown.message}`,
                          stack: thrown.stack || '' } });
      });
      context.on('console', (message) => {
        if (message.type() !== 'error') return;
        note({ console: { level: 'error', message: message.text(),
                          source: message.location().url || '' } });
      });
      context.on('response', (response) => {
        if (response.status() < 400) return;
        note({ request: { method: response.request().method(), url: response.url(),
                          status: response.status() } });
      });
      context.on('requestfailed', (request) => {
        if (blocked.has(request)) return;
        note({ request: { method: request.method(), url: request.url(), status: 0,
                          error: request.failure()?.errorText || 'failed' } });
      });
      await use();
    },
    { auto: true },
  ],
});

export { expect };
