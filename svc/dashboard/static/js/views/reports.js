// The report list: filters, search, sort and page all live in the page's URL, so a view can be
// shared, bookmarked or reloaded.

import { api, query } from "../api.js";
import { actionButton, appendTo, badge, confirmDialog, formatTime, h, label, plural, select } from "../dom.js";
import { CATEGORIES, SEVERITIES, SORTS, STATUSES } from "../constants.js";
import { groupItem } from "./duplicates.js";
import { snippetBlock } from "./snippet.js";

const FILTERS = [
  "project_id", "status", "severity", "category", "assignee", "has_screenshot", "linked", "duplicates", "reproduced",
  "signature", "created_after", "created_before", "reporter", "search", "sort", "group",
];
// "Group by bug" shows the signatures of this many days (docs/api.md §8.13).
const GROUP_DAYS = 30;
const PAGE_SIZE = 20;

function choices(values, anyText) {
  return [["", anyText], ...values.map((value) => [value, label(value)])];
}

export async function reportListView(main, context) {
  const wanted = Object.fromEntries(FILTERS.map((name) => [name, context.query.get(name) || ""]));
  const page = Math.max(1, Number.parseInt(context.query.get("page") || "1", 10) || 1);
  const grouped = wanted.group === "bug";
  const { group, ...filtersWanted } = wanted;
  const [projects, features, listing] = await Promise.all([
    api.get("/projects"),
    api.get("/features"),
    grouped
      ? api.get(`/reports/groups${query({ project_id: wanted.project_id, days: GROUP_DAYS, limit: 50 })}`)
      : api.get(`/reports${query({ ...filtersWanted, page, page_size: PAGE_SIZE })}`),
  ]);
  if (!context.isCurrent()) return;
  const projectNames = new Map(projects.map((project) => [project.id, project.name]));

  const goTo = (changes) => {
    const next = { ...wanted, page: 1, ...changes };
    if (next.page === 1) delete next.page;
    context.navigate(`/reports${query(next)}`);
  };

  const filters = h("form", { class: "filters", role: "search", "aria-label": "Filter reports" },
    filterSelect("Project", "project_id",
      [["", "All projects"], ...projects.map((project) => [project.id, project.name])], wanted),
    filterSelect("Status", "status", choices(STATUSES, "Any status"), wanted),
    filterSelect("Severity", "severity", choices(SEVERITIES, "Any severity"), wanted),
    filterSelect("Category", "category", choices(CATEGORIES, "Any category"), wanted),
    filterSelect("Assignee", "assignee", [["", "Anyone"], ["me", "Me"], ["none", "Nobody"]], wanted),
    filterSelect("Screenshot", "has_screenshot", [["", "With or without"], ["true", "With"], ["false", "Without"]], wanted),
    filterSelect("Tracker issue", "linked", [["", "With or without"], ["true", "With"], ["false", "Without"]], wanted),
    filterSelect("Duplicates", "duplicates", [["", "Shown"], ["exclude", "Hidden"], ["only", "Only duplicates"]], wanted),
    filterSelect("On staging", "reproduced", [["", "Any"], ["true", "Reproduced"], ["false", "Not reproduced"]], wanted),
    filterDate("Reported from", "created_after", wanted),
    filterDate("Reported before", "created_before", wanted),
    filterSelect("Sort", "sort", SORTS, wanted),
    h("div", { class: "search" },
      h("div", { class: "filter" },
        h("label", { for: "filter-search" }, "Search"),
        h("input", { id: "filter-search", name: "search", type: "search", value: wanted.search,
                     placeholder: "Words in title or description" })),
      h("div", { class: "filter" },
        h("label", { for: "filter-reporter" }, "Reporter"),
        h("input", { id: "filter-reporter", name: "reporter", type: "search", value: wanted.reporter,
                     placeholder: "Part of the reporter's id" })),
      h("button", { type: "submit" }, "Search")));
  filters.addEventListener("change", (event) => {
    if (event.target.tagName === "SELECT" || event.target.type === "date") {
      goTo({ [event.target.name]: event.target.value });
    }
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    goTo({
      search: filters.elements.search.value.trim(),
      reporter: filters.elements.reporter.value.trim(),
    });
  });

  const filtered = FILTERS.some((name) => name !== "sort" && name !== "group" && wanted[name]);
  const selection = new Set();
  const bar = bulkBar(selection, () => context.navigate(location.pathname + location.search, { replace: true }));
  const views = h("p", { class: "views" },
    h("a", { href: "/reports?assignee=me", "aria-current": wanted.assignee === "me" ? "page" : null },
      "Assigned to me"), " · ",
    h("a", { href: `/reports${query({ project_id: wanted.project_id, group: grouped ? "" : "bug" })}`,
      "aria-current": grouped ? "page" : null }, grouped ? "One row per report" : "Group by bug"), " · ",
    exportControl(filtersWanted, "csv", "Export CSV", listing.total, features.export.syncLimit), " · ",
    exportControl(filtersWanted, "ndjson", "Export NDJSON", listing.total, features.export.syncLimit));
  if (grouped) {
    // Reports of one signature: the largest groups of the last days first, each a link to its list.
    appendTo(main,
      h("div", { class: "page-heading" }, h("h1", {}, "Reports by bug"),
        h("p", { class: "count", role: "status" }, `${plural(listing.items.length, "group")} of the last ${GROUP_DAYS} days`),
        views),
      listing.items.length
        ? h("ol", { class: "groups" }, listing.items.map(groupItem))
        : h("p", { class: "empty" }, "No bug was reported twice in these days."));
    return;
  }
  appendTo(main,
    h("div", { class: "page-heading" }, h("h1", {}, "Reports"),
      h("p", { class: "count", role: "status" }, listing.totalExact === false
        ? `More than ${listing.total.toLocaleString()} reports`
        : `${listing.total} report${listing.total === 1 ? "" : "s"}`),
      views),
    filters,
    wanted.signature ? h("p", { class: "filter-note" }, "The reports of one bug (one signature). ",
      h("a", { href: `/reports${query({ ...wanted, signature: "" })}` }, "Show every report")) : null,
    bar.element,
    listing.items.length
      ? reportTable(listing.items, projectNames, selection, bar.update)
      : emptyState(projects, filtered, listing.total),
    pager(listing, page, wanted),
  );
}

// What to do with the reports ticked in the table: set status or severity, or delete them; all
// or none (the API refuses the whole request if one of them is not the caller's to change).
function bulkBar(selection, reload) {
  const count = h("strong", {});
  const problem = h("span", { class: "action-error", role: "alert", hidden: true });
  const run = async (request) => {
    problem.hidden = true;
    try {
      await request();
    } catch (error) {
      if (!error.status) throw error;
      problem.textContent = error.errors ? Object.values(error.errors).flat().join(" ") : error.message;
      problem.hidden = false;
      return;
    }
    reload();
  };
  const status = select("status", choices(STATUSES, "Status…"), "", { "aria-label": "Set the status of the selected reports" });
  const severity = select("severity", choices(SEVERITIES, "Severity…"), "", { "aria-label": "Set the severity of the selected reports" });
  const apply = h("button", { type: "button", onclick: () => {
    const changes = {};
    if (status.value) changes.status = status.value;
    if (severity.value) changes.severity = severity.value;
    if (!Object.keys(changes).length) return;
    run(() => api.patch("/reports", { ids: [...selection], set: changes }));
  } }, "Apply to selected");
  const primary = h("input", { name: "duplicate_of", maxlength: 64, placeholder: "WS-12", size: 8,
    "aria-label": "Mark the selected reports duplicates of this report" });
  const merge = h("button", { type: "button", class: "secondary", onclick: () => {
    if (!primary.value.trim()) return;
    run(() => api.patch("/reports", { ids: [...selection], set: { duplicate_of: primary.value.trim() } }));
  } }, "Mark as duplicates of");
  const remove = h("button", { type: "button", class: "danger", onclick: async () => {
    if (!await confirmDialog(`Delete ${plural(selection.size, "report")} and their screenshots? This cannot be undone.`, "Delete reports")) return;
    run(() => api.delete("/reports", { ids: [...selection] }));
  } }, "Delete selected");
  const element = h("div", { class: "bulk-bar", role: "region", "aria-label": "Selected reports", hidden: true },
    count, " selected ", status, severity, apply, merge, primary, remove, problem);
  const update = () => {
    count.textContent = String(selection.size);
    element.hidden = selection.size === 0;
  };
  return { element, update };
}

// Every report the filters choose (not only this page): a download the service streams, or,
// for more than it sends in one answer, an export job followed to its file (docs/api.md §8.3.1).
const EXPORT_POLL_MS = 2000;
function exportControl(wanted, format, text, total, syncLimit) {
  const filters = Object.fromEntries(Object.entries(wanted).filter(([name, value]) => value && name !== "sort"));
  if (total === undefined || total <= syncLimit) {
    return h("a", { href: `/api/v1/reports/export${query({ ...filters, format })}`, download: "" }, text);
  }
  if (!filters.project_id) {
    return h("span", { class: "hint" }, `${text}: choose a project (more than ${syncLimit.toLocaleString()} reports)`);
  }
  const said = h("span", { class: "hint", role: "status" });
  const { project_id: projectId, ...chosen } = filters;
  const button = actionButton(text, async () => {
    let job = await api.post(`/projects/${projectId}/exports`, { ...chosen, format });
    while (job.status === "queued" || job.status === "running") {
      said.textContent = job.total === null ? " Queued…" : ` ${job.written.toLocaleString()} of ${job.total.toLocaleString()}…`;
      await new Promise((done) => setTimeout(done, EXPORT_POLL_MS));
      job = await api.get(`/exports/${job.id}`);
    }
    if (job.status !== "done") throw new Error(`The export failed: ${job.error}`);
    said.replaceChildren(" ", h("a", { href: job.downloadUrl, download: "" }, "Download"),
      ` (${plural(job.written, "report")}, gzipped)`);
  }, { class: "link" });
  return h("span", {}, button, said);
}

function filterSelect(text, name, options, wanted) {
  const id = `filter-${name}`;
  const value = wanted[name] || (name === "sort" ? "-created_at" : "");
  // Several values from the URL (status=new,in_progress) show as one choice of their own.
  const known = options.some(([option]) => option === value);
  const all = known ? options : [...options, [value, value.split(",").map(label).join(" or ")]];
  return h("div", { class: "filter" },
    h("label", { for: id }, text),
    select(name, all, value, { id }));
}

function filterDate(text, name, wanted) {
  const id = `filter-${name}`;
  return h("div", { class: "filter" },
    h("label", { for: id }, text),
    h("input", { id, name, type: "date", value: wanted[name].slice(0, 10) }));
}

function reportTable(reports, projectNames, selection, selectionChanged) {
  const boxes = reports.map((report) => h("input", {
    type: "checkbox", "aria-label": `Select ${report.trackingId}`,
    onchange: (event) => {
      if (event.target.checked) selection.add(report.id);
      else selection.delete(report.id);
      all.checked = selection.size === reports.length;
      selectionChanged();
    },
  }));
  const all = h("input", {
    type: "checkbox", "aria-label": "Select every report on this page",
    onchange: (event) => {
      boxes.forEach((box, index) => {
        box.checked = event.target.checked;
        if (box.checked) selection.add(reports[index].id);
        else selection.delete(reports[index].id);
      });
      selectionChanged();
    },
  });
  return h("div", { class: "table-wrap" }, h("table", { class: "reports" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "pick" }, all),
      ["Id", "Title", "Status", "Severity", "Category", "Project", "Reported"].map(
        (text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, reports.map((report, index) => {
      const href = `/reports/${encodeURIComponent(report.trackingId)}`;
      return h("tr", {},
        h("td", { "data-label": "Select", class: "pick" }, boxes[index]),
        h("td", { "data-label": "Id" }, h("a", { href }, report.trackingId)),
        h("td", { "data-label": "Title", class: "title" }, h("a", { href }, report.title),
          report.duplicateOf ? h("small", { class: "hint" }, ` duplicate of ${report.duplicateOf.trackingId}`) : null,
          report.duplicateCount ? h("small", { class: "hint" }, ` +${plural(report.duplicateCount, "duplicate")}`) : null),
        h("td", { "data-label": "Status" }, badge("status", report.status)),
        h("td", { "data-label": "Severity" }, badge("severity", report.severity)),
        h("td", { "data-label": "Category" }, label(report.category)),
        h("td", { "data-label": "Project" }, projectNames.get(report.projectId) || ""),
        h("td", { "data-label": "Reported" },
          h("time", { datetime: report.createdAt }, formatTime(report.createdAt))));
    }))));
}

function emptyState(projects, filtered, total) {
  if (total > 0) return h("p", { class: "empty" }, "This page is past the last one. ",
    h("a", { href: "/reports" }, "Back to the first page"));
  if (filtered) return h("div", { class: "empty" },
    h("p", {}, "No reports match these filters."),
    h("p", {}, h("a", { href: "/reports" }, "Clear the filters")));
  if (!projects.length) return h("div", { class: "empty" },
    h("p", {}, "No projects yet: reports are filed into a project."),
    h("p", {}, h("a", { href: "/projects" }, "Create your first project")));
  const project = projects[0];
  return h("div", { class: "empty" },
    h("p", {}, `No reports yet: add the widget to your app with this snippet for "${project.name}".`),
    snippetBlock(project),
    h("p", {}, h("a", { href: `/projects/${project.id}` }, "Project settings")));
}

function pager(listing, page, wanted) {
  const pages = Math.max(1, Math.ceil(listing.total / listing.pageSize));
  // A search's total past its count limit is a lower bound: there is always a next page.
  const more = listing.totalExact === false;
  if (pages === 1 && page === 1 && !more) return null;
  const link = (to, text) => h("a", { href: `/reports${query({ ...wanted, page: to })}`, rel: text === "Next" ? "next" : "prev" }, text);
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? link(Math.min(page - 1, pages), "Previous") : null,
    h("span", {}, more ? `Page ${page} of more than ${pages}` : `Page ${page} of ${pages}`),
    page < pages || more ? link(page + 1, "Next") : null);
}
