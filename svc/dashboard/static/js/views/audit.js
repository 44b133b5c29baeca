// The audit log (docs/api.md §14), read-only: a page of entries, newest first, with filters,
// and a download of everything the filters choose. Administrators see the instance's (the
// admin page), owners their project's (the project's page).

import { api, query } from "../api.js";
import { field, formatTime, h, label, pageButtons, replaceContent, select } from "../dom.js";
import { AUDIT_ACTIONS } from "../constants.js";

const PAGE_SIZE = 25;
const DAY_MS = 24 * 60 * 60 * 1000;

// `path` is the log's API path ("/admin/audit" or "/projects/<id>/audit"); `people` ({id, name})
// fill the "Who" filter where the page knows them.
export function auditPanel(path, people = []) {
  const panel = h("section", { class: "panel", "aria-label": "Audit log" });
  const wanted = { action: "", actor: "", since: "", until: "" };
  let page = 1;
  const changed = (event) => {
    wanted[event.target.name] = event.target.value;
    page = 1;
    load();
  };
  const filters = h("div", { class: "filters audit-filters" },
    field("Action", select("action", [["", "Any action"], ...AUDIT_ACTIONS.map((action) => [action, label(action)])],
      "", { onchange: changed })),
    people.length ? field("Who", select("actor", [["", "Anyone"], ...people.map((person) => [person.id, person.name])],
      "", { onchange: changed })) : null,
    field("From", h("input", { type: "date", name: "since", onchange: changed })),
    field("Until", h("input", { type: "date", name: "until", onchange: changed })));
  const body = h("div", {});
  let asking = 0;
  const load = async () => {
    const params = asked(wanted);
    const mine = ++asking;
    const log = await api.get(`${path}${query({ ...params, page, page_size: PAGE_SIZE })}`);
    // Answers may arrive out of order (filters changed quickly): only the last one asked shows.
    if (mine !== asking) return;
    replaceContent(body,
      h("p", {}, `${log.total} ${log.total === 1 ? "entry" : "entries"} · `,
        h("a", { href: `/api/v1${path}/export${query(params)}`, download: "" }, "Download as NDJSON")),
      log.items.length ? entryTable(log.items) : h("p", { class: "empty" }, "Nothing recorded for these filters."),
      pageButtons("Audit log pages", log, page, (wanted) => { page = wanted; load(); }));
  };
  replaceContent(panel, h("h2", {}, "Audit log"),
    h("p", {}, "Who did what, and from where. Nothing here holds a password, token or link."), filters, body);
  load().catch((error) => replaceContent(body, h("p", { role: "alert" }, error.message)));
  return panel;
}

// The filters as the API takes them: "Until" is a whole day, so it ends at the next midnight.
function asked(wanted) {
  const until = wanted.until ? new Date(Date.parse(wanted.until) + DAY_MS).toISOString().slice(0, 10) : "";
  return { ...wanted, until };
}

function entryTable(items) {
  return h("div", { class: "table-wrap" }, h("table", { class: "audit" },
    h("thead", {}, h("tr", {}, ["When", "Who", "Action", "Target", "Address", "Detail"].map(
      (text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, items.map((entry) => h("tr", {},
      h("td", { "data-label": "When" }, formatTime(entry.at)),
      h("td", { "data-label": "Who" }, entry.actor ? entry.actor.name : entry.ip ? "not signed in" : "the operator (server)"),
      h("td", { "data-label": "Action" }, label(entry.action)),
      h("td", { "data-label": "Target" }, entry.target.id ? `${entry.target.type} ${entry.target.id.slice(0, 8)}` : entry.target.type),
      h("td", { "data-label": "Address" }, entry.ip || ""),
      h("td", { "data-label": "Detail" }, detailText(entry.detail)))))));
}

function detailText(detail) {
  return Object.entries(detail).map(([name, value]) =>
    `${label(name)}: ${Array.isArray(value) ? value.join(", ") : value}`).join(" · ");
}
