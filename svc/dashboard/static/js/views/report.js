// One report: what the widget captured, and the team's controls (status, severity, category,
// assignee, delete), which viewers do not get.

import { api, screenshotSource } from "../api.js";
import {
  actionButton, appendTo, badge, confirmDialog, field, form, formatEpochMillis, formatTime, h,
  label, notice, replaceContent, select, zoomableImage,
} from "../dom.js";
import { CATEGORIES, SEVERITIES, STATUSES } from "../constants.js";
import { curlCommand } from "../curl.js";
import { duplicatesPanel } from "./duplicates.js";
import { issuesPanel } from "./integrations.js";
import { reproductionsPanel } from "./reproductions.js";
import { timelinePanel } from "./timeline.js";

export async function reportView(main, context) {
  const report = await api.get(`/reports/${encodeURIComponent(context.params[0])}`);
  const [project, members] = await Promise.all([
    api.get(`/projects/${report.projectId}`),
    api.get(`/projects/${report.projectId}/members`),
  ]);
  const canEdit = project.role !== "viewer";
  const [timeline, issues] = await Promise.all([
    timelinePanel(report, project, members, context.user),
    issuesPanel(report, canEdit, () => timeline.reload()),
  ]);
  if (!context.isCurrent()) return;
  const title = h("h1", {}, h("span", { class: "tracking-id" }, report.trackingId), " ", report.title);
  const description = h("p", { class: "description" }, report.description);
  const badges = h("p", { class: "badges" });
  const details = facts(report, project, members);
  const replay = replayPanel(report);
  const duplicates = duplicatesPanel(report, canEdit, () => changed());
  const reproductions = reproductionsPanel(report, project, canEdit, () => timeline.reload());
  await Promise.all([duplicates.draw(), reproductions.draw()]);
  if (!context.isCurrent()) return;
  // After any save, everything drawn from the report shows the answer's values, and the
  // activity the change added.
  const draw = () => {
    badges.replaceChildren(badge("status", report.status), " ",
      badge("severity", report.severity), " ", h("span", { class: "badge" }, label(report.category)));
    details.show();
  };
  const changed = () => {
    draw();
    timeline.reload();
  };
  draw();
  appendTo(main,
    h("p", { class: "breadcrumb" }, h("a", { href: "/reports" }, "Reports"), " / ",
      h("a", { href: `/reports?project_id=${project.id}` }, project.name)),
    h("div", { class: "page-heading" },
      canEdit ? editableText(title, report, "title", () => report.title, (value) => {
        title.replaceChildren(h("span", { class: "tracking-id" }, report.trackingId), " ", value);
        changed();
      }) : title,
      badges),
    h("div", { class: "report-layout" },
      h("div", { class: "report-main" },
        section("Description", canEdit ? editableText(description, report, "description",
          () => report.description, (value) => { description.textContent = value; changed(); }) : description),
        screenshots(report),
        replay.element,
        section("Console", consoleLog(report.consoleLogs, replay.seek)),
        section("Network", networkLog(report.networkLogs, replay.seek)),
        reproKit(report),
        section("User actions", actionTimeline(report.userActions)),
        section("Metadata", metadataTable(report.metadata)),
        timeline),
      h("aside", { class: "report-side" },
        project.role === "viewer" ? null : editForm(report, members, changed),
        details.element,
        reproductions.element,
        duplicates.element,
        issues,
        canEdit && project.settings.reporterUpdates.enabled ? statusLinkPanel(report) : null,
        project.role === "viewer" ? null : deleteButton(report, context))));
}

// The reporter follows the report on a page of its own (docs/reporter-updates.md); the link
// is theirs, so a member makes a new one only to end the old (and sees it to pass it on).
function statusLinkPanel(report) {
  const shown = h("p", { class: "hint", role: "status" });
  const button = h("button", { type: "button", class: "secondary" }, "New status link");
  button.addEventListener("click", async () => {
    if (!await confirmDialog("Make a new status page link? The reporter's current link stops working.", "Make a new link")) return;
    const made = await api.post(`/reports/${report.id}/status-link`);
    shown.replaceChildren("The reporter's page is now ", h("a", { href: made.url, target: "_blank", rel: "noopener noreferrer" }, made.url));
  });
  return h("section", { class: "panel", "aria-label": "Status page" }, h("h2", {}, "Status page"),
    h("p", { class: "hint" }, "The reporter follows this report on a page of its own, linked in their mails."), button, shown);
}

// Shown as text, with an Edit button that puts a field in its place; Save sends the PATCH.
function editableText(shown, report, field, current, show) {
  const wrapper = h("div", { class: "editable" });
  const editButton = h("button", { type: "button", class: "secondary small",
    "aria-label": `Edit the ${field}` }, "Edit");
  const view = () => wrapper.replaceChildren(shown, editButton);
  editButton.addEventListener("click", () => {
    const input = field === "title"
      ? h("input", { name: field, value: current(), maxlength: 200, required: true, "aria-label": "Title" })
      : h("textarea", { name: field, rows: 6, maxlength: 20000, "aria-label": "Description" }, current());
    const editor = form({ "aria-label": `Edit the ${field}`, class: "edit-in-place" }, [
      input,
      h("div", { class: "actions" },
        h("button", { type: "submit" }, "Save"),
        h("button", { type: "button", class: "secondary", onclick: view }, "Cancel")),
    ], async (values) => {
      Object.assign(report, await api.patch(`/reports/${report.id}`, { [field]: values[field] }));
      show(report[field]);
      view();
    });
    wrapper.replaceChildren(editor);
    input.focus();
  });
  view();
  return wrapper;
}

function section(title, ...content) {
  return h("section", { class: "panel" }, h("h2", {}, title), ...content);
}

function editForm(report, members, changed) {
  const saved = notice("");
  saved.hidden = true;
  const workers = members.filter((member) => member.role !== "viewer");
  const assignees = [["", "Nobody"], ...workers.map((member) => [member.userId, member.name])];
  const edit = form({ class: "panel", "aria-label": "Triage" }, [
    h("h2", {}, "Triage"),
    field("Status", select("status", STATUSES.map((v) => [v, label(v)]), report.status)),
    field("Severity", select("severity", SEVERITIES.map((v) => [v, label(v)]), report.severity)),
    field("Category", select("category", CATEGORIES.map((v) => [v, label(v)]), report.category)),
    field("Assignee", select("assignee_id", assignees, report.assigneeId)),
    h("button", { type: "submit" }, "Save changes"),
    saved,
  ], async (values) => {
    const changes = {};
    for (const name of ["status", "severity", "category"]) {
      if (values[name] !== report[name]) changes[name] = values[name];
    }
    const assignee = values.assignee_id || null;
    if (assignee !== report.assigneeId) changes.assignee_id = assignee;
    const updated = await api.patch(`/reports/${report.id}`, changes);
    Object.assign(report, updated);
    saved.textContent = Object.keys(changes).length ? "Changes saved." : "Nothing to change.";
    saved.hidden = false;
    changed();
  });
  return edit;
}

// An address wraps after "@" and dots, never in the middle of a word.
const breakable = (text) => text.split(/(?<=[@.])/).flatMap((part, index) => index ? [h("wbr"), part] : [part]);

// The Details panel; show() draws it again from the report's current values.
function facts(report, project, members) {
  const names = new Map(members.map((member) => [member.userId, member.name]));
  const list = h("dl", { class: "facts" });
  const show = () => list.replaceChildren(...[
    ["Tracking id", report.trackingId],
    ["Project", project.name],
    ["Status", label(report.status)],
    ["Reporter", report.reporterIdentifier ? breakable(report.reporterIdentifier) : "anonymous"],
    ["Assignee", names.get(report.assigneeId) || "nobody"],
    ["Reported", formatTime(report.createdAt)],
    ["Updated", formatTime(report.updatedAt)],
  ].flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
  return { element: h("section", { class: "panel" }, h("h2", {}, "Details"), list), show };
}

function deleteButton(report, context) {
  return actionButton("Delete report", async () => {
    if (!await confirmDialog(`Delete ${report.trackingId} and its screenshots? This cannot be undone.`, "Delete report")) return;
    await api.delete(`/reports/${report.id}`);
    context.navigate("/reports", { replace: true });
  }, { class: "danger" });
}

function screenshots(report) {
  const pictures = [
    [report.screenshotUrl, "Screenshot"],
    [report.annotatedScreenshotUrl, "Annotated screenshot"],
  ].filter(([key]) => key);
  if (!pictures.length) return null;
  return section("Screenshots", h("div", { class: "screenshots" }, pictures.map(([key, text]) =>
    h("figure", {}, zoomableImage(screenshotSource(key), text), h("figcaption", {}, `${text} (click to enlarge)`)))));
}

function empty(text) {
  return h("p", { class: "empty" }, text);
}

// The replay (docs/replay.md) plays in a sandboxed frame: the recording is untrusted content.
// rrweb draws it in a frame of its own without scripts, under the player's policy, which runs
// only the player's files (rrweb must reach that frame's document, so the player keeps this
// origin). The events go to it by postMessage; `seek` moves it to a moment (a console or
// network row's), and its timeline marks errors, failed requests and clicks.
function replayPanel(report) {
  if (!report.replayUrl) return { element: null, seek: null };
  const frame = h("iframe", { src: "/replay/player", sandbox: "allow-scripts allow-same-origin",
    title: "Replay", class: "replay-frame" });
  const said = h("p", { class: "hint", role: "status" }, "Loading the replay…");
  const marks = [
    ...report.consoleLogs.filter((entry) => String(entry.level).toLowerCase() === "error")
      .map((entry) => ({ timestamp: entry.timestamp, kind: "error", label: `Error: ${entry.message}` })),
    ...report.networkLogs.filter(failed)
      .map((entry) => ({ timestamp: entry.timestamp, kind: "request", label: `${entry.method} ${entry.url}: ${entry.status || "failed"}` })),
    ...report.userActions.filter((entry) => entry.type === "click")
      .map((entry) => ({ timestamp: entry.timestamp, kind: "click", label: `Click on ${entry.target}` })),
  ].filter((mark) => typeof mark.timestamp === "number");
  const listen = async (event) => {
    if (!frame.isConnected) return window.removeEventListener("message", listen);
    if (event.source !== frame.contentWindow) return;
    // The player says how tall it is at this width: the frame shows all of it, controls too.
    if (event.data?.type === "svc-replay:size" && Number.isFinite(event.data.height)) {
      frame.style.height = `${Math.min(Math.max(event.data.height, 160), 2000)}px`;
      return;
    }
    if (event.data?.type !== "svc-replay:ready") return;
    try {
      const events = await api.get(report.replayUrl.replace(/^\/api\/v1/, ""));
      frame.contentWindow.postMessage({ type: "svc-replay:load", events, marks }, location.origin);
      said.replaceChildren("Click a console or network row to see that moment.");
    } catch (error) {
      said.replaceChildren(error.message);
    }
  };
  window.addEventListener("message", listen);
  const seek = (timestamp) => frame.contentWindow?.postMessage({ type: "svc-replay:seek", timestamp }, location.origin);
  return { element: section("Replay", frame, said), seek };
}

// A row that moves the replay to its moment, when there is a replay.
function seekable(entry, seek) {
  if (!seek || typeof entry.timestamp !== "number") return {};
  return { class: "seekable", title: "Show this moment in the replay", onclick: () => seek(entry.timestamp) };
}

function consoleLog(entries, seek) {
  if (!entries.length) return empty("No console output was captured.");
  return h("ol", { class: "console" }, entries.map((entry) => {
    const level = String(entry.level || "log").toLowerCase();
    const row = seekable(entry, seek);
    return h("li", { ...row, class: `console-entry level-${level} ${row.class || ""}` },
      h("span", { class: "level" }, level),
      h("time", {}, formatEpochMillis(entry.timestamp)),
      h("span", { class: "message" }, String(entry.message ?? "")),
      entry.stack ? h("details", {}, h("summary", {}, "Stack"), h("pre", {}, String(entry.stack))) : null);
  }));
}

function failed(entry) {
  const status = Number(entry.status);
  return !status || status >= 400;
}

// A long log shows its first rows and the failed ones; the rest on request (100 requests were
// one 23,600 px list on a phone).
const NETWORK_ROWS_SHOWN = 20;

function networkLog(entries, seek) {
  if (!entries.length) return empty("No network requests were captured.");
  const body = h("tbody", {});
  const wrap = h("div", { class: "table-wrap" }, h("table", { class: "network" },
    h("thead", {}, h("tr", {}, ["Method", "URL", "Status", "Duration", "Time", "cURL"].map(
      (text) => h("th", { scope: "col" }, text)))), body));
  const draw = (all) => {
    const shown = all ? entries : entries.filter((entry, index) => index < NETWORK_ROWS_SHOWN || failed(entry));
    replaceContent(body, ...shown.flatMap((entry) => [networkRow(entry, seek), networkDetails(entry)].filter(Boolean)));
    if (shown.length < entries.length) {
      wrap.append(h("button", { type: "button", class: "secondary more", onclick: (event) => {
        event.currentTarget.remove();
        draw(true);
      } }, `Show all ${entries.length} requests (${entries.length - shown.length} more)`));
    }
  };
  draw(false);
  return wrap;
}

function networkRow(entry, seek) {
  return h("tr", { ...seekable(entry, seek),
      class: [failed(entry) ? "failed" : "", seek ? "seekable" : ""].join(" ").trim() || null },
      h("td", { "data-label": "Method" }, String(entry.method ?? "")),
      h("td", { "data-label": "URL", class: "url" }, String(entry.url ?? "")),
      h("td", { "data-label": "Status" }, String(entry.status ?? "none"),
        failed(entry) ? h("span", { class: "failed-mark" }, " failed") : null),
      h("td", { "data-label": "Duration" }, entry.duration != null ? `${entry.duration} ms` : ""),
      h("td", { "data-label": "Time" }, formatEpochMillis(entry.timestamp)),
      copyAsCurl(entry));
}

// What the widget captured of a request when the project captures details (docs/widget.md):
// its headers and bodies, under the row, closed until asked for. Text nodes only: a body is
// what a page (or an attacker's response) sent, shown as text whatever it holds.
const BODY_SHOWN = 2000;
const DETAILS = [["Request headers", "requestHeaders"], ["Request body", "requestBody"],
  ["Response headers", "responseHeaders"], ["Response body", "responseBody"]];

function networkDetails(entry) {
  const parts = DETAILS.filter(([, field]) => entry[field] != null && entry[field] !== "" &&
    !(typeof entry[field] === "object" && !Object.keys(entry[field]).length));
  if (!parts.length) return null;
  const shown = parts.map(([label, field]) => h("div", { class: "captured" }, h("h4", {}, label),
    field.endsWith("Headers") ? headerList(entry[field]) : bodyText(entry[field])));
  return h("tr", { class: "details-row" }, h("td", { colspan: "6", "data-label": "" },
    h("details", {}, h("summary", {}, "Request and response details"), ...shown)));
}

function headerList(headers) {
  const pairs = typeof headers === "object" ? Object.entries(headers) : [["", String(headers)]];
  return h("dl", { class: "headers" }, pairs.flatMap(([name, value]) =>
    [h("dt", {}, String(name)), h("dd", {}, String(value))]));
}

// A JSON body pretty-printed; a long one cut, with the rest a click away.
function bodyText(body) {
  let text = typeof body === "string" ? body : JSON.stringify(body);
  try {
    text = JSON.stringify(JSON.parse(text), null, 2);
  } catch (_) { /* not JSON: as sent */ }
  const pre = h("pre", { class: "body" }, text.length > BODY_SHOWN ? text.slice(0, BODY_SHOWN) + "…" : text);
  if (text.length <= BODY_SHOWN) return pre;
  const all = h("button", { type: "button", class: "secondary small", onclick: (event) => {
    pre.replaceChildren(text);
    event.currentTarget.remove();
  } }, `Show all ${text.length.toLocaleString("en")} characters`);
  return h("div", {}, pre, all);
}

// Copies the request as a cURL command; says so, or shows the command when the browser refuses.
function copyAsCurl(entry) {
  const said = h("span", { class: "hint", role: "status" });
  const button = h("button", { type: "button", class: "secondary small" }, "Copy as cURL");
  button.addEventListener("click", async () => {
    const command = curlCommand(entry);
    try {
      await navigator.clipboard.writeText(command);
      said.replaceChildren(" Copied.");
    } catch (_) {
      said.replaceChildren(h("pre", {}, command));
    }
  });
  return h("td", { "data-label": "cURL" }, button, said);
}

// The repro kit (docs/repro-kit.md): the network log for DevTools, the actions as a test.
function reproKit(report) {
  const base = `/api/v1/reports/${encodeURIComponent(report.id)}`;
  return section("Reproduce", h("p", { class: "button-row" },
    copyButtonOf("Copy as Markdown", () => api.text(`/reports/${encodeURIComponent(report.id)}/markdown`)),
    h("a", { class: "button secondary", href: `${base}/har`, download: `${report.trackingId}.har` }, "Download HAR"),
    h("a", { class: "button secondary", href: `${base}/repro.spec.ts`, download: `${report.trackingId}.spec.ts` },
      "Download Playwright test")),
    h("p", { class: "hint" }, "Markdown is the report for a chat, a tracker or an AI assistant. "
      + "The HAR opens in the browser's developer tools; the test replays the "
      + "reporter's clicks, route changes and typed fields (with placeholder values) with Playwright."));
}

// Copies what `read` fetches; says so, or shows it to copy by hand when the browser refuses.
function copyButtonOf(text, read) {
  const said = h("span", { class: "hint", role: "status" });
  const button = h("button", { type: "button", class: "secondary" }, text);
  button.addEventListener("click", async () => {
    const copied = await read();
    try {
      await navigator.clipboard.writeText(copied);
      said.replaceChildren(" Copied.");
    } catch (_) {
      said.replaceChildren(h("pre", {}, copied));
    }
  });
  return h("span", {}, button, said);
}

function actionTimeline(entries) {
  if (!entries.length) return empty("No user actions were captured.");
  return h("ol", { class: "timeline" }, entries.map((entry) => h("li", {},
    h("time", {}, formatEpochMillis(entry.timestamp)),
    h("strong", {}, String(entry.type ?? "action")),
    entry.target ? h("code", {}, String(entry.target)) : null,
    entry.data !== undefined ? h("span", { class: "data" }, JSON.stringify(entry.data)) : null)));
}

function metadataTable(metadata) {
  const entries = Object.entries(metadata || {});
  if (!entries.length) return empty("No metadata was sent.");
  return h("table", { class: "metadata" }, h("tbody", {}, entries.map(([key, value]) =>
    h("tr", {}, h("th", { scope: "row" }, key),
      h("td", {}, typeof value === "object" && value !== null
        ? h("pre", {}, JSON.stringify(value, null, 2)) : String(value))))));
}
